/* Fault tolerance: what a process knows of failures, how requests end when
 * one keeps them from completing, and revoking a communicator (README.md
 * in this folder).  Agreement and shrink are in agree.c. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "ft/ft.h"
#include "ft/ft_internal.h"
#include "match/match.h"
#include "dpm/dpm.h"
#include "pmi/pmi.h"
#include "pt2pt/pt2pt.h"
#include "rma/win.h"
#include "transport/shm/notice.h"
#include "transport/shm/shm.h"

bool lmpi_ft_enabled;
bool lmpi_ft_active;
static _Atomic uint32_t no_board_epoch;
_Atomic uint32_t *lmpi_ft_epoch_word = &no_board_epoch;
uint32_t lmpi_ft_epoch_seen;

/* The failures this process learnt, in the order it learnt them (the order
 * MPIX_Comm_get_failed reports and MPIX_Comm_ack_failed acknowledges), and
 * the same as a bitmap over the job's ranks. */
static struct {
    const lmpi_notice *board;
    int world;
    uint64_t *bits;
    int *order;
    int n;
    /* processes of other groups (a spawned job, the job that spawned us)
     * the launcher posted (notice.h's foreign list), as group key << 32 |
     * rank: keys name jobs for good, where local pgids and transport
     * addresses are reused once a group is let go */
    uint64_t *foreign;
    int nf;
    uint32_t fseen; /* entries of the board's list read */
} known;

/* ---- Hydra's notices ----------------------------------------------------------
 * Under mpiexec.hydra -disable-auto-cleanup (with LMPI_FT=1 in the ranks'
 * environment: Hydra does not tell them the option) a process that ends
 * before MPI_Finalize is announced by SIGUSR1 from its host's proxy, and
 * the server lists the dead under the KVS key PMI_dead_processes ("2,5-7";
 * a job attribute in PMI-2).
 * The handler only moves the node's board epoch and wakes the sleepers (the
 * signal may interrupt anything, PMI traffic included); the next idle wait
 * asks the server for the list and posts it on the board, where the rest
 * of this file finds it as it finds our launcher's posts.  The list may
 * lag behind the signal (the proxy signals before it tells the server):
 * until it names someone new, waits ask again every millisecond and do not
 * sleep, for at most 5 seconds.  Hydra's proxies kill every process of
 * their host when they reap one that died by a signal, whatever
 * -disable-auto-cleanup says (pmip.c's main loop), so only processes that
 * exit are survivable there (README.md). */
static volatile sig_atomic_t hydra_signalled;
static void *volatile hydra_base; /* the segment while the handler may use it */
static size_t hydra_size;
static struct sigaction hydra_old;
static double hydra_until, hydra_next;
/* a failure was signalled but its rank is not listed yet: lmpi_ft_notice
 * leaves the epoch looking unseen, so waits ask again (and do not sleep) */
static bool hydra_recheck;

static void hydra_sigusr1(int sig)
{
    (void)sig;
    hydra_signalled = 1;
    void *base = hydra_base;
    if (base)
        lmpi_notice_kick(base, hydra_size);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void lmpi_ft_each_listed(const char *list, long size, void (*fn)(int rank, void *arg), void *arg)
{
    for (const char *p = list; *p;) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p)
            break;
        if (*end == '-')
            hi = strtol(end + 1, &end, 10);
        for (long r = lo; r <= hi && r >= 0 && r < size; r++)
            fn((int)r, arg);
        if (*end != ',')
            break;
        p = end + 1;
    }
}

static void post_dead(int rank, void *arg)
{
    (void)arg;
    if (!lmpi_notice_failed(known.board, rank))
        lmpi_notice_post((char *)known.board - LMPI_NOTICE_OFFSET, lmpi_shm_segment_size(), rank);
}

static void mark_listed(int rank, void *dead)
{
    ((unsigned char *)dead)[rank] = 1;
}

