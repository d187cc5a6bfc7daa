/* Topology corner cases, against the standard and MPICH 4.0's answers:
 * - Dims_create returns the most balanced factorization (smallest spread, then smallest
 *   sum: 5616 in 4 dimensions is 13 x 9 x 8 x 6), keeps given dimensions;
 * - Dist_graph_neighbors_count's `weighted` is what the calling member gave: true unless
 *   it passed MPI_UNWEIGHTED, including empty graphs with non-NULL (or NULL) weights and
 *   MPI_WEIGHTS_EMPTY, per member when members differ;
 * - Cart_sub with no dimension kept gives every member a 0-dimensional Cartesian
 *   communicator of size 1 (MPI-3.1 7.5.5), and Cart_sub of that again; Cart_create with
 *   ndims 0 gives rank 0 one and the others MPI_COMM_NULL. */
#define TEST_NAME "topo_corners"
#include "mpitest.h"

static void dims_case(int nnodes, int nd, const int *given, const int *want) {
  int d[8];
  for (int i = 0; i < nd; i++) d[i] = given ? given[i] : 0;
  MPI_CHECK(MPI_Dims_create(nnodes, nd, d));
  for (int i = 0; i < nd; i++)
    CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d] (expected %d got %d)", nnodes, nd, i, want[i], d[i]);
}

static int weighted_of(MPI_Comm g) {
  int in, out, w = -1;
  MPI_CHECK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
  MPI_CHECK(MPI_Comm_free(&g));
  return w;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* ---- Dims_create (answers of MPICH 4.0.2) */
  dims_case(5616, 4, NULL, (int[]){13, 9, 8, 6});
  dims_case(5616, 3, NULL, (int[]){24, 18, 13});
  dims_case(5616, 5, NULL, (int[]){13, 6, 6, 4, 3});
  dims_case(360, 3, NULL, (int[]){10, 6, 6});
  dims_case(46080, 4, NULL, (int[]){16, 16, 15, 12});
  dims_case(46080, 6, NULL, (int[]){8, 8, 6, 6, 5, 4});
  dims_case(9240, 4, NULL, (int[]){12, 11, 10, 7});
  dims_case(720720, 5, NULL, (int[]){20, 18, 14, 13, 11});
  dims_case(240, 5, NULL, (int[]){5, 4, 3, 2, 2});
  dims_case(7, 2, NULL, (int[]){7, 1});
  dims_case(6, 3, NULL, (int[]){3, 2, 1});
  dims_case(5616, 4, (int[]){0, 8, 0, 0}, (int[]){13, 8, 9, 6});

  /* ---- Dist_graph weighted flag */
  int w[4] = {1, 2, 3, 4};
  MPI_Comm g;
  MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, w, 0, NULL, w, MPI_INFO_NULL, 0, &g));
  CHECK(weighted_of(g) == 1, "empty adjacent graph with weights: weighted");
  MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL,
                                           MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
  CHECK(weighted_of(g) == 1, "MPI_WEIGHTS_EMPTY: weighted");
  MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, NULL, 0, NULL, NULL, MPI_INFO_NULL, 0, &g));
  CHECK(weighted_of(g) == 1, "empty adjacent graph with NULL weights: weighted (not MPI_UNWEIGHTED)");
  MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                           MPI_INFO_NULL, 0, &g));
  CHECK(weighted_of(g) == 0, "MPI_UNWEIGHTED: not weighted");
  MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, w, MPI_INFO_NULL, 0, &g));
  CHECK(weighted_of(g) == 1, "general, no edges, weights given: weighted");
  MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
  CHECK(weighted_of(g) == 0, "general, MPI_UNWEIGHTED: not weighted");
  { /* a ring where rank 0 alone says MPI_UNWEIGHTED */
    int s = (rank + size - 1) % size, d = (rank + 1) % size;
    int *ww = rank ? w : MPI_UNWEIGHTED;
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &s, ww, 1, &d, ww, MPI_INFO_NULL, 0, &g));
    int got = weighted_of(g);
    CHECK(got == (rank != 0), "mixed ring: weighted (expected %d got %d)", rank != 0, got);
  }

  /* ---- Cart_sub keeping no dimension */
  int dims[2] = {0, 0}, periods[2] = {1, 0}, remain[2] = {0, 0};
  MPI_CHECK(MPI_Dims_create(size, 2, dims));
  MPI_Comm cart, sub, sub2;
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  MPI_CHECK(MPI_Cart_sub(cart, remain, &sub));
  CHECK(sub != MPI_COMM_NULL, "Cart_sub with no dimension kept: MPI_COMM_NULL");
  int st = -1, nd = -1, sz = -1, r = -1;
  MPI_CHECK(MPI_Topo_test(sub, &st));
  MPI_CHECK(MPI_Cartdim_get(sub, &nd));
  MPI_CHECK(MPI_Comm_size(sub, &sz));
  MPI_CHECK(MPI_Comm_rank(sub, &r));
  CHECK(st == MPI_CART && nd == 0 && sz == 1 && r == 0, "Cart_sub none kept: topo %d ndims %d size %d rank %d", st,
        nd, sz, r);
  int cr = -1;
  MPI_CHECK(MPI_Cart_rank(sub, NULL, &cr));
  CHECK(cr == 0, "Cart_rank on a 0-dimensional grid (got %d)", cr);
  MPI_CHECK(MPI_Cart_sub(sub, NULL, &sub2)); /* already 0-dimensional */
  MPI_CHECK(MPI_Comm_size(sub2, &sz));
  MPI_CHECK(MPI_Cartdim_get(sub2, &nd));
  CHECK(sz == 1 && nd == 0, "Cart_sub of a 0-dimensional grid: size %d ndims %d", sz, nd);
  MPI_CHECK(MPI_Comm_free(&sub2));
  MPI_CHECK(MPI_Comm_free(&sub));
  MPI_CHECK(MPI_Comm_free(&cart));

  /* ---- Cart_create with no dimension */
  MPI_Comm c0;
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &c0));
  CHECK((c0 != MPI_COMM_NULL) == (rank == 0), "Cart_create ndims 0: rank %d got %s", rank,
        c0 == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
  if (c0 != MPI_COMM_NULL) {
    MPI_CHECK(MPI_Comm_size(c0, &sz));
    CHECK(sz == 1, "Cart_create ndims 0: size %d", sz);
    MPI_CHECK(MPI_Comm_free(&c0));
  }

  MPI_Finalize();
  if (rank == 0) printf("PASS %s\n", TEST_NAME);
  return 0;
}
