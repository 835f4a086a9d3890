/* The event-driven wait (wait.h; why and measurements in
 * src/runtime/README.md, "Waiting"). */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime/lmpi.h"
#include "runtime/wait.h"

bool lmpi_wait_sender_fence = true; /* until membarrier is known to work */
static _Atomic uint32_t no_segment_sleepers;
_Atomic uint32_t *lmpi_wait_word_sleepers = &no_segment_sleepers;
_Atomic uint32_t lmpi_wait_local_sleepers;

static struct {
    bool membarrier;
    lmpi_wait_word *mine;
    lmpi_wait_word *(*word_of)(int local);
    lmpi_wait_cond *(*cond_of)(int local);
    lmpi_wait_cond *my_cond;
    char *seg_base;
    size_t seg_size;
    int nlocal;
    lmpi_wait_word *inbox;
    /* the hand-off (wait.h): NULL until the segment has its table */
    _Atomic int32_t *my_wait_cpu;
    _Atomic int32_t *(*wait_cpu_of)(int local);
    _Atomic uint32_t *cpu_slots;
    int ncpus, me;
    _Atomic uint64_t sleeps, wakes_sent, kicks, handoffs, moves;
} wt;

bool lmpi_wait_cpu_published;

/* What this thread armed: 0, or LMPI_WAIT_ARMED with LMPI_WAIT_WORD. */
static _Thread_local uint32_t armed;
/* This thread woke a sleeper since it last asked (lmpi_wait_take_woke). */
static _Thread_local bool woke_someone;

int lmpi_wait_sleep_after_us(int base_us, int local_ranks, long cores)
{
    if (cores <= 0 || local_ranks <= cores)
        return base_us;
    long per_core = (local_ranks + cores - 1) / cores;
    return per_core * 100 > base_us ? (int)(per_core * 100) : base_us;
}

