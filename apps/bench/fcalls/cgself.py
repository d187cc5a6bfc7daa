#!/usr/bin/env python3
"""Instructions a program executes outside its MPI library's C layer, from callgrind output
files (fcalls.sh): the self cost (Ir) of the program's own object (its code and its PLT
stubs), of the Fortran binding libraries of MPICH and Open MPI, and of Skein's Fortran glue
functions (libskein holds C and Fortran both: its glue is told by name). Everything else
(the C MPI layer, its waiting and polling, libc) is left out, so a peer's busy polling
does not blur the count.

    cgself.py EXE_NAME callgrind.out...    prints the sum over the files
"""
import os
import re
import sys

FORTRAN_LIBS = re.compile(r'lib(mpifort|mpichfort|mpi_mpifh|mpi_usempif08|mpi_usempi_ignore_tkr|skein_f08)\b')
SKEIN_GLUE = re.compile(r'^(p?mpi_\w+_|P?MPI_\w+_f08|skn_fstr_\w+)$')


def counted(ob, fn, exe):
    base = os.path.basename(ob)
    if base == exe or FORTRAN_LIBS.search(base):
        return True
    return base.startswith('libskein') and bool(SKEIN_GLUE.match(fn.split("'")[0]))


def self_cost(path, exe):
    names = {'ob': {}, 'fn': {}}
    ob = fn = ''
    after_calls = False
    total = 0
    for line in open(path, errors='replace'):
        m = re.match(r'(ob|fn|cob|cfn|fl|fi|fe|cfi|cfl)=(?:\((\d+)\))?\s*(.*)', line)
        if m:
            key, ident, name = m.group(1), m.group(2), m.group(3).strip()
            kind = key.lstrip('c') if key in ('cob', 'cfn') else key
            if kind in names and ident is not None:
                if name:
                    names[kind][ident] = name
                else:
                    name = names[kind].get(ident, '')
            if key == 'ob':
                ob = name
            elif key == 'fn':
                fn = name
            continue
        if line.startswith('calls='):
            after_calls = True
            continue
        if line[:1].isdigit() or line[:1] in '+-*':
            if after_calls:  # the inclusive cost of the call just described
                after_calls = False
                continue
            parts = line.split()
            if len(parts) >= 2 and counted(ob, fn, exe):
                total += int(parts[1])
    return total


if __name__ == '__main__':
    exe = sys.argv[1]
    print(sum(self_cost(p, exe) for p in sys.argv[2:]))
