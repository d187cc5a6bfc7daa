/* What the files of the transport to other processes share; private to them:
 *   remote.c           point-to-point over the UCX module (the ops table), start and end
 *   remote_deadlock.c  the deadlock protocol across processes
 *   remote_rma.c       one-sided operations (the ops table's RMA slots)
 *   remote_progress.c  the progress thread
 *   remote_module.c    loading the module (libskein-ucx.so) */
#ifndef SKN_REMOTE_H
#define SKN_REMOTE_H

#include "core.h"
#include "pmi/pmi.h"
#include "rma.h"
#include "ucx/net.h"

typedef struct skn_remote_state {
  const skn_net_module *net;
  const skn_pmi_info *pmi;
  _Atomic(int) in_flight; /* eager sends UCX still holds, fetches, cancels awaiting their answer */
  /* Rendezvous sends wait for the receiver to fetch, which may never happen (a deadlock):
   * not "in flight" for the detector. Instead each end counts its half of the completion
   * as a message: the receiver's fetch (or discard) as sent, the sender's completion as
   * delivered, so the job's sums balance only once the sender has heard of it. */
  _Atomic(int) rndv_sends;
  _Atomic(uint64_t) rndv_fetched, rndv_completed;
  size_t rndv_threshold;
  void (*report_deadlock)(void);
} skn_remote_state;
SKN_INTERNAL extern skn_remote_state skn_remote;

/* remote.c: a control message to process proc (< 0 when it cannot be sent). */
SKN_INTERNAL int skn_remote_control(int proc, int kind, uint64_t a, uint64_t b);

/* remote_deadlock.c */
SKN_INTERNAL void skn_remote_deadlock_init(const skn_pmi_info *pi);
/* The transport's hook for control messages (the protocol's only messages). */
SKN_INTERNAL void skn_remote_on_control(void *hctx, const skn_net_ctrl_hdr *h);
SKN_INTERNAL void skn_remote_deadlock_check(void);
SKN_INTERNAL void skn_remote_report_ended(void);

/* remote_rma.c: the transport's one-sided slots (device.h's contracts) */
SKN_INTERNAL int skn_remote_rma_put(skn_rank *target, const skn_rma_loc *t, const void *obuf, size_t ocount,
                                    const skn_dtype *ot, size_t tcount, const skn_dtype *tt);
SKN_INTERNAL int skn_remote_rma_get(skn_rank *target, const skn_rma_loc *t, void *obuf, size_t ocount,
                                    const skn_dtype *ot, size_t tcount, const skn_dtype *tt);
SKN_INTERNAL int skn_remote_rma_accumulate(skn_rank *target, const skn_rma_loc *t, int op, int basic,
                                           const void *origin, size_t ocount, const skn_dtype *ot, void *result,
                                           size_t rcount, const skn_dtype *rt, size_t tcount, const skn_dtype *tt);
SKN_INTERNAL int skn_remote_rma_cas(skn_rank *target, const skn_rma_loc *t, int basic, const void *origin,
                                    const void *compare, void *result);
SKN_INTERNAL int skn_remote_rma_flush(skn_rank *target);

/* remote_progress.c */
SKN_INTERNAL void skn_remote_progress_start(void);
SKN_INTERNAL void skn_remote_progress_stop(void);

/* remote_module.c */
SKN_INTERNAL const skn_net_module *skn_remote_load_module(void);

#endif
