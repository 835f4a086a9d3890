/* Shared-memory transport: one segment per node.
 *
 * Layout (offsets from the segment base):
 *   header            sizes, attach counter
 *   notice board      failed processes, posted by the launcher (notice.h)
 *   rank areas        per rank: receive queue, free-cell queue, pid
 *   pending bitmaps   per receiver: one bit per sender with a full fast box
 *   fast-box tails    per receiver: how far it has read each sender's ring
 *   fast-box slots    per (receiver, sender) pair: one small message
 *   fast-box rings    per pair: small messages that find the slot full
 *   cells             per rank: `ncells` cells it owns and sends from
 *
 * A sender takes a cell from its own free queue, fills it and enqueues it on
 * the receiver's queue; the receiver hands it back to the owner's free queue
 * as soon as the packet is delivered (pt2pt copies what it keeps).
 * A fast box is a slot and a ring.  The slot holds one message and the
 * receiver clears it: a lone message (a ping-pong) always lands on the same
 * line, which the receiver polls in its own cache.  Messages that find the
 * slot full go to the ring, which only the sender writes: records of whole
 * 64-byte lines, each marked with its position so that the receiver knows
 * a fresh one without anybody clearing the lap before; the receiver
 * publishes how far it has read once per poll, and the sender reads that
 * only when its last view says the ring is full (then the message takes a
 * cell).  A window of small messages thus costs no queue operation and no
 * atomic read-modify-write.  (A ring alone cost a ping-pong 20-30 ns: the
 * receiver's extra work after each delivery is on the round trip.)
 * Per-pair sequence numbers keep fast-box and queue traffic in order: a cell
 * whose number is ahead of the expected one means the missing packets sit in
 * the sender's fast box, and a fast-box record ahead of the expected number
 * waits until the queue has caught up.
 *
 * The segment is created by the node's first rank with mode 0600 and
 * unlinked by whichever rank attaches last, so nothing is left in /dev/shm
 * once a job is running (mpiexec removes it if a rank dies before that). */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pmi/pmi.h"
#include "runtime/config.h"
#include "runtime/wait.h"
#include "transport/shm/bridge.h"
#include "transport/shm/notice.h"
#include "transport/shm/fastbox.h"
#include "transport/shm/queue.h"
#include "transport/shm/shm.h"
#include "transport/transport.h"

#define SEG_MAGIC 0x4c4d5049u
#define CELL_HDR 128
#define CELL_PAYLOAD (16 * 1024)
#define CELL_SIZE (CELL_HDR + CELL_PAYLOAD)
#define FB_SLOT 512               /* a pair's slot: header line + FB_PAYLOAD */
#define FB_SLOT_HDR 64
#define FB_PAYLOAD 448            /* the largest message a fast box takes */
#define FB_RING_MIN 512           /* bytes per pair: a 448-byte message fits */
#define FB_RING_MAX (64 * 1024)
#define FB_RING_DEFAULT 4096
#define FB_RING_RUN 16            /* sends into the ring after finding the slot full */
#define FB_NODE_BUDGET (1u << 20) /* the default ring shrinks to keep n*n rings below this, then goes */
#define POLL_BATCH 32

typedef struct {
    uint32_t magic;
    uint32_t nranks;
    uint32_t ncells;
    uint32_t bitmap_words;
    uint64_t size;
    uint64_t off_ranks, off_bitmaps, off_fastboxes, off_cells;
    uint64_t off_fb_rings; /* after the slots: a ping-pong's lines stay on few pages */
    /* one slot per processor: the local rank (+1) that last waited there
     * (runtime/wait.h, the hand-off) */
    uint64_t off_cpu_slots;
    uint32_t ncpus;
    uint32_t fb_units;    /* units per fast-box ring, a power of two (fastbox.h) */
    uint64_t off_fb_tails; /* per receiver, a row of n read positions (units) */
    uint64_t off_throttle; /* per receiver, a bitmap of the senders it asks for rendezvous */
    _Atomic uint32_t attached;
    /* the pool for collectives' shared areas: POOL_UNIT units, a bit each
     * (set: taken), first fit under a spin lock */
    _Atomic uint32_t pool_lock;
    uint64_t off_pool, pool_units, off_pool_bits;
    /* ranks asleep in a word wait (runtime/wait.h): read at every MPI
     * call's exit, so on a line of its own that nothing else writes */
    _Alignas(64) _Atomic uint32_t word_sleepers;
    char pad[60];
} seg_header;

#define POOL_UNIT 1024
#define POOL_PREFAULT_MAX (256 * 1024) /* populate_pool */

_Static_assert(sizeof(seg_header) <= LMPI_NOTICE_OFFSET, "the notice board follows the header");

typedef struct {
    lmpi_shmq recvq;
    lmpi_shmq freeq;
    _Atomic int32_t pid;
    lmpi_wait_word sleep; /* the futex word this rank sleeps on (runtime/wait.h) */
    _Atomic int32_t wait_cpu; /* the processor it waits on, +1; 0: not waiting (the hand-off) */
    _Atomic uint32_t wants_cell; /* out of cells: receivers wake it when they hand one back */
    _Atomic uint32_t copying;    /* inside a single-copy receive: too busy to help another one */
    char pad[12];
    lmpi_wait_cond wait_cond; /* what its word wait waits for (runtime/wait.h) */
    char pad2[16];
    _Atomic uint64_t link_free; /* emulated node uplink (first rank of a node): busy until, ns */
} rank_area;

typedef struct {
    lmpi_shmq_link link; /* must be first: the queue links through it */
    uint32_t owner;
    uint32_t src;
    uint32_t seq;
    uint32_t len;
    lmpi_pkt_hdr hdr;
} cell_header;

_Static_assert(sizeof(cell_header) <= CELL_HDR, "cell header fits");

/* A pair's slot: one message, cleared by the receiver.  A lone message (a
 * ping-pong) always finds it empty and lands on the same line every time,
 * a line the receiver polls from its own cache; the ring takes what
 * arrives while the slot is full. */
typedef struct {
    _Atomic uint32_t full;
    uint32_t seq;
    uint32_t len;
    uint32_t pad;
    lmpi_pkt_hdr hdr;
} fastbox_slot;

_Static_assert(sizeof(fastbox_slot) <= FB_SLOT_HDR && FB_SLOT_HDR + FB_PAYLOAD <= FB_SLOT, "fast-box slot fits");

/* The mark of a record at unit position pos (counted since the ring began):
 * never 0, so that a unit the receiver cleared is never taken for a record. */
static inline uint32_t fastbox_mark(uint32_t pos)
{
    return pos + 1 ? pos + 1 : 1;
}
_Static_assert(sizeof(fastbox_whole) + FB_PAYLOAD <= FB_RING_MIN, "the largest fast-box message fits the smallest ring");

static struct {
    char *base;
    size_t size;
    seg_header *hdr;
    rank_area *ranks;
    int me;
    int n;
    uint32_t *send_seq;
    uint32_t *recv_seq;
    size_t eager_max;
    size_t fb_max;
    /* fast boxes: ring size, and this rank's positions (in units): where it
     * writes next to each receiver, where it last saw each receiver's read
     * position, and where it reads next from each sender */
    uint32_t fb_units, fb_mask;
    uint32_t *fb_head, *fb_seen_tail, *fb_tail;
    /* sends to each receiver left that go to its ring without a look at its
     * slot (send_core) */
    uint8_t *fb_ring_run;
    /* computed once: the slots and rings this rank reads (its row: src's at
     * slot_row + src * FB_SLOT, ring_row + src * ring_bytes) and writes (its
     * column: dest's at slot_column + dest * n * FB_SLOT, ring_column + dest
     * * n * ring_bytes), and its row of read positions */
    char *slot_row, *slot_column, *ring_row, *ring_column;
    size_t ring_bytes;
    _Atomic uint32_t *fb_my_tails;
    bool cma;
    int64_t accounted;
    /* this rank's polling targets, computed once */
    _Atomic uint64_t *my_bitmap;
    uint32_t bitmap_words;
    lmpi_shmq *my_recvq;
    /* flow control: bytes of each sender's unexpected eager messages this
     * rank holds, and the amounts at which it asks a sender for rendezvous
     * and stops asking */
    uint64_t *held;
    uint64_t held_high, held_low;
    /* With few local ranks the receiver reads every fast box of its row:
     * cheaper than the bitmap, whose atomic updates cost the sender and the
     * receiver a cache-line transfer each per message. */
    bool scan_fastboxes;
    bool bridge; /* this process has an inbox for other groups (bridge.h) */
} shm;


