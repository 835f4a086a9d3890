/* The failure notice board: a page of the node's segment where the launcher
 * posts which processes of the job have failed (fault tolerance, src/ft).
 *
 * The launcher is the failure detector: it reaps its ranks (SIGCHLD), and
 * the proxies of other hosts report theirs.  Under `mpiexec --with-ft ulfm`
 * it does not stop the job when a rank dies; it sets the rank's bit here,
 * bumps the epoch and wakes every rank asleep on its futex word
 * (runtime/wait.h).  A rank compares the epoch with the one it saw last
 * whenever a wait of its goes idle (one load every 64 idle polls, and
 * after each sleep), never on a path that moves data.
 *
 * Header-only: mpiexec and its proxies include it too.  The board sits at a
 * fixed offset of the segment so that the launcher needs nothing else of
 * the segment's layout; where the rank areas' sleep words are is written
 * into the board by the rank that formats the segment. */
#ifndef LMPI_SHM_NOTICE_H
#define LMPI_SHM_NOTICE_H

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LMPI_NOTICE_OFFSET 1024u
#define LMPI_NOTICE_MAGIC 0x4c46544eu /* "LFTN" */

typedef struct {
    uint32_t magic;        /* LMPI_NOTICE_MAGIC once the segment is formatted */
    uint32_t world;        /* processes the bitmap covers: the job's size */
    _Atomic uint32_t epoch; /* failures posted so far */
    uint32_t nwords;       /* how many sleep words there are ... */
    uint64_t off_words;    /* ... the first one's offset in the segment ... */
    uint64_t word_stride;  /* ... and the distance between two */
    _Atomic uint64_t failed[]; /* one bit per process of the job */
} lmpi_notice;

/* After the bitmap: failures of other jobs' processes (spawned by the same
 * launcher, or that spawned this job), each as the job's group key (its
 * kvsname's, lmpi_notice_group_key) and the rank, in the order posted.
 * Written by the launcher (or a proxy on another host) and by the job's
 * own ranks (a process of a job started by another launcher, seen gone
 * through the bridge, src/ft): a writer claims the first free entry with a
 * compare-and-swap, then raises the count past it, so every entry below
 * the count is written. */
#define LMPI_NOTICE_FOREIGN 128
typedef struct {
    _Atomic uint32_t n;
    uint32_t pad;
    _Atomic uint64_t entry[LMPI_NOTICE_FOREIGN]; /* key << 32 | rank */
} lmpi_notice_foreign;

static inline size_t lmpi_notice_bytes(int world)
{
    return sizeof(lmpi_notice) + (size_t)(world + 63) / 64 * 8 + sizeof(lmpi_notice_foreign);
}

static inline lmpi_notice_foreign *lmpi_notice_foreign_of(const lmpi_notice *nb)
{
    return (lmpi_notice_foreign *)((char *)nb + sizeof(lmpi_notice) + (size_t)(nb->world + 63) / 64 * 8);
}

/* A process group's key: a 32-bit hash of its kvsname, never 0 (the same
 * key the bridge carries beside a sender's rank, transport/shm/bridge.c). */
static inline uint32_t lmpi_notice_group_key(const char *kvsname)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)kvsname; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (uint32_t)((h ^ (h >> 32)) & 0xffffffffu) | 1u;
}

static inline lmpi_notice *lmpi_notice_of(void *segment_base)
{
    return (lmpi_notice *)((char *)segment_base + LMPI_NOTICE_OFFSET);
}

static inline int lmpi_notice_failed(const lmpi_notice *nb, int rank)
{
    return (int)(atomic_load_explicit(&nb->failed[rank / 64], memory_order_acquire) >> (rank % 64) & 1);
}

/* Move the epoch and wake every sleeper of the node, posting nothing: each
 * rank looks at the board again (a rank that heard of a failure from
 * elsewhere, Hydra's SIGUSR1, src/ft).  Atomics and futex calls only: safe
 * in a signal handler. */
