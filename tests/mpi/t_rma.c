/* One-sided communication: every operation under every synchronization on
 * every flavour, derived datatypes at both ends, contended mutexes, a linked
 * list under exclusive locks, passive target against a computing target,
 * millions of operations in one epoch, request-based operations, attributes
 * and bad input.  `t_rma NAME` runs one case. */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "mpitest.h"

static int rank, size;

enum { FL_CREATE, FL_ALLOCATE, FL_SHARED, FL_DYNAMIC, NFLAVORS };
static const char *flavor_name[] = {"create", "allocate", "shared", "dynamic"};
enum { SY_FENCE, SY_PSCW, SY_LOCK, SY_LOCK_ALL, NSYNCS };
static const char *sync_name[] = {"fence", "pscw", "lock", "lock_all"};

#define N 64

typedef struct {
    MPI_Win win;
    long *base;   /* this rank's window memory (N longs) */
    void *own;    /* memory to free (create, dynamic) */
    MPI_Aint disp0; /* the displacement of element 0 at every target */
    MPI_Aint *dyn_disps;
} window;

/* Do windows travel in messages (members on several hosts, or
 * LMPI_RMA_MESSAGES=1)?  Then another member's memory is out of reach:
 * MPI_Win_shared_query answers size 0 (MPI 4.1). */
static int in_messages(void)
{
    static int known = -1;
    if (known < 0) {
        long *b;
        MPI_Win w;
        MPI_Aint qs = 8;
        int qd;
        void *qb;
        MPI_Win_allocate(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &w);
        MPI_Win_shared_query(w, (rank + 1) % size, &qs, &qd, &qb);
        known = size > 1 && qs == 0;
        MPI_Win_free(&w);
    }
    return known;
}

/* Can the whole world share memory (MPI_Win_allocate_shared)?  Not when it
 * spans hosts: then the call fails with MPI_ERR_RMA_SHARED. */
static int world_shares(void)
{
    static int known = -1;
    if (known < 0) {
        long *b;
        MPI_Win w;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Win_allocate_shared(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &w);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        known = rc == MPI_SUCCESS;
        if (known) {
            MPI_Win_free(&w);
        } else {
            int cls;
            MPI_Error_class(rc, &cls);
            CHECK_EQ(cls, MPI_ERR_RMA_SHARED);
        }
    }
    return known;
}

static void win_open(window *w, int flavor)
{
    memset(w, 0, sizeof(*w));
    MPI_Aint bytes = N * sizeof(long);
    switch (flavor) {
    case FL_CREATE:
        w->own = w->base = malloc(bytes);
        MPI_Win_create(w->base, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        break;
    case FL_ALLOCATE:
        MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &w->base, &w->win);
        break;
    case FL_SHARED:
        MPI_Win_allocate_shared(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &w->base, &w->win);
        break;
    case FL_DYNAMIC:
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        w->own = w->base = malloc(bytes);
        MPI_Win_attach(w->win, w->base, bytes);
        break;
    }
    for (int i = 0; i < N; i++)
        w->base[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
}

static void win_close(window *w, int flavor)
{
    if (flavor == FL_DYNAMIC)
        MPI_Win_detach(w->win, w->base);
    MPI_Win_free(&w->win);
    CHECK(w->win == MPI_WIN_NULL);
    free(w->own);
    free(w->dyn_disps);
}

/* Target displacement of element i at rank t. */
static MPI_Aint disp_of(window *w, int flavor, int t, int i)
{
    if (flavor != FL_DYNAMIC)
        return i;
    if (!w->dyn_disps) {
        MPI_Aint mine;
        MPI_Get_address(w->base, &mine);
        w->dyn_disps = malloc(size * sizeof(MPI_Aint));
        MPI_Allgather(&mine, 1, MPI_AINT, w->dyn_disps, 1, MPI_AINT, MPI_COMM_WORLD);
    }
    return w->dyn_disps[t] + i * (MPI_Aint)sizeof(long);
}

static MPI_Group others_group(int peer_a, int peer_b)
{
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int ranks[2] = {peer_a, peer_b};
    MPI_Group_incl(world, peer_a == peer_b ? 1 : 2, ranks, &g);
    MPI_Group_free(&world);
    return g;
}

/* Open an access epoch to `to` and (for PSCW) an exposure epoch for `from`. */
static void epoch_begin(MPI_Win win, int sync, int to, int from)
{
    MPI_Barrier(MPI_COMM_WORLD); /* everyone has checked the last epoch's results */
    switch (sync) {
    case SY_FENCE:
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        break;
    case SY_PSCW: {
        MPI_Group gf = others_group(from, from), gt = others_group(to, to);
        MPI_Win_post(gf, 0, win);
        MPI_Win_start(gt, 0, win);
        MPI_Group_free(&gf);
        MPI_Group_free(&gt);
        break;
    }
    case SY_LOCK:
        MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win);
        break;
    case SY_LOCK_ALL:
        MPI_Win_lock_all(0, win);
        break;
    }
}

