/* Communicator construction that needs agreement between processes (collective.h).
 * The MPI layer (api/comm.c, api/topo.c) checks arguments and makes the handles. */
#include <stdlib.h>

#include "core.h"

typedef struct member_key {
  int key, rank;
} member_key;

static int by_key(const void *x, const void *y) {
  const member_key *a = x, *b = y;
  return a->key != b->key ? (a->key < b->key ? -1 : 1) : (a->rank - b->rank);
}

/* Split of a communicator that spans processes. The members exchange (color, key,
 * context id offer) through an allgather; each process builds its own copy of every new
 * communicator with members here (its first member here creates it, with the topology
 * `build` returns if given, and hands it to the others through the parent's local part),
 * with the context id offered by the new rank 0. Returns the caller's new communicator
 * (NULL for MPI_UNDEFINED, or when out of memory) and its rank there. */
skn_comm *skn_comm_span_split(skn_rank *me, skn_comm *c, int rank, int color, int key, int *new_rank,
                              struct skn_topo *(*build)(void *arg, int holders), void *arg) {
  int n = c->size, m = 0, creator = -1;
  int offer[3] = {color, key, color == MPI_UNDEFINED ? 0 : skn_cid_alloc()};
  int *all = malloc(sizeof(int) * 3 * (size_t)n);
  member_key *mk = malloc(sizeof *mk * (size_t)n);
  skn_rank **members = malloc(sizeof *members * (size_t)n);
  if (!all || !mk || !members)
    skn_fatal("rank %d: out of memory creating a communicator of %d ranks", me->world_rank, n);
  const skn_dtype *int_t = &skn_dt_predefined[MPI_INT & 0xffffff];
  skn_coll_args g = {.sbuf = offer, .scount = 3, .st = int_t, .rbuf = all, .rcount = 3, .rt = int_t};
  skn_xcoll_allgather(c, rank, &g);
  skn_coll_args a = {0};
  if (color != MPI_UNDEFINED) {
    for (int j = 0; j < n; j++)
      if (all[3 * j] == color) mk[m++] = (member_key){all[3 * j + 1], j};
    qsort(mk, (size_t)m, sizeof *mk, by_key);
    for (int i = 0; i < m; i++) {
      members[i] = c->members[mk[i].rank];
      if (mk[i].rank == rank) *new_rank = i;
      if (creator < 0 && !skn_rank_is_remote(members[i])) creator = mk[i].rank;
    }
    if (creator == rank) {
      skn_comm *created = skn_comm_create_ctx(all[3 * mk[0].rank + 2], m, members);
      int here = 0;
      for (int i = 0; i < m; i++) here += !skn_rank_is_remote(members[i]);
      if (created && build && !(created->topo = build(arg, here))) {
        atomic_store(&created->refs, 1); /* nobody else has seen it */
        skn_comm_release(created);
        created = NULL;
      }
      a.result = created;
    }
  }
  skn_comm *local = c->x->local;
  skn_coll_publish(local, c->x->local_of[rank], &a);
  skn_comm *nc = color != MPI_UNDEFINED ? local->slots[c->x->local_of[creator]]->result : NULL;
  skn_coll_barrier(me, local); /* nobody reads the slots any more */
  free(all);
  free(mk);
  free(members);
  return nc;
}
