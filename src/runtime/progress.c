/* The progress engine: one poll drains the transport and retries queued
 * outgoing packets.  Blocking calls spin while polls find nothing for at
 * most LMPI_SPIN_TIME microseconds, then hand the processor over once and
 * spin again: with more ranks than cores (spin time 0) the peer we wait for
 * needs our core, so those runs yield at every idle poll. */
#include <sched.h>

#include "pt2pt/pt2pt.h"
#include "runtime/config.h"
#include "runtime/request.h"
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

/* Why a time budget and not a poll count: a count of 100 idle polls is a
 * few microseconds, so 0-byte ping-pong beside another busy process paid
 * for yields that the reply would have made unnecessary a microsecond later
 * (docs/performance.md, "Progress under load").  The clock is read every
 * 64th idle poll only.
 *
 * Why a sleep when the machine is busy: beside busy processes a
 * sched_yield() hands the core over for a whole scheduler slice (EEVDF
 * moves the yielder's deadline back by one), about 0.75 ms each, while a
 * sleeping waiter keeps its claim and is back after the timer slack
 * (50 us).  A yield that kept us off the processor for 2 ms (more than a
 * slice) shows such competition; for the next 10 ms idle waits sleep
 * instead.  Measured beside 1 and 4 busy processes, 0-64 B ping-pong, four
 * runs each: a threshold of 50 us made the sleeps hurt beside one busy
 * process (1 B: 0.5-3.3 us), 2 ms did not (0.58-0.80) and kept the
 * 4-process case free of the 760 us runs (1 B: 1.05-1.28). */
#define CONTENDED_YIELD_NS 2000000u
static _Thread_local uint64_t idle_since, contended_until;

static void hand_over(uint64_t now)
{
    if (now < contended_until) {
        struct timespec ts = {0, 1000};
        nanosleep(&ts, NULL);
        return;
    }
    sched_yield();
    if (lmpi_now_ns() - now > CONTENDED_YIELD_NS)
        contended_until = now + 10000000u;
}

void lmpi_progress_idle(unsigned *idle)
{
    uint64_t budget = (uint64_t)lmpi_config.spin_time * 1000u;
    unsigned n = (*idle)++;
    /* Oversubscribed: yield at once.  Other user threads may want the big
     * lock: let go of it (and the processor) after a short spin.  (The
     * network's introducer needs it only while this thread is outside MPI:
     * a waiter polls for itself.) */
    if (budget == 0 || (lmpi_rt.thread_multiple && lmpi_lock_held && n >= 100)) {
        lmpi_lock_yield();
        return;
    }
    if (n == 0) {
        idle_since = lmpi_now_ns();
        return;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if ((n & 63) != 0)
        return;
    uint64_t t = lmpi_now_ns();
    if (t - idle_since < budget)
        return;
    hand_over(t);
    idle_since = lmpi_now_ns();
}

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
