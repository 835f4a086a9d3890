/* The shared-memory transport between real processes: NPROC processes send
 * each other packets of every size class (fast box, cell) in bursts that
 * exhaust the cells, and check per-sender order, sizes and contents.  The
 * transport is linked alone; this file plays the pt2pt layer above it.
 * Mode "ring512": the smallest fast-box ring (64 units; records skip its end
 * often), after a scripted exchange (forge_stale_record) that leaves in the
 * ring a stale payload shaped like the next record.
 * Mode "coop": first, a receiver asks a rank for help with a large copy
 * (lmpi_shm_coop_start) while that rank is copying a large receive of its
 * own, and again after it stopped: declined, then accepted. */
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/config.h"
#include "transport/shm/fastbox.h"
#include "transport/shm/notice.h"
#include "transport/shm/shm.h"
#include "transport/transport.h"
#define UNIT_ERR_DETAIL /* this test plays the layer above */
#include "unit.h"

enum { NPROC = 4, PER_PEER = 3000 };


static int me;
static uint32_t expect_seq[NPROC];
static long got, bad;
static void fill_payload(unsigned char *buf, int src, uint32_t seq, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(src + seq + i);
}

static size_t size_for(uint32_t seq)
{
    static const size_t sizes[] = {0, 8, 100, 448, 449, 3000, 16384};
    return sizes[seq % 7];
}

static void deliver(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    uint32_t seq = (uint32_t)h->tag;
    if (h->rank != src || seq != expect_seq[src] || len != size_for(seq) || h->len != len || len > 16384)
        bad++;
    else {
        unsigned char want[16384];
        fill_payload(want, src, seq, len);
        bad += memcmp(payload, want, len) != 0;
    }
    expect_seq[src] = seq + 1;
    got++;
}

/* The stale-payload scenario, rank 1 to rank 0 with a 64-unit ring (512
 * bytes; fastbox.h); the receiver polls only when told (pipes), so every
 * placement is known (compact records: a 0-byte message takes 3 units, 8
 * bytes 4, 100 bytes 16):
 *   round 1: seq 0 (0 B) takes the slot, seq 1 (100 B) finds it full and
 *            goes to ring units 0-15 (and the next FB_RING_RUN = 16 sends go
 *            to the ring without looking at the slot); its payload holds,
 *            at unit 3, a record exactly like the one seq 10 would be at
 *            position 67 (unit 3, one lap on), with 0xee bytes;
 *   round 2: seq 2 and 3 (100 B) at units 16 and 32, seq 4-8 (0 B) at 48,
 *            51, ... 60; seq 9 at 63 would wrap: a skip record, then
 *            position 64;
 *   the receiver, having read up to position 67, looks at position 67
 *            before seq 10 is written: only the clearing of consumed
 *            units keeps it from delivering the forged record;
 *   round 3: seq 10 (8 B, real bytes), into the ring at 67.
 * Afterwards the counts start again from 0 for the main exchange. */
static bool scripted; /* ring512 */
static int go[2], done[2], start[2]; /* start: rank 0 lets the others begin the main exchange */
static long forged_seen;

static void scenario_deliver(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    uint32_t seq = (uint32_t)h->tag;
    if (src != 1 || seq != expect_seq[1] || (len && ((const unsigned char *)payload)[len - 1] == 0xee))
        forged_seen++;
    expect_seq[1] = seq + 1;
    got++;
}

static void scenario_send(uint32_t seq, size_t len, bool forge)
{
    unsigned char buf[100];
    memset(buf, 1, sizeof(buf));
    if (forge) {
        fastbox_compact r = {.r = {.mark = 67 + 1, .len = 8, .units = 4, .seq = 10, .type = LMPI_PKT_EAGER},
                             .rank = 1, .tag = 10};
        memcpy(buf, &r, sizeof(r)); /* the payload's offset 0 is the record's unit 3 */
        memset(buf + sizeof(r), 0xee, 8);
    }
    lmpi_pkt_hdr h = {.type = LMPI_PKT_EAGER, .rank = 1, .tag = (int32_t)seq, .len = len};
    while (lmpi_shm_send_pkt(0, &h, buf, len) != LMPI_OK)
        ;
}

