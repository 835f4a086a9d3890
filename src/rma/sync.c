/* Epochs: fence (barrier or reduce-scatter), post/start/complete/wait/test,
 * lock/unlock (a lock word per target plus an MCS queue, or polling),
 * lock_all (one atomic on the window-wide word), flushes and sync. */
#include <stdlib.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "rma/win.h"
#include "runtime/config.h"
#include "runtime/request.h"

enum { TAG_POST = 1, TAG_COMPLETE = 2 };

static bool open_for_other_epoch(const lmpi_win *w)
{
    /* a fence epoch ends implicitly when another kind starts (as in MPICH):
     * fences leave it "open" unless the user said MPI_MODE_NOSUCCEED */
    return w->access == LMPI_EPOCH_NONE || (w->access == LMPI_EPOCH_FENCE && lmpi_win_pending(w) == 0);
}

static const char *epoch_name(uint8_t a);

/* What lock_all and start check first: asserts they know, no other epoch
 * open (MPI_ERR_RMA_SYNC, as MPICH answers: the calls are out of order). */
static lmpi_status begin_access(lmpi_win *w, int assert)
{
    if (assert & ~MPI_MODE_NOCHECK) {
        lmpi_err_detail("assert %d has bits other than MPI_MODE_NOCHECK", assert);
        return LMPI_ERR_ASSERT;
    }
    if (!open_for_other_epoch(w)) {
        lmpi_err_detail("a %s epoch is open on win", epoch_name(w->access));
        return LMPI_ERR_RMA_SYNC;
    }
    return LMPI_OK;
}

static const char *epoch_name(uint8_t a)
{
    switch (a) {
    case LMPI_EPOCH_FENCE: return "fence";
    case LMPI_EPOCH_START: return "start (PSCW)";
    case LMPI_EPOCH_LOCK: return "lock";
    case LMPI_EPOCH_LOCK_ALL: return "lock_all";
    default: return "no";
    }
}

/* ---- locks ---------------------------------------------------------------------- */

/* One attempt: exclusive is a CAS from 0, then a look at the window-wide
 * lock_all word (a holder there wins: we step back); shared is one add.
 * LOCKED, NOT_YET, or BROKEN (a member failed while we stepped back). */
enum { NOT_YET, LOCKED, BROKEN };
static int try_lock(lmpi_win *w, lmpi_win_slot *s, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE) {
        uint64_t z = 0;
        if (!atomic_compare_exchange_strong(&s->lock, &z, LMPI_RMA_EXCL))
            return NOT_YET;
        if (atomic_load(&w->seg->all_word) == 0)
            return LOCKED;
        atomic_fetch_sub(&s->lock, LMPI_RMA_EXCL);
        unsigned spins = 0;
        while (atomic_load(&w->seg->all_word) != 0)
            if (!lmpi_rma_relax(w, &spins))
                return BROKEN;
        return NOT_YET;
    }
    uint64_t v = atomic_fetch_add(&s->lock, 1);
    if (!(v & LMPI_RMA_EXCL))
        return LOCKED;
    atomic_fetch_sub(&s->lock, 1);
    return NOT_YET;
}

/* Until try_lock says LOCKED (LMPI_OK) or the window broke. */
static lmpi_status retry_lock(lmpi_win *w, lmpi_win_slot *s, int type, unsigned *spins)
{
    for (;;) {
        int r = try_lock(w, s, type);
        if (r == LOCKED)
            return LMPI_OK;
        if (r == BROKEN)
            return lmpi_rma_broken(w);
        LMPI_RMA_WAIT(w, spins);
    }
}

