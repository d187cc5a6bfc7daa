/* Skein: the MPI C interface (MPI-3.1 subset, see docs/user-guide.md for coverage).
 * Handles are ints: the top byte names the object kind, the rest indexes a per-rank
 * table, so a handle value means the same object kind in every rank while the object
 * it refers to (error handler, name, attributes) is that rank's own. */
#ifndef SKEIN_MPI_H
#define SKEIN_MPI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SKEIN_MPI 1
#define SKEIN_VERSION_STRING "0.1.0"

#define MPI_VERSION    3
#define MPI_SUBVERSION 1

#if defined(__GNUC__)
#define SKN_MPI_EXPORT __attribute__((visibility("default")))
#else
#define SKN_MPI_EXPORT
#endif

/* ---------------------------------------------------------------- types */
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Errhandler;
typedef int MPI_Request;
typedef int MPI_Message;
typedef int MPI_Info;
typedef int MPI_Win;
typedef int MPI_File;
typedef int MPI_Fint;
typedef ptrdiff_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;

typedef struct MPI_Status {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  int skn_cancelled;
  long long skn_bytes; /* bytes received */
} MPI_Status;

typedef void MPI_Comm_errhandler_function(MPI_Comm *, int *, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);

/* ---------------------------------------------------------------- handle kinds */
#define SKN_KIND_COMM       0x44
#define SKN_KIND_GROUP      0x48
#define SKN_KIND_DATATYPE   0x4c
#define SKN_KIND_ERRHANDLER 0x54
#define SKN_KIND_OP         0x58
#define SKN_KIND_INFO       0x5c
#define SKN_KIND_WIN        0x64
#define SKN_KIND_MESSAGE    0x6c
#define SKN_KIND_REQUEST    0x2c
#define SKN_HANDLE(kind, idx) ((int)(((unsigned)(kind) << 24) | (unsigned)(idx)))

/* ---------------------------------------------------------------- null and predefined handles */
#define MPI_COMM_NULL       SKN_HANDLE(SKN_KIND_COMM, 0)
#define MPI_COMM_WORLD      SKN_HANDLE(SKN_KIND_COMM, 1)
#define MPI_COMM_SELF       SKN_HANDLE(SKN_KIND_COMM, 2)
#define MPI_GROUP_NULL      SKN_HANDLE(SKN_KIND_GROUP, 0)
#define MPI_GROUP_EMPTY     SKN_HANDLE(SKN_KIND_GROUP, 1)
#define MPI_DATATYPE_NULL   SKN_HANDLE(SKN_KIND_DATATYPE, 0)
#define MPI_ERRHANDLER_NULL SKN_HANDLE(SKN_KIND_ERRHANDLER, 0)
#define MPI_ERRORS_ARE_FATAL SKN_HANDLE(SKN_KIND_ERRHANDLER, 1)
#define MPI_ERRORS_RETURN   SKN_HANDLE(SKN_KIND_ERRHANDLER, 2)
#define MPI_OP_NULL         SKN_HANDLE(SKN_KIND_OP, 0)
#define MPI_INFO_NULL       SKN_HANDLE(SKN_KIND_INFO, 0)
#define MPI_WIN_NULL        SKN_HANDLE(SKN_KIND_WIN, 0)
#define MPI_MESSAGE_NULL    SKN_HANDLE(SKN_KIND_MESSAGE, 0)
#define MPI_MESSAGE_NO_PROC SKN_HANDLE(SKN_KIND_MESSAGE, 0xffffff) /* never a table index */
#define MPI_REQUEST_NULL    SKN_HANDLE(SKN_KIND_REQUEST, 0)
#define MPI_FILE_NULL       0

/* Predefined datatypes: indexes into one immutable table shared by all ranks
 * (runtime/core/datatype.c keeps the same order). */