static size_t align_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

static _Atomic uint64_t *bitmap_of(int rank)
{
    /* each receiver's bitmap on cache lines of its own */
    size_t stride = align_up((size_t)shm.hdr->bitmap_words * 8, 64);
    return (_Atomic uint64_t *)(shm.base + shm.hdr->off_bitmaps + (size_t)rank * stride);
}

/* rank's row of the throttle table: bit s set, sender s uses rendezvous */
static _Atomic uint64_t *throttle_of(int rank)
{
    size_t stride = align_up((size_t)shm.hdr->bitmap_words * 8, 64);
    return (_Atomic uint64_t *)(shm.base + shm.hdr->off_throttle + (size_t)rank * stride);
}

static lmpi_wait_word *sleep_word_of(int rank) { return &shm.ranks[rank].sleep; }

static _Atomic int32_t *wait_cpu_of(int rank) { return &shm.ranks[rank].wait_cpu; }

static lmpi_wait_cond *wait_cond_of(int rank) { return &shm.ranks[rank].wait_cond; }

static char *fastbox_slot_at(int dst, int src)
{
    return shm.base + shm.hdr->off_fastboxes + ((size_t)dst * shm.n + (size_t)src) * FB_SLOT;
}

static char *fastbox_ring_at(int dst, int src)
{
    return shm.base + shm.hdr->off_fb_rings + ((size_t)dst * shm.n + (size_t)src) * shm.fb_units * FB_UNIT;
}

/* dst's read position in src's ring: only dst writes it */
static _Atomic uint32_t *fastbox_tail(int dst, int src)
{
    size_t row = align_up((size_t)shm.n * sizeof(uint32_t), 64);
    return (_Atomic uint32_t *)(shm.base + shm.hdr->off_fb_tails + (size_t)dst * row) + src;
}

/* Bytes per fast-box ring: LMPI_SHM_FASTBOX_RING, or 4 KiB halved until
 * the node's n*n rings fit FB_NODE_BUDGET (1 MiB up to 16 ranks), and none
 * (only the slots, as much shared memory as before rings existed) once
 * they would be smaller than one largest message (46 ranks on). */
static size_t fastbox_ring_bytes(int n, bool report)
{
    size_t want = (size_t)lmpi_config.shm_fastbox_ring, b;
    if (want == 0) {
        for (b = FB_RING_DEFAULT; b >= FB_RING_MIN && (size_t)n * n * b > FB_NODE_BUDGET; b /= 2)
            ;
        return b >= FB_RING_MIN ? b : 0;
    }
    for (b = FB_RING_MIN; b * 2 <= want && b < FB_RING_MAX; b *= 2)
        ;
    if (b != want && report)
        fprintf(stderr, "LeanMPI: LMPI_SHM_FASTBOX_RING=%zu is not a power of two from %d to %d; using %zu\n", want,
                FB_RING_MIN, FB_RING_MAX, b);
    return b;
}

static uint64_t cell_offset(int owner, uint32_t i)
{
    return shm.hdr->off_cells + ((uint64_t)owner * shm.hdr->ncells + i) * CELL_SIZE;
}

static uint32_t cells_per_rank(int n)
{
    if (lmpi_config.shm_cells > 0)
        return (uint32_t)lmpi_config.shm_cells;
    /* 64 cells (1 MiB) per rank keeps a few deep pipelines busy; beyond 64 ranks
     * the segment would grow quadratically in use, so shrink toward 16. */
    uint32_t c = n <= 64 ? 64 : (uint32_t)(4096 / n);
    return c < 16 ? 16 : c;
}

static void layout(seg_header *h, int n)
{
    h->nranks = (uint32_t)n;
    h->ncells = cells_per_rank(n);
    h->bitmap_words = (uint32_t)((n + 63) / 64);
    size_t off = align_up(LMPI_NOTICE_OFFSET + lmpi_notice_bytes(n), 4096);
    h->off_ranks = off;
    off = align_up(off + (size_t)n * sizeof(rank_area), 64);
    long ncpus = sysconf(_SC_NPROCESSORS_CONF);
    h->ncpus = ncpus > 0 ? (uint32_t)ncpus : 1;
    h->off_cpu_slots = off;
    off = align_up(off + (size_t)h->ncpus * sizeof(uint32_t), 64);
    h->off_bitmaps = off;
    off = align_up(off + (size_t)n * align_up((size_t)h->bitmap_words * 8, 64), 64);
    h->off_throttle = off; /* apart from the bitmaps: those lines change with every message */
    off = align_up(off + (size_t)n * align_up((size_t)h->bitmap_words * 8, 64), 4096);
    size_t ring = fastbox_ring_bytes(n, false);
    h->fb_units = (uint32_t)(ring / FB_UNIT);
    h->off_fb_tails = off; /* (read positions only where there are rings) */
    if (ring)
        off = align_up(off + (size_t)n * align_up((size_t)n * sizeof(uint32_t), 64), 4096);
    h->off_fastboxes = off;
    off = align_up(off + (size_t)n * n * FB_SLOT, 4096);
    h->off_fb_rings = off;
    off = align_up(off + (size_t)n * n * ring, 4096);
    h->off_cells = off;
    off += (size_t)n * h->ncells * CELL_SIZE;
    h->pool_units = (uint64_t)n * (uint64_t)lmpi_config.shm_coll_pool / POOL_UNIT;
    h->off_pool_bits = off;
    off = align_up(off + (size_t)(h->pool_units + 63) / 64 * 8, 4096);
    h->off_pool = off;
    off += (size_t)h->pool_units * POOL_UNIT;
    h->size = align_up(off, 4096);
}

static void format_segment(void)
{
    seg_header *h = shm.hdr;
    rank_area *ra = (rank_area *)(shm.base + h->off_ranks);
    for (int r = 0; r < shm.n; r++) {
        lmpi_shmq_init(&ra[r].recvq);
        lmpi_shmq_init(&ra[r].freeq);
        for (uint32_t i = 0; i < h->ncells; i++) {
            uint64_t off = cell_offset(r, i);
            cell_header *c = (cell_header *)(shm.base + off);
            c->owner = (uint32_t)r;
            lmpi_shmq_enqueue(&ra[r].freeq, shm.base, off);
        }
    }
    atomic_store_explicit(&h->attached, 0, memory_order_relaxed);
    lmpi_notice *nb = lmpi_notice_of(shm.base);
    nb->world = (uint32_t)shm.n;
    nb->nwords = (uint32_t)shm.n;
    nb->off_words = h->off_ranks + offsetof(rank_area, sleep);
    nb->word_stride = sizeof(rank_area);
    atomic_thread_fence(memory_order_release);
    nb->magic = LMPI_NOTICE_MAGIC;
    h->magic = SEG_MAGIC;
}

/* The PMI key under which a node's first rank publishes the segment's name. */
static const char *segment_key(int leader, char *key, size_t len)
{
    snprintf(key, len, "lmpi-shm-%d", leader);
    return key;
}

/* The segment's file: the memfd our mpiexec gave every rank (no name at
 * all), or, under other launchers and for singletons, a new name with a
 * random part that rank 0 creates exclusively and publishes through PMI. */
