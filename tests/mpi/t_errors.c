/* Bad input to every function of the foundation returns the right error
 * class under MPI_ERRORS_RETURN; user handlers and error codes work. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static int cls(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

static int handler_calls, handler_code;
static void my_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_code = *code;
}

/* Collectives that fail their argument checks at one rank only leave the
 * communicator usable: the calls after them line up and carry the right
 * data.  The failing rank is one the others do not need in that very call:
 * rank 1 in bcasts from 0 (a leaf of every small bcast's tree, flat or
 * node-aware), rank 0 as the root of reductions and gathers (the leader of
 * its node).  Every path by size (the shared-memory area, short messages,
 * schedules) and layout (one node, node-aware), more than the area's ring
 * depth of times, so that a failed call that left a stamp or a reader
 * count behind blocks a later one. */
static void failed_collectives(MPI_Comm comm, int rank, int size)
{
    enum { BIG = 1 << 15 };
    static int buf[BIG];
    int *out = malloc(sizeof(int) * BIG * (size_t)size); /* a gather's */
    const int sizes[] = {1, 64, 1024, BIG};
    for (int si = 0; si < 4; si++) {
        int n = sizes[si];
        for (int it = 0; it < 20; it++) {
            int v = 1000 * si + it, rc;
            for (int i = 0; i < n; i++)
                buf[i] = rank == 0 ? v + i : -1;
            /* big collectives need every rank (a bcast's scatter + allgather,
             * the root's receives from senders in rendezvous): fail small ones */
            bool fail = n < BIG;
            if (fail) {
                rc = MPI_Bcast(buf, rank == 1 ? -1 : n, MPI_INT, 0, comm);
                CHECK_EQ(cls(rc), rank == 1 ? MPI_ERR_COUNT : MPI_SUCCESS);
                if (rank != 1)
                    CHECK_EQ(buf[n - 1], v + n - 1);
            }
            /* the root fails: the others' contributions are left unread */
            for (int i = 0; i < n; i++)
                buf[i] = rank + i;
            rc = MPI_Reduce(buf, out, n, MPI_INT, rank == 0 && fail ? MPI_OP_NULL : MPI_SUM, 0, comm);
            CHECK_EQ(cls(rc), rank == 0 && fail ? MPI_ERR_OP : MPI_SUCCESS);
            rc = MPI_Gather(buf, n, MPI_INT, out, n, rank == 0 && fail ? MPI_DATATYPE_NULL : MPI_INT, 0,
                            comm);
            CHECK_EQ(cls(rc), rank == 0 && fail ? MPI_ERR_TYPE : MPI_SUCCESS);
            rc = MPI_Barrier(comm);
            CHECK_EQ(rc, MPI_SUCCESS);
            /* ... and the next ones work everywhere, with the right data */
            for (int i = 0; i < n; i++)
                buf[i] = rank + it;
            CHECK_EQ(MPI_Allreduce(buf, out, n, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
            CHECK_EQ(out[0], size * (size - 1) / 2 + size * it);
            CHECK_EQ(out[n - 1], out[0]);
            for (int i = 0; i < n; i++)
                buf[i] = rank == size - 1 ? v - i : -1;
            CHECK_EQ(MPI_Bcast(buf, n, MPI_INT, size - 1, comm), MPI_SUCCESS);
            CHECK_EQ(buf[n - 1], v - (n - 1));
            CHECK_EQ(MPI_Reduce(&rank, &rc, 1, MPI_INT, MPI_MAX, 1, comm), MPI_SUCCESS);
            if (rank == 1)
                CHECK_EQ(rc, size - 1);
        }
    }
    free(out);
}

/* The same for nonblocking collectives (their own sequence) and for
 * neighborhood collectives: rank 1 fails an ibcast (a leaf), and a
 * neighbor allgather on a graph where it has no neighbours. */
static void failed_other_collectives(int rank, int size)
{
    for (int it = 0; it < 3; it++) {
        int v = rank == 0 ? 40 + it : -1;
        MPI_Request r = MPI_REQUEST_NULL;
        int rc = MPI_Ibcast(&v, rank == 1 ? -1 : 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
        CHECK_EQ(cls(rc), rank == 1 ? MPI_ERR_COUNT : MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        v = rank == 0 ? 50 + it : -1;
        CHECK_EQ(MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_EQ(v, 50 + it);
    }
    if (size < 3)
        return;
    /* a ring of every rank but 1 */
    int others = size - 1, me = rank == 0 ? 0 : rank - 1, src = -1, dst = -1;
    if (rank != 1) {
        int prev = (me + others - 1) % others, next = (me + 1) % others;
        src = prev == 0 ? 0 : prev + 1;
        dst = next == 0 ? 0 : next + 1;
    }
    int deg = rank == 1 ? 0 : 1;
    MPI_Comm g;
    CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, deg, &src, MPI_UNWEIGHTED, deg, &dst, MPI_UNWEIGHTED,
                                            MPI_INFO_NULL, 0, &g),
             MPI_SUCCESS);
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    for (int it = 0; it < 3; it++) {
        int mine = rank * 10 + it, got = -1;
        int rc = MPI_Neighbor_allgather(&mine, rank == 1 ? -1 : 1, MPI_INT, &got, 1, MPI_INT, g);
        CHECK_EQ(cls(rc), rank == 1 ? MPI_ERR_COUNT : MPI_SUCCESS);
        if (rank != 1)
            CHECK_EQ(got, src * 10 + it);
        int sum = 0;
        CHECK_EQ(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, g), MPI_SUCCESS);
        CHECK_EQ(sum, 10 * size * (size - 1) / 2 + size * it);
    }
    MPI_Comm_free(&g);
}

/* A bcast whose counts differ from the root's (an erroneous program, as in
 * MPICH's errors/coll/bcastlength): every rank returns, each non-root one
 * with an error, shorter and longer alike; a rank inside the tree whose
 * message was truncated used to return before passing anything on, and its
 * subtree waited forever.  4 and 40 bytes: the short path's tree at 3
 * ranks, the shared-memory area at 8, both on emulated nodes (counts on
 * two sides of a size threshold take different algorithms: see
 * src/coll/README.md). */
static void mismatched_bcast(int rank)
{
    for (int longer = 0; longer < 2; longer++)
        for (int n = 1; n <= 1; n++) {
            MPI_Comm d;
            MPI_Comm_dup(MPI_COMM_WORLD, &d);
            MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
            int buf[80] = {0};
            int rc = MPI_Bcast(buf, rank == 0 ? (longer ? 10 * n : n) : (longer ? n : 10 * n), MPI_INT, 0, d);
            if (rank == 0)
                CHECK_EQ(rc, MPI_SUCCESS);
            else /* the one its count calls for, or the one a node leader passes on */
                CHECK_EQ(cls(rc) == MPI_ERR_TRUNCATE || cls(rc) == MPI_ERR_COUNT, 1);
            /* nothing left behind: the communicator still works */
            int one = 1, sum = 0;
            CHECK_EQ(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d), MPI_SUCCESS);
            CHECK_EQ(MPI_Comm_size(d, &one), MPI_SUCCESS);
            CHECK_EQ(sum, one);
            MPI_Comm_free(&d);
        }
}

static int self_calls, clearing_calls;
static void self_counter(MPI_Comm *comm, int *code, ...) { (void)comm, (void)code, self_calls++; }
static void clearing_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    clearing_calls++;
    *code = MPI_SUCCESS;
}