/* Jobs of other launchers that met this one through a port look for its
 * failures at the name server they share (lmpi_dpm_watch_remote), where our
 * mpiexec lists them (mpiexec.c's post_failure).  Hydra does not, so the
 * lowest rank that the server's list leaves alive does it for the job: the
 * list grows only, so exactly one living process takes it for its own at a
 * time, and each publishes the whole list it read (unpublished first: a
 * name server has no update).  A name server that is not there (Hydra
 * keeps publications itself then) costs one round trip per failure. */
static void hydra_list_at_nameserver(const char *list)
{
    unsigned char *dead = lmpi_calloc((size_t)known.world, 1, LMPI_MEM_OTHER);
    if (!dead)
        return;
    lmpi_ft_each_listed(list, known.world, mark_listed, dead);
    int lowest = 0;
    while (lowest < known.world && dead[lowest])
        lowest++;
    lmpi_free(dead);
    if (lowest != lmpi_rt.world_rank)
        return;
    char service[320], err[128];
    snprintf(service, sizeof(service), "lmpi-ft:%s", lmpi_rt.kvsname);
    lmpi_pmi_unpublish(service, err, sizeof(err)); /* (not there the first time) */
    if (lmpi_pmi_publish(service, list, err, sizeof(err)) != 0)
        fprintf(stderr, "LeanMPI: rank %d: cannot list the failed ranks %s at the name server: %s\n",
                lmpi_rt.world_rank, list, err);
}

/* The list only grows: a list unlike the last one read names someone new
 * (a node's other rank may have posted them on the board already). */
static char hydra_last[4096];

static void hydra_ask(void)
{
    double t = seconds();
    if (hydra_signalled) {
        hydra_signalled = 0;
        hydra_recheck = true;
        hydra_until = t + 5.0;
        hydra_next = 0;
    }
    if (t < hydra_next)
        return;
    hydra_next = t + 0.001;
    char list[sizeof(hydra_last)];
    bool fresh = lmpi_pmi_dead_processes(list, sizeof(list)) == 0 && strcmp(list, hydra_last) != 0;
    if (fresh) {
        snprintf(hydra_last, sizeof(hydra_last), "%s", list);
        lmpi_ft_each_listed(list, known.world, post_dead, NULL);
        hydra_list_at_nameserver(list);
    }
    if (fresh || t > hydra_until)
        hydra_recheck = false;
}

/* ---- processes that no launcher of ours watches --------------------------------
 * Two jobs that different mpiexecs started and that met through a port
 * (MPI_Comm_connect/accept, a name server) each hear of their own failures
 * only: a launcher tells its own ranks.  So under --with-ft a waiting
 * process looks at the processes of groups met through a port that share
 * this host (their pid is in their inbox; 64 a round) every WATCH_NS while
 * its wait is idle, and posts one that ended without closing its inbox on
 * the board, as a launcher posts another job's failure: every rank of the
 * node then sees it, and the rest of this file treats it as any other.  A
 * process that ends normally marks its inbox closed first.  A sleeping wait
 * sleeps at most WATCH_NS while there are such groups.  Processes on other
 * hosts have no pid to look at: one that the network transport could not
 * deliver to counts as failed (src/transport/ofi), and every REMOTE_NS the
 * name server is asked which of them their mpiexec saw fail (the jobs of
 * different launchers that met across hosts share one: it holds the
 * network addresses they reach each other by).  A provider that loses a
 * peer's connection does not always fail the transfers to it: Debian's tcp
 * completed 200 sends to a killed process in 6 s. */
#define WATCH_NS 10000000u
#define REMOTE_NS 200000000u
static uint64_t watch_next, remote_next;

static void watch_gone(uint64_t key, int rank)
{
    lmpi_notice_post_foreign((char *)known.board - LMPI_NOTICE_OFFSET, lmpi_shm_segment_size(), (uint32_t)key,
                             rank);
}