static lmpi_status segment_fd(int me, int leader, const char *job, int *fd, char *name, size_t len)
{
    name[0] = '\0';
    const char *inherited = getenv("LMPI_SHM_FD");
    if (inherited) {
        struct stat st;
        if (lmpi_pmi_parse_int(inherited, 0, INT_MAX, fd) != 0 || fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != geteuid()) {
            lmpi_err_detail("LMPI_SHM_FD=%s is not a shared-memory file of this user", inherited);
            return LMPI_ERR_OTHER;
        }
        fcntl(*fd, F_SETFD, FD_CLOEXEC); /* (start_runtime unsets the variable) */
        if (me == leader && ftruncate(*fd, (off_t)shm.size) != 0) {
            lmpi_err_detail("cannot size the shared-memory segment to %zu bytes: %s", shm.size, strerror(errno));
            return LMPI_ERR_NO_MEM;
        }
        return LMPI_OK;
    }
    if (me != leader)
        return LMPI_OK; /* opened by name after the barrier */
    unsigned char rnd[8];
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
        lmpi_err_detail("cannot read random bytes for the shared-memory segment's name: %s", strerror(errno));
        return LMPI_ERR_OTHER;
    }
    int k = snprintf(name, len, "/lmpi-%s-", job);
    for (size_t i = 0; i < sizeof(rnd) && k + 3 < (int)len; i++)
        k += snprintf(name + k, len - (size_t)k, "%02x", rnd[i]);
    *fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW, 0600);
    if (*fd < 0) {
        lmpi_err_detail(errno == EEXIST ? "the shared-memory name %s is taken: another process created it first"
                                        : "cannot create shared-memory segment %s: %s",
                        name, strerror(errno));
        return LMPI_ERR_OTHER;
    }
    if (ftruncate(*fd, (off_t)shm.size) != 0) {
        lmpi_err_detail("cannot size shared-memory segment %s to %zu bytes: %s", name, shm.size, strerror(errno));
        close(*fd);
        shm_unlink(name);
        return LMPI_ERR_NO_MEM;
    }
    return LMPI_OK; /* its name is published once the segment is formatted */
}

int lmpi_shm_open_ours(const char *name, size_t min_size, size_t *size)
{
    int fd = shm_open(name, O_RDWR | O_NOFOLLOW, 0600);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
                    (size_t)st.st_size < min_size)) {
        close(fd);
        errno = EACCES;
        return -1;
    }
    if (fd >= 0 && size)
        *size = (size_t)st.st_size;
    return fd;
}

/* Ranks other than the node's first under a launcher without memfd: the
 * name the first published, and only an object of ours. */
