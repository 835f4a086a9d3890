/* Small blocking collectives through a shared-memory area per communicator.
 *
 * The area (from the segment's pool, taken at the communicator's first
 * blocking barrier, bcast, reduce, allreduce, allgather or alltoall) holds,
 * in rings of DEPTH, slots for each member and output buffers, each with a
 * stamp (0 = empty, else the call number of the collective it holds), and
 * one progress line per member.  The rings let a root run DEPTH collectives
 * ahead (a loop of broadcasts or reductions does not become lockstep).
 *
 * A member fills its slot and stamps it.  Reduce (gather): the root takes
 * the slots in rank order (any operation, commutative or not, combines
 * right).  Bcast (release): the root writes the output and stamps it; the
 * others copy it out.  Barrier, allreduce, allgather and alltoall (one
 * hop): every member takes what it needs from every slot itself.  Stamps
 * are the communicator's call numbers (calls.h), which every member
 * advances alike, also in a call that failed its argument checks at this
 * member only.
 *
 * A ring position is written again DEPTH call numbers later at the
 * earliest, once every member's progress line says it is done with all
 * calls up to the old one.  A member marks its progress when it enters an
 * operation (all earlier calls are done) and when it skips a failed call,
 * so one that never read an output (it failed that call) does not hold the
 * ring forever, as a count of readers would.
 *
 * Compared with messages (short.c) a k-member allreduce is one hop through
 * the area instead of log2 k exchanges, and nothing goes through the
 * transport's queues.  Waits poll the progress engine (other traffic keeps
 * moving) and yield like every blocking call. */
#include <stdatomic.h>
#include <string.h>

#include "coll/sched.h"
#include "ft/ft.h"
#include "coll/shmcoll.h"
#include "coll/steps.h"
#include "coll/short.h"
#include "runtime/config.h"
#include "pt2pt/pt2pt.h"
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
    _Atomic uint64_t stamp; /* 0: empty; else the call whose data it holds (progress lines: done up to) */
    uint64_t bytes;         /* an output line: how many the root wrote (a mismatch is an error, not garbage) */
    char pad[LINE - 16];
} flag_line;

_Static_assert(sizeof(area_header) == LINE && sizeof(flag_line) == LINE, "area lines");

/* This process's view of a communicator's area. */
struct lmpi_coll_area {
    area_header *h;
    uint64_t off;
    uint64_t all_done; /* every member was done up to here when last looked */
    lmpi_request offer; /* AREA_PENDING: the receive of rank 0's offset */
};

/* PENDING: rank 0 has sent (or will send, in the attaching call) the
 * area's offset; this member receives it at its first use of the area. */
enum { AREA_UNKNOWN, AREA_ATTACHED, AREA_NONE, AREA_PENDING };

/* Layout after the header: k progress lines, DEPTH out flags, k x DEPTH in
 * flags, DEPTH out buffers, k x DEPTH slots.  Call number s uses ring
 * position s % DEPTH everywhere. */
static flag_line *done_line(area_header *h, int i) { return (flag_line *)(h + 1) + i; }

static flag_line *out_flag(area_header *h, uint64_t s) { return (flag_line *)(h + 1) + h->k + s % DEPTH; }

static flag_line *in_flag(area_header *h, int i, uint64_t s)
{
    return (flag_line *)(h + 1) + h->k + DEPTH + (size_t)i * DEPTH + s % DEPTH;
}

static char *out_buf(area_header *h, uint64_t s)
{
    return (char *)((flag_line *)(h + 1) + h->k + DEPTH * (1 + (size_t)h->k)) + (s % DEPTH) * h->slot;
}

static char *slot_of(area_header *h, int i, uint64_t s)
{
    return out_buf(h, 0) + (size_t)DEPTH * h->slot + ((size_t)i * DEPTH + s % DEPTH) * h->slot;
}

static size_t area_bytes(int k, size_t slot)
{
    return sizeof(area_header) + (size_t)k * LINE + (size_t)DEPTH * (1 + (size_t)k) * (LINE + slot);
}

/* Wait for a word of the area; a failure of a member or a revoke (src/ft)
 * ends the enclosing call with its error. */
