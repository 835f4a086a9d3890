/* The transport interface: moves packets (a pt2pt header plus a bounded
 * payload) between processes and copies large buffers from a peer in one go.
 * Matching and protocols stay above, in src/pt2pt.
 *
 * A transport is a const ops table; with one implementation of each kind
 * built (shm inside a node, ofi between nodes) the lmpi_tr_* calls below
 * are direct, inlinable calls chosen per destination. */
#ifndef LMPI_TRANSPORT_H
#define LMPI_TRANSPORT_H

#include <sys/uio.h>

#include "runtime/lmpi.h"

typedef enum {
    LMPI_PKT_EAGER = 1, /* header + whole message */
    LMPI_PKT_RTS,       /* rendezvous: sender's address and length */
    LMPI_PKT_CTS,       /* receiver cannot pull: stream DATA to rreq */
    LMPI_PKT_DATA,      /* a piece of a streamed message at offset addr */
    LMPI_PKT_FIN,       /* receiver pulled the data: sender request done */
    LMPI_PKT_ACK,       /* receiver matched a synchronous eager message */
    LMPI_PKT_COOP,      /* receiver asks the sender to help copy (addr: descriptor token) */
    LMPI_PKT_CANCEL,    /* sender asks to take back an unmatched message (rank, tag, ctx, sreq; addr: its key) */
    LMPI_PKT_CANCEL_REPLY, /* flags LMPI_PKT_CANCELLED: it was taken back */
    LMPI_PKT_CTRL,         /* between process groups, for dynamic process management (bridge.h) */
    LMPI_PKT_PULLED,       /* local, from the transport: an asynchronous pull into rreq is done */
    LMPI_PKT_RMA,          /* a one-sided operation carried in messages (rma/am.c; tag: what) */
    LMPI_PKT_NET,          /* the network transport's own: connecting on first use (ofi.c; tag: what) */
    LMPI_PKT_FT,           /* fault tolerance: a revoke, a step of an agreement (src/ft; tag: what) */
    LMPI_PKT_THROTTLE,     /* flow control over the network (pt2pt.c): tag 1 send rendezvous to me, 0 eager again */
} lmpi_pkt_type;

/* flags: SYNC: the sender waits for the match; PACKED: an announced message
 * is not contiguous at the sender (no pull: the receiver asks for a stream) */
enum { LMPI_PKT_SYNC = 1, LMPI_PKT_PACKED = 2, LMPI_PKT_CANCELLED = 4 };

/* Writes a packet's payload in place (packing a non-contiguous type). */
typedef void (*lmpi_pkt_fill)(void *dst, size_t len, void *arg);

typedef struct lmpi_pkt_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t tr;  /* the transport's own (ofi: an RTS whose rreq is a registration key) */
    int32_t rank; /* sender's rank in the communicator */
    int32_t tag;
    uint32_t ctx;
    uint64_t len;  /* message length in bytes */
    uint64_t sreq; /* sender's request */
    uint64_t rreq; /* receiver's request */
    uint64_t addr; /* RTS: sender buffer address; DATA: byte offset */
} lmpi_pkt_hdr;

_Static_assert(sizeof(lmpi_pkt_hdr) == 48, "packet header layout");

typedef struct lmpi_transport_ops {
    const char *name;
    /* Queue one packet for dest; LMPI_ERR_PENDING when no buffer is free
     * right now (the caller retries after progress). */
    lmpi_status (*send_pkt)(int dest, const lmpi_pkt_hdr *hdr, const void *payload, size_t len);
    /* The same with the payload written by fill(dst, len, arg). */
    lmpi_status (*send_pkt_fill)(int dest, const lmpi_pkt_hdr *hdr, size_t len, lmpi_pkt_fill fill, void *arg);
    /* Copy len bytes at remote_addr in process src into the local runs. */
    int (*pull_iov)(int src, uint64_t remote_addr, const struct iovec *local, int n);
    /* Largest payload of one packet. */
    size_t (*max_payload)(void);
    /* Copy len bytes at remote_addr in process src into local; 0 on success,
     * -1 when single copy is impossible (the caller falls back). */
    int (*pull)(int src, uint64_t remote_addr, void *local, size_t len);
    /* Deliver arrived packets to lmpi_pt2pt_deliver(); returns the count. */
    int (*poll)(void);
    /* Cooperative single copy of a large message (both sides copy chunks):
     * start returns a token (0: not possible), work copies until no chunk
     * is left (receiver: true when all are copied), release frees the token
     * once the sender let go of it (false: retry later). */
    uint64_t (*coop_start)(int src, uint64_t remote_addr, void *local, size_t len);
    bool (*coop_work)(uint64_t token, int peer, bool as_sender);
    bool (*coop_release)(uint64_t token);
} lmpi_transport_ops;

