#!/usr/bin/env python3
"""Generates the C side of the MPI bindings from functions.txt.

  gen_c.py functions.txt mpi.h.in mpi.h       mpi.h: the template with every prototype
                                              (MPI_X and its PMPI_X twin) spliced in at
                                              the line @SKN_MPI_FUNCTIONS@
  gen_c.py functions.txt --entries=FILE out.h the entry points of the functions described
                                              with entry=FILE, for runtime/api/FILE.c to
                                              include after its impl_ functions
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
        decl = f'SKN_DECL({f.ret}, {f.short}, ({f.c_params()}));'
        out.append(f'#ifndef SKEIN_MPI_STRICT\n{decl}\n#endif' if f.removed else decl)
    return '\n'.join(out).lstrip('\n')


# How an entry point checks a handle argument: the lookup that turns it into the object
# the implementation gets (NULL: not a valid handle of the calling rank), that object's
# C type and name suffix, and the error class of a bad handle.
HANDLE_CHECKS = {
    'COMM': ('skn_api_comm(me, {a})', 'skn_comm_view *', '_v', 'MPI_ERR_COMM', 'communicator'),
    'GROUP': ('skn_api_group(me, {a})', 'const skn_group *', '_g', 'MPI_ERR_GROUP', 'group'),
    'DATATYPE': ('skn_api_dtype(me, {a})', 'const skn_dtype *', '_t', 'MPI_ERR_TYPE', 'datatype'),
}
# Pointers the standard lets the caller pass as sentinels rather than real storage.
NOT_NULL_CHECKED = {'STATUS', 'BUFFER', 'LOCATION', 'ATTRVAL', 'EXTRA_STATE', 'ARGV'}
NOT_NULL_CHECKED |= {'ARGC', 'BUFFER_ADDR'}  # Fortran bindings (issue 15)


# ---- issue 13 (gen13): the checks of the other api/ files. More handle kinds; a function
# with a window or file argument reports through that object's error handler; `err=`
# overrides the class of any check; `null` and `uncommitted` relax a handle check; handle
# arrays with len= are checked element by element; `anytime` functions need no MPI_Init.
HANDLE_CHECKS.update({
    'INFO': ('skn_api_info(me, {a})', 'skn_info *', '_i', 'MPI_ERR_INFO', 'info object'),
    'ERRHANDLER': ('skn_api_errhandler(me, {a})', 'skn_errhandler *', '_e', 'MPI_ERR_ARG', 'error handler'),
    'WIN': ('skn_api_win(me, {a})', 'skn_win_view *', '_v', 'MPI_ERR_WIN', 'window'),
    # api/file.c's own lookup; skn_api_error reports on a file handle through its handler
    # (an invalid one through MPI_FILE_NULL's, as the standard asks)
    'FILE': ('skn_api_file(me, {a})', 'skn_file *', '_f', 'MPI_ERR_FILE', 'open file'),
})
UNCOMMITTED_DTYPE = 'skn_api_dtype_any(me, {a})'
NULL_HANDLE = {'INFO': 'MPI_INFO_NULL', 'ERRHANDLER': 'MPI_ERRHANDLER_NULL', 'WIN': 'MPI_WIN_NULL',
               'COMM': 'MPI_COMM_NULL', 'GROUP': 'MPI_GROUP_NULL', 'DATATYPE': 'MPI_DATATYPE_NULL',
               'FILE': 'MPI_FILE_NULL'}


# Handles whose free takes them by pointer and reports through the freed object's handler:
# an `inout` one is looked up through its pointer (NULL: reported with the kind's NULL handle).
DEREF_HANDLES = {'WIN', 'FILE'}
PREDEFINED_DTYPE = 'skn_api_dtype_predefined({a})'


def handle_ref(a):
    """The handle an argument names, as a C expression (through the pointer of an inout one)."""
    return a.name if a.direction == 'in' else f'*{a.name}'


def error_object(f, kinds):
    """The first WIN/FILE/COMM argument of the given kinds that names the object errors go to."""
    return next((a for a in f.args if a.kind in kinds and not a.array and
                 (a.direction == 'in' or (a.direction == 'inout' and a.kind in DEREF_HANDLES))), None)


def error_call(f):
    """How this function's entry reports: (format of the call, with {cls} and {rest})."""
    if f.report:  # the function names its handler (MPI_FILE_NULL's for open and delete)
        return f'skn_api_error(me, {f.report}, {{cls}}, fn, {{rest}})'

    def ref(a):  # an inout handle may be a NULL pointer when its own NULL check fails
        return a.name if a.direction == 'in' else f'({a.name} ? *{a.name} : {NULL_HANDLE[a.kind]})'
    win = error_object(f, ('WIN',))
    if win:
        return f'skn_api_win_error(me, {ref(win)}, {{cls}}, fn, {{rest}})'
    obj = error_object(f, ('FILE', 'COMM'))
    # no object: api.h's SKN_API_NOOBJ (MPI_COMM_WORLD, MPI-3.1)
    return f'skn_api_error(me, {ref(obj) if obj else "SKN_API_NOOBJ"}, {{cls}}, fn, {{rest}})'


