/* Conformance cases an independent suite found wrong (issue 14): crashes,
 * hangs and semantics the standard fixes.  `t_conform CASE` runs one case,
 * `t_conform` runs them all; hangs are caught by mpiexec --timeout. */
#include <complex.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

static int rank, size;

static int cls(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* 1. Buffered sends on communicators other than the world. */
static void bsend_dup(void)
{
    int bufsize = 4 * (MPI_BSEND_OVERHEAD + 64);
    char *buf = malloc(bufsize);
    MPI_Buffer_attach(buf, bufsize);
    MPI_Comm dup, split;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split);
    MPI_Comm comms[2] = {dup, split};
    for (int c = 0; c < 2; c++) {
        int r, n;
        MPI_Comm_rank(comms[c], &r);
        MPI_Comm_size(comms[c], &n);
        int to = (r + 1) % n, from = (r + n - 1) % n, x = r * 10, y[3] = {-1, -1, -1};
        MPI_Request rq[2];
        MPI_Bsend(&x, 1, MPI_INT, to, 1, comms[c]);
        MPI_Ibsend(&x, 1, MPI_INT, to, 2, comms[c], &rq[0]);
        MPI_Bsend_init(&x, 1, MPI_INT, to, 3, comms[c], &rq[1]);
        MPI_Start(&rq[1]);
        for (int t = 0; t < 3; t++)
            MPI_Recv(&y[t], 1, MPI_INT, from, t + 1, comms[c], MPI_STATUS_IGNORE);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        MPI_Request_free(&rq[1]);
        for (int t = 0; t < 3; t++)
            CHECK_EQ(y[t], from * 10);
    }
    /* a communicator's own buffer serves its buffered sends */
    char *cbuf = malloc(bufsize);
    MPI_Comm_attach_buffer(dup, cbuf, bufsize);
    int x = rank, y = -1;
    MPI_Bsend(&x, 1, MPI_INT, (rank + 1) % size, 9, dup);
    MPI_Recv(&y, 1, MPI_INT, (rank + size - 1) % size, 9, dup, MPI_STATUS_IGNORE);
    CHECK_EQ(y, (rank + size - 1) % size);
    void *p;
    MPI_Count sz;
    MPI_Comm_detach_buffer_c(dup, &p, &sz);
    CHECK(p == cbuf);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    MPI_Buffer_detach(&p, &bufsize);
    free(buf);
    free(cbuf);
}

/* 2. Intercommunicator from the even and the odd ranks' groups. */
static void intercomm_from_groups(void)
{
    if (size < 2)
        return;
    MPI_Group world, even, odd;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int r[2] = {0, 0}, ranges[1][3];
    ranges[0][0] = 0, ranges[0][1] = size - 1, ranges[0][2] = 2;
    MPI_Group_range_incl(world, 1, ranges, &even);
    ranges[0][0] = 1;
    MPI_Group_range_incl(world, 1, ranges, &odd);
    (void)r;
    MPI_Comm inter;
    int mine_even = rank % 2 == 0;
    CHECK_EQ(MPI_Intercomm_create_from_groups(mine_even ? even : odd, 0, mine_even ? odd : even, 0, "t_conform.even-odd",
                                              MPI_INFO_NULL, MPI_ERRORS_RETURN, &inter),
             MPI_SUCCESS);
    int lsize, rsize, flag;
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    CHECK(flag);
    CHECK_EQ(lsize, mine_even ? (size + 1) / 2 : size / 2);
    CHECK_EQ(rsize, mine_even ? size / 2 : (size + 1) / 2);
    int x = rank, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, inter);
    int expect = 0;
    for (int i = mine_even ? 1 : 0; i < size; i += 2)
        expect += i;
    CHECK_EQ(sum, expect);
    MPI_Comm_free(&inter);
    MPI_Group_free(&world);
    MPI_Group_free(&even);
    MPI_Group_free(&odd);
}

/* 3. An op freed while a nonblocking reduction using it is pending. */
static void slow_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void op_free_pending(void)
{
    for (int round = 0; round < 20; round++) {
        MPI_Op op;
        MPI_Op_create(slow_sum, 1, &op);
        int x[64], y[64];
        for (int i = 0; i < 64; i++)
            x[i] = rank + i;
        MPI_Request rq;
        if (rank == 0 && round % 2)
            usleep(2000);
        MPI_Iallreduce(x, y, 64, MPI_INT, op, MPI_COMM_WORLD, &rq);
        MPI_Op_free(&op);
        CHECK(op == MPI_OP_NULL);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        for (int i = 0; i < 64; i++)
            CHECK_EQ(y[i], size * (size - 1) / 2 + size * i);
    }
}

/* 4. A delete callback that deletes other attributes of the same object. */
static int key_a = MPI_KEYVAL_INVALID, key_b = MPI_KEYVAL_INVALID, b_deleted;
static int delete_other(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)key, (void)val, (void)extra;
    return MPI_Comm_delete_attr(comm, key_b);
}
static int count_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)val, (void)extra;
    b_deleted++;
    return MPI_SUCCESS;
}

static void attr_delete_other(void)
{
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_other, &key_a, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &key_b, NULL);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_attr(dup, key_a, NULL);
    MPI_Comm_set_attr(dup, key_b, NULL);
    MPI_Comm_free(&dup);
    CHECK_EQ(b_deleted, 1);
    /* the same on MPI_COMM_SELF and the world, deleted in MPI_Finalize */
    MPI_Comm_set_attr(MPI_COMM_SELF, key_b, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, key_a, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, key_a, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, key_b, NULL);
}

