/* Small blocking collectives through a shared-memory area per communicator.
 *
 * The area (from the segment's pool, taken at the communicator's first such
 * collective) holds, in rings of DEPTH, slots for each member and output
 * buffers, each with a flag line (stamp: 0 = empty, else the collective it
 * holds; readers: members still to copy an output).  The rings let a root
 * run DEPTH collectives ahead (a loop of broadcasts or reductions does not
 * become lockstep).
 *
 * Two halves make every collective.  Gather: a member waits for its slot to
 * be empty, fills it and stamps it; the root takes the slots in rank order
 * (any operation, commutative or not, combines right) and empties them.
 * Release: the root waits until everyone has read the output that last used
 * this ring position, writes it, sets the reader count and stamps it; the
 * others copy it out and count down.  Stamps are a per-communicator sequence that every member
 * advances alike, so a slow member never reads a newer collective's data.
 *
 * Compared with messages (short.c) a k-member allreduce is two waits per
 * member instead of log2 k exchanges, and nothing goes through the
 * transport's queues.  Waits poll the progress engine (other traffic keeps
 * moving) and yield like every blocking call. */
#include <stdatomic.h>
#include <string.h>

#include "coll/sched.h"
#include "coll/shmcoll.h"
#include "coll/steps.h"
#include "coll/short.h"
#include "runtime/config.h"
#include "runtime/request.h"
#include "transport/shm/shm.h"

#define LINE 64

#define DEPTH 16 /* collectives a root may run ahead of its slowest member */

typedef struct {
    _Atomic uint32_t refs;
    uint32_t k;
    uint32_t slot;
    uint32_t pad;
    uint64_t bytes;
    char pad2[LINE - 24];
} area_header;

/* One cache line per flag: its writer and its readers only. */
typedef struct {
    _Atomic uint64_t stamp;   /* 0: empty; else the collective whose data it holds */
    _Atomic uint32_t readers; /* out buffers: members still to copy it */
    char pad[LINE - 12];
} flag_line;

_Static_assert(sizeof(area_header) == LINE && sizeof(flag_line) == LINE, "area lines");

/* This process's view of a communicator's area. */
struct lmpi_coll_area {
    area_header *h;
    uint64_t off;
    uint64_t seq;
};

enum { AREA_UNKNOWN, AREA_ATTACHED, AREA_NONE };

/* Layout after the header: DEPTH out flags, k x DEPTH in flags, DEPTH out
 * buffers, k x DEPTH slots.  Collective number s uses ring position s % DEPTH
 * everywhere (every member numbers its collectives alike). */
static flag_line *out_flag(area_header *h, uint64_t s) { return (flag_line *)(h + 1) + s % DEPTH; }

static flag_line *in_flag(area_header *h, int i, uint64_t s)
{
    return (flag_line *)(h + 1) + DEPTH + (size_t)i * DEPTH + s % DEPTH;
}

static char *out_buf(area_header *h, uint64_t s)
{
    return (char *)((flag_line *)(h + 1) + DEPTH * (1 + (size_t)h->k)) + (s % DEPTH) * h->slot;
}

static char *slot_of(area_header *h, int i, uint64_t s)
{
    return out_buf(h, 0) + (size_t)DEPTH * h->slot + ((size_t)i * DEPTH + s % DEPTH) * h->slot;
}

static size_t area_bytes(int k, size_t slot)
{
    return sizeof(area_header) + (size_t)DEPTH * (1 + (size_t)k) * (LINE + slot);
}

#define WAIT_UNTIL(cond)                                        \
    do {                                                        \
        unsigned idle_ = 0;                                     \
        while (!(cond)) {                                       \
            if (lmpi_progress_poll() > 0)                       \
                idle_ = 0;                                      \
            else                                                \
                lmpi_progress_idle(&idle_);                     \
        }                                                       \
    } while (0)

static size_t slot_limit(void)
{
    size_t l = (size_t)lmpi_config.coll_short;
    l = l < (size_t)lmpi_config.coll_shm_max ? l : (size_t)lmpi_config.coll_shm_max;
    return l < LMPI_COLL_SHORT_MAX ? l : LMPI_COLL_SHORT_MAX;
}

