/* MPIX_Comm_agree and MPIX_Comm_shrink: a consensus that failures during
 * it cannot block (README.md in this folder).
 *
 * The launcher is a perfect failure detector here (it reaps its ranks), so
 * a coordinator-based consensus with a rotating coordinator is enough
 * (Chandra and Toueg's, with failures detected for certain):
 *
 *   - each member sends its contribution (the AND of the flags, the largest
 *     free context id, the failed members it knows) to the coordinator, the
 *     lowest rank not known to have failed;
 *   - the coordinator waits for every member it does not know failed,
 *     decides, and sends the decision to every member; members return when
 *     it arrives (the coordinator at once: an early return);
 *   - a member that learns its coordinator failed sends its contribution to
 *     the next one; a member that becomes coordinator by a failure asks
 *     every member first (QUERY): one that decided answers with the decision,
 *     which the new coordinator adopts and forwards, so every survivor
 *     decides the same value even when the old coordinator sent it to only
 *     some before failing.
 *
 * Instances of one communicator are numbered (comm->ft_agree_seq): every
 * member runs them in the same order.  A member keeps the last decision to
 * answer late questions, and packets of the instance after its current one
 * wait in a small queue until it gets there. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "ft/ft_internal.h"
#include "pt2pt/pt2pt.h"

typedef struct stashed {
    struct stashed *next;
    lmpi_pkt_hdr h;
    size_t len;
    uint64_t payload[];
} stashed;

typedef struct agreement {
    struct agreement *next;
    uint32_t ctx;
    int size, words;
    uint32_t seq;        /* the instance this process runs next, or runs */
    bool running;        /* called, not decided */
    bool decided;        /* seq is decided (maybe before we called: a forwarded decision) */
    int coord;           /* where our contribution went (-1: nowhere yet) */
    int seen_failures;   /* lmpi_ft_nfailed() when we last chose a coordinator */
    /* what the coordinator gathered for seq (ours included once we run) */
    uint64_t *got;
    int flag;
    uint32_t ctxmax;
    uint64_t *fbits;
    /* our own contribution, kept to send again to a new coordinator */
    int my_flag;
    uint32_t my_ctx;
    /* the decision of seq, then of seq - 1 once we moved on */
    int d_flag;
    uint32_t d_ctx;
    uint64_t *d_bits;
    bool have_last;
    int last_flag;
    uint32_t last_ctx;
    uint64_t *last_bits;
    stashed *later; /* packets of seq + 1 and on */
} agreement;

static agreement *all;
/* Packets for a communicator this process has not finished creating yet
 * (a faster member already agrees over it): kept until it exists. */
static stashed *orphans;
static int norphans;
#define MAX_ORPHANS 4096

static stashed *stash(const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    stashed *s = lmpi_malloc(sizeof(*s) + len, LMPI_MEM_COMM);
    if (s) {
        s->h = *h;
        s->len = len;
        memcpy(s->payload, payload, len);
        s->next = NULL;
    }
    return s;
}

static agreement *find(uint32_t ctx, int size)
{
    for (agreement *a = all; a; a = a->next)
        if (a->ctx == ctx)
            return a;
    if (size <= 0)
        return NULL;
    agreement *a = lmpi_calloc(1, sizeof(*a), LMPI_MEM_COMM);
    if (!a)
        return NULL;
    a->ctx = ctx;
    a->size = size;
    a->words = (size + 63) / 64;
    a->got = lmpi_calloc((size_t)a->words * 4, 8, LMPI_MEM_COMM);
    if (!a->got) {
        lmpi_free(a);
        return NULL;
    }
    a->fbits = a->got + a->words;
    a->d_bits = a->fbits + a->words;
    a->last_bits = a->d_bits + a->words;
    a->flag = ~0;
    a->ctxmax = 0;
    a->coord = -1;
    a->next = all;
    all = a;
    /* what came before the communicator existed here */
    for (stashed **o = &orphans; *o;) {
        stashed *s = *o;
        if (s->h.ctx == ctx) {
            *o = s->next;
            norphans--;
            s->next = a->later;
            a->later = s;
        } else {
            o = &s->next;
        }
    }
    return a;
}

void lmpi_ft_agree_forget_all(void)
{
    while (orphans) {
        stashed *s = orphans;
        orphans = s->next;
        lmpi_free(s);
    }
    norphans = 0;
    while (all) {
        agreement *a = all;
        all = a->next;
        while (a->later) {
            stashed *s = a->later;
            a->later = s->next;
            lmpi_free(s);
        }
        lmpi_free(a->got);
        lmpi_free(a);
    }
}

