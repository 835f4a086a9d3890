/* The address vector (AV): one per process group, indexed by lpid (the
 * rank in that group).  An entry is 8 bytes: the transport address with the
 * transport-selection bit folded into its top bit (libfabric addresses use
 * 63 bits, shared-memory addresses are small local indices).  Where every
 * address is computable from the lpid and the node map, nothing is stored.
 *
 * Locality comes from a compressed node map, not from per-entry fields:
 * block (ppn consecutive ranks per node), cyclic (rank % nodes), or a table
 * of 2- or 4-byte node ids. */
#ifndef LMPI_AV_H
#define LMPI_AV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LMPI_AV_NET_BIT (UINT64_C(1) << 63)

typedef enum { LMPI_NODEMAP_BLOCK, LMPI_NODEMAP_CYCLIC, LMPI_NODEMAP_TABLE16, LMPI_NODEMAP_TABLE32 } lmpi_nodemap_mode;

typedef struct lmpi_nodemap {
    uint8_t mode;
    int32_t nranks;
    int32_t nnodes;
    int32_t ppn; /* block: ranks per node (the last node may have fewer) */
    void *ids;   /* tables */
} lmpi_nodemap;

static inline int lmpi_nodemap_node(const lmpi_nodemap *m, uint32_t lpid)
{
    switch ((lmpi_nodemap_mode)m->mode) {
    case LMPI_NODEMAP_BLOCK:
        return (int)(lpid / (uint32_t)m->ppn);
    case LMPI_NODEMAP_CYCLIC:
        return (int)(lpid % (uint32_t)m->nnodes);
    case LMPI_NODEMAP_TABLE16:
        return ((const uint16_t *)m->ids)[lpid];
    default:
        return (int)((const uint32_t *)m->ids)[lpid];
    }
}

/* Detect block or cyclic layouts in node_of[0..n) (node ids numbered in
 * order of first appearance), else store a table. */
bool lmpi_nodemap_build(lmpi_nodemap *m, const int *node_of, int n);
void lmpi_nodemap_free(lmpi_nodemap *m);
size_t lmpi_nodemap_bytes(const lmpi_nodemap *m);
const char *lmpi_nodemap_mode_name(const lmpi_nodemap *m);

typedef struct lmpi_av {
    uint32_t pgid;
    int32_t size;
    int32_t my_node; /* -1 when this process is not in the group */
    lmpi_nodemap nodes;
    uint64_t *entries; /* NULL: addresses are computed */
} lmpi_av;

/* Entry of lpid: shared memory (bit clear, the peer's index on this node)
 * or the network (bit set).  The computed form is the single-node job, where
 * the shm index is the lpid itself. */
static inline uint64_t lmpi_av_addr(const lmpi_av *av, uint32_t lpid)
{
    return av->entries ? av->entries[lpid] : lpid;
}

/* Set up process group pgid with size ranks and their node ids; me is this
 * process's lpid (or -1).  one_host: every rank shares this machine's
 * shared-memory segment (also when nodes are emulated), so addresses are the
 * lpids themselves and nothing is stored; otherwise an 8-byte entry per
 * rank. */
bool lmpi_av_create(lmpi_av *av, uint32_t pgid, int size, const int *node_of, int me, bool one_host);
void lmpi_av_destroy(lmpi_av *av);
/* Bytes per stored entry (0 when computed). */
size_t lmpi_av_entry_bytes(const lmpi_av *av);
/* The world's address vector (process group 0; spawned or connected
 * groups will get their own). */
lmpi_av *lmpi_av_world(void);

#endif
