#!/usr/bin/env python3
"""Generates the C side of the MPI bindings from functions.txt.

  gen_c.py functions.txt mpi.h.in mpi.h       mpi.h: the template with every prototype
                                              (MPI_X and its PMPI_X twin) spliced in at
                                              the line @SKN_MPI_FUNCTIONS@
  gen_c.py functions.txt --names names.h      a table of every function's name, for tools
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpibind  # noqa: E402

MARK = '@SKN_MPI_FUNCTIONS@'


def prototypes(funcs):
    out, section = [], None
    for f in funcs:
        if f.section != section:
            section = f.section
            out.append(f'\n/* {section} */')
        out.append(f'SKN_DECL({f.ret}, {f.short}, ({f.c_params()}));')
    return '\n'.join(out).lstrip('\n')


def write_if_changed(path, text):
    """Leaves an unchanged output alone so that nothing depending on it rebuilds."""
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    funcs = mpibind.load(argv[1])
    if argv[2] == '--names':
        text = '/* Generated from runtime/binding/functions.txt by gen_c.py. */\n' + \
               ''.join(f'SKN_FUNCTION({f.short})\n' for f in funcs)
    else:
        with open(argv[2]) as f:
            template = f.read()
        if template.count(MARK) != 1:
            sys.exit(f'{argv[2]}: needs exactly one line {MARK}')
        text = template.replace(MARK, '/* Generated from runtime/binding/functions.txt by gen_c.py. */\n' +
                                prototypes(funcs))
    write_if_changed(argv[3], text)


if __name__ == '__main__':
    main(sys.argv)
