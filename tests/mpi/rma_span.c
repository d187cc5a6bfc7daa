/* Windows whose group spans processes (run with procs=2..4: some targets are in the
 * caller's process, reached by direct copy, others through UCX). Each synchronization
 * mode with put/get/accumulate on contiguous and derived types, a contended
 * Fetch_and_op counter, a compare-and-swap lock, accumulate ordering, accumulates of
 * doubles (compare-and-swap loops at the target) racing with integer ones elsewhere,
 * accumulates of 600 elements per call from every rank at once (batches of remote
 * atomics), the error classes, and one-sidedness: the last rank computes without MPI calls while
 * the ranks of other processes lock/put/flush/unlock into its window. */
#define TEST_NAME "rma_span"
#include "mpitest.h"

#include <time.h>

#ifdef __SANITIZE_THREAD__
/* libtsan's: races on [mem, mem + size) are expected, not reported */
void AnnotateBenignRaceSized(const char *file, int line, const volatile void *mem, unsigned long size,
                             const char *desc);
#endif

#define N 8 /* ints per member slot */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int expect_class(int rc, int cls) {
    int c = -1;
    if (rc == MPI_SUCCESS) return 0;
    MPI_Error_class(rc, &c);
    return c == cls;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 300;

    /* ---- fence: every rank puts its slot into every target, then gets them back */
    int *mem;
    MPI_Win win;
    MPI_Aint bytes = (MPI_Aint)size * N * sizeof(int);
    MPI_CHECK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < size * N; i++) mem[i] = -1;
    int src[N], back[N];
    for (int k = 0; k < N; k++) src[k] = rank * 100 + k;
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; t++) MPI_CHECK(MPI_Put(src, N, MPI_INT, t, rank * N, N, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int r = 0; r < size; r++)
        for (int k = 0; k < N; k++) CHECK(mem[r * N + k] == r * 100 + k, "fence: mem[%d][%d] = %d", r, k, mem[r * N + k]);
    int peer = (rank + 1) % size;
    MPI_CHECK(MPI_Get(back, N, MPI_INT, peer, ((rank + 2) % size) * N, N, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int k = 0; k < N; k++) CHECK(back[k] == ((rank + 2) % size) * 100 + k, "fence get: %d", back[k]);

    /* derived types on both sides: even elements of the origin into a strided target */
    MPI_Datatype strided, pairs;
    MPI_CHECK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &strided));
    MPI_CHECK(MPI_Type_commit(&strided));
    MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &pairs));
    MPI_CHECK(MPI_Type_commit(&pairs));
    int vsrc[N];
    for (int k = 0; k < N; k++) vsrc[k] = 1000 + rank * 10 + k;
    MPI_CHECK(MPI_Win_fence(0, win));
    /* target peer, my slot: positions 0,2,4,6 = vsrc[0,2,4,6]; accumulate +1 into odd ones */
    MPI_CHECK(MPI_Put(vsrc, 1, strided, peer, rank * N, 1, strided, win));
    int ones[N / 2] = {1, 1, 1, 1};
    MPI_CHECK(MPI_Accumulate(ones, N / 2, MPI_INT, peer, rank * N + 1, 1, strided, MPI_SUM, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    int left = (rank - 1 + size) % size;
    for (int k = 0; k < N; k++) {
        int want = k % 2 ? left * 100 + k + 1 : 1000 + left * 10 + k;
        CHECK(mem[left * N + k] == want, "vector put/acc: mem[%d][%d] = %d, want %d", left, k, mem[left * N + k], want);
    }
    int vback[N] = {0}, vback2[N] = {0};
    MPI_CHECK(MPI_Get(vback, N / 2, MPI_INT, peer, rank * N, 1, strided, win));  /* strided target */
    MPI_CHECK(MPI_Get(vback2, 1, strided, peer, rank * N, 1, strided, win));      /* strided both */
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int k = 0; k < N / 2; k++) CHECK(vback[k] == 1000 + rank * 10 + 2 * k, "vector get: [%d] = %d", k, vback[k]);
    for (int k = 0; k < N; k++)
        CHECK(vback2[k] == (k % 2 ? 0 : 1000 + rank * 10 + k), "vector get both: [%d] = %d", k, vback2[k]);

    /* ---- PSCW: everyone exposes to everyone, adds its rank into every target's word 0 */
    MPI_Group world, others;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_CHECK(MPI_Group_excl(world, 1, &rank, &others));
    MPI_CHECK(MPI_Win_fence(0, win));
    mem[0] = 0;
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_CHECK(MPI_Win_post(others, 0, win));
    MPI_CHECK(MPI_Win_start(others, 0, win));
    for (int t = 0; t < size; t++)
        if (t != rank) MPI_CHECK(MPI_Accumulate(&rank, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, win));
    MPI_CHECK(MPI_Win_complete(win));
    MPI_CHECK(MPI_Win_wait(win));
    int want = size * (size - 1) / 2 - rank;
    CHECK(mem[0] == want, "PSCW: word 0 = %d, want %d", mem[0], want);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- passive target, exclusive: read-modify-write of word 1 of every target */
    mem[1] = 0;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 5; i++)
        for (int t = 0; t < size; t++) {
            int v;
            MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            MPI_CHECK(MPI_Get(&v, 1, MPI_INT, t, 1, 1, MPI_INT, win));
            MPI_CHECK(MPI_Win_flush(t, win));
            v++;
            MPI_CHECK(MPI_Put(&v, 1, MPI_INT, t, 1, 1, MPI_INT, win));
            MPI_CHECK(MPI_Win_unlock(t, win));
        }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(mem[1] == 5 * size, "exclusive lock: word 1 = %d, want %d", mem[1], 5 * size);
    MPI_CHECK(MPI_Win_unlock(rank, win));

    /* ---- lock_all, put, flush, get: shared locks from everyone at once */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < size; t++) {
        MPI_CHECK(MPI_Put(src, N, MPI_INT, t, rank * N, N, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(t, win));
        int got[N];
        MPI_CHECK(MPI_Get(got, N, MPI_INT, t, rank * N, N, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(t, win));
        for (int k = 0; k < N; k++) CHECK(got[k] == src[k], "lock_all put/get of target %d: [%d] = %d", t, k, got[k]);
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Win_free(&win));

    /* ---- contended Fetch_and_op on rank 0's counter, CAS lock, ordering, doubles */
    int64_t *cnt;
    MPI_CHECK(MPI_Win_allocate(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &cnt, &win));
    cnt[0] = cnt[1] = cnt[2] = 0;
    double *dbl = (double *)&cnt[3];
    *dbl = 0;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock_all(0, win));
    int64_t one = 1, old = -1, prev_max = -1;
    for (int i = 0; i < iters; i++) {
        MPI_CHECK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, win));
        CHECK(old >= 0 && old < (int64_t)iters * size, "fetch_and_op returned %lld", (long long)old);
        CHECK(old > prev_max, "fetch_and_op went back: %lld after %lld", (long long)old, (long long)prev_max);
        prev_max = old;
    }
    /* compare-and-swap lock on word 1 of the last rank guarding a get/+1/put of word 2 */
    int lt = size - 1;
    for (int i = 0; i < iters / 10 + 1; i++) {
        int64_t mine = rank + 1, free_ = 0, seen = -1;
        do {
            MPI_CHECK(MPI_Compare_and_swap(&mine, &free_, &seen, MPI_INT64_T, lt, 1, win));
            MPI_CHECK(MPI_Win_flush(lt, win));
        } while (seen != 0);
        int64_t v;
        MPI_CHECK(MPI_Get(&v, 1, MPI_INT64_T, lt, 2, 1, MPI_INT64_T, win));
        MPI_CHECK(MPI_Win_flush(lt, win));
        v++;
        MPI_CHECK(MPI_Put(&v, 1, MPI_INT64_T, lt, 2, 1, MPI_INT64_T, win));
        MPI_CHECK(MPI_Win_flush(lt, win));
        int64_t zero = 0;
        MPI_CHECK(MPI_Compare_and_swap(&zero, &mine, &seen, MPI_INT64_T, lt, 1, win));
        MPI_CHECK(MPI_Win_flush(lt, win));
        CHECK(seen == mine, "CAS unlock found %lld", (long long)seen);
    }
    /* doubles: MPI_SUM on floating point goes through compare-and-swap at the target */
    double half = 0.5;
    for (int i = 0; i < 20; i++) MPI_CHECK(MPI_Accumulate(&half, 1, MPI_DOUBLE, 0, 3, 1, MPI_DOUBLE, MPI_SUM, win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(cnt[0] == (int64_t)iters * size, "counter = %lld, want %lld", (long long)cnt[0], (long long)iters * size);
        CHECK(*dbl == 10.0 * size, "double sum = %g, want %g", *dbl, 10.0 * size);
    }
    if (rank == lt)
        CHECK(cnt[2] == (int64_t)(iters / 10 + 1) * size, "CAS-locked counter = %lld", (long long)cnt[2]);
    /* accumulate ordering from one origin to a target in another process */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        int64_t v = 7, add = 5, res = 0;
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, lt, 0, win));
        MPI_CHECK(MPI_Accumulate(&v, 1, MPI_INT64_T, lt, 0, 1, MPI_INT64_T, MPI_REPLACE, win));
        MPI_CHECK(MPI_Accumulate(&add, 1, MPI_INT64_T, lt, 0, 1, MPI_INT64_T, MPI_SUM, win));
        MPI_CHECK(MPI_Get_accumulate(NULL, 0, MPI_INT64_T, &res, 1, MPI_INT64_T, lt, 0, 1, MPI_INT64_T, MPI_NO_OP, win));
        MPI_CHECK(MPI_Win_unlock(lt, win));
        CHECK(res == 12, "REPLACE 7, SUM 5, NO_OP read %lld", (long long)res);
        int64_t mx = 40, o2 = 0;
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, lt, 0, win));
        MPI_CHECK(MPI_Fetch_and_op(&mx, &o2, MPI_INT64_T, lt, 0, MPI_MAX, win));
        MPI_CHECK(MPI_Fetch_and_op(&mx, &o2, MPI_INT64_T, lt, 0, MPI_NO_OP, win));
        MPI_CHECK(MPI_Win_unlock(lt, win));
        CHECK(o2 == 40, "MAX then NO_OP read %lld", (long long)o2);
    }
    /* accumulates whose old value nobody wants (posted atomics, no reply) of different ops
     * in a row, then a flush: the target, told by a message, must see all of them applied
     * in order */
    if (rank == 0 && lt != 0) {
        int64_t v[5] = {0x0f0f, 0x00ff, 0x1000, 3, 3}, want = 40;
        MPI_Op ops[5] = {MPI_BOR, MPI_BAND, MPI_BXOR, MPI_SUM, MPI_SUM};
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, lt, 0, win));
        for (int i = 0; i < 5; i++) MPI_CHECK(MPI_Accumulate(&v[i], 1, MPI_INT64_T, lt, 0, 1, MPI_INT64_T, ops[i], win));
        MPI_CHECK(MPI_Win_flush(lt, win));
        want = (((want | v[0]) & v[1]) ^ v[2]) + v[3] + v[4];
        MPI_CHECK(MPI_Send(&want, 1, MPI_INT64_T, lt, 77, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Win_unlock(lt, win));
    } else if (rank == lt && lt != 0) {
        int64_t want;
        MPI_CHECK(MPI_Recv(&want, 1, MPI_INT64_T, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(((volatile int64_t *)cnt)[0] == want, "after BOR, BAND, BXOR, SUM, SUM and a flush: %llx, want %llx",
              (unsigned long long)((volatile int64_t *)cnt)[0], (unsigned long long)want);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- accumulates of many elements per call (more than one batch of remote atomics),
     * every rank at once into the last rank: doubles (compare-and-swap loops), int64 sums
     * and maxima (a loop too) with the old values fetched */
    enum { NACC = 600, REPS = 3 };
    double *av;
    MPI_Win aw;
    MPI_CHECK(MPI_Win_allocate(3 * NACC * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &av, &aw));
    int64_t *ai = (int64_t *)(av + NACC), *am = ai + NACC;
    for (int k = 0; k < NACC; k++) av[k] = 0, ai[k] = 0, am[k] = -1;
    double *dsrc = malloc(NACC * sizeof(double));
    int64_t *isrc = malloc(NACC * sizeof(int64_t)), *msrc = malloc(NACC * sizeof(int64_t)),
            *ires = malloc(NACC * sizeof(int64_t)), *mres = malloc(NACC * sizeof(int64_t));
    for (int k = 0; k < NACC; k++) dsrc[k] = 0.5 * (k % 7 + 1), isrc[k] = k + 1, msrc[k] = rank * 1000 + k;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock_all(0, aw));
    for (int r = 0; r < REPS; r++) {
        MPI_CHECK(MPI_Accumulate(dsrc, NACC, MPI_DOUBLE, lt, 0, NACC, MPI_DOUBLE, MPI_SUM, aw));
        MPI_CHECK(MPI_Get_accumulate(isrc, NACC, MPI_INT64_T, ires, NACC, MPI_INT64_T, lt, NACC, NACC, MPI_INT64_T,
                                     MPI_SUM, aw));
        MPI_CHECK(MPI_Get_accumulate(msrc, NACC, MPI_INT64_T, mres, NACC, MPI_INT64_T, lt, 2 * NACC, NACC,
                                     MPI_INT64_T, MPI_MAX, aw));
        MPI_CHECK(MPI_Win_flush(lt, aw));
        int bad = -1;
        for (int k = 0; k < NACC && bad < 0; k++)
            if (ires[k] < 0 || ires[k] > (int64_t)(k + 1) * (REPS * size - 1) || ires[k] % (k + 1) ||
                mres[k] < -1 || mres[k] > (size - 1) * 1000 + k || (mres[k] >= 0 && mres[k] % 1000 != k))
                bad = k;
        CHECK(bad < 0, "batched get_accumulate: element %d old sum %lld, old max %lld", bad,
              (long long)(bad < 0 ? 0 : ires[bad]), (long long)(bad < 0 ? 0 : mres[bad]));
    }
    MPI_CHECK(MPI_Win_unlock_all(aw));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == lt) {
        int bad = -1;
        for (int k = 0; k < NACC && bad < 0; k++)
            if (av[k] != 0.5 * (k % 7 + 1) * REPS * size || ai[k] != (int64_t)(k + 1) * REPS * size ||
                am[k] != (size - 1) * 1000 + k)
                bad = k;
        CHECK(bad < 0, "batched accumulates: element %d: double %g, sum %lld, max %lld", bad, bad < 0 ? 0 : av[bad],
              (long long)(bad < 0 ? 0 : ai[bad]), (long long)(bad < 0 ? 0 : am[bad]));
    }
    MPI_CHECK(MPI_Win_free(&aw));
    free(dsrc);
    free(isrc);
    free(msrc);
    free(ires);
    free(mres);

    /* ---- errors */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int64_t x = 0;
    CHECK(expect_class(MPI_Put(&x, 1, MPI_INT64_T, lt, 0, 1, MPI_INT64_T, win), MPI_ERR_RMA_SYNC),
          "put outside an epoch");
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, lt, 0, win));
    CHECK(expect_class(MPI_Put(&x, 1, MPI_INT64_T, lt, 4, 1, MPI_INT64_T, win), MPI_ERR_RMA_RANGE),
          "put past the end of a remote window");
    short sh = 1;
    int rc = MPI_Accumulate(&sh, 1, MPI_SHORT, lt, 0, 1, MPI_SHORT, MPI_SUM, win);
    /* 2-byte elements in another process: Skein refuses them (no 16-bit UCX atomics) */
    CHECK(rc == MPI_SUCCESS || expect_class(rc, MPI_ERR_UNSUPPORTED_OPERATION), "short accumulate: rc %d", rc);
    MPI_CHECK(MPI_Win_unlock(lt, win));
    MPI_CHECK(MPI_Win_free(&win));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Win dyn = MPI_WIN_NULL;
    rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    if (rc == MPI_SUCCESS) MPI_CHECK(MPI_Win_free(&dyn));
    else CHECK(expect_class(rc, MPI_ERR_UNSUPPORTED_OPERATION), "dynamic window: rc %d", rc);

    /* ---- Win_create on user memory, one-sidedness: the last rank computes without MPI
     * calls while the ranks of other processes (under Skein: not in its
     * MPI_COMM_TYPE_SHARED communicator; ranks of its own process may share its worker
     * and wait for it, as user-level threads do) lock/put/flush/unlock into its window.
     * Their data must arrive while it computes, before its next MPI call. */
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Group node_group;
    MPI_CHECK(MPI_Comm_group(node, &node_group));
    int *near = calloc((size_t)size, sizeof(int)), *all_near = calloc((size_t)size * size, sizeof(int));
    for (int r = 0; r < size; r++) {
        int nr;
        MPI_CHECK(MPI_Group_translate_ranks(world, 1, &r, node_group, &nr));
        near[r] = nr != MPI_UNDEFINED;
    }
    MPI_CHECK(MPI_Allgather(near, size, MPI_INT, all_near, size, MPI_INT, MPI_COMM_WORLD));
    int *user = calloc((size_t)size, sizeof(int));
