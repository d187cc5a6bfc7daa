/* halo.c — 2-D halo exchange, plain MPI-3.1.
 *
 * Builds unchanged against Skein, MPICH and Open MPI. Uses MPI_Init,
 * MPI_Finalize, MPI_Comm_rank/size, MPI_Send, MPI_Recv, MPI_Isend, MPI_Irecv,
 * MPI_Waitall, MPI_Barrier, MPI_Reduce, MPI_Wtime and the derived datatype
 * calls MPI_Type_vector, MPI_Type_commit, MPI_Type_free.
 *
 *   halo [--n N] [--reps R] [--target-ms T] [--max-iters I] [--time-cap SECONDS]
 *
 * Decomposition. A global N x N grid of doubles (default N = 4096) on a
 * periodic px x py process grid: px * py = ranks, px the largest divisor of
 * the number of ranks not above its square root, py = ranks / px (computed
 * here: MPI_Dims_create is not used). Rank r sits in process row r / px and
 * process column r % px. Rows and columns are dealt out as evenly as possible
 * (local sizes differ by at most 1). Each rank stores its (ny + 2) x (nx + 2)
 * block row-major with a one-cell halo on every side.
 *
 * One iteration: every rank posts 4 MPI_Irecv (into its halo) and 4 MPI_Isend
 * (of its edges) to its north, south, west and east neighbours, then
 * MPI_Waitall on the 8 requests. North/south edges are contiguous rows (nx
 * MPI_DOUBLE); west/east edges are one element of a column vector type
 * MPI_Type_vector(ny, 1, nx + 2, MPI_DOUBLE). Corners are not exchanged
 * (5-point stencil). The grid is periodic, so every rank has 4 neighbours
 * (with 1 or 2 ranks in a direction a neighbour may be the rank itself or the
 * same rank on both sides; tags tell the directions apart). No computation:
 * the exchange alone is timed.
 *
 * Method (as coll.c). One batch = rank 0 tells everyone n (control message,
 * untimed), one untimed iteration, MPI_Barrier, n timed iterations; the batch
 * time is the maximum over ranks (MPI_Reduce, MPI_MAX). n is calibrated so a
 * batch lasts about --target-ms (default 3 ms), the figure is the median over
 * --reps batches (default 7) of the batch time / n; --time-cap (default 10 s)
 * bounds calibration (half) and repetitions (at least one).
 *
 * Check. Before timing, the interior holds f(i, j) = i * N + j + 1 (global
 * row i, column j; exact in a double) and the halo -1; after one exchange
 * every halo cell must hold f of the neighbouring global cell (with periodic
 * wrap). A mismatch prints `ERROR ...`, no timing is done and the program
 * exits with status 1.
 *
 * Output (rank 0): `halo ranks=4 grid=4096 px=2 py=2 usec=... MBps=...
 * bytes=...` where bytes = bytes sent per iteration by all ranks together
 * (each rank sends 2 * (nx + ny) doubles) and MBps = bytes / time per
 * iteration (1 MB = 1e6 B), i.e. the aggregate exchanged-bytes throughput.
 *
 * No mutable global or static variables: under a thread-based MPI all ranks
 * of a node share them.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

enum { TAG_CTRL = 11, TAG_N = 21, TAG_S = 22, TAG_W = 23, TAG_E = 24 };

struct opts {
    long N;
    int reps;
    double target;
    long max_iters;
    double time_cap;
    int rank, size;
};

/* One rank's part of the grid and its neighbours. */
struct grid {
    int px, py;       /* process grid: px columns, py rows */
    int prow, pcol;   /* this rank's place */
    long nx, ny;      /* local interior columns, rows */
    long x0, y0;      /* global index of the first interior column, row */
    long ld;          /* row stride: nx + 2 */
    int north, south, west, east;
    double *a;        /* (ny + 2) * ld doubles */
    MPI_Datatype col; /* ny doubles, stride ld */
};

/* gcc 12 warns (wrongly) that MPI_Waitall writes through MPI_STATUSES_IGNORE. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

/* Near-square factorization: px <= py, px * py = p, px as large as possible. */
static void factor2(int p, int *px, int *py)
{
    int best = 1;
    for (int d = 1; (long)d * d <= p; d++)
        if (p % d == 0)
            best = d;
    *px = best;
    *py = p / best;
}

/* Block distribution of n cells over k parts: start and length of part i. */
static void block(long n, int k, int i, long *start, long *len)
{
    long q = n / k, r = n % k;
    *len = q + (i < r ? 1 : 0);
    *start = (long)i * q + (i < r ? i : r);
}

static double f(long i, long j, long N)
{
    return (double)(i * N + j + 1);
}