uint64_t lmpi_ft_watch(uint64_t now)
{
    if (!lmpi_ft_enabled || !known.bits || !lmpi_dpm_watching())
        return 0;
    if (now >= watch_next) {
        watch_next = now + WATCH_NS;
        lmpi_dpm_watch(watch_gone);
        if (now >= remote_next) {
            remote_next = now + REMOTE_NS;
            lmpi_dpm_watch_remote(watch_gone);
        }
    }
    return WATCH_NS;
}

bool lmpi_ft_unreachable(int world_rank)
{
    if (!lmpi_ft_enabled || !known.bits || world_rank < 0 || world_rank >= known.world)
        return false;
    lmpi_notice_post((char *)known.board - LMPI_NOTICE_OFFSET, lmpi_shm_segment_size(), world_rank);
    return true;
}

void lmpi_ft_init(void)
{
    const char *e = getenv("LMPI_FT");
    lmpi_ft_enabled = e && e[0] == '1';
    known.board = lmpi_shm_notice();
    if (!lmpi_ft_enabled || !known.board)
        return;
    if (lmpi_pmi_signals_failures() && known.board->magic == LMPI_NOTICE_MAGIC) {
        hydra_size = lmpi_shm_segment_size();
        hydra_base = (char *)known.board - LMPI_NOTICE_OFFSET;
        struct sigaction sa = {.sa_handler = hydra_sigusr1, .sa_flags = SA_RESTART};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, &hydra_old);
    }
    known.world = (int)known.board->world;
    known.bits = lmpi_calloc((size_t)(known.world + 63) / 64, 8, LMPI_MEM_OTHER);
    known.order = lmpi_calloc((size_t)known.world, sizeof(int), LMPI_MEM_OTHER);
    if (!known.bits || !known.order)
        return; /* without room to remember failures they stay unseen */
    lmpi_ft_epoch_word = (_Atomic uint32_t *)&known.board->epoch;
    lmpi_ft_epoch_seen = 0;
    lmpi_ft_notice(); /* a rank may have failed before we got here */
}

void lmpi_ft_finalize(void)
{
    if (hydra_base) {
        /* the segment goes away: the handler must not touch it.  Hydra may
         * still signal (MPICH 5.0.2's proxy when a survivor ends after its
         * MPI_Finalize), which must not kill a process that is finishing */
        struct sigaction ignore = {.sa_handler = SIG_IGN};
        sigemptyset(&ignore.sa_mask);
        sigaction(SIGUSR1, hydra_old.sa_handler == SIG_DFL ? &ignore : &hydra_old, NULL);
        hydra_base = NULL;
    }
    hydra_recheck = false;
    hydra_last[0] = '\0';
    lmpi_ft_agree_forget_all();
    lmpi_ft_epoch_word = &no_board_epoch;
    lmpi_ft_epoch_seen = 0;
    lmpi_free(known.bits);
    lmpi_free(known.order);
    lmpi_free(known.foreign);
    memset(&known, 0, sizeof(known));
    lmpi_ft_active = false;
}

static void revokes_resend(void);

