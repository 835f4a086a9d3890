/* The event-driven wait (src/runtime/wait.c) between two processes: a
 * ping-pong in which each side sleeps whenever the other has not answered,
 * so a lost wake-up hangs the test (ctest's timeout fails it); word waits
 * woken by kicks; timed sleeps; and a sender that pays no system call when
 * nobody sleeps. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/wait.h"
#include "unit.h"

typedef struct {
    lmpi_wait_word words[2];
    _Atomic uint32_t word_sleepers;
    _Atomic uint64_t ball; /* whose turn: even for 0, odd for 1 */
    _Atomic uint64_t flag; /* written directly, awaited as a word */
} shared;

static shared *sh;

static lmpi_wait_word *word_of(int r) { return &sh->words[r]; }

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Wait until COND, sleeping as progress.c does: arm, look once more, sleep. */
#define SLEEP_UNTIL(cond, word_wait)             \
    do {                                         \
        while (!(cond)) {                        \
            if (!lmpi_wait_armed()) {            \
                CHECK(lmpi_wait_arm(word_wait));  \
                continue;                        \
            }                                    \
            lmpi_wait_sleep(0);                  \
        }                                        \
        lmpi_wait_disarm();                      \
    } while (0)

static void pingpong(int me, long rounds)
{
    for (long i = 0; i < rounds; i++) {
        uint64_t turn = 2 * (uint64_t)i + (uint64_t)me;
        SLEEP_UNTIL(atomic_load(&sh->ball) == turn, false);
        atomic_store(&sh->ball, turn + 1);
        lmpi_wait_notify(&sh->words[1 - me]); /* as a packet's sender does */
    }
}

static void word_waits(int me, long rounds)
{
    for (long i = 1; i <= rounds; i++) {
        if (me == 0) {
            if (i % 64 == 0)
                usleep(200); /* let the other side fall asleep now and then */
            atomic_store(&sh->flag, (uint64_t)i);
            lmpi_wait_kick(); /* as a collective's writer does */
            SLEEP_UNTIL(atomic_load(&sh->ball) == (uint64_t)i, true);
        } else {
            SLEEP_UNTIL(atomic_load(&sh->flag) == (uint64_t)i, true);
            atomic_store(&sh->ball, (uint64_t)i);
            lmpi_wait_kick();
        }
    }
}

static pid_t fork_side(void (*fn)(int, long), long rounds)
{
    pid_t p = fork();
    if (p == 0) {
        lmpi_wait_init();
        lmpi_wait_attach_node(&sh->words[1], &sh->word_sleepers, word_of, 2);
        fn(1, rounds);
        _exit(unit_failures ? 1 : 0);
    }
    return p;
}

static void join(pid_t p)
{
    int st;
    CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED);
    memset(sh, 0, sizeof(*sh));
    lmpi_wait_init();
    lmpi_wait_attach_node(&sh->words[0], &sh->word_sleepers, word_of, 2);

    /* 1. nobody sleeps: notifying costs no wake-up call */
    lmpi_wait_stats before = lmpi_wait_get_stats();
    for (int i = 0; i < 1000; i++)
        lmpi_wait_notify(&sh->words[1]);
    CHECK(lmpi_wait_get_stats().wakes_sent == before.wakes_sent);

    /* 2. ping-pong where every wait sleeps: a lost wake-up hangs here */
    long rounds = 20000;
    uint64_t t0 = now_ns();
    pid_t p = fork_side(pingpong, rounds);
    pingpong(0, rounds);
    join(p);
    lmpi_wait_stats after = lmpi_wait_get_stats();
    printf("ping-pong: %ld rounds, %.2f us per round, %llu sleeps and %llu wake-ups on this side\n", rounds,
           (double)(now_ns() - t0) / 1e3 / (double)rounds, (unsigned long long)(after.sleeps - before.sleeps),
           (unsigned long long)(after.wakes_sent - before.wakes_sent));
    CHECK(after.sleeps > before.sleeps); /* it did sleep */

    /* 3. word waits, woken by kicks */
    atomic_store(&sh->ball, 0);
    atomic_store(&sh->flag, 0);
    p = fork_side(word_waits, 5000);
    word_waits(0, 5000);
    join(p);
    CHECK(atomic_load(&sh->word_sleepers) == 0);
    printf("word waits: %llu kicks found a sleeper\n", (unsigned long long)lmpi_wait_get_stats().kicks);

    /* 4. a timed sleep ends by itself */
    CHECK(lmpi_wait_arm(false));
    uint64_t t1 = now_ns();
    lmpi_wait_sleep(2000000);
    uint64_t slept = now_ns() - t1;
    CHECK(!lmpi_wait_armed());
    CHECK(slept >= 1500000 && slept < 1000000000);
    CHECK(atomic_load(&sh->words[0]) == 0);

    /* 5. a wake before the sleep is not lost: the sleep returns at once */
    CHECK(lmpi_wait_arm(false));
    lmpi_wait_wake(&sh->words[0]);
    t1 = now_ns();
    lmpi_wait_sleep(0);
    CHECK(now_ns() - t1 < 500000000);
    if (unit_failures)
        return 1;
    puts("test_wait: passed");
    return 0;
}
