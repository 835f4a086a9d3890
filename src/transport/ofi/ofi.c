/* The network transport over libfabric: reliable-datagram (RDM) endpoints
 * carrying our packets (a pt2pt header plus a bounded payload) as untagged
 * messages, so matching stays ours (src/match).
 *
 * When processes open it (LMPI_OFI_CONNECT): opening libfabric costs
 * every process its providers' start-up (Debian's: 0.2 s asleep while psm's
 * and psm2's libraries calibrate their clocks, 0.1 s of processor time while
 * verbs reads /proc/kallsyms) and the provider's buffers (rxm:
 * 25-95 MB), which is most of a multi-host job's start when every rank pays
 * it (256 ranks over 4 hosts: 36 s against 0.43 s on one host).  So by
 * default only each node's first rank opens at start-up and publishes its
 * address; any other rank opens at its first message to or from another
 * node.  Connecting on first use (src/transport/README.md):
 *   - A, sending first to B on another node, opens its endpoint, reads the
 *     address of B's node's first rank F from PMI (published at start-up),
 *     inserts it and sends F a HELLO (A's address: F can answer).
 *   - If B is not F, A sends F an ASK for B (with A's address), and holds
 *     its packets for B here; F hands the ASK to B through shared memory.
 *   - B opens its endpoint if it had not, inserts A and sends A a HELLO with
 *     its address; A inserts B and sends what it held, in order.
 * So a rank has inserted every rank that sends to it before their first
 * packet arrives (a HELLO precedes it, or came with the ASK), and replies
 * (CTS, FIN, RMA answers, reads) always find the address.  Addresses are
 * inserted as they are learnt, so fi_of maps a world rank to its fabric
 * address (4 bytes per rank, pages touched only for the peers reached).
 * With LMPI_OFI_CONNECT=all every process opens at start-up and, after the
 * PMI barrier, inserts every address in world order into an FI_AV_TABLE
 * address vector, where an address is its insertion index: the fi_addr of
 * world rank r is r, and nothing is stored per peer above libfabric (the AV
 * paper's 0 bytes per entry).
 *
 * Buffers: RX_BUFS receive buffers stay posted; a packet is copied into one
 * of TX_BUFS send buffers (the header, then the payload, packed in place by
 * a fill callback for non-contiguous types).  A send finds no free buffer, or
 * the provider answers -FI_EAGAIN: LMPI_ERR_PENDING, and pt2pt retries after
 * progress (which reads the completion queue and frees buffers).
 *
 * Large messages: where the provider reads remote memory (FI_RMA), the
 * sender registers its buffer when it announces the message (the RTS then
 * carries the key in rreq, marked in the header's tr field) and the
 * receiver reads it in one fi_read, straight into the user's buffer; the
 * completion becomes a local PULLED packet for pt2pt, and the FIN that
 * pt2pt sends back releases the registration.  Without FI_RMA the receiver
 * asks for a stream and the sender sends packets of up to PAYLOAD bytes. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "av/av.h"
#include "ft/ft.h"
#include "pmi/pmi.h"
#include "runtime/config.h"
#include "runtime/request.h"
#include "transport/shm/bridge.h"
#include "transport/transport.h"
#include "transport/ofi/watch.h"

/* libfabric is opened when a job first needs the network, not linked: its
 * providers pull in verbs, psm, efa ... at load time, which costs every
 * process start, and psm's library installs a SIGSEGV handler that turns a
 * crash into "exit status 1".  Most of the API is inline calls through the
 * objects' ops; these five are the library's own symbols. */
static struct {
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *, struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
} fab;
#define fi_getinfo fab.getinfo
#define fi_freeinfo fab.freeinfo
#define fi_dupinfo fab.dupinfo
#define fi_fabric fab.fabric
#define fi_strerror fab.strerror

/* Largest payload of one packet: a packet must fit rxm's eager buffers
 * (FI_OFI_RXM_BUFFER_SIZE), or rxm runs its own rendezvous under ours (16
 * KiB ping-pong 31 us instead of 11).  Its default, 16 KiB, would leave a
 * 16 KiB message, the peers' last eager size, to our rendezvous (45 us
 * against MPICH's 10), so we ask for 16 KiB plus our header
 * (load_libfabric).  Debian's rxm (1.17) keeps ~4200 buffers per process:
 * 32 KiB would cost 145 MB, 16 KiB 95 MB; 8 KiB (54 MB) made 12 KiB
 * messages 34 us instead of 15 (MPICH 13).  A newer libfabric
 * (LMPI_OFI_LIB) holds 25 MB. */
#define PAYLOAD (16 * 1024)
#define WIRE_HDR_BYTES 56 /* wire_prefix + lmpi_pkt_hdr (checked below) */
#define RX_BUFS 32
#define TX_BUFS 32
#define ADDR_MAX 128 /* bytes of an endpoint name (a sockaddr for tcp) */

/* What precedes our packet header on the wire: untagged messages do not say
 * who sent them, and reading the source address back (FI_SOURCE) would
 * cost a lookup per packet.  A process of another group (dynamic processes
 * between hosts) gives its group's key (shm/bridge.h), never 0. */
typedef struct {
    int32_t src;     /* world rank in the sender's group */
    uint32_t group;  /* 0: the receiver's own world */
} wire_prefix;

enum { OP_SEND, OP_RECV, OP_READ, OP_WIN };

/* What a completion's op_context points at: a packet buffer or a read. */
typedef struct {
    struct fi_context ctx;
    int op;
    int peer;   /* a send's destination, a read's source */
    int64_t fa; /* peer -1 (a process of another group): its fabric address */
} op_head;

typedef struct buffer {
    op_head head;
    struct buffer *next; /* free send buffers */
    char data[];         /* wire_prefix, lmpi_pkt_hdr, payload */
} buffer;

/* An fi_read in flight, and a registration an RTS offered. */
typedef struct {
    op_head head;
    uint64_t token;
    struct fid_mr *local_mr;
} read_op;

/* A window's write or read in flight (lmpi_ofi_win_rma); kept for the
 * next one once complete (no allocation per operation). */
typedef struct win_op {
    op_head head;
    void (*done)(void *);
    void *arg;
    struct win_op *next; /* on the spare list */
} win_op;

typedef struct offered {
    struct offered *next;
    struct fid_mr *mr;
    uint64_t sreq;
    int dest;
} offered;

/* A packet held until its destination's address is known (or a busy
 * shared-memory queue frees a cell for a passed-on ASK), and the packets
 * held for one peer, in order. */
typedef struct held {
    struct held *next;
    lmpi_pkt_hdr hdr;
    size_t len;
    char data[];
} held;

typedef struct waiting {
    struct waiting *next;
    int peer;
    held *head, *tail;
} waiting;

/* A packet for a process of another group that the provider could not take
 * yet (still connecting, or no send buffer free): sent from lmpi_ofi_poll,
 * in order. */
typedef struct foreign_held {
    struct foreign_held *next;
    int64_t fa;
    uint32_t group;
    lmpi_pkt_hdr hdr;
    size_t len;
    char data[];
} foreign_held;

/* LMPI_PKT_NET packets (tag) */
enum { NET_HELLO = 1, NET_ASK, NET_WARM };
#define ASKED (-1) /* fi_of: an ASK for this rank is on its way */

#define TR_KEYED 1 /* lmpi_pkt_hdr.tr: rreq is the key of the sender's registered buffer */

#define WIRE_HDR (sizeof(wire_prefix) + sizeof(lmpi_pkt_hdr))
_Static_assert(WIRE_HDR == WIRE_HDR_BYTES, "wire header size");
#define BUF_DATA (WIRE_HDR + PAYLOAD)
#define BUF_SIZE ((sizeof(buffer) + BUF_DATA + 63) / 64 * 64)

