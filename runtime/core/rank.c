/* Ranks: creation, request pools and handle tables, waiting on requests. */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "allocator/heap.h"
#include "pmi/pmi.h"

/* The allocator finds a rank's heap through the unit's owner without knowing skn_rank. */
_Static_assert(offsetof(skn_rank, heap) == offsetof(skn_heap_owner, heap), "skn_rank must begin with skn_heap_owner");

skn_job skn_job_g;

static int init_comm(skn_comm *c, int ctx, int size, skn_rank **members) {
  c->ctx = ctx;
  c->size = size;
  c->members = members;
  c->rsize = size;
  c->rmembers = members;
  atomic_init(&c->refs, size);
  c->barrier.waiting.slots = calloc(2 * (size_t)size, sizeof(skn_unit *));
  c->barrier.waiting.capacity = size;
  c->slots = calloc((size_t)size, sizeof(skn_coll_args *));
  skn_coll_choose(c);
  return c->barrier.waiting.slots && c->slots ? 0 : -1;
}

/* Context ids come in pairs (point-to-point, collective); 0-3 are WORLD's and SELF's.
 * Process p of P hands out 4 + 2 * (k * P + p), k = 0, 1, ...: ids are unique in the job
 * without agreement (2^30 / P creations per process). */
void (*skn_rank_libc_hold_end)(skn_rank *me);

static _Atomic(int) ctx_counter;

int skn_cid_alloc(void) {
  long long k = atomic_fetch_add(&ctx_counter, 1);
  long long id = 4 + 2 * (k * skn_job_g.nprocs + skn_job_g.proc);
  if (id > 0x7ffffffe) skn_fatal("out of communicator context ids (%lld created by this process)", k);
  return (int)id;
}

static void comm_free(skn_comm *c);

/* What a communicator holds, not the communicator (WORLD and SELF are the job's). */
static void comm_release(skn_comm *c) {
  if (c->x) {
    comm_free(c->x->local);
    free(c->x->local_of);
    free(c->x->proc_index);
    free(c->x->leaders);
    free(c->x);
  }
  free(atomic_load(&c->cells));
  free(c->barrier.waiting.slots);
  free(atomic_load(&c->barrier.groups));
  free(c->slots);
  if (c->rmembers != c->members) free(c->rmembers);
  free(c->members);
}

static void comm_free(skn_comm *c) {
  if (!c) return;
  comm_release(c);
  free(c);
}

static skn_comm *comm_new(int ctx, int size, skn_rank *const *members) {
  skn_comm *c = calloc(1, sizeof *c);
  skn_rank **m = malloc(sizeof *m * (size_t)(size ? size : 1));
  if (!c || !m) {
    free(c);
    free(m);
    return NULL;
  }
  for (int i = 0; i < size; i++) m[i] = members[i];
  if (init_comm(c, ctx, size, m) != 0 || skn_comm_attach_span(c) != 0) {
    comm_free(c);
    return NULL;
  }
  return c;
}

skn_comm *skn_comm_create(int size, skn_rank *const *members) {
  return comm_new(skn_cid_alloc(), size, members);
}

skn_comm *skn_comm_create_ctx(int ctx, int size, skn_rank *const *members) { return comm_new(ctx, size, members); }

