/* Derived datatypes against an independent reference: random nested types
 * (depth up to 5: vectors with negative strides, hvectors, indexed,
 * hindexed, indexed_block, structs, resized, contiguous) are built with the
 * constructors and described in parallel by a plain type map computed here
 * from the MPI definitions.  Packing, unpacking, partial packing at random
 * offsets and iovecs must reproduce the reference byte for byte; envelope
 * and contents must return what was given; external32 must round-trip. */
#include <stdint.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "datatype/datatype.h"
#include "unit.h"

static uint64_t rng = 0x243f6a8885a308d3ull;
static int rnd(int n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (int)(rng % (uint64_t)n);
}

/* ---- the reference: a type map (offset, length) per basic element ---------- */
#define MAXMAP 4096
typedef struct {
    int n;
    long off[MAXMAP];
    int len[MAXMAP];
    long lb, ub;  /* with resized bounds sticking */
    int align;
    int marked;
    int overflow;
} tmap;

static void ref_add(tmap *t, long off, int len)
{
    if (t->n == MAXMAP) {
        t->overflow = 1;
        return;
    }
    t->off[t->n] = off;
    t->len[t->n] = len;
    t->n++;
}

/* append `blen` copies of c at disp (spaced by c's extent); bounds as MPI */
static void ref_block(tmap *t, const tmap *c, long blen, long disp, int *any)
{
    long ext = c->ub - c->lb;
    for (long k = 0; k < blen; k++)
        for (int i = 0; i < c->n; i++)
            ref_add(t, disp + k * ext + c->off[i], c->len[i]);
    if (blen <= 0)
        return;
    long span = (blen - 1) * ext;
    long lb = disp + c->lb + (span < 0 ? span : 0), ub = disp + c->ub + (span > 0 ? span : 0);
    if (!*any) {
        t->lb = lb, t->ub = ub, *any = 1;
    } else {
        t->lb = lb < t->lb ? lb : t->lb;
        t->ub = ub > t->ub ? ub : t->ub;
    }
    t->align = c->align > t->align ? c->align : t->align;
    t->marked |= c->marked;
}

typedef struct {
    MPI_Datatype h;
    tmap *map;
} rtype;

static tmap *new_map(void) { return calloc(1, sizeof(tmap)); }

static rtype prim(void)
{
    static const MPI_Datatype prims[] = {MPI_CHAR, MPI_SHORT, MPI_INT, MPI_DOUBLE, MPI_FLOAT};
    static const int sizes[] = {1, 2, 4, 8, 4};
    int k = rnd(5);
    rtype r = {prims[k], new_map()};
    ref_add(r.map, 0, sizes[k]);
    r.map->lb = 0, r.map->ub = sizes[k], r.map->align = sizes[k];
    return r;
}

static lmpi_datatype *D(MPI_Datatype h) { return lmpi_datatype_from_handle(h); }

static void free_rtype(rtype *r)
{
    if (!D(r->h)->predefined)
        lmpi_impl_Type_free(&r->h);
    free(r->map);
}

static int checks_envelope = 1;

static void check_contents(MPI_Datatype h, int combiner, int ni, const int *ints, int na, const MPI_Aint *aints,
                           int nt, const MPI_Datatype *types)
{
    if (!checks_envelope)
        return;
    int a, b, c, comb;
    lmpi_impl_Type_get_envelope(D(h), &a, &b, &c, &comb);
    CHECK_EQ(comb, combiner);
    CHECK_EQ(a, ni);
    CHECK_EQ(b, na);
    CHECK_EQ(c, nt);
    int gi[256];
    MPI_Aint ga[256];
    MPI_Datatype gt[64];
    if (a > 256 || b > 256 || c > 64)
        return;
    lmpi_impl_Type_get_contents(D(h), 256, 256, 64, gi, ga, gt);
    for (int i = 0; i < ni; i++)
        CHECK_EQ(gi[i], ints[i]);
    for (int i = 0; i < na; i++)
        CHECK_EQ(ga[i], aints[i]);
    for (int i = 0; i < nt; i++) {
        CHECK(gt[i] == types[i]);
        if (!D(gt[i])->predefined)
            lmpi_impl_Type_free(&gt[i]);
    }
}

