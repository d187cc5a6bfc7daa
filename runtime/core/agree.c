/* How the members of a new communicator agree on it (collective.h, "agreement"): the
 * rendezvous of Comm_create_group, and the duplication, split and merge of
 * intercommunicators and the joining of two groups into one, within a process (one
 * member creates the shared communicator and hands the others a pointer through the
 * parent's collective slots) and across processes (each process builds its own copy
 * with context ids one member offers). The MPI layer checks arguments, makes handles and
 * reports errors. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

static const skn_dtype *int_type(void) { return &skn_dt_predefined[MPI_INT & 0xffffff]; }

/* ------------------------------------------------------------------ the rendezvous
 * One entry per (parent context, tag, member list) instance in a process-wide FIFO list.
 * A member joins the first matching entry it has not joined yet (or appends a new one),
 * so successive calls with the same arguments pair up in call order. The creator (the
 * group's first member in this process) creates the communicator before joining and
 * publishes it in the entry; the other members here wait through the scheduler until it
 * is there. The last member to pick the communicator up unlinks and frees the entry. */

typedef struct rdv_entry {
  struct rdv_entry *next;
  int ctx, tag, n;
  int *wranks;        /* the member list (copy) */
  bool *joined;       /* by group rank */
  skn_unit **waiters; /* by group rank: blocked members */
  int remaining;      /* members that have not picked the result up */
  _Atomic(int) done;
  skn_comm *comm;
} rdv_entry;

static skn_spinlock rdv_lock = SKN_SPINLOCK_INIT;
static rdv_entry *rdv_head;

static rdv_entry *rdv_find(int ctx, int tag, int n, const int *wranks, int my, int nlocal) {
  rdv_entry **tail = &rdv_head;
  for (rdv_entry *e = rdv_head; e; e = e->next) {
    tail = &e->next;
    if (e->ctx == ctx && e->tag == tag && e->n == n && !e->joined[my] &&
        !memcmp(e->wranks, wranks, sizeof(int) * (size_t)n))
      return e;
  }
  rdv_entry *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->wranks = malloc(sizeof(int) * (size_t)n);
  e->joined = calloc((size_t)n, sizeof(bool));
  e->waiters = calloc((size_t)n, sizeof(skn_unit *));
  if (!e->wranks || !e->joined || !e->waiters) {
    free(e->wranks);
    free(e->joined);
    free(e->waiters);
    free(e);
    return NULL;
  }
  memcpy(e->wranks, wranks, sizeof(int) * (size_t)n);
  e->ctx = ctx;
  e->tag = tag;
  e->n = n;
  e->remaining = nlocal;
  *tail = e;
  return e;
}

static void rdv_leave(rdv_entry *e) { /* rdv_lock held */
  if (--e->remaining > 0) return;
  for (rdv_entry **p = &rdv_head; *p; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      break;
    }
  free(e->wranks);
  free(e->joined);
  free(e->waiters);
  free(e);
}

skn_comm *skn_comm_rendezvous(int ctx, int tag, int n, skn_rank *const *members, const int *wranks, int my,
                              int new_ctx, skn_comm *(*create)(void *arg), void *arg) {
  int creator = -1, nlocal = 0;
  for (int i = 0; i < n; i++)
    if (!skn_rank_is_remote(members[i])) {
      if (creator < 0) creator = i;
      nlocal++;
    }
  skn_comm *mine = NULL;
  if (my == creator)
    mine = create ? create(arg) : new_ctx < 0 ? skn_comm_create(n, members) : skn_comm_create_ctx(new_ctx, n, members);
  if (nlocal == 1) return mine; /* nobody here to agree with */
  skn_unit *self = skn_sched_self();
  skn_spin_lock(&rdv_lock);
  rdv_entry *e = rdv_find(ctx, tag, n, wranks, my, nlocal);
  if (!e) { /* out of memory: nobody can be told; fail this member */
    skn_spin_unlock(&rdv_lock);
    if (mine) skn_comm_release(mine);
    return NULL;
  }
  e->joined[my] = true;
  if (my == creator) {
    e->comm = mine;
    atomic_store(&e->done, 1);
    for (int i = 0; i < n; i++)
      if (e->waiters[i]) skn_sched_wake(e->waiters[i]);
    rdv_leave(e);
    skn_spin_unlock(&rdv_lock);
    return mine;
  }
  if (!atomic_load(&e->done)) {
    e->waiters[my] = self;
    skn_spin_unlock(&rdv_lock);
    for (;;) {
      skn_sched_prepare_wait(self);
      if (atomic_load(&e->done)) break;
      skn_sched_wait(self);
    }
    skn_sched_done_waiting(self);
    skn_spin_lock(&rdv_lock);
  }
  skn_comm *c = e->comm;
  rdv_leave(e);
  skn_spin_unlock(&rdv_lock);
  return c;
}

