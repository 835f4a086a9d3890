/* Launch-time process mapping with a contention model (DESIGN.md §4, the
 * contention-aware mapping paper §3).
 *
 * A mapping order places ranks on nodes.  On a torus or mesh it is a
 * permutation of T (the core within a node) and the dimensions, fastest
 * first: TXYZ fills a node's cores, then walks X, then Y, then Z; XYZT puts
 * one rank on every node before the second core of any node is used.  On
 * trees and flat networks the orders are block (fill a node) and cyclic
 * (round-robin over the nodes in their listed order).
 *
 * The model routes every message of a pattern: dimension-ordered (X, then Y,
 * ...; the shorter way round the ring, + on a tie) for small messages; for
 * large ones the traffic is split equally among the minimal next hops at
 * every hop (ties round a ring split half each way).  Trees route through
 * the lowest common switch.  Per link and direction it counts the messages
 * crossing (the "contention count": streams sharing the link); see
 * docs/mapping.md for the metrics and the paper's own way of counting. */
#ifndef LMPI_TOPO_MAPPING_H
#define LMPI_TOPO_MAPPING_H

#include "topo/network.h"
#include "topo/pattern.h"

/* Tile shapes tried for grid patterns (the best by messages leaving a node). */
#define LMPI_MAP_TILE_SHAPES 2
/* 7! orders of T and six dimensions, 6! node walks and 12 folds per tile shape */
#define LMPI_MAP_MAX_ORDERS (5040 + LMPI_MAP_TILE_SHAPES * (720 + 12))

typedef struct {
    char name[40];
    bool cyclic;   /* trees: round-robin over nodes; else block */
    int ndigits;   /* torus/mesh: T and the dimensions; tiled: the dimensions */
    int digit[LMPI_NET_MAX_DIMS + 1]; /* fastest first; -1 is T, d a dimension */
    /* Tiled orders (grid patterns only): every node holds a tile[0] x tile[1]
     * x ... block of the grid; the grid of blocks, row-major, walks the nodes
     * in digit order (trees: in listed order).  ntile 0: not tiled. */
    int ntile;
    int64_t grid[3];
    int tile[3];
    /* Folded tiles (a 2D grid of blocks on a 3D torus): block columns walk
     * dimension fold[0] and block rows fold[1]; both share fold[2], in
     * fold_f x fold_g slices (columns' slice fastest when fold_cols_fast). */
    bool folded, fold_cols_fast;
    int fold[3], fold_f, fold_g;
} lmpi_map_order;

typedef struct {
    double paper_contention; /* the paper's count for a typical process */
    double avg_contention;   /* messages per used link, both directions summed */
    double max_contention;
    double hop_bytes;        /* sum over messages of bytes x hops */
    int64_t max_dilation;    /* the longest route, in hops */
    double seconds;          /* time to evaluate this order */
} lmpi_map_metrics;

/* Every order of NET into OUT (at most LMPI_MAP_MAX_ORDERS); returns the
 * count.  Tori and meshes list the block order (TXYZ...) first. */
int lmpi_map_orders(const lmpi_net *net, lmpi_map_order *out);
/* Tiled candidates for a grid pattern P (nearest neighbours, fft, diagonal):
 * the LMPI_MAP_TILE_SHAPES block shapes of `cores` ranks with the fewest
 * messages leaving a block, each with every walk of the nodes.  Shapes that
 * only cut the grid's last dimension are the T-first orders already and are
 * left out.  A 2D grid on a 3D torus also gets folds: block columns along
 * one dimension, rows along another, the third shared in slices (a walk in
 * node order would put the next row of blocks several hops away).  Returns
 * the count (0 for other patterns). */
int lmpi_map_tiled_orders(const lmpi_net *net, const lmpi_pattern *p, lmpi_map_order *out);
/* "TZXY", "block", "cyclic" (any network) or a permutation; -1 and ERR. */
int lmpi_map_parse_order(const lmpi_net *net, const char *s, lmpi_map_order *o, char *err, size_t errlen);

/* Node and core of each of NRANKS ranks under order O (CORE_OF may be NULL).
 * -1 and ERR when the network has fewer than NRANKS cores. */
int lmpi_map_assign(const lmpi_net *net, const lmpi_map_order *o, int64_t nranks, int32_t *node_of,
                    int32_t *core_of, char *err, size_t errlen);

/* Route pattern P with ranks placed by NODE_OF and fill M.  LARGE selects
 * the adaptive (split) routing.  -1 and ERR on failure (memory). */
int lmpi_map_evaluate(const lmpi_net *net, const lmpi_pattern *p, const int32_t *node_of, bool large,
                      lmpi_map_metrics *m, char *err, size_t errlen);

/* The per-link message counts behind the metrics (for tests): tori and
 * meshes: [(d * 2 + s) * nodes + node] is the link leaving NODE along
 * dimension d, s = 0 the + direction, 1 the -; trees: [v] up from vertex v,
 * [(nodes + nswitches) + v] down into it.  malloc'ed; NULL on failure. */
double *lmpi_map_loads(const lmpi_net *net, const lmpi_pattern *p, const int32_t *node_of, bool large);

/* Evaluate every order and every tiled candidate; *PICK gets the least contended (lowest maximum
 * contention, then hop-bytes, then average).  METRICS has room for
 * LMPI_MAP_MAX_ORDERS entries.  Returns the candidate count or -1. */
int lmpi_map_choose(const lmpi_net *net, const lmpi_pattern *p, bool large, lmpi_map_order *orders,
                    lmpi_map_metrics *metrics, int *pick, char *err, size_t errlen);

#endif
