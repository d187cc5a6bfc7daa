/* Per-rank segments for privatized globals (see privatizer/README.md).
 *
 * A module's privatized globals sit in sections skn_pdata and skn_pbss; a rank's copy
 * mirrors the pages [lo, hi) that hold both, so one delta per (rank, module) relocates
 * every privatized object of the module. The copy is made from the live process image
 * at rank start (so constructors run before main are seen by every rank); pages of
 * skn_pbss that were never touched are left to demand paging, so a huge zero array costs
 * nothing per rank until the rank touches it. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skein_privatize.h"
#include "priv.h"

#define MAX_MODULES 256

typedef struct priv_exit {
  void (*fn)(void *);
  void *arg;
} priv_exit;

/* A rank's segments: delta[i] for module i (0 until mapped), base/len to unmap. */
/* Objects found by address (skein_priv_addr): open addressing, never shrinks. */
typedef struct priv_obj {
  void *addr, *copy;
} priv_obj;

typedef struct skn_priv_rank {
  long n;                  /* modules 0..n-1 are mapped (read by the stubs' fast path) */
  long delta[MAX_MODULES]; /* must follow n (skein_privatize.h) */
  skn_spinlock lock; /* objs: the rank's threads may look up concurrently */
  priv_obj *objs;
  size_t nobjs, cap_objs;
  char *base[MAX_MODULES];
  size_t len[MAX_MODULES];
  priv_exit *exits;
  int nexits, cap_exits;
} skn_priv_rank;

static struct {
  pthread_mutex_t lock;
  _Atomic(int) n;
  skein_priv_module *mods[MAX_MODULES];
  priv_exit *exits; /* outside ranks */
  int nexits, cap_exits;
} modules = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uintptr_t page_down(uintptr_t a) { return a & ~((uintptr_t)getpagesize() - 1); }
static uintptr_t page_up(uintptr_t a) { return page_down(a + (uintptr_t)getpagesize() - 1); }

SKN_EXPORT void skein_priv_register(skein_priv_module *m) {
  if (m->abi != SKEIN_PRIV_ABI)
    skn_fatal("privatizer: a module was built for privatizer ABI %d, this libskein has %d", m->abi, SKEIN_PRIV_ABI);
  pthread_mutex_lock(&modules.lock);
  int n = atomic_load(&modules.n);
  if (n == MAX_MODULES) skn_fatal("privatizer: more than %d modules with privatized globals", MAX_MODULES);
  m->id = n;
#if defined(__x86_64__)
  char *tp;
  __asm__("movq %%fs:0, %0" : "=r"(tp));
  m->tls_off = (long)((char *)&skn_sched_current_tls - tp);
#else
  m->tls_off = 0; /* no fast path: the stub calls skein_priv_delta */
#endif
  /* the rest of the stub's path (skein_privatize.h): layouts stay libskein's own */
  m->owner_off = (long)offsetof(skn_unit, owner);
  m->priv_off = (long)offsetof(skn_rank, priv);
  m->slot_off = (long)(offsetof(skn_priv_rank, delta) + (size_t)n * sizeof(long));
  modules.mods[n] = m;
  atomic_store(&modules.n, n + 1);
  SKN_TSAN_RELEASE(m); /* skein_priv_delta's acquire */
  pthread_mutex_unlock(&modules.lock);
}

/* Copies the resident pages of [from, to) (pages never touched hold zeros: skip them). */
static void copy_resident(char *dst, const char *from, const char *to) {
  if (to <= from) return;
  uintptr_t lo = page_down((uintptr_t)from), hi = page_up((uintptr_t)to);
  size_t ps = (size_t)getpagesize(), np = (hi - lo) / ps;
  unsigned char vec[256];
  for (size_t p0 = 0; p0 < np; p0 += sizeof vec) {
    size_t k = np - p0 < sizeof vec ? np - p0 : sizeof vec;
    bool all = mincore((void *)(lo + p0 * ps), k * ps, vec) != 0; /* on error copy everything */
    for (size_t i = 0; i < k; i++) {
      if (!all && !(vec[i] & 1)) continue;
      uintptr_t a = lo + (p0 + i) * ps, b = a + ps;
      if (a < (uintptr_t)from) a = (uintptr_t)from;
      if (b > (uintptr_t)to) b = (uintptr_t)to;
      memcpy(dst + (a - (uintptr_t)from), (const void *)a, b - a);
    }
  }
}