#define WAIT_UNTIL_THEN(c, cond, idle_call)                                         \
    do {                                                                            \
        unsigned idle_ = 0;                                                         \
        while (!(cond)) {                                                           \
            if (lmpi_progress_poll() > 0) {                                         \
                idle_ = 0;                                                          \
            } else {                                                                \
                lmpi_status broken_;                                                \
                if (LMPI_UNLIKELY(lmpi_ft_active) && (broken_ = lmpi_ft_comm_broken(c)) != LMPI_OK) \
                    return broken_;                                                 \
                idle_call;                                                          \
            }                                                                       \
        }                                                                           \
    } while (0)
#define WAIT_UNTIL(c, cond) WAIT_UNTIL_THEN(c, cond, lmpi_progress_idle_word(&idle_))
/* For one flag's stamp: a sleeper is woken by the kick of the member that
 * stamps it, not by every member's (runtime/wait.h, lmpi_wait_cond). */
#define WAIT_FOR_STAMP(c, f, seq)                                                                  \
    WAIT_UNTIL_THEN(c, atomic_load_explicit(&(f)->stamp, memory_order_acquire) == (seq),             \
                    lmpi_progress_idle_until(&idle_, &(f)->stamp, (seq)))

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

/* The area at OFF (0: none) becomes C's. */
static void take(lmpi_comm *c, lmpi_coll_area *a, uint64_t off)
{
    if (!off) {
        lmpi_free(a);
        c->coll_area = NULL;
        c->coll_area_state = AREA_NONE;
        return;
    }
    a->h = lmpi_shm_at(off);
    a->off = off;
    a->all_done = 0;
    c->coll_area = a;
    c->coll_area_state = AREA_ATTACHED;
}

/* Rank 0 takes the area and sends its offset (0: none) to each member
 * itself, so that no member forwards it.  The others receive it when they
 * first use the area: a member whose arguments fail this call (before or
 * after this point) never holds the others up, nor waits for a rank 0 that
 * skipped the call.  Inside call number c->coll_calls: everyone is done
 * with the calls before it. */
static lmpi_status attach(lmpi_comm *c)
{
    uint32_t ctx = c->context_id + LMPI_CTX_COLL;
    int tag = lmpi_coll_short_tag(c), k = c->size;
    lmpi_coll_area *a = lmpi_calloc(1, sizeof(*a), LMPI_MEM_COLL);
    if (!a) { /* the others may use the area: this member cannot take messages instead */
        lmpi_err_detail("out of memory attaching a collective area");
        return LMPI_ERR_NO_MEM;
    }
    if (c->rank != 0) {
        lmpi_icoll_post_recv(&a->offer, c, ctx, tag, &a->off, sizeof(a->off), 0);
        c->coll_area = a;
        c->coll_area_state = AREA_PENDING;
        return LMPI_OK;
    }
    size_t slot = (slot_limit() + LINE - 1) / LINE * LINE;
    size_t bytes = area_bytes(k, slot);
    uint64_t off = lmpi_shm_pool_alloc(bytes);
    if (off) {
        area_header *h = lmpi_shm_at(off);
        h->k = (uint32_t)k;
        h->slot = (uint32_t)slot;
        h->bytes = bytes;
        for (int i = 0; i < k; i++)
            atomic_store_explicit(&done_line(h, i)->stamp, c->coll_calls - 1, memory_order_relaxed);
        atomic_store_explicit(&h->refs, (uint32_t)k, memory_order_release);
    }
    lmpi_status st = LMPI_OK;
    for (int r = 1; r < k && st == LMPI_OK; r++)
        st = lmpi_icoll_send(c, ctx, tag, &off, sizeof(off), r);
    take(c, a, off);
    return st;
}

