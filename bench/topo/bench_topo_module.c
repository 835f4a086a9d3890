/* bench/topo, module level (no MPI): how long reordering takes at 1K-64K
 * ranks, and what it gains: reordered cost over block-order cost for
 * stencils and a random graph at 16-64 cores per node (sockets of 16).
 *
 *   reorder_time type=cart|graph|dist_graph ranks=N (ms, the mapping and
 *                its quality evaluation, median of 5; graph: a 3D 7-point
 *                stencil given as a graph, dist_graph: a weighted random
 *                graph of degree 8, both through Scotch)
 *   cost_ratio   type pattern cores strategy: hop-bytes of the strategy's
 *                mapping over block order's (lower is better)
 *
 * Prints RESULT lines for bench/run and a table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/remap.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* A 3D 27-point stencil (non-periodic) as a graph. */
static void stencil27(const int *d, lmpi_cgraph *g)
{
    int n = d[0] * d[1] * d[2];
    int64_t *xadj = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int *adj = malloc(sizeof(int) * (size_t)n * 26), e = 0;
    for (int v = 0; v < n; v++) {
        xadj[v] = e;
        int x = v / (d[1] * d[2]), y = (v / d[2]) % d[1], z = v % d[2];
        for (int dx = -1; dx <= 1; dx++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dz = -1; dz <= 1; dz++) {
                    int a = x + dx, b = y + dy, c = z + dz;
                    if ((dx || dy || dz) && a >= 0 && a < d[0] && b >= 0 && b < d[1] && c >= 0 && c < d[2])
                        adj[e++] = (a * d[1] + b) * d[2] + c;
                }
    }
    xadj[n] = e;
    *g = (lmpi_cgraph){.n = n, .xadj = xadj, .adj = adj, .wgt = NULL};
}

/* A symmetric weighted random graph: each vertex links to DEG/2 others. */
static void random_graph(int n, int deg, lmpi_cgraph *g)
{
    size_t half = (size_t)(deg > 1 ? deg / 2 : 1), nv = n > 0 ? (size_t)n : 1, m = nv * half;
    int *a = malloc(sizeof(int) * m), *b = malloc(sizeof(int) * m), *w = malloc(sizeof(int) * m);
    unsigned s = 12345;
    for (size_t v = 0, k = 0; v < nv; v++)
        for (size_t j = 0; j < half; j++, k++) {
            s = s * 1103515245u + 12345u;
            a[k] = (int)v;
            b[k] = (int)((s >> 8) % (unsigned)n);
            s = s * 1103515245u + 12345u;
            w[k] = 1 + (int)((s >> 8) % 10);
        }
    int64_t *xadj = calloc(nv + 1, sizeof(int64_t));
    for (size_t k = 0; k < m; k++) {
        xadj[a[k] + 1]++;
        xadj[b[k] + 1]++;
    }
    for (int v = 0; v < n; v++)
        xadj[v + 1] += xadj[v];
    int *adj = malloc(sizeof(int) * 2 * m), *wg = malloc(sizeof(int) * 2 * m);
    int64_t *fill = malloc(sizeof(int64_t) * nv);
    memcpy(fill, xadj, sizeof(int64_t) * nv);
    for (size_t k = 0; k < m; k++) {
        adj[fill[a[k]]] = b[k], wg[fill[a[k]]++] = w[k];
        adj[fill[b[k]]] = a[k], wg[fill[b[k]]++] = w[k];
    }
    free(a), free(b), free(w), free(fill);
    *g = (lmpi_cgraph){.n = n, .xadj = xadj, .adj = adj, .wgt = wg};
}

static void dims_of(int n, int nd, int *d)
{
    /* balanced factorization by trial from the cube root down */
    for (int i = 0; i < nd; i++)
        d[i] = 1;
    int rest = n;
    for (int i = 0; i < nd - 1; i++) {
        int target = (int)llround(pow(rest, 1.0 / (nd - i)));
        while (target > 1 && rest % target)
            target--;
        d[i] = target;
        rest /= target;
    }
    d[nd - 1] = rest;
}