void lmpi_wait_init(void)
{
    /* Registration is per process and cheap; the command it allows costs
     * the sleeper about 1 us (an IPI to each core running one of us). */
    long have = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    wt.membarrier = have > 0 && (have & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
                    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
    lmpi_wait_sender_fence = !wt.membarrier;
}

/* struct sched_attr of <linux/sched/types.h>, which glibc does not
 * declare; the fields up to sched_period are all the kernel needs */
struct lmpi_sched_attr {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
};

bool lmpi_wait_set_slice(unsigned slice_us)
{
    if (slice_us == 0 || sched_getscheduler(0) != SCHED_OTHER) /* batch, idle, real-time: the user's choice */
        return false;
    struct lmpi_sched_attr a = {.size = sizeof a, .sched_policy = SCHED_OTHER};
    a.sched_nice = getpriority(PRIO_PROCESS, 0); /* keep the user's nice */
    a.sched_runtime = (uint64_t)slice_us * 1000u;
    return syscall(SYS_sched_setattr, 0, &a, 0) == 0;
}

void lmpi_wait_attach_node(lmpi_wait_word *mine, _Atomic uint32_t *word_sleepers,
                           lmpi_wait_word *(*word_of)(int local), lmpi_wait_cond *(*cond_of)(int local),
                           int nlocal, int me, char *seg_base, size_t seg_size)
{
    wt.mine = mine;
    wt.word_of = word_of;
    wt.cond_of = cond_of;
    wt.my_cond = cond_of(me);
    wt.seg_base = seg_base;
    wt.seg_size = seg_size;
    wt.nlocal = nlocal;
    lmpi_wait_word_sleepers = word_sleepers;
}

void lmpi_wait_attach_cpus(_Atomic int32_t *my_wait_cpu, _Atomic int32_t *(*wait_cpu_of)(int local),
                           _Atomic uint32_t *cpu_slots, int ncpus, int me)
{
    wt.my_wait_cpu = my_wait_cpu;
    wt.wait_cpu_of = wait_cpu_of;
    wt.cpu_slots = cpu_slots;
    wt.ncpus = ncpus;
    wt.me = me;
}

bool lmpi_wait_core_shared(void)
{
    if (!wt.cpu_slots)
        return false;
    int cpu = sched_getcpu(); /* glibc reads it from rseq: no system call */
    if (cpu < 0 || cpu >= wt.ncpus)
        return false;
    if (atomic_load_explicit(wt.my_wait_cpu, memory_order_relaxed) != cpu + 1)
        atomic_store_explicit(wt.my_wait_cpu, cpu + 1, memory_order_relaxed);
    lmpi_wait_cpu_published = true;
    _Atomic uint32_t *slot = &wt.cpu_slots[cpu];
    uint32_t last = atomic_load_explicit(slot, memory_order_relaxed);
    if (last == (uint32_t)wt.me + 1)
        return false;
    /* we are the latest waiter here: a rank that lets us in finds us */
    atomic_store_explicit(slot, (uint32_t)wt.me + 1, memory_order_relaxed);
    if (last == 0 || (int)last > wt.nlocal)
        return false;
    /* the one before us: still waiting on this processor, and awake (not
     * armed), so runnable here and not running */
    int r = (int)last - 1;
    if (atomic_load_explicit(wt.wait_cpu_of(r), memory_order_relaxed) != cpu + 1 ||
        atomic_load_explicit(wt.word_of(r), memory_order_relaxed) != 0)
        return false;
    atomic_fetch_add_explicit(&wt.handoffs, 1, memory_order_relaxed);
    return true;
}

/* Moving away (wait.h): when this thread last tried, and the processors
 * it may run on, read at each try (a rank bound to one processor by
 * --bind-to core, a user's taskset or the application never moves). */
#define MOVE_INTERVAL_NS 20000000u
static _Thread_local struct {
    cpu_set_t allowed;
    uint64_t last_ns;
} mv;

/* A processor we may use on which no local rank waits (its slot names
 * nobody, or a rank now elsewhere), looking from the one after ours. */
static int free_cpu(int cur)
{
    for (int i = 1; i < wt.ncpus && i < CPU_SETSIZE; i++) {
        int c = (cur + i) % wt.ncpus;
        if (!CPU_ISSET(c, &mv.allowed))
            continue;
        uint32_t s = atomic_load_explicit(&wt.cpu_slots[c], memory_order_relaxed);
        if (s == 0 || (int)s > wt.nlocal ||
            atomic_load_explicit(wt.wait_cpu_of((int)s - 1), memory_order_relaxed) != c + 1)
            return c;
    }
    return -1;
}

bool lmpi_wait_move_away(void)
{
    if (!wt.cpu_slots)
        return false;
    uint64_t t = lmpi_now_ns();
    if (mv.last_ns && t - mv.last_ns < MOVE_INTERVAL_NS)
        return false;
    mv.last_ns = t;
    if (sched_getaffinity(0, sizeof(mv.allowed), &mv.allowed) != 0 || CPU_COUNT(&mv.allowed) < 2)
        return false;
    int cur = sched_getcpu();
    int to = cur < 0 ? -1 : free_cpu(cur);
    if (to < 0)
        return false;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(to, &one);
    /* pinning moves us at once; the mask given back lets the scheduler
     * balance again from there */
    if (sched_setaffinity(0, sizeof(one), &one) != 0)
        return false;
    sched_setaffinity(0, sizeof(mv.allowed), &mv.allowed);
    atomic_fetch_add_explicit(&wt.moves, 1, memory_order_relaxed);
    int now_cpu = sched_getcpu();
    if (now_cpu >= 0 && now_cpu < wt.ncpus) {
        atomic_store_explicit(wt.my_wait_cpu, now_cpu + 1, memory_order_relaxed);
        atomic_store_explicit(&wt.cpu_slots[now_cpu], (uint32_t)wt.me + 1, memory_order_relaxed);
    }
    return true;
}

void lmpi_wait_unpublish_cpu(void)
{
    lmpi_wait_cpu_published = false;
    if (wt.my_wait_cpu)
        atomic_store_explicit(wt.my_wait_cpu, 0, memory_order_relaxed);
}

void lmpi_wait_attach_inbox(lmpi_wait_word *inbox) { wt.inbox = inbox; }

void lmpi_wait_detach(void)
{
    lmpi_wait_disarm();
    wt.mine = NULL;
    wt.inbox = NULL;
    wt.word_of = NULL;
    wt.cond_of = NULL;
    wt.my_cond = NULL;
    wt.seg_base = NULL;
    wt.nlocal = 0;
    lmpi_wait_unpublish_cpu();
    wt.my_wait_cpu = NULL;
    wt.wait_cpu_of = NULL;
    wt.cpu_slots = NULL;
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
        /* acquire, paired with the arming's read-modify-write: the sleeper
         * wrote its condition before it armed and fenced, so what we read is
         * the condition it sleeps on, or it saw our word in its last look */
        if (w == wt.mine || !(atomic_load_explicit(w, memory_order_acquire) & LMPI_WAIT_WORD))
            continue;
        lmpi_wait_cond *c = wt.cond_of(r);
        uint64_t off = atomic_load_explicit(&c->off, memory_order_relaxed);
        if (off && atomic_load_explicit((_Atomic uint64_t *)(wt.seg_base + off), memory_order_relaxed) <
                       atomic_load_explicit(&c->value, memory_order_relaxed))
            continue; /* its word has not arrived */
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

bool lmpi_wait_arm(bool word_wait, const _Atomic uint64_t *until, uint64_t until_value)
{
    if (!wt.mine)
        return false;
    if (word_wait) {
        uintptr_t off = (uintptr_t)until - (uintptr_t)wt.seg_base;
        bool named = until && off > 0 && off + 8 <= wt.seg_size;
        atomic_store_explicit(&wt.my_cond->value, until_value, memory_order_relaxed);
        atomic_store_explicit(&wt.my_cond->off, named ? (uint64_t)off : 0, memory_order_relaxed);
    }
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
    return (lmpi_wait_stats){atomic_load(&wt.sleeps), atomic_load(&wt.wakes_sent), atomic_load(&wt.kicks),
                             atomic_load(&wt.handoffs), atomic_load(&wt.moves)};
}
