/* The bridge between process groups (bridge.h).
 *
 * Inbox layout: a header (magic, owner pid, cell count, pool lock and free
 * list), the receive queue on cache lines of its own, then the cells.  The
 * pool is a stack under a spin lock: several foreign senders take cells and
 * the owner returns them; traffic between groups is not the hot path, and
 * a lock keeps the pool free of the ABA problem. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/wait.h"
#include "transport/shm/bridge.h"
#include "transport/shm/notice.h"
#include "transport/shm/shm.h"
#include "transport/shm/queue.h"

#define INBOX_MAGIC 0x4c4d4258u
#define INBOX_CELLS 16 /* 256 KiB: large messages go by single copy, not through cells */
#define BCELL_HDR 128
#define BCELL_PAYLOAD (16 * 1024)
#define BCELL_SIZE (BCELL_HDR + BCELL_PAYLOAD)
#define BPOLL_BATCH 32

typedef struct {
    uint32_t magic;
    int32_t pid;
    uint32_t ncells;
    _Atomic uint32_t lock;
    uint64_t free_head; /* under lock: a stack linked through the cells' link */
    uint64_t size;
    uint64_t pidns; /* the owner's pid namespace (its inode): whose pid this is */
    lmpi_wait_word sleep; /* the owner sleeps on it too (runtime/wait.h): senders wake it */
    _Atomic uint32_t closed; /* the owner let go of it (MPI_Finalize): gone, but not failed */
    char pad[16];
    lmpi_shmq recvq;
} inbox_header;

typedef struct {
    lmpi_shmq_link link; /* must be first */
    uint64_t key;        /* the sender's group */
    int32_t rank;        /* the sender's rank in it */
    uint32_t len;
    lmpi_pkt_hdr hdr;
} bcell;

_Static_assert(sizeof(bcell) <= BCELL_HDR, "bridge cell header fits");

/* A peer is named first and mapped when something must be sent to it: a
 * packet from a process that has already finished (and unlinked its inbox)
 * is still delivered. */
typedef struct {
    char *name; /* the inbox's name; NULL: free slot */
    char *base; /* NULL: not mapped yet */
    size_t size;
    pid_t pid;
    int next_free;
    int64_t net; /* on another host: its fabric address (lmpi_ofi_foreign_insert), else -1 */
    bool reported; /* lmpi_bridge_failed said so */
} peer;

static struct {
    int base;
    char *inbox;
    size_t inbox_size;
    char name[300];
    uint64_t my_key;
    int my_rank;
    uint64_t my_pidns;
    peer *peers;
    int npeers, cap, free_slot, live;
    lmpi_bridge_resolver resolve;
    lmpi_bridge_ctrl_handler ctrl;
    bool waiting_for_cell; /* the last send found the peer's inbox full */
} br = {.free_slot = -1};

static uint64_t first_cell(void) { return (sizeof(inbox_header) + 127) / 128 * 128; }

/* 32 bits, never 0: the network carries it in the word beside the sender's
 * rank, where 0 means "the receiver's own world"; the failure notice board
 * names other jobs' processes by it too. */
uint64_t lmpi_bridge_group_key(const char *kvsname) { return lmpi_notice_group_key(kvsname); }

void lmpi_bridge_init(int base) { br.base = base; }
bool lmpi_bridge_is_open(void) { return br.inbox != NULL; }
int lmpi_bridge_peers(void) { return br.live; }

void lmpi_bridge_set_handlers(lmpi_bridge_resolver resolve, lmpi_bridge_ctrl_handler ctrl)
{
    br.resolve = resolve;
    br.ctrl = ctrl;
}

size_t lmpi_bridge_bytes(void)
{
    return (br.inbox ? br.inbox_size : 0) + sizeof(peer) * (size_t)br.cap;
}

static void inbox_name(char *out, size_t len, const char *kvsname, int rank)
{
    snprintf(out, len, "/lmpi-%s-x%d", kvsname, rank);
}

static void pool_lock(inbox_header *h)
{
    while (atomic_exchange_explicit(&h->lock, 1, memory_order_acquire))
        sched_yield();
}

static void pool_unlock(inbox_header *h) { atomic_store_explicit(&h->lock, 0, memory_order_release); }

static void pool_push(char *base, uint64_t off)
{
    inbox_header *h = (inbox_header *)base;
    pool_lock(h);
    atomic_store_explicit(&lmpi_shmq_at(base, off)->next, h->free_head, memory_order_relaxed);
    h->free_head = off;
    pool_unlock(h);
}

static uint64_t pool_pop(char *base)
{
    inbox_header *h = (inbox_header *)base;
    pool_lock(h);
    uint64_t off = h->free_head;
    if (off)
        h->free_head = atomic_load_explicit(&lmpi_shmq_at(base, off)->next, memory_order_relaxed);
    pool_unlock(h);
    return off;
}

