/* The transport interface: moves packets (a pt2pt header plus a bounded
 * payload) between processes and copies large buffers from a peer in one go.
 * Matching and protocols stay above, in src/pt2pt.
 *
 * A transport is a const ops table.  With a single transport built (the
 * default until the ofi transport lands), LMPI_TRANSPORT_SHM_ONLY turns the
 * calls below into direct, inlinable calls of the shm functions. */
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
    LMPI_PKT_CANCEL,    /* sender asks to take back an unmatched message (rank, tag, ctx, sreq) */
    LMPI_PKT_CANCEL_REPLY, /* flags LMPI_PKT_CANCELLED: it was taken back */
    LMPI_PKT_CTRL,         /* between process groups, for dynamic process management (bridge.h) */
} lmpi_pkt_type;

/* flags: SYNC: the sender waits for the match; PACKED: an announced message
 * is not contiguous at the sender (no pull: the receiver asks for a stream) */
enum { LMPI_PKT_SYNC = 1, LMPI_PKT_PACKED = 2, LMPI_PKT_CANCELLED = 4 };

/* Writes a packet's payload in place (packing a non-contiguous type). */
typedef void (*lmpi_pkt_fill)(void *dst, size_t len, void *arg);

typedef struct lmpi_pkt_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t reserved;
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

/* Called by transports for every arriving packet, in per-sender order.  The
 * payload is only valid during the call. */
void lmpi_pt2pt_deliver(int src, const lmpi_pkt_hdr *hdr, const void *payload, size_t len);

extern const lmpi_transport_ops lmpi_shm_ops;

#ifndef LMPI_TRANSPORT_SHM_ONLY
#define LMPI_TRANSPORT_SHM_ONLY 1
#endif

#if LMPI_TRANSPORT_SHM_ONLY
lmpi_status lmpi_shm_send_pkt(int dest, const lmpi_pkt_hdr *hdr, const void *payload, size_t len);
lmpi_status lmpi_shm_send_pkt_fill(int dest, const lmpi_pkt_hdr *hdr, size_t len, lmpi_pkt_fill fill, void *arg);
int lmpi_shm_pull_iov(int src, uint64_t remote_addr, const struct iovec *local, int n);
size_t lmpi_shm_max_payload(void);
int lmpi_shm_pull(int src, uint64_t remote_addr, void *local, size_t len);
int lmpi_shm_poll(void);
uint64_t lmpi_shm_coop_start(int src, uint64_t remote_addr, void *local, size_t len);
bool lmpi_shm_coop_work(uint64_t token, int peer, bool as_sender);
bool lmpi_shm_coop_release(uint64_t token);
static inline lmpi_status lmpi_tr_send_pkt(int dest, const lmpi_pkt_hdr *h, const void *p, size_t len)
{
    return lmpi_shm_send_pkt(dest, h, p, len);
}
static inline lmpi_status lmpi_tr_send_pkt_fill(int dest, const lmpi_pkt_hdr *h, size_t len, lmpi_pkt_fill f, void *a)
{
    return lmpi_shm_send_pkt_fill(dest, h, len, f, a);
}
static inline int lmpi_tr_pull_iov(int src, uint64_t a, const struct iovec *l, int n)
{
    return lmpi_shm_pull_iov(src, a, l, n);
}
static inline size_t lmpi_tr_max_payload(void) { return lmpi_shm_max_payload(); }
static inline int lmpi_tr_pull(int src, uint64_t a, void *l, size_t n) { return lmpi_shm_pull(src, a, l, n); }
static inline int lmpi_tr_poll(void) { return lmpi_shm_poll(); }
static inline uint64_t lmpi_tr_coop_start(int src, uint64_t a, void *l, size_t n)
{
    return lmpi_shm_coop_start(src, a, l, n);
}
static inline bool lmpi_tr_coop_work(uint64_t t, int peer, bool s) { return lmpi_shm_coop_work(t, peer, s); }
static inline bool lmpi_tr_coop_release(uint64_t t) { return lmpi_shm_coop_release(t); }
#else
extern const lmpi_transport_ops *lmpi_transport;
static inline lmpi_status lmpi_tr_send_pkt(int dest, const lmpi_pkt_hdr *h, const void *p, size_t len)
{
    return lmpi_transport->send_pkt(dest, h, p, len);
}
static inline lmpi_status lmpi_tr_send_pkt_fill(int dest, const lmpi_pkt_hdr *h, size_t len, lmpi_pkt_fill f, void *a)
{
    return lmpi_transport->send_pkt_fill(dest, h, len, f, a);
}
static inline int lmpi_tr_pull_iov(int src, uint64_t a, const struct iovec *l, int n)
{
    return lmpi_transport->pull_iov(src, a, l, n);
}
static inline size_t lmpi_tr_max_payload(void) { return lmpi_transport->max_payload(); }
static inline int lmpi_tr_pull(int src, uint64_t a, void *l, size_t n) { return lmpi_transport->pull(src, a, l, n); }
static inline int lmpi_tr_poll(void) { return lmpi_transport->poll(); }
static inline uint64_t lmpi_tr_coop_start(int src, uint64_t a, void *l, size_t n)
{
    return lmpi_transport->coop_start ? lmpi_transport->coop_start(src, a, l, n) : 0;
}
static inline bool lmpi_tr_coop_work(uint64_t t, int peer, bool s) { return lmpi_transport->coop_work(t, peer, s); }
static inline bool lmpi_tr_coop_release(uint64_t t) { return lmpi_transport->coop_release(t); }
#endif

#endif
