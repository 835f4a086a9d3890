/* Point-to-point protocols over the transport.
 *
 *   eager      len <= eager limit: the data travels in the packet; the send
 *              completes once the packet is queued.
 *   rendezvous larger: RTS carries the sender's address; the matched receiver
 *              pulls the data in one copy (process_vm_readv) and answers FIN,
 *              or, when the kernel forbids that, answers CTS and the sender
 *              streams DATA packets (the pipelined fallback).
 *   synchronous eager packets carry LMPI_PKT_SYNC; the receiver answers ACK
 *              when it matches them (a rendezvous FIN already implies it).
 *
 * Outgoing packets that find no free transport buffer wait in the outbox, a
 * FIFO drained by progress; once anything waits there, later packets queue
 * behind it, which keeps MPI's non-overtaking order. */
#include <string.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "datatype/datatype.h"
#include "ft/ft.h"
#include "match/match.h"
#include "pt2pt/pt2pt.h"
#include "runtime/config.h"
#include "runtime/pool.h"
#include "runtime/request.h"
#include "transport/transport.h"

typedef enum { OUT_PACKET, OUT_EAGER, OUT_RTS, OUT_STREAM } out_kind;

typedef struct outbox_entry {
    struct outbox_entry *next;
    out_kind kind;
    int dest;
    lmpi_pkt_hdr hdr;
    lmpi_request *req;
    size_t plen;     /* OUT_PACKET: payload bytes that follow */
    char payload[];
} outbox_entry;

static struct {
    outbox_entry *head, *tail;
} outbox;

/* Payloads of unexpected eager messages.  A sender that runs ahead leaves up
 * to its whole cell ring (64 x 16 KiB) unexpected at the receiver; taking
 * those from malloc and giving them back made glibc trim the heap top and
 * fault it in again on every burst (a stream of 16 KiB messages ran at
 * 9 us per message, 2 us without the trimming).  Freed payloads above 1 KiB
 * are kept per power-of-two class, at most PAYLOAD_CACHE_MAX bytes. */
#define PAYLOAD_CLASS_MIN 11 /* 2 KiB; smaller ones are cheap for malloc */
#define PAYLOAD_CLASSES 4    /* 2, 4, 8, 16 KiB: the eager maximum is a cell */
#define PAYLOAD_CACHE_MAX ((size_t)1 << 20)

static struct {
    void *free[PAYLOAD_CLASSES];
    size_t bytes;
} payloads;

/* ---- flow control --------------------------------------------------------
 * A receiver that holds too much of one sender's unexpected eager data asks
 * it to send rendezvous (src/transport/shm/README.md, "Flow control").  In
 * shared memory the question is a bit in the segment (shm.c); over the
 * network it is a packet, LMPI_PKT_THROTTLE (tag 1: from now on, 0: no
 * longer), sent when the bytes held from that peer pass NET_HELD_HIGH and
 * when they fall back to NET_HELD_LOW.  Measured between two emulated hosts:
 * 640 messages of 16 KiB sent ahead of their receives were all held (10 MiB)
 * before this.  Processes of other groups (the bridge) are not covered, and
 * between hosts the bound holds only while the receiver keeps reading: a
 * burst sent while it is descheduled waits in the network's buffers, out of
 * its reach (sender-side credits would bound that; not built). */
#define NET_HELD_HIGH ((uint64_t)1 << 20)
#define NET_HELD_LOW (NET_HELD_HIGH / 4)
static struct {
    uint64_t *held;      /* per world rank on another host: bytes of its unexpected eager messages here */
    uint64_t *asked;     /* bitmap per world rank: we asked it for rendezvous */
    uint64_t *throttled; /* bitmap per world rank: it asked us for rendezvous */
} net_flow;

static void send_control(int dest, const lmpi_pkt_hdr *hdr);

static bool bit_of(const uint64_t *bits, int r) { return bits && (bits[r / 64] >> (r % 64) & 1); }

/* May BYTES go to peer eagerly now? */
static bool eager_ok(int peer, size_t bytes)
{
    if (!lmpi_tr_eager_ok(peer, bytes))
        return false;
    return bytes <= LMPI_EAGER_ALWAYS || !net_flow.throttled || peer >= lmpi_rt.world_size || peer < 0 ||
           !bit_of(net_flow.throttled, peer);
}

/* This process now holds DELTA more (or fewer) bytes of src's unexpected
 * eager messages. */
static void held(int src, int64_t delta)
{
    if (!lmpi_tr_remote(src)) {
        lmpi_shm_held(src, delta);
        return;
    }
    if (src < 0 || src >= lmpi_rt.world_size)
        return;
    size_t words = (size_t)(lmpi_rt.world_size + 63) / 64;
    if (!net_flow.held) {
        net_flow.held = lmpi_calloc((size_t)lmpi_rt.world_size, sizeof(uint64_t), LMPI_MEM_MATCH);
        net_flow.asked = lmpi_calloc(words, sizeof(uint64_t), LMPI_MEM_MATCH);
        if (!net_flow.held || !net_flow.asked) { /* without room to count, nothing is throttled */
            lmpi_free(net_flow.held);
            lmpi_free(net_flow.asked);
            net_flow.held = net_flow.asked = NULL;
            return;
        }
    }
    uint64_t now = (uint64_t)((int64_t)net_flow.held[src] + delta);
    net_flow.held[src] = now;
    bool asked = bit_of(net_flow.asked, src);
    if (asked == (now >= NET_HELD_HIGH) || (asked && now > NET_HELD_LOW))
        return;
    net_flow.asked[src / 64] ^= (uint64_t)1 << (src % 64);
    lmpi_pkt_hdr h = {.type = LMPI_PKT_THROTTLE, .tag = !asked};
    send_control(src, &h);
}