static int failing_copy(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)kv, (void)in, (void)out;
    *flag = 1;
    return *(int *)extra;
}

/* What programs written for MPICH and Open MPI count on, found by MPICH's
 * errors/ tests: run with MPI_ERRORS_RETURN on MPI_COMM_WORLD only. */
static void peer_conventions(int rank, int size)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* a call without a handle: MPI_COMM_WORLD's handler until MPI_COMM_SELF
     * gets one (MPI 4.0's rule), then MPI_COMM_SELF's */
    CHECK_EQ(cls(MPI_Type_size_x(MPI_INT, NULL)), MPI_ERR_ARG);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(self_counter, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh);
    MPI_Errhandler_free(&eh);
    CHECK_EQ(cls(MPI_Type_size_x(MPI_INT, NULL)), MPI_ERR_ARG);
    CHECK_EQ(self_calls, 1);
    /* a handler that sets MPI_SUCCESS clears the call's error */
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_create_errhandler(clearing_handler, &eh);
    MPI_Comm_set_errhandler(d, eh);
    MPI_Errhandler_free(&eh);
    int x = 0;
    CHECK_EQ(MPI_Send(&x, 1, MPI_INT, size + 5, 0, d), MPI_SUCCESS);
    CHECK_EQ(clearing_calls, 1);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    /* failed creators leave null handles */
    int dims[2] = {size, size + 1}, periods[2] = {0, 0};
    MPI_Comm cart = MPI_COMM_WORLD;
    CHECK(MPI_Cart_create(d, 2, dims, periods, 0, &cart) != MPI_SUCCESS);
    CHECK(cart == MPI_COMM_NULL);
    MPI_Datatype big = MPI_INT;
    CHECK_EQ(cls(MPI_Type_vector_c(2, 1, (MPI_Count)1 << 62, MPI_INT, &big)), MPI_ERR_COUNT);
    CHECK(big == MPI_DATATYPE_NULL);
    /* a user class from a callback comes back with the user's string */
    int myclass, kv;
    MPI_Add_error_class(&myclass);
    MPI_Add_error_string(myclass, "the copy refused");
    MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &kv, &myclass);
    MPI_Comm_set_attr(d, kv, NULL);
    MPI_Comm dd;
    int rc = MPI_Comm_dup(d, &dd);
    CHECK_EQ(cls(rc), myclass);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    CHECK(strcmp(msg, "the copy refused") == 0);
    MPI_Comm_delete_attr(d, kv);
    MPI_Comm_free_keyval(&kv);
    /* a send buffer that is also the receive block: MPI_ERR_BUFFER at
     * every rank that passes it, and the communicator goes on */
    int buf[64], out[64];
    for (int i = 0; i < 64; i++)
        buf[i] = rank;
    CHECK_EQ(cls(MPI_Allreduce(buf, buf, 4, MPI_INT, MPI_SUM, d)), MPI_ERR_BUFFER);
    CHECK_EQ(cls(MPI_Allgather(buf + rank, 1, MPI_INT, buf, 1, MPI_INT, d)), MPI_ERR_BUFFER);
    rc = MPI_Gather(buf + rank, 1, MPI_INT, buf, 1, MPI_INT, 0, d);
    CHECK_EQ(cls(rc), rank == 0 ? MPI_ERR_BUFFER : MPI_SUCCESS);
    CHECK_EQ(cls(MPI_Reduce_local(buf, buf, 4, MPI_INT, MPI_SUM)), MPI_ERR_BUFFER);
    CHECK_EQ(MPI_Allreduce(buf, out, 4, MPI_INT, MPI_SUM, d), MPI_SUCCESS);
    CHECK_EQ(out[3], size * (size - 1) / 2);
    /* empty blocks may share an address (mpi4py's zero-length arrays do) */
    int zeros[8] = {0};
    CHECK_EQ(MPI_Alltoallv(buf, zeros, zeros, MPI_INT, buf, zeros, zeros, MPI_INT, d), MPI_SUCCESS);
    CHECK_EQ(MPI_Alltoall(buf, 0, MPI_INT, buf, 0, MPI_INT, d), MPI_SUCCESS);
    CHECK_EQ(MPI_Allreduce(buf, buf, 0, MPI_INT, MPI_SUM, d), MPI_SUCCESS);
    CHECK_EQ(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, buf, 1, MPI_INT, d), MPI_SUCCESS);
    /* counts that differ from the root's in a nonblocking bcast (MPICH's
     * errors/coll/ibcastlength): every other rank's wait says so */
    MPI_Request r;
    CHECK_EQ(MPI_Ibcast(buf, rank == 0 ? 1 : 10, MPI_INT, 0, d, &r), MPI_SUCCESS);
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_EQ(cls(rc), rank == 0 ? MPI_SUCCESS : MPI_ERR_COUNT);
    CHECK_EQ(MPI_Allreduce(&rank, &x, 1, MPI_INT, MPI_MAX, d), MPI_SUCCESS);
    CHECK_EQ(x, size - 1);
    MPI_Comm_free(&d);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, x = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "peers")) {
        peer_conventions(rank, size);
        return mpitest_finish("t_errors peers");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (argc > 1 && !strcmp(argv[1], "coll")) {
        failed_collectives(MPI_COMM_WORLD, rank, size);
        failed_other_collectives(rank, size);
        mismatched_bcast(rank);
        /* a failure in the very call that sets up a communicator's
         * shared-memory area: at a member (rank 1) and at rank 0, which
         * hands the area out */
        for (int who = 1; who >= 0; who--) {
            MPI_Comm d;
            MPI_Comm_dup(MPI_COMM_WORLD, &d);
            int one = 1, sum = 0;
            int rc = who ? MPI_Bcast(&one, rank == 1 ? -1 : 1, MPI_INT, 0, d)
                         : MPI_Reduce(&one, &sum, 1, MPI_INT, rank == 0 ? MPI_OP_NULL : MPI_SUM, 0, d);
            CHECK_EQ(cls(rc), rank == who ? (who ? MPI_ERR_COUNT : MPI_ERR_OP) : MPI_SUCCESS);
            failed_collectives(d, rank, size);
            MPI_Comm_free(&d);
        }
        return mpitest_finish("t_errors coll");
    }
    MPI_Request req;
    MPI_Status st;

    /* communicator */
    CHECK_EQ(cls(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL)), MPI_ERR_COMM);
    CHECK_EQ(cls(MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st)), MPI_ERR_COMM);
    CHECK_EQ(cls(MPI_Isend(&x, 1, MPI_INT, 0, 0, (MPI_Comm)(void *)&x, &req)), MPI_ERR_COMM);
    CHECK_EQ(cls(MPI_Barrier(MPI_COMM_NULL)), MPI_ERR_COMM);
    CHECK_EQ(cls(MPI_Comm_rank(MPI_COMM_NULL, &x)), MPI_ERR_COMM);
    CHECK_EQ(cls(MPI_Comm_size(MPI_COMM_NULL, &x)), MPI_ERR_COMM);
    /* rank */
    CHECK_EQ(cls(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD)), MPI_ERR_RANK);
    CHECK_EQ(cls(MPI_Send(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD)), MPI_ERR_RANK);
    CHECK_EQ(cls(MPI_Send(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD)), MPI_ERR_RANK);
    CHECK_EQ(cls(MPI_Recv(&x, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &st)), MPI_ERR_RANK);
    CHECK_EQ(cls(MPI_Irecv(&x, 1, MPI_INT, -9, 0, MPI_COMM_WORLD, &req)), MPI_ERR_RANK);
    /* tag */
    CHECK_EQ(cls(MPI_Send(&x, 1, MPI_INT, 0, -1, MPI_COMM_WORLD)), MPI_ERR_TAG);
    CHECK_EQ(cls(MPI_Send(&x, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD)), MPI_ERR_TAG);
    CHECK_EQ(cls(MPI_Recv(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &st)), MPI_ERR_TAG);
    /* count */
    CHECK_EQ(cls(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD)), MPI_ERR_COUNT);
    CHECK_EQ(cls(MPI_Irecv(&x, -3, MPI_INT, 0, 0, MPI_COMM_WORLD, &req)), MPI_ERR_COUNT);
    /* datatype */
    CHECK_EQ(cls(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD)), MPI_ERR_TYPE);
    CHECK_EQ(cls(MPI_Recv(&x, 1, (MPI_Datatype)(intptr_t)0x2ff, 0, 0, MPI_COMM_WORLD, &st)), MPI_ERR_TYPE);
    /* buffer */
    CHECK_EQ(cls(MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD)), MPI_ERR_BUFFER);
    CHECK_EQ(cls(MPI_Irecv(NULL, 4, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &req)), MPI_ERR_BUFFER);
    CHECK_EQ(MPI_Send(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    /* output pointers and requests */
    CHECK_EQ(cls(MPI_Comm_rank(MPI_COMM_WORLD, NULL)), MPI_ERR_ARG);
    CHECK_EQ(cls(MPI_Isend(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL)), MPI_ERR_ARG);
    MPI_Request bogus = (MPI_Request)(intptr_t)0x1f;
    CHECK_EQ(cls(MPI_Wait(&bogus, &st)), MPI_ERR_REQUEST);
    CHECK_EQ(cls(MPI_Get_count(NULL, MPI_INT, &x)), MPI_ERR_ARG);
    /* requests that were already completed come back as MPI_REQUEST_NULL */
    MPI_Request done = MPI_REQUEST_NULL;
    CHECK_EQ(MPI_Wait(&done, &st), MPI_SUCCESS);
    CHECK_EQ(st.MPI_SOURCE, MPI_ANY_SOURCE);
    /* runtime */
    CHECK_EQ(cls(MPI_Init(NULL, NULL)), MPI_ERR_OTHER);
    CHECK_EQ(cls(MPI_Error_class(-42, &x)), MPI_ERR_ARG);
    CHECK_EQ(cls(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL)), MPI_ERR_ERRHANDLER);
    /* file errors go to MPI_FILE_NULL's handler (MPI_ERRORS_RETURN) */
    CHECK_EQ(cls(MPI_File_delete("no-such-file", MPI_INFO_NULL)), MPI_ERR_NO_SUCH_FILE);
    CHECK_EQ(cls(MPI_Win_fence(0, MPI_WIN_NULL)), MPI_ERR_WIN); /* implemented: the null window is refused */

    /* handles into unmapped memory, onto the stack, or of freed objects:
     * the right class, never a crash */
    {
        MPI_Comm wild_comm = (MPI_Comm)(uintptr_t)0x7ff0deadbee0ull, stack_comm = (MPI_Comm)(void *)&st;
        MPI_Datatype wild_type = (MPI_Datatype)(uintptr_t)0x10000;
        MPI_Op wild_op = (MPI_Op)(uintptr_t)0x6000deadbee8ull;
        MPI_Request wild_req = (MPI_Request)(uintptr_t)0x5000deadbee0ull;
        CHECK_EQ(cls(MPI_Send(&x, 1, MPI_INT, 0, 0, wild_comm)), MPI_ERR_COMM);
        CHECK_EQ(cls(MPI_Barrier(stack_comm)), MPI_ERR_COMM);
        CHECK_EQ(cls(MPI_Send(&x, 1, wild_type, 0, 0, MPI_COMM_WORLD)), MPI_ERR_TYPE);
        CHECK_EQ(cls(MPI_Type_commit(&wild_type)), MPI_ERR_TYPE);
        CHECK_EQ(cls(MPI_Allreduce(&x, &size, 1, MPI_INT, wild_op, MPI_COMM_WORLD)), MPI_ERR_OP);
        CHECK_EQ(cls(MPI_Wait(&wild_req, &st)), MPI_ERR_REQUEST);
        CHECK_EQ(cls(MPI_Request_free(&wild_req)), MPI_ERR_REQUEST);
        MPI_Comm d, stale;
        MPI_Comm_dup(MPI_COMM_SELF, &d);
        stale = d;
        MPI_Comm_free(&d);
        CHECK_EQ(cls(MPI_Barrier(stale)), MPI_ERR_COMM);
        MPI_Datatype t, stale_t;
        MPI_Type_contiguous(2, MPI_INT, &t);
        stale_t = t;
        MPI_Type_free(&t);
        CHECK_EQ(cls(MPI_Type_commit(&stale_t)), MPI_ERR_TYPE);
    }

    /* byte counts that overflow: MPI_ERR_COUNT, never a silent success */
    {
        MPI_Datatype big = MPI_DATATYPE_NULL;
        CHECK_EQ(cls(MPI_Send_c(&x, (MPI_Count)1 << 62, MPI_INT, 0, 0, MPI_COMM_WORLD)), MPI_ERR_COUNT);
        CHECK_EQ(cls(MPI_Type_contiguous_c((MPI_Count)1 << 62, MPI_INT, &big)), MPI_ERR_COUNT);
        CHECK_EQ(cls(MPI_Type_vector_c(2, 1, (MPI_Count)1 << 62, MPI_INT, &big)), MPI_ERR_COUNT);
        CHECK_EQ(cls(MPI_Type_create_hvector_c(3, 1, (MPI_Count)1 << 62, MPI_INT, &big)), MPI_ERR_COUNT);
        CHECK_EQ(MPI_Type_contiguous_c((MPI_Count)1 << 40, MPI_INT, &big), MPI_SUCCESS);
        CHECK_EQ(MPI_Type_commit(&big), MPI_SUCCESS);
        CHECK_EQ(cls(MPI_Send_c(&x, (MPI_Count)1 << 30, big, 0, 0, MPI_COMM_WORLD)), MPI_ERR_COUNT);
        CHECK_EQ(cls(MPI_Bcast_c(&x, (MPI_Count)1 << 30, big, 0, MPI_COMM_WORLD)), MPI_ERR_COUNT);
        MPI_Type_free(&big);
    }

    /* every class has a string that names it */
    char s[MPI_MAX_ERROR_STRING];
    int len;
    /* under MPI_ERRORS_RETURN the detail of the last error stays retrievable
     * from its code: function, argument and value */
    int src = MPI_Send(&x, 1, MPI_INT, 99, 0, MPI_COMM_WORLD);
    CHECK_EQ(src, MPI_ERR_RANK);
    MPI_Error_string(src, s, &len);
    CHECK(strstr(s, "MPI_Send") != NULL && strstr(s, "dest") != NULL && strstr(s, "99") != NULL);
    CHECK(strstr(s, "MPI_ERR_RANK") != NULL);
    MPI_Error_string(MPI_ERR_RANK, s, &len);
    CHECK(strstr(s, "MPI_ERR_RANK") != NULL);
    CHECK_EQ(len, strlen(s));
    for (int c = 0; c <= MPI_ERR_ABI; c++) {
        CHECK_EQ(MPI_Error_string(c, s, &len), MPI_SUCCESS);
        CHECK(len > 0);
        int back;
        MPI_Error_class(c, &back);
        CHECK_EQ(back, c);
    }

    /* user-defined classes, codes and strings */
    int myclass, mycode;
    CHECK_EQ(MPI_Add_error_class(&myclass), MPI_SUCCESS);
    CHECK(myclass > MPI_ERR_LASTCODE);
    CHECK_EQ(MPI_Add_error_code(myclass, &mycode), MPI_SUCCESS);
    CHECK_EQ(MPI_Add_error_string(mycode, "my special failure"), MPI_SUCCESS);
    MPI_Error_string(mycode, s, &len);
    CHECK(strcmp(s, "my special failure") == 0);
    CHECK_EQ(cls(mycode), myclass);
    CHECK_EQ(cls(MPI_Add_error_code(MPI_ERR_LASTCODE + 999, &mycode)), MPI_ERR_ARG);

    /* a user handler sees the error and the call still returns it */
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(my_handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Errhandler_free(&eh);
    CHECK(eh == MPI_ERRHANDLER_NULL);
    int rc = MPI_Send(&x, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD);
    CHECK_EQ(cls(rc), MPI_ERR_RANK);
    CHECK_EQ(handler_calls, 1);
    CHECK_EQ(handler_code, rc);
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, mycode);
    CHECK_EQ(handler_calls, 2);
    CHECK_EQ(handler_code, mycode);
    MPI_Errhandler got;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    MPI_Errhandler_free(&got);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* none of the rejected calls sent anything or left anything queued:
     * correct traffic afterwards still matches exactly */
    MPI_Barrier(MPI_COMM_WORLD);
    int flag = 1;
    MPI_Status pst;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &pst);
    if (flag)
        fprintf(stderr, "rank %d: stray message from %d tag %d\n", rank, pst.MPI_SOURCE, pst.MPI_TAG);
    CHECK_EQ(flag, 0);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody sends before everyone has probed */
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    for (int t = 0; t < 3; t++) {
        int out = rank * 10 + t, in = -1;
        MPI_Status st2;
        CHECK_EQ(MPI_Sendrecv(&out, 1, MPI_INT, to, t, &in, 1, MPI_INT, from, t, MPI_COMM_WORLD, &st2), MPI_SUCCESS);
        CHECK_EQ(in, from * 10 + t);
        CHECK_EQ(st2.MPI_TAG, t);
    }
    int *tag_ub, attr_flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &attr_flag);
    CHECK_EQ(attr_flag, 1);
    CHECK(*tag_ub >= 32767);
    /* a collective that fails its argument checks at one rank only leaves
     * the communicator usable: the next collectives line up (messages;
     * large enough to stay off the node's shared-memory area) */
    {
        enum { N = 1024 };
        static int buf[N], sum[N];
        for (int round = 0; round < 2; round++) {
            int rc = round == 0 ? MPI_Bcast(buf, rank == 1 ? -1 : N, MPI_INT, 0, MPI_COMM_WORLD)
                                : MPI_Bcast(buf, N, MPI_INT, rank == 1 ? size + 5 : 0, MPI_COMM_WORLD);
            CHECK_EQ(cls(rc), rank == 1 ? (round == 1 ? MPI_ERR_ROOT : MPI_ERR_COUNT) : MPI_SUCCESS);
            for (int i = 0; i < N; i++)
                buf[i] = 1;
            CHECK_EQ(MPI_Allreduce(buf, sum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
            CHECK_EQ(sum[N - 1], size);
            CHECK_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
        }
    }
    return mpitest_finish("t_errors");
}
