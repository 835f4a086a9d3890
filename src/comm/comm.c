/* Communicator objects: the predefined ones, allocation and release,
 * context ids, the internal node communicators, and the queries. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "binding/check.h"
#include "binding/gen/impl.h"
#include "runtime/objarena.h"
#include "coll/shmcoll.h"
#include "comm/comm.h"
#include "ft/ft.h"
#include "topo/vtopo.h"
#include "match/match.h"
#include "pt2pt/pt2pt.h"
#include "transport/transport.h"
#include "runtime/config.h"
#include "runtime/info.h"

lmpi_comm lmpi_comm_builtin[LMPI_COMM_BUILTIN_COUNT];

static int64_t live_comms;
lmpi_comm *lmpi_comm_live_list;
int64_t lmpi_comm_live(void) { return live_comms; }

/* ---- context ids ------------------------------------------------------------
 * Each process keeps one counter: the next block it has never used.  A new
 * communicator takes the largest counter among its members (an allreduce or
 * part of the split's allgather), and every member moves past it.  So an id
 * is unique among the communicators of each of its members, ids are never
 * reused, and allocation costs O(1) memory however many communicators are
 * alive: 2^30 creations fit in 32 bits. */
/* world and self own the first two blocks; two more serve agreements that
 * have no parent communicator (src/comm/create.c) */
static uint32_t ctx_next = LMPI_CTX_FIRST_FREE;

uint32_t lmpi_ctx_next(void) { return ctx_next; }
void lmpi_ctx_advance(uint32_t used)
{
    if (used + LMPI_CTX_BLOCK > ctx_next)
        ctx_next = used + LMPI_CTX_BLOCK;
}

/* Agreements in flight at once in one process (threads creating
 * communicators over different parents, outstanding MPI_Comm_idup calls)
 * read the same counter, so the largest counter among each one's members
 * can be the same id for two of them: their communicators would receive
 * each other's messages.  So the members check an agreed id before taking
 * it: each claims it unless it is below its counter (taken here since) or
 * claimed by another agreement in flight here, and the largest verdict
 * decides.  On a refusal every member proposes again above the refused id,
 * a random number of blocks higher, so two agreements that chose the same
 * id do not choose the same one again in step.  Nobody waits for another
 * agreement (a process-wide turn deadlocks when two processes take their
 * agreements in opposite orders), and an id that every member claimed is
 * free everywhere: claims are exclusive and last until the id is taken. */
static lmpi_ctx_claim *claims;

uint32_t lmpi_ctx_check(lmpi_ctx_claim *c, uint32_t ctx)
{
    c->ctx = ctx;
    c->held = false;
    if (ctx < ctx_next)
        return 1;
    for (lmpi_ctx_claim *o = claims; o; o = o->next)
        if (o->ctx == ctx)
            return 1;
    c->held = true;
    c->next = claims;
    claims = c;
    return 0;
}

bool lmpi_ctx_settle(lmpi_ctx_claim *c, uint32_t verdict, uint32_t *next)
{
    if (c->held)
        for (lmpi_ctx_claim **p = &claims; *p; p = &(*p)->next)
            if (*p == c) {
                *p = c->next;
                break;
            }
    c->held = false;
    if (!verdict) {
        lmpi_ctx_advance(c->ctx);
        return true;
    }
    *next = lmpi_ctx_above(c->ctx);
    return false;
}

uint32_t lmpi_ctx_above(uint32_t refused)
{
    static unsigned seed;
    if (!seed)
        seed = (unsigned)getpid() * 2654435761u | 1u;
    seed = seed * 1103515245u + 12345u;
    uint32_t above = refused + LMPI_CTX_BLOCK * (1 + (seed >> 16) % 4);
    return above > ctx_next ? above : ctx_next;
}

lmpi_status lmpi_ctx_max_intra(void *comm, uint32_t *v) { return lmpi_icoll_allreduce_max_u32(comm, v); }

