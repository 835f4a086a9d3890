/* Neighbourhood collectives (MPI 5.0 §8.6): one round of the schedule
 * engine, a receive from every source and a send to every destination of
 * the communicator's topology, in blocking, nonblocking and persistent
 * forms.
 *
 * Pairing repeated neighbours: messages between two processes match in the
 * order they were posted, so each side posts in the order that pairs the
 * right blocks.  Sends go out in list order.  A Cartesian dimension of size
 * 1 or 2 (periodic) makes the -1 and +1 neighbour the same process: what it
 * sends first (to its -1 neighbour) is what this process receives from its
 * +1 neighbour, so per dimension the +1 receive is posted before the -1
 * one.  Graph and distributed-graph lists pair in list order, as the
 * standard defines for repeated edges. */
#include <string.h>

#include "binding/check.h"
#include "binding/gen/impl.h"
#include "coll/calls.h"
#include "coll/sched.h"
#include "coll/short.h"
#include "topo/vtopo.h"

typedef enum { NB_ALLGATHER, NB_ALLGATHERV, NB_ALLTOALL, NB_ALLTOALLV, NB_ALLTOALLW } nb_kind;

typedef struct {
    nb_kind kind;
    const char *sbuf;
    char *rbuf;
    MPI_Count scount, rcount;
    lmpi_datatype *sdt, *rdt;
    lmpi_iarray scounts, sdispls, rcounts, rdispls;
    const MPI_Aint *swdispls, *rwdispls;
    const MPI_Datatype *stypes, *rtypes;
} nb_args;

static lmpi_status topology(lmpi_comm *comm, lmpi_vtopo **t)
{
    if (comm->is_inter) {
        lmpi_err_detail("comm is an intercommunicator (neighbourhood collectives need a process topology)");
        return LMPI_ERR_COMM;
    }
    if (!comm->topo) {
        lmpi_err_detail("comm %s has no process topology", lmpi_comm_display_name(comm));
        return LMPI_ERR_TOPOLOGY;
    }
    *t = comm->topo;
    return LMPI_OK;
}

static lmpi_status need(const lmpi_datatype *dt, MPI_Count count, const char *what)
{
    if (!dt || !dt->committed) {
        lmpi_err_detail("%s is %s", what, dt ? "not committed" : "not a datatype");
        return LMPI_ERR_TYPE;
    }
    if (count < 0) {
        lmpi_err_detail("the count for %s is %lld (negative)", what, (long long)count);
        return LMPI_ERR_COUNT;
    }
    return LMPI_OK;
}

/* Block I of the send side (to destination I) and of the receive side. */
static lmpi_status send_block(const nb_args *a, int i, const void **p, MPI_Count *c, lmpi_datatype **dt)
{
    *p = NULL, *c = 0, *dt = NULL; /* every kind sets them; GCC cannot see that */
    switch (a->kind) {
    case NB_ALLGATHER:
    case NB_ALLGATHERV:
        *p = a->sbuf, *c = a->scount, *dt = a->sdt;
        break;
    case NB_ALLTOALL:
        *p = a->sbuf + (MPI_Aint)i * a->scount * a->sdt->extent, *c = a->scount, *dt = a->sdt;
        break;
    case NB_ALLTOALLV:
        *c = lmpi_iarray_get(a->scounts, (size_t)i), *dt = a->sdt;
        *p = a->sbuf + lmpi_iarray_get(a->sdispls, (size_t)i) * a->sdt->extent;
        break;
    case NB_ALLTOALLW:
        *c = lmpi_iarray_get(a->scounts, (size_t)i), *dt = lmpi_datatype_or_null(a->stypes[i]);
        *p = a->sbuf + a->swdispls[i];
        break;
    }
    return need(*dt, *c, "sendtype");
}

