/* The MPI point-to-point calls on top of the protocol core: the four send
 * modes and their nonblocking and persistent forms, receives, the
 * send-receive combinations, probes and matched probes, and the barrier. */
#include <string.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "datatype/datatype.h"
#include "ft/ft.h"
#include "coll/sched.h"
#include "pt2pt/pt2pt.h"

static lmpi_status message_bytes(MPI_Count count, const lmpi_datatype *dt, size_t *bytes)
{
    if (LMPI_UNLIKELY(dt->size && (uint64_t)count > (uint64_t)INT64_MAX / (uint64_t)dt->size)) {
        lmpi_err_detail("count %lld of %lld-byte elements overflows", (long long)count, (long long)dt->size);
        return LMPI_ERR_COUNT;
    }
    *bytes = (size_t)count * (size_t)dt->size;
    return LMPI_OK;
}

/* Non-contiguous types are packed as they leave and unpacked as they
 * arrive (src/pt2pt/pt2pt.c): a send packs each packet in place, a receive
 * unpacks each packet or pulls straight into its runs.  Only a buffered
 * send keeps a packed copy (in the attached buffer). */

static void attach_recv_type(lmpi_request *r, void *buf, MPI_Count count, lmpi_datatype *dt)
{
    r->buf = NULL;
    r->user_buf = buf;
    r->count = count;
    r->dt = dt;
    lmpi_datatype_retain(dt);
}

/* buf is already at the data for a contiguous type. */
static lmpi_status send_typed(const void *buf, MPI_Count count, lmpi_datatype *dt, size_t bytes, int dest, int tag,
                              lmpi_comm *comm, uint32_t ctx, lmpi_send_mode mode, lmpi_request **out)
{
    if (LMPI_LIKELY(dt->contiguous))
        return lmpi_pt2pt_isend(buf, bytes, dest, tag, comm, ctx, mode, NULL, out);
    return lmpi_pt2pt_isend_dt(buf, count, dt, bytes, dest, tag, comm, ctx, mode, NULL, out);
}

/* Start a send of any mode; *out is NULL for a buffered send, which is
 * complete as soon as the data sits in the attached buffer. */
static lmpi_status start_send(const void *buf, MPI_Count count, lmpi_datatype *dt, int dest, int tag,
                              lmpi_comm *comm, lmpi_send_mode mode, lmpi_request **out)
{
    size_t bytes;
    lmpi_status st = message_bytes(count, dt, &bytes);
    if (st != LMPI_OK)
        return st;
    *out = NULL;
    if (LMPI_LIKELY(dt->contiguous))
        buf = lmpi_dt_contig_ptr(buf, dt);
    if (mode == LMPI_MODE_BUFFERED) {
        void *tmp = NULL;
        if (!dt->contiguous) { /* the attached buffer keeps the packed bytes */
            if (!(tmp = lmpi_malloc(bytes ? bytes : 1, LMPI_MEM_DATATYPE)))
                return LMPI_ERR_NO_MEM;
            lmpi_dt_pack(buf, count, dt, 0, (MPI_Count)bytes, tmp);
            buf = tmp;
        }
        st = lmpi_bsend_start(buf, bytes, dest, tag, comm); /* copies */
        lmpi_free(tmp);
        return st;
    }
    return send_typed(buf, count, dt, bytes, dest, tag, comm, comm->context_id, mode, out);
}

/* For the collective schedules: a send or receive of (buf, count, dt) on
 * an explicit context and tag. */
lmpi_status lmpi_pt2pt_start_send_ctx(const void *buf, MPI_Count count, lmpi_datatype *dt, int dest, int tag,
                                      lmpi_comm *comm, uint32_t ctx, lmpi_request **out)
{
    size_t bytes;
    lmpi_status st = message_bytes(count, dt, &bytes);
    if (st != LMPI_OK)
        return st;
    return send_typed(dt->contiguous ? lmpi_dt_contig_ptr(buf, dt) : buf, count, dt, bytes, dest, tag, comm, ctx,
                      LMPI_MODE_STANDARD, out);
}

static void attach_recv_type(lmpi_request *r, void *buf, MPI_Count count, lmpi_datatype *dt);

