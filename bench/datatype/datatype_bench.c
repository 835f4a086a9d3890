/* bench/datatype: MPI_Pack / MPI_Unpack throughput per type, and ping-pong
 * of a strided vector and of 1 MiB into skewed 256 KiB blocks.  Same source
 * for every mpicc.
 *
 *   datatype_bench pack        (1 rank)  RESULT pack_throughput / unpack_throughput
 *   datatype_bench pingpong    (2 ranks) RESULT pingpong_latency
 *
 * Throughput is packed bytes per second (GB/s), best of a few repetitions
 * of at least BENCH_MIN_SECONDS each; `memcpy-*` rows copy the same runs
 * with memcpy, the reference for contiguous blocks. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double min_seconds = 0.05;

typedef struct {
    char c;
    double d[3];
    int i;
} rec;

static double best_rate(MPI_Datatype t, int count, void *buf, void *packed, int psize, int unpack)
{
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        long iters = 0;
        double t0 = MPI_Wtime(), el;
        do {
            int pos = 0;
            if (unpack)
                MPI_Unpack(packed, psize, &pos, buf, count, t, MPI_COMM_SELF);
            else
                MPI_Pack(buf, count, t, packed, psize, &pos, MPI_COMM_SELF);
            iters++;
        } while ((el = MPI_Wtime() - t0) < min_seconds);
        double rate = (double)psize * iters / el / 1e9;
        if (rate > best)
            best = rate;
    }
    return best;
}

static void report(const char *name, MPI_Datatype t, int count, void *buf)
{
    int psize;
    MPI_Pack_size(count, t, MPI_COMM_SELF, &psize);
    void *packed = malloc((size_t)psize);
    double p = best_rate(t, count, buf, packed, psize, 0);
    double u = best_rate(t, count, buf, packed, psize, 1);
    printf("RESULT pack_throughput type=%s bytes=%d value=%.3f\n", name, psize, p);
    printf("RESULT unpack_throughput type=%s bytes=%d value=%.3f\n", name, psize, u);
    fflush(stdout);
    free(packed);
}

/* memcpy of the same runs: blocks of `block` bytes every 2 * block */
static void memcpy_reference(const char *name, char *buf, int block, int nblocks)
{
    char *out = malloc((size_t)block * nblocks);
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        long iters = 0;
        double t0 = MPI_Wtime(), el;
        do {
            for (int b = 0; b < nblocks; b++)
                memcpy(out + (size_t)b * block, buf + (size_t)b * 2 * block, (size_t)block);
            iters++;
        } while ((el = MPI_Wtime() - t0) < min_seconds);
        double rate = (double)block * nblocks * iters / el / 1e9;
        best = rate > best ? rate : best;
    }
    printf("RESULT pack_throughput type=%s bytes=%d value=%.3f\n", name, block * nblocks, best);
    free(out);
}

