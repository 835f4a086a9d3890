/* One-sided communication (MPI 5.0 chapter 12) whose costs stay O(1) per
 * process (paper: rma-scalability-study, DESIGN.md §5).
 *
 * Every window has one shared segment on the node: a header (barrier, the
 * window-wide lock_all word, what all members agree on), one slot per member
 * (its lock word, its MCS queue node, its fence counters, and the descriptor
 * only it writes: base, size, disp unit, pid), and for Win_allocate(_shared)
 * the data.  An origin reads a target's descriptor from the target's slot
 * when it needs it, so a process keeps nothing per target: what differs
 * between members stays in their own slots ("fetched lazily"), what agrees is
 * in the header.  Targets are reached without their help: windows in the
 * segment by loads, stores and CPU atomics, windows over user memory
 * (Win_create, dynamic) by process_vm_readv/writev.
 *
 * Strategy knobs (LMPI_RMA_FENCE, LMPI_RMA_LOCK, LMPI_RMA_ISSUE) select the
 * paper's alternatives inside this one code base. */
#ifndef LMPI_RMA_WIN_H
#define LMPI_RMA_WIN_H

#include <stdatomic.h>

#include "coll/op.h"
#include "comm/comm.h"
#include "datatype/datatype.h"
#include "runtime/errhandler.h"
#include "runtime/info.h"

#define LMPI_MAGIC_WIN 0x57696e64u
#define LMPI_RMA_LINE 64
/* Dynamic windows: regions one process may have attached at once (after
 * adjacent ones are merged).  Conformance programs attach 1000; the table is
 * in the segment, 16 bytes an entry, and only its used entries are touched. */
#define LMPI_RMA_MAX_REGIONS 4096
#define LMPI_RMA_EXCL (UINT64_C(1) << 63)
/* PSCW: exposure groups up to this size go through the target's post line,
 * larger ones through zero-byte messages */
#define LMPI_RMA_POST_INLINE 12

typedef enum { LMPI_RMA_FENCE_BARRIER, LMPI_RMA_FENCE_RS } lmpi_rma_fence_algo;
typedef enum { LMPI_RMA_LOCK_MCS, LMPI_RMA_LOCK_POLLING } lmpi_rma_lock_algo;
typedef enum { LMPI_RMA_ISSUE_EAGER, LMPI_RMA_ISSUE_DELAYED } lmpi_rma_issue_algo;

/* What each member owns in the segment; four cache lines so that the words
 * others hammer (the lock) and the one the owner spins on (its queue node)
 * never share a line. */
typedef struct {
    /* line 0: written by origins */
    _Atomic uint64_t lock;      /* LMPI_RMA_EXCL, or the number of shared holders */
    _Atomic uint32_t mcs_tail;  /* the last queued waiter's rank + 1 (0: none) */
    _Atomic uint32_t acc_lock;  /* accumulates on elements CPUs cannot update atomically */
    _Atomic uint64_t landed;    /* reduce-scatter fence: operations completed here */
    char pad0[LMPI_RMA_LINE - 24];
    /* line 1: the owner spins here */
    _Atomic uint32_t q_next;     /* MCS successor's rank + 1 */
    _Atomic uint32_t q_wait;     /* 1 while queued behind someone */
    _Atomic uint64_t fence_open; /* fences this member has come out of */
    char pad1[LMPI_RMA_LINE - 16];
    /* line 2: the descriptor, written by the owner */
    uint64_t base; /* address in the owner's space (create) */
    uint64_t size;
    uint64_t disp_unit;
    uint64_t data_off; /* allocate flavours with differing sizes: data offset in the segment */
    int32_t pid;
    _Atomic uint32_t nregions; /* dynamic: attached regions (in the region table) */
    _Atomic uint32_t region_seq;
    char pad2[LMPI_RMA_LINE - 44];
    /* line 3: the exposure epoch (PSCW), written by the owner at post
     * (a seqlock: post_gen is odd while it changes), by origins at complete */
    _Atomic uint32_t post_gen;
    _Atomic int32_t post_n;     /* members of the exposure group; -1: through messages */
    _Atomic uint32_t post_done; /* bit i: post_members[i] completed */
    uint32_t pad3;
    _Atomic int32_t post_members[LMPI_RMA_POST_INLINE];
} lmpi_win_slot;

