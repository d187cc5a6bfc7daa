/* skeinrun's key-value service (see server.h and proto.h for the contract).
 * Invariants: a connection is either unauthenticated (proc < 0, may send only one HELLO
 * frame of exactly its size before its deadline) or bound to one process; a process binds
 * at most once per job; a fence completes when all nprocs processes have joined it, and
 * only then do their pending puts become visible. */
#define _GNU_SOURCE
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define HELLO_LEN (1 + 4 + SKN_PMI_SECRET_LEN)
#define AUTH_TIMEOUT_MS 10000     /* an unauthenticated connection must say HELLO by then */
#define MAX_STRANGERS 32          /* unauthenticated connections held at once */
#define EVICT_AGE_MS 1000         /* silent this long, the oldest stranger may be dropped */
#define OUT_MAX (64u << 20)       /* unread answers a client may accumulate */

typedef struct kv {
  struct kv *next;
  size_t len;
  char key[SKN_PMI_KEY_MAX + 1];
  unsigned char value[];
} kv;

typedef struct {
  kv *published; /* visible to get */
  kv *pending;   /* put since the last fence */
  bool seen;     /* has bound a connection (at most once per job) */
  bool in_fence; /* has joined the fence under way */
  bool gone;     /* the process has ended */
} proc_state;

typedef struct {
  int fd;
  int proc;          /* -1 until HELLO */
  unsigned id;       /* for log messages */
  uint64_t deadline; /* ms, for unauthenticated connections */
  unsigned char hdr[4];
  size_t hdr_have;
  unsigned char *body; /* NULL while reading the header */
  size_t body_len, body_have;
  unsigned char *out;
  size_t out_len, out_sent, out_cap;
} conn;

struct skn_pmi_server {
  int listen_fd;
  char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
  int nprocs;
  char secret[SKN_PMI_SECRET_LEN];
  skn_pmi_abort_fn on_abort;
  void *ctx;
  proc_state *procs;
  int fenced; /* processes in the fence under way */
  conn *conns;
  int nconns, maxconns;
  unsigned next_id;
};

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Unauthenticated connections and the oldest of them. */
static int strangers(const skn_pmi_server *s, const conn **oldest) {
  int n = 0;
  *oldest = NULL;
  for (int i = 0; i < s->nconns; i++)
    if (s->conns[i].fd >= 0 && s->conns[i].proc < 0) {
      n++;
      if (!*oldest || s->conns[i].id < (*oldest)->id) *oldest = &s->conns[i];
    }
  return n;
}

skn_pmi_server *skn_pmi_server_create(const char *path, int nprocs, const char secret[SKN_PMI_SECRET_LEN],
                                      skn_pmi_abort_fn on_abort, void *ctx) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof sa.sun_path) {
    fprintf(stderr, "skeinrun: socket path too long: %s\n", path);
    return NULL;
  }
  skn_pmi_server *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->nprocs = nprocs;
  memcpy(s->secret, secret, SKN_PMI_SECRET_LEN);
  s->on_abort = on_abort;
  s->ctx = ctx;
  s->procs = calloc((size_t)nprocs, sizeof *s->procs);
  s->maxconns = nprocs + MAX_STRANGERS;
  s->conns = calloc((size_t)s->maxconns, sizeof *s->conns);
  strcpy(s->path, path);
  strcpy(sa.sun_path, path);
  s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (!s->procs || !s->conns || s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      chmod(path, 0600) != 0 || listen(s->listen_fd, 128) != 0) {
    fprintf(stderr, "skeinrun: cannot listen on %s: %s\n", path, strerror(errno));
    if (s->listen_fd >= 0) close(s->listen_fd);
    free(s->procs);
    free(s->conns);
    free(s);
    return NULL;
  }
  return s;
}

int skn_pmi_server_maxfds(const skn_pmi_server *s) { return 1 + s->maxconns; }

int skn_pmi_server_pollfds(skn_pmi_server *s, struct pollfd *fds) {
  const conn *old;
  bool full = strangers(s, &old) >= MAX_STRANGERS; /* then wait for room: see room() */
  fds[0] = (struct pollfd){s->listen_fd, (short)(full ? 0 : POLLIN), 0};
  int n = 1;
  for (int i = 0; i < s->nconns; i++) {
    conn *c = &s->conns[i];
    if (c->fd >= 0) fds[n++] = (struct pollfd){c->fd, (short)(POLLIN | (c->out_len > c->out_sent ? POLLOUT : 0)), 0};
  }
  return n;
}

/* Closes a connection; its slot is reclaimed by compact(), so that pointers to other
   connections stay valid while a frame is handled. */
