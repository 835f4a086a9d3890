/* The progress engine: one poll drains the transport and retries queued
 * outgoing packets.  Blocking calls spin while polls find nothing for at
 * most LMPI_SPIN_TIME microseconds, then sleep in the kernel until whoever
 * hands them work wakes them (wait.h; src/runtime/README.md, "Waiting").
 * With more ranks than cores (spin time 0) the peer we wait for needs our
 * core, so those runs sleep at the first idle poll. */
#include <sched.h>

#include "ft/ft.h"
#include "pt2pt/pt2pt.h"
#include "runtime/config.h"
#include "runtime/request.h"
#include "runtime/wait.h"
#include "transport/transport.h"

pthread_mutex_t lmpi_big_lock = PTHREAD_MUTEX_INITIALIZER;
_Thread_local bool lmpi_lock_held;

void lmpi_lock_yield(void)
{
    if (lmpi_lock_held) {
        pthread_mutex_unlock(&lmpi_big_lock);
        sched_yield();
        pthread_mutex_lock(&lmpi_big_lock);
        return;
    }
    sched_yield();
}

void lmpi_wait_after_call(void)
{
    /* a wait that ended without a poll's progress (its word changed, or
     * another thread completed it) is still armed: nobody must think we
     * sleep */
    lmpi_wait_disarm();
    /* another thread may sleep on what this call completed */
    if (atomic_load_explicit(&lmpi_wait_local_sleepers, memory_order_relaxed))
        lmpi_wait_wake_local();
}

/* How a blocking wait gives the processor away (docs/performance.md,
 * "Waiting under load"):
 *
 * - Spin LMPI_SPIN_TIME us (50; 0 with more ranks than cores), then hand
 *   the processor over once and spin again.  A budget of time, not of
 *   polls: 100 idle polls are a few microseconds, and 0-byte ping-pong
 *   beside a busy process paid for hand-overs the reply would have made
 *   unnecessary a microsecond later.  The clock is read every 64th idle
 *   poll only.
 * - The hand-over is a sched_yield, or, for CONTENDED_NS after a yield
 *   that kept us off the processor longer than SLOW_YIELD_NS (busy loops
 *   beside us: each yield gives them a whole scheduler slice, 0.75 ms), a
 *   1 us nanosleep (50 us of timer slack).  This is the policy of before
 *   the event-driven wait: every other one measured (sleeping on the futex
 *   word after the spin, offering the core while spinning) lost more
 *   beside busy loops than it won beside a second MPI job (the load
 *   matrix in docs/performance.md), so the 50 us mode beside busy
 *   processes is still here, and open.
 * - After LMPI_SLEEP_AFTER (2 ms; longer with over 20 ranks a core, init.c)
 *   without progress (a peer computing, a slow rank),
 *   sleep on the futex word until whoever hands us work wakes us (wait.h):
 *   no timer, no core spent.  Not sooner: the wake-up of a core that went
 *   idle costs an interrupt to an idle (virtual) processor, 30-50 us here.
 * - A wait that follows a wake-up it sent offers the core first: the
 *   scheduler tends to queue the woken process on the waker's core. */
#define SLOW_YIELD_NS 2000000u
#define CONTENDED_NS 10000000u
static _Thread_local uint64_t wait_start, idle_since, contended_until;
/* armed to let a rank sharing our processor in (wait.h, the hand-off) */
static _Thread_local bool handing_off;

/* Sends waiting for a cell of a foreign inbox are the one wake-up nobody
 * signals (the inbox's owner does not know who waits): they look again
 * every millisecond. */
#define FOREIGN_CELL_RETRY_NS 1000000u

/* Arm for a sleep at the next idle poll; where nothing would wake us (no
 * segment, the network cannot be watched), let others run instead. */
