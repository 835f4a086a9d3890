/* Reordering (src/topo/remap.c) without MPI: the analytic tiling on small
 * grids against hand-counted cuts, permutations always, the identity kept
 * when nothing is gained, Scotch on general and weighted graphs, network
 * distances, and the quality targets at 16 cores per socket. */
#include <stdlib.h>
#include <string.h>

#include "topo/remap.h"
#include "unit.h"

static int is_permutation(const int *sv, int n)
{
    int *seen = calloc((size_t)n, sizeof(int)), ok = 1;
    for (int i = 0; i < n; i++) {
        if (sv[i] < 0 || sv[i] >= n || seen[sv[i]]++)
            ok = 0;
    }
    free(seen);
    return ok;
}

static void cart_small(void)
{
    /* 4x4 grid, 4 nodes of 4 placed round-robin: as launched every column
     * is a node (24 directed inter-node edges); 2x2 tiles cut 16 */
    int node_of[16], sv[16], dims[2] = {4, 4}, periods[2] = {0, 0};
    for (int i = 0; i < 16; i++)
        node_of[i] = i % 4;
    lmpi_phys ph = {.nprocs = 16, .node_of = node_of, .nnodes = 4, .cores_per_socket = 4, .sockets = 1};
    lmpi_remap_quality q;
    char err[128] = "";
    CHECK_EQ(lmpi_remap_cart(&ph, 2, dims, periods, false, sv, &q, err, sizeof(err)), 0);
    CHECK(is_permutation(sv, 16));
    CHECK_EQ(q.strategy, LMPI_REMAP_ANALYTIC);
    CHECK_EQ((int)q.identity.internode, 24);
    CHECK_EQ((int)q.chosen.internode, 16);
    CHECK_EQ((int)q.chosen.hop_bytes, 32); /* flat network: 2 links */
    /* each node holds a 2x2 tile: its four vertices' coordinates */
    for (int n = 0; n < 4; n++) {
        int minr = 9, maxr = -1, minc = 9, maxc = -1;
        for (int s = 0; s < 16; s++)
            if (node_of[s] == n) {
                int r = sv[s] / 4, c = sv[s] % 4;
                minr = r < minr ? r : minr, maxr = r > maxr ? r : maxr;
                minc = c < minc ? c : minc, maxc = c > maxc ? c : maxc;
            }
        CHECK_EQ(maxr - minr, 1);
        CHECK_EQ(maxc - minc, 1);
    }
    /* already optimal (block placement of a 4x2 grid on 2 nodes): identity */
    int nb[8], sv8[8], d8[2] = {4, 2};
    for (int i = 0; i < 8; i++)
        nb[i] = i / 4;
    lmpi_phys ph8 = {.nprocs = 8, .node_of = nb, .nnodes = 2, .cores_per_socket = 4, .sockets = 1};
    CHECK_EQ(lmpi_remap_cart(&ph8, 2, d8, periods, true, sv8, &q, err, sizeof(err)), 0);
    CHECK_EQ(q.strategy, LMPI_REMAP_IDENTITY);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(sv8[i], i);
    /* one node: nothing to gain */
    int one[8] = {0};
    lmpi_phys ph1 = {.nprocs = 8, .node_of = one, .nnodes = 1, .cores_per_socket = 8, .sockets = 1};
    CHECK_EQ(lmpi_remap_cart(&ph1, 2, d8, periods, true, sv8, &q, err, sizeof(err)), 0);
    CHECK_EQ(q.strategy, LMPI_REMAP_IDENTITY);
    /* unequal nodes cannot be tiled: analytic declines, Scotch maps */
    int uneq[6] = {0, 0, 0, 0, 1, 1}, sv6[6], d6[2] = {3, 2};
    lmpi_phys ph6 = {.nprocs = 6, .node_of = uneq, .nnodes = 2, .cores_per_socket = 4, .sockets = 1};
    CHECK_EQ(lmpi_remap_cart_analytic(&ph6, 2, d6, periods, sv6), 1);
    CHECK_EQ(lmpi_remap_cart(&ph6, 2, d6, periods, true, sv6, &q, err, sizeof(err)), 0);
    CHECK(is_permutation(sv6, 6));
}