static void pack_bench(int quick)
{
    const long total = quick ? (1 << 20) : (4 << 20); /* packed bytes per call */
    char *buf = malloc((size_t)total * 2 + 4096);
    memset(buf, 1, (size_t)total * 2 + 4096);
    const int blocks[] = {8, 64, 1024, 4096, 65536};
    const char *names[] = {"vector-8B", "vector-64B", "vector-1KB", "vector-4KB", "vector-64KB"};
    for (int k = 0; k < 5; k++) {
        MPI_Datatype v;
        int n = (int)(total / blocks[k]);
        MPI_Type_vector(n, blocks[k] / 8, blocks[k] / 4, MPI_DOUBLE, &v);
        MPI_Type_commit(&v);
        report(names[k], v, 1, buf);
        MPI_Type_free(&v);
        if (blocks[k] >= 4096) {
            char nm[32];
            snprintf(nm, sizeof(nm), "memcpy-%s", names[k] + 7);
            memcpy_reference(nm, buf, blocks[k], n);
        }
    }
    /* indexed: irregular blocks of 1..64 doubles with gaps */
    {
        int n = (int)(total / (33 * 8)), *bl = malloc(sizeof(int) * n), *dp = malloc(sizeof(int) * n), at = 0;
        unsigned s = 12345;
        for (int i = 0; i < n; i++) {
            s = s * 1103515245 + 12345;
            bl[i] = 1 + (int)(s >> 16) % 64;
            dp[i] = at;
            at += bl[i] + 1 + (int)(s >> 8) % 8;
        }
        double *ib = calloc((size_t)at + 1, sizeof(double));
        MPI_Datatype t;
        MPI_Type_indexed(n, bl, dp, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        report("indexed", t, 1, ib);
        MPI_Type_free(&t);
        free(ib), free(bl), free(dp);
    }
    /* struct: an array of {char, double[3], int} */
    {
        int n = (int)(total / (1 + 24 + 4));
        rec *r = calloc((size_t)n, sizeof(rec));
        MPI_Datatype t, ts[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
        int bl[3] = {1, 3, 1};
        MPI_Aint dp[3] = {offsetof(rec, c), offsetof(rec, d), offsetof(rec, i)};
        MPI_Type_create_struct(3, bl, dp, ts, &t);
        MPI_Type_commit(&t);
        report("struct", t, n, r);
        MPI_Type_free(&t);
        free(r);
    }
    /* the six faces of a 256^3 (128^3 quick) double array */
    {
        int N = quick ? 128 : 256;
        double *cube = calloc((size_t)N * N * N, sizeof(double));
        const char *face_names[3] = {"subarray-face-x", "subarray-face-y", "subarray-face-z"};
        for (int dim = 0; dim < 3; dim++) {
            int sizes[3] = {N, N, N}, sub[3] = {N, N, N}, start[3] = {0, 0, 0};
            sub[dim] = 1;
            for (int side = 0; side < 2; side++) {
                start[dim] = side ? N - 1 : 0;
                MPI_Datatype f;
                MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &f);
                MPI_Type_commit(&f);
                if (side == 1) /* both sides behave alike: report the far one */
                    report(face_names[dim], f, 1, cube);
                MPI_Type_free(&f);
            }
        }
        free(cube);
    }
    free(buf);
}

/* One side of a ping-pong: what a rank sends or receives. */
typedef struct {
    void *buf;
    int count;
    MPI_Datatype type;
} leg;

/* Seconds per round trip, the best of 3 batches of iters: rank 0 sends out0
 * and receives the reply into back0; rank 1 receives into in1 and replies
 * with reply1. */
static double best_round_trip(int rank, int iters, leg out0, leg back0, leg in1, leg reply1)
{
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(out0.buf, out0.count, out0.type, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(back0.buf, back0.count, back0.type, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(in1.buf, in1.count, in1.type, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(reply1.buf, reply1.count, reply1.type, 0, 0, MPI_COMM_WORLD);
            }
        }
        double t = (MPI_Wtime() - t0) / iters;
        best = t < best ? t : best;
    }
    return best;
}

/* 1 MiB sent contiguous, received into four 256 KiB blocks that start 16
 * bytes further apart than they end (page-aligned buffers): two of the
 * blocks land 16 and 32 bytes past their source modulo a page, where a
 * kernel copy runs 5x slow on some processors; the reply is empty. */
static void blocks_pingpong(int rank, int quick)
{
    enum { BLOCK = 256 << 10, NB = 4, SKEW = 16 };
    char *s = NULL, *r = NULL;
    if (posix_memalign((void **)&s, 4096, (size_t)BLOCK * NB) ||
        posix_memalign((void **)&r, 4096, (size_t)(BLOCK + SKEW) * NB))
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(s, 1, (size_t)BLOCK * NB);
    memset(r, 0, (size_t)(BLOCK + SKEW) * NB);
    MPI_Datatype v;
    MPI_Type_create_hvector(NB, BLOCK, BLOCK + SKEW, MPI_BYTE, &v);
    MPI_Type_commit(&v);
    leg whole = {s, BLOCK * NB, MPI_BYTE}, none = {NULL, 0, MPI_BYTE}, blocks = {r, 1, v};
    double best = best_round_trip(rank, quick ? 20 : 200, whole, none, blocks, none);
    if (rank == 1 && (r[BLOCK + SKEW] != 1 || r[(size_t)(BLOCK + SKEW) * NB - SKEW - 1] != 1))
        fprintf(stderr, "blocks_pingpong: wrong data\n");
    if (rank == 0)
        printf("RESULT pingpong_latency type=blocks-256k-skew16 bytes=%d value=%.3f\n", BLOCK * NB, best * 1e6);
    MPI_Type_free(&v);
    free(s);
    free(r);
}

static void pingpong(int rank, int quick)
{
    const int n = quick ? 4096 : 65536; /* doubles, every other one */
    double *a = calloc((size_t)2 * n, sizeof(double));
    MPI_Datatype v;
    MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    leg strided = {a, 1, v};
    double best = best_round_trip(rank, quick ? 50 : 200, strided, strided, strided, strided) / 2;
    if (rank == 0)
        printf("RESULT pingpong_latency type=vector-stride2 bytes=%d value=%.3f\n", n * 8, best * 1e6);
    MPI_Type_free(&v);
    free(a);
    blocks_pingpong(rank, quick);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int quick = argc > 2 && !strcmp(argv[2], "quick");
    if (quick)
        min_seconds = 0.01;
    if (argc > 1 && !strcmp(argv[1], "pingpong"))
        pingpong(rank, quick);
    else if (rank == 0)
        pack_bench(quick);
    MPI_Finalize();
    return 0;
}