lmpi_status lmpi_coll_shm_prepare(lmpi_comm *c)
{
    if (c->coll_area_state != AREA_UNKNOWN || !lmpi_config.coll_shm)
        return LMPI_OK;
    /* the node communicators of node-aware collectives always; a user's
     * communicator from LMPI_COLL_SHM_MIN_RANKS on (barrier and allreduce
     * take one hop through the area, fewer than log2 k message exchanges
     * from 2 ranks on: docs/performance.md); never across nodes, real or
     * emulated */
    bool wanted = (c->flags & LMPI_COMM_INTERNAL) ||
                  (lmpi_config.coll_shm_min_ranks > 0 && c->size >= lmpi_config.coll_shm_min_ranks);
    if (c->is_inter || c->size < 2 || !lmpi_shm_segment_size() || !wanted || !one_node(c)) {
        c->coll_area_state = AREA_NONE;
        return LMPI_OK;
    }
    return attach(c);
}

bool lmpi_coll_shm_fits(lmpi_comm *c, size_t bytes)
{
    if (!lmpi_config.coll_shm)
        return false;
    if (c->coll_area_state == AREA_PENDING) /* rank 0 sent it in the attaching call */
        take(c, c->coll_area,
             lmpi_icoll_finish_recv(&c->coll_area->offer) == LMPI_OK ? c->coll_area->off : 0);
    return c->coll_area_state == AREA_ATTACHED && bytes <= c->coll_area->h->slot;
}

bool lmpi_coll_shm_use(lmpi_comm *c, MPI_Count count, const lmpi_datatype *dt)
{
    return dt->contiguous && lmpi_coll_shm_fits(c, (size_t)(count * dt->size));
}

/* This member is done with every call up to DONE. */
static void mark_done(area_header *h, int me, uint64_t done)
{
    _Atomic uint64_t *p = &done_line(h, me)->stamp;
    if (atomic_load_explicit(p, memory_order_relaxed) < done) {
        atomic_store_explicit(p, done, memory_order_release);
        lmpi_wait_kick(); /* a root may sleep until the ring frees */
    }
}

void lmpi_coll_shm_skip(lmpi_comm *c)
{
    if (c->coll_area_state == AREA_ATTACHED)
        mark_done(c->coll_area->h, c->rank, c->coll_calls);
}

static uint64_t least_done(area_header *h)
{
    uint64_t least = UINT64_MAX;
    for (uint32_t i = 0; i < h->k; i++) {
        uint64_t d = atomic_load_explicit(&done_line(h, (int)i)->stamp, memory_order_acquire);
        least = d < least ? d : least;
    }
    return least;
}

/* Before writing ring position seq % DEPTH: every member is done with the
 * call that used it before (DEPTH or more call numbers back). */
static lmpi_status wait_ring(lmpi_comm *c, lmpi_coll_area *a, uint64_t seq)
{
    if (a->all_done + DEPTH >= seq)
        return LMPI_OK;
    WAIT_UNTIL(c, (a->all_done = least_done(a->h)) + DEPTH >= seq);
    return LMPI_OK;
}

void lmpi_coll_shm_detach(lmpi_comm *c)
{
    lmpi_coll_area *a = c->coll_area;
    if (c->coll_area_state == AREA_PENDING) {
        /* rank 0 sent the offset before it finished the attaching call, so
         * it is here unless rank 0 skipped that call (an erroneous program:
         * then forget it); drop the hold rank 0 counted for this member */
        for (int i = 0; i < 64 && !a->offer.complete && lmpi_shm_segment_size(); i++)
            lmpi_progress_poll();
        if (a->offer.complete && a->off) {
            take(c, a, a->off);
        } else {
            if (!a->offer.complete)
                lmpi_pt2pt_cancel_recv(&a->offer);
            lmpi_free(a);
            a = NULL;
        }
    }
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
    uint64_t seq = c->coll_calls;
    size_t bytes = op ? (size_t)(count * dt->size) : 0;
    int me = c->rank, k = c->size;
    const char *mine = op ? lmpi_dt_contig_ptr(sbuf == MPI_IN_PLACE ? rbuf : sbuf, dt) : NULL;
    lmpi_coll_stat.shm_path++;
    mark_done(h, me, seq - 1);
    if (me != root) {
        flag_line *f = in_flag(h, me, seq);
        LMPI_TRY(wait_ring(c, c->coll_area, seq));
        if (bytes)
            memcpy(slot_of(h, me, seq), mine, bytes);
        atomic_store_explicit(&f->stamp, seq, memory_order_release);
        lmpi_wait_kick(); /* the readers may sleep (runtime/wait.h) */
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
            WAIT_FOR_STAMP(c, f, seq);
            x = slot_of(h, i, seq);
        }
        if (op && i == k - 1 && x != acc)
            memcpy(acc, x, bytes);
        else if (op && i != k - 1 && status == LMPI_OK)
            status = lmpi_op_apply(op, typed(x, dt), typed(acc, dt), count, dt);
    }
    return status;
}

