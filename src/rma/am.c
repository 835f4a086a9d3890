/* One-sided operations carried in messages: the path of windows whose
 * members span hosts (no shared segment, no CPU atomics, no cross-memory
 * attach can reach another host), and of every window under
 * LMPI_RMA_MESSAGES=1.
 *
 * The origin describes the target's side as runs (offset, length) of the
 * target datatype, so the target needs no datatype and nothing is exchanged
 * at window creation: a packet is a prefix, up to AM_RUNS runs and the data
 * of those runs.  The target applies it in its progress engine, one packet
 * at a time, which makes accumulates element-wise atomic against each other.
 * Requests are answered (an ACK, or a REPLY with data), so an origin keeps
 * one count per window: flushes, unlocks, fences and completes wait until
 * it is zero.  After the first put or accumulate to a target, the next ones
 * to it go unanswered until an AM_FLUSH closes them (answers come in order).  Locks live at the target (a holder count and a FIFO of
 * waiters); lock_all takes a shared lock at a target's first operation.
 *
 * Large puts and gets to a rank on another host go by the network's own
 * RMA (wire_issue) where the provider writes and reads by offset under a
 * key every member registers alike (the window's context id): nothing is
 * exchanged per member.  They count in the same per-window count, their
 * completion (data at the target) taking the place of an answer.
 *
 * Per process this keeps O(1) state per window (the count, the target's
 * lock and its waiters), as the shared-memory path does. */
#include <string.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "ft/ft.h"
#include "pt2pt/pt2pt.h"
#include "rma/win.h"
#include "runtime/config.h"
#include "runtime/request.h"
#include "transport/transport.h"

enum { AM_PUT = 1, AM_GET, AM_ACC, AM_GACC, AM_CAS, AM_LOCK, AM_UNLOCK, AM_ACK, AM_REPLY, AM_GRANT, AM_FLUSH };

/* sreq of a put or accumulate that wants no answer unless it is refused */
#define AM_SILENT ((uint64_t)1)

#define AM_RUNS 32
/* Requests one process keeps unanswered per window: what waits in its
 * outbox (memory) stays bounded in an epoch of millions of operations. */
#define AM_IN_FLIGHT 1024
/* Packets up to this size are built on the stack (the prefix and room for
 * every run take 528 bytes: an 8-byte put fits). */
#define AM_SMALL_PACKET 1024
/* Runs are computed against this made-up base, so an offset is an address
 * minus it (true lower bounds may be negative). */
#define AM_BASE ((uintptr_t)1 << 40)

typedef struct {
    uint32_t nruns;
    int32_t op;  /* accumulates: the predefined MPI_Op */
    int64_t pos; /* where this piece starts in the operation's packed stream (echoed in the answer) */
} am_prefix;

typedef struct {
    int64_t off;
    uint64_t len;
} am_run;

typedef struct {
    int world; /* where to send the grant */
    int type;
    uint64_t cookie;
} am_waiter;

struct lmpi_rma_am {
    lmpi_win *win;
    struct lmpi_rma_am *next;
    uint32_t ctx;
    /* as an origin */
    uint64_t outstanding; /* requests sent and not answered yet */
    /* Puts and accumulates after the first to a target go unanswered while
     * they go to it: one AM_FLUSH after them (at a quiet, or when another
     * target comes) is answered after all of them.  Half the packets of a
     * stream of puts. */
    int silent_world; /* that target's world rank, or -1 */
    uint32_t silent_n;
    lmpi_status error;    /* the first error a target answered */
    int error_rank;
    void *mr;  /* this member's part registered for the network's RMA */
    bool wire; /* ... and every member's: large puts and gets use it */
    uint64_t wire_out; /* of outstanding: the network's writes and reads */
    /* as a target */
    bool excl;
    int shared;
    am_waiter *q;
    int qhead, qn, qcap;
};

/* Where a get's (or fetching accumulate's) answers go. */
typedef struct {
    void *buf;
    MPI_Count count;
    lmpi_datatype *dt;
    int pieces;
} am_result;

