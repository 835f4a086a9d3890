/* Non-overtaking under wildcard mixes.  Every rank but 0 sends numbered
 * streams (tag = number % TAGS); rank 0 receives them in three phases, part
 * of the receives posted before the messages arrive, part after:
 *   A  specific source, each receive either the expected tag or MPI_ANY_TAG:
 *      the k-th receive for a sender must get exactly its k-th message;
 *   B  MPI_ANY_SOURCE with MPI_ANY_TAG: per sender, numbers increase in
 *      posting order;
 *   C  MPI_ANY_SOURCE with a specific tag: per sender and tag, numbers
 *      increase in posting order.
 * Every message must arrive exactly once. */
#include <string.h>

#include "mpitest.h"

enum { PER_SENDER = 200, TAGS = 3 };

static int rank, size;

static void send_stream(int phase)
{
    for (int i = 0; i < PER_SENDER; i++) {
        int msg[3] = {rank, i, phase};
        MPI_Send(msg, 3, MPI_INT, 0, i % TAGS, MPI_COMM_WORLD);
    }
}

static unsigned seed = 12345;
static unsigned rnd(void)
{
    seed = seed * 1103515245u + 12345u;
    return seed >> 8;
}

/* Post all receives of a phase (testing now and then so that some messages
 * meet posted receives and some arrive first), complete them, return what
 * each got. */
static void receive(int total, const int *src, const int *tag, int (*got)[3], MPI_Status *st)
{
    MPI_Request *rq = calloc((size_t)total, sizeof(MPI_Request));
    for (int k = 0; k < total; k++) {
        MPI_Irecv(got[k], 3, MPI_INT, src[k], tag[k], MPI_COMM_WORLD, &rq[k]);
        if (k % 37 == 0) { /* progress without completing anything */
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, 99999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
    }
    MPI_Waitall(total, rq, st);
    free(rq);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int senders = size - 1;
    for (int phase = 0; phase < 3 && senders > 0; phase++) {
        if (rank != 0) {
            send_stream(phase);
        } else {
            int total = senders * PER_SENDER;
            int *src = calloc((size_t)total, sizeof(int)), *tag = calloc((size_t)total, sizeof(int));
            int *expect = calloc((size_t)total, sizeof(int));
            int (*got)[3] = calloc((size_t)total, sizeof(*got));
            MPI_Status *st = calloc((size_t)total, sizeof(MPI_Status));
            int *next = calloc((size_t)size, sizeof(int));
            for (int k = 0; k < total; k++) {
                int s = 1 + (int)(rnd() % (unsigned)senders);
                while (next[s] >= PER_SENDER)
                    s = s % senders + 1;
                int i = next[s]++;
                expect[k] = i;
                if (phase == 0) {
                    src[k] = s;
                    tag[k] = rnd() % 2 ? MPI_ANY_TAG : i % TAGS;
                } else if (phase == 1) {
                    src[k] = MPI_ANY_SOURCE;
                    tag[k] = MPI_ANY_TAG;
                } else {
                    src[k] = MPI_ANY_SOURCE;
                    tag[k] = i % TAGS; /* as many of each tag as will come */
                }
            }
            receive(total, src, tag, got, st);
            int *last = calloc((size_t)size * TAGS, sizeof(int));
            int *count = calloc((size_t)size, sizeof(int));
            for (int x = 0; x < size * TAGS; x++)
                last[x] = -1;
            for (int k = 0; k < total; k++) {
                int s = got[k][0], i = got[k][1];
                CHECK_EQ(got[k][2], phase);
                CHECK_EQ(st[k].MPI_SOURCE, s);
                CHECK_EQ(st[k].MPI_TAG, i % TAGS);
                count[s]++;
                if (phase == 0) {
                    CHECK_EQ(s, src[k]);
                    CHECK_EQ(i, expect[k]);
                } else {
                    int slot = phase == 1 ? s * TAGS : s * TAGS + i % TAGS;
                    CHECK(i > last[slot]);
                    last[slot] = i;
                    if (phase == 2)
                        CHECK_EQ(i % TAGS, tag[k]);
                }
            }
            for (int s = 1; s < size; s++)
                CHECK_EQ(count[s], PER_SENDER);
            free(src);
            free(tag);
            free(expect);
            free(got);
            free(st);
            free(next);
            free(last);
            free(count);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return mpitest_finish("t_order");
}
