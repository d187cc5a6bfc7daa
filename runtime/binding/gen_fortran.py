#!/usr/bin/env python3
"""Generates Skein's Fortran bindings from the MPI function description.

    gen_fortran.py --header build/include/mpi.h --functions runtime/binding/functions.txt --out DIR

Writes into DIR:
  fortran_glue.c   the C side: mpi_send_ and pmpi_send_ etc. (and mpi_f08's MPI_Send_f08,
                   PMPI_Send_f08), everything by reference
                   (MPI_Fint handles, which are Skein's C handles unchanged), LOGICAL and
                   CHARACTER conversion, the sentinels MPI_BOTTOM, MPI_IN_PLACE,
                   MPI_STATUS(ES)_IGNORE, MPI_ERRCODES_IGNORE, MPI_UNWEIGHTED,
                   MPI_WEIGHTS_EMPTY recognized by the address of Skein's COMMON blocks;
                   built into libskein
  mpif.h           constants, sentinels and function types for `include 'mpif.h'`
                   (fixed and free form: no line goes past column 72)
  mpi_base.h       the same declarations, included by the mpi module (mpi.f90)
  mpi.f90          module mpi: mpif.h's declarations
  mpi_f08.f90      module mpi_f08: handle types, TYPE(MPI_Status); every function a generic
                   MPI_X whose specific MPI_X_f08 (PMPI_X_f08) is a BIND(C) interface to the
                   C function of that name in fortran_glue.c or fortran_special.c
                   (INTENT(IN) scalars by value, Fortran procedures as TYPE(C_FUNPTR),
                   ierror optional); a private second specific takes the procedures
                   and passes their C_FUNLOC
  SUPPORTED.txt    every function with its Fortran status (generated, or why not)

Functions come from the binding description (runtime/binding/functions.txt through
mpibind.load): each argument's kind, direction and array shape decide its conversion.
Constant values are evaluated from mpi.h's #defines, so new constants reach Fortran by
themselves.
"""
import argparse
import os
import re
import sys

# ---------------------------------------------------------------- description

class Arg:
    def __init__(self, name, ctype, kind=None, direction=None, array=None):
        self.name, self.ctype, self.kind, self.direction, self.array = name, ctype, kind, direction, array


class Func:
    def __init__(self, name, ret, args):
        self.name, self.ret, self.args = name, ret, args


def load_functions(functions):
    if functions:
        sys.path.insert(0, os.path.dirname(os.path.abspath(functions)))
        import mpibind  # runtime/binding/mpibind.py
        out = []
        for f in mpibind.load(functions):
            args = []
            for a in f.args:
                if a.kind == 'FUNCTION':
                    ctype = a.function_type + ' *'
                elif a.kind == 'ARGV':
                    ctype = 'char ***'
                elif a.kind == 'CTYPE':
                    ctype = a.explicit_ctype
                elif a.kind == 'VARARGS':
                    ctype = '...'
                else:
                    base = mpibind.KINDS[a.kind]
                    ctype = base + (' *' if (a.array or a.direction != 'in' or
                                             a.kind in ('BUFFER', 'LOCATION', 'STRING', 'ATTRVAL',
                                                        'EXTRA_STATE', 'STATUS')) else '')
                    if a.direction == 'in' and (a.array or a.kind in ('BUFFER', 'LOCATION', 'STRING')):
                        ctype = 'const ' + ctype
                x = Arg(a.name, ctype, a.kind, a.direction, a.array)
                x.max = a.max
                for o in ('findex', 'fint', 'fbuffer', 'ftrim', 'fnul', 'length'):  # mpibind.py
                    setattr(x, o, getattr(a, o))
                x.multidim = bool(getattr(a, 'dims', ''))
                x.dims_text = getattr(a, 'dims', '')
                args.append(x)
            out.append(Func(f.name, f.ret, args))
        return out

# ---------------------------------------------------------------- constants

def eval_constants(header):
    """Integer values of mpi.h's object-like MPI_ macros, in order of appearance."""
    defs = {}
    order = []
    for line in open(header):
        m = re.match(r'\s*#\s*define\s+(\w+)\s+(.*?)\s*(/\*.*)?$', line)
        if m and '(' not in m.group(1):
            if re.match(r'\s*#\s*define\s+\w+\(', line):
                continue
            defs[m.group(1)] = m.group(2)
            order.append(m.group(1))

    def expand(expr, depth=0):
        if depth > 20:
            raise ValueError(expr)
        expr = re.sub(r'SKN_HANDLE\(([^,()]+(?:\([^()]*\))?),\s*([^()]+?)\)',
                      lambda m: '((%s) << 24 | (%s))' % (m.group(1), m.group(2)), expr)
        expr = re.sub(r'SKN_DT\(([^()]+)\)', lambda m: '((0x4c) << 24 | (%s))' % m.group(1), expr)
        def sub(m):
            n = m.group(0)
            return '(%s)' % expand(defs[n], depth + 1) if n in defs else n
        return re.sub(r'\b[A-Za-z_]\w*\b', sub, expr)

    values = {}
    for name in order:
        if not name.startswith('MPI_'):
            continue
        try:
            e = expand(defs[name])
        except (ValueError, KeyError):
            continue
        e = re.sub(r'\((?:int|unsigned|long|MPI_Fint)\)', '', e)
        e = re.sub(r'\b0[xX][0-9a-fA-F]+\b', lambda m: str(int(m.group(0), 16)), e)
        if not re.fullmatch(r'[\s0-9a-fA-FxX()<>|&+\-~*]+', e) or re.search(r'[A-WYZa-wyz_]', e):
            continue
        try:
            v = eval(e, {'__builtins__': {}})
        except Exception:
            continue
        v &= 0xffffffff
        if v >= 1 << 31:
            v -= 1 << 32
        values[name] = v
    return values

# ---------------------------------------------------------------- classification

HANDLES = {'MPI_Comm', 'MPI_Group', 'MPI_Datatype', 'MPI_Op', 'MPI_Errhandler', 'MPI_Request', 'MPI_Message',
           'MPI_Info', 'MPI_Win', 'MPI_File'}
SCALARS = HANDLES | {'int', 'MPI_Aint', 'MPI_Offset', 'MPI_Count', 'MPI_Fint', 'double'}
# callbacks whose C and Fortran calling conventions agree (every argument by reference)
PASS_FUNCS = {'MPI_User_function', 'MPI_Comm_errhandler_function', 'MPI_Comm_errhandler_fn', 'MPI_Handler_function',
              'MPI_Win_errhandler_function', 'MPI_File_errhandler_function'}
LOGICAL_NAMES = {'flag', 'periods', 'reorder', 'commute', 'high'}


def base_type(ctype):
    return ' '.join(t for t in ctype.replace('*', ' ').replace('[]', ' ').split() if t != 'const')


def stars(ctype):
    return ctype.count('*') + ctype.count('[]')


