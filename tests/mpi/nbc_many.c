/*
 * nbc_many.c - many nonblocking collectives in flight at once on several communicators.
 *
 * Every rank starts, in the same order, ROUNDS x (Ibarrier, Ibcast, Iallreduce, Ireduce,
 * Iallgather, Ialltoall, Igather, Iscatter, Iscan) on each of: a dup of MPI_COMM_WORLD,
 * an even/odd split, a reversed-order split and MPI_COMM_WORLD itself; then completes
 * them all with MPI_Waitall (phase 0) or an MPI_Testall loop (phase 1). Results checked.
 */
#define TEST_NAME "nbc_many"
#include "mpitest.h"

#define NCOMM 4
#define NOPS 9
#define ROUNDS 6

typedef struct slot {
    int in[64], out[64 * 64];
    int root_val;
} slot;

int main(int argc, char **argv)
{
    int wrank, wsize;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    CHECK(wsize <= 64, "at most 64 ranks");
    MPI_Comm comms[NCOMM];
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]));
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &comms[1]));
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comms[2]));
    comms[3] = MPI_COMM_WORLD;
    const int n = NCOMM * NOPS * ROUNDS;
    slot *s = mt_malloc(sizeof(slot) * (size_t)n);
    MPI_Request *rq = mt_malloc(sizeof(MPI_Request) * (size_t)n);
    for (int phase = 0; phase < 2; phase++) {
        memset(s, 0, sizeof(slot) * (size_t)n);
        int k = 0;
        for (int round = 0; round < ROUNDS; round++) {
            for (int c = 0; c < NCOMM; c++) {
                int r, p;
                MPI_Comm cm = comms[c];
                MPI_CHECK(MPI_Comm_rank(cm, &r));
                MPI_CHECK(MPI_Comm_size(cm, &p));
                int root = (round + c) % p;
                for (int op = 0; op < NOPS; op++, k++) {
                    slot *x = &s[k];
                    for (int i = 0; i < 64; i++) x->in[i] = r * 100 + i + round;
                    switch (op) {
                    case 0: MPI_CHECK(MPI_Ibarrier(cm, &rq[k])); break;
                    case 1:
                        x->root_val = r == root ? 4242 + k : -1;
                        MPI_CHECK(MPI_Ibcast(&x->root_val, 1, MPI_INT, root, cm, &rq[k]));
                        break;
                    case 2: MPI_CHECK(MPI_Iallreduce(x->in, x->out, 8, MPI_INT, MPI_SUM, cm, &rq[k])); break;
                    case 3: MPI_CHECK(MPI_Ireduce(x->in, x->out, 8, MPI_INT, MPI_MAX, root, cm, &rq[k])); break;
                    case 4: MPI_CHECK(MPI_Iallgather(x->in, 2, MPI_INT, x->out, 2, MPI_INT, cm, &rq[k])); break;
                    case 5: MPI_CHECK(MPI_Ialltoall(x->in, 1, MPI_INT, x->out, 1, MPI_INT, cm, &rq[k])); break;
                    case 6: MPI_CHECK(MPI_Igather(x->in, 1, MPI_INT, x->out, 1, MPI_INT, root, cm, &rq[k])); break;
                    case 7: MPI_CHECK(MPI_Iscatter(x->in, 1, MPI_INT, x->out, 1, MPI_INT, root, cm, &rq[k])); break;
                    default: MPI_CHECK(MPI_Iscan(x->in, x->out, 4, MPI_INT, MPI_SUM, cm, &rq[k])); break;
                    }
                }
            }
        }
        if (phase == 0) {
            MPI_CHECK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
        } else {
            int flag = 0;
            while (!flag) MPI_CHECK(MPI_Testall(n, rq, &flag, MPI_STATUSES_IGNORE));
        }
        k = 0;
        for (int round = 0; round < ROUNDS; round++) {
            for (int c = 0; c < NCOMM; c++) {
                int r, p;
                MPI_CHECK(MPI_Comm_rank(comms[c], &r));
                MPI_CHECK(MPI_Comm_size(comms[c], &p));
                int root = (round + c) % p;
                for (int op = 0; op < NOPS; op++, k++) {
                    slot *x = &s[k];
                    switch (op) {
                    case 1: CHECK(x->root_val == 4242 + k, "Ibcast comm %d round %d (expected %d got %d)", c,
                                  round, 4242 + k, x->root_val); break;
                    case 2:
                        for (int i = 0; i < 8; i++)
                            CHECK(x->out[i] == 100 * p * (p - 1) / 2 + p * (i + round), "Iallreduce comm %d "
                                  "round %d [%d] (expected %d got %d)", c, round, i,
                                  100 * p * (p - 1) / 2 + p * (i + round), x->out[i]);
                        break;
                    case 3:
                        if (r == root)
                            CHECK(x->out[0] == (p - 1) * 100 + round, "Ireduce comm %d (expected %d got %d)", c,
                                  (p - 1) * 100 + round, x->out[0]);
                        break;
                    case 4:
                        for (int q = 0; q < p; q++)
                            CHECK(x->out[2 * q + 1] == q * 100 + 1 + round, "Iallgather comm %d from %d "
                                  "(expected %d got %d)", c, q, q * 100 + 1 + round, x->out[2 * q + 1]);
                        break;
                    case 5:
                        for (int q = 0; q < p; q++)
                            CHECK(x->out[q] == q * 100 + r + round, "Ialltoall comm %d from %d (expected %d "
                                  "got %d)", c, q, q * 100 + r + round, x->out[q]);
                        break;
                    case 6:
                        if (r == root)
                            for (int q = 0; q < p; q++)
                                CHECK(x->out[q] == q * 100 + round, "Igather comm %d from %d", c, q);
                        break;
                    case 7:
                        CHECK(x->out[0] == root * 100 + r + round, "Iscatter comm %d (expected %d got %d)", c,
                              root * 100 + r + round, x->out[0]);
                        break;
                    case 8:
                        CHECK(x->out[0] == 100 * r * (r + 1) / 2 + (r + 1) * round, "Iscan comm %d (expected "
                              "%d got %d)", c, 100 * r * (r + 1) / 2 + (r + 1) * round, x->out[0]);
                        break;
                    default: break;
                    }
                }
            }
        }
    }
    for (int c = 0; c < 3; c++) MPI_CHECK(MPI_Comm_free(&comms[c]));
    free(s);
    free(rq);
    MPI_CHECK(MPI_Finalize());
    if (wrank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