/* A sender that posts sends without waiting (an MPI_Isend loop) hears a
 * receiver's LMPI_PKT_THROTTLE only when it polls: before, such a loop
 * polled only when the network refused a send (its queue full, a few MiB
 * later), and a receiver held up to 4 MiB instead of about 1
 * (hosts.mpiexec.4's t_pt2pt producer_runs_ahead, under a busy machine).
 * So every NET_POLL_EVERY eager bytes sent to other hosts, the sender polls. */
#define NET_POLL_EVERY (NET_HELD_HIGH / 4)
static uint64_t net_eager_unpolled;

static void net_eager_sent(size_t bytes)
{
    if ((net_eager_unpolled += bytes) < NET_POLL_EVERY)
        return;
    net_eager_unpolled = 0;
    lmpi_progress_poll();
}

/* A peer on another host asks for rendezvous (tag 1) or lets us send eagerly again. */
static void throttle_packet(int src, const lmpi_pkt_hdr *h)
{
    if (src < 0 || src >= lmpi_rt.world_size)
        return;
    if (!net_flow.throttled &&
        !(net_flow.throttled = lmpi_calloc((size_t)(lmpi_rt.world_size + 63) / 64, sizeof(uint64_t), LMPI_MEM_MATCH)))
        return;
    uint64_t bit = (uint64_t)1 << (src % 64);
    if (h->tag)
        net_flow.throttled[src / 64] |= bit;
    else
        net_flow.throttled[src / 64] &= ~bit;
}

static int payload_class(size_t len)
{
    if (len <= (size_t)1 << (PAYLOAD_CLASS_MIN - 1))
        return -1;
    int c = 0;
    while (c < PAYLOAD_CLASSES && len > (size_t)1 << (PAYLOAD_CLASS_MIN + c))
        c++;
    return c < PAYLOAD_CLASSES ? c : -1;
}

static void *payload_get(size_t len)
{
    int c = payload_class(len);
    if (c < 0)
        return lmpi_malloc(len, LMPI_MEM_MATCH);
    void *b = payloads.free[c];
    if (!b)
        return lmpi_malloc((size_t)1 << (PAYLOAD_CLASS_MIN + c), LMPI_MEM_MATCH);
    payloads.free[c] = *(void **)b;
    payloads.bytes -= (size_t)1 << (PAYLOAD_CLASS_MIN + c);
    return b;
}

static void payload_put(void *b, size_t len)
{
    int c = payload_class(len);
    size_t cap = c < 0 ? 0 : (size_t)1 << (PAYLOAD_CLASS_MIN + c);
    if (!b || c < 0 || payloads.bytes + cap > PAYLOAD_CACHE_MAX) {
        lmpi_free(b);
        return;
    }
    *(void **)b = payloads.free[c];
    payloads.free[c] = b;
    payloads.bytes += cap;
}

static void payloads_release(void)
{
    for (int c = 0; c < PAYLOAD_CLASSES; c++)
        while (payloads.free[c]) {
            void *b = payloads.free[c];
            payloads.free[c] = *(void **)b;
            lmpi_free(b);
        }
    payloads.bytes = 0;
}

/* Descriptors of cooperative copies whose sender has not let go yet. */
static struct {
    uint64_t *tokens;
    size_t n, cap;
} zombies;

static void release_coop(uint64_t token)
{
    if (lmpi_tr_coop_release(token))
        return;
    if (zombies.n == zombies.cap) {
        size_t cap = zombies.cap ? 2 * zombies.cap : 16;
        uint64_t *t = lmpi_realloc(zombies.tokens, cap * sizeof(uint64_t), LMPI_MEM_SHM);
        if (!t)
            lmpi_abort_job(MPI_ERR_NO_MEM, "out of memory tracking copy descriptors");
        zombies.tokens = t;
        zombies.cap = cap;
    }
    zombies.tokens[zombies.n++] = token;
}

static void reap_zombies(void)
{
    for (size_t i = 0; i < zombies.n;)
        if (lmpi_tr_coop_release(zombies.tokens[i]))
            zombies.tokens[i] = zombies.tokens[--zombies.n];
        else
            i++;
}


/* A message that arrived before its receive was posted.  One record is kept
 * ready so that an arrival can be queued right where its failed search
 * ended, without a second search. */
struct lmpi_unexpected {
    lmpi_mqi mqi;
    uint32_t magic; /* LMPI_MAGIC_MESSAGE while it is an MPI_Message */
    int src;        /* world rank of the sender */
    lmpi_comm *comm; /* an MPI_Message's communicator: MPI_Mrecv's errors go to its handler */
    lmpi_pkt_hdr hdr;
    void *data; /* eager payload copy (hdr.len bytes); NULL for RTS */
    /* Small payloads live here: a malloc and free per tiny unexpected
     * message were an eighth of a streamed 8-byte reduce at its root. */
    char small[64];
};