void lmpi_ft_notice(void)
{
    if (!known.board) {
        lmpi_ft_epoch_seen = atomic_load(lmpi_ft_epoch_word);
        return;
    }
    if (hydra_signalled || hydra_recheck)
        hydra_ask();
    lmpi_ft_epoch_seen = atomic_load_explicit(&known.board->epoch, memory_order_acquire);
    if (hydra_recheck)
        lmpi_ft_epoch_seen--; /* not seen: the next idle poll comes back here */
    int before = known.n;
    for (int w = 0; w < (known.world + 63) / 64; w++) {
        uint64_t fresh = atomic_load_explicit(&known.board->failed[w], memory_order_acquire) & ~known.bits[w];
        while (fresh) {
            int b = __builtin_ctzll(fresh);
            fresh &= fresh - 1;
            known.bits[w] |= 1ull << b;
            known.order[known.n++] = w * 64 + b;
        }
    }
    int fbefore = known.nf;
    const lmpi_notice_foreign *f = lmpi_notice_foreign_of(known.board);
    uint32_t nf = atomic_load_explicit(&f->n, memory_order_acquire);
    if (nf > LMPI_NOTICE_FOREIGN)
        nf = LMPI_NOTICE_FOREIGN;
    if (nf > known.fseen && !known.foreign)
        known.foreign = lmpi_malloc(LMPI_NOTICE_FOREIGN * sizeof(uint64_t), LMPI_MEM_OTHER);
    for (; known.foreign && known.fseen < nf; known.fseen++) /* a job this process may not address: kept all the same */
        known.foreign[known.nf++] = atomic_load_explicit(&f->entry[known.fseen], memory_order_relaxed);
    if (known.n > before || known.nf > fbefore) {
        lmpi_ft_active = true;
        revokes_resend(); /* a revoker may have failed half-way */
    }
}

bool lmpi_ft_failed(int world_rank)
{
    if (known.bits && world_rank >= 0 && world_rank < known.world)
        return known.bits[world_rank / 64] >> (world_rank % 64) & 1;
    for (int i = 0; i < known.nf; i++) { /* a transport address of another group's process */
        uint32_t pgid = lmpi_dpm_pgid_of_key(known.foreign[i] >> 32);
        if (pgid != UINT32_MAX && pgid != 0 &&
            lmpi_dpm_addr((lmpi_gpid){pgid, (uint32_t)known.foreign[i]}) == world_rank)
            return true;
    }
    return false;
}

/* Is this member (of any group) known to have failed? */
static bool gpid_failed(lmpi_gpid g)
{
    if (g.pgid == 0)
        return lmpi_ft_failed((int)g.lpid);
    uint64_t e = lmpi_dpm_group_key(g.pgid) << 32 | g.lpid;
    for (int i = 0; i < known.nf; i++)
        if (known.foreign[i] == e)
            return true;
    return false;
}

int lmpi_ft_nfailed(void) { return known.n + known.nf; }

/* The ranks of c that failed, in the order we learnt of them: count, and
 * (out non-NULL) the ranks.  O(failures x log size) with a rank map that
 * finds ranks; the maps of our own job all do. */
int lmpi_ft_comm_failed(const lmpi_comm *c, int *out)
{
    int n = 0;
    if (c->map.pgid != 0) { /* members of other groups (only or too): each looked at */
        if (!known.n && !known.nf)
            return 0;
        int size = c->is_inter ? c->peer_size : c->size;
        for (int r = 0; r < size; r++)
            if (gpid_failed(lmpi_rankmap_gpid(&c->map, r))) {
                if (out)
                    out[n] = r;
                n++;
            }
        return n;
    }
    for (int i = 0; i < known.n; i++) {
        int r = lmpi_rankmap_find(&c->map, (lmpi_gpid){0, (uint32_t)known.order[i]});
        if (r >= 0) {
            if (out)
                out[n] = r;
            n++;
        }
    }
    return n;
}

static bool comm_has_unacked_failure(const lmpi_comm *c)
{
    return (known.n > 0 || known.nf > 0) && (uint32_t)lmpi_ft_comm_failed(c, NULL) > c->ft_acked;
}

static void end_request(lmpi_request *r, int error_class)
{
    r->status.MPI_ERROR = error_class;
    r->status.MPI_SOURCE = MPI_ANY_SOURCE;
    r->status.MPI_TAG = MPI_ANY_TAG;
    lmpi_status_set_bytes(&r->status, 0);
    r->proto = LMPI_PROTO_NONE;
    r->complete = 1;
    if (r->internal)
        lmpi_request_free(r);
}