lmpi_status lmpi_ctx_confirm(lmpi_status (*max)(void *, uint32_t *), void *arg, uint32_t *ctx)
{
    for (;;) {
        if (*ctx > UINT32_MAX - 8 * LMPI_CTX_BLOCK) {
            lmpi_err_detail("context ids exhausted (2^29 communicators created)");
            return LMPI_ERR_INTERN;
        }
        lmpi_ctx_claim c;
        uint32_t verdict = lmpi_ctx_check(&c, *ctx), next = 0;
        lmpi_status st = max(arg, &verdict);
        if (st != LMPI_OK)
            verdict = 1; /* (lets go of the claim) */
        if (lmpi_ctx_settle(&c, verdict, &next))
            return LMPI_OK;
        if (st != LMPI_OK)
            return st;
        *ctx = next;
        LMPI_TRY(max(arg, ctx));
    }
}

/* A blocking creation in a process with one thread in MPI and no idup
 * outstanding is the only one in flight there from its proposal to its
 * taking the id: when that holds at every member, no member can have
 * another creation on the same id, and the check is skipped (the members
 * learn it with the proposals: one allreduce, as before the check). */
static int nonblocking_in_flight;

void lmpi_ctx_nonblocking(int delta) { nonblocking_in_flight += delta; }

bool lmpi_ctx_alone(void)
{
    return !lmpi_rt.thread_multiple && !lmpi_progress_lists[LMPI_PROGRESS_IDUP].head && !nonblocking_in_flight;
}

lmpi_status lmpi_ctx_take(lmpi_comm *comm, bool shared, uint32_t *ctx)
{
    if (shared || *ctx > UINT32_MAX - 8 * LMPI_CTX_BLOCK) /* (the latter: confirm's error) */
        return lmpi_ctx_confirm(lmpi_ctx_max_intra, comm, ctx);
    lmpi_ctx_advance(*ctx);
    return LMPI_OK;
}

lmpi_status lmpi_comm_agree_ctx(lmpi_comm *comm, uint32_t *ctx)
{
    uint32_t v[2] = {ctx_next, !lmpi_ctx_alone()};
    LMPI_TRY(lmpi_icoll_allreduce_max_u32n(comm, v, 2));
    LMPI_TRY(lmpi_ctx_take(comm, v[1], &v[0]));
    *ctx = v[0];
    return LMPI_OK;
}

/* ---- objects ------------------------------------------------------------------ */

static void init_fields(lmpi_comm *c, uint32_t ctx, int rank)
{
    c->magic = LMPI_MAGIC_COMM;
    c->context_id = ctx;
    c->rank = rank;
    c->size = c->map.size;
    c->peer_size = c->map.size;
    c->errh = lmpi_errhandler_initial();
}

lmpi_comm *lmpi_comm_alloc(const lmpi_rankmap *map, int rank, uint32_t ctx)
{
    lmpi_comm *c = lmpi_obj_alloc(sizeof(*c), LMPI_MEM_COMM);
    if (!c)
        return NULL;
    lmpi_rankmap_copy(&c->map, map);
    init_fields(c, ctx, rank);
    c->handle = (MPI_Comm)c;
    live_comms++;
    c->live_next = lmpi_comm_live_list;
    if (lmpi_comm_live_list)
        lmpi_comm_live_list->live_prev = c;
    lmpi_comm_live_list = c;
    if (LMPI_UNLIKELY(lmpi_ft_early_revokes))
        lmpi_ft_comm_made(c);
    return c;
}

