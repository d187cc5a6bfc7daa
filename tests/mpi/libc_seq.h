/*
 * libc_seq.h - the libc calls whose results the per-rank libc state tests compare with
 * one plain process.
 *
 * libc_ref.c (built with plain cc, no Skein) runs these sequences once and prints one
 * line per result; libc_state.c and libc_getopt.c (built with mpicc) run the same
 * sequences in every rank, with MPI calls in between that switch ranks, and compare
 * line by line. The functions are called through a table so that a test can also run
 * them on libc's own definitions (process-wide state) to show that the check fails.
 * No mutable globals: ranks are threads of one process.
 */
#ifndef SKEIN_TESTS_LIBC_SEQ_H
#define SKEIN_TESTS_LIBC_SEQ_H

#include <arpa/inet.h>
#include <dlfcn.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A POSIX TZ rule (no tzdata needed) with daylight saving, so localtime differs from gmtime. */
#define LIBC_SEQ_TZ "EST5EDT,M3.2.0,M11.1.0"
#define LIBC_SEQ_RAND_SEED 42u
#define LIBC_SEQ_NTOK 12

typedef struct libc_fns {
    int (*rand)(void);
    void (*srand)(unsigned);
    long (*random)(void);
    void (*srandom)(unsigned);
    char *(*initstate)(unsigned, char *, size_t);
    char *(*setstate)(char *);
    double (*drand48)(void);
    double (*erand48)(unsigned short[3]);
    long (*lrand48)(void);
    long (*nrand48)(unsigned short[3]);
    long (*mrand48)(void);
    long (*jrand48)(unsigned short[3]);
    void (*srand48)(long);
    unsigned short *(*seed48)(unsigned short[3]);
    void (*lcong48)(unsigned short[7]);
    char *(*strtok)(char *, const char *);
    struct tm *(*localtime)(const time_t *);
    struct tm *(*gmtime)(const time_t *);
    char *(*ctime)(const time_t *);
    char *(*asctime)(const struct tm *);
    char *(*strerror)(int);
    char *(*strsignal)(int);
    char *(*inet_ntoa)(struct in_addr);
    char *(*tmpnam)(char *);
    char *(*ttyname)(int);
    char *(*getlogin)(void);
    int (*getopt)(int, char *const *, const char *);
    int (*getopt_long)(int, char *const *, const char *, const struct option *, int *);
    int (*getopt_long_only)(int, char *const *, const char *, const struct option *, int *);
} libc_fns;

/* The definitions the program's own calls bind to (Skein's interposers under Skein). */
static inline libc_fns libc_fns_direct(void)
{
    libc_fns f = {rand, srand, random, srandom, initstate, setstate, drand48, erand48, lrand48,
                  nrand48, mrand48, jrand48, srand48, seed48, lcong48, strtok, localtime, gmtime,
                  ctime, asctime, strerror, strsignal, inet_ntoa, NULL, ttyname, getlogin,
                  getopt, getopt_long, getopt_long_only};
    /* looked up, as the program's first definition, so the linker does not warn about it */
    *(void **)&f.tmpnam = dlsym(RTLD_DEFAULT, "tmpnam");
    return f;
}

/* Where results go: emit() receives one result, between() may switch to other ranks. */
typedef struct libc_sink {
    void (*emit)(void *ctx, const char *what, long value);
    void (*between)(void *ctx);
    void *ctx;
} libc_sink;

static inline long libc_seq_hash(const char *s)
{
    if (!s) return -1;
    unsigned long h = 5381;
    for (; *s; s++) h = h * 33 + (unsigned char)*s;
    return (long)(h & 0x7fffffffffffL);
}

static inline void libc_seq_tm(const libc_sink *k, const char *what, const struct tm *tm)
{
    if (!tm) {
        k->emit(k->ctx, what, -1);
        return;
    }
    long packed = (((((long)tm->tm_year * 13 + tm->tm_mon) * 32 + tm->tm_mday) * 24 + tm->tm_hour) * 60 +
                   tm->tm_min) * 61 + tm->tm_sec;
    k->emit(k->ctx, what, packed);
    k->emit(k->ctx, what, tm->tm_isdst * 100000L + tm->tm_gmtoff / 60 + tm->tm_wday * 10000L);
}

typedef struct libc_seq_thread {
    const libc_fns *f;
    long v[8];
} libc_seq_thread;

static inline void *libc_seq_thread_main(void *p)
{
    libc_seq_thread *t = p;
    for (int i = 0; i < 8; i++) t->v[i] = t->f->rand();
    return NULL;
}