/* A random type of the given depth and its reference map. */
static rtype random_type(int depth)
{
    if (depth == 0)
        return prim();
    rtype c = random_type(depth - 1);
    long cext = c.map->ub - c.map->lb;
    rtype r = {MPI_DATATYPE_NULL, new_map()};
    int any = 0;
    int kind = rnd(8);
    lmpi_status st = LMPI_OK;
    switch (kind) {
    case 0: { /* contiguous */
        int n = 1 + rnd(3);
        st = lmpi_impl_Type_contiguous(n, D(c.h), &r.h);
        ref_block(r.map, c.map, n, 0, &any);
        int ints[1] = {n};
        check_contents(r.h, MPI_COMBINER_CONTIGUOUS, 1, ints, 0, NULL, 1, &c.h);
        break;
    }
    case 1: { /* vector, maybe negative stride */
        int n = 1 + rnd(3), bl = 1 + rnd(2), stride = (rnd(2) ? -1 : 1) * (bl + rnd(3));
        st = lmpi_impl_Type_vector(n, bl, stride, D(c.h), &r.h);
        for (int i = 0; i < n; i++)
            ref_block(r.map, c.map, bl, (long)i * stride * cext, &any);
        int ints[3] = {n, bl, stride};
        check_contents(r.h, MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 1, &c.h);
        break;
    }
    case 2: { /* hvector in bytes */
        int n = 1 + rnd(3), bl = 1 + rnd(2);
        MPI_Aint stride = (rnd(3) ? 1 : -1) * (bl * cext + rnd(9));
        st = lmpi_impl_Type_create_hvector(n, bl, stride, D(c.h), &r.h);
        for (int i = 0; i < n; i++)
            ref_block(r.map, c.map, bl, (long)i * stride, &any);
        int ints[2] = {n, bl};
        check_contents(r.h, MPI_COMBINER_HVECTOR, 2, ints, 1, &stride, 1, &c.h);
        break;
    }
    case 3: { /* indexed */
        int n = 1 + rnd(3), bl[3], dp[3];
        for (int i = 0; i < n; i++)
            bl[i] = rnd(3), dp[i] = rnd(7) - 2;
        st = lmpi_impl_Type_indexed(n, (lmpi_iarray){bl, 4}, (lmpi_iarray){dp, 4}, D(c.h), &r.h);
        for (int i = 0; i < n; i++)
            ref_block(r.map, c.map, bl[i], (long)dp[i] * cext, &any);
        int ints[7] = {n};
        for (int i = 0; i < n; i++)
            ints[1 + i] = bl[i], ints[1 + n + i] = dp[i];
        check_contents(r.h, MPI_COMBINER_INDEXED, 1 + 2 * n, ints, 0, NULL, 1, &c.h);
        break;
    }
    case 4: { /* hindexed */
        int n = 1 + rnd(3), bl[3];
        MPI_Aint dp[3];
        for (int i = 0; i < n; i++)
            bl[i] = 1 + rnd(2), dp[i] = rnd(40) - 10;
        st = lmpi_impl_Type_create_hindexed(n, (lmpi_iarray){bl, 4}, (lmpi_iarray){dp, 8}, D(c.h), &r.h);
        for (int i = 0; i < n; i++)
            ref_block(r.map, c.map, bl[i], dp[i], &any);
        int ints[4] = {n};
        for (int i = 0; i < n; i++)
            ints[1 + i] = bl[i];
        check_contents(r.h, MPI_COMBINER_HINDEXED, 1 + n, ints, n, dp, 1, &c.h);
        break;
    }
    case 5: { /* indexed_block */
        int n = 1 + rnd(3), bl = 1 + rnd(2), dp[3];
        for (int i = 0; i < n; i++)
            dp[i] = i * (bl + rnd(2));
        st = lmpi_impl_Type_create_indexed_block(n, bl, (lmpi_iarray){dp, 4}, D(c.h), &r.h);
        for (int i = 0; i < n; i++)
            ref_block(r.map, c.map, bl, (long)dp[i] * cext, &any);
        int ints[5] = {n, bl};
        for (int i = 0; i < n; i++)
            ints[2 + i] = dp[i];
        check_contents(r.h, MPI_COMBINER_INDEXED_BLOCK, 2 + n, ints, 0, NULL, 1, &c.h);
        break;
    }
    case 6: { /* struct of c and a primitive */
        rtype p = prim();
        MPI_Datatype ts[2] = {c.h, p.h};
        int bl[2] = {1 + rnd(2), 1 + rnd(3)};
        MPI_Aint dp[2] = {0, 0};
        dp[1] = (c.map->ub > 0 ? c.map->ub : 0) * bl[0] + rnd(5);
        st = lmpi_impl_Type_create_struct(2, (lmpi_iarray){bl, 4}, (lmpi_iarray){dp, 8}, ts, &r.h);
        ref_block(r.map, c.map, bl[0], dp[0], &any);
        ref_block(r.map, p.map, bl[1], dp[1], &any);
        if (!r.map->marked && r.map->align > 1) {
            long ext = r.map->ub - r.map->lb, a = r.map->align > 8 ? 8 : r.map->align;
            r.map->ub += (a - ext % a) % a;
        }
        int ints[3] = {2, bl[0], bl[1]};
        check_contents(r.h, MPI_COMBINER_STRUCT, 3, ints, 2, dp, 2, ts);
        free_rtype(&p);
        break;
    }
    default: { /* resized */
        MPI_Aint lb = rnd(5) - 2, ext = cext + rnd(9);
        st = lmpi_impl_Type_create_resized(D(c.h), lb, ext, &r.h);
        for (int i = 0; i < c.map->n; i++)
            ref_add(r.map, c.map->off[i], c.map->len[i]);
        r.map->lb = lb, r.map->ub = lb + ext, r.map->marked = 1, r.map->align = c.map->align;
        MPI_Aint a[2] = {lb, ext};
        check_contents(r.h, MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &c.h);
        any = 1;
        break;
    }
    }
    CHECK_EQ(st, LMPI_OK);
    if (!any)
        r.map->lb = r.map->ub = 0;
    free_rtype(&c);
    return r;
}

