/* Communicator constructors: dup (blocking and nonblocking), split,
 * split_type, create, create_group, create_from_group, intercommunicator
 * create and merge.  Every one of them computes the child's ranks as
 * indices into its parent and lets src/av derive a compressed map. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "ft/ft.h"
#include "transport/shm/bridge.h"
#include "topo/vtopo.h"
#include "pt2pt/pt2pt.h"
#include "runtime/config.h"
#include "runtime/info.h"

/* Context blocks reserved for agreements without a parent communicator
 * (create_from_group and intercomm_create_from_groups); tags come from the
 * string tag. */
#define CTX_FROM_GROUP (2 * LMPI_CTX_BLOCK)
#define CTX_FROM_GROUPS_PEER (3 * LMPI_CTX_BLOCK)
#define FIXED_TAG_BASE 0x20000000


static lmpi_status require_intra(lmpi_comm *c, const char *what)
{
    if (c->is_inter) {
        lmpi_err_detail("%s of an intercommunicator is not implemented (use the local group's communicator)", what);
        return LMPI_ERR_UNSUPPORTED_OPERATION;
    }
    return LMPI_OK;
}

static lmpi_status eager_node_comms(lmpi_comm *c)
{
    if (strcmp(lmpi_config.node_comms, "eager") != 0 || c->is_inter)
        return LMPI_OK;
    lmpi_comm *n, *r;
    return lmpi_comm_node_comms(c, &n, &r);
}

/* A communicator object derived from parent: its error handler and session. */
static lmpi_comm *alloc_derived(lmpi_comm *parent, const lmpi_rankmap *map, int rank, uint32_t ctx)
{
    lmpi_comm *c = lmpi_comm_alloc(map, rank, ctx);
    if (!c)
        return NULL;
    if (parent && parent->errh) { /* a temporary communicator has none */
        lmpi_errhandler_retain(parent->errh);
        lmpi_errhandler_release(c->errh);
        c->errh = parent->errh;
    }
    if (parent)
        c->session = parent->session; /* derived communicators stay in their session */
    return c;
}

/* A new intracommunicator: errhandler inherited, maps as given. */
static lmpi_status finish_new(lmpi_comm *parent, const lmpi_rankmap *map, int rank, uint32_t ctx, lmpi_comm **out)
{
    lmpi_comm *c = alloc_derived(parent, map, rank, ctx);
    if (!c)
        return LMPI_ERR_NO_MEM;
    lmpi_status st = eager_node_comms(c);
    if (st != LMPI_OK) {
        lmpi_comm_destroy(c);
        return st;
    }
    *out = c;
    return LMPI_OK;
}

/* c (over the remote group's map, at our rank in the local group) becomes
 * an intercommunicator with the local group lmap. */
static lmpi_status make_inter(lmpi_comm *c, const lmpi_rankmap *lmap)
{
    c->is_inter = 1;
    c->size = lmap->size;
    c->peer_size = c->map.size;
    c->local_map = lmpi_malloc(sizeof(*c->local_map), LMPI_MEM_COMM);
    if (!c->local_map)
        return LMPI_ERR_NO_MEM;
    lmpi_rankmap_copy(c->local_map, lmap);
    c->local_comm = lmpi_comm_alloc(c->local_map, c->rank, c->context_id + LMPI_CTX_LOCAL);
    if (!c->local_comm)
        return LMPI_ERR_NO_MEM;
    c->local_comm->ft_parent = c;
    return LMPI_OK;
}

/* ---- pending communicators ------------------------------------------------------
 * MPIX_Comm_ishrink learns its members only at completion, yet its handle
 * must be valid when the call returns: bindings convert handles then (the
 * Fortran layer's INTEGER through MPI_Comm_toint) and mpi4py sets the
 * handle's error handler at once.  So the call hands out a real
 * communicator, with the parent's error handler and session, over the
 * parent's local group at context id 0 (like idup's before its agreement:
 * nothing of its own travels), and the completion fills that same object
 * in place.  Error handler, attributes and name set meanwhile stay. */
lmpi_status lmpi_comm_new_pending(lmpi_comm *parent, lmpi_comm **out)
{
    lmpi_comm *lc = parent->is_inter ? parent->local_comm : parent;
    *out = alloc_derived(parent, &lc->map, lc->rank, 0);
    return *out ? LMPI_OK : LMPI_ERR_NO_MEM;
}

lmpi_status lmpi_comm_fill(lmpi_comm *c, const lmpi_rankmap *lmap, int lrank, const lmpi_rankmap *rmap, uint32_t ctx)
{
    lmpi_rankmap_release(&c->map);
    lmpi_rankmap_copy(&c->map, rmap ? rmap : lmap);
    c->context_id = ctx;
    c->rank = lrank;
    c->size = c->peer_size = c->map.size;
    if (LMPI_UNLIKELY(lmpi_ft_early_revokes))
        lmpi_ft_comm_made(c); /* a revoke of it that came first */
    return rmap ? make_inter(c, lmap) : eager_node_comms(c);
}

/* ---- dup ---------------------------------------------------------------- */

static lmpi_status dup_finish(lmpi_comm *comm, uint32_t ctx, lmpi_info *info, lmpi_comm *c)
{
    c->context_id = ctx;
    if (comm->is_inter) {
        c->is_inter = 1;
        c->size = comm->size; /* c was made over the remote group's map */
        c->peer_size = comm->peer_size;
        c->local_map = lmpi_malloc(sizeof(*c->local_map), LMPI_MEM_COMM);
        if (!c->local_map)
            return LMPI_ERR_NO_MEM;
        lmpi_rankmap_copy(c->local_map, comm->local_map);
        c->local_comm = lmpi_comm_alloc(c->local_map, c->rank, ctx + LMPI_CTX_LOCAL);
        if (!c->local_comm)
            return LMPI_ERR_NO_MEM;
        c->local_comm->ft_parent = c;
    }
    if (info) {
        c->info = lmpi_info_copy(info);
        if (!c->info)
            return LMPI_ERR_NO_MEM;
    }
    c->topo = lmpi_vtopo_retain(comm->topo); /* topologies survive dup and idup */
    lmpi_status st = lmpi_attr_copy_all(comm, c);
    return st != LMPI_OK ? st : eager_node_comms(c);
}

static lmpi_comm *agreement_comm(lmpi_comm *c) { return c->is_inter ? c->local_comm : c; }

/* An intercommunicator's two groups agree through their leaders. */
static lmpi_status agree_ctx_inter(lmpi_comm *comm, uint32_t *ctx);

static lmpi_status agree(lmpi_comm *comm, uint32_t *ctx)
{
    return comm->is_inter ? agree_ctx_inter(comm, ctx) : lmpi_comm_agree_ctx(comm, ctx);
}

/* A failed dup (an attribute's copy callback failed, most often) leaves
 * MPI_COMM_NULL, as MPICH does and MPI_Type_dup here: a program that frees
 * what it got when it is not null frees nothing. */
