/* The network progress thread of multi-process jobs (remote.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "remote.h"

static struct {
  pthread_t thread;
  int wake_fd; /* eventfd: wakes the thread (a worker sleeps, or the end) */
  _Atomic(bool) stopping;
} progress;

/* Progresses while no worker does: while units spin in waiting loops they call the
 * transport themselves, and this thread sleeps until a worker is about to sleep
 * (skn_remote_sleeping) or a short timeout; it takes over only when no unit has entered a
 * waiting loop for a whole timeout (all workers computing, say), and then blocks on the
 * transport's event fd when there is nothing to do. Judging by one look at the timeout
 * instead would catch a worker between two waits and take the transport from under it:
 * over tcp the two contend for its lock, and this unbound thread takes a core from a
 * worker (docs/performance.md, "Between processes"). Waking this thread
 * for every message while a worker spins would cost each message a context switch. */
static void *progress_main(void *unused) {
  (void)unused;
  struct pollfd fds[2] = {{.fd = progress.wake_fd, .events = POLLIN}, {.fd = skn_remote.net->event_fd(), .events = POLLIN}};
  uint64_t mark = 0;
  while (!atomic_load(&progress.stopping)) {
    skn_remote_deadlock_check();
    if (skn_sched_polled_since(&mark)) {
      poll(fds, 1, 2);
    } else if (skn_remote.net->progress()) {
      continue;
    } else if (skn_remote.net->arm()) {
      poll(fds, 2, 100); /* the timeout keeps the liveness checks of local peers going */
    } else {
      sched_yield(); /* events pending or another thread progressing: look again */
      continue;
    }
    uint64_t n;
    if (fds[0].revents & POLLIN) { /* a worker is about to sleep: judge from now on */
      if (read(progress.wake_fd, &n, sizeof n) < 0 && errno != EAGAIN) skn_log("eventfd read: %s", strerror(errno));
      skn_sched_polled_since(&mark);
    }
  }
  return NULL;
}

void skn_remote_sleeping(void) {
  uint64_t one = 1;
  if (write(progress.wake_fd, &one, sizeof one) < 0) skn_log("eventfd write: %s", strerror(errno));
}

void skn_remote_progress_start(void) {
  if ((progress.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) skn_fatal("eventfd: %s", strerror(errno));
  int rc = pthread_create(&progress.thread, NULL, progress_main, NULL);
  if (rc != 0) skn_fatal("cannot start the network progress thread: %s", strerror(rc));
}

void skn_remote_progress_stop(void) {
  atomic_store(&progress.stopping, true);
  skn_remote_sleeping(); /* wakes the thread, which sees `stopping` */
  pthread_join(progress.thread, NULL);
  close(progress.wake_fd);
}
