/* bench/comm, module level (no MPI runtime): the rank-map memory of one
 * process in a simulated job of P ranks, and the cost of a translation per
 * map mode.
 *
 *   bench_comm_module [--quick]            memory table + RESULT lines
 *   bench_comm_module --translate MODE N   N translations through one map
 *                                          (run under callgrind by bench/run)
 *
 * Memory: the process is world rank P/2 (first on its node: a node root
 * for the world-ordered communicators, so it holds their node-roots
 * communicators too, the worst case).  For each pattern it creates 10 or 100 communicators from the world
 * the way MPI_Comm_split/dup would (same indices, same derivation code), each
 * with its internal node and node-roots communicators, and reads the
 * accounting counters: rank-map tables (rankmap category) plus the map state
 * embedded in each communicator.  LeanMPI's maps vs the table baseline
 * (LMPI_RANKMAP=table). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "av/av.h"
#include "av/rankmap.h"
#include "comm/comm.h"

typedef enum { PAT_SPLIT, PAT_LOWHIGH, PAT_DUP, PAT_REVERSED, PAT_SHUFFLED, PAT_SHUFFLED_DISTINCT, NPAT } pattern;
static const char *pat_name[NPAT] = {"split", "split-lowhigh", "dup", "reversed", "shuffled", "shuffled-distinct"};

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The indices (world ranks, in child rank order) of my child communicator
 * and my rank in it. */
static int child_indices(pattern p, int P, int me, int k, int *idx, int *myrank)
{
    int n = 0;
    switch (p) {
    case PAT_SPLIT:
        for (int r = me % 2; r < P; r += 2)
            idx[n++] = r;
        break;
    case PAT_LOWHIGH:
        for (int r = me >= P / 2 ? P / 2 : 0; r < (me >= P / 2 ? P : P / 2); r++)
            idx[n++] = r;
        break;
    case PAT_DUP:
        for (int r = 0; r < P; r++)
            idx[n++] = r;
        break;
    case PAT_REVERSED:
        for (int r = 0; r < P; r++)
            idx[n++] = P - 1 - r;
        break;
    case PAT_SHUFFLED:
    case PAT_SHUFFLED_DISTINCT:
        rng_state = 0x9e3779b97f4a7c15ull + (p == PAT_SHUFFLED_DISTINCT ? (uint64_t)k * 7919 : 0);
        for (int r = 0; r < P; r++)
            idx[r] = r;
        for (int r = P - 1; r > 0; r--) {
            int j = (int)rnd((uint32_t)r + 1), t = idx[r];
            idx[r] = idx[j], idx[j] = t;
        }
        n = P;
        break;
    default:
        break;
    }
    for (int i = 0; i < n; i++)
        if (idx[i] == me)
            *myrank = i;
    return n;
}

typedef struct {
    double bytes_total;  /* rank maps of the comms + their node comms */
    double comm_bytes;   /* communicator objects (all fields) */
    double seconds;      /* creation time */
    int modes[LMPI_RM_NMODES];
} measure;

static measure run_one(int P, int ppn, pattern p, int ncomms, bool table, int *idx, int *node_of)
{
    measure out = {0};
    int me = P / 2;
    for (int r = 0; r < P; r++)
        node_of[r] = r / ppn;
    lmpi_rankmap_set_table_baseline(table);
    lmpi_av_create(lmpi_av_world(), 0, P, node_of, me, false);
    lmpi_rankmap direct, world_map;
    lmpi_rankmap_direct(&direct, P, 0);
    if (table)
        lmpi_rankmap_derive_pattern(&world_map, &direct, P, 0, 1, 1);
    else
        lmpi_rankmap_copy(&world_map, &direct);
    lmpi_rankmap_release(&direct);
    lmpi_comm *world = lmpi_comm_alloc(&world_map, me, 0);
    lmpi_rankmap_release(&world_map);
    lmpi_comm **c = calloc((size_t)ncomms, sizeof(*c));
    int64_t rm0 = lmpi_mem_current(LMPI_MEM_RANKMAP), cm0 = lmpi_mem_current(LMPI_MEM_COMM);
    double t0 = now();
    int nmaps = 0;
    for (int k = 0; k < ncomms; k++) {
        int myrank = -1, n = child_indices(p, P, me, k, idx, &myrank);
        lmpi_rankmap m;
        if (p == PAT_DUP) /* MPI_Comm_dup shares the parent's map */
            lmpi_rankmap_derive_pattern(&m, &world->map, P, 0, 1, 1);
        else
            lmpi_rankmap_derive(&m, &world->map, idx, n);
        c[k] = lmpi_comm_alloc(&m, myrank, (uint32_t)(k + 1) * LMPI_CTX_BLOCK);
        lmpi_rankmap_release(&m);
        lmpi_comm *node, *roots;
        lmpi_comm_node_comms(c[k], &node, &roots);
        out.modes[c[k]->map.mode]++;
        nmaps += 1 + (node && node != c[k]) + (roots != NULL);
    }
    out.seconds = now() - t0;
    int64_t rm = lmpi_mem_current(LMPI_MEM_RANKMAP) - rm0, cm = lmpi_mem_current(LMPI_MEM_COMM) - cm0;
    out.bytes_total = (double)rm + (double)nmaps * sizeof(lmpi_rankmap);
    out.comm_bytes = (double)cm + (double)rm;
    for (int k = 0; k < ncomms; k++)
        lmpi_comm_destroy(c[k]);
    free(c);
    lmpi_comm_destroy(world);
    lmpi_av_destroy(lmpi_av_world());
    return out;
}

