/* Client of skeinrun's key-value service (server.c): one blocking Unix-socket connection,
 * one request at a time. The launcher tells each process where and who it is through
 * SKEIN_PMI_ADDR, SKEIN_PMI_SECRET, SKEIN_PROC and SKEIN_PROCS. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "backend.h"
#include "proto.h"

static int sock = -1;

static int lost(const char *what) {
  skn_log("PMI: lost the connection to skeinrun's key-value service (%s: %s)", what,
          errno ? strerror(errno) : "closed by the launcher");
  return SKN_PMI_ERR;
}

static int send_all(struct iovec *iov, int n) {
  while (n > 0) {
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
    ssize_t w = sendmsg(sock, &m, MSG_NOSIGNAL); /* a dead launcher is an error, not SIGPIPE */
    if (w < 0) {
      if (errno == EINTR) continue;
      return lost("send");
    }
    while (n > 0 && (size_t)w >= iov->iov_len) {
      w -= (ssize_t)iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + w;
      iov->iov_len -= (size_t)w;
    }
  }
  return SKN_PMI_OK;
}

/* One frame: opcode, a fixed header (hdr, hlen) and a variable tail. */
static int send_frame(uint8_t op, const void *hdr, size_t hlen, const void *tail, size_t tlen) {
  uint32_t len = (uint32_t)(1 + hlen + tlen);
  struct iovec iov[4] = {{&len, 4}, {&op, 1}, {(void *)hdr, hlen}, {(void *)tail, tlen}};
  return send_all(iov, 4);
}

static int recv_all(void *buf, size_t n) {
  char *p = buf;
  while (n > 0) {
    ssize_t r = read(sock, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = 0;
      return lost("receive");
    }
    p += r;
    n -= (size_t)r;
  }
  return SKN_PMI_OK;
}

/* Receives one frame; *body is malloc'ed (opcode first), *len its length. */
static int recv_frame(unsigned char **body, size_t *len) {
  uint32_t n;
  if (recv_all(&n, 4) != SKN_PMI_OK) return SKN_PMI_ERR;
  if (n < 1 || n > SKN_PMI_FRAME_MAX) {
    skn_log("PMI: malformed answer from skeinrun (frame of %u bytes)", n);
    return SKN_PMI_ERR;
  }
  unsigned char *b = malloc(n);
  if (!b) return SKN_PMI_ERR;
  if (recv_all(b, n) != SKN_PMI_OK) {
    free(b);
    return SKN_PMI_ERR;
  }
  *body = b;
  *len = n;
  return SKN_PMI_OK;
}

/* Receives a frame that must be a bare `op`. */
static int expect(uint8_t op, const char *call) {
  unsigned char *b;
  size_t n;
  if (recv_frame(&b, &n) != SKN_PMI_OK) return SKN_PMI_ERR;
  int ok = n == 1 && b[0] == op;
  if (!ok) skn_log("PMI: %s: unexpected answer from skeinrun (opcode %u, %zu bytes)", call, b[0], n);
  free(b);
  return ok ? SKN_PMI_OK : SKN_PMI_ERR;
}