static lmpi_pool unexpected_pool;
static lmpi_unexpected *spare;

static lmpi_unexpected *spare_record(void)
{
    if (LMPI_UNLIKELY(!spare)) {
        if (!unexpected_pool.obj_size)
            lmpi_pool_init(&unexpected_pool, sizeof(lmpi_unexpected), 64, LMPI_MEM_MATCH);
        spare = lmpi_pool_get(&unexpected_pool);
        if (!spare)
            lmpi_abort_job(MPI_ERR_NO_MEM, "out of memory storing an unexpected message");
    }
    return spare;
}

lmpi_unexpected *lmpi_pt2pt_unexpected_of(lmpi_mqi *m)
{
    return lmpi_container_of(m, lmpi_unexpected, mqi);
}

MPI_Message lmpi_pt2pt_message_handle(lmpi_unexpected *u, lmpi_comm *comm)
{
    u->magic = LMPI_MAGIC_MESSAGE;
    u->comm = comm;
    return (MPI_Message)u;
}

lmpi_comm *lmpi_pt2pt_message_comm(const lmpi_unexpected *u)
{
    return u->comm;
}

lmpi_unexpected *lmpi_pt2pt_message_from_handle(MPI_Message h)
{
    if ((uintptr_t)h < LMPI_PREDEF_LIMIT)
        return NULL;
    lmpi_unexpected *u = (lmpi_unexpected *)h;
    return u->magic == LMPI_MAGIC_MESSAGE ? u : NULL;
}

void lmpi_pt2pt_unexpected_free(lmpi_unexpected *u)
{
    u->magic = 0;
    if (u->data)
        held(u->src, -(int64_t)u->hdr.len);
    if (u->data != u->small)
        payload_put(u->data, (size_t)u->hdr.len);
    lmpi_pool_put(&unexpected_pool, u);
}

/* The queue of a context seen in an arrival: communicators create theirs
 * with their size when they are made; a context met first on the wire gets
 * the world's size, the largest it can be. */
static lmpi_match_queue *queue_of(uint32_t ctx, int size)
{
    lmpi_match_queue *q = lmpi_match_queue_get(ctx, size);
    if (LMPI_UNLIKELY(!q))
        lmpi_abort_job(MPI_ERR_NO_MEM, "out of memory creating a matching queue");
    return q;
}

void lmpi_pt2pt_proc_null_status(MPI_Status *s)
{
    s->MPI_SOURCE = MPI_PROC_NULL;
    s->MPI_TAG = MPI_ANY_TAG;
    s->MPI_ERROR = MPI_SUCCESS;
    lmpi_status_set_bytes(s, 0);
    lmpi_status_set_cancelled(s, 0);
}

lmpi_match_queue *lmpi_pt2pt_queue(lmpi_comm *comm, uint32_t ctx)
{
    return queue_of(ctx, comm->peer_size);
}

void lmpi_pt2pt_finalize(void)
{
    lmpi_free(zombies.tokens);
    memset(&zombies, 0, sizeof(zombies));
    payloads_release();
    lmpi_free(net_flow.held);
    lmpi_free(net_flow.asked);
    lmpi_free(net_flow.throttled);
    memset(&net_flow, 0, sizeof(net_flow));
    net_eager_unpolled = 0;
    lmpi_match_finalize();
    if (unexpected_pool.obj_size)
        lmpi_pool_destroy(&unexpected_pool);
    memset(&unexpected_pool, 0, sizeof(unexpected_pool));
    spare = NULL;
}

static uint64_t req_id(lmpi_request *r)
{
    return (uint64_t)(uintptr_t)r;
}

/* Benchmark switch (bench/comm issue rate): with LMPI_BENCH_DRY_ISSUE=1,
 * MPI_Pcontrol(2) makes user sends stop right before the transport and
 * complete at once; MPI_Pcontrol(1) ends it.  Off unless both are set, so a
 * program calling MPI_Pcontrol for a profiler never loses a message. */
bool lmpi_pt2pt_dry_issue;

lmpi_status lmpi_impl_Pcontrol(const int level)
{
    lmpi_pt2pt_dry_issue = level == 2 && lmpi_config.bench_dry_issue;
    return LMPI_OK;
}

static lmpi_request *req_of(uint64_t id)
{
    return (lmpi_request *)(uintptr_t)id;
}

static void complete_send(lmpi_request *r)
{
    if (LMPI_UNLIKELY(r->abandoned))
        return; /* ended by src/ft already */
    r->proto = LMPI_PROTO_NONE;
    if (LMPI_UNLIKELY(r->cancel_pending)) { /* done when the receiver answers */
        r->sent = true;
        return;
    }
    r->complete = 1;
    if (r->bseg) {
        lmpi_bsend_release(r->bseg);
        r->bseg = NULL;
    }
    if (r->internal)
        lmpi_request_free(r);
}