static void drop(skn_pmi_server *s, conn *c) {
  close(c->fd);
  free(c->body);
  free(c->out);
  *c = (conn){.fd = -1, .proc = -1};
}

static void compact(skn_pmi_server *s) {
  int j = 0;
  for (int i = 0; i < s->nconns; i++)
    if (s->conns[i].fd >= 0) s->conns[j++] = s->conns[i];
  s->nconns = j;
}

static void refuse(skn_pmi_server *s, conn *c, const char *why) {
  if (c->proc >= 0)
    fprintf(stderr, "skeinrun: refused a message from process %d (connection %u): %s; closing its connection\n",
            c->proc, c->id, why);
  else
    fprintf(stderr, "skeinrun: refused connection %u: %s\n", c->id, why);
  drop(s, c);
}

/* Queues an answer and sends what the socket takes now. False if the client is gone or
 * lets answers pile up (the connection has then been dropped). */
static bool answer(skn_pmi_server *s, conn *c, uint8_t op, const void *data, size_t len) {
  size_t need = c->out_len + 5 + len;
  if (need > OUT_MAX) {
    refuse(s, c, "does not read its answers");
    return false;
  }
  if (need > c->out_cap) {
    size_t cap = c->out_cap ? c->out_cap : 256;
    while (cap < need) cap *= 2;
    unsigned char *o = realloc(c->out, cap);
    if (!o) {
      refuse(s, c, "out of memory for its answers");
      return false;
    }
    c->out = o;
    c->out_cap = cap;
  }
  uint32_t n = (uint32_t)(1 + len);
  memcpy(c->out + c->out_len, &n, 4);
  c->out[c->out_len + 4] = op;
  if (len) memcpy(c->out + c->out_len + 5, data, len);
  c->out_len += 5 + len;
  return true;
}

static bool flush(skn_pmi_server *s, conn *c) {
  while (c->out_sent < c->out_len) {
    ssize_t w = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EAGAIN || errno == EINTR) return true;
      drop(s, c);
      return false;
    }
    c->out_sent += (size_t)w;
  }
  c->out_len = c->out_sent = 0;
  return true;
}

static void free_list(kv *e) {
  while (e) {
    kv *n = e->next;
    free(e);
    e = n;
  }
}

static kv *find(kv *list, const char *key) {
  for (; list; list = list->next)
    if (!strcmp(list->key, key)) return list;
  return NULL;
}

/* Unlinks and frees the entry with this key, if any. */
static void remove_key(kv **list, const char *key) {
  for (kv **p = list; *p; p = &(*p)->next)
    if (!strcmp((*p)->key, key)) {
      kv *e = *p;
      *p = e->next;
      free(e);
      return;
    }
}

static void complete_fence(skn_pmi_server *s) {
  for (int p = 0; p < s->nprocs; p++) {
    proc_state *ps = &s->procs[p];
    while (ps->pending) {
      kv *e = ps->pending;
      ps->pending = e->next;
      remove_key(&ps->published, e->key);
      e->next = ps->published;
      ps->published = e;
    }
    ps->in_fence = false;
  }
  s->fenced = 0;
  /* Answer every process's connection. */
  for (int i = 0; i < s->nconns; i++)
    if (s->conns[i].fd >= 0 && s->conns[i].proc >= 0) (void)answer(s, &s->conns[i], SKN_PMI_FENCED, NULL, 0);
}

static bool secret_ok(const skn_pmi_server *s, const unsigned char *given) {
  unsigned char diff = 0; /* constant time: no early exit on the first wrong byte */
  for (int i = 0; i < SKN_PMI_SECRET_LEN; i++) diff |= (unsigned char)(given[i] ^ (unsigned char)s->secret[i]);
  return diff == 0;
}

