/* Loading the UCX transport module of multi-process jobs (remote.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote.h"

/* libskein-ucx.so lives in lib/skein/ beside libskein.so (build tree and install alike). */
const skn_net_module *skn_remote_load_module(void) {
  Dl_info self;
  char path[4096];
  const char *override = getenv("SKEIN_NET_MODULE");
  if (override) {
    snprintf(path, sizeof path, "%s", override);
  } else {
    if (!dladdr((void *)skn_remote_load_module, &self) || !self.dli_fname) skn_fatal("cannot find libskein's own path");
    snprintf(path, sizeof path, "%s", self.dli_fname);
    char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    snprintf(path + dir, sizeof path - dir, "skein/libskein-ucx.so");
  }
  /* Crashes are Skein's to report (rank, call, stack overflow): keep UCX's own SIGSEGV
   * handler out unless the user asks for it. */
  setenv("UCX_ERROR_SIGNALS", "", 0);
#ifdef __SANITIZE_THREAD__
  /* UCX's libucm patches mmap, munmap and madvise process-wide to track memory for its
   * registration caches; over libtsan's interceptors every multi-process job ended with
   * SIGSEGV after the program's end. The tcp transport needs no registration cache. */
  setenv("UCX_MEM_MMAP_HOOK_MODE", "none", 0);
  setenv("UCX_MEM_MALLOC_HOOKS", "no", 0);
  setenv("UCX_MEM_EVENTS", "no", 0);
#endif
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) skn_fatal("cannot load the UCX transport for a multi-process job: %s", dlerror());
  const skn_net_module *m = dlsym(h, SKN_NET_MODULE_SYMBOL);
  if (!m || m->abi != SKN_NET_MODULE_ABI) skn_fatal("%s is not a transport of this Skein version", path);
  return m;
}
