/* The request skein-privatize-client sends to `skein-privatize --serve` (client.c,
 * server.cpp): this header, with the client's fds 0, 1, 2 attached (SCM_RIGHTS), then
 * `len` bytes of NUL-terminated strings: the directory, `argc` arguments (the tool's path
 * first), `nenv` environment entries. The server answers 'S' when a child has taken the
 * request, then an int32 status: the exit code, or 256 + the signal that ended the tool. */
#ifndef SKN_PRIVD_PROTO_H
#define SKN_PRIVD_PROTO_H
#include <stdint.h>

#define SKN_PRIVD_MAGIC 0x736b7032u /* "skp2" */

struct skn_privd_request {
  uint32_t magic, len, argc, nenv, umask;
};

#endif
