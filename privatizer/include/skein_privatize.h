/* Skein privatizer: what user code and privatized sources see.
 *
 * SKEIN_SHARED marks a global that all ranks of a process share (the privatizer leaves it
 * alone). It puts the global in section skn_shared, which tells the wrappers' link-time
 * check and the start-up check of unprivatized programs that sharing is meant; it expands
 * to nothing for other compilers.
 *
 * The rest is the interface between sources rewritten by skein-privatize, the per-module
 * stub (skein_priv_stub.o, linked by the wrappers) and libskein. Not for hand-written code. */
#ifndef SKEIN_PRIVATIZE_H
#define SKEIN_PRIVATIZE_H

#if defined(__clang__)
#define SKEIN_SHARED __attribute__((annotate("skein_shared"), section("skn_shared")))
#elif defined(__GNUC__)
#define SKEIN_SHARED __attribute__((section("skn_shared")))
#else
#define SKEIN_SHARED
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SKEIN_PRIV_ABI 3

/* One module (the executable or a shared library) with privatized globals. Its initialized
 * privatized globals live in section skn_pdata, zero-initialized ones in skn_pbss (NOBITS),
 * and per-rank init hooks (pointers to functions) in skn_pinit. A rank's copy of the module
 * mirrors [lo, hi), the pages that hold both sections, at a constant offset (delta). */
typedef struct skein_priv_module {
  int abi;
  int id; /* set by skein_priv_register */
  char *data_start, *data_end, *bss_start, *bss_end;
  void (*const *init_start)(void), (*const *init_end)(void);
  /* The stub's fast path, published by libskein when it registers the module, so that no
   * layout of libskein is compiled into user programs: the calling rank's delta is
   *   unit  = *(char **)(%fs + tls_off)        (the running user-level thread; NULL outside)
   *   rank  = *(char **)(unit + owner_off)     (its rank; NULL for the runtime's own)
   *   table = *(char **)(rank + priv_off)      (the rank's privatized state; NULL before it)
   *   delta = *(long *)(table + slot_off)      (0 until the module is mapped for the rank)
   * and anything else (a NULL, tls_off 0 where there is no fast path) is answered by
   * skein_priv_delta(). All four are constant for the life of the process. */
  long tls_off, owner_off, priv_off, slot_off;
} skein_priv_module;

/* Called by the stub's constructor, before main. */
void skein_priv_register(skein_priv_module *m);
/* Address of the calling rank's copy of a privatized object minus its address in the
 * module: 0 outside ranks (start-up code, the runtime's own threads). Constant for a
 * running piece of code, since ranks never change identity. */
long skein_priv_delta(skein_priv_module *m);
/* The calling rank's copy of the object at addr (size bytes), made from the object's
 * current bytes on first use; addr itself outside ranks. For objects that cannot live in
 * the sections (template instantiations). */
void *skein_priv_addr(void *addr, unsigned long size);
/* The same for a thread_local object, but only on a rank's own user-level thread (whose
 * kernel thread, and so its TLS, is shared with other ranks); threads a rank creates
 * have TLS of their own and get addr back. */
void *skein_priv_tls(void *addr, unsigned long size);
/* The calling rank's object for the C++ static local whose key is `key`, zeroed and
 * aligned; *fresh is 1 for the caller that must construct it (once per rank). */
void *skein_priv_local(void *key, unsigned long size, unsigned long align, int *fresh);
/* Runs fn(arg) when the calling rank ends, in reverse order of registration (C++
 * destructors of per-rank objects). Outside ranks: at process exit. */
void skein_priv_atexit(void (*fn)(void *), void *arg);

#ifdef __cplusplus
}
#endif
#endif
