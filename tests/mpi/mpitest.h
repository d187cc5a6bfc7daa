/*
 * mpitest.h - tiny helpers shared by the MPI-level tests in tests/mpi/.
 *
 * Plain MPI-3.1 C11, usable with any MPI's mpicc.  Every function is static
 * inline and there is no mutable global state: under a thread-based MPI the
 * globals of a program are shared by all ranks of a process unless they are
 * privatized, so the tests keep all state on the stack or the heap.
 *
 * Usage:
 *     #define TEST_NAME "ring"
 *     #include "mpitest.h"
 *
 * Conventions:
 *   - success: rank 0 prints exactly one line "PASS <name>" (after MPI_Finalize)
 *     and every rank returns 0 from main;
 *   - failure: the failing rank prints
 *       "FAIL <name>: rank R: <what> (expected X got Y) [file:line]"
 *     and calls MPI_Abort(MPI_COMM_WORLD, 1).
 */
#ifndef SKEIN_TESTS_MPITEST_H
#define SKEIN_TESTS_MPITEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* Marks a global the ranks of a process share on purpose (rank-indexed tables), so that
 * Skein's check of unprivatized globals stays quiet; nothing under other MPIs. */
#if defined(__has_include)
#if __has_include(<skein_privatize.h>)
#include <skein_privatize.h>
#endif
#endif
#ifndef SKEIN_SHARED
#define SKEIN_SHARED
#endif

/* GCC >= 11 warns about MPI_STATUS(ES)_IGNORE when an MPI defines it as a
 * small integer cast to a pointer (MPICH does): silence that false positive. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#ifndef TEST_NAME
#error "define TEST_NAME before including mpitest.h"
#endif

/* A tag that no test ever sends (MPI guarantees MPI_TAG_UB >= 32767). */
#define MT_NEVER_TAG 32001
/* "Do not check this field" marker for mt_check_status. */
#define MT_SKIP (-0x7654321)

static inline int mt_mpi_usable(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init && !fin;
}

static inline void mt_fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
static inline void mt_fail_at(const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    int rank = -1;
    int usable = mt_mpi_usable();
    const char *base = strrchr(file, '/');

    if (usable)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("FAIL %s: rank %d: %s [%s:%d]\n", TEST_NAME, rank, msg,
           base ? base + 1 : file, line);
    fflush(stdout);
    if (usable)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define FAIL(...) mt_fail_at(__FILE__, __LINE__, __VA_ARGS__)
#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond))                                                         \
            mt_fail_at(__FILE__, __LINE__, __VA_ARGS__);                     \
    } while (0)

static inline void mt_fail_rc(const char *file, int line, const char *call, int rc)
    __attribute__((noreturn));
static inline void mt_fail_rc(const char *file, int line, const char *call, int rc)
{
    char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    s[0] = '\0';
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "?");
    mt_fail_at(file, line, "%s returned an error (expected MPI_SUCCESS got %d: %s)",
               call, rc, s);
}

/* Check that an MPI call returns MPI_SUCCESS (normally errors are fatal anyway). */
#define MPI_CHECK(call)                                                      \
    do {                                                                     \
        int mt_rc_ = (call);                                                 \
        if (mt_rc_ != MPI_SUCCESS)                                           \
            mt_fail_rc(__FILE__, __LINE__, #call, mt_rc_);                   \
    } while (0)

/* ---- deterministic data patterns ------------------------------------- */

static inline uint64_t mt_mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A seed from up to four small integers (e.g. source rank, size, iteration). */
static inline uint64_t mt_seed(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mt_mix(mt_mix(mt_mix(mt_mix(a) ^ (b + 0x1234567ull)) ^ (c + 0x89abcdefull)) ^
                  (d + 0x55aa55aaull));
}

/* Word number k of the pattern stream for seed. */
static inline uint64_t mt_word(uint64_t seed, uint64_t k)
{
    return mt_mix(seed ^ (k * 0xD6E8FEB86659FD93ull));
}

static inline void mt_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = (unsigned char *)buf;
    size_t i = 0;
    uint64_t k = 0;
    for (; i + 8 <= n; i += 8, k++) {
        uint64_t w = mt_word(seed, k);
        memcpy(p + i, &w, 8);
    }
    if (i < n) {
        uint64_t w = mt_word(seed, k);
        memcpy(p + i, &w, n - i);
    }
}

/* Returns the index of the first byte that differs from the pattern, or -1.
 * *exp / *got receive the expected and actual byte at that index. */