/* Arriving packets go to the handler the layer above registers (pt2pt's
 * lmpi_pt2pt_deliver), in per-sender order; the payload is only valid
 * during the call.  A pointer, so that no transport includes pt2pt. */
typedef void (*lmpi_pkt_handler)(int src, const lmpi_pkt_hdr *hdr, const void *payload, size_t len);
extern lmpi_pkt_handler lmpi_tr_deliver;
void lmpi_tr_set_handler(lmpi_pkt_handler h);

/* An eager packet may reach the receiver without its sreq (shm's compact
 * fast-box record: 8 bytes less per small message).  The receiver then
 * sees LMPI_TR_KEY_SEQ | the pair's sequence number as sreq, and the
 * transport leaves the same value here for the sender, who zeroes it
 * before the send: MPI_Cancel names the message by it.  Pointers never
 * have bit 63 set. */
#define LMPI_TR_KEY_SEQ (1ull << 63)
extern uint64_t lmpi_tr_eager_key;

extern const lmpi_transport_ops lmpi_shm_ops;

/* Two kinds of transport, one implementation of each per build, so the
 * calls below are direct: shm inside the node, a network transport (ofi)
 * to ranks on other nodes.  The choice is per destination: a world rank
 * outside this node's range or set goes over the network; bridge peers of
 * dynamic processes (indices from the world size on) stay on shm. */
lmpi_status lmpi_shm_send_pkt(int dest, const lmpi_pkt_hdr *hdr, const void *payload, size_t len);
lmpi_status lmpi_shm_send_pkt_fill(int dest, const lmpi_pkt_hdr *hdr, size_t len, lmpi_pkt_fill fill, void *arg);
int lmpi_shm_pull_iov(int src, uint64_t remote_addr, const struct iovec *local, int n);
size_t lmpi_shm_max_payload(void);
/* Messages up to this size are always sent eagerly, flow control or not:
 * a program that relies on the buffering of such messages (unsafe in MPI's
 * terms, but it runs on Open MPI, whose shared-memory eager limit this is)
 * must not block here. */
#define LMPI_EAGER_ALWAYS 4096
/* May BYTES go to dest eagerly (not while dest holds too much of ours
 * unexpected: shm.c, "Flow control")?  The bytes of this sender's
 * unexpected eager messages a receiver holds, grown (delta > 0) or given
 * back. */
bool lmpi_shm_eager_ok(int dest, size_t bytes);
void lmpi_shm_held(int src, int64_t delta);
int lmpi_shm_pull(int src, uint64_t remote_addr, void *local, size_t len);
int lmpi_shm_poll(void);
uint64_t lmpi_shm_coop_start(int src, uint64_t remote_addr, void *local, size_t len);
bool lmpi_shm_coop_work(uint64_t token, int peer, bool as_sender);
bool lmpi_shm_coop_release(uint64_t token);

/* Which world ranks the network transport reaches: off until
 * lmpi_tr_net_start.  This node's ranks are a range [lo, hi) when they are
 * consecutive (no memory per rank), else a bitmap. */
typedef struct {
    bool on;
    bool hosts; /* the other nodes are other hosts (not emulated nodes of this one) */
    int world;
    int lo, hi;
    const uint64_t *local_bits;
} lmpi_tr_net_state;
extern lmpi_tr_net_state lmpi_tr_net;

/* Start the network transport for the ranks whose node differs from mine
 * (node_of: every world rank's node).  The processes that open it now
 * (every node's first rank; every rank with LMPI_OFI_CONNECT=all) publish
 * their address through PMI; lmpi_tr_net_connect (after a PMI barrier)
 * turns the transport on, and with "all" inserts every address. */
lmpi_status lmpi_tr_net_start(const int *node_of, int n, int me, bool hosts);
lmpi_status lmpi_tr_net_connect(void);
/* The end of MPI_Init: a node's first rank that introduces the others
 * (first-use connections) starts a thread that polls the network while
 * this one is outside MPI (lmpi_rt.lock_calls from then on). */
void lmpi_tr_net_ready(void);
void lmpi_tr_net_stop(void);
/* An LMPI_PKT_NET packet (a connection asked for or answered), from either
 * transport: point-to-point hands them here. */
void lmpi_tr_net_packet(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len);
/* Bytes the network transport stores per world rank for addressing (0
 * when addresses were inserted in world order: the fabric address of rank
 * r is r). */