static bool arm_or_yield(bool word_wait, const _Atomic uint64_t *until, uint64_t until_value)
{
    /* one condition per process: with several threads, wake on any word */
    if (lmpi_rt.thread_multiple)
        until = NULL;
    if (lmpi_tr_sleep_ok() && lmpi_wait_arm(word_wait, until, until_value))
        return true;
    lmpi_lock_yield();
    return false;
}

static void idle(unsigned *count, bool word_wait, uint64_t max_sleep_ns, const _Atomic uint64_t *until,
                 uint64_t until_value)
{
    unsigned n = (*count)++;
    if (n == 0) {
        lmpi_wait_disarm();
        handing_off = false;
        lmpi_wait_kick(); /* a word we wrote may be awaited */
        wait_start = idle_since = lmpi_now_ns();
        /* a process we just woke may be queued on this core: let it run
         * before spinning (the scheduler tends to put the woken on the
         * waker's core) */
        if (lmpi_wait_take_woke())
            lmpi_lock_yield();
        return;
    }
    if (lmpi_wait_armed()) {
        /* armed at the previous idle poll: the caller has looked at its
         * condition since; look at the transports once more, then sleep.
         * A failure posted (src/ft) sends the caller back to its condition
         * (the launcher bumps the epoch before it wakes the words: one of
         * us sees the other). */
        if (lmpi_ft_epoch_moved() || lmpi_progress_poll() > 0) {
            lmpi_wait_disarm();
            handing_off = false;
            *count = 0;
            return;
        }
        if (!lmpi_tr_sleep_prepare()) {
            lmpi_wait_disarm(); /* the network has news: read it, then arm again */
            return;
        }
        int suspended = lmpi_lock_suspend();
        if (lmpi_tr_sleep_needs_retry() && (!max_sleep_ns || max_sleep_ns > FOREIGN_CELL_RETRY_NS))
            max_sleep_ns = FOREIGN_CELL_RETRY_NS;
        if (LMPI_UNLIKELY(lmpi_ft_enabled)) { /* other jobs' processes to look at (src/ft) */
            uint64_t watch = lmpi_ft_watch(lmpi_now_ns());
            if (watch && (!max_sleep_ns || max_sleep_ns > watch))
                max_sleep_ns = watch;
        }
        lmpi_wait_sleep(max_sleep_ns);
        lmpi_lock_resume(suspended);
        if (handing_off) {
            /* the rank we let in has run: spin again before anything else */
            handing_off = false;
            idle_since = lmpi_now_ns();
        }
        return; /* (otherwise idle_since stays: with nothing new, sleep again at once) */
    }
    uint64_t budget = (uint64_t)lmpi_config.spin_time * 1000u;
    if (budget > 0) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        /* other user threads may want the big lock (the network's
         * introducer needs it only while this thread is outside MPI: a
         * waiter polls for itself) */
        if (lmpi_rt.thread_multiple && lmpi_lock_held && n >= 100)
            lmpi_lock_yield();
        if ((n & 63) != 0)
            return;
        lmpi_ft_poll(); /* a failure posted (src/ft): one load of a line nobody writes */
        /* a local rank runnable on our processor: let it in (wait.h) */
        if (lmpi_config.wait_handoff && !lmpi_rt.thread_multiple && lmpi_wait_core_shared()) {
            if (!lmpi_wait_move_away())
                handing_off = arm_or_yield(word_wait, until, until_value);
            return;
        }
        if (lmpi_now_ns() - idle_since < budget)
            return;
    }
    lmpi_ft_poll();
    uint64_t now = lmpi_now_ns();
    if (LMPI_UNLIKELY(lmpi_ft_enabled))
        lmpi_ft_watch(now);
    if (now - wait_start < (uint64_t)lmpi_config.sleep_after * 1000u) {
        if (now < contended_until) {
            struct timespec ts = {0, 1000};
            nanosleep(&ts, NULL);
        } else {
            lmpi_lock_yield();
            if (lmpi_now_ns() - now > SLOW_YIELD_NS)
                contended_until = now + CONTENDED_NS;
        }
        idle_since = lmpi_now_ns();
        return;
    }
    arm_or_yield(word_wait, until, until_value);
}

