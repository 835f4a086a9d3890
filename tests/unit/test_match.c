/* The matching structures against a reference model.
 *
 * Millions of random operations (posts with and without wildcards, arrivals,
 * probes, matched probes, cancels) over several contexts of different sizes
 * drive the engine and a model that keeps one ordered list per queue, the
 * plainest reading of MPI's matching rules.  Every match must pick the same
 * item.  Run for list, array, hash, 4d and auto (with a low threshold so
 * contexts migrate back and forth).  usage: test_match [ops] [seed] */
#include <stdlib.h>
#include <string.h>

#include "match/match.h"
#include "runtime/config.h"
#include "unit.h"

enum { NCTX = 4, MAXITEMS = 4096 };
/* 4d spans 2, 8, 16 and 32; the array structure scans every rank on an
 * MPI_ANY_SOURCE search, which bounds how large the test can go. */
static const int ctx_size[NCTX] = {8, 300, 5000, 70000};

typedef struct item {
    lmpi_mqi mqi; /* first: the engine's view */
    int id;
    int ctx;
    int posted; /* 1 posted receive, 0 unexpected message */
    int rank, tag;
    struct item *mnext; /* model list */
} item;

static item items[MAXITEMS];
static int free_ids[MAXITEMS], nfree;
static item *model_prq[NCTX], *model_umq[NCTX];
static int live;
static uint64_t rng_state;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

/* ranks: a few hot ones, some spread over the whole range (several Planes
 * and Segments of the 4d structure) */
static int pick_rank(int ctx)
{
    int size = ctx_size[ctx];
    switch (rnd() % 4) {
    case 0: return (int)(rnd() % 3);
    case 1: return size - 1 - (int)(rnd() % 3);
    case 2: return (int)(rnd() % 16) * (size / 16);
    default: return (int)(rnd() % (uint32_t)size);
    }
}

static int pick_tag(void)
{
    return (int)(rnd() % 4);
}

static item *new_item(int ctx, int posted, int rank, int tag)
{
    if (nfree == 0)
        return NULL;
    item *it = &items[free_ids[--nfree]];
    it->ctx = ctx;
    it->posted = posted;
    it->rank = rank;
    it->tag = tag;
    return it;
}

static void release(item *it)
{
    free_ids[nfree++] = it->id;
}

static void model_append(item **l, item *it)
{
    it->mnext = NULL;
    while (*l)
        l = &(*l)->mnext;
    *l = it;
}

static void model_remove(item **l, item *it)
{
    while (*l != it)
        l = &(*l)->mnext;
    *l = it->mnext;
}

static int accepts(int prank, int ptag, int rank, int tag)
{
    return (prank == rank || prank == MPI_ANY_SOURCE) && (ptag == tag || ptag == MPI_ANY_TAG);
}

static item *model_find_posted(int ctx, int rank, int tag)
{
    for (item *it = model_prq[ctx]; it; it = it->mnext)
        if (accepts(it->rank, it->tag, rank, tag))
            return it;
    return NULL;
}

static item *model_find_unexpected(int ctx, int rank, int tag)
{
    for (item *it = model_umq[ctx]; it; it = it->mnext)
        if (accepts(rank, tag, it->rank, it->tag))
            return it;
    return NULL;
}

static long mismatches;

static void expect_same(item *engine, item *model, const char *what)
{
    if (engine != model) {
        if (mismatches++ < 10)
            fprintf(stderr, "%s: engine matched item %d, model item %d\n", what, engine ? engine->id : -1,
                    model ? model->id : -1);
    }
}

/* A message (rank, tag) arrives in context c, at the engine and the model;
 * false when no item is free. */
static bool arrive_one(lmpi_match_queue *q, int c, int rank, int tag, const char *what)
{
    item *it = new_item(c, 0, rank, tag);
    if (!it)
        return false;
    item *model = model_find_posted(c, rank, tag);
    lmpi_mqi *m = lmpi_match_arrive(q, rank, tag, &it->mqi);
    expect_same((item *)m, model, what);
    if (model) {
        model_remove(&model_prq[c], model);
        release(model);
        release(it);
        live--;
    } else {
        model_append(&model_umq[c], it);
        live++;
    }
    return true;
}

/* A receive (rank, tag may be wildcards) is posted in context c. */
static bool post_one(lmpi_match_queue *q, int c, int rank, int tag)
{
    item *it = new_item(c, 1, rank, tag);
    if (!it)
        return false;
    item *model = model_find_unexpected(c, rank, tag);
    lmpi_mqi *m = lmpi_match_post(q, rank, tag, &it->mqi);
    expect_same((item *)m, model, "post");
    if (model) {
        model_remove(&model_umq[c], model);
        release(model);
        release(it);
        live--;
    } else {
        model_append(&model_prq[c], it);
        live++;
    }
    return true;
}