static int forge_stale_record(int rank)
{
    static const int per_round[3] = {2, 8, 1};
    char c = 0;
    if (rank == 1) {
        uint32_t seq = 0;
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < per_round[round]; i++, seq++)
                scenario_send(seq, seq >= 1 && seq <= 3 ? 100 : seq == 10 ? 8 : 0, seq == 1);
            if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
                return 1;
        }
        uint32_t ring, head = lmpi_shm_fastbox_head(0, &ring);
        return head == 71 && ring == 64 ? 0 : 1; /* the placements were as scripted (seq 10 at 67) */
    }
    if (rank != 0)
        return 0;
    lmpi_tr_set_handler(scenario_deliver);
    long want = 0;
    for (int round = 0; round < 3; round++) {
        if (read(go[0], &c, 1) != 1)
            return 1;
        want += per_round[round];
        while (got < want && !forged_seen)
            lmpi_shm_poll();
        if (round == 1) /* everything read: now the look at position 68 */
            for (int i = 0; i < 1000; i++)
                lmpi_shm_poll();
        if (write(done[1], &c, 1) != 1)
            return 1;
    }
    fprintf(stderr, "rank 0: scripted exchange, %ld packets, %ld forged or misordered\n", got, forged_seen);
    bool ok = !forged_seen && got == 11;
    lmpi_tr_set_handler(deliver);
    memset(expect_seq, 0, sizeof(expect_seq));
    got = 0;
    return ok ? 0 : 1;
}

/* Mode "coop".  Rank 1 pulls 16 MiB from rank 0 again and again (a rank
 * busy with its own large receive); meanwhile rank 0, as the receiver of a
 * large message from rank 1, asks it for help three times 5 ms apart: at
 * least one must be declined (one could fall between two pulls).  Once rank
 * 1 has stopped, the next request is accepted.  The accepted descriptors'
 * cells are not given back (no sender ever lets go of them): 16 cells are
 * plenty for what follows. */
static bool coop_mode;
enum { COOP_BYTES = 16 << 20 };
static unsigned char *coop_src;

