/* Wire format of skeinrun's key-value service (server.c) and its client (pmi_skein.c).
 * A stream of frames over a Unix socket: a 4-byte body length in host byte order (both
 * ends are on one machine), then the body: one opcode byte and its fields. Anything that
 * does not parse exactly is refused and the connection closed. */
#ifndef SKN_PMI_PROTO_H
#define SKN_PMI_PROTO_H

#include <stdint.h>

#include "pmi/pmi.h"

#define SKN_PMI_SECRET_LEN 32 /* hex characters of the job's secret (128 random bits) */

/* Environment that skeinrun gives each process it starts. */
#define SKN_PMI_ENV_ADDR "SKEIN_PMI_ADDR"     /* path of the service's Unix socket */
#define SKN_PMI_ENV_SECRET "SKEIN_PMI_SECRET" /* the job's secret, SKN_PMI_SECRET_LEN hex */

/* Largest body: a put of the largest value with the longest key. */
#define SKN_PMI_FRAME_MAX (1u + 2u + SKN_PMI_KEY_MAX + SKN_PMI_VALUE_MAX)

enum skn_pmi_op {
  /* client -> server */
  SKN_PMI_HELLO = 1,    /* u32 proc, char secret[SKN_PMI_SECRET_LEN]; first frame, once */
  SKN_PMI_PUT = 2,      /* u16 keylen, key, value (the rest of the body) */
  SKN_PMI_FENCE = 3,    /* (nothing) */
  SKN_PMI_GET = 4,      /* u32 proc, key (the rest of the body) */
  SKN_PMI_ABORT = 5,    /* i32 code, message (the rest of the body, not NUL-terminated) */
  SKN_PMI_FINALIZE = 6, /* (nothing) */
  /* server -> client */
  SKN_PMI_WELCOME = 64, /* answers HELLO */
  SKN_PMI_FENCED = 65,  /* answers FENCE once every process has fenced */
  SKN_PMI_VALUE = 66,   /* answers GET: the value (the rest of the body) */
  SKN_PMI_MISSING = 67, /* answers GET: no such key */
  SKN_PMI_ACK = 68,     /* answers ABORT and FINALIZE */
};

/* Key syntax shared by every backend. */
static inline int skn_pmi_key_ok(const char *key, size_t len) {
  if (len == 0 || len > SKN_PMI_KEY_MAX) return 0;
  for (size_t i = 0; i < len; i++) {
    char c = key[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '.' || c == '-'))
      return 0;
  }
  return 1;
}

#endif