lmpi_status lmpi_coll_shm_release(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *c,
                                  bool mismatched)
{
    area_header *h = c->coll_area->h;
    uint64_t seq = c->coll_calls;
    size_t bytes = (size_t)(count * dt->size);
    char *p = buf ? (char *)lmpi_dt_contig_ptr(buf, dt) : NULL;
    lmpi_coll_stat.shm_path++;
    mark_done(h, c->rank, seq - 1);
    flag_line *f = out_flag(h, seq);
    if (c->rank == root) {
        LMPI_TRY(wait_ring(c, c->coll_area, seq));
        if (bytes)
            memcpy(out_buf(h, seq), p, bytes);
        f->bytes = bytes + mismatched; /* a size no member takes for a match (readers copy at most theirs) */
        atomic_store_explicit(&f->stamp, seq, memory_order_release);
        lmpi_wait_kick(); /* the readers may sleep (runtime/wait.h) */
        return LMPI_OK;
    }
    WAIT_FOR_STAMP(c, f, seq);
    size_t sent = (size_t)f->bytes;
    if (bytes)
        memcpy(p, out_buf(h, seq), sent < bytes ? sent : bytes);
    if (sent != bytes) {
        lmpi_err_detail("the root's message has %zu bytes, this rank's buffer %zu (counts or types differ from the "
                        "root's)", sent, bytes);
        return sent > bytes ? LMPI_ERR_TRUNCATE : LMPI_ERR_COUNT;
    }
    return LMPI_OK;
}

/* The one-hop collectives (barrier, allreduce, allgather, alltoall): every
 * member fills and stamps its slot, then takes what it needs from every
 * slot.  Members may pass different types of one signature (allgather,
 * alltoall), so the path is chosen from the bytes alone (coll.c) and each
 * member packs and unpacks its own way. */
typedef struct {
    const void *buf;
    MPI_Count count;
    const lmpi_datatype *dt;
    size_t bytes; /* 0: a barrier, nothing to write */
} part;

static lmpi_status publish(lmpi_comm *c, uint64_t seq, const part *mine)
{
    area_header *h = c->coll_area->h;
    lmpi_coll_stat.shm_path++;
    mark_done(h, c->rank, seq - 1);
    LMPI_TRY(wait_ring(c, c->coll_area, seq));
    char *slot = slot_of(h, c->rank, seq);
    /* never past the caller's data, should its send signature be shorter
     * than the blocks (an erroneous program) */
    size_t given = (size_t)(mine->count * mine->dt->size), n = mine->bytes < given ? mine->bytes : given;
    if (n && mine->dt->contiguous)
        memcpy(slot, lmpi_dt_contig_ptr(mine->buf, mine->dt), n);
    else if (n)
        lmpi_dt_pack(mine->buf, mine->count, mine->dt, 0, (MPI_Count)n, slot);
    atomic_store_explicit(&in_flag(h, c->rank, seq)->stamp, seq, memory_order_release);
    lmpi_wait_kick(); /* the others may sleep (runtime/wait.h) */
    return LMPI_OK;
}

/* Member I's slot of call SEQ, once I has stamped it. */
static lmpi_status await_slot(lmpi_comm *c, int i, uint64_t seq, const char **slot)
{
    flag_line *f = in_flag(c->coll_area->h, i, seq);
    WAIT_FOR_STAMP(c, f, seq);
    *slot = slot_of(c->coll_area->h, i, seq);
    return LMPI_OK;
}

static void take_typed(void *buf, MPI_Count count, const lmpi_datatype *dt, const char *from, size_t bytes)
{
    if (dt->contiguous)
        memcpy((char *)lmpi_dt_contig_ptr(buf, dt), from, bytes);
    else
        lmpi_dt_unpack(buf, count, dt, 0, (MPI_Count)bytes, from);
}