static void run(const char *structure, long ops, uint64_t seed)
{
    lmpi_match_finalize();
    CHECK_EQ(lmpi_match_select(structure), LMPI_OK);
    memset(model_prq, 0, sizeof(model_prq));
    memset(model_umq, 0, sizeof(model_umq));
    nfree = 0;
    for (int i = MAXITEMS - 1; i >= 0; i--) {
        items[i].id = i;
        free_ids[nfree++] = i;
    }
    live = 0;
    rng_state = seed;
    lmpi_match_queue *q[NCTX];
    for (int c = 0; c < NCTX; c++)
        q[c] = lmpi_match_queue_get((uint32_t)(c * 2 + 10), ctx_size[c]);
    long counts[6] = {0};
    for (long op = 0; op < ops; op++) {
        int c = (int)(rnd() % NCTX);
        /* keep queues around a few hundred items: deep enough for auto to
         * move contexts, shallow enough for the model */
        int bias = live > 600 ? 3 : live < 50 ? 0 : 1;
        uint32_t r = rnd() % 100;
        if (r < 30 + (bias == 3 ? 0 : 10)) {
            /* arrival */
            int rank = pick_rank(c), tag = pick_tag();
            if (!arrive_one(q[c], c, rank, tag, "arrive"))
                continue;
            counts[0]++;
        } else if (r < 70 - (bias == 3 ? 20 : 0)) {
            /* post: a quarter ANY_SOURCE, a quarter ANY_TAG */
            int rank = rnd() % 4 == 0 ? MPI_ANY_SOURCE : pick_rank(c);
            int tag = rnd() % 4 == 0 ? MPI_ANY_TAG : pick_tag();
            if (!post_one(q[c], c, rank, tag))
                continue;
            counts[1]++;
        } else if (r < 80) {
            /* probe, or matched probe */
            int rank = rnd() % 3 == 0 ? MPI_ANY_SOURCE : pick_rank(c);
            int tag = rnd() % 3 == 0 ? MPI_ANY_TAG : pick_tag();
            bool take = rnd() % 2;
            item *model = model_find_unexpected(c, rank, tag);
            lmpi_mqi *m = lmpi_match_probe(q[c], rank, tag, take);
            expect_same((item *)m, model, take ? "mprobe" : "probe");
            if (model && take) {
                model_remove(&model_umq[c], model);
                release(model);
                live--;
            }
            counts[take ? 3 : 2]++;
        } else if (r < 88 || bias == 3) {
            /* cancel a random queued posted receive of this context */
            item *victim = model_prq[c];
            int skip = (int)(rnd() % 8);
            while (victim && skip-- > 0 && victim->mnext)
                victim = victim->mnext;
            if (victim) {
                lmpi_match_cancel(q[c], &victim->mqi);
                model_remove(&model_prq[c], victim);
                release(victim);
                live--;
                counts[4]++;
            }
        } else {
            /* drain: arrivals for the oldest posted receives, in a burst */
            for (int k = 0; k < 5 && model_prq[c]; k++) {
                item *p = model_prq[c];
                int rank = p->rank == MPI_ANY_SOURCE ? pick_rank(c) : p->rank;
                int tag = p->tag == MPI_ANY_TAG ? pick_tag() : p->tag;
                if (!arrive_one(q[c], c, rank, tag, "burst arrive"))
                    break;
                counts[5]++;
            }
        }
        if ((op & 0xffff) == 0) {
            size_t prq = 0, umq = 0;
            for (int cc = 0; cc < NCTX; cc++) {
                for (item *it = model_prq[cc]; it; it = it->mnext)
                    prq++;
                for (item *it = model_umq[cc]; it; it = it->mnext)
                    umq++;
            }
            CHECK_EQ(lmpi_match_posted_length(), prq);
            CHECK_EQ(lmpi_match_unexpected_length(), umq);
        }
    }
    printf("%-6s %ld ops: %ld arrivals, %ld posts, %ld probes, %ld mprobes, %ld cancels, %ld burst arrivals; "
           "%llu migrations, max depth %llu\n",
           structure, ops, counts[0], counts[1], counts[2], counts[3], counts[4], counts[5],
           (unsigned long long)lmpi_match_stat.migrations, (unsigned long long)lmpi_match_stat.max_depth);
    if (!strcmp(structure, "auto"))
        CHECK(lmpi_match_stat.migrations > 0);
}

int main(int argc, char **argv)
{
    long ops = argc > 1 ? atol(argv[1]) : 1000000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x9e3779b97f4a7c15ull;
    setenv("LMPI_MATCH_ADJUSTMENT", "1.0", 1);
    setenv("LMPI_MATCH_AUTO_TARGET", "4d", 1);
    lmpi_config_load();
    const char *structures[] = {"list", "array", "hash", "4d", "auto"};
    for (int i = 0; i < 5; i++)
        run(structures[i], ops, seed + (uint64_t)i);
    setenv("LMPI_MATCH_AUTO_TARGET", "hash", 1);
    lmpi_config_load();
    run("auto", ops, seed + 7);
    CHECK_EQ(mismatches, 0);
    lmpi_match_finalize();
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_MATCH), 0);
    return unit_finish("test_match");
}
