/* Rank maps and node maps: pattern detection, composition against a
 * brute-force translation, table sharing, and memory that returns to zero. */
#include <stdint.h>
#include <string.h>

#include "av/av.h"
#include "av/rankmap.h"
#include "runtime/lmpi.h"
#include "unit.h"

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void check_same(const lmpi_rankmap *m, const uint32_t *expect, int n)
{
    CHECK_EQ(m->size, n);
    for (int i = 0; i < n; i++)
        if (lmpi_rankmap_lpid(m, i) != expect[i]) {
            CHECK_EQ(lmpi_rankmap_lpid(m, i), expect[i]);
            return;
        }
}

static void test_detect(void)
{
    uint32_t a[64];
    lmpi_rankmap m;
    for (int i = 0; i < 64; i++)
        a[i] = (uint32_t)i;
    CHECK(lmpi_rankmap_detect(&m, a, 64, 0));
    CHECK_EQ(m.mode, LMPI_RM_DIRECT);
    lmpi_rankmap_release(&m);
    for (int i = 0; i < 64; i++)
        a[i] = (uint32_t)(i + 7);
    CHECK(lmpi_rankmap_detect(&m, a, 64, 0));
    CHECK_EQ(m.mode, LMPI_RM_OFFSET);
    lmpi_rankmap_release(&m);
    for (int i = 0; i < 64; i++)
        a[i] = (uint32_t)(1 + 2 * i); /* odd ranks */
    CHECK(lmpi_rankmap_detect(&m, a, 64, 0));
    CHECK_EQ(m.mode, LMPI_RM_STRIDE);
    check_same(&m, a, 64);
    lmpi_rankmap_release(&m);
    for (int i = 0; i < 64; i++)
        a[i] = (uint32_t)(1000 - 3 * i); /* negative stride */
    CHECK(lmpi_rankmap_detect(&m, a, 64, 0));
    CHECK_EQ(m.mode, LMPI_RM_STRIDE);
    check_same(&m, a, 64);
    lmpi_rankmap_release(&m);
    for (int i = 0; i < 61; i++) /* blocks of 3 every 10, last block short */
        a[i] = (uint32_t)(5 + (i / 3) * 10 + i % 3);
    CHECK(lmpi_rankmap_detect(&m, a, 61, 0));
    CHECK_EQ(m.mode, LMPI_RM_BSTRIDE);
    check_same(&m, a, 61);
    lmpi_rankmap_release(&m);
    for (int i = 0; i < 64; i++) /* blocks of 4 in reverse block order */
        a[i] = (uint32_t)(60 - (i / 4) * 4 + i % 4);
    CHECK(lmpi_rankmap_detect(&m, a, 64, 0));
    CHECK_EQ(m.mode, LMPI_RM_BSTRIDE);
    check_same(&m, a, 64);
    lmpi_rankmap_release(&m);
    a[10] = 999;
    CHECK(!lmpi_rankmap_detect(&m, a, 64, 0));
}

/* The reciprocal division is exact for every blocksize and rank tried. */
static void test_division(void)
{
    for (uint32_t b = 2; b < 3000; b += 1 + b / 50) {
        lmpi_rankmap m, parent;
        lmpi_rankmap_direct(&parent, 1 << 30, 0);
        CHECK(lmpi_rankmap_derive_pattern(&m, &parent, 1 << 30, 0, (int64_t)b * 3, (int32_t)b));
        for (int k = 0; k < 2000; k++) {
            uint32_t r = k < 1000 ? (uint32_t)k : rnd(1u << 30);
            uint32_t want = (r / b) * b * 3 + r % b;
            if (lmpi_rankmap_lpid(&m, (int)r) != want) {
                CHECK_EQ(lmpi_rankmap_lpid(&m, (int)r), want);
                break;
            }
        }
        lmpi_rankmap_release(&m);
        lmpi_rankmap_release(&parent);
    }
}

/* A random child of a random parent: the derived map must translate every
 * rank as parent(idx[i]) does. */