static void cart_targets(void)
{
    /* the target: 2D 5-point stencil, 16 cores per socket, two
     * sockets per node: >= 50 % lower hop-bytes than block order; the
     * analytic tiling within 5 % of Scotch's cost on the same instance */
    int n = 1024, dims[2] = {32, 32}, periods[2] = {0, 0};
    int *node_of = malloc(sizeof(int) * (size_t)n), *sv = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        node_of[i] = i / 32;
    lmpi_phys ph = {.nprocs = n, .node_of = node_of, .nnodes = 32, .cores_per_socket = 16, .sockets = 2};
    lmpi_remap_quality qa, qs;
    char err[128] = "";
    CHECK_EQ(lmpi_remap_cart(&ph, 2, dims, periods, false, sv, &qa, err, sizeof(err)), 0);
    CHECK(is_permutation(sv, n));
    CHECK(qa.chosen.hop_bytes <= 0.5 * qa.block.hop_bytes);
    lmpi_cgraph g;
    CHECK_EQ(lmpi_cgraph_cart(2, dims, periods, &g), 0);
    CHECK_EQ(g.xadj[n], 2 * (2 * 32 * 31)); /* directed edges of a 32x32 mesh */
    CHECK_EQ(lmpi_remap_graph(&ph, &g, sv, &qs, err, sizeof(err)), 0);
    CHECK(is_permutation(sv, n));
    CHECK(qa.chosen.hop_bytes <= 1.05 * qs.chosen.hop_bytes);
    /* the socket level: each node's 8x4 tile splits into two 4x4 socket
     * tiles, 4 edges apart in each direction (row-major would cut 8) */
    CHECK_EQ((int)qa.chosen.intersocket, 32 * 2 * 4);
    lmpi_cgraph_free(&g);
    free(node_of);
    free(sv);
}

static void graphs(void)
{
    /* two heavy cliques of 4 spread over two nodes round-robin, joined by a
     * light edge: Scotch puts each clique on one node */
    int n = 8, xadj_i[9], adj[64], w[64], e = 0;
    int64_t xadj[9];
    for (int v = 0; v < n; v++) {
        xadj_i[v] = e;
        xadj[v] = e;
        int base = v < 4 ? 0 : 4;
        for (int u = base; u < base + 4; u++)
            if (u != v) {
                adj[e] = u;
                w[e++] = 100;
            }
        if (v == 3 || v == 4) {
            adj[e] = v == 3 ? 4 : 3;
            w[e++] = 1;
        }
    }
    xadj[n] = e;
    (void)xadj_i;
    int node_of[8], sv[8];
    for (int i = 0; i < 8; i++)
        node_of[i] = i % 2;
    lmpi_phys ph = {.nprocs = 8, .node_of = node_of, .nnodes = 2, .cores_per_socket = 4, .sockets = 1};
    lmpi_cgraph g = {.n = n, .xadj = xadj, .adj = adj, .wgt = w};
    lmpi_remap_quality q;
    char err[128] = "";
    CHECK_EQ(lmpi_remap_graph(&ph, &g, sv, &q, err, sizeof(err)), 0);
    CHECK(is_permutation(sv, 8));
    CHECK_EQ(q.strategy, LMPI_REMAP_SCOTCH);
    CHECK_EQ((int)q.chosen.internode, 2); /* only the light edge, both directions */
    for (int s = 0; s < 8; s++) /* a clique per node */
        for (int t = 0; t < 8; t++)
            if (node_of[s] == node_of[t])
                CHECK_EQ(sv[s] < 4, sv[t] < 4);
}

/* MPI_Graph_map runs on every process: the same input maps the same way */
static void deterministic(void)
{
    int dims[3] = {8, 8, 8}, periods[3] = {1, 0, 0}, n = 512;
    lmpi_cgraph g;
    CHECK_EQ(lmpi_cgraph_cart(3, dims, periods, &g), 0);
    int *node_of = malloc(sizeof(int) * (size_t)n), *a = malloc(sizeof(int) * (size_t)n),
        *b = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        node_of[i] = i % 16; /* round-robin: much to gain */
    lmpi_phys ph = {.nprocs = n, .node_of = node_of, .nnodes = 16, .cores_per_socket = 16, .sockets = 2};
    lmpi_remap_quality q1, q2;
    char err[128];
    CHECK_EQ(lmpi_remap_graph(&ph, &g, a, &q1, err, sizeof(err)), 0);
    CHECK_EQ(lmpi_remap_graph(&ph, &g, b, &q2, err, sizeof(err)), 0);
    CHECK(is_permutation(a, n));
    CHECK_EQ(memcmp(a, b, sizeof(int) * (size_t)n), 0);
    CHECK(q1.chosen.hop_bytes < 0.5 * q1.identity.hop_bytes);
    free(node_of), free(a), free(b);
    lmpi_cgraph_free(&g);
}

