"""Reads runtime/binding/functions.txt, the one description of Skein's MPI functions.

Every binding is generated from it: the C prototypes of mpi.h (gen_c.py), and the
Fortran bindings. The format, one function per block:

    # a comment, or a section title ("# point-to-point") that groups what follows
    MPI_Name [-> rettype] [entry=FILE] [removed]
        argname  KIND  DIR  [array[:DIMS]] [len=ARG] [noconst] [err=CLASS] [nocheck] [max=N] [ctype="C type"]

KIND says what the argument is (the C type follows from it, see KINDS; a FUNCTION kind
names its callback type, FUNCTION:MPI_User_function). DIR is in, out or inout: an out or
inout scalar is passed by pointer. `array` makes it an array (C `T name[]`; DIMS adds
trailing fixed dimensions, as in `array:[3]`); an in array is `const` unless `noconst`.
`ctype` overrides the derived C type for the rare argument no kind describes.

`removed` marks an MPI-1 function that MPI-3.0 removed: still provided, but its prototype
is hidden from programs built with SKEIN_MPI_STRICT.

`entry=FILE` has the entry point generated (gen_c.py --entries FILE): PMPI_Name finds the
calling rank, checks every argument as its kind says (see gen_c.py; `nocheck` skips one,
`err=ARG` reports a bad COUNT as MPI_ERR_ARG instead of MPI_ERR_COUNT, `len=n` makes a NULL
array an error when n > 0, and on a BUFFER makes a NULL buffer an error when n > 0 elements
of the next DATATYPE argument are not empty; `any` lets a RANK or TAG be MPI_ANY_SOURCE or
MPI_ANY_TAG, `null` lets a REQUEST be MPI_REQUEST_NULL) and calls `impl_Name(me, fn,
args...)` of runtime/api/FILE.c, in which each handle argument is followed by the object
it names. Without it, PMPI_Name is
written by hand.

MPI_T (issue 13): `tools` after the header makes the entry return each error's code and
call no error handler, as the tools interface does; it needs the calling rank's MPI_T
initialized (MPI_T_ERR_NOT_INITIALIZED), unless `anytime` (MPI_T_init_thread, finalize),
and calls `impl_Name(me, args...)` (no function name: nothing is reported). `err=` takes a
full code there (err=MPI_T_ERR_INVALID_HANDLE).

Issue 13 additions (gen13): `anytime` after the header (callable outside MPI_Init ..
MPI_Finalize, as the Info functions); `err=CLASS` applies to any checked argument (a bad
handle, a NULL pointer or string, a negative count); `null` lets a handle be its
MPI_X_NULL (the implementation gets a NULL object); `uncommitted` accepts a DATATYPE that is
not committed. Arrays of handles with `len=n` are checked element by element.

Collectives (gen13): `root` on a RANK makes it a collective's root, checked against the
communicator (an intercommunicator's: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group)
with MPI_ERR_ROOT. An out REQUEST (every nonblocking call) must not be NULL: MPI_ERR_ARG,
before the call does anything. The arguments whose meaning depends on the caller's role
(buffers, counts and types significant at the root only, count arrays sized by the group)
are `nocheck` and checked by the impl_ function.

Statuses (gen13): a STATUS may be MPI_STATUS_IGNORE unless `required` (status queries,
MPI_Status_f2c/c2f: MPI_ERR_ARG); `fstatus` on a CTYPE argument makes it a Fortran status
(MPI_Fint *) that may not be NULL or MPI_F_STATUS_IGNORE. A request array with `len=n`
may not be NULL when n > 0; its elements (MPI_REQUEST_NULL allowed) are looked up by
impl_.

One-sided communication and I/O (issue 13): a RANK of a function with a WIN argument is
checked against the window's group (MPI_PROC_NULL passes). On an integer, `min=N` makes a
value below N an error, `bits=A|B` a value with any other bit set, `oneof=A,B` any other
value (MPI_ERR_ARG unless err=). `predefined` on a DATATYPE accepts predefined types only.
`required` on a pointer its kind lets be NULL (BUFFER_ADDR, FUNCTION) makes NULL an error.
A WIN or FILE that is `inout` (MPI_Win_free, MPI_File_close) is looked up through its
pointer (NULL: an error) and reports as an `in` one does. `report=H` after the header sends
the function's errors to handle H's error handler (MPI_FILE_NULL for MPI_File_open and
MPI_File_delete) instead of its WIN, FILE or COMM argument's. A VARARGS tail is not passed
to impl_.

Fortran conversions (issues 32, 33), on what the Fortran glue alone must change:
`findex` on an INT out is an index into the caller's array, 0-based in C and 1-based in
Fortran (MPI_UNDEFINED stays); `findex=N` on an INT out array says that the first *N
entries are such indices. `fint` on an AINT says that Fortran passes a default INTEGER
(the MPI-1 calls MPI-3.0 removed: MPI_TYPE_HINDEXED, MPI_TYPE_EXTENT...); an array needs
len=. A BUFFER_ADDR returns an address that Fortran receives in an INTEGER(KIND=
MPI_ADDRESS_KIND) or TYPE(C_PTR) (MPI_ALLOC_MEM's BASEPTR), unless `fbuffer`: then Fortran
passes a choice buffer that receives nothing (MPI_BUFFER_DETACH). `ftrim` on a STRING in
strips leading blanks too (info keys and values: blanks are not significant in Fortran).
`fnul` on an INT length of a STRING out counts C's terminating NUL, which Fortran's does
not (MPI_INFO_GET_STRING's buflen): Fortran's n is C's n + 1, 0 stays 0 and leaves the
string unchanged. A STRING out of a function with a LOGICAL out `flag` is copied back only
when flag is true (MPI_INFO_GET: the value is left unchanged otherwise).
"""
import re
from dataclasses import dataclass, field
from typing import List, Optional