/* Maps rank r's copy of module i and runs the module's init hooks for r. */
static void map_module(skn_rank *r, skn_priv_rank *pr, int i) {
  skein_priv_module *m = modules.mods[i];
  uintptr_t ds = (uintptr_t)m->data_start, de = (uintptr_t)m->data_end;
  uintptr_t bs = (uintptr_t)m->bss_start, be = (uintptr_t)m->bss_end;
  uintptr_t lo = page_down(ds < bs ? ds : bs), hi = page_up(de > be ? de : be);
  size_t len = hi - lo;
  /* The gap between the sections (the module's other data) stays inaccessible. */
  char *base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) skn_fatal("rank %d: cannot map %zu bytes for its privatized globals", r->world_rank, len);
  long delta = (long)((uintptr_t)base - lo);
  if (mprotect(base + (page_down(ds) - lo), page_up(de) - page_down(ds), PROT_READ | PROT_WRITE) != 0 ||
      mprotect(base + (page_down(bs) - lo), page_up(be) - page_down(bs), PROT_READ | PROT_WRITE) != 0)
    skn_fatal("rank %d: cannot map its privatized globals", r->world_rank);
  memcpy((char *)(ds + delta), (const void *)ds, de - ds);
  copy_resident((char *)(bs + delta), (const char *)bs, (const char *)be);
  pr->base[i] = base;
  pr->len[i] = len;
  pr->delta[i] = delta;
  if (pr->n < i + 1) pr->n = i + 1; /* from now on the accessors return this rank's delta */
  for (void (*const *f)(void) = m->init_start; f < m->init_end; f++)
    if (*f) (*f)();
}

/* The executable's own mutable globals, by its symbol table: objects with a size in .data,
 * .bss, .tdata or .tbss, leaving out the C runtime's (locals of crt*.c files, reserved
 * `__` names, copy-relocated libc variables `name@GLIBC`) and the C++ library's
 * (std::, guard variables, vtables). The same rule as the wrappers' link-time check
 * (runtime/tools/mpicc.in). Writes up to `max` names into `names` (NUL-separated, size
 * len); returns how many there are, or 0 without a symbol table. */
static bool own_mutable(const char *name) {
  static const char *skip[] = {"__", "skn_", "DW.ref.", "_ZSt", "_ZNSt", "_ZNKSt", "_ZN9__gnu_cxx", "_ZGV", "_ZTV", "_ZTI", "_ZTS", "_ZTT", "_ZZNSt", ".", NULL};
  if (!name[0] || strchr(name, '@')) return false;
  for (const char **p = skip; *p; p++)
    if (strncmp(name, *p, strlen(*p)) == 0) return false;
  return true;
}

/* A C++ name of plain identifiers (_ZL5count, _ZN3app7historyE) as a.b::c; a static
 * local's number dropped (counter.0); anything else as it is. */
static const char *readable(const char *name, char *out, size_t len) {
  size_t o = 0;
  const char *p = name;
  if (strncmp(p, "_Z", 2) == 0) {
    p += 2;
    bool nested = *p == 'N';
    if (nested) p++;
    if (*p == 'L') p++;
    while (*p >= '1' && *p <= '9') {
      char *end;
      unsigned long l = strtoul(p, &end, 10);
      if (strlen(end) < l || o + l + 3 >= len) break;
      if (o) out[o++] = ':', out[o++] = ':';
      memcpy(out + o, end, l);
      o += l;
      p = end + l;
      if (!nested) break;
    }
    if (o && (*p == 0 || *p == 'E' || *p == '.')) {
      out[o] = 0;
      return out;
    }
  }
  snprintf(out, len, "%.*s", (int)strcspn(name, "."), name);
  return out;
}