static int coop_declined_while_copying(int rank)
{
    char c = 0;
    if (rank == 1) {
        unsigned char *dst = malloc(COOP_BYTES);
        int rc = dst ? lmpi_shm_pull(0, (uint64_t)(uintptr_t)coop_src, dst, COOP_BYTES) : -1;
        c = rc == 0 ? 'p' : 's'; /* s: no cross-memory attach here */
        if (write(go[1], &c, 1) != 1)
            return 1;
        struct pollfd stop = {.fd = done[0], .events = POLLIN};
        while (rc == 0 && poll(&stop, 1, 0) == 0)
            rc = lmpi_shm_pull(0, (uint64_t)(uintptr_t)coop_src, dst, COOP_BYTES);
        if (c == 'p' && read(done[0], &c, 1) != 1)
            return 1;
        bool same = rc == 0 && !memcmp(dst, coop_src, COOP_BYTES);
        /* a destination 16 bytes past the source modulo a page goes through
         * the bounce buffer (shm.c, cma_step): an odd length, at an odd
         * place, must land byte for byte */
        size_t n = 300001;
        const unsigned char *from = coop_src + 5;
        unsigned char *to = dst + 4096 + ((((uintptr_t)from + 16) - (uintptr_t)dst) & 4095);
        memset(dst, 0, COOP_BYTES);
        if (rc == 0 && lmpi_shm_pull(0, (uint64_t)(uintptr_t)from, to, n) == 0)
            same = same && !memcmp(to, from, n) && to[n] == 0 && to[-1] == 0;
        else if (rc == 0)
            same = false;
        /* the same into scattered runs (lmpi_shm_pull_iov): runs 1 and 3
         * sit 16 and 32 bytes past their source modulo a page and go alone
         * through the bounce, the others together */
        memset(dst, 0, COOP_BYTES);
        const unsigned char *src2 = coop_src + 7;
        const size_t lens[4] = {5000, 70001, 100, 9000};
        struct iovec runs[4];
        unsigned char *place = dst + 4096;
        size_t at = 0;
        for (int i = 0; i < 4; i++) {
            uintptr_t want = (uintptr_t)(src2 + at) + (i == 1 ? 16 : i == 3 ? 32 : 1024);
            place += (want - (uintptr_t)place) & 4095;
            runs[i] = (struct iovec){place, lens[i]};
            place += lens[i] + 8;
            at += lens[i];
        }
        if (rc == 0 && lmpi_shm_pull_iov(0, (uint64_t)(uintptr_t)src2, runs, 4) == 0) {
            at = 0;
            for (int i = 0; i < 4; i++) {
                const unsigned char *b = runs[i].iov_base;
                same = same && !memcmp(b, src2 + at, lens[i]) && b[lens[i]] == 0;
                at += lens[i];
            }
        } else if (rc == 0) {
            same = false;
        }
        free(dst);
        c = 'x';
        return write(go[1], &c, 1) == 1 && (same || rc != 0) ? 0 : 1;
    }
    if (rank != 0)
        return 0;
    if (read(go[0], &c, 1) != 1)
        return 1;
    if (c == 's') {
        fprintf(stderr, "rank 0: no cross-memory attach here, coop scenario skipped\n");
        return read(go[0], &c, 1) == 1 ? 0 : 1;
    }
    unsigned char *local = malloc(1 << 20);
    int declined = 0;
    for (int i = 0; i < 3; i++) {
        nanosleep(&(struct timespec){0, 5000000}, NULL);
        declined += lmpi_shm_coop_start(1, (uint64_t)(uintptr_t)coop_src, local, 1 << 20) == 0;
    }
    if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
        return 1;
    bool accepted = lmpi_shm_coop_start(1, (uint64_t)(uintptr_t)coop_src, local, 1 << 20) != 0;
    free(local);
    fprintf(stderr, "rank 0: help declined %d of 3 times while the helper copied, accepted after: %d\n",
            declined, (int)accepted);
    return declined > 0 && accepted ? 0 : 1;
}

/* The collectives' pool: every process takes and gives back blocks at the
 * same time, fills each with its own byte and checks it before giving it
 * back (two processes holding overlapping blocks would show). */
static long pool_stress(int rank)
{
    enum { HELD = 8, ROUNDS = 3000 };
    uint64_t off[HELD] = {0};
    size_t len[HELD] = {0};
    unsigned s = 1234u + (unsigned)rank;
    long badp = 0;
    for (int i = 0; i < ROUNDS + HELD; i++) {
        int k = i % HELD;
        if (off[k]) {
            const unsigned char *p = lmpi_shm_at(off[k]);
            for (size_t j = 0; j < len[k]; j++)
                if (p[j] != (unsigned char)(rank + 1)) {
                    badp++;
                    break;
                }
            lmpi_shm_pool_free(off[k], len[k]);
            off[k] = 0;
        }
        if (i >= ROUNDS)
            continue;
        s = s * 1103515245u + 12345u;
        len[k] = 1 + (s >> 8) % 5000;
        if (!(off[k] = lmpi_shm_pool_alloc(len[k])))
            continue; /* full or fragmented: allowed */
        unsigned char *p = lmpi_shm_at(off[k]);
        for (size_t j = 0; j < len[k]; j++)
            badp += p[j] != 0; /* handed out zeroed */
        memset(p, rank + 1, len[k]);
    }
    return badp;
}

