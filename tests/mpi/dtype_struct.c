/*
 * dtype_struct.c - struct, indexed and resized datatypes; type queries.
 *
 * An array of C structs described with MPI_Type_create_struct (its extent must
 * be sizeof the struct: the standard's alignment padding) goes around the ring
 * (self with 1 rank) as 1, 10 and 3000 elements; every other element with a
 * resized type (extent 2 x sizeof); an indexed type of ints received as a
 * contiguous array; MPI_BOTTOM with absolute addresses (MPI_Get_address) in
 * MPI_Bcast.  Get_count / Get_elements on a partial receive of a derived type.
 * MPI_Type_get_envelope / get_contents for every combiner, Type_match_size,
 * Type_size_x, Type_get_extent_x, Type_get_true_extent(_x), Get_address.
 */
#define TEST_NAME "dtype_struct"
#include "mpitest.h"

struct particle {
    int id;
    double pos[3];
    char tag;
    long long big;
};

static void fill(struct particle *p, int owner, int k)
{
    memset(p, 0, sizeof *p);
    p->id = owner * 100000 + k;
    for (int d = 0; d < 3; d++)
        p->pos[d] = owner + k * 0.5 + d * 0.25;
    p->tag = (char)('a' + (k + owner) % 26);
    p->big = (long long)owner << 40 | k;
}

static void check_particle(const struct particle *p, int owner, int k, const char *what)
{
    struct particle w;
    fill(&w, owner, k);
    CHECK(p->id == w.id && p->tag == w.tag && p->big == w.big, "%s: particle %d fields (expected id %d got %d)", what,
          k, w.id, p->id);
    for (int d = 0; d < 3; d++)
        CHECK(p->pos[d] == w.pos[d], "%s: particle %d pos[%d] (expected %g got %g)", what, k, d, w.pos[d], p->pos[d]);
}