static int exe_mutable_globals(char *names, size_t len, int max) {
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  int n = 0;
  void *map = fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(Elf64_Ehdr)
                  ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
                  : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return 0;
  const char *img = map;
  size_t size = (size_t)st.st_size;
  const Elf64_Ehdr *eh = map;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
      eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > size || eh->e_shstrndx >= eh->e_shnum)
    goto out;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
  const char *shstr = img + sh[eh->e_shstrndx].sh_offset;
  for (int i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
    if (sh[i].sh_offset + sh[i].sh_size > size || sh[sh[i].sh_link].sh_offset + sh[sh[i].sh_link].sh_size > size) break;
    const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
    const char *str = img + sh[sh[i].sh_link].sh_offset;
    size_t nsym = sh[i].sh_size / sizeof *sym, used = 0;
    bool runtime_file = false; /* locals that follow a crt*.c file symbol */
    for (size_t k = 0; k < nsym; k++) {
      const char *name = str + sym[k].st_name;
      if (ELF64_ST_TYPE(sym[k].st_info) == STT_FILE) {
        runtime_file = strncmp(name, "crt", 3) == 0;
        continue;
      }
      if (ELF64_ST_TYPE(sym[k].st_info) != STT_OBJECT && ELF64_ST_TYPE(sym[k].st_info) != STT_TLS) continue;
      if (sym[k].st_size == 0 || sym[k].st_shndx == SHN_UNDEF || sym[k].st_shndx >= eh->e_shnum) continue;
      if (ELF64_ST_BIND(sym[k].st_info) == STB_LOCAL && runtime_file) continue;
      const char *sec = shstr + sh[sym[k].st_shndx].sh_name;
      if (strcmp(sec, ".data") && strcmp(sec, ".bss") && strcmp(sec, ".tdata") && strcmp(sec, ".tbss")) continue;
      if (!own_mutable(name)) continue;
      if (n < max) {
        char plain[128];
        size_t l = strlen(readable(name, plain, sizeof plain)) + 1;
        if (used + l < len) {
          memcpy(names + used, plain, l);
          used += l;
        }
      }
      n++;
    }
    break;
  }
out:
  munmap(map, size);
  return n;
}

/* Once per job (in its first process), when ranks share processes: a program whose own
 * mutable globals are not privatized hears about it. SKEIN_PRIVATIZE_WARNING=0 silences. */
static void warn_unprivatized(void) {
  static _Atomic(int) once;
  if (atomic_exchange(&once, 1)) return;
  if (atomic_load(&modules.n) > 0 || skn_job_g.proc != 0 || skn_job_g.size <= skn_job_g.nprocs) return;
  if (!skn_env_int("PRIVATIZE_WARNING", 1)) return;
  char names[256];
  int n = exe_mutable_globals(names, sizeof names, 3);
  if (n == 0) return;
  char list[300] = "";
  size_t off = 0;
  const char *p = names;
  for (int i = 0; i < n && i < 3 && *p; i++, p += strlen(p) + 1)
    off += (size_t)snprintf(list + off, sizeof list - off, "%s'%s'", i ? ", " : "", p);
  if (n > 3) snprintf(list + off, sizeof list - off, " and %d more", n - 3);
  fprintf(stderr,
          "skein: warning: this program's mutable globals (%s) are shared by the %d ranks of each process: "
          "rebuild with mpicc -fprivatize to make them per rank (SKEIN_PRIVATIZE_WARNING=0 silences this)\n",
          list, skn_job_g.nranks);
}

void skn_priv_rank_start(skn_rank *r) {
  warn_unprivatized();
  int n = atomic_load(&modules.n);
  if (n == 0) return;
  skn_priv_rank *pr = calloc(1, sizeof *pr);
  if (!pr) skn_fatal("rank %d: out of memory for its privatized globals", r->world_rank);
  r->priv = pr;
  for (int i = 0; i < n; i++) map_module(r, pr, i);
}

static void run_exits(priv_exit *e, int n) {
  for (int i = n - 1; i >= 0; i--) e[i].fn(e[i].arg);
}

