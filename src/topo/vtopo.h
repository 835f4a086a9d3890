/* Virtual topologies of communicators (MPI 5.0 chapter 8): Cartesian,
 * graph and distributed graph, their queries, and the neighbour lists that
 * neighbourhood collectives (neighbor.c) exchange with.
 *
 * A topology is immutable once made and shared by reference between a
 * communicator and its duplicates.  A Cartesian one stores its dimensions
 * and this process's neighbours (O(ndims)); a graph one the whole graph
 * (the standard gives every process all of it); a distributed graph only
 * this process's in- and out-edges. */
#ifndef LMPI_TOPO_VTOPO_H
#define LMPI_TOPO_VTOPO_H

#include "comm/comm.h"

typedef struct lmpi_vtopo lmpi_vtopo;

struct lmpi_vtopo {
    int kind; /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    int refs;
    /* Cartesian */
    int ndims;
    int *dims, *periods;
    /* graph (nnodes vertices; edges of vertex r: edges[index[r-1] .. index[r])) */
    int nnodes, nedges;
    int *index, *edges;
    /* this process's neighbours as neighbourhood collectives see them:
     * sources (in) and destinations (out); weights for distributed graphs */
    int indeg, outdeg;
    int *in, *out, *inw, *outw;
    int weighted;
    int ints[]; /* every array above lives here */
};

void lmpi_vtopo_release(lmpi_vtopo *t);
static inline lmpi_vtopo *lmpi_vtopo_retain(lmpi_vtopo *t)
{
    if (t)
        t->refs++;
    return t;
}

/* What the last reorder chose and what it gained (MPI_T lmpi_topo_*). */
typedef struct {
    uint64_t reorders;        /* topology creations that reordered (not the identity) */
    uint64_t hop_bytes;       /* last creation with reorder=1: the mapping kept */
    uint64_t hop_bytes_launch; /* ... the placement as launched */
    uint64_t hop_bytes_block; /* ... block order */
    uint64_t internode;       /* ... weight between nodes, kept */
    uint64_t max_link;        /* ... heaviest node uplink, kept */
    uint64_t micros;          /* ... time the mapping took */
} lmpi_topo_stats;
extern lmpi_topo_stats lmpi_topo_stat;

#endif