static int stat_shm(const char *name, struct stat *st)
{
    int fd = shm_open(name, O_RDONLY | O_NOFOLLOW, 0);
    if (fd < 0)
        return -1;
    int rc = fstat(fd, st);
    close(fd);
    return rc;
}

static uint64_t my_pidns(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

bool lmpi_bridge_pid_gone(pid_t pid)
{
    if (pid <= 0) /* no inbox to read it from */
        return true;
    if (kill(pid, 0) != 0)
        return errno == ESRCH;
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')'); /* the state follows the command's name */
    return paren && paren[1] == ' ' && paren[2] == 'Z';
}

/* Inboxes of processes that were killed (SIGKILL from a launcher such as
 * Hydra, which stops a job that way; a killed host's processes) outlive
 * them: nothing else removes a name in /dev/shm (t_dpm under Hydra, ranks
 * killed: 2 inboxes left per job before this).  So a process opening its
 * inbox removes this user's inboxes whose owner is gone: the owner's pid
 * and pid namespace are in the header, so a process of a container that
 * shares /dev/shm but not pids is never taken for dead.  An inbox still
 * being made (no magic yet) is left alone; a pid reused since leaves one
 * stale inbox until a later sweep. */
static void sweep_dead_inboxes(void)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    uint64_t ns = my_pidns();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *x = strrchr(e->d_name, 'x');
        if (strncmp(e->d_name, "lmpi-", 5) || !x || x[-1] != '-' || !x[1] ||
            strspn(x + 1, "0123456789") != strlen(x + 1))
            continue; /* not an inbox: /lmpi-<kvsname>-x<rank> */
        char name[300];
        snprintf(name, sizeof(name), "/%s", e->d_name);
        int fd = shm_open(name, O_RDONLY | O_NOFOLLOW, 0);
        if (fd < 0)
            continue;
        struct stat st;
        inbox_header h;
        bool dead = fstat(fd, &st) == 0 && st.st_uid == geteuid() && (size_t)st.st_size >= sizeof(h) &&
                    pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && h.magic == INBOX_MAGIC && h.pid > 0 &&
                    h.pidns == ns && ns != 0 && lmpi_bridge_pid_gone(h.pid);
        close(fd);
        if (dead)
            shm_unlink(name);
    }
    closedir(d);
}

lmpi_status lmpi_bridge_open(const char *kvsname, int rank)
{
    if (br.inbox)
        return LMPI_OK;
    sweep_dead_inboxes();
    inbox_name(br.name, sizeof(br.name), kvsname, rank);
    size_t size = first_cell() + (size_t)INBOX_CELLS * BCELL_SIZE;
    int fd = shm_open(br.name, O_CREAT | O_EXCL | O_RDWR, 0600);
    struct stat old;
    if (fd < 0 && errno == EEXIST && stat_shm(br.name, &old) == 0 && old.st_uid == geteuid()) {
        /* left by an earlier process of ours with the same name (Hydra
         * reuses job names); another user's object is never removed */
        shm_unlink(br.name);
        fd = shm_open(br.name, O_CREAT | O_EXCL | O_RDWR, 0600);
    }
    if (fd < 0 && errno == EEXIST) {
        lmpi_err_detail("the inbox name %s is taken by another user's object", br.name);
        return LMPI_ERR_OTHER;
    }
    if (fd < 0) {
        lmpi_err_detail("cannot create the inbox %s for other process groups: %s", br.name, strerror(errno));
        return LMPI_ERR_OTHER;
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        lmpi_err_detail("cannot size the inbox %s: %s", br.name, strerror(errno));
        close(fd);
        shm_unlink(br.name);
        return LMPI_ERR_NO_MEM;
    }
    char *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
        shm_unlink(br.name);
        lmpi_err_detail("cannot map the inbox %s: %s", br.name, strerror(errno));
        return LMPI_ERR_NO_MEM;
    }
    inbox_header *h = (inbox_header *)base;
    h->pid = (int32_t)getpid();
    h->pidns = my_pidns();
    h->ncells = INBOX_CELLS;
    h->size = size;
    lmpi_shmq_init(&h->recvq);
    br.inbox = base;
    br.inbox_size = size;
    lmpi_wait_attach_inbox(&h->sleep);
    for (uint32_t i = 0; i < INBOX_CELLS; i++)
        pool_push(base, first_cell() + (uint64_t)i * BCELL_SIZE);
    atomic_thread_fence(memory_order_release);
    h->magic = INBOX_MAGIC;
    br.my_key = lmpi_bridge_group_key(kvsname);
    br.my_rank = rank;
    br.my_pidns = h->pidns;
    lmpi_mem_account(LMPI_MEM_SHM, (int64_t)size);
    return LMPI_OK;
}

