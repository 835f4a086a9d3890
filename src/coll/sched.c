/* The schedule engine (see sched.h). */
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "coll/calls.h"
#include "coll/sched.h"
#include "ft/ft.h"
#include "pt2pt/pt2pt.h"
#include "runtime/config.h"

typedef enum { S_SEND, S_RECV, S_REDUCE, S_COPY, S_FENCE } step_kind;

typedef struct {
    uint8_t kind;
    int peer;
    lmpi_comm *comm; /* NULL: the schedule's communicator */
    const void *src, *src2; /* src2: the second operand of a reduce_into */
    void *dst;
    MPI_Count count, rcount;
    lmpi_datatype *dt, *rdt;
    lmpi_op *op;
} step;

#define INLINE_STEPS 24
#define ARENA_BYTES 512
#define CACHED_SCHEDS 8

struct lmpi_sched {
    struct lmpi_sched *next_free;
    lmpi_comm *comm;
    uint32_t ctx;
    int tag;
    step *steps;
    int n, cap, pos;
    lmpi_request **active;
    int nactive, capactive;
    void **scratch;
    size_t *scratch_size;
    int nscratch;
    lmpi_status error;
    bool mismatched; /* a message had another size than its receive: later sends carry nothing */
    lmpi_comm *step_comm; /* communicator of the steps being added (NULL: comm) */
    lmpi_op *user_op;     /* held until the schedule is freed (MPI_Op_free may come first) */
    lmpi_datatype *owned_types[LMPI_SCHED_OWNED_TYPES]; /* made for the schedule, freed with it */
    int nowned;
    /* the user's derived datatypes its steps use, held until it is freed:
     * the program may free its handles while a nonblocking collective runs */
    lmpi_datatype **held_types;
    int nheld, capheld;
    /* started nonblocking schedules not finished yet: advanced by every
     * progress poll, so that waiting on one collective (or on anything)
     * moves the others on too, whatever order the ranks wait in */
    lmpi_request *req;
    lmpi_progress_item progress;
    /* small collectives allocate nothing: their steps and scratch fit here,
     * and freed schedules are kept for the next call */
    size_t arena_used;
    step inline_steps[INLINE_STEPS];
    _Alignas(16) char arena[ARENA_BYTES];
};

lmpi_coll_stats lmpi_coll_stat;

static lmpi_sched *free_scheds;
static int nfree_scheds;

lmpi_sched *lmpi_sched_new(lmpi_comm *comm)
{
    lmpi_coll_stat.scheduled++;
    lmpi_sched *s = free_scheds;
    if (s) {
        free_scheds = s->next_free;
        nfree_scheds--;
        lmpi_request **active = s->active;
        int capactive = s->capactive;
        lmpi_memzero(s, offsetof(lmpi_sched, inline_steps));
        s->active = active; /* kept with its capacity */
        s->capactive = capactive;
    } else {
        s = lmpi_calloc(1, sizeof(*s), LMPI_MEM_COLL);
        if (!s)
            return NULL;
    }
    s->steps = s->inline_steps;
    s->cap = INLINE_STEPS;
    s->comm = comm;
    s->ctx = comm->context_id + LMPI_CTX_COLL;
    s->tag = 0; /* taken when it runs or starts (sched_tag) */
    return s;
}

void lmpi_sched_use_comm(lmpi_sched *s, lmpi_comm *c) { s->step_comm = c == s->comm ? NULL : c; }

static lmpi_status hold_type(lmpi_sched *s, lmpi_datatype *dt)
{
    if (!dt || dt->predefined)
        return LMPI_OK;
    for (int i = 0; i < s->nheld; i++)
        if (s->held_types[i] == dt)
            return LMPI_OK;
    if (s->nheld == s->capheld) {
        int ncap = s->capheld ? 2 * s->capheld : 4;
        lmpi_datatype **n = lmpi_realloc(s->held_types, sizeof(*n) * (size_t)ncap, LMPI_MEM_COLL);
        if (!n)
            return LMPI_ERR_NO_MEM;
        s->held_types = n;
        s->capheld = ncap;
    }
    lmpi_datatype_retain(dt);
    s->held_types[s->nheld++] = dt;
    return LMPI_OK;
}

