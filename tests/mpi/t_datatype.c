/* Derived datatypes between ranks: strided and struct types through every
 * protocol (fast box, eager, rendezvous, synchronous), nonblocking,
 * persistent, matched-probe and replace forms; MPI_Pack/MPI_Unpack;
 * Get_elements on partial data; bad input. */
#include <stddef.h>
#include <string.h>

#include "mpitest.h"

static int rank, size;

/* n doubles in blocks of bl every 3 bl elements: a strided vector (blocks
 * of 8 bytes go through packets, blocks of 4 KB are pulled into place) */
static void test_vector(int n, int mode, int bl)
{
    int peer = rank ^ 1;
    if (peer >= size)
        return;
    MPI_Datatype v;
    MPI_Type_vector(n / bl, bl, 3 * bl, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    double *a = malloc(sizeof(double) * 3 * n), *b = malloc(sizeof(double) * 3 * n);
    for (int i = 0; i < 3 * n; i++)
        a[i] = rank * 1e6 + i, b[i] = -1;
    MPI_Request r[2];
    if (rank % 2 == 0) { /* strided send; contiguous data received into the strided layout */
        if (mode == 0)
            MPI_Send(a, 1, v, peer, 1, MPI_COMM_WORLD);
        else if (mode == 1)
            MPI_Ssend(a, 1, v, peer, 1, MPI_COMM_WORLD);
        else {
            MPI_Isend(a, 1, v, peer, 1, MPI_COMM_WORLD, &r[0]);
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        }
        /* contiguous from the peer into our strided layout */
        MPI_Recv(b, 1, v, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 3 * n; i++)
            CHECK_EQ(b[i], i % (3 * bl) < bl ? peer * 1e6 + i : -1);
    } else { /* contiguous in, strided receive */
        MPI_Status st;
        if (mode == 2) {
            MPI_Irecv(b, 1, v, peer, 1, MPI_COMM_WORLD, &r[1]);
            MPI_Wait(&r[1], &st);
        } else {
            MPI_Recv(b, 1, v, peer, 1, MPI_COMM_WORLD, &st);
        }
        int cnt;
        MPI_Get_count(&st, v, &cnt);
        CHECK_EQ(cnt, 1);
        for (int i = 0; i < 3 * n; i++)
            CHECK_EQ(b[i], i % (3 * bl) < bl ? peer * 1e6 + i : -1);
        for (int i = 0; i < n; i++)
            a[i] = rank * 1e6 + (i / bl) * 3 * bl + i % bl;
        MPI_Send(a, n, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD);
    }
    free(a);
    free(b);
    MPI_Type_free(&v);
}

typedef struct {
    char c;
    double d[3];
    int i;
} rec;

static void test_struct(void)
{
    int peer = rank ^ 1;
    if (peer >= size)
        return;
    MPI_Datatype t, ts[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    int bl[3] = {1, 3, 1};
    MPI_Aint dp[3] = {offsetof(rec, c), offsetof(rec, d), offsetof(rec, i)};
    MPI_Type_create_struct(3, bl, dp, ts, &t);
    MPI_Type_commit(&t);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK_EQ(ext, sizeof(rec));
    enum { N = 1000 };
    rec *s = calloc(N, sizeof(rec)), *d = calloc(N, sizeof(rec));
    for (int k = 0; k < N; k++)
        s[k] = (rec){(char)('a' + k % 26), {k, k + .5, -k}, k * 7 + rank};
    MPI_Sendrecv(s, N, t, peer, 3, d, N, t, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < N; k++) {
        CHECK_EQ(d[k].c, 'a' + k % 26);
        CHECK_EQ(d[k].d[2], -k);
        CHECK_EQ(d[k].i, k * 7 + peer);
    }
    /* replace form */
    MPI_Sendrecv_replace(s, N, t, peer, 4, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(s[5].i, 5 * 7 + peer);
    /* a partial message: 2 records and a char and 1 double of the third */
    if (rank % 2 == 0) {
        MPI_Send(s, 2 * (1 + 24 + 4) + 1 + 8, MPI_BYTE, peer, 5, MPI_COMM_WORLD);
    } else {
        MPI_Status st;
        MPI_Recv(d, 3, t, peer, 5, MPI_COMM_WORLD, &st);
        int e, c;
        MPI_Get_elements(&st, t, &e);
        MPI_Get_count(&st, t, &c);
        CHECK_EQ(e, 2 * 5 + 2);
        CHECK_EQ(c, MPI_UNDEFINED);
    }
    /* persistent and matched-probe receives of the struct */
    MPI_Request r;
    if (rank % 2 == 0) {
        MPI_Send_init(s, N, t, peer, 6, MPI_COMM_WORLD, &r);
        for (int k = 0; k < 3; k++) {
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&r);
        MPI_Send(s, N, t, peer, 7, MPI_COMM_WORLD);
    } else {
        MPI_Recv_init(d, N, t, peer, 6, MPI_COMM_WORLD, &r);
        for (int k = 0; k < 3; k++) {
            memset(d, 0, N * sizeof(rec));
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            CHECK_EQ(d[N - 1].d[1], N - 1 + .5);
        }
        MPI_Request_free(&r);
        MPI_Message m;
        MPI_Mprobe(peer, 7, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
        memset(d, 0, N * sizeof(rec));
        MPI_Mrecv(d, N, t, &m, MPI_STATUS_IGNORE);
        CHECK_EQ(d[17].i, 17 * 7 + rank); /* the sender had exchanged its records with us */
    }
    free(s);
    free(d);
    MPI_Type_free(&t);
}

static void test_pack(void)
{
    int v[10], out[10], pos = 0;
    char buf[256];
    for (int i = 0; i < 10; i++)
        v[i] = i * i;
    MPI_Datatype idx;
    int bl[2] = {2, 3}, dp[2] = {7, 1};
    MPI_Type_indexed(2, bl, dp, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    int psize;
    MPI_Pack_size(1, idx, MPI_COMM_WORLD, &psize);
    CHECK_EQ(psize, 5 * 4);
    MPI_Pack(v, 1, idx, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
    MPI_Pack(v, 2, MPI_INT, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
    CHECK_EQ(pos, 28);
    int p2 = 0;
    memset(out, 0, sizeof(out));
    MPI_Unpack(buf, pos, &p2, out, 1, idx, MPI_COMM_WORLD);
    CHECK_EQ(out[7], 49);
    CHECK_EQ(out[3], 9);
    CHECK_EQ(out[0], 0);
    CHECK_EQ(MPI_Pack(v, 100, idx, buf, 8, &p2, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    MPI_Type_free(&idx);
}

/* MPI_BOTTOM with absolute addresses: two separate variables as one message */
static void test_bottom(void)
{
    static int x = 11;
    static double y = 2.5;
    MPI_Aint ax, ay;
    MPI_Get_address(&x, &ax);
    MPI_Get_address(&y, &ay);
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {ax, ay};
    MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE}, t;
    MPI_Type_create_struct(2, bl, dp, ts, &t);
    MPI_Type_commit(&t);
    char in[12];
    MPI_Request r;
    MPI_Irecv(in, 12, MPI_BYTE, rank, 8, MPI_COMM_WORLD, &r);
    MPI_Send(MPI_BOTTOM, 1, t, rank, 8, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    int gx;
    double gy;
    memcpy(&gx, in, 4);
    memcpy(&gy, in + 4, 8);
    CHECK_EQ(gx, 11);
    CHECK_EQ(gy * 2, 5);
    MPI_Aint sum = MPI_Aint_add(ax, 4), diff = MPI_Aint_diff(ay, ax);
    CHECK_EQ(MPI_Aint_diff(sum, ax), 4);
    CHECK_EQ(diff, ay - ax);
    MPI_Type_free(&t);
}

static void test_f90(void)
{
    MPI_Datatype a, b, c;
    MPI_Type_create_f90_real(10, 100, &a);
    MPI_Type_create_f90_real(10, 100, &b);
    CHECK(a == b); /* one object per (p, r) */
    int sz, ni, na, nt, comb, ints[2];
    MPI_Type_size(a, &sz);
    CHECK_EQ(sz, 8);
    MPI_Type_get_envelope(a, &ni, &na, &nt, &comb);
    CHECK_EQ(comb, MPI_COMBINER_F90_REAL);
    CHECK_EQ(ni, 2);
    MPI_Type_get_contents(a, 2, 0, 0, ints, NULL, NULL);
    CHECK_EQ(ints[0], 10);
    CHECK_EQ(ints[1], 100);
    MPI_Type_create_f90_integer(5, &c);
    MPI_Type_size(c, &sz);
    CHECK_EQ(sz, 4);
    CHECK_EQ(MPI_Type_free(&c), MPI_ERR_TYPE);
    CHECK_EQ(MPI_Type_create_f90_integer(40, &c), MPI_ERR_ARG);
    double x = 1.5, y = 0;
    MPI_Request r;
    MPI_Irecv(&y, 1, a, rank, 10, MPI_COMM_WORLD, &r);
    MPI_Send(&x, 1, a, rank, 10, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_EQ(y * 2, 3);
}

static void test_errors(void)
{
    MPI_Datatype v;
    MPI_Type_vector(3, 1, 2, MPI_INT, &v);
    int a[6];
    /* uncommitted */
    CHECK_EQ(MPI_Send(a, 1, v, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_EQ(MPI_Type_contiguous(-2, MPI_INT, &v), MPI_ERR_COUNT);
    MPI_Datatype pre = MPI_DOUBLE;
    CHECK_EQ(MPI_Type_free(&pre), MPI_ERR_TYPE);
    MPI_Type_free(&v);
    /* more data than the receive type holds: truncation, not corruption */
    int big[8] = {1, 2, 3, 4, 5, 6, 7, 8}, small[8] = {0};
    MPI_Datatype two;
    MPI_Type_vector(2, 1, 2, MPI_INT, &two);
    MPI_Type_commit(&two);
    MPI_Request r;
    MPI_Isend(big, 8, MPI_INT, rank, 9, MPI_COMM_WORLD, &r);
    CHECK_EQ(MPI_Recv(small, 1, two, rank, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_EQ(small[1], 0); /* the gap is untouched */
    MPI_Type_free(&two);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* calls without a communicator */
    for (int mode = 0; mode < 3; mode++) {
        test_vector(10, mode, 1);       /* fast box */
        test_vector(1000, mode, 1);     /* eager cells */
        test_vector(300000, mode, 1);   /* rendezvous: streamed through cells */
        test_vector(307200, mode, 512); /* rendezvous: pulled into 4 KB runs */
    }
    test_struct();
    test_pack();
    test_bottom();
    test_f90();
    test_errors();
    return mpitest_finish("t_datatype");
}
