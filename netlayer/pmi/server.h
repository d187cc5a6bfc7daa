/* skeinrun's key-value service: a Unix-socket server in the launcher, driven by the
 * launcher's poll loop (single-threaded, nonblocking). Only clients that present the
 * job's secret and a process index not yet seen are served; anything malformed is
 * refused, logged on stderr and its connection closed, without touching the exchange. */
#ifndef SKN_PMI_SERVER_H
#define SKN_PMI_SERVER_H

#include <poll.h>
#include <stdbool.h>

#include "proto.h"

typedef struct skn_pmi_server skn_pmi_server;

/* Called when process `proc` asks to end the job (skn_pmi_abort). */
typedef void (*skn_pmi_abort_fn)(void *ctx, int proc, int code, const char *msg);

/* Listens on a new socket at `path` (which must not exist). NULL on failure (logged). */
SKN_INTERNAL skn_pmi_server *skn_pmi_server_create(const char *path, int nprocs,
                                                   const char secret[SKN_PMI_SECRET_LEN],
                                                   skn_pmi_abort_fn on_abort, void *ctx);

/* Largest number of pollfds skn_pmi_server_pollfds fills. */
SKN_INTERNAL int skn_pmi_server_maxfds(const skn_pmi_server *s);
/* Fills fds with what the server waits for; returns how many. */
SKN_INTERNAL int skn_pmi_server_pollfds(skn_pmi_server *s, struct pollfd *fds);
/* Handles the events poll reported on the fds filled by the last skn_pmi_server_pollfds,
 * and expires connections that did not authenticate in time. */
SKN_INTERNAL void skn_pmi_server_handle(skn_pmi_server *s, const struct pollfd *fds, int n);
/* Milliseconds until the next expiry, or -1. */
SKN_INTERNAL int skn_pmi_server_timeout_ms(const skn_pmi_server *s);

/* The launcher tells the server that process `proc` has ended. */
SKN_INTERNAL void skn_pmi_server_proc_exited(skn_pmi_server *s, int proc);
/* A process that has ended but not joined the fence under way (which can then never
 * complete), or -1. */
SKN_INTERNAL int skn_pmi_server_fence_stuck(const skn_pmi_server *s);

/* Closes every connection and the socket, and unlinks it. */
SKN_INTERNAL void skn_pmi_server_destroy(skn_pmi_server *s);

#endif
