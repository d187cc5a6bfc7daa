/*
 * errors.c - error handlers and error classes.
 *
 *  - The default error handler of MPI_COMM_WORLD and MPI_COMM_SELF is
 *    MPI_ERRORS_ARE_FATAL; when rank 0 sets MPI_ERRORS_RETURN on
 *    MPI_COMM_WORLD, the other ranks still see MPI_ERRORS_ARE_FATAL (error
 *    handlers are per rank even though MPI_COMM_WORLD is one handle).
 *  - With MPI_ERRORS_RETURN (set on MPI_COMM_WORLD and MPI_COMM_SELF, so that
 *    errors not tied to a communicator also return under MPI-3.1 and MPI-4
 *    rules), wrong arguments return the right class (via MPI_Error_class):
 *      dest/source out of range or MPI_ANY_SOURCE as dest -> MPI_ERR_RANK
 *      negative tag, MPI_ANY_TAG on a send               -> MPI_ERR_TAG
 *      negative count                                     -> MPI_ERR_COUNT
 *      MPI_COMM_NULL                                      -> MPI_ERR_COMM
 *      MPI_DATATYPE_NULL                                  -> MPI_ERR_TYPE
 *      receive buffer too small                           -> MPI_ERR_TRUNCATE
 *        (MPI_Recv/MPI_Wait return it; MPI_Waitall returns MPI_ERR_IN_STATUS
 *         and sets status.MPI_ERROR)
 *      Wait/Test on a request handle that MPI never returned
 *        (all bytes 0x5a)                                 -> MPI_ERR_REQUEST
 *      MPI_Bsend with no buffer attached                  -> MPI_ERR_BUFFER
 *    and communication still works afterwards.
 *  - MPI_Error_string gives a non-empty string for every class used, and
 *    MPI_Error_class(class) == class.
 *  - A handler from MPI_Comm_create_errhandler is called with the
 *    communicator and an error code of the right class, and only on the
 *    ranks that installed it.
 *  - MPI_Get_version >= 3.1, MPI_Get_library_version non-empty.
 */
#define TEST_NAME "errors"
#include "mpitest.h"

/* Calls of the user error handler, one slot per rank: rank-indexed so that it
 * stays correct even if globals are shared by all ranks of a process. */
#define MAX_HANDLER_RANKS 4096
SKEIN_SHARED static int handler_calls[MAX_HANDLER_RANKS];
SKEIN_SHARED static int handler_last_code[MAX_HANDLER_RANKS];
SKEIN_SHARED static int handler_comm_ok[MAX_HANDLER_RANKS];

static void user_handler(MPI_Comm *comm, int *code, ...)
{
    int r = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (r < 0 || r >= MAX_HANDLER_RANKS)
        return;
    handler_calls[r]++;
    handler_last_code[r] = *code;
    handler_comm_ok[r] = comm != NULL && *comm == MPI_COMM_WORLD;
}

static const char *class_name(int c)
{
    switch (c) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_TAG: return "MPI_ERR_TAG";
    case MPI_ERR_COMM: return "MPI_ERR_COMM";
    case MPI_ERR_RANK: return "MPI_ERR_RANK";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    default: return "another class";
    }
}

#define EXPECT_CLASS(rc_expr, cls, what)                                     \
    do {                                                                     \
        int e_rc_ = (rc_expr), e_cls_ = -1;                                  \
        char e_s_[MPI_MAX_ERROR_STRING + 1];                                 \
        int e_len_ = -1;                                                     \
        CHECK(e_rc_ != MPI_SUCCESS, "%s: call succeeded (expected %s got MPI_SUCCESS)", \
              what, class_name(cls));                                        \
        MPI_CHECK(MPI_Error_class(e_rc_, &e_cls_));                          \
        CHECK(e_cls_ == (cls), "%s: wrong error class (expected %s=%d got %s=%d, code %d)", \
              what, class_name(cls), (int)(cls), class_name(e_cls_), e_cls_, e_rc_); \
        e_s_[0] = '\0';                                                      \
        MPI_CHECK(MPI_Error_string(e_rc_, e_s_, &e_len_));                   \
        CHECK(e_len_ > 0 && e_len_ < MPI_MAX_ERROR_STRING && (int)strlen(e_s_) == e_len_, \
              "%s: MPI_Error_string of code %d empty or resultlen wrong (expected "     \
              "1..%d == strlen %zu got %d)", what, e_rc_, MPI_MAX_ERROR_STRING - 1,   \
              strlen(e_s_), e_len_);                                         \
    } while (0)