/* Do all of C's members share this node (the real or emulated one)? */
static bool one_node(const lmpi_comm *c)
{
    const lmpi_rankmap *m = lmpi_comm_local_map(c);
    if (m->pgid == LMPI_PGID_MULTI)
        return false; /* other groups do not share this job's segment */
    const lmpi_av *av = lmpi_av_world();
    for (int r = 0; r < c->size; r++)
        if (lmpi_nodemap_node(&av->nodes, lmpi_rankmap_lpid(m, r)) != av->my_node)
            return false;
    return true;
}

/* Rank 0 takes the area; everyone learns its offset (0: none). */
static lmpi_status attach(lmpi_comm *c)
{
    int k = c->size;
    size_t slot = (slot_limit() + LINE - 1) / LINE * LINE;
    size_t bytes = area_bytes(k, slot);
    uint64_t off = 0;
    if (c->rank == 0 && (off = lmpi_shm_pool_alloc(bytes))) {
        area_header *h = lmpi_shm_at(off);
        h->k = (uint32_t)k;
        h->slot = (uint32_t)slot;
        h->bytes = bytes;
        atomic_store_explicit(&h->refs, (uint32_t)k, memory_order_release);
    }
    lmpi_status st = lmpi_coll_short_bcast(&off, 1, lmpi_datatype_from_handle(MPI_UINT64_T), 0, c);
    if (st != LMPI_OK)
        return st;
    if (!off) {
        c->coll_area_state = AREA_NONE;
        return LMPI_OK;
    }
    lmpi_coll_area *a = lmpi_malloc(sizeof(*a), LMPI_MEM_COLL);
    if (!a) { /* the others use the area: this member cannot take messages instead */
        lmpi_err_detail("out of memory attaching a collective area");
        return LMPI_ERR_NO_MEM;
    }
    a->h = lmpi_shm_at(off);
    a->off = off;
    a->seq = 0;
    c->coll_area = a;
    c->coll_area_state = AREA_ATTACHED;
    return LMPI_OK;
}

lmpi_status lmpi_coll_shm_try(lmpi_comm *c, MPI_Count count, const lmpi_datatype *dt, bool *use)
{
    *use = false;
    if (!lmpi_config.coll_shm || c->is_inter || c->size < 2 || c->coll_area_state == AREA_NONE ||
        !dt->contiguous || (size_t)(count * dt->size) > slot_limit() || !lmpi_shm_segment_size())
        return LMPI_OK;
    if (c->coll_area_state == AREA_UNKNOWN) {
        /* the node communicators of node-aware collectives always; a user's
         * communicator from LMPI_COLL_SHM_MIN_RANKS on (below, two hops
         * through the area lost to log2 k message exchanges: measured in
         * docs/performance.md); never across nodes, real or emulated */
        bool wanted = (c->flags & LMPI_COMM_INTERNAL) ||
                      (lmpi_config.coll_shm_min_ranks > 0 && c->size >= lmpi_config.coll_shm_min_ranks);
        if (!wanted || !one_node(c)) {
            c->coll_area_state = AREA_NONE;
            return LMPI_OK;
        }
        TRY(attach(c));
        if (c->coll_area_state != AREA_ATTACHED)
            return LMPI_OK;
    }
    *use = (size_t)(count * dt->size) <= c->coll_area->h->slot;
    return LMPI_OK;
}

void lmpi_coll_shm_detach(lmpi_comm *c)
{
    lmpi_coll_area *a = c->coll_area;
    /* after MPI_Finalize has unmapped the segment there is nothing to give back */
    if (a && lmpi_shm_segment_size() && atomic_fetch_sub_explicit(&a->h->refs, 1, memory_order_acq_rel) == 1)
        lmpi_shm_pool_free(a->off, (size_t)a->h->bytes);
    lmpi_free(a);
    c->coll_area = NULL;
    c->coll_area_state = AREA_UNKNOWN;
}

/* User-style pointer for bytes laid out as a contiguous DT. */
static void *typed(const void *bytes, const lmpi_datatype *dt) { return (char *)bytes - dt->true_lb; }