typedef struct {
    uint64_t base, size;
} lmpi_win_region;

/* A dynamic window's regions as the program attached them, sorted by base. */
typedef struct lmpi_win_attached {
    uint32_t n, cap;
    lmpi_win_region r[];
} lmpi_win_attached;

typedef struct {
    uint32_t magic;
    uint32_t nranks;
    uint64_t bytes;       /* the whole segment */
    uint64_t slots_off;   /* slot array */
    uint64_t regions_off; /* dynamic: nranks tables of LMPI_RMA_MAX_REGIONS */
    uint64_t data_off;    /* allocate flavours: the first member's data */
    uint64_t stride;      /* same sizes: bytes between members' data */
    _Atomic uint32_t attached;
    uint64_t pool_off;       /* a piece of the transport's pool: where (written before anyone maps it) */
    _Alignas(LMPI_RMA_LINE) _Atomic uint32_t bar_count; /* the fence barrier */
    _Atomic uint32_t bar_gen;
    _Alignas(LMPI_RMA_LINE) _Atomic uint64_t all_word; /* lock_all holders, window-wide */
    _Alignas(LMPI_RMA_LINE) char end[1];
} lmpi_win_seg;

typedef enum { LMPI_EPOCH_NONE, LMPI_EPOCH_FENCE, LMPI_EPOCH_START, LMPI_EPOCH_LOCK, LMPI_EPOCH_LOCK_ALL } lmpi_epoch;

typedef struct {
    int rank;
    int type;      /* MPI_LOCK_SHARED / MPI_LOCK_EXCLUSIVE */
    bool nocheck;  /* MPI_MODE_NOCHECK: nothing was acquired */
    bool acquired; /* delayed issue acquires at the first flush */
} lmpi_win_held;

/* A buffered (delayed) operation. */
typedef struct {
    uint8_t kind; /* lmpi_rma_kind */
    int target;
    MPI_Aint disp;
    const void *obuf;
    void *rbuf;
    const void *cbuf;
    MPI_Count ocount, tcount, rcount;
    lmpi_datatype *odt, *tdt, *rdt;
    lmpi_op *op;
} lmpi_rma_op;

typedef struct lmpi_rma_pool {
    int n, cap;
    lmpi_rma_op ops[];
} lmpi_rma_pool;


typedef enum { LMPI_RMA_PUT, LMPI_RMA_GET, LMPI_RMA_ACC, LMPI_RMA_GACC, LMPI_RMA_CAS } lmpi_rma_kind;

typedef struct lmpi_win {
    uint32_t magic;
    int flavor; /* MPI_WIN_FLAVOR_* (what MPI_WIN_CREATE_FLAVOR points at) */
    int rank, size;
    lmpi_comm *comm; /* private duplicate: creation, PSCW messages */
    lmpi_win_seg *seg;
    lmpi_win_slot *slots;
    char *data; /* allocate flavours: the first member's data in the segment */
    void *base; /* this member's */
    MPI_Aint win_size;
    MPI_Aint disp_unit;
    int disp_unit_int; /* what MPI_WIN_DISP_UNIT points at */
    uint8_t access;    /* lmpi_epoch: the access epoch open */
    bool same_size : 1, same_disp : 1;
    bool shared_data : 1; /* data in the segment: loads, stores, CPU atomics */
    bool no_locks : 1, acc_same_op : 1, acc_ordering_none : 1; /* info */
    bool exposure : 1;     /* post..wait */
    bool open_pending : 1; /* delayed issue: the opening synchronization is still to do */
    bool lock_all_nocheck : 1;
    bool delayed : 1; /* LMPI_RMA_ISSUE=delayed, read at creation */
    bool polling : 1; /* LMPI_RMA_LOCK=polling */
    bool heap : 1;    /* a lone member's segment is plain memory */
    bool am : 1;      /* operations travel in messages (am.c): the segment is this member's alone */
    bool pooled : 1;  /* the segment is a piece of the transport's pool (seg->pool_off) */
    bool revoked : 1; /* MPIX_Win_revoke here or elsewhere (src/ft): what comm's flag says, where the fast paths look */
    uint64_t fences; /* fences completed (reduce-scatter: epoch number) */
    int *start_ranks; /* the access group, sorted window ranks */
    int nstart;
    int npost, post_done; /* exposure: members posted to, completes received */
    int nheld, held_cap;
    lmpi_win_held *held;
    struct lmpi_rma_pool *pool; /* delayed issue: a bounded pool (made at the first buffered operation) */
    uint32_t *rs_counts;        /* reduce-scatter fence only: operations per target (O(P), the paper's cost) */
    lmpi_errhandler *errh;
    struct lmpi_attr *attrs;
    char *name; /* NULL until MPI_Win_set_name */
    int64_t accounted;
    struct lmpi_win_attached *attached; /* dynamic: the regions as attached (the segment's table merges them) */
    struct lmpi_rma_am *amst; /* am.c's state, for windows whose operations are messages */
} lmpi_win;