/* Barrier and allreduce: every member combines all the slots in rank order,
 * so every member computes the same (x0 op (x1 op (... op x(k-1)))).  A
 * gather to rank 0 and its release took two hops, each a wait for a member
 * that may be off its processor (with more ranks than cores, a time slice). */
static lmpi_status all_to_all_members(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                      lmpi_comm *c)
{
    uint64_t seq = c->coll_calls;
    size_t bytes = op ? (size_t)(count * dt->size) : 0;
    /* in place: the slot keeps this member's part before rbuf is written */
    part mine = {sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dt, bytes};
    LMPI_TRY(publish(c, seq, &mine));
    char *acc = bytes ? (char *)lmpi_dt_contig_ptr(rbuf, dt) : NULL;
    lmpi_status status = LMPI_OK;
    for (int i = c->size - 1; i >= 0; i--) {
        const char *x;
        LMPI_TRY(await_slot(c, i, seq, &x));
        if (bytes && i == c->size - 1)
            memcpy(acc, x, bytes);
        else if (bytes && status == LMPI_OK)
            status = lmpi_op_apply(op, typed(x, dt), typed(acc, dt), count, dt);
    }
    return status;
}

lmpi_status lmpi_coll_shm_allgather(const void *sbuf, MPI_Count scount, const lmpi_datatype *sdt, void *rbuf,
                                    MPI_Count rcount, const lmpi_datatype *rdt, lmpi_comm *c)
{
    uint64_t seq = c->coll_calls;
    size_t bytes = (size_t)(rcount * rdt->size);
    MPI_Aint block = (MPI_Aint)rcount * rdt->extent;
    part mine = {sbuf, scount, sdt, bytes};
    if (sbuf == MPI_IN_PLACE) /* this member's block is in place already */
        mine = (part){(char *)rbuf + c->rank * block, rcount, rdt, bytes};
    LMPI_TRY(publish(c, seq, &mine));
    for (int i = 0; i < c->size; i++) {
        const char *x;
        LMPI_TRY(await_slot(c, i, seq, &x));
        if (i != c->rank || sbuf != MPI_IN_PLACE)
            take_typed((char *)rbuf + i * block, rcount, rdt, x, bytes);
    }
    return LMPI_OK;
}

lmpi_status lmpi_coll_shm_alltoall(const void *sbuf, MPI_Count scount, const lmpi_datatype *sdt, void *rbuf,
                                   MPI_Count rcount, const lmpi_datatype *rdt, lmpi_comm *c)
{
    uint64_t seq = c->coll_calls;
    size_t bytes = (size_t)(rcount * rdt->size);
    part mine = {sbuf, scount * c->size, sdt, bytes * (size_t)c->size};
    if (sbuf == MPI_IN_PLACE) /* the slot keeps the blocks before rbuf is written */
        mine = (part){rbuf, rcount * c->size, rdt, bytes * (size_t)c->size};
    LMPI_TRY(publish(c, seq, &mine));
    for (int i = 0; i < c->size; i++) {
        const char *x;
        LMPI_TRY(await_slot(c, i, seq, &x));
        take_typed((char *)rbuf + i * (MPI_Aint)rcount * rdt->extent, rcount, rdt, x + (size_t)c->rank * bytes, bytes);
    }
    return LMPI_OK;
}

lmpi_status lmpi_coll_shm_barrier(lmpi_comm *c)
{
    return all_to_all_members(NULL, NULL, 0, lmpi_datatype_from_handle(MPI_BYTE), NULL, c);
}

lmpi_status lmpi_coll_shm_bcast(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *c)
{
    return lmpi_coll_shm_release(buf, count, dt, root, c, false);
}

lmpi_status lmpi_coll_shm_reduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                 int root, lmpi_comm *c)
{
    return lmpi_coll_shm_gather(sbuf, rbuf, count, dt, op, root, c);
}

lmpi_status lmpi_coll_shm_allreduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                    lmpi_comm *c)
{
    return all_to_all_members(sbuf, rbuf, count, dt, op, c);
}