static int skein_init(skn_pmi_info *info) {
  const char *addr = getenv(SKN_PMI_ENV_ADDR), *secret = getenv(SKN_PMI_ENV_SECRET);
  int proc, nprocs;
  if (!addr || !secret || skn_pmi_env_int("SKEIN_PROC", &proc) != 1 ||
      skn_pmi_env_int("SKEIN_PROCS", &nprocs) != 1) {
    skn_log("PMI: skeinrun's environment is incomplete (need %s, %s, SKEIN_PROC, SKEIN_PROCS)",
            SKN_PMI_ENV_ADDR, SKN_PMI_ENV_SECRET);
    return SKN_PMI_ERR;
  }
  if (nprocs < 1 || proc >= nprocs || strlen(secret) != SKN_PMI_SECRET_LEN) {
    skn_log("PMI: bad skeinrun environment: SKEIN_PROC=%d SKEIN_PROCS=%d, secret of %zu characters",
            proc, nprocs, strlen(secret));
    return SKN_PMI_ERR;
  }
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(addr) >= sizeof sa.sun_path) {
    skn_log("PMI: %s=%s is too long for a socket path", SKN_PMI_ENV_ADDR, addr);
    return SKN_PMI_ERR;
  }
  strcpy(sa.sun_path, addr);
  sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof sa) != 0) {
    skn_log("PMI: cannot connect to skeinrun at %s: %s", addr, strerror(errno));
    if (sock >= 0) close(sock);
    sock = -1;
    return SKN_PMI_ERR;
  }
  uint32_t p = (uint32_t)proc;
  if (send_frame(SKN_PMI_HELLO, &p, 4, secret, SKN_PMI_SECRET_LEN) != SKN_PMI_OK ||
      expect(SKN_PMI_WELCOME, "init") != SKN_PMI_OK) {
    close(sock);
    sock = -1;
    return SKN_PMI_ERR;
  }
  info->proc = proc;
  info->nprocs = nprocs;
  info->node = 0; /* skeinrun starts every process on its own machine */
  info->nnodes = 1;
  info->local_proc = proc;
  info->local_nprocs = nprocs;
  return SKN_PMI_OK;
}

static int skein_put(const char *key, const void *value, size_t len) {
  size_t klen = strlen(key);
  unsigned char hdr[2 + SKN_PMI_KEY_MAX];
  uint16_t k = (uint16_t)klen;
  memcpy(hdr, &k, 2);
  memcpy(hdr + 2, key, klen);
  return send_frame(SKN_PMI_PUT, hdr, 2 + klen, value, len);
}

static int skein_fence(void) {
  if (send_frame(SKN_PMI_FENCE, NULL, 0, NULL, 0) != SKN_PMI_OK) return SKN_PMI_ERR;
  return expect(SKN_PMI_FENCED, "fence");
}

static int skein_get(int proc, const char *key, void **value, size_t *len) {
  uint32_t p = (uint32_t)proc;
  if (send_frame(SKN_PMI_GET, &p, 4, key, strlen(key)) != SKN_PMI_OK) return SKN_PMI_ERR;
  unsigned char *b;
  size_t n;
  if (recv_frame(&b, &n) != SKN_PMI_OK) return SKN_PMI_ERR;
  if (b[0] == SKN_PMI_MISSING && n == 1) {
    free(b);
    return SKN_PMI_NOTFOUND;
  }
  if (b[0] != SKN_PMI_VALUE) {
    skn_log("PMI: get: unexpected answer from skeinrun (opcode %u)", b[0]);
    free(b);
    return SKN_PMI_ERR;
  }
  memmove(b, b + 1, n - 1); /* the caller gets the value at the start of the allocation */
  *value = b;
  *len = n - 1;
  return SKN_PMI_OK;
}

static int skein_node_of(int proc) { return 0; }

static void skein_abort(int code, const char *msg) {
  int32_t c = code;
  if (sock < 0 || send_frame(SKN_PMI_ABORT, &c, 4, msg, strnlen(msg, 4096)) != SKN_PMI_OK) return;
  /* Wait for the launcher to take note, so that it reports the abort rather than this
     process's exit; it kills us soon after. Bounded in case it is gone. */
  struct pollfd pfd = {sock, POLLIN, 0};
  if (poll(&pfd, 1, 5000) == 1) (void)expect(SKN_PMI_ACK, "abort");
}

static int skein_finalize(void) {
  int rc = SKN_PMI_OK;
  if (sock >= 0) {
    rc = send_frame(SKN_PMI_FINALIZE, NULL, 0, NULL, 0);
    if (rc == SKN_PMI_OK) rc = expect(SKN_PMI_ACK, "finalize");
    close(sock);
    sock = -1;
  }
  return rc;
}

const skn_pmi_backend skn_pmi_skein_backend = {
    .name = "skein",
    .init = skein_init,
    .put = skein_put,
    .fence = skein_fence,
    .get = skein_get,
    .node_of = skein_node_of,
    .abort = skein_abort,
    .finalize = skein_finalize,
};