static lmpi_status recv_block(const nb_args *a, int i, void **p, MPI_Count *c, lmpi_datatype **dt)
{
    *p = NULL, *c = 0, *dt = NULL;
    switch (a->kind) {
    case NB_ALLGATHER:
    case NB_ALLTOALL:
        *p = a->rbuf + (MPI_Aint)i * a->rcount * a->rdt->extent, *c = a->rcount, *dt = a->rdt;
        break;
    case NB_ALLGATHERV:
    case NB_ALLTOALLV:
        *c = lmpi_iarray_get(a->rcounts, (size_t)i), *dt = a->rdt;
        *p = a->rbuf + lmpi_iarray_get(a->rdispls, (size_t)i) * a->rdt->extent;
        break;
    case NB_ALLTOALLW:
        *c = lmpi_iarray_get(a->rcounts, (size_t)i), *dt = lmpi_datatype_or_null(a->rtypes[i]);
        *p = a->rbuf + a->rwdispls[i];
        break;
    }
    return need(*dt, *c, "recvtype");
}

static lmpi_status post_recv(lmpi_sched *s, const nb_args *a, const lmpi_vtopo *t, int i)
{
    int peer = t->in[i];
    void *p;
    MPI_Count c;
    lmpi_datatype *dt;
    LMPI_TRY(recv_block(a, i, &p, &c, &dt));
    return peer == MPI_PROC_NULL ? LMPI_OK : lmpi_sched_recv(s, p, c, dt, peer);
}

/* Blocking allgather and alltoall of small contiguous blocks: receives
 * into requests on the stack, sends on the transport's immediate path, no
 * schedule (as the short collectives do, with the same tag sequence).  A
 * Cartesian dimension whose two neighbours are one process (periodic, size
 * 1 or 2) costs one message, not two: a copy when it is this process; else
 * both blocks in one message (alltoall: they are adjacent in both buffers,
 * and swap places on arrival, as what the peer sends its -1 side arrives
 * from this process's +1 side), or the one block once (allgather). */
#define QUICK_MAX_NEIGHBOURS 32

static bool quick_fits(const nb_args *a, const lmpi_vtopo *t)
{
    return (a->kind == NB_ALLGATHER || a->kind == NB_ALLTOALL) && t->indeg <= QUICK_MAX_NEIGHBOURS &&
           lmpi_coll_short_fits(a->scount, a->sdt) && lmpi_coll_short_fits(a->rcount, a->rdt) &&
           a->scount * a->sdt->size == a->rcount * a->rdt->size && a->sdt->extent == a->sdt->size &&
           a->rdt->extent == a->rdt->size;
}

typedef enum { PAIR_NONE, PAIR_SELF, PAIR_PEER } pair_kind;

/* How neighbour slots i and i^1 of a Cartesian topology are served.  Both
 * paths (and so both sides of every message) follow this: a peer pair is
 * one message in the first LMPI_SCHED_OWNED_TYPES dimensions (the schedule
 * holds a datatype for each), two beyond. */
static pair_kind pair_of(const lmpi_vtopo *t, int i, int me)
{
    if (t->kind != MPI_CART || t->in[i] != t->in[i ^ 1] || t->in[i] == MPI_PROC_NULL)
        return PAIR_NONE;
    if (t->in[i] == me)
        return PAIR_SELF;
    return i / 2 < LMPI_SCHED_OWNED_TYPES ? PAIR_PEER : PAIR_NONE;
}

/* The two blocks of a peer pair as one datatype: COUNT x DT at byte
 * displacements FIRST and SECOND from the buffer (owned by the schedule). */
static lmpi_status pair_type(lmpi_sched *s, MPI_Count count, lmpi_datatype *dt, MPI_Aint first, MPI_Aint second,
                             lmpi_datatype **out)
{
    int64_t blens[2] = {count, count}, disps[2] = {first, second};
    MPI_Datatype h;
    LMPI_TRY(lmpi_impl_Type_create_hindexed(2, (lmpi_iarray){blens, 8}, (lmpi_iarray){disps, 8}, dt, &h));
    lmpi_status st = lmpi_impl_Type_commit(&h);
    lmpi_datatype *d = lmpi_datatype_from_handle(h);
    if (st != LMPI_OK || !lmpi_sched_own_type(s, d)) {
        lmpi_impl_Type_free(&h);
        return st != LMPI_OK ? st : LMPI_ERR_INTERN;
    }
    *out = d;
    return LMPI_OK;
}

