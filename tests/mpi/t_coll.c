/* Collectives against serially computed results: every implemented
 * collective with roots, in-place forms, zero counts, derived datatypes,
 * predefined and user (non-commutative) operations, and many nonblocking
 * collectives outstanding on several communicators at once. */
#include <stdbool.h>
#include <string.h>

#include "mpitest.h"

static int rank, size;

/* v(r, i): the value rank r contributes at index i */
static int v(int r, int i) { return (r + 1) * 1000 + i * 7 - r * i; }

/* non-commutative: 2x2 integer matrices, inout = in x inout */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    long *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        long r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                     a[2] * b[1] + a[3] * b[3]};
        memcpy(b, r, sizeof(r));
    }
}

static void mat_of(int r, long m[4]) { m[0] = 1, m[1] = r + 1, m[2] = r % 3, m[3] = 1; }

static void test_bcast_reduce(void)
{
    enum { N = 50 };
    int buf[N];
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < N; i++)
            buf[i] = rank == root ? v(root, i) : -1;
        MPI_Bcast(buf, N, MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; i < N; i++)
            CHECK_EQ(buf[i], v(root, i));
        int mine[N], sum[N];
        for (int i = 0; i < N; i++)
            mine[i] = v(rank, i), sum[i] = -7;
        MPI_Reduce(mine, sum, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        if (rank == root)
            for (int i = 0; i < N; i++) {
                int e = 0;
                for (int r = 0; r < size; r++)
                    e += v(r, i);
                CHECK_EQ(sum[i], e);
            }
        /* in place at the root */
        if (rank == root) {
            MPI_Reduce(MPI_IN_PLACE, mine, N, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
            for (int i = 0; i < N; i++) {
                int e = v(0, i);
                for (int r = 1; r < size; r++)
                    e = v(r, i) > e ? v(r, i) : e;
                CHECK_EQ(mine[i], e);
            }
        } else {
            MPI_Reduce(mine, NULL, N, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
        }
    }
    /* a strided type */
    double s[6] = {0};
    MPI_Datatype vt;
    MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vt);
    MPI_Type_commit(&vt);
    if (rank == 0)
        s[0] = 1, s[2] = 2, s[4] = 3;
    MPI_Bcast(s, 1, vt, 0, MPI_COMM_WORLD);
    CHECK_EQ(s[4], 3);
    CHECK_EQ(s[1], 0);
    MPI_Type_free(&vt);
    /* non-commutative user operation: the product in rank order */
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    MPI_Datatype m;
    MPI_Type_contiguous(4, MPI_LONG, &m);
    MPI_Type_commit(&m);
    long mm[4], res[4], e[4] = {1, 0, 0, 1};
    mat_of(rank, mm);
    int root = size - 1;
    MPI_Reduce(mm, res, 1, m, op, root, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) { /* e = e x m(r) */
        long x[4];
        mat_of(r, x);
        long t[4] = {e[0] * x[0] + e[1] * x[2], e[0] * x[1] + e[1] * x[3], e[2] * x[0] + e[3] * x[2],
                     e[2] * x[1] + e[3] * x[3]};
        memcpy(e, t, sizeof(t));
    }
    if (rank == root)
        for (int i = 0; i < 4; i++)
            CHECK_EQ(res[i], e[i]);
    MPI_Allreduce(mm, res, 1, m, op, MPI_COMM_WORLD);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(res[i], e[i]);
    MPI_Op_free(&op);
    MPI_Type_free(&m);
    /* MINLOC over (value, rank) pairs */
    struct { double val; int idx; } in = {(double)((rank * 7) % 5), rank}, out;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    CHECK_EQ(out.val, 0);
    CHECK_EQ(out.idx, 0);
    /* every rank gets the same bits of an order-sensitive floating-point
     * sum: (1e16 + 1) - 1e16 is 0, (1e16 - 1e16) + 1 is 1 (a rank combining
     * from its own part first would differ from the others) */
    double part = rank == 0 ? 1e16 : rank == 2 ? -1e16 : 1.0, sum, lo, hi;
    MPI_Allreduce(&part, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&sum, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&sum, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    CHECK_EQ(lo, hi);
    /* allreduce in place, zero count */
    long x = rank + 1;
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_LONG, MPI_PROD, MPI_COMM_WORLD);
    long f = 1;
    for (int r = 1; r <= size; r++)
        f *= r;
    CHECK_EQ(x, f);
    MPI_Allreduce(MPI_IN_PLACE, &x, 0, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(x, f);
    /* an invalid operation for the type */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char c = 1;
    CHECK_EQ(MPI_Allreduce(MPI_IN_PLACE, &c, 1, MPI_BYTE, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    int dummy[64];
    CHECK_EQ(MPI_Allgather(dummy, 1, MPI_INT, dummy, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD), MPI_ERR_TYPE);
    /* MPI_IN_PLACE is for the root only.  Only the non-roots call it, on a
     * communicator of its own: a collective that fails its checks still
     * counts as a call there (t_errors), and the root never made it. */
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    if (size > 1 && rank != 0)
        CHECK_EQ(MPI_Reduce(MPI_IN_PLACE, dummy, 1, MPI_INT, MPI_SUM, 0, d), MPI_ERR_BUFFER);
    MPI_Comm_free(&d);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_gather_scatter(void)
{
    enum { K = 3 };
    int *all = malloc(sizeof(int) * K * size), mine[K], *counts = malloc(sizeof(int) * size),
        *displs = malloc(sizeof(int) * size);
    for (int root = 0; root < size; root += (size > 3 ? 2 : 1)) {
        for (int i = 0; i < K; i++)
            mine[i] = v(rank, i);
        memset(all, 0xff, sizeof(int) * K * size);
        MPI_Gather(mine, K, MPI_INT, all, K, MPI_INT, root, MPI_COMM_WORLD);
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < K; i++)
                    CHECK_EQ(all[r * K + i], v(r, i));
        /* gatherv: rank r sends r % K + 1 elements, stored back to front */
        int at = 0;
        for (int r = size - 1; r >= 0; r--)
            counts[r] = r % K + 1, displs[r] = at, at += counts[r];
        MPI_Gatherv(mine, rank % K + 1, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD);
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < counts[r]; i++)
                    CHECK_EQ(all[displs[r] + i], v(r, i));
        /* scatter from the root, in place at the root */
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < K; i++)
                    all[r * K + i] = v(r, i) + 1;
        memset(mine, 0, sizeof(mine));
        MPI_Scatter(all, K, MPI_INT, rank == root ? MPI_IN_PLACE : mine, K, MPI_INT, root, MPI_COMM_WORLD);
        if (rank != root)
            for (int i = 0; i < K; i++)
                CHECK_EQ(mine[i], v(rank, i) + 1);
        MPI_Scatterv(all, counts, displs, MPI_INT, mine, rank % K + 1, MPI_INT, root, MPI_COMM_WORLD);
    }
    /* allgather in place and allgatherv */
    for (int i = 0; i < K; i++)
        all[rank * K + i] = v(rank, i);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, K, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < K; i++)
            CHECK_EQ(all[r * K + i], v(r, i));
    for (int i = 0; i < K; i++)
        mine[i] = v(rank, i);
    MPI_Allgatherv(mine, rank % K + 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            CHECK_EQ(all[displs[r] + i], v(r, i));
    /* from a separate buffer, received as one block type of K ints (the
     * short path compares bytes, not types) */
    MPI_Datatype kints;
    MPI_Type_contiguous(K, MPI_INT, &kints);
    MPI_Type_commit(&kints);
    memset(all, 0, sizeof(int) * (size_t)(K * size));
    MPI_Allgather(mine, K, MPI_INT, all, 1, kints, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < K; i++)
            CHECK_EQ(all[r * K + i], v(r, i));
    MPI_Type_free(&kints);
    free(all), free(counts), free(displs);
}

/* One signature through different types at different ranks: even ranks
 * send and receive each pair of ints through a strided type (the ints 2
 * apart, 4 ints a block), odd ranks through plain ints.  The path of a
 * small allgather or alltoall must follow the bytes alone, or the ranks
 * part ways (a hang), and each rank must pack and unpack its own way. */
static void test_mixed_types(void)
{
    MPI_Datatype pair, strided;
    MPI_Type_vector(2, 1, 2, MPI_INT, &pair);
    MPI_Type_create_resized(pair, 0, 4 * (MPI_Aint)sizeof(int), &strided);
    MPI_Type_commit(&strided);
    MPI_Type_free(&pair);
    int even = rank % 2 == 0, n = even ? 1 : 2, *s = calloc(4 * (size_t)size, sizeof(int)),
        *r = calloc(4 * (size_t)size, sizeof(int));
    MPI_Datatype t = even ? strided : MPI_INT;
/* where the first and second int of block p sit in this rank's layout */
#define FIRST(p) (even ? 4 * (p) : 2 * (p))
#define SECOND(p) (even ? 4 * (p) + 2 : 2 * (p) + 1)
    for (int p = 0; p < size; p++)
        s[FIRST(p)] = rank * 100 + p, s[SECOND(p)] = -(rank * 100 + p);
    MPI_Alltoall(s, n, t, r, n, t, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++) {
        CHECK_EQ(r[FIRST(p)], p * 100 + rank);
        CHECK_EQ(r[SECOND(p)], -(p * 100 + rank));
    }
    int mine[4] = {rank, 0, -rank, 0};
    if (!even)
        mine[1] = -rank;
    memset(r, 0, 4 * (size_t)size * sizeof(int));
    MPI_Allgather(mine, n, t, r, n, t, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++) {
        CHECK_EQ(r[FIRST(p)], p);
        CHECK_EQ(r[SECOND(p)], -p);
    }
#undef FIRST
#undef SECOND
    MPI_Type_free(&strided);
    free(s), free(r);
}

/* Alltoallv in place, with no send counts (they are ignored there; mpi4py
 * passes none): the receive counts make it a v-collective, not the
 * one-size alltoall its empty send counts look like. */
static void test_alltoallv_in_place(void)
{
    int *buf = malloc(sizeof(int) * (size_t)(size * size)), *counts = malloc(sizeof(int) * (size_t)size),
        *displs = malloc(sizeof(int) * (size_t)size);
    for (int count = 0; count < size; count++) {
        for (int i = 0; i < size; i++) {
            counts[i] = count, displs[i] = i * size;
            for (int j = 0; j < size; j++)
                buf[i * size + j] = j < count ? rank : -1;
        }
        MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++)
            for (int j = 0; j < size; j++)
                CHECK_EQ(buf[i * size + j], j < count ? i : -1);
    }
    free(buf), free(counts), free(displs);
}