static void release_contents(lmpi_comm *c)
{
    lmpi_dpm_comm_gone(c);
    lmpi_bsend_slot_free(&c->bsend); /* waits for the sends still using it */
    for (uint32_t i = 0; i < LMPI_CTX_BLOCK; i++)
        lmpi_match_queue_release(c->context_id + i);
    lmpi_coll_shm_detach(c);
    if (c->node && c->node != c)
        lmpi_comm_destroy(c->node);
    if (c->roots && c->roots != c)
        lmpi_comm_destroy(c->roots);
    c->node = c->roots = NULL;
    if (c->local_comm)
        lmpi_comm_destroy(c->local_comm);
    c->local_comm = NULL;
    c->node_built = 0;
    if (c->local_map) {
        lmpi_rankmap_release(c->local_map);
        lmpi_free(c->local_map);
        c->local_map = NULL;
    }
    lmpi_rankmap_release(&c->map);
    lmpi_info_destroy(c->info);
    c->info = NULL;
    lmpi_free(c->name);
    c->name = NULL;
    lmpi_vtopo_release(c->topo);
    c->topo = NULL;
}

void lmpi_comm_destroy(lmpi_comm *c)
{
    release_contents(c);
    if (c->errh)
        lmpi_errhandler_release(c->errh);
    if (c->live_prev)
        c->live_prev->live_next = c->live_next;
    else if (lmpi_comm_live_list == c)
        lmpi_comm_live_list = c->live_next;
    if (c->live_next)
        c->live_next->live_prev = c->live_prev;
    c->magic = 0;
    lmpi_obj_free(c, sizeof(*c), LMPI_MEM_COMM);
    live_comms--;
}

const char *lmpi_comm_display_name(const lmpi_comm *c)
{
    static char buf[48];
    if (c->name)
        return c->name;
    if (c == lmpi_comm_world)
        return "MPI_COMM_WORLD";
    if (c == lmpi_comm_self)
        return "MPI_COMM_SELF";
    snprintf(buf, sizeof(buf), "communicator %u", c->context_id / LMPI_CTX_BLOCK);
    return buf;
}

/* ---- predefined communicators ---------------------------------------------- */

void lmpi_comm_init_builtin(void)
{
    /* MPI_COMM_NULL keeps magic 0 so that every check rejects it. */
    memset(lmpi_comm_builtin, 0, sizeof(lmpi_comm_builtin));
    lmpi_comm_builtin[0].handle = MPI_COMM_NULL;
    lmpi_comm *w = lmpi_comm_world, *s = lmpi_comm_self;
    /* Usable for error reporting before MPI_Init: one rank, direct. */
    w->map.size = s->map.size = 1;
    init_fields(w, 0, 0);
    init_fields(s, LMPI_CTX_BLOCK, 0);
    w->handle = MPI_COMM_WORLD;
    s->handle = MPI_COMM_SELF;
    w->flags = s->flags = LMPI_COMM_PREDEFINED;
}

/* The world: its address vector (node map from the process manager) and
 * the maps of MPI_COMM_WORLD (direct) and MPI_COMM_SELF (offset). */
lmpi_status lmpi_comm_init_world(int world_size, int world_rank, const int *node_of)
{
    lmpi_rankmap_set_table_baseline(strcmp(lmpi_config.rankmap, "table") == 0);
    if (!lmpi_av_create(lmpi_av_world(), 0, world_size, node_of, world_rank, true))
        return LMPI_ERR_NO_MEM;
    lmpi_rt.node_id = lmpi_av_world()->my_node;
    lmpi_rankmap world_map, self_map;
    lmpi_rankmap_direct(&world_map, world_size, 0);
    if (lmpi_rankmap_table_baseline()) {
        lmpi_rankmap direct = world_map;
        if (!lmpi_rankmap_derive_pattern(&world_map, &direct, world_size, 0, 1, 1))
            return LMPI_ERR_NO_MEM;
        lmpi_rankmap_release(&direct);
    }
    if (!lmpi_rankmap_derive_pattern(&self_map, &world_map, 1, world_rank, 1, 1))
        return LMPI_ERR_NO_MEM;
    lmpi_comm *w = lmpi_comm_world, *s = lmpi_comm_self;
    w->map = world_map;
    s->map = self_map;
    w->rank = world_rank;
    w->size = w->peer_size = world_size;
    return LMPI_OK;
}

/* The predefined communicators stay usable for error reporting after
 * MPI_Finalize; what they hold is released. */
