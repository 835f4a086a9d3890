/* bench/coll: latency of barrier, bcast, allreduce, reduce, allgather and
 * alltoall for 8 B to 1 MiB per rank (bytes = each rank's contribution),
 * the same source for every mpicc.
 *
 *   coll_bench [quick]    RESULT latency op=... bytes=... ranks=... value=<us>
 *   coll_bench one OP BYTES   that point alone (the load benchmark)
 *
 * Each point: a warm-up, then the mean over enough iterations to take
 * about BENCH_SECONDS, the maximum over ranks (the slowest rank sets the
 * pace of a collective). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static double timed(const char *op, char *a, char *b, int bytes, int iters)
{
    int n = bytes / 8 > 0 ? bytes / 8 : 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (!strcmp(op, "barrier"))
            MPI_Barrier(MPI_COMM_WORLD);
        else if (!strcmp(op, "bcast"))
            MPI_Bcast(a, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        else if (!strcmp(op, "allreduce"))
            MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else if (!strcmp(op, "reduce"))
            MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        else if (!strcmp(op, "allgather"))
            MPI_Allgather(a, bytes, MPI_BYTE, b, bytes, MPI_BYTE, MPI_COMM_WORLD);
        else if (!strcmp(op, "alltoall"))
            MPI_Alltoall(a, bytes, MPI_BYTE, b, bytes, MPI_BYTE, MPI_COMM_WORLD);
    }
    double t = (MPI_Wtime() - t0) / iters, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int quick = argc > 1 && !strcmp(argv[1], "quick");
    const char *ops[] = {"barrier", "bcast", "allreduce", "reduce", "allgather", "alltoall"};
    if (argc > 3 && !strcmp(argv[1], "one")) {
        int bytes = atoi(argv[3]);
        size_t span = (size_t)bytes * (size_t)size + 8;
        char *a = malloc(span), *b = malloc(span);
        /* written, as in the full run: calloc'd pages never written all map
         * the kernel's zero page, which every rank then copies from cache */
        memset(a, 1, span);
        memset(b, 0, span);
        double one = timed(argv[2], a, b, bytes, 2);
        double budget = getenv("BENCH_SECONDS") ? atof(getenv("BENCH_SECONDS")) : 0.2;
        int iters = (int)(budget / (one > 1e-7 ? one : 1e-7));
        iters = iters < 3 ? 3 : iters > 2000000 ? 2000000 : iters;
        double t = timed(argv[2], a, b, bytes, iters);
        if (rank == 0)
            printf("RESULT latency op=%s bytes=%d ranks=%d value=%.3f\n", argv[2], bytes, size, t * 1e6);
        free(a);
        free(b);
        MPI_Finalize();
        return 0;
    }
    const int sizes_full[] = {8, 64, 1024, 16384, 131072, 1048576}, sizes_quick[] = {8, 16384};
    const int *sizes = quick ? sizes_quick : sizes_full;
    int nsizes = quick ? 2 : 6;
    size_t maxb = (size_t)(quick ? 16384 : 1048576) * (size_t)size;
    char *a = malloc(maxb), *b = malloc(maxb);
    memset(a, 1, maxb);
    memset(b, 0, maxb);
    double budget = quick ? 0.02 : 0.2;
    for (int o = 0; o < 6; o++) {
        for (int s = 0; s < nsizes; s++) {
            int bytes = sizes[s];
            if (o == 0 && s > 0)
                break;
            /* the all-to-all kinds move size x bytes per rank: cap at 16 MiB */
            if ((o >= 4) && (size_t)bytes * (size_t)size > (16u << 20))
                continue;
            double one = timed(ops[o], a, b, bytes, 2);
            int iters = (int)(budget / (one > 1e-7 ? one : 1e-7));
            iters = iters < 3 ? 3 : iters > 20000 ? 20000 : iters;
            double t = timed(ops[o], a, b, bytes, iters);
            if (rank == 0)
                printf("RESULT latency op=%s bytes=%d ranks=%d value=%.3f\n", ops[o], o == 0 ? 0 : bytes, size,
                       t * 1e6);
            fflush(stdout);
        }
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