static lmpi_status quick(lmpi_comm *comm, const nb_args *a, const lmpi_vtopo *t)
{
    lmpi_request r[QUICK_MAX_NEIGHBOURS];
    bool posted[QUICK_MAX_NEIGHBOURS];
    uint32_t ctx = comm->context_id + LMPI_CTX_COLL;
    int tag = LMPI_COLL_TAG_BLOCKING | (int)(comm->coll_seq++ & LMPI_COLL_SEQ_MASK);
    size_t bytes = (size_t)(a->rcount * a->rdt->size);
    bool alltoall = a->kind == NB_ALLTOALL;
    char *rbase = (char *)lmpi_dt_contig_ptr(a->rbuf, a->rdt);
    const char *sbase = lmpi_dt_contig_ptr(a->sbuf, a->sdt);
    bool cart = t->kind == MPI_CART;
    int me = comm->rank;
    for (int k = 0; k < t->indeg; k++) { /* Cartesian: +1 before -1 (see the top) */
        int i = cart ? (k ^ 1) : k;
        pair_kind pk = pair_of(t, i, me);
        posted[i] = t->in[i] != MPI_PROC_NULL && pk != PAIR_SELF && !(pk == PAIR_PEER && (i & 1));
        if (posted[i]) /* a peer pair lands in slot i (even) and, for alltoall, i + 1 */
            lmpi_icoll_post_recv(&r[i], comm, ctx, tag, rbase + (size_t)i * bytes,
                                 pk == PAIR_PEER && alltoall ? 2 * bytes : bytes, t->in[i]);
    }
    lmpi_status st = LMPI_OK;
    for (int i = 0; i < t->outdeg; i++) {
        if (t->out[i] == MPI_PROC_NULL)
            continue;
        const char *p = alltoall ? sbase + (size_t)i * bytes : sbase;
        pair_kind pk = pair_of(t, i, me);
        if (pk == PAIR_SELF) { /* what goes to -1 arrives from +1 */
            if (bytes)
                memcpy(rbase + (size_t)(i ^ 1) * bytes, p, bytes);
            continue;
        }
        if (pk == PAIR_PEER && (i & 1))
            continue; /* sent with slot i - 1 */
        lmpi_status e = lmpi_icoll_send(comm, ctx, tag, p, pk == PAIR_PEER && alltoall ? 2 * bytes : bytes, t->out[i]);
        st = st == LMPI_OK ? e : st;
    }
    for (int i = 0; i < t->indeg; i++) {
        if (!posted[i])
            continue;
        lmpi_status e = lmpi_icoll_finish_recv(&r[i]);
        st = st == LMPI_OK ? e : st;
        if (pair_of(t, i, me) != PAIR_PEER || bytes == 0)
            continue;
        char *x = rbase + (size_t)i * bytes, *y = x + bytes;
        if (alltoall) { /* the peer's -1 block is my +1 block and the other way round */
            char tmp[LMPI_COLL_SHORT_MAX];
            memcpy(tmp, x, bytes);
            memmove(x, y, bytes);
            memcpy(y, tmp, bytes);
        } else {
            memcpy(y, x, bytes);
        }
    }
    return st;
}