static struct lmpi_rma_am *windows;

static void deliver(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len);

lmpi_status lmpi_rma_am_attach(lmpi_win *w)
{
    struct lmpi_rma_am *am = lmpi_calloc(1, sizeof(*am), LMPI_MEM_RMA);
    if (!am)
        return LMPI_ERR_NO_MEM;
    am->win = w;
    am->ctx = w->comm->context_id;
    am->silent_world = -1;
    am->next = windows;
    windows = am;
    w->amst = am;
    lmpi_pt2pt_rma_handler = deliver;
    return LMPI_OK;
}

/* Does the window reach a member over the network? */
static bool spans_network(const lmpi_win *w)
{
    for (int r = 0; r < w->size; r++)
        if (lmpi_tr_remote(lmpi_comm_world_rank(w->comm, r)))
            return true;
    return false;
}

lmpi_status lmpi_rma_am_ready(lmpi_win *w)
{
    struct lmpi_rma_am *am = w->amst;
    /* offsets need one displacement unit, and the origin's range check
     * one size (a target checks nothing the network writes) */
    if (lmpi_config.rma_wire_min > 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC && w->same_size && w->same_disp &&
        w->win_size > 0 && spans_network(w))
        am->mr = lmpi_tr_win_register(w->base, (size_t)w->win_size, am->ctx);
    int mine = am->mr != NULL, all = 0;
    LMPI_TRY(lmpi_impl_Allreduce(&mine, &all, 1, lmpi_datatype_from_handle(MPI_INT), MPI_MIN, w->comm));
    am->wire = all != 0;
    if (!am->wire && am->mr) {
        lmpi_tr_win_deregister(am->mr);
        am->mr = NULL;
    }
    return LMPI_OK;
}

void lmpi_rma_am_detach(lmpi_win *w)
{
    if (w->amst && w->amst->mr)
        lmpi_tr_win_deregister(w->amst->mr);
    for (struct lmpi_rma_am **p = &windows; *p; p = &(*p)->next)
        if (*p == w->amst) {
            *p = w->amst->next;
            break;
        }
    if (w->amst)
        lmpi_free(w->amst->q);
    lmpi_free(w->amst);
    w->amst = NULL;
}

static struct lmpi_rma_am *find(uint32_t ctx)
{
    for (struct lmpi_rma_am *am = windows; am; am = am->next)
        if (am->ctx == ctx)
            return am;
    return NULL;
}

static void send_to(int world, struct lmpi_rma_am *am, int tag, uint64_t sreq, uint64_t rreq, uint64_t addr,
                    const void *payload, size_t len)
{
    lmpi_pkt_hdr h = {.type = LMPI_PKT_RMA, .rank = am->win->rank, .tag = tag, .ctx = am->ctx,
                      .len = len, .sreq = sreq, .rreq = rreq, .addr = addr};
    lmpi_pt2pt_send_packet(world, &h, payload, len);
}

/* Until *count <= n; false when a member of the window's group failed (its
 * answers may never come: the caller goes on, the window is broken). */
static bool wait_count(lmpi_win *w, const uint64_t *count, uint64_t n)
{
    unsigned spins = 0;
    while (*(const volatile uint64_t *)count > n) {
        if (lmpi_progress_poll() > 0)
            spins = 0;
        else if (!lmpi_rma_whole(w))
            return false;
        else
            lmpi_progress_idle(&spins);
    }
    return true;
}

static bool wait_below(struct lmpi_rma_am *am, uint64_t n) { return wait_count(am->win, &am->outstanding, n); }

/* Ask the target of unanswered puts and accumulates for one answer after them. */
static void close_silent(struct lmpi_rma_am *am)
{
    if (am->silent_world < 0 || am->silent_n == 0) {
        am->silent_world = -1;
        return;
    }
    if (am->outstanding >= AM_IN_FLIGHT) /* targets taken in turn: each switch asks for an answer */
        wait_below(am, AM_IN_FLIGHT / 2);
    am->outstanding++;
    send_to(am->silent_world, am, AM_FLUSH, 0, 0, 0, NULL, 0);
    am->silent_world = -1;
    am->silent_n = 0;
}

