/* A token of N bytes travels around the ring R times; every rank checks the
 * content it receives.  usage: ring [bytes] [rounds] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char pattern(long i, int round)
{
    return (unsigned char)((i * 131 + round * 7) & 0xff);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bytes = argc > 1 ? atol(argv[1]) : 4 << 20;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    unsigned char *buf = malloc(bytes > 0 ? (size_t)bytes : 1);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int errors = 0;
    double t0 = MPI_Wtime();
    for (int r = 0; r < rounds; r++) {
        if (rank == 0) {
            for (long i = 0; i < bytes; i++)
                buf[i] = pattern(i, r);
            MPI_Send(buf, (int)bytes, MPI_BYTE, next, r, MPI_COMM_WORLD);
            MPI_Status st;
            MPI_Recv(buf, (int)bytes, MPI_BYTE, prev, r, MPI_COMM_WORLD, &st);
            int count;
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (count != bytes || st.MPI_SOURCE != prev || st.MPI_TAG != r)
                errors++;
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, prev, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, next, r, MPI_COMM_WORLD);
        }
        for (long i = 0; i < bytes; i++)
            if (buf[i] != pattern(i, r)) {
                errors++;
                break;
            }
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0)
        printf("ring: %d ranks, %ld bytes, %d rounds, %.3f ms per round, %s\n", size, bytes, rounds,
               1e3 * t / rounds, errors ? "CONTENT MISMATCH" : "content verified");
    if (errors)
        fprintf(stderr, "rank %d: %d content errors\n", rank, errors);
    free(buf);
    MPI_Finalize();
    return errors ? 1 : 0;
}