class Plan:
    """How one argument crosses from Fortran to C."""

    def __init__(self, a):
        self.a = a
        bt, n = base_type(a.ctype), stars(a.ctype)
        self.bt, self.n = bt, n
        kind = (a.kind or '').upper()
        if kind == 'VARARGS':
            self.how = 'omit'  # MPI_Pcontrol's: Fortran passes the level only
        elif kind in ('ARGC', 'ARGV'):
            self.how = 'omit'  # Fortran has no argc/argv: MPI_Init(NULL, NULL)
        elif bt == 'char' and n == 1 and not a.array:
            self.how = 'str_in' if ('const' in a.ctype or a.direction == 'in') else 'str_out'
        elif bt == 'char':
            self.how = 'unsupported'
        elif kind == 'BUFFER_ADDR' and a.fbuffer:
            self.how = 'addr_out'  # MPI_Buffer_detach: C returns the address, Fortran has nowhere to keep it
        elif kind == 'BUFFER_ADDR':
            self.how = 'baseptr'  # C stores the address in Fortran's INTEGER(KIND=MPI_ADDRESS_KIND) or C_PTR
        elif a.fint:
            self.how = 'fint_array' if a.array else 'fint_in' if a.direction == 'in' else 'fint_out'
        elif a.findex and not a.array:
            self.how = 'findex'
        elif a.fnul:
            self.how = 'fnul'
        elif bt == 'void' and n == 1 and kind in ('ATTRVAL', 'EXTRA_STATE'):
            self.how = 'attr'
        elif bt == 'void' and n == 1:
            self.how = 'buffer'
        elif bt in PASS_FUNCS and n == 1:
            self.how = 'func'
        elif bt.endswith('_function') or bt.endswith('_fn') or kind == 'FUNCTION':
            self.how = 'unsupported'
        elif bt == 'MPI_Status' and n == 1:
            self.how = 'status'
        elif bt in SCALARS and n == 0:
            self.how = 'value'
        elif bt in SCALARS and n == 1:
            self.how = 'pointer'
        else:
            self.how = 'unsupported'

    def cparam(self):
        a = self.a
        if self.how in ('str_in',):
            return 'const char *%s' % a.name
        if self.how == 'str_out':
            return 'char *%s' % a.name
        if self.how in ('buffer', 'attr', 'addr_out', 'baseptr'):
            return 'void *%s' % a.name
        if self.how in ('fint_in', 'fint_array'):
            return 'const MPI_Fint *%s' % a.name
        if self.how in ('fint_out', 'findex', 'fnul'):
            return 'MPI_Fint *%s' % a.name
        if self.how == 'func':
            return '%s *%s' % (self.bt, a.name)
        if self.how == 'status':
            return 'MPI_Status *%s' % a.name
        if self.how == 'value':
            return 'const %s *%s' % (self.bt, a.name)
        if self.how == 'pointer':
            return '%s *%s' % (self.bt, a.name)
        raise ValueError(self.how)

    def carg(self):
        a = self.a
        if self.how == 'omit':
            return 'NULL'
        if self.how in ('fint_out', 'findex', 'fint_array'):
            return '&t_%s' % a.name if self.how != 'fint_array' else 't_' + a.name
        if self.how == 'fnul':
            return '&c_' + a.name
        if self.how == 'fint_in':
            return '(MPI_Aint)*' + a.name
        if self.how in ('str_in', 'str_out'):
            return 'c_' + a.name
        if self.how == 'buffer':  # fortran_glue.h: the '2' forms when two buffers are tested
            f = 'skn_fbuf' if getattr(self, 'in_place', False) else 'skn_fbottom'
            return '%s%s(%s)' % (f, '2' if getattr(self, 'buffers', 1) > 1 else '', a.name)
        if self.how == 'attr':
            return 'skn_fattr(%s)' % a.name
        if self.how == 'addr_out':
            return '&t_%s' % a.name  # the value, not its address (Fortran passes an AINT)
        if self.how == 'status':
            return ('skn_fstatuses(%s)' if a.array else 'skn_fstatus(%s)') % a.name
        if self.how == 'value':
            return '*' + a.name
        if self.how == 'pointer':
            if a.kind == 'WEIGHTS':
                return 'skn_fweights(%s)' % a.name
            if a.kind == 'ERRCODES':
                return 'skn_ferrcodes(%s)' % a.name
            if getattr(a, 'multidim', False):
                return '(void *)%s' % a.name
            return a.name
        return a.name


# C functions whose Fortran binding is written by hand in fortran_special.c (callbacks
# with Fortran calling conventions, attribute values of another width)
SPECIAL = {'MPI_Comm_create_keyval', 'MPI_Type_create_keyval', 'MPI_Keyval_create', 'MPI_Comm_get_attr',
           'MPI_Type_get_attr', 'MPI_Attr_get', 'MPI_Attr_put', 'MPI_Comm_set_attr', 'MPI_Type_set_attr',
           'MPI_Win_create_keyval', 'MPI_Win_set_attr', 'MPI_Win_get_attr', 'MPI_Pcontrol', 'MPI_Grequest_start',
           'MPI_Register_datarep'}
SKIP = {}


# The buffers that may be MPI_IN_PLACE (MPI-3.1 chapter 5): the send buffer of these
# collectives (blocking, I-, and MPI-4.0's _init forms), the receive buffer of the scatters.
# Every other buffer is compared with MPI_BOTTOM only: one test less per call.
IN_PLACE_SEND = {'Gather', 'Gatherv', 'Allgather', 'Allgatherv', 'Alltoall', 'Alltoallv', 'Alltoallw', 'Reduce',
                 'Allreduce', 'Reduce_scatter', 'Reduce_scatter_block', 'Scan', 'Exscan'}
IN_PLACE_RECV = {'Scatter', 'Scatterv'}


def in_place(f, a):
    base = re.sub(r'_init$', '', f.name[4:])
    if base not in IN_PLACE_SEND | IN_PLACE_RECV and base[:1] == 'I':
        base = base[1:2].upper() + base[2:]  # Iallreduce -> Allreduce
    return (a.name == 'sendbuf' and base in IN_PLACE_SEND) or (a.name == 'recvbuf' and base in IN_PLACE_RECV)


def plan_function(f):
    if f.name in SKIP:
        return None, SKIP[f.name]
    if f.name in SPECIAL:
        return None, 'hand-written in fortran_special.c'
    if re.search(r'_(c2f|f2c)$', f.name):
        return None, 'C only'
    if f.name.startswith('MPI_T_'):
        return None, 'the tools interface has no Fortran binding (MPI-3.1 14.3)'
    plans = [Plan(a) for a in f.args]
    buffers = sum(p.how == 'buffer' for p in plans)
    for p in plans:
        p.in_place = in_place(f, p.a)
        p.buffers = buffers
    bad = [p.a.name for p in plans if p.how == 'unsupported']
    if bad:
        return None, 'no Fortran conversion for argument(s) %s' % ', '.join(bad)
    if f.ret not in ('int', 'double', 'MPI_Aint'):
        return None, 'return type %s' % f.ret
    return plans, None


def value_of(name, plans, byval):
    """The C expression of argument `name`'s value in the glue: by value in mpi_f08's for
    the INTENT(IN) scalars (byval), by reference everywhere else."""
    return name if name in byval else '*' + name


def conversions(f, p, plans, byval):
    """(prologue, epilogue) of the glue for the arguments whose Fortran form is not C's
    (mpibind.py's Fortran options: findex, fint, fnul), the same in both glues. An epilogue
    runs after the call with its return code in rc, which it may change."""
    a, n = p.a, p.a.name
    if p.how == 'findex':  # 0-based in C: MPI_UNDEFINED and what C did not write stay
        return ['int t_%s = SKN_FINDEX_UNSET;' % n], ['skn_findex_out(t_%s, %s);' % (n, n)]
    if a.findex and a.array:
        return [], ['skn_findices_out(rc, %s, %s);' % (value_of(a.findex, plans, byval), n)]
    if p.how == 'fint_out':
        return ['MPI_Aint t_%s = 0;' % n], ['if (rc == MPI_SUCCESS) rc = skn_fint_out(%s, t_%s);' % (n, n)]
    if p.how == 'fint_array':
        return (['MPI_Aint *t_%s = skn_faints(%s, %s);' % (n, n, value_of(a.length, plans, byval))],
                ['free(t_%s);' % n])
    if p.how == 'fnul':  # C's length counts the NUL: 0 stays 0 (nothing written)
        return (['const MPI_Fint in_%s = *%s;' % (n, n), 'int c_%s = in_%s > 0 ? in_%s + 1 : 0;' % (n, n, n)],
                ['if (rc == MPI_SUCCESS) *%s = c_%s > 0 ? c_%s - 1 : 0;' % (n, n, n)])
    return [], []