static lmpi_status acquire(lmpi_win *w, int target, int type)
{
    if (w->am)
        return lmpi_rma_am_lock(w, target, type);
    lmpi_win_slot *s = lmpi_win_slot_of(w, target);
    int first = try_lock(w, s, type);
    if (first != NOT_YET)
        return first == LOCKED ? LMPI_OK : lmpi_rma_broken(w);
    lmpi_rma_stat.lock_waits++;
    unsigned spins = 0;
    if (w->polling)
        return retry_lock(w, s, type, &spins);
    /* MCS: queue behind the last waiter and spin on our own node; only the
     * head of the queue retries the target's lock word */
    lmpi_win_slot *me = lmpi_win_slot_of(w, w->rank);
    atomic_store(&me->q_next, 0);
    atomic_store(&me->q_wait, 1);
    uint32_t prev = atomic_exchange(&s->mcs_tail, (uint32_t)w->rank + 1);
    if (prev) {
        atomic_store(&lmpi_win_slot_of(w, (int)prev - 1)->q_next, (uint32_t)w->rank + 1);
        while (atomic_load_explicit(&me->q_wait, memory_order_acquire))
            LMPI_RMA_WAIT(w, &spins);
    }
    LMPI_TRY(retry_lock(w, s, type, &spins));
    /* pass the head on */
    uint32_t mine = (uint32_t)w->rank + 1;
    if (!atomic_compare_exchange_strong(&s->mcs_tail, &mine, 0)) {
        uint32_t next;
        while (!(next = atomic_load_explicit(&me->q_next, memory_order_acquire)))
            LMPI_RMA_WAIT(w, &spins);
        atomic_store_explicit(&lmpi_win_slot_of(w, (int)next - 1)->q_wait, 0, memory_order_release);
    }
    return LMPI_OK;
}

static void release(lmpi_win *w, int target, int type)
{
    if (w->am) {
        lmpi_rma_am_unlock(w, target, type);
        return;
    }
    lmpi_win_slot *s = lmpi_win_slot_of(w, target);
    atomic_fetch_sub_explicit(&s->lock, type == MPI_LOCK_EXCLUSIVE ? LMPI_RMA_EXCL : 1, memory_order_release);
}

lmpi_win_held *lmpi_win_hold(lmpi_win *w)
{
    if (w->nheld == w->held_cap) {
        int cap = w->held_cap ? 2 * w->held_cap : 4;
        lmpi_win_held *h = lmpi_realloc(w->held, (size_t)cap * sizeof(*h), LMPI_MEM_RMA);
        if (!h)
            return NULL;
        w->held = h;
        w->held_cap = cap;
    }
    return &w->held[w->nheld++];
}

static lmpi_win_held *held_of(lmpi_win *w, int rank)
{
    for (int i = 0; i < w->nheld; i++)
        if (w->held[i].rank == rank)
            return &w->held[i];
    return NULL;
}

/* ---- PSCW channels ------------------------------------------------------------ */

/* Publish this member's exposure: the group inline when it fits, else -1
 * (the members learn it from messages). */
static void post_line(lmpi_win *w, const int *ranks, int n)
{
    lmpi_win_slot *me = lmpi_win_slot_of(w, w->rank);
    uint32_t g = atomic_load_explicit(&me->post_gen, memory_order_relaxed);
    atomic_store_explicit(&me->post_gen, g + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&me->post_done, 0, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        atomic_store_explicit(&me->post_members[i], ranks[i], memory_order_relaxed);
    atomic_store_explicit(&me->post_n, n <= LMPI_RMA_POST_INLINE ? n : -1, memory_order_relaxed);
    atomic_store_explicit(&me->post_gen, g + 2, memory_order_release);
}

enum { LINE_NOT_YET = -3, LINE_MESSAGES = -1 };

/* Target T's exposure as this member sees it: its index in the inline group
 * (posted, not yet completed by it), LINE_MESSAGES, or LINE_NOT_YET. */
static int read_line(lmpi_win *w, int t)
{
    if (w->am) /* nobody's line is in reach: posts are messages */
        return LINE_MESSAGES;
    lmpi_win_slot *s = lmpi_win_slot_of(w, t);
    uint32_t g1 = atomic_load_explicit(&s->post_gen, memory_order_acquire);
    if (g1 & 1)
        return LINE_NOT_YET;
    int n = atomic_load_explicit(&s->post_n, memory_order_relaxed), found = LINE_NOT_YET;
    if (n < 0) {
        found = LINE_MESSAGES;
    } else {
        uint32_t done = atomic_load_explicit(&s->post_done, memory_order_relaxed);
        for (int i = 0; i < n && i < LMPI_RMA_POST_INLINE; i++)
            if (atomic_load_explicit(&s->post_members[i], memory_order_relaxed) == w->rank && !(done & (1u << i)))
                found = i;
    }
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&s->post_gen, memory_order_relaxed) == g1 ? found : LINE_NOT_YET;
}