void lmpi_comm_finalize_builtin(void)
{
    for (unsigned i = 1; i < LMPI_COMM_BUILTIN_COUNT; i++) {
        lmpi_comm *c = &lmpi_comm_builtin[i];
        lmpi_attr_delete_all(&c->attrs, c->handle, 0);
        release_contents(c);
        c->map.size = 1;
        c->size = c->peer_size = 1;
        c->rank = 0;
        if (c->errh && c->errh->kind == LMPI_ERRH_USER_COMM) {
            lmpi_errhandler_release(c->errh);
            c->errh = lmpi_errhandler_from_handle(MPI_ERRORS_ARE_FATAL);
        }
    }
    lmpi_av_destroy(lmpi_av_world());
    lmpi_attr_finalize();
}

/* ---- internal node and node-roots communicators -------------------------------
 * Both are computable locally from the communicator's map and the node map,
 * so they need no communication and can be built on first use; their ids are
 * the parent's +2 and +3 (disjoint across nodes). */
int lmpi_comm_node_of(const lmpi_rankmap *m, int r)
{
    if (m->pgid == LMPI_PGID_MULTI)
        return (int)lmpi_rankmap_gpid(m, r).pgid;
    return lmpi_nodemap_node(&lmpi_av_world()->nodes, lmpi_rankmap_lpid(m, r));
}

int lmpi_comm_node_bound(const lmpi_rankmap *m)
{
    int b = lmpi_av_world()->nodes.nnodes + 1;
    if (m->pgid == LMPI_PGID_MULTI)
        for (int r = 0; r < m->size; r++)
            if ((int)m->mlut->e[r].pgid >= b)
                b = (int)m->mlut->e[r].pgid + 1;
    return b;
}

int lmpi_comm_my_node(const lmpi_rankmap *m) { return m->pgid == LMPI_PGID_MULTI ? 0 : lmpi_av_world()->my_node; }

lmpi_status lmpi_comm_node_comms(lmpi_comm *c, lmpi_comm **node, lmpi_comm **roots)
{
    if (!c->node_built) {
        const lmpi_rankmap *m = lmpi_comm_local_map(c);
        int *idx = lmpi_malloc(sizeof(int) * (size_t)(c->size + 1), LMPI_MEM_OTHER);
        int *ridx = lmpi_malloc(sizeof(int) * (size_t)(c->size + 1), LMPI_MEM_OTHER);
        /* first rank of c seen on each node: a node id -> seen flag */
        uint8_t *seen = lmpi_calloc((size_t)lmpi_comm_node_bound(m), 1, LMPI_MEM_OTHER);
        if (!idx || !ridx || !seen) {
            lmpi_free(idx), lmpi_free(ridx), lmpi_free(seen);
            return LMPI_ERR_NO_MEM;
        }
        int n = 0, nr = 0, my_local = -1, my_root = -1, my_node = lmpi_comm_my_node(m);
        for (int r = 0; r < c->size; r++) {
            int node = lmpi_comm_node_of(m, r);
            if (!seen[node]) {
                seen[node] = 1;
                if (r == c->rank)
                    my_root = nr;
                ridx[nr++] = r;
            }
            if (node == my_node) {
                if (r == c->rank)
                    my_local = n;
                idx[n++] = r;
            }
        }
        lmpi_status st = LMPI_OK;
        lmpi_rankmap nm, rm;
        if (n == c->size) { /* one node: the node communicator is c itself */
            c->node = c;
        } else if (lmpi_rankmap_derive(&nm, m, idx, n)) {
            c->node = lmpi_comm_alloc(&nm, my_local, c->context_id + LMPI_CTX_NODE);
            lmpi_rankmap_release(&nm);
            if (c->node) {
                c->node->flags = LMPI_COMM_INTERNAL;
                c->node->ft_parent = c;
            }
            else
                st = LMPI_ERR_NO_MEM;
        } else {
            st = LMPI_ERR_NO_MEM;
        }
        if (st == LMPI_OK && my_root >= 0 && nr > 1) {
            if (lmpi_rankmap_derive(&rm, m, ridx, nr)) {
                c->roots = lmpi_comm_alloc(&rm, my_root, c->context_id + LMPI_CTX_ROOTS);
                lmpi_rankmap_release(&rm);
                if (c->roots) {
                    c->roots->flags = LMPI_COMM_INTERNAL;
                    c->roots->ft_parent = c;
                }
                else
                    st = LMPI_ERR_NO_MEM;
            } else {
                st = LMPI_ERR_NO_MEM;
            }
        }
        lmpi_free(idx), lmpi_free(ridx), lmpi_free(seen);
        if (st != LMPI_OK)
            return st;
        c->nnodes = nr;
        c->node_built = 1;
    }
    *node = c->node;
    *roots = c->roots;
    return LMPI_OK;
}