size_t lmpi_tr_net_entry_bytes(void);
/* The part of start that decides which ranks are this node's, and its
 * undoing (unit tests set lmpi_tr_net.on themselves). */
lmpi_status lmpi_tr_net_locals(const int *node_of, int n, int me);
void lmpi_tr_net_forget(void);
/* This process's network address in hex, for processes of other groups on
 * other hosts: opens the network transport if the job did not (its ranks
 * all on one host; then no world rank goes over it).  Unsupported without
 * libfabric at build time. */
lmpi_status lmpi_tr_net_foreign_address(int me, int n, char *hex, size_t len);
/* Start opening this process's endpoint in the background now, for a
 * process that will need it soon (a spawned one whose parents may be on
 * other hosts): libfabric's start-up then overlaps the rest of MPI_Init
 * and the other processes' own opening.  lmpi_tr_net_open_wait joins it
 * (before the environment changes: libfabric reads it while it opens); a
 * failure is its open's, reported again where the endpoint is needed. */
void lmpi_tr_net_open_early(int me, int n);
lmpi_status lmpi_tr_net_open_wait(void);
/* May a waiting rank sleep in the kernel (runtime/wait.h)?  Not while a
 * network endpoint is open that nothing watches for it. */
bool lmpi_tr_sleep_ok(void);
/* Just before sleeping: arm the network's wait (false: it has completions
 * to read first, do not sleep). */
bool lmpi_tr_sleep_prepare(void);
/* Must a sleep end by itself after a while (a send waits for a cell of a
 * foreign inbox, whose owner cannot wake us)? */
bool lmpi_tr_sleep_needs_retry(void);
/* The network transport's name and provider ("ofi tcp;ofi_rxm"), or NULL when off. */
const char *lmpi_tr_net_describe(void);

static inline bool lmpi_tr_remote(int peer)
{
    if (LMPI_LIKELY(!lmpi_tr_net.on) || peer >= lmpi_tr_net.world)
        return false;
    if (!lmpi_tr_net.local_bits)
        return peer < lmpi_tr_net.lo || peer >= lmpi_tr_net.hi;
    return !(lmpi_tr_net.local_bits[peer / 64] >> (peer % 64) & 1);
}

/* Does peer share this host's memory (/dev/shm, the segment, cross-memory
 * attach)?  Emulated nodes of one machine do. */
static inline bool lmpi_tr_same_host(int peer) { return !lmpi_tr_net.hosts || !lmpi_tr_remote(peer); }

#if LMPI_HAVE_OFI
lmpi_status lmpi_ofi_send_pkt(int dest, const lmpi_pkt_hdr *hdr, const void *payload, size_t len);
lmpi_status lmpi_ofi_send_pkt_fill(int dest, const lmpi_pkt_hdr *hdr, size_t len, lmpi_pkt_fill fill, void *arg);
size_t lmpi_ofi_max_payload(void);
size_t lmpi_ofi_eager_max(void);
int lmpi_ofi_pull(int src, const lmpi_pkt_hdr *rts, void *local, size_t len, uint64_t token);
int lmpi_ofi_poll(void);
void *lmpi_ofi_win_register(void *base, size_t len, uint32_t id);
void lmpi_ofi_win_deregister(void *mr);
int lmpi_ofi_win_rma(int dest, bool write, void *local, size_t len, uint32_t id, uint64_t off, void (*done)(void *),
                     void *arg);
/* Processes of other groups on other hosts (shm/bridge.h): this process's
 * address in hex (the endpoint opens if it was not), a peer's inserted and
 * removed, and a packet to one (group: our group's key). */
lmpi_status lmpi_ofi_foreign_address(int me, int n, char *hex, size_t len);
int64_t lmpi_ofi_foreign_insert(const void *addr, size_t len);
void lmpi_ofi_foreign_remove(int64_t fa);
/* Under --with-ft: did a transfer to this process of another group fail
 * (it was dropped, the process counts as failed: src/ft)? */
bool lmpi_ofi_foreign_failed(int64_t fa);
lmpi_status lmpi_ofi_send_foreign(int64_t fa, uint32_t group, const lmpi_pkt_hdr *hdr, const void *payload,
                                  size_t len, lmpi_pkt_fill fill, void *arg);
#define LMPI_NET_CALL(peer, net_call, shm_call) (lmpi_tr_remote(peer) ? (net_call) : (shm_call))
#else
#define LMPI_NET_CALL(peer, net_call, shm_call) ((void)(peer), (shm_call))
#endif