static void epoch_end(MPI_Win win, int sync, int to)
{
    switch (sync) {
    case SY_FENCE:
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        break;
    case SY_PSCW:
        MPI_Win_complete(win);
        MPI_Win_wait(win);
        break;
    case SY_LOCK:
        MPI_Win_unlock(to, win);
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case SY_LOCK_ALL:
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    }
}

/* Reading one's own window memory after others wrote it: sync the copies. */
static long own(window *w, int i)
{
    long v;
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w->win);
    MPI_Win_sync(w->win);
    v = ((volatile long *)w->base)[i];
    MPI_Win_unlock(rank, w->win);
    return v;
}

static void reset(window *w)
{
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win);
    for (int i = 0; i < N; i++)
        w->base[i] = -1;
    MPI_Win_unlock(rank, w->win);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every operation with one flavour and one synchronization: each rank works
 * on its right neighbour's window. */
static void ops_case(int flavor, int sync)
{
    window w;
    win_open(&w, flavor);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    long buf[N], res[N];

    /* put: contiguous origin into a strided target (every other element) */
    MPI_Datatype every_other;
    MPI_Type_vector(N / 2, 1, 2, MPI_LONG, &every_other);
    MPI_Type_commit(&every_other);
    for (int i = 0; i < N / 2; i++)
        buf[i] = rank * 1000 + i;
    epoch_begin(w.win, sync, to, from);
    MPI_Put(buf, N / 2, MPI_LONG, to, disp_of(&w, flavor, to, 0), 1, every_other, w.win);
    epoch_end(w.win, sync, to);
    for (int i = 0; i < N; i++)
        CHECK_EQ(own(&w, i), i % 2 ? -1 : from * 1000 + i / 2);

    /* get: strided target into a strided origin */
    for (int i = 0; i < N; i++)
        res[i] = -7;
    epoch_begin(w.win, sync, to, from);
    MPI_Get(res, 1, every_other, to, disp_of(&w, flavor, to, 0), 1, every_other, w.win);
    epoch_end(w.win, sync, to);
    for (int i = 0; i < N; i++)
        CHECK_EQ(res[i], i % 2 ? -7 : rank * 1000 + i / 2);

    /* accumulate sum, twice in one epoch, into elements 1, 3, 5 ... */
    reset(&w);
    for (int i = 0; i < N / 2; i++)
        buf[i] = i;
    epoch_begin(w.win, sync, to, from);
    MPI_Accumulate(buf, N / 2, MPI_LONG, to, disp_of(&w, flavor, to, 1), 1, every_other, MPI_SUM, w.win);
    MPI_Accumulate(buf, N / 2, MPI_LONG, to, disp_of(&w, flavor, to, 1), 1, every_other, MPI_SUM, w.win);
    epoch_end(w.win, sync, to);
    for (int i = 0; i < N; i++)
        CHECK_EQ(own(&w, i), i % 2 ? -1 + 2 * (i / 2) : -1);

    /* get_accumulate with replace, then fetch_and_op and compare_and_swap */
    for (int i = 0; i < 4; i++)
        buf[i] = 100 + i;
    epoch_begin(w.win, sync, to, from);
    MPI_Get_accumulate(buf, 4, MPI_LONG, res, 4, MPI_LONG, to, disp_of(&w, flavor, to, 0), 4, MPI_LONG, MPI_REPLACE,
                       w.win);
    epoch_end(w.win, sync, to);
    CHECK_EQ(res[0], -1);
    CHECK_EQ(res[1], -1);
    CHECK_EQ(res[3], 1);
    long one = 5, old = 0, cmp = 105, swp = 7;
    epoch_begin(w.win, sync, to, from);
    MPI_Fetch_and_op(&one, &old, MPI_LONG, to, disp_of(&w, flavor, to, 2), MPI_SUM, w.win);
    epoch_end(w.win, sync, to);
    CHECK_EQ(old, 102);
    epoch_begin(w.win, sync, to, from);
    MPI_Compare_and_swap(&swp, &cmp, &old, MPI_LONG, to, disp_of(&w, flavor, to, 2), w.win);
    epoch_end(w.win, sync, to);
    CHECK_EQ(old, 107); /* 102 + 5: no swap */
    cmp = 107;
    epoch_begin(w.win, sync, to, from);
    MPI_Compare_and_swap(&swp, &cmp, &old, MPI_LONG, to, disp_of(&w, flavor, to, 2), w.win);
    epoch_end(w.win, sync, to);
    CHECK_EQ(old, 107);
    CHECK_EQ(own(&w, 2), 7);
    CHECK_EQ(own(&w, 3), 103);

    /* a padded pair type: MPI_MAXLOC through the accumulate mutex */
    if (flavor != FL_DYNAMIC) {
        struct {
            double v;
            int i;
        } pr = {rank + 0.5, rank}, got;
        MPI_Aint bytes = 0;
        (void)bytes;
        reset(&w);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win);
        memset(w.base, 0, 2 * sizeof(long));
        MPI_Win_unlock(rank, w.win);
        MPI_Barrier(MPI_COMM_WORLD);
        epoch_begin(w.win, sync, to, from);
        MPI_Accumulate(&pr, 1, MPI_DOUBLE_INT, to, 0, 1, MPI_DOUBLE_INT, MPI_MAXLOC, w.win);
        epoch_end(w.win, sync, to);
        memcpy(&got, w.base, sizeof(got));
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win);
        memcpy(&got, (void *)w.base, sizeof(got));
        MPI_Win_unlock(rank, w.win);
        CHECK(got.v == from + 0.5);
        CHECK_EQ(got.i, from);
    }
    MPI_Type_free(&every_other);
    win_close(&w, flavor);
}

