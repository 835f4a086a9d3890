/* The lock-free MPSC queue under real concurrency: PRODUCERS processes push
 * cells into one consumer's queue as fast as they can, taking cells from
 * their own free queues, which the consumer refills.  The consumer checks
 * that nothing is lost or duplicated and that each producer's cells arrive
 * in the order they were pushed. */
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/shm/queue.h"
#include "unit.h"

enum { PRODUCERS = 4, CELLS = 16, MESSAGES = 200000 };

typedef struct {
    lmpi_shmq_link link;
    uint32_t producer;
    uint32_t seq;
} cell;

typedef struct {
    lmpi_shmq inbox;
    lmpi_shmq freeq[PRODUCERS];
    cell cells[PRODUCERS][CELLS];
} region;

static uint64_t off_of(region *r, cell *c)
{
    return (uint64_t)((char *)c - (char *)r);
}

int main(void)
{
    region *r = mmap(NULL, sizeof(region), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(r != MAP_FAILED);
    char *base = (char *)r;
    lmpi_shmq_init(&r->inbox);
    for (int p = 0; p < PRODUCERS; p++) {
        lmpi_shmq_init(&r->freeq[p]);
        for (int i = 0; i < CELLS; i++) {
            r->cells[p][i].producer = (uint32_t)p;
            lmpi_shmq_enqueue(&r->freeq[p], base, off_of(r, &r->cells[p][i]));
        }
    }
    pid_t pids[PRODUCERS];
    for (int p = 0; p < PRODUCERS; p++) {
        pids[p] = fork();
        if (pids[p] == 0) {
            for (uint32_t s = 0; s < MESSAGES; s++) {
                uint64_t off;
                while ((off = lmpi_shmq_dequeue(&r->freeq[p], base)) == 0)
                    sched_yield();
                cell *c = (cell *)(base + off);
                c->seq = s;
                lmpi_shmq_enqueue(&r->inbox, base, off);
            }
            _exit(0);
        }
    }
    uint32_t next[PRODUCERS] = {0};
    long received = 0, disorder = 0;
    while (received < (long)PRODUCERS * MESSAGES) {
        uint64_t off = lmpi_shmq_dequeue(&r->inbox, base);
        if (!off) {
            sched_yield();
            continue;
        }
        cell *c = (cell *)(base + off);
        if (c->seq != next[c->producer])
            disorder++;
        next[c->producer] = c->seq + 1;
        received++;
        lmpi_shmq_enqueue(&r->freeq[c->producer], base, off);
    }
    for (int p = 0; p < PRODUCERS; p++) {
        int status;
        waitpid(pids[p], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CHECK_EQ(next[p], MESSAGES);
    }
    CHECK_EQ(disorder, 0);
    CHECK(lmpi_shmq_empty(&r->inbox));
    return unit_finish("test_shmq");
}
