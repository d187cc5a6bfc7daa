/* Per-module stub of the privatizer, linked by `mpicc -fprivatize` into each executable
 * and shared library: registers the module's privatized sections with libskein before
 * main and provides __skn_priv_delta(), the accessor rewritten sources call. Every symbol
 * here is hidden, so each module reaches its own sections. All it knows of libskein is
 * skein_privatize.h: the accessor's path to the rank's delta is published at registration. */
#include <stddef.h>

#include "skein_privatize.h"

#define HIDDEN __attribute__((visibility("hidden")))

/* Anchors: each section exists even in a module that has none of its kind. The NOBITS
 * trick ends gcc's section directive with our own type and comments out the rest. */
static char anchor_data __attribute__((section("skn_pdata"), used)) = 1;
static char anchor_bss __attribute__((section("skn_pbss,\"aw\",@nobits#"), used));
static void (*const anchor_init)(void) __attribute__((section("skn_pinit"), used)) = 0;

extern char __start_skn_pdata[] HIDDEN, __stop_skn_pdata[] HIDDEN;
extern char __start_skn_pbss[] HIDDEN, __stop_skn_pbss[] HIDDEN;
extern void (*const __start_skn_pinit[])(void) HIDDEN;
extern void (*const __stop_skn_pinit[])(void) HIDDEN;

static skein_priv_module module;

/* Priority 101: before the module's other constructors, which may use its globals. */
__attribute__((constructor(101))) static void skn_priv_stub_register(void) {
  module.abi = SKEIN_PRIV_ABI;
  module.data_start = __start_skn_pdata;
  module.data_end = __stop_skn_pdata;
  module.bss_start = __start_skn_pbss;
  module.bss_end = __stop_skn_pbss;
  module.init_start = __start_skn_pinit;
  module.init_end = __stop_skn_pinit;
  (void)anchor_data;
  (void)anchor_bss;
  (void)anchor_init;
  skein_priv_register(&module);
}

HIDDEN __attribute__((const)) long __skn_priv_delta(void);
/* The rank's delta in a few loads along the path libskein published (skein_priv_module);
 * anything unusual (outside a rank, a module mapped late, a rank that has ended) goes to
 * libskein. */
HIDDEN __attribute__((const)) long __skn_priv_delta(void) {
#if defined(__x86_64__)
  if (__builtin_expect(module.tls_off != 0, 1)) {
    char *unit;
    __asm__("movq %%fs:(%1), %0" : "=r"(unit) : "r"(module.tls_off));
    if (!unit) return 0;
    char *rank = *(char **)(unit + module.owner_off);
    if (!rank) return 0;
    const char *table = *(const char **)(rank + module.priv_off);
    long d;
    if (__builtin_expect(table && (d = *(const long *)(table + module.slot_off)) != 0, 1)) return d;
  }
#endif
  return skein_priv_delta(&module);
}

HIDDEN __attribute__((const)) void *__skn_priv_addr(void *addr, unsigned long size);
HIDDEN __attribute__((const)) void *__skn_priv_addr(void *addr, unsigned long size) { return skein_priv_addr(addr, size); }
HIDDEN __attribute__((const)) void *__skn_priv_tls(void *addr, unsigned long size);
HIDDEN __attribute__((const)) void *__skn_priv_tls(void *addr, unsigned long size) { return skein_priv_tls(addr, size); }