/* Handles one complete frame. Returns false if the connection was dropped. */
static bool handle_frame(skn_pmi_server *s, conn *c, const unsigned char *b, size_t n) {
  char why[160];
  uint8_t op = b[0];
  if (c->proc < 0) {
    if (op != SKN_PMI_HELLO || n != HELLO_LEN) {
      refuse(s, c, "did not start with a well-formed hello");
      return false;
    }
    uint32_t proc;
    memcpy(&proc, b + 1, 4);
    if (!secret_ok(s, b + 5)) {
      refuse(s, c, "wrong secret");
      return false;
    }
    if (proc >= (uint32_t)s->nprocs) {
      snprintf(why, sizeof why, "process index %u out of range [0, %d)", proc, s->nprocs);
      refuse(s, c, why);
      return false;
    }
    if (s->procs[proc].seen) {
      snprintf(why, sizeof why, "process %u has already connected", proc);
      refuse(s, c, why);
      return false;
    }
    s->procs[proc].seen = true;
    c->proc = (int)proc;
    return answer(s, c, SKN_PMI_WELCOME, NULL, 0);
  }
  proc_state *ps = &s->procs[c->proc];
  switch (op) {
  case SKN_PMI_PUT: {
    uint16_t klen;
    if (n < 3) break;
    memcpy(&klen, b + 1, 2);
    if (n < 3u + klen || !skn_pmi_key_ok((const char *)b + 3, klen)) {
      refuse(s, c, "put with a malformed key");
      return false;
    }
    size_t vlen = n - 3 - klen;
    if (vlen > SKN_PMI_VALUE_MAX) break;
    kv *e = malloc(sizeof *e + vlen);
    if (!e) {
      refuse(s, c, "out of memory for a put");
      return false;
    }
    memcpy(e->key, b + 3, klen);
    e->key[klen] = '\0';
    e->len = vlen;
    memcpy(e->value, b + 3 + klen, vlen);
    remove_key(&ps->pending, e->key);
    e->next = ps->pending;
    ps->pending = e;
    return true;
  }
  case SKN_PMI_FENCE:
    if (n != 1) break;
    if (ps->in_fence) {
      refuse(s, c, "joined the same fence twice");
      return false;
    }
    ps->in_fence = true;
    if (++s->fenced == s->nprocs) complete_fence(s);
    return c->fd >= 0;
  case SKN_PMI_GET: {
    if (n < 6) break;
    uint32_t proc;
    memcpy(&proc, b + 1, 4);
    size_t klen = n - 5;
    if (proc >= (uint32_t)s->nprocs || !skn_pmi_key_ok((const char *)b + 5, klen)) {
      refuse(s, c, "get with a bad process index or key");
      return false;
    }
    char key[SKN_PMI_KEY_MAX + 1];
    memcpy(key, b + 5, klen);
    key[klen] = '\0';
    kv *e = find(s->procs[proc].published, key);
    return e ? answer(s, c, SKN_PMI_VALUE, e->value, e->len) : answer(s, c, SKN_PMI_MISSING, NULL, 0);
  }
  case SKN_PMI_ABORT: {
    if (n < 5) break;
    int32_t code;
    memcpy(&code, b + 1, 4);
    char msg[512];
    size_t m = n - 5 < sizeof msg - 1 ? n - 5 : sizeof msg - 1;
    for (size_t i = 0; i < m; i++) { /* printable only: it goes to the user's terminal */
      unsigned char ch = b[5 + i];
      msg[i] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    msg[m] = '\0';
    int proc = c->proc;
    if (answer(s, c, SKN_PMI_ACK, NULL, 0)) (void)flush(s, c);
    s->on_abort(s->ctx, proc, code, msg);
    return c->fd >= 0;
  }
  case SKN_PMI_FINALIZE:
    if (n != 1) break;
    return answer(s, c, SKN_PMI_ACK, NULL, 0);
  default:
    snprintf(why, sizeof why, "unknown opcode %u", op);
    refuse(s, c, why);
    return false;
  }
  snprintf(why, sizeof why, "malformed message (opcode %u, %zu bytes)", op, n);
  refuse(s, c, why);
  return false;
}

/* Reads what is available. Returns false if the connection was dropped. */
static bool readable(skn_pmi_server *s, conn *c) {
  for (int rounds = 0; rounds < 64; rounds++) { /* bounded: one client cannot starve others */
    unsigned char *dst;
    size_t want;
    if (!c->body) {
      dst = c->hdr + c->hdr_have;
      want = 4 - c->hdr_have;
    } else {
      dst = c->body + c->body_have;
      want = c->body_len - c->body_have;
    }
    ssize_t r = recv(c->fd, dst, want, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    if (r <= 0) {
      if (c->proc < 0 || c->hdr_have || c->body) {
        refuse(s, c, r < 0 ? strerror(errno) : c->hdr_have || c->body ? "closed in the middle of a message"
                                                                      : "closed without a hello");
      } else {
        drop(s, c); /* a process leaving (finalized, or exiting: its exit is what counts) */
      }
      return false;
    }
    if (!c->body) {
      c->hdr_have += (size_t)r;
      if (c->hdr_have < 4) continue;
      uint32_t n;
      memcpy(&n, c->hdr, 4);
      /* Check the length before allocating: a stranger may announce only a hello. */
      uint32_t max = c->proc < 0 ? HELLO_LEN : SKN_PMI_FRAME_MAX;
      if (n < 1 || n > max) {
        char why[96];
        snprintf(why, sizeof why, "message of %u bytes (at most %u allowed here)", n, max);
        refuse(s, c, why);
        return false;
      }
      c->body = malloc(n);
      if (!c->body) {
        refuse(s, c, "out of memory");
        return false;
      }
      c->body_len = n;
      c->body_have = 0;
    } else {
      c->body_have += (size_t)r;
      if (c->body_have < c->body_len) continue;
      unsigned char *b = c->body;
      size_t n = c->body_len;
      c->body = NULL;
      c->hdr_have = 0;
      bool alive = handle_frame(s, c, b, n);
      free(b);
      if (!alive || c->fd < 0) return false;
    }
  }
  return true;
}

/* When MAX_STRANGERS connections wait for a hello, new ones stay in the kernel's backlog
   until the oldest has been silent for EVICT_AGE_MS and is dropped: the job's processes,
   which say hello at once, are delayed by a flood of idle strangers but never refused. */
static bool room(skn_pmi_server *s, uint64_t now) {
  const conn *old;
  while (strangers(s, &old) >= MAX_STRANGERS) {
    if (now < old->deadline - AUTH_TIMEOUT_MS + EVICT_AGE_MS) return false;
    conn *c = (conn *)old;
    if (readable(s, c) && c->fd >= 0 && c->proc < 0)
      refuse(s, c, "too many connections waiting for a hello (dropped the oldest)");
    compact(s);
  }
  return true;
}

static void accept_all(skn_pmi_server *s) {
  while (room(s, now_ms())) {
    int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return; /* EAGAIN, or a transient error: poll tells us again */
    s->conns[s->nconns++] = (conn){.fd = fd, .proc = -1, .id = ++s->next_id, .deadline = now_ms() + AUTH_TIMEOUT_MS};
  }
}

void skn_pmi_server_handle(skn_pmi_server *s, const struct pollfd *fds, int n) {
  /* Connections are found by fd: one that closed during this round is not reused. */
  for (int k = 1; k < n; k++) {
    if (!fds[k].revents) continue;
    conn *c = NULL;
    for (int i = 0; i < s->nconns; i++)
      if (s->conns[i].fd == fds[k].fd) c = &s->conns[i];
    if (!c) continue;
    if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) && !readable(s, c)) continue;
    (void)flush(s, c);
  }
  /* Answers queued for other connections (a completed fence) go out now if they can. */
  for (int i = 0; i < s->nconns; i++)
    if (s->conns[i].fd >= 0 && s->conns[i].out_len) (void)flush(s, &s->conns[i]);
  uint64_t now = now_ms();
  for (int i = 0; i < s->nconns; i++) {
    conn *c = &s->conns[i];
    if (c->fd >= 0 && c->proc < 0 && now >= c->deadline) refuse(s, c, "no hello within 10 s");
  }
  compact(s);
  accept_all(s); /* nonblocking: also after room was made without a poll event */
}

