/* Between ft.c and agree.c. */
#ifndef LMPI_FT_INTERNAL_H
#define LMPI_FT_INTERNAL_H

#include "comm/comm.h"
#include "ft/ft.h"

/* LMPI_PKT_FT's tags: what the packet is */
enum {
    LMPI_FT_REVOKE = 1, /* ctx: the communicator revoked */
    LMPI_FT_CONTRIB,    /* an agreement's contribution, to its coordinator */
    LMPI_FT_DECIDE,     /* the coordinator's decision, to every member */
    LMPI_FT_QUERY,      /* a new coordinator asks: decided, or your contribution again */
};

/* The ranks of c that failed, in the order this process learnt of them
 * (out NULL: just the count). */
int lmpi_ft_comm_failed(const lmpi_comm *c, int *out);
/* Communicators that packets name by their context: the user's, and a
 * window's or file's own duplicate (a node's or leaders' communicator
 * shares its parent's fate instead, ft_parent). */
static inline bool lmpi_ft_comm_named(const lmpi_comm *c)
{
    return !(c->flags & LMPI_COMM_INTERNAL) || (c->flags & LMPI_COMM_PRIVATE);
}
/* The named communicator with this context id (packets name the context
 * only); NULL when it does not exist here. */
lmpi_comm *lmpi_ft_comm_of_ctx(uint32_t ctx);
/* A packet to rank of c, unless it is known to have failed. */
void lmpi_ft_send(lmpi_comm *c, int rank, const lmpi_pkt_hdr *h, const void *payload, size_t len);
/* agree.c (a running agreement looks at the count of failures itself
 * when it advances) */
void lmpi_ft_agree_packet(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len);
void lmpi_ft_agree_forget_all(void);

#endif