static lmpi_status open_named(int leader, char *name, size_t len, int *fd)
{
    char key[32];
    if (lmpi_pmi_get_from(leader, segment_key(leader, key, sizeof(key)), name, len) != 0 ||
        strncmp(name, "/lmpi-", 6) != 0) {
        lmpi_err_detail("the process manager does not know the shared-memory segment's name");
        return LMPI_ERR_OTHER;
    }
    *fd = lmpi_shm_open_ours(name, shm.size, NULL);
    if (*fd < 0) {
        lmpi_err_detail(errno == EACCES ? "shared-memory segment %s belongs to another user, is open to others or "
                                          "is too small: not attached"
                                        : "cannot open shared-memory segment %s: %s",
                        name, strerror(errno));
        return LMPI_ERR_OTHER;
    }
    return LMPI_OK;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels refuse it (EINVAL) */
#endif

/* Fault the collectives' pool into this process's page tables now.  A
 * communicator's first collective takes its area from the pool and clears
 * it, and the members write their lines: on a virtual machine every page
 * seen for the first time costs several microseconds, paid inside that
 * first collective while its members wait on one another (20 KiB for 3
 * ranks: 25-47 us, docs/performance.md, session 63).  The pool is 64 KiB
 * per local rank (LMPI_SHM_COLL_POOL) and areas are taken first fit, so
 * the first POOL_PREFAULT_MAX bytes serve the first few communicators;
 * the whole pool would cost every process of a 256-rank node 16 MiB of
 * mappings at start-up (about 1 us a page here).  A kernel without the
 * advice leaves the faults where they were. */
static void populate_pool(void)
{
    size_t bytes = (size_t)shm.hdr->pool_units * POOL_UNIT;
    if (bytes > POOL_PREFAULT_MAX)
        bytes = POOL_PREFAULT_MAX;
    if (bytes)
        (void)madvise(shm.base + shm.hdr->off_pool, bytes, MADV_POPULATE_WRITE);
}

lmpi_status lmpi_shm_init(int me, int n, int leader, int nlocal, const char *job)
{
    char name[320];
    seg_header probe;
    memset(&probe, 0, sizeof(probe));
    layout(&probe, n);
    shm.me = me;
    shm.n = n;
    lmpi_bridge_init(n);
    shm.size = probe.size;
    int fd = -1;
    lmpi_status st = segment_fd(me, leader, job, &fd, name, sizeof(name));
    if (st != LMPI_OK)
        return st;
    if (me == leader) {
        shm.base = mmap(NULL, shm.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (shm.base == MAP_FAILED) {
            if (name[0])
                shm_unlink(name);
            lmpi_err_detail("cannot map shared-memory segment: %s", strerror(errno));
            return LMPI_ERR_NO_MEM;
        }
        shm.hdr = (seg_header *)shm.base;
        *shm.hdr = probe;
        format_segment();
        /* Published only now: under PMI-2 (Hydra) the barrier below is a
         * fence of the key-value space, not a barrier, and a rank may read
         * the name as soon as it is put. */
        char key[32];
        if (name[0] && nlocal > 1 && lmpi_pmi_put(segment_key(leader, key, sizeof(key)), name) != 0) {
            lmpi_err_detail("cannot publish the shared-memory segment's name through the process manager");
            munmap(shm.base, shm.size);
            shm_unlink(name);
            return LMPI_ERR_OTHER;
        }
    }
    if (n > 1 && lmpi_pmi_barrier() != 0) {
        lmpi_err_detail("process manager barrier failed during shared-memory setup");
        return LMPI_ERR_OTHER;
    }
    if (me != leader) {
        if (fd < 0 && (st = open_named(leader, name, sizeof(name), &fd)) != LMPI_OK)
            return st;
        struct stat fs;
        if (fstat(fd, &fs) != 0 || (size_t)fs.st_size != shm.size) {
            close(fd);
            lmpi_err_detail("shared-memory segment %s is not the %zu bytes rank %d made", name[0] ? name : "(memfd)",
                            shm.size, leader);
            return LMPI_ERR_INTERN;
        }
        shm.base = mmap(NULL, shm.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (shm.base == MAP_FAILED) {
            lmpi_err_detail("cannot map shared-memory segment: %s", strerror(errno));
            return LMPI_ERR_NO_MEM;
        }
        shm.hdr = (seg_header *)shm.base;
        if (shm.hdr->magic != SEG_MAGIC || shm.hdr->nranks != (uint32_t)n) {
            lmpi_err_detail("shared-memory segment %s has a foreign layout", name[0] ? name : "(memfd)");
            return LMPI_ERR_INTERN;
        }
    }
    populate_pool();
    shm.ranks = (rank_area *)(shm.base + shm.hdr->off_ranks);
    atomic_store(&shm.ranks[me].pid, (int32_t)getpid());
    lmpi_wait_attach_node(&shm.ranks[me].sleep, &shm.hdr->word_sleepers, sleep_word_of, wait_cond_of, n, me, shm.base,
                          shm.size);
    lmpi_wait_attach_cpus(&shm.ranks[me].wait_cpu, wait_cpu_of,
                          (_Atomic uint32_t *)(shm.base + shm.hdr->off_cpu_slots), (int)shm.hdr->ncpus, me);
    if (atomic_fetch_add(&shm.hdr->attached, 1) + 1 == (uint32_t)nlocal && name[0])
        shm_unlink(name); /* everyone is in: the name is no longer needed */

    shm.send_seq = lmpi_calloc((size_t)n, sizeof(uint32_t), LMPI_MEM_SHM);
    shm.recv_seq = lmpi_calloc((size_t)n, sizeof(uint32_t), LMPI_MEM_SHM);
    shm.fb_head = lmpi_calloc((size_t)n, sizeof(uint32_t), LMPI_MEM_SHM);
    shm.fb_seen_tail = lmpi_calloc((size_t)n, sizeof(uint32_t), LMPI_MEM_SHM);
    shm.fb_tail = lmpi_calloc((size_t)n, sizeof(uint32_t), LMPI_MEM_SHM);
    shm.fb_ring_run = lmpi_calloc((size_t)n, sizeof(uint8_t), LMPI_MEM_SHM);
    shm.held = lmpi_calloc((size_t)n, sizeof(uint64_t), LMPI_MEM_SHM);
    if (!shm.send_seq || !shm.recv_seq || !shm.fb_head || !shm.fb_seen_tail || !shm.fb_tail || !shm.fb_ring_run ||
        !shm.held)
        return LMPI_ERR_NO_MEM;
    shm.fb_units = shm.hdr->fb_units;
    shm.fb_mask = shm.fb_units - 1;
    shm.ring_bytes = (size_t)shm.fb_units * FB_UNIT;
    shm.slot_row = fastbox_slot_at(me, 0);
    shm.slot_column = fastbox_slot_at(0, me);
    shm.ring_row = fastbox_ring_at(me, 0);
    shm.ring_column = fastbox_ring_at(0, me);
    shm.fb_my_tails = fastbox_tail(me, 0);
    if (me == leader)
        (void)fastbox_ring_bytes(n, true); /* says once per node when LMPI_SHM_FASTBOX_RING was adjusted */
    shm.eager_max = (size_t)lmpi_config.shm_eager_max;
    if (shm.eager_max > CELL_PAYLOAD)
        shm.eager_max = CELL_PAYLOAD;
    shm.fb_max = lmpi_config.shm_fastbox ? (size_t)lmpi_config.shm_fastbox_max : 0;
    if (shm.fb_max > FB_PAYLOAD)
        shm.fb_max = FB_PAYLOAD;
    shm.cma = lmpi_config.shm_cma != 0;
    shm.held_high = (uint64_t)shm.hdr->ncells * CELL_PAYLOAD;
    shm.held_low = shm.held_high / 4;
    shm.my_bitmap = bitmap_of(me);
    shm.bitmap_words = shm.hdr->bitmap_words;
    shm.my_recvq = &shm.ranks[me].recvq;
    shm.scan_fastboxes = n <= lmpi_config.shm_fastbox_scan;
    /* Yama's ptrace_scope=1 only lets ancestors read our memory; our peers
     * are siblings, so allow any process of ours to attach. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    /* This process's share of the segment: its cells, its fast-box row and
     * its queues. */
    shm.accounted = (int64_t)(shm.size / (size_t)nlocal);
    lmpi_mem_account(LMPI_MEM_SHM, shm.accounted);
    return LMPI_OK;
}

bool lmpi_tr_sleep_needs_retry(void) { return shm.bridge && lmpi_bridge_waiting_for_cell(); }

lmpi_status lmpi_shm_bridge_open(const char *kvsname, int rank)
{
    lmpi_status st = lmpi_bridge_open(kvsname, rank);
    shm.bridge = st == LMPI_OK;
    return st;
}

static _Thread_local char *bounce_mem; /* cma_step's bounce buffer (below) */

void lmpi_shm_finalize(void)
{
    lmpi_wait_kick(); /* what this process wrote last may be awaited */
    lmpi_wait_detach();
    lmpi_bridge_close();
    if (shm.base && shm.base != MAP_FAILED)
        munmap(shm.base, shm.size);
    lmpi_free(shm.send_seq);
    lmpi_free(shm.recv_seq);
    lmpi_free(shm.fb_head);
    lmpi_free(shm.fb_seen_tail);
    lmpi_free(shm.fb_tail);
    lmpi_free(shm.fb_ring_run);
    lmpi_free(shm.held);
    lmpi_free(bounce_mem); /* this thread's; others' go with the process */
    bounce_mem = NULL;
    lmpi_mem_account(LMPI_MEM_SHM, -shm.accounted);
    memset(&shm, 0, sizeof(shm));
}

/* ---- the collectives' pool ---------------------------------------------------- */

static void pool_lock(void)
{
    while (atomic_exchange_explicit(&shm.hdr->pool_lock, 1, memory_order_acquire))
        sched_yield();
}

static void pool_unlock(void) { atomic_store_explicit(&shm.hdr->pool_lock, 0, memory_order_release); }

static bool unit_taken(const uint64_t *bits, uint64_t u) { return bits[u / 64] >> (u % 64) & 1; }

static void mark_units(uint64_t *bits, uint64_t first, uint64_t n, bool taken)
{
    for (uint64_t u = first; u < first + n; u++)
        if (taken)
            bits[u / 64] |= (uint64_t)1 << (u % 64);
        else
            bits[u / 64] &= ~((uint64_t)1 << (u % 64));
}

uint64_t lmpi_shm_pool_alloc(size_t bytes)
{
    if (!shm.hdr || bytes == 0)
        return 0;
    uint64_t need = (bytes + POOL_UNIT - 1) / POOL_UNIT, run = 0, off = 0;
    uint64_t *bits = (uint64_t *)(shm.base + shm.hdr->off_pool_bits);
    pool_lock();
    for (uint64_t u = 0; u < shm.hdr->pool_units; u++) {
        run = unit_taken(bits, u) ? 0 : run + 1;
        if (run == need) {
            mark_units(bits, u + 1 - need, need, true);
            off = shm.hdr->off_pool + (u + 1 - need) * POOL_UNIT;
            break;
        }
    }
    pool_unlock();
    if (off)
        memset(shm.base + off, 0, (size_t)need * POOL_UNIT);
    return off;
}

void lmpi_shm_pool_free(uint64_t off, size_t bytes)
{
    if (!off || !shm.hdr)
        return;
    uint64_t *bits = (uint64_t *)(shm.base + shm.hdr->off_pool_bits);
    pool_lock();
    mark_units(bits, (off - shm.hdr->off_pool) / POOL_UNIT, (bytes + POOL_UNIT - 1) / POOL_UNIT, false);
    pool_unlock();
}

void *lmpi_shm_at(uint64_t off) { return shm.base + off; }

size_t lmpi_shm_segment_size(void)
{
    return shm.size;
}

const lmpi_notice *lmpi_shm_notice(void)
{
    return shm.base && shm.base != MAP_FAILED ? lmpi_notice_of(shm.base) : NULL;
}

/* ---- flow control --------------------------------------------------------
 * An eager message that finds no receive posted is copied out of its cell
 * into the receiver's memory, and the cell goes back to its sender at once:
 * a sender that runs ahead of its receiver (the leaves of a reduction that
 * return as soon as their data is in a cell, a producer feeding a slower
 * consumer) is never held back, and the receiver's memory grows without
 * bound.  Measured: MPI_Reduce of 16 KiB in a loop at 8 ranks on 2 cores
 * left 240 MB at the root after 20000 calls (Open MPI, whose eager limit is
 * 4 KiB, stays at 16 MB), and the page faults of that growth cost more than
 * the reductions.
 *
 * So the receiver counts the bytes of each sender's unexpected eager
 * messages it holds.  Past a whole cell ring's worth (held_high: what the
 * sender could have in flight anyway) it sets the sender's bit in its row of
 * the throttle table, and the sender sends what exceeds LMPI_EAGER_ALWAYS
 * (4 KiB) as a rendezvous (RTS; the receiver pulls the data once a receive
 * matches it), which waits for the receiver: the run-ahead stops there.
 * The bit is cleared once the receiver is down to a quarter of that.
 * Either protocol is correct at any time, so a stale bit costs speed, never
 * a message.  Messages up to 4 KiB stay eager: a program that relies on
 * their buffering runs on Open MPI (its eager limit) and must not block
 * here, so for them the receiver's memory is still unbounded. */
bool lmpi_shm_eager_ok(int dest, size_t bytes)
{
    if (bytes <= LMPI_EAGER_ALWAYS)
        return bytes <= shm.eager_max;
    if (bytes > shm.eager_max)
        return false;
    if ((unsigned)dest >= (unsigned)shm.n)
        return true; /* a bridge peer (another group's process) */
    uint64_t word = atomic_load_explicit(&throttle_of(dest)[shm.me / 64], memory_order_relaxed);
    return !(word >> (shm.me % 64) & 1);
}

void lmpi_shm_held(int src, int64_t delta)
{
    if ((unsigned)src >= (unsigned)shm.n || !shm.held)
        return;
    uint64_t was = shm.held[src], now = (uint64_t)((int64_t)was + delta);
    shm.held[src] = now;
    _Atomic uint64_t *word = &throttle_of(shm.me)[src / 64];
    uint64_t bit = (uint64_t)1 << (src % 64);
    /* (only this rank writes its row; senders read it, so it is written
     * only when the answer changes) */
    if (was < shm.held_high && now >= shm.held_high)
        atomic_fetch_or_explicit(word, bit, memory_order_relaxed);
    else if (was > shm.held_low && now <= shm.held_low && (atomic_load_explicit(word, memory_order_relaxed) & bit))
        atomic_fetch_and_explicit(word, ~bit, memory_order_relaxed);
}

size_t lmpi_shm_max_payload(void)
{
    return CELL_PAYLOAD;
}

/* ---- emulated links between emulated nodes ------------------------------
 * LMPI_VNODE_LINK gives the virtual nodes of one machine (LMPI_NODE_SIZE,
 * mpiexec --network) a network: every message that leaves a node holds its
 * node's uplink for latency + bytes / bandwidth, and its sender waits until
 * its turn on the link has passed.  One uplink per node, shared by the
 * node's ranks (a NIC), kept in the first rank's area.  Only for
 * experiments (reordering's effect, docs/performance.md); off by default. */
static struct {
    bool on;
    int *node_of, *leader; /* per local rank: its node, and its node's first rank */
    double lat_ns, ns_per_byte;
} elink;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void lmpi_shm_emulate_links(const int *node_of, int n, double lat_us, double gbytes_per_s)
{
    elink.node_of = lmpi_malloc(sizeof(int) * (size_t)n, LMPI_MEM_SHM);
    elink.leader = lmpi_malloc(sizeof(int) * (size_t)n, LMPI_MEM_SHM);
    if (!elink.node_of || !elink.leader || gbytes_per_s <= 0)
        return;
    for (int r = 0; r < n; r++) {
        elink.node_of[r] = node_of[r];
        elink.leader[r] = r;
        for (int q = 0; q < r; q++)
            if (node_of[q] == node_of[r]) {
                elink.leader[r] = q;
                break;
            }
    }
    elink.lat_ns = lat_us * 1e3;
    elink.ns_per_byte = 1.0 / gbytes_per_s;
    elink.on = true;
}

static void link_hold(uint64_t bytes)
{
    _Atomic uint64_t *free = &shm.ranks[elink.leader[shm.me]].link_free;
    uint64_t cost = (uint64_t)(elink.lat_ns + (double)bytes * elink.ns_per_byte), now = now_ns();
    uint64_t old = atomic_load(free), end;
    do
        end = (old > now ? old : now) + cost;
    while (!atomic_compare_exchange_weak(free, &old, end));
    while (now_ns() < end)
        sched_yield();
}

/* The payload is copied, or written by `fill` straight into the slot, ring
 * record or cell (a non-contiguous type packs there: no intermediate copy);
 * one of fill and payload is given. */
static inline void write_payload(char *dst, const void *payload, size_t len, lmpi_pkt_fill fill, void *arg)
{
    if (len && fill)
        fill(dst, len, arg);
    else if (len && payload)
        memcpy(dst, payload, len);
}

/* Writes a record into dest's fast box if the ring has room for it (and
 * for a skip record when it does not fit before the ring's end). */
static inline bool fastbox_put(int dest, uint32_t seq, const lmpi_pkt_hdr *hdr, const void *payload, size_t len,
                               lmpi_pkt_fill fill, void *arg)
{
    bool compact = hdr->type == LMPI_PKT_EAGER && !(hdr->flags & LMPI_PKT_SYNC) && !hdr->tr && !hdr->rreq &&
                   !hdr->addr && hdr->len == len;
    size_t head_bytes = compact ? sizeof(fastbox_compact) : sizeof(fastbox_whole);
    uint32_t need = (uint32_t)((head_bytes + len + FB_UNIT - 1) / FB_UNIT);
    uint32_t head = shm.fb_head[dest], pos = head & shm.fb_mask;
    uint32_t skip = pos + need > shm.fb_units ? shm.fb_units - pos : 0;
    if (head + skip + need - shm.fb_seen_tail[dest] > shm.fb_units) {
        /* acquire: the receiver is done with the units it says it has read */
        shm.fb_seen_tail[dest] = atomic_load_explicit(fastbox_tail(dest, shm.me), memory_order_acquire);
        if (head + skip + need - shm.fb_seen_tail[dest] > shm.fb_units)
            return false;
    }
    char *ring = shm.ring_column + (size_t)dest * shm.n * shm.ring_bytes;
    fastbox_record *r = (fastbox_record *)(ring + (size_t)pos * FB_UNIT);
    if (skip) {
        r->len = FB_SKIP;
        r->units = (uint8_t)skip;
        atomic_store_explicit(&r->mark, fastbox_mark(head), memory_order_release);
        head += skip;
        r = (fastbox_record *)ring;
    }
    r->len = (uint16_t)len;
    r->units = (uint8_t)need;
    r->whole = !compact;
    r->seq = (uint16_t)seq;
    r->type = hdr->type;
    r->flags = hdr->flags;
    r->ctx = hdr->ctx;
    if (compact) {
        fastbox_compact *c = (fastbox_compact *)r;
        c->rank = hdr->rank;
        c->tag = hdr->tag;
        lmpi_tr_eager_key = LMPI_TR_KEY_SEQ | seq;
    } else
        ((fastbox_whole *)r)->hdr = *hdr;
    write_payload((char *)r + head_bytes, payload, len, fill, arg);
    atomic_store_explicit(&r->mark, fastbox_mark(head), memory_order_release);
    shm.fb_head[dest] = head + need;
    return true;
}

uint32_t lmpi_shm_fastbox_head(int dest, uint32_t *ring_units)
{
    *ring_units = shm.fb_units;
    return shm.fb_head[dest];
}

/* Into dest's slot, else its ring, else a cell (LMPI_ERR_PENDING: no cell
 * free). */
static inline lmpi_status send_core(int dest, const lmpi_pkt_hdr *hdr, const void *payload, size_t len,
                                    lmpi_pkt_fill fill, void *arg)
{
    uint32_t seq = shm.send_seq[dest];
    if (len <= shm.fb_max) {
        fastbox_slot *fb = (fastbox_slot *)(shm.slot_column + (size_t)dest * shm.n * FB_SLOT);
        /* A sender that runs ahead finds the slot full: the receiver has not
         * read it yet.  Looking costs a cache miss on a line the receiver
         * writes (a third of a streaming send's time), so after finding it
         * full the next FB_RING_RUN sends go to the ring without looking.  A
         * ping-pong always finds the slot empty and never skips it. */
        if (shm.fb_ring_run[dest] && shm.fb_units && fastbox_put(dest, seq, hdr, payload, len, fill, arg))
            shm.fb_ring_run[dest]--;
        else if (!atomic_load_explicit(&fb->full, memory_order_acquire)) {
            fb->seq = seq;
            fb->len = (uint32_t)len;
            fb->hdr = *hdr;
            write_payload((char *)fb + FB_SLOT_HDR, payload, len, fill, arg);
            atomic_store_explicit(&fb->full, 1, memory_order_release);
        } else if (shm.fb_units && fastbox_put(dest, seq, hdr, payload, len, fill, arg))
            shm.fb_ring_run[dest] = FB_RING_RUN;
        else
            goto cell;
        if (!shm.scan_fastboxes)
            atomic_fetch_or_explicit(&bitmap_of(dest)[shm.me / 64], 1ull << (shm.me % 64), memory_order_release);
        shm.send_seq[dest] = seq + 1;
        lmpi_wait_notify(&shm.ranks[dest].sleep);
        return LMPI_OK;
    }
cell:
    /* (the test costs a predicted branch on a pointer loaded anyway; without
     * it, in a program that never opens the segment, link-time optimization
     * sees only the NULL of shm.ranks here and warns) */
    if (LMPI_UNLIKELY(!shm.ranks))
        return LMPI_ERR_INTERN;
    rank_area *mine = &shm.ranks[shm.me];
    uint64_t off = lmpi_shmq_dequeue(&mine->freeq, shm.base);
    if (LMPI_UNLIKELY(off == 0)) {
        /* Ask for a wake-up, then look once more: a cell handed back before
         * the receiver could see the flag is found here (fences on both
         * sides).  Only this rank clears the flag, once it has a cell. */
        atomic_store_explicit(&mine->wants_cell, 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_seq_cst);
        if ((off = lmpi_shmq_dequeue(&mine->freeq, shm.base)) == 0)
            return LMPI_ERR_PENDING;
    }
    if (LMPI_UNLIKELY(atomic_load_explicit(&mine->wants_cell, memory_order_relaxed)))
        atomic_store_explicit(&mine->wants_cell, 0, memory_order_relaxed);
    cell_header *c = (cell_header *)(shm.base + off);
    c->src = (uint32_t)shm.me;
    c->seq = seq;
    c->len = (uint32_t)len;
    c->hdr = *hdr;
    write_payload((char *)c + CELL_HDR, payload, len, fill, arg);
    lmpi_shmq_enqueue(&shm.ranks[dest].recvq, shm.base, off);
    shm.send_seq[dest] = seq + 1;
    lmpi_wait_notify(&shm.ranks[dest].sleep);
    return LMPI_OK;
}

/* A message leaving an emulated node pays its link after it is handed over
 * (a send retried for want of a cell pays once). */
static inline lmpi_status send_linked(int dest, const lmpi_pkt_hdr *hdr, const void *payload, size_t len,
                                      lmpi_pkt_fill fill, void *arg)
{
    lmpi_status st = send_core(dest, hdr, payload, len, fill, arg);
    if (LMPI_UNLIKELY(elink.on) && st == LMPI_OK && (hdr->type == LMPI_PKT_EAGER || hdr->type == LMPI_PKT_RTS) &&
        dest < shm.n && elink.node_of[dest] != elink.node_of[shm.me])
        link_hold(hdr->len);
    return st;
}

/* Destinations past this node's ranks (or negative) go to the bridge. */
lmpi_status lmpi_shm_send_pkt(int dest, const lmpi_pkt_hdr *hdr, const void *payload, size_t len)
{
    if (LMPI_UNLIKELY((unsigned)dest >= (unsigned)shm.n))
        return lmpi_bridge_send(dest, hdr, payload, len, NULL, NULL);
    return send_linked(dest, hdr, payload, len, NULL, NULL);
}

lmpi_status lmpi_shm_send_pkt_fill(int dest, const lmpi_pkt_hdr *hdr, size_t len, lmpi_pkt_fill fill, void *arg)
{
    if (LMPI_UNLIKELY((unsigned)dest >= (unsigned)shm.n))
        return lmpi_bridge_send(dest, hdr, NULL, len, fill, arg);
    return send_linked(dest, hdr, NULL, len, fill, arg);
}

/* Clears the first word of every unit of a consumed record but its first:
 * they held header words or payload, which a later lap's record may start
 * on, and stale bytes there must never read as that record's mark.  (The
 * first unit holds an older lap's mark, which differs.)  Done before the
 * read position is published, so before the sender may write there again. */
static void forget_units(fastbox_record *r)
{
    for (uint32_t i = 1; i < r->units; i++)
        atomic_store_explicit(&((fastbox_record *)((char *)r + (size_t)i * FB_UNIT))->mark, 0, memory_order_relaxed);
}

/* Whether the unit at src's ring read position holds a record (or a skip):
 * one load, inlined in the poll loop. */
static inline bool fastbox_ring_news(int src)
{
    if (!shm.fb_units)
        return false;
    uint32_t tail = shm.fb_tail[src];
    const fastbox_record *r =
        (const fastbox_record *)(shm.ring_row + (size_t)src * shm.ring_bytes + (size_t)(tail & shm.fb_mask) * FB_UNIT);
    return atomic_load_explicit(&r->mark, memory_order_relaxed) == fastbox_mark(tail);
}

/* The next record of src's ring, past any skip; NULL: none written yet. */
static fastbox_record *fastbox_next(int src)
{
    if (!shm.fb_units)
        return NULL;
    char *ring = shm.ring_row + (size_t)src * shm.ring_bytes;
    for (;;) {
        uint32_t tail = shm.fb_tail[src];
        fastbox_record *r = (fastbox_record *)(ring + (size_t)(tail & shm.fb_mask) * FB_UNIT);
        if (atomic_load_explicit(&r->mark, memory_order_acquire) != fastbox_mark(tail))
            return NULL;
        if (r->len != FB_SKIP)
            return r;
        forget_units(r);
        shm.fb_tail[src] = tail + r->units;
    }
}

static fastbox_slot *slot_of(int src)
{
    return (fastbox_slot *)(shm.slot_row + (size_t)src * FB_SLOT);
}

static void deliver_slot(int src, fastbox_slot *fb)
{
    lmpi_tr_deliver(src, &fb->hdr, (char *)fb + FB_SLOT_HDR, fb->len);
    shm.recv_seq[src]++;
    atomic_store_explicit(&fb->full, 0, memory_order_release);
}

static void deliver_record(int src, fastbox_record *r)
{
    if (r->whole)
        lmpi_tr_deliver(src, &((fastbox_whole *)r)->hdr, (char *)r + sizeof(fastbox_whole), r->len);
    else {
        const fastbox_compact *c = (const fastbox_compact *)r;
        lmpi_pkt_hdr h = {.type = r->type, .flags = r->flags, .rank = c->rank, .tag = c->tag, .ctx = r->ctx,
                          .len = r->len, .sreq = LMPI_TR_KEY_SEQ | shm.recv_seq[src]};
        lmpi_tr_deliver(src, &h, (char *)r + sizeof(fastbox_compact), r->len);
    }
    shm.recv_seq[src]++;
    forget_units(r);
    shm.fb_tail[src] += r->units;
}

/* Delivers the next packet of src if its slot or ring holds it (true). */
static bool fastbox_deliver_next(int src, bool *ahead)
{
    fastbox_slot *fb = slot_of(src);
    bool slot_full = atomic_load_explicit(&fb->full, memory_order_acquire);
    if (slot_full && fb->seq == shm.recv_seq[src]) {
        deliver_slot(src, fb);
        return true;
    }
    fastbox_record *r = fastbox_next(src);
    if (r && r->seq == (uint16_t)shm.recv_seq[src]) {
        deliver_record(src, r);
        return true;
    }
    if (r || slot_full)
        *ahead = true;
    return false;
}

/* Delivers src's fast-box packets while they are next in order, then tells
 * src how far it has read the ring (release: after the payloads were
 * consumed).  *ahead: one waits for older packets still in the queue. */
static int drain_fastbox(int src, bool *ahead)
{
    uint32_t start = shm.fb_tail[src];
    int events = 0;
    while (fastbox_deliver_next(src, ahead))
        events++;
    if (shm.fb_tail[src] != start)
        atomic_store_explicit(&shm.fb_my_tails[src], shm.fb_tail[src], memory_order_release);
    return events;
}

static void deliver_cell(uint64_t off)
{
    cell_header *c = (cell_header *)(shm.base + off);
    int src = (int)c->src;
    while (c->seq != shm.recv_seq[src]) {
        /* The packets before this one are in src's fast box (written before
         * the cell was queued, so they are there already). */
        bool ahead = false;
        uint32_t start = shm.fb_tail[src];
        if (!fastbox_deliver_next(src, &ahead)) {
            sched_yield();
            continue;
        }
        if (shm.fb_tail[src] != start)
            atomic_store_explicit(&shm.fb_my_tails[src], shm.fb_tail[src], memory_order_release);
    }
    lmpi_tr_deliver(src, &c->hdr, (char *)c + CELL_HDR, c->len);
    shm.recv_seq[src]++;
    uint32_t owner = c->owner;
    lmpi_shmq_enqueue(&shm.ranks[owner].freeq, shm.base, off);
    /* wake the owner only if it waits for a cell: a sleeping owner's
     * wake-up costs ~10 us on a busy node, for every message */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&shm.ranks[owner].wants_cell, memory_order_relaxed))
        lmpi_wait_notify(&shm.ranks[owner].sleep);
}

/* The fast boxes of the row, read directly (few local ranks). */
static int poll_fastbox_row(void)
{
    int events = 0;
    bool ahead = false; /* (older packets of a sender are still queued: the queue comes next) */
    for (int src = 0; src < shm.n; src++) {
        /* a lone message (a ping-pong) takes the shortest path: its delivery
         * ends the poll's work for src, the ring is looked at next time */
        fastbox_slot *fb = slot_of(src);
        if (atomic_load_explicit(&fb->full, memory_order_acquire) && fb->seq == shm.recv_seq[src]) {
            deliver_slot(src, fb);
            events++;
        } else if (fastbox_ring_news(src))
            events += drain_fastbox(src, &ahead);
    }
    return events;
}

int lmpi_shm_poll(void)
{
    int events = LMPI_UNLIKELY(shm.bridge) ? lmpi_bridge_poll() : 0;
    if (shm.scan_fastboxes) {
        events += poll_fastbox_row();
        goto queue;
    }
    _Atomic uint64_t *bm = shm.my_bitmap;
    for (uint32_t w = 0; w < shm.bitmap_words; w++) {
        if (!atomic_load_explicit(&bm[w], memory_order_relaxed))
            continue;
        uint64_t bits = atomic_exchange_explicit(&bm[w], 0, memory_order_acquire);
        uint64_t later = 0;
        while (bits) {
            int b = __builtin_ctzll(bits);
            bits &= bits - 1;
            int src = (int)(w * 64 + (uint32_t)b);
            bool ahead = false;
            events += drain_fastbox(src, &ahead);
            if (ahead)
                later |= 1ull << b; /* older packets of src are still queued */
        }
        if (later)
            atomic_fetch_or_explicit(&bm[w], later, memory_order_relaxed);
    }
queue:
    if (lmpi_shmq_empty(shm.my_recvq))
        return events;
    for (int i = 0; i < POLL_BATCH; i++) {
        uint64_t off = lmpi_shmq_dequeue(shm.my_recvq, shm.base);
        if (!off)
            break;
        deliver_cell(off);
        events++;
    }
    return events;
}

/* The process of transport index i: a rank of this node or a bridge peer. */
static pid_t peer_pid(int i)
{
    return i < shm.n ? atomic_load(&shm.ranks[i].pid) : lmpi_bridge_pid(i);
}

/* A rank copying a large receive of its own says so: a receiver then asks
 * it for no help (below), since its help would only slow its own copy.  When
 * both ranks of a pair receive large messages from each other, each core is
 * already busy, and a helper's chunk left the other side waiting for it
 * (bidirectional 4 MiB: 7.0-8.7 GB/s with help, 8.1-9.8 without). */
static inline void set_copying(bool on)
{
    if (LMPI_LIKELY(shm.ranks != NULL))
        atomic_store_explicit(&shm.ranks[shm.me].copying, on, memory_order_relaxed);
}

/* ---- cross-memory steps -------------------------------------------------
 * The kernel's copy runs five times slower when the destination sits 1-47
 * bytes past the source modulo a page (4K aliasing: 128 KiB in 230 against
 * 40 us on this AMD EPYC, docs/performance.md), which is where buffers from
 * lmpi_malloc (a 16-byte header) land against glibc's mmap'd ones: every
 * collective receiving into scratch from a user's large buffer.  Such a step
 * goes through a bounce buffer half a page away from the remote side,
 * BOUNCE_BYTES at a time; glibc's memcpy does the local half unharmed. */
#define ALIAS_WINDOW 48
#define BOUNCE_BYTES (64u << 10) /* bounce_mem: this + two pages, made at first use */

static bool cma_aliases(uintptr_t dst, uintptr_t src)
{
    uintptr_t d = (dst - src) & 4095;
    return d != 0 && d < ALIAS_WINDOW;
}

static char *bounce_near(uint64_t remote)
{
    if (!bounce_mem && !(bounce_mem = lmpi_malloc(BOUNCE_BYTES + 8192, LMPI_MEM_SHM)))
        return NULL; /* then the slow copy */
    uintptr_t page = ((uintptr_t)bounce_mem + 4095) & ~(uintptr_t)4095;
    return (char *)(page + ((remote + 2048) & 4095));
}

/* One process_vm_readv (write: writev) of at most len bytes between local
 * and remote in pid; its result. */
static ssize_t cma_step(pid_t pid, char *local, uint64_t remote, size_t len, bool write)
{
    uintptr_t dst = write ? (uintptr_t)remote : (uintptr_t)local, src = write ? (uintptr_t)local : (uintptr_t)remote;
    char *via = NULL;
    if (len >= 4096 && cma_aliases(dst, src) && (via = bounce_near(remote)) != NULL) {
        len = len < BOUNCE_BYTES ? len : BOUNCE_BYTES;
        if (write)
            memcpy(via, local, len);
    }
    struct iovec l = {via ? via : local, len}, r = {(void *)(uintptr_t)remote, len};
    ssize_t got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (via && !write && got > 0)
        memcpy(local, via, (size_t)got);
    return got;
}

/* The kernel forbids cross-memory attach here: pt2pt streams from now on. */
static bool cma_refused(void) { return errno == EPERM || errno == ENOSYS || errno == EACCES; }

/* len bytes from remote in pid to local, step by step; 0, or -1 (then
 * shm.cma is off when the very first step was refused). */
static int pull_span(pid_t pid, uint64_t remote, char *local, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = cma_step(pid, local + done, remote + done, len - done, false);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (done == 0 && cma_refused())
                shm.cma = false;
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

int lmpi_shm_pull(int src, uint64_t remote_addr, void *local, size_t len)
{
    if (!shm.cma)
        return -1;
    set_copying(true);
    int rc = pull_span(peer_pid(src), remote_addr, local, len);
    set_copying(false);
    return rc;
}

/* Runs local[0..n) filled from remote_addr on: one process_vm_readv,
 * then run by run after a short read.  0, or -1. */
static int pull_runs(pid_t pid, uint64_t remote_addr, const struct iovec *local, int n)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += local[i].iov_len;
    if (len == 0)
        return 0;
    struct iovec r = {(void *)(uintptr_t)remote_addr, len};
    ssize_t got = process_vm_readv(pid, local, (unsigned long)n, &r, 1, 0);
    if (got == (ssize_t)len)
        return 0;
    if (got < 0 && cma_refused())
        shm.cma = false;
    if (got <= 0)
        return -1;
    /* a short read: finish run by run */
    size_t done = (size_t)got, at = 0;
    for (int i = 0; i < n; i++) {
        size_t l = local[i].iov_len;
        if (at + l <= done) {
            at += l;
            continue;
        }
        size_t skip = done > at ? done - at : 0;
        if (pull_span(pid, remote_addr + at + skip, (char *)local[i].iov_base + skip, l - skip) != 0)
            return -1;
        at += l;
    }
    return 0;
}

/* Single copy into scattered memory: len bytes from remote_addr into the
 * local runs (a non-contiguous receive type).  0 on success, -1 on failure
 * (cross-memory attach unavailable: then nothing was copied).  A run of a
 * page or more that lands in the aliasing window of its source goes alone
 * through cma_step's bounce (2x slower for the whole 1 MiB message with two
 * of four 256 KiB blocks there); the runs between go together. */
int lmpi_shm_pull_iov(int src, uint64_t remote_addr, const struct iovec *local, int n)
{
    if (!shm.cma)
        return -1;
    pid_t pid = peer_pid(src);
    uint64_t batch_remote = remote_addr, at = remote_addr;
    int first = 0, rc = 0;
    set_copying(true);
    for (int i = 0; i < n && rc == 0; i++) {
        size_t l = local[i].iov_len;
        if (l >= 4096 && cma_aliases((uintptr_t)local[i].iov_base, (uintptr_t)at)) {
            rc = pull_runs(pid, batch_remote, local + first, i - first);
            if (rc == 0)
                rc = pull_span(pid, at, local[i].iov_base, l);
            first = i + 1;
            batch_remote = at + l;
        }
        at += l;
    }
    if (rc == 0)
        rc = pull_runs(pid, batch_remote, local + first, n - first);
    set_copying(false);
    return rc;
}

/* ---- cooperative single copy ---------------------------------------------
 * A large rendezvous copy split in chunks that both sides take from one
 * shared counter: the receiver reads with process_vm_readv, the sender, when
 * it is in MPI, writes with process_vm_writev.  Two cores copy at once (a
 * bidirectional test shows this machine copies about twice as fast with
 * two), and a receiver whose sender is busy elsewhere simply takes every
 * chunk itself.  The descriptor lives in one of the receiver's cells. */
#define COOP_CHUNK (256u * 1024u)
#define COOP_NO_CHUNK UINT32_MAX

typedef struct {
    _Atomic uint32_t next_chunk;
    _Atomic uint32_t chunks_done;
    _Atomic uint32_t sender_left;  /* the sender will not touch this again */
    _Atomic uint32_t failed_chunk; /* a chunk the sender could not write */
    uint32_t nchunks;
    uint32_t receiver;
    uint64_t len;
    uint64_t send_addr; /* in the sender */
    uint64_t recv_addr; /* in the receiver */
} coop_desc;

static coop_desc *coop_at(uint64_t token)
{
    return (coop_desc *)(shm.base + token + CELL_HDR);
}

uint64_t lmpi_shm_coop_start(int src, uint64_t remote_addr, void *local, size_t len)
{
    if (!shm.cma || src >= shm.n) /* the descriptor lives in this node's segment */
        return 0;
    if (atomic_load_explicit(&shm.ranks[src].copying, memory_order_relaxed))
        return 0; /* the sender receives too: each side copies its own (set_copying) */
    uint64_t off = lmpi_shmq_dequeue(&shm.ranks[shm.me].freeq, shm.base);
    if (!off)
        return 0;
    coop_desc *d = coop_at(off);
    d->nchunks = (uint32_t)((len + COOP_CHUNK - 1) / COOP_CHUNK);
    d->receiver = (uint32_t)shm.me;
    d->len = len;
    d->send_addr = remote_addr;
    d->recv_addr = (uint64_t)(uintptr_t)local;
    atomic_store(&d->chunks_done, 0);
    atomic_store(&d->sender_left, 0);
    atomic_store(&d->failed_chunk, COOP_NO_CHUNK);
    atomic_store_explicit(&d->next_chunk, 0, memory_order_release);
    return off;
}

static int copy_chunk(coop_desc *d, uint32_t i, bool as_sender, int peer)
{
    uint64_t at = (uint64_t)i * COOP_CHUNK;
    size_t n = d->len - at < COOP_CHUNK ? (size_t)(d->len - at) : COOP_CHUNK;
    pid_t pid = peer_pid(peer);
    size_t done = 0;
    while (done < n) {
        uint64_t mine = (as_sender ? d->send_addr : d->recv_addr) + at + done,
                 theirs = (as_sender ? d->recv_addr : d->send_addr) + at + done;
        ssize_t got = cma_step(pid, (char *)(uintptr_t)mine, theirs, n - done, as_sender);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        done += (size_t)got;
    }
    return 0;
}

/* Take and copy chunks until none is left.  The receiver gets true once
 * every chunk is copied (waiting, yielding, for the one the sender may
 * still be writing); the sender always gets true. */
bool lmpi_shm_coop_work(uint64_t token, int peer, bool as_sender)
{
    coop_desc *d = coop_at(token);
    uint32_t i;
    if (!as_sender)
        set_copying(true);
    while ((i = atomic_fetch_add(&d->next_chunk, 1)) < d->nchunks) {
        if (copy_chunk(d, i, as_sender, peer) != 0) {
            if (!as_sender) {
                set_copying(false);
                return false; /* cannot happen after a successful first pull */
            }
            atomic_store(&d->failed_chunk, i); /* the receiver will do it */
            break;
        }
        atomic_fetch_add_explicit(&d->chunks_done, 1, memory_order_release);
    }
    if (as_sender) {
        atomic_store_explicit(&d->sender_left, 1, memory_order_release);
        return true;
    }
    int spins = 0;
    for (;;) {
        uint32_t f = atomic_exchange(&d->failed_chunk, COOP_NO_CHUNK);
        if (f != COOP_NO_CHUNK && copy_chunk(d, f, false, peer) == 0)
            atomic_fetch_add_explicit(&d->chunks_done, 1, memory_order_release);
        if (atomic_load_explicit(&d->chunks_done, memory_order_acquire) == d->nchunks) {
            set_copying(false);
            return true;
        }
        if (++spins > 64)
            sched_yield();
    }
}

/* Give the descriptor's cell back once the sender has let go of it;
 * false: try again later. */
bool lmpi_shm_coop_release(uint64_t token)
{
    coop_desc *d = coop_at(token);
    if (!atomic_load_explicit(&d->sender_left, memory_order_acquire))
        return false;
    if (LMPI_UNLIKELY(!shm.ranks)) /* no segment: no token (and no NULL path for the optimizer) */
        return true;
    lmpi_shmq_enqueue(&shm.ranks[shm.me].freeq, shm.base, token);
    return true;
}

const lmpi_transport_ops lmpi_shm_ops = {
    .name = "shm",
    .send_pkt = lmpi_shm_send_pkt,
    .max_payload = lmpi_shm_max_payload,
    .pull = lmpi_shm_pull,
    .send_pkt_fill = lmpi_shm_send_pkt_fill,
    .pull_iov = lmpi_shm_pull_iov,
    .poll = lmpi_shm_poll,
    .coop_start = lmpi_shm_coop_start,
    .coop_work = lmpi_shm_coop_work,
    .coop_release = lmpi_shm_coop_release,
};