static void test_alltoall_scan(void)
{
    int *s = malloc(sizeof(int) * 2 * size), *r = malloc(sizeof(int) * 2 * size);
    for (int p = 0; p < size; p++)
        s[2 * p] = rank * 100 + p, s[2 * p + 1] = -(rank * 100 + p);
    MPI_Alltoall(s, 2, MPI_INT, r, 2, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        CHECK_EQ(r[2 * p], p * 100 + rank);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, 2, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        CHECK_EQ(s[2 * p + 1], -(p * 100 + rank));
    /* reduce_scatter: block p of the sum goes to rank p (p + 1 elements) */
    int total = size * (size + 1) / 2, *contrib = malloc(sizeof(int) * (total + 2 * size)),
        *counts = malloc(sizeof(int) * size);
    for (int i = 0; i < total; i++)
        contrib[i] = rank + i;
    for (int p = 0; p < size; p++)
        counts[p] = p + 1;
    int mine[64];
    MPI_Reduce_scatter(contrib, mine, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int first = rank * (rank + 1) / 2;
    for (int i = 0; i <= rank; i++)
        CHECK_EQ(mine[i], size * (size - 1) / 2 + size * (first + i));
    for (int i = 0; i < size * 2; i++)
        contrib[i] = rank * i;
    MPI_Reduce_scatter_block(MPI_IN_PLACE, contrib, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(contrib[1], (2 * rank + 1) * size * (size - 1) / 2);
    free(contrib), free(counts);
    /* alltoallw: to peer p, p % 3 + 1 ints as a vector of stride 2, at a byte offset */
    {
        int *sw = malloc(sizeof(int) * 8 * size), *rw = malloc(sizeof(int) * 4 * size);
        int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size), *rc = malloc(sizeof(int) * size),
            *rd = malloc(sizeof(int) * size);
        MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * size), *rt = malloc(sizeof(MPI_Datatype) * size), strided;
        MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
        MPI_Type_commit(&strided);
        for (int i = 0; i < 8 * size; i++)
            sw[i] = rank * 1000 + i;
        for (int p = 0; p < size; p++) {
            sc[p] = 1, sd[p] = (int)(8 * p * sizeof(int)), st[p] = strided; /* 2 ints: elements 0 and 2 */
            rc[p] = 2, rd[p] = (int)(4 * p * sizeof(int)), rt[p] = MPI_INT;
        }
        MPI_Alltoallw(sw, sc, sd, st, rw, rc, rd, rt, MPI_COMM_WORLD);
        for (int p = 0; p < size; p++) {
            CHECK_EQ(rw[4 * p], p * 1000 + 8 * rank);
            CHECK_EQ(rw[4 * p + 1], p * 1000 + 8 * rank + 2);
        }
        MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rw, rc, rd, rt, MPI_COMM_WORLD);
        for (int p = 0; p < size; p++) /* back where it came from */
            CHECK_EQ(rw[4 * p], rank * 1000 + 8 * p);
        MPI_Type_free(&strided);
        free(sw), free(rw), free(sc), free(sd), free(rc), free(rd), free(st), free(rt);
    }
    int x = rank + 1, pre = -1;
    MPI_Scan(&x, &pre, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(pre, (rank + 1) * (rank + 2) / 2);
    MPI_Exscan(&x, &pre, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank > 0)
        CHECK_EQ(pre, rank * (rank + 1) / 2);
    free(s), free(r);
}

/* Many nonblocking collectives outstanding on two communicators, with
 * point-to-point traffic in between. */
static void test_nonblocking(void)
{
    enum { M = 6 };
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    int in[M], out[M], b[M];
    MPI_Request rq[3 * M];
    for (int k = 0; k < M; k++) {
        in[k] = rank + k;
        b[k] = rank == k % size ? 42 + k : 0;
        MPI_Iallreduce(&in[k], &out[k], 1, MPI_INT, MPI_SUM, k % 2 ? d : MPI_COMM_WORLD, &rq[k]);
        MPI_Ibcast(&b[k], 1, MPI_INT, k % size, k % 2 ? MPI_COMM_WORLD : d, &rq[M + k]);
    }
    int tok = rank, got = -1;
    MPI_Sendrecv(&tok, 1, MPI_INT, (rank + 1) % size, 9, &got, 1, MPI_INT, (rank - 1 + size) % size, 9,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < M; k++)
        MPI_Ibarrier(d, &rq[2 * M + k]);
    MPI_Waitall(3 * M, rq, MPI_STATUSES_IGNORE);
    for (int k = 0; k < M; k++) {
        CHECK_EQ(out[k], size * (size - 1) / 2 + size * k);
        CHECK_EQ(b[k], 42 + k);
    }
    CHECK_EQ(got, (rank - 1 + size) % size);
    MPI_Comm_free(&d);

    /* a derived datatype freed while its nonblocking collectives run (the
     * standard lets a pending operation keep it; mpi_f08's array sections
     * rely on it): every other element of a strided buffer */
    double v[2 * M], bc[2 * M];
    MPI_Datatype every_other;
    MPI_Type_vector(M, 1, 2, MPI_DOUBLE, &every_other);
    MPI_Type_commit(&every_other);
    for (int k = 0; k < 2 * M; k++) {
        v[k] = k % 2 ? -1 : rank + k;
        bc[k] = rank == 0 && k % 2 == 0 ? 3 * k : -1;
    }
    MPI_Iallreduce(MPI_IN_PLACE, v, 1, every_other, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
    MPI_Ibcast(bc, 1, every_other, 0, MPI_COMM_WORLD, &rq[1]);
    MPI_Type_free(&every_other);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 2 * M; k++) {
        CHECK_EQ(v[k], k % 2 ? -1 : size * (size - 1) / 2 + size * k);
        CHECK_EQ(bc[k], k % 2 ? -1 : 3 * k);
    }
}

/* Persistent collectives: built once, started several times. */
static void test_persistent(void)
{
    int in = 0, out = 0, b = 0;
    MPI_Request r[3];
    MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Bcast_init(&b, 1, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    for (int k = 0; k < 4; k++) {
        in = rank * k;
        b = rank == size - 1 ? 10 + k : -1;
        MPI_Startall(3, r);
        MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
        CHECK_EQ(out, k * size * (size - 1) / 2);
        CHECK_EQ(b, 10 + k);
        CHECK(r[0] != MPI_REQUEST_NULL);
    }
    MPI_Start(&r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < 3; i++)
        MPI_Request_free(&r[i]);
    CHECK(r[0] == MPI_REQUEST_NULL);
}


/* Intercommunicators: groups A = world ranks [0, na) and B = [na, size) of
 * unequal sizes; every collective's data crosses between the groups. */
static int na, in_a, lrank, lsize, rsize, rbase; /* rbase: world rank of remote rank 0 */

static void inter_rooted(MPI_Comm ic)
{
    enum { N = 5 };
    /* bcast, root = local rank 1 of A (or 0), then root = local 0 of B */
    int aroot = na > 1 ? 1 : 0;
    for (int dir = 0; dir < 2; dir++) {
        bool root_group = dir == 0 ? in_a : !in_a;
        int root_local = dir == 0 ? aroot : 0;
        int buf[N];
        for (int i = 0; i < N; i++)
            buf[i] = root_group && lrank == root_local ? v(rank, i) : -1;
        int root = root_group ? (lrank == root_local ? MPI_ROOT : MPI_PROC_NULL) : root_local;
        MPI_Bcast(buf, N, MPI_INT, root, ic);
        int from = dir == 0 ? aroot : na; /* world rank of the root */
        for (int i = 0; i < N; i++)
            CHECK_EQ(buf[i], root_group ? (lrank == root_local ? v(rank, i) : -1) : v(from, i));
    }
    /* reduce to local 0 of A: the sum over B, and B's matrices in rank order */
    int in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = v(rank, i), out[i] = -1;
    int root = in_a ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Reduce(in, out, N, MPI_INT, MPI_SUM, root, ic);
    if (in_a && lrank == 0)
        for (int i = 0; i < N; i++) {
            int want = 0;
            for (int r = na; r < size; r++)
                want += v(r, i);
            CHECK_EQ(out[i], want);
        }
    MPI_Op mm;
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_LONG, &mat);
    MPI_Type_commit(&mat);
    MPI_Op_create(matmul, 0, &mm);
    long m[4], prod[4] = {0};
    mat_of(rank, m);
    root = !in_a ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Reduce(m, prod, 1, mat, mm, root, ic);
    if (!in_a && lrank == 0) {
        long want[4] = {1, 0, 0, 1};
        for (int r = 0; r < na; r++) { /* m(0) x m(1) x ... in A's rank order */
            long x[4];
            mat_of(r, x);
            int one = 1;
            MPI_Datatype t = mat;
            matmul(want, x, &one, &t);
            memcpy(want, x, sizeof(want));
        }
        for (int k = 0; k < 4; k++)
            CHECK_EQ(prod[k], want[k]);
    }
    MPI_Op_free(&mm);
    MPI_Type_free(&mat);

    /* gather(v) to local 0 of B from A; scatter(v) from local 0 of A to B */
    int *g = malloc(sizeof(int) * (size_t)(rsize * N + 1)), *cnt = malloc(sizeof(int) * (size_t)rsize),
        *dsp = malloc(sizeof(int) * (size_t)rsize);
    for (int j = 0; j < rsize; j++)
        cnt[j] = j % 3 + 1, dsp[j] = j * N;
    for (int i = 0; i < rsize * N; i++)
        g[i] = -1;
    bool groot = !in_a && lrank == 0;
    root = !in_a ? (groot ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Gather(in, 2, MPI_INT, g, 2, MPI_INT, root, ic);
    if (groot)
        for (int j = 0; j < rsize; j++)
            for (int i = 0; i < 2; i++)
                CHECK_EQ(g[j * 2 + i], v(rbase + j, i));
    MPI_Gatherv(in, lrank % 3 + 1, MPI_INT, g, cnt, dsp, MPI_INT, root, ic);
    if (groot)
        for (int j = 0; j < rsize; j++)
            for (int i = 0; i < cnt[j]; i++)
                CHECK_EQ(g[dsp[j] + i], v(rbase + j, i));
    bool sroot = in_a && lrank == 0;
    root = in_a ? (sroot ? MPI_ROOT : MPI_PROC_NULL) : 0;
    if (sroot)
        for (int i = 0; i < rsize * N; i++)
            g[i] = 100 + i;
    int got[N] = {0};
    MPI_Scatter(g, 2, MPI_INT, got, 2, MPI_INT, root, ic);
    if (!in_a)
        for (int i = 0; i < 2; i++)
            CHECK_EQ(got[i], 100 + lrank * 2 + i);
    MPI_Scatterv(g, cnt, dsp, MPI_INT, got, lrank % 3 + 1, MPI_INT, root, ic);
    if (!in_a)
        for (int i = 0; i < lrank % 3 + 1; i++)
            CHECK_EQ(got[i], 100 + lrank * N + i);
    free(g);
    free(cnt);
    free(dsp);
}

static void inter_all(MPI_Comm ic)
{
    enum { N = 3 };
    /* allreduce: the other group's sum */
    int in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = v(rank, i);
    MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, ic);
    for (int i = 0; i < N; i++) {
        int want = 0;
        for (int j = 0; j < rsize; j++)
            want += v(rbase + j, i);
        CHECK_EQ(out[i], want);
    }
    /* allgather: the other group's contributions in its rank order */
    int *all = malloc(sizeof(int) * (size_t)(rsize * N)), *sb = malloc(sizeof(int) * (size_t)(rsize * N));
    MPI_Allgather(in, N, MPI_INT, all, N, MPI_INT, ic);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < N; i++)
            CHECK_EQ(all[j * N + i], v(rbase + j, i));
    /* alltoall: block j to remote j; block j received from remote j */
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < N; i++)
            sb[j * N + i] = rank * 10000 + j * 100 + i;
    MPI_Alltoall(sb, N, MPI_INT, all, N, MPI_INT, ic);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < N; i++)
            CHECK_EQ(all[j * N + i], (rbase + j) * 10000 + lrank * 100 + i);
    /* alltoallw with the same layout */
    int *c = malloc(sizeof(int) * (size_t)rsize), *d = malloc(sizeof(int) * (size_t)rsize);
    MPI_Datatype *t = malloc(sizeof(MPI_Datatype) * (size_t)rsize);
    for (int j = 0; j < rsize; j++)
        c[j] = N, d[j] = j * N * (int)sizeof(int), t[j] = MPI_INT;
    memset(all, 0, sizeof(int) * (size_t)(rsize * N));
    MPI_Alltoallw(sb, c, d, t, all, c, d, t, ic);
    for (int j = 0; j < rsize; j++)
        CHECK_EQ(all[j * N + 1], (rbase + j) * 10000 + lrank * 100 + 1);
    free(c);
    free(d);
    free(t);
    /* reduce_scatter_block: vectors of lsize * rsize elements in both groups;
     * local rank k gets block k (rsize elements) of the other group's sum */
    int total = lsize * rsize, rc = total / lsize;
    int *vec = malloc(sizeof(int) * (size_t)total), *mine = malloc(sizeof(int) * (size_t)rc);
    for (int i = 0; i < total; i++)
        vec[i] = v(rank, i);
    MPI_Reduce_scatter_block(vec, mine, rc, MPI_INT, MPI_SUM, ic);
    for (int i = 0; i < rc; i++) {
        int want = 0;
        for (int j = 0; j < rsize; j++)
            want += v(rbase + j, lrank * rc + i);
        CHECK_EQ(mine[i], want);
    }
    free(vec);
    free(mine);
    free(all);
    free(sb);
    MPI_Barrier(ic);
}