#define SKN_DT(i) SKN_HANDLE(SKN_KIND_DATATYPE, i)
#define MPI_CHAR               SKN_DT(1)
#define MPI_SIGNED_CHAR        SKN_DT(2)
#define MPI_UNSIGNED_CHAR      SKN_DT(3)
#define MPI_BYTE               SKN_DT(4)
#define MPI_WCHAR              SKN_DT(5)
#define MPI_SHORT              SKN_DT(6)
#define MPI_UNSIGNED_SHORT     SKN_DT(7)
#define MPI_INT                SKN_DT(8)
#define MPI_UNSIGNED           SKN_DT(9)
#define MPI_LONG               SKN_DT(10)
#define MPI_UNSIGNED_LONG      SKN_DT(11)
#define MPI_LONG_LONG_INT      SKN_DT(12)
#define MPI_LONG_LONG          MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG SKN_DT(13)
#define MPI_FLOAT              SKN_DT(14)
#define MPI_DOUBLE             SKN_DT(15)
#define MPI_LONG_DOUBLE        SKN_DT(16)
#define MPI_C_BOOL             SKN_DT(17)
#define MPI_INT8_T             SKN_DT(18)
#define MPI_INT16_T            SKN_DT(19)
#define MPI_INT32_T            SKN_DT(20)
#define MPI_INT64_T            SKN_DT(21)
#define MPI_UINT8_T            SKN_DT(22)
#define MPI_UINT16_T           SKN_DT(23)
#define MPI_UINT32_T           SKN_DT(24)
#define MPI_UINT64_T           SKN_DT(25)
#define MPI_AINT               SKN_DT(26)
#define MPI_OFFSET             SKN_DT(27)
#define MPI_COUNT              SKN_DT(28)
#define MPI_C_COMPLEX          SKN_DT(29)
#define MPI_C_FLOAT_COMPLEX    SKN_DT(30)
#define MPI_C_DOUBLE_COMPLEX   SKN_DT(31)
#define MPI_C_LONG_DOUBLE_COMPLEX SKN_DT(32)
#define MPI_PACKED             SKN_DT(33)
#define MPI_FLOAT_INT          SKN_DT(34)
#define MPI_DOUBLE_INT         SKN_DT(35)
#define MPI_LONG_INT           SKN_DT(36)
#define MPI_2INT               SKN_DT(37)
#define MPI_SHORT_INT          SKN_DT(38)
#define MPI_LONG_DOUBLE_INT    SKN_DT(39)
#define MPI_CXX_BOOL           SKN_DT(40)
#define MPI_CXX_FLOAT_COMPLEX  SKN_DT(41)
#define MPI_CXX_DOUBLE_COMPLEX SKN_DT(42)
#define MPI_CXX_LONG_DOUBLE_COMPLEX SKN_DT(43)
#define MPI_CHARACTER          SKN_DT(44)
#define MPI_INTEGER            SKN_DT(45)
#define MPI_REAL               SKN_DT(46)
#define MPI_DOUBLE_PRECISION   SKN_DT(47)
#define MPI_LOGICAL            SKN_DT(48)
#define MPI_COMPLEX            SKN_DT(49)
#define MPI_DOUBLE_COMPLEX     SKN_DT(50)
#define MPI_2INTEGER           SKN_DT(51)
#define MPI_2REAL              SKN_DT(52)
#define MPI_2DOUBLE_PRECISION  SKN_DT(53)
#define MPI_INTEGER1           SKN_DT(54)
#define MPI_INTEGER2           SKN_DT(55)
#define MPI_INTEGER4           SKN_DT(56)
#define MPI_INTEGER8           SKN_DT(57)
#define MPI_REAL4              SKN_DT(58)
#define MPI_REAL8              SKN_DT(59)
#define SKN_DT_PREDEFINED_COUNT 60

/* Reduction operations (collectives: see docs/user-guide.md for coverage). */
#define MPI_MAX     SKN_HANDLE(SKN_KIND_OP, 1)
#define MPI_MIN     SKN_HANDLE(SKN_KIND_OP, 2)
#define MPI_SUM     SKN_HANDLE(SKN_KIND_OP, 3)
#define MPI_PROD    SKN_HANDLE(SKN_KIND_OP, 4)
#define MPI_LAND    SKN_HANDLE(SKN_KIND_OP, 5)
#define MPI_BAND    SKN_HANDLE(SKN_KIND_OP, 6)
#define MPI_LOR     SKN_HANDLE(SKN_KIND_OP, 7)
#define MPI_BOR     SKN_HANDLE(SKN_KIND_OP, 8)
#define MPI_LXOR    SKN_HANDLE(SKN_KIND_OP, 9)
#define MPI_BXOR    SKN_HANDLE(SKN_KIND_OP, 10)
#define MPI_MINLOC  SKN_HANDLE(SKN_KIND_OP, 11)
#define MPI_MAXLOC  SKN_HANDLE(SKN_KIND_OP, 12)
#define MPI_REPLACE SKN_HANDLE(SKN_KIND_OP, 13)
#define MPI_NO_OP   SKN_HANDLE(SKN_KIND_OP, 14)

/* ---------------------------------------------------------------- constants */
#define MPI_PROC_NULL   (-1)
#define MPI_ANY_SOURCE  (-2)
#define MPI_ROOT        (-3)
#define MPI_ANY_TAG     (-1)
#define MPI_UNDEFINED   (-32766)
#define MPI_KEYVAL_INVALID 0

#define MPI_BOTTOM   ((void *)0)
#define MPI_IN_PLACE ((void *)-1)

#define MPI_STATUS_IGNORE   ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_ERRCODES_IGNORE ((int *)0)

#define MPI_BSEND_OVERHEAD 96
#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_LIBRARY_VERSION_STRING 8192
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024

#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE   3

#define MPI_IDENT     0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR   2
#define MPI_UNEQUAL   3

#define MPI_COMM_TYPE_SHARED 1

/* Predefined attribute keys. */
#define MPI_TAG_UB          1
#define MPI_HOST            2
#define MPI_IO              3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_UNIVERSE_SIZE   5
#define MPI_APPNUM          6
#define MPI_LASTUSEDCODE    7