/* A request that will be answered goes to world rank dest: it is answered
 * after everything sent there before, silent ones included. */
static void expect_answer(struct lmpi_rma_am *am, int dest)
{
    if (am->outstanding >= AM_IN_FLIGHT)
        wait_below(am, AM_IN_FLIGHT / 2);
    am->outstanding++;
    if (dest == am->silent_world) {
        am->silent_world = -1;
        am->silent_n = 0;
    }
}

/* Poll until every request of this process on the window is answered. */
lmpi_status lmpi_rma_am_quiet(lmpi_win *w)
{
    struct lmpi_rma_am *am = w->amst;
    close_silent(am);
    /* a process spinning on its own window (flush to itself, sync) must let
     * others' operations in: poll at least once */
    lmpi_progress_poll();
    if (!wait_below(am, 0))
        return lmpi_rma_broken(w);
    lmpi_status st = am->error;
    if (st != LMPI_OK) {
        lmpi_err_detail("rank %d refused an operation of this process: %s (a target displacement outside its "
                        "window or attached regions)",
                        am->error_rank, st == LMPI_ERR_RMA_RANGE ? "out of range" : "error");
        am->error = LMPI_OK;
    }
    return st;
}

/* ---- origin ------------------------------------------------------------------------ */

lmpi_status lmpi_rma_am_lock(lmpi_win *w, int target, int type)
{
    /* the grant is written where the request said; under --with-ft a cell
     * of its own, left behind if the wait gives up (a late grant lands there) */
    volatile int cell = 0, *granted = &cell;
    if (lmpi_ft_enabled && !(granted = lmpi_calloc(1, sizeof(int), LMPI_MEM_RMA)))
        return LMPI_ERR_NO_MEM;
    send_to(lmpi_comm_world_rank(w->comm, target), w->amst, AM_LOCK, (uint64_t)(uintptr_t)granted, 0,
            (uint64_t)type, NULL, 0);
    unsigned spins = 0;
    while (!*granted) {
        if (lmpi_progress_poll() > 0)
            spins = 0;
        else if (!lmpi_rma_whole(w))
            return lmpi_rma_broken(w);
        else
            lmpi_progress_idle(&spins);
    }
    if (granted != &cell)
        lmpi_free((void *)granted);
    return LMPI_OK;
}

void lmpi_rma_am_unlock(lmpi_win *w, int target, int type)
{
    int dest = lmpi_comm_world_rank(w->comm, target);
    /* the network's writes are ordered with nothing: done before the release goes */
    wait_count(w, &w->amst->wire_out, 0);
    expect_answer(w->amst, dest); /* answered once the target let go, after everything before it */
    send_to(dest, w->amst, AM_UNLOCK, 0, 0, (uint64_t)type, NULL, 0);
}

/* Under lock_all, a target's shared lock is taken at its first operation
 * (kept in w->held until unlock_all). */
lmpi_status lmpi_rma_am_open(lmpi_win *w, int target)
{
    if (w->access != LMPI_EPOCH_LOCK_ALL || w->lock_all_nocheck)
        return LMPI_OK;
    for (int i = w->nheld - 1; i >= 0; i--)
        if (w->held[i].rank == target)
            return LMPI_OK;
    lmpi_win_held *h = lmpi_win_hold(w);
    if (!h)
        return LMPI_ERR_NO_MEM;
    *h = (lmpi_win_held){.rank = target, .type = MPI_LOCK_SHARED, .acquired = true};
    return lmpi_rma_am_lock(w, target, MPI_LOCK_SHARED);
}

static am_result *result_of(const lmpi_rma_op *op)
{
    am_result *r = lmpi_malloc(sizeof(*r), LMPI_MEM_RMA);
    if (!r)
        return NULL;
    if (op->kind == LMPI_RMA_GET)
        *r = (am_result){op->rbuf, op->ocount, op->odt, 0};
    else if (op->kind == LMPI_RMA_CAS)
        *r = (am_result){op->rbuf, 1, op->tdt, 0};
    else
        *r = (am_result){op->rbuf, op->rcount, op->rdt, 0};
    lmpi_datatype_retain(r->dt);
    return r;
}

