/* Neighbourhood collectives (collective.h): the data movement of Neighbor_allgather(v)
 * and Neighbor_alltoall(v, w) along the caller's edges (skn_nbrs), which the MPI layer
 * derives from the virtual topology; the core knows edges, not topologies.
 *
 * Within one process (skn_coll_local_ops) every member publishes its arguments, then
 * pulls each in-neighbour's block straight from that neighbour's send buffer into its own
 * receive buffer (one copy, no envelope, no request, no tag), and a last barrier keeps
 * the send buffers alive until everyone has read them. The price is a barrier over the
 * whole communicator instead of a synchronization with the neighbours only: in one
 * process a barrier costs about as much as a message.
 *
 * Across processes (skn_coll_span_ops) it is a message per edge on the collective
 * context, tagged SKN_XTAG_NEIGHBOR + the sender's out-block index, which tells apart
 * several edges between one pair. */
#include <stdlib.h>

#include "core.h"

/* Out-block m of the member whose arguments are s (what it sends to its m-th
 * out-neighbour). */
static const void *send_block(const skn_coll_args *s, bool a2a, int m, size_t *cnt, const skn_dtype **t) {
  *t = s->st;
  if (!a2a) { /* allgather(v): the same block to every out-neighbour */
    *cnt = s->scount;
    return s->sbuf;
  }
  if (s->sts) { /* w: byte displacements, a type per block */
    *t = s->sts[m];
    *cnt = (size_t)s->scounts[m];
    return (const char *)s->sbuf + s->sbytes[m];
  }
  if (s->scounts) {
    *cnt = (size_t)s->scounts[m];
    return skn_coll_at(s->sbuf, (size_t)s->sdispls[m], s->st);
  }
  *cnt = s->scount;
  return skn_coll_at(s->sbuf, (size_t)m * s->scount, s->st);
}

/* In-block k of the member whose arguments are a (where its k-th in-neighbour's data
 * goes). */
static void *recv_block(const skn_coll_args *a, int k, size_t *cnt, const skn_dtype **t) {
  *t = a->rt;
  if (a->rts) {
    *t = a->rts[k];
    *cnt = (size_t)a->rcounts[k];
    return (char *)a->rbuf + a->rbytes[k];
  }
  if (a->rcounts) {
    *cnt = (size_t)a->rcounts[k];
    return skn_coll_at(a->rbuf, (size_t)a->rdispls[k], a->rt);
  }
  *cnt = a->rcount;
  return skn_coll_at(a->rbuf, (size_t)k * a->rcount, a->rt);
}

static skn_status local_neighbor(skn_comm *c, int rank, skn_coll_args *a, bool a2a) {
  const skn_nbrs *nb = a->nbrs;
  skn_coll_publish(c, rank, a);
  for (int k = 0; k < nb->indeg; k++) {
    int j = nb->src[k];
    if (j < 0) continue;
    size_t scnt, dcnt;
    const skn_dtype *st, *rt;
    const void *src = send_block(c->slots[j], a2a, nb->src_block[k], &scnt, &st);
    void *dst = recv_block(a, k, &dcnt, &rt);
    if (scnt && dcnt) skn_dt_copy(dst, dcnt, rt, src, scnt, st);
  }
  c->coll->barrier(c, rank, NULL); /* nobody reads our send buffer any more */
  return SKN_OK;
}

skn_status skn_coll_neighbor_allgather(skn_comm *c, int rank, skn_coll_args *a) {
  return local_neighbor(c, rank, a, false);
}
skn_status skn_coll_neighbor_alltoall(skn_comm *c, int rank, skn_coll_args *a) {
  return local_neighbor(c, rank, a, true);
}

static skn_status span_neighbor(skn_comm *c, int rank, skn_coll_args *a, bool a2a) {
  const skn_nbrs *nb = a->nbrs;
  skn_req *r = skn_xcoll_reqs(nb->indeg);
  size_t cnt;
  const skn_dtype *bt;
  for (int k = 0; k < nb->indeg; k++) {
    if (nb->src[k] < 0) continue;
    void *dst = recv_block(a, k, &cnt, &bt);
    skn_xcoll_recv_post(&r[k], c, nb->src[k], SKN_XTAG_NEIGHBOR + nb->src_block[k], dst, cnt, bt);
  }
  for (int k = 0; k < nb->outdeg; k++) {
    if (nb->dst[k] < 0) continue;
    const void *src = send_block(a, a2a, k, &cnt, &bt);
    skn_xcoll_send(c, rank, nb->dst[k], SKN_XTAG_NEIGHBOR + k, src, cnt, bt);
  }
  for (int k = 0; k < nb->indeg; k++)
    if (nb->src[k] >= 0) skn_req_wait(&r[k]);
  free(r);
  return SKN_OK;
}

skn_status skn_xcoll_neighbor_allgather(skn_comm *c, int rank, skn_coll_args *a) {
  return span_neighbor(c, rank, a, false);
}
skn_status skn_xcoll_neighbor_alltoall(skn_comm *c, int rank, skn_coll_args *a) {
  return span_neighbor(c, rank, a, true);
}