static lmpi_status add(lmpi_sched *s, step st)
{
    st.comm = s->step_comm;
    lmpi_status e = hold_type(s, st.dt);
    if (e == LMPI_OK)
        e = hold_type(s, st.rdt);
    if (e != LMPI_OK)
        return e;
    if (st.op && !st.op->predefined && st.op != s->user_op) {
        /* a schedule reduces with one operation */
        if (s->user_op)
            lmpi_op_release(s->user_op);
        lmpi_op_retain(st.op);
        s->user_op = st.op;
    }
    if (s->n == s->cap) {
        int ncap = 2 * s->cap;
        step *n = lmpi_malloc(sizeof(step) * (size_t)ncap, LMPI_MEM_COLL);
        if (!n)
            return LMPI_ERR_NO_MEM;
        memcpy(n, s->steps, sizeof(step) * (size_t)s->n);
        if (s->steps != s->inline_steps)
            lmpi_free(s->steps);
        s->steps = n;
        s->cap = ncap;
    }
    s->steps[s->n++] = st;
    return LMPI_OK;
}

lmpi_status lmpi_sched_send(lmpi_sched *s, const void *buf, MPI_Count count, lmpi_datatype *dt, int peer)
{
    return add(s, (step){.kind = S_SEND, .peer = peer, .src = buf, .count = count, .dt = dt});
}

lmpi_status lmpi_sched_recv(lmpi_sched *s, void *buf, MPI_Count count, lmpi_datatype *dt, int peer)
{
    return add(s, (step){.kind = S_RECV, .peer = peer, .dst = buf, .count = count, .dt = dt});
}

lmpi_status lmpi_sched_reduce(lmpi_sched *s, const void *in, void *inout, MPI_Count count, lmpi_datatype *dt,
                              lmpi_op *op)
{
    return add(s, (step){.kind = S_REDUCE, .src = in, .dst = inout, .count = count, .dt = dt, .op = op});
}

lmpi_status lmpi_sched_reduce_into(lmpi_sched *s, const void *a, const void *b, void *out, MPI_Count count,
                                   lmpi_datatype *dt, lmpi_op *op)
{
    if (b == out)
        return lmpi_sched_reduce(s, a, out, count, dt, op);
    return add(s, (step){.kind = S_REDUCE, .src = a, .src2 = b, .dst = out, .count = count, .dt = dt, .op = op});
}

lmpi_status lmpi_sched_copy(lmpi_sched *s, const void *src, MPI_Count scount, lmpi_datatype *sdt, void *dst,
                            MPI_Count rcount, lmpi_datatype *rdt)
{
    return add(s, (step){.kind = S_COPY, .src = src, .count = scount, .dt = sdt, .dst = dst, .rcount = rcount,
                         .rdt = rdt});
}

lmpi_status lmpi_sched_fence(lmpi_sched *s) { return add(s, (step){.kind = S_FENCE}); }

/* Large scratch blocks are kept after use: a fresh one of a megabyte costs
 * page faults and the kernel's zeroing on every call (measured on 1 MiB
 * reductions).  A few, first fit.  They are mapped on their own, page
 * aligned: lmpi_malloc's header put them 16 bytes into a page, which is
 * 16 bytes past a user buffer that glibc mapped, and the kernel's
 * cross-memory copy between the two runs 5x slow (4K aliasing; the
 * transport's bounce buffer then doubles the copy).  Whether a block was
 * mapped follows from its size alone. */
#define KEPT_SCRATCH 4
#define KEPT_MIN (64u << 10)
static struct {
    void *p;
    size_t size;
} kept[KEPT_SCRATCH];

