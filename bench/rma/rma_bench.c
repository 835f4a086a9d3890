/* bench/rma: one-sided communication, the same source for every mpicc.
 *
 *   rma_bench lat [quick]     2 ranks: put/get latency per flavour and
 *                             synchronization, fetch_and_op,
 *                             compare_and_swap and accumulate latency, put and accumulate
 *                             rates, PSCW epoch time
 *   rma_bench sync [quick]    any ranks: fence time, exclusive lock/unlock
 *                             pairs with every rank contending, window
 *                             creation time per flavour
 *   (across hosts, windows of MPI_Win_allocate_shared are left out)
 *   rma_bench passive         2 ranks: rank 1 computes for 2 s without
 *                             calling MPI; rank 0's lock, put, accumulate,
 *                             unlock on it (create and allocate windows)
 *
 * Output: RESULT <metric> key=value ... value=<number>.  Latencies and
 * times are means over enough iterations to take about BENCH_SECONDS (0.1 s;
 * 0.02 s quick), in microseconds; rates are operations per second per
 * process, both ranks issuing at once. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, quick;
static int world_shares; /* every rank on one host: MPI_Win_allocate_shared over the world works */
static double budget;

enum { FL_ALLOCATE, FL_CREATE, FL_SHARED, FL_DYNAMIC };
static const char *flavors[] = {"allocate", "create", "shared", "dynamic"};

typedef struct {
    MPI_Win win;
    char *base;
    void *own;
    MPI_Aint peer_disp; /* displacement of the peer's byte 0 */
} window;

