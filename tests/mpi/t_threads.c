/* MPI_THREAD_MULTIPLE: several threads per rank exchange messages with their
 * twin thread on the partner rank at the same time (tags keep them apart),
 * with blocking and nonblocking calls and every protocol size. */
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
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return mpitest_finish("t_threads");
}