# kind -> C base type. Kinds also tell a generator what checks and conversions apply:
# handles (COMM ... FILE) are MPI_Fint in Fortran, LOGICAL is a Fortran LOGICAL, STRING a
# CHARACTER(*), BUFFER a choice buffer, COUNT/RANK/TAG plain integers with MPI checks.
KINDS = {
    'BUFFER': 'void', 'LOCATION': 'void',
    'COUNT': 'int', 'RANK': 'int', 'TAG': 'int', 'INT': 'int', 'KEYVAL': 'int', 'LOGICAL': 'int',
    'AINT': 'MPI_Aint', 'XCOUNT': 'MPI_Count', 'OFFSET': 'MPI_Offset',
    'COMM': 'MPI_Comm', 'DATATYPE': 'MPI_Datatype', 'OP': 'MPI_Op', 'GROUP': 'MPI_Group',
    'INFO': 'MPI_Info', 'REQUEST': 'MPI_Request', 'ERRHANDLER': 'MPI_Errhandler',
    'MESSAGE': 'MPI_Message', 'WIN': 'MPI_Win', 'FILE': 'MPI_File', 'STATUS': 'MPI_Status',
    'STRING': 'char', 'ATTRVAL': 'void', 'EXTRA_STATE': 'void', 'ARGV': 'char',
    'FUNCTION': None, 'CTYPE': None,
}
# Fortran bindings (issue 15): a variadic tail (C `...`, MPI_Pcontrol); MPI_Init's argc
# (Fortran has none); an address returned through a void * (MPI_Buffer_detach); int arrays
# that may be the sentinels MPI_UNWEIGHTED/MPI_WEIGHTS_EMPTY or MPI_ERRCODES_IGNORE. A STRING
# out takes `max=` (a constant such as MPI_MAX_OBJECT_NAME, or the argument holding the
# length): the most characters C writes, without the terminating NUL.
KINDS.update({'VARARGS': None, 'ARGC': 'int', 'BUFFER_ADDR': 'void', 'WEIGHTS': 'int', 'ERRCODES': 'int'})
HANDLE_KINDS = {'COMM', 'DATATYPE', 'OP', 'GROUP', 'INFO', 'REQUEST', 'ERRHANDLER', 'MESSAGE', 'WIN', 'FILE'}
DIRS = ('in', 'out', 'inout')


