/* The MPI program of the tests and of `trellis bench mpi`: MPI_Init, an MPI_Allreduce of 1 over
 * MPI_COMM_WORLD, then one line per rank:
 *   rank R of N sum S pid P init_us T end_us E
 * T is the wall clock (microseconds since the epoch) right after MPI_Init returned, E right
 * before MPI_Finalize. A run whose ranks did not wire up prints "rank 0 of 1 sum 1" on each.
 * With an argument it fails on purpose, for the failure tests:
 *   abort   rank 2 calls MPI_Abort(MPI_COMM_WORLD, 3) while the others wait in MPI_Barrier
 *   kill    rank 1 kills itself with SIGKILL while the others wait in MPI_Barrier
 * (each after a barrier that every rank enters once its line is out).
 * Built by the tests with mpicc.mpich and mpicc.openmpi (and by the bench). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static long long now_us(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  long long init_us = now_us();
  int rank = 0, size = 0, one = 1, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const char* mode = argc > 1 ? argv[1] : "";
  printf("rank %d of %d sum %d pid %d init_us %lld end_us %lld\n", rank, size, sum, (int)getpid(),
         init_us, now_us());
  fflush(stdout);
  if (*mode) {
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's line is out */
    if (strcmp(mode, "abort") == 0 && rank == 2) MPI_Abort(MPI_COMM_WORLD, 3);
    if (strcmp(mode, "kill") == 0 && rank == 1) {
      sleep(1); /* the others are in MPI_Barrier by now */
      kill(getpid(), SIGKILL);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
