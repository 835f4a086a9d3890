/* Virtual topologies: creation (with reordering onto the physical model,
 * remap.c), queries and their errors.  See vtopo.h. */
#include "topo/vtopo.h"

#include <hwloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binding/check.h"
#include "binding/gen/impl.h"
#include "runtime/config.h"
#include "runtime/info.h"
#include "topo/remap.h"

#define LMPI_MAX_DIMS_STACK 16

lmpi_topo_stats lmpi_topo_stat;

/* ---- the object ----------------------------------------------------------- */

/* Copy N ints; user arrays may be NULL when N is 0 (memcpy's may not). */
static void copy_ints(int *to, const int *from, int n)
{
    if (n > 0)
        memcpy(to, from, sizeof(int) * (size_t)n);
}

static lmpi_vtopo *vtopo_new(int kind, size_t nints)
{
    lmpi_vtopo *t = lmpi_calloc(1, sizeof(*t) + sizeof(int) * (nints ? nints : 1), LMPI_MEM_TOPO);
    if (t) {
        t->kind = kind;
        t->refs = 1;
    }
    return t;
}

void lmpi_vtopo_release(lmpi_vtopo *t)
{
    if (t && --t->refs == 0)
        lmpi_free(t);
}

/* The topology of comm, which must be of KIND (0: any); the errors the
 * standard names for each case. */
static lmpi_status topo_of(lmpi_comm *comm, int kind, lmpi_vtopo **t)
{
    if (comm->is_inter) {
        lmpi_err_detail("comm is an intercommunicator, which has no process topology");
        return LMPI_ERR_COMM;
    }
    if (!comm->topo || (kind && comm->topo->kind != kind)) {
        static const char *what[] = {"a Cartesian", "a graph", "a distributed graph"};
        lmpi_err_detail("comm %s has %s topology, not %s one", lmpi_comm_display_name(comm),
                        !comm->topo                       ? "no"
                        : comm->topo->kind == MPI_CART    ? "a Cartesian"
                        : comm->topo->kind == MPI_GRAPH   ? "a graph"
                                                          : "a distributed graph",
                        kind ? what[kind - MPI_CART] : "any");
        return LMPI_ERR_TOPOLOGY;
    }
    *t = comm->topo;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Topo_test(lmpi_comm *comm, int *status)
{
    *status = comm->topo ? comm->topo->kind : MPI_UNDEFINED;
    return LMPI_OK;
}

/* ---- Cartesian arithmetic --------------------------------------------------- */

static void cart_coords(const lmpi_vtopo *t, int rank, int *coords)
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

static int cart_rank_of(const lmpi_vtopo *t, const int *coords)
{
    int r = 0;
    for (int d = 0; d < t->ndims; d++)
        r = r * t->dims[d] + coords[d];
    return r;
}

/* The rank DISP steps along dimension D from RANK (MPI_PROC_NULL off a
 * non-periodic edge). */
static int cart_step(const lmpi_vtopo *t, int rank, int d, int disp)
{
    int c[LMPI_MAX_DIMS_STACK];
    int *coords = t->ndims <= LMPI_MAX_DIMS_STACK ? c : malloc(sizeof(int) * (size_t)t->ndims);
    if (!coords)
        return MPI_PROC_NULL;
    cart_coords(t, rank, coords);
    long v = (long)coords[d] + disp;
    int r;
    if (v < 0 || v >= t->dims[d]) {
        if (!t->periods[d]) {
            r = MPI_PROC_NULL;
            goto out;
        }
        v %= t->dims[d];
        if (v < 0)
            v += t->dims[d];
    }
    coords[d] = (int)v;
    r = cart_rank_of(t, coords);
out:
    if (coords != c)
        free(coords);
    return r;
}

/* Check DIMS: every entry positive, the product (in *prod) at most LIMIT. */
static lmpi_status check_dims(int ndims, const int dims[], const int periods[], long limit, long *prod)
{
    if (ndims < 0) {
        lmpi_err_detail("ndims is %d (negative)", ndims);
        return LMPI_ERR_DIMS;
    }
    if (ndims > 0 && (!dims || !periods)) {
        lmpi_err_detail("%s is NULL", dims ? "periods" : "dims");
        return LMPI_ERR_ARG;
    }
    long p = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0) {
            lmpi_err_detail("dims[%d] is %d (must be positive)", d, dims[d]);
            return LMPI_ERR_DIMS;
        }
        p *= dims[d];
        if (p > limit) { /* MPI_ERR_ARG, as MPICH 5.0.2 and Open MPI 5.0.11 answer */
            lmpi_err_detail("the grid has more than %ld processes (dims up to dims[%d]); the communicator has %ld",
                            limit, d, limit);
            return LMPI_ERR_ARG;
        }
    }
    *prod = p;
    return LMPI_OK;
}

/* A Cartesian topology for this process at RANK. */
static lmpi_vtopo *cart_new(int ndims, const int dims[], const int periods[], int rank)
{
    lmpi_vtopo *t = vtopo_new(MPI_CART, (size_t)ndims * 6);
    if (!t)
        return NULL;
    t->ndims = ndims;
    t->dims = t->ints;
    t->periods = t->dims + ndims;
    t->in = t->periods + ndims;
    t->out = t->in + 2 * ndims;
    for (int d = 0; d < ndims; d++) {
        t->dims[d] = dims[d];
        t->periods[d] = periods[d] != 0;
    }
    /* neighbours: per dimension the -1 then the +1 neighbour, for sources
     * and destinations alike (MPI 5.0 §8.6) */
    t->indeg = t->outdeg = 2 * ndims;
    for (int d = 0; d < ndims; d++) {
        t->in[2 * d] = t->out[2 * d] = cart_step(t, rank, d, -1);
        t->in[2 * d + 1] = t->out[2 * d + 1] = cart_step(t, rank, d, 1);
    }
    return t;
}

/* ---- the physical model of a communicator ----------------------------------- */

typedef struct {
    lmpi_phys ph;
    int *node_of;
    lmpi_net net;
    bool have_net;
} phys_model;

static int hw_sockets = -1, hw_cores_per_socket = 1;

/* Sockets and cores from hwloc: the machine, or LMPI_TOPO_HWLOC (a
 * synthetic description such as "package:2 core:16", or an XML file). */
static void load_hw(void)
{
    if (hw_sockets > 0)
        return;
    hw_sockets = 1;
    hw_cores_per_socket = 1;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo))
        return;
    const char *spec = lmpi_config.topo_hwloc;
    int bad = 0;
    if (spec && *spec)
        bad = strchr(spec, '/') || strstr(spec, ".xml") ? hwloc_topology_set_xml(topo, spec)
                                                         : hwloc_topology_set_synthetic(topo, spec);
    if (bad)
        fprintf(stderr, "LeanMPI: LMPI_TOPO_HWLOC=%s is neither a synthetic topology nor a readable XML file; "
                        "using this machine\n", spec);
    if (!bad || (hwloc_topology_destroy(topo), hwloc_topology_init(&topo)) == 0) {
        if (hwloc_topology_load(topo) == 0) {
            int pk = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
            int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
            if (pk < 1)
                pk = 1;
            if (cores < pk)
                cores = pk;
            hw_sockets = pk;
            hw_cores_per_socket = cores / pk;
        }
    }
    hwloc_topology_destroy(topo);
}