/* An eager packet left: done, unless a synchronous send waits for its ACK. */
static void eager_sent(lmpi_request *r)
{
    if (r->mode == LMPI_MODE_SYNC)
        r->proto = LMPI_PROTO_SYNC_WAIT;
    else
        complete_send(r);
}

/* ---- non-contiguous sends: the payload is packed straight into the cell ---- */
typedef struct {
    const lmpi_request *r;
    MPI_Count first;
} pack_fill_arg;

static void pack_fill(void *dst, size_t len, void *arg)
{
    const pack_fill_arg *a = arg;
    lmpi_dt_pack(a->r->user_buf, a->r->count, a->r->dt, a->first, (MPI_Count)len, dst);
}

/* Bytes [off, off + n) of a send request's message as one packet. */
static lmpi_status send_data(int dest, const lmpi_pkt_hdr *h, const lmpi_request *r, size_t off, size_t n)
{
    if (LMPI_LIKELY(!r->dt))
        return lmpi_tr_send_pkt(dest, h, (const char *)r->buf + off, n);
    pack_fill_arg a = {r, (MPI_Count)off};
    return lmpi_tr_send_pkt_fill(dest, h, n, pack_fill, &a);
}

/* The whole message as one eager packet.  A send request keeps in
 * remote_req the key its message reached the receiver under when the
 * transport left out the sreq (lmpi_tr_eager_key): MPI_Cancel names it. */
static lmpi_status send_eager(int dest, const lmpi_pkt_hdr *h, lmpi_request *r)
{
    lmpi_tr_eager_key = 0;
    lmpi_status st = send_data(dest, h, r, 0, r->bytes);
    if (st == LMPI_OK) {
        r->remote_req = lmpi_tr_eager_key;
        eager_sent(r);
    }
    return st;
}

static outbox_entry *outbox_push_with(out_kind kind, int dest, const lmpi_pkt_hdr *hdr, lmpi_request *req,
                                      const void *payload, size_t plen)
{
    outbox_entry *e = lmpi_malloc(sizeof(*e) + plen, LMPI_MEM_REQUEST);
    if (!e)
        lmpi_abort_job(MPI_ERR_NO_MEM, "out of memory queueing a message");
    e->next = NULL;
    e->plen = plen;
    if (plen)
        memcpy(e->payload, payload, plen);
    e->kind = kind;
    e->dest = dest;
    e->hdr = *hdr;
    e->req = req;
    if (outbox.tail)
        outbox.tail->next = e;
    else
        outbox.head = e;
    outbox.tail = e;
    return e;
}

static void outbox_push(out_kind kind, int dest, const lmpi_pkt_hdr *hdr, lmpi_request *req)
{
    outbox_push_with(kind, dest, hdr, req, NULL, 0);
}

/* A send's announcement of a rendezvous: the receiver pulls from the
 * user's buffer, or asks for a stream when the type must be packed. */
static void rts_header(lmpi_pkt_hdr *h, const lmpi_request *r)
{
    h->type = LMPI_PKT_RTS;
    h->addr = (uint64_t)(uintptr_t)r->buf;
    h->flags = r->dt ? LMPI_PKT_PACKED : 0;
}

/* Try to send one outbox entry; true when it is finished. */
static bool outbox_try(outbox_entry *e)
{
    lmpi_request *r = e->req;
    if (LMPI_UNLIKELY(r && r->abandoned))
        return true; /* given up after a failure (src/ft): its buffer may be gone */
    if (LMPI_UNLIKELY(lmpi_ft_active) && lmpi_ft_failed(e->dest)) {
        /* the destination failed (src/ft): the packet would wait forever,
         * and everything queued behind it */
        if (r && e->kind != OUT_PACKET) {
            r->status.MPI_ERROR = MPIX_ERR_PROC_FAILED;
            complete_send(r);
        }
        return true;
    }
    switch (e->kind) {
    case OUT_PACKET:
        return lmpi_tr_send_pkt(e->dest, &e->hdr, e->plen ? e->payload : NULL, e->plen) == LMPI_OK;
    case OUT_EAGER:
        if (!eager_ok(e->dest, r->bytes)) {
            /* the receiver asked for rendezvous while this waited (flow
             * control, src/transport/shm/shm.c) */
            rts_header(&e->hdr, r);
            e->kind = OUT_RTS;
            r->proto = LMPI_PROTO_RTS_QUEUED;
            return outbox_try(e);
        }
        return send_eager(e->dest, &e->hdr, r) == LMPI_OK;
    case OUT_RTS:
        if (lmpi_tr_send_pkt(e->dest, &e->hdr, NULL, 0) != LMPI_OK)
            return false;
        r->proto = LMPI_PROTO_RNDV_WAIT;
        return true;
    case OUT_STREAM: {
        size_t chunk = lmpi_tr_max_payload(e->dest);
        while (r->offset < r->bytes) {
            size_t n = r->bytes - r->offset < chunk ? r->bytes - r->offset : chunk;
            lmpi_pkt_hdr h = e->hdr;
            h.addr = r->offset;
            if (send_data(e->dest, &h, r, r->offset, n) != LMPI_OK)
                return false;
            r->offset += n;
        }
        complete_send(r);
        return true;
    }
    }
    return true;
}

