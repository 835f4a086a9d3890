/* The event-driven wait (src/runtime/wait.c) between two processes: a
 * ping-pong in which each side sleeps whenever the other has not answered,
 * so a lost wake-up hangs the test (ctest's timeout fails it); word waits
 * woken by kicks, and waits naming their word woken only once it arrived;
 * timed sleeps; a sender that pays no system call when
 * nobody sleeps; and the hand-off's verdict (a local rank waiting awake on
 * our processor) and move (to a processor where no local rank waits); how
 * long a waiter yields before it sleeps with many ranks a core. */
#include <sched.h>
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
    lmpi_wait_cond conds[2];
    _Atomic uint32_t word_sleepers;
    _Atomic uint64_t ball; /* whose turn: even for 0, odd for 1 */
    _Atomic uint64_t flag; /* written directly, awaited as a word */
    _Atomic uint64_t other; /* a word nobody waits for */
} shared;

static shared *sh;

static lmpi_wait_word *word_of(int r) { return &sh->words[r]; }

static lmpi_wait_cond *cond_of(int r) { return &sh->conds[r]; }

/* Rank ME of two, the shared page as the node's segment. */
static void attach(int me)
{
    lmpi_wait_attach_node(&sh->words[me], &sh->word_sleepers, word_of, cond_of, 2, me, (char *)sh, sizeof *sh);
}

/* the hand-off's segment: two ranks' published processors, the slots */
static _Atomic int32_t wait_cpus[2];
static _Atomic uint32_t cpu_slots[CPU_SETSIZE];
static _Atomic int32_t *wait_cpu_of(int r) { return &wait_cpus[r]; }

static void handoff(void)
{
    int ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
    cpu_set_t all, one;
    CHECK(sched_getaffinity(0, sizeof(all), &all) == 0);
    /* on one processor, as the scheduler may put two ranks */
    int cpu = sched_getcpu();
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
    lmpi_wait_attach_cpus(&wait_cpus[0], wait_cpu_of, cpu_slots, ncpus, 0);

    /* nobody else waits here: we publish ourselves and spin on */
    CHECK(!lmpi_wait_core_shared());
    CHECK(wait_cpus[0] == cpu + 1 && cpu_slots[cpu] == 1 && lmpi_wait_cpu_published);
    CHECK(!lmpi_wait_core_shared()); /* (still only us) */

    /* rank 1 waits on our processor, awake: it is runnable and not running */
    atomic_store(&wait_cpus[1], cpu + 1);
    atomic_store(&cpu_slots[cpu], 2);
    atomic_store(&sh->words[1], 0);
    uint64_t before = lmpi_wait_get_stats().handoffs;
    CHECK(lmpi_wait_core_shared());
    CHECK(cpu_slots[cpu] == 1); /* it finds us when it lets us in */
    CHECK(lmpi_wait_get_stats().handoffs == before + 1);

    /* asleep (armed), or waiting elsewhere, or out of its wait: no hand-off */
    atomic_store(&cpu_slots[cpu], 2);
    atomic_store(&sh->words[1], LMPI_WAIT_ARMED);
    CHECK(!lmpi_wait_core_shared());
    atomic_store(&sh->words[1], 0);
    atomic_store(&cpu_slots[cpu], 2);
    atomic_store(&wait_cpus[1], cpu + 2);
    CHECK(!lmpi_wait_core_shared());
    atomic_store(&cpu_slots[cpu], 2);
    atomic_store(&wait_cpus[1], 0);
    CHECK(!lmpi_wait_core_shared());

    /* the call's exit unpublishes */
    lmpi_wait_leave_call();
    CHECK(wait_cpus[0] == 0 && !lmpi_wait_cpu_published);

    /* bound to one processor: never moves */
    CHECK(!lmpi_wait_move_away());
    CHECK(sched_setaffinity(0, sizeof(all), &all) == 0);
    lmpi_wait_detach();
    attach(0);
    printf("hand-off: verdicts as expected on cpu %d\n", cpu);
}

/* In a fresh process (the move's state is per thread and remembers the
 * mask): with two or more processors allowed, a move lands on another one
 * whose slot names no waiter, the mask is given back, and a second move
 * within 20 ms is refused. */