/* ---------------------------------------------------------------- error classes */
#define MPI_SUCCESS          0
#define MPI_ERR_BUFFER       1
#define MPI_ERR_COUNT        2
#define MPI_ERR_TYPE         3
#define MPI_ERR_TAG          4
#define MPI_ERR_COMM         5
#define MPI_ERR_RANK         6
#define MPI_ERR_REQUEST      7
#define MPI_ERR_ROOT         8
#define MPI_ERR_GROUP        9
#define MPI_ERR_OP           10
#define MPI_ERR_TOPOLOGY     11
#define MPI_ERR_DIMS         12
#define MPI_ERR_ARG          13
#define MPI_ERR_UNKNOWN      14
#define MPI_ERR_TRUNCATE     15
#define MPI_ERR_OTHER        16
#define MPI_ERR_INTERN       17
#define MPI_ERR_PENDING      18
#define MPI_ERR_IN_STATUS    19
#define MPI_ERR_ACCESS       20
#define MPI_ERR_AMODE        21
#define MPI_ERR_ASSERT       22
#define MPI_ERR_BAD_FILE     23
#define MPI_ERR_BASE         24
#define MPI_ERR_CONVERSION   25
#define MPI_ERR_DISP         26
#define MPI_ERR_DUP_DATAREP  27
#define MPI_ERR_FILE_EXISTS  28
#define MPI_ERR_FILE_IN_USE  29
#define MPI_ERR_FILE         30
#define MPI_ERR_INFO_KEY     31
#define MPI_ERR_INFO_NOKEY   32
#define MPI_ERR_INFO_VALUE   33
#define MPI_ERR_INFO         34
#define MPI_ERR_IO           35
#define MPI_ERR_KEYVAL       36
#define MPI_ERR_LOCKTYPE     37
#define MPI_ERR_NAME         38
#define MPI_ERR_NO_MEM       39
#define MPI_ERR_NOT_SAME     40
#define MPI_ERR_NO_SPACE     41
#define MPI_ERR_NO_SUCH_FILE 42
#define MPI_ERR_PORT         43
#define MPI_ERR_QUOTA        44
#define MPI_ERR_READ_ONLY    45
#define MPI_ERR_RMA_CONFLICT 46
#define MPI_ERR_RMA_SYNC     47
#define MPI_ERR_SERVICE      48
#define MPI_ERR_SIZE         49
#define MPI_ERR_SPAWN        50
#define MPI_ERR_UNSUPPORTED_DATAREP   51
#define MPI_ERR_UNSUPPORTED_OPERATION 52
#define MPI_ERR_WIN          53
#define MPI_ERR_RMA_RANGE    54
#define MPI_ERR_RMA_ATTACH   55
#define MPI_ERR_RMA_SHARED   56
#define MPI_ERR_RMA_FLAVOR   57
/* the tools interface's classes (MPI-3.1 14.3.9), returned by MPI_T_* directly */
#define MPI_T_ERR_MEMORY            58
#define MPI_T_ERR_NOT_INITIALIZED   59
#define MPI_T_ERR_CANNOT_INIT       60
#define MPI_T_ERR_INVALID_INDEX     61
#define MPI_T_ERR_INVALID_ITEM      62
#define MPI_T_ERR_INVALID_HANDLE    63
#define MPI_T_ERR_OUT_OF_HANDLES    64
#define MPI_T_ERR_OUT_OF_SESSIONS   65
#define MPI_T_ERR_INVALID_SESSION   66
#define MPI_T_ERR_CVAR_SET_NOT_NOW  67
#define MPI_T_ERR_CVAR_SET_NEVER    68
#define MPI_T_ERR_PVAR_NO_STARTSTOP 69
#define MPI_T_ERR_PVAR_NO_WRITE     70
#define MPI_T_ERR_PVAR_NO_ATOMIC    71
#define MPI_T_ERR_INVALID_NAME      72
#define MPI_ERR_LASTCODE     72

/* ---------------------------------------------------------------- functions
 * Each MPI_X is a weak alias of PMPI_X, for profiling tools. */
#define SKN_DECL(ret, name, args) \
  SKN_MPI_EXPORT ret MPI_##name args; \
  SKN_MPI_EXPORT ret PMPI_##name args

/* environment */
SKN_DECL(int, Init, (int *argc, char ***argv));
SKN_DECL(int, Init_thread, (int *argc, char ***argv, int required, int *provided));
SKN_DECL(int, Initialized, (int *flag));
SKN_DECL(int, Finalize, (void));
SKN_DECL(int, Finalized, (int *flag));
SKN_DECL(int, Query_thread, (int *provided));
SKN_DECL(int, Is_thread_main, (int *flag));
SKN_DECL(int, Abort, (MPI_Comm comm, int errorcode));
SKN_DECL(double, Wtime, (void));
SKN_DECL(double, Wtick, (void));
SKN_DECL(int, Get_processor_name, (char *name, int *resultlen));
SKN_DECL(int, Get_version, (int *version, int *subversion));
SKN_DECL(int, Get_library_version, (char *version, int *resultlen));

/* errors */
SKN_DECL(int, Error_string, (int errorcode, char *string, int *resultlen));
SKN_DECL(int, Error_class, (int errorcode, int *errorclass));
SKN_DECL(int, Comm_create_errhandler, (MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler));
SKN_DECL(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler));
SKN_DECL(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler));
SKN_DECL(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode));
SKN_DECL(int, Errhandler_free, (MPI_Errhandler *errhandler));

/* communicators */
SKN_DECL(int, Comm_rank, (MPI_Comm comm, int *rank));
SKN_DECL(int, Comm_size, (MPI_Comm comm, int *size));
SKN_DECL(int, Barrier, (MPI_Comm comm));