static inline void lmpi_notice_kick(void *segment_base, size_t segment_size)
{
    lmpi_notice *nb = lmpi_notice_of(segment_base);
    atomic_fetch_add_explicit(&nb->epoch, 1, memory_order_seq_cst);
    for (uint32_t i = 0; i < nb->nwords; i++) {
        uint64_t off = nb->off_words + (uint64_t)i * nb->word_stride;
        if (off + 4 > segment_size)
            break;
        _Atomic uint32_t *w = (_Atomic uint32_t *)((char *)segment_base + off);
        if (atomic_exchange_explicit(w, 0, memory_order_seq_cst) != 0)
            syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    }
}

/* The launcher's side: post that `rank` failed and wake every sleeper of
 * the node.  The wake is unconditional (0 stored, FUTEX_WAKE where a
 * sleeper may be): the launcher takes no part in the sleepers' Dekker
 * protocol, and a rank that armed but did not sleep yet finds its word
 * changed and its futex wait refused.  Returns 0, or -1 when the segment
 * is not formatted yet (no rank got that far: nobody can wait). */
static inline int lmpi_notice_post(void *segment_base, size_t segment_size, int rank)
{
    lmpi_notice *nb = lmpi_notice_of(segment_base);
    if (segment_size < LMPI_NOTICE_OFFSET + sizeof(lmpi_notice) || nb->magic != LMPI_NOTICE_MAGIC || rank < 0 ||
        (uint32_t)rank >= nb->world)
        return -1;
    uint64_t bit = 1ull << (rank % 64);
    if (atomic_fetch_or_explicit(&nb->failed[rank / 64], bit, memory_order_seq_cst) & bit)
        return 0; /* posted before (a host's proxy and mpiexec both saw it) */
    lmpi_notice_kick(segment_base, segment_size);
    return 0;
}

/* The launcher's side: post that rank `rank` of the job whose group key is
 * `key` (another job than the board's) failed, and wake every sleeper.
 * Returns 0, or -1 (not formatted, or the list is full: then the failure
 * stays unseen by this job). */
static inline int lmpi_notice_post_foreign(void *segment_base, size_t segment_size, uint32_t key, int rank)
{
    lmpi_notice *nb = lmpi_notice_of(segment_base);
    if (segment_size < LMPI_NOTICE_OFFSET + sizeof(lmpi_notice) || nb->magic != LMPI_NOTICE_MAGIC ||
        segment_size < LMPI_NOTICE_OFFSET + lmpi_notice_bytes((int)nb->world) || rank < 0)
        return -1;
    lmpi_notice_foreign *f = lmpi_notice_foreign_of(nb);
    uint64_t e = (uint64_t)key << 32 | (uint32_t)rank;
    for (uint32_t i = 0; i < LMPI_NOTICE_FOREIGN; i++) {
        uint64_t was = 0;
        if (!atomic_compare_exchange_strong_explicit(&f->entry[i], &was, e, memory_order_seq_cst,
                                                     memory_order_seq_cst)) {
            if (was == e)
                return 0; /* posted before */
            continue;
        }
        uint32_t n = atomic_load_explicit(&f->n, memory_order_relaxed);
        while (n < i + 1 && !atomic_compare_exchange_weak_explicit(&f->n, &n, i + 1, memory_order_release,
                                                                   memory_order_relaxed))
            ;
        lmpi_notice_kick(segment_base, segment_size);
        return 0;
    }
    return -1;
}

/* The same through the segment's file (the launcher's memfd), mapped for
 * the moment it takes: failures are rare.  key 0: a rank of the board's
 * own job. */
static inline int lmpi_notice_post_fd(int fd, uint32_t key, int rank)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0)
        return -1;
    void *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED)
        return -1;
    int rc = key ? lmpi_notice_post_foreign(base, (size_t)st.st_size, key, rank)
                 : lmpi_notice_post(base, (size_t)st.st_size, rank);
    munmap(base, (size_t)st.st_size);
    return rc;
}

#endif
