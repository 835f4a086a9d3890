/* Mapping orders, placement and the contention model (mapping.h). */
#include "topo/mapping.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char dim_letters[] = "XYZWVU";

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- orders ------------------------------------------------------------ */
static void order_name(lmpi_map_order *o)
{
    for (int i = 0; i < o->ndigits; i++)
        o->name[i] = o->digit[i] < 0 ? 'T' : dim_letters[o->digit[i]];
    o->name[o->ndigits] = '\0';
}

static bool next_permutation(int *a, int n)
{
    int i = n - 2;
    while (i >= 0 && a[i] >= a[i + 1])
        i--;
    if (i < 0)
        return false;
    int j = n - 1;
    while (a[j] <= a[i])
        j--;
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
    for (int l = i + 1, r = n - 1; l < r; l++, r--) {
        t = a[l];
        a[l] = a[r];
        a[r] = t;
    }
    return true;
}

int lmpi_map_orders(const lmpi_net *net, lmpi_map_order *out)
{
    if (net->kind == LMPI_NET_TREE) {
        memset(out, 0, 2 * sizeof(*out));
        snprintf(out[0].name, sizeof(out[0].name), "block");
        snprintf(out[1].name, sizeof(out[1].name), "cyclic");
        out[1].cyclic = true;
        return 2;
    }
    /* Lexicographic permutations of (T, X, Y, ...) start with TXYZ, the block order. */
    int nd = net->ndims + 1, a[LMPI_NET_MAX_DIMS + 1], n = 0;
    for (int i = 0; i < nd; i++)
        a[i] = i - 1;
    do {
        lmpi_map_order *o = &out[n++];
        memset(o, 0, sizeof(*o));
        o->ndigits = nd;
        memcpy(o->digit, a, sizeof(int) * (size_t)nd);
        order_name(o);
    } while (n < LMPI_MAP_MAX_ORDERS && next_permutation(a, nd));
    return n;
}

