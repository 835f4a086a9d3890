/* The event-driven wait: a rank that has spun for its budget sleeps in the
 * kernel on a futex word of its own in the node's segment, and whoever hands
 * it work (a packet in a fast box or a cell, a cell given back, a word of a
 * shared collective area or window, another thread's completion) wakes it.
 *
 * The ordering problem is Dekker's: the sleeper stores "armed" and then
 * looks for work; a sender stores work and then looks at "armed".  Each
 * side needs a full fence between its store and its load.  The sleeper's
 * side is the rare one, so it pays for both: membarrier(GLOBAL_EXPEDITED)
 * makes every running thread of every registered process execute a full
 * fence, and a sender pays one load and a predicted branch (a compiler
 * barrier only).  Where the kernel refuses membarrier, senders fall back to
 * a real fence (lmpi_wait_sender_fence).
 *
 * Word values: 0 awake; bit 0 armed (someone of this process may sleep on
 * it); bit 1 a word wait (a wait on a shared word that is not a packet:
 * writers of such words kick, below). */
#ifndef LMPI_WAIT_H
#define LMPI_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef _Atomic uint32_t lmpi_wait_word;

#define LMPI_WAIT_ARMED 1u
#define LMPI_WAIT_WORD 2u

/* Set at start-up when membarrier is unavailable. */
extern bool lmpi_wait_sender_fence;
/* The node's count of ranks asleep in a word wait: a zero word of our own
 * until the segment exists (so the check never needs a NULL test). */
extern _Atomic uint32_t *lmpi_wait_word_sleepers;
/* Threads of this process that are armed (MPI_THREAD_MULTIPLE: another
 * thread's completion must wake them). */
extern _Atomic uint32_t lmpi_wait_local_sleepers;

void lmpi_wait_init(void);
/* How long (us) a waiter spins and yields before it sleeps: BASE_US, or
 * 100 us per rank a core where that is longer (a yield comes back only
 * after every rank sharing the core had a turn). */
int lmpi_wait_sleep_after_us(int base_us, int local_ranks, long cores);
/* Ask the scheduler for a time slice of SLICE_US for the calling thread
 * (EEVDF's custom slices, Linux 6.12 and later; older kernels ignore it).
 * A task with a shorter slice gets an earlier deadline, so a rank woken by
 * its message preempts a busy process at once instead of waiting out that
 * process's slice (1.4 ms by default on this 2-core machine); the
 * processor share stays the same.
 * False where refused or SLICE_US is 0. */
bool lmpi_wait_set_slice(unsigned slice_us);
/* What a rank asleep in a word wait waits for, published beside its word:
 * the word at byte offset OFF of the node's segment reaching VALUE (0: any
 * word; it is woken by every kick).  A kick wakes only the sleepers whose
 * word has arrived: in a k-member collective a waiter is woken by the
 * member it waits for, not by each of the k-1 (a herd of wake-ups, each a
 * context switch, with more ranks than cores). */
typedef struct {
    _Atomic uint64_t off;
    _Atomic uint64_t value;
} lmpi_wait_cond;

/* The segment's words: this rank's own, the node's word-sleeper count, and
 * the way to reach every local rank's word and condition (for kicks); the
 * segment's mapping (conditions name words by offset). */
void lmpi_wait_attach_node(lmpi_wait_word *mine, _Atomic uint32_t *word_sleepers,
                           lmpi_wait_word *(*word_of)(int local), lmpi_wait_cond *(*cond_of)(int local),
                           int nlocal, int me, char *seg_base, size_t seg_size);
/* Sharing a core with a local rank (the hand-off, below): where this rank
 * publishes the processor it waits on (+1; 0: not waiting), the same for every
 * local rank, and the node's table of one slot per processor naming the
 * local rank (+1) that last published a wait there. */
void lmpi_wait_attach_cpus(_Atomic int32_t *my_wait_cpu, _Atomic int32_t *(*wait_cpu_of)(int local),
                           _Atomic uint32_t *cpu_slots, int ncpus, int me);