int skn_comm_attach_span(skn_comm *c) {
  int n = c->size, nlocal = 0;
  for (int i = 0; i < n; i++) nlocal += !skn_rank_is_remote(c->members[i]);
  if (nlocal == 0) { /* an intercommunicator's side with no member here */
    atomic_store(&c->refs, 0);
    c->ghost = true;
  }
  if (nlocal == n || nlocal == 0) return 0;
  skn_xcomm *x = calloc(1, sizeof *x);
  int *index_of_proc = malloc(sizeof(int) * (size_t)skn_job_g.nprocs);
  skn_rank **lm = malloc(sizeof *lm * (size_t)nlocal);
  if (x) {
    x->local_of = malloc(sizeof(int) * (size_t)n);
    x->proc_index = malloc(sizeof(int) * (size_t)n);
    x->leaders = malloc(sizeof(int) * (size_t)n);
  }
  bool ok = x && index_of_proc && lm && x->local_of && x->proc_index && x->leaders;
  if (ok) {
    for (int p = 0; p < skn_job_g.nprocs; p++) index_of_proc[p] = -1;
    x->blocked = true;
    for (int i = 0, k = 0; i < n; i++) {
      skn_rank *r = c->members[i];
      if (index_of_proc[r->proc] < 0) {
        index_of_proc[r->proc] = x->nprocs;
        x->leaders[x->nprocs++] = i;
      }
      x->proc_index[i] = index_of_proc[r->proc];
      /* processes are numbered by first member, so consecutive blocks never go back */
      if (i > 0 && x->proc_index[i] < x->proc_index[i - 1]) x->blocked = false;
      x->local_of[i] = -1;
      if (!skn_rank_is_remote(r)) {
        x->local_of[i] = k;
        lm[k++] = r;
      }
    }
    x->me = index_of_proc[skn_job_g.proc];
    x->local = comm_new(-1, nlocal, lm); /* never used for point-to-point */
    ok = x->local != NULL;
  }
  free(index_of_proc);
  free(lm);
  if (!ok) {
    if (x) {
      free(x->local_of);
      free(x->proc_index);
      free(x->leaders);
    }
    free(x);
    return -1;
  }
  c->x = x;
  skn_coll_choose(c);
  atomic_store(&c->refs, nlocal); /* views are held by this process's members only */
  return 0;
}

/* Each side owns a copy of the remote member list: MPI_Comm_remote_group stays valid
 * after the other group has freed its handles. */
static bool set_remote(skn_comm *side, int n, skn_rank *const *members) {
  skn_rank **m = malloc(sizeof *m * (size_t)(n ? n : 1));
  if (!m) return false;
  for (int i = 0; i < n; i++) m[i] = members[i];
  side->rsize = n;
  side->rmembers = m;
  return true;
}

skn_comm *skn_intercomm_create(int na, skn_rank *const *a, int nb, skn_rank *const *b) {
  int ctx = skn_cid_alloc();
  return skn_intercomm_create_ctx(na, a, nb, b, ctx, skn_cid_alloc());
}

skn_comm *skn_intercomm_create_ctx(int na, skn_rank *const *a, int nb, skn_rank *const *b, int ctx, int bridge_ctx) {
  skn_rank **both = malloc(sizeof *both * (size_t)(na + nb));
  skn_comm *s0 = comm_new(ctx, na, a), *s1 = comm_new(ctx, nb, b), *bridge = NULL;
  if (both) {
    memcpy(both, a, sizeof *both * (size_t)na);
    memcpy(both + na, b, sizeof *both * (size_t)nb);
    bridge = comm_new(bridge_ctx, na + nb, both);
  }
  free(both);
  if (!s0 || !s1 || !bridge || !set_remote(s0, nb, b) || !set_remote(s1, na, a)) {
    comm_free(s0);
    comm_free(s1);
    comm_free(bridge);
    return NULL;
  }
  s0->bridge = bridge;
  s0->other = s1;
  s0->bridge_off = 0;
  s0->remote_off = na;
  s1->bridge = bridge;
  s1->other = s0;
  s1->bridge_off = na;
  s1->remote_off = 0;
  skn_coll_choose(s0);
  skn_coll_choose(s1);
  s0->frees_other = s1->ghost;
  s1->frees_other = s0->ghost;
  return s0;
}

void skn_comm_release(skn_comm *c) {
  skn_comm *bridge = c->bridge;
  if (bridge) skn_comm_release(bridge);
  if (atomic_fetch_sub(&c->refs, 1) != 1) return;
  if (c == &skn_job_g.world || (c >= skn_job_g.self_comms && c < skn_job_g.self_comms + skn_job_g.size)) return;
  skn_comm *other = c->frees_other ? c->other : NULL; /* nobody here holds it */
  comm_free(c);
  comm_free(other);
}

/* Makes chunk `chunk` of d exist (zeroed, `bytes` long), growing the top level. Caller
 * holds the rank lock (or the rank is not running yet). */