static struct {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    struct fid_ep *out; /* sends to processes of other groups (open_out) */
    struct fid_mr *mr;
    void *desc;
    char *mem;
    buffer *free_tx;
    int tx_out; /* sends not completed yet */
    bool rma;   /* the provider reads remote memory */
    bool win;   /* ... and writes it, addressed by offset under a key we choose (windows) */
    bool virt;  /* ... addressed by virtual address (else by offset from the start) */
    uint64_t next_key;
    offered *offers;
    win_op *spare_win_ops;
    int me, n;
    size_t eager_max;
    size_t inject_max; /* packets the provider copies when handed over: no send completion */
    char describe[128];
    /* connecting on first use; fi_of NULL: every address was inserted in world order */
    int32_t *fi_of;   /* world rank -> its fabric address + 1; 0: not known, ASKED */
    int32_t *leaders; /* each node's first rank */
    int connected;    /* addresses inserted */
    waiting *waiting;
    struct foreign_held *foreign, *foreign_tail; /* packets for other groups' processes, in order */
    int64_t *doomed; /* their addresses to remove once nothing is on its way */
    int ndoomed, cap_doomed;
    bool opens;                   /* at start-up (each node's first rank, or all) */
    unsigned char *warmed;        /* warm_up: 1 once rank r's packet came (NULL: no warm-up) */
    unsigned char name[ADDR_MAX]; /* this endpoint's address */
    size_t name_len;
} ofi;

/* The job cannot go on without the network: stop it, saying why. */
static _Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    lmpi_abort_job(MPI_ERR_OTHER, why);
}

static buffer *buf_at(int i) { return (buffer *)(ofi.mem + (size_t)i * BUF_SIZE); }

/* rxm's eager buffers hold a 16 KiB payload plus its header; ours comes on
 * top, so a 16 KiB message would go through rxm's own rendezvous: its
 * buffers grow by our header (a user's setting wins).  Set at start-up by
 * the thread that calls MPI, before any thread of ours loads libfabric
 * (setenv races getenv). */
static void rxm_defaults(void)
{
    char rxm_buf[32];
    snprintf(rxm_buf, sizeof(rxm_buf), "%d", (int)(PAYLOAD + WIRE_HDR_BYTES));
    setenv("FI_OFI_RXM_BUFFER_SIZE", rxm_buf, 0);
    setenv("FI_OFI_RXM_EAGER_LIMIT", rxm_buf, 0);
}

/* Open libfabric, keeping the signal handlers the process had: a provider
 * library's own must not replace them.  Debian's psm installs a backtrace
 * printer for SIGSEGV, SIGBUS, SIGILL, SIGABRT and also SIGINT and SIGTERM,
 * so a job stopped by its launcher (SIGTERM) ran it, calling malloc inside
 * whatever malloc the signal interrupted ("malloc(): unaligned fastbin
 * chunk detected" from ranks stopped while opening). */
static lmpi_status load_libfabric(void)
{
    if (fab.getinfo)
        return LMPI_OK;
    struct sigaction before[32];
    for (int sig = 1; sig < 32; sig++)
        sigaction(sig, NULL, &before[sig]);
    const char *name = lmpi_config.ofi_lib && *lmpi_config.ofi_lib ? lmpi_config.ofi_lib : "libfabric.so.1";
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    for (int sig = 1; sig < 32; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &before[sig], NULL);
    if (!lib) {
        lmpi_err_detail("ranks are on different nodes and the network transport needs libfabric: %s "
                        "(install libfabric1, or name one in LMPI_OFI_LIB)",
                        dlerror());
        return LMPI_ERR_OTHER;
    }
    *(void **)&fab.getinfo = dlsym(lib, "fi_getinfo");
    *(void **)&fab.freeinfo = dlsym(lib, "fi_freeinfo");
    *(void **)&fab.dupinfo = dlsym(lib, "fi_dupinfo");
    *(void **)&fab.fabric = dlsym(lib, "fi_fabric");
    *(void **)&fab.strerror = dlsym(lib, "fi_strerror");
    if (!fab.getinfo || !fab.freeinfo || !fab.dupinfo || !fab.fabric || !fab.strerror) {
        lmpi_err_detail("LMPI_OFI_LIB=%s lacks the functions the network transport calls", name);
        fab.getinfo = NULL;
        return LMPI_ERR_OTHER;
    }
    return LMPI_OK;
}

static lmpi_status fail(const char *what, int rc)
{
    lmpi_err_detail("libfabric (provider %s): %s: %s", ofi.info ? ofi.info->fabric_attr->prov_name : "none", what,
                    fi_strerror(-rc));
    return LMPI_ERR_OTHER;
}

static lmpi_status post_recv(buffer *b)
{
    ssize_t rc;
    while ((rc = fi_recv(ofi.ep, b->data, BUF_DATA, ofi.desc, FI_ADDR_UNSPEC, &b->head.ctx)) == -FI_EAGAIN)
        lmpi_ofi_poll();
    return rc == 0 ? LMPI_OK : fail("posting a receive buffer", (int)rc);
}

static int try_getinfo(uint64_t caps, struct fi_info **list)
{
    struct fi_info *hints = fi_dupinfo(NULL); /* fi_allocinfo */
    if (!hints)
        return -FI_ENOMEM;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = caps;
    hints->mode = FI_CONTEXT;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    int rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, list);
    fi_freeinfo(hints);
    return rc;
}

/* The provider: FI_PROVIDER's (libfabric filters by it), else the first
 * one libfabric ranks best that reaches other hosts (its own "shm"
 * provider does not), and on a non-loopback interface where there is one. */