static inline int lmpi_win_pending(const lmpi_win *w) { return w->pool ? w->pool->n : 0; }

lmpi_status lmpi_win_unusable(MPI_Win h, lmpi_win **out);
static inline lmpi_status lmpi_win_usable(MPI_Win h, lmpi_win **out)
{
    lmpi_win *w = (lmpi_win *)h;
    if (LMPI_LIKELY((uintptr_t)h >= LMPI_PREDEF_LIMIT && w->magic == LMPI_MAGIC_WIN && !w->revoked)) {
        *out = w;
        return LMPI_OK;
    }
    return lmpi_win_unusable(h, out); /* the error, with its detail */
}

/* Knobs, read from the config table at window creation. */
lmpi_rma_fence_algo lmpi_rma_fence_algo_now(void);
lmpi_rma_lock_algo lmpi_rma_lock_algo_now(void);
lmpi_rma_issue_algo lmpi_rma_issue_algo_now(void);

/* A live window or MPI_ERR_WIN naming the argument. */
lmpi_status lmpi_win_arg(MPI_Win h, lmpi_win **out);
/* The same for the calls that communicate or synchronize: a revoked window
 * (MPIX_Win_revoke) answers MPIX_ERR_REVOKED through its handler; MPI_Win_free
 * and the local queries take lmpi_win_arg.  Inline: flushes and
 * compare-and-swap are a few nanoseconds long (below the window's type). */
/* A revoke of the window's communicator arrived (src/ft calls it). */
void lmpi_win_mark_revoked(void *win);
/* The next error the binding raises goes to W's handler. */
lmpi_status lmpi_win_fail(lmpi_win *w, lmpi_status st);

/* attr.c: the predefined attributes and the list of the user's. */
bool lmpi_win_predefined_attr(MPI_Win win, int keyval, void **out);
struct lmpi_attr **lmpi_win_attrs(MPI_Win win);

/* A member's slot.  A window in messages has only this member's own. */
static inline lmpi_win_slot *lmpi_win_slot_of(const lmpi_win *w, int r) { return &w->slots[w->am ? 0 : r]; }
lmpi_win_region *lmpi_win_regions(const lmpi_win *w, int r);

/* Does a table of n regions sorted by base, adjacent ones merged (what
 * MPI_Win_attach keeps), cover [lo, hi)?  A binary search: programs attach
 * thousands of regions. */
static inline bool lmpi_win_regions_cover(const lmpi_win_region *r, uint32_t n, uint64_t lo, uint64_t hi)
{
    uint32_t a = 0, b = n; /* the last region whose base is <= lo is below b */
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (r[m].base <= lo)
            a = m + 1;
        else
            b = m;
    }
    return a > 0 && hi <= r[a - 1].base + r[a - 1].size; /* (r[a - 1].base <= lo by the search) */
}

/* The barrier of the window's members in its segment (LMPI_OK, or
 * LMPI_ERR_PROC_FAILED: a member failed, below). */