int lmpi_pt2pt_progress_outbox(void)
{
    int n = 0;
    if (LMPI_UNLIKELY(zombies.n))
        reap_zombies();
    while (outbox.head && outbox_try(outbox.head)) {
        outbox_entry *e = outbox.head;
        outbox.head = e->next;
        if (!outbox.head)
            outbox.tail = NULL;
        lmpi_free(e);
        n++;
    }
    return n;
}

static void send_control(int dest, const lmpi_pkt_hdr *hdr)
{
    if (outbox.head || lmpi_tr_send_pkt(dest, hdr, NULL, 0) != LMPI_OK)
        outbox_push(OUT_PACKET, dest, hdr, NULL);
}

void lmpi_pt2pt_send_packet(int dest, const lmpi_pkt_hdr *hdr, const void *payload, size_t len)
{
    if (outbox.head || lmpi_tr_send_pkt(dest, hdr, payload, len) != LMPI_OK)
        outbox_push_with(OUT_PACKET, dest, hdr, NULL, payload, len);
}

lmpi_pkt_handler lmpi_pt2pt_rma_handler;

lmpi_status lmpi_pt2pt_isend(const void *buf, size_t bytes, int dest, int tag, lmpi_comm *comm, uint32_t ctx,
                             lmpi_send_mode mode, lmpi_bsend_segment *bseg, lmpi_request **out)
{
    return lmpi_pt2pt_isend_dt(buf, 0, NULL, bytes, dest, tag, comm, ctx, mode, bseg, out);
}

/* dt non-NULL: a non-contiguous type, packed as it leaves (no copy of the
 * whole message is made). */
lmpi_status lmpi_pt2pt_isend_dt(const void *buf, MPI_Count count, lmpi_datatype *dt, size_t bytes, int dest, int tag,
                                lmpi_comm *comm, uint32_t ctx, lmpi_send_mode mode, lmpi_bsend_segment *bseg,
                                lmpi_request **out)
{
    lmpi_request *r = lmpi_request_alloc(LMPI_REQ_SEND);
    if (!r)
        return LMPI_ERR_NO_MEM;
    if (dt) {
        r->user_buf = (void *)buf;
        r->count = count;
        r->dt = dt;
        lmpi_datatype_retain(dt);
        buf = NULL;
    }
    r->comm = comm;
    r->buf = (void *)buf;
    r->bytes = bytes;
    r->tag = tag;
    r->ctx = ctx;
    r->mode = (uint8_t)mode;
    r->bseg = bseg;
    r->internal = bseg != NULL;
    *out = r;
    if (dest == MPI_PROC_NULL) {
        r->peer = -1; /* nothing to cancel */
        complete_send(r);
        return LMPI_OK;
    }
    int peer = lmpi_comm_world_rank(comm, dest);
    r->peer = peer;
    lmpi_pkt_hdr h = {.rank = comm->rank, .tag = tag, .ctx = ctx, .len = bytes, .sreq = req_id(r)};
    if (LMPI_UNLIKELY(lmpi_pt2pt_dry_issue) && !r->internal) {
        complete_send(r);
        return LMPI_OK;
    }
    if (bytes > LMPI_EAGER_ALWAYS && lmpi_tr_remote(peer))
        net_eager_sent(bytes); /* (may learn here that peer asks for rendezvous) */
    if (eager_ok(peer, bytes)) {
        h.type = LMPI_PKT_EAGER;
        h.flags = mode == LMPI_MODE_SYNC ? LMPI_PKT_SYNC : 0;
        if (!outbox.head && send_eager(peer, &h, r) == LMPI_OK)
            return LMPI_OK;
        r->proto = LMPI_PROTO_EAGER_QUEUED;
        outbox_push(OUT_EAGER, peer, &h, r);
        return LMPI_OK;
    }
    rts_header(&h, r);
    if (!outbox.head && lmpi_tr_send_pkt(peer, &h, NULL, 0) == LMPI_OK) {
        r->proto = LMPI_PROTO_RNDV_WAIT;
        return LMPI_OK;
    }
    r->proto = LMPI_PROTO_RTS_QUEUED;
    outbox_push(OUT_RTS, peer, &h, r);
    return LMPI_OK;
}

static void finish_recv(lmpi_request *r, const lmpi_pkt_hdr *h, size_t got)
{
    r->status.MPI_SOURCE = h->rank;
    r->status.MPI_TAG = h->tag;
    r->status.MPI_ERROR = h->len > r->bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    lmpi_status_set_bytes(&r->status, (int64_t)got);
    lmpi_status_set_cancelled(&r->status, 0);
    r->proto = LMPI_PROTO_NONE;
    r->complete = 1;
    if (r->internal)
        lmpi_request_free(r);
}

/* Large messages: both sides copy (the sender helps when it is in MPI). */
static bool cooperative_copy(lmpi_request *r, int src, const lmpi_pkt_hdr *h, size_t want)
{
    if (lmpi_config.shm_coop_min == 0 || want < (size_t)lmpi_config.shm_coop_min)
        return false;
    uint64_t token = lmpi_tr_coop_start(src, h->addr, r->buf, want);
    if (!token)
        return false;
    lmpi_pkt_hdr coop = {.type = LMPI_PKT_COOP, .sreq = h->sreq, .addr = token};
    send_control(src, &coop);
    if (!lmpi_tr_coop_work(token, src, false))
        lmpi_abort_job(MPI_ERR_INTERN, "cross-memory copy failed after it had worked");
    release_coop(token);
    return true;
}