/* point-to-point */
SKN_DECL(int, Send, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm));
SKN_DECL(int, Ssend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm));
SKN_DECL(int, Rsend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm));
SKN_DECL(int, Bsend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm));
SKN_DECL(int, Recv, (void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status));
SKN_DECL(int, Isend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Issend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Irsend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Ibsend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Irecv, (void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Send_init, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Ssend_init, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Rsend_init, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Bsend_init, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Recv_init, (void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Start, (MPI_Request *req));
SKN_DECL(int, Startall, (int count, MPI_Request reqs[]));
SKN_DECL(int, Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                         MPI_Comm comm, MPI_Status *status));
SKN_DECL(int, Sendrecv_replace, (void *buf, int count, MPI_Datatype dt, int dest, int sendtag, int source,
                                 int recvtag, MPI_Comm comm, MPI_Status *status));
SKN_DECL(int, Buffer_attach, (void *buffer, int size));
SKN_DECL(int, Buffer_detach, (void *buffer_addr, int *size));

/* completion */
SKN_DECL(int, Wait, (MPI_Request *req, MPI_Status *status));
SKN_DECL(int, Waitall, (int count, MPI_Request reqs[], MPI_Status statuses[]));
SKN_DECL(int, Waitany, (int count, MPI_Request reqs[], int *index, MPI_Status *status));
SKN_DECL(int, Waitsome, (int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]));
SKN_DECL(int, Test, (MPI_Request *req, int *flag, MPI_Status *status));
SKN_DECL(int, Testall, (int count, MPI_Request reqs[], int *flag, MPI_Status statuses[]));
SKN_DECL(int, Testany, (int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status));
SKN_DECL(int, Testsome, (int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]));
SKN_DECL(int, Request_free, (MPI_Request *req));
SKN_DECL(int, Request_get_status, (MPI_Request req, int *flag, MPI_Status *status));
SKN_DECL(int, Cancel, (MPI_Request *req));
SKN_DECL(int, Test_cancelled, (const MPI_Status *status, int *flag));

/* probe */
SKN_DECL(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status));
SKN_DECL(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status));
SKN_DECL(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status));
SKN_DECL(int, Improbe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status));
SKN_DECL(int, Mrecv, (void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status));
SKN_DECL(int, Imrecv, (void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Request *req));

/* status and datatypes */
SKN_DECL(int, Get_count, (const MPI_Status *status, MPI_Datatype dt, int *count));
SKN_DECL(int, Get_elements, (const MPI_Status *status, MPI_Datatype dt, int *count));
SKN_DECL(int, Get_elements_x, (const MPI_Status *status, MPI_Datatype dt, MPI_Count *count));
SKN_DECL(int, Status_set_elements, (MPI_Status *status, MPI_Datatype dt, int count));
SKN_DECL(int, Status_set_cancelled, (MPI_Status *status, int flag));
SKN_DECL(int, Type_size, (MPI_Datatype dt, int *size));
SKN_DECL(int, Type_get_extent, (MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent));

/* derived datatypes */
#define MPI_COMBINER_NAMED            1
#define MPI_COMBINER_DUP              2
#define MPI_COMBINER_CONTIGUOUS       3
#define MPI_COMBINER_VECTOR           4
#define MPI_COMBINER_HVECTOR_INTEGER  5
#define MPI_COMBINER_HVECTOR          6
#define MPI_COMBINER_INDEXED          7
#define MPI_COMBINER_HINDEXED_INTEGER 8
#define MPI_COMBINER_HINDEXED         9
#define MPI_COMBINER_INDEXED_BLOCK    10
#define MPI_COMBINER_STRUCT_INTEGER   11
#define MPI_COMBINER_STRUCT           12
#define MPI_COMBINER_SUBARRAY         13
#define MPI_COMBINER_DARRAY           14
#define MPI_COMBINER_F90_REAL         15
#define MPI_COMBINER_F90_COMPLEX      16
#define MPI_COMBINER_F90_INTEGER      17
#define MPI_COMBINER_RESIZED          18
#define MPI_COMBINER_HINDEXED_BLOCK   19
#define MPI_ORDER_C       56
#define MPI_ORDER_FORTRAN 57
#define MPI_DISTRIBUTE_BLOCK     121
#define MPI_DISTRIBUTE_CYCLIC    122
#define MPI_DISTRIBUTE_NONE      123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)
#define MPI_TYPECLASS_REAL    1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3
SKN_DECL(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype));
SKN_DECL(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype));
SKN_DECL(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                    MPI_Datatype *newtype));
SKN_DECL(int, Type_indexed, (int count, const int array_of_blocklengths[], const int array_of_displacements[],
                             MPI_Datatype oldtype, MPI_Datatype *newtype));
SKN_DECL(int, Type_create_hindexed, (int count, const int array_of_blocklengths[],
                                     const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype *newtype));
SKN_DECL(int, Type_create_indexed_block, (int count, int blocklength, const int array_of_displacements[],
                                          MPI_Datatype oldtype, MPI_Datatype *newtype));
SKN_DECL(int, Type_create_hindexed_block, (int count, int blocklength, const MPI_Aint array_of_displacements[],
                                           MPI_Datatype oldtype, MPI_Datatype *newtype));
SKN_DECL(int, Type_create_struct, (int count, const int array_of_blocklengths[],
                                   const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                                   MPI_Datatype *newtype));
SKN_DECL(int, Type_create_subarray, (int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                                     const int array_of_starts[], int order, MPI_Datatype oldtype,
                                     MPI_Datatype *newtype));
SKN_DECL(int, Type_create_darray, (int size, int rank, int ndims, const int array_of_gsizes[],
                                   const int array_of_distribs[], const int array_of_dargs[],
                                   const int array_of_psizes[], int order, MPI_Datatype oldtype,
                                   MPI_Datatype *newtype));
