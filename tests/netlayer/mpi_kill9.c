/* mpi_kill9.c — an MPI job that loses a process in the middle of its traffic
 * (tests/netlayer/mpi_multi.sh, case mpi_kill9).
 *
 *   skeinrun -n 4 --procs 2 ./mpi_kill9
 *
 * Ranks 0-1 live in process 0 and ranks 2-3 in process 1; rank r ping-pongs with rank
 * (r + 2) % 4, so both pairs cross between the processes, with 8-byte messages and, every
 * 16th round trip, 256 KiB ones (eager and rendezvous both in flight). One second after
 * MPI_Init rank 2 prints the wall-clock time in ms on stderr and kills its own process
 * with SIGKILL. The survivors are then blocked in MPI_Recv from a process that is gone:
 * the runtime must end the job. A survivor still running after 30 s prints a FAIL line
 * and exits 1, so a runtime that misses the death fails instead of hanging the test. No
 * mutable globals: all ranks of a process share them. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { BIG = 256 << 10 };

static long long wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    if (rank == 0) fprintf(stderr, "FAIL mpi_kill9: needs exactly 4 ranks, got %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char *buf = malloc(BIG);
  if (!buf) MPI_Abort(MPI_COMM_WORLD, 2);
  memset(buf, rank, BIG);
  const int peer = (rank + 2) % 4;
  const double t0 = MPI_Wtime();
  for (long i = 0;; i++) {
    /* At the top of a round trip rank 2 has answered the last ping: its peer, rank 0,
       is about to send the next one and wait for an answer that will never come. */
    if (rank == 2 && MPI_Wtime() - t0 > 1.0) {
      fprintf(stderr, "mpi_kill9: rank 2 kills its process after %ld round trips at %lld ms\n", i,
              wall_ms());
      kill(getpid(), SIGKILL);
    }
    if (MPI_Wtime() - t0 > 30.0) {
      printf("FAIL mpi_kill9: rank %d still running 30 s after start (round trip %ld)\n", rank, i);
      fflush(stdout);
      return 1;
    }
    const int n = i % 16 == 15 ? BIG : 8;
    if (rank < 2) {
      MPI_Send(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
  }
}