/* The random, drand48, strtok, time and static-buffer sequence for one seed. The
 * number of calls never depends on results, so every rank makes as many MPI calls. */
static inline void libc_seq_run(const libc_fns *f, unsigned seed, const libc_sink *k)
{
    void *c = k->ctx;
    /* rand() before any srand(): glibc's initial state is that of srand(1) */
    for (int i = 0; i < 20; i++) {
        k->emit(c, "rand0", f->rand());
        if (i % 3 == 0) k->between(c);
    }
    f->srand(LIBC_SEQ_RAND_SEED);
    for (int i = 0; i < 1000; i++) {
        k->emit(c, "rand", f->rand());
        if (i % 4 == 0) k->between(c);
    }
    f->srandom(seed);
    for (int i = 0; i < 300; i++) {
        k->emit(c, "random", f->random());
        if (i % 3 == 0) k->between(c);
    }
    /* initstate/setstate: a caller's table (TYPE_2), then back to the default one */
    long tbl_words[8];
    char *tbl = (char *)tbl_words;
    char *old = f->initstate(seed + 1, tbl, sizeof tbl_words);
    for (int i = 0; i < 100; i++) {
        k->emit(c, "initstate", f->random());
        if (i % 5 == 0) k->between(c);
    }
    k->emit(c, "setstate_prev_is_tbl", f->setstate(old) == tbl);
    for (int i = 0; i < 100; i++) {
        k->emit(c, "random_resumed", f->random());
        if (i % 5 == 0) k->between(c);
    }
    f->setstate(tbl);
    for (int i = 0; i < 30; i++) k->emit(c, "tbl_resumed", f->rand());
    k->between(c);
    f->setstate(old);
    /* a thread the rank creates draws from the rank's generator, as in a process */
    libc_seq_thread th = {f, {0}};
    pthread_t tid;
    if (pthread_create(&tid, NULL, libc_seq_thread_main, &th) == 0 && pthread_join(tid, NULL) == 0)
        for (int i = 0; i < 8; i++) k->emit(c, "thread_rand", th.v[i]);
    k->emit(c, "after_thread", f->rand());

    f->srand48((long)seed * 7);
    for (int i = 0; i < 300; i++) {
        k->emit(c, "drand48", (long)(f->drand48() * 281474976710656.0));
        k->emit(c, "lrand48", f->lrand48());
        k->emit(c, "mrand48", f->mrand48());
        if (i % 4 == 0) k->between(c);
    }
    unsigned short x[3] = {(unsigned short)seed, (unsigned short)(seed >> 16), 7};
    for (int i = 0; i < 100; i++) {
        k->emit(c, "erand48", (long)(f->erand48(x) * 281474976710656.0));
        k->emit(c, "nrand48", f->nrand48(x));
        k->emit(c, "jrand48", f->jrand48(x));
        if (i % 4 == 0) k->between(c);
    }
    unsigned short s16[3] = {1, 2, (unsigned short)seed};
    unsigned short *prev = f->seed48(s16);
    k->between(c);
    k->emit(c, "seed48_prev", ((long)prev[0] << 32) | ((long)prev[1] << 16) | prev[2]);
    for (int i = 0; i < 50; i++) {
        k->emit(c, "seeded_lrand48", f->lrand48());
        if (i % 5 == 0) k->between(c);
    }
    unsigned short p[7] = {3, 5, 7, 0xe66d, 0xdeec, 0x5 + (unsigned short)(seed % 4), 11};
    f->lcong48(p);
    for (int i = 0; i < 50; i++) {
        k->emit(c, "lcong_mrand48", f->mrand48());
        k->emit(c, "lcong_drand48", (long)(f->drand48() * 281474976710656.0));
        if (i % 5 == 0) k->between(c);
    }

    /* strtok: a rank-specific text, switching between tokens; always LIBC_SEQ_NTOK calls */
    char text[160];
    snprintf(text, sizeof text, "alpha,%u;;beta,,gamma%u;delta;;;eps,%u,zeta;eta%u", seed, seed * 7, seed * 13,
             seed * 17);
    for (int i = 0; i < LIBC_SEQ_NTOK; i++) {
        char *t = f->strtok(i == 0 ? text : NULL, ",;");
        k->between(c);
        k->emit(c, "strtok", libc_seq_hash(t));
    }

    /* static-buffer time functions: the result must survive other ranks' calls */
    for (int i = 0; i < 20; i++) {
        time_t t = (time_t)seed * 7919 * 3600 + (time_t)i * 1234567;
        struct tm *tm = f->localtime(&t);
        k->between(c);
        libc_seq_tm(k, "localtime", tm);
        tm = f->gmtime(&t);
        k->between(c);
        libc_seq_tm(k, "gmtime", tm);
        char *s = f->ctime(&t);
        k->between(c);
        k->emit(c, "ctime", libc_seq_hash(s));
        s = f->asctime(f->gmtime(&t));
        k->between(c);
        k->emit(c, "asctime", libc_seq_hash(s));
    }
    struct tm far = {.tm_year = 20000 + (int)seed, .tm_mon = 2, .tm_mday = 3, .tm_wday = 4};
    char *s = f->asctime(&far); /* more than 4 digits: glibc's asctime, not asctime_r */
    k->between(c);
    k->emit(c, "asctime_far", libc_seq_hash(s));

    /* buffers glibc keeps per kernel thread, which ranks on one worker share */
    for (int i = 0; i < 8; i++) {
        s = f->strerror(5000 + (int)seed + i);
        k->between(c);
        k->emit(c, "strerror", libc_seq_hash(s));
        s = f->strsignal(SIGRTMIN + (int)(seed + i) % 8);
        k->between(c);
        k->emit(c, "strsignal", libc_seq_hash(s));
        struct in_addr a = {htonl(seed * 2654435761u + (unsigned)i)};
        s = f->inet_ntoa(a);
        k->between(c);
        k->emit(c, "inet_ntoa", libc_seq_hash(s));
    }

    /* static buffers glibc shares between threads: the name must be unchanged after
     * other ranks' calls (tmpnam's names are random: compare with a copy) */
    for (int i = 0; i < 4; i++) {
        char copy[L_tmpnam + 1];
        s = f->tmpnam ? f->tmpnam(NULL) : NULL;
        snprintf(copy, sizeof copy, "%s", s ? s : "");
        k->between(c);
        k->emit(c, "tmpnam_kept", s && strcmp(s, copy) == 0);
    }
    s = f->ttyname(0); /* the same terminal, or none, for the reference and the ranks */
    k->between(c);
    k->emit(c, "ttyname", libc_seq_hash(s));
    s = f->getlogin();
    k->between(c);
    k->emit(c, "getlogin", libc_seq_hash(s));
}