SKN_DECL(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype));
SKN_DECL(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype));
SKN_DECL(int, Type_commit, (MPI_Datatype *datatype));
SKN_DECL(int, Type_free, (MPI_Datatype *datatype));
SKN_DECL(int, Type_size_x, (MPI_Datatype dt, MPI_Count *size));
SKN_DECL(int, Type_get_extent_x, (MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent));
SKN_DECL(int, Type_get_true_extent, (MPI_Datatype dt, MPI_Aint *true_lb, MPI_Aint *true_extent));
SKN_DECL(int, Type_get_true_extent_x, (MPI_Datatype dt, MPI_Count *true_lb, MPI_Count *true_extent));
SKN_DECL(int, Type_get_envelope, (MPI_Datatype dt, int *num_integers, int *num_addresses, int *num_datatypes,
                                  int *combiner));
SKN_DECL(int, Type_get_contents, (MPI_Datatype dt, int max_integers, int max_addresses, int max_datatypes,
                                  int array_of_integers[], MPI_Aint array_of_addresses[],
                                  MPI_Datatype array_of_datatypes[]));
SKN_DECL(int, Type_match_size, (int typeclass, int size, MPI_Datatype *datatype));
SKN_DECL(int, Get_address, (const void *location, MPI_Aint *address));
SKN_DECL(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp));
SKN_DECL(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2));
SKN_DECL(int, Pack, (const void *inbuf, int incount, MPI_Datatype dt, void *outbuf, int outsize, int *position,
                     MPI_Comm comm));
SKN_DECL(int, Unpack, (const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype dt,
                       MPI_Comm comm));
SKN_DECL(int, Pack_size, (int incount, MPI_Datatype dt, MPI_Comm comm, int *size));
SKN_DECL(int, Pack_external, (const char datarep[], const void *inbuf, int incount, MPI_Datatype dt, void *outbuf,
                              MPI_Aint outsize, MPI_Aint *position));
SKN_DECL(int, Unpack_external, (const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position,
                                void *outbuf, int outcount, MPI_Datatype dt));
SKN_DECL(int, Pack_external_size, (const char datarep[], int incount, MPI_Datatype dt, MPI_Aint *size));

/* communicator management */
SKN_DECL(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm));
SKN_DECL(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm));
SKN_DECL(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req));
SKN_DECL(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm));
SKN_DECL(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm));
SKN_DECL(int, Comm_free, (MPI_Comm *comm));
SKN_DECL(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result));
SKN_DECL(int, Comm_set_name, (MPI_Comm comm, const char *name));
SKN_DECL(int, Comm_get_name, (MPI_Comm comm, char *name, int *resultlen));
SKN_DECL(int, Comm_test_inter, (MPI_Comm comm, int *flag));
SKN_DECL(int, Comm_remote_size, (MPI_Comm comm, int *size));
SKN_DECL(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group));
SKN_DECL(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader,
                                 int tag, MPI_Comm *newintercomm));
SKN_DECL(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm));

/* collectives */
SKN_DECL(int, Bcast, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm));
SKN_DECL(int, Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm));
SKN_DECL(int, Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm));
SKN_DECL(int, Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm));
SKN_DECL(int, Scatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm));
SKN_DECL(int, Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm));
SKN_DECL(int, Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm));
SKN_DECL(int, Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm));
SKN_DECL(int, Alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                          void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                          MPI_Comm comm));
SKN_DECL(int, Alltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                          const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                          const MPI_Datatype recvtypes[], MPI_Comm comm));
SKN_DECL(int, Reduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                       MPI_Comm comm));
SKN_DECL(int, Allreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm));
SKN_DECL(int, Reduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype dt,
                               MPI_Op op, MPI_Comm comm));
SKN_DECL(int, Reduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype dt, MPI_Op op,
                                     MPI_Comm comm));
SKN_DECL(int, Scan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm));
SKN_DECL(int, Exscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm));
SKN_DECL(int, Reduce_local, (const void *inbuf, void *inoutbuf, int count, MPI_Datatype dt, MPI_Op op));
/* nonblocking collectives */
SKN_DECL(int, Ibarrier, (MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Ibcast, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Igather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Igatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Request *req));
SKN_DECL(int, Iscatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Iscatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                          MPI_Request *req));
SKN_DECL(int, Iallgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Iallgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *req));
SKN_DECL(int, Ialltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Ialltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Ialltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                           const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Ireduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                        MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Iallreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                           MPI_Request *req));
SKN_DECL(int, Ireduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype dt,
                                MPI_Op op, MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Ireduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype dt, MPI_Op op,
                                      MPI_Comm comm, MPI_Request *req));
SKN_DECL(int, Iscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                      MPI_Request *req));
SKN_DECL(int, Iexscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                        MPI_Request *req));

SKN_DECL(int, Op_create, (MPI_User_function *fn, int commute, MPI_Op *op));
SKN_DECL(int, Op_free, (MPI_Op *op));
SKN_DECL(int, Op_commutative, (MPI_Op op, int *commute));

/* groups, topologies, attributes, info */
#define MPI_GRAPH      1
#define MPI_CART       2
#define MPI_DIST_GRAPH 3
/* Weight sentinels are addresses of an immutable library object (never read), not small
 * integers cast to pointers, so compilers do not warn about reading through them. */
