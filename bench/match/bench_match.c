/* bench/match: the matching structures at module level, no MPI runtime.
 *
 * Reproduces the measurements of the multidimensional-queue paper on this
 * machine: its patterns 1 (search PRQ and delete: an arrival meets its
 * posted receive), 3 (search UMQ and delete: a receive or matched probe
 * meets its message) and 5 (search UMQ only: a probe), with one and five
 * messages per rank, forward and reverse order, over 1, 10 and 50 contexts,
 * at 256, 4K, 64K and 1M ranks, for list, array, hash, 4d and a red-black
 * tree keyed by rank (glibc's tsearch, the paper's Table 6 baseline).  It
 * also reproduces Table 5 (metadata overhead of 4d vs array) and Table 2
 * (pointer steps to reach the last item), and times MPI_ANY_SOURCE posts
 * into an empty queue.
 *
 * usage: bench_match [--quick] [--budget SECONDS]
 * A configuration whose operations do not finish within the budget (the
 * quadratic ones: list and tree in reverse order at large sizes) reports
 * the operations it did, marked "sampled" (the deepest ones come first, so
 * a sample overstates nothing in the structure's favour).
 * Last line: the JSON object of ../shared/BENCHMARKS.md. */
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "match/match.h"
#include "match/structure.h"
#include "runtime/config.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- red-black tree baseline: one node per rank, lists inside ----------- */
typedef struct {
    int rank;
    lmpi_mqi_list prq, umq;
} rb_node;

typedef struct {
    void *root;
    size_t nodes;
} rb_queue;

/* glibc's tsearch node: key, left (with the colour bit) and right pointers */
#define RB_INTERNAL_NODE_BYTES (3 * sizeof(void *))

static int rb_cmp(const void *a, const void *b)
{
    int x = ((const rb_node *)a)->rank, y = ((const rb_node *)b)->rank;
    return (x > y) - (x < y);
}

static void *rb_create(int size)
{
    (void)size;
    return calloc(1, sizeof(rb_queue));
}

static void rb_destroy(void *s)
{
    free(s);
}

static rb_node *rb_find(rb_queue *q, int rank, bool create)
{
    rb_node key = {.rank = rank};
    void **f = tfind(&key, &q->root, rb_cmp);
    if (f)
        return *f;
    if (!create)
        return NULL;
    rb_node *n = calloc(1, sizeof(*n));
    n->rank = rank;
    tsearch(n, &q->root, rb_cmp);
    q->nodes++;
    return n;
}

static void rb_release(rb_queue *q, rb_node *n)
{
    if (n->prq.head || n->umq.head)
        return;
    tdelete(n, &q->root, rb_cmp);
    free(n);
    q->nodes--;
}

static lmpi_mqi *rb_arrive(void *s, int rank, int tag, uint64_t limit, lmpi_mqi *item)
{
    rb_queue *q = s;
    rb_node *n = rb_find(q, rank, item != NULL);
    if (!n)
        return NULL;
    lmpi_mqi *m = lmpi_mqi_find_posted(&n->prq, rank, tag);
    if (m && m->seq < limit) {
        lmpi_mqi_unlink(&n->prq, m);
        rb_release(q, n);
        return m;
    }
    if (item)
        lmpi_mqi_append(&n->umq, item);
    return NULL;
}

static lmpi_mqi *rb_post(void *s, int rank, int tag, bool take, lmpi_mqi *item)
{
    rb_queue *q = s;
    rb_node *n = rb_find(q, rank, item != NULL);
    if (!n)
        return NULL;
    lmpi_mqi *m = lmpi_mqi_find_unexpected(&n->umq, rank, tag);
    if (m) {
        if (take) {
            lmpi_mqi_unlink(&n->umq, m);
            rb_release(q, n);
        }
        return m;
    }
    if (item)
        lmpi_mqi_append(&n->prq, item);
    return NULL;
}

static size_t rb_metadata(const void *s)
{
    const rb_queue *q = s;
    return sizeof(*q) + q->nodes * (sizeof(rb_node) + RB_INTERNAL_NODE_BYTES);
}

static const lmpi_match_ops rb_ops = {
    .name = "rbtree",
    .create = rb_create,
    .destroy = rb_destroy,
    .arrive = rb_arrive,
    .post = rb_post,
    .metadata_bytes = rb_metadata,
};

/* ---- driving one configuration ------------------------------------------- */
typedef struct {
    const char *structure;
    int pattern;
    int ranks;
    int msgs;
    int reverse;
    int contexts;
    double ns_per_match;
    double ns_per_insert;
    size_t metadata;
    long done, total;
    int sampled;
} result;

