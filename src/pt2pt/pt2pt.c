/* Point-to-point protocols over the transport.
 *
 *   eager      len <= eager limit: the data travels in the packet; the send
 *              completes once the packet is queued.
 *   rendezvous larger: RTS carries the sender's address; the matched receiver
 *              pulls the data in one copy (process_vm_readv) and answers FIN,
 *              or, when the kernel forbids that, answers CTS and the sender
 *              streams DATA packets (the pipelined fallback).
 *
 * Outgoing packets that find no free transport buffer wait in the outbox, a
 * FIFO drained by progress; once anything waits there, later packets queue
 * behind it, which keeps MPI's non-overtaking order. */
#include <string.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "datatype/datatype.h"
#include "match/match.h"
#include "pt2pt/pt2pt.h"
#include "runtime/pool.h"
#include "runtime/request.h"
#include "transport/shm/shm.h"
#include "transport/transport.h"

typedef enum { OUT_PACKET, OUT_EAGER, OUT_RTS, OUT_STREAM } out_kind;

typedef struct outbox_entry {
    struct outbox_entry *next;
    out_kind kind;
    int dest;
    lmpi_pkt_hdr hdr;
    lmpi_request *req;
} outbox_entry;

static struct {
    outbox_entry *head, *tail;
} outbox;

/* A message that arrived before its receive was posted.  One record is kept
 * ready so that an arrival can be queued right where its failed search
 * ended, without a second search. */
typedef struct lmpi_unexpected {
    lmpi_mqi mqi;
    int src; /* world rank of the sender */
    lmpi_pkt_hdr hdr;
    void *data; /* eager payload copy (hdr.len bytes); NULL for RTS */
} lmpi_unexpected;

static lmpi_pool unexpected_pool;
static lmpi_unexpected *spare;

static lmpi_unexpected *spare_record(void)
{
    if (LMPI_UNLIKELY(!spare)) {
        if (!unexpected_pool.obj_size)
            lmpi_pool_init(&unexpected_pool, sizeof(lmpi_unexpected), 64, LMPI_MEM_MATCH);
        spare = lmpi_pool_get(&unexpected_pool);
        if (!spare)
            lmpi_abort_job(MPI_ERR_NO_MEM, "out of memory storing an unexpected message");
    }
    return spare;
}

static void unexpected_free(lmpi_unexpected *u)
{
    lmpi_free(u->data);
    lmpi_pool_put(&unexpected_pool, u);
}

/* The queue of a context seen in an arrival: communicators create theirs
 * with their size when they are made; a context met first on the wire gets
 * the world's size, the largest it can be. */
static lmpi_match_queue *queue_of(uint32_t ctx, int size)
{
    lmpi_match_queue *q = lmpi_match_queue_get(ctx, size);
    if (LMPI_UNLIKELY(!q))
        lmpi_abort_job(MPI_ERR_NO_MEM, "out of memory creating a matching queue");
    return q;
}

void lmpi_pt2pt_finalize(void)
{
    lmpi_match_finalize();
    if (unexpected_pool.obj_size)
        lmpi_pool_destroy(&unexpected_pool);
    memset(&unexpected_pool, 0, sizeof(unexpected_pool));
    spare = NULL;
}

static uint64_t req_id(lmpi_request *r)
{
    return (uint64_t)(uintptr_t)r;
}

static lmpi_request *req_of(uint64_t id)
{
    return (lmpi_request *)(uintptr_t)id;
}

static void complete_send(lmpi_request *r)
{
    r->proto = LMPI_PROTO_NONE;
    r->complete = 1;
}

static void outbox_push(out_kind kind, int dest, const lmpi_pkt_hdr *hdr, lmpi_request *req)
{
    outbox_entry *e = lmpi_malloc(sizeof(*e), LMPI_MEM_REQUEST);
    if (!e)
        lmpi_abort_job(MPI_ERR_NO_MEM, "out of memory queueing a message");
    e->next = NULL;
    e->kind = kind;
    e->dest = dest;
    e->hdr = *hdr;
    e->req = req;
    if (outbox.tail)
        outbox.tail->next = e;
    else
        outbox.head = e;
    outbox.tail = e;
}