static lmpi_status build(lmpi_comm *comm, const nb_args *a, MPI_Request *request, bool persist)
{
    lmpi_vtopo *t;
    LMPI_TRY(topology(comm, &t));
    if (a->sbuf == MPI_IN_PLACE || a->rbuf == MPI_IN_PLACE) {
        lmpi_err_detail("MPI_IN_PLACE is not allowed in neighbourhood collectives");
        return LMPI_ERR_BUFFER;
    }
    if ((t->indeg && !a->rtypes && a->kind == NB_ALLTOALLW) || (t->outdeg && !a->stypes && a->kind == NB_ALLTOALLW)) {
        lmpi_err_detail("%s is NULL", a->rtypes ? "sendtypes" : "recvtypes");
        return LMPI_ERR_ARG;
    }
    if (a->kind != NB_ALLTOALLW) {
        LMPI_TRY(need(a->sdt, 0, "sendtype"));
        LMPI_TRY(need(a->rdt, 0, "recvtype"));
    }
    if (!request && quick_fits(a, t))
        return quick(comm, a, t);
    lmpi_sched *s = lmpi_sched_new(comm);
    if (!s)
        return LMPI_ERR_NO_MEM;
    lmpi_status st = LMPI_OK;
    bool cart = t->kind == MPI_CART, alltoall = a->kind == NB_ALLTOALL, joined = false;
    int me = comm->rank;
    for (int k = 0; k < t->indeg && st == LMPI_OK; k++) { /* Cartesian: +1 before -1 in each dimension */
        int i = cart ? (k ^ 1) : k;
        pair_kind pk = pair_of(t, i, me);
        if (pk == PAIR_SELF || (pk == PAIR_PEER && (i & 1)))
            continue;
        if (pk == PAIR_PEER && alltoall) { /* the peer's -1 block is my +1 block, and the other way round */
            lmpi_datatype *two;
            MPI_Aint blk = (MPI_Aint)a->rcount * a->rdt->extent;
            st = pair_type(s, a->rcount, a->rdt, (MPI_Aint)(i + 1) * blk, (MPI_Aint)i * blk, &two);
            if (st == LMPI_OK)
                st = lmpi_sched_recv(s, a->rbuf, 1, two, t->in[i]);
            continue;
        }
        joined |= pk == PAIR_PEER; /* allgather: one block, copied to slot i + 1 below */
        st = post_recv(s, a, t, i);
    }
    for (int i = 0; i < t->outdeg && st == LMPI_OK; i++) {
        const void *p;
        MPI_Count c;
        lmpi_datatype *dt;
        st = send_block(a, i, &p, &c, &dt);
        pair_kind pk = pair_of(t, i, me);
        if (st != LMPI_OK || t->out[i] == MPI_PROC_NULL || (pk == PAIR_PEER && (i & 1)))
            continue;
        if (pk == PAIR_SELF) { /* a copy: what goes to -1 arrives from +1 */
            void *rp;
            MPI_Count rc;
            lmpi_datatype *rdt;
            st = recv_block(a, i ^ 1, &rp, &rc, &rdt);
            if (st == LMPI_OK)
                st = lmpi_sched_copy(s, p, c, dt, rp, rc, rdt);
        } else if (pk == PAIR_PEER && alltoall) { /* blocks i and i + 1 in one message */
            lmpi_datatype *two;
            MPI_Aint blk = (MPI_Aint)a->scount * a->sdt->extent;
            st = pair_type(s, a->scount, a->sdt, (MPI_Aint)i * blk, (MPI_Aint)(i + 1) * blk, &two);
            if (st == LMPI_OK)
                st = lmpi_sched_send(s, a->sbuf, 1, two, t->out[i]);
        } else {
            st = lmpi_sched_send(s, p, c, dt, t->out[i]);
        }
    }
    if (joined && st == LMPI_OK) { /* allgather peer pairs: the block arrived once, in slot i */
        st = lmpi_sched_fence(s);
        for (int i = 0; i < t->indeg && st == LMPI_OK; i += 2)
            if (pair_of(t, i, me) == PAIR_PEER) {
                void *from, *to;
                MPI_Count c;
                lmpi_datatype *dt;
                st = recv_block(a, i, &from, &c, &dt);
                if (st == LMPI_OK)
                    st = recv_block(a, i + 1, &to, &c, &dt);
                if (st == LMPI_OK)
                    st = lmpi_sched_copy(s, from, c, dt, to, c, dt);
            }
    }
    return lmpi_sched_finish(s, st, request, persist);
}

