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
    } else {
        sched_yield();
    }
}

int lmpi_pt2pt_spin_count(void)
{
    return (int)lmpi_config.spin_count;
}

static int (*hooks[LMPI_HOOK_COUNT])(void);
unsigned lmpi_progress_hooks_on;

void lmpi_progress_hook_set(lmpi_hook which, int (*fn)(void))
{
    hooks[which] = fn;
    if (fn)
        lmpi_progress_hooks_on |= 1u << which;
    else
        lmpi_progress_hooks_on &= ~(1u << which);
}

static int run_hooks(void)
{
    int n = 0;
    for (int i = 0; i < LMPI_HOOK_COUNT; i++)
        if (hooks[i])
            n += hooks[i]();
    return n;
}

int lmpi_progress_poll(void)
{
    int n = lmpi_tr_poll();
    n += lmpi_pt2pt_progress_outbox();
    if (LMPI_UNLIKELY(lmpi_progress_hooks_on))
        n += run_hooks();
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