/* 5. MPI_Reduce_local with MPI_IN_PLACE is erroneous: refused, no crash. */
static void reduce_local_in_place(void)
{
    /* errors of functions without a communicator are raised on MPI_COMM_SELF */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int a = 1, b = 2;
    CHECK_EQ(cls(MPI_Reduce_local(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM)), MPI_ERR_BUFFER);
    CHECK_EQ(cls(MPI_Reduce_local(&a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM)), MPI_ERR_BUFFER);
    CHECK_EQ(b, 2);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

/* 6. Several nonblocking collectives completed in different orders. */
static void nbc_any_order(void)
{
    enum { N = 6 };
    MPI_Request rq[N];
    int a = rank, sum = -1, b = rank == 0 ? 42 : -1, mx = -1, g[64], scan = -1;
    MPI_Iallreduce(&a, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
    MPI_Ibarrier(MPI_COMM_WORLD, &rq[1]);
    MPI_Ibcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq[2]);
    MPI_Iallreduce(&a, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq[3]);
    MPI_Iallgather(&a, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD, &rq[4]);
    MPI_Iscan(&a, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[5]);
    if (rank % 2) {
        for (int i = 0; i < N / 2; i++) {
            MPI_Request t = rq[i];
            rq[i] = rq[N - 1 - i], rq[N - 1 - i] = t;
        }
        MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
    } else if (rank % 3 == 2) {
        for (int i = N - 1; i >= 0; i--)
            MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
    } else {
        MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
    }
    CHECK_EQ(sum, size * (size - 1) / 2);
    CHECK_EQ(b, 42);
    CHECK_EQ(mx, size - 1);
    for (int i = 0; i < size; i++)
        CHECK_EQ(g[i], i);
    CHECK_EQ(scan, rank * (rank + 1) / 2);
}

/* 7. Comm_create_group over random subgroups, again and again, while the
 * other ranks run barriers on a communicator of their own; every call uses
 * the same tag. */
static void create_group_random(void)
{
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    enum { ROUNDS = 120 };
    MPI_Comm kept[ROUNDS];
    int nkept = 0;
    unsigned seed = 777;
    for (int round = 0; round < ROUNDS; round++) {
        /* every rank draws the same membership */
        int members[64], n = 0, in = 0;
        for (int r = 0; r < size; r++) {
            seed = seed * 1103515245u + 12345u;
            if ((seed >> 16) % 2 || r == round % size) {
                members[n++] = r;
                in |= r == rank;
            }
        }
        /* odd rounds: nothing holds the non-members back, they run ahead
         * into the next round's creation */
        MPI_Comm part = MPI_COMM_NULL;
        if (round % 2 == 0)
            MPI_Comm_split(MPI_COMM_WORLD, in, rank, &part);
        if (in) {
            MPI_Group g;
            MPI_Comm c;
            MPI_Group_incl(world, n, members, &g);
            CHECK_EQ(MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c), MPI_SUCCESS);
            int cs;
            MPI_Comm_size(c, &cs);
            CHECK_EQ(cs, n);
            if (round % 2 == 0)
                MPI_Barrier(c);
            kept[nkept++] = c;
            MPI_Group_free(&g);
        } else if (part != MPI_COMM_NULL) {
            for (int k = 0; k < 3; k++)
                MPI_Barrier(part);
        }
        if (part != MPI_COMM_NULL)
            MPI_Comm_free(&part);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < nkept; k++) {
        int x = 1, s = 0, cs;
        MPI_Comm_size(kept[k], &cs);
        MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, kept[k]);
        CHECK_EQ(s, cs);
        MPI_Comm_free(&kept[k]);
    }
    MPI_Group_free(&world);
}

/* 8. Comm_idup of an intercommunicator returns at once; Wait completes it. */
static void idup_inter(void)
{
    if (size < 2)
        return;
    MPI_Comm half, inter, dup;
    int low = rank < size / 2;
    MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 7, &inter);
    MPI_Request rq;
    int token = -1;
    if (low) {
        /* the other group idups only after this message arrives */
        MPI_Comm_idup(inter, &dup, &rq);
        if (rank == 0)
            MPI_Send(&rank, 1, MPI_INT, size / 2, 99, MPI_COMM_WORLD);
    } else {
        if (rank == size / 2)
            MPI_Recv(&token, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Comm_idup(inter, &dup, &rq);
    }
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    int rs, irs, flag;
    MPI_Comm_remote_size(dup, &rs);
    MPI_Comm_remote_size(inter, &irs);
    MPI_Comm_test_inter(dup, &flag);
    CHECK(flag);
    CHECK_EQ(rs, irs);
    int x = 1, s = 0;
    MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, dup);
    CHECK_EQ(s, irs);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

