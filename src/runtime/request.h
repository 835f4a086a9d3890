/* Requests: one object for every kind of pending operation, recycled through
 * a pool so that the send/receive paths never call malloc.  Completion is a
 * flag set by the progress engine; status.MPI_internal holds the byte count
 * (two ints) and the cancelled flag. */
#ifndef LMPI_REQUEST_H
#define LMPI_REQUEST_H

#include "match/mqi.h"
#include "runtime/lmpi.h"
#include "runtime/objarena.h"

typedef enum {
    LMPI_REQ_SEND,
    LMPI_REQ_RECV,
    LMPI_REQ_PERSISTENT, /* Send_init / Recv_init ...: `child` runs each Start */
    LMPI_REQ_COMPOUND,   /* Isendrecv(_replace): done when both children are */
    LMPI_REQ_FLUSH,      /* Buffer_iflush: done when its buffer has nothing in flight */
    LMPI_REQ_SCHED,      /* a schedule (Comm_idup, nonblocking collectives): `advance` runs it */
    LMPI_REQ_GREQ,       /* a generalized request: done when the user calls MPI_Grequest_complete */
    LMPI_REQ_PART,       /* a partitioned send or receive (src/pt2pt/partitioned.c): `sched` is its state */
} lmpi_req_kind;

typedef enum { LMPI_MODE_STANDARD, LMPI_MODE_SYNC, LMPI_MODE_BUFFERED, LMPI_MODE_READY, LMPI_MODE_RECV } lmpi_send_mode;

/* Point-to-point protocol state of a request. */
typedef enum {
    LMPI_PROTO_NONE,
    LMPI_PROTO_EAGER_QUEUED, /* send waiting for a free cell */
    LMPI_PROTO_RTS_QUEUED,   /* rendezvous send waiting to announce itself */
    LMPI_PROTO_RNDV_WAIT,    /* rendezvous send announced, waiting for FIN or CTS */
    LMPI_PROTO_STREAMING,    /* pipelined rendezvous: sender pushing DATA packets */
    LMPI_PROTO_RECV_STREAM,  /* receiver collecting DATA packets */
    LMPI_PROTO_RECV_PULL,    /* receiver reading the data through the transport (PULLED ends it) */
    LMPI_PROTO_SYNC_WAIT,    /* synchronous eager send waiting for the match ACK */
} lmpi_proto_state;

typedef struct lmpi_bsend_segment lmpi_bsend_segment;

struct lmpi_request {
    lmpi_mqi mqi; /* queued as a posted receive */
    uint32_t magic;
    uint8_t kind;
    uint8_t proto;
    volatile int complete;
    MPI_Status status;
    lmpi_comm *comm;
    void *buf;
    size_t bytes;  /* send: message length; receive: buffer capacity */
    size_t offset; /* streaming progress */
    int peer;      /* world rank of the other side (-1: any) */
    int rank;      /* comm rank used for matching (MPI_ANY_SOURCE allowed) */
    int tag;
    uint32_t ctx;
    uint64_t remote_req; /* receive: the sender's request; send: its eager message's key (send_eager) */
    struct lmpi_match_queue *mq; /* where a posted receive waits */
    uint8_t mode;                /* lmpi_send_mode */
    bool internal;               /* no user handle: freed when it completes */
    bool free_when_done;         /* MPI_Request_free on an active request */
    bool cancel_pending;         /* a send's MPI_Cancel asked the receiver; not done until it answers */
    bool sent;                   /* ... and the send itself finished meanwhile */
    lmpi_bsend_segment *bseg;    /* buffered send: the attached-buffer space it uses */
    /* persistent and compound requests */
    lmpi_request *child[2];
    bool active;
    MPI_Count count;
    lmpi_datatype *dt;
    void *replace_buf; /* Isendrecv_replace: where the received bytes go at the end */
    /* non-contiguous datatypes: the user's (user_buf, count, dt), packed
     * into and unpacked from the packets as they go (dt is retained) */
    void *user_buf;
    const size_t *pending; /* Buffer_iflush: the buffer's count of sends in flight */
    /* schedules: advance() moves the schedule on without blocking and says
     * whether it is finished; sched_free() releases its state (also when the
     * request is freed unfinished: then it is first driven to its end). */
    bool (*advance)(lmpi_request *r);
    void (*sched_free)(lmpi_request *r);
    void *sched;
    lmpi_status sched_error;
    bool persistent; /* a persistent collective: kept after completion, run again by MPI_Start */
    struct lmpi_greq *greq; /* generalized requests: the user's callbacks (src/pt2pt/grequest.c) */
    /* given up after a failure (src/ft): packets that still name it are
     * dropped, and it never goes back to the pool (one leaks per request
     * a failure strands) */
    bool abandoned;
};