static void expect_errhandler(MPI_Comm comm, MPI_Errhandler want, const char *what)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_CHECK(MPI_Comm_get_errhandler(comm, &eh));
    CHECK(eh == want, "%s: MPI_Comm_get_errhandler returned another handler (expected %s)",
          what, want == MPI_ERRORS_ARE_FATAL ? "MPI_ERRORS_ARE_FATAL" : "MPI_ERRORS_RETURN");
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;

    /* ---- versions */
    {
        int v = 0, sv = 0, len = -1;
        char s[MPI_MAX_LIBRARY_VERSION_STRING + 1];
        MPI_CHECK(MPI_Get_version(&v, &sv));
        CHECK(v > 3 || (v == 3 && sv >= 1), "MPI_Get_version too old (expected >= 3.1 got %d.%d)",
              v, sv);
        CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "MPI_Get_version disagrees with mpi.h "
              "(expected %d.%d got %d.%d)", MPI_VERSION, MPI_SUBVERSION, v, sv);
        s[0] = '\0';
        MPI_CHECK(MPI_Get_library_version(s, &len));
        CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(s) == len,
              "MPI_Get_library_version empty or resultlen wrong (expected 1..%d == strlen %zu "
              "got %d)", MPI_MAX_LIBRARY_VERSION_STRING - 1, strlen(s), len);
    }

    /* ---- error handlers are per rank */
    expect_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, "default on MPI_COMM_WORLD");
    expect_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL, "default on MPI_COMM_SELF");
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        expect_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, "after setting it on rank 0");
        expect_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL,
                          "MPI_COMM_SELF after setting MPI_COMM_WORLD's");
    } else {
        expect_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL,
                          "rank 0 set MPI_ERRORS_RETURN on its MPI_COMM_WORLD; this rank's "
                          "handler must not change");
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    expect_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, "after MPI_Comm_set_errhandler");

    /* ---- argument errors (all local, nothing is sent) */
    {
        int x[8] = {0};
        MPI_Request r = MPI_REQUEST_NULL;
        EXPECT_CLASS(MPI_Send(x, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
                     "MPI_Send to rank == size");
        EXPECT_CLASS(MPI_Send(x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
                     "MPI_Send to rank -5");
        EXPECT_CLASS(MPI_Send(x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
                     "MPI_Send to MPI_ANY_SOURCE");
        EXPECT_CLASS(MPI_Isend(x, 1, MPI_INT, size + 100, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK,
                     "MPI_Isend to rank size+100");
        EXPECT_CLASS(MPI_Recv(x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                     MPI_ERR_RANK, "MPI_Recv from rank == size");
        EXPECT_CLASS(MPI_Send(x, 1, MPI_INT, right, -5, MPI_COMM_WORLD), MPI_ERR_TAG,
                     "MPI_Send with tag -5");
        EXPECT_CLASS(MPI_Send(x, 1, MPI_INT, right, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG,
                     "MPI_Send with tag MPI_ANY_TAG");
        EXPECT_CLASS(MPI_Irecv(x, 1, MPI_INT, left, -5, MPI_COMM_WORLD, &r), MPI_ERR_TAG,
                     "MPI_Irecv with tag -5");
        EXPECT_CLASS(MPI_Send(x, -1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT,
                     "MPI_Send with count -1");
        EXPECT_CLASS(MPI_Irecv(x, -1, MPI_INT, left, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT,
                     "MPI_Irecv with count -1");
        EXPECT_CLASS(MPI_Send(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM,
                     "MPI_Send on MPI_COMM_NULL");
        EXPECT_CLASS(MPI_Recv(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE),
                     MPI_ERR_COMM, "MPI_Recv on MPI_COMM_NULL");
        EXPECT_CLASS(MPI_Send(x, 1, MPI_DATATYPE_NULL, right, 0, MPI_COMM_WORLD), MPI_ERR_TYPE,
                     "MPI_Send with MPI_DATATYPE_NULL");
        EXPECT_CLASS(MPI_Irecv(x, 1, MPI_DATATYPE_NULL, left, 0, MPI_COMM_WORLD, &r),
                     MPI_ERR_TYPE, "MPI_Irecv with MPI_DATATYPE_NULL");
        EXPECT_CLASS(MPI_Bsend(x, 1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER,
                     "MPI_Bsend with no buffer attached");

        MPI_Request bad;
        int flag = 0;
        memset(&bad, 0x5a, sizeof bad);
        EXPECT_CLASS(MPI_Wait(&bad, MPI_STATUS_IGNORE), MPI_ERR_REQUEST,
                     "MPI_Wait on an invalid request handle (bytes 0x5a)");
        memset(&bad, 0x5a, sizeof bad);
        EXPECT_CLASS(MPI_Test(&bad, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST,
                     "MPI_Test on an invalid request handle (bytes 0x5a)");
        /* MPI_REQUEST_NULL is valid: empty status */
        MPI_Status st;
        r = MPI_REQUEST_NULL;
        MPI_CHECK(MPI_Wait(&r, &st));
        CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
              "MPI_Wait(MPI_REQUEST_NULL) did not return an empty status (expected source %d "
              "tag %d got %d %d)", MPI_ANY_SOURCE, MPI_ANY_TAG, st.MPI_SOURCE, st.MPI_TAG);

        /* the generated entry points (issue 13): request handles, buffers, wildcards */
        memset(&bad, 0x5a, sizeof bad);
        EXPECT_CLASS(MPI_Request_get_status(bad, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST,
                     "MPI_Request_get_status on an invalid request handle");
        flag = 0;
        MPI_CHECK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 1, "MPI_Request_get_status(MPI_REQUEST_NULL) flag (expected 1 got %d)", flag);
        r = MPI_REQUEST_NULL;
        EXPECT_CLASS(MPI_Request_free(&r), MPI_ERR_REQUEST, "MPI_Request_free(MPI_REQUEST_NULL)");
        r = MPI_REQUEST_NULL;
        EXPECT_CLASS(MPI_Cancel(&r), MPI_ERR_REQUEST, "MPI_Cancel(MPI_REQUEST_NULL)");
        EXPECT_CLASS(MPI_Wait(NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG, "MPI_Wait(NULL)");
        EXPECT_CLASS(MPI_Send(NULL, 2, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER,
                     "MPI_Send of 2 ints from NULL");
        EXPECT_CLASS(MPI_Irecv(NULL, 2, MPI_INT, left, 0, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER,
                     "MPI_Irecv of 2 ints into NULL");
        EXPECT_CLASS(MPI_Isend(x, 1, MPI_INT, right, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG,
                     "MPI_Isend with request=NULL");
        /* every nonblocking call needs somewhere to put its request: a NULL one is refused
         * before the call starts (a collective must not run as its blocking twin) */
        EXPECT_CLASS(MPI_Ibarrier(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Ibarrier with request=NULL");
        EXPECT_CLASS(MPI_Ibcast(x, 1, MPI_INT, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG,
                     "MPI_Ibcast with request=NULL");
        EXPECT_CLASS(MPI_Iallreduce(x, x + 1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL), MPI_ERR_ARG,
                     "MPI_Iallreduce with request=NULL");
        EXPECT_CLASS(MPI_Ireduce(x, x + 1, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG,
                     "MPI_Ireduce with request=NULL");
        EXPECT_CLASS(MPI_Iscan(x, x + 1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL), MPI_ERR_ARG,
                     "MPI_Iscan with request=NULL");
        EXPECT_CLASS(MPI_Ialltoallv(x, x, x, MPI_INT, x, x, x, MPI_INT, MPI_COMM_SELF, NULL), MPI_ERR_ARG,
                     "MPI_Ialltoallv with request=NULL");
        MPI_Comm dup = MPI_COMM_NULL;
        EXPECT_CLASS(MPI_Comm_idup(MPI_COMM_WORLD, &dup, NULL), MPI_ERR_ARG, "MPI_Comm_idup with request=NULL");
        MPI_Message msg = MPI_MESSAGE_NO_PROC;
        EXPECT_CLASS(MPI_Imrecv(x, 1, MPI_INT, &msg, NULL), MPI_ERR_ARG, "MPI_Imrecv with request=NULL");
        /* a collective's root: MPI_ERR_ROOT, checked before anything moves */
        EXPECT_CLASS(MPI_Bcast(x, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT, "MPI_Bcast with root == size");
        EXPECT_CLASS(MPI_Ireduce(x, x + 1, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD, &r), MPI_ERR_ROOT,
                     "MPI_Ireduce with root -1");
        EXPECT_CLASS(MPI_Send_init(x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK,
                     "MPI_Send_init to rank == size");
        EXPECT_CLASS(MPI_Recv_init(x, 1, MPI_INT, left, -7, MPI_COMM_WORLD, &r), MPI_ERR_TAG,
                     "MPI_Recv_init with tag -7");
        EXPECT_CLASS(MPI_Sendrecv(x, 1, MPI_INT, right, 0, x + 1, 1, MPI_INT, size + 3, 0,
                                  MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK,
                     "MPI_Sendrecv from rank size+3");
        /* NULL with nothing to move is fine; so are MPI_PROC_NULL and receive wildcards */
        MPI_CHECK(MPI_Send(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "MPI_Recv from MPI_PROC_NULL: source (expected %d "
              "got %d)", MPI_PROC_NULL, st.MPI_SOURCE);
        MPI_CHECK(MPI_Irecv(x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &r));
        MPI_CHECK(MPI_Cancel(&r));
        MPI_CHECK(MPI_Wait(&r, &st));
        int cancelled = 0;
        MPI_CHECK(MPI_Test_cancelled(&st, &cancelled));
        CHECK(cancelled, "a cancelled MPI_ANY_SOURCE/MPI_ANY_TAG MPI_Irecv is not cancelled");
    }

    /* ---- truncation */
    {
        const int big = 100000;
        int *s = mt_malloc(sizeof(int) * (size_t)big), *d = mt_malloc(sizeof(int) * (size_t)big);
        MPI_Request sr[2], rr[2];
        MPI_Status st, sts[2];
        for (int i = 0; i < big; i++)
            s[i] = i;
        /* small message, blocking receive */
        MPI_CHECK(MPI_Isend(s, 10, MPI_INT, right, 50, MPI_COMM_WORLD, &sr[0]));
        EXPECT_CLASS(MPI_Recv(d, 5, MPI_INT, left, 50, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE,
                     "MPI_Recv of 10 ints into 5");
        MPI_CHECK(MPI_Wait(&sr[0], MPI_STATUS_IGNORE));
        /* large message, Irecv + Wait */
        MPI_CHECK(MPI_Irecv(d, 1000, MPI_INT, left, 51, MPI_COMM_WORLD, &rr[0]));
        MPI_CHECK(MPI_Isend(s, big, MPI_INT, right, 51, MPI_COMM_WORLD, &sr[0]));
        EXPECT_CLASS(MPI_Wait(&rr[0], &st), MPI_ERR_TRUNCATE, "MPI_Wait on Irecv of 100000 ints "
                     "into 1000");
        MPI_CHECK(MPI_Wait(&sr[0], MPI_STATUS_IGNORE));
        /* Waitall: MPI_ERR_IN_STATUS, per-status errors */
        MPI_CHECK(MPI_Irecv(d, 3, MPI_INT, left, 52, MPI_COMM_WORLD, &rr[0]));
        MPI_CHECK(MPI_Irecv(d + 10, 4, MPI_INT, left, 53, MPI_COMM_WORLD, &rr[1]));
        MPI_CHECK(MPI_Isend(s, 4, MPI_INT, right, 52, MPI_COMM_WORLD, &sr[0]));
        MPI_CHECK(MPI_Isend(s, 4, MPI_INT, right, 53, MPI_COMM_WORLD, &sr[1]));
        sts[0].MPI_ERROR = sts[1].MPI_ERROR = -12345;
        EXPECT_CLASS(MPI_Waitall(2, rr, sts), MPI_ERR_IN_STATUS,
                     "MPI_Waitall with one truncated receive");
        int cls = -1;
        MPI_CHECK(MPI_Error_class(sts[0].MPI_ERROR, &cls));
        CHECK(cls == MPI_ERR_TRUNCATE, "MPI_Waitall: status[0].MPI_ERROR class wrong (expected "
              "MPI_ERR_TRUNCATE=%d got %d)", MPI_ERR_TRUNCATE, cls);
        /* The other receive either completed (MPI_SUCCESS) or was left alone
         * (MPI_ERR_PENDING, request still active: MPICH does that). */
        CHECK(sts[1].MPI_ERROR == MPI_SUCCESS || sts[1].MPI_ERROR == MPI_ERR_PENDING,
              "MPI_Waitall: status[1].MPI_ERROR wrong (expected MPI_SUCCESS or "
              "MPI_ERR_PENDING got %d)", sts[1].MPI_ERROR);
        if (sts[1].MPI_ERROR == MPI_ERR_PENDING) {
            CHECK(rr[1] != MPI_REQUEST_NULL, "MPI_Waitall: status[1] is MPI_ERR_PENDING but "
                  "the request was freed");
            MPI_CHECK(MPI_Wait(&rr[1], &sts[1]));
        } else {
            CHECK(rr[1] == MPI_REQUEST_NULL, "MPI_Waitall: completed request not freed");
        }
        CHECK_STATUS(&sts[1], MPI_INT, left, 53, 4, "MPI_Waitall: the untruncated receive");
        CHECK(d[10] == 0 && d[13] == 3, "MPI_Waitall: untruncated receive data wrong (expected "
              "0..3 got %d..%d)", d[10], d[13]);
        MPI_CHECK(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));
        free(s);
        free(d);
    }

    /* ---- error strings and classes */
    {
        static const int classes[] = {MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE,
                                      MPI_ERR_TAG, MPI_ERR_COMM, MPI_ERR_RANK, MPI_ERR_REQUEST,
                                      MPI_ERR_ROOT, MPI_ERR_GROUP, MPI_ERR_OP, MPI_ERR_ARG,
                                      MPI_ERR_UNKNOWN, MPI_ERR_TRUNCATE, MPI_ERR_OTHER,
                                      MPI_ERR_INTERN, MPI_ERR_IN_STATUS, MPI_ERR_PENDING};
        for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
            char s[MPI_MAX_ERROR_STRING + 1];
            int len = -1, cls = -1;
            s[0] = '\0';
            MPI_CHECK(MPI_Error_string(classes[i], s, &len));
            CHECK(len > 0 && (int)strlen(s) == len, "MPI_Error_string(class %d) empty or "
                  "resultlen wrong (expected strlen %zu got %d)", classes[i], strlen(s), len);
            MPI_CHECK(MPI_Error_class(classes[i], &cls));
            CHECK(cls == classes[i], "MPI_Error_class of the class itself wrong (expected %d "
                  "got %d)", classes[i], cls);
        }
        CHECK(MPI_ERR_LASTCODE >= MPI_ERR_PENDING, "MPI_ERR_LASTCODE smaller than a class");
    }

    /* ---- user error handler, on even ranks only */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    const int use_handler = rank % 2 == 0 && rank < MAX_HANDLER_RANKS;
    if (use_handler) {
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
        int x = 0;
        MPI_CHECK(MPI_Comm_create_errhandler(user_handler, &eh));
        CHECK(eh != MPI_ERRHANDLER_NULL, "MPI_Comm_create_errhandler returned MPI_ERRHANDLER_NULL");
        MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
        MPI_CHECK(MPI_Errhandler_free(&eh));
        CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not set MPI_ERRHANDLER_NULL");
        MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
        CHECK(got != MPI_ERRORS_RETURN && got != MPI_ERRORS_ARE_FATAL && got != MPI_ERRHANDLER_NULL,
              "MPI_Comm_get_errhandler does not return the user handler");
        MPI_CHECK(MPI_Errhandler_free(&got));
        handler_calls[rank] = 0;
        (void)MPI_Send(&x, 1, MPI_INT, size + 7, 0, MPI_COMM_WORLD);
        CHECK(handler_calls[rank] == 1, "user error handler call count wrong after MPI_Send to "
              "an invalid rank (expected 1 got %d)", handler_calls[rank]);
        CHECK(handler_comm_ok[rank], "user error handler got a communicator other than "
              "MPI_COMM_WORLD");
        int cls = -1;
        MPI_CHECK(MPI_Error_class(handler_last_code[rank], &cls));
        CHECK(cls == MPI_ERR_RANK, "user error handler got the wrong error (expected class "
              "MPI_ERR_RANK=%d got %d)", MPI_ERR_RANK, cls);
        (void)MPI_Send(&x, -3, MPI_INT, right, 0, MPI_COMM_WORLD);
        CHECK(handler_calls[rank] == 2, "user error handler call count wrong after MPI_Send with "
              "count -3 (expected 2 got %d)", handler_calls[rank]);
        MPI_CHECK(MPI_Error_class(handler_last_code[rank], &cls));
        CHECK(cls == MPI_ERR_COUNT, "user error handler got the wrong error (expected class "
              "MPI_ERR_COUNT=%d got %d)", MPI_ERR_COUNT, cls);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (!use_handler)
        expect_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
                          "even ranks installed a user handler; odd ranks' must not change");
    if (use_handler) {
        MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int x = 0;
        EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
                     "MPI_Send to an invalid rank after restoring MPI_ERRORS_RETURN");
        CHECK(handler_calls[rank] == 2, "user error handler called after it was replaced "
              "(expected 2 calls got %d)", handler_calls[rank]);
    }

    /* ---- communication still works after all these errors */
    {
        int out[4] = {rank, rank * 2, rank * 3, 77}, in[4] = {-1, -1, -1, -1};
        MPI_Status st;
        MPI_CHECK(MPI_Sendrecv(out, 4, MPI_INT, right, 60, in, 4, MPI_INT, left, 60,
                               MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, MPI_INT, left, 60, 4, "Sendrecv after errors");
        CHECK(in[0] == left && in[1] == 2 * left && in[2] == 3 * left && in[3] == 77,
              "Sendrecv after errors: data wrong (expected %d got %d)", left, in[0]);
        int flag = 1;
        MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "a message is pending after the error tests (from rank %d tag %d): a call "
              "that failed must not have sent anything", st.MPI_SOURCE, st.MPI_TAG);
    }
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    return mt_finish();
}