/* The network node of each world process, from mpiexec --network's
 * LMPI_VNODE_MAP (NULL: none). */
static int64_t *vnode_ids(int n)
{
    const char *m = getenv("LMPI_VNODE_MAP");
    if (!m || !*m)
        return NULL;
    int64_t *ids = lmpi_malloc(sizeof(int64_t) * (size_t)n, LMPI_MEM_TOPO);
    if (!ids)
        return NULL;
    for (int r = 0; r < n; r++) {
        char *end;
        ids[r] = strtoll(m, &end, 10);
        if (end == m) {
            lmpi_free(ids);
            return NULL;
        }
        m = *end ? end + 1 : end;
    }
    return ids;
}

/* The first N processes of COMM on the model: their nodes (renumbered in
 * order of first appearance), sockets, and the network between nodes. */
static lmpi_status phys_build(lmpi_comm *comm, int n, phys_model *pm)
{
    memset(pm, 0, sizeof(*pm));
    load_hw();
    lmpi_av *av = lmpi_av_world();
    pm->node_of = lmpi_malloc(sizeof(int) * (size_t)(n ? n : 1), LMPI_MEM_TOPO);
    int *dense = lmpi_malloc(sizeof(int) * (size_t)(av->size ? av->size : 1), LMPI_MEM_TOPO);
    if (!pm->node_of || !dense) {
        lmpi_free(pm->node_of);
        lmpi_free(dense);
        return LMPI_ERR_NO_MEM;
    }
    memset(dense, -1, sizeof(int) * (size_t)av->size);
    int nn = 0;
    int64_t *netnode = NULL;
    for (int r = 0; r < n; r++) {
        uint32_t lpid = lmpi_rankmap_lpid(&comm->map, r);
        int node = lmpi_nodemap_node(&av->nodes, lpid);
        if (dense[node] < 0)
            dense[node] = nn++;
        pm->node_of[r] = dense[node];
    }
    /* the network, where mpiexec modelled one: nodes' network ids */
    const char *spec = lmpi_config.network;
    int64_t *ids = spec && *spec ? vnode_ids(av->size) : NULL;
    char err[LMPI_NET_ERRLEN];
    if (ids && lmpi_net_parse(spec, hw_sockets * hw_cores_per_socket, &pm->net, err, sizeof(err)) == 0) {
        netnode = lmpi_malloc(sizeof(int64_t) * (size_t)(nn ? nn : 1), LMPI_MEM_TOPO);
        if (netnode) {
            for (int r = 0; r < n; r++)
                netnode[pm->node_of[r]] = ids[lmpi_rankmap_lpid(&comm->map, r)];
            pm->have_net = true;
        } else {
            lmpi_net_free(&pm->net);
        }
    }
    lmpi_free(ids);
    lmpi_free(dense);
    pm->ph = (lmpi_phys){.nprocs = n,
                         .node_of = pm->node_of,
                         .nnodes = nn,
                         .cores_per_socket = hw_cores_per_socket,
                         .sockets = hw_sockets,
                         .net = pm->have_net ? &pm->net : NULL,
                         .net_node = netnode};
    return LMPI_OK;
}

static void phys_free(phys_model *pm)
{
    lmpi_free(pm->node_of);
    lmpi_free((void *)pm->ph.net_node);
    if (pm->have_net)
        lmpi_net_free(&pm->net);
}

/* ---- reordering --------------------------------------------------------- */

static void quality_to_info(lmpi_comm *c, const lmpi_remap_quality *q)
{
    if (!c->info && !(c->info = lmpi_info_new()))
        return;
    char v[64];
    lmpi_info_put(c->info, "lmpi_topo_mapping", lmpi_remap_strategy_name(q->strategy));
#define PUT(key, val)                          \
    snprintf(v, sizeof(v), "%.0f", (val));    \
    lmpi_info_put(c->info, key, v);
    PUT("lmpi_topo_hop_bytes", q->chosen.hop_bytes);
    PUT("lmpi_topo_hop_bytes_launch", q->identity.hop_bytes);
    PUT("lmpi_topo_hop_bytes_block", q->block.hop_bytes);
    PUT("lmpi_topo_internode", q->chosen.internode);
    PUT("lmpi_topo_internode_launch", q->identity.internode);
    PUT("lmpi_topo_intersocket", q->chosen.intersocket);
    PUT("lmpi_topo_max_link", q->chosen.max_link);
    PUT("lmpi_topo_max_link_launch", q->identity.max_link);
#undef PUT
    snprintf(v, sizeof(v), "%.3f", q->millis);
    lmpi_info_put(c->info, "lmpi_topo_map_ms", v);
}

static void record(const lmpi_comm *old, const lmpi_remap_quality *q, const char *what, int n)
{
    if (q->strategy != LMPI_REMAP_IDENTITY)
        lmpi_topo_stat.reorders++;
    lmpi_topo_stat.hop_bytes = (uint64_t)q->chosen.hop_bytes;
    lmpi_topo_stat.hop_bytes_launch = (uint64_t)q->identity.hop_bytes;
    lmpi_topo_stat.hop_bytes_block = (uint64_t)q->block.hop_bytes;
    lmpi_topo_stat.internode = (uint64_t)q->chosen.internode;
    lmpi_topo_stat.max_link = (uint64_t)q->chosen.max_link;
    lmpi_topo_stat.micros = (uint64_t)(q->millis * 1e3);
    if (lmpi_config.topo_report && old->rank == 0)
        fprintf(stderr,
                "LeanMPI topology: %s of %d processes mapped by %s in %.3f ms: hop-bytes %.0f (as launched %.0f, "
                "block order %.0f), inter-node weight %.0f (as launched %.0f), inter-socket %.0f, heaviest node "
                "link %.0f (as launched %.0f)\n",
                what, n, lmpi_remap_strategy_name(q->strategy), q->millis, q->chosen.hop_bytes,
                q->identity.hop_bytes, q->block.hop_bytes, q->chosen.internode, q->identity.internode,
                q->chosen.intersocket, q->chosen.max_link, q->identity.max_link);
}

/* LMPI_TOPO_MAP: auto (analytic for grids, Scotch for graphs), scotch
 * (Scotch for grids too), identity (never reorder). */
static int map_mode(void)
{
    static bool warned;
    const char *m = lmpi_config.topo_map;
    if (!m || !*m || !strcmp(m, "auto"))
        return 0;
    if (!strcmp(m, "scotch"))
        return 1;
    if (!strcmp(m, "identity"))
        return 2;
    if (!warned && lmpi_rt.world_rank == 0)
        fprintf(stderr, "LeanMPI: LMPI_TOPO_MAP=%s is not auto, scotch or identity; using auto\n", m);
    warned = true;
    return 0;
}

/* A user's graph: stencil-like ones tiled, others through Scotch (auto);
 * always Scotch under LMPI_TOPO_MAP=scotch. */
static int map_graph(const lmpi_phys *ph, const lmpi_cgraph *g, int *slot_vertex, lmpi_remap_quality *q)
{
    char err[256];
    return map_mode() == 1 ? lmpi_remap_graph(ph, g, slot_vertex, q, err, sizeof(err))
                           : lmpi_remap_auto(ph, g, slot_vertex, q, err, sizeof(err));
}