static int setup(const struct opts *o, struct grid *g)
{
    factor2(o->size, &g->px, &g->py);
    g->prow = o->rank / g->px;
    g->pcol = o->rank % g->px;
    block(o->N, g->px, g->pcol, &g->x0, &g->nx);
    block(o->N, g->py, g->prow, &g->y0, &g->ny);
    if (g->nx < 1 || g->ny < 1)
        return -1;
    g->ld = g->nx + 2;
    int up = (g->prow - 1 + g->py) % g->py, down = (g->prow + 1) % g->py;
    int left = (g->pcol - 1 + g->px) % g->px, right = (g->pcol + 1) % g->px;
    g->north = up * g->px + g->pcol;
    g->south = down * g->px + g->pcol;
    g->west = g->prow * g->px + left;
    g->east = g->prow * g->px + right;
    size_t bytes = sizeof(double) * (size_t)(g->ny + 2) * (size_t)g->ld;
    if (posix_memalign((void **)&g->a, 4096, bytes) != 0) {
        fprintf(stderr, "halo: rank %d: cannot allocate %zu bytes\n", o->rank, bytes);
        exit(2);
    }
    MPI_Type_vector((int)g->ny, 1, (int)g->ld, MPI_DOUBLE, &g->col);
    MPI_Type_commit(&g->col);
    return 0;
}

#define AT(g, r, c) ((g)->a[(size_t)(r) * (size_t)(g)->ld + (size_t)(c)])

/* Interior f(global), halo (and corners) -1. Touches every page. */
static void fill(const struct opts *o, struct grid *g)
{
    for (long r = 0; r < g->ny + 2; r++)
        for (long c = 0; c < g->ld; c++)
            AT(g, r, c) = -1.0;
    for (long r = 1; r <= g->ny; r++)
        for (long c = 1; c <= g->nx; c++)
            AT(g, r, c) = f(g->y0 + r - 1, g->x0 + c - 1, o->N);
}

/* The benchmark loop; noinline so that profilers find it. A message moving
 * north carries TAG_N: sent to the north neighbour from row 1, received from
 * the south neighbour into row ny + 1; and so on. */
__attribute__((noinline)) static void exchange(struct grid *g, long n)
{
    MPI_Request req[8];
    int nx = (int)g->nx;
    for (long it = 0; it < n; it++) {
        MPI_Irecv(&AT(g, g->ny + 1, 1), nx, MPI_DOUBLE, g->south, TAG_N, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&AT(g, 0, 1), nx, MPI_DOUBLE, g->north, TAG_S, MPI_COMM_WORLD, &req[1]);
        MPI_Irecv(&AT(g, 1, g->nx + 1), 1, g->col, g->east, TAG_W, MPI_COMM_WORLD, &req[2]);
        MPI_Irecv(&AT(g, 1, 0), 1, g->col, g->west, TAG_E, MPI_COMM_WORLD, &req[3]);
        MPI_Isend(&AT(g, 1, 1), nx, MPI_DOUBLE, g->north, TAG_N, MPI_COMM_WORLD, &req[4]);
        MPI_Isend(&AT(g, g->ny, 1), nx, MPI_DOUBLE, g->south, TAG_S, MPI_COMM_WORLD, &req[5]);
        MPI_Isend(&AT(g, 1, 1), 1, g->col, g->west, TAG_W, MPI_COMM_WORLD, &req[6]);
        MPI_Isend(&AT(g, 1, g->nx), 1, g->col, g->east, TAG_E, MPI_COMM_WORLD, &req[7]);
        MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    }
}

/* Halo cells against the neighbours' interior values; returns mismatches. */
static long check(const struct opts *o, const struct grid *g)
{
    long N = o->N, bad = 0;
    for (long c = 1; c <= g->nx; c++) {
        long j = g->x0 + c - 1;
        long in = (g->y0 - 1 + N) % N, is = (g->y0 + g->ny) % N;
        double vn = AT(g, 0, c), vs = AT(g, g->ny + 1, c);
        if (vn != f(in, j, N)) {
            if (!bad++)
                printf("ERROR rank=%d north halo col=%ld got=%.17g want=%.17g\n", o->rank, j, vn,
                       f(in, j, N));
        }
        if (vs != f(is, j, N)) {
            if (!bad++)
                printf("ERROR rank=%d south halo col=%ld got=%.17g want=%.17g\n", o->rank, j, vs,
                       f(is, j, N));
        }
    }
    for (long r = 1; r <= g->ny; r++) {
        long i = g->y0 + r - 1;
        long jw = (g->x0 - 1 + N) % N, je = (g->x0 + g->nx) % N;
        double vw = AT(g, r, 0), ve = AT(g, r, g->nx + 1);
        if (vw != f(i, jw, N)) {
            if (!bad++)
                printf("ERROR rank=%d west halo row=%ld got=%.17g want=%.17g\n", o->rank, i, vw,
                       f(i, jw, N));
        }
        if (ve != f(i, je, N)) {
            if (!bad++)
                printf("ERROR rank=%d east halo row=%ld got=%.17g want=%.17g\n", o->rank, i, ve,
                       f(i, je, N));
        }
    }
    /* the interior must be untouched */
    for (long r = 1; r <= g->ny; r++)
        for (long c = 1; c <= g->nx; c++)
            if (AT(g, r, c) != f(g->y0 + r - 1, g->x0 + c - 1, N)) {
                if (!bad++)
                    printf("ERROR rank=%d interior overwritten at row=%ld col=%ld\n", o->rank,
                           g->y0 + r - 1, g->x0 + c - 1);
            }
    if (bad) {
        printf("ERROR rank=%d halo mismatches=%ld\n", o->rank, bad);
        fflush(stdout);
    }
    return bad;
}

