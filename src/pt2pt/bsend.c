/* Buffered sends: MPI_Buffer_attach/detach/flush and the per-communicator
 * buffers of MPI 4.1 (MPI_Comm_attach_buffer ...).
 *
 * A send in buffered mode copies its data into the attached buffer and is
 * complete; the copy travels as an internal send that releases its space
 * when done.  Space is handed out first-fit from a list of segments kept in
 * address order inside the user's buffer; each segment spends a small
 * header (well under MPI_BSEND_OVERHEAD) in that buffer.  With
 * MPI_BUFFER_AUTOMATIC the space is allocated per message instead. */
#include <string.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "pt2pt/pt2pt.h"

struct lmpi_bsend_segment {
    lmpi_bsend_segment *next; /* in address order */
    lmpi_bsend_buffer *owner;
    size_t size; /* header included */
    size_t pad;
};

_Static_assert(sizeof(lmpi_bsend_segment) == 32 && 32 <= MPI_BSEND_OVERHEAD, "segment header fits the overhead");

struct lmpi_bsend_buffer {
    char *base;
    size_t size;
    bool automatic;
    lmpi_bsend_segment *used;
    size_t pending; /* segments in flight */
};

/* The process buffer; communicators point at their own when one is attached. */
static lmpi_bsend_buffer process_buffer;

static lmpi_bsend_buffer **comm_slot(lmpi_comm *c)
{
    return &c->bsend;
}

static bool attached(const lmpi_bsend_buffer *b)
{
    return b->base || b->automatic;
}

static lmpi_bsend_segment *segment_alloc(lmpi_bsend_buffer *b, size_t bytes)
{
    size_t need = (sizeof(lmpi_bsend_segment) + bytes + 15) / 16 * 16;
    if (b->automatic) {
        lmpi_bsend_segment *s = lmpi_malloc(need, LMPI_MEM_REQUEST);
        if (s) {
            s->owner = b;
            s->size = need;
            b->pending++;
        }
        return s;
    }
    char *start = (char *)(((uintptr_t)b->base + 15) / 16 * 16);
    char *end = b->base + b->size;
    lmpi_bsend_segment **link = &b->used;
    for (;;) {
        char *limit = *link ? (char *)*link : end;
        if (limit >= start && (size_t)(limit - start) >= need) {
            lmpi_bsend_segment *s = (lmpi_bsend_segment *)start;
            s->next = *link;
            s->owner = b;
            s->size = need;
            *link = s;
            b->pending++;
            return s;
        }
        if (!*link)
            return NULL;
        start = (char *)*link + (*link)->size;
        link = &(*link)->next;
    }
}

void lmpi_bsend_release(lmpi_bsend_segment *seg)
{
    lmpi_bsend_buffer *b = seg->owner;
    b->pending--;
    if (b->automatic) {
        lmpi_free(seg);
        return;
    }
    lmpi_bsend_segment **link = &b->used;
    while (*link != seg)
        link = &(*link)->next;
    *link = seg->next;
}

lmpi_status lmpi_bsend_start(const void *buf, size_t bytes, int dest, int tag, lmpi_comm *comm)
{
    /* the communicator's buffer, else its session's, else the process's
     * (MPI 5.0 §3.6: the most specific one attached) */
    lmpi_bsend_buffer *b = *comm_slot(comm);
    if ((!b || !attached(b)) && comm->session)
        b = lmpi_session_buffer(comm->session);
    if (!b || !attached(b))
        b = &process_buffer;
    if (!attached(b)) {
        lmpi_err_detail("no buffer is attached for buffered sends (MPI_Buffer_attach)");
        return LMPI_ERR_BUFFER;
    }
    lmpi_bsend_segment *seg = segment_alloc(b, bytes);
    /* Full: sends still hold space that their receivers may have taken
     * already, which only a poll here learns (a large message's sender hears
     * of its end afterwards).  A program that sized its buffer for what it
     * has outstanding must not fail for that (MPICH's
     * threads/pt2pt/mt_bsendrecv_pers_huge did, now and then), so the
     * progress engine runs as long as it makes progress, and for up to
     * 10 ms once it makes none; then the buffer is full indeed. */
    uint64_t give_up = 0;
    while (!seg && b->pending) {
        if (lmpi_progress_poll() > 0)
            give_up = 0;
        else if (!give_up)
            give_up = lmpi_now_ns() + 10000000u;
        else if (lmpi_now_ns() > give_up)
            break;
        seg = segment_alloc(b, bytes);
    }
    if (!seg) {
        lmpi_err_detail("the attached buffer (%zu bytes) has no room for %zu more bytes plus overhead", b->size,
                        bytes);
        return LMPI_ERR_BUFFER;
    }
    void *copy = seg + 1;
    if (bytes)
        memcpy(copy, buf, bytes);
    lmpi_request *r;
    lmpi_status st = lmpi_pt2pt_isend(copy, bytes, dest, tag, comm, comm->context_id, LMPI_MODE_STANDARD, seg, &r);
    if (st != LMPI_OK)
        lmpi_bsend_release(seg);
    return st;
}