static lmpi_mqi *items;
static size_t items_cap;

static lmpi_mqi *item(size_t i)
{
    return &items[i];
}

/* One round: fill the queues, time the operations, empty the queues.
 * Returns the operations done (fewer than all when the budget ran out). */
static long round_once(const lmpi_match_ops *ops, int pattern, int ranks, int msgs, int reverse, int contexts,
                       double budget, double *t_insert, double *t_ops, size_t *metadata)
{
    size_t per_ctx = (size_t)ranks * (size_t)msgs;
    size_t total = per_ctx * (size_t)contexts;
    if (total > items_cap) {
        free(items);
        items = calloc(total, sizeof(lmpi_mqi));
        items_cap = total;
    }
    void **q = calloc((size_t)contexts, sizeof(void *));
    for (int c = 0; c < contexts; c++)
        q[c] = ops->create(ranks);
    /* insert: rank-major, tags 0..msgs-1; pattern 1 posts receives, 3 and 5
     * queue unexpected messages; contexts interleaved */
    uint64_t seq = 0;
    double t0 = now();
    for (size_t k = 0; k < per_ctx; k++)
        for (int c = 0; c < contexts; c++) {
            lmpi_mqi *m = item(k * (size_t)contexts + (size_t)c);
            m->rank = (int)(k / (size_t)msgs);
            m->tag = (int)(k % (size_t)msgs);
            m->seq = seq++;
            if (pattern == 1)
                ops->post(q[c], m->rank, m->tag, true, m);
            else
                ops->arrive(q[c], m->rank, m->tag, 0, m);
        }
    double t1 = now();
    *metadata = 0;
    for (int c = 0; c < contexts; c++)
        *metadata += ops->metadata_bytes(q[c]);
    /* the measured operations, forward or reverse rank order */
    long done = 0;
    double deadline = now() + budget;
    double t2 = now();
    for (size_t i = 0; i < per_ctx; i++) {
        size_t k = reverse ? per_ctx - 1 - i : i;
        int rank = (int)(k / (size_t)msgs), tag = (int)(k % (size_t)msgs);
        for (int c = 0; c < contexts; c++) {
            lmpi_mqi *m;
            if (pattern == 1)
                m = ops->arrive(q[c], rank, tag, UINT64_MAX, NULL);
            else
                m = ops->post(q[c], rank, tag, pattern == 3, NULL);
            if (!m) {
                fprintf(stderr, "%s pattern %d: no match for rank %d tag %d\n", ops->name, pattern, rank, tag);
                exit(1);
            }
            done++;
        }
        if ((i & 63) == 63 && now() > deadline)
            break;
    }
    double t3 = now();
    *t_insert = t1 - t0;
    *t_ops = t3 - t2;
    /* empty the queues untimed, then free */
    for (int c = 0; c < contexts; c++) {
        lmpi_mqi_list a, b;
        if (ops->drain)
            ops->drain(q[c], &a, &b);
        else
            for (size_t k = 0; k < per_ctx; k++)
                if (pattern == 1)
                    ops->arrive(q[c], (int)(k / (size_t)msgs), (int)(k % (size_t)msgs), UINT64_MAX, NULL);
                else
                    ops->post(q[c], (int)(k / (size_t)msgs), (int)(k % (size_t)msgs), true, NULL);
        ops->destroy(q[c]);
    }
    free(q);
    return done;
}

/* Rounds until the measured operations add up to min_time (small queues
 * take microseconds per round, too short to time once). */
static void run(const lmpi_match_ops *ops, int pattern, int ranks, int msgs, int reverse, int contexts,
                double budget, double min_time, result *res)
{
    long total = (long)ranks * msgs * contexts, done = 0, inserted = 0;
    double t_ins = 0, t_ops = 0;
    int rounds = 0;
    do {
        double ti, to;
        long d = round_once(ops, pattern, ranks, msgs, reverse, contexts, budget, &ti, &to, &res->metadata);
        done += d;
        inserted += total;
        t_ins += ti;
        t_ops += to;
        rounds++;
        if (d < total)
            break; /* the budget ran out: a sample */
    } while (t_ops < min_time && rounds < 100000);
    res->structure = ops->name;
    res->pattern = pattern;
    res->ranks = ranks;
    res->msgs = msgs;
    res->reverse = reverse;
    res->contexts = contexts;
    res->ns_per_match = t_ops * 1e9 / (double)done;
    res->ns_per_insert = t_ins * 1e9 / (double)inserted;
    res->done = done;
    res->total = total * rounds;
    res->sampled = done < total * rounds;
}

