/* Fault tolerance: User-Level Failure Mitigation (MPIX_Comm_revoke, _shrink,
 * _agree, _get_failed, _ack_failed; README.md in this folder).
 *
 * Under `mpiexec --with-ft ulfm` (LMPI_FT=1) the launcher posts failed
 * processes on the node segment's notice board (transport/shm/notice.h)
 * and wakes every sleeper.  A rank looks at the board's epoch when a wait
 * of its goes idle (lmpi_ft_poll), learns the new failures, and from then
 * on requests are checked when a wait looks at them (lmpi_request_done):
 * one that can no longer complete ends with MPIX_ERR_PROC_FAILED,
 * MPIX_ERR_PROC_FAILED_PENDING or MPIX_ERR_REVOKED.  Without a failure or
 * a revoke nothing of this runs: the check is one predicted branch on
 * paths that already wait. */
#ifndef LMPI_FT_H
#define LMPI_FT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/request.h"
#include "transport/transport.h"

/* Launched with --with-ft ulfm: failures are survivable. */
extern bool lmpi_ft_enabled;
/* A failure or a revoke is known: waits check their requests. */
extern bool lmpi_ft_active;
/* The notice board's epoch (a zero of our own without a board). */
extern _Atomic uint32_t *lmpi_ft_epoch_word;
extern uint32_t lmpi_ft_epoch_seen;

/* After the segment exists: watch its notice board when enabled. */
void lmpi_ft_init(void);
void lmpi_ft_finalize(void);
/* The board's epoch moved: learn the new failures. */
void lmpi_ft_notice(void);
static inline void lmpi_ft_poll(void)
{
    if (__builtin_expect(atomic_load_explicit(lmpi_ft_epoch_word, memory_order_relaxed) != lmpi_ft_epoch_seen, 0))
        lmpi_ft_notice();
}
/* The same, true when there was news (the caller looks at its condition
 * again before it sleeps). */
static inline bool lmpi_ft_epoch_moved(void)
{
    if (__builtin_expect(atomic_load_explicit(lmpi_ft_epoch_word, memory_order_seq_cst) == lmpi_ft_epoch_seen, 1))
        return false;
    lmpi_ft_notice();
    return true;
}
/* From an idle wait (now: its clock, ns): look at the processes of other
 * groups on this host when due (ft.c, "processes that no launcher of ours
 * watches").  Returns how long the wait may sleep before it calls again
 * (ns), 0 when it need not. */
uint64_t lmpi_ft_watch(uint64_t now);
/* The network transport could not reach this world rank (a transfer to or
 * from it failed): under --with-ft post it failed on the node's board, as
 * the launcher would, and return true; false when failures are not
 * survivable (the caller ends the process as before). */
bool lmpi_ft_unreachable(int world_rank);
/* fn(rank, arg) for each rank of a list like "2,5-7" (Hydra's
 * PMI_dead_processes, mpiexec's lmpi-ft: names) below size, in order. */
void lmpi_ft_each_listed(const char *list, long size, void (*fn)(int rank, void *arg), void *arg);
/* Has this world rank (of our job) failed, as far as we know? */
bool lmpi_ft_failed(int world_rank);
/* Failures known so far, of this job and of others (they only grow). */
int lmpi_ft_nfailed(void);
/* A send or receive that a failure or a revoke keeps from completing:
 * completes it with the error and returns true. */
bool lmpi_ft_request_check(lmpi_request *r);
/* A wildcard receive whose wait ended with MPIX_ERR_PROC_FAILED_PENDING
 * but which stays posted (the request is not finished, its handle kept). */
bool lmpi_ft_pending(const lmpi_request *r);
/* A blocking call cannot leave it posted: take it back, ended with
 * MPIX_ERR_PROC_FAILED (the pending class is for requests that stay; Open
 * MPI promotes it the same way, and MPICH's ft/anysource expects it). */
void lmpi_ft_pending_cancel(lmpi_request *r);
/* A probe from source over c that found nothing: can a message still come?
 * LMPI_OK, or LMPI_ERR_REVOKED, or LMPI_ERR_PROC_FAILED (the source failed,
 * or for MPI_ANY_SOURCE a member failed and is not acknowledged: a probe
 * has no request to stay pending). */
lmpi_status lmpi_ft_probe_check(const lmpi_comm *c, int source);
/* Can an operation over all of c (a collective) still complete?  LMPI_OK,
 * or LMPI_ERR_REVOKED / LMPI_ERR_PROC_FAILED (a member failed). */
lmpi_status lmpi_ft_comm_broken(const lmpi_comm *c);
/* Give up on an active send or receive of an operation a failure broke:
 * it completes with ERROR_CLASS now.  One that no packet can name any more
 * (a receive not yet matched) is simply taken back; any other is marked
 * abandoned (late packets for it are dropped, it is never reused). */
void lmpi_ft_abandon(lmpi_request *r, int error_class);
/* Revokes that came before their communicator was made here (how many are
 * kept); lmpi_comm_alloc hands each new communicator to lmpi_ft_comm_made. */
extern int lmpi_ft_early_revokes;
void lmpi_ft_comm_made(lmpi_comm *c);
/* An LMPI_PKT_FT packet (a revoke, a step of an agreement). */
void lmpi_ft_packet(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len);
/* The synchronization before a window or a file lets go of its memory
 * (MPI_Win_free, MPI_File_close), which neither a failure nor a revoke can
 * block: a barrier, or an agreement over c when failures are survivable or
 * c was revoked (*agreed: then members known to have failed are simply
 * missing, and LMPI_OK is returned all the same). */
lmpi_status lmpi_ft_release_barrier(lmpi_comm *c, bool *agreed);
/* MPI_Finalize's barrier when failures are survivable: an agreement over
 * MPI_COMM_WORLD, which ends whoever failed. */
lmpi_status lmpi_ft_finalize_barrier(void);

#endif
