/* Large puts and gets between processes (procs=2..3; UCX moves puts of 64 KiB and more
 * to another process as rendezvous messages where its own put is emulated, see
 * netlayer/ucx/net.c). Every rank puts blocks of several sizes around that threshold
 * into every other rank's window: a Win_create window at an odd address, contiguous and
 * through a derived type whose blocks are large, under fence and under lock_all + flush;
 * the targets check every byte and the untouched guard bytes around them; an 8-byte put
 * over a block after the flush must win; gets read the blocks back. Then a large put
 * into a dynamic window's region, and one while the target computes without MPI calls
 * (it must arrive: the target's progress thread receives it). */
#define TEST_NAME "rma_bigput"
#include "mpitest.h"

#ifdef __SANITIZE_THREAD__
/* libtsan's: races on [mem, mem + size) are expected, not reported */
void AnnotateBenignRaceSized(const char *file, int line, const volatile void *mem, unsigned long size,
                             const char *desc);
#endif

#include <time.h>

static const size_t sizes[] = {65535, 65536, 65537, 300000, 1 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define GUARD 64
#define GAP 32 /* < GUARD */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned char pat(int origin, size_t k, size_t i) { return (unsigned char)(origin * 31 + k * 7 + i * 13 + 1); }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* slot of origin r, size k: at off[k] + r * span[k] (each slot GUARD bytes apart) */
    size_t off[NSIZES], total = GUARD;
    for (size_t k = 0; k < NSIZES; k++) {
        off[k] = total;
        total += (sizes[k] + GUARD) * (size_t)size;
    }
    unsigned char *raw = malloc(total + 1), *mem = raw + 1; /* an odd window base */
    memset(mem, 0xEE, total);
    unsigned char **src = malloc(NSIZES * sizeof *src);
    for (size_t k = 0; k < NSIZES; k++) {
        src[k] = malloc(sizes[k]);
        for (size_t i = 0; i < sizes[k]; i++) src[k][i] = pat(rank, k, i);
    }
    MPI_Win win;
    MPI_CHECK(MPI_Win_create(mem, (MPI_Aint)total, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));

    /* ---- fence: contiguous puts of every size to every other rank */
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; t++) {
        if (t == rank) continue;
        for (size_t k = 0; k < NSIZES; k++)
            MPI_CHECK(MPI_Put(src[k], (int)sizes[k], MPI_BYTE, t, (MPI_Aint)(off[k] + rank * (sizes[k] + GUARD)),
                              (int)sizes[k], MPI_BYTE, win));
    }
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int r = 0; r < size; r++) {
        if (r == rank) continue;
        for (size_t k = 0; k < NSIZES; k++) {
            unsigned char *slot = mem + off[k] + r * (sizes[k] + GUARD);
            size_t bad = 0, first = 0;
            for (size_t i = 0; i < sizes[k]; i++)
                if (slot[i] != pat(r, k, i) && !bad++) first = i;
            CHECK(!bad, "fence put of %zu bytes from rank %d: %zu wrong bytes, first at %zu (0x%02x, want 0x%02x)",
                  sizes[k], r, bad, first, slot[first], pat(r, k, first));
            for (int g = 0; g < GUARD; g++)
                CHECK(slot[sizes[k] + g] == 0xEE, "guard byte %d after the %zu-byte put from rank %d changed", g,
                      sizes[k], r);
        }
    }
    for (int g = 0; g < GUARD; g++) CHECK(mem[g] == 0xEE, "guard byte %d before the first slot changed", g);

    /* ---- lock_all + flush: a contiguous origin into a target type of two large blocks
     * GAP bytes apart, then an 8-byte put over the first block's start */
    memset(mem, 0xEE, total);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    const size_t k4 = NSIZES - 1, half = sizes[k4] / 2;
    MPI_Datatype two;
    MPI_CHECK(MPI_Type_vector(2, (int)half, (int)(half + GAP), MPI_BYTE, &two));
    MPI_CHECK(MPI_Type_commit(&two));
    long long stamp = 0x0123456789abcdefLL + rank;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < size; t++) {
        if (t == rank) continue;
        MPI_CHECK(MPI_Put(src[k4], (int)(2 * half), MPI_BYTE, t, (MPI_Aint)(off[k4] + rank * (sizes[k4] + GUARD)), 1,
                          two, win));
        MPI_CHECK(MPI_Win_flush(t, win));
        MPI_CHECK(MPI_Put(&stamp, 8, MPI_BYTE, t, (MPI_Aint)(off[k4] + rank * (sizes[k4] + GUARD)), 8, MPI_BYTE, win));
        MPI_CHECK(MPI_Win_flush(t, win));
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int r = 0; r < size; r++) {
        if (r == rank) continue;
        unsigned char *slot = mem + off[k4] + r * (sizes[k4] + GUARD);
        long long got;
        memcpy(&got, slot, 8);
        CHECK(got == 0x0123456789abcdefLL + r, "the 8-byte put after the large one from rank %d: %llx", r,
              (unsigned long long)got);
        size_t bad = 0;
        for (size_t i = 8; i < half; i++) bad += slot[i] != pat(r, k4, i);
        for (size_t i = half; i < 2 * half; i++) bad += slot[i + GAP] != pat(r, k4, i);
        CHECK(!bad, "derived-type put of %zu bytes from rank %d: %zu wrong bytes", 2 * half, r, bad);
        for (int g = 0; g < GAP; g++) CHECK(slot[half + g] == 0xEE, "the gap of the target type (rank %d) changed", r);
        CHECK(slot[2 * half + GAP] == 0xEE, "the byte after the derived-type put from rank %d changed", r);
    }

    /* ---- gets: every size back from the next rank, which holds its own pattern */
    int next = (rank + 1) % size;
    for (size_t k = 0; k < NSIZES; k++)
        for (size_t i = 0; i < sizes[k]; i++) mem[off[k] + i] = pat(rank + 100, k, i);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win));
    for (size_t k = 0; k < NSIZES; k++) {
        memset(src[k], 0, sizes[k]);
        MPI_CHECK(MPI_Get(src[k], (int)sizes[k], MPI_BYTE, next, (MPI_Aint)off[k], (int)sizes[k], MPI_BYTE, win));
    }
    MPI_CHECK(MPI_Win_unlock(next, win));
    for (size_t k = 0; k < NSIZES; k++) {
        size_t bad = 0;
        for (size_t i = 0; i < sizes[k]; i++) bad += src[k][i] != pat(next + 100, k, i);
        CHECK(!bad, "get of %zu bytes from rank %d: %zu wrong bytes", sizes[k], next, bad);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_free(&win));

    /* ---- dynamic window: rank 0 attaches a region; the others put 1 MiB each into it */
    const size_t dn = 1 << 20;
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    unsigned char *region = NULL;
    MPI_Aint base = 0;
    if (rank == 0) {
        region = malloc(dn * (size_t)size);
        memset(region, 0, dn * (size_t)size);
        MPI_CHECK(MPI_Win_attach(win, region, (MPI_Aint)(dn * size)));
        MPI_CHECK(MPI_Get_address(region, &base));
    }
    MPI_CHECK(MPI_Bcast(&base, 1, MPI_AINT, 0, MPI_COMM_WORLD));
    unsigned char *dsrc = malloc(dn);
    for (size_t i = 0; i < dn; i++) dsrc[i] = pat(rank, 9, i);
    MPI_CHECK(MPI_Win_fence(0, win));
    if (rank != 0) MPI_CHECK(MPI_Put(dsrc, (int)dn, MPI_BYTE, 0, base + (MPI_Aint)(dn * rank), (int)dn, MPI_BYTE, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            size_t bad = 0;
            for (size_t i = 0; i < dn; i++) bad += region[dn * r + i] != pat(r, 9, i);
            CHECK(!bad, "dynamic-window put of 1 MiB from rank %d: %zu wrong bytes", r, bad);
        }
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) MPI_CHECK(MPI_Win_detach(win, region));
    MPI_CHECK(MPI_Win_free(&win));
    free(region);

    /* ---- the last rank computes without MPI calls while rank 0 puts 1 MiB into it */
    int lt = size - 1;
    unsigned char *user = calloc(dn, 1);