static void random_indices(int *idx, int n, int parent_n)
{
    int kind = (int)rnd(6);
    int64_t o = rnd((uint32_t)parent_n), s = 1 + rnd(4), b = 1 + rnd(5);
    for (int i = 0; i < n; i++) {
        int64_t v;
        switch (kind) {
        case 0: v = i; break;                                  /* dup */
        case 1: v = o + i; break;                              /* low/high */
        case 2: v = o + i * s; break;                          /* odd/even */
        case 3: v = o + (i / b) * s * b + i % b; break;        /* blocks */
        case 4: v = parent_n - 1 - i; break;                   /* reversed */
        default: v = rnd((uint32_t)parent_n); break;           /* random */
        }
        idx[i] = (int)(((v % parent_n) + parent_n) % parent_n);
    }
    if (kind == 5) { /* n distinct ranks in random order: a shuffled prefix */
        static int perm[1 << 12];
        for (int i = 0; i < parent_n; i++)
            perm[i] = i;
        for (int i = parent_n - 1; i > 0; i--) {
            int j = (int)rnd((uint32_t)i + 1), t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        memcpy(idx, perm, sizeof(int) * (size_t)n);
    }
}

static void test_compose(void)
{
    enum { P = 512 };
    static int idx[P], idx2[P];
    static uint32_t expect[P], parent_ids[P];
    for (int trial = 0; trial < 4000; trial++) {
        lmpi_rankmap world, parent, child;
        lmpi_rankmap_direct(&world, P, 0);
        int pn = 1 + (int)rnd(P);
        random_indices(idx, pn, P);
        /* parents may repeat ranks in the random case only if pn > n distinct;
         * keep them a valid subset */
        bool seen[P] = {0};
        int k = 0;
        for (int i = 0; i < pn; i++)
            if (!seen[idx[i]])
                seen[idx[i]] = true, idx[k++] = idx[i];
        pn = k;
        CHECK(lmpi_rankmap_derive(&parent, &world, idx, pn));
        for (int i = 0; i < pn; i++)
            parent_ids[i] = (uint32_t)idx[i];
        check_same(&parent, parent_ids, pn);
        int cn = 1 + (int)rnd((uint32_t)pn);
        random_indices(idx2, cn, pn);
        bool seen2[P] = {0};
        k = 0;
        for (int i = 0; i < cn; i++)
            if (!seen2[idx2[i]])
                seen2[idx2[i]] = true, idx2[k++] = idx2[i];
        cn = k;
        for (int i = 0; i < cn; i++)
            expect[i] = parent_ids[idx2[i]];
        CHECK(lmpi_rankmap_derive(&child, &parent, idx2, cn));
        check_same(&child, expect, cn);
        /* regular results are never left in a table */
        lmpi_rankmap probe;
        if (lmpi_rankmap_detect(&probe, expect, cn, 0)) {
            CHECK(child.mode != LMPI_RM_LUT);
            lmpi_rankmap_release(&probe);
        }
        for (int i = 0; i < cn; i++)
            CHECK_EQ(lmpi_rankmap_find(&child, (lmpi_gpid){0, expect[i]}), i);
        lmpi_rankmap_release(&child);
        lmpi_rankmap_release(&parent);
        lmpi_rankmap_release(&world);
        if (unit_failures)
            return;
    }
}

static void test_sharing(void)
{
    enum { P = 1000 };
    static int rev[P];
    for (int i = 0; i < P; i++)
        rev[i] = P - 1 - i;
    int64_t before = lmpi_mem_current(LMPI_MEM_RANKMAP);
    lmpi_rankmap world, a, b, low, high;
    lmpi_rankmap_direct(&world, P, 0);
    CHECK(lmpi_rankmap_derive(&a, &world, rev, P)); /* reversed: stride -1 is regular */
    CHECK_EQ(a.mode, LMPI_RM_STRIDE);
    lmpi_rankmap_release(&a);
    /* a shuffled world: a table; the same table twice is stored once */
    for (int i = 0; i < P; i++)
        rev[i] = (i * 7919) % P;
    CHECK(lmpi_rankmap_derive(&a, &world, rev, P));
    CHECK(lmpi_rankmap_derive(&b, &world, rev, P));
    CHECK_EQ(a.mode, LMPI_RM_LUT);
    CHECK(a.lut == b.lut);
    CHECK_EQ(lmpi_rankmap_table_bytes(), (int64_t)(sizeof(lmpi_lut) + 4 * P));
    /* the high half of a table-mapped communicator is a window into it */
    CHECK(lmpi_rankmap_derive_pattern(&low, &a, P / 2, 0, 1, 1));
    CHECK(lmpi_rankmap_derive_pattern(&high, &a, P / 2, P / 2, 1, 1));
    CHECK(high.lut == a.lut && low.lut == a.lut);
    CHECK_EQ(lmpi_rankmap_lpid(&high, 3), (uint32_t)rev[P / 2 + 3]);
    CHECK_EQ(lmpi_rankmap_table_bytes(), (int64_t)(sizeof(lmpi_lut) + 4 * P));
    lmpi_rankmap_release(&a), lmpi_rankmap_release(&b), lmpi_rankmap_release(&low), lmpi_rankmap_release(&high);
    CHECK_EQ(lmpi_rankmap_table_bytes(), 0);
    /* the baseline: a table per communicator, shared by dup only */
    lmpi_rankmap_set_table_baseline(true);
    lmpi_rankmap t, dup;
    CHECK(lmpi_rankmap_derive_pattern(&t, &world, P, 0, 1, 1));
    CHECK_EQ(t.mode, LMPI_RM_TABLE);
    CHECK(lmpi_rankmap_derive_pattern(&dup, &t, P, 0, 1, 1));
    CHECK(dup.lut == t.lut);
    CHECK(lmpi_rankmap_derive_pattern(&low, &t, P / 2, 0, 1, 1));
    CHECK(low.lut != t.lut);
    CHECK_EQ(lmpi_rankmap_lpid(&low, 17), 17);
    lmpi_rankmap_release(&t), lmpi_rankmap_release(&dup), lmpi_rankmap_release(&low);
    lmpi_rankmap_set_table_baseline(false);
    /* several process groups: mlut, and a window of one group is regular */
    lmpi_gpid g[8];
    for (int i = 0; i < 8; i++)
        g[i] = (lmpi_gpid){(uint32_t)(i / 4), (uint32_t)(i % 4)};
    lmpi_rankmap ml, sub;
    CHECK(lmpi_rankmap_from_gpids(&ml, g, 8));
    CHECK_EQ(ml.mode, LMPI_RM_MLUT);
    CHECK_EQ(lmpi_rankmap_gpid(&ml, 5).pgid, 1);
    CHECK_EQ(lmpi_rankmap_gpid(&ml, 5).lpid, 1);
    CHECK(lmpi_rankmap_derive_pattern(&sub, &ml, 4, 4, 1, 1));
    CHECK_EQ(sub.mode, LMPI_RM_DIRECT);
    CHECK_EQ(sub.pgid, 1);
    lmpi_rankmap_release(&ml), lmpi_rankmap_release(&sub), lmpi_rankmap_release(&world);
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_RANKMAP), before);
    for (int m = 0; m < LMPI_RM_NMODES; m++)
        CHECK_EQ(lmpi_rankmap_count(m), 0);
}

