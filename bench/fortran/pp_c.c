/* The C reference of bench/fortran: the same ping-pong and message-rate
 * loops as pp_f77.f, pp_f90.f90 and pp_f08.f90, so the difference is what
 * each Fortran interface adds per call.  usage: pp_c [quick] */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int iters = quick ? 2000 : 20000, windows = quick ? 200 : 2000;
    char buf[8] = {0}, win[64][8];
    MPI_Request reqs[64];
    for (int bytes = 0; bytes <= 8; bytes += 8) {
        double t0 = 0;
        for (int i = -iters / 10; i < iters; i++) {
            if (i == 0) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            if (rank == 0) {
                MPI_Send(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0;
        if (rank == 0)
            printf("RESULT latency value=%.4f bytes=%d interface=c\n", t / iters / 2 * 1e6, bytes);
    }
    double t0 = 0;
    for (int w = -windows / 10; w < windows; w++) {
        if (w == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        for (int k = 0; k < 64; k++) {
            if (rank == 0)
                MPI_Isend(win[k], 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &reqs[k]);
            else
                MPI_Irecv(win[k], 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &reqs[k]);
        }
        MPI_Waitall(64, reqs, MPI_STATUSES_IGNORE);
        if (rank == 0)
            MPI_Recv(buf, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(buf, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0)
        printf("RESULT message_rate value=%.1f bytes=8 window=64 interface=c\n", 64.0 * windows / t);
    /* the cost of one call: a 0-byte send to MPI_PROC_NULL, in a tight loop */
    int calls = quick ? 200000 : 2000000;
    t0 = MPI_Wtime();
    for (int i = 0; i < calls; i++)
        MPI_Send(buf, 0, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    t = MPI_Wtime() - t0;
    if (rank == 0)
        printf("RESULT call_time value=%.2f interface=c\n", t / calls * 1e9);
    MPI_Finalize();
    return 0;
}
