/* The matching and delivery engine (device.h): the only code that touches a rank's
 * matching queues, and delivery (signature check, copy or fetch into the final buffer,
 * status, completion) written once for every transport. The MPI layer's point-to-point
 * calls start here; sends go to the receiver's transport (rank->tp), which comes back
 * through skn_dev_arrive and skn_dev_deliver; the engine calls transports only through
 * their ops table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "engine.h"

/* What a sender reads from and writes into a posted receive is one line (core.h). */
_Static_assert(offsetof(skn_req, bytes) + sizeof(size_t) <= SKN_CACHELINE, "skn_req: the sender's side is one line");
/* skn_req_flawed (core.h) reads the two flags as one word. */
_Static_assert(offsetof(skn_req, type_mismatch) == offsetof(skn_req, truncated) + 1, "skn_req: adjacent flags");

/* ------------------------------------------------------------------ transports' side */

/* The rendezvous half of skn_dev_deliver (engine.h): the transport moves the data; a
 * non-contiguous receive takes it through a bounce buffer, unpacked in skn_dev_fetched. */
bool skn_dev_deliver_fetch(skn_req *r, const skn_transport *tp, void *handle, size_t n, bool ok) {
  if (!ok) {
    tp->fetch(handle, NULL, 0, NULL);
    return true;
  }
  void *dst = r->buf;
  r->payload = NULL;
  if (!r->dt->contig && n && !(dst = r->payload = malloc(n)))
    skn_fatal("out of memory receiving %zu bytes from rank %d", n, r->st_src);
  tp->fetch(handle, dst, n, r);
  return false;
}

void skn_dev_wake_probers(skn_mq *mq) {
  for (skn_probe_waiter *p = mq->probers; p; p = p->next) skn_sched_wake(p->unit);
  mq->probers = NULL;
}

void skn_dev_fetched(skn_req *r) {
  if (r->payload) {
    skn_dt_unpack(r->buf, r->dt, r->payload, r->bytes);
    free(r->payload);
    r->payload = NULL;
  }
  skn_req_complete(r);
}

skn_req *skn_dev_withdraw(skn_rank *dst, bool (*match)(const skn_req *env, const void *arg), const void *arg) {
  skn_mq *mq = &dst->mq;
  skn_spin_lock(&mq->lock);
  skn_req *prev = NULL, *e = mq->unexp;
  for (; e && !match(e, arg); e = e->next) prev = e;
  if (e) unqueue_unexpected(mq, prev, e);
  skn_spin_unlock(&mq->lock);
  return e;
}

bool skn_dev_unqueue(skn_rank *dst, skn_req *env) {
  skn_mq *mq = &dst->mq;
  skn_spin_lock(&mq->lock);
  bool queued = env->queued;
  if (queued) {
    skn_req *prev = NULL;
    for (skn_req *x = mq->unexp; x && x != env; x = x->next) prev = x;
    unqueue_unexpected(mq, prev, env);
  }
  skn_spin_unlock(&mq->lock);
  return queued;
}

/* ------------------------------------------------------------------ binding, counting */

/* Counting copies of the transports (device.h: skn_dev_count_sends), made on first use
 * and kept: a send may still be running through one after the real tables are back.
 * Guarded by count_lock, with `counting` (ranks with MPI_T initialized). */
static skn_spinlock count_lock = SKN_SPINLOCK_INIT;
static int counting;
static skn_transport counting_tp[8];
static int ncounting_tp;

static void counting_send(skn_rank *me, const skn_msg *m, skn_req *r) {
  if (__atomic_load_n(&me->mpit_refs, __ATOMIC_RELAXED)) { /* the sender's own tools interface */
    skn_stat_add(&me->sent_msgs, 1);
    skn_stat_add(&me->sent_bytes, m->count * m->dt->size);
  }
  /* the peer's table may have been swapped back since skn_p2p_send read it */
  const skn_transport *tp = skn_rank_tp(m->peer);
  if (tp->counted) tp = tp->counted;
  tp->send(me, m, r);
}

static const skn_transport *counting_copy(const skn_transport *tp) {
  for (int i = 0; i < ncounting_tp; i++)
    if (counting_tp[i].counted == tp) return &counting_tp[i];
  if (ncounting_tp == (int)(sizeof counting_tp / sizeof counting_tp[0])) skn_fatal("too many transports to count");
  skn_transport *c = &counting_tp[ncounting_tp++];
  *c = *tp;
  c->send = counting_send;
  c->counted = tp;
  return c;
}

/* What a record reaching tp is bound to: tp, or its counting copy. Under count_lock. */
static const skn_transport *bound(const skn_transport *tp) {
  if (tp->counted) tp = tp->counted;
  return counting > 0 ? counting_copy(tp) : tp;
}

void skn_dev_bind(int proc, const skn_transport *tp) {
  skn_spin_lock(&count_lock);
  for (int w = 0; w < skn_job_g.size; w++) {
    skn_rank *r = skn_job_g.ranks[w];
    if (r && r->proc == proc) __atomic_store_n(&r->tp, bound(tp), __ATOMIC_RELAXED);
  }
  skn_spin_unlock(&count_lock);
}

void skn_dev_count_sends(bool on) {
  skn_spin_lock(&count_lock);
  int before = counting;
  counting += on ? 1 : -1;
  if ((before > 0) != (counting > 0)) /* first on, or last off: rebind every record */
    for (int w = 0; w < skn_job_g.size; w++) {
      skn_rank *r = skn_job_g.ranks[w];
      if (r) __atomic_store_n(&r->tp, bound(skn_rank_tp(r)), __ATOMIC_RELAXED);
    }
  skn_spin_unlock(&count_lock);
}