def str_out_max(f, p, plans, byval):
    """(the most characters C writes into a STRING out, the condition under which it is
    copied back to Fortran or None: always)"""
    mx, cond = p.a.max, []
    if not mx:
        raise SystemExit('%s: STRING out %s needs max= in functions.txt' % (f.name, p.a.name))
    q = next((q for q in plans if q.a.name == mx), None)
    if q is not None and q.how == 'fnul':
        mx = 'in_' + mx
        cond.append(mx + ' > 0')
    elif q is not None:
        mx = value_of(mx, plans, byval)
    if any(q.a.name == 'flag' and q.a.kind == 'LOGICAL' and q.a.direction == 'out' for q in plans):
        cond[:0] = ['rc == MPI_SUCCESS', '*flag']
    return mx, ' && '.join(cond) or None


def glue_function(f, plans, prefix, cname):
    lname = f.name.lower()
    fname = (prefix + lname + '_')
    params = [p.cparam() for p in plans if p.how != 'omit']
    if f.ret == 'int':
        params.append('MPI_Fint *ierr')
    params += ['size_t %s_len' % p.a.name for p in plans if p.how in ('str_in', 'str_out')]
    pro, epi = [], []
    for p in plans:
        n = p.a.name
        if p.how == 'str_in':
            pro.append('char *c_%s = %s(%s, %s_len);' % (n, 'skn_fstr_in_trim' if p.a.ftrim else 'skn_fstr_in', n, n))
            epi.append('free(c_%s);' % n)
        elif p.how == 'addr_out':
            pro.append('void *t_%s = NULL;' % n)
            epi.append('(void)%s;' % n)
        elif p.how == 'str_out':
            mx, cond = str_out_max(f, p, plans, set())
            pro.append('char *c_%s = skn_fstr_buf(%s_len, (long)(%s));' % (n, n, mx))
            out = 'skn_fstr_out(%s, %s_len, c_%s);' % (n, n, n)
            epi.append('if (%s) %s else free(c_%s);' % (cond, out, n) if cond else out)
        else:
            a, b = conversions(f, p, plans, set())
            pro += a
            epi += b
    call = '%s(%s)' % (cname, ', '.join(p.carg() for p in plans if p.a.kind != 'VARARGS'))
    out = ['SKN_FEXPORT %s %s(%s) {' % ('void' if f.ret == 'int' else f.ret, fname, ', '.join(params) or 'void')]
    out += ['  ' + s for s in pro]
    if f.ret == 'int':
        out.append('  int rc = %s;' % call)
        out += ['  ' + s for s in epi]
        out.append('  *ierr = rc;')
    else:
        out.append('  return %s;' % call)
    out.append('}')
    return out


def f08_bindc(f, plans):
    """Whether mpi_f08's MPI_X_f08 and its C side are generated from the plans: everything
    but the keyval and attribute calls (their C side is fortran_special.c's)."""
    return f.name not in F08_ATTR


def f08_byvalue(p):
    """mpi_f08 passes the INTENT(IN) scalars (handles included, LOGICALs as INTEGER(C_INT)
    0 or 1, bindc_generic) to the C glue by VALUE: in registers, as C does."""
    return p.how == 'value'


def glue_f08(f, plans, prefix):
    """MPI_X_f08 (PMPI_X_f08 with prefix 'P'), the C side of mpi_f08's BIND(C) interface:
    scalars of INTENT(IN) by value, CHARACTER(*) as a descriptor (Fortran 2018), ierror
    optional (NULL when absent). It calls C's MPI_X (PMPI_X), as mpi_x_ does."""
    cname, fname = prefix + f.name, prefix + f.name + '_f08'
    byval = {p.a.name for p in plans if f08_byvalue(p)}
    params, pro, epi, args = [], [], [], []
    for p in plans:
        n = p.a.name
        if p.how == 'omit':
            args.append('NULL')
            continue
        if n in byval:
            params.append('%s %s' % (p.bt, n))
            args.append(n)
        elif p.how in ('str_in', 'str_out'):
            params.append('CFI_cdesc_t *%s' % n)
            args.append('c_' + n)
            if p.how == 'str_in':
                pro.append('char *c_%s = %s(%s->base_addr, %s->elem_len);'
                           % (n, 'skn_fstr_in_trim' if p.a.ftrim else 'skn_fstr_in', n, n))
                epi.append('free(c_%s);' % n)
            else:
                mx, cond = str_out_max(f, p, plans, byval)
                pro.append('char *c_%s = skn_fstr_buf(%s->elem_len, (long)(%s));' % (n, n, mx))
                out = 'skn_fstr_out(%s->base_addr, %s->elem_len, c_%s);' % (n, n, n)
                epi.append('if (%s) %s else free(c_%s);' % (cond, out, n) if cond else out)
        else:
            params.append(p.cparam())
            args.append(p.carg())
            if p.how == 'addr_out':
                pro.append('void *t_%s = NULL;' % n)
                epi.append('(void)%s;' % n)
            else:
                a, b = conversions(f, p, plans, byval)
                pro += a
                epi += b
    call = '%s(%s)' % (cname, ', '.join(a for p, a in zip(plans, args) if p.a.kind != 'VARARGS'))
    if f.ret != 'int':
        return ['SKN_FEXPORT %s %s(%s) { return %s; }' % (f.ret, fname, ', '.join(params) or 'void', call)]
    params.append('MPI_Fint *ierror')
    out = ['SKN_FEXPORT void %s(%s) {' % (fname, ', '.join(params))]
    out += ['  ' + x for x in pro]
    out.append('  int rc = %s;' % call)
    out += ['  ' + x for x in epi]
    out += ['  if (ierror) *ierror = rc;', '}']
    return out


GLUE_HEAD = r'''/* Generated by runtime/binding/gen_fortran.py: do not edit.
 * Skein's Fortran bindings, C side: one mpi_x_ and one pmpi_x_ per MPI function, every
 * argument by reference as gfortran passes it (hidden CHARACTER lengths last). Handles
 * need no conversion: Skein's C handles are ints, and MPI_Fint is int. */
#include <ISO_Fortran_binding.h>
#include <stdlib.h>
#include "fortran_glue.h"
'''


def gen_glue(funcs, status_size):
    out = [GLUE_HEAD, '_Static_assert(SKN_F_STATUS_SIZE == %d, "MPI_Status changed: MPI_STATUS_SIZE of mpif.h is %d");'
           % (status_size, status_size), '']
    report = []
    for f in funcs:
        plans, why = plan_function(f)
        if plans is None:
            report.append('%-36s %s' % (f.name, why))
            continue
        report.append('%-36s generated' % f.name)
        out += glue_function(f, plans, '', f.name)
        out += glue_function(f, plans, 'p', 'P' + f.name)
        if f08_bindc(f, plans) and f.ret != 'double' and f08_interface(f, plans):  # MPI_Wtime is C's
            out += glue_f08(f, plans, '') + glue_f08(f, plans, 'P')
        out.append('')
    return '\n'.join(out) + '\n', report

# ---------------------------------------------------------------- Fortran declarations