/* ---- the fifteen entry points -------------------------------------------- */

#define GATHER_ARGS(k)                                                                                       \
    (nb_args)                                                                                                \
    {                                                                                                        \
        .kind = k, .sbuf = sendbuf, .rbuf = recvbuf, .scount = sendcount, .rcount = recvcount, .sdt = sendtype, \
        .rdt = recvtype                                                                                      \
    }

lmpi_status lmpi_impl_Neighbor_allgather(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype,
                                         void *recvbuf, MPI_Count recvcount, lmpi_datatype *recvtype, lmpi_comm *comm)
{
    nb_args a = GATHER_ARGS(NB_ALLGATHER);
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, build(comm, &a, NULL, false));
}

lmpi_status lmpi_impl_Ineighbor_allgather(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype,
                                          void *recvbuf, MPI_Count recvcount, lmpi_datatype *recvtype,
                                          lmpi_comm *comm, MPI_Request *request)
{
    nb_args a = GATHER_ARGS(NB_ALLGATHER);
    return build(comm, &a, request, false);
}

lmpi_status lmpi_impl_Neighbor_allgather_init(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype,
                                              void *recvbuf, MPI_Count recvcount, lmpi_datatype *recvtype,
                                              lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    nb_args a = GATHER_ARGS(NB_ALLGATHER);
    return build(comm, &a, request, true);
}

lmpi_status lmpi_impl_Neighbor_alltoall(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype,
                                        void *recvbuf, MPI_Count recvcount, lmpi_datatype *recvtype, lmpi_comm *comm)
{
    nb_args a = GATHER_ARGS(NB_ALLTOALL);
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, build(comm, &a, NULL, false));
}

lmpi_status lmpi_impl_Ineighbor_alltoall(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype,
                                         void *recvbuf, MPI_Count recvcount, lmpi_datatype *recvtype,
                                         lmpi_comm *comm, MPI_Request *request)
{
    nb_args a = GATHER_ARGS(NB_ALLTOALL);
    return build(comm, &a, request, false);
}

lmpi_status lmpi_impl_Neighbor_alltoall_init(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype,
                                             void *recvbuf, MPI_Count recvcount, lmpi_datatype *recvtype,
                                             lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    nb_args a = GATHER_ARGS(NB_ALLTOALL);
    return build(comm, &a, request, true);
}

#define GATHERV_ARGS                                                                                          \
    (nb_args)                                                                                                 \
    {                                                                                                         \
        .kind = NB_ALLGATHERV, .sbuf = sendbuf, .rbuf = recvbuf, .scount = sendcount, .sdt = sendtype,       \
        .rcounts = recvcounts, .rdispls = displs, .rdt = recvtype                                             \
    }

lmpi_status lmpi_impl_Neighbor_allgatherv(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype,
                                          void *recvbuf, lmpi_iarray recvcounts, lmpi_iarray displs,
                                          lmpi_datatype *recvtype, lmpi_comm *comm)
{
    nb_args a = GATHERV_ARGS;
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, build(comm, &a, NULL, false));
}

lmpi_status lmpi_impl_Ineighbor_allgatherv(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype,
                                           void *recvbuf, lmpi_iarray recvcounts, lmpi_iarray displs,
                                           lmpi_datatype *recvtype, lmpi_comm *comm, MPI_Request *request)
{
    nb_args a = GATHERV_ARGS;
    return build(comm, &a, request, false);
}

