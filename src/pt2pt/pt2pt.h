/* Point-to-point internals shared by the protocol core (pt2pt.c), request
 * completion (completion.c) and the send modes, persistent requests, probes
 * and buffered sends (modes.c, bsend.c). */
#ifndef LMPI_PT2PT_H
#define LMPI_PT2PT_H

#include "match/match.h"
#include "runtime/request.h"

typedef struct lmpi_unexpected lmpi_unexpected;
struct lmpi_pkt_hdr;

/* The transports' packet handler (lmpi_tr_set_handler at start-up). */
void lmpi_pt2pt_deliver(int src, const struct lmpi_pkt_hdr *hdr, const void *payload, size_t len);

/* Byte-level send/receive on an explicit context id (collectives use
 * comm->context_id + 1).  A send with a buffered-send segment is internal:
 * it frees itself and the segment when done and must not be touched after
 * the call.  The request completes through progress. */
lmpi_status lmpi_pt2pt_isend(const void *buf, size_t bytes, int dest, int tag, lmpi_comm *comm, uint32_t ctx,
                             lmpi_send_mode mode, lmpi_bsend_segment *bseg, lmpi_request **out);
lmpi_status lmpi_pt2pt_isend_dt(const void *buf, MPI_Count count, lmpi_datatype *dt, size_t bytes, int dest, int tag,
                                lmpi_comm *comm, uint32_t ctx, lmpi_send_mode mode, lmpi_bsend_segment *bseg,
                                lmpi_request **out);
lmpi_status lmpi_pt2pt_start_send_ctx(const void *buf, MPI_Count count, lmpi_datatype *dt, int dest, int tag,
                                      lmpi_comm *comm, uint32_t ctx, lmpi_request **out);
lmpi_status lmpi_pt2pt_start_recv_ctx(void *buf, MPI_Count count, lmpi_datatype *dt, int source, int tag,
                                      lmpi_comm *comm, uint32_t ctx, lmpi_request **out);
lmpi_status lmpi_pt2pt_irecv(void *buf, size_t bytes, int source, int tag, lmpi_comm *comm, uint32_t ctx,
                             lmpi_request **out);
/* Receive request set-up and start, for requests that do not come from the
 * pool (a blocking receive keeps its own on the stack). */
void lmpi_pt2pt_recv_init(lmpi_request *r, void *buf, size_t bytes, int source, int tag, lmpi_comm *comm,
                          uint32_t ctx);
void lmpi_pt2pt_recv_start(lmpi_request *r);
bool lmpi_pt2pt_try_send(const void *buf, size_t bytes, int dest, int tag, lmpi_comm *comm, uint32_t ctx);
/* Wait for a send or receive request as a blocking call does: a wildcard
 * receive a failure left posted (src/ft) is taken back. */
void lmpi_pt2pt_wait_blocking(lmpi_request *r);
/* Wait for a send or receive request, copy its status, release it. */
lmpi_status lmpi_pt2pt_wait_free(lmpi_request *r, MPI_Status *status);
/* The error a done request's status carries (truncation; a failure or a
 * revoke: src/ft), LMPI_OK for none. */
lmpi_status lmpi_pt2pt_status_error(const MPI_Status *s);
int lmpi_pt2pt_progress_outbox(void);
/* One packet (payload copied when it has to wait), in order behind
 * everything this process sent before: one-sided operations in messages
 * (rma/am.c) go this way, and their arrivals (LMPI_PKT_RMA) to the handler
 * the RMA layer registers here. */
void lmpi_pt2pt_send_packet(int dest, const struct lmpi_pkt_hdr *hdr, const void *payload, size_t len);
extern void (*lmpi_pt2pt_rma_handler)(int src, const struct lmpi_pkt_hdr *hdr, const void *payload, size_t len);
void lmpi_pt2pt_finalize(void);

lmpi_match_queue *lmpi_pt2pt_queue(lmpi_comm *comm, uint32_t ctx);
/* MPI_Cancel of a send: dropped if not sent yet, else asked back from the
 * receiver; the request completes (cancelled or not) when that is known. */
void lmpi_pt2pt_cancel_send(lmpi_request *r);
/* Takes a receive that has not matched out of its queue (an internal
 * request of the library's own: nothing to tell anyone). */
void lmpi_pt2pt_cancel_recv(lmpi_request *r);
/* A receive request takes a message found by a (matched) probe. */
void lmpi_pt2pt_recv_unexpected(lmpi_request *r, lmpi_unexpected *u);
void lmpi_pt2pt_status_of_unexpected(const lmpi_unexpected *u, MPI_Status *st);
void lmpi_pt2pt_unexpected_free(lmpi_unexpected *u);
void lmpi_pt2pt_proc_null_status(MPI_Status *s);
lmpi_unexpected *lmpi_pt2pt_message_from_handle(MPI_Message h);
MPI_Message lmpi_pt2pt_message_handle(lmpi_unexpected *u, lmpi_comm *comm);
lmpi_comm *lmpi_pt2pt_message_comm(const lmpi_unexpected *u);
lmpi_unexpected *lmpi_pt2pt_unexpected_of(lmpi_mqi *m);

/* Buffered sends (bsend.c); buffers held by communicators and sessions. */
typedef struct lmpi_bsend_buffer lmpi_bsend_buffer;
lmpi_status lmpi_bsend_slot_attach(lmpi_bsend_buffer **slot, void *buffer, MPI_Count size);
lmpi_status lmpi_bsend_slot_detach(lmpi_bsend_buffer **slot, void *buffer_addr, MPI_Count *size);
void lmpi_bsend_slot_flush(lmpi_bsend_buffer *b);
lmpi_status lmpi_bsend_slot_iflush(lmpi_bsend_buffer *b, MPI_Request *request);
void lmpi_bsend_slot_free(lmpi_bsend_buffer **slot);
lmpi_status lmpi_bsend_start(const void *buf, size_t bytes, int dest, int tag, lmpi_comm *comm);
void lmpi_bsend_release(lmpi_bsend_segment *seg);
void lmpi_bsend_finalize(void);

/* Completion (completion.c). */
bool lmpi_request_done(lmpi_request *r);
void lmpi_request_wait(lmpi_request *r);

/* Partitioned requests (partitioned.c): done (advancing it), Start, free. */
bool lmpi_part_done(lmpi_request *r);
lmpi_status lmpi_part_start(lmpi_request *r);
void lmpi_part_free(lmpi_request *r);
void lmpi_part_status(lmpi_request *r, MPI_Status *s);

/* Generalized requests (grequest.c). */
lmpi_status lmpi_greq_query(lmpi_request *r, MPI_Status *s);
lmpi_status lmpi_greq_release(lmpi_request *r);
lmpi_status lmpi_greq_cancel(lmpi_request *r);

#endif
