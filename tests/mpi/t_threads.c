/* MPI_THREAD_MULTIPLE: several threads per rank exchange messages with their
 * twin thread on the partner rank at the same time (tags keep them apart),
 * with blocking and nonblocking calls and every protocol size; then each
 * thread makes communicators from its own parent (dup, split, an
 * intercommunicator and its merge) while the others do, and checks that
 * messages stay on the communicator they were sent on. */
#include <pthread.h>
#include <string.h>

#include "mpitest.h"

enum { THREADS = 4, ROUNDS = 300 };
static int rank, size;

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int partner = rank ^ 1;
    static const int sizes[] = {4, 2000, 40000};
    char *out = malloc(40000), *in = malloc(40000);
    for (int i = 0; i < ROUNDS; i++) {
        int n = sizes[(i + t) % 3];
        memset(out, (char)(rank * 16 + t + i), (size_t)n);
        MPI_Request rq;
        MPI_Irecv(in, n, MPI_CHAR, partner, t, MPI_COMM_WORLD, &rq);
        MPI_Send(out, n, MPI_CHAR, partner, t, MPI_COMM_WORLD);
        MPI_Status st;
        MPI_Wait(&rq, &st);
        char want = (char)(partner * 16 + t + i);
        for (int k = 0; k < n; k++)
            if (in[k] != want) {
                CHECK_EQ(in[k], want);
                break;
            }
        CHECK_EQ(st.MPI_TAG, t);
    }
    free(out);
    free(in);
    return NULL;
}

/* Threads create communicators at once, each from its own parent: two
 * creations in flight in one process once took the same context id (their
 * members' counters were the same), and the messages of one communicator
 * reached the other. */
static MPI_Comm parents[THREADS];

static void check_stays(MPI_Comm c, int t, int i)
{
    int n, me;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    int out = t * 100000 + i, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, (me + 1) % n, 5, &in, 1, MPI_INT, (me - 1 + n) % n, 5, c, MPI_STATUS_IGNORE);
    CHECK_EQ(in, out);
}

static void *creator(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < 40; i++) {
        MPI_Comm d, s, inter, merged;
        MPI_Comm_dup(parents[t], &d);
        check_stays(d, t, i);
        MPI_Comm_split(parents[t], rank % 2, rank, &s);
        check_stays(s, t, i);
        MPI_Intercomm_create(s, 0, d, rank % 2 ? 0 : 1, 7, &inter);
        MPI_Intercomm_merge(inter, rank % 2, &merged);
        check_stays(merged, t, i);
        MPI_Comm_free(&merged);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&s);
        MPI_Comm_free(&d);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK_EQ(provided, MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size % 2 == 0) {
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; t++)
            pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
        for (int t = 0; t < THREADS; t++)
            MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]);
        for (int t = 0; t < THREADS; t++)
            pthread_create(&th[t], NULL, creator, (void *)(intptr_t)t);
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
        for (int t = 0; t < THREADS; t++)
            MPI_Comm_free(&parents[t]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return mpitest_finish("t_threads");
}