static bool chunk_ensure(skn_chunk_dir *d, int chunk, int max_chunks, size_t bytes) {
  if (chunk >= max_chunks) return false;
  if (chunk >= d->n) {
    int n = d->n ? d->n : 4;
    while (n <= chunk) n *= 2;
    /* one slot more, past the chunks: the grown-out array, which must stay (see core.h)
     * and so stays reachable, a chain from the current one */
    void **grown = calloc((size_t)n + 1, sizeof *grown);
    if (!grown) return false;
    if (d->n) memcpy(grown, d->chunks, sizeof *grown * (size_t)d->n);
    grown[n] = d->chunks;
    __atomic_store_n(&d->chunks, grown, __ATOMIC_RELEASE);
    d->n = n;
  }
  if (!d->chunks[chunk] && !(d->chunks[chunk] = calloc(1, bytes))) return false;
  return true;
}

int skn_rank_comm_add(skn_rank *me, skn_comm *c, int rank, struct skn_api_comm_state *api) {
  skn_rank_lock(me);
  int idx = -1;
  for (int i = 3; i < me->ncomms; i++) /* reuse a freed slot */
    if (!skn_rank_comm_slot(me, (unsigned)i)->comm) {
      idx = i;
      break;
    }
  if (idx < 0) {
    idx = me->ncomms;
    int chunk = idx / SKN_COMM_CHUNK;
    if (!chunk_ensure(&me->comm_chunks, chunk, SKN_COMM_CHUNKS, SKN_COMM_CHUNK * sizeof(skn_comm_view))) {
      skn_rank_unlock(me);
      return -1;
    }
    me->ncomms++;
  }
  skn_comm_view *v = skn_rank_comm_slot(me, (unsigned)idx);
  v->rank = rank;
  v->api = api;
  v->nbc_head = v->nbc_tail = NULL;
  v->nbc_running = false;
  v->nbc_drainer = NULL;
  v->comm = c;
  skn_rank_unlock(me);
  return idx;
}

int skn_job_init(int size, int nprocs, int proc, int first_rank, int nranks) {
  skn_job *j = &skn_job_g;
  j->size = size;
  j->nprocs = nprocs;
  j->proc = proc;
  j->first_rank = first_rank;
  j->nranks = nranks;
  j->ranks = calloc((size_t)size, sizeof(skn_rank *));
  j->self_comms = calloc((size_t)size, sizeof(skn_comm));
  if (!j->ranks || !j->self_comms) return -1;
  if (init_comm(&j->world, 0, size, j->ranks) != 0) return -1;
  /* Ranks of other processes get proxies: communicators list them like local ones, and
   * their transport is bound when it starts (device.h). */
  skn_rank *proxies = NULL;
  if (size > nranks) {
    size_t bytes = sizeof *proxies * (size_t)(size - nranks);
    if (!(proxies = aligned_alloc(SKN_CACHELINE, bytes))) return -1;
    memset(proxies, 0, bytes);
  }
  for (int w = 0, k = 0; w < size; w++) {
    if (w >= first_rank && w < first_rank + nranks) continue;
    skn_rank *p = &proxies[k++];
    p->world_rank = w;
    p->proc = skn_pmi_block_proc(size, nprocs, w);
    p->tp = &skn_unbound_transport; /* until its process's transport binds it (skn_dev_bind) */
    j->ranks[w] = p;
  }
  return 0;
}

/* For a process that runs one job after another (the unit tests' harness): frees the
 * arrays skn_job_init made, the ranks' own communicators included, once every rank has
 * ended. The ranks themselves stay: their units, which the scheduler keeps, point to them.
 * A job of skeinrun lasts as long as its process. */
void skn_job_fini(void) {
  skn_job *j = &skn_job_g;
  for (int i = 0; i < j->nranks; i++) comm_release(&j->self_comms[j->first_rank + i]);
  for (int w = 0; w < j->size; w++) /* the proxies are one block, from the first of them */
    if (w < j->first_rank || w >= j->first_rank + j->nranks) {
      free(j->ranks[w]);
      break;
    }
  comm_release(&j->world); /* its members are j->ranks */
  free(j->self_comms);
  j->ranks = NULL;
  j->self_comms = NULL;
}

