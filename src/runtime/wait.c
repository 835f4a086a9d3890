/* The event-driven wait (wait.h; why and measurements in
 * src/runtime/README.md, "Waiting"). */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime/wait.h"

bool lmpi_wait_sender_fence = true; /* until membarrier is known to work */
static _Atomic uint32_t no_segment_sleepers;
_Atomic uint32_t *lmpi_wait_word_sleepers = &no_segment_sleepers;
_Atomic uint32_t lmpi_wait_local_sleepers;

static struct {
    bool membarrier;
    lmpi_wait_word *mine;
    lmpi_wait_word *(*word_of)(int local);
    int nlocal;
    lmpi_wait_word *inbox;
    _Atomic uint64_t sleeps, wakes_sent, kicks;
} wt;

/* What this thread armed: 0, or LMPI_WAIT_ARMED with LMPI_WAIT_WORD. */
static _Thread_local uint32_t armed;
/* This thread woke a sleeper since it last asked (lmpi_wait_take_woke). */
static _Thread_local bool woke_someone;

void lmpi_wait_init(void)
{
    /* Registration is per process and cheap; the command it allows costs
     * the sleeper about 1 us (an IPI to each core running one of us). */
    long have = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    wt.membarrier = have > 0 && (have & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
                    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
    lmpi_wait_sender_fence = !wt.membarrier;
}

void lmpi_wait_attach_node(lmpi_wait_word *mine, _Atomic uint32_t *word_sleepers,
                           lmpi_wait_word *(*word_of)(int local), int nlocal)
{
    wt.mine = mine;
    wt.word_of = word_of;
    wt.nlocal = nlocal;
    lmpi_wait_word_sleepers = word_sleepers;
}

void lmpi_wait_attach_inbox(lmpi_wait_word *inbox) { wt.inbox = inbox; }

void lmpi_wait_detach(void)
{
    lmpi_wait_disarm();
    wt.mine = NULL;
    wt.inbox = NULL;
    wt.word_of = NULL;
    wt.nlocal = 0;
    lmpi_wait_word_sleepers = &no_segment_sleepers;
}

static long futex(lmpi_wait_word *w, int op, uint32_t val, const struct timespec *timeout)
{
    /* not FUTEX_PRIVATE_FLAG: the word is shared between processes */
    return syscall(SYS_futex, (uint32_t *)w, op, val, timeout, NULL, 0);
}

void lmpi_wait_wake(lmpi_wait_word *w)
{
    /* the exchange lets one of several concurrent senders make the call */
    if (atomic_exchange_explicit(w, 0, memory_order_acq_rel) == 0)
        return;
    if (futex(w, FUTEX_WAKE, INT_MAX, NULL) > 0)
        woke_someone = true;
    atomic_fetch_add_explicit(&wt.wakes_sent, 1, memory_order_relaxed);
}

bool lmpi_wait_take_woke(void)
{
    bool w = woke_someone;
    woke_someone = false;
    return w;
}

void lmpi_wait_kick_slow(void)
{
    if (!wt.word_of)
        return;
    atomic_fetch_add_explicit(&wt.kicks, 1, memory_order_relaxed);
    for (int r = 0; r < wt.nlocal; r++) {
        lmpi_wait_word *w = wt.word_of(r);
        if (w != wt.mine && (atomic_load_explicit(w, memory_order_relaxed) & LMPI_WAIT_WORD))
            lmpi_wait_wake(w);
    }
}

void lmpi_wait_wake_local(void)
{
    if (wt.mine)
        lmpi_wait_wake(wt.mine);
}

static void full_fence_for_senders(void)
{
    if (wt.membarrier)
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0);
    else
        atomic_thread_fence(memory_order_seq_cst);
}

bool lmpi_wait_arm(bool word_wait)
{
    if (!wt.mine)
        return false;
    uint32_t kind = LMPI_WAIT_ARMED | (word_wait ? LMPI_WAIT_WORD : 0);
    armed = kind;
    atomic_fetch_add_explicit(&lmpi_wait_local_sleepers, 1, memory_order_relaxed);
    if (word_wait)
        atomic_fetch_add_explicit(lmpi_wait_word_sleepers, 1, memory_order_relaxed);
    atomic_fetch_or_explicit(wt.mine, kind, memory_order_seq_cst);
    if (wt.inbox)
        atomic_store_explicit(wt.inbox, LMPI_WAIT_ARMED, memory_order_seq_cst);
    full_fence_for_senders();
    return true;
}

bool lmpi_wait_armed(void) { return armed != 0; }

void lmpi_wait_disarm(void)
{
    if (!armed)
        return;
    if (armed & LMPI_WAIT_WORD)
        atomic_fetch_sub_explicit(lmpi_wait_word_sleepers, 1, memory_order_relaxed);
    if (atomic_fetch_sub_explicit(&lmpi_wait_local_sleepers, 1, memory_order_relaxed) == 1 && wt.mine) {
        /* (another thread arming meanwhile sees its futex wait return at
         * once and arms again: a spurious round, never a lost wake-up) */
        atomic_store_explicit(wt.mine, 0, memory_order_relaxed);
        if (wt.inbox)
            atomic_store_explicit(wt.inbox, 0, memory_order_relaxed);
    }
    armed = 0;
}

void lmpi_wait_sleep(uint64_t timeout_ns)
{
    uint32_t v = atomic_load_explicit(wt.mine, memory_order_acquire);
    if (!armed || v == 0) { /* woken already */
        lmpi_wait_disarm();
        return;
    }
    struct timespec rel = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    const struct timespec *timeout = timeout_ns ? &rel : NULL;
    atomic_fetch_add_explicit(&wt.sleeps, 1, memory_order_relaxed);
    if (wt.inbox) {
        struct futex_waitv w[2] = {
            {.val = v, .uaddr = (uintptr_t)wt.mine, .flags = FUTEX_32},
            {.val = LMPI_WAIT_ARMED, .uaddr = (uintptr_t)wt.inbox, .flags = FUTEX_32},
        };
        struct timespec abs;
        if (timeout) {
            clock_gettime(CLOCK_MONOTONIC, &abs);
            abs.tv_sec += rel.tv_sec;
            abs.tv_nsec += rel.tv_nsec;
            if (abs.tv_nsec >= 1000000000) {
                abs.tv_sec++;
                abs.tv_nsec -= 1000000000;
            }
        }
        syscall(SYS_futex_waitv, w, 2, 0, timeout ? &abs : NULL, CLOCK_MONOTONIC);
    } else {
        futex(wt.mine, FUTEX_WAIT, v, timeout);
    }
    lmpi_wait_disarm();
}

lmpi_wait_stats lmpi_wait_get_stats(void)
{
    return (lmpi_wait_stats){atomic_load(&wt.sleeps), atomic_load(&wt.wakes_sent), atomic_load(&wt.kicks)};
}