bool lmpi_ft_request_check(lmpi_request *r)
{
    lmpi_comm *c = r->comm;
    if (!c || r->complete)
        return false;
    if (r->ctx != c->context_id) {
        /* a collective's message (creating a communicator, a collective's
         * internal step): the collective cannot complete once a member
         * failed, and every member gives up alike */
        lmpi_status broken = lmpi_ft_comm_broken(c);
        if (broken != LMPI_OK) {
            lmpi_ft_abandon(r, lmpi_status_class(broken));
            return true;
        }
    }
    bool revoked = (c->flags & LMPI_COMM_REVOKED) != 0;
    if (r->kind == LMPI_REQ_RECV) {
        if (!r->mq)
            return false; /* matched: its data is on the way (or was: a stream from a failed sender stalls) */
        int cls;
        if (revoked) {
            cls = MPIX_ERR_REVOKED;
        } else if (r->rank == MPI_ANY_SOURCE && comm_has_unacked_failure(c)) {
            /* the proposal's semantics: the wait ends with the error, the
             * receive stays posted (still matchable) until the failure is
             * acknowledged and it is waited for again, or cancelled */
            if (!r->internal) {
                r->status.MPI_ERROR = MPIX_ERR_PROC_FAILED_PENDING;
                return true;
            }
            cls = MPIX_ERR_PROC_FAILED_PENDING;
        } else if (r->rank >= 0 && lmpi_ft_failed(lmpi_comm_world_rank(c, r->rank))) {
            cls = MPIX_ERR_PROC_FAILED;
        } else {
            return false;
        }
        lmpi_match_cancel(r->mq, &r->mqi);
        r->mq = NULL;
        end_request(r, cls);
        return true;
    }
    if (r->kind == LMPI_REQ_SEND && (r->proto == LMPI_PROTO_RNDV_WAIT || r->proto == LMPI_PROTO_SYNC_WAIT) &&
        r->peer >= 0 && lmpi_ft_failed(r->peer)) {
        /* the receiver is gone: no FIN or ACK will come */
        end_request(r, MPIX_ERR_PROC_FAILED);
        return true;
    }
    return false;
}

lmpi_status lmpi_ft_comm_broken(const lmpi_comm *c)
{
    /* an internal communicator (node, roots, local group) is broken with
     * the one it serves: a node's ranks wait for a root that gave up */
    for (; c; c = c->ft_parent) {
        if (c->flags & LMPI_COMM_REVOKED) {
            lmpi_err_detail("the communicator was revoked");
            return LMPI_ERR_REVOKED;
        }
        if ((known.n || known.nf) && (lmpi_ft_comm_failed(c, NULL) > 0 ||
                        (c->is_inter && c->local_comm && lmpi_ft_comm_failed(c->local_comm, NULL) > 0))) {
            lmpi_err_detail("a member of the communicator failed (MPIX_Comm_shrink makes one of the survivors)");
            return LMPI_ERR_PROC_FAILED;
        }
    }
    return LMPI_OK;
}

lmpi_status lmpi_ft_probe_check(const lmpi_comm *c, int source)
{
    if (c->flags & LMPI_COMM_REVOKED) {
        lmpi_err_detail("the communicator was revoked");
        return LMPI_ERR_REVOKED;
    }
    if (source == MPI_ANY_SOURCE) {
        if (comm_has_unacked_failure(c)) {
            lmpi_err_detail("a process that could send it failed (MPIX_Comm_ack_failed lets wildcard probes "
                            "go on)");
            return LMPI_ERR_PROC_FAILED;
        }
    } else if (lmpi_ft_failed(lmpi_comm_world_rank(c, source))) {
        lmpi_err_detail("rank %d, the source, failed", source);
        return LMPI_ERR_PROC_FAILED;
    }
    return LMPI_OK;
}

bool lmpi_ft_pending(const lmpi_request *r)
{
    return r->kind == LMPI_REQ_RECV && !r->complete && r->mq && r->status.MPI_ERROR == MPIX_ERR_PROC_FAILED_PENDING;
}

