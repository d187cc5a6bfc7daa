#!/usr/bin/env python3
"""The binding description and the library agree: every function described in
runtime/binding/functions.txt is defined in libskein.so as PMPI_X with MPI_X beside it,
and every MPI_/PMPI_ function the library exports is described.

  check_symbols.py functions.txt libskein.so
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../runtime/binding'))
import mpibind  # noqa: E402

# Exported functions that are not MPI calls: predefined callbacks the standard names in
# capitals, and Skein's documented MPIX_ extensions.
NOT_CALLS = ('MPI_COMM_', 'MPI_TYPE_', 'MPI_WIN_', 'MPI_CONVERSION_FN_NULL', 'MPIX_')


def main():
    desc, lib = sys.argv[1:3]
    described = {f.name for f in mpibind.load(desc)}
    out = subprocess.run(['nm', '-D', '--defined-only', lib], check=True, capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TtWw':
            syms[parts[2]] = parts[1]
    errors = []
    for name in sorted(described):
        if 'P' + name not in syms:
            errors.append(f'{name}: described but libskein defines no P{name}')
        if name not in syms:
            errors.append(f'{name}: described but libskein exports no {name}')
        elif syms[name] not in 'Ww':
            errors.append(f'{name}: not a weak alias of P{name} (profiling tools cannot wrap it)')
    for sym in sorted(syms):
        name = sym[1:] if sym.startswith('PMPI_') else sym
        # mpi_f08's link names (MPI-3.1 17.1.5): MPI_X_f08 of a described MPI_X, and the
        # Fortran-only MPI_F_sync_reg
        if name.endswith('_f08') and (name[:-4] in described or name == 'MPI_F_sync_reg_f08'):
            continue
        if name.startswith('MPI_') and not name.startswith(NOT_CALLS) and name not in described:
            errors.append(f'{sym}: exported by libskein but not in {os.path.basename(desc)}')
    for e in errors:
        print('FAIL', e)
    if errors:
        sys.exit(1)
    print(f'PASS binding: {len(described)} functions described, defined and exported')


if __name__ == '__main__':
    main()