static int run(int rank)
{
    me = rank;
    char job[64];
    snprintf(job, sizeof(job), "unit-%d", (int)getppid());
    if (rank != 0 && lmpi_shm_init(rank, NPROC, 0, NPROC, job) != LMPI_OK)
        return 2;
    if (scripted) {
        int rc = forge_stale_record(rank);
        char c = 0;
        if (rank == 0)
            for (int r = 1; r < NPROC; r++)
                rc |= write(start[1], &c, 1) != 1;
        else
            rc |= read(start[0], &c, 1) != 1;
        if (rc)
            return 3;
    }
    if (coop_mode && coop_declined_while_copying(rank) != 0)
        return 4;
    unsigned char buf[16384];
    uint32_t sent[NPROC] = {0};
    long want = (long)(NPROC - 1) * PER_PEER;
    bool done_sending = false;
    long seen = -1, polls = 0;
    time_t since = time(NULL);
    while (!done_sending || got < want) {
        /* stuck: 20 s and a million polls without a packet.  Time alone is
         * not enough: on a loaded machine a whole test can go without a
         * processor for seconds, and then every rank finds its clock far
         * ahead at once (one run in CI did) */
        if (got != seen) {
            seen = got;
            since = time(NULL);
            polls = 0;
        } else if (++polls > 1000000 && time(NULL) - since > 20) {
            fprintf(stderr, "rank %d: no packet for %ld s and %ld polls, %ld of %ld received (%ld bad)\n", rank,
                    (long)(time(NULL) - since), polls, got, want, bad);
            return 1; /* a lost or misordered packet */
        }
        done_sending = true;
        for (int d = 0; d < NPROC; d++) {
            if (d == rank || sent[d] == PER_PEER)
                continue;
            done_sending = false;
            uint32_t seq = sent[d];
            size_t n = size_for(seq);
            fill_payload(buf, rank, seq, n);
            lmpi_pkt_hdr h = {.type = LMPI_PKT_EAGER, .rank = rank, .tag = (int32_t)seq, .len = n};
            if (lmpi_shm_send_pkt(d, &h, buf, n) == LMPI_OK)
                sent[d]++;
        }
        lmpi_shm_poll();
    }
    /* stay attached until everyone has drained what we sent */
    fprintf(stderr, "rank %d: received %ld packets, %ld bad\n", rank, got, bad);
    long badp = pool_stress(rank);
    fprintf(stderr, "rank %d: pool %ld bad\n", rank, badp);
    return bad || badp ? 1 : 0;
}

/* The failure notice board (notice.h) on a segment of our own: a post sets
 * the rank's bit once, moves the epoch and disarms every sleep word; a kick
 * (Hydra's SIGUSR1, src/ft) moves the epoch and disarms without a bit. */
static void notice_board(void)
{
    enum { SIZE = 8192, WORDS = 4096, STRIDE = 64 };
    static _Alignas(64) unsigned char seg[SIZE];
    lmpi_notice *nb = lmpi_notice_of(seg);
    nb->world = 70;
    nb->nwords = 2;
    nb->off_words = WORDS;
    nb->word_stride = STRIDE;
    _Atomic uint32_t *w0 = (_Atomic uint32_t *)(seg + WORDS), *w1 = (_Atomic uint32_t *)(seg + WORDS + STRIDE);
    CHECK_EQ(lmpi_notice_post(seg, SIZE, 3), -1); /* not formatted yet */
    nb->magic = LMPI_NOTICE_MAGIC;
    atomic_store(w0, 1);
    atomic_store(w1, 1);
    lmpi_notice_kick(seg, SIZE);
    CHECK_EQ(atomic_load(&nb->epoch), 1);
    CHECK_EQ(atomic_load(w0), 0);
    CHECK_EQ(atomic_load(w1), 0);
    CHECK_EQ(atomic_load(&nb->failed[0]) | atomic_load(&nb->failed[1]), 0);
    atomic_store(w1, 1);
    CHECK_EQ(lmpi_notice_post(seg, SIZE, 65), 0);
    CHECK_EQ(lmpi_notice_failed(nb, 65), 1);
    CHECK_EQ(lmpi_notice_failed(nb, 64), 0);
    CHECK_EQ(atomic_load(&nb->epoch), 2);
    CHECK_EQ(atomic_load(w1), 0);
    CHECK_EQ(lmpi_notice_post(seg, SIZE, 65), 0); /* posted before: nothing moves */
    CHECK_EQ(atomic_load(&nb->epoch), 2);
    CHECK_EQ(lmpi_notice_post(seg, SIZE, 70), -1);
    /* another job's process: listed once, after the bitmap, with a kick */
    uint32_t key = lmpi_notice_group_key("kvs_1234_1");
    CHECK(key & 1);
    atomic_store(w0, 1);
    CHECK_EQ(lmpi_notice_post_foreign(seg, SIZE, key, 5), 0);
    CHECK_EQ(lmpi_notice_post_foreign(seg, SIZE, key, 5), 0);
    lmpi_notice_foreign *f = lmpi_notice_foreign_of(nb);
    CHECK((char *)f >= (char *)&nb->failed[2] && (char *)(f + 1) <= (char *)seg + WORDS);
    CHECK_EQ(atomic_load(&f->n), 1);
    CHECK_EQ(atomic_load(&f->entry[0]), (uint64_t)key << 32 | 5);
    CHECK_EQ(atomic_load(&nb->epoch), 3);
    CHECK_EQ(atomic_load(w0), 0);
    CHECK_EQ(lmpi_notice_failed(nb, 5), 0); /* not a process of this job */
}

