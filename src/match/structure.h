/* The ops table every matching structure fills (list, array, hash, 4d).
 *
 * A structure holds one context's ranked posted receives (PRQ: a specific
 * source rank, tag may be MPI_ANY_TAG) and unexpected messages (UMQ).
 * MPI_ANY_SOURCE receives live in the engine's separate sub-queue
 * (engine.c), which is what keeps an MPI_ANY_SOURCE post O(1).  Every
 * search returns the oldest matching item (smallest seq), so all structures
 * match exactly like one ordered list would. */
#ifndef LMPI_MATCH_STRUCTURE_H
#define LMPI_MATCH_STRUCTURE_H

#include "match/mqi.h"
#include "runtime/lmpi.h"

typedef struct lmpi_match_ops {
    const char *name;
    void *(*create)(int comm_size);
    void (*destroy)(void *s);
    /* A message (rank, tag) arrived: remove and return the oldest ranked
     * posted receive accepting it whose seq is below limit.  Without one,
     * insert item (unless NULL) into the UMQ where the search ended. */
    lmpi_mqi *(*arrive)(void *s, int rank, int tag, uint64_t limit, lmpi_mqi *item);
    /* A receive for a specific rank (tag may be MPI_ANY_TAG): return the
     * oldest unexpected message it accepts, removed if take.  Without one,
     * insert item (unless NULL) into the PRQ where the search ended. */
    lmpi_mqi *(*post)(void *s, int rank, int tag, bool take, lmpi_mqi *item);
    /* An MPI_ANY_SOURCE receive or probe: oldest unexpected message of any
     * rank with a matching tag, removed if take. */
    lmpi_mqi *(*umq_any)(void *s, int tag, bool take);
    /* Remove a ranked posted receive (cancel). */
    void (*prq_remove)(void *s, lmpi_mqi *m);
    /* Hand every item out, each queue in seq order (to move a context to
     * another structure); the structure is empty afterwards. */
    void (*drain)(void *s, lmpi_mqi_list *prq, lmpi_mqi_list *umq);
    /* Bytes of structure beyond the items themselves. */
    size_t (*metadata_bytes)(const void *s);
} lmpi_match_ops;

extern const lmpi_match_ops lmpi_match_list_ops;
extern const lmpi_match_ops lmpi_match_array_ops;
extern const lmpi_match_ops lmpi_match_hash_ops;
extern const lmpi_match_ops lmpi_match_4d_ops;

void lmpi_match_4d_pools_destroy(void);

/* Sort a list by seq (stable merge sort); used by drains. */
void lmpi_mqi_sort(lmpi_mqi_list *l);

/* The paper's dimensionSpan = 2^ceil(log2(size)/4) and the pointer traversal
 * length a 4d search costs in the worst case (Plane + X + Y + segment:
 * span + 1 + span + span). */
unsigned lmpi_match_span_bits(int comm_size);
unsigned lmpi_match_traversal_threshold(int comm_size);

#endif