/* getopt: three parses of one argv, as a legacy code might do them. Lines tagged
 * "end" read optind after a parse returned -1 (see libc_getopt.c). */
static inline void getopt_seq_one(const libc_sink *k, const char *tag, int c, int li)
{
    k->emit(k->ctx, tag, c);
    k->emit(k->ctx, "optarg", libc_seq_hash(optarg));
    k->emit(k->ctx, "optind", optind);
    if (c == '?') k->emit(k->ctx, "optopt", optopt);
    if (li >= 0) k->emit(k->ctx, "longindex", li);
}

static inline void getopt_seq_run(const libc_fns *f, int argc, char **argv, const libc_sink *k, int again)
{
    void *c = k->ctx;
    int flag = 0;
    const struct option lo[] = {
        {"verbose", no_argument, NULL, 'v'},       {"name", required_argument, NULL, 'N'},
        {"level", optional_argument, NULL, 'L'},   {"flag", no_argument, &flag, 7},
        {"number", required_argument, NULL, 'n'},  {NULL, 0, NULL, 0},
    };
    const char *shorts = "ab:c::vn:";
    int ch, li = -1;
    /* 1: getopt_long, permuting operands to the end */
    while ((ch = f->getopt_long(argc, argv, shorts, lo, &li)) != -1) {
        getopt_seq_one(k, "long", ch, li);
        li = -1;
        k->between(c);
    }
    k->emit(c, "end", optind);
    k->emit(c, "flag", flag);
    for (int i = 1; i < argc; i++) k->emit(c, "argv", libc_seq_hash(argv[i]));
    k->between(c);
    /* 2: full reset, short options only, stopping at the first operand */
    optind = 0;
    while ((ch = f->getopt(argc, argv, "+ab:c::vn:")) != -1) {
        getopt_seq_one(k, "short", ch, -1);
        k->between(c);
    }
    k->emit(c, "end", optind);
    k->between(c);
    /* 3: optind = 1, long options with single dashes */
    optind = 1;
    li = -1;
    while ((ch = f->getopt_long_only(argc, argv, shorts, lo, &li)) != -1) {
        getopt_seq_one(k, "long_only", ch, li);
        li = -1;
        k->between(c);
    }
    k->emit(c, "end", optind);
    /* 4: one more call after -1, without a reset: -1 again */
    if (again) {
        k->emit(c, "again", f->getopt(argc, argv, shorts));
        k->emit(c, "end", optind);
    }
}

#endif
