/* bench/mapping (module level, no MPI): how long the contention model takes
 * to evaluate every mapping order at 16K, 128K and 1M ranks, and how good
 * its pick is against Scotch's torus mapping (SCOTCH_archTorus3) of the same
 * process graph: hop-bytes and maximum link contention of both placements,
 * routed by the same model, and the time each took.  The block order
 * (TXYZ) is the baseline.
 *
 *   bench_mapping [--quick] [--rounds N]
 *
 * Prints a table, then RESULT-free JSON as its last line (BENCHMARKS.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/mapping.h"

#ifndef BENCH_SCOTCH_BALANCE
#define BENCH_SCOTCH_BALANCE 0.0
#endif
#ifdef LMPI_HAVE_SCOTCH
#include <stdint.h>
#include <scotch.h>
#endif

typedef struct {
    const char *network;
    int cores;
    const char *pattern;
    bool scotch; /* also map with Scotch */
    bool quick;  /* part of --quick */
} bench_case;

static const bench_case cases[] = {
    {"torus:8x16x32", 4, "2d-nn:128x128:star", true, true},
    {"torus:8x16x32", 4, "2d-nn:128x128:box", true, false},
    {"torus:8x16x32", 4, "3d-nn:32x32x16:star", true, false},
    {"torus:8x16x32", 4, "fft:128x128", false, false},
    {"torus:16x32x32", 8, "2d-nn:512x256:star", true, false},
    {"torus:16x32x32", 8, "3d-nn:64x64x32:star", true, false},
    {"torus:32x32x32", 32, "2d-nn:1024x1024:star", true, false},
    {"torus:32x32x32", 32, "3d-nn:128x128x64:star", false, false},
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int nresults;
static char results[256][512];

static void result(const char *impl, const char *metric, double value, double mn, double mx, const char *unit,
                   const bench_case *c, long long ranks)
{
    if (nresults < 256)
        snprintf(results[nresults++], sizeof(results[0]),
                 "{\"impl\": \"%s\", \"metric\": \"%s\", \"value\": %.6g, \"min\": %.6g, \"max\": %.6g, "
                 "\"unit\": \"%s\", \"ranks\": %lld, \"pattern\": \"%s\", \"network\": \"%s\", \"cores\": %d}",
                 impl, metric, value, mn, mx, unit, ranks, c->pattern, c->network, c->cores);
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_mapping: %s: %s\n", what, err);
    exit(1);
}

#ifdef LMPI_HAVE_SCOTCH
/* Scotch's terminal numbers are checked against our node ids (x fastest)
 * through its own distance function before any comparison is made. */
static void check_scotch_numbering(SCOTCH_Arch *arch, const lmpi_net *net)
{
    SCOTCH_ArchDom a, b;
    uint64_t s = 99;
    for (int i = 0; i < 200; i++) {
        s = s * 6364136223846793005ull + 1;
        SCOTCH_Num u = (SCOTCH_Num)((s >> 20) % (uint64_t)net->nodes);
        s = s * 6364136223846793005ull + 1;
        SCOTCH_Num w = (SCOTCH_Num)((s >> 20) % (uint64_t)net->nodes);
        SCOTCH_archDomTerm(arch, &a, u);
        SCOTCH_archDomTerm(arch, &b, w);
        int64_t h = 0;
        for (int d = 0; d < net->ndims; d++) {
            int x = lmpi_net_coord(net, u, d), y = lmpi_net_coord(net, w, d), n = net->dims[d];
            int k = abs(x - y);
            h += k < n - k ? k : n - k;
        }
        if (SCOTCH_archDomDist(arch, &a, &b) != h)
            die("scotch", "terminal numbering differs from x-fastest node ids");
    }
}

/* Map the pattern's graph onto the torus of nodes; NODE_OF gets the result.
 * Returns the seconds taken (graph build included) and the largest number of
 * ranks Scotch put on one node in *MAXPER. */
static double scotch_map(const lmpi_net *net, const lmpi_pattern *p, int32_t *node_of, int *maxper)
{
    double t0 = now();
    SCOTCH_Num n = (SCOTCH_Num)p->nranks;
    SCOTCH_Num *vert = malloc(sizeof(SCOTCH_Num) * ((size_t)n + 1));
    SCOTCH_Num *edge = malloc(sizeof(SCOTCH_Num) * (size_t)(p->nranks * p->max_degree + 1));
    SCOTCH_Num *part = malloc(sizeof(SCOTCH_Num) * (size_t)n);
    int64_t *nb = malloc(sizeof(int64_t) * (size_t)(p->max_degree + 1));
    double *w = malloc(sizeof(double) * (size_t)(p->max_degree + 1));
    if (!vert || !edge || !part || !nb || !w)
        die("scotch", "out of memory");
    SCOTCH_Num e = 0;
    for (SCOTCH_Num r = 0; r < n; r++) {
        vert[r] = e;
        int64_t k = lmpi_pattern_neighbors(p, r, nb, w);
        for (int64_t j = 0; j < k; j++)
            edge[e++] = (SCOTCH_Num)nb[j];
    }
    vert[n] = e;
    SCOTCH_Graph g;
    SCOTCH_Arch arch;
    SCOTCH_Strat strat;
    SCOTCH_graphInit(&g);
    if (SCOTCH_graphBuild(&g, 0, n, vert, vert + 1, NULL, NULL, e, edge, NULL))
        die("scotch", "graphBuild failed");
    SCOTCH_archInit(&arch);
    SCOTCH_archTorus3(&arch, net->dims[0], net->dims[1], net->dims[2]);
    check_scotch_numbering(&arch, net);
    SCOTCH_stratInit(&strat);
    /* strict balance: a node holds only its cores */
    SCOTCH_stratGraphMapBuild(&strat, SCOTCH_STRATQUALITY | SCOTCH_STRATBALANCE, (SCOTCH_Num)net->nodes,
                              BENCH_SCOTCH_BALANCE);
    if (SCOTCH_graphMap(&g, &arch, &strat, part))
        die("scotch", "graphMap failed");
    double t = now() - t0;
    int *per = calloc((size_t)net->nodes, sizeof(int));
    *maxper = 0;
    for (SCOTCH_Num r = 0; r < n; r++) {
        node_of[r] = (int32_t)part[r];
        if (++per[part[r]] > *maxper)
            *maxper = per[part[r]];
    }
    free(per);
    SCOTCH_stratExit(&strat);
    SCOTCH_archExit(&arch);
    SCOTCH_graphExit(&g);
    free(vert);
    free(edge);
    free(part);
    free(nb);
    free(w);
    return t;
}
#endif

int main(int argc, char **argv)
{
    bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    int rounds = quick ? 1 : 5, only = -1;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--case")) /* one row of the table, for a closer look */
            only = atoi(argv[i + 1]);
    }
    lmpi_map_order *orders = calloc(LMPI_MAP_MAX_ORDERS, sizeof(*orders));
    lmpi_map_metrics *m = calloc(LMPI_MAP_MAX_ORDERS, sizeof(*m));
    char err[LMPI_NET_ERRLEN];
    printf("%-22s %-16s %8s | %9s %7s | %-6s %12s %9s | %12s %9s %6s %8s | %12s %9s\n", "pattern", "network", "ranks",
           "eval_s", "orders", "pick", "hop_bytes", "max_cont", "scotch_hb", "max_cont", "max/n", "scotch_s",
           "block_hb", "max_cont");
    for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
        const bench_case *c = &cases[ci];
        if ((quick && !c->quick) || (only >= 0 && (size_t)only != ci))
            continue;
        lmpi_net net;
        lmpi_pattern p;
        if (lmpi_net_parse(c->network, c->cores, &net, err, sizeof(err)))
            die(c->network, err);
        if (lmpi_pattern_parse(c->pattern, 8192, &p, err, sizeof(err)))
            die(c->pattern, err);
        double *t = malloc(sizeof(double) * (size_t)rounds);
        int pick = 0, n = 0;
        for (int r = 0; r < rounds; r++) {
            double t0 = now();
            n = lmpi_map_choose(&net, &p, false, orders, m, &pick, err, sizeof(err));
            t[r] = now() - t0;
            if (n < 0)
                die(c->pattern, err);
        }
        double tmin = t[0], tmax = t[0];
        for (int r = 1; r < rounds; r++) {
            tmin = fmin(tmin, t[r]);
            tmax = fmax(tmax, t[r]);
        }
        double tmed = median(t, rounds);
        free(t);
        long long ranks = (long long)p.nranks;
        result("leanmpi", "eval_all_orders_time", tmed, tmin, tmax, "s", c, ranks);
        result("leanmpi", "hop_bytes", m[pick].hop_bytes, m[pick].hop_bytes, m[pick].hop_bytes, "bytes", c, ranks);
        result("leanmpi", "max_contention", m[pick].max_contention, m[pick].max_contention, m[pick].max_contention,
               "messages", c, ranks);
        result("leanmpi:block", "hop_bytes", m[0].hop_bytes, m[0].hop_bytes, m[0].hop_bytes, "bytes", c, ranks);
        result("leanmpi:block", "max_contention", m[0].max_contention, m[0].max_contention, m[0].max_contention,
               "messages", c, ranks);
        printf("%-22s %-16s %8lld | %9.3f %7d | %-6s %12.4g %9.4g |", c->pattern, c->network, ranks, tmed, n,
               orders[pick].name, m[pick].hop_bytes, m[pick].max_contention);
        bool did_scotch = false;
#ifdef LMPI_HAVE_SCOTCH
        if (c->scotch) {
            int32_t *node_of = malloc(sizeof(int32_t) * (size_t)p.nranks);
            int maxper;
            double ts = scotch_map(&net, &p, node_of, &maxper);
            lmpi_map_metrics sm;
            if (lmpi_map_evaluate(&net, &p, node_of, false, &sm, err, sizeof(err)))
                die("scotch evaluation", err);
            result("scotch", "hop_bytes", sm.hop_bytes, sm.hop_bytes, sm.hop_bytes, "bytes", c, ranks);
            result("scotch", "max_contention", sm.max_contention, sm.max_contention, sm.max_contention, "messages", c,
                   ranks);
            result("scotch", "map_time", ts, ts, ts, "s", c, ranks);
            result("scotch", "max_ranks_per_node", maxper, maxper, maxper, "ranks", c, ranks);
            printf(" %12.4g %9.4g %6d %8.2f |", sm.hop_bytes, sm.max_contention, maxper, ts);
            free(node_of);
            did_scotch = true;
        }
#endif
        if (!did_scotch)
            printf(" %12s %9s %6s %8s |", "-", "-", "-", "-");
        printf(" %12.4g %9.4g\n", m[0].hop_bytes, m[0].max_contention);
        fflush(stdout);
        lmpi_pattern_free(&p);
        lmpi_net_free(&net);
    }
    printf("{\"bench\": \"mapping\", \"results\": [");
    for (int i = 0; i < nresults; i++)
        printf("%s%s", i ? ", " : "", results[i]);
    printf("]}\n");
    free(orders);
    free(m);
    return 0;
}
