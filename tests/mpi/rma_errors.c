/* Window objects and every RMA error class. With MPI_ERRORS_RETURN on the window (and a
 * user handler to check that window handlers run), each bad call returns its class and
 * writes nothing: the bytes around the target window stay untouched. Also: predefined
 * attributes, keyvals with a delete callback run by MPI_Win_free, names, groups, info.
 * The argument checks of the generated entry points (issue 13): window ranks, lock types,
 * assert bits, groups, info, NULL pointers; errors of window creation go to the
 * communicator's handler, the others to the window's. */
#define TEST_NAME "rma_errors"
#include "mpitest.h"

#define EXPECT(call, want)                                                                  \
    do {                                                                                    \
        int rc_ = (call), cls_ = -1;                                                        \
        MPI_Error_class(rc_, &cls_);                                                        \
        CHECK(cls_ == (want), "%s: class %d, expected %s (%d)", #call, cls_, #want, want);  \
    } while (0)


static void noop_op(void *in, void *inout, int *len, MPI_Datatype *t) { (void)in, (void)inout, (void)len, (void)t; }

static int del_fn(MPI_Win w, int key, void *val, void *extra) {
    (void)w, (void)key, (void)extra;
    *(int *)val += 1;
    return MPI_SUCCESS;
}

SKEIN_SHARED static int win_calls[4096], comm_calls[4096]; /* by rank: ranks may be threads of one process */

static int my_rank(void) {
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r % 4096;
}

static void comm_handler(MPI_Comm *c, int *code, ...) {
    (void)c, (void)code;
    comm_calls[my_rank()]++;
}

static void handler(MPI_Win *w, int *code, ...) {
    int cls;
    win_calls[my_rank()]++;
    MPI_Error_class(*code, &cls);
    if (cls == MPI_ERR_RMA_RANGE) MPI_Win_set_name(*w, "handled"); /* per rank and window */
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* errors of no object (MPI-4.0) */
    /* window memory with guard ints on both sides */
    int *raw = mt_malloc(20 * sizeof(int)), *mem = raw + 4;
    for (int i = 0; i < 20; i++) raw[i] = 77;
    MPI_Win win;
    EXPECT(MPI_Win_create(mem, 12 * sizeof(int), 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
    EXPECT(MPI_Win_create(mem, -4, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_SIZE);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Info_set(info, "accumulate_ops", "same_op");
    MPI_CHECK(MPI_Win_create(mem, 12 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &win));
    MPI_Info_free(&info);
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "a window's default error handler is MPI_ERRORS_ARE_FATAL");
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    /* ---- objects */
    void *base;
    MPI_Aint *sizep;
    int *dup, *flav, *model, flag;
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == mem, "MPI_WIN_BASE");
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sizep, &flag));
    CHECK(flag && *sizep == 12 * (MPI_Aint)sizeof(int), "MPI_WIN_SIZE");
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &dup, &flag));
    CHECK(flag && *dup == (int)sizeof(int), "MPI_WIN_DISP_UNIT");
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flav, &flag));
    CHECK(flag && *flav == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR");
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL");
    int key, counter = 0;
    MPI_CHECK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key, NULL));
    MPI_CHECK(MPI_Win_set_attr(win, key, &counter));
    int *got;
    MPI_CHECK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &counter, "user attribute");
    EXPECT(MPI_Win_get_attr(win, 12345, &got, &flag), MPI_ERR_KEYVAL);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_CHECK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0, "a new window has an empty name");
    MPI_CHECK(MPI_Win_set_name(win, "halo"));
    MPI_CHECK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 4 && !strcmp(name, "halo"), "window name");
    MPI_Group g, wg;
    int res;
    MPI_CHECK(MPI_Win_get_group(win, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &res);
    CHECK(res == MPI_IDENT, "MPI_Win_get_group");
    MPI_Info used;
    char val[MPI_MAX_INFO_VAL];
    MPI_CHECK(MPI_Win_get_info(win, &used));
    MPI_Info_get(used, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, val, &flag);
    CHECK(flag && !strcmp(val, "none"), "info accumulate_ordering");
    MPI_Info_get(used, "accumulate_ops", MPI_MAX_INFO_VAL - 1, val, &flag);
    CHECK(flag && !strcmp(val, "same_op"), "info accumulate_ops");
    MPI_Info_free(&used);

    /* ---- errors */
    int right = (rank + 1) % size, v[16] = {0};
    EXPECT(MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC); /* no epoch */
    EXPECT(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_lock(99, right, 0, win), MPI_ERR_LOCKTYPE);
    EXPECT(MPI_Win_fence(1, win), MPI_ERR_ASSERT);
    EXPECT(MPI_Win_shared_query(win, 0, sizep, dup, &base), MPI_ERR_RMA_FLAVOR);
    EXPECT(MPI_Win_attach(win, v, 4), MPI_ERR_RMA_FLAVOR);
    EXPECT(MPI_Win_get_attr(MPI_WIN_NULL, MPI_WIN_BASE, &base, &flag), MPI_ERR_WIN);
    EXPECT(MPI_Put(v, 1, MPI_INT, 0, 0, 1, MPI_INT, (MPI_Win)12345), MPI_ERR_WIN);
    /* what the entry points check */
    MPI_Win w2;
    EXPECT(MPI_Win_create(mem, 4, 4, (MPI_Info)12345, MPI_COMM_WORLD, &w2), MPI_ERR_INFO);
    EXPECT(MPI_Win_create(mem, 4, 4, MPI_INFO_NULL, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Win_allocate(4, 4, MPI_INFO_NULL, MPI_COMM_WORLD, NULL, &w2), MPI_ERR_ARG);
    EXPECT(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_NULL, &w2), MPI_ERR_COMM);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win), MPI_ERR_RANK);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, 1 << 20, win), MPI_ERR_ASSERT);
    EXPECT(MPI_Win_unlock(-5, win), MPI_ERR_RANK);
    EXPECT(MPI_Win_flush(size, win), MPI_ERR_RANK);
    EXPECT(MPI_Win_post(MPI_GROUP_NULL, 0, win), MPI_ERR_GROUP);
    EXPECT(MPI_Win_start(wg, MPI_MODE_NOCHECK | (1 << 20), win), MPI_ERR_ASSERT);
    EXPECT(MPI_Win_free(NULL), MPI_ERR_WIN);
    EXPECT(MPI_Win_set_info(win, (MPI_Info)12345), MPI_ERR_INFO);
    EXPECT(MPI_Win_get_name(win, NULL, &len), MPI_ERR_ARG);
    EXPECT(MPI_Get(v, 1, MPI_INT, right, 0, -1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT(MPI_Get_accumulate(v, 1, MPI_INT, v + 1, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, MPI_SUM, win),
           MPI_ERR_TYPE);
    EXPECT(MPI_Fetch_and_op(v, v + 1, MPI_DATATYPE_NULL, right, 0, MPI_SUM, win), MPI_ERR_TYPE);
    EXPECT(MPI_Rput(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, NULL), MPI_ERR_ARG);
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC); /* locked twice */
    EXPECT(MPI_Win_start(wg, 0, win), MPI_ERR_RMA_CONFLICT); /* PSCW while holding a lock */
    EXPECT(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);            /* pending epoch: error, no hang */
    EXPECT(MPI_Put(v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT(MPI_Put(v, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_DISP);
    EXPECT(MPI_Put(v, 13, MPI_INT, right, 0, 13, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Put(v, 1, MPI_INT, right, 12, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Get(v, 2, MPI_INT, right, 11, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Put(v, 1, MPI_INT, right, (MPI_Aint)1 << 62, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MPI_Datatype vec; /* 4 ints at stride 4: spans 13 ints */
    MPI_Type_vector(4, 1, 4, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    EXPECT(MPI_Put(v, 4, MPI_INT, right, 0, 1, vec, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Put(v, 2, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE); /* sizes differ */
    EXPECT(MPI_Put(v, -1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT(MPI_Put(v, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    MPI_Op myop;
    MPI_Op_create(noop_op, 1, &myop);
    EXPECT(MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, myop, win), MPI_ERR_OP); /* user op */
    EXPECT(MPI_Accumulate(v, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, MPI_BAND, win), MPI_ERR_OP);
    EXPECT(MPI_Accumulate(v, 2, MPI_SHORT, right, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_TYPE);
    MPI_Datatype mixed;
    int bl[2] = {1, 1};
    MPI_Aint dl[2] = {0, 4};
    MPI_Datatype tl[2] = {MPI_INT, MPI_FLOAT};
    MPI_Type_create_struct(2, bl, dl, tl, &mixed);
    MPI_Type_commit(&mixed);
    EXPECT(MPI_Accumulate(v, 1, mixed, right, 0, 1, mixed, MPI_SUM, win), MPI_ERR_TYPE);
    double dd = 1;
    EXPECT(MPI_Compare_and_swap(&dd, &dd, &dd, MPI_DOUBLE, right, 0, win), MPI_ERR_TYPE);
    EXPECT(MPI_Fetch_and_op(v, v + 1, vec, right, 0, MPI_SUM, win), MPI_ERR_TYPE);
    MPI_Request req;
    MPI_CHECK(MPI_Rput(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Win_unlock(right, win));
    EXPECT(MPI_Rput(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &req), MPI_ERR_RMA_SYNC); /* passive target only */
    MPI_CHECK(MPI_Win_fence(0, win));
    EXPECT(MPI_Rget(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &req), MPI_ERR_RMA_SYNC);
    MPI_CHECK(MPI_Win_lock_all(0, win)); /* a fence epoch with no operation may be followed by a lock */
    EXPECT(MPI_Win_free(&win), MPI_ERR_RMA_SYNC); /* lock_all pending (right may be in another process) */
    MPI_CHECK(MPI_Win_unlock_all(win));
    /* PSCW: exposed to the left neighbour, accessing the right one; Win_free with either
     * epoch open is an error, then both close normally */
    int left = (rank + size - 1) % size;
    MPI_Group lg, rg;
    MPI_CHECK(MPI_Group_incl(wg, 1, &left, &lg));
    MPI_CHECK(MPI_Group_incl(wg, 1, &right, &rg));
    MPI_CHECK(MPI_Win_post(lg, 0, win));
    EXPECT(MPI_Win_free(&win), MPI_ERR_RMA_SYNC); /* exposure epoch pending */
    MPI_CHECK(MPI_Win_start(rg, 0, win));
    EXPECT(MPI_Win_free(&win), MPI_ERR_RMA_SYNC); /* both pending */
    MPI_CHECK(MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_complete(win));
    EXPECT(MPI_Win_free(&win), MPI_ERR_RMA_SYNC); /* exposure still pending */
    MPI_CHECK(MPI_Win_wait(win));
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    MPI_Errhandler mine;
    MPI_CHECK(MPI_Win_create_errhandler(handler, &mine));
    MPI_CHECK(MPI_Win_set_errhandler(win, mine));
    EXPECT(MPI_Put(v, 1, MPI_INT, right, 100, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MPI_CHECK(MPI_Win_get_name(win, name, &len));
    CHECK(!strcmp(name, "handled"), "the window's own error handler did not run (name %s)", name);
    MPI_CHECK(MPI_Win_call_errhandler(win, MPI_ERR_RMA_RANGE));
    /* the entry's checks report through the window's handler too */
    EXPECT(MPI_Win_lock(99, right, 0, win), MPI_ERR_LOCKTYPE);
    EXPECT(MPI_Put(v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT(MPI_Win_fence(1 << 20, win), MPI_ERR_ASSERT);
    CHECK(win_calls[my_rank()] == 5, "the window's handler ran %d times, expected 5", win_calls[my_rank()]);
    /* a creation's errors go to the communicator's handler */
    MPI_Comm cdup;
    MPI_Errhandler ceh;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &cdup));
    MPI_CHECK(MPI_Comm_create_errhandler(comm_handler, &ceh));
    MPI_CHECK(MPI_Comm_set_errhandler(cdup, ceh));
    EXPECT(MPI_Win_create(mem, 4, 0, MPI_INFO_NULL, cdup, &w2), MPI_ERR_DISP);
    EXPECT(MPI_Win_allocate(-1, 4, MPI_INFO_NULL, cdup, &base, &w2), MPI_ERR_SIZE);
    CHECK(comm_calls[my_rank()] == 2, "the communicator's handler ran %d times, expected 2", comm_calls[my_rank()]);
    MPI_Comm_free(&cdup);
    MPI_Errhandler_free(&ceh);
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    /* nothing written outside any window, nothing inside but the one valid put */
    for (int i = 0; i < 4; i++) CHECK(raw[i] == 77 && raw[16 + i] == 77, "guard ints overwritten");
    MPI_CHECK(MPI_Win_free(&win));
    CHECK(counter == 1, "MPI_Win_free ran the delete callback once (counted %d)", counter);
    MPI_CHECK(MPI_Win_free_keyval(&key));
    MPI_Type_free(&vec);
    MPI_Type_free(&mixed);
    MPI_Op_free(&myop);
    MPI_Errhandler_free(&mine);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(raw);
    return mt_finish();
}