/* Map peer slot s; false when its inbox is gone (with an error detail
 * unless quiet). */
static bool map_peer_how(int s, bool quiet)
{
    peer *p = &br.peers[s];
    if (p->base)
        return true;
    /* only an inbox of this user's (another user may have made an object
     * of that name first) */
    size_t size = 0;
    int fd = lmpi_shm_open_ours(p->name, sizeof(inbox_header), &size);
    if (fd < 0) {
        if (!quiet)
            lmpi_err_detail("no inbox %s (%s): the process is gone or never took part in dynamic process management",
                            p->name, strerror(errno));
        return false;
    }
    char *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED || ((inbox_header *)base)->magic != INBOX_MAGIC) {
        if (base != MAP_FAILED)
            munmap(base, size);
        if (!quiet)
            lmpi_err_detail("the inbox %s is not ready or not LeanMPI's", p->name);
        return false;
    }
    p->base = base;
    p->size = size;
    p->pid = ((inbox_header *)base)->pid;
    return true;
}

static bool map_peer(int s) { return map_peer_how(s, false); }

int lmpi_bridge_reserve(const char *kvsname, int rank)
{
    char name[300];
    inbox_name(name, sizeof(name), kvsname, rank);
    char *copy = lmpi_malloc(strlen(name) + 1, LMPI_MEM_SHM);
    if (!copy) {
        lmpi_err_detail("out of memory naming %s", name);
        return -1;
    }
    strcpy(copy, name);
    int slot = br.free_slot;
    if (slot >= 0) {
        br.free_slot = br.peers[slot].next_free;
    } else {
        if (br.npeers == br.cap) {
            int cap = br.cap ? 2 * br.cap : 16;
            peer *p = lmpi_realloc(br.peers, sizeof(peer) * (size_t)cap, LMPI_MEM_SHM);
            if (!p) {
                lmpi_free(copy);
                lmpi_err_detail("out of memory attaching %s", name);
                return -1;
            }
            br.peers = p;
            br.cap = cap;
        }
        slot = br.npeers++;
    }
    br.peers[slot] = (peer){copy, NULL, 0, -1, -1, -1, false};
    br.live++;
    return br.base + slot;
}

int lmpi_bridge_attach_net(const char *kvsname, int rank, const void *addr, size_t len)
{
#if LMPI_HAVE_OFI
    int64_t fa = lmpi_ofi_foreign_insert(addr, len);
    if (fa < 0) {
        lmpi_err_detail("cannot insert the network address of rank %d of %s", rank, kvsname);
        return -1;
    }
    int idx = lmpi_bridge_reserve(kvsname, rank);
    if (idx < 0)
        lmpi_ofi_foreign_remove(fa);
    else
        br.peers[idx - br.base].net = fa;
    return idx;
#else
    (void)addr, (void)len;
    lmpi_err_detail("rank %d of %s is on another host, and this LeanMPI was built without a network transport",
                    rank, kvsname);
    return -1;
#endif
}

bool lmpi_bridge_is_net(int index) { return lmpi_bridge_is_peer(index) && br.peers[index - br.base].net >= 0; }

int lmpi_bridge_attach(const char *kvsname, int rank)
{
    int idx = lmpi_bridge_reserve(kvsname, rank);
    if (idx >= 0 && !map_peer(idx - br.base)) {
        lmpi_bridge_detach(idx);
        return -1;
    }
    return idx;
}

bool lmpi_bridge_is_peer(int index)
{
    int s = index - br.base;
    return s >= 0 && s < br.npeers && br.peers[s].name;
}

void lmpi_bridge_detach(int index)
{
    if (!lmpi_bridge_is_peer(index))
        return;
    peer *p = &br.peers[index - br.base];
    if (p->base)
        munmap(p->base, p->size);
#if LMPI_HAVE_OFI
    if (p->net >= 0)
        lmpi_ofi_foreign_remove(p->net);
#endif
    lmpi_free(p->name);
    p->name = p->base = NULL;
    p->next_free = br.free_slot;
    br.free_slot = index - br.base;
    br.live--;
}