/* Bytes of structure with n contiguous ranks queued, one message each. */
static size_t overhead(const lmpi_match_ops *ops, int ranks, int n)
{
    if ((size_t)n > items_cap) {
        free(items);
        items = calloc((size_t)n, sizeof(lmpi_mqi));
        items_cap = (size_t)n;
    }
    void *q = ops->create(ranks);
    for (int r = 0; r < n; r++) {
        items[r].seq = (uint64_t)r;
        ops->arrive(q, r, 0, 0, &items[r]);
    }
    size_t bytes = ops->metadata_bytes(q);
    lmpi_mqi_list a, b;
    ops->drain(q, &a, &b);
    ops->destroy(q);
    return bytes;
}

/* Steps to reach the last item of a full queue (one message per rank). */
static uint64_t steps_to_last(const lmpi_match_ops *ops, int ranks)
{
    if ((size_t)ranks > items_cap) {
        free(items);
        items = calloc((size_t)ranks, sizeof(lmpi_mqi));
        items_cap = (size_t)ranks;
    }
    void *q = ops->create(ranks);
    for (int r = 0; r < ranks; r++) {
        items[r].seq = (uint64_t)r;
        ops->post(q, r, 0, true, &items[r]);
    }
    lmpi_match_visits = 0;
    ops->arrive(q, ranks - 1, 0, UINT64_MAX, NULL);
    uint64_t v = lmpi_match_visits;
    lmpi_mqi_list a, b;
    ops->drain(q, &a, &b);
    ops->destroy(q);
    return v;
}