/* A non-contiguous receive pulls into its runs when they are long enough
 * for the system call to pay (process_vm_readv with iovecs, 64 runs per
 * call); short runs are better served by a stream unpacked from the cells. */
#define PULL_IOV_MIN_RUN 2048
static bool pull_scattered(lmpi_request *r, int src, const lmpi_pkt_hdr *h, size_t want)
{
    if ((h->flags & LMPI_PKT_PACKED) || want == 0)
        return want == 0;
    MPI_Count runs = lmpi_dt_runs(r->dt) * r->count;
    if (runs && (MPI_Count)want / runs < PULL_IOV_MIN_RUN)
        return false;
    struct iovec iov[64];
    MPI_Count first = 0;
    while ((size_t)first < want) {
        MPI_Count done;
        int n = lmpi_dt_iov(r->user_buf, r->count, r->dt, first, (MPI_Count)want - first, iov, 64, &done);
        if (lmpi_tr_pull_iov(src, h->addr + (uint64_t)first, iov, n) != 0) {
            if (first == 0)
                return false; /* cross-memory attach unavailable: stream */
            lmpi_abort_job(MPI_ERR_INTERN, "cross-memory copy failed after it had worked");
        }
        first += done;
    }
    return true;
}

/* A receive met a rendezvous announcement: pull, or ask for a stream. */
static void start_rndv(lmpi_request *r, int src, const lmpi_pkt_hdr *h)
{
    size_t want = h->len < r->bytes ? h->len : r->bytes;
    if (r->dt || (h->flags & LMPI_PKT_PACKED)) {
        if (r->dt && pull_scattered(r, src, h, want)) {
            lmpi_pkt_hdr fin = {.type = LMPI_PKT_FIN, .sreq = h->sreq};
            send_control(src, &fin);
            finish_recv(r, h, want);
            return;
        }
        goto stream;
    }
    if (cooperative_copy(r, src, h, want)) {
        lmpi_pkt_hdr fin = {.type = LMPI_PKT_FIN, .sreq = h->sreq};
        send_control(src, &fin);
        finish_recv(r, h, want);
        return;
    }
    int pulled = want == 0 ? 0 : lmpi_tr_pull(src, h, r->buf, want, req_id(r));
    if (pulled == 0) {
        lmpi_pkt_hdr fin = {.type = LMPI_PKT_FIN, .sreq = h->sreq};
        send_control(src, &fin);
        finish_recv(r, h, want);
        return;
    }
    if (pulled > 0) { /* over the network: PULLED finishes it */
        r->proto = LMPI_PROTO_RECV_PULL;
        r->peer = src;
        r->status.MPI_SOURCE = h->rank;
        r->status.MPI_TAG = h->tag;
        r->remote_req = h->sreq;
        r->offset = h->len; /* what the sender offered (more than want: truncated) */
        return;
    }
stream:
    r->proto = LMPI_PROTO_RECV_STREAM;
    r->offset = 0;
    r->peer = src;
    r->status.MPI_SOURCE = h->rank;
    r->status.MPI_TAG = h->tag;
    r->remote_req = h->len; /* total the sender will stream */
    lmpi_pkt_hdr cts = {.type = LMPI_PKT_CTS, .sreq = h->sreq, .rreq = req_id(r), .len = h->len};
    send_control(src, &cts);
}

static void recv_eager(lmpi_request *r, int src, const lmpi_pkt_hdr *h, const void *payload)
{
    size_t n = h->len < r->bytes ? h->len : r->bytes;
    if (n && r->dt)
        lmpi_dt_unpack(r->user_buf, r->count, r->dt, 0, (MPI_Count)n, payload);
    else if (n)
        memcpy(r->buf, payload, n);
    if (h->flags & LMPI_PKT_SYNC) {
        lmpi_pkt_hdr ack = {.type = LMPI_PKT_ACK, .sreq = h->sreq};
        send_control(src, &ack);
    }
    finish_recv(r, h, n);
}

/* A matched receive takes over an arrival (eager data or announcement). */
static void recv_matched(lmpi_request *r, int src, const lmpi_pkt_hdr *h, const void *payload)
{
    r->mq = NULL; /* no longer cancellable */
    if (h->type == LMPI_PKT_EAGER)
        recv_eager(r, src, h, payload);
    else
        start_rndv(r, src, h);
}

void lmpi_pt2pt_recv_unexpected(lmpi_request *r, lmpi_unexpected *u)
{
    recv_matched(r, u->src, &u->hdr, u->data);
    lmpi_pt2pt_unexpected_free(u);
}

void lmpi_pt2pt_status_of_unexpected(const lmpi_unexpected *u, MPI_Status *st)
{
    st->MPI_SOURCE = u->hdr.rank;
    st->MPI_TAG = u->hdr.tag;
    st->MPI_ERROR = MPI_SUCCESS;
    lmpi_status_set_bytes(st, (int64_t)u->hdr.len);
    lmpi_status_set_cancelled(st, 0);
}

