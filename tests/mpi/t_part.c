/* Partitioned communication: different partitionings on the two sides,
 * several rounds, partitions leaving as they are readied, any datatype,
 * readiness from several threads, bad arguments.  Pairs ranks (0,1),
 * (2,3) ...; an odd last rank only checks the errors. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mpitest.h"

enum { N = 8000, SEND_PARTS = 8, RECV_PARTS = 4 };
static int rank, size;

static void rounds(int peer, bool sender)
{
    static int buf[N];
    MPI_Request rq;
    if (sender)
        MPI_Psend_init(buf, SEND_PARTS, N / SEND_PARTS, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
    else
        MPI_Precv_init(buf, RECV_PARTS, N / RECV_PARTS, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            buf[i] = sender ? round * N + i : -1;
        MPI_Start(&rq);
        if (sender) {
            for (int p = SEND_PARTS - 1; p >= 0; p--) /* any order */
                MPI_Pready(p, rq);
        } else {
            int all = 0;
            while (!all) {
                all = 1;
                for (int p = 0; p < RECV_PARTS; p++) {
                    int f;
                    MPI_Parrived(rq, p, &f);
                    all &= f;
                }
            }
        }
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (!sender)
            for (int i = 0; i < N; i += 97)
                CHECK_EQ(buf[i], round * N + i);
    }
    MPI_Request_free(&rq);
}

/* Empty partitions still arrive only once sent (mpi4py's ring test). */
static void empty_partitions(int peer, bool sender)
{
    char none[1];
    MPI_Request rq;
    if (sender)
        MPI_Psend_init(none, 3, 0, MPI_CHAR, peer, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
    else
        MPI_Precv_init(none, 3, 0, MPI_CHAR, peer, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
    for (int round = 0; round < 2; round++) {
        int f = 1;
        if (!sender) {
            MPI_Start(&rq);
            MPI_Parrived(rq, 1, &f);
            CHECK(!f);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (sender) {
            MPI_Start(&rq);
            MPI_Pready_range(0, 2, rq);
        } else {
            while (!f)
                MPI_Parrived(rq, 1, &f);
        }
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Request_free(&rq);
}

/* The first partition arrives before the sender readies the others: it was
 * not held back until the last one. */
static void early_partition(int peer, bool sender)
{
    static double buf[4 * 1024];
    MPI_Request rq;
    int ack = 0;
    if (sender) {
        MPI_Psend_init(buf, 4, 1024, MPI_DOUBLE, peer, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
        MPI_Start(&rq);
        buf[0] = 42;
        MPI_Pready(0, rq);
        MPI_Request ar;
        MPI_Irecv(&ack, 1, MPI_INT, peer, 60, MPI_COMM_WORLD, &ar);
        int done = 0;
        while (!done) { /* keep the partitioned request moving meanwhile */
            int f;
            MPI_Test(&ar, &done, MPI_STATUS_IGNORE);
            (void)f;
        }
        CHECK_EQ(ack, 1);
        MPI_Pready_range(1, 3, rq);
    } else {
        MPI_Precv_init(buf, 4, 1024, MPI_DOUBLE, peer, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
        MPI_Start(&rq);
        int f = 0;
        while (!f)
            MPI_Parrived(rq, 0, &f);
        CHECK_EQ(buf[0], 42);
        MPI_Parrived(rq, 3, &f);
        CHECK(!f);
        ack = 1;
        MPI_Send(&ack, 1, MPI_INT, peer, 60, MPI_COMM_WORLD);
    }
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Request_free(&rq);
}

/* A strided type at the sender, contiguous at the receiver; Pready_list. */
static void derived_type(int peer, bool sender)
{
    enum { PARTS = 6, PER = 10 };
    static int src[2 * PARTS * PER], dst[PARTS * PER];
    MPI_Request rq;
    if (sender) {
        MPI_Datatype every_other;
        MPI_Type_vector(PER, 1, 2, MPI_INT, &every_other);
        MPI_Type_create_resized(every_other, 0, 2 * PER * sizeof(int), &every_other);
        MPI_Type_commit(&every_other);
        for (int i = 0; i < 2 * PARTS * PER; i++)
            src[i] = i % 2 ? -1 : i / 2;
        MPI_Psend_init(src, PARTS, 1, every_other, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
        MPI_Type_free(&every_other); /* the request keeps it */
        MPI_Start(&rq);
        int list[PARTS] = {5, 1, 3, 0, 2, 4};
        MPI_Pready_list(PARTS, list, rq);
    } else {
        MPI_Precv_init(dst, 3, 2 * PER, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
        MPI_Start(&rq);
    }
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (!sender)
        for (int i = 0; i < PARTS * PER; i++)
            CHECK_EQ(dst[i], i);
    MPI_Request_free(&rq);
}

/* Threads ready the partitions they computed. */
enum { THREADS = 4, TPARTS = 16, TPER = 256 };
static long tbuf[TPARTS * TPER];
static MPI_Request treq;
static void *ready_mine(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int p = t; p < TPARTS; p += THREADS) {
        for (int i = 0; i < TPER; i++)
            tbuf[p * TPER + i] = (long)p * 1000 + i;
        MPI_Pready(p, treq);
    }
    return NULL;
}

static void threads(int peer, bool sender)
{
    int provided;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE)
        return;
    if (sender) {
        MPI_Psend_init(tbuf, TPARTS, TPER, MPI_LONG, peer, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &treq);
        MPI_Start(&treq);
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; t++)
            pthread_create(&th[t], NULL, ready_mine, (void *)(intptr_t)t);
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
    } else {
        MPI_Precv_init(tbuf, 1, TPARTS * TPER, MPI_LONG, peer, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &treq);
        MPI_Start(&treq);
    }
    MPI_Wait(&treq, MPI_STATUS_IGNORE);
    if (!sender)
        for (int p = 0; p < TPARTS; p++)
            CHECK_EQ(tbuf[p * TPER + 7], (long)p * 1000 + 7);
    MPI_Request_free(&treq);
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x[4], cls;
    MPI_Request rq;
    MPI_Psend_init(x, 4, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
    MPI_Error_class(MPI_Pready(0, rq), &cls);
    CHECK_EQ(cls, MPI_ERR_REQUEST); /* not started */
    MPI_Start(&rq);
    MPI_Error_class(MPI_Pready(4, rq), &cls);
    CHECK_EQ(cls, MPI_ERR_ARG);
    MPI_Error_class(MPI_Pready_range(3, 1, rq), &cls);
    CHECK_EQ(cls, MPI_ERR_ARG);
    int f;
    MPI_Error_class(MPI_Parrived(rq, 0, &f), &cls);
    CHECK_EQ(cls, MPI_ERR_REQUEST); /* a send request */
    MPI_Pready_range(0, 3, rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Request_free(&rq);
    MPI_Error_class(MPI_Psend_init(x, 0, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq), &cls);
    CHECK_EQ(cls, MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    bool sender = rank % 2 == 0;
    if (peer < size) {
        rounds(peer, sender);
        empty_partitions(peer, sender);
        early_partition(peer, sender);
        derived_type(peer, sender);
        threads(peer, sender);
    }
    else { /* the unpaired last rank meets the pairs' barriers */
        for (int b = 0; b < 4; b++)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    errors();
    return mpitest_finish("t_part");
}
