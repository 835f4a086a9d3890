/* Collective schedules: a list of rounds; a round's sends and receives run
 * together, its local steps (reduce, copy) run when the round before has
 * finished.  Blocking collectives run a schedule to its end; nonblocking
 * ones return it as a request that Test/Wait advance (no helper thread);
 * persistent ones keep it and restart it at every MPI_Start. */
#ifndef LMPI_SCHED_H
#define LMPI_SCHED_H

#include "coll/op.h"
#include "comm/comm.h"
#include "runtime/request.h"

typedef struct lmpi_sched lmpi_sched;

/* What collectives ran how (MPI_T pvars lmpi_coll_*). */
typedef struct {
    uint64_t scheduled;  /* schedules built */
    uint64_t short_path; /* schedule-free phases (short.c) */
    uint64_t node_aware; /* collectives that ran node-aware (node.c) */
    uint64_t shm_path;   /* collective phases through a shared-memory area (shmcoll.c) */
} lmpi_coll_stats;
extern lmpi_coll_stats lmpi_coll_stat;

lmpi_sched *lmpi_sched_new(lmpi_comm *comm);
/* Steps; buffers are (buf, count, dt) of the user or of scratch memory. */
lmpi_status lmpi_sched_send(lmpi_sched *s, const void *buf, MPI_Count count, lmpi_datatype *dt, int peer);
lmpi_status lmpi_sched_recv(lmpi_sched *s, void *buf, MPI_Count count, lmpi_datatype *dt, int peer);
lmpi_status lmpi_sched_reduce(lmpi_sched *s, const void *in, void *inout, MPI_Count count, lmpi_datatype *dt,
                              lmpi_op *op);
/* out = a op b, without a separate copy of b into out (a pass over memory
 * saved: the copy and the reduction run block by block in cache). */
lmpi_status lmpi_sched_reduce_into(lmpi_sched *s, const void *a, const void *b, void *out, MPI_Count count,
                                   lmpi_datatype *dt, lmpi_op *op);
lmpi_status lmpi_sched_copy(lmpi_sched *s, const void *src, MPI_Count scount, lmpi_datatype *sdt, void *dst,
                            MPI_Count rcount, lmpi_datatype *rdt);
/* The steps added from here on exchange on C, an internal communicator of
 * the schedule's one (an intercommunicator's local_comm, the node or
 * node-roots communicator), whose ranks their peers are; the schedule's
 * communicator itself (or NULL) goes back to it. */
void lmpi_sched_use_comm(lmpi_sched *s, lmpi_comm *c);
/* Everything added so far completes before anything added later starts. */
lmpi_status lmpi_sched_fence(lmpi_sched *s);
/* A datatype made for the schedule's steps (its reference passes to the
 * schedule, released when the schedule is freed); false when the schedule
 * holds LMPI_SCHED_OWNED_TYPES already. */
#define LMPI_SCHED_OWNED_TYPES 8
bool lmpi_sched_own_type(lmpi_sched *s, lmpi_datatype *dt);
/* Scratch memory owned by the schedule (freed with it). */
void *lmpi_sched_scratch(lmpi_sched *s, size_t bytes);

/* Run to the end (blocking collectives); frees the schedule. */
lmpi_status lmpi_sched_run(lmpi_sched *s);
/* Start as a request (nonblocking collectives). */
lmpi_status lmpi_sched_start(lmpi_sched *s, MPI_Request *request);
/* Keep as an inactive persistent request (the _init forms); MPI_Start
 * restarts it (lmpi_sched_restart). */
lmpi_status lmpi_sched_persistent(lmpi_sched *s, MPI_Request *request);
void lmpi_sched_restart(lmpi_request *r);
void lmpi_sched_free(lmpi_sched *s);
/* The end of every collective's build: after an error ST, free; else run
 * (blocking: REQUEST NULL), start as a request (I-forms), or keep for
 * MPI_Start (persistent _init forms). */
lmpi_status lmpi_sched_finish(lmpi_sched *s, lmpi_status st, MPI_Request *request, bool persist);
/* At MPI_Finalize: release the schedules kept for reuse. */
void lmpi_sched_finalize(void);

#endif