bool lmpi_bridge_failed(int index)
{
    if (!lmpi_bridge_is_peer(index))
        return false;
    peer *p = &br.peers[index - br.base];
    if (p->net >= 0) { /* on another host: did a transfer to it fail? */
#if LMPI_HAVE_OFI
        if (!p->reported && lmpi_ofi_foreign_failed(p->net))
            return p->reported = true;
#endif
        return false;
    }
    if (p->reported || !map_peer_how(index - br.base, true))
        return false;
    const inbox_header *h = (const inbox_header *)p->base;
    /* (a pid of another pid namespace says nothing here; a zombie counts as
     * alive until its launcher reaps it) */
    if (atomic_load_explicit(&h->closed, memory_order_acquire) || h->pidns != br.my_pidns || !br.my_pidns ||
        kill(p->pid, 0) == 0 || errno != ESRCH)
        return false;
    p->reported = true;
    return true;
}

bool lmpi_bridge_report(int index)
{
    if (!lmpi_bridge_is_peer(index) || br.peers[index - br.base].reported)
        return false;
    return br.peers[index - br.base].reported = true;
}

pid_t lmpi_bridge_pid(int index)
{
    if (!lmpi_bridge_is_peer(index) || lmpi_bridge_is_net(index))
        return -1; /* another host's process: no cross-memory attach */
    return map_peer(index - br.base) ? br.peers[index - br.base].pid : -1;
}

void lmpi_bridge_unlink(void)
{
    if (br.inbox)
        shm_unlink(br.name);
}

void lmpi_bridge_close(void)
{
    for (int s = 0; s < br.npeers; s++)
        if (br.peers[s].name)
            lmpi_bridge_detach(br.base + s);
    lmpi_free(br.peers);
    if (br.inbox) {
        lmpi_wait_attach_inbox(NULL);
        /* peers that still map it see an end, not a failure */
        atomic_store_explicit(&((inbox_header *)br.inbox)->closed, 1, memory_order_release);
        shm_unlink(br.name);
        munmap(br.inbox, br.inbox_size);
        lmpi_mem_account(LMPI_MEM_SHM, -(int64_t)br.inbox_size);
    }
    int base = br.base;
    memset(&br, 0, sizeof(br));
    br.base = base;
    br.free_slot = -1;
}

lmpi_status lmpi_bridge_send(int index, const lmpi_pkt_hdr *hdr, const void *payload, size_t len,
                             lmpi_pkt_fill fill, void *arg)
{
    if (!lmpi_bridge_is_peer(index) || len > BCELL_PAYLOAD)
        return LMPI_ERR_INTERN;
#if LMPI_HAVE_OFI
    if (br.peers[index - br.base].net >= 0)
        return lmpi_ofi_send_foreign(br.peers[index - br.base].net, (uint32_t)br.my_key, hdr, payload, len, fill, arg);
#endif
    if (!map_peer(index - br.base))
        return LMPI_ERR_OTHER; /* the process is gone */
    char *base = br.peers[index - br.base].base;
    uint64_t off = pool_pop(base);
    br.waiting_for_cell = off == 0;
    if (!off)
        return LMPI_ERR_PENDING;
    bcell *c = (bcell *)(base + off);
    c->key = br.my_key;
    c->rank = br.my_rank;
    c->len = (uint32_t)len;
    c->hdr = *hdr;
    if (len && fill)
        fill((char *)c + BCELL_HDR, len, arg);
    else if (len && payload)
        memcpy((char *)c + BCELL_HDR, payload, len);
    lmpi_shmq_enqueue(&((inbox_header *)base)->recvq, base, off);
    lmpi_wait_notify(&((inbox_header *)base)->sleep);
    return LMPI_OK;
}

bool lmpi_bridge_waiting_for_cell(void) { return br.waiting_for_cell; }

void lmpi_bridge_arrived(uint64_t key, int rank, const lmpi_pkt_hdr *hdr, const void *payload, size_t len)
{
    if (hdr->type == LMPI_PKT_CTRL) {
        if (br.ctrl)
            br.ctrl(key, rank, hdr, payload, len);
        return;
    }
    int src = br.resolve ? br.resolve(key, rank) : -1;
    if (src >= 0)
        lmpi_tr_deliver(src, hdr, payload, len);
    else
        fprintf(stderr, "LeanMPI: dropped a packet from rank %d of an unknown process group (key %08llx)\n", rank,
                (unsigned long long)key);
}

int lmpi_bridge_poll(void)
{
    if (!br.inbox)
        return 0;
    inbox_header *h = (inbox_header *)br.inbox;
    if (lmpi_shmq_empty(&h->recvq))
        return 0;
    int events = 0;
    for (int i = 0; i < BPOLL_BATCH; i++) {
        uint64_t off = lmpi_shmq_dequeue(&h->recvq, br.inbox);
        if (!off)
            break;
        bcell *c = (bcell *)(br.inbox + off);
        lmpi_bridge_arrived(c->key, c->rank, &c->hdr, (char *)c + BCELL_HDR, c->len);
        pool_push(br.inbox, off);
        events++;
    }
    return events;
}