# Sentinels: COMMON blocks whose addresses the C glue recognizes (fortran_glue.h). Their
# names start with skn_, which the privatizer leaves shared.
SENTINELS = [
    ('MPI_BOTTOM', 'integer', '', 'skn_mpi_bottom'),
    ('MPI_IN_PLACE', 'integer', '', 'skn_mpi_in_place'),
    ('MPI_STATUS_IGNORE', 'integer', '(MPI_STATUS_SIZE)', 'skn_mpi_status_ignore'),
    ('MPI_STATUSES_IGNORE', 'integer', '(MPI_STATUS_SIZE,1)', 'skn_mpi_statuses_ignore'),
    ('MPI_ERRCODES_IGNORE', 'integer', '(1)', 'skn_mpi_errcodes_ignore'),
    ('MPI_UNWEIGHTED', 'integer', '(1)', 'skn_mpi_unweighted'),
    ('MPI_WEIGHTS_EMPTY', 'integer', '(1)', 'skn_mpi_weights_empty'),
    ('MPI_ARGV_NULL', 'character*1', '(1)', 'skn_mpi_argv_null'),
    ('MPI_ARGVS_NULL', 'character*1', '(1,1)', 'skn_mpi_argvs_null'),
]
# C macros that are not Fortran constants (or are sentinels, above)
NOT_CONSTANTS = {'MPI_BOTTOM', 'MPI_IN_PLACE', 'MPI_STATUS_IGNORE', 'MPI_STATUSES_IGNORE',
                 'MPI_ERRCODES_IGNORE', 'MPI_UNWEIGHTED', 'MPI_WEIGHTS_EMPTY'}
# constants of kind MPI_OFFSET_KIND in Fortran (MPI-3.1 A.1.1: MPI_FILE_SET_VIEW's DISP)
OFFSET_CONSTANTS = {'MPI_DISPLACEMENT_CURRENT'}


def fixed(lines):
    """Declarations in the common subset of fixed and free form (column 7, <= 72)."""
    out = []
    for l in lines:
        if l.startswith('!') or not l:
            out.append(l)
            continue
        s = '      ' + l
        if len(s) > 72:
            raise ValueError('mpif.h line too long: ' + s)
        out.append(s)
    return '\n'.join(out) + '\n'


def gen_decls(values, funcs, status_size, functions=True):
    L = ['! Generated by runtime/binding/gen_fortran.py from mpi.h: do not edit.']
    L.append('! Skein MPI constants and declarations for Fortran.')
    # the kinds first: constants of OFFSET_CONSTANTS use MPI_OFFSET_KIND
    L += ['integer MPI_ADDRESS_KIND, MPI_OFFSET_KIND, MPI_COUNT_KIND',
          'parameter (MPI_ADDRESS_KIND=8)', 'parameter (MPI_OFFSET_KIND=8)',
          'parameter (MPI_COUNT_KIND=8)']
    for name, v in values.items():
        if name in NOT_CONSTANTS:
            continue
        L.append('%s %s' % ('integer(kind=MPI_OFFSET_KIND)' if name in OFFSET_CONSTANTS else 'integer', name))
        L.append('parameter (%s=%d)' % (name, v))
    L += ['integer MPI_STATUS_SIZE', 'parameter (MPI_STATUS_SIZE=%d)' % status_size,
          'integer MPI_SOURCE, MPI_TAG, MPI_ERROR',
          'parameter (MPI_SOURCE=1, MPI_TAG=2, MPI_ERROR=3)',
          'integer MPI_INTEGER_KIND', 'parameter (MPI_INTEGER_KIND=4)',
          'logical MPI_SUBARRAYS_SUPPORTED, MPI_ASYNC_PROTECTS_NONBLOCKING',
          'parameter (MPI_SUBARRAYS_SUPPORTED=.false.)',
          'parameter (MPI_ASYNC_PROTECTS_NONBLOCKING=.false.)']
    for name, t, dims, blk in SENTINELS:
        L.append('%s %s%s' % (t, name, dims))
        L.append('common /%s/ %s' % (blk, name))
        L.append('save /%s/' % blk)
    # functions that return a value (module mpi declares them by interface)
    for f in (funcs if functions else []):
        if f.ret == 'double':
            L.append('double precision %s, P%s' % (f.name, f.name))
            L.append('external %s, P%s' % (f.name, f.name))
        elif f.ret == 'MPI_Aint':
            L.append('integer(kind=MPI_ADDRESS_KIND) %s' % f.name)
            L.append('integer(kind=MPI_ADDRESS_KIND) P%s' % f.name)
            L.append('external %s, P%s' % (f.name, f.name))
    # predefined callbacks (fortran_special.c)
    L.append('external MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN')
    L.append('external MPI_COMM_DUP_FN, MPI_NULL_COPY_FN')
    L.append('external MPI_NULL_DELETE_FN, MPI_DUP_FN')
    L.append('external MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN')
    L.append('external MPI_TYPE_DUP_FN')
    L.append('external MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN')
    L.append('external MPI_WIN_DUP_FN')
    L.append('external MPI_CONVERSION_FN_NULL')
    return fixed(L)



# ---------------------------------------------------------------- mpi_f08

# handle kind byte of a C handle value (mpi.h's SKN_KIND_*) -> Fortran 2008 type
KIND_TYPES = {0x44: 'MPI_Comm', 0x48: 'MPI_Group', 0x4c: 'MPI_Datatype', 0x54: 'MPI_Errhandler',
              0x58: 'MPI_Op', 0x5c: 'MPI_Info', 0x64: 'MPI_Win', 0x6c: 'MPI_Message', 0x2c: 'MPI_Request'}
F08_HANDLES = {'COMM': 'MPI_Comm', 'DATATYPE': 'MPI_Datatype', 'OP': 'MPI_Op', 'GROUP': 'MPI_Group',
               'INFO': 'MPI_Info', 'REQUEST': 'MPI_Request', 'ERRHANDLER': 'MPI_Errhandler',
               'MESSAGE': 'MPI_Message', 'WIN': 'MPI_Win', 'FILE': 'MPI_File'}
F08_SCALARS = {'COUNT': 'integer', 'RANK': 'integer', 'TAG': 'integer', 'INT': 'integer', 'KEYVAL': 'integer',
               'LOGICAL': 'logical', 'AINT': 'integer(kind=MPI_ADDRESS_KIND)',
               'OFFSET': 'integer(kind=MPI_OFFSET_KIND)', 'XCOUNT': 'integer(kind=MPI_COUNT_KIND)',
               'ATTRVAL': 'integer(kind=MPI_ADDRESS_KIND)', 'EXTRA_STATE': 'integer(kind=MPI_ADDRESS_KIND)',
               'WEIGHTS': 'integer', 'ERRCODES': 'integer'}
# callbacks mpi_f08 declares (their Fortran 2008 shapes take everything by reference, or the
# buffers as TYPE(C_PTR) values, which is C's calling convention)
F08_FUNCS = {'MPI_User_function', 'MPI_Comm_errhandler_function', 'MPI_Win_errhandler_function',
             'MPI_File_errhandler_function'}
F08_ABSTRACT = """  abstract interface
    subroutine MPI_User_function(invec, inoutvec, len, datatype)
      import :: c_ptr, MPI_Datatype
      type(c_ptr), value :: invec, inoutvec
      integer :: len
      type(MPI_Datatype) :: datatype
    end subroutine
    subroutine MPI_Comm_errhandler_function(comm, error_code)
      import :: MPI_Comm
      type(MPI_Comm) :: comm
      integer :: error_code
    end subroutine
    subroutine MPI_Win_errhandler_function(win, error_code)
      import :: MPI_Win
      type(MPI_Win) :: win
      integer :: error_code
    end subroutine
    subroutine MPI_File_errhandler_function(file, error_code)
      import :: MPI_File
      type(MPI_File) :: file
      integer :: error_code
    end subroutine
  end interface
"""


