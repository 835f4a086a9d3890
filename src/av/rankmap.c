/* Rank-map construction: pattern detection, composition with the parent's
 * map (the paper's Table II, extended to blocks and negative strides),
 * re-detection of regular forms in irregular results, and interning of
 * lookup tables so that identical tables exist once. */
#include <string.h>

#include "av/rankmap.h"
#include "runtime/lmpi.h"

static bool table_baseline;
static int64_t live[LMPI_RM_NMODES];
static int64_t table_bytes;

#define INTERN_BUCKETS 256
static lmpi_lut *interned[INTERN_BUCKETS];

void lmpi_rankmap_set_table_baseline(bool on) { table_baseline = on; }
bool lmpi_rankmap_table_baseline(void) { return table_baseline; }
int64_t lmpi_rankmap_count(int mode) { return mode >= 0 && mode < LMPI_RM_NMODES ? live[mode] : 0; }
int64_t lmpi_rankmap_table_bytes(void) { return table_bytes; }

const char *lmpi_rankmap_mode_name(int mode)
{
    static const char *names[LMPI_RM_NMODES] = {"direct", "offset", "stride", "stride", "lut", "mlut", "table"};
    return mode >= 0 && mode < LMPI_RM_NMODES ? names[mode] : "?";
}

static void (*group_hook)(uint32_t pgid, int delta);

void lmpi_rankmap_set_group_hook(void (*hook)(uint32_t pgid, int delta)) { group_hook = hook; }

/* A map (or mlut entry) of a group other than the world holds it. */
static void hold_group(uint32_t pgid, int delta)
{
    if (pgid != 0 && pgid != LMPI_PGID_MULTI && group_hook)
        group_hook(pgid, delta);
}

static void init_map(lmpi_rankmap *m, lmpi_rm_mode mode, int size, uint32_t pgid)
{
    memset(m, 0, sizeof(*m));
    m->mode = (uint8_t)mode;
    m->size = size;
    m->pgid = pgid;
    live[mode]++;
    hold_group(pgid, 1);
}

/* Normalize a regular pattern lpid = o + (r / b) * s + r % b to the cheapest
 * mode that expresses it. */
static void set_regular(lmpi_rankmap *m, int n, uint32_t pgid, int64_t o, int64_t s, int64_t b)
{
    if (b >= n || (b > 1 && s == b)) { /* one block, or blocks that touch */
        b = 1;
        s = 1;
    }
    if (b == 1 && s == 1) {
        init_map(m, o == 0 ? LMPI_RM_DIRECT : LMPI_RM_OFFSET, n, pgid);
        m->offset = o;
        return;
    }
    if (n == 1) {
        init_map(m, o == 0 ? LMPI_RM_DIRECT : LMPI_RM_OFFSET, n, pgid);
        m->offset = o;
        return;
    }
    if (b == 1) {
        init_map(m, LMPI_RM_STRIDE, n, pgid);
        m->offset = o;
        m->stride = s;
        return;
    }
    init_map(m, LMPI_RM_BSTRIDE, n, pgid);
    m->offset = o;
    m->stride = s;
    m->blocksize = (int32_t)b;
    /* ceil(2^64 / b); 2^64 / b itself when b is a power of two. */
    if (((uint64_t)b & ((uint64_t)b - 1)) == 0)
        m->recip = (uint64_t)1 << (64 - __builtin_ctzll((uint64_t)b));
    else
        m->recip = UINT64_MAX / (uint64_t)b + 1;
}

/* Does a[i] follow o + (i / b) * s + i % b?  Finds o, s and b from the first
 * elements and validates the rest; a is any int array viewed as int64. */