static void memory_bench(bool quick)
{
    static const int sizes_full[] = {1024, 16384, 131072, 786432, 1048576};
    static const int sizes_quick[] = {1024, 16384};
    const int *sizes = quick ? sizes_quick : sizes_full;
    int nsizes = quick ? 2 : 5;
    int maxp = sizes[nsizes - 1];
    int *idx = malloc(sizeof(int) * (size_t)maxp), *node_of = malloc(sizeof(int) * (size_t)maxp);
    printf("Rank-map memory of one process (world rank P/2, a node root), communicators from MPI_COMM_WORLD,\n"
           "each with its node and node-roots communicators. bytes = tables + map state.\n");
    printf("%8s %4s %-18s %6s %14s %14s %8s  %s\n", "P", "ppn", "pattern", "comms", "leanmpi", "table", "ratio",
           "leanmpi mode");
    for (int s = 0; s < nsizes; s++) {
        int P = sizes[s];
        lmpi_av av;
        for (int r = 0; r < P; r++)
            node_of[r] = r / 16;
        lmpi_av_create(&av, 0, P, node_of, P / 2, false);
        printf("RESULT av_entry_bytes ranks=%d impl=leanmpi value=%zu\n", P, lmpi_av_entry_bytes(&av));
        printf("RESULT av_entry_bytes ranks=%d impl=leanmpi:computed value=0\n", P);
        lmpi_av_destroy(&av);
        for (int ppn = 16; ppn <= 64; ppn *= 4)
            for (int p = 0; p < NPAT; p++)
                for (int nc = 10; nc <= (quick ? 10 : 100); nc *= 10) {
                    measure a = run_one(P, ppn, (pattern)p, nc, false, idx, node_of);
                    measure b = run_one(P, ppn, (pattern)p, nc, true, idx, node_of);
                    const char *mode = "?";
                    for (int m = 0; m < LMPI_RM_NMODES; m++)
                        if (a.modes[m])
                            mode = lmpi_rankmap_mode_name(m);
                    printf("%8d %4d %-18s %6d %14.0f %14.0f %7.0fx  %s\n", P, ppn, pat_name[p], nc, a.bytes_total,
                           b.bytes_total, b.bytes_total / (a.bytes_total ? a.bytes_total : 1), mode);
                    for (int v = 0; v < 2; v++) {
                        measure *x = v ? &b : &a;
                        const char *impl = v ? "leanmpi:table" : "leanmpi";
                        printf("RESULT rankmap_bytes_total ranks=%d comms=%d pattern=%s per_node=%d impl=%s value=%.0f\n",
                               P, nc, pat_name[p], ppn, impl, x->bytes_total);
                        printf("RESULT rankmap_bytes_per_comm ranks=%d comms=%d pattern=%s per_node=%d impl=%s "
                               "value=%.1f\n",
                               P, nc, pat_name[p], ppn, impl, x->bytes_total / nc);
                        printf("RESULT comm_bytes_per_comm ranks=%d comms=%d pattern=%s per_node=%d impl=%s "
                               "value=%.1f\n",
                               P, nc, pat_name[p], ppn, impl, x->comm_bytes / nc);
                    }
                }
        fflush(stdout);
    }
    free(idx);
    free(node_of);
}

