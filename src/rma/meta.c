/* Table II of the paper as numbers: the bytes one process keeps for one
 * window, per aspect and strategy, at P ranks.  LeanMPI's strategies are
 * computed from the structures it really allocates (sizeof of its slot and
 * window object); the others from the costs the paper gives for the
 * implementations it studied (8-byte base + 4-byte disp unit + 48-byte key per
 * target for per-target window metadata, a counter per target for the
 * reduce-scatter fence, 32 bytes per queued origin for queued locks, one
 * operation object per buffered operation for delayed issue). */
#include <string.h>

#include "rma/win.h"
#include "runtime/config.h"

#define PAPER_BASE 8u
#define PAPER_DISP 4u
#define PAPER_KEY 48u
#define PAPER_LOCK_QUEUE_ENTRY 32u

uint64_t lmpi_rma_metadata_bytes(lmpi_rma_aspect aspect, const char *strategy, uint64_t ranks, uint64_t ops)
{
    switch (aspect) {
    case LMPI_RMA_ASPECT_WINDOW:
        /* ours: the window object and this process's descriptor line of its
         * slot (the lock lines count under "lock"); what differs between
         * members stays in their own slots */
        if (!strcmp(strategy, "compact"))
            return sizeof(lmpi_win) + LMPI_RMA_LINE;
        if (!strcmp(strategy, "per_target_disp")) /* offset-based network, differing disp units */
            return sizeof(lmpi_win) + ranks * PAPER_DISP;
        return sizeof(lmpi_win) + ranks * (PAPER_BASE + PAPER_DISP + PAPER_KEY); /* per_target: HW-addr + keys */
    case LMPI_RMA_ASPECT_FENCE:
        return !strcmp(strategy, "reduce_scatter") ? ranks * sizeof(uint32_t) : 0; /* barrier: the header's word */
    case LMPI_RMA_ASPECT_LOCK:
        if (!strcmp(strategy, "queued")) /* the target queues every origin */
            return (ranks - 1) * PAPER_LOCK_QUEUE_ENTRY;
        if (!strcmp(strategy, "polling"))
            return 0;
        /* mcs: the lock word and queue tail in one's slot, one queue node */
        return 2 * LMPI_RMA_LINE;
    case LMPI_RMA_ASPECT_OUTGOING:
        if (!strcmp(strategy, "delayed_unbounded"))
            return ops * sizeof(lmpi_rma_op);
        if (!strcmp(strategy, "delayed")) /* our bounded pool */
            return (uint64_t)(lmpi_config.rma_pool > 0 ? lmpi_config.rma_pool : 1) * sizeof(lmpi_rma_op);
        return 0; /* eager: nothing is kept per operation */
    }
    return 0;
}