enum { MARGIN = 1 << 16 };

static void check_type(rtype *t, int count)
{
    lmpi_datatype *d = D(t->h);
    tmap *m = t->map;
    if (m->overflow)
        return;
    long ext = m->ub - m->lb, size = 0;
    for (int i = 0; i < m->n; i++)
        size += m->len[i];
    CHECK_EQ(d->size, size);
    CHECK_EQ(d->lb, m->lb);
    CHECK_EQ(d->extent, ext);
    /* the buffer covers every byte of every instance */
    static unsigned char mem[2 * MARGIN], ref[MARGIN], out[MARGIN], back[2 * MARGIN], ref_back[2 * MARGIN];
    unsigned char *base = mem + MARGIN / 2;
    long total = size * count;
    if (total > MARGIN / 2 || labs(ext) * count > MARGIN / 4)
        return;
    for (int i = 0; i < 2 * MARGIN; i++)
        mem[i] = (unsigned char)(i * 7 + 3);
    long pos = 0;
    for (int k = 0; k < count; k++)
        for (int i = 0; i < m->n; i++) {
            memcpy(ref + pos, base + k * ext + m->off[i], (size_t)m->len[i]);
            pos += m->len[i];
        }
    lmpi_dt_pack(base, count, d, 0, total, out);
    CHECK(memcmp(out, ref, (size_t)total) == 0);
    /* partial packs from random offsets */
    for (int rep = 0; rep < 4 && total > 0; rep++) {
        long a = rnd((int)total), b = a + rnd((int)(total - a) + 1);
        memset(out, 0, (size_t)total);
        lmpi_dt_pack(base, count, d, a, b - a, out);
        CHECK(memcmp(out, ref + a, (size_t)(b - a)) == 0);
    }
    /* unpack: into a clean buffer, in two pieces */
    memset(back, 0, sizeof(back));
    memset(ref_back, 0, sizeof(ref_back));
    pos = 0;
    for (int k = 0; k < count; k++)
        for (int i = 0; i < m->n; i++) {
            memcpy(ref_back + MARGIN / 2 + k * ext + m->off[i], ref + pos, (size_t)m->len[i]);
            pos += m->len[i];
        }
    long cut = total ? rnd((int)total + 1) : 0;
    lmpi_dt_unpack(back + MARGIN / 2, count, d, 0, cut, ref);
    lmpi_dt_unpack(back + MARGIN / 2, count, d, cut, total - cut, ref + cut);
    CHECK(memcmp(back, ref_back, sizeof(back)) == 0);
    /* iovecs, a few at a time, cover the stream in order */
    struct iovec iov[3];
    long first = 0, got = 0;
    while (first < total) {
        MPI_Count done;
        int n = lmpi_dt_iov(base, count, d, first, total - first, iov, 3, &done);
        CHECK(n > 0 && done > 0);
        if (n <= 0 || done <= 0)
            break;
        for (int i = 0; i < n; i++) {
            CHECK(memcmp(iov[i].iov_base, ref + got, iov[i].iov_len) == 0);
            got += (long)iov[i].iov_len;
        }
        first += done;
    }
    CHECK_EQ(got, total);
    /* external32 round trip restores every byte of the type map */
    MPI_Count esize, p1 = 0, p2 = 0;
    lmpi_impl_Pack_external_size("external32", count, d, &esize);
    static unsigned char ext32[MARGIN];
    if (esize <= MARGIN) {
        CHECK_EQ(lmpi_impl_Pack_external("external32", base, count, d, ext32, MARGIN, &p1), LMPI_OK);
        CHECK_EQ(p1, esize);
        memset(back, 0, sizeof(back));
        CHECK_EQ(lmpi_impl_Unpack_external("external32", ext32, MARGIN, &p2, back + MARGIN / 2, count, d), LMPI_OK);
        CHECK_EQ(p2, esize);
        for (int k = 0; k < count; k++)
            for (int i = 0; i < m->n; i++) {
                long o = MARGIN / 2 + k * ext + m->off[i];
                if (memcmp(back + o, mem + o, (size_t)m->len[i]) != 0) {
                    CHECK(!"external32 round trip");
                    k = count;
                    break;
                }
            }
    }
    /* elements: every basic element of `count` instances */
    CHECK_EQ(lmpi_dt_elements(d, total), (MPI_Count)m->n * count);
}

