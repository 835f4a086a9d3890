/* The progress engine: one poll drains the transport and retries queued
 * outgoing packets.  Blocking calls poll LMPI_SPIN_COUNT times and then
 * yield between polls: with more ranks than cores the peer we wait for
 * needs our core (64 ranks on 2 cores make progress only this way). */
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
    /* Not oversubscribed (LMPI_SPIN_COUNT > 0): the core is ours, and a
     * system call on every poll slows the peers that reach into this process
     * with cross-memory calls (an 8-byte put into a waiting rank's Win_create
     * window: 1.12 us with a yield per poll, 0.75 us without; bench/run rma).
     * Yield on every 1024th call only (about every 50 us of polling);
     * oversubscribed runs yield every time. */
    static _Thread_local unsigned calls;
    if (lmpi_config.spin_count > 0 && (++calls & 1023) != 0) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return;
    }
    sched_yield();
}

int lmpi_pt2pt_spin_count(void)
{
    return (int)lmpi_config.spin_count;
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
    int spins = 0;
    while (!*flag) {
        if (lmpi_progress_poll() > 0) {
            spins = 0;
            continue;
        }
        if (++spins > lmpi_config.spin_count)
            lmpi_lock_yield();
    }
}