static MPI_Datatype particle_type(void)
{
    MPI_Datatype t;
    const int bl[4] = {1, 3, 1, 1};
    const MPI_Aint disp[4] = {offsetof(struct particle, id), offsetof(struct particle, pos),
                              offsetof(struct particle, tag), offsetof(struct particle, big)};
    const MPI_Datatype types[4] = {MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_LONG_LONG};
    MPI_CHECK(MPI_Type_create_struct(4, bl, disp, types, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    return t;
}

static void struct_tests(int rank, int size)
{
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    MPI_Datatype pt = particle_type(), every2;
    int tsize;
    MPI_Aint lb, ext, tlb, text;
    MPI_CHECK(MPI_Type_size(pt, &tsize));
    MPI_CHECK(MPI_Type_get_extent(pt, &lb, &ext));
    MPI_CHECK(MPI_Type_get_true_extent(pt, &tlb, &text));
    CHECK(tsize == 4 + 24 + 1 + 8, "struct size (expected 37 got %d)", tsize);
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct particle), "struct extent (expected 0,%zu got %ld,%ld)",
          sizeof(struct particle), (long)lb, (long)ext);
    CHECK(tlb == 0 && text == (MPI_Aint)sizeof(struct particle), "struct true extent (expected 0,%zu got %ld,%ld)",
          sizeof(struct particle), (long)tlb, (long)text);

    /* trailing padding: the last member ends 4 bytes before sizeof */
    struct padded {
        double d;
        int i;
    } pa[5], pb[5];
    MPI_Datatype padt;
    const int pbl[2] = {1, 1};
    const MPI_Aint pdisp[2] = {offsetof(struct padded, d), offsetof(struct padded, i)};
    const MPI_Datatype pty[2] = {MPI_DOUBLE, MPI_INT};
    MPI_CHECK(MPI_Type_create_struct(2, pbl, pdisp, pty, &padt));
    MPI_CHECK(MPI_Type_commit(&padt));
    MPI_CHECK(MPI_Type_get_extent(padt, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct padded), "padded struct extent (expected 0,%zu got %ld,%ld)",
          sizeof(struct padded), (long)lb, (long)ext);
    for (int k = 0; k < 5; k++) {
        pa[k].d = rank + k * 0.5;
        pa[k].i = rank * 10 + k;
        pb[k].d = -1;
        pb[k].i = -1;
    }
    MPI_CHECK(MPI_Sendrecv(pa, 5, padt, right, 9, pb, 5, padt, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int k = 0; k < 5; k++)
        CHECK(pb[k].d == left + k * 0.5 && pb[k].i == left * 10 + k, "padded struct %d (expected i=%d got %d)", k,
              left * 10 + k, pb[k].i);
    MPI_CHECK(MPI_Type_free(&padt));

    const int counts[3] = {1, 10, 3000};
    for (int ci = 0; ci < 3; ci++) {
        const int n = counts[ci];
        struct particle *a = mt_malloc(n * sizeof *a), *b = mt_malloc(n * sizeof *b);
        for (int k = 0; k < n; k++)
            fill(&a[k], rank, k);
        memset(b, 0xee, n * sizeof *b);
        MPI_Status st;
        MPI_CHECK(MPI_Sendrecv(a, n, pt, right, 1, b, n, pt, left, 1, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, pt, left, 1, n, "%d particles", n);
        for (int k = 0; k < n; k++)
            check_particle(&b[k], left, k, "struct array");
        /* every other particle, received densely */
        MPI_CHECK(MPI_Type_create_resized(pt, 0, 2 * (MPI_Aint)sizeof(struct particle), &every2));
        MPI_CHECK(MPI_Type_commit(&every2));
        memset(b, 0xee, n * sizeof *b);
        const int half = (n + 1) / 2;
        MPI_Request rq[2];
        MPI_CHECK(MPI_Irecv(b, half, pt, left, 2, MPI_COMM_WORLD, &rq[0]));
        MPI_CHECK(MPI_Isend(a, half, every2, right, 2, MPI_COMM_WORLD, &rq[1]));
        MPI_CHECK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        for (int k = 0; k < half; k++)
            check_particle(&b[k], left, 2 * k, "every other particle");
        if (half < n) {
            unsigned char *raw = (unsigned char *)(b + half);
            CHECK(raw[0] == 0xee, "bytes after the received particles were written");
        }
        MPI_CHECK(MPI_Type_free(&every2));
        free(a);
        free(b);
    }
    MPI_CHECK(MPI_Type_free(&pt));
}

static void indexed_tests(int rank, int size)
{
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int a[40], got[40];
    for (int i = 0; i < 40; i++)
        a[i] = rank * 100 + i;
    const int bl[4] = {3, 1, 0, 2}, disp[4] = {30, 2, 5, 10};
    MPI_Datatype ix;
    MPI_CHECK(MPI_Type_indexed(4, bl, disp, MPI_INT, &ix));
    MPI_CHECK(MPI_Type_commit(&ix));
    MPI_CHECK(MPI_Sendrecv(a, 1, ix, right, 3, got, 40, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    const int want[6] = {30, 31, 32, 2, 10, 11};
    for (int k = 0; k < 6; k++)
        CHECK(got[k] == left * 100 + want[k], "indexed element %d (expected %d got %d)", k, left * 100 + want[k],
              got[k]);

    /* partial receive: 7 ints into (3 ints) x 4 -> 2 whole elements and 1 int */
    MPI_Datatype three;
    MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &three));
    MPI_CHECK(MPI_Type_commit(&three));
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv(a, 7, MPI_INT, right, 4, got, 4, three, left, 4, MPI_COMM_WORLD, &st));
    int count = 0, elems = 0;
    MPI_CHECK(MPI_Get_count(&st, three, &count));
    MPI_CHECK(MPI_Get_elements(&st, three, &elems));
    CHECK(count == MPI_UNDEFINED, "Get_count on a partial receive (expected MPI_UNDEFINED got %d)", count);
    CHECK(elems == 7, "Get_elements on a partial receive (expected 7 got %d)", elems);
    MPI_Count ex = 0;
    MPI_CHECK(MPI_Get_elements_x(&st, three, &ex));
    CHECK(ex == 7, "Get_elements_x on a partial receive (expected 7 got %lld)", (long long)ex);
    /* a strided receive type: vector of 2-int blocks */
    MPI_Datatype v;
    MPI_CHECK(MPI_Type_vector(3, 2, 5, MPI_INT, &v));
    MPI_CHECK(MPI_Type_commit(&v));
    for (int i = 0; i < 40; i++)
        got[i] = -1;
    MPI_CHECK(MPI_Sendrecv(a, 9, MPI_INT, right, 5, got, 2, v, left, 5, MPI_COMM_WORLD, &st));
    MPI_CHECK(MPI_Get_count(&st, v, &count));
    MPI_CHECK(MPI_Get_elements(&st, v, &elems));
    CHECK(count == MPI_UNDEFINED && elems == 9, "vector partial receive (expected UNDEFINED/9 got %d/%d)", count,
          elems);
    /* second element starts at the extent (3-1)*5+2 = 12 ints */
    const int pos[9] = {0, 1, 5, 6, 10, 11, 12, 13, 17};
    for (int k = 0; k < 9; k++)
        CHECK(got[pos[k]] == left * 100 + k, "vector receive element %d (expected %d got %d)", k, left * 100 + k,
              got[pos[k]]);
    CHECK(got[18] == -1 && got[2] == -1, "vector receive wrote outside its blocks");

    /* indexed_block, hindexed_block, hvector, hindexed */
    const int dispb[3] = {4, 0, 8};
    const MPI_Aint hdisp[3] = {16, 0, 32};
    MPI_Datatype t[4];
    MPI_CHECK(MPI_Type_create_indexed_block(3, 2, dispb, MPI_INT, &t[0]));
    MPI_CHECK(MPI_Type_create_hindexed_block(3, 2, hdisp, MPI_INT, &t[1]));
    MPI_CHECK(MPI_Type_create_hvector(3, 2, 16, MPI_INT, &t[2]));
    const int hbl[3] = {2, 2, 2};
    MPI_CHECK(MPI_Type_create_hindexed(3, hbl, hdisp, MPI_INT, &t[3]));
    const int wants[4][6] = {{4, 5, 0, 1, 8, 9}, {4, 5, 0, 1, 8, 9}, {0, 1, 4, 5, 8, 9}, {4, 5, 0, 1, 8, 9}};
    for (int i = 0; i < 4; i++) {
        MPI_CHECK(MPI_Type_commit(&t[i]));
        MPI_CHECK(MPI_Sendrecv(a, 1, t[i], right, 6, got, 6, MPI_INT, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < 6; k++)
            CHECK(got[k] == left * 100 + wants[i][k], "type %d element %d (expected %d got %d)", i, k,
                  left * 100 + wants[i][k], got[k]);
        MPI_CHECK(MPI_Type_free(&t[i]));
    }
    MPI_CHECK(MPI_Type_free(&ix));
    MPI_CHECK(MPI_Type_free(&three));
    MPI_CHECK(MPI_Type_free(&v));
}

static void bottom_bcast(int rank)
{
    /* three separate objects described by absolute addresses, broadcast from MPI_BOTTOM */
    int count = rank == 0 ? 42 : -1;
    double *vec = mt_malloc(5 * sizeof *vec);
    char name[8];
    for (int k = 0; k < 5; k++)
        vec[k] = rank == 0 ? k * 1.5 : -1;
    memset(name, rank == 0 ? 'z' : '?', sizeof name);
    MPI_Aint addr[3];
    MPI_CHECK(MPI_Get_address(&count, &addr[0]));
    MPI_CHECK(MPI_Get_address(vec, &addr[1]));
    MPI_CHECK(MPI_Get_address(name, &addr[2]));
    CHECK(addr[1] == (MPI_Aint)(uintptr_t)vec, "MPI_Get_address of a heap pointer");
    const int bl[3] = {1, 5, 8};
    const MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Datatype abs;
    MPI_CHECK(MPI_Type_create_struct(3, bl, addr, ty, &abs));
    MPI_CHECK(MPI_Type_commit(&abs));
    MPI_CHECK(MPI_Bcast(MPI_BOTTOM, 1, abs, 0, MPI_COMM_WORLD));
    CHECK(count == 42, "MPI_BOTTOM bcast: int (expected 42 got %d)", count);
    for (int k = 0; k < 5; k++)
        CHECK(vec[k] == k * 1.5, "MPI_BOTTOM bcast: vec[%d] (expected %g got %g)", k, k * 1.5, vec[k]);
    for (int k = 0; k < 8; k++)
        CHECK(name[k] == 'z', "MPI_BOTTOM bcast: name[%d] (expected 'z' got '%c')", k, name[k]);
    MPI_CHECK(MPI_Type_free(&abs));
    free(vec);
}

static void contents_tests(void)
{
    MPI_Datatype base, t[12];
    MPI_CHECK(MPI_Type_contiguous(2, MPI_SHORT, &base));
    const int bl[2] = {2, 1}, disp[2] = {3, 0}, sizes[2] = {4, 6}, sub[2] = {2, 3}, starts[2] = {1, 2};
    const MPI_Aint hdisp[2] = {24, -8};
    const MPI_Datatype sty[2] = {base, MPI_DOUBLE};
    const int gs[1] = {10}, di[1] = {MPI_DISTRIBUTE_CYCLIC}, da[1] = {2}, ps[1] = {3};
    MPI_CHECK(MPI_Type_dup(base, &t[0]));
    MPI_CHECK(MPI_Type_contiguous(5, base, &t[1]));
    MPI_CHECK(MPI_Type_vector(3, 2, 4, base, &t[2]));
    MPI_CHECK(MPI_Type_create_hvector(3, 2, 40, base, &t[3]));
    MPI_CHECK(MPI_Type_indexed(2, bl, disp, base, &t[4]));
    MPI_CHECK(MPI_Type_create_hindexed(2, bl, hdisp, base, &t[5]));
    MPI_CHECK(MPI_Type_create_indexed_block(2, 3, disp, base, &t[6]));
    MPI_CHECK(MPI_Type_create_hindexed_block(2, 3, hdisp, base, &t[7]));
    MPI_CHECK(MPI_Type_create_struct(2, bl, hdisp, sty, &t[8]));
    MPI_CHECK(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_FORTRAN, base, &t[9]));
    MPI_CHECK(MPI_Type_create_darray(3, 1, 1, gs, di, da, ps, MPI_ORDER_C, base, &t[10]));
    MPI_CHECK(MPI_Type_create_resized(base, -4, 100, &t[11]));
    const int combiners[12] = {MPI_COMBINER_DUP, MPI_COMBINER_CONTIGUOUS, MPI_COMBINER_VECTOR,
                               MPI_COMBINER_HVECTOR, MPI_COMBINER_INDEXED, MPI_COMBINER_HINDEXED,
                               MPI_COMBINER_INDEXED_BLOCK, MPI_COMBINER_HINDEXED_BLOCK, MPI_COMBINER_STRUCT,
                               MPI_COMBINER_SUBARRAY, MPI_COMBINER_DARRAY, MPI_COMBINER_RESIZED};
    const int want_n[12][3] = {{0, 0, 1}, {1, 0, 1}, {3, 0, 1}, {2, 1, 1}, {5, 0, 1}, {3, 2, 1},
                               {4, 0, 1}, {2, 2, 1}, {3, 2, 2}, {8, 0, 1}, {8, 0, 1}, {0, 2, 1}};
    const int want_ints[12][8] = {{0}, {5}, {3, 2, 4}, {3, 2}, {2, 2, 1, 3, 0}, {2, 2, 1},
                                  {2, 3, 3, 0}, {2, 3}, {2, 2, 1}, {2, 4, 6, 2, 3, 1, 2, MPI_ORDER_FORTRAN},
                                  {3, 1, 1, 10, MPI_DISTRIBUTE_CYCLIC, 2, 3, MPI_ORDER_C}, {0}};
    for (int i = 0; i < 12; i++) {
        int ni, na, nd, comb;
        MPI_CHECK(MPI_Type_get_envelope(t[i], &ni, &na, &nd, &comb));
        CHECK(comb == combiners[i], "type %d: combiner (expected %d got %d)", i, combiners[i], comb);
        CHECK(ni == want_n[i][0] && na == want_n[i][1] && nd == want_n[i][2],
              "type %d: envelope (expected %d,%d,%d got %d,%d,%d)", i, want_n[i][0], want_n[i][1], want_n[i][2], ni,
              na, nd);
        int ints[8];
        MPI_Aint aints[2];
        MPI_Datatype types[2];
        /* exact sizes: Open MPI before 5.x crashes on larger ones (open-mpi/ompi#14051) */
        MPI_CHECK(MPI_Type_get_contents(t[i], ni, na, nd, ints, aints, types));
        for (int k = 0; k < ni; k++)
            CHECK(ints[k] == want_ints[i][k], "type %d: integer %d (expected %d got %d)", i, k, want_ints[i][k],
                  ints[k]);
        if (i == 5 || i == 7 || i == 8)
            CHECK(aints[0] == 24 && aints[1] == -8, "type %d: addresses (expected 24,-8 got %ld,%ld)", i,
                  (long)aints[0], (long)aints[1]);
        if (i == 3)
            CHECK(aints[0] == 40, "hvector stride (expected 40 got %ld)", (long)aints[0]);
        if (i == 11)
            CHECK(aints[0] == -4 && aints[1] == 100, "resized bounds (expected -4,100 got %ld,%ld)", (long)aints[0],
                  (long)aints[1]);
        /* the returned datatype is equivalent to `base`: a derived type the caller frees */
        int cn, cna, cnd, cc;
        MPI_CHECK(MPI_Type_get_envelope(types[0], &cn, &cna, &cnd, &cc));
        CHECK(cc == MPI_COMBINER_CONTIGUOUS && cn == 1, "type %d: its oldtype's envelope", i);
        int csize;
        MPI_CHECK(MPI_Type_size(types[0], &csize));
        CHECK(csize == 4, "type %d: its oldtype's size (expected 4 got %d)", i, csize);
        MPI_CHECK(MPI_Type_free(&types[0]));
        if (nd == 2) {
            CHECK(types[1] == MPI_DOUBLE, "struct: predefined member type returned as itself");
        }
    }
    int ni, na, nd, comb;
    MPI_CHECK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "envelope of MPI_INT");
    /* sizes and extents of a few of them, uncommitted */
    MPI_Count sz, lbx, extx;
    MPI_CHECK(MPI_Type_size_x(t[2], &sz));
    MPI_CHECK(MPI_Type_get_extent_x(t[2], &lbx, &extx));
    CHECK(sz == 24 && lbx == 0 && extx == 40, "vector of base: size/extent (expected 24,0,40 got %lld,%lld,%lld)",
          (long long)sz, (long long)lbx, (long long)extx);
    MPI_Aint lb, ext;
    MPI_CHECK(MPI_Type_get_extent(t[11], &lb, &ext));
    CHECK(lb == -4 && ext == 100, "resized extent (expected -4,100 got %ld,%ld)", (long)lb, (long)ext);
    MPI_CHECK(MPI_Type_get_true_extent_x(t[5], &lbx, &extx));
    CHECK(lbx == -8 && extx == 40, "hindexed true extent (expected -8,40 got %lld,%lld)", (long long)lbx,
          (long long)extx);
    MPI_CHECK(MPI_Type_get_extent(t[8], &lb, &ext));
    CHECK(lb == -8 && ext == 40, "struct extent (expected -8,40 got %ld,%ld)", (long)lb, (long)ext);
    for (int i = 0; i < 12; i++)
        MPI_CHECK(MPI_Type_free(&t[i]));
    MPI_CHECK(MPI_Type_free(&base));

    MPI_Datatype m;
    MPI_CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    int msize;
    MPI_CHECK(MPI_Type_size(m, &msize));
    CHECK(msize == 8, "Type_match_size(REAL, 8) has size %d", msize);
    MPI_CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 2, &m));
    MPI_CHECK(MPI_Type_size(m, &msize));
    CHECK(msize == 2, "Type_match_size(INTEGER, 2) has size %d", msize);
    MPI_CHECK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m));
    MPI_CHECK(MPI_Type_size(m, &msize));
    CHECK(msize == 16, "Type_match_size(COMPLEX, 16) has size %d", msize);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    struct_tests(rank, size);
    indexed_tests(rank, size);
    bottom_bcast(rank);
    contents_tests();
    return mt_finish();
}
