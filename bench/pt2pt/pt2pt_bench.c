/* bench/pt2pt: point-to-point at the MPI level.  Standard MPI only, so the
 * same source builds with every mpicc (LeanMPI, MPICH, Open MPI).
 *
 *   pt2pt_bench latency MAXBYTES    ping-pong, half round trip (us), 0 B .. MAXBYTES
 *   pt2pt_bench bw MAXBYTES         unidirectional bandwidth, window of 64 (GB/s)
 *   pt2pt_bench bibw MAXBYTES       bidirectional bandwidth, window of 64 (GB/s)
 *   pt2pt_bench rate                8-byte message rate, window of 64 (messages/s)
 *   pt2pt_bench deepq TAGS REPS     deep queue: rank 0 pre-posts receives from every
 *                                   other rank and TAGS tags; the messages arrive in
 *                                   reverse order of posting while rank 0 sleeps; the
 *                                   time rank 0 then needs to complete them all (us)
 *   pt2pt_bench part BYTES          partitioned send of BYTES in 8, 16, 32, 64 partitions:
 *                                   all but the last readied, 1 ms of "compute", the last
 *                                   readied; time from that last MPI_Pready to the
 *                                   receiver's completion (us, CLOCK_MONOTONIC is shared
 *                                   by the processes of one host)
 *   pt2pt_bench idle SECONDS        rank 1 waits in MPI_Recv while rank 0 sleeps SECONDS
 *                                   (default 1) outside MPI: the processor time rank 1
 *                                   spent, as a share of the wait (1.0: a core busy)
 *   pt2pt_bench poll                a 4-byte token around all ranks, each waiting for it
 *                                   in a loop of MPI_Iprobe (then MPI_Recv), then of
 *                                   MPI_Test on an MPI_Irecv, as programs poll between
 *                                   pieces of work (HPL's panel broadcast): time per hop
 *                                   (us); with more ranks than cores the holder of the
 *                                   token needs the processor a poller sits on
 *
 * Rank 0 prints one line per point:  RESULT <metric> <key>=<value>... value=<v>
 * The driver (bench/run) alternates implementations and takes medians. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "iterations.h"

#define WINDOW 64

static int rank, size;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One ping-pong point: half the round trip, in microseconds. */
static double pingpong(char *buf, long b, int iters)
{
    int warm = iters / 10 + 1;
    double t0 = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < warm + iters; i++) {
        if (i == warm)
            t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, (int)b, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)b, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, (int)b, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)b, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / iters / 2;
}

/* latency MAX: 0, 1, 4, 16 ... MAX bytes; latency A,B,C: those sizes only. */
static void latency(const char *arg, int base)
{
    long sizes[64];
    int n = 0;
    if (strchr(arg, ',')) {
        for (const char *p = arg; *p && n < 64; p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p))
            sizes[n++] = atol(p);
    } else {
        for (long b = 0, max = atol(arg); b <= max && n < 64; b = b ? b * 4 : 1)
            sizes[n++] = b;
    }
    long maxbytes = 0;
    for (int i = 0; i < n; i++)
        maxbytes = sizes[i] > maxbytes ? sizes[i] : maxbytes;
    char *buf = calloc(1, (size_t)maxbytes + 1);
    for (int i = 0; i < n; i++) {
        double us = pingpong(buf, sizes[i], iterations(sizes[i], base));
        if (rank == 0)
            printf("RESULT latency bytes=%ld value=%.3f\n", sizes[i], us);
        fflush(stdout);
    }
    free(buf);
}

/* The busy neighbour of the load benchmark: ping-pong until killed. */
static void forever(void)
{
    char buf[8] = {0};
    for (;;)
        pingpong(buf, 8, 100000);
}