static void open_win(window *w, int flavor, MPI_Aint bytes)
{
    memset(w, 0, sizeof(*w));
    switch (flavor) {
    case FL_ALLOCATE:
        MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->base, &w->win);
        break;
    case FL_CREATE:
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &w->own);
        w->base = w->own;
        MPI_Win_create(w->base, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        break;
    case FL_SHARED:
        MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->base, &w->win);
        break;
    case FL_DYNAMIC: {
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &w->own);
        w->base = w->own;
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        MPI_Win_attach(w->win, w->base, bytes);
        break;
    }
    }
    memset(w->base, 0, bytes);
    if (flavor == FL_DYNAMIC) {
        MPI_Aint mine, *all = malloc(size * sizeof(MPI_Aint));
        MPI_Get_address(w->base, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
        w->peer_disp = all[(rank + 1) % size];
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void close_win(window *w, int flavor)
{
    if (flavor == FL_DYNAMIC)
        MPI_Win_detach(w->win, w->base);
    MPI_Win_free(&w->win);
    if (w->own)
        MPI_Free_mem(w->own);
}

/* How many iterations of a step taking `one` seconds fill the budget
 * (agreed by all ranks). */
static int iterations(double one)
{
    double m;
    MPI_Allreduce(&one, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int it = (int)(budget / (m > 1e-8 ? m : 1e-8));
    return it < 5 ? 5 : it > 2000000 ? 2000000 : it;
}

enum { SY_FLUSH, SY_FENCE, SY_LOCK };
static const char *syncs[] = {"flush", "fence", "lock"};

/* Rank 0 puts or gets `bytes` at rank 1 under `sync`, n times; the mean. */
static double latency_run(window *w, int sync, int get, int bytes, char *buf, int n)
{
    int peer = 1;
    MPI_Aint d = w->peer_disp;
    if (sync == SY_FLUSH)
        MPI_Win_lock_all(0, w->win);
    if (sync == SY_FENCE)
        MPI_Win_fence(0, w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (sync == SY_LOCK && rank == 0)
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, w->win);
        if (rank == 0) {
            if (get)
                MPI_Get(buf, bytes, MPI_BYTE, peer, d, bytes, MPI_BYTE, w->win);
            else
                MPI_Put(buf, bytes, MPI_BYTE, peer, d, bytes, MPI_BYTE, w->win);
        }
        if (sync == SY_FLUSH && rank == 0)
            MPI_Win_flush(peer, w->win);
        else if (sync == SY_FENCE)
            MPI_Win_fence(0, w->win);
        else if (sync == SY_LOCK && rank == 0)
            MPI_Win_unlock(peer, w->win);
    }
    double t = (MPI_Wtime() - t0) / n;
    if (sync == SY_FLUSH)
        MPI_Win_unlock_all(w->win);
    if (sync == SY_FENCE)
        MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return t;
}

static void latencies(void)
{
    /* BENCH_RMA_SIZES=8,1024,... (at most 8, each up to 64 KiB) to place a threshold */
    int sizes[8] = {8, 65536}, nsizes = 2;
    const char *list = getenv("BENCH_RMA_SIZES");
    if (list)
        for (nsizes = 0; *list && nsizes < 8; list += strcspn(list, ","), list += *list == ',') {
            int v = atoi(list);
            if (v > 0 && v <= 65536)
                sizes[nsizes++] = v;
        }
    char *buf = malloc(65536);
    memset(buf, 1, 65536);
    for (int f = 0; f < 4; f++) {
        window w;
        if (f == FL_SHARED && !world_shares)
            continue;
        open_win(&w, f, 65536);
        for (int s = 0; s < 3; s++)
            for (int get = 0; get < 2; get++)
                for (int b = 0; b < nsizes; b++) {
                    if (quick && b == 1)
                        continue;
                    double one = latency_run(&w, s, get, sizes[b], buf, 20);
                    double t = latency_run(&w, s, get, sizes[b], buf, iterations(one));
                    if (rank == 0)
                        printf("RESULT %s bytes=%d flavor=%s sync=%s value=%.4f\n", get ? "get_latency" : "put_latency",
                               sizes[b], flavors[f], syncs[s], t * 1e6);
                    fflush(stdout);
                }
        close_win(&w, f);
    }
    free(buf);
}

/* One-element atomics on int64 at rank 1, flushed each time:
 * fetch_and_op (sum), compare_and_swap, accumulate (sum). */
enum { AT_FOP, AT_CAS, AT_ACC };
static const char *atomic_metrics[] = {"fop_latency", "cas_latency", "acc_latency"};

static double atomic_run(window *w, int kind, int n)
{
    int64_t one = 1, old = 0, cmp = 0;
    MPI_Win_lock_all(0, w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rank == 0)
        for (int i = 0; i < n; i++) {
            if (kind == AT_CAS)
                MPI_Compare_and_swap(&one, &cmp, &old, MPI_INT64_T, 1, 0, w->win);
            else if (kind == AT_FOP)
                MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 0, MPI_SUM, w->win);
            else
                MPI_Accumulate(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, MPI_SUM, w->win);
            MPI_Win_flush(1, w->win);
        }
    double t = (MPI_Wtime() - t0) / n;
    MPI_Win_unlock_all(w->win);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return t;
}

/* Both ranks issue bursts of 8-byte puts or accumulates at each other,
 * flushing at the end of each burst; operations per second per process. */
/* Puts of BYTES (accumulates of one TYPE) in bursts of 1000, each burst
 * flushed: operations per second. */
static double rate_run(window *w, int acc, MPI_Datatype type, MPI_Op op, int bytes, int n)
{
    const int burst = 1000;
    int peer = (rank + 1) % size;
    static char v[16384];
    MPI_Win_lock_all(0, w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < burst; k++) {
            MPI_Aint d = (MPI_Aint)(k % (65536 / bytes)) * bytes;
            if (acc)
                MPI_Accumulate(v, 1, type, peer, d, 1, type, op, w->win);
            else
                MPI_Put(v, bytes, MPI_BYTE, peer, d, bytes, MPI_BYTE, w->win);
        }
        MPI_Win_flush(peer, w->win);
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Win_unlock_all(w->win);
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return (double)n * burst / tmax;
}

/* Each rank exposes to and accesses the other: post, start, one put,
 * complete, wait. */
static double pscw_run(window *w, int n)
{
    MPI_Group world, peer;
    int other = (rank + 1) % size;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &other, &peer);
    char v = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Win_post(peer, 0, w->win);
        MPI_Win_start(peer, 0, w->win);
        MPI_Put(&v, 1, MPI_BYTE, other, 0, 1, MPI_BYTE, w->win);
        MPI_Win_complete(w->win);
        MPI_Win_wait(w->win);
    }
    double t = (MPI_Wtime() - t0) / n, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    return tmax;
}