void lmpi_ft_pending_cancel(lmpi_request *r)
{
    lmpi_match_cancel(r->mq, &r->mqi);
    r->mq = NULL;
    end_request(r, MPIX_ERR_PROC_FAILED);
}

void lmpi_ft_abandon(lmpi_request *r, int error_class)
{
    if (r->complete || (r->kind != LMPI_REQ_SEND && r->kind != LMPI_REQ_RECV))
        return;
    if (r->kind == LMPI_REQ_RECV && r->mq) {
        lmpi_match_cancel(r->mq, &r->mqi);
        r->mq = NULL;
    } else {
        r->abandoned = true;
    }
    end_request(r, error_class);
}

/* ---- revoke -----------------------------------------------------------------
 * The revoker sends REVOKE to every member of both groups.  That is
 * reliable unless it fails half-way; so whenever a failure is noticed,
 * every process that knows of a revoke sends it again to every member
 * (revokes_resend): the notice reaches every survivor as long as
 * one that knew survives, and a failure-free revoke costs n - 1 packets.
 * Duplicates are dropped: a communicator is revoked once. */
lmpi_comm *lmpi_ft_comm_of_ctx(uint32_t ctx)
{
    if (lmpi_comm_world->context_id == ctx)
        return lmpi_comm_world;
    if (lmpi_comm_self->context_id == ctx)
        return lmpi_comm_self;
    for (lmpi_comm *c = lmpi_comm_live_list; c; c = c->live_next)
        if (c->context_id == ctx && lmpi_ft_comm_named(c))
            return c;
    return NULL;
}

void lmpi_ft_send(lmpi_comm *c, int rank, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    int w = lmpi_comm_world_rank(c, rank);
    if (lmpi_ft_failed(w))
        return; /* its cells would never come back */
    lmpi_pt2pt_send_packet(w, h, payload, len);
}

static void revoke_local(lmpi_comm *c)
{
    if (c->owner) /* a window: its operations test a bit of their own */
        lmpi_win_mark_revoked(c->owner);
    c->flags |= LMPI_COMM_REVOKED;
    if (c->local_comm)
        c->local_comm->flags |= LMPI_COMM_REVOKED;
    lmpi_ft_active = true;
}

/* REVOKE to every member but us: the remote group of an intercommunicator
 * too. */
static void revoke_send_all(lmpi_comm *c)
{
    lmpi_pkt_hdr h = {.type = LMPI_PKT_FT, .tag = LMPI_FT_REVOKE, .rank = c->rank, .ctx = c->context_id};
    lmpi_comm *lc = c->is_inter ? c->local_comm : c;
    for (int r = 0; r < lc->size; r++)
        if (r != c->rank)
            lmpi_ft_send(lc, r, &h, NULL, 0);
    if (c->is_inter)
        for (int r = 0; r < c->peer_size; r++)
            lmpi_ft_send(c, r, &h, NULL, 0);
}

static void revokes_resend(void)
{
    if (lmpi_comm_world->flags & LMPI_COMM_REVOKED)
        revoke_send_all(lmpi_comm_world);
    for (lmpi_comm *c = lmpi_comm_live_list; c; c = c->live_next)
        if ((c->flags & LMPI_COMM_REVOKED) && lmpi_ft_comm_named(c))
            revoke_send_all(c);
}