static lmpi_status choose_provider(void)
{
    struct fi_info *list = NULL;
    int rc = -FI_ENODATA;
    /* reading remote memory where offered (rendezvous without copies), else messages only */
    static const uint64_t wanted_caps[] = {FI_MSG | FI_RMA | FI_READ | FI_REMOTE_READ | FI_WRITE | FI_REMOTE_WRITE,
                                            FI_MSG | FI_RMA | FI_READ | FI_REMOTE_READ, FI_MSG};
    for (int i = 0; i < 3 && (rc != 0 || !list); i++) {
        rc = try_getinfo(wanted_caps[i], &list);
        ofi.rma = i < 2 && rc == 0 && list;
        ofi.win = i == 0 && rc == 0 && list;
    }
    const char *wanted = getenv("FI_PROVIDER");
    if (rc != 0 || !list) {
        if (wanted && *wanted)
            lmpi_err_detail("FI_PROVIDER=%s: libfabric has no such provider that runs here with reliable "
                            "datagram endpoints (fi_info -l lists the providers)",
                            wanted);
        else
            lmpi_err_detail("libfabric finds no provider with reliable datagram endpoints: %s", fi_strerror(-rc));
        return LMPI_ERR_OTHER;
    }
    struct fi_info *pick = NULL;
    for (int pass = 0; pass < 3 && !pick; pass++)
        for (struct fi_info *i = list; i && !pick; i = i->next) {
            bool intra_only = strcmp(i->fabric_attr->prov_name, "shm") == 0;
            bool loopback = i->domain_attr->name && strcmp(i->domain_attr->name, "lo") == 0;
            if ((pass == 0 && !intra_only && !loopback) || (pass == 1 && !intra_only) || pass == 2)
                pick = i;
        }
    /* Debian's libfabric (1.17) ranks rxm over tcp's connections before
     * "net", its own reliable-datagram provider over TCP (renamed tcp in
     * 1.18, where it comes first).  Between 2 emulated hosts net holds 8.7
     * MB per process where rxm holds 95 (rxm's ~4200 eager buffers), and
     * spends three system calls per message where tcp under rxm spends
     * five (two signal its own wait set): 0-byte ping-pong 7.0 against
     * 8.2-8.5 us, 16 KiB 11.1 against 13.0-13.6 (docs/performance.md).
     * FI_PROVIDER=tcp keeps rxm. */
    if (!(wanted && *wanted) && strcmp(pick->fabric_attr->prov_name, "tcp;ofi_rxm") == 0)
        for (struct fi_info *i = list; i; i = i->next)
            if (strcmp(i->fabric_attr->prov_name, "net") == 0 && i->domain_attr->name && pick->domain_attr->name &&
                strcmp(i->domain_attr->name, pick->domain_attr->name) == 0) {
                pick = i;
                break;
            }
    ofi.info = fi_dupinfo(pick);
    fi_freeinfo(list);
    if (!ofi.info)
        return LMPI_ERR_NO_MEM;
    ofi.virt = (ofi.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    ofi.inject_max = ofi.info->tx_attr->inject_size;
    /* windows need nothing exchanged per member: the target's offset and a
     * key every member registers alike (no provider keys, no addresses) */
    ofi.win = ofi.win && !(ofi.info->domain_attr->mr_mode & (FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_LOCAL));
    snprintf(ofi.describe, sizeof(ofi.describe), "ofi %s on %s%s%s", ofi.info->fabric_attr->prov_name,
             ofi.info->domain_attr->name ? ofi.info->domain_attr->name : "?", ofi.rma ? ", rendezvous by RMA read" : "",
             ofi.fi_of ? ", connected on first use" : "");
    return LMPI_OK;
}

/* An endpoint on the address vector and the completion queue. */
static lmpi_status new_endpoint(struct fid_ep **ep)
{
    int rc;
    if ((rc = fi_endpoint(ofi.domain, ofi.info, ep, NULL)) != 0)
        return fail("fi_endpoint", rc);
    if ((rc = fi_ep_bind(*ep, &ofi.av->fid, 0)) != 0 || (rc = fi_ep_bind(*ep, &ofi.cq->fid, FI_TRANSMIT | FI_RECV)) != 0)
        return fail("fi_ep_bind", rc);
    if ((rc = fi_enable(*ep)) != 0)
        return fail("fi_enable", rc);
    return LMPI_OK;
}

static lmpi_status open_endpoint(void)
{
    int rc;
    if ((rc = fi_fabric(ofi.info->fabric_attr, &ofi.fabric, NULL)) != 0)
        return fail("fi_fabric", rc);
    if ((rc = fi_domain(ofi.fabric, ofi.info, &ofi.domain, NULL)) != 0)
        return fail("fi_domain", rc);
    /* A wait descriptor lets a waiting rank sleep with the watcher looking
     * at it (watch.c); a provider without one keeps the rank awake. */
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_FD, .size = 4 * (RX_BUFS + TX_BUFS)};
    if (fi_cq_open(ofi.domain, &cqa, &ofi.cq, NULL) != 0) {
        cqa.wait_obj = FI_WAIT_NONE;
        if ((rc = fi_cq_open(ofi.domain, &cqa, &ofi.cq, NULL)) != 0)
            return fail("fi_cq_open", rc);
    }
    int wait_fd = -1;
    if (cqa.wait_obj == FI_WAIT_FD && fi_control(&ofi.cq->fid, FI_GETWAIT, &wait_fd) == 0)
        lmpi_ofi_watch_start(wait_fd);
    struct fi_av_attr ava = {.type = FI_AV_TABLE, .count = (size_t)ofi.n};
    if ((rc = fi_av_open(ofi.domain, &ava, &ofi.av, NULL)) != 0)
        return fail("fi_av_open", rc);
    LMPI_TRY(new_endpoint(&ofi.ep));
    size_t bytes = (size_t)(RX_BUFS + TX_BUFS) * BUF_SIZE;
    ofi.mem = lmpi_calloc(1, bytes, LMPI_MEM_OFI);
    if (!ofi.mem)
        return LMPI_ERR_NO_MEM;
    if (ofi.info->domain_attr->mr_mode & FI_MR_LOCAL) {
        if ((rc = fi_mr_reg(ofi.domain, ofi.mem, bytes, FI_SEND | FI_RECV, 0, 0, 0, &ofi.mr, NULL)) != 0)
            return fail("registering the packet buffers", rc);
        ofi.desc = fi_mr_desc(ofi.mr);
    }
    for (int i = 0; i < TX_BUFS; i++) {
        buffer *b = buf_at(RX_BUFS + i);
        b->next = ofi.free_tx;
        ofi.free_tx = b;
    }
    for (int i = 0; i < RX_BUFS; i++) {
        buf_at(i)->head.op = OP_RECV;
        LMPI_TRY(post_recv(buf_at(i)));
    }
    return LMPI_OK;
}

/* Packets for processes of other groups leave by an endpoint of their own,
 * opened at the first, and arrive at the main one (the address published
 * for them).  So no two endpoints ever connect to each other at once:
 * when both sides of a new intercommunicator sent their first packets at
 * the same moment, endpoint to endpoint, Debian's libfabric 1.17 "net"
 * provider sometimes handled the peer's connection request before its own
 * connection's CONNECTED event, replaced that connection (its log: "old
 * connection exists, replacing") and failed what was queued on it with
 * EPIPE (t_dpm's iccreate between 2 emulated hosts: 1 run in 5 stopped),
 * and sending those packets again lost others on the connections left
 * half made.  Within a world, first contact is one-sided by construction
 * (a HELLO carries the address the answer goes to). */
static lmpi_status open_out(void) { return new_endpoint(&ofi.out); }

#define ADDR_KEY "lmpi-ofi-" /* + the rank: its address, in hex */

static void key_of(int rank, char *key, size_t len) { snprintf(key, len, ADDR_KEY "%d", rank); }

static lmpi_status open_here(void)
{
    LMPI_TRY(load_libfabric());
    LMPI_TRY(choose_provider());
    LMPI_TRY(open_endpoint());
    ofi.name_len = sizeof(ofi.name);
    int rc = fi_getname(&ofi.ep->fid, ofi.name, &ofi.name_len);
    if (rc != 0)
        return fail("fi_getname", rc);
    return LMPI_OK;
}

/* Start-up opens in the background: Debian's libfabric takes 0.3 s to
 * load and probe (psm's and psm2's libraries calibrate their clocks
 * asleep, verbs reads /proc/kallsyms twice), time in which the other ranks
 * are still starting and making shared memory; the first rank publishes
 * its address once both are done (lmpi_ofi_connect). */
static struct {
    pthread_t thread;
    bool running;
    lmpi_status st;
    char why[300];
} opener;

static void *open_in_background(void *unused)
{
    (void)unused;
    opener.st = open_here();
    if (opener.st != LMPI_OK)
        lmpi_err_detail_get(opener.why, sizeof(opener.why));
    return NULL;
}

static void open_start(void)
{
    if (!opener.running && !ofi.ep)
        opener.running = pthread_create(&opener.thread, NULL, open_in_background, NULL) == 0;
}

static lmpi_status open_joined(void)
{
    if (!opener.running)
        return LMPI_OK;
    pthread_join(opener.thread, NULL);
    opener.running = false;
    if (opener.st != LMPI_OK)
        lmpi_err_detail("%s", opener.why);
    return opener.st;
}

/* This process's endpoint, opened once (at start-up, or at its first
 * message to or from another node). */
static lmpi_status open_now(void)
{
    LMPI_TRY(open_joined());
    if (ofi.ep)
        return LMPI_OK;
    return open_here();
}

/* Opening on first use happens inside a send or a poll: a failure there
 * (the provider went away, memory) stops the job, saying why. */
static void open_or_die(void)
{
    if (open_now() == LMPI_OK)
        return;
    char why[300];
    lmpi_err_detail_get(why, sizeof(why));
    die("rank %d cannot open the network transport: %s", ofi.me, why);
}

static void setup(int me, int n)
{
    ofi.me = me;
    ofi.n = n;
    rxm_defaults();
    ofi.eager_max = (size_t)lmpi_config.ofi_eager_max < PAYLOAD ? (size_t)lmpi_config.ofi_eager_max : PAYLOAD;
}