# mpi_f08's attribute callbacks: every argument by reference, the handle a one-INTEGER
# type, so they take the same trampolines as mpi's (fortran_special.c)
F08_ATTR_ABSTRACT = ''.join("""  abstract interface
    subroutine MPI_{O}_copy_attr_function(old{o}, {o}_keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)
      import :: {H}, MPI_ADDRESS_KIND
      type({H}) :: old{o}
      integer :: {o}_keyval, ierror
      integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
      logical :: flag
    end subroutine
    subroutine MPI_{O}_delete_attr_function({o}, {o}_keyval, attribute_val, extra_state, ierror)
      import :: {H}, MPI_ADDRESS_KIND
      type({H}) :: {o}
      integer :: {o}_keyval, ierror
      integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    end subroutine
  end interface
  procedure(MPI_{O}_copy_attr_function) :: MPI_{U}_NULL_COPY_FN, MPI_{U}_DUP_FN
  procedure(MPI_{O}_delete_attr_function) :: MPI_{U}_NULL_DELETE_FN
""".format(O=O, o=o, U=O.upper(), H='MPI_Datatype' if O == 'Type' else 'MPI_' + O) for O, o in (('Comm', 'comm'), ('Type', 'type'), ('Win', 'win')))

# generalized requests (MPI-3.1 12.2): the callbacks take everything by reference, as the
# trampolines of fortran_special.c call them
F08_GREQ = """  abstract interface
    subroutine MPI_Grequest_query_function(extra_state, status, ierror)
      import :: MPI_Status, MPI_ADDRESS_KIND
      integer(kind=MPI_ADDRESS_KIND) :: extra_state
      type(MPI_Status) :: status
      integer :: ierror
    end subroutine
    subroutine MPI_Grequest_free_function(extra_state, ierror)
      import :: MPI_ADDRESS_KIND
      integer(kind=MPI_ADDRESS_KIND) :: extra_state
      integer :: ierror
    end subroutine
    subroutine MPI_Grequest_cancel_function(extra_state, complete, ierror)
      import :: MPI_ADDRESS_KIND
      integer(kind=MPI_ADDRESS_KIND) :: extra_state
      logical :: complete
      integer :: ierror
    end subroutine
  end interface
"""


def f08_greq(prefix):
    """The generic MPI_Grequest_start of mpi_f08 (fortran_special.c has the C side)."""
    A = 'integer(kind=MPI_ADDRESS_KIND)'
    return bindc_generic(prefix + 'MPI_Grequest_start', ['query_fn', 'free_fn', 'cancel_fn', 'extra_state', 'request'],
                         ['type(c_funptr), value :: query_fn, free_fn, cancel_fn',
                          '%s, intent(in), value :: extra_state' % A, 'type(MPI_Request), intent(out) :: request'],
                         {'query_fn': 'MPI_Grequest_query_function', 'free_fn': 'MPI_Grequest_free_function',
                          'cancel_fn': 'MPI_Grequest_cancel_function'})


# data representations (MPI-3.1 13.5.3): the buffers as C pointers, the rest by reference,
# as the trampolines of fortran_special.c call them (and as mpi's callbacks take them)
F08_DATAREP = """  abstract interface
    subroutine MPI_Datarep_conversion_function(userbuf, datatype, count, filebuf, position, extra_state, ierror)
      import :: c_ptr, MPI_Datatype, MPI_OFFSET_KIND, MPI_ADDRESS_KIND
      type(c_ptr), value :: userbuf, filebuf
      type(MPI_Datatype) :: datatype
      integer :: count, ierror
      integer(kind=MPI_OFFSET_KIND) :: position
      integer(kind=MPI_ADDRESS_KIND) :: extra_state
    end subroutine
    subroutine MPI_Datarep_extent_function(datatype, extent, extra_state, ierror)
      import :: MPI_Datatype, MPI_ADDRESS_KIND
      type(MPI_Datatype) :: datatype
      integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
      integer :: ierror
    end subroutine
  end interface
  procedure(MPI_Datarep_conversion_function) :: MPI_CONVERSION_FN_NULL
"""


def f08_datarep(prefix):
    """The generic MPI_Register_datarep of mpi_f08 (fortran_special.c has the C side)."""
    fns = ['read_conversion_fn', 'write_conversion_fn', 'dtype_file_extent_fn']
    return bindc_generic(prefix + 'MPI_Register_datarep', ['datarep'] + fns + ['extra_state'],
                         ['character(len=*), intent(in) :: datarep', 'type(c_funptr), value :: ' + ', '.join(fns),
                          'integer(kind=MPI_ADDRESS_KIND), intent(in), value :: extra_state'],
                         dict(zip(fns, ['MPI_Datarep_conversion_function'] * 2 + ['MPI_Datarep_extent_function'])))


def bindc_generic(pname, names, decls, procs=None, ret=None, logicals=None):
    """(interface lines, module procedure lines) of mpi_f08's generic pname: its specific
    pname_f08 is BIND(C) with that link name (MPI-3.1 17.1.5), decls being its dummies but
    ierror, as the user sees them.

    Two kinds of dummy cannot be what the user passes to a BIND(C) procedure:
    - Fortran procedures (procs: dummy -> abstract interface), unless BIND(C) themselves,
      which the standard's callback interfaces are not: the BIND(C) specific takes
      TYPE(C_FUNPTR)s;
    - default LOGICALs (logicals: dummy -> whether an array), interoperable in no standard
      but as LOGICAL(C_BOOL), so `-std=f2008` rejects them: the BIND(C) specific takes a
      scalar as an INTEGER(C_INT), 0 or 1 (by value if INTENT(IN)), an array as the
      TYPE(C_PTR) of its first element. gfortran's LOGICAL is a C int holding 0 or 1 (the
      mpif.h glue passes them to C unchanged too), and an array's length is not always an
      argument (MPI_Cart_sub's remain_dims), so arrays are not copied.
    Then a second specific skn_pname_f08 takes what the user has and calls pname_f08 with
    C_FUNLOC(procedure) and the converted LOGICALs, converting scalars out after the call:
    the link name stays in the call path, so interposers see every call. With LOGICALs the
    BIND(C) specific is an interface inside the wrapper only, so INTEGERs in their place do
    not compile."""
    procs, logicals = procs or {}, logicals or {}
    if ret and (logicals or procs):
        raise ValueError('%s: a function with LOGICAL or procedure dummies' % pname)
    spec = pname + '_f08'
    wdecls, cdecls = [], []  # the wrapper's dummies (the user's), the BIND(C) specific's
    for d in decls + ([] if ret else ['integer, optional, intent(out) :: ierror']):
        n = d.split('::')[-1].split('(')[0].strip()
        if n in logicals:
            d = d.replace(', value', '')
            if logicals[n]:
                wdecls.append(d.replace(' ::', ', target ::'))
                cdecls.append('type(c_ptr), value :: ' + n)
                continue
            wdecls.append(d)
            d = d.replace('logical', 'integer(c_int)', 1)
            cdecls.append(d.replace('intent(in)', 'intent(in), value') if 'intent(in)' in d else d)
        elif d.startswith('type(c_funptr)'):
            wdecls += ['procedure(%s) :: %s' % (procs[m], m) for m in names if m in procs and re.search(r'\b%s\b' % m, d)]
            cdecls.append(d)
        else:
            wdecls.append(d)
            cdecls.append(d)
    if ret:
        sig, end = '%s function %s(%s) bind(C, name="%s")' % (ret, spec, ', '.join(names), spec), 'end function'
    else:
        sig, end = 'subroutine %s(%s) bind(C, name="%s")' % (spec, ', '.join(names + ['ierror']), spec), 'end subroutine'
    body = ['    ' + sig, '      import'] + ['      ' + d for d in cdecls] + ['    ' + end]
    if not procs and not logicals:
        return ['  interface %s' % pname] + body + ['  end interface'], []
    wrap = 'skn_' + spec.lower()
    local = []
    if logicals:  # the BIND(C) specific is known to the wrapper only
        iface = ['  interface %s' % pname, '    module procedure %s' % wrap, '  end interface']
        local = ['    interface'] + ['  ' + x for x in body] + ['    end interface']
    else:
        iface = ['  interface %s' % pname] + body + ['    module procedure %s' % wrap, '  end interface']
    iface.append('  private :: ' + wrap)
    pre, post = [], []
    for n, array in logicals.items():
        if array:
            continue
        d = next(d for d in decls if d.split('::')[-1].strip() == n)
        wdecls.append('integer(c_int) :: c_' + n)
        if 'intent(in)' in d:
            pre.append('c_%s = merge(1_c_int, 0_c_int, %s)' % (n, n))
        else:
            pre.append('c_%s = 0' % n)  # what an error leaves
            post.append('%s = c_%s /= 0' % (n, n))
    actual = ['c_funloc(%s)' % n if n in procs else 'c_loc(%s(1))' % n if logicals.get(n) else
              'c_' + n if n in logicals else n for n in names]
    proc = ['  subroutine %s(%s)' % (wrap, ', '.join(names + ['ierror']))] + ['    ' + d for d in wdecls] + local + \
           ['    ' + x for x in pre] + ['    call %s(%s)' % (spec, ', '.join(actual + ['ierror']))] + \
           ['    ' + x for x in post] + ['  end subroutine', '']
    return iface, proc