void skn_priv_rank_end(skn_rank *r) {
  skn_priv_rank *pr = r->priv;
  if (!pr) return;
  /* Destructors may register more (a function-local static built by a destructor). */
  while (pr->nexits > 0) {
    int n = pr->nexits;
    priv_exit *e = pr->exits;
    pr->exits = NULL;
    pr->nexits = pr->cap_exits = 0;
    run_exits(e, n);
    free(e);
  }
  for (size_t i = 0; i < pr->cap_objs; i++) free(pr->objs[i].copy);
  free(pr->objs);
  r->priv = NULL; /* later accesses (another thread of the rank) see the process copy */
  for (int i = 0; i < pr->n; i++)
    if (pr->base[i]) munmap(pr->base[i], pr->len[i]);
  free(pr);
}

static void delta_slow_alloc(skn_rank *r) {
  pthread_mutex_lock(&modules.lock);
  if (!r->priv && !(r->priv = calloc(1, sizeof *r->priv)))
    skn_fatal("rank %d: out of memory for its privatized globals", r->world_rank);
  pthread_mutex_unlock(&modules.lock);
}

static __attribute__((noinline)) long delta_slow(skn_rank *r, skein_priv_module *m) {
  /* A module registered after the rank started (dlopen): map it now. */
  delta_slow_alloc(r);
  skn_priv_rank *pr = r->priv;
  if (!pr->base[m->id]) map_module(r, pr, m->id);
  return pr->delta[m->id];
}

SKN_EXPORT long skein_priv_delta(skein_priv_module *m) {
  /* A module loaded by dlopen registers from its constructor, inside the loader's lock,
   * which holds every other thread's dlopen of it until it is done: that orders the
   * registration before the first call from another rank, but TSan does not see the
   * loader's lock. */
  SKN_TSAN_ACQUIRE(m);
  skn_rank *r = skn_rank_self();
  if (SKN_UNLIKELY(!r)) return 0;
  skn_priv_rank *pr = r->priv;
  if (SKN_LIKELY(pr && m->id < pr->n && pr->base[m->id])) return pr->delta[m->id];
  if (r->state == SKN_RANK_EXITED) return 0;
  return delta_slow(r, m);
}

static void push_exit(priv_exit **v, int *n, int *cap, void (*fn)(void *), void *arg) {
  if (*n == *cap) {
    int c = *cap ? 2 * *cap : 16;
    priv_exit *nv = realloc(*v, (size_t)c * sizeof *nv);
    if (!nv) skn_fatal("privatizer: out of memory registering a destructor");
    *v = nv;
    *cap = c;
  }
  (*v)[(*n)++] = (priv_exit){fn, arg};
}

static void process_exits(void) {
  run_exits(modules.exits, modules.nexits);
}

SKN_EXPORT void skein_priv_atexit(void (*fn)(void *), void *arg) {
  skn_rank *r = skn_rank_self();
  if (r && r->priv) {
    skn_priv_rank *pr = r->priv;
    push_exit(&pr->exits, &pr->nexits, &pr->cap_exits, fn, arg);
    return;
  }
  pthread_mutex_lock(&modules.lock);
  if (modules.nexits == 0) atexit(process_exits);
  push_exit(&modules.exits, &modules.nexits, &modules.cap_exits, fn, arg);
  pthread_mutex_unlock(&modules.lock);
}

static size_t obj_slot(priv_obj *t, size_t cap, void *addr) {
  size_t i = ((uintptr_t)addr >> 3) * 0x9E3779B97F4A7C15ull >> 20;
  for (i &= cap - 1; t[i].addr && t[i].addr != addr; i = (i + 1) & (cap - 1)) {}
  return i;
}

/* Under pr->lock. */
static void insert_obj(skn_rank *r, skn_priv_rank *pr, void *addr, void *copy) {
  if (2 * (pr->nobjs + 1) > pr->cap_objs) {
    size_t cap = pr->cap_objs ? 2 * pr->cap_objs : 64;
    priv_obj *t = calloc(cap, sizeof *t);
    if (!t) skn_fatal("rank %d: out of memory for its privatized objects", r->world_rank);
    for (size_t i = 0; i < pr->cap_objs; i++)
      if (pr->objs[i].addr) t[obj_slot(t, cap, pr->objs[i].addr)] = pr->objs[i];
    free(pr->objs);
    pr->objs = t;
    pr->cap_objs = cap;
  }
  pr->objs[obj_slot(pr->objs, pr->cap_objs, addr)] = (priv_obj){addr, copy};
  pr->nobjs++;
}