lmpi_status lmpi_ofi_open(int me, int n, const int *node_of)
{
    setup(me, n);
    const char *when = lmpi_config.ofi_connect ? lmpi_config.ofi_connect : "first-use";
    /* Surviving failures (mpiexec --with-ft ulfm, src/ft): first-use
     * connections go through a node's first rank, and after its failure
     * nobody could reach the node's other ranks any more.  Unless the user
     * chose, every rank connects at start-up. */
    const char *ft = getenv("LMPI_FT");
    bool warm = ft && ft[0] == '1' && !getenv("LMPI_OFI_CONNECT");
    if (warm)
        when = "all";
    /* (before anything is opened: a faster rank's packet may come at once) */
    if (warm && !(ofi.warmed = lmpi_calloc((size_t)n, 1, LMPI_MEM_OFI)))
        return LMPI_ERR_NO_MEM;
    bool first_use = strcmp(when, "first-use") == 0;
    if (!first_use && strcmp(when, "all") != 0) {
        lmpi_err_detail("LMPI_OFI_CONNECT=%s: expected first-use or all", when);
        return LMPI_ERR_ARG;
    }
    bool opens = true;
    if (first_use) {
        int nnodes = 0;
        for (int r = 0; r < n; r++)
            nnodes = node_of[r] + 1 > nnodes ? node_of[r] + 1 : nnodes;
        ofi.leaders = lmpi_malloc((size_t)nnodes * sizeof(int32_t), LMPI_MEM_OFI);
        /* zero pages until touched: only the peers reached cost memory */
        ofi.fi_of = lmpi_calloc((size_t)n, sizeof(int32_t), LMPI_MEM_AV);
        if (!ofi.leaders || !ofi.fi_of)
            return LMPI_ERR_NO_MEM;
        for (int k = 0; k < nnodes; k++)
            ofi.leaders[k] = -1;
        for (int r = n - 1; r >= 0; r--)
            ofi.leaders[node_of[r]] = r;
        opens = ofi.leaders[node_of[me]] == me;
        snprintf(ofi.describe, sizeof(ofi.describe), "ofi, opened at this rank's first message to another node");
    }
    ofi.opens = opens;
    if (opens)
        open_start();
    return LMPI_OK;
}

/* The address this process opened at start-up, for the others to read
 * after the next PMI barrier. */
static lmpi_status publish_address(void)
{
    LMPI_TRY(open_now());
    char hex[2 * ADDR_MAX + 1], key[32];
    for (size_t i = 0; i < ofi.name_len; i++)
        snprintf(hex + 2 * i, 3, "%02x", ofi.name[i]);
    key_of(ofi.me, key, sizeof(key));
    if (lmpi_pmi_put(key, hex) != 0) {
        lmpi_err_detail("cannot publish this process's network address through the process manager");
        return LMPI_ERR_OTHER;
    }
    return LMPI_OK;
}

/* Rank r's address from its hex text into out (every address has the
 * same length, *len, set by the first). */
static lmpi_status decode_address(int r, const char *hex, size_t hexlen, unsigned char *out, size_t *len)
{
    size_t l = hexlen / 2;
    if (l == 0 || l > ADDR_MAX || hexlen % 2 || (*len && l != *len)) {
        lmpi_err_detail("the process manager has no network address for rank %d", r);
        return LMPI_ERR_OTHER;
    }
    *len = l;
    for (size_t i = 0; i < l; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
            lmpi_err_detail("rank %d published a malformed network address", r);
            return LMPI_ERR_OTHER;
        }
        out[i] = (unsigned char)v;
    }
    return LMPI_OK;
}

/* After shared memory is made: the addresses opened at start-up are
 * published and, past one more PMI barrier (a process manager shows what
 * was put before a barrier), every rank's is inserted in world order (or,
 * on first use, read when needed).  Fetched many per round trip where the
 * process manager can (our mpiexec: 256 ranks took 1.1 s of start-up with
 * one get per rank), else one by one. */
lmpi_status lmpi_ofi_connect(void)
{
    if (ofi.opens)
        LMPI_TRY(publish_address());
    if (lmpi_pmi_barrier() != 0) {
        lmpi_err_detail("process manager barrier failed while publishing network addresses");
        return LMPI_ERR_OTHER;
    }
    if (ofi.fi_of)
        return LMPI_OK; /* on first use */
    unsigned char *names = lmpi_malloc((size_t)ofi.n * ADDR_MAX, LMPI_MEM_OTHER);
    if (!names)
        return LMPI_ERR_NO_MEM;
    char values[4096]; /* one PMI line */
    size_t len = 0;
    lmpi_status st = LMPI_OK;
    for (int r = 0; r < ofi.n && st == LMPI_OK;) {
        int got = 0;
        if (lmpi_pmi_get_range(ADDR_KEY, r, ofi.n - r, values, sizeof(values), &got) == 0 && got > 0) {
            const char *p = values;
            for (int i = 0; i < got && st == LMPI_OK; i++) {
                size_t l = strcspn(p, ",");
                st = decode_address(r + i, p, l, names + (size_t)(r + i) * len, &len);
                p += l + (p[l] == ',');
            }
            r += got;
            continue;
        }
        char key[32], hex[2 * ADDR_MAX + 1];
        key_of(r, key, sizeof(key));
        if (lmpi_pmi_get_from(r, key, hex, sizeof(hex)) != 0)
            hex[0] = '\0';
        st = decode_address(r, hex, strlen(hex), names + (size_t)r * len, &len);
        r++;
    }
    if (st == LMPI_OK) {
        int k = fi_av_insert(ofi.av, names, (size_t)ofi.n, NULL, 0, NULL);
        if (k != ofi.n)
            st = fail("inserting the ranks' addresses", k < 0 ? k : -FI_EINVAL);
    }
    lmpi_free(names);
    return st;
}

/* ---- connecting on first use ------------------------------------------- */

static bool known(int r) { return !ofi.fi_of || ofi.fi_of[r] > 0; }

static fi_addr_t fabric_addr(int r) { return ofi.fi_of ? (fi_addr_t)(ofi.fi_of[r] - 1) : (fi_addr_t)r; }

static waiting *waiting_for(int peer)
{
    for (waiting *w = ofi.waiting; w; w = w->next)
        if (w->peer == peer)
            return w;
    return NULL;
}

static void reach(int dest);

/* Keep a copy of a packet for peer (at the front: a HELLO, which nothing
 * queued before it depends on); the first one for a rank not asked for yet
 * starts connecting to it. */
static lmpi_status hold(int peer, const lmpi_pkt_hdr *hdr, const void *payload, size_t len, lmpi_pkt_fill fill,
                        void *arg, bool front)
{
    held *h = lmpi_malloc(sizeof(*h) + len, LMPI_MEM_OFI);
    waiting *w = waiting_for(peer);
    if (!w && h && (w = lmpi_calloc(1, sizeof(*w), LMPI_MEM_OFI))) {
        w->peer = peer;
        w->next = ofi.waiting;
        ofi.waiting = w;
    }
    if (!h || !w) {
        lmpi_free(h);
        return LMPI_ERR_PENDING; /* no memory now: the caller retries */
    }
    h->hdr = *hdr;
    h->len = len;
    h->next = NULL;
    if (fill && len)
        fill(h->data, len, arg);
    else if (len)
        memcpy(h->data, payload, len);
    if (front) {
        h->next = w->head;
        w->head = h;
        if (!w->tail)
            w->tail = h;
    } else {
        if (w->tail)
            w->tail->next = h;
        else
            w->head = h;
        w->tail = h;
    }
    if (lmpi_tr_remote(peer) && ofi.fi_of[peer] == 0)
        reach(peer);
    return LMPI_OK;
}

static lmpi_status send_now(int dest, const lmpi_pkt_hdr *hdr, const void *payload, size_t len);

/* Send what waits for peers now known, in order; a busy peer keeps the rest. */
static void flush_held(void)
{
    for (waiting **p = &ofi.waiting; *p;) {
        waiting *w = *p;
        bool remote = lmpi_tr_remote(w->peer);
        while (w->head && (!remote || known(w->peer))) {
            held *h = w->head;
            lmpi_status st = remote ? send_now(w->peer, &h->hdr, h->data, h->len)
                                    : lmpi_shm_send_pkt(w->peer, &h->hdr, h->data, h->len);
            if (st == LMPI_ERR_PENDING)
                break;
            w->head = h->next;
            lmpi_free(h);
        }
        if (w->head) {
            p = &w->next;
        } else {
            *p = w->next;
            lmpi_free(w);
        }
    }
}

/* A packet of ours (HELLO or ASK, with this endpoint's address), sent or held. */
static void send_net(int dest, int what, int about)
{
    lmpi_pkt_hdr h = {.type = LMPI_PKT_NET, .tag = what, .rank = ofi.me, .addr = (uint64_t)about, .len = ofi.name_len};
    if (send_now(dest, &h, ofi.name, ofi.name_len) == LMPI_ERR_PENDING)
        hold(dest, &h, ofi.name, ofi.name_len, NULL, NULL, true);
}