/* The bridge's inbox word: foreign senders wake it (futex_waitv on both). */
void lmpi_wait_attach_inbox(lmpi_wait_word *inbox);
void lmpi_wait_detach(void);

/* Out of line: clear the word and wake everyone sleeping on it. */
void lmpi_wait_wake(lmpi_wait_word *w);
void lmpi_wait_kick_slow(void);
void lmpi_wait_wake_local(void);

static inline void lmpi_wait_sender_barrier(void)
{
    if (__builtin_expect(lmpi_wait_sender_fence, 0))
        atomic_thread_fence(memory_order_seq_cst);
    else
        atomic_signal_fence(memory_order_seq_cst);
}

/* After handing the owner of W work in shared memory: wake it if it sleeps. */
static inline void lmpi_wait_notify(lmpi_wait_word *w)
{
    lmpi_wait_sender_barrier();
    if (__builtin_expect(atomic_load_explicit(w, memory_order_relaxed) != 0, 0))
        lmpi_wait_wake(w);
}

/* After writing words of shared areas that other ranks may wait on
 * (collectives' flags, windows' synchronization words): wake the node's
 * word sleepers, if any.  Called at every MPI call's exit and when a wait
 * starts, so a writer need not know who reads. */
static inline void lmpi_wait_kick(void)
{
    lmpi_wait_sender_barrier();
    if (__builtin_expect(atomic_load_explicit(lmpi_wait_word_sleepers, memory_order_relaxed) != 0, 0))
        lmpi_wait_kick_slow();
}

/* The sleeper's side (progress.c).  arm publishes the intent to sleep and
 * fences; the caller then looks for work once more; sleep blocks unless
 * woken meanwhile (timeout_ns 0: no timeout), the big lock let go by the
 * caller.  arm returns false without a segment to sleep on.  A word wait
 * for one word of the segment names it (UNTIL, reaching UNTIL_VALUE; a
 * word that only grows), else UNTIL is NULL. */
bool lmpi_wait_arm(bool word_wait, const _Atomic uint64_t *until, uint64_t until_value);
bool lmpi_wait_armed(void);
void lmpi_wait_sleep(uint64_t timeout_ns);
void lmpi_wait_disarm(void);
/* Did this thread wake a sleeper since it last asked?  (The scheduler
 * tends to put the woken process on the waker's core: spinning there
 * would keep it off.) */
bool lmpi_wait_take_woke(void);

/* The hand-off.  Two ranks of a node that the scheduler put on one
 * processor cannot both run: a waiter that spins there only delays the
 * rank it waits for, by its whole spin budget per message (the 50 us mode
 * of issue 40).  At each clock read of its spin a waiter publishes its
 * processor and asks whether another local rank waits, awake, on the same
 * one; that rank is then runnable but not running (we are), so the waiter
 * sleeps on its word at once and lets it in.  Published until the MPI
 * call's exit (lmpi_wait_leave_call). */
bool lmpi_wait_core_shared(void);
/* Before handing off: move this thread to a processor of its affinity
 * mask on which no local rank waits (pinned there for an instant, then
 * the mask given back), at most every 20 ms; false where it cannot (bound
 * to one processor, none free).  A hand-off keeps two ranks on one
 * processor comfortable enough that the scheduler never separates them. */
bool lmpi_wait_move_away(void);
extern bool lmpi_wait_cpu_published;
void lmpi_wait_unpublish_cpu(void);
static inline void lmpi_wait_leave_call(void)
{
    if (__builtin_expect(lmpi_wait_cpu_published, 0))
        lmpi_wait_unpublish_cpu();
}

/* Counters for the showcase, tests and bench (process-wide). */
typedef struct {
    uint64_t sleeps, wakes_sent, kicks, handoffs, moves;
} lmpi_wait_stats;
lmpi_wait_stats lmpi_wait_get_stats(void);

#endif