static void case_ops(void)
{
    for (int f = 0; f < NFLAVORS; f++)
        for (int s = 0; s < NSYNCS && (f != FL_SHARED || world_shares()); s++) {
            int before = mpitest_failures;
            ops_case(f, s);
            if (mpitest_failures != before)
                fprintf(stderr, "rank %d: failures with flavour %s, sync %s\n", rank, flavor_name[f], sync_name[s]);
        }
}

/* A counter every rank increments: fetch_and_op under lock_all, and a plain
 * get/put read-modify-write under an exclusive lock (only mutual exclusion
 * keeps it right). */
static void case_mutex(void)
{
    const int iters = 200;
    for (int f = FL_CREATE; f <= FL_ALLOCATE; f++) {
        window w;
        win_open(&w, f);
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
            w.base[0] = 0;
            w.base[1] = 0;
            w.base[2] = 0;
            MPI_Win_unlock(0, w.win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        long one = 1, old, seen_max = -1, seen_max2 = -1;
        MPI_Win_lock_all(0, w.win);
        for (int i = 0; i < iters; i++) {
            MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, w.win);
            MPI_Win_flush(0, w.win);
            CHECK(old > seen_max);
            seen_max = old;
            /* the same counter through a one-element Get_accumulate, and
             * read back with MPI_NO_OP (no origin at all) */
            long two = 2, old2 = -1, now2 = -1;
            MPI_Get_accumulate(&two, 1, MPI_LONG, &old2, 1, MPI_LONG, 0, 2, 1, MPI_LONG, MPI_SUM, w.win);
            MPI_Win_flush(0, w.win);
            CHECK(old2 > seen_max2 && old2 % 2 == 0);
            seen_max2 = old2;
            MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &now2, 1, MPI_LONG, 0, 2, 1, MPI_LONG, MPI_NO_OP, w.win);
            MPI_Win_flush(0, w.win);
            CHECK(now2 >= old2 + 2 && now2 % 2 == 0);
        }
        MPI_Win_unlock_all(w.win);
        for (int i = 0; i < iters; i++) {
            long v;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
            MPI_Get(&v, 1, MPI_LONG, 0, 1, 1, MPI_LONG, w.win);
            MPI_Win_flush(0, w.win);
            v++;
            MPI_Put(&v, 1, MPI_LONG, 0, 1, 1, MPI_LONG, w.win);
            MPI_Win_unlock(0, w.win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            CHECK_EQ(own(&w, 0), (long)iters * size);
            CHECK_EQ(own(&w, 1), (long)iters * size);
            CHECK_EQ(own(&w, 2), 2L * iters * size);
        }
        win_close(&w, f);
    }
}

/* A linked list every rank appends to: the tail pointer lives at rank 0
 * under its exclusive lock; each node's next field at its owner. */
typedef struct {
    long value, next_rank, next_idx;
} node;