/* Windows whose members span hosts, by the network's own RMA where the
 * provider writes and reads remote memory by offset under keys we choose
 * (nothing exchanged per member).  Register LEN bytes at BASE as window ID
 * (the same id at every member): a handle, or NULL when this process cannot
 * (no such provider; the endpoint opens here if it was not).  A write or
 * read of LEN bytes at offset OFF of rank DEST's registration: 1 when
 * started (DONE(ARG) runs in a later poll once the data is at the target,
 * or here), 0 when it cannot go now (no connection to DEST yet: send the
 * operation in messages, which connect it). */
static inline void *lmpi_tr_win_register(void *base, size_t len, uint32_t id)
{
#if LMPI_HAVE_OFI
    return lmpi_tr_net.on ? lmpi_ofi_win_register(base, len, id) : NULL;
#else
    (void)base, (void)len, (void)id;
    return NULL;
#endif
}
static inline void lmpi_tr_win_deregister(void *mr)
{
#if LMPI_HAVE_OFI
    lmpi_ofi_win_deregister(mr);
#else
    (void)mr;
#endif
}
static inline int lmpi_tr_win_rma(int dest, bool write, void *local, size_t len, uint32_t id, uint64_t off,
                                  void (*done)(void *), void *arg)
{
    return LMPI_NET_CALL(dest, lmpi_ofi_win_rma(dest, write, local, len, id, off, done, arg),
                         ((void)write, (void)local, (void)len, (void)id, (void)off, (void)done, (void)arg, 0));
}

static inline lmpi_status lmpi_tr_send_pkt(int dest, const lmpi_pkt_hdr *h, const void *p, size_t len)
{
    return LMPI_NET_CALL(dest, lmpi_ofi_send_pkt(dest, h, p, len), lmpi_shm_send_pkt(dest, h, p, len));
}
static inline lmpi_status lmpi_tr_send_pkt_fill(int dest, const lmpi_pkt_hdr *h, size_t len, lmpi_pkt_fill f, void *a)
{
    return LMPI_NET_CALL(dest, lmpi_ofi_send_pkt_fill(dest, h, len, f, a), lmpi_shm_send_pkt_fill(dest, h, len, f, a));
}
/* Scattered and cooperative copies are shared memory's; over the network
 * the receiver asks for a stream (or pulls contiguous data, lmpi_tr_pull). */
static inline int lmpi_tr_pull_iov(int src, uint64_t a, const struct iovec *l, int n)
{
    return lmpi_tr_remote(src) ? -1 : lmpi_shm_pull_iov(src, a, l, n);
}
/* Largest payload of one packet to (or from) peer; whether a message of
 * BYTES goes to it eagerly. */
static inline size_t lmpi_tr_max_payload(int peer)
{
    return LMPI_NET_CALL(peer, lmpi_ofi_max_payload(), lmpi_shm_max_payload());
}
static inline bool lmpi_tr_eager_ok(int peer, size_t bytes)
{
    return LMPI_NET_CALL(peer, bytes <= lmpi_ofi_eager_max(), lmpi_shm_eager_ok(peer, bytes));
}

/* Copy the n bytes a rendezvous announcement (rts) offers into l: 0 when
 * done, 1 when started (a LMPI_PKT_PULLED packet with rreq = token arrives
 * when it is done), -1 when impossible (the receiver asks for a stream). */
static inline int lmpi_tr_pull(int src, const lmpi_pkt_hdr *rts, void *l, size_t n, uint64_t token)
{
    (void)token;
    return LMPI_NET_CALL(src, lmpi_ofi_pull(src, rts, l, n, token), lmpi_shm_pull(src, rts->addr, l, n));
}
/* Both transports every time: a busy network must not starve shm, nor the reverse. */
static inline int lmpi_tr_poll(void)
{
#if LMPI_HAVE_OFI
    if (LMPI_UNLIKELY(lmpi_tr_net.on))
        return lmpi_shm_poll() + lmpi_ofi_poll();
#endif
    return lmpi_shm_poll();
}
static inline uint64_t lmpi_tr_coop_start(int src, uint64_t a, void *l, size_t n)
{
    return lmpi_tr_remote(src) ? 0 : lmpi_shm_coop_start(src, a, l, n);
}
static inline bool lmpi_tr_coop_work(uint64_t t, int peer, bool s) { return lmpi_shm_coop_work(t, peer, s); }
static inline bool lmpi_tr_coop_release(uint64_t t) { return lmpi_shm_coop_release(t); }

#endif