/* slot_vertex for the first N processes of comm; computed where cheap and
 * deterministic on every process (grids), or on rank 0 and broadcast
 * (Scotch).  N entries. */
static lmpi_status reorder_cart(lmpi_comm *comm, int n, int ndims, const int *dims, const int *periods,
                                int *slot_vertex, lmpi_remap_quality *q)
{
    phys_model pm;
    LMPI_TRY(phys_build(comm, n, &pm));
    char err[256] = "";
    int mode = map_mode(), rc = 0;
    lmpi_status st = LMPI_OK;
    memset(q, 0, sizeof(*q));
    if (mode == 2) {
        for (int s = 0; s < n; s++)
            slot_vertex[s] = s;
    } else if (mode == 0 && (rc = lmpi_remap_cart(&pm.ph, ndims, dims, periods, false, slot_vertex, q, err,
                                                  sizeof(err))) <= 0) {
        /* tiled: every process reaches the same answer, no communication */
        if (rc < 0)
            st = LMPI_ERR_NO_MEM;
    } else {
        if (comm->rank == 0) {
            if (mode == 1) {
                lmpi_cgraph g;
                rc = lmpi_cgraph_cart(ndims, dims, periods, &g);
                if (rc == 0) {
                    rc = lmpi_remap_graph(&pm.ph, &g, slot_vertex, q, err, sizeof(err));
                    lmpi_cgraph_free(&g);
                }
            } else {
                rc = lmpi_remap_cart(&pm.ph, ndims, dims, periods, true, slot_vertex, q, err, sizeof(err));
            }
            if (rc)
                for (int s = 0; s < n; s++)
                    slot_vertex[s] = s;
        }
        st = lmpi_icoll_bcast(comm, slot_vertex, sizeof(int) * (size_t)n, 0);
        if (st == LMPI_OK)
            st = lmpi_icoll_bcast(comm, q, sizeof(*q), 0);
    }
    phys_free(&pm);
    return st;
}

static lmpi_status reorder_graph(lmpi_comm *comm, const lmpi_cgraph *g, int *slot_vertex, lmpi_remap_quality *q)
{
    int n = g->n;
    memset(q, 0, sizeof(*q));
    if (map_mode() == 2) {
        for (int s = 0; s < n; s++)
            slot_vertex[s] = s;
        return LMPI_OK;
    }
    phys_model pm;
    LMPI_TRY(phys_build(comm, n, &pm));
    if (comm->rank == 0) {
        if (map_graph(&pm.ph, g, slot_vertex, q))
            for (int s = 0; s < n; s++)
                slot_vertex[s] = s;
    }
    phys_free(&pm);
    LMPI_TRY(lmpi_icoll_bcast(comm, slot_vertex, sizeof(int) * (size_t)n, 0));
    return lmpi_icoll_bcast(comm, q, sizeof(*q), 0);
}

/* The new communicator: processes with a rank (newrank >= 0) in that
 * order, the others get MPI_COMM_NULL (*c NULL).  With Q (a reordering
 * happened): recorded, and its quality in the communicator's info, after
 * the user's INFO (NULL: none). */
static lmpi_status make_comm(lmpi_comm *old, int newrank, const lmpi_remap_quality *q, const char *what, int n,
                             lmpi_info *info, MPI_Comm *out, lmpi_comm **c)
{
    MPI_Comm h = MPI_COMM_NULL;
    LMPI_TRY(lmpi_impl_Comm_split(old, newrank >= 0 ? 0 : MPI_UNDEFINED, newrank >= 0 ? newrank : 0, &h));
    *c = h == MPI_COMM_NULL ? NULL : lmpi_comm_from_handle(h);
    *out = h;
    if (q)
        record(old, q, what, n);
    if (!*c)
        return LMPI_OK;
    if (info) {
        lmpi_info_destroy((*c)->info);
        if (!((*c)->info = lmpi_info_copy(info)))
            return LMPI_ERR_NO_MEM;
    }
    if (q)
        quality_to_info(*c, q);
    return LMPI_OK;
}

static lmpi_status not_inter(lmpi_comm *c, const char *arg)
{
    if (c->is_inter) {
        lmpi_err_detail("%s is an intercommunicator (process topologies need an intracommunicator)", arg);
        return LMPI_ERR_COMM;
    }
    return LMPI_OK;
}

/* ---- Cartesian ------------------------------------------------------------ */

