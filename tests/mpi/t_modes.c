/* Send modes, persistent requests, probes, cancel and the completion
 * families.  Needs at least 2 ranks; ranks beyond 1 only take part in the
 * ANY_SOURCE probes. */
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

static int rank, size;

static void synchronous(void)
{
    /* An Issend cannot complete before the receive is posted. */
    if (rank == 0) {
        int v = 7, flag = 1;
        MPI_Request r;
        MPI_Issend(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r);
        for (int i = 0; i < 100; i++) {
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            if (flag)
                break;
        }
        CHECK_EQ(flag, 0);
        int go = 1;
        MPI_Send(&go, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        /* large synchronous send: rendezvous */
        static double big[100000];
        big[99999] = 3.5;
        MPI_Ssend(big, 100000, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD);
    } else if (rank == 1) {
        int go, v = 0;
        MPI_Recv(&go, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_EQ(v, 7);
        static double big[100000];
        MPI_Recv(big, 100000, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(big[99999] == 3.5);
    }
}

static void buffered(void)
{
    /* MPI_Buffer_attach has no communicator: its errors go to MPI_COMM_SELF */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (rank == 0) {
        int v[4] = {1, 2, 3, 4}, cls;
        /* no buffer attached yet */
        MPI_Error_class(MPI_Bsend(v, 1, MPI_INT, 1, 10, MPI_COMM_WORLD), &cls);
        CHECK_EQ(cls, MPI_ERR_BUFFER);
        /* rendezvous-sized messages hold their space until the receiver has
         * pulled them: two fit, a third must be refused */
        enum { N = 10000 };
        static int m[N];
        m[N - 1] = 4;
        int bufsize = 2 * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
        char *buf = malloc((size_t)bufsize);
        CHECK_EQ(MPI_Buffer_attach(buf, bufsize), MPI_SUCCESS);
        MPI_Error_class(MPI_Buffer_attach(buf, bufsize), &cls);
        CHECK_EQ(cls, MPI_ERR_BUFFER); /* already attached */
        for (int i = 0; i < 2; i++)
            CHECK_EQ(MPI_Bsend(m, N, MPI_INT, 1, 10 + i, MPI_COMM_WORLD), MPI_SUCCESS);
        MPI_Error_class(MPI_Bsend(m, N, MPI_INT, 1, 13, MPI_COMM_WORLD), &cls);
        CHECK_EQ(cls, MPI_ERR_BUFFER);
        CHECK_EQ(MPI_Bsend(v, 4, MPI_INT, 1, 12, MPI_COMM_WORLD), MPI_SUCCESS); /* small: still fits */
        MPI_Request fl;
        MPI_Buffer_iflush(&fl);
        int flushed = 1;
        MPI_Test(&fl, &flushed, MPI_STATUS_IGNORE);
        CHECK_EQ(flushed, 0); /* the two big ones wait for rank 1 */
        int go = 1;
        MPI_Send(&go, 1, MPI_INT, 1, 19, MPI_COMM_WORLD);
        MPI_Wait(&fl, MPI_STATUS_IGNORE);
        void *back;
        int backsize;
        MPI_Buffer_detach(&back, &backsize); /* waits until everything has left */
        CHECK(back == buf);
        CHECK_EQ(backsize, bufsize);
        free(buf);
        /* automatic buffering, and a per-communicator buffer, nonblocking */
        MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0);
        MPI_Request r;
        CHECK_EQ(MPI_Ibsend(v, 4, MPI_INT, 1, 14, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Buffer_detach(&back, &backsize);
        CHECK(back == MPI_BUFFER_AUTOMATIC);
        char cbuf[1024];
        MPI_Comm_attach_buffer(MPI_COMM_WORLD, cbuf, sizeof(cbuf));
        CHECK_EQ(MPI_Bsend(v, 4, MPI_INT, 1, 15, MPI_COMM_WORLD), MPI_SUCCESS);
        MPI_Comm_flush_buffer(MPI_COMM_WORLD);
        MPI_Comm_detach_buffer(MPI_COMM_WORLD, &back, &backsize);
        CHECK(back == cbuf);
    } else if (rank == 1) {
        int go, w[4];
        static int m[10000];
        MPI_Recv(&go, 1, MPI_INT, 0, 19, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int t = 10; t < 12; t++) {
            MPI_Recv(m, 10000, MPI_INT, 0, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK_EQ(m[9999], 4);
        }
        MPI_Recv(w, 4, MPI_INT, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_EQ(w[3], 4);
        MPI_Recv(w, 4, MPI_INT, 0, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(w, 4, MPI_INT, 0, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_EQ(w[0], 1);
        /* the Bsend that did not fit must not have been sent */
        int flag = 1;
        MPI_Iprobe(0, 13, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK_EQ(flag, 0);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

static void persistent(void)
{
    if (rank > 1)
        return;
    int peer = 1 - rank, out = 0, in = -1;
    static int big_out[20000], big_in[20000];
    MPI_Request rq[4];
    MPI_Recv_init(&in, 1, MPI_INT, peer, 20, MPI_COMM_WORLD, &rq[0]);
    MPI_Send_init(&out, 1, MPI_INT, peer, 20, MPI_COMM_WORLD, &rq[1]);
    MPI_Recv_init(big_in, 20000, MPI_INT, peer, 21, MPI_COMM_WORLD, &rq[2]);
    if (rank == 0)
        MPI_Ssend_init(big_out, 20000, MPI_INT, peer, 21, MPI_COMM_WORLD, &rq[3]);
    else
        MPI_Rsend_init(big_out, 20000, MPI_INT, peer, 21, MPI_COMM_WORLD, &rq[3]);
    for (int it = 0; it < 50; it++) {
        out = it * 10 + rank;
        big_out[19999] = it;
        MPI_Startall(4, rq);
        MPI_Status st[4];
        MPI_Waitall(4, rq, st);
        CHECK_EQ(in, it * 10 + peer);
        CHECK_EQ(big_in[19999], it);
        CHECK_EQ(st[0].MPI_SOURCE, peer);
        CHECK(rq[0] != MPI_REQUEST_NULL); /* persistent requests stay */
    }
    /* an inactive persistent request completes at once */
    int flag = 0;
    MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
    CHECK_EQ(flag, 1);
    for (int i = 0; i < 4; i++)
        MPI_Request_free(&rq[i]);
    CHECK(rq[0] == MPI_REQUEST_NULL);
}

static void probes(void)
{
    /* every rank but 0 sends two messages; 0 probes with wildcards */
    if (rank != 0) {
        int v[3] = {rank, rank * 2, rank * 3};
        MPI_Send(v, 3, MPI_INT, 0, 30, MPI_COMM_WORLD);
        MPI_Send(v, 2, MPI_INT, 0, 31, MPI_COMM_WORLD);
    } else {
        for (int i = 0; i < 2 * (size - 1); i++) {
            MPI_Status st;
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int count;
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK_EQ(count, st.MPI_TAG == 30 ? 3 : 2);
            /* probing again sees the same message until it is received */
            int flag;
            MPI_Status st2;
            MPI_Iprobe(st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &flag, &st2);
            CHECK_EQ(flag, 1);
            CHECK_EQ(st2.MPI_SOURCE, st.MPI_SOURCE);
            if (i % 2 == 0) {
                MPI_Message msg;
                MPI_Mprobe(st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &msg, &st2);
                int v[3] = {0};
                MPI_Status st3;
                MPI_Mrecv(v, 3, MPI_INT, &msg, &st3);
                CHECK(msg == MPI_MESSAGE_NULL);
                CHECK_EQ(v[1], st.MPI_SOURCE * 2);
                CHECK_EQ(st3.MPI_TAG, st.MPI_TAG);
            } else {
                MPI_Message msg;
                int flag2 = 0;
                while (!flag2)
                    MPI_Improbe(MPI_ANY_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &flag2, &msg, &st2);
                int v[3] = {0};
                MPI_Request r;
                MPI_Imrecv(v, 3, MPI_INT, &msg, &r);
                MPI_Wait(&r, &st2);
                CHECK_EQ(v[0], st2.MPI_SOURCE);
            }
        }
        int flag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK_EQ(flag, 0);
        MPI_Message msg;
        MPI_Status st;
        MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
        CHECK(msg == MPI_MESSAGE_NO_PROC);
        int x = 5;
        MPI_Mrecv(&x, 1, MPI_INT, &msg, &st);
        CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
        CHECK_EQ(x, 5);
    }
}

static void cancel_and_free(void)
{
    /* a receive nobody will match is cancelled */
    int x;
    MPI_Request r;
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Status st;
    MPI_Wait(&r, &st);
    int flag = 0;
    MPI_Test_cancelled(&st, &flag);
    CHECK_EQ(flag, 1);
    MPI_Irecv(&x, 1, MPI_INT, 0, 998, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK_EQ(flag, 1);
    /* freed while active: the transfer still happens */
    if (rank == 0) {
        static int v[30000];
        v[29999] = 77;
        MPI_Isend(v, 30000, MPI_INT, 1, 40, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        CHECK(r == MPI_REQUEST_NULL);
        int y = 3;
        MPI_Isend(&y, 1, MPI_INT, 1, 41, MPI_COMM_WORLD, &r);
        MPI_Cancel(&r); /* an eager send that left may still be taken back */
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &flag);
        if (flag) /* it was: the receiver still expects one */
            MPI_Send(&y, 1, MPI_INT, 1, 41, MPI_COMM_WORLD);
    } else if (rank == 1) {
        static int v[30000];
        MPI_Recv(v, 30000, MPI_INT, 0, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_EQ(v[29999], 77);
        int y = 0;
        MPI_Irecv(&y, 1, MPI_INT, 0, 41, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        MPI_Barrier(MPI_COMM_WORLD); /* paired below */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank != 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

static void sendrecv_and_families(void)
{
    if (rank > 1)
        return;
    int peer = 1 - rank;
    int a[5];
    for (int i = 0; i < 5; i++)
        a[i] = rank * 100 + i;
    MPI_Status st;
    MPI_Sendrecv_replace(a, 5, MPI_INT, peer, 50, peer, 50, MPI_COMM_WORLD, &st);
    CHECK_EQ(a[4], peer * 100 + 4);
    CHECK_EQ(st.MPI_SOURCE, peer);
    static double big[40000];
    for (int i = 0; i < 40000; i++)
        big[i] = rank + i;
    MPI_Request r;
    MPI_Isendrecv_replace(big, 40000, MPI_DOUBLE, peer, 51, peer, 51, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    CHECK(big[39999] == peer + 39999);
    int s = rank, got = -1;
    MPI_Isendrecv(&s, 1, MPI_INT, peer, 52, &got, 1, MPI_INT, peer, 52, MPI_COMM_WORLD, &r);
    int flag = 0;
    while (!flag)
        MPI_Request_get_status(r, &flag, &st);
    CHECK(r != MPI_REQUEST_NULL); /* get_status does not free */
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_EQ(got, peer);

    /* Waitsome / Testsome / Testany over a mix with MPI_REQUEST_NULL */
    int in[6], out[6];
    MPI_Request rq[8];
    for (int i = 0; i < 6; i++) {
        out[i] = rank * 10 + i;
        MPI_Irecv(&in[i], 1, MPI_INT, peer, 60 + i, MPI_COMM_WORLD, &rq[i]);
    }
    rq[6] = MPI_REQUEST_NULL;
    rq[7] = MPI_REQUEST_NULL;
    for (int i = 5; i >= 0; i--)
        MPI_Send(&out[i], 1, MPI_INT, peer, 60 + i, MPI_COMM_WORLD);
    int done = 0;
    while (done < 6) {
        int outcount, idx[8];
        MPI_Status sts[8];
        if (done % 2)
            MPI_Waitsome(8, rq, &outcount, idx, sts);
        else
            MPI_Testsome(8, rq, &outcount, idx, sts);
        for (int k = 0; k < outcount; k++) {
            CHECK_EQ(in[idx[k]], peer * 10 + idx[k]);
            CHECK_EQ(sts[k].MPI_TAG, 60 + idx[k]);
        }
        done += outcount;
    }
    int outcount, idx[8];
    MPI_Waitsome(8, rq, &outcount, idx, MPI_STATUSES_IGNORE);
    CHECK_EQ(outcount, MPI_UNDEFINED);
    int index;
    MPI_Testany(8, rq, &index, &flag, MPI_STATUS_IGNORE);
    CHECK_EQ(flag, 1);
    CHECK_EQ(index, MPI_UNDEFINED);

    /* the Request_get_status array forms look without completing */
    int gi[2], go[2] = {rank, rank + 10};
    MPI_Request gr[2];
    MPI_Irecv(&gi[0], 1, MPI_INT, peer, 80, MPI_COMM_WORLD, &gr[0]);
    MPI_Irecv(&gi[1], 1, MPI_INT, peer, 81, MPI_COMM_WORLD, &gr[1]);
    MPI_Send(&go[1], 1, MPI_INT, peer, 81, MPI_COMM_WORLD);
    int any_idx = -1, any_flag = 0;
    while (!any_flag)
        MPI_Request_get_status_any(2, gr, &any_idx, &any_flag, MPI_STATUS_IGNORE);
    CHECK(any_idx == 0 || any_idx == 1); /* tag 81 surely, tag 80 perhaps already */
    MPI_Send(&go[0], 1, MPI_INT, peer, 80, MPI_COMM_WORLD);
    int outc = 0, idxs[2];
    MPI_Status gst[2];
    while (outc < 2)
        MPI_Request_get_status_some(2, gr, &outc, idxs, gst);
    int all_flag = 0;
    MPI_Request_get_status_all(2, gr, &all_flag, gst);
    CHECK_EQ(all_flag, 1);
    CHECK_EQ(gst[0].MPI_TAG, 80);
    CHECK(gr[0] != MPI_REQUEST_NULL && gr[1] != MPI_REQUEST_NULL);
    MPI_Waitall(2, gr, MPI_STATUSES_IGNORE);
    CHECK_EQ(gi[0], peer);
    CHECK_EQ(gi[1], peer + 10);

    /* large-count variants share the implementation */
    MPI_Count cnt = 0;
    if (rank == 0) {
        MPI_Send_c(a, (MPI_Count)5, MPI_INT, 1, 70, MPI_COMM_WORLD);
    } else {
        MPI_Recv_c(a, (MPI_Count)5, MPI_INT, 0, 70, MPI_COMM_WORLD, &st);
        MPI_Get_count_c(&st, MPI_INT, &cnt);
        CHECK_EQ(cnt, 5);
        int e;
        MPI_Get_elements(&st, MPI_INT, &e);
        CHECK_EQ(e, 5);
        MPI_Get_count(&st, MPI_DOUBLE, &e);
        CHECK_EQ(e, MPI_UNDEFINED); /* 20 bytes are not whole doubles */
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "t_modes needs 2 or more ranks\n");
        return 1;
    }
    synchronous();
    MPI_Barrier(MPI_COMM_WORLD);
    buffered();
    MPI_Barrier(MPI_COMM_WORLD);
    persistent();
    MPI_Barrier(MPI_COMM_WORLD);
    probes();
    MPI_Barrier(MPI_COMM_WORLD);
    cancel_and_free();
    MPI_Barrier(MPI_COMM_WORLD);
    sendrecv_and_families();
    MPI_Barrier(MPI_COMM_WORLD);
    return mpitest_finish("t_modes");
}