skn_comm *skn_comm_group_agree(skn_comm *c, int rank, int tag, int n, skn_rank *const *members, const int *wranks,
                               const int *cranks, int my) {
  /* Members in several processes: the group's rank 0 picks the context id and tells the
   * others over the parent's collective context, under a tag of their own. */
  int new_ctx = -1;
  bool spans = false;
  for (int i = 0; i < n; i++) spans |= skn_rank_is_remote(members[i]);
  if (spans) {
    if (my == 0) {
      new_ctx = skn_cid_alloc();
      for (int i = 1; i < n; i++) skn_xcoll_send(c, rank, cranks[i], -2 - tag, &new_ctx, 1, int_type());
    } else {
      skn_xcoll_recv(c, cranks[0], -2 - tag, &new_ctx, 1, int_type());
    }
  }
  return skn_comm_rendezvous(c->ctx, tag, n, members, wranks, my, new_ctx, NULL, NULL);
}

/* ------------------------------------------------------------------ within a process */

skn_comm *skn_comm_from_leader(skn_rank *me, skn_comm *c, int rank, int leader, skn_comm *made, int *err) {
  skn_coll_args a = {.result = made, .color = rank == leader ? *err : 0};
  skn_coll_publish(c, rank, &a);
  skn_comm *nc = leader >= 0 ? c->slots[leader]->result : NULL;
  *err = leader >= 0 ? c->slots[leader]->color : 0;
  skn_coll_barrier(me, c); /* nobody reads the slots any more */
  return nc;
}

/* ------------------------------------------------------------------ intercommunicators across processes
 * Nothing can be handed over by pointer: the groups are world-rank lists, the context ids
 * are offered by one leader, and each process builds its own copy of the pair of sides
 * and their bridge through the rendezvous (its first member of either group creates
 * it). */

typedef struct inter_spec {
  int na, nb;         /* side 0 and side 1 sizes */
  skn_rank **members; /* side 0 then side 1 */
  int ctx, bridge_ctx;
} inter_spec;

static skn_comm *create_inter(void *arg) {
  const inter_spec *sp = arg;
  return skn_intercomm_create_ctx(sp->na, sp->members, sp->nb, sp->members + sp->na, sp->ctx, sp->bridge_ctx);
}

/* This process's copy of the intercommunicator of `sp`; `my` is the caller's index in
 * sp->members. Returns the caller's side, or NULL when out of memory. A side-1 member
 * reads side 0's `other`: callers keep everyone in the call (a bridge barrier) until all
 * have, since side 0 goes away when its last member here frees it. */
static skn_comm *inter_build(skn_rank *me, inter_spec *sp, int my) {
  int n = sp->na + sp->nb;
  int *wranks = malloc(sizeof(int) * (size_t)n);
  if (!wranks) skn_fatal("rank %d: out of memory creating an intercommunicator", me->world_rank);
  for (int i = 0; i < n; i++) wranks[i] = sp->members[i]->world_rank;
  skn_comm *s0 = skn_comm_rendezvous(sp->ctx, -1, n, sp->members, wranks, my, -1, create_inter, sp);
  free(wranks);
  return s0 && my >= sp->na ? s0->other : s0;
}

static void bcast_ints(skn_comm *c, int rank, int root, int *buf, int n) {
  skn_coll_args a = {.rbuf = buf, .rcount = (size_t)n, .rt = int_type(), .root = root};
  c->coll->bcast(c, rank, &a);
}

typedef struct member_key {
  int key, rank;
} member_key;

static int by_key(const void *x, const void *y) {
  const member_key *a = x, *b = y;
  return a->key != b->key ? (a->key < b->key ? -1 : 1) : (a->rank - b->rank);
}