static void inter_nonblocking_and_errors(MPI_Comm ic)
{
    /* several nonblocking collectives outstanding on the intercommunicator
     * and on world at once */
    enum { M = 4 };
    int in[M], out[M], wout[M], b[M];
    MPI_Request rq[3 * M + 1];
    for (int k = 0; k < M; k++) {
        in[k] = rank + k;
        b[k] = in_a && lrank == 0 ? 7 + k : -1;
        MPI_Iallreduce(&in[k], &out[k], 1, MPI_INT, MPI_SUM, ic, &rq[k]);
        MPI_Iallreduce(&in[k], &wout[k], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq[M + k]);
        MPI_Ibcast(&b[k], 1, MPI_INT, in_a ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic, &rq[2 * M + k]);
    }
    MPI_Ibarrier(ic, &rq[3 * M]);
    MPI_Waitall(3 * M + 1, rq, MPI_STATUSES_IGNORE);
    for (int k = 0; k < M; k++) {
        int want = 0;
        for (int j = 0; j < rsize; j++)
            want += rbase + j + k;
        CHECK_EQ(out[k], want);
        CHECK_EQ(wout[k], size - 1 + k);
        CHECK_EQ(b[k], in_a ? (lrank == 0 ? 7 + k : -1) : 7 + k);
    }
    /* not defined or not allowed on intercommunicators */
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    int x = rank, y, cls;
    MPI_Error_class(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, ic), &cls);
    CHECK_EQ(cls, MPI_ERR_COMM);
    MPI_Error_class(MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, ic), &cls);
    CHECK_EQ(cls, MPI_ERR_BUFFER);
    MPI_Error_class(MPI_Bcast(&x, 1, MPI_INT, rsize, ic), &cls); /* no such remote rank */
    CHECK_EQ(cls, MPI_ERR_ROOT);
}

