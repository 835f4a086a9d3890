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
 * Instances of one communicator are numbered (agreement.seq): every
 * member runs them in the same order.  A member keeps the last decision to
 * answer late questions, and packets of the instance after its current one
 * wait in a small queue until it gets there. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "dpm/dpm.h"
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
    /* the members, as world ranks: the communicator's order, or for an
     * intercommunicator both groups sorted by world rank (the same order
     * on both sides); bit i of every bitmap below is members[i] */
    int *members;
    uint64_t *remote_bits; /* an intercommunicator's remote group among them */
    int me;
    uint32_t seq;        /* the instance this process runs next, or runs */
    bool running;        /* called, not decided */
    bool decided;        /* seq is decided (maybe before we called: a forwarded decision) */
    int coord;           /* where our contribution went (-1: nowhere yet) */
    int seen_failures;   /* lmpi_ft_nfailed() when we last chose a coordinator */
    /* what the coordinator gathered for seq (ours included once we run) */
    uint64_t *got;
    int ngot; /* bits set in got */
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

/* A member as every process names it: its job's group key (a hash of the
 * job's kvsname) and its rank there.  Transport addresses are this
 * process's own numbering of other groups. */
typedef struct {
    uint64_t id;
    int addr;
    bool remote; /* of an intercommunicator's remote group */
} member;

static int by_id(const void *x, const void *y)
{
    uint64_t a = ((const member *)x)->id, b = ((const member *)y)->id;
    return (a > b) - (a < b);
}

static member member_of(lmpi_comm *c, int r)
{
    lmpi_gpid g = lmpi_rankmap_gpid(&c->map, r);
    return (member){lmpi_dpm_group_key(g.pgid) << 32 | g.lpid, lmpi_comm_world_rank(c, r), false};
}

/* Who takes part in agreements over c (as transport addresses), in an
 * order every member computes alike, and which of them we are: an
 * intracommunicator's rank order (also one that spans process groups);
 * for an intercommunicator both groups sorted by (job, rank), and which of
 * them are of its remote group (*remote_bits, NULL for an intracommunicator). */
static int *members_of(lmpi_comm *c, int *n, int *me, uint64_t **remote_bits)
{
    int local = c->size, remote = c->is_inter ? c->peer_size : 0;
    member *e = lmpi_malloc((size_t)(local + remote) * sizeof(member), LMPI_MEM_COMM);
    int *m = lmpi_malloc((size_t)(local + remote) * sizeof(int), LMPI_MEM_COMM);
    if (!e || !m) {
        lmpi_free(e);
        lmpi_free(m);
        return NULL;
    }
    lmpi_comm *lc = c->is_inter ? c->local_comm : c;
    for (int r = 0; r < local; r++)
        e[r] = member_of(lc, r);
    for (int r = 0; r < remote; r++) {
        e[local + r] = member_of(c, r);
        e[local + r].remote = true;
    }
    *n = local + remote;
    *remote_bits = remote ? lmpi_calloc((size_t)(*n + 63) / 64, 8, LMPI_MEM_COMM) : NULL;
    if (remote && !*remote_bits) {
        lmpi_free(e);
        lmpi_free(m);
        return NULL;
    }
    uint64_t mine = e[c->rank].id;
    if (remote)
        qsort(e, (size_t)*n, sizeof(member), by_id);
    for (int i = 0; i < *n; i++) {
        m[i] = e[i].addr;
        if (e[i].remote)
            (*remote_bits)[i / 64] |= 1ull << (i % 64);
        if (e[i].id == mine)
            *me = i;
    }
    lmpi_free(e);
    return m;
}