/* ------------------------------------------------------------------ failure */

static _Atomic(bool) ending;

void skn_dev_ending(void) { atomic_store(&ending, true); }
bool skn_dev_is_ending(void) { return atomic_load(&ending); }

void skn_dev_peer_lost(int proc, const char *where, const char *why) {
  if (atomic_exchange(&ending, true)) return; /* one loss per process: the others follow from it */
  int first = -1, last = -1;
  for (int w = 0; w < skn_job_g.size; w++) {
    skn_rank *r = skn_job_g.ranks[w];
    if (r && r->proc == proc) {
      if (first < 0) first = w;
      last = w;
    }
  }
  /* Every survivor notices; one of them says it (the lowest-numbered), so that a job of
   * many processes prints one line per loss; it ends last, so that the others' ends are
   * not reported as further losses (a launcher that sees a process end stops the rest). */
  struct timespec ts = {0, 300000000};
  if (skn_job_g.proc == (proc == 0 ? 1 : 0)) {
    char ranks[48];
    if (first == last) snprintf(ranks, sizeof ranks, "rank %d", first);
    else snprintf(ranks, sizeof ranks, "ranks %d-%d", first, last);
    skn_log("lost process %d (%s%s%s): %s; ending the job", proc, ranks, where ? ", " : "", where ? where : "",
            why);
    ts.tv_nsec = 0;
    ts.tv_sec = 1;
  }
  syscall(SYS_nanosleep, &ts, NULL); /* the kernel's: this may be a rank, which must not switch */
  _exit(SKN_EXIT_PEER_LOST);
}

/* ------------------------------------------------------------------ the MPI layer's side */

/* Delivers envelope env to receive r and hands env back to its transport. Returns false
 * when r completes later (a fetch). */
static bool consume(skn_req *r, skn_req *env) {
  /* `filled` is 0 while the transport is still putting the data in place (an eager copy
   * being made); the transport may also turn such an envelope into a by-reference one. */
  while (!atomic_load_explicit(&env->filled, memory_order_acquire)) skn_cpu_relax();
  skn_dev_msg m = {.src = env->src, .tag = env->tag, .bytes = env->bytes, .dt = env->dt, .sum = &env->sum};
  switch (env->proto) {
  case SKN_PROTO_RNDV: m.how = SKN_DATA_TYPED, m.data = env->buf, m.count = env->count; break;
  case SKN_PROTO_FETCH: m.how = SKN_DATA_FETCH, m.tp = env->tp, m.handle = env->payload; break;
  default: m.how = SKN_DATA_PACKED, m.data = env->payload; break;
  }
  bool done = skn_dev_deliver(r, &m);
  env->tp->release(env, true);
  return done;
}

void skn_p2p_recv_matched(skn_req *r, skn_req *env) {
  if (consume(r, env)) skn_req_complete(r);
}

void skn_p2p_recv(skn_rank *me, skn_req *r) {
  skn_req *env = skn_p2p_recv_post(me, r);
  if (env) skn_p2p_recv_matched(r, env);
}

static inline void describe(const skn_req *env, skn_probe_info *info) {
  info->src = env->src;
  info->tag = env->tag;
  info->bytes = env->bytes;
}

skn_req *skn_p2p_probe(skn_rank *me, int ctx, int src, int tag, bool remove, skn_probe_info *info) {
  skn_mq *mq = &me->mq;
  skn_spin_lock(&mq->lock);
  skn_req *env = find_unexpected(mq, ctx, src, tag, remove);
  if (env) describe(env, info);
  skn_spin_unlock(&mq->lock);
  return env;
}

skn_req *skn_p2p_probe_wait(skn_rank *me, int ctx, int src, int tag, bool remove, skn_probe_info *info) {
  skn_mq *mq = &me->mq;
  skn_unit *self = skn_sched_self();
  skn_probe_waiter w = {self, NULL};
  for (;;) {
    skn_sched_prepare_wait(self);
    skn_spin_lock(&mq->lock);
    skn_req *env = find_unexpected(mq, ctx, src, tag, remove);
    if (env) {
      describe(env, info);
      /* we may still be on the probers list: take ourselves off */
      for (skn_probe_waiter **p = &mq->probers; *p; p = &(*p)->next)
        if (*p == &w) {
          *p = w.next;
          break;
        }
      skn_spin_unlock(&mq->lock);
      skn_sched_done_waiting(self);
      return env;
    }
    bool listed = false;
    for (skn_probe_waiter *p = mq->probers; p; p = p->next) listed |= (p == &w);
    if (!listed) {
      w.next = mq->probers;
      mq->probers = &w;
    }
    skn_spin_unlock(&mq->lock);
    skn_sched_wait(self);
  }
}

skn_status skn_p2p_cancel(skn_rank *me, skn_req *r) {
  if (r->kind != SKN_REQ_RECV) {
    if (!r->peer) return SKN_ERR_NOT_CANCELLED; /* matched a posted receive at once */
    return skn_rank_tp(r->peer)->cancel_send(me, r);
  }
  skn_mq *mq = &me->mq;
  skn_spin_lock(&mq->lock);
  bool withdrawn = withdraw_receive(mq, r);
  skn_spin_unlock(&mq->lock);
  if (!withdrawn) return SKN_ERR_NOT_CANCELLED;
  r->cancelled = true;
  skn_req_complete(r);
  return SKN_OK;
}