lmpi_status lmpi_impl_Comm_revoke(lmpi_comm *comm)
{
    if (!(comm->flags & LMPI_COMM_REVOKED)) {
        revoke_local(comm);
        revoke_send_all(comm);
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_is_revoked(lmpi_comm *comm, int *flag)
{
    lmpi_ft_poll();
    lmpi_progress_poll(); /* a revoke on its way is seen */
    *flag = (comm->flags & LMPI_COMM_REVOKED) != 0;
    return LMPI_OK;
}

/* Revokes of communicators this process has not finished making (a faster
 * member made it, revoked it, and its packet came first): kept until the
 * communicator is made here.  Context ids are never reused, so one that
 * names a communicator freed already waits for nothing and is simply
 * pushed out when the ring is full. */
#define EARLY_REVOKES 64
static uint32_t early_revoke[EARLY_REVOKES];
static unsigned early_next;
int lmpi_ft_early_revokes;

void lmpi_ft_comm_made(lmpi_comm *c)
{
    for (int i = 0; i < EARLY_REVOKES && i < lmpi_ft_early_revokes; i++)
        if (early_revoke[i] == c->context_id && c->context_id != 0) {
            early_revoke[i] = 0;
            revoke_local(c);
        }
}

void lmpi_ft_packet(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    if (h->tag == LMPI_FT_REVOKE) {
        lmpi_comm *c = lmpi_ft_comm_of_ctx(h->ctx);
        if (c) {
            revoke_local(c);
        } else {
            early_revoke[early_next++ % EARLY_REVOKES] = h->ctx;
            if (lmpi_ft_early_revokes < EARLY_REVOKES)
                lmpi_ft_early_revokes++;
        }
        return;
    }
    lmpi_ft_agree_packet(src, h, payload, len);
}

/* ---- what failed, and acknowledging it ------------------------------------- */

static lmpi_status failed_group(lmpi_comm *c, int upto, MPI_Group *out)
{
    lmpi_ft_poll();
    int n = lmpi_ft_comm_failed(c, NULL);
    if (upto >= 0 && upto < n)
        n = upto;
    if (n == 0) {
        *out = MPI_GROUP_EMPTY;
        return LMPI_OK;
    }
    int *ranks = lmpi_malloc((size_t)lmpi_ft_comm_failed(c, NULL) * sizeof(int), LMPI_MEM_OTHER);
    lmpi_gpid *g = lmpi_malloc((size_t)n * sizeof(lmpi_gpid), LMPI_MEM_OTHER);
    if (!ranks || !g) {
        lmpi_free(ranks);
        lmpi_free(g);
        return LMPI_ERR_NO_MEM;
    }
    lmpi_ft_comm_failed(c, ranks);
    for (int i = 0; i < n; i++)
        g[i] = lmpi_rankmap_gpid(&c->map, ranks[i]);
    lmpi_status st = lmpi_group_from_gpids(g, n, out);
    lmpi_free(ranks);
    lmpi_free(g);
    return st;
}

lmpi_status lmpi_impl_Comm_get_failed(lmpi_comm *comm, MPI_Group *failedgrp)
{
    return failed_group(comm, -1, failedgrp);
}

lmpi_status lmpi_impl_Comm_ack_failed(lmpi_comm *comm, int num_to_ack, int *num_acked)
{
    if (num_to_ack < 0) {
        lmpi_err_detail("num_to_ack is %d: it must not be negative", num_to_ack);
        return LMPI_ERR_ARG;
    }
    lmpi_ft_poll();
    int n = lmpi_ft_comm_failed(comm, NULL);
    if ((uint32_t)num_to_ack > comm->ft_acked)
        comm->ft_acked = (uint32_t)(num_to_ack < n ? num_to_ack : n);
    *num_acked = (int)comm->ft_acked;
    return LMPI_OK;
}

/* The older names (Open MPI 4's): acknowledge everything known, and the
 * group acknowledged. */
lmpi_status lmpi_impl_Comm_failure_ack(lmpi_comm *comm)
{
    int acked;
    return lmpi_impl_Comm_ack_failed(comm, INT32_MAX, &acked);
}

lmpi_status lmpi_impl_Comm_failure_get_acked(lmpi_comm *comm, MPI_Group *failedgrp)
{
    return failed_group(comm, (int)comm->ft_acked, failedgrp);
}