static bool bit(const uint64_t *b, int i) { return b[i / 64] >> (i % 64) & 1; }
static void set_bit(uint64_t *b, int i) { b[i / 64] |= 1ull << (i % 64); }

/* The communicator an agreement runs over, found by its context id among
 * the live ones (packets name the context only). */
static lmpi_comm *comm_of(uint32_t ctx)
{
    if (lmpi_comm_world->context_id == ctx)
        return lmpi_comm_world;
    for (lmpi_comm *c = lmpi_comm_live_list; c; c = c->live_next)
        if (c->context_id == ctx && !c->is_inter)
            return c;
    return NULL;
}

static void send_values(lmpi_comm *c, int to, int what, uint32_t seq, int flag, uint32_t ctx, const uint64_t *bits,
                        int words)
{
    lmpi_pkt_hdr h = {.type = LMPI_PKT_FT, .tag = what, .rank = c->rank, .ctx = c->context_id, .len = seq,
                      .addr = (uint64_t)(uint32_t)flag, .sreq = ctx};
    lmpi_ft_send(c, to, &h, bits, bits ? (size_t)words * 8 : 0);
}

static int lowest_alive(lmpi_comm *c)
{
    for (int r = 0; r < c->size; r++)
        if (!lmpi_ft_failed(lmpi_comm_world_rank(c, r)))
            return r;
    return c->rank;
}

/* The failed members we know of, into bits. */
static void add_known_failed(lmpi_comm *c, uint64_t *bits)
{
    int n = lmpi_ft_comm_failed(c, NULL);
    if (!n)
        return;
    int *r = lmpi_malloc((size_t)n * sizeof(int), LMPI_MEM_OTHER);
    if (!r)
        return;
    lmpi_ft_comm_failed(c, r);
    for (int i = 0; i < n; i++)
        set_bit(bits, r[i]);
    lmpi_free(r);
}

static void take(agreement *a, int flag, uint32_t ctx, const uint64_t *bits, size_t len, int from)
{
    set_bit(a->got, from);
    a->flag &= flag;
    if (ctx > a->ctxmax)
        a->ctxmax = ctx;
    for (int w = 0; w < a->words && (size_t)w * 8 < len; w++)
        a->fbits[w] |= bits[w];
}

static void decide(agreement *a, int flag, uint32_t ctx, const uint64_t *bits)
{
    a->decided = true;
    a->d_flag = flag;
    a->d_ctx = ctx;
    memcpy(a->d_bits, bits, (size_t)a->words * 8);
}

static void handle(agreement *a, lmpi_comm *c, const lmpi_pkt_hdr *h, const void *payload, size_t len);

/* Handle the kept packets of the instance we are at now. */
static void replay(agreement *a, lmpi_comm *c)
{
    stashed *s = a->later, **keep = &a->later;
    a->later = NULL;
    while (s) {
        stashed *n = s->next;
        if ((uint32_t)s->h.len == a->seq) {
            handle(a, c, &s->h, s->payload, s->len);
            lmpi_free(s);
        } else {
            s->next = NULL;
            *keep = s;
            keep = &s->next;
        }
        s = n;
    }
}

/* Move on to the next instance, replaying what waited for it. */
static void next_instance(agreement *a, lmpi_comm *c)
{
    a->have_last = true;
    a->last_flag = a->d_flag;
    a->last_ctx = a->d_ctx;
    memcpy(a->last_bits, a->d_bits, (size_t)a->words * 8);
    a->seq++;
    a->running = a->decided = false;
    a->coord = -1;
    a->flag = ~0;
    a->ctxmax = 0;
    memset(a->got, 0, (size_t)a->words * 8);
    memset(a->fbits, 0, (size_t)a->words * 8);
    replay(a, c);
}