@dataclass
class Arg:
    name: str
    kind: str                    # a key of KINDS
    direction: str               # in, out, inout
    array: bool = False
    dims: str = ''               # trailing fixed dimensions of an array, e.g. "[3]"
    noconst: bool = False
    function_type: str = ''      # for FUNCTION: the callback typedef
    explicit_ctype: str = ''     # for CTYPE
    length: str = ''             # len=: the argument giving an array's length
    err: str = ''                # err=: the error class of a bad value, when not the kind's
    nocheck: bool = False
    max: str = ''                # max=: the longest string a STRING out receives
    null: bool = False           # null: a handle may be its MPI_X_NULL (passed on with no object)
    uncommitted: bool = False    # uncommitted: a DATATYPE need not be committed (constructors, queries)
    wildcard: bool = False       # any: a RANK/TAG that may be MPI_ANY_SOURCE/MPI_ANY_TAG
    root: bool = False           # root: a RANK that is a collective's root (MPI_ERR_ROOT)
    required: bool = False       # required: a STATUS that may not be MPI_STATUS_IGNORE (any other
                                 # pointer a kind lets be NULL: may not be NULL)
    fstatus: bool = False        # fstatus: a Fortran status (MPI_Fint *), not MPI_F_STATUS_IGNORE
    least: str = ''              # min=N: an integer below N is an error
    bits: str = ''               # bits=MASK: an integer with a bit outside MASK is an error
    oneof: str = ''              # oneof=A,B: an integer other than A or B is an error
    predefined: bool = False     # predefined: a DATATYPE must be a predefined one
    findex: str = ''             # findex[=N]: a 0-based index in C, 1-based in Fortran ('1': a scalar)
    fint: bool = False           # fint: an AINT that Fortran passes as a default INTEGER
    fbuffer: bool = False        # fbuffer: a BUFFER_ADDR that is a choice buffer in Fortran
    ftrim: bool = False          # ftrim: a STRING in whose leading blanks Fortran drops too
    fnul: bool = False           # fnul: a string length counting C's NUL (not Fortran's)

    @property
    def ctype(self) -> str:
        """The C declaration of this argument, name included."""
        if self.explicit_ctype:
            return f'{self.explicit_ctype} {self.name}'
        if self.kind == 'FUNCTION':
            return f'{self.function_type} *{self.name}'
        if self.kind == 'ARGV':
            return f'char ***{self.name}'
        if self.kind == 'VARARGS':
            return '...'
        if self.kind == 'BUFFER_ADDR':
            return f'void *{self.name}'  # C's void * that receives a void *
        base = KINDS[self.kind]
        if self.array:
            const = 'const ' if self.direction == 'in' and not self.noconst else ''
            return f'{const}{base} {self.name}[]{self.dims}'
        if self.kind in ('BUFFER', 'LOCATION', 'STRING'):
            const = 'const ' if self.direction == 'in' else ''
            return f'{const}{base} *{self.name}'
        if self.kind in ('ATTRVAL', 'EXTRA_STATE'):
            return f'void *{self.name}'  # the C binding passes the address as void *
        if self.kind == 'STATUS':
            const = 'const ' if self.direction == 'in' else ''
            return f'{const}MPI_Status *{self.name}'
        if self.direction == 'in':
            return f'{base} {self.name}'
        return f'{base} *{self.name}'


