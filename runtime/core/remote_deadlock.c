/* The deadlock protocol of multi-process jobs (remote.h). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

#include "remote.h"

/* A process whose ranks are all blocked (the scheduler's stall hook, every SKEIN_DEADLOCK_MS
 * while it lasts) reports to process 0 how many messages it has sent and delivered
 * (acks included); a process whose ranks have ended reports so once. Blocked ranks wake
 * only when a message arrives, so once every process has reported twice with unchanged
 * counts, nothing of its own is in flight, and the job has sent as many messages as it
 * delivered, nothing can wake anyone: process 0 tells every process, and each names its
 * blocked ranks and calls (boot's report) and exits.
 * A process's latest report may be old: one woken since by a message may have sent as
 * many as it received (a rendezvous fetch, an ack, a reply), which keeps the job's totals
 * equal while it runs. So process 0 first asks every process for its counts now (a
 * second wave, after all the reports: the four-counter method) and judges a deadlock only
 * when none has moved since its report. */

enum { CTRL_STALLED = 1, CTRL_DEADLOCK = 2, CTRL_ALL_ENDED = 3, CTRL_CONFIRM = 4, CTRL_CONFIRMED = 5 }; /* kinds of control messages; -CTRL_STALLED: ended */

typedef struct stall_report {
  uint64_t sent, delivered;
  int count;  /* reports in a row with these numbers */
  bool ended; /* its ranks have all ended */
} stall_report;

static struct {
  skn_spinlock lock;
  stall_report *of; /* process 0: the latest report of each process */
  bool verdict;
  uint64_t round; /* process 0: the latest confirmation round */
  int awaited;    /* its answers still to come */
  bool moved;     /* a process's counts moved since its report */
  _Atomic(bool) declared; /* process 0: told the others; its progress thread ends the job */
  _Atomic(bool) all_ended; /* every process's ranks have ended (process 0 tells the others) */
} stall_state = {.lock = SKN_SPINLOCK_INIT};

static void counts(uint64_t *sent, uint64_t *delivered) {
  skn_net_stats st;
  skn_remote.net->get_stats(&st);
  *sent = st.sent_eager + st.sent_rndv + st.acks_sent + atomic_load(&skn_remote.rndv_fetched);
  *delivered = st.delivered_eager + st.delivered_rndv + st.acks_received + atomic_load(&skn_remote.rndv_completed);
}

static void tell(int proc, int kind, uint64_t sent, uint64_t delivered) {
  if (skn_remote_control(proc, kind, sent, delivered) < 0)
    skn_log("cannot reach process %d for deadlock detection", proc);
}

/* Process 0: records a report; returns the confirmation round to start when the reports
 * say deadlock, else 0. */
static uint64_t record(int proc, uint64_t sent, uint64_t delivered, bool ended) {
  skn_spin_lock(&stall_state.lock);
  stall_report *r = &stall_state.of[proc];
  if (r->sent == sent && r->delivered == delivered && r->count > 0) r->count++;
  else {
    *r = (stall_report){sent, delivered, 1, false};
    stall_state.moved = true; /* the round out, if any, cannot succeed */
  }
  if (ended) *r = (stall_report){sent, delivered, 2, true};
  uint64_t all_sent = 0, all_delivered = 0;
  bool quiet = !stall_state.verdict, someone_waits = false; /* all ended is the normal end */
  for (int p = 0; p < skn_remote.pmi->nprocs && quiet; p++) {
    quiet = stall_state.of[p].count >= 2;
    someone_waits |= !stall_state.of[p].ended;
    all_sent += stall_state.of[p].sent;
    all_delivered += stall_state.of[p].delivered;
  }
  uint64_t round = 0;
  if (quiet && someone_waits && all_sent == all_delivered && stall_state.awaited == 0) {
    round = ++stall_state.round;
    stall_state.awaited = skn_remote.pmi->nprocs;
    stall_state.moved = false;
  }
  bool all_ended = true;
  for (int p = 0; p < skn_remote.pmi->nprocs; p++) all_ended &= stall_state.of[p].ended;
  skn_spin_unlock(&stall_state.lock);
  if (all_ended && !atomic_exchange(&stall_state.all_ended, true))
    for (int p = 1; p < skn_remote.pmi->nprocs; p++) tell(p, CTRL_ALL_ENDED, 0, 0);
  return round;
}

/* Tells the others; the progress thread lets the messages out, then reports (an exit right
 * here could drop them, and inside progress nothing would send them). */