/* Try to send one outbox entry; true when it is finished. */
static bool outbox_try(outbox_entry *e)
{
    lmpi_request *r = e->req;
    switch (e->kind) {
    case OUT_PACKET:
        return lmpi_tr_send_pkt(e->dest, &e->hdr, NULL, 0) == LMPI_OK;
    case OUT_EAGER:
        if (lmpi_tr_send_pkt(e->dest, &e->hdr, r->buf, r->bytes) != LMPI_OK)
            return false;
        complete_send(r);
        return true;
    case OUT_RTS:
        if (lmpi_tr_send_pkt(e->dest, &e->hdr, NULL, 0) != LMPI_OK)
            return false;
        r->proto = LMPI_PROTO_RNDV_WAIT;
        return true;
    case OUT_STREAM: {
        size_t chunk = lmpi_tr_max_payload();
        while (r->offset < r->bytes) {
            size_t n = r->bytes - r->offset < chunk ? r->bytes - r->offset : chunk;
            lmpi_pkt_hdr h = e->hdr;
            h.addr = r->offset;
            if (lmpi_tr_send_pkt(e->dest, &h, (char *)r->buf + r->offset, n) != LMPI_OK)
                return false;
            r->offset += n;
        }
        complete_send(r);
        return true;
    }
    }
    return true;
}

int lmpi_pt2pt_progress_outbox(void)
{
    int n = 0;
    while (outbox.head && outbox_try(outbox.head)) {
        outbox_entry *e = outbox.head;
        outbox.head = e->next;
        if (!outbox.head)
            outbox.tail = NULL;
        lmpi_free(e);
        n++;
    }
    return n;
}

static void send_control(int dest, const lmpi_pkt_hdr *hdr)
{
    if (outbox.head || lmpi_tr_send_pkt(dest, hdr, NULL, 0) != LMPI_OK)
        outbox_push(OUT_PACKET, dest, hdr, NULL);
}

lmpi_status lmpi_pt2pt_isend(const void *buf, size_t bytes, int dest, int tag, lmpi_comm *comm, uint32_t ctx,
                             lmpi_request **out)
{
    lmpi_request *r = lmpi_request_alloc(LMPI_REQ_SEND);
    if (!r)
        return LMPI_ERR_NO_MEM;
    r->comm = comm;
    r->buf = (void *)buf;
    r->bytes = bytes;
    r->tag = tag;
    r->ctx = ctx;
    *out = r;
    if (dest == MPI_PROC_NULL) {
        r->complete = 1;
        return LMPI_OK;
    }
    int peer = lmpi_comm_world_rank(comm, dest);
    r->peer = peer;
    lmpi_pkt_hdr h = {.rank = comm->rank, .tag = tag, .ctx = ctx, .len = bytes, .sreq = req_id(r)};
    if (bytes <= lmpi_shm_eager_max()) {
        h.type = LMPI_PKT_EAGER;
        if (!outbox.head && lmpi_tr_send_pkt(peer, &h, buf, bytes) == LMPI_OK) {
            r->complete = 1;
            return LMPI_OK;
        }
        r->proto = LMPI_PROTO_EAGER_QUEUED;
        outbox_push(OUT_EAGER, peer, &h, r);
        return LMPI_OK;
    }
    h.type = LMPI_PKT_RTS;
    h.addr = (uint64_t)(uintptr_t)buf;
    if (!outbox.head && lmpi_tr_send_pkt(peer, &h, NULL, 0) == LMPI_OK) {
        r->proto = LMPI_PROTO_RNDV_WAIT;
        return LMPI_OK;
    }
    r->proto = LMPI_PROTO_RTS_QUEUED;
    outbox_push(OUT_RTS, peer, &h, r);
    return LMPI_OK;
}