@dataclass
class Function:
    name: str                    # MPI_Send
    ret: str = 'int'
    section: str = ''
    entry: str = ''              # the api/ file whose impl_ it calls, when generated
    removed: bool = False        # removed from the standard by MPI-3.0
    anytime: bool = False        # callable before MPI_Init / after MPI_Finalize (entry: skn_api_self_any)
    tools: bool = False          # MPI_T: errors are returned as codes, no error handler is called
    report: str = ''             # report=H: errors go to handle H's error handler (MPI_FILE_NULL)
    args: List[Arg] = field(default_factory=list)

    @property
    def short(self) -> str:      # Send
        return self.name[4:]

    def c_params(self) -> str:
        return ', '.join(a.ctype for a in self.args) or 'void'


_ARG = re.compile(r'^\s+(\w+)\s+([A-Z_]+)(?::(\w+))?\s+(in|out|inout)((?:\s+\S+)*)\s*$')


def load(path) -> List[Function]:
    funcs, seen, section, cur = [], set(), '', None
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            where = f'{path}:{lineno}'
            if not line.strip():
                continue
            if line.startswith('#'):
                title = line[1:].strip()
                if title and not line.startswith('##'):
                    section = title
                continue
            if not line[0].isspace():
                m = re.match(r'^(MPIX?_\w+)(?:\s*->\s*([\w ]+?\**))?(?:\s+entry=(\w+))?((?:\s+(?:removed|anytime|tools|report=\w+))*)\s*$', line)
                if not m:
                    raise SyntaxError(f'{where}: expected "MPI_Name [-> type] [entry=file] [removed] [anytime] [tools] [report=H]"')
                if m.group(1) in seen:
                    raise SyntaxError(f'{where}: {m.group(1)} described twice')
                seen.add(m.group(1))
                flags = m.group(4).split()
                cur = Function(m.group(1), m.group(2) or 'int', section, m.group(3) or '', 'removed' in flags)
                cur.anytime = 'anytime' in flags
                cur.tools = 'tools' in flags
                cur.report = next((x[7:] for x in flags if x.startswith('report=')), '')
                funcs.append(cur)
                continue
            m = _ARG.match(line)
            if not m or cur is None:
                raise SyntaxError(f'{where}: expected "  name KIND dir [array[:dims]] [noconst] [ctype=...]"')
            name, kind, sub, direction, rest = m.groups()
            if kind not in KINDS:
                raise SyntaxError(f'{where}: unknown kind {kind}')
            arg = Arg(name, kind, direction)
            if kind == 'FUNCTION':
                if not sub:
                    raise SyntaxError(f'{where}: FUNCTION needs its type, FUNCTION:MPI_User_function')
                arg.function_type = sub
            for opt in re.findall(r'ctype="[^"]*"|\S+', rest):
                if opt == 'array' or opt.startswith('array:'):
                    arg.array, arg.dims = True, opt[6:]
                elif opt == 'noconst':
                    arg.noconst = True
                elif opt == 'nocheck':
                    arg.nocheck = True
                elif opt == 'null':
                    arg.null = True
                elif opt == 'uncommitted':
                    arg.uncommitted = True
                elif opt == 'any':
                    arg.wildcard = True
                elif opt == 'root':
                    arg.root = True
                elif opt == 'required':
                    arg.required = True
                elif opt == 'fstatus':
                    arg.fstatus = True
                elif opt == 'predefined':
                    arg.predefined = True
                elif opt == 'findex' or opt.startswith('findex='):
                    arg.findex = opt[7:] or '1'
                elif opt in ('fint', 'fbuffer', 'ftrim', 'fnul'):
                    setattr(arg, opt, True)
                elif opt.startswith('min='):
                    arg.least = opt[4:]
                elif opt.startswith('bits='):
                    arg.bits = opt[5:]
                elif opt.startswith('oneof='):
                    arg.oneof = opt[6:]
                elif opt.startswith('len='):
                    arg.length = opt[4:]
                elif opt.startswith('max='):
                    arg.max = opt[4:]
                elif opt.startswith('err='):
                    arg.err = opt[4:]
                elif opt.startswith('ctype='):
                    arg.explicit_ctype = opt[7:-1]
                else:
                    raise SyntaxError(f'{where}: unknown option {opt}')
            cur.args.append(arg)
    return funcs
