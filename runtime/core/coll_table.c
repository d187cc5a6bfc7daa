/* Which collective table a communicator gets (collective.h). The tables themselves are
 * defined next to their algorithms: coll_local.c, coll_span.c, coll_inter.c. */
#include "core.h"

void skn_coll_choose(skn_comm *c) {
  if (c->bridge) c->coll = c->bridge->x ? &skn_coll_inter_span_ops : &skn_coll_inter_ops;
  else c->coll = c->x ? &skn_coll_span_ops : &skn_coll_local_ops;
}

void skn_coll_barrier(skn_rank *me, skn_comm *c) {
  (void)me;
  c->coll->barrier(c, -1, NULL);
}

void skn_coll_publish(skn_comm *c, int rank, skn_coll_args *a) {
  c->slots[rank] = a;
  c->coll->barrier(c, rank, NULL);
}