void lmpi_progress_idle(unsigned *count) { idle(count, false, 0, NULL, 0); }

/* A program that polls in a loop and one that does a little work between
 * its tests (HPCC's RandomAccess makes one update, then tests its receive)
 * look alike call by call, so the misses are timed: a run of them that
 * lasts LMPI_TEST_YIELD us hands the processor over once, and a test that
 * finds something ends the run (lmpi_progress_found).  At 4 ranks on 2
 * cores, a token passed around with each rank polling MPI_Iprobe for it,
 * against RandomAccess (GUP/s): never yielding (before, and MPICH 5.0.2),
 * 2.3 ms a hop (a scheduler slice), 0.026; yielding at every miss (as Open
 * MPI does when oversubscribed), 1.3 us, 0.0012; after 2 us of misses,
 * 2.6 us, 0.012; after 5, 3.6 us, 0.016; after 20, 12 us, 0.025. */
uint64_t lmpi_test_missing_since;

void lmpi_progress_missed(void)
{
    if (lmpi_config.spin_time != 0)
        return;
    uint64_t now = lmpi_now_ns();
    if (!lmpi_test_missing_since) {
        lmpi_test_missing_since = now;
        if (lmpi_config.test_yield > 0)
            return;
    }
    if (now - lmpi_test_missing_since < (uint64_t)lmpi_config.test_yield * 1000u)
        return;
    lmpi_lock_yield();
    lmpi_test_missing_since = 0;
}

void lmpi_progress_idle_word(unsigned *count) { idle(count, true, 0, NULL, 0); }

void lmpi_progress_idle_until(unsigned *count, const _Atomic uint64_t *word, uint64_t value)
{
    idle(count, true, 0, word, value);
}

void lmpi_progress_idle_timed(unsigned *count, uint64_t max_sleep_ns) { idle(count, false, max_sleep_ns, NULL, 0); }

lmpi_progress_list lmpi_progress_lists[LMPI_PROGRESS_LISTS];
unsigned lmpi_progress_lists_on;

void lmpi_progress_list_add(lmpi_progress_which which, lmpi_progress_item *it)
{
    lmpi_progress_list *l = &lmpi_progress_lists[which];
    if (it->listed)
        return;
    it->next = l->head;
    it->prev = NULL;
    if (l->head)
        l->head->prev = it;
    l->head = it;
    it->listed = true;
    lmpi_progress_lists_on |= 1u << which;
}

void lmpi_progress_list_remove(lmpi_progress_which which, lmpi_progress_item *it)
{
    lmpi_progress_list *l = &lmpi_progress_lists[which];
    if (!it->listed)
        return;
    if (it->prev)
        it->prev->next = it->next;
    else
        l->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    it->prev = it->next = NULL;
    it->listed = false;
    if (!l->head)
        lmpi_progress_lists_on &= ~(1u << which);
}

static int run_lists(void)
{
    int n = 0;
    for (int w = 0; w < LMPI_PROGRESS_LISTS; w++) {
        lmpi_progress_list *l = &lmpi_progress_lists[w];
        if (!l->head || l->running)
            continue;
        l->running = true;
        for (lmpi_progress_item *it = l->head, *next; it; it = next) {
            next = it->next;
            if (l->advance(it)) {
                lmpi_progress_list_remove((lmpi_progress_which)w, it);
                n++;
            }
        }
        l->running = false;
    }
    return n;
}

int lmpi_progress_poll(void)
{
    int n = lmpi_tr_poll();
    n += lmpi_pt2pt_progress_outbox();
    if (LMPI_UNLIKELY(lmpi_progress_lists_on))
        n += run_lists();
    return n;
}

void lmpi_progress_wait_flag(volatile int *flag)
{
    unsigned idle = 0;
    while (!*flag) {
        if (lmpi_progress_poll() > 0)
            idle = 0;
        else
            lmpi_progress_idle(&idle);
    }
}