lmpi_status lmpi_impl_Neighbor_allgatherv_init(const void *sendbuf, MPI_Count sendcount, lmpi_datatype *sendtype,
                                               void *recvbuf, lmpi_iarray recvcounts, lmpi_iarray displs,
                                               lmpi_datatype *recvtype, lmpi_comm *comm, MPI_Info info,
                                               MPI_Request *request)
{
    (void)info;
    nb_args a = GATHERV_ARGS;
    return build(comm, &a, request, true);
}

#define ALLTOALLV_ARGS                                                                                        \
    (nb_args)                                                                                                 \
    {                                                                                                         \
        .kind = NB_ALLTOALLV, .sbuf = sendbuf, .rbuf = recvbuf, .scounts = sendcounts, .sdispls = sdispls,   \
        .sdt = sendtype, .rcounts = recvcounts, .rdispls = rdispls, .rdt = recvtype                          \
    }

lmpi_status lmpi_impl_Neighbor_alltoallv(const void *sendbuf, lmpi_iarray sendcounts, lmpi_iarray sdispls,
                                         lmpi_datatype *sendtype, void *recvbuf, lmpi_iarray recvcounts,
                                         lmpi_iarray rdispls, lmpi_datatype *recvtype, lmpi_comm *comm)
{
    nb_args a = ALLTOALLV_ARGS;
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, build(comm, &a, NULL, false));
}

lmpi_status lmpi_impl_Ineighbor_alltoallv(const void *sendbuf, lmpi_iarray sendcounts, lmpi_iarray sdispls,
                                          lmpi_datatype *sendtype, void *recvbuf, lmpi_iarray recvcounts,
                                          lmpi_iarray rdispls, lmpi_datatype *recvtype, lmpi_comm *comm,
                                          MPI_Request *request)
{
    nb_args a = ALLTOALLV_ARGS;
    return build(comm, &a, request, false);
}

lmpi_status lmpi_impl_Neighbor_alltoallv_init(const void *sendbuf, lmpi_iarray sendcounts, lmpi_iarray sdispls,
                                              lmpi_datatype *sendtype, void *recvbuf, lmpi_iarray recvcounts,
                                              lmpi_iarray rdispls, lmpi_datatype *recvtype, lmpi_comm *comm,
                                              MPI_Info info, MPI_Request *request)
{
    (void)info;
    nb_args a = ALLTOALLV_ARGS;
    return build(comm, &a, request, true);
}

#define ALLTOALLW_ARGS                                                                                        \
    (nb_args)                                                                                                 \
    {                                                                                                         \
        .kind = NB_ALLTOALLW, .sbuf = sendbuf, .rbuf = recvbuf, .scounts = sendcounts, .swdispls = sdispls,  \
        .stypes = sendtypes, .rcounts = recvcounts, .rwdispls = rdispls, .rtypes = recvtypes                  \
    }

lmpi_status lmpi_impl_Neighbor_alltoallw(const void *sendbuf, lmpi_iarray sendcounts, const MPI_Aint sdispls[],
                                         const MPI_Datatype sendtypes[], void *recvbuf, lmpi_iarray recvcounts,
                                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], lmpi_comm *comm)
{
    nb_args a = ALLTOALLW_ARGS;
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, build(comm, &a, NULL, false));
}

lmpi_status lmpi_impl_Ineighbor_alltoallw(const void *sendbuf, lmpi_iarray sendcounts, const MPI_Aint sdispls[],
                                          const MPI_Datatype sendtypes[], void *recvbuf, lmpi_iarray recvcounts,
                                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                          lmpi_comm *comm, MPI_Request *request)
{
    nb_args a = ALLTOALLW_ARGS;
    return build(comm, &a, request, false);
}

lmpi_status lmpi_impl_Neighbor_alltoallw_init(const void *sendbuf, lmpi_iarray sendcounts, const MPI_Aint sdispls[],
                                              const MPI_Datatype sendtypes[], void *recvbuf, lmpi_iarray recvcounts,
                                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                              lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    nb_args a = ALLTOALLW_ARGS;
    return build(comm, &a, request, true);
}