static void move_side(int me, long unused)
{
    (void)me;
    (void)unused;
    int ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
    cpu_set_t all, after;
    CHECK(sched_getaffinity(0, sizeof(all), &all) == 0);
    if (CPU_COUNT(&all) < 2) {
        puts("move: skipped (one processor allowed)");
        return;
    }
    lmpi_wait_attach_cpus(&wait_cpus[0], wait_cpu_of, cpu_slots, ncpus, 0);
    usleep(25000); /* past the parent's refused try (the fork copied its time) */
    int from = sched_getcpu();
    CHECK(lmpi_wait_move_away());
    int to = sched_getcpu();
    CHECK(to != from);
    CHECK(sched_getaffinity(0, sizeof(after), &after) == 0 && CPU_EQUAL(&after, &all));
    CHECK(wait_cpus[0] == to + 1 && cpu_slots[to] == 1);
    CHECK(!lmpi_wait_move_away()); /* at most every 20 ms */
    CHECK(lmpi_wait_get_stats().moves == 1);
    printf("move: cpu %d -> %d\n", from, to);
    fflush(stdout);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Wait until COND, sleeping as progress.c does: arm, look once more, sleep
 * (a word wait naming UNTIL reaching VALUE, or any word: UNTIL NULL). */
#define SLEEP_UNTIL_WORD(cond, word_wait, until, value)         \
    do {                                                        \
        while (!(cond)) {                                       \
            if (!lmpi_wait_armed()) {                           \
                CHECK(lmpi_wait_arm(word_wait, until, value));  \
                continue;                                       \
            }                                                   \
            lmpi_wait_sleep(0);                                 \
        }                                                       \
        lmpi_wait_disarm();                                     \
    } while (0)
#define SLEEP_UNTIL(cond, word_wait) SLEEP_UNTIL_WORD(cond, word_wait, NULL, 0)

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

/* Word waits that name their word: the waiter for FLAG sleeps through
 * kicks after writes of another word, and the kick after FLAG's wakes it
 * (a lost wake-up hangs here). */
static void named_waits(int me, long rounds)
{
    for (long i = 1; i <= rounds; i++) {
        if (me == 0) {
            if (i % 64 == 0)
                usleep(200);
            for (int k = 0; k < 3; k++) {
                atomic_fetch_add(&sh->other, 1);
                lmpi_wait_kick(); /* a kick that finds the other asleep does not wake it */
            }
            atomic_store(&sh->flag, (uint64_t)i);
            lmpi_wait_kick();
            SLEEP_UNTIL_WORD(atomic_load(&sh->ball) >= (uint64_t)i, true, &sh->ball, (uint64_t)i);
        } else {
            SLEEP_UNTIL_WORD(atomic_load(&sh->flag) >= (uint64_t)i, true, &sh->flag, (uint64_t)i);
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
        attach(1);
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
    attach(0);

    /* 0. how long a waiter yields before it sleeps: the configured 2 ms up
     * to 20 ranks a core, then 100 us per rank a core (rounded up) */
    CHECK_EQ(lmpi_wait_sleep_after_us(2000, 2, 2), 2000);
    CHECK_EQ(lmpi_wait_sleep_after_us(2000, 4, 2), 2000);
    CHECK_EQ(lmpi_wait_sleep_after_us(2000, 40, 2), 2000);
    CHECK_EQ(lmpi_wait_sleep_after_us(2000, 41, 2), 2100);
    CHECK_EQ(lmpi_wait_sleep_after_us(2000, 256, 2), 12800);
    CHECK_EQ(lmpi_wait_sleep_after_us(500, 16, 2), 800);
    CHECK_EQ(lmpi_wait_sleep_after_us(2000, 256, 0), 2000); /* cores unknown */

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

    /* 3b. word waits naming their word: woken only once it arrived */
    atomic_store(&sh->ball, 0);
    atomic_store(&sh->flag, 0);
    lmpi_wait_stats b3 = lmpi_wait_get_stats();
    p = fork_side(named_waits, 5000);
    named_waits(0, 5000);
    join(p);
    CHECK(atomic_load(&sh->word_sleepers) == 0);
    lmpi_wait_stats a3 = lmpi_wait_get_stats();
    /* each round wakes the other side at most once: 3 kicks in 4 find it
     * asleep on a word not yet there */
    CHECK(a3.wakes_sent - b3.wakes_sent <= 5000);
    printf("named word waits: %llu kicks found a sleeper, %llu woke it\n",
           (unsigned long long)(a3.kicks - b3.kicks), (unsigned long long)(a3.wakes_sent - b3.wakes_sent));
    /* a named word that has not arrived: a kick does not wake the sleeper */
    atomic_store(&sh->flag, 0);
    CHECK(lmpi_wait_arm(true, &sh->flag, 1));
    uint32_t armed_word = atomic_load(&sh->words[0]);
    attach(1); /* kick as the other rank */
    lmpi_wait_kick();
    CHECK(atomic_load(&sh->words[0]) == armed_word);
    atomic_store(&sh->flag, 1);
    lmpi_wait_kick();
    CHECK(atomic_load(&sh->words[0]) == 0); /* woken */
    attach(0);
    lmpi_wait_disarm();

    /* 4. a timed sleep ends by itself */
    CHECK(lmpi_wait_arm(false, NULL, 0));
    uint64_t t1 = now_ns();
    lmpi_wait_sleep(2000000);
    uint64_t slept = now_ns() - t1;
    CHECK(!lmpi_wait_armed());
    CHECK(slept >= 1500000 && slept < 1000000000);
    CHECK(atomic_load(&sh->words[0]) == 0);

    /* 6. the hand-off's verdicts, and moving away (in a child: per thread) */
    handoff();
    memset((void *)cpu_slots, 0, sizeof(cpu_slots));
    p = fork_side(move_side, 0);
    join(p);

    /* 5. a wake before the sleep is not lost: the sleep returns at once */
    CHECK(lmpi_wait_arm(false, NULL, 0));
    lmpi_wait_wake(&sh->words[0]);
    t1 = now_ns();
    lmpi_wait_sleep(0);
    CHECK(now_ns() - t1 < 500000000);
    if (unit_failures)
        return 1;
    puts("test_wait: passed");
    return 0;
}