lmpi_status lmpi_impl_Cart_create(lmpi_comm *old, int ndims, const int dims[], const int periods[], int reorder,
                                  MPI_Comm *comm_cart)
{
    LMPI_TRY(not_inter(old, "comm_old"));
    long p;
    LMPI_TRY(check_dims(ndims, dims, periods, old->size, &p));
    int n = (int)p, newrank = old->rank < n ? old->rank : -1;
    lmpi_remap_quality q;
    bool mapped = false;
    if (reorder && n > 1 && ndims > 0) {
        int *sv = lmpi_malloc(sizeof(int) * (size_t)n, LMPI_MEM_TOPO);
        if (!sv)
            return LMPI_ERR_NO_MEM;
        lmpi_status st = reorder_cart(old, n, ndims, dims, periods, sv, &q);
        if (st != LMPI_OK) {
            lmpi_free(sv);
            return st;
        }
        if (newrank >= 0)
            newrank = sv[newrank];
        lmpi_free(sv);
        mapped = map_mode() != 2;
    }
    lmpi_comm *c;
    LMPI_TRY(make_comm(old, newrank, mapped ? &q : NULL, "Cartesian grid", n, NULL, comm_cart, &c));
    if (c && !(c->topo = cart_new(ndims, dims, periods, c->rank)))
        return LMPI_ERR_NO_MEM;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Cartdim_get(lmpi_comm *comm, int *ndims)
{
    lmpi_vtopo *t;
    LMPI_TRY(topo_of(comm, MPI_CART, &t));
    *ndims = t->ndims;
    return LMPI_OK;
}

static lmpi_status check_max(int max, int need, const char *arg)
{
    if (max < need) {
        lmpi_err_detail("%s is %d; the topology needs %d", arg, max, need);
        return LMPI_ERR_ARG;
    }
    return LMPI_OK;
}

static lmpi_status check_rank(lmpi_comm *comm, int rank, int n)
{
    if (rank < 0 || rank >= n) {
        lmpi_err_detail("rank %d is not in communicator %s (size %d)", rank, lmpi_comm_display_name(comm), n);
        return LMPI_ERR_RANK;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Cart_get(lmpi_comm *comm, int maxdims, int dims[], int periods[], int coords[])
{
    lmpi_vtopo *t;
    LMPI_TRY(topo_of(comm, MPI_CART, &t));
    LMPI_TRY(check_max(maxdims, t->ndims, "maxdims"));
    if (t->ndims && (!dims || !periods || !coords)) {
        lmpi_err_detail("%s is NULL", !dims ? "dims" : !periods ? "periods" : "coords");
        return LMPI_ERR_ARG;
    }
    for (int d = 0; d < t->ndims; d++) {
        dims[d] = t->dims[d];
        periods[d] = t->periods[d];
    }
    if (t->ndims)
        cart_coords(t, comm->rank, coords);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Cart_coords(lmpi_comm *comm, int rank, int maxdims, int coords[])
{
    lmpi_vtopo *t;
    LMPI_TRY(topo_of(comm, MPI_CART, &t));
    LMPI_TRY(check_rank(comm, rank, comm->size));
    LMPI_TRY(check_max(maxdims, t->ndims, "maxdims"));
    if (t->ndims && !coords) {
        lmpi_err_detail("coords is NULL");
        return LMPI_ERR_ARG;
    }
    cart_coords(t, rank, coords);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Cart_rank(lmpi_comm *comm, const int coords[], int *rank)
{
    lmpi_vtopo *t;
    LMPI_TRY(topo_of(comm, MPI_CART, &t));
    if (t->ndims && !coords) {
        lmpi_err_detail("coords is NULL");
        return LMPI_ERR_ARG;
    }
    int r = 0;
    for (int d = 0; d < t->ndims; d++) {
        long c = coords[d];
        if (c < 0 || c >= t->dims[d]) {
            if (!t->periods[d]) {
                lmpi_err_detail("coords[%d] is %d, outside 0..%d of a non-periodic dimension", d, coords[d],
                                t->dims[d] - 1);
                return LMPI_ERR_ARG;
            }
            c %= t->dims[d];
            if (c < 0)
                c += t->dims[d];
        }
        r = r * t->dims[d] + (int)c;
    }
    *rank = r;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Cart_shift(lmpi_comm *comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    lmpi_vtopo *t;
    LMPI_TRY(topo_of(comm, MPI_CART, &t));
    if (direction < 0 || direction >= t->ndims) {
        lmpi_err_detail("direction %d is not a dimension of the %d-dimensional grid", direction, t->ndims);
        return LMPI_ERR_ARG;
    }
    if (!rank_source || !rank_dest) {
        lmpi_err_detail("%s is NULL", rank_source ? "rank_dest" : "rank_source");
        return LMPI_ERR_ARG;
    }
    *rank_source = cart_step(t, comm->rank, direction, -disp);
    *rank_dest = cart_step(t, comm->rank, direction, disp);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Cart_sub(lmpi_comm *comm, const int remain_dims[], MPI_Comm *newcomm)
{
    lmpi_vtopo *t;
    LMPI_TRY(topo_of(comm, MPI_CART, &t));
    if (t->ndims && !remain_dims) {
        lmpi_err_detail("remain_dims is NULL");
        return LMPI_ERR_ARG;
    }
    int nd = t->ndims;
    int *buf = lmpi_malloc(sizeof(int) * (size_t)(3 * nd + 1), LMPI_MEM_TOPO);
    if (!buf)
        return LMPI_ERR_NO_MEM;
    int *coords = buf, *dims = buf + nd, *periods = buf + 2 * nd;
    cart_coords(t, comm->rank, coords);
    /* color: my position among the dropped dimensions; key: among the kept */
    long color = 0, key = 0;
    int k = 0;
    for (int d = 0; d < nd; d++) {
        if (remain_dims[d]) {
            key = key * t->dims[d] + coords[d];
            dims[k] = t->dims[d];
            periods[k++] = t->periods[d];
        } else {
            color = color * t->dims[d] + coords[d];
        }
    }
    MPI_Comm h;
    lmpi_status st = lmpi_impl_Comm_split(comm, (int)color, (int)key, &h);
    if (st == LMPI_OK) {
        lmpi_comm *c = lmpi_comm_from_handle(h);
        if (!(c->topo = cart_new(k, dims, periods, c->rank)))
            st = LMPI_ERR_NO_MEM;
        *newcomm = h;
    }
    lmpi_free(buf);
    return st;
}

lmpi_status lmpi_impl_Cart_map(lmpi_comm *comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    LMPI_TRY(not_inter(comm, "comm"));
    long p;
    lmpi_status st = check_dims(ndims, dims, periods, comm->size, &p);
    if (st == LMPI_ERR_TOPOLOGY)
        st = LMPI_ERR_DIMS;
    LMPI_TRY(st);
    int n = (int)p;
    *newrank = comm->rank < n ? comm->rank : MPI_UNDEFINED;
    if (*newrank == MPI_UNDEFINED || n < 2 || ndims == 0 || map_mode() == 2)
        return LMPI_OK;
    /* local: the analytic tiling only (the same on every process) */
    phys_model pm;
    LMPI_TRY(phys_build(comm, n, &pm));
    int *sv = lmpi_malloc(sizeof(int) * (size_t)n, LMPI_MEM_TOPO);
    lmpi_remap_quality q;
    char err[256];
    if (sv && lmpi_remap_cart(&pm.ph, ndims, dims, periods, false, sv, &q, err, sizeof(err)) == 0)
        *newrank = sv[comm->rank];
    lmpi_free(sv);
    phys_free(&pm);
    return LMPI_OK;
}

/* ---- Dims_create ------------------------------------------------------------ */

/* The free dimensions as balanced as possible: the non-increasing factors
 * of n into k parts with the smallest largest-minus-smallest and, among
 * those, the smallest sum (5616 in 4: 13x9x8x6, not 13x12x6x6, both spread
 * 7; the choice MPICH 5.0.2 makes, compared on every n <= 20000 in 2-5
 * dimensions), and among those the one first in descending order (the
 * order the search before this one met them in).  Found by a depth-first
 * search over the divisors (at most 1600 for an int), each factor tried
 * from the smallest that can still lead the ones after it, and cut as soon
 * as the factors after it must leave a smaller one than the best spread
 * allows.  (The search before tried every factorization from the largest
 * factor down: 720720 in 6 took 23 ms, 735134400 in 8 16 s, in 20 over 2 min;
 * MPICH's suite's dims5, 75 000 calls, 7 s.) */
typedef struct {
    int k;
    int *best, *cur;
    long best_spread, best_sum;
    const long *div; /* divisors of the free product, ascending */
    int ndiv;
} dims_search;

/* v^c <= r, without overflow (r < 2^63, v >= 1) */
static bool pow_at_most(long v, int c, long r)
{
    long p = 1;
    for (int m = 0; m < c; m++) {
        if (p > r / v)
            return false;
        p *= v;
    }
    return true;
}

/* The largest x with x^c <= r (r >= 1, c >= 1). */
static long root_floor(long r, int c)
{
    if (c == 1)
        return r;
    long x = (long)pow((double)r, 1.0 / c); /* within one or two of it: then exact */
    if (x < 1)
        x = 1;
    while (x > 1 && !pow_at_most(x, c, r))
        x--;
    while (pow_at_most(x + 1, c, r))
        x++;
    return x;
}

static void dims_record(dims_search *s)
{
    long spread = s->cur[0] - s->cur[s->k - 1], sum = 0;
    for (int m = 0; m < s->k; m++)
        sum += s->cur[m];
    if (s->best_spread >= 0) {
        if (spread > s->best_spread)
            return;
        if (spread == s->best_spread) {
            if (sum > s->best_sum)
                return;
            if (sum == s->best_sum) {
                int m = 0;
                while (m < s->k && s->cur[m] == s->best[m])
                    m++;
                if (m == s->k || s->cur[m] < s->best[m])
                    return;
            }
        }
    }
    s->best_spread = spread;
    s->best_sum = sum;
    memcpy(s->best, s->cur, sizeof(int) * (size_t)s->k);
}

/* Factors i.. of the rest, each at most maxv. */
static void dims_dfs(dims_search *s, int i, long rest, long maxv)
{
    int c = s->k - i; /* factors still to choose */
    if (c == 1) {
        if (rest <= maxv) {
            s->cur[i] = (int)rest;
            dims_record(s);
        }
        return;
    }
    /* the next factor v leads the c from here: v^c >= rest, so v is at
     * least the c-th root of rest, rounded down; the first divisor there */
    long lo = root_floor(rest, c);
    int j = 0, hi = s->ndiv;
    while (j < hi) {
        int mid = (j + hi) / 2;
        if (s->div[mid] < lo)
            j = mid + 1;
        else
            hi = mid;
    }
    for (; j < s->ndiv && s->div[j] <= maxv; j++) {
        long v = s->div[j];
        if (rest % v || pow_at_most(v, c, rest - 1))
            continue; /* not a factor, or v^c < rest: the ones after v could not stay at or below it */
        /* the c - 1 factors after v multiply to rest / v, so the smallest
         * of them is at most its (c - 1)th root; a larger v only lowers
         * that (and raises the first factor when it is v) */
        long first = i == 0 ? v : s->cur[0];
        if (s->best_spread >= 0 && first - root_floor(rest / v, c - 1) > s->best_spread)
            break;
        s->cur[i] = (int)v;
        dims_dfs(s, i + 1, rest / v, v);
    }
}

static int long_asc(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* An int has at most 1600 divisors (and 9 distinct prime factors). */
#define DIMS_MAX_DIVISORS 2048

/* The divisors of n (1 <= n < 2^31), ascending, made from its prime
 * factors: trial division stops at the square root of what is left, so a
 * count such as 10^6 is factored in a few steps, not a thousand. */
static int divisors(long n, long div[DIMS_MAX_DIVISORS])
{
    long prime[16];
    int power[16], np = 0;
    for (long q = 2; q * q <= n; q += q == 2 ? 1 : 2)
        if (n % q == 0) {
            prime[np] = q;
            power[np] = 0;
            while (n % q == 0) {
                n /= q;
                power[np]++;
            }
            np++;
        }
    if (n > 1) {
        prime[np] = n;
        power[np++] = 1;
    }
    int nd = 1;
    div[0] = 1;
    for (int i = 0; i < np; i++) {
        int before = nd;
        long pw = 1;
        for (int e = 0; e < power[i]; e++) {
            pw *= prime[i];
            for (int j = 0; j < before && nd < DIMS_MAX_DIVISORS; j++)
                div[nd++] = div[j] * pw;
        }
    }
    qsort(div, (size_t)nd, sizeof(long), long_asc);
    return nd;
}

lmpi_status lmpi_impl_Dims_create(int nnodes, int ndims, int dims[])
{
    if (ndims < 0) {
        lmpi_err_detail("ndims is %d (negative)", ndims);
        return LMPI_ERR_DIMS;
    }
    if (nnodes < 0) {
        lmpi_err_detail("nnodes is %d (negative)", nnodes);
        return LMPI_ERR_ARG;
    }
    if (ndims > 0 && !dims) {
        lmpi_err_detail("dims is NULL");
        return LMPI_ERR_ARG;
    }
    long fixed = 1;
    int free_dims = 0;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 0) {
            lmpi_err_detail("dims[%d] is %d (negative)", d, dims[d]);
            return LMPI_ERR_DIMS;
        }
        if (dims[d] > 0)
            fixed *= dims[d];
        else
            free_dims++;
        if (fixed > (long)1 << 40)
            fixed = (long)1 << 40;
    }
    if (nnodes == 0) {
        /* MPI 4.1: only an all-zero (or empty) dims is meaningful */
        for (int d = 0; d < ndims; d++)
            if (dims[d] > 0) {
                lmpi_err_detail("nnodes is 0 but dims[%d] is %d", d, dims[d]);
                return LMPI_ERR_DIMS;
            }
        return LMPI_OK;
    }
    if (nnodes % fixed) {
        lmpi_err_detail("nnodes %d is not a multiple of the product %ld of the fixed dims", nnodes, fixed);
        return LMPI_ERR_DIMS;
    }
    if (free_dims == 0) {
        if (fixed != nnodes) {
            lmpi_err_detail("the fixed dims multiply to %ld, not nnodes %d", fixed, nnodes);
            return LMPI_ERR_DIMS;
        }
        return LMPI_OK;
    }
    long rest = nnodes / fixed;
    int *space = lmpi_malloc(sizeof(int) * 2 * (size_t)free_dims, LMPI_MEM_TOPO);
    if (!space)
        return LMPI_ERR_NO_MEM;
    long div[DIMS_MAX_DIVISORS];
    int nd = divisors(rest, div);
    dims_search s = {.k = free_dims, .best = space, .cur = space + free_dims, .best_spread = -1, .div = div, .ndiv = nd};
    dims_dfs(&s, 0, rest, rest);
    for (int d = 0, j = 0; d < ndims; d++)
        if (dims[d] == 0)
            dims[d] = s.best[j++];
    lmpi_free(space);
    return LMPI_OK;
}

/* ---- graph -------------------------------------------------------------------- */

static lmpi_status check_graph(int size, int nnodes, const int index[], const int edges[])
{
    if (nnodes < 0 || nnodes > size) {
        lmpi_err_detail("nnodes is %d; the communicator has %d processes", nnodes, size);
        return LMPI_ERR_ARG;
    }
    if (nnodes > 0 && !index) {
        lmpi_err_detail("index is NULL");
        return LMPI_ERR_ARG;
    }
    int prev = 0;
    for (int i = 0; i < nnodes; i++) {
        if (index[i] < prev) {
            lmpi_err_detail("index[%d] is %d, less than the %d before it (index is cumulative degrees)", i, index[i],
                            prev);
            return LMPI_ERR_ARG;
        }
        prev = index[i];
    }
    if (prev > 0 && !edges) {
        lmpi_err_detail("edges is NULL");
        return LMPI_ERR_ARG;
    }
    for (int e = 0; e < prev; e++)
        if (edges[e] < 0 || edges[e] >= nnodes) {
            lmpi_err_detail("edges[%d] is %d, not a node of the %d-node graph", e, edges[e], nnodes);
            return LMPI_ERR_ARG;
        }
    return LMPI_OK;
}

static lmpi_vtopo *graph_new(int nnodes, const int index[], const int edges[], int rank)
{
    int ne = nnodes ? index[nnodes - 1] : 0;
    lmpi_vtopo *t = vtopo_new(MPI_GRAPH, (size_t)nnodes + (size_t)ne);
    if (!t)
        return NULL;
    t->nnodes = nnodes;
    t->nedges = ne;
    t->index = t->ints;
    t->edges = t->index + nnodes;
    copy_ints(t->index, index, nnodes);
    copy_ints(t->edges, edges, ne);
    int from = rank ? index[rank - 1] : 0;
    t->indeg = t->outdeg = index[rank] - from;
    t->in = t->out = t->edges + from;
    return t;
}

lmpi_status lmpi_impl_Graph_create(lmpi_comm *old, int nnodes, const int index[], const int edges[], int reorder,
                                   MPI_Comm *comm_graph)
{
    LMPI_TRY(not_inter(old, "comm_old"));
    LMPI_TRY(check_graph(old->size, nnodes, index, edges));
    int newrank = old->rank < nnodes ? old->rank : -1;
    lmpi_remap_quality q;
    bool mapped = false;
    if (reorder && nnodes > 1 && map_mode() != 2) {
        int64_t *xadj = lmpi_malloc(sizeof(int64_t) * ((size_t)nnodes + 1), LMPI_MEM_TOPO);
        int *sv = lmpi_malloc(sizeof(int) * (size_t)nnodes, LMPI_MEM_TOPO);
        lmpi_status st = xadj && sv ? LMPI_OK : LMPI_ERR_NO_MEM;
        if (st == LMPI_OK) {
            xadj[0] = 0;
            for (int i = 0; i < nnodes; i++)
                xadj[i + 1] = index[i];
            lmpi_cgraph g = {.n = nnodes, .xadj = xadj, .adj = edges, .wgt = NULL};
            st = reorder_graph(old, &g, sv, &q);
            if (st == LMPI_OK && newrank >= 0)
                newrank = sv[newrank];
        }
        lmpi_free(xadj);
        lmpi_free(sv);
        LMPI_TRY(st);
        mapped = true;
    }
    lmpi_comm *c;
    LMPI_TRY(make_comm(old, newrank, mapped ? &q : NULL, "graph", nnodes, NULL, comm_graph, &c));
    if (c && !(c->topo = graph_new(nnodes, index, edges, c->rank)))
        return LMPI_ERR_NO_MEM;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Graphdims_get(lmpi_comm *comm, int *nnodes, int *nedges)
{
    lmpi_vtopo *t;
    LMPI_TRY(topo_of(comm, MPI_GRAPH, &t));
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Graph_get(lmpi_comm *comm, int maxindex, int maxedges, int index[], int edges[])
{
    lmpi_vtopo *t;
    LMPI_TRY(topo_of(comm, MPI_GRAPH, &t));
    LMPI_TRY(check_max(maxindex, t->nnodes, "maxindex"));
    LMPI_TRY(check_max(maxedges, t->nedges, "maxedges"));
    if ((t->nnodes && !index) || (t->nedges && !edges)) {
        lmpi_err_detail("%s is NULL", t->nnodes && !index ? "index" : "edges");
        return LMPI_ERR_ARG;
    }
    copy_ints(index, t->index, t->nnodes);
    copy_ints(edges, t->edges, t->nedges);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Graph_neighbors_count(lmpi_comm *comm, int rank, int *nneighbors)
{
    lmpi_vtopo *t;
    LMPI_TRY(topo_of(comm, MPI_GRAPH, &t));
    LMPI_TRY(check_rank(comm, rank, t->nnodes));
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Graph_neighbors(lmpi_comm *comm, int rank, int maxneighbors, int neighbors[])
{
    lmpi_vtopo *t;
    LMPI_TRY(topo_of(comm, MPI_GRAPH, &t));
    LMPI_TRY(check_rank(comm, rank, t->nnodes));
    int from = rank ? t->index[rank - 1] : 0, deg = t->index[rank] - from;
    LMPI_TRY(check_max(maxneighbors, deg, "maxneighbors"));
    if (deg && !neighbors) {
        lmpi_err_detail("neighbors is NULL");
        return LMPI_ERR_ARG;
    }
    copy_ints(neighbors, t->edges + from, deg);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Graph_map(lmpi_comm *comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    LMPI_TRY(not_inter(comm, "comm"));
    LMPI_TRY(check_graph(comm->size, nnodes, index, edges));
    *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    if (*newrank == MPI_UNDEFINED || nnodes < 2 || map_mode() == 2)
        return LMPI_OK;
    /* local and deterministic: Scotch from a reset random state maps the
     * same input the same way on every process */
    phys_model pm;
    LMPI_TRY(phys_build(comm, nnodes, &pm));
    int64_t *xadj = lmpi_malloc(sizeof(int64_t) * ((size_t)nnodes + 1), LMPI_MEM_TOPO);
    int *sv = lmpi_malloc(sizeof(int) * (size_t)nnodes, LMPI_MEM_TOPO);
    if (xadj && sv) {
        xadj[0] = 0;
        for (int i = 0; i < nnodes; i++)
            xadj[i + 1] = index[i];
        lmpi_cgraph g = {.n = nnodes, .xadj = xadj, .adj = edges, .wgt = NULL};
        lmpi_remap_quality q;
        if (map_graph(&pm.ph, &g, sv, &q) == 0)
            *newrank = sv[comm->rank];
    }
    lmpi_free(xadj);
    lmpi_free(sv);
    phys_free(&pm);
    return LMPI_OK;
}

/* ---- distributed graph --------------------------------------------------------- */

static bool unweighted(const int *w) { return w == MPI_UNWEIGHTED; }

static lmpi_status check_list(int size, int deg, const int *ranks, const int *w, const char *what, const char *wname)
{
    if (deg < 0) {
        lmpi_err_detail("%s degree is %d (negative)", what, deg);
        return LMPI_ERR_ARG;
    }
    if (deg > 0 && !ranks) {
        lmpi_err_detail("%s is NULL", what);
        return LMPI_ERR_ARG;
    }
    if (deg > 0 && w == MPI_WEIGHTS_EMPTY) {
        lmpi_err_detail("%s is MPI_WEIGHTS_EMPTY but the degree is %d", wname, deg);
        return LMPI_ERR_ARG;
    }
    if (deg > 0 && !w) {
        lmpi_err_detail("%s is NULL (MPI_UNWEIGHTED for no weights)", wname);
        return LMPI_ERR_ARG;
    }
    for (int i = 0; i < deg; i++) {
        if (ranks[i] < 0 || ranks[i] >= size) {
            lmpi_err_detail("%s[%d] is %d, not a rank of the %d-process communicator", what, i, ranks[i], size);
            return LMPI_ERR_RANK;
        }
        if (!unweighted(w) && w != MPI_WEIGHTS_EMPTY && w[i] < 0) {
            lmpi_err_detail("%s[%d] is %d (weights are non-negative)", wname, i, w[i]);
            return LMPI_ERR_ARG;
        }
    }
    return LMPI_OK;
}

static lmpi_vtopo *dist_new(int indeg, const int *in, const int *inw, int outdeg, const int *out, const int *outw,
                            bool weighted)
{
    lmpi_vtopo *t = vtopo_new(MPI_DIST_GRAPH, 2 * ((size_t)indeg + (size_t)outdeg));
    if (!t)
        return NULL;
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->weighted = weighted;
    t->in = t->ints;
    t->inw = t->in + indeg;
    t->out = t->inw + indeg;
    t->outw = t->out + outdeg;
    for (int i = 0; i < indeg; i++) {
        t->in[i] = in[i];
        t->inw[i] = weighted && inw ? inw[i] : 1;
    }
    for (int i = 0; i < outdeg; i++) {
        t->out[i] = out[i];
        t->outw[i] = weighted && outw ? outw[i] : 1;
    }
    return t;
}

/* Reorder a distributed graph: its edges (each process's out-edges) gathered
 * on rank 0, which maps them; every process learns every new rank (O(P),
 * to translate its neighbour lists).  sv[old rank] = new rank. */
static lmpi_status reorder_dist(lmpi_comm *comm, int outdeg, const int *out, const int *outw, int *sv,
                                lmpi_remap_quality *q)
{
    int n = comm->size, me = comm->rank;
    int *degs = lmpi_malloc(sizeof(int) * (size_t)n, LMPI_MEM_TOPO);
    if (!degs)
        return LMPI_ERR_NO_MEM;
    lmpi_status st = lmpi_icoll_allgather(comm, &outdeg, degs, sizeof(int));
    int64_t total = 0;
    for (int r = 0; st == LMPI_OK && r < n; r++)
        total += degs[r];
    int64_t *xadj = NULL;
    int *pairs = NULL, *mine = NULL, *counts = NULL, *displs = NULL;
    if (st == LMPI_OK) {
        mine = lmpi_malloc(sizeof(int) * 2 * (size_t)(outdeg + 1), LMPI_MEM_TOPO);
        if (me == 0) {
            xadj = lmpi_malloc(sizeof(int64_t) * ((size_t)n + 1), LMPI_MEM_TOPO);
            pairs = lmpi_malloc(sizeof(int) * 2 * (size_t)(total + 1), LMPI_MEM_TOPO);
            counts = lmpi_malloc(sizeof(int) * 2 * (size_t)n, LMPI_MEM_TOPO);
        }
        if (!mine || (me == 0 && (!xadj || !pairs || !counts)))
            st = LMPI_ERR_NO_MEM;
    }
    if (st == LMPI_OK) {
        for (int i = 0; i < outdeg; i++) {
            mine[2 * i] = out[i];
            mine[2 * i + 1] = unweighted(outw) || !outw ? 1 : outw[i];
        }
        if (me == 0) {
            displs = counts + n;
            int at = 0;
            for (int r = 0; r < n; r++) {
                counts[r] = 2 * degs[r];
                displs[r] = at;
                at += counts[r];
            }
        }
        lmpi_datatype *it = lmpi_datatype_from_handle(MPI_INT);
        st = lmpi_impl_Gatherv(mine, 2 * outdeg, it, pairs, (lmpi_iarray){counts, 4}, (lmpi_iarray){displs, 4}, it,
                               0, comm);
    }
    if (st == LMPI_OK && me == 0) {
        /* adjacency in CSR: adj and weights interleaved -> split in place */
        int *adj = lmpi_malloc(sizeof(int) * (size_t)(total + 1), LMPI_MEM_TOPO);
        int *w = lmpi_malloc(sizeof(int) * (size_t)(total + 1), LMPI_MEM_TOPO);
        if (!adj || !w) {
            st = LMPI_ERR_NO_MEM;
        } else {
            xadj[0] = 0;
            for (int r = 0; r < n; r++)
                xadj[r + 1] = xadj[r] + degs[r];
            for (int64_t e = 0; e < total; e++) {
                adj[e] = pairs[2 * e];
                w[e] = pairs[2 * e + 1];
            }
            lmpi_cgraph g = {.n = n, .xadj = xadj, .adj = adj, .wgt = w};
            phys_model pm;
            st = phys_build(comm, n, &pm);
            if (st == LMPI_OK) {
                int *slot_vertex = lmpi_malloc(sizeof(int) * (size_t)n, LMPI_MEM_TOPO);
                if (!slot_vertex)
                    st = LMPI_ERR_NO_MEM;
                else if (map_graph(&pm.ph, &g, slot_vertex, q) == 0)
                    memcpy(sv, slot_vertex, sizeof(int) * (size_t)n);
                else
                    for (int r = 0; r < n; r++)
                        sv[r] = r;
                lmpi_free(slot_vertex);
                phys_free(&pm);
            }
        }
        lmpi_free(adj);
        lmpi_free(w);
    }
    lmpi_free(degs);
    lmpi_free(xadj);
    lmpi_free(pairs);
    lmpi_free(mine);
    lmpi_free(counts);
    /* everyone takes part in the broadcasts, also after a failure on rank 0
     * (the identity then) */
    if (me == 0 && st != LMPI_OK)
        for (int r = 0; r < n; r++)
            sv[r] = r;
    lmpi_status b = lmpi_icoll_bcast(comm, sv, sizeof(int) * (size_t)n, 0);
    if (b == LMPI_OK)
        b = lmpi_icoll_bcast(comm, q, sizeof(*q), 0);
    return st != LMPI_OK ? st : b;
}

/* Create the communicator (reordered or not) and attach the lists, which
 * are in comm_old's ranks. */
static lmpi_status dist_finish(lmpi_comm *old, int indeg, int *in, const int *inw, int outdeg, int *out,
                               const int *outw, bool weighted, int reorder, lmpi_info *info, MPI_Comm *result)
{
    int newrank = old->rank;
    lmpi_remap_quality q;
    bool mapped = false;
    if (reorder && old->size > 1 && map_mode() != 2) {
        int *sv = lmpi_malloc(sizeof(int) * (size_t)old->size, LMPI_MEM_TOPO);
        if (!sv)
            return LMPI_ERR_NO_MEM;
        lmpi_status st = reorder_dist(old, outdeg, out, weighted ? outw : NULL, sv, &q);
        if (st == LMPI_OK) {
            newrank = sv[old->rank];
            for (int i = 0; i < indeg; i++)
                in[i] = sv[in[i]];
            for (int i = 0; i < outdeg; i++)
                out[i] = sv[out[i]];
        }
        lmpi_free(sv);
        LMPI_TRY(st);
        mapped = true;
    }
    lmpi_comm *c; /* every process has a rank in a distributed graph */
    LMPI_TRY(make_comm(old, newrank, mapped ? &q : NULL, "distributed graph", old->size, info, result, &c));
    if (!(c->topo = dist_new(indeg, in, inw, outdeg, out, outw, weighted)))
        return LMPI_ERR_NO_MEM;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Dist_graph_create_adjacent(lmpi_comm *old, int indegree, const int sources[],
                                                 const int *sourceweights, int outdegree, const int destinations[],
                                                 const int *destweights, MPI_Info info, int reorder,
                                                 MPI_Comm *comm_dist_graph)
{
    LMPI_TRY(not_inter(old, "comm_old"));
    lmpi_info *inf;
    LMPI_TRY(lmpi_info_arg(info, &inf));
    LMPI_TRY(check_list(old->size, indegree, sources, sourceweights, "sources", "sourceweights"));
    LMPI_TRY(check_list(old->size, outdegree, destinations, destweights, "destinations", "destweights"));
    bool weighted = !unweighted(sourceweights) || !unweighted(destweights);
    int *lists = lmpi_malloc(sizeof(int) * ((size_t)indegree + (size_t)outdegree + 1), LMPI_MEM_TOPO);
    if (!lists)
        return LMPI_ERR_NO_MEM;
    copy_ints(lists, sources, indegree);
    copy_ints(lists + indegree, destinations, outdegree);
    const int *inw = unweighted(sourceweights) || sourceweights == MPI_WEIGHTS_EMPTY ? NULL : sourceweights;
    const int *outw = unweighted(destweights) || destweights == MPI_WEIGHTS_EMPTY ? NULL : destweights;
    lmpi_status st = dist_finish(old, indegree, lists, inw, outdegree, lists + indegree, outw, weighted, reorder,
                                 inf, comm_dist_graph);
    lmpi_free(lists);
    return st;
}

/* MPI_Dist_graph_create: any process may name any edge; each edge goes to
 * its source (an out-edge) and its destination (an in-edge) in one
 * all-to-all, in the order of the processes that named them, so that
 * repeated edges pair up. */
lmpi_status lmpi_impl_Dist_graph_create(lmpi_comm *old, int n, const int sources[], const int degrees[],
                                        const int destinations[], const int *weights, MPI_Info info, int reorder,
                                        MPI_Comm *comm_dist_graph)
{
    LMPI_TRY(not_inter(old, "comm_old"));
    lmpi_info *inf;
    LMPI_TRY(lmpi_info_arg(info, &inf));
    int size = old->size;
    if (n < 0) {
        lmpi_err_detail("n is %d (negative)", n);
        return LMPI_ERR_ARG;
    }
    if (n > 0 && (!sources || !degrees)) {
        lmpi_err_detail("%s is NULL", sources ? "degrees" : "sources");
        return LMPI_ERR_ARG;
    }
    long ne = 0;
    for (int i = 0; i < n; i++) {
        if (sources[i] < 0 || sources[i] >= size) {
            lmpi_err_detail("sources[%d] is %d, not a rank of the %d-process communicator", i, sources[i], size);
            return LMPI_ERR_RANK;
        }
        if (degrees[i] < 0) {
            lmpi_err_detail("degrees[%d] is %d (negative)", i, degrees[i]);
            return LMPI_ERR_ARG;
        }
        ne += degrees[i];
    }
    LMPI_TRY(check_list(size, (int)ne, destinations, weights, "destinations", "weights"));
    bool weighted = !unweighted(weights);
    const int *w = weighted && weights != MPI_WEIGHTS_EMPTY ? weights : NULL;
    /* records of 3 ints: (is_out, peer, weight) to each owner */
    int *scount = lmpi_calloc(4 * (size_t)size, sizeof(int), LMPI_MEM_TOPO);
    int *recs = lmpi_malloc(sizeof(int) * 6 * (size_t)(ne + 1), LMPI_MEM_TOPO);
    if (!scount || !recs) {
        lmpi_free(scount);
        lmpi_free(recs);
        return LMPI_ERR_NO_MEM;
    }
    int *sdispl = scount + size, *rcount = scount + 2 * size, *rdispl = scount + 3 * size;
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            scount[sources[i]] += 3;
            scount[destinations[e]] += 3;
        }
    for (int r = 0, at = 0; r < size; r++) {
        sdispl[r] = at;
        at += scount[r];
    }
    int *fill = lmpi_calloc((size_t)size, sizeof(int), LMPI_MEM_TOPO);
    lmpi_status st = fill ? LMPI_OK : LMPI_ERR_NO_MEM;
    for (int i = 0, e = 0; st == LMPI_OK && i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            int s = sources[i], d = destinations[e], wt = w ? w[e] : 1;
            int *o = recs + sdispl[s] + fill[s];
            o[0] = 1, o[1] = d, o[2] = wt;
            fill[s] += 3;
            int *ii = recs + sdispl[d] + fill[d];
            ii[0] = 0, ii[1] = s, ii[2] = wt;
            fill[d] += 3;
        }
    lmpi_free(fill);
    lmpi_datatype *it = lmpi_datatype_from_handle(MPI_INT);
    if (st == LMPI_OK)
        st = lmpi_impl_Alltoall(scount, 1, it, rcount, 1, it, old);
    int *in_recs = NULL;
    long rtotal = 0;
    if (st == LMPI_OK) {
        for (int r = 0; r < size; r++) {
            rdispl[r] = (int)rtotal;
            rtotal += rcount[r];
        }
        in_recs = lmpi_malloc(sizeof(int) * (size_t)(rtotal + 1), LMPI_MEM_TOPO);
        if (!in_recs)
            st = LMPI_ERR_NO_MEM;
    }
    if (st == LMPI_OK)
        st = lmpi_impl_Alltoallv(recs, (lmpi_iarray){scount, 4}, (lmpi_iarray){sdispl, 4}, it, in_recs,
                                 (lmpi_iarray){rcount, 4}, (lmpi_iarray){rdispl, 4}, it, old);
    lmpi_free(recs);
    if (st == LMPI_OK) {
        int nrec = (int)(rtotal / 3), indeg = 0, outdeg = 0;
        for (int k = 0; k < nrec; k++)
            in_recs[3 * k] ? outdeg++ : indeg++;
        int *lists = lmpi_malloc(sizeof(int) * 2 * ((size_t)nrec + 1), LMPI_MEM_TOPO);
        if (!lists) {
            st = LMPI_ERR_NO_MEM;
        } else {
            int *in = lists, *out = lists + indeg, *inw = lists + nrec, *outw = inw + indeg;
            for (int k = 0, a = 0, b = 0; k < nrec; k++) {
                if (in_recs[3 * k]) {
                    out[b] = in_recs[3 * k + 1];
                    outw[b++] = in_recs[3 * k + 2];
                } else {
                    in[a] = in_recs[3 * k + 1];
                    inw[a++] = in_recs[3 * k + 2];
                }
            }
            st = dist_finish(old, indeg, in, inw, outdeg, out, outw, weighted, reorder, inf, comm_dist_graph);
            lmpi_free(lists);
        }
    }
    lmpi_free(in_recs);
    lmpi_free(scount);
    return st;
}

lmpi_status lmpi_impl_Dist_graph_neighbors_count(lmpi_comm *comm, int *indegree, int *outdegree, int *weighted)
{
    lmpi_vtopo *t;
    LMPI_TRY(topo_of(comm, MPI_DIST_GRAPH, &t));
    *indegree = t->indeg;
    *outdegree = t->outdeg;
    *weighted = t->weighted;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Dist_graph_neighbors(lmpi_comm *comm, int maxindegree, int sources[], int *sourceweights,
                                           int maxoutdegree, int destinations[], int *destweights)
{
    lmpi_vtopo *t;
    LMPI_TRY(topo_of(comm, MPI_DIST_GRAPH, &t));
    LMPI_TRY(check_max(maxindegree, t->indeg, "maxindegree"));
    LMPI_TRY(check_max(maxoutdegree, t->outdeg, "maxoutdegree"));
    if ((t->indeg && !sources) || (t->outdeg && !destinations)) {
        lmpi_err_detail("%s is NULL", t->indeg && !sources ? "sources" : "destinations");
        return LMPI_ERR_ARG;
    }
    copy_ints(sources, t->in, t->indeg);
    copy_ints(destinations, t->out, t->outdeg);
    bool sw = t->weighted && sourceweights && !unweighted(sourceweights) && sourceweights != MPI_WEIGHTS_EMPTY;
    bool dw = t->weighted && destweights && !unweighted(destweights) && destweights != MPI_WEIGHTS_EMPTY;
    if (sw)
        copy_ints(sourceweights, t->inw, t->indeg);
    if (dw)
        copy_ints(destweights, t->outw, t->outdeg);
    return LMPI_OK;
}