#ifdef __SANITIZE_THREAD__
    /* The target polls its window's last byte while the put lands, on purpose (the unified
     * model's polling). Over UCX the put is written by this process's progress thread,
     * which TSan sees (a NIC's write it would not). */
    AnnotateBenignRaceSized(__FILE__, __LINE__, user, (unsigned long)dn, "polled window");
#endif
    MPI_CHECK(MPI_Win_create(user, (MPI_Aint)dn, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == lt) {
        double t0 = now();
        volatile double acc = 0;
        while (((volatile unsigned char *)user)[dn - 1] != pat(0, 9, dn - 1) && now() - t0 < 30.0) {
            for (int i = 0; i < 100000; i++) acc += i * 0.5;
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
        }
        CHECK(((volatile unsigned char *)user)[dn - 1] == pat(0, 9, dn - 1),
              "one-sided: the 1-MiB put of rank 0 did not land while the target computed 30 s without MPI calls");
    } else if (rank == 0) {
        for (size_t i = 0; i < dn; i++) dsrc[i] = pat(0, 9, i);
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, lt, 0, win));
        MPI_CHECK(MPI_Put(dsrc, (int)dn, MPI_BYTE, lt, 0, (int)dn, MPI_BYTE, win));
        MPI_CHECK(MPI_Win_unlock(lt, win));
    }
    /* The whole put is the target's to read once the origin's unlock has returned (its
     * fragments may land in any order over several lanes: the last byte says nothing of
     * the others). */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == lt) {
        size_t bad = 0;
        for (size_t i = 0; i < dn; i++) bad += user[i] != pat(0, 9, i);
        CHECK(!bad, "the 1-MiB put of rank 0: %zu wrong bytes after its unlock", bad);
    }
    MPI_CHECK(MPI_Win_free(&win));
    free(user);
    free(dsrc);
    MPI_Type_free(&two);
    for (size_t k = 0; k < NSIZES; k++) free(src[k]);
    free(src);
    free(raw);
    return mt_finish();
}