lmpi_status lmpi_pt2pt_start_recv_ctx(void *buf, MPI_Count count, lmpi_datatype *dt, int source, int tag,
                                      lmpi_comm *comm, uint32_t ctx, lmpi_request **out)
{
    size_t bytes;
    lmpi_status st = message_bytes(count, dt, &bytes);
    if (st != LMPI_OK)
        return st;
    if (LMPI_LIKELY(dt->contiguous))
        return lmpi_pt2pt_irecv((void *)lmpi_dt_contig_ptr(buf, dt), bytes, source, tag, comm, ctx, out);
    lmpi_request *r = lmpi_request_alloc(LMPI_REQ_RECV);
    if (!r)
        return LMPI_ERR_NO_MEM;
    lmpi_pt2pt_recv_init(r, NULL, bytes, source, tag, comm, ctx);
    attach_recv_type(r, buf, count, dt);
    lmpi_pt2pt_recv_start(r);
    *out = r;
    return LMPI_OK;
}

static lmpi_status blocking_send(const void *buf, MPI_Count count, lmpi_datatype *dt, int dest, int tag,
                                 lmpi_comm *comm, lmpi_send_mode mode)
{
    if (dest == MPI_PROC_NULL) /* nothing to send in any mode, no request to make */
        return LMPI_OK;
    /* Try to finish before allocating anything: a small standard-mode
     * message that the transport takes at once needs no request. */
    if (mode == LMPI_MODE_STANDARD && dt->contiguous &&
        lmpi_pt2pt_try_send(lmpi_dt_contig_ptr(buf, dt), (size_t)count * (size_t)dt->size, dest, tag, comm,
                            comm->context_id))
        return LMPI_OK;
    lmpi_request *r;
    lmpi_status st = start_send(buf, count, dt, dest, tag, comm, mode, &r);
    if (st != LMPI_OK || !r)
        return st;
    return lmpi_pt2pt_wait_free(r, MPI_STATUS_IGNORE);
}