/* Wait for T's post to this member; *how: the line index, or -1 (a message). */
static lmpi_status wait_post(lmpi_win *w, int t, int *how)
{
    unsigned spins = 0;
    for (;;) {
        int r = read_line(w, t);
        if (r >= 0) {
            *how = r;
            return LMPI_OK;
        }
        if (r == LINE_MESSAGES) { /* a stale -1 (a post already taken) has no message: keep looking */
            int flag = 0;
            LMPI_TRY(lmpi_impl_Iprobe(t, TAG_POST, w->comm, &flag, MPI_STATUS_IGNORE));
            if (flag) {
                *how = -1;
                return lmpi_impl_Recv(NULL, 0, lmpi_datatype_from_handle(MPI_BYTE), t, TAG_POST, w->comm,
                                      MPI_STATUS_IGNORE);
            }
        }
        LMPI_RMA_WAIT(w, &spins);
    }
}

/* Tell T this member's accesses are done (after them: a release RMW). */
static lmpi_status complete_to(lmpi_win *w, int t, int how)
{
    if (how == -2) { /* started with MPI_MODE_NOCHECK: T has posted, see how */
        int r = read_line(w, t);
        how = r >= 0 ? r : -1;
    }
    if (how >= 0) {
        atomic_fetch_or_explicit(&lmpi_win_slot_of(w, t)->post_done, 1u << how, memory_order_acq_rel);
        return LMPI_OK;
    }
    return lmpi_impl_Send(NULL, 0, lmpi_datatype_from_handle(MPI_BYTE), t, TAG_COMPLETE, w->comm);
}

lmpi_status lmpi_rma_open_target(lmpi_win *w, int target)
{
    unsigned spins = 0;
    switch (w->access) {
    case LMPI_EPOCH_LOCK: {
        lmpi_win_held *h = held_of(w, target);
        if (h && !h->acquired && !h->nocheck) {
            LMPI_TRY(acquire(w, target, h->type));
            h->acquired = true;
        }
        break;
    }
    case LMPI_EPOCH_LOCK_ALL:
        if (w->am)
            return lmpi_rma_am_open(w, target);
        if (w->open_pending) {
            atomic_fetch_add(&w->seg->all_word, 1);
            w->open_pending = false;
        }
        /* an exclusive holder that came first keeps the target until it unlocks */
        while (atomic_load(&lmpi_win_slot_of(w, target)->lock) & LMPI_RMA_EXCL)
            LMPI_RMA_WAIT(w, &spins);
        break;
    case LMPI_EPOCH_START:
        if (w->open_pending) {
            for (int i = 0; i < w->nstart; i++)
                LMPI_TRY(wait_post(w, w->start_ranks[i], &w->start_ranks[w->nstart + i]));
            w->open_pending = false;
        }
        break;
    case LMPI_EPOCH_FENCE:
        if (w->rs_counts) /* reduce-scatter fence: the target must have come out of its fence */
            while (atomic_load_explicit(&lmpi_win_slot_of(w, target)->fence_open, memory_order_acquire) < w->fences)
                LMPI_RMA_WAIT(w, &spins);
        break;
    default:
        break;
    }
    return LMPI_OK;
}