#define lmpi_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

lmpi_request *lmpi_request_alloc(lmpi_req_kind kind);
static inline void lmpi_status_set_cancelled(MPI_Status *s, int c)
{
    s->MPI_internal[2] = c;
}
static inline int lmpi_status_cancelled(const MPI_Status *s)
{
    return s->MPI_internal[2];
}
void lmpi_request_free(lmpi_request *r);
void lmpi_request_pool_finalize(void);

static inline void lmpi_status_set_bytes(MPI_Status *s, int64_t bytes)
{
    s->MPI_internal[0] = (int)(bytes & 0xffffffff);
    s->MPI_internal[1] = (int)(bytes >> 32);
}

static inline int64_t lmpi_status_bytes(const MPI_Status *s)
{
    return (int64_t)(((uint64_t)(uint32_t)s->MPI_internal[1] << 32) | (uint32_t)s->MPI_internal[0]);
}

static inline lmpi_request *lmpi_request_from_handle(MPI_Request h)
{
    if ((uintptr_t)h < LMPI_PREDEF_LIMIT)
        return NULL;
    lmpi_request *r = (lmpi_request *)h;
    if (LMPI_UNLIKELY(!lmpi_obj_valid(r, sizeof(*r))))
        return NULL;
    return r->magic == LMPI_MAGIC_REQUEST ? r : NULL;
}

/* Progress: poll the transports once; returns the number of events. */
int lmpi_progress_poll(void);
/* Operations that move only when polled (started nonblocking collectives,
 * partitioned rounds) sit in a progress list while they have work: every
 * poll advances the items of every non-empty list (none costs one branch),
 * so that a wait on anything moves them all.  `advance` returns true when
 * the item is finished; it then leaves the list. */
typedef struct lmpi_progress_item {
    struct lmpi_progress_item *prev, *next;
    bool listed;
} lmpi_progress_item;

typedef struct lmpi_progress_list {
    lmpi_progress_item *head;
    bool (*advance)(lmpi_progress_item *item);
    bool running; /* an advance polls too: no re-entry */
} lmpi_progress_list;

typedef enum { LMPI_PROGRESS_SCHED, LMPI_PROGRESS_PART, LMPI_PROGRESS_IDUP, LMPI_PROGRESS_LISTS } lmpi_progress_which;
extern lmpi_progress_list lmpi_progress_lists[LMPI_PROGRESS_LISTS];
extern unsigned lmpi_progress_lists_on;
void lmpi_progress_list_add(lmpi_progress_which which, lmpi_progress_item *item);
void lmpi_progress_list_remove(lmpi_progress_which which, lmpi_progress_item *item);
/* A blocking wait calls this after each poll that made no progress, with
 * *idle the count of such polls since the last progress (the caller zeroes
 * it on progress): spins up to LMPI_SPIN_TIME us, then yields once. */
void lmpi_progress_idle(unsigned *idle);
/* The same for a wait on a word of shared memory that another process
 * writes directly (collective areas, window synchronization): its writers
 * wake such sleepers with lmpi_wait_kick. */
void lmpi_progress_idle_word(unsigned *idle);
/* The same for a wait on one word of the node's segment that only grows,
 * until it reaches VALUE: only the kick that finds it there wakes us. */
void lmpi_progress_idle_until(unsigned *idle, const _Atomic uint64_t *word, uint64_t value);
/* The same for a wait that also watches the clock (a timeout, a periodic
 * check): it sleeps at most max_sleep_ns at a time. */
void lmpi_progress_idle_timed(unsigned *idle, uint64_t max_sleep_ns);
/* Block until *flag becomes nonzero, polling, then yielding. */
void lmpi_progress_wait_flag(volatile int *flag);
/* A call that tests without waiting found nothing (MPI_Test and its kin,
 * MPI_Iprobe, MPI_Improbe, MPI_Win_test, MPI_Parrived).  Programs call
 * them in loops; with more ranks than cores (LMPI_SPIN_TIME 0) the rank
 * they wait for may be queued on this processor, and polling on keeps it
 * off for the rest of a scheduler slice: this hands the processor over
 * then, as a blocking wait's idle poll does. */
void lmpi_progress_missed(void);
/* ... and one that found what it tested for: the run of misses is over. */
extern uint64_t lmpi_test_missing_since;
static inline void lmpi_progress_found(void)
{
    if (LMPI_UNLIKELY(lmpi_test_missing_since))
        lmpi_test_missing_since = 0;
}
static inline void lmpi_progress_tested(bool found)
{
    if (found)
        lmpi_progress_found();
    else
        lmpi_progress_missed();
}

#endif