static void finish_recv(lmpi_request *r, const lmpi_pkt_hdr *h, size_t got)
{
    r->status.MPI_SOURCE = h->rank;
    r->status.MPI_TAG = h->tag;
    r->status.MPI_ERROR = h->len > r->bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    lmpi_status_set_bytes(&r->status, (int64_t)got);
    r->proto = LMPI_PROTO_NONE;
    r->complete = 1;
}

/* A receive met a rendezvous announcement: pull, or ask for a stream. */
static void start_rndv(lmpi_request *r, int src, const lmpi_pkt_hdr *h)
{
    size_t want = h->len < r->bytes ? h->len : r->bytes;
    if (want == 0 || lmpi_tr_pull(src, h->addr, r->buf, want) == 0) {
        lmpi_pkt_hdr fin = {.type = LMPI_PKT_FIN, .sreq = h->sreq};
        send_control(src, &fin);
        finish_recv(r, h, want);
        return;
    }
    r->proto = LMPI_PROTO_RECV_STREAM;
    r->offset = 0;
    r->peer = src;
    r->status.MPI_SOURCE = h->rank;
    r->status.MPI_TAG = h->tag;
    r->remote_req = h->len; /* total the sender will stream */
    lmpi_pkt_hdr cts = {.type = LMPI_PKT_CTS, .sreq = h->sreq, .rreq = req_id(r), .len = h->len};
    send_control(src, &cts);
}

static void deliver_eager(lmpi_request *r, const lmpi_pkt_hdr *h, const void *payload)
{
    size_t n = h->len < r->bytes ? h->len : r->bytes;
    if (n)
        memcpy(r->buf, payload, n);
    finish_recv(r, h, n);
}

void lmpi_pt2pt_deliver(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    switch (h->type) {
    case LMPI_PKT_EAGER:
    case LMPI_PKT_RTS: {
        lmpi_match_queue *q = queue_of(h->ctx, lmpi_rt.world_size);
        lmpi_unexpected *u = spare_record();
        lmpi_mqi *m = lmpi_match_arrive(q, h->rank, h->tag, &u->mqi);
        if (m) {
            lmpi_request *r = lmpi_container_of(m, lmpi_request, mqi);
            if (h->type == LMPI_PKT_EAGER)
                deliver_eager(r, h, payload);
            else
                start_rndv(r, src, h);
            return;
        }
        spare = NULL; /* queued */
        u->src = src;
        u->hdr = *h;
        u->data = NULL;
        if (h->type == LMPI_PKT_EAGER && len) {
            u->data = lmpi_malloc(len, LMPI_MEM_MATCH);
            if (!u->data)
                lmpi_abort_job(MPI_ERR_NO_MEM, "out of memory storing an unexpected message");
            memcpy(u->data, payload, len);
        }
        return;
    }
    case LMPI_PKT_FIN:
        complete_send(req_of(h->sreq));
        return;
    case LMPI_PKT_CTS: {
        lmpi_request *r = req_of(h->sreq);
        r->proto = LMPI_PROTO_STREAMING;
        r->offset = 0;
        lmpi_pkt_hdr d = {.type = LMPI_PKT_DATA, .rreq = h->rreq, .len = r->bytes};
        outbox_push(OUT_STREAM, src, &d, r);
        return;
    }
    case LMPI_PKT_DATA: {
        lmpi_request *r = req_of(h->rreq);
        size_t off = (size_t)h->addr;
        if (off < r->bytes) {
            size_t n = len < r->bytes - off ? len : r->bytes - off;
            memcpy((char *)r->buf + off, payload, n);
        }
        r->offset += len;
        if (r->offset >= h->len) {
            lmpi_pkt_hdr done = {.rank = r->status.MPI_SOURCE, .tag = r->status.MPI_TAG, .len = h->len};
            finish_recv(r, &done, h->len < r->bytes ? h->len : r->bytes);
        }
        return;
    }
    default:
        lmpi_abort_job(MPI_ERR_INTERN, "corrupt packet from the shared-memory transport");
    }
}