/* ---- cancelling a send (MPI_Cancel) -------------------------------------------
 * A send still in the outbox is dropped on the spot.  One that reached the
 * receiver is asked back: the receiver takes it out of its unexpected
 * queue if it is the earliest unmatched message with that envelope (a
 * later one stays: it cannot overtake, and a failed cancel is allowed), and
 * answers; the send completes, cancelled or not, with the answer. */
static bool taken_back(int src, const lmpi_pkt_hdr *h)
{
    lmpi_match_queue *q = queue_of(h->ctx, lmpi_rt.peer_size_hint);
    lmpi_mqi *m = lmpi_match_probe(q, h->rank, h->tag, false);
    if (!m)
        return false;
    lmpi_unexpected *u = lmpi_pt2pt_unexpected_of(m);
    if (u->src != src || u->hdr.sreq != (h->addr ? h->addr : h->sreq)) /* (send_eager's key) */
        return false;
    lmpi_match_probe(q, h->rank, h->tag, true);
    lmpi_pt2pt_unexpected_free(u);
    return true;
}

static void take_back(int src, const lmpi_pkt_hdr *h)
{
    lmpi_pkt_hdr reply = {.type = LMPI_PKT_CANCEL_REPLY, .sreq = h->sreq};
    if (taken_back(src, h))
        reply.flags = LMPI_PKT_CANCELLED;
    send_control(src, &reply);
}

static void cancel_answered(lmpi_request *r, bool cancelled)
{
    if (LMPI_UNLIKELY(r->abandoned))
        return;
    r->cancel_pending = false;
    if (cancelled) {
        lmpi_status_set_cancelled(&r->status, 1);
        r->proto = LMPI_PROTO_NONE;
        r->sent = true;
    }
    if (r->sent) /* cancelled, or delivered and finished meanwhile */
        complete_send(r);
}

void lmpi_pt2pt_cancel_send(lmpi_request *r)
{
    if (r->cancel_pending || lmpi_status_cancelled(&r->status) || r->peer < 0 || r->internal)
        return;
    if (r->proto == LMPI_PROTO_EAGER_QUEUED || r->proto == LMPI_PROTO_RTS_QUEUED) {
        for (outbox_entry **e = &outbox.head, *prev = NULL; *e; prev = *e, e = &(*e)->next)
            if ((*e)->req == r) {
                outbox_entry *gone = *e;
                *e = gone->next;
                if (outbox.tail == gone)
                    outbox.tail = prev;
                lmpi_free(gone);
                lmpi_status_set_cancelled(&r->status, 1);
                complete_send(r);
                return;
            }
    }
    if (r->proto == LMPI_PROTO_STREAMING) /* matched: too late */
        return;
    /* delivered (eager, maybe done here already), or announced */
    lmpi_pkt_hdr h = {.type = LMPI_PKT_CANCEL, .rank = r->comm->rank, .tag = r->tag, .ctx = r->ctx,
                      .sreq = req_id(r), .addr = r->remote_req};
    if (r->peer == lmpi_rt.world_rank) { /* to ourselves: the answer is known at once */
        lmpi_progress_poll(); /* the message may still sit in our own fast box */
        if (taken_back(r->peer, &h)) {
            lmpi_status_set_cancelled(&r->status, 1);
            complete_send(r);
        }
        return;
    }
    r->sent = r->complete;
    r->complete = 0;
    r->cancel_pending = true;
    send_control(r->peer, &h);
}