static bool detect_seq(const uint32_t *a, int n, int64_t *po, int64_t *ps, int64_t *pb)
{
    if (n <= 0)
        return false;
    int64_t o = a[0];
    int b = 1;
    while (b < n && (int64_t)a[b] == o + b)
        b++;
    if (b == n) {
        *po = o, *ps = 1, *pb = 1;
        return true;
    }
    int64_t s;
    if (b == 1) {
        s = (int64_t)a[1] - o;
        if (s == 0)
            return false;
        for (int i = 2; i < n; i++)
            if ((int64_t)a[i] != o + (int64_t)i * s)
                return false;
    } else {
        s = (int64_t)a[b] - o;
        if (s == 0)
            return false;
        for (int i = b; i < n; i++)
            if ((int64_t)a[i] != o + (int64_t)(i / b) * s + i % b)
                return false;
    }
    *po = o, *ps = s, *pb = b;
    return true;
}

bool lmpi_rankmap_detect(lmpi_rankmap *m, const uint32_t *lpid, int n, uint32_t pgid)
{
    int64_t o, s, b;
    if (!detect_seq(lpid, n, &o, &s, &b))
        return false;
    set_regular(m, n, pgid, o, s, b);
    return true;
}

void lmpi_rankmap_direct(lmpi_rankmap *m, int size, uint32_t pgid)
{
    init_map(m, LMPI_RM_DIRECT, size, pgid);
}

/* ---- lookup tables -------------------------------------------------------- */

static uint64_t hash_ids(const uint32_t *ids, uint32_t n)
{
    uint64_t h = 1469598103934665603ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= ids[i];
        h *= 1099511628211ull;
    }
    return h;
}

static lmpi_lut *lut_new(const uint32_t *ids, uint32_t n)
{
    lmpi_lut *t = lmpi_malloc(sizeof(*t) + sizeof(uint32_t) * n, LMPI_MEM_RANKMAP);
    if (!t)
        return NULL;
    t->refs = 1;
    t->n = n;
    t->hash = 0;
    t->next = NULL;
    t->interned = 0;
    memcpy(t->ids, ids, sizeof(uint32_t) * n);
    table_bytes += (int64_t)(sizeof(*t) + sizeof(uint32_t) * n);
    return t;
}

/* The interned copy of ids (shared, one more reference). */
static lmpi_lut *lut_intern(const uint32_t *ids, uint32_t n)
{
    uint64_t h = hash_ids(ids, n);
    lmpi_lut **bucket = &interned[h % INTERN_BUCKETS];
    for (lmpi_lut *t = *bucket; t; t = t->next)
        if (t->hash == h && t->n == n && memcmp(t->ids, ids, sizeof(uint32_t) * n) == 0) {
            t->refs++;
            return t;
        }
    lmpi_lut *t = lut_new(ids, n);
    if (!t)
        return NULL;
    t->hash = h;
    t->interned = 1;
    t->next = *bucket;
    *bucket = t;
    return t;
}

static void lut_release(lmpi_lut *t)
{
    if (--t->refs)
        return;
    if (t->interned) {
        for (lmpi_lut **p = &interned[t->hash % INTERN_BUCKETS]; *p; p = &(*p)->next)
            if (*p == t) {
                *p = t->next;
                break;
            }
    }
    table_bytes -= (int64_t)(sizeof(*t) + sizeof(uint32_t) * t->n);
    lmpi_free(t);
}

/* An irregular (or baseline) map over explicit lpids. */
static bool set_from_lpids(lmpi_rankmap *m, const uint32_t *ids, int n, uint32_t pgid)
{
    if (table_baseline) {
        lmpi_lut *t = lut_new(ids, (uint32_t)n);
        if (!t)
            return false;
        init_map(m, LMPI_RM_TABLE, n, pgid);
        m->lut = t;
        return true;
    }
    if (lmpi_rankmap_detect(m, ids, n, pgid))
        return true;
    lmpi_lut *t = lut_intern(ids, (uint32_t)n);
    if (!t)
        return false;
    init_map(m, LMPI_RM_LUT, n, pgid);
    m->lut = t;
    return true;
}