/* Comm_split of an intercommunicator across processes: every member of both groups
 * learns every (color, key, context id offers) through an allgather on the bridge; a
 * color forms an intercommunicator of its members in each group (none when a group has
 * none), with the offers of its first member in side 0. Returns the caller's side, or
 * NULL. */
static skn_comm *inter_span_split(skn_rank *me, skn_comm *c, int rank, int color, int key) {
  skn_comm *b = c->bridge;
  int n = b->size, n0 = c->bridge_off == 0 ? c->size : c->rsize, me_b = c->bridge_off + rank;
  int offer[4] = {color, key, 0, 0};
  if (color != MPI_UNDEFINED) {
    offer[2] = skn_cid_alloc();
    offer[3] = skn_cid_alloc();
  }
  int *all = malloc(sizeof(int) * 4 * (size_t)n);
  member_key *mk = malloc(sizeof *mk * (size_t)n);
  if (!all || !mk) skn_fatal("rank %d: out of memory splitting an intercommunicator", me->world_rank);
  skn_coll_args g = {.sbuf = offer, .scount = 4, .st = int_type(), .rbuf = all, .rcount = 4, .rt = int_type()};
  skn_xcoll_allgather(b, me_b, &g);
  skn_comm *side = NULL;
  int m0 = 0, m1 = 0;
  if (color != MPI_UNDEFINED) {
    for (int j = 0; j < n0; j++)
      if (all[4 * j] == color) mk[m0++] = (member_key){all[4 * j + 1], j};
    for (int j = n0; j < n; j++)
      if (all[4 * j] == color) mk[m0 + m1++] = (member_key){all[4 * j + 1], j};
    qsort(mk, (size_t)m0, sizeof *mk, by_key);
    qsort(mk + m0, (size_t)m1, sizeof *mk, by_key);
  }
  if (m0 > 0 && m1 > 0) {
    inter_spec sp = {.na = m0, .nb = m1, .ctx = all[4 * mk[0].rank + 2], .bridge_ctx = all[4 * mk[0].rank + 3]};
    if (!(sp.members = malloc(sizeof *sp.members * (size_t)(m0 + m1))))
      skn_fatal("rank %d: out of memory splitting an intercommunicator", me->world_rank);
    int my = -1;
    for (int i = 0; i < m0 + m1; i++) {
      sp.members[i] = b->members[mk[i].rank];
      if (mk[i].rank == me_b) my = i;
    }
    side = inter_build(me, &sp, my);
    free(sp.members);
  }
  skn_coll_barrier(me, b);
  free(all);
  free(mk);
  return side;
}

/* Comm_dup of an intercommunicator across processes: bridge rank 0 offers the context
 * ids. */
static skn_comm *inter_span_dup(skn_rank *me, skn_comm *c, int rank) {
  int br = c->bridge_off + rank, ids[2] = {0, 0};
  if (br == 0) {
    ids[0] = skn_cid_alloc();
    ids[1] = skn_cid_alloc();
  }
  bcast_ints(c->bridge, br, 0, ids, 2);
  int n0 = c->bridge_off == 0 ? c->size : c->rsize;
  inter_spec sp = {.na = n0, .nb = c->bridge->size - n0, .members = c->bridge->members, .ctx = ids[0],
                   .bridge_ctx = ids[1]};
  skn_comm *side = inter_build(me, &sp, br);
  skn_coll_barrier(me, c->bridge);
  return side;
}