def int_checks(a, fail, cls_of):
    """min=, bits= and oneof= on an integer argument: its checks (C statements)."""
    out, pct = [], '%td' if a.kind == 'AINT' else '%d'
    if a.least:
        out.append(f'if (SKN_UNLIKELY({a.name} < {a.least})) ' +
                   fail(cls_of(a, 'MPI_ERR_ARG'), f'{a.name}={pct} (must be at least {a.least})', a.name))
    if a.bits:
        out.append(f'if (SKN_UNLIKELY({a.name} & ~({a.bits}))) ' +
                   fail(cls_of(a, 'MPI_ERR_ARG'), f'{a.name}=%#x has bits other than {a.bits}', f'(unsigned){a.name}'))
    if a.oneof:
        vals = a.oneof.split(',')
        cond = ' && '.join(f'{a.name} != {v}' for v in vals)
        out.append(f'if (SKN_UNLIKELY({cond})) ' +
                   fail(cls_of(a, 'MPI_ERR_ARG'), f'{a.name}=%d is not {" or ".join(vals)}', a.name))
    return out
# ---- end of issue 13 (gen13) block


# ---- point-to-point and completion (issue 13, hot13): the entry points of api/p2p.c and
# api/request.c. Each check is one compare on the good path; a check that needs another
# argument's object (a rank the communicator's size, a buffer the datatype's) runs after
# every handle is looked up.
def p2p_check(f, a, fail, body, late):
    """Checks a REQUEST, RANK, TAG or BUFFER argument. Returns None when the argument is
    left to the generic rules, else the object passed to impl_ after it ('' for none)."""
    comm = next((x.name for x in f.args if x.kind == 'COMM' and x.direction == 'in' and not x.array), None)
    win = error_object(f, ('WIN',))
    if a.kind == 'REQUEST' and not a.array and a.direction != 'out':
        # MPI_Request or MPI_Request *: the request it names (`null`: MPI_REQUEST_NULL
        # passes, as NULL)
        ref = a.name if a.direction == 'in' else '*' + a.name
        if a.direction == 'inout':
            body.append(f'if (SKN_UNLIKELY(!{a.name})) ' + fail('MPI_ERR_ARG', f'{a.name}=NULL'))
        obj = a.name + '_r'
        body.append(f'skn_req *{obj} = skn_req_lookup(me, {ref});')
        cond = f'!{obj}' + (f' && {ref} != MPI_REQUEST_NULL' if a.null else '')
        body.append(f'if (SKN_UNLIKELY({cond})) ' +
                    fail('MPI_ERR_REQUEST', f'{a.name}=%#x is not a valid request', f'(unsigned){ref}'))
        return obj
    if a.kind == 'RANK' and a.root:
        if not comm:
            raise SystemExit(f'MPI_{f.short}: root {a.name} needs a COMM argument')
        late.append(f'if (SKN_UNLIKELY(!skn_api_root_ok({comm}_v->comm, {a.name}))) ' +
                    fail('MPI_ERR_ROOT', f'{a.name}=%d is not a rank of the communicator of size %d (on an '
                         'intercommunicator: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group of size %d)',
                         a.name, f'{comm}_v->comm->size', f'{comm}_v->comm->rsize'))
        return ''
    if a.kind == 'RANK' and a.direction == 'in' and not a.array and comm:
        # one unsigned compare with the size; MPI_PROC_NULL passes to impl_
        ok = f' && {a.name} != MPI_PROC_NULL' + (f' && {a.name} != MPI_ANY_SOURCE' if a.wildcard else '')
        size = f'{comm}_v->comm->rsize'
        late.append(f'if (SKN_UNLIKELY((unsigned){a.name} >= (unsigned){size}{ok})) ' +
                    fail('MPI_ERR_RANK', f'{a.name}=%d is not a rank of the (remote) group of size %d', a.name, size))
        return ''
    if a.kind == 'RANK' and a.direction == 'in' and not a.array and win:
        # a rank of the window's group; MPI_PROC_NULL passes to impl_
        size = f'{win.name}_v->size'
        late.append(f'if (SKN_UNLIKELY((unsigned){a.name} >= (unsigned){size} && {a.name} != MPI_PROC_NULL)) ' +
                    fail('MPI_ERR_RANK', f'{a.name}=%d (the window has %d members)', a.name, size))
        return ''
    if a.kind == 'TAG' and a.direction == 'in' and not a.array:
        ok = f' && {a.name} != MPI_ANY_TAG' if a.wildcard else ''
        late.append(f'if (SKN_UNLIKELY({a.name} < 0{ok})) ' +
                    fail('MPI_ERR_TAG', f'{a.name}=%d (must be {"MPI_ANY_TAG or " if a.wildcard else ""}'
                         f'in [0, %d])', a.name, 'SKN_TAG_UB'))
        return ''
    if a.kind == 'BUFFER' and a.length and not a.array:
        i = f.args.index(a)
        dt = next((x.name for x in f.args[i + 1:] if x.kind == 'DATATYPE'), None)
        if not dt:
            raise SystemExit(f'MPI_{f.short}: {a.name} len={a.length} needs a DATATYPE after it')
        t = dt + HANDLE_CHECKS['DATATYPE'][2]
        # NULL is a valid buffer for an empty type or one with a nonzero lower bound
        late.append(f'if (SKN_UNLIKELY(!{a.name} && {a.length} > 0 && {t}->size > 0 && {t}->true_lb == 0)) ' +
                    fail('MPI_ERR_BUFFER', f'{a.name}=NULL with {a.length}=%d', a.length))
        return ''
    return None