SKN_MPI_EXPORT extern const int MPIX_WEIGHT_SENTINELS[2];
#define MPI_UNWEIGHTED    ((int *)&MPIX_WEIGHT_SENTINELS[0])
#define MPI_WEIGHTS_EMPTY ((int *)&MPIX_WEIGHT_SENTINELS[1])

typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void *attribute_val, void *extra_state);
typedef MPI_Comm_copy_attr_function MPI_Copy_function;     /* deprecated names (MPI-1) */
typedef MPI_Comm_delete_attr_function MPI_Delete_function;
/* Predefined callbacks: real functions, so their addresses can be compared and passed. */
SKN_MPI_EXPORT int MPI_COMM_NULL_COPY_FN(MPI_Comm, int, void *, void *, void *, int *);
SKN_MPI_EXPORT int MPI_COMM_DUP_FN(MPI_Comm, int, void *, void *, void *, int *);
SKN_MPI_EXPORT int MPI_COMM_NULL_DELETE_FN(MPI_Comm, int, void *, void *);
/* Datatype attributes: the same shapes, with a datatype handle. */
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval, void *attribute_val,
                                          void *extra_state);
SKN_MPI_EXPORT int MPI_TYPE_NULL_COPY_FN(MPI_Datatype, int, void *, void *, void *, int *);
SKN_MPI_EXPORT int MPI_TYPE_DUP_FN(MPI_Datatype, int, void *, void *, void *, int *);
SKN_MPI_EXPORT int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype, int, void *, void *);
#define MPI_NULL_COPY_FN   MPI_COMM_NULL_COPY_FN
#define MPI_DUP_FN         MPI_COMM_DUP_FN
#define MPI_NULL_DELETE_FN MPI_COMM_NULL_DELETE_FN

SKN_DECL(int, Comm_group, (MPI_Comm comm, MPI_Group *group));
SKN_DECL(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm));
SKN_DECL(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm));
SKN_DECL(int, Group_size, (MPI_Group group, int *size));
SKN_DECL(int, Group_rank, (MPI_Group group, int *rank));
SKN_DECL(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]));
SKN_DECL(int, Group_compare, (MPI_Group group1, MPI_Group group2, int *result));
SKN_DECL(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup));
SKN_DECL(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup));
SKN_DECL(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup));
SKN_DECL(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup));
SKN_DECL(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup));
SKN_DECL(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup));
SKN_DECL(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup));
SKN_DECL(int, Group_free, (MPI_Group *group));

SKN_DECL(int, Dims_create, (int nnodes, int ndims, int dims[]));
SKN_DECL(int, Cart_create, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                            MPI_Comm *comm_cart));
SKN_DECL(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]));
SKN_DECL(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank));
SKN_DECL(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest));
SKN_DECL(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm));
SKN_DECL(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]));
SKN_DECL(int, Cartdim_get, (MPI_Comm comm, int *ndims));
SKN_DECL(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank));
SKN_DECL(int, Graph_create, (MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                             MPI_Comm *comm_graph));
SKN_DECL(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]));
SKN_DECL(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges));
SKN_DECL(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]));
SKN_DECL(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors));
SKN_DECL(int, Graph_map, (MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank));
SKN_DECL(int, Dist_graph_create_adjacent, (MPI_Comm comm, int indegree, const int sources[],
                                           const int sourceweights[], int outdegree, const int destinations[],
                                           const int destweights[], MPI_Info info, int reorder,
                                           MPI_Comm *comm_dist_graph));
SKN_DECL(int, Dist_graph_create, (MPI_Comm comm, int n, const int sources[], const int degrees[],
                                  const int destinations[], const int weights[], MPI_Info info, int reorder,
                                  MPI_Comm *comm_dist_graph));
SKN_DECL(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                                     int maxoutdegree, int destinations[], int destweights[]));
SKN_DECL(int, Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree, int *outdegree, int *weighted));
SKN_DECL(int, Topo_test, (MPI_Comm comm, int *status));
SKN_DECL(int, Neighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm));
SKN_DECL(int, Neighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                    MPI_Comm comm));
SKN_DECL(int, Neighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm));
SKN_DECL(int, Neighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm));
SKN_DECL(int, Neighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm));

SKN_DECL(int, Type_create_keyval, (MPI_Type_copy_attr_function *type_copy_attr_fn,
                                   MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                                   void *extra_state));
SKN_DECL(int, Type_free_keyval, (int *type_keyval));
SKN_DECL(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val));
SKN_DECL(int, Type_get_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag));
SKN_DECL(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval));
SKN_DECL(int, Type_set_name, (MPI_Datatype datatype, const char *type_name));
SKN_DECL(int, Type_get_name, (MPI_Datatype datatype, char *type_name, int *resultlen));
SKN_DECL(int, Comm_create_keyval, (MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                                   MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                                   void *extra_state));
SKN_DECL(int, Comm_free_keyval, (int *comm_keyval));
SKN_DECL(int, Comm_set_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val));
SKN_DECL(int, Comm_get_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag));
SKN_DECL(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval));
SKN_DECL(int, Keyval_create, (MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                              void *extra_state));
SKN_DECL(int, Keyval_free, (int *keyval));
SKN_DECL(int, Attr_put, (MPI_Comm comm, int keyval, void *attribute_val));
SKN_DECL(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val, int *flag));
SKN_DECL(int, Attr_delete, (MPI_Comm comm, int keyval));

