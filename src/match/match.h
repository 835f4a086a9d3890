/* Matching of incoming messages against posted receives, and of new
 * receives against the unexpected messages.
 *
 * This is the simple version: two lists in arrival order, searched linearly,
 * which is what MPI's ordering rules need and nothing more.  The matching
 * engine issue replaces it with per-context queues and the list / array / 4d /
 * hash / auto structures behind one ops table; callers only use this header. */
#ifndef LMPI_MATCH_H
#define LMPI_MATCH_H

#include "runtime/request.h"
#include "transport/transport.h"

/* A message that arrived before its receive was posted. */
typedef struct lmpi_unexpected {
    struct lmpi_unexpected *next;
    int src;      /* world rank of the sender */
    lmpi_pkt_hdr hdr;
    void *data;   /* eager payload copy (hdr.len bytes); NULL for RTS */
} lmpi_unexpected;

/* Post a receive (r->ctx, r->rank, r->tag; rank/tag may be wildcards). */
void lmpi_match_post(lmpi_request *r);
/* Remove and return the oldest posted receive matching an arrival. */
lmpi_request *lmpi_match_posted_take(uint32_t ctx, int rank, int tag);
/* Remove a posted receive (cancel). Returns 1 if it was posted. */
int lmpi_match_posted_remove(lmpi_request *r);

void lmpi_match_unexpected_add(lmpi_unexpected *u);
/* Remove and return the oldest unexpected message a receive matches. */
lmpi_unexpected *lmpi_match_unexpected_take(uint32_t ctx, int rank, int tag);

size_t lmpi_match_posted_length(void);
size_t lmpi_match_unexpected_length(void);

#endif