/* 9. Bcast of one element on the world at any size (run at 10 ranks). */
static void bcast_one(void)
{
    for (int root = 0; root < size; root++) {
        int x = rank == root ? 1000 + root : -1;
        char c = rank == root ? (char)root : -1;
        double d[2] = {rank == root ? root : -1.0, 0};
        MPI_Bcast(&x, 1, MPI_INT, root, MPI_COMM_WORLD);
        MPI_Bcast(&c, 1, MPI_CHAR, root, MPI_COMM_WORLD);
        MPI_Bcast(d, 1, MPI_DOUBLE, root, MPI_COMM_WORLD);
        CHECK_EQ(x, 1000 + root);
        CHECK_EQ(c, root);
        CHECK_EQ(d[0], root);
    }
    /* the same type signature with different types on root and others */
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_commit(&two);
    int v[2] = {rank == 0 ? 5 : -1, rank == 0 ? 6 : -1};
    if (rank == 0)
        MPI_Bcast(v, 1, two, 0, MPI_COMM_WORLD);
    else
        MPI_Bcast(v, 2, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK_EQ(v[0], 5);
    CHECK_EQ(v[1], 6);
    MPI_Type_free(&two);
}

/* 10 and 12. Arguments significant only at the root, ignored elsewhere. */
static void root_only_args(void)
{
    int x = rank, all[64], v[64], displs[64], counts[64];
    for (int i = 0; i < size; i++)
        counts[i] = 1, displs[i] = i, all[i] = -1;
    int root = size - 1, me = rank == root;
    MPI_Gather(&x, 1, MPI_INT, me ? all : NULL, me ? 1 : -1, me ? MPI_INT : MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
    if (me)
        for (int i = 0; i < size; i++)
            CHECK_EQ(all[i], i);
    MPI_Gatherv(&x, 1, MPI_INT, me ? all : NULL, me ? counts : NULL, me ? displs : NULL,
                me ? MPI_INT : MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
    int y = -1;
    for (int i = 0; i < size; i++)
        v[i] = 100 + i;
    MPI_Scatter(me ? v : NULL, me ? 1 : -5, me ? MPI_INT : MPI_DATATYPE_NULL, &y, 1, MPI_INT, root, MPI_COMM_WORLD);
    CHECK_EQ(y, 100 + rank);
    y = -1;
    MPI_Scatterv(me ? v : NULL, me ? counts : NULL, me ? displs : NULL, me ? MPI_INT : MPI_DATATYPE_NULL, &y, 1,
                 MPI_INT, root, MPI_COMM_WORLD);
    CHECK_EQ(y, 100 + rank);
    int s = -1;
    MPI_Reduce(&x, me ? &s : NULL, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    if (me)
        CHECK_EQ(s, size * (size - 1) / 2);
    /* the root's own send arguments under MPI_IN_PLACE */
    all[root] = root;
    if (me)
        MPI_Gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, all, 1, MPI_INT, root, MPI_COMM_WORLD);
    else
        MPI_Gather(&x, 1, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
    if (me)
        for (int i = 0; i < size; i++)
            CHECK_EQ(all[i], i);
    for (int i = 0; i < size; i++)
        all[i] = i == rank ? i : -1;
    MPI_Allgather(MPI_IN_PLACE, -3, MPI_DATATYPE_NULL, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        CHECK_EQ(all[i], i);
    /* the nonblocking and persistent forms ignore the same arguments */
    MPI_Request rq;
    for (int i = 0; i < size; i++)
        all[i] = i == rank ? i : -1;
    MPI_Iallgather(MPI_IN_PLACE, -3, MPI_DATATYPE_NULL, all, 1, MPI_INT, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int i = 0; i < size; i++)
        CHECK_EQ(all[i], i);
    y = -1;
    MPI_Iscatterv(me ? v : NULL, me ? counts : NULL, me ? displs : NULL, me ? MPI_INT : MPI_DATATYPE_NULL, &y, 1,
                  MPI_INT, root, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK_EQ(y, 100 + rank);
    s = -1;
    int three[2] = {rank + 1, rank + 1}, out[2] = {-1, -1};
    MPI_Ireduce(three, me ? out : NULL, 2, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (me) {
        CHECK_EQ(out[0], size * (size + 1) / 2);
        CHECK_EQ(out[1], size * (size + 1) / 2);
    }
    out[0] = out[1] = -1;
    MPI_Reduce_init(three, me ? out : NULL, 2, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
    MPI_Start(&rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Request_free(&rq);
    if (me) {
        CHECK_EQ(out[0], size * (size + 1) / 2);
        CHECK_EQ(out[1], size * (size + 1) / 2);
    }
    /* in-place allreduce in every form: [3,3] is the sum of [1,1] over 3 ranks */
    int io[2] = {1, 1};
    MPI_Iallreduce(MPI_IN_PLACE, io, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK_EQ(io[0], size);
    CHECK_EQ(io[1], size);
    /* MPI_PROC_NULL peers: nothing is sent, so the type is not looked at */
    MPI_Status st;
    CHECK_EQ(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
    /* errors at a non-root are still errors where the argument is significant */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(cls(MPI_Gather(&x, -1, MPI_INT, all, 1, MPI_INT, root, MPI_COMM_WORLD)), MPI_ERR_COUNT);
    CHECK_EQ(cls(MPI_Igather(&x, -1, MPI_INT, all, 1, MPI_INT, root, MPI_COMM_WORLD, &rq)), MPI_ERR_COUNT);
    CHECK_EQ(cls(MPI_Gather_init(&x, -1, MPI_INT, all, 1, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &rq)),
             MPI_ERR_COUNT);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* 11. Single-completion calls leave status.MPI_ERROR alone. */
static void status_error_untouched(void)
{
    if (size < 2)
        return;
    enum { MAGIC = 0x5eed };
    MPI_Status st;
    MPI_Request rq;
    int x = 1, y;
    if (rank == 0) {
        for (int i = 0; i < 6; i++)
            MPI_Send(&x, 1, MPI_INT, 1, i, MPI_COMM_WORLD);
        MPI_Isend(&x, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, &rq);
        st.MPI_ERROR = MAGIC;
        MPI_Wait(&rq, &st);
        CHECK_EQ(st.MPI_ERROR, MAGIC);
    } else if (rank == 1) {
        st.MPI_ERROR = MAGIC;
        MPI_Recv(&y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);
        CHECK_EQ(st.MPI_ERROR, MAGIC);
        MPI_Message m;
        st.MPI_ERROR = MAGIC;
        MPI_Mprobe(0, 1, MPI_COMM_WORLD, &m, &st);
        CHECK_EQ(st.MPI_ERROR, MAGIC);
        MPI_Mrecv(&y, 1, MPI_INT, &m, &st);
        CHECK_EQ(st.MPI_ERROR, MAGIC);
        int flag = 0;
        while (!flag)
            MPI_Improbe(0, 2, MPI_COMM_WORLD, &flag, &m, &st);
        CHECK_EQ(st.MPI_ERROR, MAGIC);
        MPI_Mrecv(&y, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
        MPI_Irecv(&y, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, &st);
        CHECK_EQ(st.MPI_ERROR, MAGIC);
        MPI_Irecv(&y, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, &rq);
        flag = 0;
        while (!flag)
            MPI_Test(&rq, &flag, &st);
        CHECK_EQ(st.MPI_ERROR, MAGIC);
        MPI_Probe(0, 5, MPI_COMM_WORLD, &st);
        CHECK_EQ(st.MPI_ERROR, MAGIC);
        MPI_Recv(&y, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &st);
        /* multi-completion calls do set it */
        MPI_Status sts[1];
        sts[0].MPI_ERROR = MAGIC;
        MPI_Irecv(&y, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, &rq);
        MPI_Waitall(1, &rq, sts);
        CHECK_EQ(sts[0].MPI_ERROR, MPI_SUCCESS);
    }
}

/* 13. Errors found at completion go to the request's communicator. */
static int comm_handler_calls, comm_handler_code;
static void count_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    comm_handler_calls++;
    comm_handler_code = *code;
}
static int session_handler_calls;
static void session_handler(MPI_Session *s, int *code, ...)
{
    (void)s, (void)code;
    session_handler_calls++;
}

static void completion_error_handler(void)
{
    MPI_Comm dup;
    MPI_Errhandler eh;
    MPI_Comm_dup(MPI_COMM_SELF, &dup);
    MPI_Comm_create_errhandler(count_handler, &eh);
    MPI_Comm_set_errhandler(dup, eh);
    int big[4] = {1, 2, 3, 4}, small[2];
    MPI_Request rq[2];
    MPI_Irecv(small, 2, MPI_INT, 0, 0, dup, &rq[0]);
    MPI_Send(big, 4, MPI_INT, 0, 0, dup);
    int rc = MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    CHECK_EQ(cls(rc), MPI_ERR_TRUNCATE);
    CHECK_EQ(comm_handler_calls, 1);
    CHECK_EQ(cls(comm_handler_code), MPI_ERR_TRUNCATE);
    /* Waitall reports MPI_ERR_IN_STATUS, again on the communicator */
    MPI_Status sts[2];
    MPI_Irecv(small, 2, MPI_INT, 0, 1, dup, &rq[0]);
    MPI_Irecv(small, 1, MPI_INT, 0, 2, dup, &rq[1]);
    MPI_Send(big, 1, MPI_INT, 0, 2, dup);
    MPI_Send(big, 4, MPI_INT, 0, 1, dup);
    rc = MPI_Waitall(2, rq, sts);
    CHECK_EQ(cls(rc), MPI_ERR_IN_STATUS);
    CHECK_EQ(cls(sts[0].MPI_ERROR), MPI_ERR_TRUNCATE);
    CHECK_EQ(sts[1].MPI_ERROR, MPI_SUCCESS);
    CHECK_EQ(comm_handler_calls, 2);
    MPI_Comm_free(&dup);
    MPI_Errhandler_free(&eh);

    /* MPI_Session_init: errors go to the handler passed in */
    MPI_Errhandler seh;
    MPI_Session_create_errhandler(session_handler, &seh);
    MPI_Session s;
    MPI_Info bad;
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "thread_level", "MPI_THREAD_NONSENSE");
    rc = MPI_Session_init(bad, seh, &s);
    if (rc == MPI_SUCCESS) {
        /* an unknown level may be ignored; then check a bad pset instead */
        MPI_Group g;
        rc = MPI_Group_from_session_pset(s, "mpi://no-such-set", &g);
        CHECK(rc != MPI_SUCCESS);
        MPI_Session_finalize(&s);
    }
    CHECK_EQ(session_handler_calls, 1);
    MPI_Info_free(&bad);
    MPI_Errhandler_free(&seh);
}

/* 14. Sessions: info, psets as users write them. */
static void session_info(void)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_SINGLE");
    MPI_Info_set(info, "mpi_memory_alloc_kinds", "mpi,system");
    MPI_Session s;
    CHECK_EQ(MPI_Session_init(info, MPI_ERRORS_RETURN, &s), MPI_SUCCESS);
    MPI_Info got;
    CHECK_EQ(MPI_Session_get_info(s, &got), MPI_SUCCESS);
    char val[256];
    int flag = 0;
    MPI_Info_get_string(got, "thread_level", &(int){sizeof(val)}, val, &flag);
    CHECK(flag);
    CHECK(flag && !strncmp(val, "MPI_THREAD_", 11));
    MPI_Info_free(&got);
    int n;
    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
    CHECK(n >= 2);
    const char *names[] = {"mpi://world", "mpi://WORLD", "mpi://self", "mpi://SELF", "MPI://World"};
    for (int i = 0; i < 5; i++) {
        MPI_Group g;
        CHECK_EQ(MPI_Group_from_session_pset(s, names[i], &g), MPI_SUCCESS);
        int gs = -1;
        MPI_Group_size(g, &gs);
        CHECK_EQ(gs, i < 2 || i == 4 ? size : 1);
        MPI_Group_free(&g);
        MPI_Info pi;
        CHECK_EQ(MPI_Session_get_pset_info(s, names[i], &pi), MPI_SUCCESS);
        flag = 0;
        MPI_Info_get_string(pi, "mpi_size", &(int){sizeof(val)}, val, &flag);
        CHECK(flag);
        CHECK_EQ(atoi(val), i < 2 || i == 4 ? size : 1);
        MPI_Info_free(&pi);
    }
    MPI_Group g;
    CHECK_EQ(cls(MPI_Group_from_session_pset(s, NULL, &g)), MPI_ERR_ARG);
    MPI_Info pi;
    CHECK_EQ(cls(MPI_Session_get_pset_info(s, NULL, &pi)), MPI_ERR_ARG);
    /* no session to raise it on: MPI_COMM_SELF's handler */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_EQ(cls(MPI_Group_from_session_pset(MPI_SESSION_NULL, "mpi://world", &g)), MPI_ERR_SESSION);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Session_finalize(&s);
    MPI_Info_free(&info);
}

/* 15. Attributes: Finalized during MPI_COMM_SELF's deletion, deferred keyval
 * free, type delete callbacks on every free. */
static int finalized_in_callback = -1;
static int self_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)val, (void)extra;
    MPI_Finalized(&finalized_in_callback);
    /* the job is still usable here */
    int x = 1, s = 0;
    MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (s != size)
        finalized_in_callback = 2;
    return MPI_SUCCESS;
}
static int type_deletes;
static int type_delete(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t, (void)key, (void)val, (void)extra;
    type_deletes++;
    return MPI_SUCCESS;
}
static int type_copy(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag)
{
    (void)t, (void)key, (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void attr_semantics(void)
{
    int key;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &key, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
    MPI_Comm_free_keyval(&key);
    CHECK_EQ(key, MPI_KEYVAL_INVALID);
    /* deferred free: a dup of a communicator that holds it copies through it */
    int k2, *val, flag = 0;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL);
    MPI_Comm d1, d2;
    MPI_Comm_dup(MPI_COMM_WORLD, &d1);
    static int payload = 77;
    MPI_Comm_set_attr(d1, k2, &payload);
    int k2_copy = k2;
    MPI_Comm_free_keyval(&k2);
    MPI_Comm_get_attr(d1, k2_copy, &val, &flag);
    CHECK(flag && val == &payload);
    MPI_Comm_dup(d1, &d2);
    flag = 0;
    MPI_Comm_get_attr(d2, k2_copy, &val, &flag);
    CHECK(flag && val == &payload);
    MPI_Comm_free(&d1);
    MPI_Comm_free(&d2);
    /* the type delete callback runs on every MPI_Type_free */
    int tk;
    MPI_Type_create_keyval(type_copy, type_delete, &tk, NULL);
    MPI_Datatype t, t2;
    MPI_Type_contiguous(3, MPI_INT, &t);
    MPI_Type_set_attr(t, tk, NULL);
    MPI_Type_dup(t, &t2);
    MPI_Type_free(&t);
    CHECK_EQ(type_deletes, 1);
    MPI_Type_free(&t2);
    CHECK_EQ(type_deletes, 2);
    MPI_Type_free_keyval(&tk);
}

/* 16. Error strings, complex alignment, f90 types in reductions, MPI_T. */
static void small_semantics(void)
{
    int ec;
    MPI_Add_error_class(&ec);
    char s[MPI_MAX_ERROR_STRING] = "junk";
    int len = -1;
    CHECK_EQ(MPI_Error_string(ec, s, &len), MPI_SUCCESS);
    CHECK_EQ(len, 0);
    CHECK_EQ(s[0], 0);

    struct fc { float _Complex z; char c; };
    struct dc { double _Complex z; char c; };
    struct cs { char c0; short s; };
    struct ld { long double l; char c; };
    MPI_Aint ext, lb;
    struct { MPI_Datatype t; size_t want; } cases[] = {
        {MPI_C_FLOAT_COMPLEX, sizeof(struct fc)},
        {MPI_C_COMPLEX, sizeof(struct fc)},
        {MPI_C_DOUBLE_COMPLEX, sizeof(struct dc)},
        {MPI_SHORT, sizeof(struct { short s; char c; })},
        {MPI_LONG_DOUBLE, sizeof(struct ld)},
        {MPI_INT64_T, sizeof(struct { int64_t v; char c; })},
        {MPI_AINT, sizeof(struct { MPI_Aint v; char c; })},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int bl[2] = {1, 1};
        MPI_Aint dis[2] = {0, 0};
        MPI_Datatype ts[2] = {cases[i].t, MPI_CHAR}, st;
        MPI_Type_size(cases[i].t, &len);
        dis[1] = len;
        MPI_Type_create_struct(2, bl, dis, ts, &st);
        MPI_Type_get_extent(st, &lb, &ext);
        CHECK_EQ(ext, cases[i].want);
        MPI_Type_free(&st);
    }
    (void)sizeof(struct cs);

    MPI_Datatype f90r, f90i, f90c;
    MPI_Type_create_f90_real(6, MPI_UNDEFINED, &f90r);
    MPI_Type_create_f90_integer(4, &f90i);
    MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &f90c);
    float fr = 1.5f, fs = 0;
    MPI_Allreduce(&fr, &fs, 1, f90r, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(fs * 2, 3 * size);
    int isz;
    MPI_Type_size(f90i, &isz);
    int64_t iv = 2, is = 0;
    MPI_Allreduce(&iv, &is, 1, f90i, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(is, 2 * size);
    float _Complex cz = 1.0f + 2.0f * I, csum = 0;
    MPI_Allreduce(&cz, &csum, 1, f90c, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(crealf(csum), size);
    CHECK_EQ(cimagf(csum), 2 * size);

    int provided, n;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_cvar_get_num(&n);
    CHECK(n > 0);
    CHECK_EQ(MPI_T_cvar_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
    int verb;
    MPI_Datatype dt;
    CHECK_EQ(MPI_T_cvar_get_info(0, NULL, NULL, &verb, &dt, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_get_info(0, NULL, NULL, &verb, &verb, &dt, NULL, NULL, NULL, &verb, NULL, NULL, NULL),
             MPI_SUCCESS);
    MPI_T_finalize();
}

/* 17. Cancelling sends that were not matched. */
static void cancel_send(void)
{
    /* to oneself: the answer is there when MPI_Cancel returns (mpi4py relies on it) */
    int me = 7, flag = 0;
    MPI_Request self;
    MPI_Status sst;
    MPI_Issend(&me, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &self);
    MPI_Cancel(&self);
    MPI_Request_get_status(self, &flag, &sst);
    CHECK(flag);
    MPI_Wait(&self, &sst);
    MPI_Test_cancelled(&sst, &flag);
    CHECK(flag);
    MPI_Iprobe(rank, 3, MPI_COMM_WORLD, &flag, &sst);
    CHECK(!flag);
    if (size < 2)
        return;
    static int big[65536]; /* rendezvous */
    for (int i = 0; i < 65536; i++)
        big[i] = i;
    MPI_Status st;
    if (rank == 0) {
        MPI_Request rq[4];
        int small = 5;
        MPI_Isend(&small, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &rq[0]);
        MPI_Issend(&small, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(big, 65536, MPI_INT, 1, 3, MPI_COMM_WORLD, &rq[2]);
        MPI_Send_init(&small, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, &rq[3]);
        MPI_Start(&rq[3]);
        for (int i = 0; i < 4; i++) {
            CHECK_EQ(MPI_Cancel(&rq[i]), MPI_SUCCESS);
            MPI_Wait(&rq[i], &st);
            flag = 0;
            MPI_Test_cancelled(&st, &flag);
            CHECK(flag);
        }
        MPI_Request_free(&rq[3]);
        int last = 99;
        MPI_Send(&last, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD); /* A: rank 1 looks for the cancelled ones */
        MPI_Barrier(MPI_COMM_WORLD); /* B */
        /* a matched send cannot be cancelled */
        MPI_Isend(&small, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq[0]);
        MPI_Barrier(MPI_COMM_WORLD); /* C: rank 1 has received it */
        MPI_Cancel(&rq[0]);
        MPI_Wait(&rq[0], &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK(!flag);
        /* while rank 1 is outside MPI: the first lands in the pair's fast-box
         * slot, the next two in its ring as compact records, which name the
         * send by the pair's sequence number (src/transport/shm/fastbox.h);
         * the third is taken back by that name */
        int three[3] = {7, 8, 9};
        for (int i = 0; i < 3; i++)
            MPI_Isend(&three[i], 1, MPI_INT, 1, 7 + i, MPI_COMM_WORLD, &rq[i]);
        CHECK_EQ(MPI_Cancel(&rq[2]), MPI_SUCCESS);
        MPI_Wait(&rq[2], &st);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        flag = 0;
        MPI_Test_cancelled(&st, &flag);
        CHECK(flag);
        MPI_Barrier(MPI_COMM_WORLD); /* D */
    } else if (rank == 1) {
        MPI_Barrier(MPI_COMM_WORLD); /* A */
        int y = -1;
        /* none of the cancelled messages arrives: the next tag-1 message is 99 */
        MPI_Recv(&y, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
        CHECK_EQ(y, 99);
        MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        CHECK(!flag);
        MPI_Barrier(MPI_COMM_WORLD); /* B */
        MPI_Recv(&y, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &st);
        CHECK_EQ(y, 5);
        MPI_Barrier(MPI_COMM_WORLD); /* C */
        usleep(50000); /* out of MPI while rank 0 sends three */
        for (int t = 7; t <= 8; t++) {
            MPI_Recv(&y, 1, MPI_INT, 0, t, MPI_COMM_WORLD, &st);
            CHECK_EQ(y, t);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* D: rank 0 has its answer */
        MPI_Iprobe(0, 9, MPI_COMM_WORLD, &flag, &st);
        CHECK(!flag);
    } else {
        for (int b = 0; b < 4; b++)
            MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* 18. Intercommunicators with groups of different sizes. */
static void intercomm_unequal(void)
{
    if (size < 3)
        return;
    MPI_Comm half, inter, dup;
    int low = rank == 0; /* groups of 1 and size - 1 */
    MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? 1 : 0, 5, &inter);
    MPI_Comm_dup(inter, &dup);
    int ls, rs, dls, drs, res;
    MPI_Comm_size(inter, &ls);
    MPI_Comm_remote_size(inter, &rs);
    MPI_Comm_size(dup, &dls);
    MPI_Comm_remote_size(dup, &drs);
    CHECK_EQ(dls, ls);
    CHECK_EQ(drs, rs);
    MPI_Comm_compare(inter, dup, &res);
    CHECK_EQ(res, MPI_CONGRUENT);
    MPI_Comm_compare(inter, inter, &res);
    CHECK_EQ(res, MPI_IDENT);
    /* rooted reduce: group 0's single rank is the root, group 1 sends */
    int x = rank, r = -1;
    int root = low ? MPI_ROOT : 0;
    CHECK_EQ(MPI_Reduce(&x, &r, 1, MPI_INT, MPI_SUM, root, dup), MPI_SUCCESS);
    if (low)
        CHECK_EQ(r, size * (size - 1) / 2);
    /* the other way: rank 1 of the world (rank 0 of the big group) is root,
     * the others of its group pass MPI_PROC_NULL */
    int lr;
    MPI_Comm_rank(dup, &lr);
    root = low ? 0 : (lr == 0 ? MPI_ROOT : MPI_PROC_NULL);
    r = -1;
    if (root == MPI_PROC_NULL) /* nothing of this rank is significant */
        CHECK_EQ(MPI_Reduce(NULL, NULL, 1, MPI_DATATYPE_NULL, MPI_OP_NULL, root, dup), MPI_SUCCESS);
    else
        CHECK_EQ(MPI_Reduce(&x, &r, 1, MPI_INT, MPI_SUM, root, dup), MPI_SUCCESS);
    if (!low && lr == 0)
        CHECK_EQ(r, 0);
    CHECK_EQ(MPI_Bcast(&x, 1, MPI_INT, root, dup), MPI_SUCCESS);
    if (!low)
        CHECK_EQ(x, rank);
    else
        CHECK_EQ(x, 1);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

/* 20. Null handles. */
static void null_handles(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_EQ(MPI_Comm_get_name(MPI_COMM_NULL, name, &len), MPI_SUCCESS);
    CHECK(!strcmp(name, "MPI_COMM_NULL"));
    CHECK_EQ(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len), MPI_SUCCESS);
    CHECK(!strcmp(name, "MPI_DATATYPE_NULL"));
    /* MPI-1's markers keep their names, as in MPICH */
    CHECK_EQ(MPI_Type_get_name(MPI_UB, name, &len), MPI_SUCCESS);
    CHECK(!strcmp(name, "MPI_UB") && len == 6);
    CHECK_EQ(MPI_Win_get_name(MPI_WIN_NULL, name, &len), MPI_SUCCESS);
    CHECK(!strcmp(name, "MPI_WIN_NULL"));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int res;
    CHECK_EQ(cls(MPI_Comm_compare(MPI_COMM_NULL, MPI_COMM_WORLD, &res)), MPI_ERR_COMM);
    CHECK_EQ(cls(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &res)), MPI_ERR_COMM);
    MPI_Datatype t;
    struct { int cls, size; } want[] = {
        {MPI_TYPECLASS_INTEGER, 1}, {MPI_TYPECLASS_INTEGER, 2}, {MPI_TYPECLASS_INTEGER, 4},
        {MPI_TYPECLASS_INTEGER, 8}, {MPI_TYPECLASS_INTEGER, 16}, {MPI_TYPECLASS_REAL, 2},
        {MPI_TYPECLASS_REAL, 4}, {MPI_TYPECLASS_REAL, 8}, {MPI_TYPECLASS_REAL, 16},
        {MPI_TYPECLASS_COMPLEX, 4}, {MPI_TYPECLASS_COMPLEX, 8}, {MPI_TYPECLASS_COMPLEX, 16},
        {MPI_TYPECLASS_COMPLEX, 32},
    };
    for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        t = MPI_DATATYPE_NULL;
        CHECK_EQ(MPI_Type_match_size(want[i].cls, want[i].size, &t), MPI_SUCCESS);
        int sz = -1;
        if (t != MPI_DATATYPE_NULL)
            MPI_Type_size(t, &sz);
        CHECK_EQ(sz, want[i].size);
    }
    CHECK_EQ(cls(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t)), MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* 23. A user handler that calls a failing function does not recurse forever. */
static int nested_calls;
static void failing_handler(MPI_Comm *comm, int *code, ...)
{
    (void)code;
    nested_calls++;
    int x = 0;
    /* fails again, on the same communicator and handler */
    MPI_Send(&x, -1, MPI_INT, 0, 0, *comm);
}

static void recursive_handler(void)
{
    MPI_Comm dup;
    MPI_Errhandler eh;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_create_errhandler(failing_handler, &eh);
    MPI_Comm_set_errhandler(dup, eh);
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, dup);
    CHECK_EQ(cls(rc), MPI_ERR_RANK);
    CHECK(nested_calls >= 1 && nested_calls <= 8);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&dup);
}


/* 22. MPI 5.0's status accessors, Topo_test, Alloc_mem, generalized
 * requests, error removal, hardware and ABI queries, MPI_T categories and
 * sources. */
static int greq_query(void *extra, MPI_Status *st)
{
    MPI_Status_set_source(st, 3);
    MPI_Status_set_tag(st, 7);
    MPI_Status_set_elements(st, MPI_INT, 5);
    MPI_Status_set_cancelled(st, 0);
    return *(int *)extra; /* the error to report */
}
static int greq_frees;
static int greq_free(void *extra)
{
    (void)extra;
    greq_frees++;
    return MPI_SUCCESS;
}
static int greq_cancels;
static int greq_cancel(void *extra, int complete)
{
    (void)extra, (void)complete;
    greq_cancels++;
    return MPI_SUCCESS;
}

static void mpi5_pieces(void)
{
    MPI_Status st;
    int v;
    MPI_Status_set_source(&st, 4);
    MPI_Status_set_tag(&st, 9);
    MPI_Status_set_error(&st, MPI_ERR_TAG);
    MPI_Status_get_source(&st, &v);
    CHECK_EQ(v, 4);
    MPI_Status_get_tag(&st, &v);
    CHECK_EQ(v, 9);
    MPI_Status_get_error(&st, &v);
    CHECK_EQ(v, MPI_ERR_TAG);
    MPI_Status_set_elements(&st, MPI_DOUBLE, 6);
    MPI_Get_count(&st, MPI_DOUBLE, &v);
    CHECK_EQ(v, 6);
    MPI_Status_set_cancelled(&st, 1);
    MPI_Test_cancelled(&st, &v);
    CHECK(v);

    /* the Fortran forms of a status: the same 8 integers, round trips */
    MPI_Fint fst[MPI_F_STATUS_SIZE];
    MPI_F08_status f08;
    MPI_Status back;
    CHECK_EQ(MPI_Status_c2f(&st, fst), MPI_SUCCESS);
    CHECK_EQ(fst[MPI_F_SOURCE], 4);
    CHECK_EQ(fst[MPI_F_TAG], 9);
    CHECK_EQ(MPI_Status_f2f08(fst, &f08), MPI_SUCCESS);
    CHECK_EQ(f08.MPI_ERROR, MPI_ERR_TAG);
    CHECK_EQ(MPI_Status_f082c(&f08, &back), MPI_SUCCESS);
    MPI_Get_count(&back, MPI_DOUBLE, &v);
    CHECK_EQ(v, 6); /* the hidden fields travel too */
    CHECK_EQ(MPI_Status_c2f08(&back, &f08), MPI_SUCCESS);
    CHECK_EQ(MPI_Status_f082f(&f08, fst), MPI_SUCCESS);
    CHECK_EQ(MPI_Status_f2c(fst, &back), MPI_SUCCESS);
    CHECK(!memcmp(&back, &st, sizeof st));
    /* an ignore sentinel is not a status: an error, not a crash */
    MPI_Errhandler prev_self;
    MPI_Comm_get_errhandler(MPI_COMM_SELF, &prev_self);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back), MPI_ERR_ARG);
    CHECK_EQ(MPI_Status_c2f(MPI_STATUS_IGNORE, fst), MPI_ERR_ARG);
    CHECK_EQ(MPI_Status_f082c(MPI_F08_STATUSES_IGNORE, &back), MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, prev_self);
    MPI_Errhandler_free(&prev_self);

    MPI_Topo_test(MPI_COMM_WORLD, &v);
    CHECK_EQ(v, MPI_UNDEFINED);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096");
    double *mem = NULL;
    CHECK_EQ(MPI_Alloc_mem(1 << 16, info, &mem), MPI_SUCCESS);
    CHECK(mem && ((uintptr_t)mem % 4096) == 0);
    mem[0] = mem[8191] = 1.0;
    CHECK_EQ(MPI_Free_mem(mem), MPI_SUCCESS);
    MPI_Info_free(&info);

    /* generalized requests: complete then wait, cancel, free before completion */
    int ok = MPI_SUCCESS, bad = MPI_ERR_BUFFER;
    MPI_Request g;
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &ok, &g);
    int flag = 1;
    MPI_Test(&g, &flag, &st);
    CHECK(!flag);
    MPI_Grequest_complete(g);
    st.MPI_SOURCE = -1;
    MPI_Wait(&g, &st);
    CHECK(g == MPI_REQUEST_NULL);
    CHECK_EQ(st.MPI_SOURCE, 3);
    CHECK_EQ(st.MPI_TAG, 7);
    MPI_Get_count(&st, MPI_INT, &v);
    CHECK_EQ(v, 5);
    CHECK_EQ(greq_frees, 1);
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &ok, &g);
    MPI_Cancel(&g);
    CHECK_EQ(greq_cancels, 1);
    MPI_Request keep = g;
    MPI_Request_free(&g);
    CHECK_EQ(greq_frees, 1);
    MPI_Grequest_complete(keep);
    CHECK_EQ(greq_frees, 2);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &bad, &g);
    MPI_Grequest_complete(g);
    CHECK_EQ(cls(MPI_Wait(&g, MPI_STATUS_IGNORE)), MPI_ERR_BUFFER);

    /* error classes and codes come and go */
    int ec, code;
    MPI_Add_error_class(&ec);
    MPI_Add_error_code(ec, &code);
    MPI_Add_error_string(code, "mine");
    CHECK(cls(MPI_Remove_error_class(ec)) != MPI_SUCCESS); /* still has a code */
    CHECK(cls(MPI_Remove_error_code(code)) != MPI_SUCCESS); /* still has a string */
    CHECK_EQ(MPI_Remove_error_string(code), MPI_SUCCESS);
    CHECK_EQ(MPI_Remove_error_code(code), MPI_SUCCESS);
    CHECK_EQ(MPI_Remove_error_class(ec), MPI_SUCCESS);
    CHECK(cls(MPI_Error_class(code, &v)) != MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);

    char val[64];
    CHECK_EQ(MPI_Get_hw_resource_info(&info), MPI_SUCCESS);
    MPI_Info_get_string(info, "mpi_shared_memory", &(int){sizeof(val)}, val, &flag);
    CHECK(flag);
    MPI_Info_free(&info);
    CHECK_EQ(MPI_Abi_get_info(&info), MPI_SUCCESS);
    MPI_Info_get_string(info, "mpi_aint_size", &(int){sizeof(val)}, val, &flag);
    CHECK(flag && atoi(val) == (int)sizeof(MPI_Aint));
    MPI_Info_get_string(info, "mpi_count_size", &(int){sizeof(val)}, val, &flag);
    CHECK(flag && atoi(val) == (int)sizeof(MPI_Count));
    MPI_Info_free(&info);
    int t4 = 1, f4 = 0, got_t = -1, got_f = -1, set = 1;
    MPI_Abi_get_fortran_booleans(4, &got_t, &got_f, &set);
    CHECK(!set);
    MPI_Abi_set_fortran_booleans(4, &t4, &f4);
    MPI_Abi_get_fortran_booleans(4, &got_t, &got_f, &set);
    CHECK(set && got_t == 1 && got_f == 0);

    int provided, ncat, ncv = 0, npv = 0, total_cv = 0, total_pv = 0, nsrc;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_category_get_num(&ncat);
    CHECK(ncat > 0);
    for (int c = 0; c < ncat; c++) {
        char name[64];
        int len = sizeof(name);
        MPI_T_category_get_info(c, name, &len, NULL, NULL, &ncv, &npv, NULL);
        total_cv += ncv;
        total_pv += npv;
        int idx = -1;
        MPI_T_category_get_index(name, &idx);
        CHECK_EQ(idx, c);
    }
    int n;
    MPI_T_cvar_get_num(&n);
    CHECK_EQ(total_cv, n);
    MPI_T_pvar_get_num(&n);
    CHECK_EQ(total_pv, n);
    MPI_T_source_get_num(&nsrc);
    CHECK_EQ(nsrc, 1);
    MPI_Count t1, t2, tps;
    MPI_T_source_get_info(0, NULL, NULL, NULL, NULL, NULL, &tps, NULL, NULL);
    MPI_T_source_get_timestamp(0, &t1);
    MPI_T_source_get_timestamp(0, &t2);
    CHECK(tps > 0 && t2 >= t1);
    MPI_T_event_get_num(&n);
    CHECK_EQ(n, 0);
    CHECK_EQ(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &n, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    MPI_T_finalize();
}

static const mpitest_case cases[] = {
    {"bsend_dup", bsend_dup},
    {"intercomm_from_groups", intercomm_from_groups},
    {"op_free_pending", op_free_pending},
    {"reduce_local_in_place", reduce_local_in_place},
    {"nbc_any_order", nbc_any_order},
    {"create_group_random", create_group_random},
    {"idup_inter", idup_inter},
    {"bcast_one", bcast_one},
    {"root_only_args", root_only_args},
    {"status_error_untouched", status_error_untouched},
    {"completion_error_handler", completion_error_handler},
    {"session_info", session_info},
    {"small_semantics", small_semantics},
    {"cancel_send", cancel_send},
    {"intercomm_unequal", intercomm_unequal},
    {"null_handles", null_handles},
    {"recursive_handler", recursive_handler},
    {"mpi5_pieces", mpi5_pieces},
    /* last: leaves attributes for MPI_Finalize to delete */
    {"attr_semantics", attr_semantics},
    {"attr_delete_other", attr_delete_other},
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mpitest_run_cases("t_conform", cases, sizeof(cases) / sizeof(cases[0]), argc > 1 ? argv[1] : NULL);
    int fails = mpitest_failures;
    int fin = -1;
    MPI_Finalized(&fin);
    CHECK_EQ(fin, 0);
    int rc = mpitest_finish("t_conform");
    /* the MPI_COMM_SELF delete callback saw MPI_Finalized false and a live job */
    if (finalized_in_callback == 1 || finalized_in_callback == 2) {
        fprintf(stderr, "t_conform: rank %d: MPI_COMM_SELF delete callback saw MPI_Finalized = %d\n", rank,
                finalized_in_callback);
        rc = 1;
    }
    (void)fails;
    return rc;
}
