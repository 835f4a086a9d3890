/* bench/comm, MPI level: the same source builds with every mpicc.
 *
 *   comm_bench split N      N x MPI_Comm_split (odd/even), or
 *   comm_bench dup N        N x MPI_Comm_dup: private resident memory growth
 *                           and time per communicator (one kind per run, so
 *                           that neither reuses the other's freed memory)
 *   comm_bench issue N      LeanMPI only: the MPI_Isend issue rate with the
 *                           transport skipped (MPI_Pcontrol(2)), per rank-map
 *                           mode of the communicator
 *
 * Every new communicator is used once (a barrier), so memory a library
 * allocates on first use is counted.  Memory is the resident set size before
 * and after, averaged over the ranks; time is the slowest rank's. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Private resident memory (resident minus shared pages): first touches of a
 * library's shared-memory segment are a one-time cost, not per
 * communicator. */
static long rss_bytes(void)
{
    long pages = 0, resident = 0, shared = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld %ld", &pages, &resident, &shared) != 3)
            resident = shared = 0;
        fclose(f);
    }
    return (resident - shared) * sysconf(_SC_PAGESIZE);
}

/* max of *t and sum of *g at rank 0, with point-to-point only (so that the
 * benchmark needs nothing but communicator creation from a library) */
static void gather_max_sum(double *t, double *g, int rank, int size)
{
    double v[2] = {*t, *g};
    if (rank != 0) {
        MPI_Send(v, 2, MPI_DOUBLE, 0, 77, MPI_COMM_WORLD);
        return;
    }
    for (int r = 1; r < size; r++) {
        double in[2];
        MPI_Recv(in, 2, MPI_DOUBLE, r, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (in[0] > *t)
            *t = in[0];
        *g += in[1];
    }
}

static void create_bench(int w, int n, int rank, int size)
{
    MPI_Comm *c = malloc(sizeof(MPI_Comm) * (size_t)n);
    const char *what[2] = {"split", "dup"};
    {
        /* warm-up: the first creations may set up internals once */
        for (int i = 0; i < 3; i++) {
            MPI_Comm tmp;
            if (w == 0)
                MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &tmp);
            else
                MPI_Comm_dup(MPI_COMM_WORLD, &tmp);
            MPI_Barrier(tmp);
            MPI_Comm_free(&tmp);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        long before = rss_bytes();
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            if (w == 0)
                MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c[i]);
            else
                MPI_Comm_dup(MPI_COMM_WORLD, &c[i]);
        }
        double t = MPI_Wtime() - t0;
        for (int i = 0; i < n; i++)
            MPI_Barrier(c[i]);
        long grow = rss_bytes() - before;
        double tmax = t, gsum = (double)grow;
        gather_max_sum(&tmax, &gsum, rank, size);
        if (rank == 0) {
            printf("RESULT time_per_comm ranks=%d pattern=%s value=%.3f\n", size, what[w], tmax / n * 1e6);
            printf("RESULT rss_bytes_per_comm ranks=%d pattern=%s value=%.1f\n", size, what[w], gsum / size / n);
        }
        for (int i = 0; i < n; i++)
            MPI_Comm_free(&c[i]);
    }
    free(c);
}

/* Rank 0 issues n Isends round-robin over the other ranks of c; with the
 * transport skipped they complete at once and are freed in batches. */
static void issue_on(MPI_Comm c, const char *mode, int n)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    if (rank == 0 && size > 1) {
        enum { BATCH = 64 };
        MPI_Request r[BATCH];
        char byte = 0;
        MPI_Pcontrol(2);
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = MPI_Wtime();
            for (int i = 0; i < n; i += BATCH) {
                for (int k = 0; k < BATCH; k++)
                    MPI_Isend(&byte, 1, MPI_BYTE, 1 + (i + k) % (size - 1), 0, c, &r[k]);
                MPI_Waitall(BATCH, r, MPI_STATUSES_IGNORE);
            }
            double t = MPI_Wtime() - t0;
            best = t < best ? t : best;
        }
        MPI_Pcontrol(1);
        printf("RESULT issue_rate mode=%s value=%.0f\n", mode, n / best);
        fflush(stdout);
        for (int p = 1; p < size; p++)
            MPI_Send(&byte, 1, MPI_BYTE, p, 1, c);
    } else if (size > 1) {
        /* wait asleep, so that the issuing rank has a core to itself */
        int flag = 0;
        char byte;
        while (!flag) {
            MPI_Iprobe(0, 1, c, &flag, MPI_STATUS_IGNORE);
            if (!flag)
                usleep(1000);
        }
        MPI_Recv(&byte, 1, MPI_BYTE, 0, 1, c, MPI_STATUS_IGNORE);
    }
}

/* A barrier whose waiters sleep, so that one issuing rank at a time has a
 * core to itself. */
static void quiet_barrier(int rank, int size)
{
    char byte = 0;
    int flag = 0;
    if (rank == 0) {
        for (int got = 1; got < size;) {
            MPI_Iprobe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (flag) {
                MPI_Recv(&byte, 1, MPI_BYTE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                got++;
            } else {
                usleep(200);
            }
        }
        for (int p = 1; p < size; p++)
            MPI_Send(&byte, 1, MPI_BYTE, p, 3, MPI_COMM_WORLD);
        return;
    }
    MPI_Send(&byte, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    while (!flag) {
        MPI_Iprobe(0, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (!flag)
            usleep(200);
    }
    MPI_Recv(&byte, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void issue_bench(int n, int rank, int size)
{
    MPI_Comm dup, high, odd, blocks, shuffled;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank >= size / 2, rank, &high);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &odd);
    MPI_Comm_split(MPI_COMM_WORLD, (rank / 2) % 2, rank, &blocks);
    MPI_Comm_split(MPI_COMM_WORLD, 0, (rank * 5 + 3) % size, &shuffled);
    /* named by the mode each gets from LeanMPI's compressed maps (under
     * LMPI_RANKMAP=table every one of them is a table) */
    issue_on(dup, "direct", n);
    quiet_barrier(rank, size);
    if (rank >= size / 2)
        issue_on(high, "offset", n);
    quiet_barrier(rank, size);
    if (rank % 2)
        issue_on(odd, "stride", n);
    quiet_barrier(rank, size);
    if ((rank / 2) % 2 == 0)
        issue_on(blocks, "stride-blocks", n);
    quiet_barrier(rank, size);
    issue_on(shuffled, "lut", n);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&high);
    MPI_Comm_free(&odd);
    MPI_Comm_free(&blocks);
    MPI_Comm_free(&shuffled);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "split";
    int n = argc > 2 ? atoi(argv[2]) : 100;
    if (!strcmp(what, "split") || !strcmp(what, "dup"))
        create_bench(!strcmp(what, "dup"), n, rank, size);
    else
        issue_bench(n, rank, size);
    MPI_Finalize();
    return 0;
}
