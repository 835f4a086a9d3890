/* Matching: per-context queues of posted receives and unexpected messages.
 *
 * Each context id has a queue (the paper's ContextIdLead), found through a
 * hash table on the id.  Ranked items live in the structure chosen by
 * LMPI_MATCH (list, array, hash, 4d or auto, see structure.h); MPI_ANY_SOURCE
 * receives wait in a separate seq-ordered sub-queue, and an arrival takes
 * the older of the two candidates, which keeps MPI's order.  `auto` starts
 * each context as a list and moves it to LMPI_MATCH_AUTO_TARGET when the
 * observed search depth passes the paper's threshold
 * (PointerTraversalLengthThreshold x LMPI_MATCH_ADJUSTMENT), and back to a
 * list once the context is quiet again. */
#ifndef LMPI_MATCH_H
#define LMPI_MATCH_H

#include "match/mqi.h"
#include "match/structure.h"

typedef struct lmpi_match_queue {
    struct lmpi_match_queue *hnext;
    uint32_t ctx;
    int comm_size;
    const lmpi_match_ops *ops;
    void *s;
    uint64_t next_seq;
    lmpi_mqi_list any_prq; /* MPI_ANY_SOURCE receives, seq order */
    size_t prq_len, umq_len;
    bool is_auto;
    uint32_t depth_avg16;    /* auto: moving average of search depth, x16 */
    uint32_t up_threshold16; /* auto: move to the target above this average (x16) */
    uint64_t searches;       /* on this context */
    uint64_t last_observed;  /* auto: the search the average last took in */
} lmpi_match_queue;

/* Statistics, exported as MPI_T performance variables. */
typedef struct {
    uint64_t searches;
    uint64_t visits;    /* items compared, all searches */
    uint64_t max_depth; /* deepest single search */
    uint64_t migrations;
    uint64_t time_ns;   /* time in matching, when timing is on */
    bool timing;
} lmpi_match_stats;

extern lmpi_match_stats lmpi_match_stat;

/* Select the structure by name (list, array, hash, 4d, auto); NULL = the
 * LMPI_MATCH setting.  Affects queues created afterwards. */
lmpi_status lmpi_match_select(const char *name);
const char *lmpi_match_selected(void);

/* The queue of a context, created on first use. */
lmpi_match_queue *lmpi_match_queue_get(uint32_t ctx, int comm_size);
void lmpi_match_queue_release(uint32_t ctx);
void lmpi_match_finalize(void);

/* Message (rank, tag) arrived: the posted receive it matches, removed; or
 * NULL once item (which must not be NULL) has been queued as unexpected. */
lmpi_mqi *lmpi_match_arrive(lmpi_match_queue *q, int rank, int tag, lmpi_mqi *item);
/* A receive (rank, tag may be wildcards) is posted: the unexpected message it
 * matches, removed; or NULL once item has been queued as posted. */
lmpi_mqi *lmpi_match_post(lmpi_match_queue *q, int rank, int tag, lmpi_mqi *item);
/* Probe (take=false) or matched probe (take=true) of the unexpected queue. */
lmpi_mqi *lmpi_match_probe(lmpi_match_queue *q, int rank, int tag, bool take);
/* Remove a posted receive that is still queued (cancel). */
void lmpi_match_cancel(lmpi_match_queue *q, lmpi_mqi *posted);

/* Totals over all contexts. */
size_t lmpi_match_posted_length(void);
size_t lmpi_match_unexpected_length(void);
size_t lmpi_match_metadata_bytes(void);

#endif
