/* MPI-IO engine: maps file views onto byte ranges, moves data between typed memory and a
 * file descriptor (independent access), aggregates the pieces of a collective access
 * through the shared address space, and runs nonblocking accesses on a small pool of I/O
 * threads. Knows no MPI handle or error class: results are 0 or a negative errno; the
 * API layer (api/file.c) translates them.
 * Thread safety: the mapping and access functions touch only their arguments; the
 * collective ones are called by every member of the communicator they are given. */
#ifndef SKN_IO_H
#define SKN_IO_H

#include <stdint.h>
#include <sys/types.h>

#include "core/core.h"

/* One contiguous file range of an access and where its data sits in the access's data
 * stream (the memory buffer seen as packed bytes). Lists are in stream order; file
 * offsets never decrease (MPI requires monotone filetypes). */
typedef struct skn_io_piece {
  int64_t off, len, spos;
} skn_io_piece;

typedef struct skn_io_pieces {
  skn_io_piece *p;
  size_t n, cap;
} skn_io_pieces;

/* A file view: the filetype tiles the file from disp; data positions count the
 * filetype's data bytes. */
typedef struct skn_io_view {
  int64_t disp;
  const skn_dtype *ftype;
} skn_io_view;

/* Appends the file ranges of the view's data bytes [spos, spos + bytes) to *out (adjacent
 * ranges merged), their stream positions starting at `base`. 0 or -ENOMEM. */
SKN_INTERNAL int skn_io_map(const skn_io_view *v, int64_t spos, int64_t bytes, int64_t base, skn_io_pieces *out);
/* File offset of the view's data byte spos. */
SKN_INTERNAL int64_t skn_io_byte_offset(const skn_io_view *v, int64_t spos);
SKN_INTERNAL void skn_io_pieces_free(skn_io_pieces *ps);

/* Writes or reads exactly len bytes at off: a short write is -ENOSPC, never success;
 * reads stop at end of file (*got says how far they came). 0 or -errno. */
SKN_INTERNAL int skn_io_pwrite_full(int fd, const void *buf, size_t len, int64_t off);
SKN_INTERNAL int skn_io_pread_full(int fd, void *buf, size_t len, int64_t off, size_t *got);

/* Independent access: moves the data stream of (buf, mt) to or from the listed pieces.
 * Memory that is contiguous goes straight to the system call; a derived memory type is
 * packed through a bounce buffer of at most `bounce` bytes, and small pieces of a read
 * are fetched with one read of their span (data sieving). *moved is the stream bytes
 * transferred (less than requested only for reads at end of file). 0 or -errno. */
SKN_INTERNAL int skn_io_rw(int fd, bool write, const skn_io_piece *p, size_t n, void *buf, const skn_dtype *mt,
                           size_t bounce, int64_t *moved);

/* One member's part of a collective access. */
typedef struct skn_io_part {
  const skn_io_piece *p;
  size_t n;
  void *buf;
  const skn_dtype *mt;
  /* filled by the collective */
  int err;           /* as aggregator: first error, 0 when none */
  int64_t eof_at;    /* as aggregator: lowest offset a read found beyond end of file, or -1 */
} skn_io_part;

typedef struct skn_io_coll_hints {
  int aggregators;       /* per process; 0: one (local file systems serialize writers of a file) */
  size_t buffer;         /* bytes an aggregator moves per system call, at most */
  size_t align;          /* file domain boundaries */
  /* the caller's aggregation buffer, kept between calls (grown as needed; the caller
   * frees it): a fresh one would cost its page faults every call */
  void **cache;
  size_t *cache_len;
} skn_io_coll_hints;

/* Two-phase collective access without messages: every member of `local` (the ranks of
 * this process; c->x->local for communicators spanning processes) publishes its part;
 * a few aggregator members split the union of the file ranges into domains and, chunk by
 * chunk, copy the members' data straight between their buffers and one aggregation
 * buffer (datatype engine, no packing) and issue one system call per covered run (writes
 * never touch bytes no member writes, so processes need not coordinate) or one read of
 * the chunk's span. Returns 0 or the first aggregator's -errno; *moved is the caller's
 * stream bytes transferred (reads stop at end of file). */
SKN_INTERNAL int skn_io_coll(skn_comm *local, int lrank, int fd, bool write, skn_io_part *mine,
                             const skn_io_coll_hints *h, int64_t *moved);

/* Nonblocking accesses: `run` is called on an I/O thread (never a rank: no MPI, no
 * per-rank state), then `done`. The pool starts on first use with SKEIN_IO_THREADS
 * threads (default 2). */
typedef struct skn_io_task {
  struct skn_io_task *next;
  void (*run)(struct skn_io_task *t);
} skn_io_task;
SKN_INTERNAL int skn_io_submit(skn_io_task *t);

#endif