static void exchange_cb(void *g, long n)
{
    exchange(g, n);
}

static void usage(int rank)
{
    if (rank == 0)
        fprintf(stderr, "usage: halo [--n N] [--reps R] [--target-ms T] [--max-iters I] "
                        "[--time-cap SECONDS]\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct opts o = {.N = 4096, .reps = 7, .target = 3e-3, .max_iters = 1L << 24,
                     .time_cap = 10.0};
    MPI_Comm_rank(MPI_COMM_WORLD, &o.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o.size);
    for (int a = 1; a < argc; a += 2) {
        const char *k = argv[a], *val = a + 1 < argc ? argv[a + 1] : NULL;
        if (!val) {
            usage(o.rank);
            return bench_finalize(2);
        }
        if (!strcmp(k, "--n"))
            o.N = atol(val);
        else if (!bench_timing_opt(k, val, &o.reps, &o.target, &o.max_iters, &o.time_cap)) {
            usage(o.rank);
            return bench_finalize(2);
        }
    }
    bench_clamp_opts(&o.reps, &o.max_iters);

    struct grid g;
    memset(&g, 0, sizeof g);
    if (o.N < 1 || o.N > 1L << 20 || setup(&o, &g) != 0) {
        if (o.rank == 0)
            fprintf(stderr, "halo: grid %ld too small or too large for %d ranks\n", o.N, o.size);
        MPI_Finalize();
        return 2;
    }
    double start = MPI_Wtime();

    /* check once */
    fill(&o, &g);
    MPI_Barrier(MPI_COMM_WORLD);
    exchange(&g, 1);
    int bad = check(&o, &g) != 0, anybad = 0;
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);

    /* bytes sent per iteration, all ranks */
    double mine = 2.0 * (double)(g.nx + g.ny) * sizeof(double), total = 0;
    MPI_Reduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

    if (o.rank != 0) {
        if (bench_ctrl_recv(TAG_CTRL) != 0)
            bench_follow_batches(exchange_cb, &g, TAG_CTRL);
    } else if (anybad) {
        bench_ctrl_send(0, 1, o.size - 1, TAG_CTRL);
        printf("# halo: data check failed, not timed\n");
    } else {
        bench_ctrl_send(1, 1, o.size - 1, TAG_CTRL);
        printf("# halo: %ld x %ld doubles on %d x %d ranks (periodic), local %ld x %ld on rank 0; "
               "column edges as MPI_Type_vector\n",
               o.N, o.N, g.px, g.py, g.nx, g.ny);
        printf("# median over batches of max over ranks of the batch time, per iteration; "
               "MBps = bytes sent per iteration by all ranks / time, 1 MB = 1e6 B\n");
        fflush(stdout);
        /* calibration; batches with the final n count as repetitions */
        struct bench_figure fig = bench_lead_batches(exchange_cb, &g, TAG_CTRL, o.size, o.target,
                                                     o.max_iters, o.reps, o.time_cap, start);
        long n = fig.n;
        int reps = fig.reps;
        double tmin = fig.tmin;
        double per = fig.med / (double)n;
        printf("halo ranks=%d grid=%ld px=%d py=%d bytes=%.0f usec=%.3f MBps=%.1f min_usec=%.3f "
               "iters=%ld reps=%d seconds=%.2f\n",
               o.size, o.N, g.px, g.py, total, per * 1e6, total / per / 1e6,
               tmin / (double)n * 1e6, n, reps, MPI_Wtime() - start);
        fflush(stdout);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&g.col);
    free(g.a);
    MPI_Finalize();
    return (o.rank == 0 ? anybad : bad) ? 1 : 0;
}
