/* Reordering a virtual topology onto the physical model (DESIGN.md §3,
 * paper: topology-aware graph and cart create).
 *
 * No MPI runtime here: the communicator code (vtopo.c) hands in where each
 * process runs and the communication graph, and gets back the new rank of
 * every process.  The physical model is a set of nodes, each with sockets
 * of cores (from hwloc, or a synthetic topology), on a network from
 * src/topo/network.h (flat when none is known).  A process's socket is its
 * local index on its node over the cores per socket: launchers fill a node
 * core by core, in local-rank order (ours does with --bind-to core).
 *
 * Cost, as in the launch-time mapping model (docs/mapping.md): hop-bytes =
 * sum over edges of weight x network links between the two nodes (0 on one
 * node; a flat network: 2, node - switch - node).  Inside a node, the weight
 * between sockets is counted apart (the second level of the mapping). */
#ifndef LMPI_TOPO_REMAP_H
#define LMPI_TOPO_REMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "topo/network.h"

typedef struct {
    int nprocs;
    const int *node_of;   /* process slot -> node id (0..nnodes-1) */
    int nnodes;
    int cores_per_socket; /* >= 1 */
    int sockets;          /* per node, >= 1 */
    const lmpi_net *net;  /* NULL: a flat network */
    const int64_t *net_node; /* node id -> the network's node number (NULL: the same) */
} lmpi_phys;

/* A weighted graph in compressed form: vertex v's edges are
 * adj[xadj[v] .. xadj[v+1]), weights wgt (NULL: all 1).  Edges may be
 * directed or listed twice; every listed edge counts. */
typedef struct {
    int n;
    const int64_t *xadj;
    const int *adj;
    const int *wgt;
} lmpi_cgraph;

typedef enum { LMPI_REMAP_IDENTITY, LMPI_REMAP_ANALYTIC, LMPI_REMAP_SCOTCH } lmpi_remap_strategy;

typedef struct {
    double hop_bytes;   /* weight x network links */
    double internode;   /* weight on edges between nodes */
    double intersocket; /* weight on edges between sockets of one node */
    double max_link;    /* the heaviest node uplink (in + out weight) */
} lmpi_remap_cost_t;

typedef struct {
    lmpi_remap_strategy strategy; /* what the mapping used (identity: no gain or no node information) */
    lmpi_remap_cost_t chosen;     /* the mapping kept */
    lmpi_remap_cost_t identity;   /* the placement as launched (vertex v on process slot v) */
    lmpi_remap_cost_t block;      /* block order (vertex v on the v-th core, nodes filled in turn) */
    double millis;                /* time the mapping took */
} lmpi_remap_quality;

/* Vertex placed on each process slot: slot_vertex[slot] = vertex (the new
 * rank of the process in that slot).  Returns 0, or -1 with ERR set; a grid
 * that cannot be tiled goes to Scotch with ALLOW_SCOTCH, else returns 1
 * (slot_vertex the identity). */
int lmpi_remap_cart(const lmpi_phys *ph, int ndims, const int *dims, const int *periods, bool allow_scotch,
                    int *slot_vertex, lmpi_remap_quality *q, char *err, size_t errlen);
int lmpi_remap_graph(const lmpi_phys *ph, const lmpi_cgraph *g, int *slot_vertex, lmpi_remap_quality *q, char *err,
                     size_t errlen);
/* Graphs as the topology functions see them: a stencil-like graph (a
 * Cartesian grid's star or box stencil, 1-3 dimensions, each periodic or
 * not) is tiled analytically, any other goes to Scotch. */
int lmpi_remap_auto(const lmpi_phys *ph, const lmpi_cgraph *g, int *slot_vertex, lmpi_remap_quality *q, char *err,
                    size_t errlen);
/* 1 when g is such a stencil, with its grid; else 0. */
int lmpi_remap_detect_grid(const lmpi_cgraph *g, int *ndims, int *dims, int *periods, bool *box);
/* Only the analytic tiling (no fallback): 0, or 1 when the grid cannot be
 * tiled onto these nodes (unequal nodes, no divisor tiling). */
int lmpi_remap_cart_analytic(const lmpi_phys *ph, int ndims, const int *dims, const int *periods, int *slot_vertex);
/* The graph of a Cartesian grid (2 edges per dimension and process, weight
 * 1; none across non-periodic edges); free with lmpi_cgraph_free. */
int lmpi_cgraph_cart(int ndims, const int *dims, const int *periods, lmpi_cgraph *g);
void lmpi_cgraph_free(lmpi_cgraph *g);

/* Network links between two process slots' nodes (0 on one node). */
int lmpi_phys_distance(const lmpi_phys *ph, int slot_a, int slot_b);
/* Cost of slot_vertex (NULL: identity) for graph g. */
void lmpi_remap_cost(const lmpi_phys *ph, const lmpi_cgraph *g, const int *slot_vertex, lmpi_remap_cost_t *c);
const char *lmpi_remap_strategy_name(lmpi_remap_strategy s);

#endif
