/* Partitioned communication (MPI 5.0 §4): MPI_Psend_init / MPI_Precv_init,
 * MPI_Pready(_range, _list), MPI_Parrived.
 *
 * A partitioned pair matches once, in the order of the MPI_Psend_init and
 * MPI_Precv_init calls (the standard's rule): MPI_Psend_init sends a small
 * HELLO on the communicator's collective context (the sender's
 * partitioning and a channel number of its choosing) and MPI_Precv_init
 * posts the receive for it, so the ordinary non-overtaking order of
 * messages pairs the k-th of each.  Nothing waits at init: the HELLO is
 * eager.  From then on every sender partition is one ordinary message,
 * sent the moment it is readied, tagged with the channel and the partition
 * index; the receiver posts one receive per sender partition once the
 * HELLO is in, so the two sides may partition the same bytes differently.
 * A non-contiguous type is packed per partition at the sender and unpacked
 * per partition at the receiver (stream offsets: lmpi_dt_pack/unpack).
 *
 * Tags on the collective context below 0x10000000 are free (schedules,
 * creation and leaders use the ranges above): HELLO 0x00000000 | tag bits,
 * data 0x08000000 | channel << 17 | partition.  Limits that follow: 2^17
 * partitions on the sending side, and 1024 partitioned sends alive from one
 * process to another at once. */
#include <string.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "datatype/datatype.h"
#include "pt2pt/pt2pt.h"

#define HELLO_TAG(t) ((int)((unsigned)(t)&0x03ffffffu))
#define DATA_TAG(ch, i) ((int)(0x08000000u | ((unsigned)(ch) << 17) | (unsigned)(i)))
#define MAX_SEND_PARTITIONS (1 << 17)
#define CHANNELS 1024u

typedef struct lmpi_part {
    bool send;
    char *buf;
    int partitions;
    MPI_Count count; /* elements per partition */
    lmpi_datatype *dt;
    int peer; /* rank in comm */
    int tag;
    lmpi_comm *comm;
    size_t part_bytes; /* of my partitions */
    /* matching, once */
    bool matched;
    uint64_t hello[3]; /* sender's partitions, bytes per partition, channel */
    uint64_t channel;
    lmpi_request *hs_send, *hs_recv;
    /* the other side's partitioning, as the data messages follow it */
    int msgs;
    size_t msg_bytes;
    /* this round */
    lmpi_request **reqs; /* one per message */
    uint8_t *state;      /* per message: 0 idle, 1 readied (sender), 2 in flight, 3 done */
    int done;
    char *staging; /* receiver of a non-contiguous type: the packed bytes */
    /* started rounds not finished: every progress poll moves them on (a
     * partition readied before the match must leave without another call
     * on its request) */
    lmpi_request *req;
    lmpi_progress_item progress;
} lmpi_part;

enum { IDLE, READIED, IN_FLIGHT, DONE };

static uint32_t next_channel;

static uint32_t coll_ctx(const lmpi_part *p)
{
    return p->comm->context_id + LMPI_CTX_COLL;
}