/* Stencil-like graphs are recognized and tiled like their grid. */
static void stencils(void)
{
    int dims[3] = {6, 4, 8}, periods[3] = {1, 0, 0}, nd, got[3], gp[3];
    bool box;
    lmpi_cgraph g;
    CHECK_EQ(lmpi_cgraph_cart(3, dims, periods, &g), 0);
    CHECK_EQ(lmpi_remap_detect_grid(&g, &nd, got, gp, &box), 1);
    CHECK_EQ(nd, 3);
    CHECK_EQ(got[0], 6); CHECK_EQ(got[1], 4); CHECK_EQ(got[2], 8);
    CHECK_EQ(gp[0], 1); CHECK_EQ(gp[1], 0); CHECK_EQ(gp[2], 0);
    CHECK(!box);
    /* the same grid round-robin on 12 nodes of 16: tiled, not Scotch */
    int n = 192, *node_of = malloc(sizeof(int) * (size_t)n), *sv = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        node_of[i] = i % 12;
    lmpi_phys ph = {.nprocs = n, .node_of = node_of, .nnodes = 12, .cores_per_socket = 16, .sockets = 1};
    lmpi_remap_quality q;
    char err[128];
    CHECK_EQ(lmpi_remap_auto(&ph, &g, sv, &q, err, sizeof(err)), 0);
    CHECK_EQ(q.strategy, LMPI_REMAP_ANALYTIC);
    CHECK(is_permutation(sv, n));
    CHECK(q.chosen.hop_bytes < q.identity.hop_bytes);
    lmpi_cgraph_free(&g);
    /* one edge less: not a grid, Scotch maps it */
    CHECK_EQ(lmpi_cgraph_cart(3, dims, periods, &g), 0);
    ((int *)g.adj)[0] = ((int *)g.adj)[1];
    CHECK_EQ(lmpi_remap_detect_grid(&g, &nd, got, gp, &box), 0);
    CHECK_EQ(lmpi_remap_auto(&ph, &g, sv, &q, err, sizeof(err)), 0);
    CHECK(q.strategy != LMPI_REMAP_ANALYTIC);
    lmpi_cgraph_free(&g);
    free(node_of);
    free(sv);
}

static void distances(void)
{
    lmpi_net net;
    char err[LMPI_NET_ERRLEN];
    CHECK_EQ(lmpi_net_parse("torus:4x4", 1, &net, err, sizeof(err)), 0);
    int node_of[3] = {0, 1, 2};         /* dense node ids ... */
    int64_t netnode[3] = {0, 5, 15}; /* ... and where they sit in the torus */
    lmpi_phys ph = {.nprocs = 3, .node_of = node_of, .nnodes = 3, .cores_per_socket = 1, .sockets = 1, .net = &net,
                    .net_node = netnode};
    CHECK_EQ(lmpi_phys_distance(&ph, 0, 1), 2); /* (0,0) -> (1,1) */
    CHECK_EQ(lmpi_phys_distance(&ph, 0, 2), 2); /* (0,0) -> (3,3): wraps */
    CHECK_EQ(lmpi_phys_distance(&ph, 1, 1), 0);
    lmpi_net_free(&net);
    lmpi_phys flat = {.nprocs = 3, .node_of = node_of, .nnodes = 3, .cores_per_socket = 1, .sockets = 1};
    CHECK_EQ(lmpi_phys_distance(&flat, 0, 2), 2);
}

int main(void)
{
    cart_small();
    cart_targets();
    graphs();
    deterministic();
    stencils();
    distances();
    return unit_finish("test_remap");
}