static void bandwidth(long maxbytes, int bidir, int base)
{
    /* sends share one buffer; receives get their own slots up to 64 MiB,
     * then wrap around (as osu_bw does) */
    size_t span = (size_t)maxbytes * WINDOW < (64u << 20) ? (size_t)maxbytes * WINDOW : (64u << 20);
    char *sbuf = calloc(1, (size_t)maxbytes), *rbuf = calloc(1, span + (size_t)maxbytes);
    memset(sbuf, 1, (size_t)maxbytes);
    memset(rbuf, 0, span + (size_t)maxbytes);
    MPI_Request rq[2 * WINDOW];
    for (long b = 1; b <= maxbytes; b *= 4) {
        int iters = iterations(b, base / 10 > 10 ? base / 10 : 10);
        double t0 = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < iters + 2; i++) {
            if (i == 2)
                t0 = MPI_Wtime();
            int n = 0;
            if (rank == 0 || (bidir && rank == 1)) {
                int peer = 1 - rank;
                if (bidir)
                    for (int w = 0; w < WINDOW; w++)
                        MPI_Irecv(rbuf + (size_t)(w * b) % span, (int)b, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
                                  &rq[n++]);
                for (int w = 0; w < WINDOW; w++)
                    MPI_Isend(sbuf, (int)b, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &rq[n++]);
                MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
                if (!bidir)
                    MPI_Recv(rbuf, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                for (int w = 0; w < WINDOW; w++)
                    MPI_Irecv(rbuf + (size_t)(w * b) % span, (int)b, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &rq[n++]);
                MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
                MPI_Send(sbuf, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
            }
        }
        double secs = MPI_Wtime() - t0;
        double gbs = (double)b * WINDOW * iters * (bidir ? 2 : 1) / secs / 1e9;
        if (rank == 0)
            printf("RESULT %s bytes=%ld value=%.4f\n", bidir ? "bibandwidth" : "bandwidth", b, gbs);
    }
    free(sbuf);
    free(rbuf);
}

static void rate(int base)
{
    char sbuf[8 * WINDOW], rbuf[8 * WINDOW];
    MPI_Request rq[WINDOW];
    int iters = base / 5;
    double t0 = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters + 10; i++) {
        if (i == 10)
            t0 = MPI_Wtime();
        if (rank == 0) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(sbuf + 8 * w, 8, MPI_BYTE, 1, 4, MPI_COMM_WORLD, &rq[w]);
            MPI_Waitall(WINDOW, rq, MPI_STATUSES_IGNORE);
            MPI_Recv(rbuf, 1, MPI_BYTE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(rbuf + 8 * w, 8, MPI_BYTE, 0, 4, MPI_COMM_WORLD, &rq[w]);
            MPI_Waitall(WINDOW, rq, MPI_STATUSES_IGNORE);
            MPI_Send(sbuf, 1, MPI_BYTE, 0, 5, MPI_COMM_WORLD);
        }
    }
    double secs = MPI_Wtime() - t0;
    if (rank == 0)
        printf("RESULT message_rate bytes=8 value=%.0f\n", (double)WINDOW * iters / secs);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Rank 0 posts (src 1, tags 0..T-1), (src 2, ...), ...; the senders then
 * send in exactly the reverse order -- rank size-1 first, tags descending,
 * passing a token down the chain -- while rank 0 sleeps without calling
 * MPI.  Each message carries its send time; a repetition whose sends were
 * not all done before rank 0 woke up is redone with a longer sleep. */
static void deepq(int tags, int reps)
{
    int n = (size - 1) * tags;
    double *in = calloc((size_t)n, sizeof(double));
    MPI_Request *rq = calloc((size_t)n, sizeof(MPI_Request));
    double *times = calloc((size_t)reps, sizeof(double));
    double sleep_s = 0.2 + 0.004 * size;
    int valid = 0, late = 0;
    for (int rep = 0; rep < reps + 3 && valid < reps; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int s = 1, k = 0; s < size; s++)
                for (int t = 0; t < tags; t++, k++)
                    MPI_Irecv(&in[k], 1, MPI_DOUBLE, s, 100 + t, MPI_COMM_WORLD, &rq[k]);
            for (int s = 1; s < size; s++) /* go */
                MPI_Send(&sleep_s, 1, MPI_DOUBLE, s, 99, MPI_COMM_WORLD);
            usleep((useconds_t)(sleep_s * 1e6));
            double t0 = mono();
            MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
            double t1 = mono();
            double last = 0;
            for (int k = 0; k < n; k++)
                if (in[k] > last)
                    last = in[k];
            if (last < t0) {
                times[valid++] = (t1 - t0) * 1e6;
            } else {
                late++;
                sleep_s *= 2;
            }
            int again = valid < reps;
            for (int s = 1; s < size; s++)
                MPI_Send(&again, 1, MPI_INT, s, 98, MPI_COMM_WORLD);
            if (!again)
                break;
        } else {
            double ignored;
            MPI_Recv(&ignored, 1, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int token = 0;
            if (rank < size - 1)
                MPI_Recv(&token, 1, MPI_INT, rank + 1, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int t = tags - 1; t >= 0; t--) {
                double now = mono();
                MPI_Send(&now, 1, MPI_DOUBLE, 0, 100 + t, MPI_COMM_WORLD);
            }
            if (rank > 1)
                MPI_Send(&token, 1, MPI_INT, rank - 1, 97, MPI_COMM_WORLD);
            int again;
            MPI_Recv(&again, 1, MPI_INT, 0, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (!again)
                break;
        }
    }
    if (rank == 0) {
        if (valid == 0) {
            printf("RESULT deep_queue_time ranks=%d tags=%d value=-1 late=%d\n", size, tags, late);
        } else {
            qsort(times, (size_t)valid, sizeof(double), cmp_double);
            printf("RESULT deep_queue_time ranks=%d tags=%d value=%.1f late=%d\n", size, tags, times[valid / 2],
                   late);
        }
    }
    free(in);
    free(rq);
    free(times);
}

static void partitioned(long bytes, int base)
{
    int iters = base / 20 < 20 ? 20 : base / 20;
    char *buf = malloc((size_t)bytes);
    double *lat = malloc(sizeof(double) * (size_t)iters);
    memset(buf, rank, (size_t)bytes);
    for (int parts = 8; parts <= 64; parts *= 2) {
        MPI_Request rq;
        int count = (int)(bytes / parts);
        if (rank == 0)
            MPI_Psend_init(buf, parts, count, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
        else if (rank == 1)
            MPI_Precv_init(buf, parts, count, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
        for (int it = -2; it < iters; it++) { /* two warm-up rounds: the first one matches */
            MPI_Barrier(MPI_COMM_WORLD);
            double t_last = 0, t_done = 0;
            if (rank == 0) {
                MPI_Start(&rq);
                MPI_Pready_range(0, parts - 2, rq);
                double until = mono() + 1e-3;
                while (mono() < until) { /* compute while the early partitions travel */
                    int flag;
                    MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
                }
                t_last = mono();
                MPI_Pready(parts - 1, rq);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
                MPI_Send(&t_last, 1, MPI_DOUBLE, 1, 10, MPI_COMM_WORLD);
            } else if (rank == 1) {
                MPI_Start(&rq);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
                t_done = mono();
                MPI_Recv(&t_last, 1, MPI_DOUBLE, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (it >= 0)
                    lat[it] = (t_done - t_last) * 1e6;
            }
        }
        if (rank == 1) {
            qsort(lat, (size_t)iters, sizeof(double), cmp_double);
            printf("RESULT partitioned_last_ready bytes=%ld partitions=%d value=%.2f\n", bytes, parts, lat[iters / 2]);
            fflush(stdout);
        }
        if (rank < 2)
            MPI_Request_free(&rq);
    }
    free(buf);
    free(lat);
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* What waiting costs the other processes of a node: a rank blocked in a
 * receive for a while (three rounds, the median). */
static void idle(double seconds)
{
    double share[3];
    int v = 0;
    for (int round = 0; round < 3; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            usleep((useconds_t)(seconds * 1e6));
            MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        } else if (rank == 1) {
            double c0 = cpu_seconds(), t0 = mono();
            MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            share[round] = (cpu_seconds() - c0) / (mono() - t0);
        }
    }
    if (rank == 1) {
        qsort(share, 3, sizeof(double), cmp_double);
        printf("RESULT idle_cpu seconds=%g value=%.3f\n", seconds, share[1]);
        fflush(stdout);
    }
}

static void poll_ring(int base)
{
    int rounds = base / 2 > 50 ? base / 2 : 50, tok = 0, flag;
    int prev = (rank + size - 1) % size, next = (rank + 1) % size;
    for (int pass = 0; pass < 4; pass++) { /* iprobe, test, each after a warm-up pass */
        int with_test = pass / 2;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int r = 0; r < rounds; r++) {
            if (rank != 0 || r > 0) {
                if (with_test) {
                    MPI_Request rq;
                    MPI_Irecv(&tok, 1, MPI_INT, prev, 6, MPI_COMM_WORLD, &rq);
                    do
                        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
                    while (!flag);
                } else {
                    do
                        MPI_Iprobe(prev, 6, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                    while (!flag);
                    MPI_Recv(&tok, 1, MPI_INT, prev, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
            }
            MPI_Send(&tok, 1, MPI_INT, next, 6, MPI_COMM_WORLD);
        }
        if (rank == 0)
            MPI_Recv(&tok, 1, MPI_INT, prev, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double us = (MPI_Wtime() - t0) / rounds / size * 1e6;
        if (rank == 0 && pass % 2)
            printf("RESULT poll_hop by=%s ranks=%d value=%.3f\n", with_test ? "test" : "iprobe", size, us);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *test = argc > 1 ? argv[1] : "latency";
    int base = getenv("BENCH_ITERS") ? atoi(getenv("BENCH_ITERS")) : 2000;
    if (!strcmp(test, "latency"))
        latency(argc > 2 ? argv[2] : "4194304", base);
    else if (!strcmp(test, "forever"))
        forever();
    else if (!strcmp(test, "bw"))
        bandwidth(argc > 2 ? atol(argv[2]) : 4 << 20, 0, base);
    else if (!strcmp(test, "bibw"))
        bandwidth(argc > 2 ? atol(argv[2]) : 4 << 20, 1, base);
    else if (!strcmp(test, "rate"))
        rate(base);
    else if (!strcmp(test, "part"))
        partitioned(argc > 2 ? atol(argv[2]) : 4 << 20, base);
    else if (!strcmp(test, "idle"))
        idle(argc > 2 ? atof(argv[2]) : 1.0);
    else if (!strcmp(test, "poll"))
        poll_ring(base);
    else if (!strcmp(test, "deepq"))
        deepq(argc > 2 ? atoi(argv[2]) : 4, argc > 3 ? atoi(argv[3]) : 5);
    else if (rank == 0)
        fprintf(stderr, "unknown test %s\n", test);
    MPI_Finalize();
    return 0;
}