/* A buffered send hands back a request that is already complete. */
static lmpi_status nonblocking_send(const void *buf, MPI_Count count, lmpi_datatype *dt, int dest, int tag,
                                    lmpi_comm *comm, lmpi_send_mode mode, MPI_Request *request)
{
    lmpi_request *r;
    lmpi_status st = start_send(buf, count, dt, dest, tag, comm, mode, &r);
    if (st != LMPI_OK)
        return st;
    if (!r) {
        r = lmpi_request_alloc(LMPI_REQ_SEND);
        if (!r)
            return LMPI_ERR_NO_MEM;
        r->complete = 1;
    }
    *request = (MPI_Request)r;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Send(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                           lmpi_comm *comm)
{
    return blocking_send(buf, count, datatype, dest, tag, comm, LMPI_MODE_STANDARD);
}

lmpi_status lmpi_impl_Ssend(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                            lmpi_comm *comm)
{
    return blocking_send(buf, count, datatype, dest, tag, comm, LMPI_MODE_SYNC);
}

lmpi_status lmpi_impl_Bsend(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                            lmpi_comm *comm)
{
    return blocking_send(buf, count, datatype, dest, tag, comm, LMPI_MODE_BUFFERED);
}

/* Ready mode: the receive is known to be posted; the standard protocol is
 * correct for it and no faster path exists over shared memory. */
lmpi_status lmpi_impl_Rsend(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                            lmpi_comm *comm)
{
    return blocking_send(buf, count, datatype, dest, tag, comm, LMPI_MODE_READY);
}

lmpi_status lmpi_impl_Isend(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                            lmpi_comm *comm, MPI_Request *request)
{
    return nonblocking_send(buf, count, datatype, dest, tag, comm, LMPI_MODE_STANDARD, request);
}

lmpi_status lmpi_impl_Issend(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                             lmpi_comm *comm, MPI_Request *request)
{
    return nonblocking_send(buf, count, datatype, dest, tag, comm, LMPI_MODE_SYNC, request);
}

lmpi_status lmpi_impl_Ibsend(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                             lmpi_comm *comm, MPI_Request *request)
{
    return nonblocking_send(buf, count, datatype, dest, tag, comm, LMPI_MODE_BUFFERED, request);
}

lmpi_status lmpi_impl_Irsend(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                             lmpi_comm *comm, MPI_Request *request)
{
    return nonblocking_send(buf, count, datatype, dest, tag, comm, LMPI_MODE_READY, request);
}

static lmpi_status start_recv(void *buf, MPI_Count count, lmpi_datatype *dt, int source, int tag, lmpi_comm *comm,
                              lmpi_request **out)
{
    return lmpi_pt2pt_start_recv_ctx(buf, count, dt, source, tag, comm, comm->context_id, out);
}

/* A blocking receive keeps its request on the stack: nothing to allocate. */
lmpi_status lmpi_impl_Recv(void *buf, MPI_Count count, lmpi_datatype *datatype, int source, int tag,
                           lmpi_comm *comm, MPI_Status *status)
{
    size_t bytes;
    lmpi_status st = message_bytes(count, datatype, &bytes);
    if (st != LMPI_OK)
        return st;
    if (LMPI_UNLIKELY(!datatype->contiguous)) { /* through a request that unpacks */
        lmpi_request *rq;
        st = start_recv(buf, count, datatype, source, tag, comm, &rq);
        return st != LMPI_OK ? st : lmpi_pt2pt_wait_free(rq, status);
    }
    lmpi_request r;
    lmpi_pt2pt_recv_init(&r, (void *)lmpi_dt_contig_ptr(buf, datatype), bytes, source, tag, comm, comm->context_id);
    lmpi_pt2pt_recv_start(&r);
    lmpi_pt2pt_wait_blocking(&r); /* (a failure or a revoke may end it: src/ft) */
    if (status != MPI_STATUS_IGNORE)
        *status = r.status;
    if (LMPI_UNLIKELY(r.status.MPI_ERROR != MPI_SUCCESS))
        return lmpi_pt2pt_status_error(&r.status);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Irecv(void *buf, MPI_Count count, lmpi_datatype *datatype, int source, int tag,
                            lmpi_comm *comm, MPI_Request *request)
{
    lmpi_request *r;
    lmpi_status st = start_recv(buf, count, datatype, source, tag, comm, &r);
    if (st == LMPI_OK)
        *request = (MPI_Request)r;
    return st;
}

/* ---- send-receive ------------------------------------------------------------ */
/* Receive first, then send: with both posted, no pair of ranks calling
 * Sendrecv on each other can deadlock, whatever the protocol. */
static lmpi_status start_sendrecv(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype, int dest,
                                  int sendtag, void *recvbuf, MPI_Count recvcount, lmpi_datatype *recvtype,
                                  int source, int recvtag, lmpi_comm *comm, lmpi_request **out)
{
    lmpi_request *c = lmpi_request_alloc(LMPI_REQ_COMPOUND);
    if (!c)
        return LMPI_ERR_NO_MEM;
    lmpi_status st = start_recv(recvbuf, recvcount, recvtype, source, recvtag, comm, &c->child[1]);
    if (st != LMPI_OK) {
        lmpi_request_free(c);
        return st;
    }
    st = start_send(sendbuf, sendcount, sendtype, dest, sendtag, comm, LMPI_MODE_STANDARD, &c->child[0]);
    if (st != LMPI_OK) {
        /* the receive is posted; it is left to complete on its own */
        c->child[1]->internal = true;
        lmpi_request_free(c);
        return st;
    }
    *out = c;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Isendrecv(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype, int dest,
                                int sendtag, void *recvbuf, MPI_Count recvcount, lmpi_datatype *recvtype,
                                int source, int recvtag, lmpi_comm *comm, MPI_Request *request)
{
    lmpi_request *c;
    lmpi_status st = start_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                                    source, recvtag, comm, &c);
    if (st == LMPI_OK)
        *request = (MPI_Request)c;
    return st;
}

lmpi_status lmpi_impl_Sendrecv(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype, int dest,
                               int sendtag, void *recvbuf, MPI_Count recvcount, lmpi_datatype *recvtype,
                               int source, int recvtag, lmpi_comm *comm, MPI_Status *status)
{
    lmpi_request *c;
    lmpi_status st = start_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                                    source, recvtag, comm, &c);
    if (st != LMPI_OK)
        return st;
    return lmpi_pt2pt_wait_free(c, status);
}

/* The replace forms receive into a temporary buffer, copied over the send
 * buffer once both halves are done. */
static lmpi_status start_replace(void *buf, MPI_Count count, lmpi_datatype *dt, int dest, int sendtag, int source,
                                 int recvtag, lmpi_comm *comm, lmpi_request **out)
{
    size_t bytes;
    lmpi_status st = message_bytes(count, dt, &bytes);
    if (st != LMPI_OK)
        return st;
    void *tmp = lmpi_malloc(bytes ? bytes : 1, LMPI_MEM_REQUEST);
    if (!tmp)
        return LMPI_ERR_NO_MEM;
    lmpi_request *c;
    /* the bytes arrive contiguous (packed for a non-contiguous type) */
    lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
    bool contig = dt->contiguous;
    st = start_sendrecv(buf, count, dt, dest, sendtag, tmp, contig ? count : (MPI_Count)bytes, contig ? dt : byte,
                        source, recvtag, comm, &c);
    if (st != LMPI_OK) {
        lmpi_free(tmp);
        return st;
    }
    c->replace_buf = contig ? (void *)lmpi_dt_contig_ptr(buf, dt) : buf;
    if (!contig) {
        c->dt = dt;
        c->count = count;
    }
    *out = c;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Sendrecv_replace(void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int sendtag,
                                       int source, int recvtag, lmpi_comm *comm, MPI_Status *status)
{
    lmpi_request *c;
    lmpi_status st = start_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, &c);
    if (st != LMPI_OK)
        return st;
    return lmpi_pt2pt_wait_free(c, status);
}

lmpi_status lmpi_impl_Isendrecv_replace(void *buf, MPI_Count count, lmpi_datatype *datatype, int dest,
                                        int sendtag, int source, int recvtag, lmpi_comm *comm, MPI_Request *request)
{
    lmpi_request *c;
    lmpi_status st = start_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, &c);
    if (st == LMPI_OK)
        *request = (MPI_Request)c;
    return st;
}