static lmpi_status do_dup(lmpi_comm *comm, lmpi_info *info, MPI_Comm *newcomm)
{
    uint32_t ctx;
    *newcomm = MPI_COMM_NULL;
    lmpi_status st = agree(comm, &ctx);
    if (st != LMPI_OK)
        return st;
    lmpi_comm *c;
    st = finish_new(comm, &comm->map, comm->rank, ctx, &c);
    if (st != LMPI_OK)
        return st;
    st = dup_finish(comm, ctx, info ? info : comm->info, c);
    if (st != LMPI_OK) {
        lmpi_comm_destroy(c);
        return st;
    }
    *newcomm = c->handle;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_dup(lmpi_comm *comm, MPI_Comm *newcomm) { return do_dup(comm, NULL, newcomm); }

/* A private copy for a library object (a window, a file): same group, own
 * context, no attributes copied, not counted as the user's.  Revoke and
 * agreement packets find it by its context (MPIX_Win_revoke, the
 * fault-tolerant MPI_Win_free and MPI_File_close of src/ft). */
lmpi_status lmpi_comm_dup_internal(lmpi_comm *comm, lmpi_comm **out)
{
    uint32_t ctx;
    LMPI_TRY(lmpi_comm_agree_ctx(comm, &ctx));
    lmpi_comm *c;
    LMPI_TRY(finish_new(comm, &comm->map, comm->rank, ctx, &c));
    c->context_id = ctx;
    c->flags |= LMPI_COMM_INTERNAL | LMPI_COMM_PRIVATE;
    *out = c;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_dup_with_info(lmpi_comm *comm, MPI_Info info, MPI_Comm *newcomm)
{
    lmpi_info *i;
    lmpi_status st = lmpi_info_arg(info, &i);
    if (st != LMPI_OK)
        return st;
    if (!i) { /* MPI_INFO_NULL: no hints (the parent's are not copied) */
        static lmpi_info none = {.magic = LMPI_MAGIC_INFO};
        i = &none;
    }
    return do_dup(comm, i, newcomm);
}

/* ---- idup: the context agreement as a schedule ------------------------------
 * The dissemination max of lmpi_icoll_allreduce_max_u32, one round at a
 * time, advanced by Test/Wait; the new handle is valid at once and usable
 * when the request completes.  An intercommunicator adds two phases that
 * never block either: the leaders swap their groups' maxima, then a second
 * dissemination spreads the leader's result through its group. */
enum { IDUP_LOCAL, IDUP_LEADERS, IDUP_SPREAD, IDUP_DONE };

typedef struct {
    lmpi_comm *parent; /* the communicator the agreement runs on */
    lmpi_comm *orig;
    lmpi_comm *newc;
    lmpi_info *info;
    int phase, d, tag, spread_tag, leaders_tag;
    bool swapping; /* the pair in flight is the leaders' swap */
    uint32_t value, in;
    lmpi_request *sr, *rr;
    /* the phases run again with the members' verdicts on the id agreed
     * (lmpi_ctx_confirm's check), and again from a new proposal while one
     * refuses it */
    bool checking;
    uint32_t agreed;
    lmpi_ctx_claim claim;
    /* on the progress list while it runs: a wait on anything moves it (two
     * idups waited for in opposite orders on two ranks need each other) */
    lmpi_progress_item progress;
    lmpi_request *req;
} idup_state;

static bool idup_pair(lmpi_request *req, lmpi_comm *c, uint32_t ctx, int tag, int src, int dest)
{
    idup_state *s = req->sched;
    lmpi_status st = lmpi_pt2pt_irecv(&s->in, sizeof(s->in), src, tag, c, ctx, &s->rr);
    if (st == LMPI_OK)
        st = lmpi_pt2pt_isend(&s->value, sizeof(s->value), dest, tag, c, ctx, LMPI_MODE_STANDARD, NULL, &s->sr);
    if (st != LMPI_OK)
        req->sched_error = st;
    return st == LMPI_OK;
}

/* Posts the next exchange; false when the agreement has no more. */
static bool idup_post(lmpi_request *req)
{
    idup_state *s = req->sched;
    lmpi_comm *c = s->parent;
    for (;;) {
        switch (s->phase) {
        case IDUP_LOCAL:
        case IDUP_SPREAD:
            if (s->d < c->size)
                return idup_pair(req, c, c->context_id + LMPI_CTX_COLL, s->phase == IDUP_LOCAL ? s->tag : s->spread_tag,
                                 (c->rank - s->d + c->size) % c->size, (c->rank + s->d) % c->size);
            s->phase = s->phase == IDUP_LOCAL && s->orig->is_inter ? IDUP_LEADERS : IDUP_DONE;
            continue;
        case IDUP_LEADERS:
            s->phase = IDUP_SPREAD;
            s->d = 1;
            if (c->rank != 0)
                continue;
            s->swapping = true;
            return idup_pair(req, s->orig, s->orig->context_id + LMPI_CTX_COLL, s->leaders_tag, 0, 0);
        default:
            return false;
        }
    }
}

/* The phases' exchanges done: true when the id is taken (or an error
 * ended the agreement), false when the phases run again (posted). */
static bool idup_settle(lmpi_request *req)
{
    idup_state *s = req->sched;
    for (;;) {
        if (req->sched_error != LMPI_OK) {
            uint32_t unused;
            lmpi_ctx_settle(&s->claim, 1, &unused); /* lets go of a claim */
            return true;
        }
        if (!s->checking) {
            s->agreed = s->value;
            s->value = lmpi_ctx_check(&s->claim, s->agreed);
            s->checking = true;
        } else {
            s->checking = false;
            uint32_t next = 0;
            if (lmpi_ctx_settle(&s->claim, s->value, &next)) {
                req->sched_error = dup_finish(s->orig, s->agreed, s->info, s->newc);
                return true;
            }
            s->value = next;
        }
        s->phase = IDUP_LOCAL;
        s->d = 1;
        if (idup_post(req))
            return false;
    }
}

static bool idup_step(lmpi_request *req)
{
    idup_state *s = req->sched;
    while (s->rr || s->sr) {
        if (!lmpi_request_done(s->rr) || !lmpi_request_done(s->sr))
            return false;
        lmpi_pt2pt_wait_free(s->sr, MPI_STATUS_IGNORE);
        lmpi_pt2pt_wait_free(s->rr, MPI_STATUS_IGNORE);
        s->sr = s->rr = NULL;
        if (s->in > s->value)
            s->value = s->in;
        if (!s->swapping)
            s->d *= 2;
        s->swapping = false;
        if (!idup_post(req) && idup_settle(req))
            return true; /* (else the phases run again: posted) */
    }
    return true;
}

static bool idup_listed(lmpi_progress_item *it)
{
    idup_state *s = lmpi_container_of(it, idup_state, progress);
    if (!s->req->complete && idup_step(s->req))
        s->req->complete = 1;
    return s->req->complete;
}

static bool idup_advance(lmpi_request *req)
{
    idup_state *s = req->sched;
    lmpi_progress_poll();
    if (req->complete) /* the list finished it */
        return true;
    bool done = idup_step(req);
    if (done)
        lmpi_progress_list_remove(LMPI_PROGRESS_IDUP, &s->progress);
    return done;
}

static void idup_free(lmpi_request *req)
{
    idup_state *s = req->sched;
    lmpi_progress_list_remove(LMPI_PROGRESS_IDUP, &s->progress);
    if (s->claim.held) {
        uint32_t unused;
        lmpi_ctx_settle(&s->claim, 1, &unused);
    }
    lmpi_info_destroy(s->info);
    lmpi_free(s);
    req->sched = NULL;
}

static lmpi_status do_idup(lmpi_comm *comm, lmpi_info *info, MPI_Comm *newcomm, MPI_Request *request)
{
    idup_state *s = lmpi_calloc(1, sizeof(*s), LMPI_MEM_COMM);
    lmpi_request *req = lmpi_request_alloc(LMPI_REQ_SCHED);
    lmpi_comm *c = NULL;
    if (!s || !req || finish_new(comm, &comm->map, comm->rank, 0, &c) != LMPI_OK) {
        lmpi_free(s);
        if (req)
            lmpi_request_free(req);
        return LMPI_ERR_NO_MEM;
    }
    s->orig = comm;
    s->parent = agreement_comm(comm);
    s->newc = c;
    s->info = info ? lmpi_info_copy(info) : comm->info ? lmpi_info_copy(comm->info) : NULL;
    s->d = 1;
    /* every member takes its tags in call order, so all agree on them */
    s->tag = 0x40000000 | (int)(s->parent->coll_seq++ & 0x3fffffff);
    if (comm->is_inter) {
        s->spread_tag = 0x40000000 | (int)(s->parent->coll_seq++ & 0x3fffffff);
        s->leaders_tag = 0x40000000 | (int)(comm->coll_seq++ & 0x3fffffff);
    }
    s->value = lmpi_ctx_next();
    req->sched = s;
    req->advance = idup_advance;
    req->sched_free = idup_free;
    s->req = req;
    if (!idup_post(req))
        req->complete = idup_settle(req);
    if (!req->complete) {
        lmpi_progress_lists[LMPI_PROGRESS_IDUP].advance = idup_listed;
        lmpi_progress_list_add(LMPI_PROGRESS_IDUP, &s->progress);
    }
    *newcomm = c->handle;
    *request = (MPI_Request)req;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_idup(lmpi_comm *comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return do_idup(comm, NULL, newcomm, request);
}

lmpi_status lmpi_impl_Comm_idup_with_info(lmpi_comm *comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    lmpi_info *i;
    lmpi_status st = lmpi_info_arg(info, &i);
    return st != LMPI_OK ? st : do_idup(comm, i, newcomm, request);
}

/* ---- split -------------------------------------------------------------------- */

typedef struct {
    int32_t color, key;
    uint32_t ctx;
    uint32_t shared; /* !lmpi_ctx_alone() */
} split_rec;

typedef struct {
    int key, rank;
} key_rank;

static int key_rank_cmp(const void *a, const void *b)
{
    const key_rank *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static lmpi_status inter_split(lmpi_comm *comm, int color, int key, MPI_Comm *newcomm);
static lmpi_status inter_create(lmpi_comm *comm, lmpi_group *g, MPI_Comm *newcomm);

/* Everyone's (color, key) and context counter in one allgather; members of
 * my color ordered by (key, parent rank). */
static lmpi_status split_by(lmpi_comm *comm, int color, int key, MPI_Comm *newcomm)
{
    lmpi_status st = LMPI_OK;
    if (color < 0 && color != MPI_UNDEFINED) {
        lmpi_err_detail("color %d is negative and not MPI_UNDEFINED", color);
        return LMPI_ERR_ARG;
    }
    if (comm->is_inter)
        return inter_split(comm, color, key, newcomm);
    int n = comm->size;
    split_rec mine = {color, key, lmpi_ctx_next(), !lmpi_ctx_alone()};
    split_rec *all = lmpi_malloc(sizeof(*all) * (size_t)n, LMPI_MEM_OTHER);
    key_rank *members = lmpi_malloc(sizeof(*members) * (size_t)n, LMPI_MEM_OTHER);
    int *idx = lmpi_malloc(sizeof(int) * (size_t)n, LMPI_MEM_OTHER);
    if (!all || !members || !idx) {
        st = LMPI_ERR_NO_MEM;
        goto out;
    }
    st = lmpi_icoll_allgather(comm, &mine, all, sizeof(mine));
    if (st != LMPI_OK)
        goto out;
    uint32_t ctx = 0;
    bool shared = false;
    for (int r = 0; r < n; r++) {
        if (all[r].ctx > ctx)
            ctx = all[r].ctx;
        shared = shared || all[r].shared;
    }
    st = lmpi_ctx_take(comm, shared, &ctx);
    if (st != LMPI_OK)
        goto out;
    if (color == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        goto out;
    }
    int m = 0;
    bool sorted = true;
    for (int r = 0; r < n; r++)
        if (all[r].color == color) {
            members[m] = (key_rank){all[r].key, r};
            sorted = sorted && (m == 0 || members[m - 1].key <= all[r].key);
            m++;
        }
    if (!sorted)
        qsort(members, (size_t)m, sizeof(*members), key_rank_cmp);
    int me = -1;
    for (int i = 0; i < m; i++) {
        idx[i] = members[i].rank;
        if (members[i].rank == comm->rank)
            me = i;
    }
    lmpi_rankmap map;
    if (!lmpi_rankmap_derive(&map, &comm->map, idx, m)) {
        st = LMPI_ERR_NO_MEM;
        goto out;
    }
    lmpi_comm *c;
    st = finish_new(comm, &map, me, ctx, &c);
    lmpi_rankmap_release(&map);
    if (st == LMPI_OK)
        *newcomm = c->handle;
out:
    lmpi_free(all);
    lmpi_free(members);
    lmpi_free(idx);
    return st;
}

lmpi_status lmpi_impl_Comm_split(lmpi_comm *comm, int color, int key, MPI_Comm *newcomm)
{
    return split_by(comm, color, key, newcomm);
}

lmpi_status lmpi_comm_hw_color(lmpi_comm *comm, int split_type, lmpi_info *info, int *color, char *type_out,
                               size_t type_len);

lmpi_status lmpi_impl_Comm_split_type(lmpi_comm *comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    lmpi_info *i;
    lmpi_status st = lmpi_info_arg(info, &i);
    if (st != LMPI_OK)
        return st;
    int color;
    char type[64] = "";
    switch (split_type) {
    case MPI_UNDEFINED:
        color = MPI_UNDEFINED;
        break;
    case MPI_COMM_TYPE_SHARED:
        color = lmpi_av_world()->my_node;
        snprintf(type, sizeof(type), "mpi_shared_memory");
        break;
    case MPI_COMM_TYPE_HW_GUIDED:
    case MPI_COMM_TYPE_HW_UNGUIDED:
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
        st = lmpi_comm_hw_color(comm, split_type, i, &color, type, sizeof(type));
        if (st != LMPI_OK)
            return st;
        break;
    default:
        lmpi_err_detail("split_type %d is not MPI_COMM_TYPE_SHARED, _HW_GUIDED, _HW_UNGUIDED, "
                        "_RESOURCE_GUIDED or MPI_UNDEFINED",
                        split_type);
        return LMPI_ERR_ARG;
    }
    st = split_by(comm, color, key, newcomm);
    if (st == LMPI_OK && *newcomm != MPI_COMM_NULL && type[0]) {
        lmpi_comm *c = lmpi_comm_from_handle(*newcomm);
        c->info = lmpi_info_new();
        if (!c->info || lmpi_info_put(c->info, "mpi_hw_resource_type", type) != LMPI_OK)
            return LMPI_ERR_NO_MEM;
        /* MPI 4.1 7.4.2: unguided, the caller's info names the level it was split at */
        if (split_type == MPI_COMM_TYPE_HW_UNGUIDED && i && lmpi_info_put(i, "mpi_hw_resource_type", type) != LMPI_OK)
            return LMPI_ERR_NO_MEM;
    }
    return st;
}

/* ---- create / create_group / create_from_group ---------------------------------- */

/* idx[i]: the parent rank of group rank i; -1 when a member is not in the
 * parent. */
static lmpi_status group_in_parent(lmpi_comm *comm, lmpi_group *g, int *idx)
{
    MPI_Group pg;
    lmpi_status st = lmpi_group_new(lmpi_comm_local_map(comm), &pg);
    if (st != LMPI_OK)
        return st;
    int *ranks = lmpi_malloc(sizeof(int) * (size_t)(g->size + 1), LMPI_MEM_OTHER);
    if (!ranks) {
        lmpi_impl_Group_free(&pg);
        return LMPI_ERR_NO_MEM;
    }
    for (int i = 0; i < g->size; i++)
        ranks[i] = i;
    st = lmpi_impl_Group_translate_ranks((MPI_Group)g, g->size, ranks, pg, idx);
    lmpi_free(ranks);
    lmpi_impl_Group_free(&pg);
    if (st != LMPI_OK)
        return st;
    for (int i = 0; i < g->size; i++)
        if (idx[i] == MPI_UNDEFINED) {
            lmpi_err_detail("group rank %d is not a member of %s", i, lmpi_comm_display_name(comm));
            return LMPI_ERR_GROUP;
        }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_create(lmpi_comm *comm, MPI_Group group, MPI_Comm *newcomm)
{
    lmpi_group *g;
    lmpi_status st = lmpi_group_from_handle(group, &g, "group");
    if (st != LMPI_OK)
        return st;
    if (comm->is_inter)
        return inter_create(comm, g, newcomm);
    int *idx = lmpi_malloc(sizeof(int) * (size_t)(g->size + 1), LMPI_MEM_OTHER);
    if (!idx)
        return LMPI_ERR_NO_MEM;
    st = group_in_parent(comm, g, idx);
    uint32_t ctx = 0;
    if (st == LMPI_OK) /* every member of the parent takes part in the agreement */
        st = lmpi_comm_agree_ctx(comm, &ctx);
    if (st == LMPI_OK && g->rank == MPI_UNDEFINED)
        *newcomm = MPI_COMM_NULL;
    else if (st == LMPI_OK) {
        lmpi_rankmap map;
        lmpi_comm *c;
        if (!lmpi_rankmap_derive(&map, &comm->map, idx, g->size))
            st = LMPI_ERR_NO_MEM;
        else {
            st = finish_new(comm, &map, g->rank, ctx, &c);
            lmpi_rankmap_release(&map);
            if (st == LMPI_OK)
                *newcomm = c->handle;
        }
    }
    lmpi_free(idx);
    return st;
}

/* A temporary communicator over a group for the agreement among its members
 * only: it runs on the collective context of `ctx_owner`'s block with a tag
 * fixed by the caller (the user's tag or the string tag). */
static void temp_comm(lmpi_comm *t, lmpi_group *g, uint32_t ctx, int tag)
{
    memset(t, 0, sizeof(*t));
    t->magic = LMPI_MAGIC_COMM;
    t->context_id = ctx;
    t->map = g->map;
    t->rank = g->rank;
    t->size = t->peer_size = g->size;
    t->coll_seq = (uint32_t)tag;
    t->flags = LMPI_COMM_FIXED_TAG;
}

/* The tag of a creation over group g: the user's tag mixed with the
 * group's members.  Messages of the temporary communicator carry group
 * ranks, so a process that ran ahead into the next creation over another
 * group must not be taken for a member of this one (successive creations
 * over the same group stay apart by message order). */
static int group_tag(const lmpi_group *g, int tag)
{
    uint32_t h = 2166136261u ^ (uint32_t)tag;
    for (int i = 0; i < g->size; i++)
        h = (h ^ (uint32_t)lmpi_rankmap_lpid(&g->map, i)) * 16777619u;
    return FIXED_TAG_BASE | (int)(h & 0x1fffffff);
}

static lmpi_status create_in_group(lmpi_comm *parent, lmpi_group *g, uint32_t ctx_base, int tag, MPI_Comm *newcomm)
{
    if (g->rank == MPI_UNDEFINED) {
        lmpi_err_detail("the calling process is not a member of group");
        return LMPI_ERR_GROUP;
    }
    lmpi_comm t;
    temp_comm(&t, g, ctx_base, group_tag(g, tag));
    uint32_t ctx;
    lmpi_status st = lmpi_comm_agree_ctx(&t, &ctx);
    if (st != LMPI_OK)
        return st;
    lmpi_comm *c;
    st = finish_new(parent, &g->map, g->rank, ctx, &c);
    if (st == LMPI_OK && !parent)
        c->session = (uint16_t)g->session; /* MPI_Comm_create_from_group: the group's session */
    if (st == LMPI_OK)
        *newcomm = c->handle;
    return st;
}

lmpi_status lmpi_impl_Comm_create_group(lmpi_comm *comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    lmpi_group *g;
    lmpi_status st = require_intra(comm, "MPI_Comm_create_group");
    if (st == LMPI_OK)
        st = lmpi_group_from_handle(group, &g, "group");
    if (st != LMPI_OK)
        return st;
    if (g->size == 0 || g->rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return LMPI_OK;
    }
    int *idx = lmpi_malloc(sizeof(int) * (size_t)(g->size + 1), LMPI_MEM_OTHER);
    if (!idx)
        return LMPI_ERR_NO_MEM;
    st = group_in_parent(comm, g, idx);
    lmpi_free(idx);
    if (st != LMPI_OK)
        return st;
    return create_in_group(comm, g, comm->context_id, tag, newcomm);
}

/* The errhandler and hints given to a *_from_group(s) constructor. */
static lmpi_status apply_errh_info(lmpi_comm *c, lmpi_errhandler *e, const lmpi_info *i)
{
    if (e && e->kind != LMPI_ERRH_NULL) {
        lmpi_errhandler_retain(e);
        lmpi_errhandler_release(c->errh);
        c->errh = e;
    }
    if (i && !(c->info = lmpi_info_copy(i)))
        return LMPI_ERR_NO_MEM;
    return LMPI_OK;
}

/* The info, string tag and errhandler of the *_from_group(s) constructors. */
static lmpi_status from_group_args(MPI_Info info, const char *stringtag, MPI_Errhandler errhandler, lmpi_info **i,
                                   lmpi_errhandler **e)
{
    lmpi_status st = lmpi_info_arg(info, i);
    if (st != LMPI_OK)
        return st;
    if (!stringtag) {
        lmpi_err_detail("stringtag is NULL");
        return LMPI_ERR_ARG;
    }
    *e = lmpi_errhandler_from_handle(errhandler);
    if (errhandler != MPI_ERRHANDLER_NULL && (!*e || (*e)->kind == LMPI_ERRH_NULL)) {
        lmpi_err_detail("errhandler is not a valid error handler");
        return LMPI_ERR_ERRHANDLER;
    }
    return LMPI_OK;
}

static int string_tag(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return (int)(h & 0x1fffffff);
}

/* The errors of the from-group constructors go to the handler they were
 * given, where it is one (MPI 5.0 §7.4.2: there is no communicator yet). */
static lmpi_status raise_on(MPI_Errhandler errhandler, lmpi_status st)
{
    lmpi_errhandler *e = st != LMPI_OK ? lmpi_errhandler_from_handle(errhandler) : NULL;
    if (e && e->kind != LMPI_ERRH_NULL)
        lmpi_err_blame_object(e, (void *)MPI_COMM_NULL);
    return st;
}

static lmpi_status comm_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                   MPI_Comm *newcomm)
{
    lmpi_group *g;
    lmpi_info *i;
    lmpi_errhandler *e;
    lmpi_status st = lmpi_group_from_handle(group, &g, "group");
    if (st == LMPI_OK)
        st = from_group_args(info, stringtag, errhandler, &i, &e);
    if (st != LMPI_OK)
        return st;
    if (g->size == 0) {
        *newcomm = MPI_COMM_NULL;
        return LMPI_OK;
    }
    st = create_in_group(NULL, g, CTX_FROM_GROUP, string_tag(stringtag), newcomm);
    if (st != LMPI_OK)
        return st;
    return apply_errh_info(lmpi_comm_from_handle(*newcomm), e, i);
}

lmpi_status lmpi_impl_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                             MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    return raise_on(errhandler, comm_from_group(group, stringtag, info, errhandler, newcomm));
}

/* ---- intercommunicators ---------------------------------------------------------- */

typedef struct {
    uint32_t ctx;
    int32_t size;
    int32_t high;
    int32_t leader_world; /* tie-break for merge: the leader's lpid ... */
    uint64_t leader_group; /* ... and the hash of its group's name */
} leader_msg;

static uint64_t group_key(uint32_t pgid) { return lmpi_bridge_group_key(lmpi_dpm_group_name(pgid)); }

/* An intercommunicator from its two maps (copied), this process's rank in
 * the local one, and the agreed id; errhandler from `parent`. */
lmpi_status lmpi_comm_new_inter(lmpi_comm *parent, const lmpi_rankmap *lmap, int lrank, const lmpi_rankmap *rmap,
                                uint32_t ctx, lmpi_comm **out)
{
    lmpi_comm *c = alloc_derived(parent, rmap, lrank, ctx);
    if (!c)
        return LMPI_ERR_NO_MEM;
    lmpi_status st = make_inter(c, lmap);
    if (st != LMPI_OK) {
        lmpi_comm_destroy(c);
        return st;
    }
    *out = c;
    return LMPI_OK;
}

/* The leaders swap a message over `peer` (rank remote_leader there). */
static lmpi_status peer_swap(lmpi_comm *peer, int remote_leader, int tag, uint32_t ctx, const void *mine,
                             size_t mine_bytes, void *theirs, size_t theirs_bytes)
{
    lmpi_request *rr = NULL, *sr = NULL;
    lmpi_status st = lmpi_pt2pt_irecv(theirs, theirs_bytes, remote_leader, tag, peer, ctx, &rr);
    if (st == LMPI_OK)
        st = lmpi_pt2pt_isend(mine, mine_bytes, remote_leader, tag, peer, ctx, LMPI_MODE_STANDARD, NULL, &sr);
    lmpi_status s1 = sr ? lmpi_pt2pt_wait_free(sr, MPI_STATUS_IGNORE) : LMPI_OK;
    lmpi_status s2 = rr ? lmpi_pt2pt_wait_free(rr, MPI_STATUS_IGNORE) : LMPI_OK;
    return st != LMPI_OK ? st : s1 != LMPI_OK ? s1 : s2;
}

/* Does the map hold processes of a process group other than the world? */
static bool spans_groups(const lmpi_rankmap *m)
{
    for (int i = 0; i < m->size; i++)
        if (lmpi_rankmap_gpid(m, i).pgid != 0)
            return true;
    return false;
}

/* Every member opens its inbox; the leaders tell each other (over `peer`)
 * once their side is ready, and tell their side; a failure anywhere fails
 * the call everywhere. */
static lmpi_status inboxes_ready(lmpi_comm *local, int local_leader, lmpi_comm *peer, int remote_leader, int tag)
{
    uint32_t bad = lmpi_dpm_ensure_inbox() != LMPI_OK;
    lmpi_status st = lmpi_icoll_allreduce_max_u32(local, &bad);
    if (st == LMPI_OK && local->rank == local_leader) {
        uint32_t theirs = 1;
        st = peer_swap(peer, remote_leader, tag, peer->context_id, &bad, sizeof(bad), &theirs, sizeof(theirs));
        bad |= theirs;
    }
    if (st == LMPI_OK)
        st = lmpi_icoll_bcast(local, &bad, sizeof(bad), local_leader);
    if (st == LMPI_OK && bad) {
        lmpi_err_detail("a member could not open its inbox for the other process group");
        st = LMPI_ERR_OTHER;
    }
    return st;
}

/* A leader that gives up tells the other leader, which is in the
 * handshake or on its way there: its leader_msg carries size -class
 * (nothing else follows), and the other side fails with that class rather
 * than waiting for a leader that left.  The other side's header is taken
 * and dropped. */
lmpi_status lmpi_comm_inter_refuse(lmpi_comm *peer, int remote_leader, int tag, lmpi_status why)
{
    leader_msg mine = {0, -(int32_t)why, 0, lmpi_rt.world_rank, 0}, theirs;
    return peer_swap(peer, remote_leader, tag, peer->context_id, &mine, sizeof(mine), &theirs, sizeof(theirs));
}

/* The leaders' exchange over `peer` (rank remote_leader there), then a
 * broadcast in the local group: afterwards every local member knows the
 * id and the remote group.  Groups travel as descriptions (group names and
 * ranks, src/dpm), so the two sides may belong to different process groups
 * (spawned or connected).  A failure on one side (a member that failed:
 * User-Level Failure Mitigation) reaches the other through the leaders and
 * every member of both through the broadcast, so nobody waits for a
 * leader that gave up. */
/* lmpi_ctx_confirm's max for a handshake: the verdicts and new proposals
 * travel like the first ones (an allreduce in each group, the leaders'
 * swap, a broadcast); a leader's failure reaches its members. */
typedef struct {
    lmpi_comm *local, *peer;
    int local_leader, remote_leader, tag;
} handshake_ends;

static lmpi_status handshake_max(void *arg, uint32_t *v)
{
    const handshake_ends *e = arg;
    lmpi_status st = lmpi_icoll_allreduce_max_u32(e->local, v);
    if (st != LMPI_OK && e->local->rank != e->local_leader)
        return st;
    int32_t msg[2] = {(int32_t)*v, 0};
    if (e->local->rank == e->local_leader) {
        uint32_t theirs = 0;
        if (st == LMPI_OK)
            st = peer_swap(e->peer, e->remote_leader, e->tag, e->peer->context_id, v, sizeof(*v), &theirs,
                           sizeof(theirs));
        msg[0] = (int32_t)(theirs > *v ? theirs : *v);
        msg[1] = -(int32_t)st;
    }
    LMPI_TRY(lmpi_icoll_bcast(e->local, msg, sizeof(msg), e->local_leader));
    if (msg[1] < 0) {
        lmpi_err_detail("the exchange between the groups' leaders failed at this group's leader (rank %d)",
                        e->local_leader);
        return (lmpi_status)-msg[1];
    }
    *v = (uint32_t)msg[0];
    return LMPI_OK;
}

lmpi_status lmpi_comm_inter_handshake(lmpi_comm *local, int local_leader, lmpi_comm *peer, int remote_leader,
                                      int tag, bool inboxes_open, MPI_Comm *newintercomm)
{
    uint32_t ctx = lmpi_ctx_next();
    lmpi_status st = lmpi_icoll_allreduce_max_u32(local, &ctx);
    if (st != LMPI_OK && local->rank != local_leader)
        return st;
    const lmpi_rankmap *lm = lmpi_comm_local_map(local);
    leader_msg hdr = {0};
    void *remote = NULL;
    int32_t err = 0;
    if (local->rank == local_leader) {
        void *mine_blob = NULL;
        size_t mine_len = 0;
        if (st == LMPI_OK)
            st = lmpi_dpm_encode_map(lm, &mine_blob, &mine_len);
        leader_msg mine = {ctx, (int32_t)mine_len, 0, lmpi_rt.world_rank, 0};
        if (st == LMPI_OK)
            st = peer_swap(peer, remote_leader, tag, peer->context_id, &mine, sizeof(mine), &hdr, sizeof(hdr));
        else
            lmpi_comm_inter_refuse(peer, remote_leader, tag, st);
        if (st == LMPI_OK && hdr.size < 0) {
            st = (lmpi_status)-hdr.size;
            lmpi_err_detail("the other group's leader gave up: a member of its group failed or could not take "
                            "part");
        }
        if (st == LMPI_OK && !(remote = lmpi_malloc((size_t)hdr.size + 1, LMPI_MEM_OTHER)))
            st = LMPI_ERR_NO_MEM;
        if (st == LMPI_OK)
            st = peer_swap(peer, remote_leader, tag, peer->context_id, mine_blob, mine_len, remote, (size_t)hdr.size);
        lmpi_free(mine_blob);
        if (st != LMPI_OK) {
            /* the members hear of it from us */
            lmpi_free(remote);
            int32_t failed[2] = {0, -(int32_t)st};
            lmpi_icoll_bcast(local, failed, sizeof(failed), local_leader);
            return st;
        }
        if (hdr.ctx > ctx)
            ctx = hdr.ctx;
        hdr.ctx = ctx;
    }
    int32_t info[2] = {(int32_t)hdr.ctx, hdr.size};
    st = lmpi_icoll_bcast(local, info, sizeof(info), local_leader);
    if (st == LMPI_OK && info[1] < 0) {
        lmpi_err_detail("the exchange between the groups' leaders failed at this group's leader (rank %d)",
                        local_leader);
        return (lmpi_status)-info[1];
    }
    uint32_t ctx_taken = (uint32_t)info[0];
    handshake_ends ends = {local, peer, local_leader, remote_leader, tag};
    if (st == LMPI_OK)
        st = lmpi_ctx_confirm(handshake_max, &ends, &ctx_taken);
    if (st == LMPI_OK && local->rank != local_leader && !(remote = lmpi_malloc((size_t)info[1] + 1, LMPI_MEM_OTHER)))
        st = LMPI_ERR_NO_MEM;
    if (st == LMPI_OK)
        st = lmpi_icoll_bcast(local, remote, (size_t)info[1], local_leader);
    lmpi_rankmap rmap;
    bool have_map = false;
    if (st == LMPI_OK) {
        st = lmpi_dpm_decode_map(remote, (size_t)info[1], &rmap);
        have_map = st == LMPI_OK;
    }
    /* members of other process groups (spawned or connected) on either
     * side: every member needs its inbox before the other side sends to it,
     * which a process that never spawned or connected has not opened.  Each
     * side sees the same two maps, so both sides take this step or neither. */
    if (st == LMPI_OK && !inboxes_open && (spans_groups(lm) || spans_groups(&rmap)))
        st = inboxes_ready(local, local_leader, peer, remote_leader, tag);
    /* overlapping groups: every member sees the same intersection */
    for (int i = 0; have_map && i < rmap.size && !err; i++)
        if (lmpi_rankmap_find(lm, lmpi_rankmap_gpid(&rmap, i)) >= 0)
            err = (int32_t)lmpi_rankmap_gpid(&rmap, i).lpid + 1;
    if (st == LMPI_OK && err) {
        lmpi_err_detail("the local and remote groups overlap (world rank %d is in both)", err - 1);
        st = LMPI_ERR_ARG;
    }
    lmpi_comm *c = NULL;
    if (st == LMPI_OK)
        st = lmpi_comm_new_inter(local, lm, local->rank, &rmap, ctx_taken, &c);
    if (have_map)
        lmpi_rankmap_release(&rmap);
    lmpi_free(remote);
    if (st == LMPI_OK)
        *newintercomm = c->handle;
    return st;
}

lmpi_status lmpi_impl_Intercomm_create(lmpi_comm *local_comm, int local_leader, lmpi_comm *peer_comm,
                                       int remote_leader, int tag, MPI_Comm *newintercomm)
{
    lmpi_status st = require_intra(local_comm, "MPI_Intercomm_create on local_comm");
    if (st != LMPI_OK)
        return st;
    if (local_leader < 0 || local_leader >= local_comm->size) {
        lmpi_err_detail("local_leader %d but local_comm has %d ranks", local_leader, local_comm->size);
        return LMPI_ERR_RANK;
    }
    if (local_comm->rank == local_leader && (remote_leader < 0 || remote_leader >= peer_comm->peer_size)) {
        lmpi_err_detail("remote_leader %d but peer_comm has %d ranks", remote_leader, peer_comm->peer_size);
        return LMPI_ERR_RANK;
    }
    if (local_comm->rank == local_leader && remote_leader == peer_comm->rank && !peer_comm->is_inter) {
        lmpi_err_detail("remote_leader %d is the local leader itself: the groups overlap", remote_leader);
        return LMPI_ERR_ARG;
    }
    return lmpi_comm_inter_handshake(local_comm, local_leader, peer_comm, remote_leader, tag, false, newintercomm);
}

static lmpi_status intercomm_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                         int remote_leader, const char *stringtag, MPI_Info info,
                                         MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    lmpi_group *lg, *rg;
    lmpi_info *i;
    lmpi_errhandler *e;
    lmpi_status st = lmpi_group_from_handle(local_group, &lg, "local_group");
    if (st == LMPI_OK)
        st = lmpi_group_from_handle(remote_group, &rg, "remote_group");
    if (st == LMPI_OK)
        st = from_group_args(info, stringtag, errhandler, &i, &e);
    if (st != LMPI_OK)
        return st;
    if (lg->rank == MPI_UNDEFINED) {
        lmpi_err_detail("the calling process is not a member of local_group");
        return LMPI_ERR_GROUP;
    }
    if (local_leader < 0 || local_leader >= lg->size || remote_leader < 0 || remote_leader >= rg->size) {
        lmpi_err_detail("local_leader %d (group of %d) or remote_leader %d (group of %d) out of range", local_leader,
                        lg->size, remote_leader, rg->size);
        return LMPI_ERR_RANK;
    }
    int tag = FIXED_TAG_BASE | string_tag(stringtag);
    lmpi_comm local;
    temp_comm(&local, lg, CTX_FROM_GROUP, tag);
    /* The leaders talk on a reserved context: through the world when both
     * are in it, else through a two-process communicator of the two (the
     * groups of a spawn, lmpi://parent and lmpi://spawned/...), ordered by
     * their groups' names. */
    lmpi_gpid me = lmpi_rankmap_gpid(&lg->map, local_leader), other = lmpi_rankmap_gpid(&rg->map, remote_leader);
    lmpi_comm peer = *lmpi_comm_world;
    peer.context_id = CTX_FROM_GROUPS_PEER;
    peer.attrs = NULL;
    int remote = (int)other.lpid;
    lmpi_rankmap pair_map;
    bool pair = me.pgid != 0 || other.pgid != 0;
    if (pair) {
        uint64_t km = group_key(me.pgid), ko = group_key(other.pgid);
        bool first = km != ko ? km < ko : me.lpid < other.lpid;
        lmpi_gpid g[2] = {first ? me : other, first ? other : me};
        if (!lmpi_rankmap_from_gpids(&pair_map, g, 2))
            return LMPI_ERR_NO_MEM;
        peer.map = pair_map;
        peer.rank = first ? 0 : 1;
        peer.size = peer.peer_size = 2;
        remote = first ? 1 : 0;
    }
    MPI_Comm out;
    st = lmpi_comm_inter_handshake(&local, local_leader, &peer, remote, tag, false, &out);
    if (pair)
        lmpi_rankmap_release(&pair_map);
    if (st != LMPI_OK)
        return st;
    *newintercomm = out;
    return apply_errh_info(lmpi_comm_from_handle(out), e, i);
}

lmpi_status lmpi_impl_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                                   int remote_leader, const char *stringtag, MPI_Info info,
                                                   MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    return raise_on(errhandler, intercomm_from_groups(local_group, local_leader, remote_group, remote_leader,
                                                      stringtag, info, errhandler, newintercomm));
}

static lmpi_status exchange_leaders(lmpi_comm *inter, leader_msg *mine, leader_msg *theirs, int tag)
{
    uint32_t ctx = inter->context_id + LMPI_CTX_COLL;
    lmpi_request *rr = NULL, *sr = NULL;
    lmpi_status st = lmpi_pt2pt_irecv(theirs, sizeof(*theirs), 0, tag, inter, ctx, &rr);
    if (st == LMPI_OK)
        st = lmpi_pt2pt_isend(mine, sizeof(*mine), 0, tag, inter, ctx, LMPI_MODE_STANDARD, NULL, &sr);
    lmpi_status s1 = sr ? lmpi_pt2pt_wait_free(sr, MPI_STATUS_IGNORE) : LMPI_OK;
    lmpi_status s2 = rr ? lmpi_pt2pt_wait_free(rr, MPI_STATUS_IGNORE) : LMPI_OK;
    return st != LMPI_OK ? st : s1 != LMPI_OK ? s1 : s2;
}

/* Leaders of the two groups swap a message over the intercommunicator's
 * collective context; the local group learns the result by broadcast. */
static lmpi_status leaders_swap(lmpi_comm *inter, leader_msg *mine, leader_msg *theirs)
{
    lmpi_comm *local = inter->local_comm;
    lmpi_status st = LMPI_OK;
    int tag = 0x40000000 | (int)(inter->coll_seq++ & 0x3fffffff);
    if (local->rank == 0)
        st = exchange_leaders(inter, mine, theirs, tag);
    if (st == LMPI_OK)
        st = lmpi_icoll_bcast(local, theirs, sizeof(*theirs), 0);
    return st;
}

static lmpi_status swap_with_remote(lmpi_comm *inter, const void *mine, size_t mine_bytes, void *theirs,
                                    size_t theirs_bytes);

/* The largest of *v over both groups of an intercommunicator (the
 * context-id check of lmpi_ctx_confirm). */
static lmpi_status inter_max(void *arg, uint32_t *v)
{
    lmpi_comm *inter = arg;
    LMPI_TRY(lmpi_icoll_allreduce_max_u32(inter->local_comm, v));
    uint32_t theirs = 0;
    LMPI_TRY(swap_with_remote(inter, v, sizeof(*v), &theirs, sizeof(theirs)));
    if (theirs > *v)
        *v = theirs;
    return LMPI_OK;
}

static lmpi_status agree_ctx_inter(lmpi_comm *comm, uint32_t *ctx)
{
    uint32_t v = lmpi_ctx_next();
    lmpi_status st = lmpi_icoll_allreduce_max_u32(comm->local_comm, &v);
    if (st != LMPI_OK)
        return st;
    leader_msg mine = {v, comm->size, 0, 0, 0}, theirs;
    st = leaders_swap(comm, &mine, &theirs);
    if (st != LMPI_OK)
        return st;
    if (theirs.ctx > v)
        v = theirs.ctx;
    LMPI_TRY(lmpi_ctx_confirm(inter_max, comm, &v));
    *ctx = v;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Intercomm_merge(lmpi_comm *intercomm, int high, MPI_Comm *newintracomm)
{
    if (!intercomm->is_inter) {
        lmpi_err_detail("%s is not an intercommunicator", lmpi_comm_display_name(intercomm));
        return LMPI_ERR_COMM;
    }
    lmpi_comm *local = intercomm->local_comm;
    uint32_t v = lmpi_ctx_next();
    lmpi_status st = lmpi_icoll_allreduce_max_u32(local, &v);
    if (st != LMPI_OK)
        return st;
    int32_t my_high = high ? 1 : 0;
    /* the group's choice is its leader's */
    st = lmpi_icoll_bcast(local, &my_high, sizeof(my_high), 0);
    if (st != LMPI_OK)
        return st;
    lmpi_gpid lead = lmpi_rankmap_gpid(intercomm->local_map, 0);
    leader_msg mine = {v, intercomm->size, my_high, (int32_t)lead.lpid, group_key(lead.pgid)}, theirs;
    st = leaders_swap(intercomm, &mine, &theirs);
    if (st != LMPI_OK)
        return st;
    uint32_t ctx = theirs.ctx > v ? theirs.ctx : v;
    LMPI_TRY(lmpi_ctx_confirm(inter_max, intercomm, &ctx));
    bool local_first = my_high != theirs.high ? !my_high
                       : mine.leader_group != theirs.leader_group ? mine.leader_group < theirs.leader_group
                                                                  : mine.leader_world < theirs.leader_world;
    const lmpi_rankmap *first = local_first ? intercomm->local_map : &intercomm->map;
    const lmpi_rankmap *second = local_first ? &intercomm->map : intercomm->local_map;
    int n = first->size + second->size;
    lmpi_gpid *g = lmpi_malloc(sizeof(*g) * (size_t)n, LMPI_MEM_OTHER);
    if (!g)
        return LMPI_ERR_NO_MEM;
    for (int r = 0; r < first->size; r++)
        g[r] = lmpi_rankmap_gpid(first, r);
    for (int r = 0; r < second->size; r++)
        g[first->size + r] = lmpi_rankmap_gpid(second, r);
    lmpi_rankmap map;
    bool ok = lmpi_rankmap_from_gpids(&map, g, n);
    lmpi_free(g);
    if (!ok)
        return LMPI_ERR_NO_MEM;
    lmpi_comm *c;
    st = finish_new(intercomm, &map, local_first ? intercomm->rank : first->size + intercomm->rank, ctx, &c);
    lmpi_rankmap_release(&map);
    if (st == LMPI_OK)
        *newintracomm = c->handle;
    return st;
}

/* ---- MPI_Comm_split and MPI_Comm_create on intercommunicators ---------------
 * Each group learns the other's records through the two leaders (local rank
 * 0 of each side) and a broadcast; the id is the maximum counter of both
 * groups, so every member of the new intercommunicator moves past it. */
static lmpi_status swap_with_remote(lmpi_comm *inter, const void *mine, size_t mine_bytes, void *theirs,
                                    size_t theirs_bytes)
{
    lmpi_comm *local = inter->local_comm;
    int tag = 0x40000000 | (int)(inter->coll_seq++ & 0x3fffffff);
    lmpi_status st = LMPI_OK;
    if (local->rank == 0) {
        uint32_t ctx = inter->context_id + LMPI_CTX_COLL;
        lmpi_request *rr = NULL, *sr = NULL;
        st = lmpi_pt2pt_irecv(theirs, theirs_bytes, 0, tag, inter, ctx, &rr);
        if (st == LMPI_OK)
            st = lmpi_pt2pt_isend(mine, mine_bytes, 0, tag, inter, ctx, LMPI_MODE_STANDARD, NULL, &sr);
        if (sr)
            lmpi_pt2pt_wait_free(sr, MPI_STATUS_IGNORE);
        if (rr)
            lmpi_pt2pt_wait_free(rr, MPI_STATUS_IGNORE);
    }
    return st == LMPI_OK ? lmpi_icoll_bcast(local, theirs, theirs_bytes, 0) : st;
}

/* Members of `color` in (key, rank) order; returns how many, and my place. */
static int members_of(const split_rec *all, int n, int color, int me, int *idx, key_rank *tmp, int *myplace)
{
    int m = 0;
    for (int r = 0; r < n; r++)
        if (all[r].color == color && color != MPI_UNDEFINED)
            tmp[m++] = (key_rank){all[r].key, r};
    qsort(tmp, (size_t)m, sizeof(*tmp), key_rank_cmp);
    *myplace = -1;
    for (int i = 0; i < m; i++) {
        idx[i] = tmp[i].rank;
        if (tmp[i].rank == me)
            *myplace = i;
    }
    return m;
}

static lmpi_status inter_split(lmpi_comm *comm, int color, int key, MPI_Comm *newcomm)
{
    int n = comm->size, m = comm->peer_size, big = n > m ? n : m;
    split_rec mine = {color, key, lmpi_ctx_next(), 1}; /* (intercommunicators always check) */
    split_rec *all = lmpi_malloc(sizeof(*all) * (size_t)n, LMPI_MEM_OTHER);
    split_rec *rem = lmpi_malloc(sizeof(*rem) * (size_t)m, LMPI_MEM_OTHER);
    int *li = lmpi_malloc(sizeof(int) * (size_t)big, LMPI_MEM_OTHER), *ri = lmpi_malloc(sizeof(int) * (size_t)big, LMPI_MEM_OTHER);
    key_rank *tmp = lmpi_malloc(sizeof(*tmp) * (size_t)big, LMPI_MEM_OTHER);
    lmpi_status st = (!all || !rem || !li || !ri || !tmp) ? LMPI_ERR_NO_MEM : LMPI_OK;
    if (st == LMPI_OK)
        st = lmpi_icoll_allgather(comm->local_comm, &mine, all, sizeof(mine));
    if (st == LMPI_OK)
        st = swap_with_remote(comm, all, sizeof(*all) * (size_t)n, rem, sizeof(*rem) * (size_t)m);
    if (st != LMPI_OK)
        goto out;
    uint32_t ctx = 0;
    for (int r = 0; r < n; r++)
        ctx = all[r].ctx > ctx ? all[r].ctx : ctx;
    for (int r = 0; r < m; r++)
        ctx = rem[r].ctx > ctx ? rem[r].ctx : ctx;
    st = lmpi_ctx_confirm(inter_max, comm, &ctx);
    if (st != LMPI_OK)
        goto out;
    int me, dummy;
    int nl = members_of(all, n, color, comm->rank, li, tmp, &me);
    int nr = members_of(rem, m, color, -1, ri, tmp, &dummy);
    *newcomm = MPI_COMM_NULL;
    if (color == MPI_UNDEFINED || nl == 0 || nr == 0)
        goto out; /* no partner group: no communicator (MPI 5.0 §7.4.2) */
    lmpi_rankmap lmap, rmap;
    if (!lmpi_rankmap_derive(&lmap, comm->local_map, li, nl)) {
        st = LMPI_ERR_NO_MEM;
        goto out;
    }
    if (!lmpi_rankmap_derive(&rmap, &comm->map, ri, nr)) {
        lmpi_rankmap_release(&lmap);
        st = LMPI_ERR_NO_MEM;
        goto out;
    }
    lmpi_comm *c;
    st = lmpi_comm_new_inter(comm, &lmap, me, &rmap, ctx, &c);
    lmpi_rankmap_release(&lmap);
    lmpi_rankmap_release(&rmap);
    if (st == LMPI_OK)
        *newcomm = c->handle;
out:
    lmpi_free(all), lmpi_free(rem), lmpi_free(li), lmpi_free(ri), lmpi_free(tmp);
    return st;
}

/* MPI_Comm_create on an intercommunicator: every member of a side passes
 * the same subgroup of its local group; the two subgroups form the new
 * intercommunicator (MPI_COMM_NULL where either is empty). */
static lmpi_status inter_create(lmpi_comm *comm, lmpi_group *g, MPI_Comm *newcomm)
{
    int n = comm->size, m = comm->peer_size;
    int *idx = lmpi_malloc(sizeof(int) * (size_t)(n + 1), LMPI_MEM_OTHER);
    /* message: counter, subgroup size, then the subgroup as ranks of the
     * sender's local group */
    uint32_t *mine = lmpi_malloc(sizeof(uint32_t) * (size_t)(n + 2), LMPI_MEM_OTHER);
    uint32_t *theirs = lmpi_malloc(sizeof(uint32_t) * (size_t)(m + 2), LMPI_MEM_OTHER);
    lmpi_status st = (!idx || !mine || !theirs) ? LMPI_ERR_NO_MEM : LMPI_OK;
    if (st == LMPI_OK)
        st = group_in_parent(comm, g, idx);
    uint32_t v = lmpi_ctx_next();
    if (st == LMPI_OK)
        st = lmpi_icoll_allreduce_max_u32(comm->local_comm, &v);
    if (st != LMPI_OK)
        goto out;
    mine[0] = v;
    mine[1] = (uint32_t)g->size;
    for (int i = 0; i < g->size; i++)
        mine[2 + i] = (uint32_t)idx[i];
    for (int i = g->size; i < n; i++)
        mine[2 + i] = 0;
    st = swap_with_remote(comm, mine, sizeof(uint32_t) * (size_t)(n + 2), theirs, sizeof(uint32_t) * (size_t)(m + 2));
    if (st != LMPI_OK)
        goto out;
    uint32_t ctx = theirs[0] > v ? theirs[0] : v;
    st = lmpi_ctx_confirm(inter_max, comm, &ctx);
    if (st != LMPI_OK)
        goto out;
    int nr = (int)theirs[1];
    *newcomm = MPI_COMM_NULL;
    if (g->rank == MPI_UNDEFINED || g->size == 0 || nr == 0)
        goto out;
    int *ri = lmpi_malloc(sizeof(int) * (size_t)(nr + 1), LMPI_MEM_OTHER);
    if (!ri) {
        st = LMPI_ERR_NO_MEM;
        goto out;
    }
    for (int i = 0; i < nr; i++)
        ri[i] = (int)theirs[2 + i];
    lmpi_rankmap lmap, rmap;
    bool ok = lmpi_rankmap_derive(&lmap, comm->local_map, idx, g->size);
    if (ok && !lmpi_rankmap_derive(&rmap, &comm->map, ri, nr)) {
        lmpi_rankmap_release(&lmap);
        ok = false;
    }
    lmpi_free(ri);
    if (!ok) {
        st = LMPI_ERR_NO_MEM;
        goto out;
    }
    lmpi_comm *c;
    st = lmpi_comm_new_inter(comm, &lmap, g->rank, &rmap, ctx, &c);
    lmpi_rankmap_release(&lmap);
    lmpi_rankmap_release(&rmap);
    if (st == LMPI_OK)
        *newcomm = c->handle;
out:
    lmpi_free(idx), lmpi_free(mine), lmpi_free(theirs);
    return st;
}