static const int kind_tag[] = {[LMPI_RMA_PUT] = AM_PUT, [LMPI_RMA_GET] = AM_GET, [LMPI_RMA_ACC] = AM_ACC,
                               [LMPI_RMA_GACC] = AM_GACC, [LMPI_RMA_CAS] = AM_CAS};

static void wire_done(void *arg)
{
    struct lmpi_rma_am *am = arg;
    am->outstanding--;
    am->wire_out--;
}

/* A large put or get by the network's RMA: the origin's side contiguous,
 * the target's in at most AM_RUNS runs, one write or read each.  False
 * when it does not fit (or DEST is not connected yet): messages carry it. */
static bool wire_issue(lmpi_win *w, struct lmpi_rma_am *am, const lmpi_rma_op *op, int dest, MPI_Count bytes)
{
    bool put = op->kind == LMPI_RMA_PUT;
    lmpi_datatype *odt = op->odt; /* a get's result buffer too (rbuf) */
    if (!odt->contiguous || op->ocount * odt->size != bytes)
        return false;
    struct iovec iov[AM_RUNS];
    MPI_Count done = 0;
    int n = lmpi_dt_iov((void *)AM_BASE, op->tcount, op->tdt, 0, bytes, iov, AM_RUNS, &done);
    if (done != bytes)
        return false;
    char *local = (char *)(put ? (void *)op->obuf : op->rbuf) + odt->true_lb;
    uint64_t base = (uint64_t)op->disp * (uint64_t)w->disp_unit;
    for (int i = 0; i < n; i++) {
        if (am->outstanding >= AM_IN_FLIGHT)
            wait_below(am, AM_IN_FLIGHT / 2);
        am->outstanding++;
        am->wire_out++;
        uint64_t off = base + (uint64_t)((uintptr_t)iov[i].iov_base - AM_BASE);
        if (!lmpi_tr_win_rma(dest, put, local, iov[i].iov_len, am->ctx, off, wire_done, am)) {
            wire_done(am); /* not started after all */
            if (i == 0)
                return false;
            /* cannot happen once connected; never lose the rest */
            lmpi_abort_job(MPI_ERR_INTERN, "a one-sided operation lost its connection half-way");
        }
        local += iov[i].iov_len;
    }
    lmpi_rma_stat.wire++;
    return true;
}