/* ---- persistent requests ------------------------------------------------------- */
static lmpi_status make_persistent(void *buf, MPI_Count count, lmpi_datatype *dt, int peer, int tag,
                                   lmpi_comm *comm, lmpi_send_mode mode, MPI_Request *request)
{
    size_t bytes;
    lmpi_status st = message_bytes(count, dt, &bytes);
    if (st != LMPI_OK)
        return st;
    lmpi_request *p = lmpi_request_alloc(LMPI_REQ_PERSISTENT);
    if (!p)
        return LMPI_ERR_NO_MEM;
    p->buf = buf;
    p->count = count;
    p->dt = dt;
    lmpi_datatype_retain(dt); /* the program may free its handle before MPI_Start */
    p->rank = peer;
    p->tag = tag;
    p->comm = comm;
    p->mode = (uint8_t)mode;
    *request = (MPI_Request)p;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Send_init(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                                lmpi_comm *comm, MPI_Request *request)
{
    return make_persistent((void *)buf, count, datatype, dest, tag, comm, LMPI_MODE_STANDARD, request);
}

lmpi_status lmpi_impl_Ssend_init(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                                 lmpi_comm *comm, MPI_Request *request)
{
    return make_persistent((void *)buf, count, datatype, dest, tag, comm, LMPI_MODE_SYNC, request);
}

lmpi_status lmpi_impl_Bsend_init(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                                 lmpi_comm *comm, MPI_Request *request)
{
    return make_persistent((void *)buf, count, datatype, dest, tag, comm, LMPI_MODE_BUFFERED, request);
}

lmpi_status lmpi_impl_Rsend_init(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                                 lmpi_comm *comm, MPI_Request *request)
{
    return make_persistent((void *)buf, count, datatype, dest, tag, comm, LMPI_MODE_READY, request);
}

lmpi_status lmpi_impl_Recv_init(void *buf, MPI_Count count, lmpi_datatype *datatype, int source, int tag,
                                lmpi_comm *comm, MPI_Request *request)
{
    return make_persistent(buf, count, datatype, source, tag, comm, LMPI_MODE_RECV, request);
}

static lmpi_status start_one(MPI_Request h)
{
    lmpi_request *p = lmpi_request_from_handle(h);
    if (p && p->kind == LMPI_REQ_SCHED && p->persistent) { /* a persistent collective */
        if (p->active) {
            lmpi_err_detail("the persistent request is already active");
            return LMPI_ERR_REQUEST;
        }
        lmpi_sched_restart(p);
        return LMPI_OK;
    }
    if (p && p->kind == LMPI_REQ_PART)
        return lmpi_part_start(p);
    if (!p || p->kind != LMPI_REQ_PERSISTENT) {
        lmpi_err_detail("not a persistent request (handle %p)", (void *)h);
        return LMPI_ERR_REQUEST;
    }
    if (p->active) {
        lmpi_err_detail("the persistent request is already active");
        return LMPI_ERR_REQUEST;
    }
    lmpi_status st = p->mode == LMPI_MODE_RECV
                         ? start_recv(p->buf, p->count, p->dt, p->rank, p->tag, p->comm, &p->child[0])
                         : start_send(p->buf, p->count, p->dt, p->rank, p->tag, p->comm, (lmpi_send_mode)p->mode,
                                      &p->child[0]);
    if (st == LMPI_OK)
        p->active = true;
    return st;
}

lmpi_status lmpi_impl_Start(MPI_Request *request)
{
    return start_one(*request);
}

lmpi_status lmpi_impl_Startall(int count, MPI_Request reqs[])
{
    if (count > 0 && !reqs) {
        lmpi_err_detail("array_of_requests is NULL");
        return LMPI_ERR_ARG;
    }
    for (int i = 0; i < count; i++) {
        lmpi_status st = start_one(reqs[i]);
        if (st != LMPI_OK)
            return st;
    }
    return LMPI_OK;
}

/* ---- probes ---------------------------------------------------------------------- */
static lmpi_unexpected *probe_once(int source, int tag, lmpi_comm *comm, bool take)
{
    lmpi_progress_poll();
    lmpi_mqi *m = lmpi_match_probe(lmpi_pt2pt_queue(comm, comm->context_id), source, tag, take);
    return m ? lmpi_pt2pt_unexpected_of(m) : NULL;
}

/* Nothing matched: a failure or a revoke may mean nothing ever will (src/ft). */
static lmpi_status probe_gone(int source, lmpi_comm *comm)
{
    lmpi_ft_poll();
    return LMPI_UNLIKELY(lmpi_ft_active) ? lmpi_ft_probe_check(comm, source) : LMPI_OK;
}

/* A nonblocking probe that matched nothing: the same, and the processor
 * handed over where ranks outnumber cores (programs poll in a loop). */
static lmpi_status probe_missed(int source, lmpi_comm *comm)
{
    lmpi_progress_missed();
    return probe_gone(source, comm);
}

static lmpi_status probe_found(void)
{
    lmpi_progress_found();
    return LMPI_OK;
}

static lmpi_status probe_wait(int source, int tag, lmpi_comm *comm, bool take, lmpi_unexpected **out)
{
    unsigned idle = 0;
    while (!(*out = probe_once(source, tag, comm, take))) {
        LMPI_TRY(probe_gone(source, comm));
        lmpi_progress_idle(&idle);
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Iprobe(int source, int tag, lmpi_comm *comm, int *flag, MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            lmpi_pt2pt_proc_null_status(status);
        return LMPI_OK;
    }
    lmpi_unexpected *u = probe_once(source, tag, comm, false);
    *flag = u != NULL;
    if (u && status != MPI_STATUS_IGNORE)
        lmpi_pt2pt_status_of_unexpected(u, status);
    return u ? probe_found() : probe_missed(source, comm);
}

lmpi_status lmpi_impl_Probe(int source, int tag, lmpi_comm *comm, MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        if (status != MPI_STATUS_IGNORE)
            lmpi_pt2pt_proc_null_status(status);
        return LMPI_OK;
    }
    lmpi_unexpected *u;
    LMPI_TRY(probe_wait(source, tag, comm, false, &u));
    if (status != MPI_STATUS_IGNORE)
        lmpi_pt2pt_status_of_unexpected(u, status);
    return LMPI_OK;
}

static void matched(lmpi_unexpected *u, lmpi_comm *comm, MPI_Message *message, MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE)
        lmpi_pt2pt_status_of_unexpected(u, status);
    *message = lmpi_pt2pt_message_handle(u, comm);
}

