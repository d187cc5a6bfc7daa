/* PMI-1 wire protocol on the socket PMI_FD that the launcher passes (Slurm's
 * srun --mpi=pmi2 serves it, and so does MPICH's hydra): text lines "cmd=... key=value".
 * No library needed. The key space is one per job, so keys become "<proc>.<key>"; values
 * are hex-encoded and split into parts that fit the server's line and value limits:
 * part 0 is "<length>:<parts>:<hex>", part i > 0 is key "<proc>.<key>.<i>". */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

#define LINE_MAX_ 1024 /* hydra's and Slurm's line limit (PMIU_MAXLINE) */

static int fd = -1;
static char kvsname[256];
static int keylen_max = 64, vallen_max = 256;
static int self_rank;
static int *node_of_proc; /* from PMI_process_mapping, or NULL: every process alone */

static int send_line(const char *line) {
  size_t n = strlen(line), done = 0;
  while (done < n) {
    ssize_t w = write(fd, line + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      skn_log("PMI: lost the PMI-1 connection (PMI_FD): %s", strerror(errno));
      return SKN_PMI_ERR;
    }
    done += (size_t)w;
  }
  return SKN_PMI_OK;
}

/* Reads one line (without its newline) into buf. */
static int recv_line(char *buf, size_t cap) {
  size_t n = 0;
  for (;;) {
    char ch;
    ssize_t r = read(fd, &ch, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      skn_log("PMI: lost the PMI-1 connection (PMI_FD): %s", r ? strerror(errno) : "closed");
      return SKN_PMI_ERR;
    }
    if (ch == '\n') break;
    if (n + 1 >= cap) {
      skn_log("PMI: PMI-1 answer longer than %zu bytes", cap);
      return SKN_PMI_ERR;
    }
    buf[n++] = ch;
  }
  buf[n] = '\0';
  return SKN_PMI_OK;
}

/* Value of field `name` in a "cmd=x a=b c=d" line, copied into out. */
static bool field(const char *line, const char *name, char *out, size_t cap) {
  size_t nl = strlen(name);
  for (const char *p = line; *p;) {
    while (*p == ' ') p++;
    const char *end = p + strcspn(p, " ");
    if ((size_t)(end - p) > nl && !strncmp(p, name, nl) && p[nl] == '=') {
      size_t vl = (size_t)(end - p) - nl - 1;
      if (vl >= cap) return false;
      memcpy(out, p + nl + 1, vl);
      out[vl] = '\0';
      return true;
    }
    p = end;
  }
  return false;
}

/* Sends a command and receives its answer, which must be "cmd=<want> ...". */
static int call(const char *cmd, const char *want, char *ans, size_t cap) {
  if (send_line(cmd) != SKN_PMI_OK || recv_line(ans, cap) != SKN_PMI_OK) return SKN_PMI_ERR;
  char got[64];
  if (!field(ans, "cmd", got, sizeof got) || strcmp(got, want)) {
    skn_log("PMI: PMI-1 server answered '%.200s' to '%.*s'", ans, (int)strcspn(cmd, "\n"), cmd);
    return SKN_PMI_ERR;
  }
  return SKN_PMI_OK;
}

static bool rc_ok(const char *ans) {
  char rc[16];
  return !field(ans, "rc", rc, sizeof rc) || !strcmp(rc, "0");
}

/* PMI_process_mapping "(vector,(start,nodes,per_node),...)": blocks of processes per node,
 * repeated until every process is placed (MPICH's convention). */
static bool parse_mapping(const char *m, int nprocs, int *node_of, int *nnodes) {
  int triples[64][3], nt = 0;
  const char *p = strstr(m, "vector,");
  if (!p) return false;
  p += 7;
  while (nt < 64 && (p = strchr(p, '('))) {
    if (sscanf(p, "(%d,%d,%d)", &triples[nt][0], &triples[nt][1], &triples[nt][2]) != 3) return false;
    if (triples[nt][0] < 0 || triples[nt][1] < 1 || triples[nt][2] < 1) return false;
    nt++;
    p++;
  }
  if (nt == 0) return false;
  int proc = 0, maxnode = 0;
  while (proc < nprocs)
    for (int t = 0; t < nt && proc < nprocs; t++)
      for (int n = 0; n < triples[t][1] && proc < nprocs; n++)
        for (int k = 0; k < triples[t][2] && proc < nprocs; k++) {
          node_of[proc++] = triples[t][0] + n;
          if (triples[t][0] + n > maxnode) maxnode = triples[t][0] + n;
        }
  *nnodes = maxnode + 1;
  return true;
}