static void case_list(void)
{
    const int per_rank = 20;
    node *nodes;
    MPI_Win win;
    MPI_Win_allocate((per_rank + 2) * sizeof(node), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &nodes, &win);
    for (int i = 0; i < per_rank + 2; i++)
        nodes[i] = (node){-1, -1, -1};
    /* at rank 0: node per_rank is the list head, node per_rank + 1 keeps the
     * tail's (rank, index) */
    if (rank == 0)
        nodes[per_rank + 1] = (node){-1, 0, per_rank};
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Datatype node_t;
    MPI_Type_contiguous(3, MPI_LONG, &node_t);
    MPI_Type_commit(&node_t);
    for (int i = 0; i < per_rank; i++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        nodes[i] = (node){rank * 1000 + i, -1, -1};
        MPI_Win_unlock(rank, win);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        node head;
        MPI_Get(&head, 1, node_t, 0, (per_rank + 1) * 3, 1, node_t, win);
        MPI_Win_flush(0, win);
        long link[2] = {rank, i};
        /* old tail's next -> the new node (its owner may be rank 0 itself) */
        if (head.next_rank != 0) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, (int)head.next_rank, 0, win);
            MPI_Put(link, 2, MPI_LONG, (int)head.next_rank, head.next_idx * 3 + 1, 2, MPI_LONG, win);
            MPI_Win_unlock((int)head.next_rank, win);
        } else {
            MPI_Put(link, 2, MPI_LONG, 0, head.next_idx * 3 + 1, 2, MPI_LONG, win);
        }
        MPI_Put(link, 2, MPI_LONG, 0, (per_rank + 1) * 3 + 1, 2, MPI_LONG, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int count = 0;
        char *seen = calloc((size_t)size * per_rank, 1);
        node cur;
        long r = 0, idx = per_rank;
        MPI_Win_lock_all(0, win);
        for (;;) {
            MPI_Get(&cur, 1, node_t, (int)r, idx * 3, 1, node_t, win);
            MPI_Win_flush((int)r, win);
            if (cur.next_rank < 0)
                break;
            r = cur.next_rank;
            idx = cur.next_idx;
            CHECK(r >= 0 && r < size && idx >= 0 && idx < per_rank);
            if (!(r >= 0 && r < size && idx >= 0 && idx < per_rank) || seen[r * per_rank + idx]++)
                break;
            count++;
        }
        MPI_Win_unlock_all(win);
        CHECK_EQ(count, size * per_rank);
        free(seen);
    }
    MPI_Type_free(&node_t);
    MPI_Win_free(&win);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Rank 1 computes for 2 s without calling MPI; rank 0's lock, put,
 * accumulate and unlock must not wait for it. */
static void case_passive(void)
{
    if (size < 2)
        return;
    for (int f = FL_CREATE; f <= FL_ALLOCATE; f++) {
        window w;
        win_open(&w, f);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            double t0 = now();
            volatile double x = 0;
            while (now() - t0 < 2.0)
                x += 1.0;
        } else if (rank == 0) {
            usleep(100000);
            long v = 42, one = 1;
            double t0 = now();
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, w.win);
            MPI_Put(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, w.win);
            MPI_Accumulate(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, w.win);
            MPI_Win_unlock(1, w.win);
            double dt = now() - t0;
            printf("passive (%s): lock, put, accumulate, unlock in %.1f us while the target computes\n",
                   flavor_name[f], dt * 1e6);
            /* in messages (LMPI_RMA_MESSAGES=1, or members on several hosts) the target
             * applies operations when it calls MPI, as with MPICH and Open MPI over TCP */
            if (!in_messages())
                CHECK(dt < 0.1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1)
            CHECK_EQ(own(&w, 0), 43);
        win_close(&w, f);
    }
}

/* Millions of operations in one fence epoch: memory stays bounded (delayed
 * issue drains its pool; eager keeps nothing). */
static void case_many(void)
{
    long nops = 4L * 1024 * 1024;
    const char *e = getenv("T_RMA_MANY");
    if (e)
        nops = atol(e);
    window w;
    win_open(&w, FL_ALLOCATE);
    int to = (rank + 1) % size;
    if (rank == 0 || 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win);
        w.base[0] = 0;
        MPI_Win_unlock(rank, w.win);
    }
    MPI_Win_fence(0, w.win);
    long one = 1;
    for (long i = 0; i < nops; i++)
        MPI_Accumulate(&one, 1, MPI_LONG, to, 0, 1, MPI_LONG, MPI_SUM, w.win);
    MPI_Win_fence(0, w.win);
    CHECK_EQ(w.base[0], nops);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
    win_close(&w, FL_ALLOCATE);
    /* the bounded pool: peak RMA memory far below one record per operation */
    MPI_T_pvar_session ses;
    int provided, idx, count;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&ses);
    idx = mpitest_pvar_index("lmpi_mem_peak_rma");
    CHECK(idx >= 0);
    if (idx >= 0) {
        MPI_T_pvar_handle h;
        unsigned long long peak = 0;
        MPI_T_pvar_handle_alloc(ses, idx, NULL, &h, &count);
        MPI_T_pvar_read(ses, h, &peak);
        CHECK(peak < 4u << 20);
        MPI_T_pvar_handle_free(ses, &h);
    }
    MPI_T_pvar_session_free(&ses);
    MPI_T_finalize();
}

