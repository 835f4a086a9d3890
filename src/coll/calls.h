/* Call numbers of collectives (calls.c). */
#ifndef LMPI_COLL_CALLS_H
#define LMPI_COLL_CALLS_H

#include "comm/comm.h"

/* What a collective call may touch: messages only, or also the shared-memory
 * areas (barrier, bcast, reduce, allreduce); nonblocking ones count apart. */
typedef enum { LMPI_COLL_PLAIN, LMPI_COLL_NONBLOCKING, LMPI_COLL_AREA } lmpi_coll_kind;

/* Message tags one blocking call may take from the collective sequence. */
#define LMPI_COLL_CALL_TAGS 8u

/* Set once this thread's current collective call has taken its number
 * (the binding clears it on entry; lmpi_coll_error reads it). */
extern _Thread_local bool lmpi_coll_counted;

/* Around every blocking collective's implementation: BEGIN numbers the call
 * (*BASE: its first tag) and, for KIND AREA, attaches the areas it may use;
 * END moves the sequence past the call's tags, whatever it took. */
lmpi_status lmpi_coll_call_begin(lmpi_comm *c, lmpi_coll_kind kind, uint32_t *base);
void lmpi_coll_call_end(lmpi_comm *c, uint32_t base);

/* The body of every blocking collective: one call number, whatever happens
 * in CALL (which returns its status). */
#define LMPI_COLL_BLOCKING(comm, kind, call)                                \
    do {                                                                    \
        uint32_t base_;                                                     \
        lmpi_status st_ = lmpi_coll_call_begin(comm, kind, &base_);         \
        if (st_ == LMPI_OK)                                                 \
            st_ = (call);                                                   \
        lmpi_coll_call_end(comm, base_);                                    \
        return st_;                                                         \
    } while (0)

/* A call that failed at this rank before it took its number: take it, do
 * the collective parts of BEGIN (the others did), and nothing else. */
void lmpi_coll_call_skip(lmpi_comm *c, lmpi_coll_kind kind);

#endif