lmpi_status lmpi_pt2pt_irecv(void *buf, size_t bytes, int source, int tag, lmpi_comm *comm, uint32_t ctx,
                             lmpi_request **out)
{
    lmpi_request *r = lmpi_request_alloc(LMPI_REQ_RECV);
    if (!r)
        return LMPI_ERR_NO_MEM;
    r->comm = comm;
    r->buf = buf;
    r->bytes = bytes;
    r->rank = source;
    r->tag = tag;
    r->ctx = ctx;
    r->peer = -1;
    *out = r;
    if (source == MPI_PROC_NULL) {
        r->status.MPI_SOURCE = MPI_PROC_NULL;
        r->status.MPI_TAG = MPI_ANY_TAG;
        r->status.MPI_ERROR = MPI_SUCCESS;
        r->complete = 1;
        return LMPI_OK;
    }
    lmpi_match_queue *q = queue_of(ctx, comm->size);
    lmpi_mqi *m = lmpi_match_post(q, source, tag, &r->mqi);
    if (!m) {
        r->mq = q;
        return LMPI_OK;
    }
    lmpi_unexpected *u = lmpi_container_of(m, lmpi_unexpected, mqi);
    if (u->hdr.type == LMPI_PKT_EAGER)
        deliver_eager(r, &u->hdr, u->data);
    else
        start_rndv(r, u->src, &u->hdr);
    unexpected_free(u);
    return LMPI_OK;
}

/* ---- MPI entry points --------------------------------------------------- */

static size_t message_bytes(MPI_Count count, const lmpi_datatype *dt)
{
    return (size_t)count * dt->size;
}