static void test_random(int trials)
{
    for (int t = 0; t < trials && !unit_failures; t++) {
        rtype r = random_type(1 + rnd(5));
        lmpi_impl_Type_commit(&r.h);
        check_type(&r, 1 + rnd(3));
        free_rtype(&r);
    }
}

static void test_fixed(void)
{
    /* a 3D subarray face and the runs it compiles to */
    int sizes[3] = {16, 16, 16}, sub[3] = {16, 16, 1}, start[3] = {0, 0, 15};
    MPI_Datatype face;
    CHECK_EQ(lmpi_impl_Type_create_subarray(3, (lmpi_iarray){sizes, 4}, (lmpi_iarray){sub, 4},
                                            (lmpi_iarray){start, 4}, MPI_ORDER_C, D(MPI_DOUBLE), &face),
             LMPI_OK);
    CHECK_EQ(D(face)->size, 16 * 16 * 8);
    CHECK_EQ(D(face)->extent, 16 * 16 * 16 * 8);
    CHECK_EQ(lmpi_dt_runs(D(face)), 256);
    static double cube[16 * 16 * 16], packed[256];
    for (int i = 0; i < 4096; i++)
        cube[i] = i;
    lmpi_dt_pack(cube, 1, D(face), 0, 256 * 8, packed);
    for (int i = 0; i < 256; i++)
        CHECK_EQ(packed[i], cube[i * 16 + 15]);
    int n[5];
    int comb;
    lmpi_impl_Type_get_envelope(D(face), &n[0], &n[1], &n[2], &comb);
    CHECK_EQ(comb, MPI_COMBINER_SUBARRAY);
    CHECK_EQ(n[0], 3 * 3 + 2);
    lmpi_impl_Type_free(&face);
    /* a contiguous vector is one run; a strided one keeps its loop */
    MPI_Datatype v;
    lmpi_impl_Type_vector(10, 4, 4, D(MPI_INT), &v);
    CHECK(D(v)->contiguous);
    lmpi_impl_Type_free(&v);
    lmpi_impl_Type_vector(1000, 1, 3, D(MPI_DOUBLE), &v);
    CHECK(!D(v)->contiguous);
    CHECK_EQ(D(v)->node->kind, LMPI_DT_VECTOR);
    lmpi_impl_Type_free(&v);
    /* darray: 2 x 2 block distribution of an 8 x 6 array, rank 3 */
    int gs[2] = {8, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2},
        ps[2] = {2, 2};
    MPI_Datatype da;
    CHECK_EQ(lmpi_impl_Type_create_darray(4, 3, 2, (lmpi_iarray){gs, 4}, dist, dargs, ps, MPI_ORDER_C, D(MPI_INT), &da),
             LMPI_OK);
    /* rank 3 = coords (1, 1): rows 4..7, columns {2, 3} (cyclic 2 over 2 procs: 2,3 then 6.. none) */
    CHECK_EQ(D(da)->size, 4 * 2 * 4);
    static int arr[48], got[8];
    for (int i = 0; i < 48; i++)
        arr[i] = i;
    lmpi_dt_pack(arr, 1, D(da), 0, 32, got);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 2; c++)
            CHECK_EQ(got[r * 2 + c], (4 + r) * 6 + 2 + c);
    lmpi_impl_Type_free(&da);
    /* envelopes of the constructors the random walk does not make */
    MPI_Datatype hb, dup;
    MPI_Aint hdisp[2] = {0, 40};
    CHECK_EQ(lmpi_impl_Type_create_hindexed_block(2, 3, (lmpi_iarray){hdisp, 8}, D(MPI_INT), &hb), LMPI_OK);
    int hbi[2] = {2, 3};
    check_contents(hb, MPI_COMBINER_HINDEXED_BLOCK, 2, hbi, 2, hdisp, 1, (MPI_Datatype[]){MPI_INT});
    CHECK_EQ(lmpi_impl_Type_dup(D(hb), &dup), LMPI_OK);
    check_contents(dup, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &hb);
    CHECK_EQ(D(dup)->size, 24);
    lmpi_impl_Type_free(&dup);
    lmpi_impl_Type_free(&hb);
    CHECK_EQ(lmpi_impl_Type_create_darray(4, 3, 2, (lmpi_iarray){gs, 4}, dist, dargs, ps, MPI_ORDER_C, D(MPI_INT), &da),
             LMPI_OK);
    int dints[3 + 4 * 2 + 1] = {4, 3, 2, 8, 6, dist[0], dist[1], dargs[0], dargs[1], 2, 2, MPI_ORDER_C};
    check_contents(da, MPI_COMBINER_DARRAY, 12, dints, 0, NULL, 1, (MPI_Datatype[]){MPI_INT});
    lmpi_impl_Type_free(&da);
    /* external32 is big-endian, MPI_LONG is 4 bytes there */
    int x = 0x01020304;
    unsigned char e[8];
    MPI_Count pos = 0;
    lmpi_impl_Pack_external("external32", &x, 1, D(MPI_INT), e, 8, &pos);
    CHECK(e[0] == 1 && e[3] == 4);
    long l = -5;
    MPI_Count s;
    lmpi_impl_Pack_external_size("external32", 1, D(MPI_LONG), &s);
    CHECK_EQ(s, 4);
    pos = 0;
    lmpi_impl_Pack_external("external32", &l, 1, D(MPI_LONG), e, 8, &pos);
    long l2 = 0;
    pos = 0;
    lmpi_impl_Unpack_external("external32", e, 8, &pos, &l2, 1, D(MPI_LONG));
    CHECK_EQ(l2, -5);
    /* MPI_SHORT_INT: two runs, 6 bytes in an 8-byte extent */
    struct { short a; int b; } si[2] = {{1, 2}, {3, 4}};
    unsigned char sp[12];
    lmpi_dt_pack(si, 2, D(MPI_SHORT_INT), 0, 12, sp);
    short s0;
    int i1;
    memcpy(&s0, sp + 6, 2);
    memcpy(&i1, sp + 8, 4);
    CHECK_EQ(s0, 3);
    CHECK_EQ(i1, 4);
    /* bad input */
    MPI_Datatype bad;
    CHECK_EQ(lmpi_impl_Type_contiguous(-1, D(MPI_INT), &bad), LMPI_ERR_COUNT);
    CHECK_EQ(lmpi_impl_Type_vector(INT32_MAX, INT32_MAX, 1, D(MPI_DOUBLE), &bad) == LMPI_OK, 0);
    MPI_Datatype pre = MPI_INT;
    CHECK_EQ(lmpi_impl_Type_free(&pre), LMPI_ERR_TYPE);
}

int main(int argc, char **argv)
{
    lmpi_datatype_init_builtin();
    int64_t before = lmpi_mem_current(LMPI_MEM_DATATYPE);
    test_fixed();
    test_random(argc > 1 ? atoi(argv[1]) : 20000);
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_DATATYPE), before); /* every type freed */
    return unit_finish("test_datatype");
}
