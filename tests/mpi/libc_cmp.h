/*
 * libc_cmp.h - compares a rank's run of libc_seq.h with the reference process
 * (libc_ref, built with plain cc beside the test programs). No mutable globals.
 */
#ifndef SKEIN_TESTS_LIBC_CMP_H
#define SKEIN_TESTS_LIBC_CMP_H

#include <dlfcn.h>
#include <unistd.h>

#include "libc_seq.h"

typedef struct libc_cmp {
    char *ref;        /* the reference's output */
    char *pos;        /* next reference line */
    long line;
    long mismatches;
    int rank;
    int skip_optind;  /* ignore "optind", "end" and "again" lines (optind read by the program) */
    long betweens;
    int barrier_every; /* 0: yields only (a rank must not block while it owns getopt's parser) */
} libc_cmp;

/* Runs `libc_ref ARGS` (found beside this executable) and returns its whole output. */
static inline char *libc_ref_output(const char *args)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) FAIL("readlink /proc/self/exe");
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    *slash = '\0';
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s/libc_ref' %s", exe, args);
    FILE *p = popen(cmd, "r");
    if (!p) FAIL("cannot run %s", cmd);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    size_t got;
    while (out && (got = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 4096) out = realloc(out, cap *= 2);
    }
    if (!out) FAIL("out of memory reading the reference");
    out[len] = '\0';
    int st = pclose(p);
    if (st != 0 || len == 0) FAIL("%s failed (status %d, %zu bytes)", cmd, st, len);
    return out;
}

static inline int libc_cmp_skipped(const libc_cmp *m, const char *what)
{
    return m->skip_optind && (strcmp(what, "end") == 0 || strcmp(what, "again") == 0 || strcmp(what, "optind") == 0);
}

static inline void libc_cmp_emit(void *ctx, const char *what, long v)
{
    libc_cmp *m = ctx;
    if (libc_cmp_skipped(m, what)) return;
    char got[128], want[128];
    snprintf(got, sizeof got, "%s %ld", what, v);
    for (;;) {
        char *nl = strchr(m->pos, '\n');
        size_t len = nl ? (size_t)(nl - m->pos) : strlen(m->pos);
        snprintf(want, sizeof want, "%.*s", (int)len, m->pos);
        m->pos += len + (nl != NULL);
        m->line++;
        char tag[64];
        if (!(m->skip_optind && sscanf(want, "%63s", tag) == 1 && libc_cmp_skipped(m, tag))) break;
    }
    if (strcmp(got, want) != 0 && m->mismatches++ < 3)
        printf("MISMATCH rank %d line %ld: got '%s', one process gives '%s'\n", m->rank, m->line, got, want);
}

/* Switches to other ranks: a yield each time, a barrier now and then. */
static inline void libc_cmp_between(void *ctx)
{
    libc_cmp *m = ctx;
#ifdef SKEIN_MPI
    MPIX_Yield();
#else /* any MPI: a probe that finds nothing (Skein's would yield too) */
    int flag;
    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MT_NEVER_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
#endif
    if (m->barrier_every && ++m->betweens % m->barrier_every == 0) MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* The direct table, with the members of the families named in `which` (a comma list of
 * rand, drand48, strtok, time, strerror, strsignal, inet_ntoa, tmpnam, getopt, or "all";
 * '+' separates too) taken
 * from libc.so.6 itself: libc's own process-wide state, bypassing Skein. */
static inline libc_fns libc_fns_shared(const char *which)
{
    libc_fns f = libc_fns_direct();
    void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (!h) FAIL("dlopen libc.so.6: %s", dlerror());
    char list[256];
    snprintf(list, sizeof list, ",%s,", which);
    for (char *q = list; *q; q++)
        if (*q == '+') *q = ','; /* testlist's args= splits at commas */
    int any = 0;
#define LIBC_FAMILY(fam) (strstr(list, ",all,") || strstr(list, "," fam ",")) && (any = 1)
#define LIBC_SYM(name)                                          \
    do {                                                        \
        *(void **)&f.name = dlsym(h, #name);                    \
        if (!f.name) FAIL("dlsym %s: %s", #name, dlerror());    \
    } while (0)
    if (LIBC_FAMILY("rand")) {
        LIBC_SYM(rand); LIBC_SYM(srand); LIBC_SYM(random); LIBC_SYM(srandom);
        LIBC_SYM(initstate); LIBC_SYM(setstate);
    }
    if (LIBC_FAMILY("drand48")) {
        LIBC_SYM(drand48); LIBC_SYM(erand48); LIBC_SYM(lrand48); LIBC_SYM(nrand48);
        LIBC_SYM(mrand48); LIBC_SYM(jrand48); LIBC_SYM(srand48); LIBC_SYM(seed48);
        LIBC_SYM(lcong48);
    }
    if (LIBC_FAMILY("strtok")) LIBC_SYM(strtok);
    if (LIBC_FAMILY("time")) {
        LIBC_SYM(localtime); LIBC_SYM(gmtime); LIBC_SYM(ctime); LIBC_SYM(asctime);
    }
    if (LIBC_FAMILY("strerror")) LIBC_SYM(strerror);
    if (LIBC_FAMILY("strsignal")) LIBC_SYM(strsignal);
    if (LIBC_FAMILY("inet_ntoa")) LIBC_SYM(inet_ntoa);
    if (LIBC_FAMILY("tmpnam")) LIBC_SYM(tmpnam);
    if (LIBC_FAMILY("getopt")) {
        LIBC_SYM(getopt); LIBC_SYM(getopt_long); LIBC_SYM(getopt_long_only);
    }
#undef LIBC_SYM
#undef LIBC_FAMILY
    if (!any) FAIL("unknown libc family list '%s'", which);
    return f;
}

/* Every rank's mismatches, summed; rank 0 reports. `shared` (non-NULL): these families
 * were libc's own, and mismatches are the expected outcome (exit code 1, no FAIL line).
 * Returns the exit code for main. */
static inline int libc_cmp_finish(libc_cmp *m, const char *shared, const char *name)
{
    char tag[64];
    while (m->skip_optind && sscanf(m->pos, "%63s", tag) == 1 && libc_cmp_skipped(m, tag)) {
        char *nl = strchr(m->pos, '\n');
        m->pos = nl ? nl + 1 : m->pos + strlen(m->pos);
    }
    if (*m->pos && !m->mismatches) {
        m->mismatches++;
        printf("MISMATCH rank %d: the reference has more lines after line %ld\n", m->rank, m->line);
    }
    long total = 0;
    MPI_CHECK(MPI_Allreduce(&m->mismatches, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    free(m->ref);
    if (m->rank == 0) {
        if (shared && total)
            printf("MISMATCH %s: %ld results differ from one process with libc's own %s\n", name, total, shared);
        else if (shared)
            printf("PASS %s: libc's own %s is per rank here (ranks are processes)\n", name, shared);
        else if (total)
            printf("FAIL %s: %ld results differ from one process\n", name, total);
        else
            printf("PASS %s\n", name);
    }
    return total ? 1 : 0;
}

#endif