static void pair_metrics(void)
{
    window w;
    open_win(&w, FL_ALLOCATE, 65536);
    for (int kind = AT_FOP; kind <= AT_ACC; kind++) {
        double t = atomic_run(&w, kind, iterations(atomic_run(&w, kind, 20)));
        if (rank == 0)
            printf("RESULT %s flavor=allocate value=%.4f\n", atomic_metrics[kind], t * 1e6);
    }
    /* larger puts: where a transport switches paths (across hosts: messages
     * below LMPI_RMA_WIRE_MIN, the provider's RMA from there) */
    const int rate_sizes[] = {8, 1024, 4096, 16384};
    double r;
    int n;
    for (int b = 0; b < (quick ? 1 : 4); b++) {
        r = rate_run(&w, 0, MPI_BYTE, MPI_SUM, rate_sizes[b], 1);
        n = (int)(budget * r / 1000) + 1;
        r = rate_run(&w, 0, MPI_BYTE, MPI_SUM, rate_sizes[b], n);
        if (rank == 0)
            printf("RESULT put_rate bytes=%d value=%.0f\n", rate_sizes[b], r);
    }
    const char *opn[] = {"sum", "replace"};
    MPI_Op ops[] = {MPI_SUM, MPI_REPLACE};
    const char *tyn[] = {"int64", "double"};
    MPI_Datatype tys[] = {MPI_INT64_T, MPI_DOUBLE};
    for (int o = 0; o < 2; o++)
        for (int ty = 0; ty < 2; ty++) {
            r = rate_run(&w, 1, tys[ty], ops[o], 8, 1);
            n = (int)(budget * r / 1000) + 1;
            r = rate_run(&w, 1, tys[ty], ops[o], 8, n);
            if (rank == 0)
                printf("RESULT acc_rate bytes=8 op=%s type=%s value=%.0f\n", opn[o], tyn[ty], r);
        }
    double t = pscw_run(&w, iterations(pscw_run(&w, 20)));
    if (rank == 0)
        printf("RESULT pscw_time ranks=%d value=%.4f\n", size, t * 1e6);
    fflush(stdout);
    close_win(&w, FL_ALLOCATE);
}

static double fence_run(window *w, int n)
{
    MPI_Win_fence(0, w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++)
        MPI_Win_fence(0, w->win);
    double t = (MPI_Wtime() - t0) / n, tmax;
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win);
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

/* Every rank takes rank 0's exclusive lock, puts 8 bytes, unlocks: the mean
 * time of one pair as one contender sees it (size - 1 others contend). */
static double lock_run(window *w, int n)
{
    int64_t v = rank;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win);
        MPI_Put(&v, 8, MPI_BYTE, 0, 0, 8, MPI_BYTE, w->win);
        MPI_Win_unlock(0, w->win);
    }
    double t = (MPI_Wtime() - t0) / n, tavg;
    MPI_Allreduce(&t, &tavg, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return tavg / size;
}

static double create_run(int flavor, int n)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        window w;
        open_win(&w, flavor, 4096);
        close_win(&w, flavor);
    }
    double t = (MPI_Wtime() - t0) / n, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

static void sync_metrics(void)
{
    window w;
    open_win(&w, FL_ALLOCATE, 65536);
    double t = fence_run(&w, iterations(fence_run(&w, 10)));
    if (rank == 0)
        printf("RESULT fence_time ranks=%d value=%.4f\n", size, t * 1e6);
    fflush(stdout);
    t = lock_run(&w, iterations(lock_run(&w, 10)));
    if (rank == 0)
        printf("RESULT lock_time contenders=%d value=%.4f\n", size - 1, t * 1e6);
    fflush(stdout);
    close_win(&w, FL_ALLOCATE);
    for (int f = 0; f < 4; f++) {
        if (f == FL_SHARED && !world_shares)
            continue;
        t = create_run(f, iterations(create_run(f, 2)) / 4 + 1);
        if (rank == 0)
            printf("RESULT win_create_time flavor=%s ranks=%d value=%.4f\n", flavors[f], size, t * 1e6);
        fflush(stdout);
    }
}

/* A passive target that computes: what rank 0's epoch costs while rank 1
 * does not enter MPI for 2 s (an implementation that needs the target's
 * help takes the whole 2 s). */
static void passive_metrics(void)
{
    for (int f = FL_ALLOCATE; f <= FL_CREATE; f++) {
        window w;
        open_win(&w, f, 4096);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = 0;
        if (rank == 1) {
            double t0 = MPI_Wtime();
            volatile double x = 0;
            while (MPI_Wtime() - t0 < 2.0)
                x += 1;
        } else if (rank == 0) {
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < 0.1) /* let rank 1 get into its loop */
                ;
            int64_t v = 42, one = 1;
            t0 = MPI_Wtime();
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, w.win);
            MPI_Put(&v, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, w.win);
            MPI_Accumulate(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, MPI_SUM, w.win);
            MPI_Win_unlock(1, w.win);
            t = MPI_Wtime() - t0;
            printf("RESULT passive_epoch_time flavor=%s value=%.2f\n", flavors[f], t * 1e6);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        close_win(&w, f);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "lat";
    quick = argc > 2 && !strcmp(argv[2], "quick");
    const char *b = getenv("BENCH_SECONDS");
    budget = b ? atof(b) : quick ? 0.02 : 0.1;
    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    world_shares = node_size == size;
    if (!strcmp(what, "lat") && size >= 2) {
        latencies();
        pair_metrics();
    } else if (!strcmp(what, "sync")) {
        sync_metrics();
    } else if (!strcmp(what, "passive") && size >= 2) {
        passive_metrics();
    }
    MPI_Finalize();
    return 0;
}