lmpi_status lmpi_rma_am_issue(lmpi_win *w, const lmpi_rma_op *op)
{
    struct lmpi_rma_am *am = w->amst;
    int dest = lmpi_comm_world_rank(w->comm, op->target);
    MPI_Count bytes = op->tcount * op->tdt->size;
    if (am->wire && (op->kind == LMPI_RMA_PUT || op->kind == LMPI_RMA_GET) &&
        bytes >= (MPI_Count)lmpi_config.rma_wire_min && lmpi_tr_remote(dest) && wire_issue(w, am, op, dest, bytes))
        return LMPI_OK;
    size_t max = lmpi_tr_max_payload(dest);
    const lmpi_datatype *b = lmpi_op_basic_type(op->tdt);
    bool noop = op->op && op->op->predefined == (int)(uintptr_t)MPI_NO_OP;
    bool sends_data = op->kind == LMPI_RMA_PUT || op->kind == LMPI_RMA_CAS ||
                      ((op->kind == LMPI_RMA_ACC || op->kind == LMPI_RMA_GACC) && !noop);
    bool answers_data = op->kind == LMPI_RMA_GET || op->kind == LMPI_RMA_GACC || op->kind == LMPI_RMA_CAS;
    size_t head = sizeof(am_prefix) + AM_RUNS * sizeof(am_run);
    size_t room = op->kind == LMPI_RMA_GET ? max : max - head;
    if (op->kind == LMPI_RMA_CAS)
        room = (size_t)bytes;
    else if (b && b->size > 0) /* accumulates: whole elements in every packet */
        room -= room % (size_t)b->size;
    /* the packet: on the stack for the common small operation, no malloc on its path */
    size_t need = head + (!sends_data ? 0 : op->kind == LMPI_RMA_CAS ? 2 * (size_t)bytes
                                           : (size_t)bytes < room ? (size_t)bytes : room);
    char small[AM_SMALL_PACKET];
    char *pkt = need <= sizeof(small) ? small : lmpi_malloc(need, LMPI_MEM_RMA);
    am_result *res = answers_data ? result_of(op) : NULL;
    if (!pkt || (answers_data && !res)) {
        if (pkt != small)
            lmpi_free(pkt);
        lmpi_free(res);
        return LMPI_ERR_NO_MEM;
    }
    uint64_t rreq = b ? (uint64_t)(uintptr_t)b->handle : 0;
    for (MPI_Count pos = 0; pos < bytes;) {
        struct iovec iov[AM_RUNS];
        MPI_Count done = 0, want = bytes - pos < (MPI_Count)room ? bytes - pos : (MPI_Count)room;
        int n = lmpi_dt_iov((void *)AM_BASE, op->tcount, op->tdt, pos, want, iov, AM_RUNS, &done);
        am_prefix *pre = (am_prefix *)pkt;
        am_run *runs = (am_run *)(pre + 1);
        pre->nruns = (uint32_t)n;
        pre->op = op->op ? op->op->predefined : 0;
        pre->pos = (int64_t)pos;
        for (int i = 0; i < n; i++)
            runs[i] = (am_run){(int64_t)((uintptr_t)iov[i].iov_base - AM_BASE), iov[i].iov_len};
        char *data = (char *)(runs + n);
        size_t len = (size_t)(data - pkt);
        if (op->kind == LMPI_RMA_CAS) { /* the new value, then the one to compare with */
            memcpy(data, op->obuf, (size_t)done);
            memcpy(data + done, op->cbuf, (size_t)done);
            len += 2 * (size_t)done;
        } else if (sends_data) {
            lmpi_dt_pack(op->obuf, op->ocount, op->odt, pos, done, data);
            len += (size_t)done;
        }
        uint64_t sreq = (uint64_t)(uintptr_t)res;
        if (res) {
            res->pieces++;
            expect_answer(am, dest);
        } else if (am->silent_world == dest && am->silent_n < AM_IN_FLIGHT) {
            am->silent_n++;
            sreq = AM_SILENT;
        } else {
            /* the first to a target is answered (a put and a flush: one round trip), the
             * ones after it to the same target go silent until the next quiet */
            bool full = am->silent_world == dest;
            close_silent(am);
            if (full) /* bounded: never more than this unanswered in the outbox */
                wait_below(am, 0);
            expect_answer(am, dest);
            am->silent_world = dest;
            am->silent_n = 0;
        }
        lmpi_pkt_hdr h = {.type = LMPI_PKT_RMA, .rank = w->rank, .tag = kind_tag[op->kind], .ctx = am->ctx,
                          .len = (uint64_t)done, .sreq = sreq, .rreq = rreq, .addr = (uint64_t)op->disp};
        lmpi_pt2pt_send_packet(dest, &h, pkt, len);
        if (done == 0) /* cannot happen with a committed type: never loop forever */
            break;
        pos += done;
    }
    if (pkt != small)
        lmpi_free(pkt);
    return LMPI_OK;
}

/* ---- target ------------------------------------------------------------------------ */

/* The address of LEN bytes at run offset OFF of displacement DISP in this
 * process's part of the window, or NULL when they are not all inside it. */