bool lmpi_rankmap_from_gpids(lmpi_rankmap *m, const lmpi_gpid *g, int n)
{
    bool one_group = true;
    for (int i = 1; i < n && one_group; i++)
        one_group = g[i].pgid == g[0].pgid;
    if (one_group) {
        uint32_t *ids = lmpi_malloc(sizeof(uint32_t) * (size_t)(n ? n : 1), LMPI_MEM_OTHER);
        if (!ids)
            return false;
        for (int i = 0; i < n; i++)
            ids[i] = g[i].lpid;
        bool ok = set_from_lpids(m, ids, n, n ? g[0].pgid : 0);
        lmpi_free(ids);
        return ok;
    }
    lmpi_mlut *t = lmpi_malloc(sizeof(*t) + sizeof(lmpi_gpid) * (size_t)n, LMPI_MEM_RANKMAP);
    if (!t)
        return false;
    t->refs = 1;
    t->n = (uint32_t)n;
    memcpy(t->e, g, sizeof(lmpi_gpid) * (size_t)n);
    table_bytes += (int64_t)(sizeof(*t) + sizeof(lmpi_gpid) * (size_t)n);
    for (int i = 0; i < n; i++)
        hold_group(g[i].pgid, 1);
    init_map(m, LMPI_RM_MLUT, n, LMPI_PGID_MULTI);
    m->mlut = t;
    return true;
}

/* Translate every child rank through the parent and build from the result. */
typedef int64_t (*idx_fn)(const void *arg, int i);

static bool materialize(lmpi_rankmap *m, const lmpi_rankmap *parent, int n, idx_fn idx, const void *arg)
{
    if (parent->mode == LMPI_RM_MLUT) {
        lmpi_gpid *g = lmpi_malloc(sizeof(*g) * (size_t)(n ? n : 1), LMPI_MEM_OTHER);
        if (!g)
            return false;
        for (int i = 0; i < n; i++)
            g[i] = parent->mlut->e[idx(arg, i)];
        bool ok = lmpi_rankmap_from_gpids(m, g, n);
        lmpi_free(g);
        return ok;
    }
    uint32_t *ids = lmpi_malloc(sizeof(uint32_t) * (size_t)(n ? n : 1), LMPI_MEM_OTHER);
    if (!ids)
        return false;
    for (int i = 0; i < n; i++)
        ids[i] = lmpi_rankmap_lpid(parent, (int)idx(arg, i));
    bool ok = set_from_lpids(m, ids, n, parent->pgid);
    lmpi_free(ids);
    return ok;
}

typedef struct {
    int64_t o, s, b;
} pattern;

static int64_t pattern_idx(const void *arg, int i)
{
    const pattern *p = arg;
    return p->o + (int64_t)(i / p->b) * p->s + i % p->b;
}

static int64_t array_idx(const void *arg, int i) { return ((const int *)arg)[i]; }