/* The rank's copy of the object known as `key`, made from the bytes at addr. */
static void *lookup(skn_rank *r, void *key, const void *addr, unsigned long size) {
  skn_priv_rank *pr = r->priv;
  if (!pr) {
    delta_slow_alloc(r);
    pr = r->priv;
  }
  skn_spin_lock(&pr->lock);
  if (pr->cap_objs && pr->objs[obj_slot(pr->objs, pr->cap_objs, key)].addr) {
    void *c = pr->objs[obj_slot(pr->objs, pr->cap_objs, key)].copy;
    skn_spin_unlock(&pr->lock);
    return c;
  }
  void *c = malloc(size ? size : 1);
  if (!c) skn_fatal("rank %d: out of memory for its privatized objects", r->world_rank);
  memcpy(c, addr, size);
  insert_obj(r, pr, key, c);
  skn_spin_unlock(&pr->lock);
  return c;
}

/* Objects of C++ static locals with constructors, keyed by a per-static char: made
 * zeroed and aligned; *fresh tells the one caller that must construct it. Outside ranks,
 * one per process. */
static struct {
  pthread_mutex_t lock;
  priv_obj *objs;
  size_t n, cap;
} PL = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *local_new(unsigned long size, unsigned long align) {
  void *p = NULL;
  if (align < sizeof(void *)) align = sizeof(void *);
  if (posix_memalign(&p, align, size ? size : 1) != 0) skn_fatal("privatizer: out of memory for a static local");
  memset(p, 0, size);
  return p;
}

SKN_EXPORT void *skein_priv_local(void *key, unsigned long size, unsigned long align, int *fresh) {
  skn_rank *r = skn_rank_self();
  *fresh = 0;
  if (!r || r->state == SKN_RANK_EXITED) {
    pthread_mutex_lock(&PL.lock);
    for (size_t i = 0; i < PL.n; i++)
      if (PL.objs[i].addr == key) {
        void *c = PL.objs[i].copy;
        pthread_mutex_unlock(&PL.lock);
        return c;
      }
    if (PL.n == PL.cap) {
      size_t cap = PL.cap ? 2 * PL.cap : 16;
      priv_obj *t = realloc(PL.objs, cap * sizeof *t);
      if (!t) skn_fatal("privatizer: out of memory for a static local");
      PL.objs = t;
      PL.cap = cap;
    }
    void *c = local_new(size, align);
    PL.objs[PL.n++] = (priv_obj){key, c};
    pthread_mutex_unlock(&PL.lock);
    *fresh = 1;
    return c;
  }
  skn_priv_rank *pr = r->priv;
  if (!pr) {
    delta_slow_alloc(r);
    pr = r->priv;
  }
  skn_spin_lock(&pr->lock);
  size_t cap = pr->cap_objs;
  if (cap && pr->objs[obj_slot(pr->objs, cap, key)].addr) {
    void *c = pr->objs[obj_slot(pr->objs, cap, key)].copy;
    skn_spin_unlock(&pr->lock);
    return c;
  }
  void *c = local_new(size, align);
  insert_obj(r, pr, key, c);
  skn_spin_unlock(&pr->lock);
  *fresh = 1;
  return c;
}

SKN_EXPORT void *skein_priv_addr(void *addr, unsigned long size) {
  skn_rank *r = skn_rank_self();
  if (!r || r->state == SKN_RANK_EXITED) return addr;
  return lookup(r, addr, addr, size);
}

SKN_EXPORT void *skein_priv_tls(void *addr, unsigned long size) {
  skn_unit *u = skn_sched_self();
  skn_rank *r = u ? (skn_rank *)u->owner : NULL;
  if (!r || u != r->unit || r->state == SKN_RANK_EXITED) return addr;
  /* keyed by its place in a worker's TLS, not its address: a rank that moved to another
   * worker finds its copy from either thread's address of the variable */
  return lookup(r, (void *)skn_sched_tls_key(addr), addr, size);
}