static void handle(agreement *a, lmpi_comm *c, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    uint32_t seq = (uint32_t)h->len;
    int flag = (int)(uint32_t)h->addr;
    uint32_t ctx = (uint32_t)h->sreq;
    const uint64_t *bits = payload;
    if (seq + 1 == a->seq && a->have_last) { /* an instance we finished: tell the asker how it ended */
        if (h->tag == LMPI_FT_CONTRIB || h->tag == LMPI_FT_QUERY)
            send_values(c, h->rank, LMPI_FT_DECIDE, seq, a->last_flag, a->last_ctx, a->last_bits, a->words);
        return;
    }
    if (seq != a->seq) {
        if (seq > a->seq) { /* a later instance: keep it until we get there */
            stashed *s = stash(h, payload, len);
            if (s) {
                s->next = a->later;
                a->later = s;
            }
        }
        return;
    }
    switch (h->tag) {
    case LMPI_FT_CONTRIB:
        if (a->decided)
            send_values(c, h->rank, LMPI_FT_DECIDE, seq, a->d_flag, a->d_ctx, a->d_bits, a->words);
        else
            take(a, flag, ctx, bits, len, h->rank);
        return;
    case LMPI_FT_DECIDE:
        if (!a->decided && len >= (size_t)a->words * 8)
            decide(a, flag, ctx, bits);
        return;
    case LMPI_FT_QUERY:
        if (a->decided)
            send_values(c, h->rank, LMPI_FT_DECIDE, seq, a->d_flag, a->d_ctx, a->d_bits, a->words);
        else if (a->running) { /* the asker is our coordinator now */
            a->coord = h->rank;
            add_known_failed(c, a->fbits);
            send_values(c, h->rank, LMPI_FT_CONTRIB, seq, a->my_flag, a->my_ctx, a->fbits, a->words);
        }
        return;
    }
}

void lmpi_ft_agree_packet(const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    lmpi_comm *c = comm_of(h->ctx);
    if (!c) { /* not made here yet (or freed: then kept for nothing, within a bound) */
        stashed *s = norphans < MAX_ORPHANS ? stash(h, payload, len) : NULL;
        if (s) {
            s->next = orphans;
            orphans = s;
            norphans++;
        }
        return;
    }
    agreement *a = find(h->ctx, c->size);
    if (a) {
        replay(a, c);
        handle(a, c, h, payload, len);
    }
}

void lmpi_ft_agree_failures_changed(void)
{
    /* nothing to do here: each running agreement looks at the count of
     * failures when it advances (the wait that noticed polls it next) */
}

/* Drive a running agreement; true once decided. */
static bool advance(agreement *a, lmpi_comm *c)
{
    lmpi_ft_poll();
    if (a->decided)
        return true;
    int nf = lmpi_ft_nfailed();
    int coord = lowest_alive(c);
    if (coord == c->rank) {
        if (a->coord != c->rank) {
            /* coordinator now: by a failure if someone else was before */
            if (a->coord >= 0)
                for (int r = 0; r < c->size; r++)
                    if (r != c->rank)
                        send_values(c, r, LMPI_FT_QUERY, a->seq, 0, 0, NULL, 0);
            a->coord = c->rank;
        }
        for (int r = 0; r < c->size; r++)
            if (!bit(a->got, r) && !lmpi_ft_failed(lmpi_comm_world_rank(c, r)))
                return false; /* still waiting for a living member */
        add_known_failed(c, a->fbits);
        decide(a, a->flag, a->ctxmax, a->fbits);
        /* the tests' failure in the middle: LMPI_FT_INJECT=coord:K, the
         * coordinator of a first agreement dies having told K members */
        static int inject = -2;
        if (inject == -2) {
            const char *e = getenv("LMPI_FT_INJECT");
            inject = e && !strncmp(e, "coord:", 6) ? atoi(e + 6) : -1;
        }
        int told = 0;
        for (int r = 0; r < c->size; r++)
            if (r != c->rank) {
                if (inject >= 0 && a->seq == 0 && told == inject)
                    raise(SIGKILL);
                send_values(c, r, LMPI_FT_DECIDE, a->seq, a->d_flag, a->d_ctx, a->d_bits, a->words);
                told++;
            }
        return true;
    }
    if (a->coord != coord || nf != a->seen_failures) {
        /* first, or our coordinator failed: (again) to the lowest survivor */
        uint64_t *mine = a->fbits; /* not a coordinator: fbits holds what we know */
        add_known_failed(c, mine);
        send_values(c, coord, LMPI_FT_CONTRIB, a->seq, a->my_flag, a->my_ctx, mine, a->words);
        a->coord = coord;
        a->seen_failures = nf;
    }
    return false;
}

/* ---- the calls: one schedule request per agreement -------------------------- */

typedef struct {
    agreement *a;
    lmpi_comm *comm;
    int *flag;          /* agree: where the result goes */
    MPI_Comm *newcomm;  /* shrink: where the new communicator goes */
} agree_call;