#ifdef __SANITIZE_THREAD__
    /* The target below reads its window while the puts land, on purpose (the unified
     * model's polling). Over UCX's emulated RMA the put is a memcpy by this process's
     * progress thread, which TSan sees (a NIC's write it would not). */
    AnnotateBenignRaceSized(__FILE__, __LINE__, user, (unsigned long)size * sizeof(int), "polled window");
#endif
    MPI_CHECK(MPI_Win_create(user, size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int origin = !all_near[lt * size + rank];
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = now();
    if (rank == lt) {
        /* computes, looking at its own memory only, until every origin's last put is
         * there (or 30 s: then the origins needed an MPI call of the target) */
        volatile double acc = 0;
        int missing = 1;
        while (missing && now() - t0 < 30.0) {
            for (int i = 0; i < 100000; i++) acc += i * 0.5;
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            missing = 0;
            for (int r = 0; r < size; r++)
                if (!all_near[lt * size + r] && ((volatile int *)user)[r] != 20) missing = r + 1;
        }
        CHECK(!missing, "one-sided: the puts of rank %d did not arrive while the target computed 30 s without MPI "
              "calls (%d)", missing - 1, missing ? user[missing - 1] : 0);
    } else if (origin) {
        for (int i = 1; i <= 20; i++) {
            MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, lt, 0, win));
            MPI_CHECK(MPI_Put(&i, 1, MPI_INT, lt, rank, 1, MPI_INT, win));
            MPI_CHECK(MPI_Win_flush(lt, win));
            MPI_CHECK(MPI_Win_unlock(lt, win));
        }
    }
    MPI_Group_free(&node_group);
    MPI_Comm_free(&node);
    free(near);
    free(all_near);
    MPI_CHECK(MPI_Win_free(&win));
    free(user);
    MPI_Type_free(&strided);
    MPI_Type_free(&pairs);
    MPI_Group_free(&others);
    MPI_Group_free(&world);
    return mt_finish();
}