/* ---- queries ---------------------------------------------------------------- */

lmpi_status lmpi_impl_Comm_rank(lmpi_comm *comm, int *rank)
{
    *rank = comm->rank;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_size(lmpi_comm *comm, int *size)
{
    *size = comm->size;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_remote_size(lmpi_comm *comm, int *size)
{
    if (!comm->is_inter) {
        lmpi_err_detail("%s is not an intercommunicator", lmpi_comm_display_name(comm));
        return LMPI_ERR_COMM;
    }
    *size = comm->peer_size;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_test_inter(lmpi_comm *comm, int *flag)
{
    *flag = comm->is_inter;
    return LMPI_OK;
}

/* The null handle has a name too (MPI 4.1): "MPI_COMM_NULL". */
lmpi_status lmpi_impl_Comm_get_name(MPI_Comm handle, char *comm_name, int *resultlen)
{
    lmpi_comm *comm = NULL;
    if (handle != MPI_COMM_NULL) {
        lmpi_status st = lmpi_check_comm(handle, &comm);
        if (st != LMPI_OK)
            return st;
    }
    if (!comm_name || !resultlen) {
        lmpi_err_detail("%s is NULL", comm_name ? "resultlen" : "comm_name");
        return LMPI_ERR_ARG;
    }
    const char *name = !comm                     ? "MPI_COMM_NULL"
                       : comm->name              ? comm->name
                       : comm == lmpi_comm_world ? "MPI_COMM_WORLD"
                       : comm == lmpi_comm_self  ? "MPI_COMM_SELF"
                                                 : "";
    size_t n = strnlen(name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(comm_name, name, n);
    comm_name[n] = '\0';
    *resultlen = (int)n;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_set_name(lmpi_comm *comm, const char *comm_name)
{
    return lmpi_set_object_name(&comm->name, comm_name, "comm_name", LMPI_MEM_COMM);
}

int lmpi_group_compare_maps(const lmpi_rankmap *a, const lmpi_rankmap *b);

lmpi_status lmpi_impl_Comm_compare(lmpi_comm *a, lmpi_comm *b, int *result)
{
    if (!b || b->magic != LMPI_MAGIC_COMM) {
        lmpi_err_detail("comm2 is %s", b && b->handle == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a communicator");
        return LMPI_ERR_COMM;
    }
    if (a == b) {
        *result = MPI_IDENT;
        return LMPI_OK;
    }
    if (a->is_inter != b->is_inter) {
        *result = MPI_UNEQUAL;
        return LMPI_OK;
    }
    int r = lmpi_group_compare_maps(lmpi_comm_local_map(a), lmpi_comm_local_map(b));
    if (a->is_inter && r != MPI_UNEQUAL) {
        int rr = lmpi_group_compare_maps(&a->map, &b->map);
        if (rr == MPI_UNEQUAL || (rr == MPI_SIMILAR && r == MPI_IDENT))
            r = rr;
    }
    *result = r == MPI_IDENT ? MPI_CONGRUENT : r;
    return LMPI_OK;
}

static lmpi_status free_comm(MPI_Comm *handle, const char *fn)
{
    lmpi_comm *c = lmpi_comm_from_handle(*handle);
    if (!c || c->magic != LMPI_MAGIC_COMM) {
        lmpi_err_detail(*handle == MPI_COMM_NULL ? "comm is MPI_COMM_NULL" : "comm is not a communicator");
        return LMPI_ERR_COMM;
    }
    if (c->flags & LMPI_COMM_PREDEFINED) {
        lmpi_err_detail("%s is predefined and cannot be passed to %s", lmpi_comm_display_name(c), fn);
        return LMPI_ERR_COMM;
    }
    lmpi_status st = lmpi_attr_delete_all(&c->attrs, c->handle, 0);
    if (st != LMPI_OK)
        return st;
    lmpi_comm_destroy(c);
    *handle = MPI_COMM_NULL;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_free(MPI_Comm *comm) { return free_comm(comm, "MPI_Comm_free"); }

/* Disconnect waits for pending communication: a barrier, then free. */
lmpi_status lmpi_impl_Comm_disconnect(MPI_Comm *comm)
{
    lmpi_comm *c = lmpi_comm_from_handle(*comm);
    if (c && c->magic == LMPI_MAGIC_COMM && !(c->flags & LMPI_COMM_PREDEFINED)) {
        uint32_t v = 0;
        lmpi_comm *local = c->is_inter ? c->local_comm : c;
        lmpi_status st = lmpi_icoll_allreduce_max_u32(local, &v);
        if (st != LMPI_OK)
            return st;
    }
    return free_comm(comm, "MPI_Comm_disconnect");
}

lmpi_status lmpi_impl_Comm_set_info(lmpi_comm *comm, MPI_Info info)
{
    lmpi_info *i;
    lmpi_status st = lmpi_info_arg(info, &i);
    if (st != LMPI_OK)
        return st;
    lmpi_info *copy = lmpi_info_copy(i);
    if (!copy)
        return LMPI_ERR_NO_MEM;
    lmpi_info_destroy(comm->info);
    comm->info = copy;
    return LMPI_OK;
}

/* The hints in use: what the user set, plus what LeanMPI decided for this
 * communicator (its rank-map mode). */
lmpi_status lmpi_impl_Comm_get_info(lmpi_comm *comm, MPI_Info *info_used)
{
    lmpi_info *i = lmpi_info_copy(comm->info);
    if (!i)
        return LMPI_ERR_NO_MEM;
    lmpi_status st = lmpi_info_put(i, "lmpi_rankmap", lmpi_rankmap_mode_name(comm->map.mode));
    /* where mpiexec --network placed this process (tests check placements) */
    if (st == LMPI_OK && comm == lmpi_comm_world && lmpi_rt.node_coords[0]) {
        st = lmpi_info_put(i, "lmpi_node", lmpi_rt.processor_name);
        if (st == LMPI_OK)
            st = lmpi_info_put(i, "lmpi_node_coords", lmpi_rt.node_coords);
        if (st == LMPI_OK && lmpi_rt.map_order[0])
            st = lmpi_info_put(i, "lmpi_map_order", lmpi_rt.map_order);
    }
    if (st != LMPI_OK) {
        lmpi_info_destroy(i);
        return st;
    }
    *info_used = (MPI_Info)i;
    return LMPI_OK;
}


bool lmpi_comm_one_host(const lmpi_comm *c, int *elsewhere)
{
    for (int r = 0; lmpi_tr_net.hosts && r < c->size; r++)
        if (!lmpi_tr_same_host(lmpi_comm_world_rank(c, r))) {
            *elsewhere = r;
            return false;
        }
    return true;
}

lmpi_status lmpi_comm_need_one_host(const lmpi_comm *c, const char *what)
{
    int r;
    if (LMPI_LIKELY(lmpi_comm_one_host(c, &r)))
        return LMPI_OK;
    lmpi_err_detail("%s needs every member on one host, and ranks %d and %d of the communicator run on "
                    "different hosts (not implemented between hosts yet)",
                    what, c->rank, r);
    return LMPI_ERR_UNSUPPORTED_OPERATION;
}