void lmpi_pt2pt_deliver(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    switch (h->type) {
    case LMPI_PKT_EAGER:
    case LMPI_PKT_RTS: {
        lmpi_match_queue *q = queue_of(h->ctx, lmpi_rt.peer_size_hint);
        lmpi_unexpected *u = spare_record();
        lmpi_mqi *m = lmpi_match_arrive(q, h->rank, h->tag, &u->mqi);
        if (m) {
            recv_matched(lmpi_container_of(m, lmpi_request, mqi), src, h, payload);
            return;
        }
        spare = NULL; /* queued */
        u->magic = 0;
        u->src = src;
        u->hdr = *h;
        u->data = NULL;
        if (h->type == LMPI_PKT_EAGER && len) {
            u->data = len <= sizeof(u->small) ? u->small : payload_get(len);
            if (!u->data)
                lmpi_abort_job(MPI_ERR_NO_MEM, "out of memory storing an unexpected message");
            memcpy(u->data, payload, len);
            held(src, (int64_t)len);
        }
        return;
    }
    case LMPI_PKT_FIN:
    case LMPI_PKT_ACK:
        complete_send(req_of(h->sreq));
        return;
    case LMPI_PKT_COOP:
        /* help copy our own message; the receiver's FIN completes it */
        lmpi_tr_coop_work(h->addr, src, true);
        return;
    case LMPI_PKT_CANCEL:
        take_back(src, h);
        return;
    case LMPI_PKT_CANCEL_REPLY:
        cancel_answered(req_of(h->sreq), (h->flags & LMPI_PKT_CANCELLED) != 0);
        return;
    case LMPI_PKT_PULLED: {
        lmpi_request *r = req_of(h->rreq);
        lmpi_pkt_hdr fin = {.type = LMPI_PKT_FIN, .sreq = r->remote_req};
        lmpi_pkt_hdr done = {.rank = r->status.MPI_SOURCE, .tag = r->status.MPI_TAG, .len = r->offset};
        send_control(r->peer, &fin);
        if (LMPI_LIKELY(!r->abandoned))
            finish_recv(r, &done, r->offset < r->bytes ? r->offset : r->bytes);
        return;
    }
    case LMPI_PKT_CTS: {
        lmpi_request *r = req_of(h->sreq);
        if (LMPI_UNLIKELY(r->abandoned))
            return; /* src/ft: its buffer may be gone */
        r->proto = LMPI_PROTO_STREAMING;
        r->offset = 0;
        lmpi_pkt_hdr d = {.type = LMPI_PKT_DATA, .rreq = h->rreq, .len = r->bytes};
        outbox_push(OUT_STREAM, src, &d, r);
        return;
    }
    case LMPI_PKT_DATA: {
        lmpi_request *r = req_of(h->rreq);
        if (LMPI_UNLIKELY(r->abandoned))
            return; /* src/ft: its buffer may be gone */
        size_t off = (size_t)h->addr;
        if (off < r->bytes) {
            size_t n = len < r->bytes - off ? len : r->bytes - off;
            if (r->dt) /* non-contiguous: unpacked straight from the cell */
                lmpi_dt_unpack(r->user_buf, r->count, r->dt, (MPI_Count)off, (MPI_Count)n, payload);
            else
                memcpy((char *)r->buf + off, payload, n);
        }
        r->offset += len;
        if (r->offset >= h->len) {
            lmpi_pkt_hdr done = {.rank = r->status.MPI_SOURCE, .tag = r->status.MPI_TAG, .len = h->len};
            finish_recv(r, &done, h->len < r->bytes ? h->len : r->bytes);
        }
        return;
    }
    case LMPI_PKT_RMA:
        if (lmpi_pt2pt_rma_handler)
            lmpi_pt2pt_rma_handler(src, h, payload, len);
        return;
    case LMPI_PKT_NET:
        lmpi_tr_net_packet(src, h, payload, len);
        return;
    case LMPI_PKT_FT:
        lmpi_ft_packet(src, h, payload, len);
        return;
    case LMPI_PKT_THROTTLE:
        throttle_packet(src, h);
        return;
    default:
        lmpi_abort_job(MPI_ERR_INTERN, "corrupt packet from the shared-memory transport");
    }
}

void lmpi_pt2pt_recv_init(lmpi_request *r, void *buf, size_t bytes, int source, int tag, lmpi_comm *comm,
                          uint32_t ctx)
{
    r->kind = LMPI_REQ_RECV;
    r->proto = LMPI_PROTO_NONE;
    r->complete = 0;
    r->comm = comm;
    r->buf = buf;
    r->bytes = bytes;
    r->offset = 0;
    r->rank = source;
    r->tag = tag;
    r->ctx = ctx;
    r->peer = -1;
    r->mode = LMPI_MODE_RECV;
    r->internal = false;
    r->abandoned = false; /* (requests on the stack start uninitialized) */
    r->mq = NULL;
    r->dt = NULL; /* a non-contiguous type is attached after this */
    r->user_buf = NULL;
}

/* Match against the unexpected messages, else wait in the posted queue. */
void lmpi_pt2pt_recv_start(lmpi_request *r)
{
    if (r->rank == MPI_PROC_NULL) {
        lmpi_pt2pt_proc_null_status(&r->status);
        r->complete = 1;
        return;
    }
    lmpi_match_queue *q = queue_of(r->ctx, r->comm->peer_size);
    lmpi_mqi *m = lmpi_match_post(q, r->rank, r->tag, &r->mqi);
    if (!m) {
        r->mq = q;
        return;
    }
    lmpi_pt2pt_recv_unexpected(r, lmpi_container_of(m, lmpi_unexpected, mqi));
}

lmpi_status lmpi_pt2pt_irecv(void *buf, size_t bytes, int source, int tag, lmpi_comm *comm, uint32_t ctx,
                             lmpi_request **out)
{
    lmpi_request *r = lmpi_request_alloc(LMPI_REQ_RECV);
    if (!r)
        return LMPI_ERR_NO_MEM;
    lmpi_pt2pt_recv_init(r, buf, bytes, source, tag, comm, ctx);
    *out = r;
    lmpi_pt2pt_recv_start(r);
    return LMPI_OK;
}

/* The send attempt before any request exists (Open MPI's trick): a small
 * standard-mode message goes straight into the transport when nothing is
 * queued before it.  False: the caller takes the general path. */
bool lmpi_pt2pt_try_send(const void *buf, size_t bytes, int dest, int tag, lmpi_comm *comm, uint32_t ctx)
{
    if (outbox.head || dest == MPI_PROC_NULL)
        return false;
    int peer = lmpi_comm_world_rank(comm, dest);
    if (!eager_ok(peer, bytes))
        return false;
    lmpi_pkt_hdr h = {.type = LMPI_PKT_EAGER, .rank = comm->rank, .tag = tag, .ctx = ctx, .len = bytes};
    return lmpi_tr_send_pkt(peer, &h, buf, bytes) == LMPI_OK;
}