static lmpi_status part_init(bool send, void *buf, int partitions, MPI_Count count, lmpi_datatype *dt, int peer,
                             int tag, lmpi_comm *comm, MPI_Request *request)
{
    if (partitions < 1 || (send && partitions > MAX_SEND_PARTITIONS)) {
        lmpi_err_detail("partitions is %d: it must be 1 .. %d", partitions, send ? MAX_SEND_PARTITIONS : INT32_MAX);
        return LMPI_ERR_ARG;
    }
    lmpi_request *r = lmpi_request_alloc(LMPI_REQ_PART);
    lmpi_part *p = lmpi_calloc(1, sizeof(*p), LMPI_MEM_REQUEST);
    if (!r || !p) {
        if (r)
            lmpi_request_free(r);
        lmpi_free(p);
        return LMPI_ERR_NO_MEM;
    }
    *p = (lmpi_part){.send = send, .buf = buf, .partitions = partitions, .count = count, .dt = dt, .peer = peer,
                     .tag = tag, .comm = comm, .part_bytes = (size_t)(count * dt->size)};
    lmpi_datatype_retain(dt);
    r->sched = p;
    r->comm = comm;
    r->active = false;
    lmpi_status st = LMPI_OK;
    if (peer == MPI_PROC_NULL) {
        p->matched = true;
    } else if (send) { /* the HELLO leaves now: init order is matching order */
        p->channel = next_channel++ % CHANNELS;
        p->hello[0] = (uint64_t)partitions;
        p->hello[1] = p->part_bytes;
        p->hello[2] = p->channel;
        p->matched = true;
        st = lmpi_pt2pt_isend(p->hello, sizeof(p->hello), peer, HELLO_TAG(tag), comm, coll_ctx(p),
                              LMPI_MODE_STANDARD, NULL, &p->hs_send);
    } else {
        st = lmpi_pt2pt_irecv(p->hello, sizeof(p->hello), peer, HELLO_TAG(tag), comm, coll_ctx(p), &p->hs_recv);
    }
    if (st != LMPI_OK) {
        lmpi_part_free(r);
        return st;
    }
    *request = (MPI_Request)r;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Psend_init(const void *buf, int partitions, MPI_Count count, lmpi_datatype *datatype, int dest,
                                 int tag, lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return part_init(true, (void *)buf, partitions, count, datatype, dest, tag, comm, request);
}

lmpi_status lmpi_impl_Precv_init(void *buf, int partitions, MPI_Count count, lmpi_datatype *datatype, int source,
                                 int tag, lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return part_init(false, buf, partitions, count, datatype, source, tag, comm, request);
}

/* Sender: message i is my partition i, packed if the type needs it. */
static lmpi_status send_partition(lmpi_part *p, int i)
{
    const char *at = p->buf + (size_t)i * (size_t)(p->count * p->dt->extent);
    lmpi_status st = p->dt->contiguous
                         ? lmpi_pt2pt_isend(at + p->dt->true_lb, p->part_bytes, p->peer, DATA_TAG(p->channel, i),
                                            p->comm, coll_ctx(p), LMPI_MODE_STANDARD, NULL, &p->reqs[i])
                         : lmpi_pt2pt_isend_dt(at, p->count, p->dt, p->part_bytes, p->peer, DATA_TAG(p->channel, i),
                                               p->comm, coll_ctx(p), LMPI_MODE_STANDARD, NULL, &p->reqs[i]);
    if (st == LMPI_OK)
        p->state[i] = IN_FLIGHT;
    return st;
}

/* Receiver: message i lands at its byte offset (packed bytes for a
 * non-contiguous type, unpacked when it is complete). */
static lmpi_status post_receive(lmpi_part *p, int i)
{
    size_t off = (size_t)i * p->msg_bytes;
    char *to = p->staging ? p->staging + off : p->buf + p->dt->true_lb + off;
    lmpi_status st =
        lmpi_pt2pt_irecv(to, p->msg_bytes, p->peer, DATA_TAG(p->channel, i), p->comm, coll_ctx(p), &p->reqs[i]);
    if (st == LMPI_OK)
        p->state[i] = IN_FLIGHT;
    return st;
}

static lmpi_status round_arrays(lmpi_part *p, int msgs)
{
    if (!p->reqs) {
        p->reqs = lmpi_calloc((size_t)msgs, sizeof(*p->reqs), LMPI_MEM_REQUEST);
        p->state = lmpi_calloc((size_t)msgs, 1, LMPI_MEM_REQUEST);
        if (!p->reqs || !p->state)
            return LMPI_ERR_NO_MEM;
    }
    memset(p->state, IDLE, (size_t)msgs);
    p->done = 0;
    return LMPI_OK;
}

/* The receiver learned the sender's partitioning: size the round. */
static lmpi_status receiver_matched(lmpi_part *p)
{
    p->msgs = (int)p->hello[0];
    p->msg_bytes = (size_t)p->hello[1];
    p->channel = p->hello[2];
    size_t mine = (size_t)p->partitions * p->part_bytes;
    if ((size_t)p->msgs * p->msg_bytes > mine) {
        lmpi_err_detail("the partitioned send has %zu bytes, the receive room for %zu", (size_t)p->msgs * p->msg_bytes,
                        mine);
        return LMPI_ERR_TRUNCATE;
    }
    if (!p->dt->contiguous && !p->staging && !(p->staging = lmpi_malloc(mine ? mine : 1, LMPI_MEM_REQUEST)))
        return LMPI_ERR_NO_MEM;
    LMPI_TRY(round_arrays(p, p->msgs));
    p->matched = true;
    for (int i = 0; i < p->msgs; i++)
        LMPI_TRY(post_receive(p, i));
    return LMPI_OK;
}

/* Moves the round on without blocking: the handshake, readied partitions
 * waiting for it, finished messages.  *error: a failure on the way. */
static bool advance(lmpi_request *r, lmpi_status *error)
{
    lmpi_part *p = r->sched;
    *error = LMPI_OK;
    lmpi_progress_poll();
    if (p->hs_send && lmpi_request_done(p->hs_send)) { /* our HELLO left */
        lmpi_pt2pt_wait_free(p->hs_send, MPI_STATUS_IGNORE);
        p->hs_send = NULL;
    }
    if (!p->matched) { /* a receiver waiting for its HELLO: then the receives */
        if (!lmpi_request_done(p->hs_recv))
            return false;
        lmpi_pt2pt_wait_free(p->hs_recv, MPI_STATUS_IGNORE);
        p->hs_recv = NULL;
        lmpi_status st = receiver_matched(p);
        if (st != LMPI_OK) {
            *error = st;
            return true;
        }
    }
    for (int i = 0; i < p->msgs; i++) {
        if (p->state[i] == READIED) {
            lmpi_status st = send_partition(p, i);
            if (st != LMPI_OK) {
                *error = st;
                return true;
            }
        }
        if (p->state[i] == IN_FLIGHT && lmpi_request_done(p->reqs[i])) {
            MPI_Status s;
            lmpi_status st = lmpi_pt2pt_wait_free(p->reqs[i], &s);
            p->reqs[i] = NULL;
            p->state[i] = DONE;
            p->done++;
            if (st == LMPI_OK && !p->send && s.MPI_ERROR == MPI_ERR_TRUNCATE)
                st = LMPI_ERR_TRUNCATE;
            if (st != LMPI_OK && *error == LMPI_OK)
                *error = st;
            if (p->staging) /* this message's bytes are in: into the user's layout */
                lmpi_dt_unpack(p->buf, (MPI_Count)p->partitions * p->count, p->dt, (MPI_Count)i * (MPI_Count)p->msg_bytes,
                               (MPI_Count)p->msg_bytes, p->staging + (size_t)i * p->msg_bytes);
        }
    }
    return p->matched && p->done == p->msgs && !p->hs_send;
}

static void unlist(lmpi_part *p)
{
    lmpi_progress_list_remove(LMPI_PROGRESS_PART, &p->progress);
}

static bool advance_listed(lmpi_progress_item *it)
{
    return lmpi_part_done(lmpi_container_of(it, lmpi_part, progress)->req);
}

static void list_active(lmpi_part *p)
{
    lmpi_progress_lists[LMPI_PROGRESS_PART].advance = advance_listed;
    lmpi_progress_list_add(LMPI_PROGRESS_PART, &p->progress);
}

bool lmpi_part_done(lmpi_request *r)
{
    if (!r->active || r->complete)
        return true;
    lmpi_status st;
    if (advance(r, &st)) {
        r->sched_error = st;
        r->complete = 1;
        unlist(r->sched);
    }
    return r->complete;
}

lmpi_status lmpi_part_start(lmpi_request *r)
{
    lmpi_part *p = r->sched;
    if (r->active) {
        lmpi_err_detail("the partitioned request is already active");
        return LMPI_ERR_REQUEST;
    }
    r->active = true;
    r->complete = 0;
    r->sched_error = LMPI_OK;
    p->req = r;
    list_active(p);
    if (p->peer == MPI_PROC_NULL) { /* nothing moves */
        p->msgs = p->done = 0;
        return LMPI_OK;
    }
    if (p->send) {
        p->msgs = p->partitions;
        p->msg_bytes = p->part_bytes;
        return round_arrays(p, p->msgs);
    }
    if (p->matched) { /* the same partitioning as last round */
        LMPI_TRY(round_arrays(p, p->msgs));
        for (int i = 0; i < p->msgs; i++)
            LMPI_TRY(post_receive(p, i));
    }
    return LMPI_OK; /* else the receives are posted when the HELLO is in */
}

/* A completed round's status: a receive's carries the sender, the tag and
 * the bytes that arrived (MPI_Get_count divides by the type's size). */
void lmpi_part_status(lmpi_request *r, MPI_Status *s)
{
    const lmpi_part *p = r->sched;
    s->MPI_SOURCE = p->send ? MPI_ANY_SOURCE : p->peer;
    s->MPI_TAG = p->send ? MPI_ANY_TAG : p->peer == MPI_PROC_NULL ? MPI_ANY_TAG : p->tag;
    s->MPI_ERROR = MPI_SUCCESS;
    lmpi_status_set_bytes(s, p->send || p->peer == MPI_PROC_NULL ? 0 : (int64_t)p->msgs * (int64_t)p->msg_bytes);
    lmpi_status_set_cancelled(s, 0);
}

void lmpi_part_free(lmpi_request *r)
{
    lmpi_part *p = r->sched;
    unlist(p);
    if (p->hs_recv) { /* never matched: the HELLO's receive goes */
        lmpi_pt2pt_cancel_recv(p->hs_recv);
        lmpi_pt2pt_wait_free(p->hs_recv, MPI_STATUS_IGNORE);
    }
    if (p->hs_send) /* eager: done, or done soon */
        lmpi_pt2pt_wait_free(p->hs_send, MPI_STATUS_IGNORE);
    lmpi_datatype_release(p->dt);
    lmpi_free(p->reqs);
    lmpi_free(p->state);
    lmpi_free(p->staging);
    lmpi_free(p);
    r->sched = NULL;
    lmpi_request_free(r);
}

/* An active partitioned request of the given direction, or an error. */
static lmpi_status part_arg(MPI_Request h, bool send, lmpi_request **out)
{
    lmpi_request *r = lmpi_request_from_handle(h);
    if (!r || r->kind != LMPI_REQ_PART || ((lmpi_part *)r->sched)->send != send) {
        lmpi_err_detail("request is not a partitioned %s request", send ? "send" : "receive");
        return LMPI_ERR_REQUEST;
    }
    if (!r->active) {
        lmpi_err_detail("the partitioned request is not active (MPI_Start it first)");
        return LMPI_ERR_REQUEST;
    }
    *out = r;
    return LMPI_OK;
}

static lmpi_status ready_one(lmpi_request *r, int i)
{
    lmpi_part *p = r->sched;
    if (i < 0 || i >= p->partitions) {
        lmpi_err_detail("partition %d outside 0 .. %d", i, p->partitions - 1);
        return LMPI_ERR_ARG;
    }
    if (p->peer == MPI_PROC_NULL)
        return LMPI_OK;
    if (p->state[i] != IDLE) {
        lmpi_err_detail("partition %d is already ready in this round", i);
        return LMPI_ERR_ARG;
    }
    p->state[i] = READIED;
    return send_partition(p, i); /* a sender is matched from its init on */
}

lmpi_status lmpi_impl_Pready(int partition, MPI_Request request)
{
    lmpi_request *r;
    LMPI_TRY(part_arg(request, true, &r));
    LMPI_TRY(ready_one(r, partition));
    lmpi_part_done(r);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Pready_range(int low, int high, MPI_Request request)
{
    lmpi_request *r;
    LMPI_TRY(part_arg(request, true, &r));
    if (low > high) {
        lmpi_err_detail("partition_low %d is above partition_high %d", low, high);
        return LMPI_ERR_ARG;
    }
    for (int i = low; i <= high; i++)
        LMPI_TRY(ready_one(r, i));
    lmpi_part_done(r);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Pready_list(int length, const int partitions[], MPI_Request request)
{
    lmpi_request *r;
    LMPI_TRY(part_arg(request, true, &r));
    if (length < 0 || (length > 0 && !partitions)) {
        lmpi_err_detail("length %d with array_of_partitions %p", length, (const void *)partitions);
        return LMPI_ERR_ARG;
    }
    for (int k = 0; k < length; k++)
        LMPI_TRY(ready_one(r, partitions[k]));
    lmpi_part_done(r);
    return LMPI_OK;
}

/* Receiver partition j has arrived when every sender message overlapping
 * its bytes has. */
static lmpi_status parrived(MPI_Request request, int partition, int *flag);

lmpi_status lmpi_impl_Parrived(MPI_Request request, int partition, int *flag)
{
    lmpi_status st = parrived(request, partition, flag);
    if (st == LMPI_OK)
        lmpi_progress_tested(*flag);
    return st;
}

static lmpi_status parrived(MPI_Request request, int partition, int *flag)
{
    lmpi_request *r;
    LMPI_TRY(part_arg(request, false, &r));
    lmpi_part *p = r->sched;
    if (partition < 0 || partition >= p->partitions) {
        lmpi_err_detail("partition %d outside 0 .. %d", partition, p->partitions - 1);
        return LMPI_ERR_ARG;
    }
    lmpi_part_done(r);
    *flag = 0;
    if (p->peer == MPI_PROC_NULL || r->complete) {
        *flag = 1;
        return LMPI_OK;
    }
    if (!p->matched)
        return LMPI_OK;
    if (p->msg_bytes == 0 || p->part_bytes == 0) { /* no bytes to map: every message */
        *flag = p->done == p->msgs;
        return LMPI_OK;
    }
    size_t lo = (size_t)partition * p->part_bytes, hi = lo + p->part_bytes;
    int first = (int)(lo / p->msg_bytes), last = hi ? (int)((hi - 1) / p->msg_bytes) : 0;
    if (last >= p->msgs)
        last = p->msgs - 1;
    *flag = 1;
    for (int i = first; i <= last && *flag; i++)
        *flag = p->state[i] == DONE;
    return LMPI_OK;
}