int main(int argc, char **argv)
{
    notice_board();
    setenv("LMPI_SHM_CELLS", "16", 1); /* force cell exhaustion and recycling */
    /* "bitmap": senders flag their fast boxes; default: receivers scan them */
    if (argc > 1 && !strcmp(argv[1], "bitmap"))
        setenv("LMPI_SHM_FASTBOX_SCAN", "0", 1);
    if (argc > 1 && !strcmp(argv[1], "ring512")) {
        setenv("LMPI_SHM_FASTBOX_RING", "512", 1);
        scripted = true;
        CHECK(pipe(go) == 0 && pipe(done) == 0 && pipe(start) == 0);
    }
    if (argc > 1 && !strcmp(argv[1], "coop")) {
        coop_mode = true;
        CHECK(pipe(go) == 0 && pipe(done) == 0);
        CHECK((coop_src = malloc(COOP_BYTES)) != NULL);
        for (size_t i = 0; i < COOP_BYTES; i++) /* before the fork: the same bytes at the same address in every rank */
            coop_src[i] = (unsigned char)(i * 131 % 251 + 1);
    }
    lmpi_config_load();
    lmpi_tr_set_handler(deliver);
    char job[64];
    snprintf(job, sizeof(job), "unit-%d", (int)getpid());
    /* rank 0 creates the segment before the others exist: no PMI needed */
    CHECK_EQ(lmpi_shm_init(0, NPROC, 0, NPROC, job), LMPI_OK);
    pid_t pids[NPROC];
    for (int r = 1; r < NPROC; r++) {
        pids[r] = fork();
        if (pids[r] == 0)
            _exit(run(r));
    }
    int rc0 = run(0);
    CHECK_EQ(rc0, 0);
    for (int r = 1; r < NPROC; r++) {
        int status;
        waitpid(pids[r], &status, 0);
        CHECK(WIFEXITED(status));
        CHECK_EQ(WEXITSTATUS(status), 0);
    }
    /* everything given back: the pool holds exactly its units again, in one piece */
    size_t units = (size_t)NPROC * (size_t)lmpi_config.shm_coll_pool / 1024, n = 0;
    uint64_t first = lmpi_shm_pool_alloc(1), o = first;
    for (; o; o = lmpi_shm_pool_alloc(1000))
        n++;
    CHECK_EQ(n, units);
    for (size_t i = 0; i < n; i++)
        lmpi_shm_pool_free(first + i * 1024, 1000);
    CHECK_EQ(lmpi_shm_pool_alloc(units * 1024), first);
    CHECK_EQ(lmpi_shm_pool_alloc(1), 0);
    char path[128];
    snprintf(path, sizeof(path), "/dev/shm/lmpi-%s", job);
    CHECK_EQ(access(path, F_OK), -1); /* unlinked once all had attached */
    lmpi_shm_finalize();
    return unit_finish("test_shm");
}