static void insert_peer(int r, const unsigned char *addr, size_t len)
{
    if (ofi.fi_of[r] > 0)
        return;
    if (len != ofi.name_len)
        die("rank %d sent a network address of %zu bytes, this provider's have %zu", r, len, ofi.name_len);
    fi_addr_t fa = FI_ADDR_NOTAVAIL;
    int k = fi_av_insert(ofi.av, addr, 1, &fa, 0, NULL);
    if (k != 1 || fa == FI_ADDR_NOTAVAIL || fa >= INT32_MAX)
        die("libfabric (%s): inserting rank %d's address failed", ofi.describe, r);
    ofi.fi_of[r] = (int32_t)fa + 1;
    ofi.connected++;
}

/* The first packet for dest, a rank on another node: see the top of the file. */
static void reach(int dest)
{
    open_or_die();
    int first = ofi.leaders[lmpi_nodemap_node(&lmpi_av_world()->nodes, (uint32_t)dest)];
    if (ofi.fi_of[first] <= 0) {
        char key[32], hex[2 * ADDR_MAX + 1];
        unsigned char addr[ADDR_MAX];
        size_t len = 0;
        key_of(first, key, sizeof(key));
        if (lmpi_pmi_get_from(first, key, hex, sizeof(hex)) != 0 ||
            decode_address(first, hex, strlen(hex), addr, &len) != LMPI_OK)
            die("rank %d cannot reach rank %d: the process manager has no network address for rank %d, the first on "
                "its node",
                ofi.me, dest, first);
        insert_peer(first, addr, len);
        send_net(first, NET_HELLO, ofi.me);
    }
    if (dest != first) {
        ofi.fi_of[dest] = ASKED;
        send_net(first, NET_ASK, dest);
    }
}

void lmpi_ofi_packet(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    if (h->tag == NET_WARM) {
        if (ofi.warmed && src >= 0 && src < ofi.n)
            ofi.warmed[src] = 1;
        return;
    }
    int asker = h->rank, target = (int)h->addr;
    if (!ofi.fi_of || asker < 0 || asker >= ofi.n || h->addr >= (uint64_t)ofi.n)
        die("a malformed connection packet came from rank %d", src);
    if (h->tag == NET_HELLO) {
        insert_peer(src, payload, len);
    } else if (h->tag == NET_ASK && target != ofi.me) {
        if (lmpi_tr_remote(target))
            die("rank %d asked rank %d for rank %d, which is on another node", asker, ofi.me, target);
        if (lmpi_shm_send_pkt(target, h, payload, len) == LMPI_ERR_PENDING) /* pass it on */
            hold(target, h, payload, len, NULL, NULL, false);
    } else if (h->tag == NET_ASK) {
        open_or_die();
        insert_peer(asker, payload, len);
        send_net(asker, NET_HELLO, ofi.me);
    } else {
        die("a malformed connection packet came from rank %d", src);
    }
}

size_t lmpi_ofi_entry_bytes(void) { return ofi.fi_of ? sizeof(int32_t) : 0; }

/* The tests' transfer error: LMPI_FT_INJECT=ofi_send_error:R makes every
 * send of this process to rank R after MPI_Init fail as if R's host had
 * gone (-1: none). */
static int inject_send_error(void)
{
    static int rank = -2;
    if (!lmpi_runtime_ready())
        return -1;
    if (rank == -2) {
        const char *e = getenv("LMPI_FT_INJECT");
        rank = e && !strncmp(e, "ofi_send_error:", 15) ? atoi(e + 15) : -1;
    }
    return rank;
}

/* Processes of other groups (met through a port) whose transfers failed
 * under --with-ft, by fabric address.  No launcher of ours watches them, so
 * instead of ending this process as before, the packet is dropped and the
 * address kept here; the bridge's watch of such groups (lmpi_bridge_failed,
 * src/ft's lmpi_ft_watch) finds it and posts the process failed on the
 * node's board, where every wait of the node sees it. */
static struct {
    int64_t *fa;
    int n, cap;
} failed_foreign;

static bool foreign_unreachable(int64_t fa)
{
    if (!lmpi_ft_enabled || fa < 0)
        return false;
    if (lmpi_ofi_foreign_failed(fa))
        return true;
    if (failed_foreign.n == failed_foreign.cap) {
        int cap = failed_foreign.cap ? 2 * failed_foreign.cap : 8;
        int64_t *a = lmpi_realloc(failed_foreign.fa, sizeof(*a) * (size_t)cap, LMPI_MEM_OFI);
        if (!a)
            return false;
        failed_foreign.fa = a;
        failed_foreign.cap = cap;
    }
    failed_foreign.fa[failed_foreign.n++] = fa;
    return true;
}

bool lmpi_ofi_foreign_failed(int64_t fa)
{
    for (int i = 0; i < failed_foreign.n; i++)
        if (failed_foreign.fa[i] == fa)
            return true;
    return false;
}

/* LMPI_FT_INJECT=ofi_foreign_error: from when the process sets it, every
 * send to a process of another group fails as if that process's host had
 * gone (the tests set it once they have met the other group). */
static bool inject_foreign_error(void)
{
    const char *e = getenv("LMPI_FT_INJECT");
    return e && !strcmp(e, "ofi_foreign_error");
}

/* Hand the packet in b (len bytes of data) to the provider, for fabric
 * address fa (world rank dest, or -1: a process of another group).
 *
 * A process of another group gets no injected packet: an injected packet
 * has no completion, so lmpi_ofi_close could not wait for it, and a
 * provider still connecting holds it inside the endpoint that closing
 * throws away.  Within the world the closing barrier covers that (a
 * receiver reaches it only after taking every message it waits for);
 * across groups nothing does (a spawned child may send its parent a last
 * message and finalize before the parent looks). */
static lmpi_status post_to(fi_addr_t fa, int dest, buffer *b, size_t len)
{
    ssize_t rc;
    if (LMPI_UNLIKELY(lmpi_ft_enabled) &&
        (dest >= 0 ? dest == inject_send_error() : inject_foreign_error())) {
        b->next = ofi.free_tx;
        ofi.free_tx = b;
        rc = -FI_EIO;
        goto failed;
    }
    if (len <= ofi.inject_max && dest >= 0) { /* copied at once: the buffer is free again */
        rc = fi_inject(ofi.ep, b->data, len, fa);
    } else {
        rc = fi_send(dest >= 0 ? ofi.ep : ofi.out, b->data, len, ofi.desc, fa, &b->head.ctx);
        if (rc == 0) {
            ofi.tx_out++;
            return LMPI_OK;
        }
    }
    b->next = ofi.free_tx;
    ofi.free_tx = b;
    if (rc == 0)
        return LMPI_OK;
    if (rc == -FI_EAGAIN)
        return LMPI_ERR_PENDING;
failed:
    if (dest >= 0 ? lmpi_ft_unreachable(dest) : foreign_unreachable((int64_t)fa))
        return LMPI_OK; /* the packet is dropped: its destination counts as failed (src/ft) */
    if (dest < 0)
        die("libfabric send to a process of another group failed: %s", fi_strerror((int)-rc));
    die("libfabric send to rank %d failed: %s", dest, fi_strerror((int)-rc));
    return LMPI_ERR_OTHER;
}

static lmpi_status post_send(int dest, buffer *b, size_t len) { return post_to(fabric_addr(dest), dest, b, len); }

static buffer *take_tx(int dest, const lmpi_pkt_hdr *hdr)
{
    buffer *b = ofi.free_tx;
    if (!b)
        return NULL;
    ofi.free_tx = b->next;
    wire_prefix w = {.src = ofi.me};
    memcpy(b->data, &w, sizeof(w));
    memcpy(b->data + sizeof(w), hdr, sizeof(*hdr));
    b->head.op = OP_SEND;
    b->head.peer = dest;
    b->head.fa = -1;
    return b;
}

/* An announced message the receiver can read: its buffer registered for
 * remote reads, the key in the copy *keyed of the announcement. */
static offered *offer(int dest, const lmpi_pkt_hdr *rts, lmpi_pkt_hdr *keyed)
{
    offered *o = lmpi_malloc(sizeof(*o), LMPI_MEM_OFI);
    if (!o)
        return NULL;
    if (fi_mr_reg(ofi.domain, (void *)(uintptr_t)rts->addr, rts->len, FI_REMOTE_READ, 0, ofi.next_key++, 0, &o->mr,
                  NULL) != 0) {
        lmpi_free(o);
        return NULL; /* the receiver will ask for a stream */
    }
    o->sreq = rts->sreq;
    o->dest = dest;
    *keyed = *rts;
    keyed->tr = TR_KEYED;
    keyed->rreq = fi_mr_key(o->mr);
    if (!ofi.virt)
        keyed->addr = 0; /* offsets from the registration's start */
    return o;
}