lmpi_status lmpi_win_barrier(lmpi_win *w);
/* Spin politely: poll progress, then yield (more ranks than cores).  False
 * when the wait must give up: under --with-ft a member of the window's
 * group failed (src/ft), and what a wait looks for may have been the dead
 * process's to write (a lock word it held, its arrival, its answer), or
 * the window was revoked (MPIX_Win_revoke); the error's detail is set, the
 * caller returns lmpi_rma_broken(w). */
bool lmpi_rma_relax(lmpi_win *w, unsigned *spins);
/* The same test alone: true while no member of w's group is known failed
 * and w is not revoked. */
bool lmpi_rma_whole(lmpi_win *w);
/* Why a wait gave up: LMPI_ERR_REVOKED or LMPI_ERR_PROC_FAILED. */
static inline lmpi_status lmpi_rma_broken(const lmpi_win *w)
{
    return (w->comm->flags & LMPI_COMM_REVOKED) ? LMPI_ERR_REVOKED : LMPI_ERR_PROC_FAILED;
}
#define LMPI_RMA_WAIT(w, spins)                                                                                        \
    do {                                                                                                               \
        if (!lmpi_rma_relax((w), (spins)))                                                                             \
            return lmpi_rma_broken(w);                                                                                 \
    } while (0)

/* A new entry at the end of w->held (NULL: no memory); the caller fills it. */
lmpi_win_held *lmpi_win_hold(lmpi_win *w);

/* Carry out the buffered operations (delayed issue; sync.c calls it). */
lmpi_status lmpi_rma_drain(lmpi_win *w);
/* Make TARGET accessible in the current epoch (delayed issue, reduce-scatter
 * fence): acquire a deferred lock, wait for a deferred post or fence. */
lmpi_status lmpi_rma_open_target(lmpi_win *w, int target);

/* inout = in op inout over n elements of basic type b, both packed
 * (MPI_REPLACE copies; pair types go through their natural layout). */
lmpi_status lmpi_rma_combine(lmpi_op *op, lmpi_datatype *b, MPI_Count n, char *inout, const char *in);

/* am.c: windows whose operations travel in messages (members on several
 * hosts, or LMPI_RMA_MESSAGES=1). */
lmpi_status lmpi_rma_am_attach(lmpi_win *w); /* before lmpi_rma_am_ready */
/* Collective, the creating barrier: every member attached; agree on the
 * network's RMA for large puts and gets (all registered, or none uses it). */
lmpi_status lmpi_rma_am_ready(lmpi_win *w);
void lmpi_rma_am_detach(lmpi_win *w);
lmpi_status lmpi_rma_am_issue(lmpi_win *w, const lmpi_rma_op *op);
/* Wait until every operation of this process on w is answered; the first
 * error a target answered (MPI_ERR_RMA_RANGE) is returned here. */
lmpi_status lmpi_rma_am_quiet(lmpi_win *w);
lmpi_status lmpi_rma_am_lock(lmpi_win *w, int target, int type);
/* Sends the release; lmpi_rma_am_quiet waits for it. */
void lmpi_rma_am_unlock(lmpi_win *w, int target, int type);
/* Lock_all: the target's shared lock at its first operation. */
lmpi_status lmpi_rma_am_open(lmpi_win *w, int target);

/* Statistics for MPI_T. */
typedef struct {
    uint64_t issued, buffered, lock_waits, pool_drains, wire;
} lmpi_rma_stats;
extern lmpi_rma_stats lmpi_rma_stat;

/* Table II's growth, per process, for one aspect and strategy at P ranks
 * (bench/rma `metadata_bytes`): the same sizes the window allocates. */
typedef enum { LMPI_RMA_ASPECT_WINDOW, LMPI_RMA_ASPECT_FENCE, LMPI_RMA_ASPECT_LOCK, LMPI_RMA_ASPECT_OUTGOING } lmpi_rma_aspect;
uint64_t lmpi_rma_metadata_bytes(lmpi_rma_aspect aspect, const char *strategy, uint64_t ranks, uint64_t ops);

#endif
