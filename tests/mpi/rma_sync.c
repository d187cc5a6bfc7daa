/* One-sided communication in every synchronization mode (fence, PSCW, lock, lock_all)
 * with put, get and accumulate on contiguous and derived datatypes (a strided vector at
 * the target, a contiguous buffer at the origin and the reverse), on windows of each
 * flavor that has memory (create, allocate, allocate_shared). Each rank writes into its
 * right neighbour and reads its left neighbour; the values say who wrote them. */
#define TEST_NAME "rma_sync"
#include "mpitest.h"

#define N 64 /* ints per rank's window */

static int val(int writer, int round, int i) { return writer * 100000 + round * 1000 + i; }

/* An access epoch to `target` in mode m: 0 fence (collective, already opened), 1 PSCW,
 * 2 lock exclusive, 3 lock shared, 4 lock_all. */
static void open_epoch(int m, int target, MPI_Group origin_g, MPI_Group target_g, MPI_Win win) {
    if (m == 1) {
        MPI_CHECK(MPI_Win_post(origin_g, 0, win));
        MPI_CHECK(MPI_Win_start(target_g, 0, win));
    } else if (m == 2) {
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    } else if (m == 3) {
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    } else if (m == 4) {
        MPI_CHECK(MPI_Win_lock_all(0, win));
    }
}