/* 64 K request-based operations outstanding at once. */
static void case_requests(void)
{
    const int n = 65536;
    window w;
    win_open(&w, FL_ALLOCATE);
    int to = (rank + 1) % size;
    MPI_Request *reqs = malloc(n * sizeof(MPI_Request));
    long *vals = malloc(n * sizeof(long));
    MPI_Win_lock_all(0, w.win);
    for (int i = 0; i < n; i++) {
        vals[i] = i;
        MPI_Raccumulate(&vals[i], 1, MPI_LONG, to, i % N, 1, MPI_LONG, MPI_REPLACE, w.win, &reqs[i]);
    }
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    long got = -5;
    MPI_Request r;
    MPI_Rget(&got, 1, MPI_LONG, to, N - 1, 1, MPI_LONG, w.win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_EQ(got, n - 1);
    MPI_Win_unlock_all(w.win);
    free(reqs);
    free(vals);
    win_close(&w, FL_ALLOCATE);
}

static int handler_calls;
static MPI_Win handler_win;
static void win_handler(MPI_Win *win, int *code, ...)
{
    handler_calls++;
    handler_win = *win;
    (void)code;
}

static int error_class(int code)
{
    int c;
    MPI_Error_class(code, &c);
    return c;
}

static void case_errors(void)
{
    long *base;
    MPI_Win win;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ops", "same_op_no_op");
    MPI_Win_allocate(N * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &base, &win);
    MPI_Info_free(&info);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    long v = 1;
    CHECK_EQ(error_class(MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(error_class(MPI_Win_unlock(0, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(error_class(MPI_Win_complete(win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(error_class(MPI_Win_flush(0, win)), MPI_ERR_RMA_SYNC);
    MPI_Win_lock_all(0, win);
    CHECK_EQ(error_class(MPI_Put(&v, 1, MPI_LONG, 0, N, 1, MPI_LONG, win)), MPI_ERR_RMA_RANGE);
    CHECK_EQ(error_class(MPI_Put(&v, 1, MPI_LONG, 0, -1, 1, MPI_LONG, win)), MPI_ERR_RMA_RANGE);
    CHECK_EQ(error_class(MPI_Put(&v, 1, MPI_LONG, size, 0, 1, MPI_LONG, win)), MPI_ERR_RANK);
    CHECK_EQ(error_class(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(error_class(MPI_Win_free(&win)), MPI_ERR_RMA_SYNC);
    CHECK(win != MPI_WIN_NULL);
    MPI_Op user;
    MPI_Op_create((MPI_User_function *)(void (*)(void))win_handler, 1, &user);
    CHECK_EQ(error_class(MPI_Accumulate(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, user, win)), MPI_ERR_OP);
    MPI_Op_free(&user);
    /* accumulate_ops=same_op_no_op (the standard's default, set above) is
     * a promise about concurrent accumulates to one location, not a rule
     * the window enforces: a later operation may differ (MPI_PROD after
     * MPI_SUM was once refused with MPI_ERR_OP for the window's life, even
     * in a later epoch) */
    CHECK_EQ(MPI_Accumulate(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win), MPI_SUCCESS);
    MPI_Win_flush(0, win);
    CHECK_EQ(MPI_Accumulate(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_PROD, win), MPI_SUCCESS);
    CHECK_EQ(MPI_Fetch_and_op(NULL, &v, MPI_LONG, 0, 0, MPI_NO_OP, win), MPI_SUCCESS);
    double d = 1;
    CHECK_EQ(error_class(MPI_Compare_and_swap(&d, &d, &d, MPI_DOUBLE, 0, 0, win)), MPI_ERR_TYPE);
    MPI_Win_unlock_all(win);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    CHECK_EQ(error_class(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(error_class(MPI_Win_lock_all(0, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(error_class(MPI_Win_fence(0, win)), MPI_ERR_RMA_SYNC);
    if (size > 1)
        CHECK_EQ(error_class(MPI_Put(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win)), MPI_ERR_RMA_SYNC);
    MPI_Win_unlock(0, win);
    CHECK_EQ(error_class(MPI_Win_lock(99, 0, 0, win)), MPI_ERR_LOCKTYPE);
    MPI_Aint qs;
    int qd;
    void *qb;
    CHECK_EQ(MPI_Win_shared_query(win, 0, &qs, &qd, &qb), MPI_SUCCESS);
    if (in_messages() && rank != 0) /* MPI 4.1: memory out of reach answers size 0 */
        CHECK_EQ(qs, 0);
    else
        CHECK_EQ(qs, N * (MPI_Aint)sizeof(long));
    /* a user handler gets the window */
    MPI_Errhandler eh;
    MPI_Win_create_errhandler(win_handler, &eh);
    MPI_Win_set_errhandler(win, eh);
    MPI_Errhandler_free(&eh);
    MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
    CHECK_EQ(handler_calls, 1);
    CHECK(handler_win == win);
    MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    CHECK_EQ(handler_calls, 2);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_free(&win);

    /* dynamic windows: overlapping attach, flavour queries */
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    long mem[8];
    CHECK_EQ(MPI_Win_attach(win, mem, sizeof(mem)), MPI_SUCCESS);
    CHECK_EQ(error_class(MPI_Win_attach(win, mem + 2, 8)), MPI_ERR_RMA_ATTACH);
    CHECK_EQ(error_class(MPI_Win_shared_query(win, 0, &qs, &qd, &qb)), MPI_ERR_RMA_FLAVOR);
    CHECK_EQ(error_class(MPI_Win_detach(win, mem + 1)), MPI_ERR_RMA_ATTACH);
    MPI_Win_lock_all(0, win);
    MPI_Aint a;
    MPI_Get_address(mem, &a);
    v = 1;
    CHECK_EQ(error_class(MPI_Put(&v, 1, MPI_LONG, rank, a + sizeof(mem), 1, MPI_LONG, win)), MPI_ERR_RMA_RANGE);
    CHECK_EQ(MPI_Put(&v, 1, MPI_LONG, rank, a, 1, MPI_LONG, win), MPI_SUCCESS);
    MPI_Win_unlock_all(win);
    CHECK_EQ(mem[0], 1);
    MPI_Win_detach(win, mem);
    MPI_Win_free(&win);
    /* bad arguments at creation */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(error_class(MPI_Win_allocate(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win)), MPI_ERR_SIZE);
    CHECK_EQ(error_class(MPI_Win_create(mem, 8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win)), MPI_ERR_DISP);
    /* no window: MPI_COMM_SELF's handler (MPI 4) */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_EQ(error_class(MPI_Win_fence(0, MPI_WIN_NULL)), MPI_ERR_WIN);
}

static void case_attrs(void)
{
    long *base;
    MPI_Win win;
    MPI_Aint mysize = (rank + 1) * 16;
    if (!world_shares()) /* the world spans hosts (the refusal is checked there) */
        return;
    MPI_Win_allocate_shared(mysize, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    void *v;
    int flag;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag);
    CHECK(flag && v == base);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &v, &flag);
    CHECK(flag && *(MPI_Aint *)v == mysize);
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &v, &flag);
    CHECK(flag && *(int *)v == 8);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag);
    CHECK(flag && *(int *)v == MPI_WIN_FLAVOR_SHARED);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag);
    CHECK(flag && *(int *)v == MPI_WIN_UNIFIED);
    /* contiguous shared memory: rank r's part follows rank r-1's */
    MPI_Aint qs;
    int qd;
    char *q0, *qr;
    MPI_Win_shared_query(win, 0, &qs, &qd, &q0);
    MPI_Win_shared_query(win, rank, &qs, &qd, &qr);
    CHECK(qr == (char *)base);
    CHECK_EQ(qs, mysize);
    CHECK_EQ(qr - q0, 16 * rank * (rank + 1) / 2);
    /* a store through the shared pointer is seen by the owner */
    MPI_Win_lock_all(0, win);
    long *right;
    MPI_Win_shared_query(win, (rank + 1) % size, &qs, &qd, &right);
    right[0] = 500 + rank;
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    CHECK_EQ(base[0], 500 + (rank + size - 1) % size);
    MPI_Win_unlock_all(win);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Win_get_name(win, name, &len);
    CHECK_EQ(len, 0);
    MPI_Win_set_name(win, "counters");
    MPI_Win_get_name(win, name, &len);
    CHECK(!strcmp(name, "counters"));
    MPI_Group g, wg;
    int cmp;
    MPI_Win_get_group(win, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    CHECK_EQ(cmp, MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Info info;
    char val[64];
    MPI_Win_get_info(win, &info);
    MPI_Info_get_string(info, "same_size", &len, val, &flag);
    len = sizeof(val);
    MPI_Info_get_string(info, "same_size", &len, val, &flag);
    CHECK(flag && !strcmp(val, size == 1 ? "true" : "false"));
    /* no accumulate_ops given: the standard's default, same_op_no_op
     * (reported as same_op, which promises more, before; MPICH's
     * rma/win_info) */
    len = sizeof(val);
    MPI_Info_get_string(info, "accumulate_ops", &len, val, &flag);
    CHECK(flag && !strcmp(val, "same_op_no_op"));
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ops", "same_op");
    MPI_Win_set_info(win, info);
    MPI_Info_free(&info);
    MPI_Win_get_info(win, &info);
    len = sizeof(val);
    MPI_Info_get_string(info, "accumulate_ops", &len, val, &flag);
    CHECK(flag && !strcmp(val, "same_op"));
    MPI_Info_free(&info);
    int kv, *attr = NULL;
    static int payload = 77;
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kv, NULL);
    MPI_Win_set_attr(win, kv, &payload);
    MPI_Win_get_attr(win, kv, &attr, &flag);
    CHECK(flag && attr == &payload);
    MPI_Win_delete_attr(win, kv);
    MPI_Win_get_attr(win, kv, &attr, &flag);
    CHECK(!flag);
    MPI_Win_free_keyval(&kv);
    MPI_Win_free(&win);
    /* a member that gave no memory: size 0 and a NULL base (MPICH's
     * rma/win_shared_noncontig_put) */
    char *zb;
    MPI_Win zw;
    MPI_Win_allocate_shared(rank % 2 ? 0 : 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &zb, &zw);
    for (int r = 0; r < size; r++) {
        char *qb = (char *)&qb;
        MPI_Win_shared_query(zw, r, &qs, &qd, &qb);
        CHECK(r % 2 ? qs == 0 && qb == NULL : qs == 64 && qb != NULL);
    }
    MPI_Win_free(&zw);
}

/* Win_test polls an exposure epoch to its end. */
static void case_pscw_test(void)
{
    if (size < 2)
        return;
    window w;
    win_open(&w, FL_ALLOCATE);
    if (rank == 0) {
        MPI_Group g = others_group(1, 1);
        MPI_Win_post(g, 0, w.win);
        int flag = 0, polls = 0;
        while (!flag) {
            MPI_Win_test(w.win, &flag);
            polls++;
        }
        CHECK(polls >= 1);
        CHECK_EQ(own(&w, 3), 9);
        MPI_Group_free(&g);
    } else if (rank == 1) {
        MPI_Group g = others_group(0, 0);
        long v = 9;
        usleep(20000);
        MPI_Win_start(g, 0, w.win);
        MPI_Put(&v, 1, MPI_LONG, 0, 3, 1, MPI_LONG, w.win);
        MPI_Win_complete(w.win);
        MPI_Group_free(&g);
    }
    win_close(&w, FL_ALLOCATE);
}

/* Operations larger than a packet and target types of many runs (in
 * messages: several packets, each with its own runs), and a displacement
 * outside a smaller target's window, refused when posted or (in messages,
 * where sizes differ) at the unlock. */
static void case_big(void)
{
    enum { BIG = 300000, BLOCKS = 1000 };
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    long *base, *buf = malloc(BIG * sizeof(long)), *res = malloc(BIG * sizeof(long));
    MPI_Win win;
    MPI_Win_allocate(BIG * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (long i = 0; i < BIG; i++) {
        base[i] = -1;
        buf[i] = rank * 10000000L + i;
    }
    MPI_Win_fence(0, win);
    MPI_Put(buf, BIG - 3, MPI_LONG, to, 3, BIG - 3, MPI_LONG, win);
    MPI_Win_fence(0, win);
    int bad = 0;
    for (long i = 0; i < BIG; i++)
        bad += base[i] != (i < 3 ? -1 : from * 10000000L + i - 3);
    CHECK_EQ(bad, 0);
    MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win);
    MPI_Get(res, BIG, MPI_LONG, to, 0, BIG, MPI_LONG, win);
    MPI_Win_unlock(to, win);
    bad = 0;
    for (long i = 0; i < BIG; i++)
        bad += res[i] != (i < 3 ? -1 : rank * 10000000L + i - 3);
    CHECK_EQ(bad, 0);

    /* 1000 blocks of 3 longs, 5 apart: 1000 runs */
    MPI_Datatype blocks;
    MPI_Type_vector(BLOCKS, 3, 5, MPI_LONG, &blocks);
    MPI_Type_commit(&blocks);
    for (long i = 0; i < 3 * BLOCKS; i++)
        buf[i] = i;
    MPI_Win_fence(0, win);
    MPI_Accumulate(buf, 3 * BLOCKS, MPI_LONG, to, 0, 1, blocks, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Get_accumulate(buf, 3 * BLOCKS, MPI_LONG, res, 3 * BLOCKS, MPI_LONG, to, 0, 1, blocks, MPI_SUM, win);
    MPI_Win_fence(0, win);
    bad = 0;
    for (long b = 0, k = 0; b < BLOCKS; b++)
        for (long j = 0; j < 3; j++, k++) {
            long was = (5 * b + j < 3 ? -1 : rank * 10000000L + 5 * b + j - 3) + k;
            bad += res[k] != was;
            bad += base[5 * b + j] != (5 * b + j < 3 ? -1 : from * 10000000L + 5 * b + j - 3) + 2 * k;
        }
    CHECK_EQ(bad, 0);
    MPI_Type_free(&blocks);
    MPI_Win_free(&win);

    /* windows of different sizes: rank r has r + 1 longs */
    long mine[64];
    MPI_Win_create(mine, (rank + 1) * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    long v = 5;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, to, 0, win);
    int e1 = error_class(MPI_Put(&v, 1, MPI_LONG, to, to + 1, 1, MPI_LONG, win));
    int e2 = error_class(MPI_Win_unlock(to, win));
    CHECK(e1 == MPI_ERR_RMA_RANGE || e2 == MPI_ERR_RMA_RANGE);
    if (e2 != MPI_SUCCESS) /* the epoch is over either way */
        CHECK_EQ(error_class(MPI_Win_unlock(to, win)), MPI_ERR_RMA_SYNC);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, to, 0, win);
    CHECK_EQ(MPI_Put(&v, 1, MPI_LONG, to, to, 1, MPI_LONG, win), MPI_SUCCESS);
    CHECK_EQ(MPI_Win_unlock(to, win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(mine[rank], 5);
    MPI_Win_free(&win);
    free(buf);
    free(res);
}

/* mpi4py.util.sync's wait: a rank spins on its own window memory with a
 * flush to itself and MPI_Win_sync while another rank writes the flag (in
 * messages, those calls are where the write lands). */
static void case_spin(void)
{
    if (size < 2)
        return;
    int *base;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    *base = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        MPI_Win_sync(win);
        while (((volatile int *)base)[0] == 0) {
            MPI_Win_flush(0, win);
            MPI_Win_sync(win);
        }
        CHECK_EQ(*base, 7);
    } else if (rank == 1) {
        int flag = 7;
        MPI_Accumulate(&flag, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_REPLACE, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
}

/* Counters read relative to the handle's allocation: allocate before the
 * cases run, read after. */
static MPI_T_pvar_session wire_session;
static MPI_T_pvar_handle wire_handle = MPI_T_PVAR_HANDLE_NULL;

static void wire_watch(void)
{
    int provided, count, idx;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&wire_session);
    idx = mpitest_pvar_index("lmpi_rma_wire");
    CHECK(idx >= 0);
    if (idx >= 0)
        MPI_T_pvar_handle_alloc(wire_session, idx, NULL, &wire_handle, &count);
}

static void wire_was_used(void)
{
    unsigned long long mine = 0, all = 0;
    if (wire_handle != MPI_T_PVAR_HANDLE_NULL) {
        MPI_T_pvar_read(wire_session, wire_handle, &mine);
        MPI_T_pvar_handle_free(wire_session, &wire_handle);
    }
    MPI_T_pvar_session_free(&wire_session);
    MPI_T_finalize();
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all > 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *only = argc > 1 ? argv[1] : NULL;
    in_messages(); /* collective: asked here, by everyone, once */
    world_shares();
    struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {{"ops", case_ops},       {"mutex", case_mutex},       {"list", case_list},
                 {"passive", case_passive}, {"requests", case_requests}, {"attrs", case_attrs},
                 {"pscw_test", case_pscw_test}, {"errors", case_errors}, {"many", case_many},
                 {"big", case_big},         {"spin", case_spin}};
    if (getenv("T_RMA_WIRE"))
        wire_watch();
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (only ? !strcmp(only, cases[i].name) : strcmp(cases[i].name, "many") != 0)
            cases[i].fn();
    if (getenv("T_RMA_WIRE")) /* the network's own RMA must have carried some puts and gets */
        wire_was_used();
    return mpitest_finish("t_rma");
}
