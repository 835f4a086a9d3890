/* Network models for launch-time mapping (DESIGN.md §4, contention-aware
 * mapping paper §3): an N-dimensional torus or mesh of nodes, a switch tree in
 * the style of Slurm's topology.conf, or a flat network (one switch).  Every
 * node has the same number of cores.
 *
 * This module has no MPI dependencies: mpiexec, leanmpi-map and the unit
 * tests link it on its own.  Description files are documented in
 * docs/mapping.md. */
#ifndef LMPI_TOPO_NETWORK_H
#define LMPI_TOPO_NETWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LMPI_NET_MAX_DIMS 6
#define LMPI_NET_ERRLEN 256

typedef enum { LMPI_NET_TORUS, LMPI_NET_MESH, LMPI_NET_TREE } lmpi_net_kind;

typedef struct {
    lmpi_net_kind kind;
    bool flat;  /* a tree of one switch, from "flat N" */
    int ndims;  /* torus/mesh */
    int dims[LMPI_NET_MAX_DIMS];
    int64_t stride[LMPI_NET_MAX_DIMS]; /* node id = sum coord[d] * stride[d], X fastest */
    int64_t nodes;
    int cores;
    /* Trees: vertices 0..nodes-1 are the nodes, nodes..nodes+nswitches-1 the
     * switches; parent[v] is -1 for the root only. */
    int nswitches;
    int *parent;
    int *depth;
    char **names; /* nodes then switches; NULL for torus/mesh */
} lmpi_net;

/* Parse SPEC: "torus:8x16x32", "mesh:4x4", "flat:16", or the path of a
 * description file.  CORES (> 0) is the cores per node unless the file sets
 * it.  On failure returns -1 and writes "where: problem" into ERR. */
int lmpi_net_parse(const char *spec, int cores, lmpi_net *net, char *err, size_t errlen);
/* Same, from text already in memory; WHERE names it in messages. */
int lmpi_net_parse_text(const char *text, const char *where, int cores, lmpi_net *net, char *err,
                        size_t errlen);
void lmpi_net_free(lmpi_net *net);

/* "torus 8x16x32, 4 cores per node" */
void lmpi_net_describe(const lmpi_net *net, char *buf, size_t len);
/* The node's name: "x3y1z0" style for tori/meshes, the file's name for trees. */
void lmpi_net_node_name(const lmpi_net *net, int64_t node, char *buf, size_t len);
/* "3,1,0" for tori/meshes; the path of switches from the root for trees. */
void lmpi_net_node_coords(const lmpi_net *net, int64_t node, char *buf, size_t len);

static inline int lmpi_net_coord(const lmpi_net *net, int64_t node, int d)
{
    return (int)((node / net->stride[d]) % net->dims[d]);
}

#endif