static inline long long mt_verify(const void *buf, size_t n, uint64_t seed,
                                  unsigned *exp, unsigned *got)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t i = 0;
    uint64_t k = 0;
    for (; i < n; i += 8, k++) {
        uint64_t w = mt_word(seed, k);
        size_t m = n - i < 8 ? n - i : 8;
        if (memcmp(p + i, &w, m) != 0) {
            unsigned char e[8];
            memcpy(e, &w, 8);
            for (size_t j = 0; j < m; j++)
                if (p[i + j] != e[j]) {
                    *exp = e[j];
                    *got = p[i + j];
                    return (long long)(i + j);
                }
        }
    }
    return -1;
}

/* Verify and fail with a message naming what was being checked. */
#define VERIFY(buf, n, seed, ...)                                            \
    do {                                                                     \
        unsigned mt_e_ = 0, mt_g_ = 0;                                       \
        long long mt_at_ = mt_verify((buf), (n), (seed), &mt_e_, &mt_g_);    \
        if (mt_at_ >= 0) {                                                   \
            char mt_what_[512];                                              \
            snprintf(mt_what_, sizeof mt_what_, __VA_ARGS__);                \
            mt_fail_at(__FILE__, __LINE__,                                   \
                       "%s: data byte %lld of %zu wrong (expected 0x%02x got 0x%02x)", \
                       mt_what_, mt_at_, (size_t)(n), mt_e_, mt_g_);         \
        }                                                                    \
    } while (0)

/* Check the fields of a receive status.  Pass MT_SKIP to skip a field. */
#define CHECK_STATUS(st, type, src, tag, count, ...)                         \
    do {                                                                     \
        char mt_what_[512];                                                  \
        int mt_cnt_ = -1;                                                    \
        snprintf(mt_what_, sizeof mt_what_, __VA_ARGS__);                    \
        if ((src) != MT_SKIP && (st)->MPI_SOURCE != (src))                   \
            mt_fail_at(__FILE__, __LINE__,                                   \
                       "%s: status.MPI_SOURCE wrong (expected %d got %d)",   \
                       mt_what_, (int)(src), (st)->MPI_SOURCE);              \
        if ((tag) != MT_SKIP && (st)->MPI_TAG != (tag))                      \
            mt_fail_at(__FILE__, __LINE__,                                   \
                       "%s: status.MPI_TAG wrong (expected %d got %d)",      \
                       mt_what_, (int)(tag), (st)->MPI_TAG);                 \
        if ((count) != MT_SKIP) {                                            \
            MPI_CHECK(MPI_Get_count((st), (type), &mt_cnt_));                \
            if (mt_cnt_ != (count))                                          \
                mt_fail_at(__FILE__, __LINE__,                               \
                           "%s: MPI_Get_count wrong (expected %d got %d)",   \
                           mt_what_, (int)(count), mt_cnt_);                 \
        }                                                                    \
    } while (0)

static inline void *mt_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        FAIL("malloc(%zu) failed", n);
    return p;
}

/* Spend about `seconds` inside MPI (polling with MPI_Iprobe for a tag nobody
 * sends) so that a cooperative runtime can run the other ranks meanwhile. */
static inline void mt_poll_delay(double seconds)
{
    double t0 = MPI_Wtime();
    int flag = 0;
    while (MPI_Wtime() - t0 < seconds) {
        MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MT_NEVER_TAG, MPI_COMM_WORLD, &flag,
                             MPI_STATUS_IGNORE));
        if (flag)
            FAIL("MPI_Iprobe found a message with tag %d that nobody sent", MT_NEVER_TAG);
    }
}

/* Nonzero when running on an MPICH older than 4.2, whose MPI_Irecv from
 * MPI_PROC_NULL returns a status with MPI_SOURCE/MPI_TAG 0 instead of
 * MPI_PROC_NULL/MPI_ANY_TAG (pmodels/mpich#6805, fixed in 4.2).  Only that
 * one check is skipped, and only there; every other MPI must pass it. */
static inline int mt_old_mpich(void)
{
    char s[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = 0, major = 0, minor = 0;
    memset(s, 0, sizeof s);
    if (MPI_Get_library_version(s, &len) != MPI_SUCCESS)
        return 0;
    if (sscanf(s, "MPICH Version: %d.%d", &major, &minor) != 2)
        return 0;
    return major < 4 || (major == 4 && minor < 2);
}

/* Barrier, finalize, and let rank 0 print the PASS line. Returns main's status. */
static inline int mt_finish(void)
{
    int rank = -1;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0) {
        printf("PASS %s\n", TEST_NAME);
        fflush(stdout);
    }
    return 0;
}

#endif /* SKEIN_TESTS_MPITEST_H */