skn_comm *skn_intercomm_span_join(skn_rank *me, skn_comm *c, int rank, int leader, skn_leader_card *card,
                                  int *remote) {
  bcast_ints(c, rank, leader, (int *)card, sizeof *card / sizeof(int));
  if (card->err) return NULL;
  int nr = card->rsize;
  bool own = rank != leader;
  if (own && !(remote = malloc(sizeof(int) * (size_t)(nr ? nr : 1))))
    skn_fatal("rank %d: out of memory creating an intercommunicator", me->world_rank);
  bcast_ints(c, rank, leader, remote, nr);
  bool side0 = card->side0;
  inter_spec sp = {.na = side0 ? c->size : nr, .nb = side0 ? nr : c->size, .ctx = card->ctx,
                   .bridge_ctx = card->bridge_ctx};
  if (!(sp.members = malloc(sizeof *sp.members * (size_t)(c->size + nr))))
    skn_fatal("rank %d: out of memory creating an intercommunicator", me->world_rank);
  skn_rank **ours = sp.members + (side0 ? 0 : nr), **theirs = sp.members + (side0 ? c->size : 0);
  for (int i = 0; i < c->size; i++) ours[i] = c->members[i];
  for (int i = 0; i < nr; i++) theirs[i] = skn_job_g.ranks[remote[i]];
  skn_comm *side = inter_build(me, &sp, (side0 ? 0 : nr) + rank);
  if (side) skn_coll_barrier(me, side->bridge);
  if (own) free(remote);
  free(sp.members);
  return side;
}

/* ------------------------------------------------------------------ both */

skn_comm *skn_comm_dup_shared(skn_rank *me, skn_comm *c, int rank, struct skn_topo *(*topo)(void *arg, int holders),
                              void *arg) {
  int new_rank = rank;
  bool inter = skn_comm_is_inter(c);
  if (inter && skn_job_g.nprocs > 1) return inter_span_dup(me, c, rank);
  if (c->x) return skn_comm_span_split(me, c, rank, 0, rank, &new_rank, topo, arg);
  /* Both groups of an intercommunicator agree through its bridge; the creator (bridge
   * rank 0) is in side 0, and side 1's members take the new side 0's `other`. */
  skn_comm *sync = inter ? c->bridge : c;
  int sync_rank = inter ? c->bridge_off + rank : rank;
  skn_coll_args a = {0};
  if (sync_rank == 0) {
    skn_comm *created = inter ? skn_intercomm_create(c->size, c->members, c->rsize, c->rmembers)
                              : skn_comm_create(c->size, c->members);
    if (created && topo) created->topo = topo(arg, c->size);
    a.result = created;
  }
  skn_coll_publish(sync, sync_rank, &a);
  skn_comm *nc = sync->slots[0]->result;
  if (nc && inter && c->bridge_off != 0) nc = nc->other;
  skn_coll_barrier(me, sync);
  return nc;
}

/* Intercomm_merge across processes: every member learns every `high` flag through an
 * allgather on the bridge, then a split of the bridge orders the groups. */
static skn_comm *span_merge(skn_rank *me, skn_comm *c, int rank, bool high, int *new_rank, bool *consistent) {
  skn_comm *bridge = c->bridge;
  int me_b = c->bridge_off + rank, n = bridge->size, n0 = c->bridge_off == 0 ? c->size : c->rsize, h = high;
  int *highs = malloc(sizeof(int) * (size_t)n);
  if (!highs) skn_fatal("rank %d: out of memory merging an intercommunicator", me->world_rank);
  skn_coll_args g = {.sbuf = &h, .scount = 1, .st = int_type(), .rbuf = highs, .rcount = 1, .rt = int_type()};
  skn_xcoll_allgather(bridge, me_b, &g);
  int h0 = highs[0], h1 = highs[n0];
  *consistent = true;
  for (int i = 0; i < n; i++) *consistent &= highs[i] == (i < n0 ? h0 : h1);
  free(highs);
  bool side0_first = h0 == h1 || !h0; /* the low group first; side 0 first on a tie */
  int key = side0_first ? me_b : me_b >= n0 ? me_b - n0 : (n - n0) + me_b;
  return skn_comm_span_split(me, bridge, me_b, *consistent ? 0 : MPI_UNDEFINED, key, new_rank, NULL, NULL);
}