# name -> (object type, object argument name, what): keyvals and attribute values
F08_ATTR = {'MPI_Comm_create_keyval': ('Comm', 'comm', 'create'), 'MPI_Type_create_keyval': ('Datatype', 'type', 'create'),
            'MPI_Win_create_keyval': ('Win', 'win', 'create'), 'MPI_Comm_set_attr': ('Comm', 'comm', 'set'),
            'MPI_Type_set_attr': ('Datatype', 'type', 'set'), 'MPI_Win_set_attr': ('Win', 'win', 'set'),
            'MPI_Comm_get_attr': ('Comm', 'comm', 'get'), 'MPI_Type_get_attr': ('Datatype', 'type', 'get'),
            'MPI_Win_get_attr': ('Win', 'win', 'get')}


def f08_attr(name, prefix):
    """The generic of an mpi_f08 keyval or attribute call (fortran_special.c has the C side:
    the object, keyval and value of INTENT(IN) by value)."""
    T, o, what = F08_ATTR[name]
    obj = 'datatype' if o == 'type' else o
    cb = 'Type' if o == 'type' else T
    A = 'integer(kind=MPI_ADDRESS_KIND)'
    if what == 'create':
        names = ['%s_copy_attr_fn' % o, '%s_delete_attr_fn' % o, '%s_keyval' % o, 'extra_state']
        decls = ['type(c_funptr), value :: %s_copy_attr_fn, %s_delete_attr_fn' % (o, o),
                 'integer, intent(out) :: %s_keyval' % o, '%s, intent(in), value :: extra_state' % A]
        procs = {names[0]: 'MPI_%s_copy_attr_function' % cb, names[1]: 'MPI_%s_delete_attr_function' % cb}
        return bindc_generic(prefix + name, names, decls, procs)
    names = [obj, '%s_keyval' % o, 'attribute_val'] + (['flag'] if what == 'get' else [])
    decls = ['type(MPI_%s), intent(in), value :: %s' % (T, obj), 'integer, intent(in), value :: %s_keyval' % o]
    decls += ['%s, intent(out) :: attribute_val' % A, 'logical, intent(out) :: flag'] if what == 'get' else \
             ['%s, intent(in), value :: attribute_val' % A]
    return bindc_generic(prefix + name, names, decls, logicals={'flag': False} if what == 'get' else None)


def f08_interface(f, plans, prefix=''):
    """(interface, module procedures) of the generic MPI_X of mpi_f08, whose specific
    MPI_X_f08 is an interface to the C function of that name in the glue (BIND(C), MPI-3.1
    17.1.5's link name; bindc_generic), or None if an argument has no mpi_f08 form. MPI_Wtime and MPI_Wtick are C's own (BIND(C) in the
    standard's mpi_f08)."""
    names, decls, procs, logicals = [], [], {}, {}
    for p in plans:
        a = p.a
        kind = (a.kind or '').upper()
        if p.how == 'omit':
            continue
        n = a.name
        names.append(n)
        if kind == 'LOGICAL':
            logicals[n] = bool(a.array)
        dims = ''
        if a.array:
            dims = '(%s*)' % ''.join(d + ',' for d in re.findall(r'\[(\w+)\]', getattr(a, 'dims_text', '')))
        intent = {'in': 'intent(in)', 'out': 'intent(out)', 'inout': 'intent(inout)'}[a.direction]
        if f08_byvalue(p):
            intent += ', value'
        if kind in ('BUFFER', 'LOCATION', 'BUFFER_ADDR'):
            decls += ['!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s' % n, 'type(*), dimension(*) :: %s' % n]
        elif kind == 'STRING' and not a.array:
            decls.append('character(len=*), %s :: %s' % (intent, n))
        elif kind == 'FUNCTION':
            procs[n] = a.ctype.replace('*', '').strip()
            if procs[n] not in F08_FUNCS:
                return None  # MPI-1's MPI_Errhandler_create: not in mpi_f08
            decls.append('type(c_funptr), value :: %s' % n)
        elif kind in F08_HANDLES:
            decls.append('type(%s), %s :: %s%s' % (F08_HANDLES[kind], intent, n, dims))
        elif kind == 'STATUS':
            decls.append('type(MPI_Status), %s :: %s%s' % (intent, n, dims))
        elif kind in F08_SCALARS:
            decls.append('%s, %s :: %s%s' % ('integer' if a.fint else F08_SCALARS[kind], intent, n, dims))
        else:
            return None
    pname = prefix + f.name
    if f.ret == 'double':
        return ['  interface', '    double precision function %s() bind(C, name="%s")' % (pname, pname),
                '    end function', '  end interface'], []
    if f.ret == 'int':
        return bindc_generic(pname, names, decls, procs, logicals=logicals)
    if f.ret == 'MPI_Aint':
        return bindc_generic(pname, names, decls, procs, ret='integer(kind=MPI_ADDRESS_KIND)')
    return None