static int wire_init(skn_pmi_info *info) {
  int rank, size;
  if (skn_pmi_env_int("PMI_FD", &fd) != 1 || skn_pmi_env_int("PMI_RANK", &rank) != 1 ||
      skn_pmi_env_int("PMI_SIZE", &size) != 1 || size < 1 || rank >= size) {
    skn_log("PMI: PMI_FD, PMI_RANK and PMI_SIZE must all be set (PMI-1 launcher)");
    return SKN_PMI_ERR;
  }
  char ans[LINE_MAX_], v[256];
  if (call("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", ans, sizeof ans) != SKN_PMI_OK)
    return SKN_PMI_ERR;
  if (!rc_ok(ans)) {
    skn_log("PMI: the launcher refused PMI-1 init: %s", ans);
    return SKN_PMI_ERR;
  }
  if (call("cmd=get_maxes\n", "maxes", ans, sizeof ans) != SKN_PMI_OK) return SKN_PMI_ERR;
  if (field(ans, "keylen_max", v, sizeof v)) keylen_max = atoi(v);
  if (field(ans, "vallen_max", v, sizeof v)) vallen_max = atoi(v);
  if (keylen_max < 16 || vallen_max < 32) {
    skn_log("PMI: PMI-1 limits too small: %s", ans);
    return SKN_PMI_ERR;
  }
  if (call("cmd=get_my_kvsname\n", "my_kvsname", ans, sizeof ans) != SKN_PMI_OK ||
      !field(ans, "kvsname", kvsname, sizeof kvsname)) {
    skn_log("PMI: no kvsname from the PMI-1 launcher");
    return SKN_PMI_ERR;
  }
  self_rank = rank;
  info->proc = rank;
  info->nprocs = size;
  /* Node layout: the launcher's process mapping, else every process counts as alone on
     its node (the safe assumption: nothing shared between processes). */
  node_of_proc = malloc((size_t)size * sizeof *node_of_proc);
  if (!node_of_proc) return SKN_PMI_ERR;
  char cmd[LINE_MAX_], map[LINE_MAX_];
  snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s key=PMI_process_mapping\n", kvsname);
  int nnodes = 0;
  if (call(cmd, "get_result", ans, sizeof ans) != SKN_PMI_OK) return SKN_PMI_ERR;
  if (!(rc_ok(ans) && field(ans, "value", map, sizeof map) && parse_mapping(map, size, node_of_proc, &nnodes))) {
    for (int p = 0; p < size; p++) node_of_proc[p] = p;
    nnodes = size;
  }
  info->node = node_of_proc[rank];
  info->nnodes = nnodes;
  info->local_proc = 0;
  info->local_nprocs = 0;
  for (int p = 0; p < size; p++)
    if (node_of_proc[p] == info->node) {
      if (p < rank) info->local_proc++;
      info->local_nprocs++;
    }
  return SKN_PMI_OK;
}

/* Bytes of hex that fit in one put line with this key. */
static size_t part_room(size_t keylen) {
  size_t line = LINE_MAX_ - 48 - strlen(kvsname) - keylen; /* "cmd=put kvsname= key= value=\n" + slack */
  size_t room = line < (size_t)vallen_max - 1 ? line : (size_t)vallen_max - 1;
  return room - 24; /* part 0 also carries "<length>:<parts>:" */
}

static int wire_put(const char *key, const void *value, size_t len) {
  char base[SKN_PMI_KEY_MAX + 16];
  snprintf(base, sizeof base, "%d.%s", self_rank, key);
  if (strlen(base) + 6 > (size_t)keylen_max) {
    skn_log("PMI: key %s too long for this PMI-1 launcher (at most %d characters with prefixes)", key,
            keylen_max - 14);
    return SKN_PMI_INVAL;
  }
  size_t room = part_room(strlen(base) + 6) & ~(size_t)1; /* whole bytes per part */
  size_t per = room / 2, nparts = len ? (len + per - 1) / per : 1;
  const unsigned char *b = value;
  static const char hexd[] = "0123456789abcdef";
  char line[LINE_MAX_ + 64], ans[LINE_MAX_];
  for (size_t i = 0; i < nparts; i++) {
    int n = i == 0 ? snprintf(line, sizeof line, "cmd=put kvsname=%s key=%s value=%zu:%zu:", kvsname, base, len, nparts)
                   : snprintf(line, sizeof line, "cmd=put kvsname=%s key=%s.%zu value=", kvsname, base, i);
    size_t off = i * per, end = off + per < len ? off + per : len;
    for (size_t j = off; j < end; j++) {
      line[n++] = hexd[b[j] >> 4];
      line[n++] = hexd[b[j] & 15];
    }
    if (off == end) line[n++] = '-'; /* empty value: PMI values may not be empty */
    line[n++] = '\n';
    line[n] = '\0';
    if (call(line, "put_result", ans, sizeof ans) != SKN_PMI_OK) return SKN_PMI_ERR;
    if (!rc_ok(ans)) {
      skn_log("PMI: PMI-1 put of %s refused: %s", base, ans);
      return SKN_PMI_ERR;
    }
  }
  return SKN_PMI_OK;
}