int main(int argc, char **argv)
{
    bool quick = false;
    double budget = 2.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            budget = atof(argv[++i]);
    }
    if (quick)
        budget = 0.05;
    lmpi_config_load();
    const lmpi_match_ops *structs[] = {&lmpi_match_list_ops, &lmpi_match_array_ops, &lmpi_match_hash_ops,
                                       &lmpi_match_4d_ops, &rb_ops};
    const int nstructs = 5;
    int sizes_full[] = {256, 4096, 65536, 1048576};
    int sizes_quick[] = {256, 4096};
    int *sizes = quick ? sizes_quick : sizes_full;
    int nsizes = quick ? 2 : 4;
    int patterns[] = {1, 3, 5};
    int ctxs_full[] = {1, 10, 50}, ctxs_quick[] = {1, 10};
    int *ctxs = quick ? ctxs_quick : ctxs_full;
    int nctx = quick ? 2 : 3;

    size_t cap = 64;
    size_t nres = 0;
    result *res = malloc(cap * sizeof(result));
    printf("%-7s %-3s %8s %4s %-7s %4s %12s %12s %14s %s\n", "struct", "pat", "ranks", "msgs", "order", "ctx",
           "ns/match", "ns/insert", "metadata B", "note");
    for (int si = 0; si < nsizes; si++)
        for (int c = 0; c < nctx; c++) {
            /* 50 contexts of a million ranks would need 250M items: cap the
             * product so every configuration fits in memory */
            if ((long)sizes[si] * ctxs[c] > 8 * 1048576L)
                continue;
            for (int msgs = 1; msgs <= 5; msgs += 4)
                for (int p = 0; p < 3; p++)
                    for (int rev = 0; rev <= 1; rev++)
                        for (int s = 0; s < nstructs; s++) {
                            if ((long)sizes[si] * ctxs[c] * msgs > 8 * 1048576L)
                                continue;
                            if (nres == cap)
                                res = realloc(res, (cap *= 2) * sizeof(result));
                            result *r = &res[nres++];
                            run(structs[s], patterns[p], sizes[si], msgs, rev, ctxs[c], budget, quick ? 0.002 : 0.02, r);
                            char note[64] = "";
                            if (r->sampled)
                                snprintf(note, sizeof(note), "sampled %ld of %ld", r->done, r->total);
                            else
                                snprintf(note, sizeof(note), "%ld ops", r->done);
                            printf("%-7s %-3d %8d %4d %-7s %4d %12.1f %12.1f %14zu %s\n", r->structure, r->pattern,
                                   r->ranks, r->msgs, r->reverse ? "reverse" : "forward", r->contexts,
                                   r->ns_per_match, r->ns_per_insert, r->metadata, note);
                            fflush(stdout);
                        }
        }

    /* Table 5: metadata overhead, contiguous ranks, one message each */
    printf("\nTable 5 (paper: array 128.05 kB / 2.00 MB / 32.00 MB; 4d 184 B..24.68 kB, 248 B..194.3 kB, "
           "376 B..1.51 MB)\n%8s %8s %14s %14s\n", "ranks", "items", "array B", "4d B");
    int t5_sizes[] = {4096, 65536, 1048576};
    size_t t5[3][4][2];
    for (int i = 0; i < (quick ? 1 : 3); i++) {
        int fills[] = {1, 100, 1000, t5_sizes[i]};
        for (int f = 0; f < 4; f++) {
            t5[i][f][0] = overhead(&lmpi_match_array_ops, t5_sizes[i], fills[f]);
            t5[i][f][1] = overhead(&lmpi_match_4d_ops, t5_sizes[i], fills[f]);
            printf("%8d %8d %14zu %14zu\n", t5_sizes[i], fills[f], t5[i][f][0], t5[i][f][1]);
        }
    }
    /* Table 2: steps to the last item of a full queue */
    printf("\nTable 2 (paper: list n-1, array 3, 4d 26 / 50 / 98)\n%8s %10s %10s %10s %10s\n", "ranks", "list",
           "array", "hash", "4d");
    uint64_t t2[3][4];
    for (int i = 0; i < (quick ? 1 : 3); i++) {
        t2[i][0] = steps_to_last(&lmpi_match_list_ops, t5_sizes[i]);
        t2[i][1] = steps_to_last(&lmpi_match_array_ops, t5_sizes[i]);
        t2[i][2] = steps_to_last(&lmpi_match_hash_ops, t5_sizes[i]);
        t2[i][3] = steps_to_last(&lmpi_match_4d_ops, t5_sizes[i]);
        printf("%8d %10llu %10llu %10llu %10llu\n", t5_sizes[i], (unsigned long long)t2[i][0],
               (unsigned long long)t2[i][1], (unsigned long long)t2[i][2], (unsigned long long)t2[i][3]);
    }
    /* MPI_ANY_SOURCE post into an empty queue, through the engine */
    printf("\nMPI_ANY_SOURCE post into an empty queue (post + cancel)\n%8s %-6s %10s\n", "ranks", "struct",
           "ns/post");
    const char *eng_structs[] = {"list", "array", "hash", "4d"};
    double anys[4][4];
    for (int si = 0; si < nsizes; si++)
        for (int s = 0; s < 4; s++) {
            lmpi_match_finalize();
            lmpi_match_select(eng_structs[s]);
            lmpi_match_queue *mq = lmpi_match_queue_get(1, sizes[si]);
            lmpi_mqi m;
            int iters = quick ? 20000 : 1000000;
            double a = now();
            for (int i = 0; i < iters; i++) {
                lmpi_match_post(mq, MPI_ANY_SOURCE, 0, &m);
                lmpi_match_cancel(mq, &m);
            }
            anys[si][s] = (now() - a) * 1e9 / iters;
            printf("%8d %-6s %10.1f\n", sizes[si], eng_structs[s], anys[si][s]);
        }
    lmpi_match_finalize();

    /* auto against list through the engine: shallow (one pending receive,
     * the common case) and deep (reverse order over many ranks) */
    printf("\nThrough the engine: auto vs list\n%-8s %-6s %8s %10s\n", "case", "struct", "ranks", "ns/match");
    double eng_ns[2][2];
    const char *eng_names[] = {"list", "auto"};
    int deep_ranks = quick ? 1024 : 4096;
    /* shallow: alternate list and auto, best of 5 each (noise on a shared VM
     * is larger than the difference being measured) */
    eng_ns[0][0] = eng_ns[1][0] = 1e30;
    for (int rep = 0; rep < 10; rep++) {
        int s = rep % 2;
        lmpi_match_finalize();
        lmpi_match_select(eng_names[s]);
        lmpi_match_queue *mq = lmpi_match_queue_get(7, 256);
        lmpi_mqi post, msg;
        int iters = quick ? 100000 : 2000000;
        double a = now();
        for (int i = 0; i < iters; i++) { /* depth 1: post, then its message arrives */
            lmpi_match_post(mq, 3, 5, &post);
            lmpi_match_arrive(mq, 3, 5, &msg);
        }
        double ns = (now() - a) * 1e9 / iters;
        if (ns < eng_ns[s][0])
            eng_ns[s][0] = ns;
    }
    for (int s = 0; s < 2; s++) {
        double a;
        lmpi_match_queue *mq;
        lmpi_match_finalize();
        lmpi_match_select(eng_names[s]);
        mq = lmpi_match_queue_get(8, deep_ranks);
        lmpi_mqi *posts = calloc((size_t)deep_ranks, sizeof(lmpi_mqi));
        lmpi_mqi spare;
        double total = 0;
        int rounds = quick ? 2 : 5;
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < deep_ranks; k++)
                lmpi_match_post(mq, k, 0, &posts[k]);
            a = now();
            for (int k = deep_ranks - 1; k >= 0; k--)
                lmpi_match_arrive(mq, k, 0, &spare);
            total += now() - a;
        }
        eng_ns[s][1] = total * 1e9 / ((double)deep_ranks * rounds);
        free(posts);
        printf("%-8s %-6s %8d %10.1f\n%-8s %-6s %8d %10.1f\n", "shallow", eng_names[s], 256, eng_ns[s][0], "deep",
               eng_names[s], deep_ranks, eng_ns[s][1]);
    }
    lmpi_match_finalize();

    /* the JSON line */
    printf("{\"bench\": \"match\", \"results\": [");
    const char *sep = "";
    for (size_t i = 0; i < nres; i++) {
        result *r = &res[i];
        printf("%s{\"impl\": \"leanmpi:%s\", \"metric\": \"ns_per_match\", \"value\": %.2f, \"min\": %.2f, "
               "\"max\": %.2f, \"unit\": \"ns\", \"structure\": \"%s\", \"ranks\": %d, \"depth\": %d, "
               "\"pattern\": %d, \"msgs\": %d, \"order\": \"%s\", \"contexts\": %d, \"sampled\": %s}",
               sep, r->structure, r->ns_per_match, r->ns_per_match, r->ns_per_match, r->structure, r->ranks,
               r->ranks * r->msgs, r->pattern, r->msgs, r->reverse ? "reverse" : "forward", r->contexts,
               r->sampled ? "true" : "false");
        sep = ", ";
        printf("%s{\"impl\": \"leanmpi:%s\", \"metric\": \"metadata_bytes\", \"value\": %zu, \"min\": %zu, "
               "\"max\": %zu, \"unit\": \"bytes\", \"structure\": \"%s\", \"ranks\": %d, \"depth\": %d, "
               "\"pattern\": %d, \"msgs\": %d, \"order\": \"%s\", \"contexts\": %d}",
               sep, r->structure, r->metadata, r->metadata, r->metadata, r->structure, r->ranks,
               r->ranks * r->msgs, r->pattern, r->msgs, r->reverse ? "reverse" : "forward", r->contexts);
    }
    for (int i = 0; i < (quick ? 1 : 3); i++) {
        int fills[] = {1, 100, 1000, t5_sizes[i]};
        for (int f = 0; f < 4; f++)
            for (int k = 0; k < 2; k++)
                printf(", {\"impl\": \"leanmpi:%s\", \"metric\": \"metadata_bytes\", \"value\": %zu, \"min\": %zu, "
                       "\"max\": %zu, \"unit\": \"bytes\", \"structure\": \"%s\", \"ranks\": %d, \"depth\": %d, "
                       "\"table\": 5}",
                       k ? "4d" : "array", t5[i][f][k], t5[i][f][k], t5[i][f][k], k ? "4d" : "array", t5_sizes[i],
                       fills[f]);
        const char *names[] = {"list", "array", "hash", "4d"};
        for (int k = 0; k < 4; k++)
            printf(", {\"impl\": \"leanmpi:%s\", \"metric\": \"steps_to_last\", \"value\": %llu, \"min\": %llu, "
                   "\"max\": %llu, \"unit\": \"steps\", \"structure\": \"%s\", \"ranks\": %d, \"table\": 2}",
                   names[k], (unsigned long long)t2[i][k], (unsigned long long)t2[i][k], (unsigned long long)t2[i][k],
                   names[k], t5_sizes[i]);
    }
    for (int si = 0; si < nsizes; si++)
        for (int s = 0; s < 4; s++)
            printf(", {\"impl\": \"leanmpi:%s\", \"metric\": \"any_source_post_ns\", \"value\": %.2f, \"min\": %.2f, "
                   "\"max\": %.2f, \"unit\": \"ns\", \"structure\": \"%s\", \"ranks\": %d, \"depth\": 0}",
                   eng_structs[s], anys[si][s], anys[si][s], anys[si][s], eng_structs[s], sizes[si]);
    for (int s = 0; s < 2; s++)
        for (int d = 0; d < 2; d++)
            printf(", {\"impl\": \"leanmpi:%s\", \"metric\": \"ns_per_match\", \"value\": %.2f, \"min\": %.2f, "
                   "\"max\": %.2f, \"unit\": \"ns\", \"structure\": \"%s\", \"ranks\": %d, \"depth\": %d, "
                   "\"path\": \"engine\"}",
                   eng_names[s], eng_ns[s][d], eng_ns[s][d], eng_ns[s][d], eng_names[s], d ? deep_ranks : 256,
                   d ? deep_ranks : 1);
    printf("]}\n");
    free(items);
    free(res);
    return 0;
}