/* One of LeanMPI's MPI_T counters, read around a few collectives. */
typedef struct {
    MPI_T_pvar_session ses;
    MPI_T_pvar_handle h;
} counter;

static void counter_open(counter *c, const char *name)
{
    int provided, cnt;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    int idx = mpitest_pvar_index(name);
    CHECK(idx >= 0);
    MPI_T_pvar_session_create(&c->ses);
    MPI_T_pvar_handle_alloc(c->ses, idx, NULL, &c->h, &cnt);
}

static unsigned long long counter_read(counter *c)
{
    unsigned long long v = 0;
    MPI_T_pvar_read(c->ses, c->h, &v);
    return v;
}

static void counter_close(counter *c)
{
    MPI_T_pvar_handle_free(c->ses, &c->h);
    MPI_T_pvar_session_free(&c->ses);
    MPI_T_finalize();
}

/* With T_COLL_NODES=k (and LMPI_NODE_SIZE set so that the job spans k
 * nodes), the node-aware paths must have run: read LeanMPI's MPI_T counter. */
static void test_node_aware_ran(void)
{
    const char *want = getenv("T_COLL_NODES");
    if (!want)
        return;
    counter c;
    counter_open(&c, "lmpi_coll_node_aware");
    unsigned long long before = counter_read(&c);
    int x = rank, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(&x, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    unsigned long long after = counter_read(&c);
    CHECK_EQ(y, size * (size - 1) / 2);
    CHECK_EQ(x, size - 1);
    CHECK_EQ(after - before, 3);
    counter_close(&c);
}

/* Small blocking collectives on a communicator within one node go through
 * its shared-memory area (LMPI_COLL_SHM): with T_COLL_SHM set, every rank
 * whose node holds another rank must count one phase each for an
 * allreduce, a barrier (every member combines the slots itself), a bcast
 * and a reduce; over emulated nodes (T_COLL_NODES) the allreduce and the
 * barrier are a gather and a release around the roots' exchange: two
 * phases each.  Then
 * many communicators at once, more than the pool holds when LMPI_SHM_COLL_POOL
 * is small: those without an area use messages, and every result is right. */
static void test_shm_ran(void)
{
    if (!getenv("T_COLL_SHM"))
        return;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int nsize;
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    counter c;
    counter_open(&c, "lmpi_coll_shm");
    MPI_Barrier(MPI_COMM_WORLD); /* areas are taken at the first use */
    unsigned long long before = counter_read(&c);
    int x = rank, y = 0, z = -1;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(&x, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    MPI_Reduce(&rank, &z, 1, MPI_INT, MPI_MAX, size / 2, MPI_COMM_WORLD);
    unsigned long long after = counter_read(&c);
    CHECK_EQ(y, size * (size - 1) / 2);
    CHECK_EQ(x, size - 1);
    if (rank == size / 2)
        CHECK_EQ(z, size - 1);
    unsigned phases = getenv("T_COLL_NODES") ? 6u : 4u;
    CHECK_EQ(after - before, nsize > 1 ? phases : 0u);
    counter_close(&c);

    enum { NCOMMS = 24 };
    MPI_Comm comms[NCOMMS];
    for (int round = 0; round < 2; round++) { /* the second round reuses freed areas */
        for (int i = 0; i < NCOMMS; i++)
            MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
        for (int i = 0; i < NCOMMS; i++) {
            long v[4] = {rank, i, 1, rank * i}, s[4];
            MPI_Allreduce(v, s, 4, MPI_LONG, MPI_SUM, comms[i]);
            CHECK_EQ(s[0], (long)size * (size - 1) / 2);
            CHECK_EQ(s[1], (long)i * size);
            CHECK_EQ(s[2], (long)size);
            CHECK_EQ(s[3], (long)i * size * (size - 1) / 2);
            int b = rank == i % size ? 1000 + i : 0;
            MPI_Bcast(&b, 1, MPI_INT, i % size, comms[i]);
            CHECK_EQ(b, 1000 + i);
        }
        for (int i = NCOMMS - 1; i >= 0; i--)
            MPI_Comm_free(&comms[i]);
    }
}

static void test_intercomm(void)
{
    if (size < 2)
        return;
    na = (size + 1) / 2;
    in_a = rank < na;
    MPI_Comm local, ic;
    MPI_Comm_split(MPI_COMM_WORLD, in_a, rank, &local);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? na : 0, 77, &ic);
    MPI_Comm_remote_size(ic, &rsize);
    rbase = in_a ? na : 0;
    inter_rooted(ic);
    inter_all(ic);
    inter_nonblocking_and_errors(ic);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_bcast_reduce();
    test_gather_scatter();
    test_alltoall_scan();
    test_mixed_types();
    test_alltoallv_in_place();
    test_nonblocking();
    test_persistent();
    test_intercomm();
    test_node_aware_ran();
    test_shm_ran();
    return mpitest_finish("t_coll");
}