bool lmpi_rankmap_derive_pattern(lmpi_rankmap *m, const lmpi_rankmap *parent, int n, int64_t o, int64_t s, int32_t b)
{
    pattern p = {o, s, b};
    if (b >= n || (b > 1 && s == b))
        p.s = 1, p.b = 1;
    bool offset_child = p.b == 1 && p.s == 1;
    if (table_baseline) {
        if (offset_child && o == 0 && n == parent->size && parent->mode == LMPI_RM_TABLE) {
            lmpi_rankmap_copy(m, parent); /* a dup shares the table */
            return true;
        }
        return materialize(m, parent, n, pattern_idx, &p);
    }
    switch ((lmpi_rm_mode)parent->mode) {
    case LMPI_RM_DIRECT:
        set_regular(m, n, parent->pgid, p.o, p.s, p.b);
        return true;
    case LMPI_RM_OFFSET:
        set_regular(m, n, parent->pgid, p.o + parent->offset, p.s, p.b);
        return true;
    case LMPI_RM_STRIDE: /* lpid = po + ps * idx */
        if (p.b == 1) {
            set_regular(m, n, parent->pgid, parent->offset + parent->stride * p.o, parent->stride * p.s, 1);
            return true;
        }
        break;
    case LMPI_RM_BSTRIDE: { /* lpid = po + (idx / pb) * ps + idx % pb */
        int64_t pb = parent->blocksize, ps = parent->stride, po = parent->offset;
        if (p.o < 0)
            break;
        int64_t base = po + (p.o / pb) * ps, c = p.o % pb;
        if (offset_child && c == 0 && n > 0) {
            set_regular(m, n, parent->pgid, base, ps, pb); /* whole parent blocks */
            return true;
        }
        if (p.b == 1 && p.s % pb == 0) { /* steps of whole blocks: one element each */
            set_regular(m, n, parent->pgid, base + c, (p.s / pb) * ps, 1);
            return true;
        }
        if (p.b == pb && c == 0 && p.s % pb == 0) { /* whole blocks with a block stride */
            set_regular(m, n, parent->pgid, base, (p.s / pb) * ps, pb);
            return true;
        }
        break;
    }
    case LMPI_RM_LUT:
        if (offset_child) { /* regular after all, or a window into the same table */
            if (lmpi_rankmap_detect(m, parent->lut->ids + parent->offset + p.o, n, parent->pgid))
                return true;
            init_map(m, LMPI_RM_LUT, n, parent->pgid);
            m->offset = parent->offset + p.o;
            m->lut = parent->lut;
            m->lut->refs++;
            return true;
        }
        break;
    default:
        break;
    }
    return materialize(m, parent, n, pattern_idx, &p);
}

bool lmpi_rankmap_derive(lmpi_rankmap *m, const lmpi_rankmap *parent, const int *idx, int n)
{
    int64_t o, s, b;
    if (n > 0 && detect_seq((const uint32_t *)idx, n, &o, &s, &b))
        return lmpi_rankmap_derive_pattern(m, parent, n, o, s, (int32_t)b);
    return materialize(m, parent, n, array_idx, idx);
}

void lmpi_rankmap_copy(lmpi_rankmap *dst, const lmpi_rankmap *src)
{
    *dst = *src;
    live[src->mode]++;
    hold_group(src->pgid, 1);
    if (src->mode == LMPI_RM_LUT || src->mode == LMPI_RM_TABLE)
        src->lut->refs++;
    else if (src->mode == LMPI_RM_MLUT)
        src->mlut->refs++;
}

void lmpi_rankmap_release(lmpi_rankmap *m)
{
    if (m->mode == LMPI_RM_LUT || m->mode == LMPI_RM_TABLE)
        lut_release(m->lut);
    else if (m->mode == LMPI_RM_MLUT && --m->mlut->refs == 0) {
        table_bytes -= (int64_t)(sizeof(*m->mlut) + sizeof(lmpi_gpid) * m->mlut->n);
        for (uint32_t i = 0; i < m->mlut->n; i++)
            hold_group(m->mlut->e[i].pgid, -1);
        lmpi_free(m->mlut);
    }
    live[m->mode]--;
    hold_group(m->pgid, -1);
    memset(m, 0, sizeof(*m));
    m->mode = LMPI_RM_DIRECT;
}

int lmpi_rankmap_find(const lmpi_rankmap *m, lmpi_gpid g)
{
    if (m->mode != LMPI_RM_MLUT && g.pgid != m->pgid)
        return -1;
    int64_t x = g.lpid;
    switch ((lmpi_rm_mode)m->mode) {
    case LMPI_RM_DIRECT:
        return x < m->size ? (int)x : -1;
    case LMPI_RM_OFFSET:
        x -= m->offset;
        return x >= 0 && x < m->size ? (int)x : -1;
    case LMPI_RM_STRIDE:
        x -= m->offset;
        if (x % m->stride)
            return -1;
        x /= m->stride;
        return x >= 0 && x < m->size ? (int)x : -1;
    default: /* blocks and tables: a scan (not on a hot path) */
        for (int r = 0; r < m->size; r++)
            if (lmpi_rankmap_gpid(m, r).lpid == g.lpid && lmpi_rankmap_gpid(m, r).pgid == g.pgid)
                return r;
        return -1;
    }
}