skn_comm *skn_intercomm_merge(skn_rank *me, skn_comm *c, int rank, bool high, int *new_rank, bool *consistent) {
  skn_comm *bridge = c->bridge;
  if (bridge->x) return span_merge(me, c, rank, high, new_rank, consistent);
  int me_b = c->bridge_off + rank, n0 = c->bridge_off == 0 ? c->size : c->rsize, n = bridge->size;
  skn_coll_args a = {.color = high};
  skn_coll_publish(bridge, me_b, &a);
  /* Every member sees every flag, so all agree on the order and on any error. */
  int h0 = bridge->slots[0]->color, h1 = bridge->slots[n0]->color;
  *consistent = true;
  for (int i = 0; i < n; i++) *consistent &= bridge->slots[i]->color == (i < n0 ? h0 : h1);
  bool side0_first = h0 == h1 || !h0; /* the low group first; side 0 first on a tie */
  if (me_b == 0 && *consistent) {
    skn_rank **m = malloc(sizeof *m * (size_t)n);
    if (m) {
      int k = 0;
      for (int pass = 0; pass < 2; pass++) {
        bool take_side0 = (pass == 0) == side0_first;
        for (int i = take_side0 ? 0 : n0; i < (take_side0 ? n0 : n); i++) m[k++] = bridge->members[i];
      }
      a.result = skn_comm_create(n, m);
      free(m);
    }
  }
  skn_coll_barrier(me, bridge); /* the merged communicator exists */
  skn_comm *nc = bridge->slots[0]->result;
  skn_coll_barrier(me, bridge); /* slot 0 is no longer read */
  bool mine_first = (c->bridge_off == 0) == side0_first;
  *new_rank = mine_first ? rank : c->rsize + rank;
  return nc;
}

/* Members of `color` among sync's members [lo, lo + n), ordered by (key, old rank), into
 * mk; returns how many. */
static int select_color(const skn_comm *sync, int lo, int n, int color, member_key *mk) {
  int m = 0;
  for (int j = lo; j < lo + n; j++)
    if (sync->slots[j]->color == color) mk[m++] = (member_key){sync->slots[j]->key, j};
  qsort(mk, (size_t)m, sizeof *mk, by_key);
  return m;
}

skn_comm *skn_comm_split_agree(skn_rank *me, skn_comm *c, int rank, int color, int key, int *new_rank, bool *nomem) {
  bool inter = skn_comm_is_inter(c);
  *nomem = false;
  *new_rank = -1;
  if (inter && skn_job_g.nprocs > 1) {
    skn_comm *side = inter_span_split(me, c, rank, color, key);
    if (side)
      for (int i = 0; i < side->size; i++)
        if (side->members[i] == me) *new_rank = i;
    return side;
  }
  if (c->x) {
    skn_comm *nc = skn_comm_span_split(me, c, rank, color, key, new_rank, NULL, NULL);
    *nomem = !nc && color != MPI_UNDEFINED;
    return nc;
  }
  /* On an intercommunicator both groups agree through the bridge: a color forms a new
   * intercommunicator of its members in each group (none when one group has none),
   * created by its first member in side 0. */
  skn_comm *sync = inter ? c->bridge : c;
  int n = sync->size, my_s = c->bridge_off + rank;
  skn_coll_args a = {.color = color, .key = key};
  skn_coll_publish(sync, my_s, &a);
  member_key *mk = malloc(sizeof *mk * (size_t)n);
  skn_rank **members = malloc(sizeof *members * (size_t)n);
  int m = 0, mr = 0, my_new = -1;
  bool ok = mk && members;
  if (ok && color != MPI_UNDEFINED) {
    m = select_color(sync, c->bridge_off, c->size, color, mk);
    if (inter) mr = select_color(sync, c->remote_off, c->rsize, color, mk + m);
    for (int i = 0; i < m + mr; i++) members[i] = sync->members[mk[i].rank];
    for (int i = 0; i < m; i++)
      if (mk[i].rank == my_s) my_new = i;
    if (my_new == 0 && !inter) a.result = skn_comm_create(m, members);
    if (my_new == 0 && inter && mr > 0 && c->bridge_off == 0)
      a.result = skn_intercomm_create(m, members, mr, members + m);
  }
  skn_coll_barrier(me, sync); /* creators have created theirs */
  skn_comm *nc = NULL;
  if (ok && color != MPI_UNDEFINED && (!inter || mr > 0)) {
    int creator = !inter || c->bridge_off == 0 ? mk[0].rank : mk[m].rank;
    nc = sync->slots[creator]->result;
    if (nc && inter && c->bridge_off != 0) nc = nc->other;
  }
  skn_coll_barrier(me, sync); /* nobody reads the slots any more */
  free(mk);
  free(members);
  *nomem = color != MPI_UNDEFINED && (!ok || ((!inter || mr > 0) && !nc));
  *new_rank = nc ? my_new : -1;
  return nc;
}