def entry(f):
    """PMPI_X: find the rank, check each argument in order, call impl_X."""
    fn = f'MPI_{f.short}'
    if f.tools:
        # MPI_T: the rank, if any, and its tools interface initialized; errors are returned
        body = ['skn_rank *me = skn_rank_self();']
        if not f.anytime:
            body.append('if (SKN_UNLIKELY(!me || !__atomic_load_n(&me->mpit_refs, __ATOMIC_RELAXED))) '
                        'return MPI_T_ERR_NOT_INITIALIZED;')
        call = ['me']

        def fail(cls, fmt, *vals):
            return f'return {cls};'
    else:
        self_ = 'skn_api_self_any' if f.anytime else 'skn_api_self'
        body = [f'static const char fn[] = "{fn}";', f'skn_rank *me = {self_}(fn);']
        call = ['me', 'fn']
        report = error_call(f)

        def fail(cls, fmt, *vals):
            args = ''.join(', ' + v for v in vals)
            return 'return skn_api_rc(me, ' + report.format(cls=cls, rest=f'"{fmt}"{args}') + ');'

    def cls_of(a, default):
        if not a.err:
            return default
        return a.err if a.err.startswith('MPI_') else 'MPI_ERR_' + a.err

    late = []
    for a in f.args:
        if a.kind == 'VARARGS':  # MPI_Pcontrol's tail: nothing to pass on
            continue
        call.append(a.name)
        if a.nocheck:
            continue
        if a.required and a.kind != 'STATUS' and not a.array:
            body.append(f'if (SKN_UNLIKELY(!{a.name})) ' + fail(cls_of(a, 'MPI_ERR_ARG'), f'{a.name}=NULL'))
            continue
        if a.kind == 'STATUS' and a.required and not a.array:
            body.append(f'if (SKN_UNLIKELY(!{a.name})) ' +
                        fail(cls_of(a, 'MPI_ERR_ARG'), f'{a.name} is NULL or MPI_STATUS_IGNORE'))
            continue
        if a.fstatus:
            body.append(f'if (SKN_UNLIKELY(skn_api_f_status_ignored({a.name}))) ' +
                        fail(cls_of(a, 'MPI_ERR_ARG'), f'{a.name} is NULL or MPI_F_STATUS_IGNORE'))
            continue
        extra = p2p_check(f, a, fail, body, late)
        if extra is not None:
            if extra:
                call.append(extra)
            continue
        deref = a.direction == 'inout' and a.kind in DEREF_HANDLES and not a.array
        if a.kind in HANDLE_CHECKS and (a.direction == 'in' or deref) and not a.array:
            lookup, ctype, suffix, cls, what = HANDLE_CHECKS[a.kind]
            if a.kind == 'DATATYPE' and a.uncommitted:
                lookup = UNCOMMITTED_DTYPE
            if a.kind == 'DATATYPE' and a.predefined:
                lookup, what = PREDEFINED_DTYPE, 'predefined datatype'
            if deref:
                body.append(f'if (SKN_UNLIKELY(!{a.name})) ' + fail(cls_of(a, 'MPI_ERR_ARG'), f'{a.name}=NULL'))
            h = handle_ref(a)
            obj = a.name + suffix
            body.append(f'{ctype}{obj} = {lookup.format(a=h)};')
            bad = f'!{obj}' if not a.null else f'!{obj} && {h} != {NULL_HANDLE[a.kind]}'
            if a.kind == 'DATATYPE' and lookup == HANDLE_CHECKS['DATATYPE'][0]:  # committed ones only: say which
                msg = fail(cls_of(a, cls), f'{a.name}=%s %s', f'SKN_HSTR({h})', f'skn_api_dtype_fault(me, {h})')
            else:
                msg = fail(cls_of(a, cls), f'{a.name}=%s is not a valid {what}', f'SKN_HSTR({h})')
            if a.kind == 'FILE':  # a bad file handle is reported through MPI_FILE_NULL's handler
                msg = f'return skn_api_rc(me, skn_api_error(me, MPI_FILE_NULL, {cls_of(a, cls)}, fn, "{a.name}=%s is not a valid {what}", SKN_HSTR({h})));'
            body.append(f'if (SKN_UNLIKELY({bad})) ' + msg)
            call.append(obj)
        elif a.kind in HANDLE_CHECKS and a.direction == 'in':
            if not a.length:
                raise SystemExit(f'{fn}: an array of handles needs len= to be checked ({a.name})')
            lookup, _, _, cls, what = HANDLE_CHECKS[a.kind]
            if a.kind == 'DATATYPE' and a.uncommitted:
                lookup = UNCOMMITTED_DTYPE
            body.append(f'if (SKN_UNLIKELY({a.length} > 0 && !{a.name})) '
                        + fail('MPI_ERR_ARG', f'{a.name}=NULL with {a.length}=%d', a.length))
            body.append(f'for (int i_ = 0; i_ < {a.length}; i_++)')
            if a.kind == 'DATATYPE' and lookup == HANDLE_CHECKS['DATATYPE'][0]:
                why = fail(cls_of(a, cls), f'{a.name}[%d]=%s %s', 'i_', f'SKN_HSTR({a.name}[i_])',
                           f'skn_api_dtype_fault(me, {a.name}[i_])')
            else:
                why = fail(cls_of(a, cls), f'{a.name}[%d]=%s is not a valid {what}', 'i_', f'SKN_HSTR({a.name}[i_])')
            body.append(f'  if (SKN_UNLIKELY(!{lookup.format(a=a.name + "[i_]")})) ' + why)
        elif a.array:
            if a.length:
                body.append(f'if (SKN_UNLIKELY({a.length} > 0 && !{a.name})) '
                            + fail(cls_of(a, 'MPI_ERR_ARG'), f'{a.name}=NULL with {a.length}=%d', a.length))
        elif a.direction in ('out', 'inout') and a.kind not in NOT_NULL_CHECKED:
            body.append(f'if (SKN_UNLIKELY(!{a.name})) ' + fail(cls_of(a, 'MPI_ERR_ARG'), f'{a.name}=NULL'))
        elif a.kind == 'STRING' and a.direction == 'in':
            body.append(f'if (SKN_UNLIKELY(!{a.name})) ' + fail(cls_of(a, 'MPI_ERR_ARG'), f'{a.name}=NULL'))
        elif (a.least or a.bits or a.oneof) and a.direction == 'in':
            body += int_checks(a, fail, cls_of)
        elif a.kind in ('COUNT', 'XCOUNT', 'AINT') and a.direction == 'in' and (a.kind == 'COUNT' or a.err):
            pct = {'COUNT': '%d', 'XCOUNT': '%lld', 'AINT': '%td'}[a.kind]
            val = f'(long long){a.name}' if a.kind == 'XCOUNT' else a.name
            body.append(f'if (SKN_UNLIKELY({a.name} < 0)) ' + fail(cls_of(a, 'MPI_ERR_COUNT'), f'{a.name}={pct}', val))
    body += late
    if f.tools or f.ret != 'int':
        body.append(f'return impl_{f.short}({", ".join(call)});')
    else:  # an error returns what the user's handler left (api.h, skn_api_rc)
        body.append(f'return skn_api_rc(me, impl_{f.short}({", ".join(call)}));')
    lines = [f'{f.ret} PMPI_{f.short}({f.c_params()}) {{'] + ['  ' + b for b in body] + ['}', f'SKN_WEAK_ALIAS({f.short});', '']
    return '\n'.join(lines)


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
    if argv[2] == '--entries':
        sys.exit(__doc__)
    if argv[2].startswith('--entries='):
        which = argv[2].split('=', 1)[1]
        mine = [f for f in funcs if f.entry == which]
        text = (f'/* Generated from runtime/binding/functions.txt by gen_c.py: the entry points of\n'
                f' * runtime/api/{which}.c. Not a header to include anywhere else. */\n\n' +
                '\n'.join(entry(f) for f in mine))
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
