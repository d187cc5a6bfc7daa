/* Buffered sends (device.h, BUFFERED SEND): the message is packed into a segment of the
 * rank's attached buffer and sent from there in standard mode, so the caller's buffer is
 * free at once. The segment list is the rank's, under me->bsend_lock: under
 * MPI_THREAD_MULTIPLE two threads of a rank must not claim the same offset. */
#include <stdlib.h>

#include "core.h"

/* Frees the segments whose sends have completed. The caller holds me->bsend_lock. */
static void reclaim(skn_rank *me) {
  for (skn_bsend_seg **p = &me->bsend_segs; *p;) {
    skn_bsend_seg *s = *p;
    if (skn_req_done(s->req)) {
      *p = s->next;
      skn_req_release(s->req);
      free(s);
    } else {
      p = &s->next;
    }
  }
}

skn_status skn_bsend_start(skn_rank *me, const skn_msg *m, skn_req *link) {
  size_t bytes = m->count * m->dt->size;
  skn_bsend_seg *seg = malloc(sizeof *seg);
  skn_req *r = skn_req_alloc(me);
  if (!seg || !r) {
    free(seg);
    if (r) skn_req_release(r);
    return SKN_ERR_NOMEM;
  }
  /* first fit between the live segments, which are kept sorted by offset; the segment is
   * claimed under the lock, then filled and sent outside it */
  skn_spin_lock(&me->bsend_lock);
  reclaim(me);
  size_t off = 0;
  skn_bsend_seg **at = &me->bsend_segs;
  for (; *at; at = &(*at)->next) {
    if ((*at)->off >= off + bytes) break;
    off = (*at)->off + (*at)->len;
  }
  if (!me->bsend_buf || off + bytes > me->bsend_size) {
    skn_spin_unlock(&me->bsend_lock);
    free(seg);
    skn_req_release(r);
    return SKN_ERR_NO_ROOM;
  }
  *seg = (skn_bsend_seg){off, bytes, r, *at};
  *at = seg;
  skn_spin_unlock(&me->bsend_lock);
  skn_dt_pack(me->bsend_buf + off, m->buf, m->dt, bytes);
  skn_msg packed = *m;
  packed.buf = me->bsend_buf + off;
  packed.count = bytes;
  packed.dt = &skn_dt_predefined[4]; /* MPI_BYTE */
  packed.mode = SKN_MODE_STANDARD;
  if (link) {
    atomic_fetch_add(&r->refs, 1);
    link->mode = SKN_MODE_BUFFERED;
    link->inner = r;
  }
  skn_p2p_send(me, &packed, r);
  return SKN_OK;
}

skn_status skn_bsend_cancel(skn_rank *me, skn_req *link) {
  skn_req *s = link->inner;
  if (s->cancelled || skn_p2p_cancel(me, s) != SKN_OK) return SKN_ERR_NOT_CANCELLED;
  link->cancelled = true;
  skn_spin_lock(&me->bsend_lock);
  for (skn_bsend_seg **p = &me->bsend_segs; *p; p = &(*p)->next)
    if ((*p)->req == s) { /* (an early-completed send's segment may be reclaimed already) */
      skn_bsend_seg *seg = *p;
      *p = seg->next;
      skn_req_release(s);
      free(seg);
      break;
    }
  skn_spin_unlock(&me->bsend_lock);
  return SKN_OK;
}

void skn_bsend_detach(skn_rank *me, void **buf, size_t *size) {
  for (;;) { /* waits for each send still using the buffer, holding a reference to it */
    skn_spin_lock(&me->bsend_lock);
    reclaim(me);
    skn_req *pending = me->bsend_segs ? me->bsend_segs->req : NULL;
    if (pending) atomic_fetch_add(&pending->refs, 1);
    skn_spin_unlock(&me->bsend_lock);
    if (!pending) break;
    skn_req_wait(pending);
    skn_req_release(pending);
  }
  *buf = me->bsend_buf;
  *size = me->bsend_size;
  me->bsend_buf = NULL;
  me->bsend_size = 0;
}