int lmpi_map_parse_order(const lmpi_net *net, const char *s, lmpi_map_order *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    bool block = !strcmp(s, "block"), cyclic = !strcmp(s, "cyclic");
    if (net->kind == LMPI_NET_TREE) {
        if (!block && !cyclic) {
            snprintf(err, errlen, "--map-by %s: a %s takes the orders block and cyclic", s,
                     net->flat ? "flat network" : "switch tree");
            return -1;
        }
        snprintf(o->name, sizeof(o->name), "%s", s);
        o->cyclic = cyclic;
        return 0;
    }
    int nd = net->ndims + 1;
    o->ndigits = nd;
    if (block || cyclic) {
        for (int i = 0; i < nd; i++)
            o->digit[i] = block ? i - 1 : (i < nd - 1 ? i : -1);
        order_name(o);
        return 0;
    }
    char want[LMPI_NET_MAX_DIMS + 2];
    want[0] = 'T';
    memcpy(want + 1, dim_letters, (size_t)net->ndims);
    want[nd] = '\0';
    bool seen[LMPI_NET_MAX_DIMS + 1] = {false};
    bool ok = strlen(s) == (size_t)nd;
    for (int i = 0; ok && i < nd; i++) {
        const char *at = strchr(want, s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
        int k = at && s[i] ? (int)(at - want) : -1;
        if (k < 0 || seen[k])
            ok = false;
        else {
            seen[k] = true;
            o->digit[i] = k - 1;
        }
    }
    if (!ok) {
        snprintf(err, errlen, "--map-by %s: not an order of this network (a permutation of %s, block or cyclic)", s,
                 want);
        return -1;
    }
    order_name(o);
    return 0;
}

/* Messages leaving one tile of shape T of P's grid, the tile placed one
 * tile away from the grid's corner where the grid allows (no edge effects). */
static int64_t tile_exits(const lmpi_pattern *p, const int *t, int64_t *nb, double *w)
{
    int64_t base[3], out = 0;
    int g = p->ndims;
    for (int i = 0; i < g; i++)
        base[i] = p->dims[i] >= 3 * t[i] ? t[i] : 0;
    int64_t cells = 1;
    for (int i = 0; i < g; i++)
        cells *= t[i];
    for (int64_t k = 0; k < cells; k++) {
        int64_t c[3], v = k, r = 0;
        for (int i = g - 1; i >= 0; i--) {
            c[i] = base[i] + v % t[i];
            v /= t[i];
        }
        for (int i = 0; i < g; i++)
            r = r * p->dims[i] + c[i];
        int64_t n = lmpi_pattern_neighbors(p, r, nb, w);
        for (int64_t j = 0; j < n; j++) {
            int64_t q = nb[j];
            bool inside = true;
            for (int i = g - 1; i >= 0; i--) {
                int64_t ci = q % p->dims[i];
                q /= p->dims[i];
                inside &= ci >= base[i] && ci < base[i] + t[i];
            }
            out += !inside;
        }
    }
    return out;
}

/* How many sizes of the grid of T-shaped blocks are sizes of distinct
 * torus dimensions (0..3). */
static int shape_matches(const lmpi_net *net, const lmpi_pattern *p, const int *t)
{
    if (net->kind == LMPI_NET_TREE)
        return 0;
    bool used[LMPI_NET_MAX_DIMS] = {false};
    int m = 0;
    for (int i = 0; i < p->ndims; i++)
        for (int d = 0; d < net->ndims; d++)
            if (!used[d] && p->dims[i] / t[i] == net->dims[d]) {
                used[d] = true;
                m++;
                break;
            }
    return m;
}

/* The folds of a 2D grid of T-shaped blocks onto a 3D torus (mapping.h). */
static int add_folds(const lmpi_net *net, const int *t, const lmpi_pattern *p, lmpi_map_order *out)
{
    int64_t rows = p->dims[0] / t[0], cols = p->dims[1] / t[1];
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    int n = 0;
    for (int k = 0; k < 6; k++) {
        int a = perms[k][0], b = perms[k][1], c = perms[k][2];
        if (cols % net->dims[a] || rows % net->dims[b])
            continue;
        int64_t f = cols / net->dims[a], g = rows / net->dims[b];
        if (f * g != net->dims[c] || f == 1 || g == 1)
            continue; /* f or g of 1 is a plain walk, listed already */
        for (int fast = 0; fast < 2; fast++) {
            lmpi_map_order *o = &out[n++];
            memset(o, 0, sizeof(*o));
            o->ntile = 2;
            o->grid[0] = p->dims[0];
            o->grid[1] = p->dims[1];
            o->tile[0] = t[0];
            o->tile[1] = t[1];
            o->folded = true;
            o->fold_cols_fast = fast;
            o->fold[0] = a;
            o->fold[1] = b;
            o->fold[2] = c;
            o->fold_f = (int)f;
            o->fold_g = (int)g;
            snprintf(o->name, sizeof(o->name), "%dx%d/fold-%c%c-%c%s", t[0], t[1], dim_letters[a], dim_letters[b],
                     dim_letters[c], fast ? "c" : "r");
        }
    }
    return n;
}

int lmpi_map_tiled_orders(const lmpi_net *net, const lmpi_pattern *p, lmpi_map_order *out)
{
    if (p->kind == LMPI_PAT_EDGES || p->ndims < 2 || net->cores < 2)
        return 0;
    int g = p->ndims, best[LMPI_MAP_TILE_SHAPES][3], nbest = 0;
    int64_t best_exits[LMPI_MAP_TILE_SHAPES];
    int64_t *nb = malloc(sizeof(int64_t) * (size_t)(p->max_degree + 1));
    double *w = malloc(sizeof(double) * (size_t)(p->max_degree + 1));
    if (!nb || !w) {
        free(nb);
        free(w);
        return 0;
    }
    /* every factorization cores = t0 * t1 (* t2) with t_i dividing the grid */
    int t[3] = {1, 1, 1};
    for (t[0] = 1; t[0] <= net->cores; t[0]++) {
        for (t[1] = 1; t[1] <= net->cores; t[1]++) {
            int rest = net->cores / t[0];
            if (net->cores % t[0] || rest % t[1])
                continue;
            if (g == 2 && t[1] != rest)
                continue;
            t[2] = g == 3 ? rest / t[1] : 1;
            bool ok = t[0] > 1 || (g == 3 && t[1] > 1); /* only the last cut: a T-first order */
            int64_t blocks = 1;
            for (int i = 0; i < g && ok; i++) {
                ok = p->dims[i] % t[i] == 0;
                blocks *= p->dims[i] / t[i];
            }
            if (!ok || blocks > net->nodes)
                continue;
            /* Ties in messages leaving a block are common (4x4x2, 2x4x4, 4x2x4);
             * prefer shapes whose grid of blocks has the torus's own sizes, which
             * a walk embeds with every neighbour one hop away. */
            int64_t ex = tile_exits(p, t, nb, w) * 8 + (7 - shape_matches(net, p, t));
            int at = nbest < LMPI_MAP_TILE_SHAPES ? nbest++ : LMPI_MAP_TILE_SHAPES;
            while (at > 0 && best_exits[at - 1] > ex) {
                if (at < LMPI_MAP_TILE_SHAPES) {
                    best_exits[at] = best_exits[at - 1];
                    memcpy(best[at], best[at - 1], sizeof(best[0]));
                }
                at--;
            }
            if (at < LMPI_MAP_TILE_SHAPES) {
                best_exits[at] = ex;
                memcpy(best[at], t, sizeof(t));
            }
        }
    }
    free(nb);
    free(w);
    int n = 0;
    for (int b = 0; b < nbest; b++) {
        lmpi_map_order walks[720];
        int nw = 1;
        if (net->kind != LMPI_NET_TREE) {
            int a[LMPI_NET_MAX_DIMS];
            nw = 0;
            for (int i = 0; i < net->ndims; i++)
                a[i] = i;
            do {
                walks[nw].ndigits = net->ndims;
                memcpy(walks[nw].digit, a, sizeof(int) * (size_t)net->ndims);
                nw++;
            } while (nw < 720 && next_permutation(a, net->ndims));
        }
        for (int k = 0; k < nw; k++) {
            lmpi_map_order *o = &out[n++];
            memset(o, 0, sizeof(*o));
            o->ntile = g;
            for (int i = 0; i < g; i++) {
                o->grid[i] = p->dims[i];
                o->tile[i] = best[b][i];
            }
            int len = snprintf(o->name, sizeof(o->name), "%d", o->tile[0]);
            for (int i = 1; i < g; i++)
                len += snprintf(o->name + len, sizeof(o->name) - (size_t)len, "x%d", o->tile[i]);
            if (net->kind != LMPI_NET_TREE) {
                o->ndigits = walks[k].ndigits;
                memcpy(o->digit, walks[k].digit, sizeof(o->digit));
                len += snprintf(o->name + len, sizeof(o->name) - (size_t)len, "/");
                for (int i = 0; i < o->ndigits; i++)
                    o->name[len++] = dim_letters[o->digit[i]];
                o->name[len] = '\0';
            }
        }
        if (g == 2 && net->kind != LMPI_NET_TREE && net->ndims == 3)
            n += add_folds(net, best[b], p, out + n);
    }
    return n;
}

/* Node and core of rank R under a tiled order. */
static void assign_tiled(const lmpi_net *net, const lmpi_map_order *o, int64_t r, int32_t *node, int32_t *core)
{
    int64_t c[3], blocked = 0, in = 0;
    for (int i = o->ntile - 1; i >= 0; i--) {
        c[i] = r % o->grid[i];
        r /= o->grid[i];
    }
    for (int i = 0; i < o->ntile; i++) {
        blocked = blocked * (o->grid[i] / o->tile[i]) + c[i] / o->tile[i];
        in = in * o->tile[i] + c[i] % o->tile[i];
    }
    int64_t nd = blocked;
    if (o->folded) {
        int64_t bi = c[0] / o->tile[0], bj = c[1] / o->tile[1];
        int da = net->dims[o->fold[0]], db = net->dims[o->fold[1]];
        int64_t jf = bj / da, ig = bi / db;
        int64_t xc = o->fold_cols_fast ? ig * o->fold_f + jf : jf * o->fold_g + ig;
        nd = (bj % da) * net->stride[o->fold[0]] + (bi % db) * net->stride[o->fold[1]] + xc * net->stride[o->fold[2]];
    } else if (net->kind != LMPI_NET_TREE) {
        nd = 0;
        for (int i = 0; i < o->ndigits; i++) {
            int d = o->digit[i];
            nd += (blocked % net->dims[d]) * net->stride[d];
            blocked /= net->dims[d];
        }
    }
    *node = (int32_t)nd;
    if (core)
        *core = (int32_t)in;
}

int lmpi_map_assign(const lmpi_net *net, const lmpi_map_order *o, int64_t nranks, int32_t *node_of,
                    int32_t *core_of, char *err, size_t errlen)
{
    if (o->ntile) {
        for (int64_t r = 0; r < nranks; r++)
            assign_tiled(net, o, r, &node_of[r], core_of ? &core_of[r] : NULL);
        return 0;
    }
    int64_t capacity = net->nodes * net->cores;
    if (nranks > capacity) {
        snprintf(err, errlen, "%lld ranks do not fit on %lld nodes x %d cores (%lld slots)", (long long)nranks,
                 (long long)net->nodes, net->cores, (long long)capacity);
        return -1;
    }
    if (net->kind == LMPI_NET_TREE) {
        for (int64_t r = 0; r < nranks; r++) {
            node_of[r] = (int32_t)(o->cyclic ? r % net->nodes : r / net->cores);
            if (core_of)
                core_of[r] = (int32_t)(o->cyclic ? r / net->nodes : r % net->cores);
        }
        return 0;
    }
    int radix[LMPI_NET_MAX_DIMS + 1];
    for (int i = 0; i < o->ndigits; i++)
        radix[i] = o->digit[i] < 0 ? net->cores : net->dims[o->digit[i]];
    for (int64_t r = 0; r < nranks; r++) {
        int64_t v = r, node = 0;
        int core = 0;
        for (int i = 0; i < o->ndigits; i++) {
            int64_t digit = v % radix[i];
            v /= radix[i];
            if (o->digit[i] < 0)
                core = (int)digit;
            else
                node += digit * net->stride[o->digit[i]];
        }
        node_of[r] = (int32_t)node;
        if (core_of)
            core_of[r] = core;
    }
    return 0;
}

/* ---- routing ----------------------------------------------------------- */
/* Per-link loads.  Torus/mesh: load[d * 2 + s][node] is the count on the
 * link leaving NODE along dimension d in direction s (0: +, 1: -).  Trees:
 * load[0][v] up from vertex v to its parent, load[1][v] down into v. */
typedef struct {
    const lmpi_net *net;
    int nloads;
    double *load[2 * LMPI_NET_MAX_DIMS];
    bool diff; /* dimension-ordered routes went in as ranges: prefix-sum at the end */
} loads;

/* Hops of the shorter way from A to B on a ring of N (mesh: the only way);
 * *DIR is 0 for +, 1 for -, 2 for a tie on a torus. */
static inline int ring_hops(const lmpi_net *net, int n, int a, int b, int *dir)
{
    if (net->kind == LMPI_NET_MESH) {
        *dir = b >= a ? 0 : 1;
        return b >= a ? b - a : a - b;
    }
    int fw = b - a;
    if (fw < 0)
        fw += n;
    int bw = n - fw;
    if (fw == 0)
        bw = 0;
    *dir = fw < bw ? 0 : fw > bw ? 1 : 2;
    return fw <= bw ? fw : bw;
}

static int64_t node_hops(const lmpi_net *net, int64_t u, int64_t w)
{
    if (net->kind == LMPI_NET_TREE) {
        int64_t h = 0;
        int a = (int)u, b = (int)w;
        while (net->depth[a] > net->depth[b])
            a = net->parent[a], h++;
        while (net->depth[b] > net->depth[a])
            b = net->parent[b], h++;
        while (a != b)
            a = net->parent[a], b = net->parent[b], h += 2;
        return h;
    }
    int64_t h = 0;
    for (int d = 0; d < net->ndims; d++) {
        int dir;
        h += ring_hops(net, net->dims[d], lmpi_net_coord(net, u, d), lmpi_net_coord(net, w, d), &dir);
    }
    return h;
}

/* Add C to the K links leaving positions A, A+1, ... (S = 0) or A, A-1, ...
 * (S = 1) of the ring through BASE along dimension D: a range update on the
 * difference array, prefix-summed once every route is in (prefix_sums). */
static inline void ring_range(loads *L, int d, int s, int64_t base, int a, int k, double c)
{
    const lmpi_net *net = L->net;
    int n = net->dims[d];
    int64_t st = net->stride[d];
    double *arr = L->load[d * 2 + s];
    int start = s == 0 ? a : a - k + 1;
    if (start < 0)
        start += n;
    int end = start + k;
    arr[base + start * st] += c;
    if (end < n) {
        arr[base + end * st] -= c;
    } else if (end > n) { /* wraps: [start, n) and [0, end - n) */
        arr[base] += c;
        arr[base + (end - n) * st] -= c;
    }
}

/* Dimension-ordered route from U to W carrying C. */
static void route_dor(loads *L, int64_t u, int64_t w, double c)
{
    const lmpi_net *net = L->net;
    int64_t cur = u;
    for (int d = 0; d < net->ndims; d++) {
        int a = lmpi_net_coord(net, cur, d), b = lmpi_net_coord(net, w, d), dir;
        int k = ring_hops(net, net->dims[d], a, b, &dir);
        if (k == 0)
            continue;
        int s = dir == 1 ? 1 : 0;
        ring_range(L, d, s, cur - (int64_t)a * net->stride[d], a, k, c);
        cur += (int64_t)(b - a) * net->stride[d];
    }
}

static void route_tree(loads *L, int64_t u, int64_t w, double c)
{
    const lmpi_net *net = L->net;
    int a = (int)u, b = (int)w;
    double *up = L->load[0], *down = L->load[1];
    while (net->depth[a] > net->depth[b])
        up[a] += c, a = net->parent[a];
    while (net->depth[b] > net->depth[a])
        down[b] += c, b = net->parent[b];
    while (a != b) {
        up[a] += c;
        down[b] += c;
        a = net->parent[a];
        b = net->parent[b];
    }
}

/* Large messages: the share of a unit of traffic on every link of the
 * minimal-path box for the hop vector H, split equally among the next hops
 * that reduce the distance.  Cached per H (stencils reuse few vectors). */
typedef struct {
    int16_t off[LMPI_NET_MAX_DIMS];
    int8_t dim;
    double share;
} split_link;

typedef struct {
    int h[LMPI_NET_MAX_DIMS];
    int64_t first, count; /* into the arena */
    bool used;
} split_entry;

typedef struct {
    split_entry *tab;
    int64_t cap, n;
    split_link *arena;
    int64_t arena_n, arena_cap;
} split_cache;

static uint64_t hash_h(const int *h, int nd)
{
    uint64_t x = 1469598103934665603ull;
    for (int d = 0; d < nd; d++)
        x = (x ^ (uint64_t)(uint32_t)h[d]) * 1099511628211ull;
    return x;
}

static int split_grow(split_cache *sc)
{
    int64_t cap = sc->cap ? sc->cap * 2 : 64;
    split_entry *t = calloc((size_t)cap, sizeof(*t));
    if (!t)
        return -1;
    for (int64_t i = 0; i < sc->cap; i++)
        if (sc->tab[i].used) {
            uint64_t j = hash_h(sc->tab[i].h, LMPI_NET_MAX_DIMS) & (uint64_t)(cap - 1);
            while (t[j].used)
                j = (j + 1) & (uint64_t)(cap - 1);
            t[j] = sc->tab[i];
        }
    free(sc->tab);
    sc->tab = t;
    sc->cap = cap;
    return 0;
}

static const split_entry *split_get(split_cache *sc, const int *hv, int nd)
{
    int h[LMPI_NET_MAX_DIMS] = {0};
    memcpy(h, hv, sizeof(int) * (size_t)nd);
    if (2 * (sc->n + 1) > sc->cap && split_grow(sc))
        return NULL;
    uint64_t j = hash_h(h, LMPI_NET_MAX_DIMS) & (uint64_t)(sc->cap - 1);
    while (sc->tab[j].used) {
        if (!memcmp(sc->tab[j].h, h, sizeof(h)))
            return &sc->tab[j];
        j = (j + 1) & (uint64_t)(sc->cap - 1);
    }
    /* Dynamic program over the box, points in lexicographic order (every
     * move increases one coordinate, so predecessors come first). */
    int64_t ext[LMPI_NET_MAX_DIMS], vol = 1;
    for (int d = 0; d < nd; d++) {
        ext[d] = h[d] + 1;
        vol *= ext[d];
    }
    double *f = calloc((size_t)vol, sizeof(double));
    if (!f)
        return NULL;
    f[0] = 1.0;
    split_entry e = {.first = sc->arena_n, .used = true};
    memcpy(e.h, h, sizeof(h));
    for (int64_t idx = 0; idx < vol; idx++) {
        if (f[idx] == 0.0)
            continue;
        int p[LMPI_NET_MAX_DIMS], m = 0;
        int64_t v = idx;
        for (int d = nd - 1; d >= 0; d--) {
            p[d] = (int)(v % ext[d]);
            v /= ext[d];
        }
        for (int d = 0; d < nd; d++)
            m += p[d] < h[d];
        int64_t step = 1;
        for (int d = nd - 1; d >= 0; step *= ext[d], d--) {
            if (p[d] >= h[d])
                continue;
            double share = f[idx] / m;
            if (sc->arena_n == sc->arena_cap) {
                int64_t cap = sc->arena_cap ? 2 * sc->arena_cap : 1024;
                split_link *a = realloc(sc->arena, sizeof(*a) * (size_t)cap);
                if (!a) {
                    free(f);
                    return NULL;
                }
                sc->arena = a;
                sc->arena_cap = cap;
            }
            split_link *l = &sc->arena[sc->arena_n++];
            for (int k = 0; k < nd; k++)
                l->off[k] = (int16_t)p[k];
            l->dim = (int8_t)d;
            l->share = share;
            f[idx + step] += share;
        }
    }
    free(f);
    e.count = sc->arena_n - e.first;
    sc->tab[j] = e;
    sc->n++;
    return &sc->tab[j];
}

static int route_split(loads *L, split_cache *sc, int64_t u, int64_t w, double c)
{
    const lmpi_net *net = L->net;
    int nd = net->ndims, a[LMPI_NET_MAX_DIMS], h[LMPI_NET_MAX_DIMS], dir[LMPI_NET_MAX_DIMS];
    int ties[LMPI_NET_MAX_DIMS], nties = 0;
    for (int d = 0; d < nd; d++) {
        a[d] = lmpi_net_coord(net, u, d);
        h[d] = ring_hops(net, net->dims[d], a[d], lmpi_net_coord(net, w, d), &dir[d]);
        if (dir[d] == 2)
            ties[nties++] = d;
    }
    const split_entry *e = split_get(sc, h, nd);
    if (!e)
        return -1;
    /* A tie round a ring: both ways are minimal; half of the traffic each. */
    double part = c / (double)(1 << nties);
    for (int combo = 0; combo < 1 << nties; combo++) {
        int sgn[LMPI_NET_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            sgn[d] = dir[d] == 1 ? 1 : 0;
        for (int t = 0; t < nties; t++)
            sgn[ties[t]] = (combo >> t) & 1;
        for (int64_t i = 0; i < e->count; i++) {
            const split_link *l = &sc->arena[e->first + i];
            int64_t node = 0;
            for (int d = 0; d < nd; d++) {
                int n = net->dims[d];
                int x = sgn[d] ? a[d] - l->off[d] : a[d] + l->off[d];
                x %= n;
                if (x < 0)
                    x += n;
                node += (int64_t)x * net->stride[d];
            }
            L->load[l->dim * 2 + sgn[l->dim]][node] += part * l->share;
        }
    }
    return 0;
}

/* ---- destination aggregation per source node --------------------------- */
typedef struct {
    int64_t key; /* destination node, -1 empty */
    double count, bytes;
} agg_slot;

typedef struct {
    agg_slot *s;
    int64_t cap;
    int64_t *used;
    int64_t nused;
} agg_table;

static int agg_init(agg_table *t, int64_t want)
{
    int64_t cap = 64;
    while (cap < 2 * want)
        cap *= 2;
    t->s = malloc(sizeof(agg_slot) * (size_t)cap);
    t->used = malloc(sizeof(int64_t) * (size_t)cap);
    if (!t->s || !t->used)
        return -1;
    for (int64_t i = 0; i < cap; i++)
        t->s[i].key = -1;
    t->cap = cap;
    t->nused = 0;
    return 0;
}

static inline agg_slot *agg_add(agg_table *t, int64_t key, double bytes)
{
    uint64_t j = ((uint64_t)key * 0x9E3779B97F4A7C15ull >> 20) & (uint64_t)(t->cap - 1);
    while (t->s[j].key != key) {
        if (t->s[j].key < 0) {
            t->s[j].key = key;
            t->s[j].count = 0;
            t->s[j].bytes = 0;
            t->used[t->nused++] = (int64_t)j;
            break;
        }
        j = (j + 1) & (uint64_t)(t->cap - 1);
    }
    t->s[j].count += 1;
    t->s[j].bytes += bytes;
    return &t->s[j];
}

/* ---- the paper's count -------------------------------------------------- */
/* The paper's argument (§3.2): by symmetry, every link of a route of h hops
 * is shared by the h senders along it, so a message of h hops counts h on
 * each of its links; summed over one process's messages, doubled for the two
 * directions, the most loaded link gives the count.  Processes at the edges
 * of node blocks or rings see other values; the paper's "one process" is a
 * typical one, so the result is the most frequent value over the processes
 * (a fixed sample of at most PAPER_SAMPLE of them). */
#define PAPER_SAMPLE 16384
/* ... and fewer for dense patterns: about this many messages in all. */
#define PAPER_MESSAGES 1000000

typedef struct {
    int64_t *key;
    double *val;
    int64_t cap, n;
    int64_t *used;
} link_tab;

static void link_add(link_tab *t, int64_t key, double v)
{
    uint64_t j = ((uint64_t)key * 0x9E3779B97F4A7C15ull >> 17) & (uint64_t)(t->cap - 1);
    while (t->key[j] != key) {
        if (t->key[j] < 0) {
            t->key[j] = key;
            t->val[j] = 0;
            t->used[t->n++] = (int64_t)j;
            break;
        }
        j = (j + 1) & (uint64_t)(t->cap - 1);
    }
    t->val[j] += v;
}

/* Links of the route U -> W (ids as in loads: (node * 2D + d*2 + s) for
 * tori, (v * 2 + up/down) for trees) into IDS; returns the count. */
static int64_t route_links(const lmpi_net *net, int64_t u, int64_t w, int64_t *ids)
{
    int64_t n = 0;
    if (net->kind == LMPI_NET_TREE) {
        int a = (int)u, b = (int)w;
        while (net->depth[a] > net->depth[b])
            ids[n++] = (int64_t)a * 2, a = net->parent[a];
        while (net->depth[b] > net->depth[a])
            ids[n++] = (int64_t)b * 2 + 1, b = net->parent[b];
        while (a != b) {
            ids[n++] = (int64_t)a * 2;
            ids[n++] = (int64_t)b * 2 + 1;
            a = net->parent[a];
            b = net->parent[b];
        }
        return n;
    }
    int64_t cur = u;
    int nd2 = 2 * net->ndims;
    for (int d = 0; d < net->ndims; d++) {
        int a = lmpi_net_coord(net, cur, d), b = lmpi_net_coord(net, w, d), dir;
        int k = ring_hops(net, net->dims[d], a, b, &dir);
        int s = dir == 1 ? 1 : 0, sz = net->dims[d];
        int64_t base = cur - (int64_t)a * net->stride[d];
        for (int i = 0, p = a; i < k; i++) {
            ids[n++] = (base + (int64_t)p * net->stride[d]) * nd2 + d * 2 + s;
            p = s == 0 ? (p + 1 == sz ? 0 : p + 1) : (p == 0 ? sz - 1 : p - 1);
        }
        cur += (int64_t)(b - a) * net->stride[d];
    }
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int paper_count(const lmpi_net *net, const lmpi_pattern *p, const int32_t *node_of, double *out)
{
    int64_t nr = p->nranks, samples = PAPER_MESSAGES / (p->max_degree + 1);
    samples = samples < 512 ? 512 : samples > PAPER_SAMPLE ? PAPER_SAMPLE : samples;
    samples = samples > nr ? nr : samples;
    int64_t maxhops = 0;
    if (net->kind == LMPI_NET_TREE)
        for (int64_t v = 0; v < net->nodes; v++)
            maxhops = net->depth[v] > maxhops ? net->depth[v] : maxhops;
    else
        for (int d = 0; d < net->ndims; d++)
            maxhops += net->dims[d];
    maxhops *= 2;
    int64_t cap = 64;
    while (cap < 2 * p->max_degree * maxhops + 2)
        cap *= 2;
    link_tab t = {.key = malloc(sizeof(int64_t) * (size_t)cap), .val = malloc(sizeof(double) * (size_t)cap),
                  .used = malloc(sizeof(int64_t) * (size_t)cap), .cap = cap};
    int64_t *nb = malloc(sizeof(int64_t) * (size_t)(p->max_degree + 1));
    double *w = malloc(sizeof(double) * (size_t)(p->max_degree + 1));
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)(maxhops + 1));
    double *vals = malloc(sizeof(double) * (size_t)samples);
    int rc = -1;
    if (!t.key || !t.val || !t.used || !nb || !w || !ids || !vals)
        goto out;
    for (int64_t i = 0; i < cap; i++)
        t.key[i] = -1;
    int64_t nvals = 0;
    uint64_t lcg = 12345;
    for (int64_t i = 0; i < samples; i++) {
        int64_t r = i;
        if (samples < nr) { /* a fixed pseudo-random sample: strides would alias with grid periods */
            lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
            r = (int64_t)((lcg >> 11) % (uint64_t)nr);
        }
        int64_t u = node_of[r], k = lmpi_pattern_neighbors(p, r, nb, w);
        for (int64_t j = 0; j < k; j++) {
            int64_t to = node_of[nb[j]];
            if (to == u)
                continue;
            int64_t h = route_links(net, u, to, ids);
            for (int64_t l = 0; l < h; l++)
                link_add(&t, ids[l], (double)h);
        }
        double mx = 0;
        for (int64_t l = 0; l < t.n; l++) {
            int64_t j = t.used[l];
            mx = t.val[j] > mx ? t.val[j] : mx;
            t.key[j] = -1;
        }
        t.n = 0;
        if (mx > 0)
            vals[nvals++] = 2 * mx;
    }
    *out = 0;
    if (nvals) {
        qsort(vals, (size_t)nvals, sizeof(double), cmp_double);
        int64_t best = 0;
        for (int64_t i = 0, j; i < nvals; i = j) {
            for (j = i; j < nvals && vals[j] == vals[i]; j++)
                ;
            if (j - i > best) {
                best = j - i;
                *out = vals[i];
            }
        }
    }
    rc = 0;
out:
    free(t.key);
    free(t.val);
    free(t.used);
    free(nb);
    free(w);
    free(ids);
    free(vals);
    return rc;
}

/* ---- evaluation --------------------------------------------------------- */
static void summarize(const lmpi_net *net, loads *L, lmpi_map_metrics *m)
{
    double sum = 0, mx = 0;
    int64_t used = 0;
    if (net->kind == LMPI_NET_TREE) {
        int64_t nv = net->nodes + net->nswitches;
        for (int64_t v = 0; v < nv; v++) {
            if (net->parent[v] < 0)
                continue;
            double x = L->load[0][v] + L->load[1][v];
            if (x > 0) {
                used++;
                sum += x;
                mx = x > mx ? x : mx;
            }
        }
    } else {
        for (int d = 0; d < net->ndims; d++) {
            int n = net->dims[d];
            if (n < 2)
                continue;
            const double *plus = L->load[d * 2], *minus = L->load[d * 2 + 1];
            for (int64_t i = 0; i < net->nodes; i++) {
                int c = lmpi_net_coord(net, i, d);
                if (net->kind == LMPI_NET_MESH && c == n - 1)
                    continue;
                int64_t next = c == n - 1 ? i - (int64_t)c * net->stride[d] : i + net->stride[d];
                double x = plus[i] + minus[next];
                if (x > 1e-9) {
                    used++;
                    sum += x;
                    mx = x > mx ? x : mx;
                }
            }
        }
    }
    m->avg_contention = used ? sum / (double)used : 0;
    m->max_contention = mx;
}

static void prefix_sums(loads *L)
{
    const lmpi_net *net = L->net;
    for (int d = 0; d < net->ndims; d++) {
        int n = net->dims[d];
        int64_t st = net->stride[d];
        for (int s = 0; s < 2; s++) {
            double *arr = L->load[d * 2 + s];
            for (int64_t base = 0; base < net->nodes; base++) {
                if (lmpi_net_coord(net, base, d) != 0)
                    continue;
                double acc = 0;
                for (int p = 0; p < n; p++) {
                    acc += arr[base + p * st];
                    arr[base + p * st] = acc;
                }
            }
        }
    }
}

/* Route every message of P placed by NODE_OF into L (allocated here) and
 * add hop-bytes and dilation to M. */
static int route_pattern(const lmpi_net *net, const lmpi_pattern *p, const int32_t *node_of, bool large, loads *L,
                         lmpi_map_metrics *m)
{
    int64_t nr = p->nranks, nn = net->nodes;
    int rc = -1;
    *L = (loads){.net = net, .diff = !large && net->kind != LMPI_NET_TREE};
    L->nloads = net->kind == LMPI_NET_TREE ? 2 : 2 * net->ndims;
    int64_t lsize = net->kind == LMPI_NET_TREE ? nn + net->nswitches : nn;
    int64_t *first = calloc((size_t)nn + 1, sizeof(int64_t));
    int64_t *members = malloc(sizeof(int64_t) * (size_t)nr);
    int64_t *nb = malloc(sizeof(int64_t) * (size_t)(p->max_degree + 1));
    double *w = malloc(sizeof(double) * (size_t)(p->max_degree + 1));
    agg_table agg = {0};
    split_cache sc = {0};
    bool ok = first && members && nb && w;
    for (int i = 0; i < L->nloads && ok; i++)
        ok = (L->load[i] = calloc((size_t)lsize, sizeof(double))) != NULL;
    if (!ok)
        goto out;
    /* ranks grouped by node (counting sort) */
    int64_t maxper = 0;
    for (int64_t r = 0; r < nr; r++)
        first[node_of[r] + 1]++;
    for (int64_t v = 0; v < nn; v++) {
        maxper = first[v + 1] > maxper ? first[v + 1] : maxper;
        first[v + 1] += first[v];
    }
    {
        int64_t *fill = malloc(sizeof(int64_t) * (size_t)nn);
        if (!fill)
            goto out;
        memcpy(fill, first, sizeof(int64_t) * (size_t)nn);
        for (int64_t r = 0; r < nr; r++)
            members[fill[node_of[r]]++] = r;
        free(fill);
    }
    int64_t want = maxper * p->max_degree;
    if (want > nn)
        want = nn;
    if (agg_init(&agg, want))
        goto out;
    for (int64_t u = 0; u < nn; u++) {
        /* Stencil neighbours come in runs on one node: the last slot is
         * checked before the hash table. */
        agg_slot *last = NULL;
        for (int64_t i = first[u]; i < first[u + 1]; i++) {
            int64_t r = members[i], k = lmpi_pattern_neighbors(p, r, nb, w);
            for (int64_t j = 0; j < k; j++) {
                int64_t to = node_of[nb[j]];
                if (to == u)
                    continue;
                if (last && last->key == to) {
                    last->count += 1;
                    last->bytes += w[j];
                } else
                    last = agg_add(&agg, to, w[j]);
            }
        }
        for (int64_t i = 0; i < agg.nused; i++) {
            agg_slot *s = &agg.s[agg.used[i]];
            int64_t h = node_hops(net, u, s->key);
            m->hop_bytes += s->bytes * (double)h;
            if (h > m->max_dilation)
                m->max_dilation = h;
            if (net->kind == LMPI_NET_TREE)
                route_tree(L, u, s->key, s->count);
            else if (!large)
                route_dor(L, u, s->key, s->count);
            else if (route_split(L, &sc, u, s->key, s->count))
                goto out;
            s->key = -1;
        }
        agg.nused = 0;
    }
    if (L->diff)
        prefix_sums(L);
    rc = 0;
out:
    free(first);
    free(members);
    free(nb);
    free(w);
    free(agg.s);
    free(agg.used);
    free(sc.tab);
    free(sc.arena);
    return rc;
}

static void loads_free(loads *L)
{
    for (int i = 0; i < L->nloads; i++)
        free(L->load[i]);
}

int lmpi_map_evaluate(const lmpi_net *net, const lmpi_pattern *p, const int32_t *node_of, bool large,
                      lmpi_map_metrics *m, char *err, size_t errlen)
{
    double t0 = now();
    memset(m, 0, sizeof(*m));
    loads L;
    int rc = route_pattern(net, p, node_of, large, &L, m);
    if (rc == 0) {
        summarize(net, &L, m);
        rc = paper_count(net, p, node_of, &m->paper_contention);
    }
    loads_free(&L);
    if (rc)
        snprintf(err, errlen, "out of memory evaluating a mapping of %lld ranks", (long long)p->nranks);
    m->seconds = now() - t0;
    return rc;
}

double *lmpi_map_loads(const lmpi_net *net, const lmpi_pattern *p, const int32_t *node_of, bool large)
{
    lmpi_map_metrics m = {0};
    loads L;
    double *out = NULL;
    if (route_pattern(net, p, node_of, large, &L, &m) == 0) {
        int64_t lsize = net->kind == LMPI_NET_TREE ? net->nodes + net->nswitches : net->nodes;
        out = malloc(sizeof(double) * (size_t)(L.nloads * lsize));
        for (int i = 0; out && i < L.nloads; i++)
            memcpy(out + i * lsize, L.load[i], sizeof(double) * (size_t)lsize);
    }
    loads_free(&L);
    return out;
}

static bool better(const lmpi_map_metrics *a, const lmpi_map_metrics *b)
{
    const double eps = 1e-9;
    if (fabs(a->max_contention - b->max_contention) > eps * fmax(1, b->max_contention))
        return a->max_contention < b->max_contention;
    if (fabs(a->hop_bytes - b->hop_bytes) > eps * fmax(1, b->hop_bytes))
        return a->hop_bytes < b->hop_bytes;
    return a->avg_contention < b->avg_contention - eps;
}

/* Orders are independent: workers take every nthreads-th one. */
typedef struct {
    const lmpi_net *net;
    const lmpi_pattern *p;
    bool large;
    lmpi_map_order *orders;
    lmpi_map_metrics *metrics;
    int n, first, step, rc;
    char err[LMPI_NET_ERRLEN];
} choose_work;

static void *choose_worker(void *arg)
{
    choose_work *cw = arg;
    int32_t *node_of = malloc(sizeof(int32_t) * (size_t)cw->p->nranks);
    if (!node_of) {
        snprintf(cw->err, sizeof(cw->err), "out of memory placing %lld ranks", (long long)cw->p->nranks);
        cw->rc = -1;
        return NULL;
    }
    for (int i = cw->first; i < cw->n && !cw->rc; i += cw->step) {
        double t0 = now();
        if (lmpi_map_assign(cw->net, &cw->orders[i], cw->p->nranks, node_of, NULL, cw->err, sizeof(cw->err)) ||
            lmpi_map_evaluate(cw->net, cw->p, node_of, cw->large, &cw->metrics[i], cw->err, sizeof(cw->err)))
            cw->rc = -1;
        cw->metrics[i].seconds = now() - t0;
    }
    free(node_of);
    return NULL;
}

#define MAX_WORKERS 16

int lmpi_map_choose(const lmpi_net *net, const lmpi_pattern *p, bool large, lmpi_map_order *orders,
                    lmpi_map_metrics *metrics, int *pick, char *err, size_t errlen)
{
    int n = lmpi_map_orders(net, orders);
    n += lmpi_map_tiled_orders(net, p, orders + n);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nw = cpus < 1 ? 1 : cpus > MAX_WORKERS ? MAX_WORKERS : (int)cpus;
    /* Small problems are not worth a thread; big ones hold one placement per worker. */
    if (nw > n || (double)p->nranks * (double)(p->max_degree + 1) < 1e6)
        nw = n < nw ? n : 1;
    choose_work cw[MAX_WORKERS];
    pthread_t tid[MAX_WORKERS];
    bool started[MAX_WORKERS] = {false};
    for (int t = 0; t < nw; t++) {
        cw[t] = (choose_work){.net = net, .p = p, .large = large, .orders = orders, .metrics = metrics,
                              .n = n, .first = t, .step = nw};
        if (t > 0)
            started[t] = pthread_create(&tid[t], NULL, choose_worker, &cw[t]) == 0;
    }
    choose_worker(&cw[0]);
    for (int t = 1; t < nw; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            choose_worker(&cw[t]); /* no thread to be had: do its share here */
    }
    for (int t = 0; t < nw; t++)
        if (cw[t].rc) {
            snprintf(err, errlen, "%s", cw[t].err);
            return -1;
        }
    *pick = 0;
    for (int i = 1; i < n; i++)
        if (better(&metrics[i], &metrics[*pick]))
            *pick = i;
    return n;
}