lmpi_status lmpi_coll_shm_gather(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                 int root, lmpi_comm *c)
{
    area_header *h = c->coll_area->h;
    uint64_t seq = ++c->coll_area->seq;
    size_t bytes = op ? (size_t)(count * dt->size) : 0;
    int me = c->rank, k = c->size;
    const char *mine = op ? lmpi_dt_contig_ptr(sbuf == MPI_IN_PLACE ? rbuf : sbuf, dt) : NULL;
    lmpi_coll_stat.shm_path++;
    if (me != root) {
        flag_line *f = in_flag(h, me, seq);
        WAIT_UNTIL(atomic_load_explicit(&f->stamp, memory_order_acquire) == 0);
        if (bytes)
            memcpy(slot_of(h, me, seq), mine, bytes);
        atomic_store_explicit(&f->stamp, seq, memory_order_release);
        return LMPI_OK;
    }
    char *acc = op ? (char *)lmpi_dt_contig_ptr(rbuf, dt) : NULL;
    _Alignas(16) char keep[LMPI_COLL_SHORT_MAX];
    if (op && mine == acc && root != k - 1) { /* in place: acc is overwritten first */
        memcpy(keep, mine, bytes);
        mine = keep;
    }
    /* x(k-1), then x(i) op acc downwards: (x0 op (x1 op (... op x(k-1)))) */
    lmpi_status status = LMPI_OK;
    for (int i = k - 1; i >= 0; i--) {
        const char *x = mine;
        flag_line *f = in_flag(h, i, seq);
        if (i != root) {
            WAIT_UNTIL(atomic_load_explicit(&f->stamp, memory_order_acquire) == seq);
            x = slot_of(h, i, seq);
        }
        if (op && i == k - 1 && x != acc)
            memcpy(acc, x, bytes);
        else if (op && i != k - 1 && status == LMPI_OK)
            status = lmpi_op_apply(op, typed(x, dt), typed(acc, dt), count, dt);
        if (i != root)
            atomic_store_explicit(&f->stamp, 0, memory_order_release);
    }
    return status;
}

lmpi_status lmpi_coll_shm_release(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *c)
{
    area_header *h = c->coll_area->h;
    uint64_t seq = ++c->coll_area->seq;
    size_t bytes = (size_t)(count * dt->size);
    char *p = buf ? (char *)lmpi_dt_contig_ptr(buf, dt) : NULL;
    lmpi_coll_stat.shm_path++;
    flag_line *f = out_flag(h, seq);
    if (c->rank == root) {
        WAIT_UNTIL(atomic_load_explicit(&f->readers, memory_order_acquire) == 0);
        if (bytes)
            memcpy(out_buf(h, seq), p, bytes);
        atomic_store_explicit(&f->readers, (uint32_t)(c->size - 1), memory_order_relaxed);
        atomic_store_explicit(&f->stamp, seq, memory_order_release);
        return LMPI_OK;
    }
    WAIT_UNTIL(atomic_load_explicit(&f->stamp, memory_order_acquire) == seq);
    if (bytes)
        memcpy(p, out_buf(h, seq), bytes);
    atomic_fetch_sub_explicit(&f->readers, 1, memory_order_release);
    return LMPI_OK;
}

lmpi_status lmpi_coll_shm_barrier(lmpi_comm *c)
{
    lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
    TRY(lmpi_coll_shm_gather(NULL, NULL, 0, byte, NULL, 0, c));
    return lmpi_coll_shm_release(NULL, 0, byte, 0, c);
}

lmpi_status lmpi_coll_shm_bcast(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *c)
{
    return lmpi_coll_shm_release(buf, count, dt, root, c);
}

lmpi_status lmpi_coll_shm_reduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                 int root, lmpi_comm *c)
{
    return lmpi_coll_shm_gather(sbuf, rbuf, count, dt, op, root, c);
}

lmpi_status lmpi_coll_shm_allreduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                    lmpi_comm *c)
{
    /* non-roots gather from their own data (rbuf is only written by the release) */
    lmpi_status st = lmpi_coll_shm_gather(sbuf, rbuf, count, dt, op, 0, c);
    lmpi_status rel = lmpi_coll_shm_release(rbuf, count, dt, 0, c);
    return st != LMPI_OK ? st : rel;
}