static void close_epoch(int m, int target, MPI_Win win) {
    if (m == 0) {
        MPI_CHECK(MPI_Win_fence(0, win));
    } else if (m == 1) {
        MPI_CHECK(MPI_Win_complete(win));
        MPI_CHECK(MPI_Win_wait(win));
    } else if (m == 2 || m == 3) {
        MPI_CHECK(MPI_Win_unlock(target, win));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* everyone's writes are in */
    } else {
        MPI_CHECK(MPI_Win_flush(target, win));
        MPI_CHECK(MPI_Win_unlock_all(win));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Group world_g, right_g, left_g;
    MPI_Comm_group(MPI_COMM_WORLD, &world_g);
    MPI_Group_incl(world_g, 1, &right, &right_g);
    MPI_Group_incl(world_g, 1, &left, &left_g);
    /* every other int: N / 2 elements */
    MPI_Datatype strided;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);

    for (int flavor = 0; flavor < 3; flavor++) {
        int *mem = NULL;
        MPI_Win win;
        if (flavor == 0) {
            mem = mt_malloc(N * sizeof(int));
            MPI_CHECK(MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        } else if (flavor == 1) {
            MPI_CHECK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        } else {
            MPI_CHECK(MPI_Win_allocate_shared(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        }
        for (int m = 0; m < 5; m++) {
            int round = flavor * 10 + m;
            /* ---- contiguous put into the right neighbour */
            for (int i = 0; i < N; i++) mem[i] = -1; /* unified model: local stores */
            if (m == 0) MPI_CHECK(MPI_Win_fence(0, win));
            else MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            int src[N];
            for (int i = 0; i < N; i++) src[i] = val(rank, round, i);
            open_epoch(m, right, left_g, right_g, win);
            MPI_CHECK(MPI_Put(src, N / 2, MPI_INT, right, 0, N / 2, MPI_INT, win));
            MPI_CHECK(MPI_Put(src + N / 2, N / 4, MPI_INT, right, N / 2, N / 4, MPI_INT, win));
            close_epoch(m, right, win);
            for (int i = 0; i < N / 2 + N / 4; i++)
                CHECK(mem[i] == val(left, round, i), "mode %d flavor %d: put mem[%d] (expected %d got %d)", m,
                      flavor, i, val(left, round, i), mem[i]);
            for (int i = N / 2 + N / 4; i < N; i++)
                CHECK(mem[i] == -1, "mode %d flavor %d: mem[%d] written beyond the put (got %d)", m, flavor, i,
                      mem[i]);

            /* ---- derived target type: strided put, then strided get back from the left */
            if (m == 0) MPI_CHECK(MPI_Win_fence(0, win));
            else MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            open_epoch(m, right, left_g, right_g, win);
            int half[N / 2];
            for (int i = 0; i < N / 2; i++) half[i] = val(rank, round + 50, i);
            MPI_CHECK(MPI_Put(half, N / 2, MPI_INT, right, 0, 1, strided, win));
            close_epoch(m, right, win);
            for (int i = 0; i < N; i++) {
                int want = i % 2 == 0 ? val(left, round + 50, i / 2) : val(left, round, i);
                if (i >= N / 2 + N / 4 && i % 2) want = -1;
                CHECK(mem[i] == want, "mode %d flavor %d: strided put mem[%d] (expected %d got %d)", m, flavor, i,
                      want, mem[i]);
            }
            if (m == 0) MPI_CHECK(MPI_Win_fence(0, win));
            else MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            /* get the right neighbour's even slots (written by me) into a contiguous buffer,
             * and its odd slots through a strided origin type */
            int got[2 * N];
            for (int i = 0; i < 2 * N; i++) got[i] = -7;
            open_epoch(m, right, left_g, right_g, win);
            MPI_CHECK(MPI_Get(got, N / 2, MPI_INT, right, 0, 1, strided, win));
            MPI_CHECK(MPI_Get(got + N / 2, 1, strided, right, 1, 1, strided, win));
            close_epoch(m, right, win);
            for (int i = 0; i < N / 2; i++)
                CHECK(got[i] == val(rank, round + 50, i), "mode %d flavor %d: strided get got[%d] (expected %d got %d)",
                      m, flavor, i, val(rank, round + 50, i), got[i]);
            for (int i = 0; i < N / 2; i++) {
                int want = 2 * i + 1 >= N / 2 + N / 4 ? -1 : val(rank, round, 2 * i + 1);
                CHECK(got[N / 2 + 2 * i] == want, "mode %d flavor %d: strided-to-strided get (expected %d got %d)", m,
                      flavor, want, got[N / 2 + 2 * i]);
                CHECK(got[N / 2 + 2 * i + 1] == -7, "mode %d flavor %d: get wrote a hole of the origin type", m,
                      flavor);
            }

            /* ---- accumulate: every rank adds into rank 0's window (contiguous), and
             * into its right neighbour's odd slots (derived) */
            if (m == 0) MPI_CHECK(MPI_Win_fence(0, win));
            else MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            for (int i = 0; i < N; i++) mem[i] = 0;
            if (m == 0) MPI_CHECK(MPI_Win_fence(0, win));
            else MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            int ones[N];
            for (int i = 0; i < N; i++) ones[i] = i + 1;
            if (m == 1) { /* PSCW: everyone accesses 0 and right; 0 exposes to all */
                MPI_Group to_g, from_g;
                int tg[2] = {0, right}, fg[2] = {left, -1};
                int nt = right == 0 ? 1 : 2, nf = 1;
                if (rank == 0) { /* origins of 0: everyone (its left included) */
                    MPI_Comm_group(MPI_COMM_WORLD, &from_g);
                } else {
                    MPI_Group_incl(world_g, nf, fg, &from_g);
                }
                MPI_CHECK(MPI_Win_post(from_g, 0, win));
                MPI_CHECK(MPI_Group_incl(world_g, nt, tg, &to_g));
                MPI_CHECK(MPI_Win_start(to_g, 0, win));
                MPI_CHECK(MPI_Accumulate(ones, N / 2, MPI_INT, 0, 0, N / 2, MPI_INT, MPI_SUM, win));
                MPI_CHECK(MPI_Accumulate(ones, N / 2, MPI_INT, right, 1, 1, strided, MPI_SUM, win));
                MPI_CHECK(MPI_Win_complete(win));
                MPI_CHECK(MPI_Win_wait(win));
                MPI_Group_free(&to_g);
                MPI_Group_free(&from_g);
            } else {
                if (m == 2 || m == 3) {
                    int lt = m == 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
                    MPI_CHECK(MPI_Win_lock(lt, 0, 0, win));
                    MPI_CHECK(MPI_Accumulate(ones, N / 2, MPI_INT, 0, 0, N / 2, MPI_INT, MPI_SUM, win));
                    MPI_CHECK(MPI_Win_unlock(0, win));
                    MPI_CHECK(MPI_Win_lock(lt, right, 0, win));
                    MPI_CHECK(MPI_Accumulate(ones, N / 2, MPI_INT, right, 1, 1, strided, MPI_SUM, win));
                    MPI_CHECK(MPI_Win_unlock(right, win));
                } else {
                    if (m == 4) MPI_CHECK(MPI_Win_lock_all(0, win));
                    MPI_CHECK(MPI_Accumulate(ones, N / 2, MPI_INT, 0, 0, N / 2, MPI_INT, MPI_SUM, win));
                    MPI_CHECK(MPI_Accumulate(ones, N / 2, MPI_INT, right, 1, 1, strided, MPI_SUM, win));
                    if (m == 4) MPI_CHECK(MPI_Win_unlock_all(win));
                }
                if (m == 0) MPI_CHECK(MPI_Win_fence(0, win));
                else MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            }
            for (int i = 0; i < N; i++) {
                int want = 0;
                if (rank == 0 && i < N / 2) want += size * (i + 1);
                if (i % 2 == 1) want += i / 2 + 1;
                CHECK(mem[i] == want, "mode %d flavor %d: accumulate mem[%d] (expected %d got %d)", m, flavor, i, want,
                      mem[i]);
            }
            if (m == 0) MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        }
        MPI_CHECK(MPI_Win_free(&win));
        CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not set MPI_WIN_NULL");
        if (flavor == 0) free(mem);
    }
    MPI_Type_free(&strided);
    MPI_Group_free(&right_g);
    MPI_Group_free(&left_g);
    MPI_Group_free(&world_g);
    return mt_finish();
}
