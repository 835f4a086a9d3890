/* Collectives against serially computed results: every implemented
 * collective with roots, in-place forms, zero counts, derived datatypes,
 * predefined and user (non-commutative) operations, and many nonblocking
 * collectives outstanding on several communicators at once. */
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
    if (size > 1 && rank != 0) /* MPI_IN_PLACE is for the root only */
        CHECK_EQ(MPI_Reduce(MPI_IN_PLACE, dummy, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
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
    free(all), free(counts), free(displs);
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_bcast_reduce();
    test_gather_scatter();
    test_alltoall_scan();
    test_nonblocking();
    test_persistent();
    return mpitest_finish("t_coll");
}