lmpi_status lmpi_impl_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE) {
        lmpi_err_detail("lock_type %d is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE", lock_type);
        return lmpi_win_fail(w, LMPI_ERR_LOCKTYPE);
    }
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size)) {
        lmpi_err_detail("rank %d is not in the window's group of %d", rank, w->size);
        return lmpi_win_fail(w, LMPI_ERR_RANK);
    }
    if (assert & ~MPI_MODE_NOCHECK) {
        lmpi_err_detail("assert %d has bits other than MPI_MODE_NOCHECK", assert);
        return lmpi_win_fail(w, LMPI_ERR_ASSERT);
    }
    if (w->access != LMPI_EPOCH_LOCK && !open_for_other_epoch(w)) {
        /* MPI_ERR_RMA_SYNC as MPICH answers (after post or a fence, as there, a lock is fine) */
        lmpi_err_detail("a %s epoch is open on win", epoch_name(w->access));
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    if (w->no_locks) {
        lmpi_err_detail("win was created with info no_locks=true");
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    if (rank == MPI_PROC_NULL)
        return LMPI_OK;
    if (held_of(w, rank)) {
        lmpi_err_detail("rank %d is locked already by this process", rank);
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    lmpi_win_held *h = lmpi_win_hold(w);
    if (!h)
        return lmpi_win_fail(w, LMPI_ERR_NO_MEM);
    *h = (lmpi_win_held){.rank = rank, .type = lock_type, .nocheck = (assert & MPI_MODE_NOCHECK) != 0};
    w->access = LMPI_EPOCH_LOCK;
    if (!w->delayed && !h->nocheck) {
        lmpi_status st = acquire(w, rank, lock_type);
        if (st != LMPI_OK) { /* no epoch was opened */
            if (--w->nheld == 0)
                w->access = LMPI_EPOCH_NONE;
            return lmpi_win_fail(w, st);
        }
        h->acquired = true;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_unlock(int rank, MPI_Win win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    if (rank == MPI_PROC_NULL)
        return LMPI_OK;
    lmpi_win_held *h = w->access == LMPI_EPOCH_LOCK ? held_of(w, rank) : NULL;
    if (!h) {
        lmpi_err_detail("rank %d is not locked by this process", rank);
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    lmpi_status st = lmpi_win_pending(w) ? lmpi_rma_drain(w) : LMPI_OK;
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    /* the release (an atomic read-modify-write) orders the epoch's stores */
    if (h->acquired)
        release(w, rank, h->type);
    if (w->am) /* the operations and the release answered */
        st = lmpi_rma_am_quiet(w);
    *h = w->held[--w->nheld];
    if (w->nheld == 0)
        w->access = LMPI_EPOCH_NONE;
    return lmpi_win_fail(w, st);
}

lmpi_status lmpi_impl_Win_lock_all(int assert, MPI_Win win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    lmpi_status st = begin_access(w, assert);
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    if (w->no_locks) {
        lmpi_err_detail("win was created with info no_locks=true");
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    w->access = LMPI_EPOCH_LOCK_ALL;
    w->lock_all_nocheck = (assert & MPI_MODE_NOCHECK) != 0;
    w->open_pending = !w->lock_all_nocheck && !w->am; /* in messages: per target, at its first operation */
    if (!w->delayed && w->open_pending) {
        atomic_fetch_add(&w->seg->all_word, 1);
        w->open_pending = false;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_unlock_all(MPI_Win win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    if (w->access != LMPI_EPOCH_LOCK_ALL) {
        lmpi_err_detail("win has no lock_all epoch (%s epoch open)", epoch_name(w->access));
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    lmpi_status st = lmpi_win_pending(w) ? lmpi_rma_drain(w) : LMPI_OK;
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    atomic_thread_fence(memory_order_release);
    if (w->am) {
        for (int i = 0; i < w->nheld; i++)
            release(w, w->held[i].rank, w->held[i].type);
        w->nheld = 0;
        st = lmpi_rma_am_quiet(w);
    } else if (!w->lock_all_nocheck && !w->open_pending) {
        atomic_fetch_sub(&w->seg->all_word, 1);
    }
    w->open_pending = false;
    w->access = LMPI_EPOCH_NONE;
    return lmpi_win_fail(w, st);
}

/* ---- flushes -------------------------------------------------------------------- */

static lmpi_status flush(MPI_Win win, int rank, bool one)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    if (w->access != LMPI_EPOCH_LOCK && w->access != LMPI_EPOCH_LOCK_ALL) {
        lmpi_err_detail("flushes need a passive-target epoch (lock or lock_all); win has a %s epoch",
                        epoch_name(w->access));
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    if (one && rank != MPI_PROC_NULL) {
        if (rank < 0 || rank >= w->size) {
            lmpi_err_detail("rank %d is not in the window's group of %d", rank, w->size);
            return lmpi_win_fail(w, LMPI_ERR_RANK);
        }
        if (w->access == LMPI_EPOCH_LOCK && !held_of(w, rank)) {
            lmpi_err_detail("rank %d is not locked by this process", rank);
            return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
        }
    }
    /* eager operations are complete when issued (stores done, atomics
     * done, cross-memory writes returned): a flush drains the delayed ones
     * and keeps the compiler from moving the epoch's accesses past it; the
     * synchronization that makes them visible to the target (a lock release,
     * a message, a barrier) is an atomic read-modify-write that orders them */
    lmpi_status st = lmpi_win_pending(w) ? lmpi_rma_drain(w) : LMPI_OK;
    if (st == LMPI_OK && w->am) /* every target answered (one count per window: all of them) */
        st = lmpi_rma_am_quiet(w);
    atomic_thread_fence(memory_order_acq_rel);
    return lmpi_win_fail(w, st);
}

lmpi_status lmpi_impl_Win_flush(int rank, MPI_Win win) { return flush(win, rank, true); }
lmpi_status lmpi_impl_Win_flush_local(int rank, MPI_Win win) { return flush(win, rank, true); }
lmpi_status lmpi_impl_Win_flush_all(MPI_Win win) { return flush(win, 0, false); }
lmpi_status lmpi_impl_Win_flush_local_all(MPI_Win win) { return flush(win, 0, false); }

lmpi_status lmpi_impl_Win_sync(MPI_Win win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    if (w->am) /* in messages, others' operations land when this process polls */
        lmpi_progress_poll();
    atomic_thread_fence(memory_order_seq_cst);
    return LMPI_OK;
}

/* ---- fence ---------------------------------------------------------------------- */

/* The paper's reduce-scatter fence: every member learns how many operations
 * target it, the buffered ones go out, and it waits until that many landed. */
static lmpi_status rs_fence(lmpi_win *w, int assert)
{
    if (w->access == LMPI_EPOCH_FENCE && !(assert & MPI_MODE_NOPRECEDE)) {
        uint32_t expected = 0;
        LMPI_TRY(lmpi_impl_Reduce_scatter_block(w->rs_counts, &expected, 1, lmpi_datatype_from_handle(MPI_UINT32_T),
                                                MPI_SUM, w->comm));
        LMPI_TRY(lmpi_rma_drain(w));
        lmpi_win_slot *me = lmpi_win_slot_of(w, w->rank);
        unsigned spins = 0;
        while (atomic_load_explicit(&me->landed, memory_order_acquire) < expected)
            LMPI_RMA_WAIT(w, &spins);
        atomic_fetch_sub(&me->landed, expected);
        memset(w->rs_counts, 0, (size_t)w->size * sizeof(uint32_t));
    }
    w->fences++;
    atomic_store_explicit(&lmpi_win_slot_of(w, w->rank)->fence_open, w->fences, memory_order_release);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_fence(int assert, MPI_Win win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    if (assert & ~(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)) {
        lmpi_err_detail("assert %d has bits no fence knows", assert);
        return lmpi_win_fail(w, LMPI_ERR_ASSERT);
    }
    if ((w->access != LMPI_EPOCH_NONE && w->access != LMPI_EPOCH_FENCE) || w->exposure) {
        lmpi_err_detail("a %s epoch is open on win", w->exposure ? "post (exposure)" : epoch_name(w->access));
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    lmpi_status st;
    if (w->rs_counts) {
        st = rs_fence(w, assert);
    } else {
        st = lmpi_rma_drain(w);
        if (st == LMPI_OK && w->am) /* ours are done at their targets before we enter the barrier */
            st = lmpi_rma_am_quiet(w);
        /* nothing before and nothing after: no synchronization at all */
        if (st == LMPI_OK && (assert & (MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)) !=
                                 (MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)) {
            atomic_thread_fence(memory_order_seq_cst);
            if (w->am)
                st = lmpi_impl_Barrier(w->comm);
            else
                st = lmpi_win_barrier(w);
        }
        w->fences++;
    }
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    w->access = (assert & MPI_MODE_NOSUCCEED) ? LMPI_EPOCH_NONE : LMPI_EPOCH_FENCE;
    return LMPI_OK;
}

/* ---- post / start / complete / wait ------------------------------------------ */

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The group's members as window ranks (sorted), or an error naming it; room
 * for as many ints again behind them (Win_start's "how opened"). */
static lmpi_status group_ranks(lmpi_win *w, MPI_Group group, int **out, int *n)
{
    lmpi_group *g;
    LMPI_TRY(lmpi_group_from_handle(group, &g, "group"));
    int *ranks = lmpi_malloc((size_t)(2 * g->size + 1) * sizeof(int), LMPI_MEM_RMA);
    if (!ranks)
        return LMPI_ERR_NO_MEM;
    bool sorted = true;
    for (int i = 0; i < g->size; i++) {
        ranks[i] = lmpi_rankmap_find(&w->comm->map, lmpi_rankmap_gpid(&g->map, i));
        if (ranks[i] < 0) {
            lmpi_err_detail("group member %d is not in the window's group", i);
            lmpi_free(ranks);
            return LMPI_ERR_GROUP;
        }
        sorted &= i == 0 || ranks[i] > ranks[i - 1];
    }
    if (!sorted)
        qsort(ranks, (size_t)g->size, sizeof(int), cmp_int);
    *out = ranks;
    *n = g->size;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    if (assert & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT)) {
        lmpi_err_detail("assert %d has bits no post knows", assert);
        return lmpi_win_fail(w, LMPI_ERR_ASSERT);
    }
    if (w->exposure || (w->access == LMPI_EPOCH_FENCE && lmpi_win_pending(w))) {
        lmpi_err_detail("win has an open %s epoch", w->exposure ? "post (exposure)" : "fence");
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    int *ranks, n;
    lmpi_status st = group_ranks(w, group, &ranks, &n);
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    /* the line (or the messages) go out after this member's own accesses */
    atomic_thread_fence(memory_order_seq_cst);
    post_line(w, ranks, n);
    bool messages = n > LMPI_RMA_POST_INLINE || w->am;
    for (int i = 0; st == LMPI_OK && messages && i < n && !(assert & MPI_MODE_NOCHECK); i++)
        st = lmpi_impl_Send(NULL, 0, lmpi_datatype_from_handle(MPI_BYTE), ranks[i], TAG_POST, w->comm);
    lmpi_free(ranks);
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    if (w->access == LMPI_EPOCH_FENCE)
        w->access = LMPI_EPOCH_NONE;
    w->exposure = true;
    w->npost = n;
    w->post_done = 0;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    lmpi_status st = begin_access(w, assert);
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    int *ranks, n;
    st = group_ranks(w, group, &ranks, &n);
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    for (int i = 0; i < n; i++)
        ranks[n + i] = -2; /* not opened yet (MPI_MODE_NOCHECK: never waited for) */
    w->start_ranks = ranks;
    w->nstart = n;
    w->access = LMPI_EPOCH_START;
    w->open_pending = !(assert & MPI_MODE_NOCHECK);
    if (!w->delayed && w->open_pending)
        st = lmpi_rma_open_target(w, -1);
    return lmpi_win_fail(w, st);
}

lmpi_status lmpi_impl_Win_complete(MPI_Win win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    if (w->access != LMPI_EPOCH_START) {
        lmpi_err_detail("win has no start epoch (%s epoch open)", epoch_name(w->access));
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    lmpi_status st = lmpi_rma_drain(w);
    if (st == LMPI_OK && w->open_pending) /* no operations: the posts still have to be taken */
        st = lmpi_rma_open_target(w, -1);
    if (st == LMPI_OK && w->am) /* gets answered; the completes then follow our operations */
        st = lmpi_rma_am_quiet(w);
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; st == LMPI_OK && i < w->nstart; i++)
        st = complete_to(w, w->start_ranks[i], w->start_ranks[w->nstart + i]);
    lmpi_free(w->start_ranks);
    w->start_ranks = NULL;
    w->nstart = 0;
    w->access = LMPI_EPOCH_NONE;
    return lmpi_win_fail(w, st);
}

/* Completes come only from the post group: an origin sends its next one only
 * after our next post. */
static lmpi_status take_completes(lmpi_win *w, bool block)
{
    lmpi_win_slot *me = lmpi_win_slot_of(w, w->rank);
    if (w->npost <= LMPI_RMA_POST_INLINE && !w->am) { /* the group's bits in our own line */
        uint32_t all = w->npost == 32 ? ~0u : (1u << w->npost) - 1;
        unsigned spins = 0;
        while (atomic_load_explicit(&me->post_done, memory_order_acquire) != all) {
            if (!block)
                return LMPI_OK;
            LMPI_RMA_WAIT(w, &spins);
        }
        w->post_done = w->npost;
    }
    while (w->post_done < w->npost) {
        if (!block) {
            int flag = 0;
            LMPI_TRY(lmpi_impl_Iprobe(MPI_ANY_SOURCE, TAG_COMPLETE, w->comm, &flag, MPI_STATUS_IGNORE));
            if (!flag)
                return LMPI_OK;
        }
        LMPI_TRY(lmpi_impl_Recv(NULL, 0, lmpi_datatype_from_handle(MPI_BYTE), MPI_ANY_SOURCE, TAG_COMPLETE, w->comm,
                                MPI_STATUS_IGNORE));
        w->post_done++;
    }
    atomic_thread_fence(memory_order_seq_cst);
    w->exposure = false;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_wait(MPI_Win win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    if (!w->exposure) {
        lmpi_err_detail("win has no post (exposure) epoch");
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    return lmpi_win_fail(w, take_completes(w, true));
}

lmpi_status lmpi_impl_Win_test(MPI_Win win, int *flag)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    if (!w->exposure) {
        lmpi_err_detail("win has no post (exposure) epoch");
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    lmpi_status st = take_completes(w, false);
    *flag = !w->exposure;
    lmpi_progress_tested(*flag);
    return lmpi_win_fail(w, st);
}