int skn_pmi_server_timeout_ms(const skn_pmi_server *s) {
  uint64_t next = UINT64_MAX, now = now_ms();
  for (int i = 0; i < s->nconns; i++)
    if (s->conns[i].fd >= 0 && s->conns[i].proc < 0 && s->conns[i].deadline < next) next = s->conns[i].deadline;
  const conn *old;
  if (strangers(s, &old) >= MAX_STRANGERS && old->deadline - AUTH_TIMEOUT_MS + EVICT_AGE_MS < next)
    next = old->deadline - AUTH_TIMEOUT_MS + EVICT_AGE_MS; /* when room() can evict */
  if (next == UINT64_MAX) return -1;
  return next <= now ? 0 : (int)(next - now) + 1; /* +1: poll may wake a little early */
}

void skn_pmi_server_proc_exited(skn_pmi_server *s, int proc) { s->procs[proc].gone = true; }

int skn_pmi_server_fence_stuck(const skn_pmi_server *s) {
  if (s->fenced == 0) return -1;
  for (int p = 0; p < s->nprocs; p++)
    if (s->procs[p].gone && !s->procs[p].in_fence) return p;
  return -1;
}

void skn_pmi_server_destroy(skn_pmi_server *s) {
  for (int i = 0; i < s->nconns; i++)
    if (s->conns[i].fd >= 0) drop(s, &s->conns[i]);
  close(s->listen_fd);
  unlink(s->path);
  for (int p = 0; p < s->nprocs; p++) {
    free_list(s->procs[p].published);
    free_list(s->procs[p].pending);
  }
  free(s->procs);
  free(s->conns);
  free(s);
}