static lmpi_status finish_shrink(agree_call *s)
{
    agreement *a = s->a;
    lmpi_comm *c = s->comm;
    int n = 0, me = -1;
    lmpi_gpid *g = lmpi_malloc((size_t)c->size * sizeof(lmpi_gpid), LMPI_MEM_OTHER);
    if (!g)
        return LMPI_ERR_NO_MEM;
    for (int r = 0; r < c->size; r++)
        if (!bit(a->d_bits, r)) {
            if (r == c->rank)
                me = n;
            g[n++] = lmpi_rankmap_gpid(&c->map, r);
        }
    lmpi_rankmap map;
    bool ok = lmpi_rankmap_from_gpids(&map, g, n);
    lmpi_free(g);
    if (!ok)
        return LMPI_ERR_NO_MEM;
    lmpi_ctx_advance(a->d_ctx);
    lmpi_comm *nc;
    lmpi_status st = lmpi_comm_new_from_map(c, &map, me, a->d_ctx, &nc);
    lmpi_rankmap_release(&map);
    if (st != LMPI_OK)
        return st;
    *s->newcomm = nc->handle;
    return LMPI_OK;
}

static bool call_advance(lmpi_request *r)
{
    agree_call *s = r->sched;
    if (!advance(s->a, s->comm))
        return false;
    agreement *a = s->a;
    if (s->newcomm) {
        r->sched_error = finish_shrink(s);
    } else {
        *s->flag = a->d_flag;
        /* failed members this process did not acknowledge: the caller must
         * hear of them (the flag is still the agreed one) */
        int failed = 0;
        for (int w = 0; w < a->words; w++)
            failed += __builtin_popcountll(a->d_bits[w]);
        if ((uint32_t)failed > s->comm->ft_acked) {
            lmpi_err_detail("%d member(s) of the communicator failed and %u of them are acknowledged", failed,
                            s->comm->ft_acked);
            r->sched_error = LMPI_ERR_PROC_FAILED;
        }
    }
    next_instance(a, s->comm);
    return true;
}

static void call_free(lmpi_request *r)
{
    lmpi_free(r->sched);
    r->sched = NULL;
}

static lmpi_status start(lmpi_comm *comm, int *flag, MPI_Comm *newcomm, lmpi_request **out)
{
    if (comm->is_inter) {
        lmpi_err_detail("intercommunicators are not supported by agreement and shrink yet");
        return LMPI_ERR_UNSUPPORTED_OPERATION;
    }
    agreement *a = find(comm->context_id, comm->size);
    agree_call *s = lmpi_calloc(1, sizeof(*s), LMPI_MEM_COMM);
    lmpi_request *r = lmpi_request_alloc(LMPI_REQ_SCHED);
    if (!a || !s || !r) {
        lmpi_free(s);
        if (r)
            lmpi_request_free(r);
        return LMPI_ERR_NO_MEM;
    }
    if (a->running) {
        lmpi_free(s);
        lmpi_request_free(r);
        lmpi_err_detail("an agreement or shrink on this communicator is still running");
        return LMPI_ERR_PENDING;
    }
    replay(a, comm);
    comm->ft_agree_seq++;
    s->a = a;
    s->comm = comm;
    s->flag = flag;
    s->newcomm = newcomm;
    a->running = true;
    a->my_flag = flag ? *flag : ~0;
    a->my_ctx = lmpi_ctx_next();
    take(a, a->my_flag, a->my_ctx, a->fbits, 0, comm->rank);
    a->seen_failures = -1;
    r->comm = comm;
    r->sched = s;
    r->advance = call_advance;
    r->sched_free = call_free;
    r->complete = call_advance(r);
    *out = r;
    return LMPI_OK;
}

static lmpi_status run(lmpi_comm *comm, int *flag, MPI_Comm *newcomm)
{
    lmpi_request *r;
    LMPI_TRY(start(comm, flag, newcomm, &r));
    lmpi_request_wait(r);
    lmpi_status st = r->sched_error;
    r->sched_free(r);
    lmpi_request_free(r);
    return st;
}

lmpi_status lmpi_impl_Comm_agree(lmpi_comm *comm, int *flag) { return run(comm, flag, NULL); }

lmpi_status lmpi_impl_Comm_iagree(lmpi_comm *comm, int *flag, MPI_Request *request)
{
    lmpi_request *r;
    LMPI_TRY(start(comm, flag, NULL, &r));
    *request = (MPI_Request)r;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_shrink(lmpi_comm *comm, MPI_Comm *newcomm) { return run(comm, NULL, newcomm); }

lmpi_status lmpi_impl_Comm_ishrink(lmpi_comm *comm, MPI_Comm *newcomm, MPI_Request *request)
{
    lmpi_request *r;
    LMPI_TRY(start(comm, NULL, newcomm, &r));
    *request = (MPI_Request)r;
    return LMPI_OK;
}

lmpi_status lmpi_ft_finalize_barrier(void)
{
    int flag = ~0;
    lmpi_status st = run(lmpi_comm_world, &flag, NULL);
    return st == LMPI_ERR_PROC_FAILED ? LMPI_OK : st; /* the failed are expected to be missing */
}