static void withdraw(offered *o)
{
    if (o) {
        fi_close(&o->mr->fid);
        lmpi_free(o);
    }
}

/* The receiver read the message (FIN), asked for a stream instead (CTS),
 * or the sender took it back: the registration goes. */
static void offer_done(int dest, uint64_t sreq)
{
    for (offered **p = &ofi.offers; *p; p = &(*p)->next)
        if ((*p)->sreq == sreq && (*p)->dest == dest) {
            offered *o = *p;
            *p = o->next;
            withdraw(o);
            return;
        }
}

static lmpi_status send_now(int dest, const lmpi_pkt_hdr *hdr, const void *payload, size_t len)
{
    lmpi_pkt_hdr keyed;
    offered *o = NULL;
    if (hdr->type == LMPI_PKT_RTS && ofi.rma && !(hdr->flags & LMPI_PKT_PACKED) && hdr->len &&
        (o = offer(dest, hdr, &keyed)))
        hdr = &keyed;
    buffer *b = take_tx(dest, hdr);
    if (!b) {
        withdraw(o);
        return LMPI_ERR_PENDING;
    }
    if (len)
        memcpy(b->data + WIRE_HDR, payload, len);
    lmpi_status st = post_send(dest, b, WIRE_HDR + len);
    if (st != LMPI_OK) {
        withdraw(o);
    } else if (o) {
        o->next = ofi.offers;
        ofi.offers = o;
    }
    return st;
}

/* Held: the peer is not known yet, or packets for it wait already. */
static bool must_hold(int dest) { return ofi.fi_of && (ofi.fi_of[dest] <= 0 || (ofi.waiting && waiting_for(dest))); }

lmpi_status lmpi_ofi_send_pkt(int dest, const lmpi_pkt_hdr *hdr, const void *payload, size_t len)
{
    if (LMPI_UNLIKELY(must_hold(dest)))
        return hold(dest, hdr, payload, len, NULL, NULL, false);
    return send_now(dest, hdr, payload, len);
}

lmpi_status lmpi_ofi_send_pkt_fill(int dest, const lmpi_pkt_hdr *hdr, size_t len, lmpi_pkt_fill fill, void *arg)
{
    if (LMPI_UNLIKELY(must_hold(dest)))
        return hold(dest, hdr, NULL, len, fill, arg, false);
    buffer *b = take_tx(dest, hdr);
    if (!b)
        return LMPI_ERR_PENDING;
    if (len)
        fill(b->data + WIRE_HDR, len, arg);
    return post_send(dest, b, WIRE_HDR + len);
}

size_t lmpi_ofi_max_payload(void) { return PAYLOAD; }

size_t lmpi_ofi_eager_max(void) { return ofi.eager_max; }

int lmpi_ofi_pull(int src, const lmpi_pkt_hdr *rts, void *local, size_t len, uint64_t token)
{
    if (!(rts->tr & TR_KEYED) || !known(src))
        return -1;
    read_op *op = lmpi_calloc(1, sizeof(*op), LMPI_MEM_OFI);
    if (!op)
        return -1;
    op->head.op = OP_READ;
    op->head.peer = src;
    op->token = token;
    void *desc = NULL;
    if ((ofi.info->domain_attr->mr_mode & FI_MR_LOCAL) &&
        fi_mr_reg(ofi.domain, local, len, FI_READ, 0, ofi.next_key++, 0, &op->local_mr, NULL) == 0)
        desc = fi_mr_desc(op->local_mr);
    if ((ofi.info->domain_attr->mr_mode & FI_MR_LOCAL) && !desc) {
        lmpi_free(op);
        return -1;
    }
    ssize_t rc = fi_read(ofi.ep, local, len, desc, fabric_addr(src), rts->addr, rts->rreq, &op->head.ctx);
    if (rc == 0)
        return 1;
    /* busy (or refused): the sender streams it instead */
    if (op->local_mr)
        fi_close(&op->local_mr->fid);
    lmpi_free(op);
    return -1;
}

/* A read finished: pt2pt hears it as a PULLED packet from the sender. */
static void read_done(read_op *op)
{
    lmpi_pkt_hdr h = {.type = LMPI_PKT_PULLED, .rreq = op->token};
    int src = op->head.peer;
    if (op->local_mr)
        fi_close(&op->local_mr->fid);
    lmpi_free(op);
    lmpi_tr_deliver(src, &h, NULL, 0);
}

static void completion(op_head *head, size_t len)
{
    if (head->op == OP_READ) {
        read_done((read_op *)head);
        return;
    }
    if (head->op == OP_WIN) {
        win_op *op = (win_op *)head;
        op->next = ofi.spare_win_ops;
        ofi.spare_win_ops = op;
        op->done(op->arg);
        return;
    }
    buffer *b = (buffer *)head;
    if (head->op == OP_SEND) {
        ofi.tx_out--;
        b->next = ofi.free_tx;
        ofi.free_tx = b;
        return;
    }
    wire_prefix w;
    lmpi_pkt_hdr h;
    if (len < WIRE_HDR)
        die("libfabric delivered a packet of %zu bytes, shorter than a header", len);
    memcpy(&w, b->data, sizeof(w));
    memcpy(&h, b->data + sizeof(w), sizeof(h));
    if (LMPI_UNLIKELY(w.group)) {
        lmpi_bridge_arrived(w.group, w.src, &h, b->data + WIRE_HDR, len - WIRE_HDR);
        post_recv(b);
        return;
    }
    if (w.src < 0 || w.src >= ofi.n)
        die("libfabric delivered a packet from unknown rank %d", (int)w.src);
    if (ofi.offers && (h.type == LMPI_PKT_FIN || h.type == LMPI_PKT_CTS ||
                       (h.type == LMPI_PKT_CANCEL_REPLY && (h.flags & LMPI_PKT_CANCELLED))))
        offer_done(w.src, h.sreq);
    lmpi_tr_deliver(w.src, &h, b->data + WIRE_HDR, len - WIRE_HDR);
    post_recv(b);
}

static void flush_foreign(void);
static void remove_doomed(void);

/* An operation whose transfer failed, its peer now failed: its resources
 * go back, nothing is delivered. */
static void drop_failed(op_head *head)
{
    if (head->op == OP_READ) {
        read_op *op = (read_op *)head;
        if (op->local_mr)
            fi_close(&op->local_mr->fid);
        lmpi_free(op);
    } else if (head->op == OP_WIN) {
        win_op *op = (win_op *)head;
        op->next = ofi.spare_win_ops;
        ofi.spare_win_ops = op;
    } else if (head->op == OP_SEND) {
        buffer *b = (buffer *)head;
        ofi.tx_out--;
        b->next = ofi.free_tx;
        ofi.free_tx = b;
    }
}

int lmpi_ofi_poll(void)
{
    if (LMPI_UNLIKELY(ofi.waiting))
        flush_held();
    if (LMPI_UNLIKELY(ofi.foreign))
        flush_foreign();
    if (LMPI_UNLIKELY(ofi.ndoomed) && !ofi.foreign && ofi.tx_out == 0)
        remove_doomed();
    if (!ofi.cq)
        return 0; /* not opened yet */
    struct fi_cq_msg_entry e[16];
    ssize_t k = fi_cq_read(ofi.cq, e, 16);
    if (k == -FI_EAGAIN)
        return 0;
    if (k == -FI_EAVAIL) {
        struct fi_cq_err_entry err;
        memset(&err, 0, sizeof(err));
        fi_cq_readerr(ofi.cq, &err, 0);
        if (err.err == FI_ECANCELED)
            return 0;
        op_head *op = err.op_context;
        if (op && op->op != OP_RECV &&
            (op->peer >= 0 ? lmpi_ft_unreachable(op->peer) : foreign_unreachable(op->fa))) {
            /* under --with-ft the peer counts as failed, as if its launcher
             * had said so (src/ft): the operation is let go, and what waits
             * for it ends with the failure */
            drop_failed(op);
            return 1;
        }
        char peer[48] = "";
        if (op && op->op != OP_RECV && op->peer < 0)
            snprintf(peer, sizeof(peer), " to a process of another group");
        else if (op && op->op != OP_RECV)
            snprintf(peer, sizeof(peer), " %s rank %d", op->op == OP_SEND ? "to" : "from", op->peer);
        die("libfabric (%s): a transfer%s failed (the peer's process or host is gone?): %s", ofi.describe, peer,
            fi_cq_strerror(ofi.cq, err.prov_errno, err.err_data, NULL, 0));
    }
    if (k < 0)
        die("libfabric (%s): reading completions failed: %s", ofi.describe,
                       fi_strerror((int)-k));
    for (ssize_t i = 0; i < k; i++)
        completion((op_head *)e[i].op_context, e[i].len);
    return (int)k;
}