SKN_DECL(int, Info_create, (MPI_Info *info));
SKN_DECL(int, Info_set, (MPI_Info info, const char *key, const char *value));
SKN_DECL(int, Info_get, (MPI_Info info, const char *key, int valuelen, char *value, int *flag));
SKN_DECL(int, Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag));
SKN_DECL(int, Info_get_nkeys, (MPI_Info info, int *nkeys));
SKN_DECL(int, Info_get_nthkey, (MPI_Info info, int n, char *key));
SKN_DECL(int, Info_delete, (MPI_Info info, const char *key));
SKN_DECL(int, Info_dup, (MPI_Info info, MPI_Info *newinfo));
SKN_DECL(int, Info_free, (MPI_Info *info));
#define MPI_Group_c2f(g) ((MPI_Fint)(g))
#define MPI_Group_f2c(g) ((MPI_Group)(g))
#define MPI_Info_c2f(i) ((MPI_Fint)(i))
#define MPI_Info_f2c(i) ((MPI_Info)(i))

/* handle conversion (handles are ints, so these are identities) */
#define MPI_Comm_c2f(c) ((MPI_Fint)(c))
#define MPI_Comm_f2c(c) ((MPI_Comm)(c))
#define MPI_Type_c2f(t) ((MPI_Fint)(t))
#define MPI_Type_f2c(t) ((MPI_Datatype)(t))
#define MPI_Request_c2f(r) ((MPI_Fint)(r))
#define MPI_Request_f2c(r) ((MPI_Request)(r))

/* ---------------------------------------------------------------- conformance (issue 17)
 * The rest of MPI-3.1 outside one-sided and I/O, a few MPI-4.0 calls, and the MPI-1 calls
 * MPI-3.0 removed (define SKEIN_MPI_STRICT to hide those). */

/* user error classes, codes and strings */
SKN_DECL(int, Add_error_class, (int *errorclass));
SKN_DECL(int, Add_error_code, (int errorclass, int *errorcode));
SKN_DECL(int, Add_error_string, (int errorcode, const char *string));

/* generalized requests */
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);
SKN_DECL(int, Grequest_start, (MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                               MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request));
SKN_DECL(int, Grequest_complete, (MPI_Request request));

/* handle conversion for the remaining handle kinds (identities) */
#define MPI_Message_c2f(m) ((MPI_Fint)(m))
#define MPI_Message_f2c(m) ((MPI_Message)(m))
#define MPI_Op_c2f(o) ((MPI_Fint)(o))
#define MPI_Op_f2c(o) ((MPI_Op)(o))
#define MPI_Errhandler_c2f(e) ((MPI_Fint)(e))
#define MPI_Errhandler_f2c(e) ((MPI_Errhandler)(e))
#define MPI_Win_c2f(w) ((MPI_Fint)(w))
#define MPI_Win_f2c(w) ((MPI_Win)(w))
#define MPI_File_c2f(f) ((MPI_Fint)(f))
#define MPI_File_f2c(f) ((MPI_File)(f))

/* MPI-3.1 large counts, the one missing */
SKN_DECL(int, Status_set_elements_x, (MPI_Status *status, MPI_Datatype dt, MPI_Count count));

/* info on communicators; MPI_INFO_ENV (command, argv, maxprocs, soft, host, arch, wdir,
 * file, thread_level: those that apply); MPI-4.0 Info_get_string */
#define MPI_INFO_ENV SKN_HANDLE(SKN_KIND_INFO, 0xfffffe)
SKN_DECL(int, Comm_set_info, (MPI_Comm comm, MPI_Info info));
SKN_DECL(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info_used));
SKN_DECL(int, Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *req));
SKN_DECL(int, Info_get_string, (MPI_Info info, const char *key, int *buflen, char *value, int *flag));

/* The tools interface (api/mpit.c): Skein's settings as read-only control variables in
 * one category; no performance variables yet. */