static lmpi_status need_contiguous(const lmpi_datatype *dt)
{
    if (LMPI_UNLIKELY(!dt->contiguous)) {
        lmpi_err_detail("non-contiguous datatypes arrive with the datatype engine");
        return LMPI_ERR_UNSUPPORTED_OPERATION;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Isend(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                            lmpi_comm *comm, MPI_Request *request)
{
    lmpi_status st = need_contiguous(datatype);
    if (st != LMPI_OK)
        return st;
    lmpi_request *r;
    st = lmpi_pt2pt_isend(buf, message_bytes(count, datatype), dest, tag, comm, comm->context_id, &r);
    if (st == LMPI_OK)
        *request = (MPI_Request)r;
    return st;
}

lmpi_status lmpi_impl_Irecv(void *buf, MPI_Count count, lmpi_datatype *datatype, int source, int tag,
                            lmpi_comm *comm, MPI_Request *request)
{
    lmpi_status st = need_contiguous(datatype);
    if (st != LMPI_OK)
        return st;
    lmpi_request *r;
    st = lmpi_pt2pt_irecv(buf, message_bytes(count, datatype), source, tag, comm, comm->context_id, &r);
    if (st == LMPI_OK)
        *request = (MPI_Request)r;
    return st;
}

/* Wait for r, copy its status out, release it.  Returns the status's error. */
lmpi_status lmpi_pt2pt_wait_free(lmpi_request *r, MPI_Status *status)
{
    lmpi_progress_wait_flag(&r->complete);
    int err = r->kind == LMPI_REQ_RECV ? r->status.MPI_ERROR : MPI_SUCCESS;
    if (status != MPI_STATUS_IGNORE && r->kind == LMPI_REQ_RECV)
        *status = r->status;
    lmpi_request_free(r);
    if (err == MPI_ERR_TRUNCATE) {
        lmpi_err_detail("the message is longer than the receive buffer");
        return LMPI_ERR_TRUNCATE;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Send(const void *buf, MPI_Count count, lmpi_datatype *datatype, int dest, int tag,
                           lmpi_comm *comm)
{
    lmpi_status st = need_contiguous(datatype);
    if (st != LMPI_OK)
        return st;
    lmpi_request *r;
    st = lmpi_pt2pt_isend(buf, message_bytes(count, datatype), dest, tag, comm, comm->context_id, &r);
    if (st != LMPI_OK)
        return st;
    return lmpi_pt2pt_wait_free(r, MPI_STATUS_IGNORE);
}

lmpi_status lmpi_impl_Recv(void *buf, MPI_Count count, lmpi_datatype *datatype, int source, int tag,
                           lmpi_comm *comm, MPI_Status *status)
{
    lmpi_status st = need_contiguous(datatype);
    if (st != LMPI_OK)
        return st;
    lmpi_request *r;
    st = lmpi_pt2pt_irecv(buf, message_bytes(count, datatype), source, tag, comm, comm->context_id, &r);
    if (st != LMPI_OK)
        return st;
    return lmpi_pt2pt_wait_free(r, status);
}

lmpi_status lmpi_impl_Sendrecv(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype, int dest,
                               int sendtag, void *recvbuf, MPI_Count recvcount, lmpi_datatype *recvtype,
                               int source, int recvtag, lmpi_comm *comm, MPI_Status *status)
{
    lmpi_status st = need_contiguous(sendtype);
    if (st == LMPI_OK)
        st = need_contiguous(recvtype);
    if (st != LMPI_OK)
        return st;
    lmpi_request *rr, *sr;
    st = lmpi_pt2pt_irecv(recvbuf, message_bytes(recvcount, recvtype), source, recvtag, comm, comm->context_id, &rr);
    if (st != LMPI_OK)
        return st;
    st = lmpi_pt2pt_isend(sendbuf, message_bytes(sendcount, sendtype), dest, sendtag, comm, comm->context_id, &sr);
    if (st != LMPI_OK)
        return st;
    lmpi_pt2pt_wait_free(sr, MPI_STATUS_IGNORE);
    return lmpi_pt2pt_wait_free(rr, status);
}

/* ---- completion -------------------------------------------------------- */

static void empty_status(MPI_Status *s)
{
    if (s == MPI_STATUS_IGNORE)
        return;
    s->MPI_SOURCE = MPI_ANY_SOURCE;
    s->MPI_TAG = MPI_ANY_TAG;
    s->MPI_ERROR = MPI_SUCCESS;
    lmpi_status_set_bytes(s, 0);
    s->MPI_internal[2] = 0;
}

static lmpi_status request_arg(MPI_Request h, lmpi_request **out)
{
    if (h == MPI_REQUEST_NULL) {
        *out = NULL;
        return LMPI_OK;
    }
    lmpi_request *r = lmpi_request_from_handle(h);
    if (!r) {
        lmpi_err_detail("not an active request (handle %p)", (void *)h);
        return LMPI_ERR_REQUEST;
    }
    *out = r;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Wait(MPI_Request *request, MPI_Status *status)
{
    lmpi_request *r;
    lmpi_status st = request_arg(*request, &r);
    if (st != LMPI_OK)
        return st;
    if (!r) {
        empty_status(status);
        return LMPI_OK;
    }
    *request = MPI_REQUEST_NULL;
    return lmpi_pt2pt_wait_free(r, status);
}

lmpi_status lmpi_impl_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    lmpi_request *r;
    lmpi_status st = request_arg(*request, &r);
    if (st != LMPI_OK)
        return st;
    if (!r) {
        *flag = 1;
        empty_status(status);
        return LMPI_OK;
    }
    if (!r->complete)
        lmpi_progress_poll();
    if (!r->complete) {
        *flag = 0;
        return LMPI_OK;
    }
    *flag = 1;
    *request = MPI_REQUEST_NULL;
    return lmpi_pt2pt_wait_free(r, status);
}

static lmpi_status check_requests(int count, const MPI_Request reqs[])
{
    if (count > 0 && !reqs) {
        lmpi_err_detail("array_of_requests is NULL");
        return LMPI_ERR_ARG;
    }
    for (int i = 0; i < count; i++) {
        lmpi_request *r;
        lmpi_status st = request_arg(reqs[i], &r);
        if (st != LMPI_OK) {
            lmpi_err_detail("array_of_requests[%d] is not a valid request", i);
            return st;
        }
    }
    return LMPI_OK;
}

/* Complete every request; per-request errors go to the statuses and the
 * call reports MPI_ERR_IN_STATUS, as the standard asks. */
lmpi_status lmpi_impl_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    lmpi_status st = check_requests(count, reqs);
    if (st != LMPI_OK)
        return st;
    bool failed = false;
    for (int i = 0; i < count; i++) {
        MPI_Status tmp;
        MPI_Status *s = statuses == MPI_STATUSES_IGNORE ? &tmp : &statuses[i];
        lmpi_status one = lmpi_impl_Wait(&reqs[i], s);
        if (one != LMPI_OK) {
            s->MPI_ERROR = lmpi_status_class(one);
            failed = true;
        } else if (statuses != MPI_STATUSES_IGNORE) {
            s->MPI_ERROR = MPI_SUCCESS;
        }
    }
    if (failed) {
        lmpi_err_detail("at least one request failed; see the statuses");
        return LMPI_ERR_IN_STATUS;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    lmpi_status st = check_requests(count, reqs);
    if (st != LMPI_OK)
        return st;
    lmpi_progress_poll();
    for (int i = 0; i < count; i++) {
        lmpi_request *r = lmpi_request_from_handle(reqs[i]);
        if (r && !r->complete) {
            *flag = 0;
            return LMPI_OK;
        }
    }
    *flag = 1;
    return lmpi_impl_Waitall(count, reqs, statuses);
}

lmpi_status lmpi_impl_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    lmpi_status st = check_requests(count, reqs);
    if (st != LMPI_OK)
        return st;
    for (unsigned spin = 0;; spin++) {
        bool any_active = false;
        for (int i = 0; i < count; i++) {
            lmpi_request *r = lmpi_request_from_handle(reqs[i]);
            if (!r)
                continue;
            any_active = true;
            if (r->complete) {
                *index = i;
                return lmpi_impl_Wait(&reqs[i], status);
            }
        }
        if (!any_active) {
            *index = MPI_UNDEFINED;
            empty_status(status);
            return LMPI_OK;
        }
        if (lmpi_progress_poll() == 0 && spin > (unsigned)lmpi_pt2pt_spin_count())
            lmpi_lock_yield();
    }
}

lmpi_status lmpi_impl_Get_count(const MPI_Status *status, lmpi_datatype *datatype, MPI_Count *count)
{
    if (!status) {
        lmpi_err_detail("status is NULL");
        return LMPI_ERR_ARG;
    }
    int64_t bytes = lmpi_status_bytes(status);
    if (datatype->size == 0)
        *count = bytes == 0 ? 0 : MPI_UNDEFINED;
    else
        *count = bytes % datatype->size ? MPI_UNDEFINED : bytes / datatype->size;
    return LMPI_OK;
}

/* ---- barrier: dissemination over the collective context ------------------ */
lmpi_status lmpi_impl_Barrier(lmpi_comm *comm)
{
    int n = comm->size, me = comm->rank;
    char token = 0, sink;
    for (int dist = 1; dist < n; dist *= 2) {
        lmpi_request *rr, *sr;
        lmpi_status st = lmpi_pt2pt_irecv(&sink, 1, (me - dist + n) % n, 0, comm, comm->context_id + 1, &rr);
        if (st != LMPI_OK)
            return st;
        st = lmpi_pt2pt_isend(&token, 1, (me + dist) % n, 0, comm, comm->context_id + 1, &sr);
        if (st != LMPI_OK)
            return st;
        lmpi_pt2pt_wait_free(sr, MPI_STATUS_IGNORE);
        lmpi_pt2pt_wait_free(rr, MPI_STATUS_IGNORE);
    }
    return LMPI_OK;
}