static lmpi_phys phys(int n, int cores, int *node_of)
{
    for (int i = 0; i < n; i++)
        node_of[i] = i / cores;
    return (lmpi_phys){.nprocs = n, .node_of = node_of, .nnodes = (n + cores - 1) / cores,
                       .cores_per_socket = cores < 16 ? cores : 16, .sockets = cores < 16 ? 1 : cores / 16};
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of REPS timings of one mapping (the machine is shared). */
typedef struct {
    const lmpi_phys *ph;
    int ndims, dims[3], periods[3];
    const lmpi_cgraph *g; /* NULL: the grid, analytically */
    int *sv;
} job;

static double timed(const job *j, int reps)
{
    double t[16];
    char err[256];
    lmpi_remap_quality q;
    for (int r = 0; r < reps; r++) {
        double t0 = now_ms();
        if (j->g)
            lmpi_remap_graph(j->ph, j->g, j->sv, &q, err, sizeof(err));
        else
            lmpi_remap_cart(j->ph, j->ndims, j->dims, j->periods, false, j->sv, &q, err, sizeof(err));
        t[r] = now_ms() - t0;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    return t[reps / 2];
}

static void reorder_times(int maxranks, int reps)
{
    for (int n = 1024; n <= maxranks; n *= 4) {
        int *node_of = malloc(sizeof(int) * (size_t)n), *sv = malloc(sizeof(int) * (size_t)n);
        lmpi_phys ph = phys(n, 32, node_of);
        job j = {.ph = &ph, .ndims = 2, .sv = sv};
        dims_of(n, 2, j.dims);
        printf("RESULT reorder_time type=cart ranks=%d value=%.3f\n", n, timed(&j, reps));
        lmpi_cgraph g;
        int d3[3], periods[3] = {0, 0, 0};
        dims_of(n, 3, d3);
        lmpi_cgraph_cart(3, d3, periods, &g);
        j.g = &g;
        printf("RESULT reorder_time type=graph ranks=%d value=%.3f\n", n, timed(&j, reps));
        lmpi_cgraph_free(&g);
        random_graph(n, 8, &g);
        printf("RESULT reorder_time type=dist_graph ranks=%d value=%.3f\n", n, timed(&j, reps));
        lmpi_cgraph_free(&g);
        fflush(stdout);
        free(node_of);
        free(sv);
    }
}

/* One pattern at one node size: block (1), analytic and scotch ratios. */
static void ratio_point(const char *type, const char *pattern, int n, int cores, int nd, bool stencil27pt,
                        bool random)
{
    char err[256];
    int *node_of = malloc(sizeof(int) * (size_t)n), *sv = malloc(sizeof(int) * (size_t)n);
    lmpi_phys ph = phys(n, cores, node_of);
    int d[3], periods[3] = {0, 0, 0};
    lmpi_cgraph g;
    if (random)
        random_graph(n, 8, &g);
    else {
        dims_of(n, nd, d);
        if (stencil27pt)
            stencil27(d, &g);
        else
            lmpi_cgraph_cart(nd, d, periods, &g);
    }
    lmpi_remap_cost_t block, c;
    lmpi_remap_cost(&ph, &g, NULL, &block); /* slot v holds vertex v: block order */
    printf("RESULT cost_ratio type=%s pattern=%s cores=%d strategy=block value=1.000\n", type, pattern, cores);
    if (!random && lmpi_remap_cart_analytic(&ph, nd, d, periods, sv) == 0) {
        lmpi_remap_cost(&ph, &g, sv, &c);
        printf("RESULT cost_ratio type=%s pattern=%s cores=%d strategy=analytic value=%.4f\n", type, pattern, cores,
               c.hop_bytes / block.hop_bytes);
    }
    lmpi_remap_quality q;
    if (!random && lmpi_remap_auto(&ph, &g, sv, &q, err, sizeof(err)) == 0) /* what the topology functions do */
        printf("RESULT cost_ratio type=%s pattern=%s cores=%d strategy=auto_%s value=%.4f\n", type, pattern, cores,
               lmpi_remap_strategy_name(q.strategy), q.chosen.hop_bytes / block.hop_bytes);
    if (lmpi_remap_graph(&ph, &g, sv, &q, err, sizeof(err)) == 0)
        printf("RESULT cost_ratio type=%s pattern=%s cores=%d strategy=scotch value=%.4f\n", type, pattern, cores,
               q.chosen.hop_bytes / block.hop_bytes);
    fflush(stdout);
    lmpi_cgraph_free(&g);
    free(node_of);
    free(sv);
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    reorder_times(quick ? 4096 : 65536, quick ? 1 : 5);
    int n = quick ? 1024 : 4096;
    for (int cores = 16; cores <= 64; cores *= 2) {
        ratio_point("cart", "2d-5pt", n, cores, 2, false, false);
        ratio_point("cart", "3d-7pt", n, cores, 3, false, false);
        ratio_point("graph", "3d-27pt", n, cores, 3, true, false);
        ratio_point("dist_graph", "random-graph", n, cores, 0, false, true);
    }
    return 0;
}