const char *lmpi_ofi_describe(void) { return ofi.describe; }

/* Until the endpoint opens, everything for us comes through shared
 * memory; after, the watcher must look at the network while we sleep. */
bool lmpi_ofi_sleep_ok(void) { return !ofi.ep || lmpi_ofi_watching(); }

/* Arm the completion queue's descriptor (false: completions are waiting,
 * read them first) and start the watcher's round. */
bool lmpi_ofi_sleep_prepare(void)
{
    if (!ofi.ep)
        return true;
    struct fid *cq = &ofi.cq->fid;
    if (fi_trywait(ofi.fabric, &cq, 1) != FI_SUCCESS)
        return false;
    lmpi_ofi_watch_unstick();
    lmpi_ofi_watch_round();
    return true;
}

/* ---- other process groups on other hosts (shm/bridge.h) ----------------- */

/* A job on one host set nothing up at start-up. */
static void setup_once(int me, int n)
{
    if (!ofi.n)
        setup(me, n);
}

void lmpi_ofi_open_early(int me, int n)
{
    setup_once(me, n);
    open_start();
}

lmpi_status lmpi_ofi_open_wait(void) { return open_joined(); }

lmpi_status lmpi_ofi_foreign_address(int me, int n, char *hex, size_t len)
{
    setup_once(me, n);
    LMPI_TRY(open_now());
    if (len < 2 * ofi.name_len + 1)
        return LMPI_ERR_INTERN;
    for (size_t i = 0; i < ofi.name_len; i++)
        snprintf(hex + 2 * i, 3, "%02x", ofi.name[i]);
    return LMPI_OK;
}

int64_t lmpi_ofi_foreign_insert(const void *addr, size_t len)
{
    fi_addr_t fa = FI_ADDR_NOTAVAIL;
    if (!ofi.ep || len != ofi.name_len || fi_av_insert(ofi.av, addr, 1, &fa, 0, NULL) != 1 ||
        fa == FI_ADDR_NOTAVAIL || fa > INT64_MAX)
        return -1;
    return (int64_t)fa;
}

static void remove_doomed(void)
{
    for (int i = 0; i < ofi.ndoomed; i++) {
        fi_addr_t a = (fi_addr_t)ofi.doomed[i];
        fi_av_remove(ofi.av, &a, 1, 0);
    }
    ofi.ndoomed = 0;
}

/* The address goes once no packet is held or in flight (a send to an
 * address removed under it is undefined in libfabric: Debian's tcp
 * crashes): now, or from a later poll. */
void lmpi_ofi_foreign_remove(int64_t fa)
{
    if (!ofi.av)
        return;
    if (ofi.ndoomed == ofi.cap_doomed) {
        int cap = ofi.cap_doomed ? 2 * ofi.cap_doomed : 16;
        int64_t *d = lmpi_realloc(ofi.doomed, sizeof(*d) * (size_t)cap, LMPI_MEM_OFI);
        if (!d)
            return; /* kept until the endpoint closes */
        ofi.doomed = d;
        ofi.cap_doomed = cap;
    }
    ofi.doomed[ofi.ndoomed++] = fa;
    if (!ofi.foreign && ofi.tx_out == 0)
        remove_doomed();
}

static lmpi_status foreign_now(int64_t fa, uint32_t group, const lmpi_pkt_hdr *hdr, const void *payload, size_t len)
{
    if (LMPI_UNLIKELY(!ofi.out) && open_out() != LMPI_OK) {
        char why[300];
        lmpi_err_detail_get(why, sizeof(why));
        die("%s", why);
    }
    buffer *b = take_tx(-1, hdr);
    if (!b)
        return LMPI_ERR_PENDING;
    wire_prefix w = {.src = ofi.me, .group = group};
    memcpy(b->data, &w, sizeof(w));
    if (len)
        memcpy(b->data + WIRE_HDR, payload, len);
    b->head.fa = fa;
    return post_to((fi_addr_t)fa, -1, b, WIRE_HDR + len);
}

static void flush_foreign(void)
{
    while (ofi.foreign && foreign_now(ofi.foreign->fa, ofi.foreign->group, &ofi.foreign->hdr, ofi.foreign->data,
                                      ofi.foreign->len) == LMPI_OK) {
        foreign_held *f = ofi.foreign;
        ofi.foreign = f->next;
        if (!ofi.foreign)
            ofi.foreign_tail = NULL;
        lmpi_free(f);
    }
}

/* Never LMPI_ERR_PENDING: what the provider cannot take now waits here
 * (a copy), so a caller inside a poll (the bridge's control packets) need
 * not wait for a network only polling can advance. */
lmpi_status lmpi_ofi_send_foreign(int64_t fa, uint32_t group, const lmpi_pkt_hdr *hdr, const void *payload,
                                  size_t len, lmpi_pkt_fill fill, void *arg)
{
    if (len > PAYLOAD)
        return LMPI_ERR_INTERN;
    char *packed = NULL;
    if (len && fill) {
        if (!(packed = lmpi_malloc(len, LMPI_MEM_OFI)))
            return LMPI_ERR_PENDING;
        fill(packed, len, arg);
        payload = packed;
    }
    lmpi_status st = ofi.foreign ? LMPI_ERR_PENDING : foreign_now(fa, group, hdr, payload, len);
    if (st == LMPI_ERR_PENDING) {
        foreign_held *f = lmpi_malloc(sizeof(*f) + len, LMPI_MEM_OFI);
        if (f) {
            *f = (foreign_held){.fa = fa, .group = group, .hdr = *hdr, .len = len};
            if (len)
                memcpy(f->data, payload, len);
            if (ofi.foreign_tail)
                ofi.foreign_tail->next = f;
            else
                ofi.foreign = f;
            ofi.foreign_tail = f;
            st = LMPI_OK;
        }
    }
    lmpi_free(packed);
    return st;
}

/* ---- windows spanning hosts: the provider's RMA ------------------------- */

/* Window keys stay clear of the rendezvous registrations' (counted from 0). */
#define WIN_KEY(id) ((UINT64_C(1) << 62) | (uint64_t)(id))

void *lmpi_ofi_win_register(void *base, size_t len, uint32_t id)
{
    if (!len || open_now() != LMPI_OK || !ofi.win)
        return NULL;
    struct fid_mr *mr = NULL;
    if (fi_mr_reg(ofi.domain, base, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, WIN_KEY(id), 0, &mr, NULL) != 0)
        return NULL;
    return mr;
}

void lmpi_ofi_win_deregister(void *mr)
{
    if (mr)
        fi_close(&((struct fid_mr *)mr)->fid);
}