/* ---- translation cost ------------------------------------------------------- */

enum { T_DIRECT, T_OFFSET, T_STRIDE, T_BSTRIDE, T_LUT, T_MLUT, T_TABLE, NT };
static const char *t_name[NT] = {"direct", "offset", "stride", "stride-blocks", "lut", "mlut", "table"};

/* One translation exactly as the send path does it (rank map, then AV). */
__attribute__((noinline)) uint32_t translate_one(const lmpi_comm *c, int r)
{
    return (uint32_t)lmpi_comm_world_rank(c, r);
}

static lmpi_comm *make_mode(int mode, int P)
{
    lmpi_rankmap world, m;
    lmpi_rankmap_direct(&world, P, 0);
    lmpi_rankmap_set_table_baseline(mode == T_TABLE);
    int *idx = NULL;
    switch (mode) {
    case T_DIRECT: lmpi_rankmap_copy(&m, &world); break;
    case T_OFFSET: lmpi_rankmap_derive_pattern(&m, &world, P / 2, P / 2, 1, 1); break;
    case T_STRIDE: lmpi_rankmap_derive_pattern(&m, &world, P / 2, 1, 2, 1); break;
    case T_BSTRIDE: lmpi_rankmap_derive_pattern(&m, &world, P / 2, 0, 8, 4); break;
    case T_TABLE: lmpi_rankmap_derive_pattern(&m, &world, P, 0, 1, 1); break;
    case T_LUT:
        idx = malloc(sizeof(int) * (size_t)P);
        child_indices(PAT_SHUFFLED, P, 0, 0, idx, &(int){0});
        lmpi_rankmap_derive(&m, &world, idx, P);
        break;
    case T_MLUT: {
        lmpi_gpid *g = malloc(sizeof(*g) * (size_t)P);
        for (int r = 0; r < P; r++)
            g[r] = (lmpi_gpid){(uint32_t)(r & 1), (uint32_t)(r / 2)};
        lmpi_rankmap_from_gpids(&m, g, P);
        free(g);
        break;
    }
    }
    free(idx);
    lmpi_rankmap_set_table_baseline(false);
    lmpi_comm *c = lmpi_comm_alloc(&m, 0, 0);
    lmpi_rankmap_release(&m);
    lmpi_rankmap_release(&world);
    return c;
}

static uint64_t translate_loop(const lmpi_comm *c, long n)
{
    uint64_t sum = 0;
    int mask = c->map.size - 1, r = 0; /* sizes are powers of two */
    for (long i = 0; i < n; i++) {
        sum += translate_one(c, r);
        r = (r + 7919) & mask;
    }
    return sum;
}

static void translate_bench(bool quick)
{
    enum { P = 1 << 20 };
    long n = quick ? 2000000 : 20000000;
    int *node_of = calloc(P, sizeof(int));
    lmpi_av_create(lmpi_av_world(), 0, P, node_of, 0, true);
    free(node_of);
    printf("\nTranslation (rank map + AV) at %d ranks, ns per translation (best of 5):\n", P);
    for (int m = 0; m < NT; m++) {
        lmpi_comm *c = make_mode(m, P);
        double best = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = now();
            volatile uint64_t s = translate_loop(c, n);
            (void)s;
            double t = (now() - t0) / (double)n * 1e9;
            best = t < best ? t : best;
        }
        printf("  %-14s %-8s %.2f ns\n", t_name[m], lmpi_rankmap_mode_name(c->map.mode), best);
        printf("RESULT translation_time mode=%s impl=leanmpi value=%.3f\n", t_name[m], best);
        lmpi_comm_destroy(c);
    }
    lmpi_av_destroy(lmpi_av_world());
}

static int translate_only(const char *mode, long n)
{
    enum { P = 1 << 20 };
    int *node_of = calloc(P, sizeof(int));
    lmpi_av_create(lmpi_av_world(), 0, P, node_of, 0, true);
    free(node_of);
    for (int m = 0; m < NT; m++)
        if (!strcmp(mode, t_name[m])) {
            lmpi_comm *c = make_mode(m, P);
            volatile uint64_t s = translate_loop(c, n);
            (void)s;
            lmpi_comm_destroy(c);
            return 0;
        }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--translate"))
        return translate_only(argv[2], atol(argv[3]));
    bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    memory_bench(quick);
    translate_bench(quick);
    return 0;
}