lmpi_status lmpi_impl_Improbe(int source, int tag, lmpi_comm *comm, int *flag, MPI_Message *message,
                              MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        if (status != MPI_STATUS_IGNORE)
            lmpi_pt2pt_proc_null_status(status);
        return LMPI_OK;
    }
    lmpi_unexpected *u = probe_once(source, tag, comm, true);
    *flag = u != NULL;
    if (u)
        matched(u, comm, message, status);
    return u ? probe_found() : probe_missed(source, comm);
}

lmpi_status lmpi_impl_Mprobe(int source, int tag, lmpi_comm *comm, MPI_Message *message, MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        if (status != MPI_STATUS_IGNORE)
            lmpi_pt2pt_proc_null_status(status);
        return LMPI_OK;
    }
    lmpi_unexpected *u;
    LMPI_TRY(probe_wait(source, tag, comm, true, &u));
    matched(u, comm, message, status);
    return LMPI_OK;
}

/* Receive a matched message; the receive request owns it from here. */
static lmpi_status start_mrecv(void *buf, MPI_Count count, lmpi_datatype *dt, MPI_Message *message,
                               lmpi_request **out)
{
    size_t bytes;
    lmpi_status st = message_bytes(count, dt, &bytes);
    if (st != LMPI_OK)
        return st;
    lmpi_request *r;
    if (*message == MPI_MESSAGE_NO_PROC) {
        st = lmpi_pt2pt_irecv(buf, bytes, MPI_PROC_NULL, MPI_ANY_TAG, lmpi_comm_self, 0, &r);
    } else {
        lmpi_unexpected *u = lmpi_pt2pt_message_from_handle(*message);
        if (!u) {
            lmpi_err_detail("not a message from MPI_Mprobe/MPI_Improbe (handle %p)", (void *)*message);
            return LMPI_ERR_REQUEST;
        }
        r = lmpi_request_alloc(LMPI_REQ_RECV);
        if (!r)
            return LMPI_ERR_NO_MEM;
        r->comm = lmpi_pt2pt_message_comm(u);
        r->buf = (void *)lmpi_dt_contig_ptr(buf, dt);
        r->bytes = bytes;
        r->mode = LMPI_MODE_RECV;
        if (!dt->contiguous)
            attach_recv_type(r, buf, count, dt);
        lmpi_pt2pt_recv_unexpected(r, u);
    }
    if (st == LMPI_OK) {
        *message = MPI_MESSAGE_NULL;
        *out = r;
    }
    return st;
}

lmpi_status lmpi_impl_Mrecv(void *buf, MPI_Count count, lmpi_datatype *datatype, MPI_Message *message,
                            MPI_Status *status)
{
    lmpi_request *r;
    lmpi_status st = start_mrecv(buf, count, datatype, message, &r);
    if (st != LMPI_OK)
        return st;
    lmpi_comm *c = r->comm;
    st = lmpi_pt2pt_wait_free(r, status);
    if (st != LMPI_OK && c) /* the message's communicator's handler, not MPI_COMM_SELF's */
        lmpi_err_blame_comm(c);
    return st;
}

lmpi_status lmpi_impl_Imrecv(void *buf, MPI_Count count, lmpi_datatype *datatype, MPI_Message *message,
                             MPI_Request *request)
{
    lmpi_request *r;
    lmpi_status st = start_mrecv(buf, count, datatype, message, &r);
    if (st == LMPI_OK)
        *request = (MPI_Request)r;
    return st;
}