def gen_f08(funcs, values, status_size):
    L = ['! Generated by runtime/binding/gen_fortran.py: do not edit.',
         '! Skein\'s mpi_f08 module: handle types, TYPE(MPI_Status), optional ierror. Choice buffers',
         '! are TYPE(*), DIMENSION(*) without argument checks (MPI_SUBARRAYS_SUPPORTED is .false.).',
         'module mpi_f08',
         '  use, intrinsic :: iso_c_binding, only: c_int, c_ptr, c_funptr, c_funloc, c_loc',
         '  implicit none',
         '  integer, parameter :: MPI_ADDRESS_KIND = 8, MPI_OFFSET_KIND = 8, MPI_COUNT_KIND = 8',
         '  integer, parameter :: MPI_INTEGER_KIND = 4, MPI_STATUS_SIZE = %d' % status_size,
         '  logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .false., MPI_ASYNC_PROTECTS_NONBLOCKING = .false.']
    for t in sorted(set(F08_HANDLES.values())):
        L += ['  type, bind(C) :: %s' % t, '    integer(c_int) :: MPI_VAL', '  end type']
    L += ['  type, bind(C) :: MPI_Status',
          '    integer(c_int) :: MPI_SOURCE, MPI_TAG, MPI_ERROR',
          '    integer(c_int) :: skn_internal(%d)' % (status_size - 3), '  end type']
    for name, v in values.items():
        if name in NOT_CONSTANTS:
            continue
        t = KIND_TYPES.get((v >> 24) & 0xff) if v > 0 else None
        if name == 'MPI_FILE_NULL':
            t = 'MPI_File'
        if t:
            L.append('  type(%s), parameter :: %s = %s(%d)' % (t, name, t, v))
        elif name in OFFSET_CONSTANTS:
            L.append('  integer(kind=MPI_OFFSET_KIND), parameter :: %s = %d' % (name, v))
        else:
            L.append('  integer, parameter :: %s = %d' % (name, v))
    # sentinels: the same C symbols as mpif.h's COMMON blocks (fortran_glue.h)
    L += ['  integer(c_int), bind(C, name="skn_mpi_bottom_") :: MPI_BOTTOM',
          '  integer(c_int), bind(C, name="skn_mpi_in_place_") :: MPI_IN_PLACE',
          '  type(MPI_Status), bind(C, name="skn_mpi_status_ignore_") :: MPI_STATUS_IGNORE',
          '  type(MPI_Status), bind(C, name="skn_mpi_statuses_ignore_") :: MPI_STATUSES_IGNORE(1)',
          '  integer(c_int), bind(C, name="skn_mpi_errcodes_ignore_") :: MPI_ERRCODES_IGNORE(1)',
          '  integer(c_int), bind(C, name="skn_mpi_unweighted_") :: MPI_UNWEIGHTED(1)',
          '  integer(c_int), bind(C, name="skn_mpi_weights_empty_") :: MPI_WEIGHTS_EMPTY(1)']
    L.append(F08_ABSTRACT.rstrip('\n'))
    L.append(F08_ATTR_ABSTRACT.rstrip('\n'))
    L.append(F08_GREQ.rstrip('\n'))
    L.append(F08_DATAREP.rstrip('\n'))
    procs, ifaces = [], []
    done = []
    for f in funcs:
        plans, why = plan_function(f)
        special = None
        if f.name in F08_ATTR:
            special = lambda prefix: f08_attr(f.name, prefix)
        elif f.name == 'MPI_Grequest_start':
            special = f08_greq
        elif f.name == 'MPI_Register_datarep':
            special = f08_datarep
        elif f.name == 'MPI_Pcontrol':  # no ierror (MPI-3.1 14.2.4); fortran_special.c
            special = lambda prefix: (['  interface %sMPI_Pcontrol' % prefix,
                                       '    subroutine %sMPI_Pcontrol_f08(level) bind(C, name="%sMPI_Pcontrol_f08")'
                                       % (prefix, prefix),
                                       '      integer, intent(in), value :: level', '    end subroutine',
                                       '  end interface'], [])
        elif plans is not None and f08_bindc(f, plans) and f08_interface(f, plans):
            special = lambda prefix: f08_interface(f, plans, prefix)
        if special is None:
            continue
        for prefix in ('', 'P'):
            iface, proc = special(prefix)
            ifaces += iface
            procs += proc
        done.append(f.name)
    # handle comparisons, as the standard requires
    ops = []
    for t in sorted(set(F08_HANDLES.values())):
        ops += ['  elemental logical function skn_eq_%s(a, b)' % t.lower(),
                '    type(%s), intent(in) :: a, b' % t, '    skn_eq_%s = a%%MPI_VAL == b%%MPI_VAL' % t.lower(),
                '  end function',
                '  elemental logical function skn_ne_%s(a, b)' % t.lower(),
                '    type(%s), intent(in) :: a, b' % t, '    skn_ne_%s = a%%MPI_VAL /= b%%MPI_VAL' % t.lower(),
                '  end function']
    L.append('  interface operator(==)')
    L += ['    module procedure skn_eq_%s' % t.lower() for t in sorted(set(F08_HANDLES.values()))]
    L += ['  end interface', '  interface operator(/=)']
    L += ['    module procedure skn_ne_%s' % t.lower() for t in sorted(set(F08_HANDLES.values()))]
    for prefix in ('', 'P'):  # MPI_F_SYNC_REG: Fortran only (fortran_special.c)
        ifaces += ['  interface %sMPI_F_sync_reg' % prefix,
                   '    subroutine %sMPI_F_sync_reg_f08(buf) bind(C, name="%sMPI_F_sync_reg_f08")' % (prefix, prefix),
                   '      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf', '      type(*), dimension(*) :: buf',
                   '    end subroutine', '  end interface']
    sgen, sprocs = sizeof_generic(True)
    L += ['  end interface'] + sgen + ifaces + ['contains'] + ops + sprocs + procs + ['end module mpi_f08']
    return '\n'.join(L) + '\n', done


# ---------------------------------------------------------------- module mpi

# Fortran type of a scalar of each kind in `use mpi` (handles are INTEGER there)
MPI_TYPES = {'COUNT': 'integer', 'RANK': 'integer', 'TAG': 'integer', 'INT': 'integer', 'KEYVAL': 'integer',
             'LOGICAL': 'logical', 'AINT': 'integer(kind=MPI_ADDRESS_KIND)',
             'OFFSET': 'integer(kind=MPI_OFFSET_KIND)', 'XCOUNT': 'integer(kind=MPI_COUNT_KIND)',
             'ATTRVAL': 'integer(kind=MPI_ADDRESS_KIND)', 'EXTRA_STATE': 'integer(kind=MPI_ADDRESS_KIND)'}
MPI_TYPES.update({k: 'integer' for k in F08_HANDLES})
MPI_TYPES.update({'WEIGHTS': 'integer', 'ERRCODES': 'integer'})


def mpi_interface(f, plans, name):
    """The explicit interface of one procedure of module mpi (lines), or None. Choice buffers
    take any type and rank (NO_ARG_CHECK, TYPE(*), DIMENSION(*)); everything else is checked,
    so a wrong argument count or type is a compile error."""
    names, decls = [], []
    for p in plans:
        a = p.a
        kind = (a.kind or '').upper()
        if p.how == 'omit':
            continue
        n = a.name
        names.append(n)
        intent = ', intent(in)' if a.direction == 'in' else ''
        dims = ''
        if a.array:
            dims = '(%s*)' % ''.join(d + ',' for d in re.findall(r'\[(\w+)\]', getattr(a, 'dims_text', '')))
        if kind in ('BUFFER', 'LOCATION', 'BUFFER_ADDR'):
            decls += ['!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s' % n, 'type(*), dimension(*) :: %s' % n]
        elif kind == 'STRING' and not a.array:
            decls.append('character(len=*)%s :: %s' % (intent, n))
        elif kind == 'FUNCTION':
            decls.append('external :: %s' % n)
        elif kind == 'STATUS':
            decls.append('integer%s :: %s(MPI_STATUS_SIZE%s)' % (intent, n, ',*' if a.array else ''))
        elif kind in MPI_TYPES:
            decls.append('%s%s :: %s%s' % ('integer' if a.fint else MPI_TYPES[kind], intent, n, dims))
        else:
            return None
    if f.ret == 'int':
        sig, end = 'subroutine %s(%s)' % (name, ', '.join(names + ['ierror'])), 'end subroutine'
        decls.append('integer :: ierror')
    else:
        ftype = {'double': 'double precision', 'MPI_Aint': 'integer(kind=MPI_ADDRESS_KIND)'}.get(f.ret)
        if not ftype:
            return None
        sig, end = '%s function %s(%s)' % (ftype, name, ', '.join(names)), 'end function'
    return ['    ' + sig, '      import'] + ['      ' + d for d in decls] + ['    ' + end]