static int wire_fence(void) {
  char ans[LINE_MAX_];
  return call("cmd=barrier_in\n", "barrier_out", ans, sizeof ans);
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Fetches one part's text into val. SKN_PMI_NOTFOUND if the key does not exist. */
static int get_part(const char *key, char *val, size_t cap) {
  char cmd[LINE_MAX_], ans[LINE_MAX_ + 64];
  snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s key=%s\n", kvsname, key);
  if (call(cmd, "get_result", ans, sizeof ans) != SKN_PMI_OK) return SKN_PMI_ERR;
  if (!rc_ok(ans)) return SKN_PMI_NOTFOUND;
  if (!field(ans, "value", val, cap)) {
    skn_log("PMI: PMI-1 get of %s: answer without a value", key);
    return SKN_PMI_ERR;
  }
  return SKN_PMI_OK;
}

static int unhex(const char *s, unsigned char *out, size_t max, size_t *n) {
  if (!strcmp(s, "-")) {
    *n = 0;
    return SKN_PMI_OK;
  }
  size_t l = strlen(s);
  if (l % 2 || l / 2 > max) return SKN_PMI_ERR;
  for (size_t i = 0; i < l; i += 2) {
    int hi = hexval(s[i]), lo = hexval(s[i + 1]);
    if (hi < 0 || lo < 0) return SKN_PMI_ERR;
    out[i / 2] = (unsigned char)(hi << 4 | lo);
  }
  *n = l / 2;
  return SKN_PMI_OK;
}

static int wire_get(int proc, const char *key, void **value, size_t *len) {
  char base[SKN_PMI_KEY_MAX + 16], k[SKN_PMI_KEY_MAX + 48], val[LINE_MAX_ + 64];
  snprintf(base, sizeof base, "%d.%s", proc, key);
  int rc = get_part(base, val, sizeof val);
  if (rc != SKN_PMI_OK) return rc;
  size_t total, nparts;
  int pos = 0;
  if (sscanf(val, "%zu:%zu:%n", &total, &nparts, &pos) != 2 || pos == 0 || total > SKN_PMI_VALUE_MAX ||
      nparts < 1 || nparts > total + 1) {
    skn_log("PMI: PMI-1 value of %s is not Skein's encoding", base);
    return SKN_PMI_ERR;
  }
  unsigned char *out = malloc(total ? total : 1);
  if (!out) return SKN_PMI_ERR;
  size_t have = 0, n;
  for (size_t i = 0; i < nparts; i++) {
    if (i > 0) {
      snprintf(k, sizeof k, "%s.%zu", base, i);
      if ((rc = get_part(k, val, sizeof val)) != SKN_PMI_OK) goto bad;
      pos = 0;
    }
    if (unhex(val + pos, out + have, total - have, &n) != SKN_PMI_OK) goto bad;
    have += n;
  }
  if (have != total) goto bad;
  *value = out;
  *len = total;
  return SKN_PMI_OK;
bad:
  free(out);
  skn_log("PMI: PMI-1 value of %s is incomplete or corrupt", base);
  return SKN_PMI_ERR;
}

static int wire_node_of(int proc) { return node_of_proc ? node_of_proc[proc] : -1; }

static void wire_abort(int code, const char *msg) {
  char line[LINE_MAX_];
  /* PMI-1's abort carries no message: pmi.c has printed it */
  snprintf(line, sizeof line, "cmd=abort exitcode=%d\n", code);
  if (send_line(line) != SKN_PMI_OK) return;
  struct pollfd pfd = {fd, POLLIN, 0};
  (void)poll(&pfd, 1, 5000); /* the launcher kills us; do not race it to our own exit */
}

static int wire_finalize(void) {
  char ans[LINE_MAX_];
  int rc = call("cmd=finalize\n", "finalize_ack", ans, sizeof ans);
  free(node_of_proc);
  node_of_proc = NULL;
  return rc;
}

const skn_pmi_backend skn_pmi_wire_backend = {
    .name = "pmi1",
    .init = wire_init,
    .put = wire_put,
    .fence = wire_fence,
    .get = wire_get,
    .node_of = wire_node_of,
    .abort = wire_abort,
    .finalize = wire_finalize,
};