static char *target_at(lmpi_win *w, int64_t disp, int64_t off, uint64_t len)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        uint64_t a = (uint64_t)disp + (uint64_t)off;
        const lmpi_win_slot *s = lmpi_win_slot_of(w, w->rank);
        const lmpi_win_region *r = lmpi_win_regions(w, w->rank);
        uint32_t n = atomic_load_explicit(&((lmpi_win_slot *)s)->nregions, memory_order_acquire);
        return lmpi_win_regions_cover(r, n, a, a + len) ? (char *)(uintptr_t)a : NULL;
    }
    int64_t o = disp * (int64_t)w->disp_unit + off;
    if (disp < 0 || o < 0 || (uint64_t)o + len > (uint64_t)w->win_size)
        return NULL;
    return (char *)w->base + o;
}

static void gather(char *const *at, const am_run *runs, uint32_t n, char *out)
{
    for (uint32_t i = 0; i < n; out += runs[i].len, i++)
        memcpy(out, at[i], runs[i].len);
}

static void scatter(char *const *at, const am_run *runs, uint32_t n, const char *in)
{
    for (uint32_t i = 0; i < n; in += runs[i].len, i++)
        memcpy(at[i], in, runs[i].len);
}

static void answer(int src, struct lmpi_rma_am *am, const lmpi_pkt_hdr *h, lmpi_status st, const void *data,
                   size_t len, int64_t pos)
{
    bool reply = h->tag == AM_GET || h->tag == AM_GACC || h->tag == AM_CAS;
    if (h->sreq == AM_SILENT && st == LMPI_OK)
        return;
    send_to(src, am, reply ? AM_REPLY : AM_ACK, h->sreq, (uint64_t)st, (uint64_t)pos, st == LMPI_OK ? data : NULL,
            st == LMPI_OK ? len : 0);
}

static void apply(int src, struct lmpi_rma_am *am, const lmpi_pkt_hdr *h, const char *payload)
{
    lmpi_win *w = am->win;
    am_prefix pre;
    memcpy(&pre, payload, sizeof(pre));
    const am_run *runs = (const am_run *)(payload + sizeof(pre));
    const char *data = (const char *)(runs + pre.nruns);
    int64_t pos = pre.pos;
    size_t bytes = (size_t)h->len;
    char *at[AM_RUNS];
    for (uint32_t i = 0; i < pre.nruns; i++)
        if (!(at[i] = target_at(w, (int64_t)h->addr, runs[i].off, runs[i].len))) {
            answer(src, am, h, LMPI_ERR_RMA_RANGE, NULL, 0, pos);
            return;
        }
    lmpi_status st = LMPI_OK;
    char small[256], *cur = bytes <= sizeof(small) ? small : lmpi_malloc(bytes ? bytes : 1, LMPI_MEM_RMA);
    if (!cur) {
        answer(src, am, h, LMPI_ERR_NO_MEM, NULL, 0, pos);
        return;
    }
    switch (h->tag) {
    case AM_PUT:
        scatter(at, runs, pre.nruns, data);
        break;
    case AM_GET:
        gather(at, runs, pre.nruns, cur);
        break;
    case AM_CAS:
        gather(at, runs, pre.nruns, cur);
        if (!memcmp(cur, data + bytes, bytes))
            scatter(at, runs, pre.nruns, data);
        break;
    default: { /* accumulates */
        lmpi_datatype *b = lmpi_datatype_from_handle((MPI_Datatype)(uintptr_t)h->rreq);
        lmpi_op *o = NULL;
        gather(at, runs, pre.nruns, cur);
        if (pre.op == (int)(uintptr_t)MPI_NO_OP)
            break;
        char in_small[256], *in = bytes <= sizeof(in_small) ? in_small : lmpi_malloc(bytes, LMPI_MEM_RMA);
        st = in ? lmpi_op_arg((MPI_Op)(uintptr_t)pre.op, &o, "op") : LMPI_ERR_NO_MEM;
        if (st == LMPI_OK) {
            /* the old value answers a fetching accumulate: combine into a copy */
            memcpy(in, data, bytes);
            char *old = h->tag == AM_GACC ? lmpi_malloc(bytes, LMPI_MEM_RMA) : NULL;
            if (h->tag == AM_GACC && !old) {
                st = LMPI_ERR_NO_MEM;
            } else {
                if (old)
                    memcpy(old, cur, bytes);
                st = lmpi_rma_combine(o, b, (MPI_Count)(bytes / (size_t)b->size), cur, in);
                if (st == LMPI_OK)
                    scatter(at, runs, pre.nruns, cur);
                if (old) {
                    memcpy(cur, old, bytes);
                    lmpi_free(old);
                }
            }
        }
        if (in != in_small)
            lmpi_free(in);
        break;
    }
    }
    answer(src, am, h, st, cur, h->tag == AM_PUT || h->tag == AM_ACC ? 0 : bytes, pos);
    if (cur != small)
        lmpi_free(cur);
}