static size_t page_round(size_t bytes) { return (bytes + 4095) & ~(size_t)4095; }

static void *scratch_alloc(size_t bytes, size_t *got)
{
    for (int i = 0; i < KEPT_SCRATCH; i++)
        if (kept[i].p && kept[i].size >= bytes && kept[i].size <= 2 * bytes + KEPT_MIN) {
            void *p = kept[i].p;
            *got = kept[i].size;
            kept[i].p = NULL;
            return p;
        }
    if (bytes < KEPT_MIN) {
        *got = bytes;
        return lmpi_malloc(bytes, LMPI_MEM_COLL);
    }
    *got = page_round(bytes);
    void *p = mmap(NULL, *got, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    lmpi_mem_account(LMPI_MEM_COLL, (int64_t)*got);
    return p;
}

static void scratch_unmap(void *p, size_t size)
{
    munmap(p, size);
    lmpi_mem_account(LMPI_MEM_COLL, -(int64_t)size);
}

static void scratch_release(void *p, size_t size)
{
    if (size < KEPT_MIN) {
        lmpi_free(p);
        return;
    }
    for (int i = 0; i < KEPT_SCRATCH; i++)
        if (!kept[i].p) {
            kept[i].p = p;
            kept[i].size = size;
            return;
        }
    scratch_unmap(p, size);
}

void *lmpi_sched_scratch(lmpi_sched *s, size_t bytes)
{
    size_t need = (bytes + 15) & ~(size_t)15;
    if (need <= ARENA_BYTES - s->arena_used) {
        void *p = s->arena + s->arena_used;
        s->arena_used += need;
        return p;
    }
    void **n = lmpi_realloc(s->scratch, sizeof(void *) * (size_t)(s->nscratch + 1), LMPI_MEM_COLL);
    if (!n)
        return NULL;
    s->scratch = n;
    size_t *sizes = lmpi_realloc(s->scratch_size, sizeof(size_t) * (size_t)(s->nscratch + 1), LMPI_MEM_COLL);
    if (!sizes)
        return NULL;
    s->scratch_size = sizes;
    void *p = scratch_alloc(bytes ? bytes : 1, &sizes[s->nscratch]);
    if (p)
        s->scratch[s->nscratch++] = p;
    return p;
}

static void unlist(lmpi_sched *s);

bool lmpi_sched_own_type(lmpi_sched *s, lmpi_datatype *dt)
{
    if (s->nowned == LMPI_SCHED_OWNED_TYPES)
        return false;
    s->owned_types[s->nowned++] = dt;
    return true;
}

void lmpi_sched_free(lmpi_sched *s)
{
    unlist(s);
    if (s->user_op)
        lmpi_op_release(s->user_op);
    s->user_op = NULL;
    for (int i = 0; i < s->nowned; i++)
        lmpi_datatype_release(s->owned_types[i]);
    s->nowned = 0;
    for (int i = 0; i < s->nheld; i++)
        lmpi_datatype_release(s->held_types[i]);
    lmpi_free(s->held_types);
    s->held_types = NULL;
    s->nheld = s->capheld = 0;
    for (int i = 0; i < s->nactive; i++)
        if (s->active[i]) {
            lmpi_request_wait(s->active[i]);
            lmpi_pt2pt_wait_free(s->active[i], MPI_STATUS_IGNORE);
        }
    for (int i = 0; i < s->nscratch; i++)
        scratch_release(s->scratch[i], s->scratch_size[i]);
    lmpi_free(s->scratch);
    lmpi_free(s->scratch_size);
    if (s->steps != s->inline_steps)
        lmpi_free(s->steps);
    if (nfree_scheds < CACHED_SCHEDS) {
        s->next_free = free_scheds;
        free_scheds = s;
        nfree_scheds++;
        return;
    }
    lmpi_free(s->active);
    lmpi_free(s);
}

void lmpi_sched_finalize(void)
{
    for (int i = 0; i < KEPT_SCRATCH; i++) {
        if (kept[i].p)
            scratch_unmap(kept[i].p, kept[i].size);
        kept[i].p = NULL;
    }
    while (free_scheds) {
        lmpi_sched *s = free_scheds;
        free_scheds = s->next_free;
        lmpi_free(s->active);
        lmpi_free(s);
    }
    nfree_scheds = 0;
}

/* (src, scount, sdt) -> (dst, rcount, rdt): same signature, any layouts. */
static lmpi_status local_copy(const step *st)
{
    MPI_Count sb = st->count * st->dt->size, rb = st->rcount * st->rdt->size;
    if (sb > rb) {
        lmpi_err_detail("a local copy of %lld bytes into %lld", (long long)sb, (long long)rb);
        return LMPI_ERR_TRUNCATE;
    }
    if (sb == 0)
        return LMPI_OK;
    if (st->dt->contiguous && st->rdt->contiguous) {
        memmove((char *)st->dst + st->rdt->true_lb, (const char *)st->src + st->dt->true_lb, (size_t)sb);
        return LMPI_OK;
    }
    void *tmp = lmpi_malloc((size_t)sb, LMPI_MEM_COLL);
    if (!tmp)
        return LMPI_ERR_NO_MEM;
    lmpi_dt_pack(st->src, st->count, st->dt, 0, sb, tmp);
    lmpi_dt_unpack(st->dst, st->rcount, st->rdt, 0, sb, tmp);
    lmpi_free(tmp);
    return LMPI_OK;
}

/* dst = src op src2 in blocks that stay in cache: copy a block of src2,
 * reduce src into it. */
#define REDUCE_BLOCK (16u << 10)
static lmpi_status reduce_into(const step *st)
{
    if (!st->dt->contiguous) {
        step copy = {.src = st->src2, .count = st->count, .dt = st->dt, .dst = st->dst, .rcount = st->count,
                     .rdt = st->dt};
        lmpi_status e = local_copy(&copy);
        return e != LMPI_OK ? e : lmpi_op_apply(st->op, st->src, st->dst, st->count, st->dt);
    }
    MPI_Count per = st->dt->size ? REDUCE_BLOCK / st->dt->size : st->count;
    per = per > 0 ? per : 1;
    for (MPI_Count i = 0; i < st->count; i += per) {
        MPI_Count n = st->count - i < per ? st->count - i : per;
        MPI_Aint off = (MPI_Aint)i * st->dt->extent;
        memcpy((char *)st->dst + off + st->dt->true_lb, (const char *)st->src2 + off + st->dt->true_lb,
               (size_t)(n * st->dt->size));
        lmpi_status e = lmpi_op_apply(st->op, (const char *)st->src + off, (char *)st->dst + off, n, st->dt);
        if (e != LMPI_OK)
            return e;
    }
    return LMPI_OK;
}

/* Start the next round; false when there is nothing left. */
static bool start_round(lmpi_sched *s)
{
    if (s->pos >= s->n)
        return false;
    s->nactive = 0;
    for (; s->pos < s->n; s->pos++) {
        step *st = &s->steps[s->pos];
        lmpi_status e = LMPI_OK;
        lmpi_request *r = NULL;
        if (st->kind == S_FENCE) {
            s->pos++;
            break;
        }
        /* steps on an internal communicator (local group, node, node roots)
         * use its collective context with the schedule's tag */
        lmpi_comm *comm = st->comm ? st->comm : s->comm;
        uint32_t ctx = st->comm ? comm->context_id + LMPI_CTX_COLL : s->ctx;
        switch ((step_kind)st->kind) {
        case S_SEND:
            /* after a mismatch, an empty message: every receiver that
             * expects data learns of it too (MPI_ERR_COUNT), not only the
             * first one below the mismatch */
            e = lmpi_pt2pt_start_send_ctx(st->src, s->mismatched ? 0 : st->count, st->dt, st->peer, s->tag, comm, ctx,
                                          &r);
            break;
        case S_RECV:
            e = lmpi_pt2pt_start_recv_ctx(st->dst, st->count, st->dt, st->peer, s->tag, comm, ctx, &r);
            break;
        case S_REDUCE:
            e = st->src2 ? reduce_into(st) : lmpi_op_apply(st->op, st->src, st->dst, st->count, st->dt);
            break;
        case S_COPY:
            e = local_copy(st);
            break;
        default:
            break;
        }
        if (e != LMPI_OK && s->error == LMPI_OK)
            s->error = e;
        if (r) {
            if (s->nactive == s->capactive) {
                int ncap = s->capactive ? 2 * s->capactive : 8;
                lmpi_request **n = lmpi_realloc(s->active, sizeof(*n) * (size_t)ncap, LMPI_MEM_COLL);
                if (!n) {
                    s->error = LMPI_ERR_NO_MEM;
                    lmpi_pt2pt_wait_free(r, MPI_STATUS_IGNORE);
                    continue;
                }
                s->active = n;
                s->capactive = ncap;
            }
            s->active[s->nactive++] = r;
        }
    }
    return true;
}

/* A failure of a member or a revoke (src/ft): every message of the
 * schedule still waiting is given up and no further round starts; each
 * member waiting in it sees the same failure and ends too. */
static void give_up(lmpi_sched *s, lmpi_status e)
{
    int cls = lmpi_status_class(e);
    for (int i = 0; i < s->nactive; i++)
        if (s->active[i])
            lmpi_ft_abandon(s->active[i], cls);
    if (s->error == LMPI_OK)
        s->error = e;
    s->pos = s->n;
}

/* Advance without blocking; true when the schedule has finished. */
static bool advance(lmpi_sched *s)
{
    lmpi_status broken;
    if (LMPI_UNLIKELY(lmpi_ft_active) && s->pos <= s->n && (broken = lmpi_ft_comm_broken(s->comm)) != LMPI_OK)
        give_up(s, broken);
    for (;;) {
        for (int i = 0; i < s->nactive; i++)
            if (s->active[i] && !lmpi_request_done(s->active[i]))
                return false;
        for (int i = 0; i < s->nactive; i++)
            if (s->active[i]) {
                MPI_Status stt;
                bool recv = s->active[i]->kind == LMPI_REQ_RECV;
                size_t want = s->active[i]->bytes;
                lmpi_status e = lmpi_pt2pt_wait_free(s->active[i], &stt);
                /* a collective's messages have the sizes both sides' counts
                 * agree on: a shorter one means counts or types that differ
                 * (an erroneous program, as MPICH's errors/coll/ibcastlength) */
                if (e == LMPI_OK && recv && (size_t)lmpi_status_bytes(&stt) != want) {
                    lmpi_err_detail("a collective's message has %lld bytes where this rank's counts expect %zu "
                                    "(counts or types differ between ranks)", (long long)lmpi_status_bytes(&stt), want);
                    e = LMPI_ERR_COUNT;
                }
                if (e == LMPI_ERR_COUNT || e == LMPI_ERR_TRUNCATE)
                    s->mismatched = true;
                if (e != LMPI_OK && s->error == LMPI_OK)
                    s->error = e;
                s->active[i] = NULL;
            }
        s->nactive = 0;
        if (!start_round(s))
            return true;
    }
}

/* Every member calls collectives in the same order: a sequence number
 * tells successive ones apart.  Blocking and nonblocking collectives count
 * apart (as MPICH's fixed and schedule tags do), so that a program that
 * starts a nonblocking one while the others are in a blocking one (mpi4py's
 * emulated MPI_Comm_iagree) still matches each with its own kind. */
static void sched_tag(lmpi_sched *s, bool nonblocking)
{
    if (nonblocking)
        lmpi_coll_counted = true;
    if (!s->tag)
        s->tag = nonblocking ? LMPI_COLL_TAG_NBC | (int)(s->comm->nbc_seq++ & LMPI_COLL_SEQ_MASK)
                             : LMPI_COLL_TAG_BLOCKING | (int)(s->comm->coll_seq++ & LMPI_COLL_SEQ_MASK);
}

lmpi_status lmpi_sched_run(lmpi_sched *s)
{
    sched_tag(s, false);
    unsigned idle = 0;
    while (!advance(s)) {
        if (lmpi_progress_poll() > 0)
            idle = 0;
        else
            lmpi_progress_idle(&idle);
    }
    lmpi_status st = s->error;
    lmpi_sched_free(s);
    return st;
}

static void unlist(lmpi_sched *s)
{
    lmpi_progress_list_remove(LMPI_PROGRESS_SCHED, &s->progress);
}

/* From the progress list: moves a started schedule on by what has arrived. */
static bool advance_listed(lmpi_progress_item *it)
{
    lmpi_sched *s = lmpi_container_of(it, lmpi_sched, progress);
    lmpi_request *r = s->req;
    if (!r->complete && advance(s)) {
        r->sched_error = s->error;
        r->complete = 1;
    }
    return r->complete;
}

static void list_active(lmpi_sched *s)
{
    lmpi_progress_lists[LMPI_PROGRESS_SCHED].advance = advance_listed;
    lmpi_progress_list_add(LMPI_PROGRESS_SCHED, &s->progress);
}

static bool req_advance(lmpi_request *r)
{
    lmpi_progress_poll();
    if (r->complete) /* the hook finished it */
        return true;
    bool done = advance(r->sched);
    if (done) {
        r->sched_error = ((lmpi_sched *)r->sched)->error;
        unlist(r->sched);
    }
    return done;
}

static void req_free(lmpi_request *r)
{
    if (r->sched) {
        unlist(r->sched);
        lmpi_sched_free(r->sched);
    }
    r->sched = NULL;
}

/* The request that carries a schedule (which it owns from here). */
static lmpi_request *sched_request(lmpi_sched *s)
{
    lmpi_request *r = lmpi_request_alloc(LMPI_REQ_SCHED);
    if (!r) {
        lmpi_sched_free(s);
        return NULL;
    }
    r->sched = s;
    s->req = r;
    r->comm = s->comm; /* its errors go to the communicator's handler */
    r->advance = req_advance;
    r->sched_free = req_free;
    return r;
}

lmpi_status lmpi_sched_start(lmpi_sched *s, MPI_Request *request)
{
    sched_tag(s, true);
    lmpi_request *r = sched_request(s);
    if (!r)
        return LMPI_ERR_NO_MEM;
    r->complete = advance(s);
    if (r->complete)
        r->sched_error = s->error;
    else
        list_active(s);
    *request = (MPI_Request)r;
    return LMPI_OK;
}

lmpi_status lmpi_sched_persistent(lmpi_sched *s, MPI_Request *request)
{
    sched_tag(s, true);
    lmpi_request *r = sched_request(s);
    if (!r)
        return LMPI_ERR_NO_MEM;
    r->persistent = true;
    r->active = false;
    *request = (MPI_Request)r;
    return LMPI_OK;
}

void lmpi_sched_restart(lmpi_request *r)
{
    lmpi_sched *s = r->sched;
    s->pos = 0;
    s->nactive = 0;
    s->error = LMPI_OK;
    s->mismatched = false;
    r->sched_error = LMPI_OK;
    r->active = true;
    r->complete = advance(s);
    if (r->complete)
        r->sched_error = s->error;
    else
        list_active(s);
}

lmpi_status lmpi_sched_finish(lmpi_sched *s, lmpi_status st, MPI_Request *request, bool persist)
{
    if (st != LMPI_OK) {
        lmpi_sched_free(s);
        return st;
    }
    if (persist)
        return lmpi_sched_persistent(s, request);
    return request ? lmpi_sched_start(s, request) : lmpi_sched_run(s);
}