static void declare_deadlock(void) {
  for (int p = 1; p < skn_remote.pmi->nprocs; p++) tell(p, CTRL_DEADLOCK, 0, 0);
  atomic_store(&stall_state.declared, true);
  skn_dev_ending();
  skn_remote_sleeping();
}

/* This process's counts added up, for a confirmation round; never a report's sum while a
 * transfer is in flight. */
static uint64_t counts_now(void) {
  if (atomic_load(&skn_remote.in_flight) != 0) return UINT64_MAX;
  uint64_t sent, delivered;
  counts(&sent, &delivered);
  return sent + delivered;
}

/* Process 0: a process's answer in a round. Counts only grow, so an unchanged sum means
 * unchanged counts: no message reached or left it since its report. */
static void confirm(int proc, uint64_t round, uint64_t sum) {
  skn_spin_lock(&stall_state.lock);
  bool verdict = false;
  if (round == stall_state.round && stall_state.awaited > 0) {
    stall_report *r = &stall_state.of[proc];
    if (sum != r->sent + r->delivered) {
      stall_state.moved = true;
      r->count = 0; /* not quiet until it reports again */
    }
    verdict = --stall_state.awaited == 0 && !stall_state.moved;
    if (verdict) stall_state.verdict = true;
  }
  skn_spin_unlock(&stall_state.lock);
  if (verdict) declare_deadlock();
}

static void start_round(uint64_t round) {
  for (int p = 1; p < skn_remote.pmi->nprocs; p++) tell(p, CTRL_CONFIRM, round, 0);
  confirm(0, round, counts_now());
}

static void finish_deadlock(void) {
  for (int i = 0; i < 100; i++) {
    skn_remote.net->progress();
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  skn_remote.report_deadlock(); /* names this process's blocked ranks; exits */
}

/* Returns whether it reported. */
static bool report_stall(bool ended) {
  if (atomic_load(&skn_remote.in_flight) != 0) return false; /* a transfer will wake someone (may dip below 0) */
  uint64_t sent, delivered;
  counts(&sent, &delivered);
  if (skn_remote.pmi->proc != 0) tell(0, ended ? -CTRL_STALLED : CTRL_STALLED, sent, delivered);
  else {
    uint64_t round = record(0, sent, delivered, ended);
    if (round) start_round(round);
  }
  return true;
}

void skn_remote_stall(void) { report_stall(false); }

void skn_remote_on_control(void *hctx, const skn_net_ctrl_hdr *h) {
  (void)hctx;
  if (h->kind == CTRL_ALL_ENDED) {
    atomic_store(&stall_state.all_ended, true);
    return;
  }
  if (h->kind == CTRL_DEADLOCK) {
    atomic_store(&stall_state.declared, true); /* peers ending from now on are not failures */
    skn_dev_ending();
    skn_remote.report_deadlock();              /* names the blocked ranks, exits */
  }
  if (h->kind == CTRL_CONFIRM) {
    tell(0, CTRL_CONFIRMED, h->a, counts_now());
    return;
  }
  bool ended = h->kind == -CTRL_STALLED;
  if (skn_remote.pmi->proc != 0 || h->from_proc <= 0 || h->from_proc >= skn_remote.pmi->nprocs) return;
  if (h->kind == CTRL_CONFIRMED) confirm(h->from_proc, h->a, h->b);
  uint64_t round = h->kind == CTRL_STALLED || ended ? record(h->from_proc, h->a, h->b, ended) : 0;
  if (round) start_round(round);
}

void skn_remote_deadlock_init(const skn_pmi_info *pi) {
  if (pi->proc == 0 && !(stall_state.of = calloc((size_t)pi->nprocs, sizeof *stall_state.of)))
    skn_fatal("out of memory for deadlock detection over %d processes", pi->nprocs);
}

/* Process 0 after its verdict (from the progress thread): ends the job. */
void skn_remote_deadlock_check(void) {
  if (atomic_load(&stall_state.declared)) finish_deadlock();
}

/* This process's ranks have ended: reports "ended", and again whenever its counts change
 * (a message to one of its ended ranks still arrives and counts as delivered: the others'
 * deadlock detector needs it), until every process has ended; a deadlock verdict ends
 * this process meanwhile. */
void skn_remote_report_ended(void) {
  uint64_t s0 = 0, d0 = 0, s, d;
  bool reported = false;
  while (!atomic_load(&stall_state.all_ended)) {
    counts(&s, &d);
    if (!reported || s != s0 || d != d0) {
      s0 = s;
      d0 = d;
      reported = report_stall(true);
    }
    if (!skn_remote.net->progress()) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
  }
}