# Interfaces of the hand-written glue (fortran_special.c), in mpi's INTEGER-handle form:
# name -> argument declarations (ierror last, always)
SPECIAL_MPI = {
    'MPI_Comm_create_keyval': ['external :: comm_copy_attr_fn, comm_delete_attr_fn', 'integer :: comm_keyval',
                               'integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state'],
    'MPI_Type_create_keyval': ['external :: type_copy_attr_fn, type_delete_attr_fn', 'integer :: type_keyval',
                               'integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state'],
    'MPI_Win_create_keyval': ['external :: win_copy_attr_fn, win_delete_attr_fn', 'integer :: win_keyval',
                              'integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state'],
    'MPI_Keyval_create': ['external :: copy_fn, delete_fn', 'integer :: keyval', 'integer, intent(in) :: extra_state'],
    'MPI_Comm_set_attr': ['integer, intent(in) :: comm, comm_keyval',
                          'integer(kind=MPI_ADDRESS_KIND), intent(in) :: attribute_val'],
    'MPI_Type_set_attr': ['integer, intent(in) :: datatype, type_keyval',
                          'integer(kind=MPI_ADDRESS_KIND), intent(in) :: attribute_val'],
    'MPI_Win_set_attr': ['integer, intent(in) :: win, win_keyval',
                         'integer(kind=MPI_ADDRESS_KIND), intent(in) :: attribute_val'],
    'MPI_Attr_put': ['integer, intent(in) :: comm, keyval, attribute_val'],
    'MPI_Comm_get_attr': ['integer, intent(in) :: comm, comm_keyval',
                          'integer(kind=MPI_ADDRESS_KIND) :: attribute_val', 'logical :: flag'],
    'MPI_Type_get_attr': ['integer, intent(in) :: datatype, type_keyval',
                          'integer(kind=MPI_ADDRESS_KIND) :: attribute_val', 'logical :: flag'],
    'MPI_Win_get_attr': ['integer, intent(in) :: win, win_keyval',
                         'integer(kind=MPI_ADDRESS_KIND) :: attribute_val', 'logical :: flag'],
    'MPI_Attr_get': ['integer, intent(in) :: comm, keyval', 'integer :: attribute_val', 'logical :: flag'],
    'MPI_Register_datarep': ['character(len=*), intent(in) :: datarep',
                             'external :: read_conversion_fn, write_conversion_fn, dtype_file_extent_fn',
                             'integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state'],
    'MPI_Grequest_start': ['external :: query_fn, free_fn, cancel_fn', 'integer :: request',
                           'integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state'],
}
SPECIAL_ARGS = {
    'MPI_Comm_create_keyval': 'comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state',
    'MPI_Type_create_keyval': 'type_copy_attr_fn, type_delete_attr_fn, type_keyval, extra_state',
    'MPI_Win_create_keyval': 'win_copy_attr_fn, win_delete_attr_fn, win_keyval, extra_state',
    'MPI_Keyval_create': 'copy_fn, delete_fn, keyval, extra_state',
    'MPI_Comm_set_attr': 'comm, comm_keyval, attribute_val', 'MPI_Type_set_attr': 'datatype, type_keyval, attribute_val',
    'MPI_Win_set_attr': 'win, win_keyval, attribute_val', 'MPI_Attr_put': 'comm, keyval, attribute_val',
    'MPI_Comm_get_attr': 'comm, comm_keyval, attribute_val, flag',
    'MPI_Type_get_attr': 'datatype, type_keyval, attribute_val, flag',
    'MPI_Win_get_attr': 'win, win_keyval, attribute_val, flag', 'MPI_Attr_get': 'comm, keyval, attribute_val, flag',
    'MPI_Grequest_start': 'query_fn, free_fn, cancel_fn, extra_state, request',
    'MPI_Register_datarep': 'datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn, extra_state',
}


# MPI_SIZEOF (MPI-3.1 17.1.9): a generic over the intrinsic numeric types (and LOGICAL) of
# gfortran, each specific assumed-rank, so scalars and arrays of any rank match
SIZEOF_TYPES = [('i%d' % k, 'integer(kind=%d)' % k) for k in (1, 2, 4, 8, 16)] + \
               [('r%d' % k, 'real(kind=%d)' % k) for k in (4, 8, 10, 16)] + \
               [('c%d' % k, 'complex(kind=%d)' % k) for k in (4, 8, 10, 16)] + \
               [('l%d' % k, 'logical(kind=%d)' % k) for k in (1, 2, 4, 8)]


def sizeof_generic(optional):
    """(the generic interface, its specifics) of MPI_SIZEOF."""
    gen = ['  interface MPI_Sizeof'] + ['    module procedure skn_sizeof_%s' % t for t, _ in SIZEOF_TYPES] + \
          ['  end interface', '  private :: ' + ', '.join('skn_sizeof_' + t for t, _ in SIZEOF_TYPES)]
    procs = []
    for t, ft in SIZEOF_TYPES:
        procs += ['  subroutine skn_sizeof_%s(x, size, ierror)' % t,
                  '    %s, dimension(..), intent(in) :: x' % ft,
                  '    integer, intent(out) :: size',
                  '    integer, %sintent(out) :: ierror' % ('optional, ' if optional else ''),
                  '    size = storage_size(x) / 8',
                  '    %sierror = 0' % ('if (present(ierror)) ' if optional else ''),
                  '  end subroutine']
    return gen, procs


def gen_mpi_module(funcs):
    L = ['! Generated by runtime/binding/gen_fortran.py: do not edit.',
         '! Skein\'s `mpi` module: the declarations of mpif.h and an explicit interface for every',
         '! MPI_ and PMPI_ procedure, so a wrong argument count or type is a compile error.',
         '! Choice buffers accept any type and rank (see docs/user-guide.md, "Fortran").',
         'module mpi',
         '  implicit none',
         "  include 'mpi_base.h'",
         '  interface']
    done = []
    for f in funcs:
        plans, why = plan_function(f)
        for prefix in ('', 'P'):
            if f.name == 'MPI_Pcontrol':  # MPI_PCONTROL(LEVEL): no IERROR in Fortran
                L += ['    subroutine %sMPI_Pcontrol(level)' % prefix, '      integer, intent(in) :: level',
                      '    end subroutine']
                continue
            if f.name in SPECIAL_MPI:
                L += ['    subroutine %s%s(%s, ierror)' % (prefix, f.name, SPECIAL_ARGS[f.name]), '      import']
                L += ['      ' + d for d in SPECIAL_MPI[f.name]] + ['      integer :: ierror', '    end subroutine']
                done.append(f.name)
                continue
            if plans is None:
                continue
            r = mpi_interface(f, plans, prefix + f.name)
            if r:
                L += r
                done.append(f.name)
    for prefix in ('', 'P'):  # MPI_F_SYNC_REG: Fortran only (fortran_special.c)
        L += ['    subroutine %sMPI_F_sync_reg(buf)' % prefix, '      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf',
              '      type(*), dimension(*) :: buf', '    end subroutine']
    gen, procs = sizeof_generic(False)
    L += ['  end interface'] + gen + ['contains'] + procs + ['end module mpi']
    return '\n'.join(L) + '\n', set(done)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--header', required=True)
    ap.add_argument('--functions', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--status-size', type=int, default=6)
    o = ap.parse_args()
    funcs = load_functions(o.functions)
    values = eval_constants(o.header)
    os.makedirs(o.out, exist_ok=True)
    glue, report = gen_glue(funcs, o.status_size)
    decls = gen_decls(values, funcs, o.status_size)

    def write(name, text):
        p = os.path.join(o.out, name)
        if os.path.exists(p) and open(p).read() == text:
            return  # keep the timestamp: nothing downstream rebuilds
        open(p, 'w').write(text)
    write('fortran_glue.c', glue)
    write('mpif.h', decls)
    write('mpi_base.h', gen_decls(values, funcs, o.status_size, functions=False))
    mod, mod_done = gen_mpi_module(funcs)
    write('mpi.f90', mod)
    f08, f08_done = gen_f08(funcs, values, o.status_size)
    write('mpi_f08.f90', f08)
    report = [r + ('' if r.split()[0] in f08_done else ', not in mpi_f08') if r.endswith('generated') else r
              for r in report]
    write('SUPPORTED.txt', '\n'.join(report) + '\n')


if __name__ == '__main__':
    main()