static agreement *find(uint32_t ctx, lmpi_comm *c)
{
    for (agreement *a = all; a; a = a->next)
        if (a->ctx == ctx)
            return a;
    if (!c)
        return NULL;
    agreement *a = lmpi_calloc(1, sizeof(*a), LMPI_MEM_COMM);
    if (!a)
        return NULL;
    a->ctx = ctx;
    a->members = members_of(c, &a->size, &a->me, &a->remote_bits);
    a->words = (a->size + 63) / 64;
    a->got = a->members ? lmpi_calloc((size_t)a->words * 4, 8, LMPI_MEM_COMM) : NULL;
    if (!a->got) {
        lmpi_free(a->members);
        lmpi_free(a->remote_bits);
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

static void agreement_free(agreement *a)
{
    while (a->later) {
        stashed *s = a->later;
        a->later = s->next;
        lmpi_free(s);
    }
    lmpi_free(a->got);
    lmpi_free(a->members);
    lmpi_free(a->remote_bits);
    lmpi_free(a);
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
        agreement_free(a);
    }
}

/* Agreements that were MPI_Win_free's or MPI_File_close's barrier
 * (lmpi_ft_release_barrier) are let go as soon as they decided: kept until
 * MPI_Finalize, as other agreements are, a program that opens and closes
 * files in a loop under --with-ft would keep one per file.  What stays, in
 * a small ring, is enough to answer a late question (a new coordinator's,
 * after the old one failed before telling everyone) with a decision, whose
 * content a barrier does not look at.  A member is at most one such
 * agreement behind another over the same group (the next one needs it);
 * 64 entries leave room for the frees of other groups in between. */
#define RELEASED 64
static struct {
    uint32_t ctx;
    int me, words;
} released[RELEASED];
static unsigned released_next;

static void release(uint32_t ctx)
{
    for (agreement **p = &all; *p; p = &(*p)->next)
        if ((*p)->ctx == ctx) {
            agreement *a = *p;
            *p = a->next;
            released[released_next % RELEASED].ctx = ctx;
            released[released_next % RELEASED].me = a->me;
            released[released_next % RELEASED].words = a->words;
            released_next++;
            agreement_free(a);
            return;
        }
}

/* A question about a released agreement: answered with a decision. */
static bool answer_released(int src, const lmpi_pkt_hdr *h)
{
    for (int i = 0; i < RELEASED; i++)
        if (released[i].ctx == h->ctx && h->ctx != 0) {
            if (h->tag == LMPI_FT_CONTRIB || h->tag == LMPI_FT_QUERY) {
                uint64_t none[64] = {0}; /* no failures decided: a barrier ignores them */
                lmpi_pkt_hdr d = {.type = LMPI_PKT_FT, .tag = LMPI_FT_DECIDE, .rank = released[i].me,
                                  .ctx = h->ctx, .len = h->len, .addr = (uint64_t)(uint32_t)~0, .sreq = 0};
                size_t bytes = (size_t)released[i].words * 8;
                uint64_t *bits = bytes <= sizeof(none) ? none : lmpi_calloc(1, bytes, LMPI_MEM_COMM);
                if (bits)
                    lmpi_pt2pt_send_packet(src, &d, bits, bytes);
                if (bits != none)
                    lmpi_free(bits);
            }
            return true;
        }
    return false;
}

static bool bit(const uint64_t *b, int i) { return b[i / 64] >> (i % 64) & 1; }
static void set_bit(uint64_t *b, int i) { b[i / 64] |= 1ull << (i % 64); }

static bool member_failed(const agreement *a, int i) { return lmpi_ft_failed(a->members[i]); }

static void send_values(agreement *a, int to, int what, uint32_t seq, int flag, uint32_t ctx, const uint64_t *bits)
{
    if (member_failed(a, to))
        return; /* its cells would never come back */
    lmpi_pkt_hdr h = {.type = LMPI_PKT_FT, .tag = what, .rank = a->me, .ctx = a->ctx, .len = seq,
                      .addr = (uint64_t)(uint32_t)flag, .sreq = ctx};
    lmpi_pt2pt_send_packet(a->members[to], &h, bits, bits ? (size_t)a->words * 8 : 0);
}

static int lowest_alive(const agreement *a)
{
    for (int i = 0; i < a->size; i++)
        if (!member_failed(a, i))
            return i;
    return a->me;
}

/* The failed members we know of, into bits. */
static void add_known_failed(const agreement *a, uint64_t *bits)
{
    if (!lmpi_ft_nfailed())
        return;
    for (int i = 0; i < a->size; i++)
        if (member_failed(a, i))
            set_bit(bits, i);
}

static void take(agreement *a, int flag, uint32_t ctx, const uint64_t *bits, size_t len, int from)
{
    a->ngot += !bit(a->got, from);
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

static void handle(agreement *a, const lmpi_pkt_hdr *h, const void *payload, size_t len);

/* Handle the kept packets of the instance we are at now. */
static void replay(agreement *a)
{
    stashed *s = a->later, **keep = &a->later;
    a->later = NULL;
    while (s) {
        stashed *n = s->next;
        if ((uint32_t)s->h.len == a->seq) {
            handle(a, &s->h, s->payload, s->len);
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
static void next_instance(agreement *a)
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
    a->ngot = 0;
    memset(a->got, 0, (size_t)a->words * 8);
    memset(a->fbits, 0, (size_t)a->words * 8);
    replay(a);
}

static void handle(agreement *a, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    uint32_t seq = (uint32_t)h->len;
    int flag = (int)(uint32_t)h->addr;
    uint32_t ctx = (uint32_t)h->sreq;
    const uint64_t *bits = payload;
    if (seq + 1 == a->seq && a->have_last) { /* an instance we finished: tell the asker how it ended */
        if (h->tag == LMPI_FT_CONTRIB || h->tag == LMPI_FT_QUERY)
            send_values(a, h->rank, LMPI_FT_DECIDE, seq, a->last_flag, a->last_ctx, a->last_bits);
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
            send_values(a, h->rank, LMPI_FT_DECIDE, seq, a->d_flag, a->d_ctx, a->d_bits);
        else
            take(a, flag, ctx, bits, len, h->rank);
        return;
    case LMPI_FT_DECIDE:
        if (!a->decided && len >= (size_t)a->words * 8) {
            decide(a, flag, ctx, bits);
            /* members that took us for their coordinator (they saw the old
             * one fail before we did) sent us their contribution once and
             * wait for the decision from us */
            for (int r = 0; r < a->size; r++)
                if (r != a->me && r != h->rank && bit(a->got, r))
                    send_values(a, r, LMPI_FT_DECIDE, seq, flag, ctx, bits);
        }
        return;
    case LMPI_FT_QUERY:
        if (a->decided)
            send_values(a, h->rank, LMPI_FT_DECIDE, seq, a->d_flag, a->d_ctx, a->d_bits);
        else if (a->running) { /* the asker is our coordinator now */
            a->coord = h->rank;
            add_known_failed(a, a->fbits);
            send_values(a, h->rank, LMPI_FT_CONTRIB, seq, a->my_flag, a->my_ctx, a->fbits);
        }
        return;
    }
}

void lmpi_ft_agree_packet(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    /* an agreement this process took part in answers even after its
     * communicator was freed: a member that decided and let go of a window
     * (MPI_Win_free's agreement) still tells a new coordinator the decision */
    agreement *a = find(h->ctx, NULL);
    if (!a && answer_released(src, h))
        return;
    if (!a) {
        lmpi_comm *c = lmpi_ft_comm_of_ctx(h->ctx);
        if (!c) { /* not made here yet (or freed before it agreed: kept for nothing, within a bound) */
            stashed *s = norphans < MAX_ORPHANS ? stash(h, payload, len) : NULL;
            if (s) {
                s->next = orphans;
                orphans = s;
                norphans++;
            }
            return;
        }
        a = find(h->ctx, c);
    }
    if (a) {
        replay(a);
        handle(a, h, payload, len);
    }
}

/* Drive a running agreement; true once decided. */
static bool advance(agreement *a)
{
    lmpi_ft_poll();
    if (a->decided)
        return true;
    int nf = lmpi_ft_nfailed();
    int coord = lowest_alive(a);
    if (coord == a->me) {
        if (a->coord != a->me) {
            /* coordinator now: by a failure if someone else was before */
            if (a->coord >= 0)
                for (int r = 0; r < a->size; r++)
                    if (r != a->me)
                        send_values(a, r, LMPI_FT_QUERY, a->seq, 0, 0, NULL);
            a->coord = a->me;
        }
        /* still waiting for a living member?  (a count while nobody failed:
         * this runs at every poll of the coordinator's wait) */
        if (a->ngot < a->size && !nf)
            return false;
        for (int r = 0; a->ngot < a->size && r < a->size; r++)
            if (!bit(a->got, r) && !member_failed(a, r))
                return false;
        add_known_failed(a, a->fbits);
        decide(a, a->flag, a->ctxmax, a->fbits);
        /* the tests' failure in the middle: LMPI_FT_INJECT=coord:K, the
         * coordinator of a first agreement dies having told K members */
        static int inject = -2;
        if (inject == -2) {
            const char *e = getenv("LMPI_FT_INJECT");
            inject = e && !strncmp(e, "coord:", 6) ? atoi(e + 6) : -1;
        }
        int told = 0;
        for (int r = 0; r < a->size; r++)
            if (r != a->me) {
                if (inject >= 0 && a->seq == 0 && told == inject)
                    raise(SIGKILL);
                send_values(a, r, LMPI_FT_DECIDE, a->seq, a->d_flag, a->d_ctx, a->d_bits);
                told++;
            }
        return true;
    }
    if (a->coord != coord || nf != a->seen_failures) {
        /* first, or our coordinator failed: (again) to the lowest survivor */
        uint64_t *mine = a->fbits; /* not a coordinator: fbits holds what we know */
        add_known_failed(a, mine);
        send_values(a, coord, LMPI_FT_CONTRIB, a->seq, a->my_flag, a->my_ctx, mine);
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
    lmpi_comm *newc;    /* shrink: the communicator it fills (lmpi_comm_new_pending) */
    /* shrink: the failed members of the first decision, the context id
     * (agreed, then checked), the claim on it while checked */
    uint64_t *gone;
    uint32_t ctx;
    bool checking;
    bool nonblocking; /* an ishrink, counted by lmpi_ctx_nonblocking until done */
    lmpi_ctx_claim claim;
} agree_call;

/* The index of world rank w among the members (-1: none), looked for at
 * GUESS first: an intracommunicator's members are in its rank order, so
 * its rank r is at r, and a shrink over 256 ranks does not scan 256
 * members for each of 256 ranks at every survivor. */
static int member_index(const agreement *a, int w, int guess)
{
    if (guess >= 0 && guess < a->size && a->members[guess] == w)
        return guess;
    for (int i = 0; i < a->size; i++)
        if (a->members[i] == w)
            return i;
    return -1;
}

/* The members of one group of the communicator (gc: whose ranks they are,
 * map: their map) that the decision leaves alive, as a new map, and where
 * `rank` of the group lands in it (-1 when not given or gone). */
static lmpi_status survivors(const agreement *a, const uint64_t *gone, lmpi_comm *gc, const lmpi_rankmap *map,
                             int size, int rank, lmpi_rankmap *out, int *newrank)
{
    lmpi_gpid *g = lmpi_malloc((size_t)(size ? size : 1) * sizeof(lmpi_gpid), LMPI_MEM_OTHER);
    if (!g)
        return LMPI_ERR_NO_MEM;
    int n = 0;
    *newrank = -1;
    for (int r = 0; r < size; r++) {
        int i = member_index(a, lmpi_comm_world_rank(gc, r), r);
        if (i >= 0 && bit(gone, i))
            continue;
        if (r == rank)
            *newrank = n;
        g[n++] = lmpi_rankmap_gpid(map, r);
    }
    bool ok = lmpi_rankmap_from_gpids(out, g, n);
    lmpi_free(g);
    return ok ? LMPI_OK : LMPI_ERR_NO_MEM;
}

static lmpi_status finish_shrink(agree_call *s)
{
    agreement *a = s->a;
    lmpi_comm *c = s->comm;
    lmpi_comm *lc = c->is_inter ? c->local_comm : c;
    lmpi_rankmap local, remote;
    int me, unused;
    LMPI_TRY(survivors(a, s->gone, lc, &lc->map, lc->size, c->rank, &local, &me));
    lmpi_status st = LMPI_OK;
    if (c->is_inter) {
        st = survivors(a, s->gone, c, &c->map, c->peer_size, -1, &remote, &unused);
        if (st != LMPI_OK) {
            lmpi_rankmap_release(&local);
            return st;
        }
    }
    lmpi_ctx_advance(s->ctx);
    if (me < 0) {
        lmpi_err_detail("this process is among the failed of the agreement");
        st = LMPI_ERR_INTERN;
    } else {
        st = lmpi_comm_fill(s->newc, &local, me, c->is_inter ? &remote : NULL, s->ctx);
    }
    lmpi_rankmap_release(&local);
    if (c->is_inter)
        lmpi_rankmap_release(&remote);
    return st;
}

/* Our contribution to the instance we are at. */
static void contribute(agreement *a, int flag, uint32_t ctx)
{
    a->running = true;
    a->my_flag = flag;
    a->my_ctx = ctx;
    take(a, flag, ctx, a->fbits, 0, a->me);
    a->seen_failures = -1;
}

/* Bit 0 of a shrink's flag: this member runs no other creation of a
 * communicator meanwhile (lmpi_ctx_alone).  When every member says so, the
 * agreed id is taken at once, as by the other blocking creations. */
#define SHRINK_ALONE 1

/* A shrink's context id, after the decision of the instance we are at.
 * The first gives a candidate, the largest counter among the survivors.
 * Unless every member was alone, the candidate is checked as the other
 * creations check theirs (src/comm/comm.c, context ids): each member claims
 * it or refuses, and one more agreement (tolerant of failures as the first)
 * gives the verdict, the AND of the flags, and the next candidate, the
 * largest proposal.  True once taken, in s->ctx; *error on exhaustion. */
static bool shrink_ctx_taken(agree_call *s, lmpi_status *error)
{
    agreement *a = s->a;
    if (!s->checking) {
        memcpy(s->gone, a->d_bits, (size_t)a->words * 8);
        s->ctx = a->d_ctx;
        if (a->d_flag & SHRINK_ALONE)
            return true;
        s->checking = true;
    } else {
        uint32_t unused;
        if (lmpi_ctx_settle(&s->claim, a->d_flag ? 0 : 1, &unused))
            return true;
        s->ctx = a->d_ctx;
    }
    if (s->ctx > UINT32_MAX - 8 * LMPI_CTX_BLOCK) {
        lmpi_err_detail("context ids exhausted (2^29 communicators created)");
        *error = LMPI_ERR_INTERN;
        return true;
    }
    next_instance(a);
    uint32_t verdict = lmpi_ctx_check(&s->claim, s->ctx);
    contribute(a, verdict ? 0 : ~0, lmpi_ctx_above(s->ctx));
    return false;
}

static bool call_advance(lmpi_request *r)
{
    agree_call *s = r->sched;
    lmpi_status ctx_error = LMPI_OK;
    for (;;) {
        if (!advance(s->a))
            return false;
        if (!s->newc || shrink_ctx_taken(s, &ctx_error))
            break;
    }
    agreement *a = s->a;
    if (s->newc) {
        if (s->nonblocking) {
            lmpi_ctx_nonblocking(-1);
            s->nonblocking = false;
        }
        r->sched_error = ctx_error != LMPI_OK ? ctx_error : finish_shrink(s);
        /* the handle is out already: it answers MPIX_ERR_REVOKED to every
         * call but MPI_Comm_free rather than address anyone */
        if (r->sched_error != LMPI_OK)
            s->newc->flags |= LMPI_COMM_REVOKED;
    } else {
        *s->flag = a->d_flag;
        /* failed members this process did not acknowledge: the caller must
         * hear of them (the flag is still the agreed one).  Over an
         * intercommunicator those of the remote group, the only ones
         * MPIX_Comm_ack_failed can acknowledge there (the local group's
         * are acknowledged over the local communicators) */
        int failed = 0;
        for (int w = 0; w < a->words; w++)
            failed += __builtin_popcountll(a->d_bits[w] & (a->remote_bits ? a->remote_bits[w] : ~0ull));
        if ((uint32_t)failed > s->comm->ft_acked) {
            lmpi_err_detail("%d member(s) of the communicator failed and %u of them are acknowledged", failed,
                            s->comm->ft_acked);
            r->sched_error = LMPI_ERR_PROC_FAILED;
        }
    }
    next_instance(a);
    return true;
}

static void call_free(lmpi_request *r)
{
    lmpi_free(r->sched);
    r->sched = NULL;
}

static lmpi_status start(lmpi_comm *comm, int *flag, MPI_Comm *newcomm, bool nonblocking, lmpi_request **out)
{
    agreement *a = find(comm->context_id, comm);
    agree_call *s = a ? lmpi_calloc(1, sizeof(*s) + (size_t)a->words * 8, LMPI_MEM_COMM) : NULL;
    lmpi_request *r = lmpi_request_alloc(LMPI_REQ_SCHED);
    if (!a || !s || !r || (newcomm && lmpi_comm_new_pending(comm, &s->newc) != LMPI_OK)) {
        lmpi_free(s);
        if (r)
            lmpi_request_free(r);
        return LMPI_ERR_NO_MEM;
    }
    if (a->running) {
        if (s->newc)
            lmpi_comm_destroy(s->newc);
        lmpi_free(s);
        lmpi_request_free(r);
        lmpi_err_detail("an agreement or shrink on this communicator is still running");
        return LMPI_ERR_PENDING;
    }
    replay(a);
    s->a = a;
    s->comm = comm;
    s->flag = flag;
    s->gone = (uint64_t *)(s + 1);
    int my_flag = ~0;
    if (flag)
        my_flag = *flag;
    else if (nonblocking || !lmpi_ctx_alone())
        my_flag = ~SHRINK_ALONE;
    if (newcomm) {
        *newcomm = s->newc->handle;
        if (nonblocking) {
            s->nonblocking = true;
            lmpi_ctx_nonblocking(1);
        }
    }
    contribute(a, my_flag, lmpi_ctx_next());
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
    LMPI_TRY(start(comm, flag, newcomm, false, &r));
    lmpi_request_wait(r);
    lmpi_status st = r->sched_error;
    agree_call *s = r->sched;
    if (st != LMPI_OK && s->newc) { /* a blocking shrink leaves no handle */
        lmpi_comm_destroy(s->newc);
        *newcomm = MPI_COMM_NULL;
    }
    r->sched_free(r);
    lmpi_request_free(r);
    return st;
}

lmpi_status lmpi_impl_Comm_agree(lmpi_comm *comm, int *flag) { return run(comm, flag, NULL); }

lmpi_status lmpi_impl_Comm_iagree(lmpi_comm *comm, int *flag, MPI_Request *request)
{
    lmpi_request *r;
    LMPI_TRY(start(comm, flag, NULL, true, &r));
    *request = (MPI_Request)r;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_shrink(lmpi_comm *comm, MPI_Comm *newcomm) { return run(comm, NULL, newcomm); }

lmpi_status lmpi_impl_Comm_ishrink(lmpi_comm *comm, MPI_Comm *newcomm, MPI_Request *request)
{
    lmpi_request *r;
    LMPI_TRY(start(comm, NULL, newcomm, true, &r));
    *request = (MPI_Request)r;
    return LMPI_OK;
}

lmpi_status lmpi_ft_release_barrier(lmpi_comm *c, bool *agreed)
{
    *agreed = false;
    if (c->size < 2)
        return LMPI_OK;
    lmpi_progress_poll(); /* a revoke on its way is seen */
    lmpi_status st = LMPI_ERR_REVOKED;
    /* The choice must be the same at every member.  Failures survivable:
     * all agree.  Otherwise a member that sees the revoke agrees, and one
     * that has not yet seen it waits in the barrier until the revoke
     * reaches it: the revoker, a member, never enters the barrier (it
     * revoked before it freed), so no barrier completes anywhere. */
    if (!lmpi_ft_enabled && !(c->flags & LMPI_COMM_REVOKED))
        st = lmpi_impl_Barrier(c);
    if (st != LMPI_ERR_REVOKED)
        return st;
    int flag = ~0;
    *agreed = true;
    st = run(c, &flag, NULL);
    release(c->context_id);
    return st == LMPI_ERR_PROC_FAILED ? LMPI_OK : st; /* the failed are expected to be missing */
}

lmpi_status lmpi_ft_finalize_barrier(void)
{
    int flag = ~0;
    lmpi_status st = run(lmpi_comm_world, &flag, NULL);
    return st == LMPI_ERR_PROC_FAILED ? LMPI_OK : st; /* the failed are expected to be missing */
}