/* ---- locks at the target -------------------------------------------------------- */

static bool compatible(const struct lmpi_rma_am *am, int type)
{
    return !am->excl && (type == MPI_LOCK_SHARED || am->shared == 0);
}

static void grant(struct lmpi_rma_am *am, int world, int type, uint64_t cookie)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        am->excl = true;
    else
        am->shared++;
    send_to(world, am, AM_GRANT, cookie, 0, 0, NULL, 0);
}

static void lock_request(struct lmpi_rma_am *am, int world, int type, uint64_t cookie)
{
    if (am->qn == 0 && compatible(am, type)) { /* waiters first: no starving an exclusive one */
        grant(am, world, type, cookie);
        return;
    }
    if (am->qn == am->qcap) {
        int cap = am->qcap ? 2 * am->qcap : 4;
        am_waiter *q = lmpi_malloc((size_t)cap * sizeof(*q), LMPI_MEM_RMA);
        if (!q)
            lmpi_abort_job(MPI_ERR_NO_MEM, "out of memory queueing a lock request");
        for (int i = 0; i < am->qn; i++)
            q[i] = am->q[(am->qhead + i) % am->qcap];
        lmpi_free(am->q);
        am->q = q;
        am->qhead = 0;
        am->qcap = cap;
    }
    am->q[(am->qhead + am->qn++) % am->qcap] = (am_waiter){world, type, cookie};
}

static void unlock_request(struct lmpi_rma_am *am, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        am->excl = false;
    else if (am->shared > 0)
        am->shared--;
    while (am->qn && compatible(am, am->q[am->qhead].type)) {
        am_waiter wt = am->q[am->qhead];
        am->qhead = (am->qhead + 1) % am->qcap;
        am->qn--;
        grant(am, wt.world, wt.type, wt.cookie);
    }
}

/* ---- arrivals ---------------------------------------------------------------------- */

static void deliver(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    struct lmpi_rma_am *am = find(h->ctx);
    if (!am) /* a window freed meanwhile cannot be addressed by a correct program */
        return;
    switch (h->tag) {
    case AM_ACK:
    case AM_REPLY: {
        am_result *r = (am_result *)(uintptr_t)h->sreq;
        if (h->rreq != LMPI_OK && am->error == LMPI_OK) {
            am->error = (lmpi_status)h->rreq;
            am->error_rank = h->rank;
        }
        if (h->sreq == AM_SILENT) /* a refusal: the count waits for the flush's answer */
            return;
        if (r) {
            if (h->rreq == LMPI_OK && len)
                lmpi_dt_unpack(r->buf, r->count, r->dt, (MPI_Count)h->addr, (MPI_Count)len, payload);
            if (--r->pieces == 0) {
                lmpi_datatype_release(r->dt);
                lmpi_free(r);
            }
        }
        am->outstanding--;
        return;
    }
    case AM_GRANT:
        *(volatile int *)(uintptr_t)h->sreq = 1;
        return;
    case AM_LOCK:
        lock_request(am, src, (int)h->addr, h->sreq);
        return;
    case AM_UNLOCK:
        unlock_request(am, (int)h->addr);
        send_to(src, am, AM_ACK, 0, LMPI_OK, 0, NULL, 0);
        return;
    case AM_FLUSH: /* everything before it from src is applied */
        send_to(src, am, AM_ACK, 0, LMPI_OK, 0, NULL, 0);
        return;
    default:
        apply(src, am, h, payload);
    }
}