static void flush(lmpi_bsend_buffer *b)
{
    unsigned idle = 0;
    while (b->pending)
        if (lmpi_progress_poll() == 0)
            lmpi_progress_idle(&idle);
}

static lmpi_status attach(lmpi_bsend_buffer *b, void *buffer, MPI_Count size)
{
    if (attached(b)) {
        lmpi_err_detail("a buffer is already attached");
        return LMPI_ERR_BUFFER;
    }
    if (buffer == MPI_BUFFER_AUTOMATIC) {
        memset(b, 0, sizeof(*b));
        b->automatic = true;
        return LMPI_OK;
    }
    if (size < 0) {
        lmpi_err_detail("size %lld is negative", (long long)size);
        return LMPI_ERR_ARG;
    }
    if (!buffer && size > 0) {
        lmpi_err_detail("buffer is NULL");
        return LMPI_ERR_BUFFER;
    }
    memset(b, 0, sizeof(*b));
    b->base = buffer;
    b->size = (size_t)size;
    return LMPI_OK;
}

/* Waits until every message sent from the buffer has left it. */
static lmpi_status detach(lmpi_bsend_buffer *b, void *buffer_addr, MPI_Count *size)
{
    if (!attached(b)) {
        lmpi_err_detail("no buffer is attached");
        return LMPI_ERR_BUFFER;
    }
    if (!buffer_addr) {
        lmpi_err_detail("buffer_addr is NULL");
        return LMPI_ERR_ARG;
    }
    flush(b);
    *(void **)buffer_addr = b->automatic ? MPI_BUFFER_AUTOMATIC : b->base;
    *size = b->automatic ? 0 : (MPI_Count)b->size;
    memset(b, 0, sizeof(*b));
    return LMPI_OK;
}

lmpi_status lmpi_impl_Buffer_attach(void *buffer, MPI_Count size)
{
    return attach(&process_buffer, buffer, size);
}

lmpi_status lmpi_impl_Buffer_detach(void *buffer_addr, MPI_Count *size)
{
    return detach(&process_buffer, buffer_addr, size);
}

lmpi_status lmpi_impl_Buffer_flush(void)
{
    flush(&process_buffer);
    return LMPI_OK;
}

/* A request that completes once every buffered send of b has left it. */
static lmpi_status iflush(lmpi_bsend_buffer *b, MPI_Request *request)
{
    static const size_t nothing = 0;
    lmpi_request *r = lmpi_request_alloc(LMPI_REQ_FLUSH);
    if (!r)
        return LMPI_ERR_NO_MEM;
    r->pending = b ? &b->pending : &nothing;
    *request = (MPI_Request)r;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Buffer_iflush(MPI_Request *request)
{
    return iflush(&process_buffer, request);
}

lmpi_status lmpi_impl_Comm_iflush_buffer(lmpi_comm *comm, MPI_Request *request)
{
    return iflush(*comm_slot(comm), request);
}

/* Buffers held by an object (a communicator, a session): created on first
 * attach. */
lmpi_status lmpi_bsend_slot_attach(lmpi_bsend_buffer **slot, void *buffer, MPI_Count size)
{
    if (!*slot) {
        *slot = lmpi_calloc(1, sizeof(lmpi_bsend_buffer), LMPI_MEM_COMM);
        if (!*slot)
            return LMPI_ERR_NO_MEM;
    }
    return attach(*slot, buffer, size);
}

lmpi_status lmpi_bsend_slot_detach(lmpi_bsend_buffer **slot, void *buffer_addr, MPI_Count *size)
{
    if (!*slot) {
        lmpi_err_detail("no buffer is attached");
        return LMPI_ERR_BUFFER;
    }
    return detach(*slot, buffer_addr, size);
}

void lmpi_bsend_slot_flush(lmpi_bsend_buffer *b)
{
    if (b)
        flush(b);
}

lmpi_status lmpi_bsend_slot_iflush(lmpi_bsend_buffer *b, MPI_Request *request)
{
    return iflush(b, request);
}

void lmpi_bsend_slot_free(lmpi_bsend_buffer **slot)
{
    if (*slot)
        flush(*slot);
    lmpi_free(*slot);
    *slot = NULL;
}

lmpi_status lmpi_impl_Comm_attach_buffer(lmpi_comm *comm, void *buffer, MPI_Count size)
{
    return lmpi_bsend_slot_attach(comm_slot(comm), buffer, size);
}

lmpi_status lmpi_impl_Comm_detach_buffer(lmpi_comm *comm, void *buffer_addr, MPI_Count *size)
{
    return lmpi_bsend_slot_detach(comm_slot(comm), buffer_addr, size);
}

lmpi_status lmpi_impl_Comm_flush_buffer(lmpi_comm *comm)
{
    lmpi_bsend_slot_flush(*comm_slot(comm));
    return LMPI_OK;
}

void lmpi_bsend_finalize(void)
{
    flush(&process_buffer);
    for (unsigned i = 0; i < LMPI_COMM_BUILTIN_COUNT; i++)
        lmpi_bsend_slot_free(&lmpi_comm_builtin[i].bsend);
    memset(&process_buffer, 0, sizeof(process_buffer));
}