typedef struct skn_t_enum *MPI_T_enum;
typedef struct skn_t_cvar *MPI_T_cvar_handle;
typedef struct skn_t_session *MPI_T_pvar_session;
typedef struct skn_t_pvar *MPI_T_pvar_handle;
#define MPI_T_ENUM_NULL ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_VERBOSITY_USER_BASIC    1
#define MPI_T_VERBOSITY_USER_DETAIL   2
#define MPI_T_VERBOSITY_USER_ALL      3
#define MPI_T_VERBOSITY_TUNER_BASIC   4
#define MPI_T_VERBOSITY_TUNER_DETAIL  5
#define MPI_T_VERBOSITY_TUNER_ALL     6
#define MPI_T_VERBOSITY_MPIDEV_BASIC  7
#define MPI_T_VERBOSITY_MPIDEV_DETAIL 8
#define MPI_T_VERBOSITY_MPIDEV_ALL    9
#define MPI_T_BIND_NO_OBJECT      1
#define MPI_T_BIND_MPI_COMM       2
#define MPI_T_BIND_MPI_DATATYPE   3
#define MPI_T_BIND_MPI_ERRHANDLER 4
#define MPI_T_BIND_MPI_FILE       5
#define MPI_T_BIND_MPI_GROUP      6
#define MPI_T_BIND_MPI_OP         7
#define MPI_T_BIND_MPI_REQUEST    8
#define MPI_T_BIND_MPI_WIN        9
#define MPI_T_BIND_MPI_MESSAGE    10
#define MPI_T_BIND_MPI_INFO       11
#define MPI_T_SCOPE_CONSTANT 1
#define MPI_T_SCOPE_READONLY 2
#define MPI_T_SCOPE_LOCAL    3
#define MPI_T_SCOPE_GROUP    4
#define MPI_T_SCOPE_GROUP_EQ 5
#define MPI_T_SCOPE_ALL      6
#define MPI_T_SCOPE_ALL_EQ   7
SKN_DECL(int, T_init_thread, (int required, int *provided));
SKN_DECL(int, T_finalize, (void));
SKN_DECL(int, T_cvar_get_num, (int *num_cvar));
SKN_DECL(int, T_cvar_get_info, (int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                                MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope));
SKN_DECL(int, T_cvar_get_index, (const char *name, int *cvar_index));
SKN_DECL(int, T_cvar_handle_alloc, (int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count));
SKN_DECL(int, T_cvar_handle_free, (MPI_T_cvar_handle *handle));
SKN_DECL(int, T_cvar_read, (MPI_T_cvar_handle handle, void *buf));
SKN_DECL(int, T_cvar_write, (MPI_T_cvar_handle handle, const void *buf));
SKN_DECL(int, T_pvar_get_num, (int *num_pvar));
SKN_DECL(int, T_category_get_num, (int *num_cat));
SKN_DECL(int, T_category_get_info, (int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                                    int *num_cvars, int *num_pvars, int *num_categories));
SKN_DECL(int, T_category_get_cvars, (int cat_index, int len, int indices[]));
SKN_DECL(int, T_category_changed, (int *stamp));

/* MPI-1 calls removed by MPI-3.0 (api/deprecated.c) */
#ifndef SKEIN_MPI_STRICT
typedef MPI_Comm_errhandler_function MPI_Handler_function;
#define MPI_LB SKN_DT(0xfffff0) /* bound markers, for MPI_Type_struct only */
#define MPI_UB SKN_DT(0xfffff1)
SKN_DECL(int, Address, (void *location, MPI_Aint *address));
SKN_DECL(int, Type_extent, (MPI_Datatype dt, MPI_Aint *extent));
SKN_DECL(int, Type_lb, (MPI_Datatype dt, MPI_Aint *displacement));
SKN_DECL(int, Type_ub, (MPI_Datatype dt, MPI_Aint *displacement));
SKN_DECL(int, Type_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype));
SKN_DECL(int, Type_hindexed, (int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype));
SKN_DECL(int, Type_struct, (int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype types[],
                            MPI_Datatype *newtype));
SKN_DECL(int, Errhandler_create, (MPI_Handler_function *function, MPI_Errhandler *errhandler));
SKN_DECL(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler));
SKN_DECL(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler *errhandler));
#endif

/* ---------------------------------------------------------------- Skein extensions (MPIX_) */
/* The calling rank gives its worker to another ready rank; returns at once if none. */
SKN_MPI_EXPORT int MPIX_Yield(void);

/* Per-rank heap (docs/user-guide.md, "Per-rank heap"). Sizes are usable block sizes in
 * bytes. Called by a rank or a thread it created; MPI_ERR_ARG for NULL, MPI_ERR_OTHER
 * from a thread of no rank. With the heap off, enabled is 0 and the rest is zero. */
typedef struct MPIX_Heap_stats {
  int enabled;                  /* the rank has its own jemalloc arena */
  int numa_node;                /* OS index of the node its memory is bound to, -1 if none */
  int arena;                    /* jemalloc arena index */
  unsigned long long nmalloc;   /* allocations by the rank and its threads (realloc: one each) */
  unsigned long long nfree;     /* frees by the rank and its threads */
  size_t in_use;                /* bytes allocated and not freed by the rank and its threads */
  size_t peak;                  /* high-water mark of in_use */
  size_t arena_allocated;       /* bytes of live blocks in the rank's arena, wherever freed */
  size_t arena_resident;        /* resident bytes of the arena: blocks, free pages, metadata */
  size_t arena_metadata;        /* jemalloc's own metadata for the arena */
  size_t overhead;              /* arena_resident - arena_allocated */
} MPIX_Heap_stats;
SKN_MPI_EXPORT int MPIX_Heap_get_stats(MPIX_Heap_stats *stats);

/* The page pool shared by the ranks of this process. */
typedef struct MPIX_Heap_pool_stats {
  int recycling;                /* pages freed by one arena are reused by others */
  unsigned long long maps;      /* address space mapped for rank arenas (mmap calls) */
  unsigned long long unmaps;    /* ... and unmapped */
  unsigned long long reused_bytes; /* bytes handed out again while still resident */
  unsigned long long purges, purge_bytes; /* pages given back to the kernel (madvise) */
  size_t free_bytes;            /* now: free in the pool */
  size_t resident_free_bytes;   /* now: free and possibly still resident (at most SKEIN_HEAP_KEEP per node) */
} MPIX_Heap_pool_stats;
SKN_MPI_EXPORT int MPIX_Heap_get_pool_stats(MPIX_Heap_pool_stats *stats);

#undef SKN_DECL

#ifdef __cplusplus
}
#endif
#endif /* SKEIN_MPI_H */
