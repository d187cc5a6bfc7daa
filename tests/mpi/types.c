/*
 * types.c - every predefined basic C datatype, point to point.
 *
 * For each type (with its C size), counts 0, 1, 7, 1000 and 256 KiB worth of
 * elements (32 KiB with more than 8 ranks) are sent around the ring (self
 * with 1 rank) with MPI_Sendrecv and with MPI_Isend/MPI_Irecv into a larger
 * buffer.  Checked: MPI_Get_count and
 * MPI_Get_elements with that type, MPI_Get_count with MPI_BYTE on a message
 * sent as MPI_BYTE, the bytes (raw patterns: the data is copied, never
 * interpreted), and that bytes after the message are untouched.
 * Pair types (MPI_2INT, MPI_DOUBLE_INT, ...) are not covered.
 */
#define TEST_NAME "types"
#include "mpitest.h"
#include <complex.h>
#include <stdbool.h>
#include <wchar.h>

struct tinfo {
    MPI_Datatype type;
    size_t size;
    const char *name;
};

#define T(mpi, ctype) {mpi, sizeof(ctype), #mpi}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;

    /* not static: MPI_Datatype handles need not be compile-time constants */
    const struct tinfo types[] = {
        T(MPI_CHAR, char),
        T(MPI_SHORT, short),
        T(MPI_INT, int),
        T(MPI_LONG, long),
        T(MPI_LONG_LONG_INT, long long),
        T(MPI_LONG_LONG, long long),
        T(MPI_SIGNED_CHAR, signed char),
        T(MPI_UNSIGNED_CHAR, unsigned char),
        T(MPI_UNSIGNED_SHORT, unsigned short),
        T(MPI_UNSIGNED, unsigned),
        T(MPI_UNSIGNED_LONG, unsigned long),
        T(MPI_UNSIGNED_LONG_LONG, unsigned long long),
        T(MPI_FLOAT, float),
        T(MPI_DOUBLE, double),
        T(MPI_LONG_DOUBLE, long double),
        T(MPI_WCHAR, wchar_t),
        T(MPI_C_BOOL, bool),
        T(MPI_INT8_T, int8_t),
        T(MPI_INT16_T, int16_t),
        T(MPI_INT32_T, int32_t),
        T(MPI_INT64_T, int64_t),
        T(MPI_UINT8_T, uint8_t),
        T(MPI_UINT16_T, uint16_t),
        T(MPI_UINT32_T, uint32_t),
        T(MPI_UINT64_T, uint64_t),
        T(MPI_C_COMPLEX, float _Complex),
        T(MPI_C_FLOAT_COMPLEX, float _Complex),
        T(MPI_C_DOUBLE_COMPLEX, double _Complex),
        T(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
        T(MPI_BYTE, unsigned char),
        T(MPI_PACKED, unsigned char),
        T(MPI_AINT, MPI_Aint),
        T(MPI_OFFSET, MPI_Offset),
        T(MPI_COUNT, MPI_Count),
    };
    const int ntypes = (int)(sizeof types / sizeof types[0]);
    const size_t big_bytes = size <= 8 ? (256u << 10) : (32u << 10);

    for (int ti = 0; ti < ntypes; ti++) {
        const struct tinfo *tp = &types[ti];
        const int counts[5] = {0, 1, 7, 1000, (int)(big_bytes / tp->size)};
        for (int ci = 0; ci < 5; ci++) {
            const int cnt = counts[ci];
            const size_t bytes = (size_t)cnt * tp->size;
            const size_t extra = 4 * tp->size;
            unsigned char *sb = mt_malloc(bytes), *rb = mt_malloc(bytes + extra);
            MPI_Status st;
            int e = -1;
            const int tag = ti * 10 + ci;

            for (int mode = 0; mode < 2; mode++) {
                mt_fill(sb, bytes, mt_seed(rank, ti, cnt, mode));
                memset(rb, 0xA5, bytes + extra);
                if (mode == 0) {
                    MPI_CHECK(MPI_Sendrecv(sb, cnt, tp->type, right, tag, rb, cnt, tp->type, left,
                                           tag, MPI_COMM_WORLD, &st));
                } else {
                    MPI_Request rq[2];
                    MPI_Status sts[2];
                    MPI_CHECK(MPI_Irecv(rb, cnt + 4, tp->type, left, tag, MPI_COMM_WORLD, &rq[0]));
                    MPI_CHECK(MPI_Isend(sb, cnt, tp->type, right, tag, MPI_COMM_WORLD, &rq[1]));
                    MPI_CHECK(MPI_Waitall(2, rq, sts));
                    st = sts[0];
                }
                CHECK_STATUS(&st, tp->type, left, tag, cnt, "%s count %d (%s)", tp->name, cnt,
                             mode ? "Isend/Irecv" : "Sendrecv");
                MPI_CHECK(MPI_Get_elements(&st, tp->type, &e));
                CHECK(e == cnt, "%s count %d: MPI_Get_elements wrong (expected %d got %d)",
                      tp->name, cnt, cnt, e);
                VERIFY(rb, bytes, mt_seed(left, ti, cnt, mode), "%s count %d (%s)", tp->name,
                       cnt, mode ? "Isend/Irecv" : "Sendrecv");
                for (size_t i = bytes; i < bytes + extra; i++)
                    CHECK(rb[i] == 0xA5, "%s count %d: byte %zu after the message overwritten "
                          "(expected 0xa5 got 0x%02x)", tp->name, cnt, i, rb[i]);
            }
            free(sb);
            free(rb);
        }
    }

    /* Get_count with MPI_BYTE for messages of odd byte lengths */
    for (int n = 0; n < 20; n++) {
        unsigned char sb[32], rb[32];
        MPI_Status st;
        mt_fill(sb, (size_t)n, mt_seed(rank, n, 0, 77));
        MPI_CHECK(MPI_Sendrecv(sb, n, MPI_BYTE, right, 1000 + n, rb, 32, MPI_BYTE, left,
                               1000 + n, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, MPI_BYTE, left, 1000 + n, n, "MPI_BYTE message of %d bytes", n);
        VERIFY(rb, (size_t)n, mt_seed(left, n, 0, 77), "MPI_BYTE message of %d bytes", n);
    }
    return mt_finish();
}