static void test_nodemap(void)
{
    enum { N = 96 };
    int node_of[N];
    lmpi_nodemap m;
    for (int i = 0; i < N; i++)
        node_of[i] = i / 16;
    CHECK(lmpi_nodemap_build(&m, node_of, N));
    CHECK_EQ(m.mode, LMPI_NODEMAP_BLOCK);
    CHECK_EQ(lmpi_nodemap_node(&m, 95), 5);
    CHECK_EQ(lmpi_nodemap_bytes(&m), 0);
    lmpi_nodemap_free(&m);
    for (int i = 0; i < N; i++)
        node_of[i] = i % 6;
    CHECK(lmpi_nodemap_build(&m, node_of, N));
    CHECK_EQ(m.mode, LMPI_NODEMAP_CYCLIC);
    CHECK_EQ(lmpi_nodemap_node(&m, 95), 5);
    lmpi_nodemap_free(&m);
    for (int i = 0; i < N; i++)
        node_of[i] = i < 10 ? 0 : 1 + (i % 3);
    CHECK(lmpi_nodemap_build(&m, node_of, N));
    CHECK_EQ(m.mode, LMPI_NODEMAP_TABLE16);
    for (int i = 0; i < N; i++)
        CHECK_EQ(lmpi_nodemap_node(&m, (uint32_t)i), node_of[i]);
    CHECK_EQ(lmpi_nodemap_bytes(&m), 2 * N);
    lmpi_nodemap_free(&m);
    /* the AV: computed on one node, 8-byte entries with the network bit otherwise */
    lmpi_av av;
    for (int i = 0; i < N; i++)
        node_of[i] = 0;
    CHECK(lmpi_av_create(&av, 0, N, node_of, 3, true));
    CHECK_EQ(lmpi_av_entry_bytes(&av), 0);
    CHECK_EQ(lmpi_av_addr(&av, 42), 42);
    lmpi_av_destroy(&av);
    for (int i = 0; i < N; i++)
        node_of[i] = i / 32;
    CHECK(lmpi_av_create(&av, 0, N, node_of, 40, false));
    CHECK_EQ(lmpi_av_entry_bytes(&av), 8);
    CHECK_EQ(lmpi_av_addr(&av, 33), 1);                       /* shm index on node 1 */
    CHECK_EQ(lmpi_av_addr(&av, 70), LMPI_AV_NET_BIT | 70);   /* network */
    lmpi_av_destroy(&av);
}

int main(void)
{
    test_detect();
    test_division();
    test_compose();
    test_sharing();
    test_nodemap();
    return unit_finish("test_rankmap");
}
