/* Address vectors and node maps. */
#include <string.h>

#include "av/av.h"
#include "runtime/lmpi.h"

static lmpi_av world_av;

lmpi_av *lmpi_av_world(void) { return &world_av; }

bool lmpi_nodemap_build(lmpi_nodemap *m, const int *node_of, int n)
{
    memset(m, 0, sizeof(*m));
    m->nranks = n;
    int nnodes = 0;
    for (int i = 0; i < n; i++)
        if (node_of[i] + 1 > nnodes)
            nnodes = node_of[i] + 1;
    m->nnodes = nnodes ? nnodes : 1;
    /* block: node ids 0,0,..,1,1,.. with ppn each (the last may be short) */
    int ppn = 0;
    while (ppn < n && node_of[ppn] == 0)
        ppn++;
    bool block = ppn > 0;
    for (int i = 0; i < n && block; i++)
        block = node_of[i] == i / ppn;
    if (block) {
        m->mode = LMPI_NODEMAP_BLOCK;
        m->ppn = ppn;
        return true;
    }
    bool cyclic = true;
    for (int i = 0; i < n && cyclic; i++)
        cyclic = node_of[i] == i % m->nnodes;
    if (cyclic) {
        m->mode = LMPI_NODEMAP_CYCLIC;
        return true;
    }
    bool narrow = m->nnodes <= 65536;
    m->ids = lmpi_malloc((size_t)n * (narrow ? 2 : 4), LMPI_MEM_AV);
    if (!m->ids)
        return false;
    m->mode = narrow ? LMPI_NODEMAP_TABLE16 : LMPI_NODEMAP_TABLE32;
    for (int i = 0; i < n; i++) {
        if (narrow)
            ((uint16_t *)m->ids)[i] = (uint16_t)node_of[i];
        else
            ((uint32_t *)m->ids)[i] = (uint32_t)node_of[i];
    }
    return true;
}

void lmpi_nodemap_free(lmpi_nodemap *m)
{
    lmpi_free(m->ids);
    memset(m, 0, sizeof(*m));
}

size_t lmpi_nodemap_bytes(const lmpi_nodemap *m)
{
    if (m->mode == LMPI_NODEMAP_TABLE16)
        return 2 * (size_t)m->nranks;
    if (m->mode == LMPI_NODEMAP_TABLE32)
        return 4 * (size_t)m->nranks;
    return 0;
}

const char *lmpi_nodemap_mode_name(const lmpi_nodemap *m)
{
    static const char *names[] = {"block", "cyclic", "table16", "table32"};
    return names[m->mode];
}

bool lmpi_av_create(lmpi_av *av, uint32_t pgid, int size, const int *node_of, int me, bool one_host)
{
    memset(av, 0, sizeof(*av));
    av->pgid = pgid;
    av->size = size;
    if (!lmpi_nodemap_build(&av->nodes, node_of, size))
        return false;
    av->my_node = me >= 0 ? lmpi_nodemap_node(&av->nodes, (uint32_t)me) : -1;
    /* Computable: everyone on this host (shm index = lpid).  Otherwise an
     * entry per rank: the shm index on this node, or the network address
     * (the lpid: libfabric AV tables inserted in world order). */
    if (one_host)
        return true;
    av->entries = lmpi_malloc(sizeof(uint64_t) * (size_t)(size ? size : 1), LMPI_MEM_AV);
    if (!av->entries) {
        lmpi_nodemap_free(&av->nodes);
        return false;
    }
    uint64_t local = 0;
    for (int i = 0; i < size; i++)
        av->entries[i] = lmpi_nodemap_node(&av->nodes, (uint32_t)i) == av->my_node ? local++
                                                                                   : LMPI_AV_NET_BIT | (uint64_t)i;
    return true;
}

void lmpi_av_destroy(lmpi_av *av)
{
    lmpi_free(av->entries);
    lmpi_nodemap_free(&av->nodes);
    memset(av, 0, sizeof(*av));
}

size_t lmpi_av_entry_bytes(const lmpi_av *av) { return av->entries ? sizeof(uint64_t) : 0; }