int lmpi_ofi_win_rma(int dest, bool write, void *local, size_t len, uint32_t id, uint64_t off, void (*done)(void *),
                     void *arg)
{
    if (!ofi.ep || !known(dest) || must_hold(dest))
        return 0; /* not connected yet: messages connect it */
    win_op *op = ofi.spare_win_ops;
    if (op)
        ofi.spare_win_ops = op->next;
    else if (!(op = lmpi_malloc(sizeof(*op), LMPI_MEM_OFI)))
        return 0;
    *op = (win_op){.head = {.op = OP_WIN, .peer = dest}, .done = done, .arg = arg};
    struct iovec iov = {.iov_base = local, .iov_len = len};
    struct fi_rma_iov rma = {.addr = off, .len = len, .key = WIN_KEY(id)};
    struct fi_msg_rma msg = {.msg_iov = &iov, .iov_count = 1, .addr = fabric_addr(dest), .rma_iov = &rma,
                             .rma_iov_count = 1, .context = &op->head.ctx};
    /* a flush means done at the target: the provider answers once the data is there */
    ssize_t rc;
    while ((rc = write ? fi_writemsg(ofi.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE)
                       : fi_readmsg(ofi.ep, &msg, FI_COMPLETION)) == -FI_EAGAIN)
        lmpi_ofi_poll();
    if (rc != 0 && lmpi_ft_unreachable(dest)) {
        drop_failed(&op->head); /* what waits for it ends with the failure (src/ft) */
        return 1;
    }
    if (rc != 0)
        die("libfabric (%s): a one-sided %s of %zu bytes at rank %d failed: %s", ofi.describe,
            write ? "write" : "read", len, dest, fi_strerror((int)-rc));
    return 1;
}

/* ---- the introducer ---------------------------------------------------- */

/* With first-use connections a node's first rank passes every ASK for one
 * of its node-mates on.  MPI's progress rule says a matched send and
 * receive complete whatever a third process does, so a first rank busy
 * outside MPI must not hold up first contacts between others: a thread of
 * it polls the network when the lock the bindings take is free (the user's
 * thread is outside MPI; inside, it polls for itself).  It polls only the
 * network, so no user callback (reduction operators in schedules,
 * generalized requests) ever runs on it; what it receives for this rank is
 * delivered as a second user thread's MPI_Test would. */
static struct {
    pthread_t thread;
    bool running;
    bool stop; /* under wake_lock */
    pthread_mutex_t wake_lock;
    pthread_cond_t wake; /* MPI_Finalize cuts a pause short (on the monotonic clock) */
} introducer = {.wake_lock = PTHREAD_MUTEX_INITIALIZER};

/* A pause of us microseconds, or less if the introducer is told to stop
 * (a finalizing first rank would otherwise wait out up to
 * LMPI_OFI_INTRODUCER_US: every job spanning hosts ended 0-50 ms late).
 * True when it must stop. */
static bool introducer_pause(long us)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += us / 1000000;
    until.tv_nsec += (us % 1000000) * 1000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&introducer.wake_lock);
    while (!introducer.stop && pthread_cond_timedwait(&introducer.wake, &introducer.wake_lock, &until) == 0)
        ;
    bool stop = introducer.stop;
    pthread_mutex_unlock(&introducer.wake_lock);
    return stop;
}

/* The pause between looks starts at 1 ms and doubles while there is
 * nothing to do (the user's thread inside MPI, or nothing arrived), up to
 * LMPI_OFI_INTRODUCER_US: a thread waking every millisecond beside ranks
 * that busy-poll every core cost them up to a fifth of their message rate
 * in alternated runs; a first contact through a busy first rank waits at
 * most that long instead of until it calls MPI. */
static void *introduce(void *arg)
{
    (void)arg;
    long most = lmpi_config.ofi_introducer_us, least = most < 1000 ? most : 1000, us = least;
    while (!introducer_pause(us)) {
        int found = 0;
        if (pthread_mutex_trylock(&lmpi_big_lock) == 0) {
            lmpi_lock_held = true;
            found = lmpi_ofi_poll();
            lmpi_lock_held = false;
            pthread_mutex_unlock(&lmpi_big_lock);
            if (found > 0) /* what it delivered may be what a sleeping thread waits for */
                lmpi_wait_wake_local();
        }
        us = found > 0 ? least : (2 * us < most ? 2 * us : most);
    }
    return NULL;
}

/* Under --with-ft ulfm every pair of ranks on different hosts connects
 * before MPI_Init returns.  Debian's libfabric 1.17 (tcp;ofi_rxm) loses
 * the first message to a peer sent after a connection to a dead process
 * failed: no socket to the peer is ever made, and the survivors' agreement
 * waited for it forever (hosts.ulfm, 3 runs in 10).  Connections made
 * before any failure carry on.  A rank that fails meanwhile is not waited
 * for. */
static void warm_up(void)
{
    lmpi_pkt_hdr h = {.type = LMPI_PKT_NET, .tag = NET_WARM, .rank = ofi.me};
    for (int r = 0; r < ofi.n; r++)
        if (lmpi_tr_remote(r))
            while (send_now(r, &h, NULL, 0) == LMPI_ERR_PENDING)
                lmpi_ofi_poll();
    unsigned idle = 0;
    for (int r = 0; r < ofi.n;) {
        if (!lmpi_tr_remote(r) || ofi.warmed[r] || lmpi_ft_failed(r)) {
            r++;
        } else if (lmpi_progress_poll() > 0) {
            idle = 0;
        } else {
            lmpi_ft_poll();
            lmpi_progress_idle(&idle);
        }
    }
}

void lmpi_ofi_ready(void)
{
    if (ofi.warmed && ofi.ep) {
        warm_up();
        lmpi_free(ofi.warmed);
        ofi.warmed = NULL;
    }
    /* only the ranks that introduce: first ranks, opened at start-up */
    if (!ofi.fi_of || !ofi.ep || lmpi_config.ofi_introducer_us <= 0 || introducer.running)
        return;
    bool locked = lmpi_rt.lock_calls;
    lmpi_rt.lock_calls = true;
    introducer.stop = false;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&introducer.wake, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&introducer.thread, NULL, introduce, NULL) != 0) {
        pthread_cond_destroy(&introducer.wake);
        lmpi_rt.lock_calls = locked; /* first contacts through us then wait for our MPI calls */
        return;
    }
    introducer.running = true;
}

static void introducer_stop(void)
{
    if (!introducer.running)
        return;
    pthread_mutex_lock(&introducer.wake_lock);
    introducer.stop = true;
    pthread_cond_signal(&introducer.wake);
    pthread_mutex_unlock(&introducer.wake_lock);
    pthread_join(introducer.thread, NULL);
    pthread_cond_destroy(&introducer.wake);
    introducer.running = false;
}

/* At the end: let every send of ours finish (a peer may still be waiting
 * for the last packets of the closing barrier), then close. */
void lmpi_ofi_close(void)
{
    (void)open_joined(); /* after a start-up that failed elsewhere */
    introducer_stop();
    for (int spins = 0; ofi.ep && (ofi.tx_out > 0 || ofi.waiting || ofi.foreign) && spins < 10000000; spins++)
        lmpi_ofi_poll();
    while (ofi.waiting) {
        waiting *w = ofi.waiting;
        ofi.waiting = w->next;
        for (held *h = w->head, *next; h; h = next) {
            next = h->next;
            lmpi_free(h);
        }
        lmpi_free(w);
    }
    while (ofi.foreign) {
        foreign_held *f = ofi.foreign;
        ofi.foreign = f->next;
        lmpi_free(f);
    }
    lmpi_free(ofi.doomed);
    lmpi_free(ofi.warmed);
    ofi.warmed = NULL;
    while (ofi.offers) {
        offered *o = ofi.offers;
        ofi.offers = o->next;
        withdraw(o);
    }
    while (ofi.spare_win_ops) {
        win_op *op = ofi.spare_win_ops;
        ofi.spare_win_ops = op->next;
        lmpi_free(op);
    }
    lmpi_ofi_watch_stop();
    /* endpoint first, the fabric last: each depends on the ones after it */
    struct fid *fids[] = {ofi.out ? &ofi.out->fid : NULL,       ofi.ep ? &ofi.ep->fid : NULL,
                          ofi.mr ? &ofi.mr->fid : NULL,
                          ofi.av ? &ofi.av->fid : NULL,         ofi.cq ? &ofi.cq->fid : NULL,
                          ofi.domain ? &ofi.domain->fid : NULL, ofi.fabric ? &ofi.fabric->fid : NULL};
    for (size_t i = 0; i < sizeof(fids) / sizeof(fids[0]); i++)
        if (fids[i])
            fi_close(fids[i]);
    if (ofi.info)
        fi_freeinfo(ofi.info);
    lmpi_free(ofi.mem);
    lmpi_free(ofi.fi_of);
    lmpi_free(ofi.leaders);
    memset(&ofi, 0, sizeof(ofi));
}