skn_rank *skn_rank_create(int world_rank) {
  skn_rank *r = aligned_alloc(SKN_CACHELINE, (sizeof(skn_rank) + SKN_CACHELINE - 1) & ~(size_t)(SKN_CACHELINE - 1));
  if (!r) return NULL;
  memset(r, 0, sizeof *r);
  r->world_rank = world_rank;
  r->proc = skn_job_g.proc;
  r->tp = &skn_local_transport;
  skn_job_g.ranks[world_rank] = r;
  r->recv_req.kind = SKN_REQ_RECV; /* for good: api/p2p.c's blocking receive sets only what changes */

  /* handle slots: 0 = null, 1 = MPI_COMM_WORLD, 2 = MPI_COMM_SELF */
  bool chunk0 = chunk_ensure(&r->comm_chunks, 0, SKN_COMM_CHUNKS, SKN_COMM_CHUNK * sizeof(skn_comm_view));
  r->ncomms = 3;
  skn_rank **self_member = malloc(sizeof *self_member);
  if (!chunk0 || !self_member) return NULL;
  r->comm_first = r->comm_chunks.chunks[0]; /* chunks never move (core.h) */
  *self_member = r;
  skn_comm *self = &skn_job_g.self_comms[world_rank];
  if (init_comm(self, 2, 1, self_member) != 0) return NULL;
  /* their names and error handlers are the MPI layer's, given at MPI_Init */
  *skn_rank_comm_slot(r, 1) = (skn_comm_view){.comm = &skn_job_g.world, .rank = world_rank};
  *skn_rank_comm_slot(r, 2) = (skn_comm_view){.comm = self, .rank = 0};
  return r;
}

/* ------------------------------------------------------------------ request pool */

static skn_req *grow_pool(skn_rank *me) {
  if (me->req_count + SKN_REQ_CHUNK > SKN_REQ_CHUNK * SKN_REQ_CHUNKS) return NULL;
  skn_req *block = aligned_alloc(SKN_CACHELINE, sizeof(skn_req) * 64);
  if (!block) return NULL;
  memset(block, 0, sizeof(skn_req) * 64);
  skn_req *head = NULL;
  for (int i = 63; i >= 0; i--) {
    int idx = me->req_count + i + 1; /* index 0 is MPI_REQUEST_NULL */
    int chunk = idx / SKN_REQ_CHUNK;
    if (!chunk_ensure(&me->req_chunks, chunk, SKN_REQ_CHUNKS, SKN_REQ_CHUNK * sizeof(skn_req *))) return NULL;
    skn_req *r = &block[i];
    r->index = idx;
    r->owner = me;
    r->pooled = true;
    ((skn_req **)me->req_chunks.chunks[chunk])[idx % SKN_REQ_CHUNK] = r;
    r->next = head;
    head = r;
  }
  me->req_count += 64;
  return head;
}

skn_req *skn_req_alloc(skn_rank *me) {
  skn_rank_lock(me);
  skn_req *r = me->req_free;
  if (SKN_UNLIKELY(!r)) {
    r = atomic_exchange(&me->req_remote_free, NULL);
    if (!r) r = grow_pool(me);
    if (!r) {
      skn_rank_unlock(me);
      return NULL;
    }
  }
  me->req_free = r->next;
  skn_rank_unlock(me);
  int index = r->index;
  memset(r, 0, offsetof(skn_req, cell));
  r->index = index;
  r->owner = me;
  r->pooled = true;
  atomic_store_explicit(&r->refs, 1, memory_order_relaxed);
  return r;
}

void skn_req_release(skn_req *r) {
  if (!r->pooled || atomic_fetch_sub(&r->refs, 1) != 1) return;
  skn_rank *owner = r->owner, *me = skn_rank_self();
  if (me == owner) {
    skn_rank_lock(me);
    r->next = me->req_free;
    me->req_free = r;
    skn_rank_unlock(me);
    return;
  }
  skn_req *head = atomic_load_explicit(&owner->req_remote_free, memory_order_relaxed);
  do {
    r->next = head;
  } while (!atomic_compare_exchange_weak(&owner->req_remote_free, &head, r));
}

void skn_req_wait(skn_req *r) { skn_req_wait_inline(r); }
