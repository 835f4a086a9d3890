/* Reordering onto the physical model: the analytic tiling of Cartesian
 * grids and the two-level Scotch mapping of general graphs (remap.h). */
#include "topo/remap.h"

#include <scotch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXD 32

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

const char *lmpi_remap_strategy_name(lmpi_remap_strategy s)
{
    static const char *names[] = {"identity", "analytic", "scotch"};
    return names[s];
}

/* ---- the physical model ---------------------------------------------------- */

/* Each slot's socket: its local index on its node over the cores per
 * socket (wrapping over the node's sockets when ranks outnumber cores). */
static int *slot_sockets(const lmpi_phys *ph)
{
    int *sock = malloc(sizeof(int) * (size_t)(ph->nprocs ? ph->nprocs : 1));
    int *seen = calloc((size_t)(ph->nnodes ? ph->nnodes : 1), sizeof(int));
    if (!sock || !seen) {
        free(sock);
        free(seen);
        return NULL;
    }
    for (int s = 0; s < ph->nprocs; s++)
        sock[s] = (seen[ph->node_of[s]]++ / ph->cores_per_socket) % ph->sockets;
    free(seen);
    return sock;
}

static int net_links(const lmpi_net *net, int a, int b)
{
    if (!net)
        return 2;
    if (a >= net->nodes || b >= net->nodes)
        return 2;
    if (net->kind == LMPI_NET_TREE) {
        int x = a, y = b, links = 0;
        while (x != y) {
            if (net->depth[x] >= net->depth[y])
                x = net->parent[x];
            else
                y = net->parent[y];
            links++;
            if (x < 0 || y < 0)
                return links + 2;
        }
        return links;
    }
    int links = 0;
    for (int d = 0; d < net->ndims; d++) {
        int ca = lmpi_net_coord(net, a, d), cb = lmpi_net_coord(net, b, d), diff = abs(ca - cb);
        if (net->kind == LMPI_NET_TORUS && net->dims[d] - diff < diff)
            diff = net->dims[d] - diff;
        links += diff;
    }
    return links;
}

/* Network links between two slots' nodes (0 on one node). */
static inline int distance(const lmpi_phys *ph, int a, int b)
{
    int na = ph->node_of[a], nb = ph->node_of[b];
    if (na == nb)
        return 0;
    return ph->net_node ? net_links(ph->net, (int)ph->net_node[na], (int)ph->net_node[nb]) : net_links(ph->net, na, nb);
}

int lmpi_phys_distance(const lmpi_phys *ph, int a, int b) { return distance(ph, a, b); }

/* vertex -> slot from slot -> vertex (identity when NULL). */
static int *invert(const int *slot_vertex, int n)
{
    int *v2s = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!v2s)
        return NULL;
    for (int s = 0; s < n; s++)
        v2s[slot_vertex ? slot_vertex[s] : s] = s;
    return v2s;
}

static void cost_with(const lmpi_phys *ph, const int *sock, const lmpi_cgraph *g, const int *v2s, lmpi_remap_cost_t *c)
{
    memset(c, 0, sizeof(*c));
    double *up = calloc((size_t)(ph->nnodes ? ph->nnodes : 1), sizeof(double));
    for (int v = 0; v < g->n; v++) {
        int a = v2s[v];
        for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
            int b = v2s[g->adj[e]];
            double w = g->wgt ? g->wgt[e] : 1;
            if (ph->node_of[a] != ph->node_of[b]) {
                c->hop_bytes += w * distance(ph, a, b);
                c->internode += w;
                if (up) {
                    up[ph->node_of[a]] += w;
                    up[ph->node_of[b]] += w;
                }
            } else if (sock[a] != sock[b]) {
                c->intersocket += w;
            }
        }
    }
    for (int n = 0; up && n < ph->nnodes; n++)
        c->max_link = up[n] > c->max_link ? up[n] : c->max_link;
    free(up);
}

void lmpi_remap_cost(const lmpi_phys *ph, const lmpi_cgraph *g, const int *slot_vertex, lmpi_remap_cost_t *c)
{
    int *sock = slot_sockets(ph), *v2s = invert(slot_vertex, g->n);
    memset(c, 0, sizeof(*c));
    if (sock && v2s)
        cost_with(ph, sock, g, v2s, c);
    free(sock);
    free(v2s);
}

/* Slots in block order: node by node (in node id order), each node's slots
 * in local order.  order[k] = the k-th slot. */
static int *block_order(const lmpi_phys *ph)
{
    int n = ph->nprocs;
    int *start = calloc((size_t)ph->nnodes + 1, sizeof(int)), *order = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!start || !order) {
        free(start);
        free(order);
        return NULL;
    }
    for (int s = 0; s < n; s++)
        start[ph->node_of[s] + 1]++;
    for (int i = 0; i < ph->nnodes; i++)
        start[i + 1] += start[i];
    for (int s = 0; s < n; s++)
        order[start[ph->node_of[s]]++] = s;
    free(start);
    return order;
}

/* ---- Cartesian grids -------------------------------------------------------- */

int lmpi_cgraph_cart(int ndims, const int *dims, const int *periods, lmpi_cgraph *g)
{
    int64_t n = 1;
    for (int d = 0; d < ndims; d++)
        n *= dims[d];
    int64_t *xadj = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int *adj = malloc(sizeof(int) * (size_t)(n * 2 * (ndims ? ndims : 1) + 1));
    if (!xadj || !adj) {
        free(xadj);
        free(adj);
        return -1;
    }
    int64_t e = 0;
    for (int64_t v = 0; v < n; v++) {
        xadj[v] = e;
        int64_t stride = 1;
        for (int d = ndims - 1; d >= 0; d--) {
            int c = (int)((v / stride) % dims[d]);
            for (int dir = -1; dir <= 1; dir += 2) {
                int nc = c + dir;
                if (nc < 0 || nc >= dims[d]) {
                    if (!periods[d] || dims[d] == 1)
                        continue;
                    nc = (nc + dims[d]) % dims[d];
                }
                adj[e++] = (int)(v + (int64_t)(nc - c) * stride);
            }
            stride *= dims[d];
        }
    }
    xadj[n] = e;
    *g = (lmpi_cgraph){.n = (int)n, .xadj = xadj, .adj = adj, .wgt = NULL};
    return 0;
}

void lmpi_cgraph_free(lmpi_cgraph *g)
{
    free((void *)g->xadj);
    free((void *)g->adj);
    free((void *)g->wgt);
    memset(g, 0, sizeof(*g));
}

/* The tile t (t[i] divides d[i], product c) that cuts the fewest grid
 * edges: along dimension i the grid is cut d[i]/t[i] - 1 times (periodic:
 * d[i]/t[i] times when that is more than 1), each cut crossing the
 * P/d[i] lines of the other dimensions in both directions; 0 when found. */
static int best_tile(int ndims, const int *d, const int *periods, int c, int *t)
{
    int cur[MAXD];
    double best = -1;
    /* depth-first over divisors of each dimension */
    int i = 0;
    cur[0] = 0;
    int rest[MAXD + 1];
    rest[0] = c;
    while (i >= 0) {
        if (i == ndims) {
            if (rest[i] == 1) {
                double cost = 0, p = 1;
                for (int k = 0; k < ndims; k++)
                    p *= d[k];
                for (int k = 0; k < ndims; k++) {
                    int parts = d[k] / cur[k], cuts = periods && periods[k] && parts > 1 ? parts : parts - 1;
                    cost += 2.0 * (p / d[k]) * cuts;
                }
                if (best < 0 || cost < best) {
                    best = cost;
                    memcpy(t, cur, sizeof(int) * (size_t)ndims);
                }
            }
            i--;
            continue;
        }
        int next = cur[i] + 1; /* candidate sizes of dimension i, increasing */
        while (next <= d[i] && (d[i] % next || rest[i] % next))
            next++;
        if (next > d[i]) {
            cur[i] = 0;
            i--;
            continue;
        }
        cur[i] = next;
        rest[i + 1] = rest[i] / next;
        if (i + 1 < ndims)
            cur[i + 1] = 0;
        i++;
    }
    return best < 0 ? 1 : 0;
}

/* Row-major index of coords within box dims. */
static int64_t rowmajor(int ndims, const int *dims, const int *coords)
{
    int64_t r = 0;
    for (int k = 0; k < ndims; k++)
        r = r * dims[k] + coords[k];
    return r;
}

static void unrank(int ndims, const int *dims, int64_t r, int *coords)
{
    for (int k = ndims - 1; k >= 0; k--) {
        coords[k] = (int)(r % dims[k]);
        r /= dims[k];
    }
}

int lmpi_remap_cart_analytic(const lmpi_phys *ph, int ndims, const int *dims, const int *periods, int *slot_vertex)
{
    int n = ph->nprocs;
    if (ndims < 1 || ndims > MAXD || n < 2)
        return 1;
    int *count = calloc((size_t)ph->nnodes, sizeof(int));
    if (!count)
        return -1;
    for (int s = 0; s < n; s++)
        count[ph->node_of[s]]++;
    int c = 0, used = 0;
    for (int i = 0; i < ph->nnodes; i++) {
        if (!count[i])
            continue;
        if (c && count[i] != c)
            c = -1;
        if (c >= 0)
            c = count[i];
        used++;
    }
    free(count);
    if (c <= 0 || used < 1)
        return 1;
    int tile[MAXD], sub[MAXD], grid[MAXD], inner[MAXD];
    if (best_tile(ndims, dims, periods, c, tile))
        return 1;
    /* inside a node, sockets: a sub-tile of cores_per_socket cells when it
     * divides the tile (else the tile's cells in row-major order) */
    int cps = ph->cores_per_socket;
    bool sockets = cps < c && c % cps == 0 && !best_tile(ndims, tile, NULL, cps, sub);
    if (!sockets)
        memcpy(sub, tile, sizeof(int) * (size_t)ndims);
    int per_sub = sockets ? cps : c;
    for (int k = 0; k < ndims; k++) {
        grid[k] = dims[k] / tile[k];
        inner[k] = tile[k] / sub[k];
    }
    int *order = block_order(ph);
    if (!order)
        return -1;
    /* row-major ranks are linear in the coordinates: a cell's vertex is its
     * tile origin's plus the offset of its place in the tile, computed
     * once for the c places */
    int64_t *delta = malloc(sizeof(int64_t) * (size_t)c);
    if (!delta) {
        free(order);
        return -1;
    }
    int coords[MAXD], tc[MAXD], sc[MAXD], ec[MAXD];
    for (int l = 0; l < c; l++) {
        unrank(ndims, inner, l / per_sub, sc);
        unrank(ndims, sub, l % per_sub, ec);
        for (int i = 0; i < ndims; i++)
            coords[i] = sc[i] * sub[i] + ec[i];
        delta[l] = rowmajor(ndims, dims, coords);
    }
    for (int k = 0; k < n; k += c) {
        unrank(ndims, grid, k / c, tc);
        for (int i = 0; i < ndims; i++)
            coords[i] = tc[i] * tile[i];
        int64_t origin = rowmajor(ndims, dims, coords);
        for (int l = 0; l < c; l++)
            slot_vertex[order[k + l]] = (int)(origin + delta[l]);
    }
    free(delta);
    free(order);
    return 0;
}

/* ---- general graphs: two levels with Scotch --------------------------------- */

/* The undirected simple graph Scotch wants: both directions of every edge,
 * weights summed, no self-loops.  Vertices in subset only (sub_of[v] >= 0
 * gives the new number), or all when sub_of is NULL. */
typedef struct {
    SCOTCH_Num n, *vert, *edge, *wgt;
} sgraph;

typedef struct {
    int a, b, w;
} pair;

static int pair_cmp(const void *x, const void *y)
{
    const pair *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

static void sgraph_free(sgraph *s)
{
    free(s->vert);
    free(s->edge);
    free(s->wgt);
}

/* VERTS (m of them, numbered sub_of[v] = 0..m-1 and -1 elsewhere), or the
 * whole graph when VERTS is NULL. */
static int sgraph_build(const lmpi_cgraph *g, const int *verts, int m, const int *sub_of, sgraph *s)
{
    int n = verts ? m : g->n;
    int64_t edges = 0;
    for (int i = 0; i < n; i++) {
        int v = verts ? verts[i] : i;
        edges += g->xadj[v + 1] - g->xadj[v];
    }
    pair *p = malloc(sizeof(pair) * (size_t)(2 * edges + 1));
    if (!p)
        return -1;
    int64_t k = 0;
    for (int i = 0; i < n; i++) {
        int v = verts ? verts[i] : i;
        for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
            int u = g->adj[e];
            if (u == v || (verts && sub_of[u] < 0))
                continue;
            int a = verts ? sub_of[v] : v, b = verts ? sub_of[u] : u, w = g->wgt && g->wgt[e] > 0 ? g->wgt[e] : 1;
            p[k++] = (pair){a, b, w};
            p[k++] = (pair){b, a, w};
        }
    }
    qsort(p, (size_t)k, sizeof(pair), pair_cmp);
    s->n = n;
    s->vert = calloc((size_t)n + 1, sizeof(SCOTCH_Num));
    s->edge = malloc(sizeof(SCOTCH_Num) * (size_t)(k + 1));
    s->wgt = malloc(sizeof(SCOTCH_Num) * (size_t)(k + 1));
    if (!s->vert || !s->edge || !s->wgt) {
        free(p);
        sgraph_free(s);
        return -1;
    }
    int64_t out = 0;
    for (int64_t i = 0; i < k; i++) {
        if (i && p[i].a == p[i - 1].a && p[i].b == p[i - 1].b) { /* the same edge again: one, heavier */
            s->wgt[out - 1] += p[i].w;
            continue;
        }
        s->edge[out] = p[i].b;
        s->wgt[out] = p[i].w;
        out++;
        s->vert[p[i].a + 1] = (SCOTCH_Num)out;
    }
    for (int v = 0; v < n; v++) /* vertices without edges */
        if (s->vert[v + 1] < s->vert[v])
            s->vert[v + 1] = s->vert[v];
    free(p);
    return 0;
}

/* Small graphs (a node's processes over its sockets): greedy graph growing,
 * each part filled from a seed with the vertex most connected to it, in
 * O(n^2) without Scotch's set-up cost per call (which dominated mapping
 * thousands of nodes). */
#define GROW_MAX 256
/* Up to this many vertices Scotch refines k-way (quality), beyond it maps by
 * recursive bipartitioning (its k-way refinement dominated at 64K). */
#define SMALL_GRAPH 2048

static void grow_parts(const sgraph *s, int nparts, const int *cap, int *part)
{
    double gain[GROW_MAX];
    for (int v = 0; v < s->n; v++)
        part[v] = -1;
    for (int p = 0; p < nparts - 1; p++) {
        for (int v = 0; v < s->n; v++)
            gain[v] = 0;
        for (int k = 0; k < cap[p]; k++) {
            int best = -1;
            for (int v = 0; v < s->n; v++)
                if (part[v] < 0 && (best < 0 || gain[v] > gain[best]))
                    best = v;
            if (best < 0)
                return;
            part[best] = p;
            for (SCOTCH_Num e = s->vert[best]; e < s->vert[best + 1]; e++)
                gain[s->edge[e]] += s->wgt[e];
        }
    }
    for (int v = 0; v < s->n; v++)
        if (part[v] < 0)
            part[v] = nparts - 1;
}

/* Partition s into nparts of exactly cap[i] vertices: Scotch's mapping onto
 * a weighted complete graph, then vertices moved from parts over their
 * capacity to the part they are most connected to among those under it. */
static int partition(const sgraph *s, int nparts, const int *cap, int *part)
{
    if (nparts == 1) {
        for (int v = 0; v < s->n; v++)
            part[v] = 0;
        return 0;
    }
    if (s->n <= GROW_MAX) {
        grow_parts(s, nparts, cap, part);
        return 0;
    }
    SCOTCH_Graph g;
    SCOTCH_Arch arch;
    SCOTCH_Strat strat;
    SCOTCH_Num *caps = malloc(sizeof(SCOTCH_Num) * (size_t)nparts), *pt = malloc(sizeof(SCOTCH_Num) * (size_t)(s->n + 1));
    int rc = -1;
    if (!caps || !pt)
        goto out_free;
    for (int i = 0; i < nparts; i++)
        caps[i] = cap[i] > 0 ? cap[i] : 1;
    /* every run maps the same input the same way (MPI_Graph_map runs on
     * every process and must agree): a reset random state and Scotch's
     * deterministic mode for its threads */
    SCOTCH_randomReset();
    SCOTCH_Context ctx;
    SCOTCH_Graph cg;
    SCOTCH_contextInit(&ctx);
    SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
    SCOTCH_graphInit(&g);
    SCOTCH_graphInit(&cg);
    SCOTCH_archInit(&arch);
    SCOTCH_stratInit(&strat);
    if (SCOTCH_graphBuild(&g, 0, s->n, s->vert, NULL, NULL, NULL, s->vert[s->n], s->edge, s->wgt) == 0 &&
        SCOTCH_contextBindGraph(&ctx, &g, &cg) == 0 && SCOTCH_archCmpltw(&arch, nparts, caps) == 0 &&
        SCOTCH_stratGraphMapBuild(&strat, s->n <= SMALL_GRAPH ? SCOTCH_STRATQUALITY
                                                               : SCOTCH_STRATSPEED | SCOTCH_STRATRECURSIVE,
                                  nparts, 0.05) == 0 &&
        SCOTCH_graphMap(&cg, &arch, &strat, pt) == 0)
        rc = 0;
    SCOTCH_stratExit(&strat);
    SCOTCH_archExit(&arch);
    SCOTCH_graphExit(&cg);
    SCOTCH_graphExit(&g);
    SCOTCH_contextExit(&ctx);
    if (rc)
        goto out_free;
    int *count = calloc((size_t)nparts, sizeof(int));
    double *conn = calloc((size_t)nparts, sizeof(double));
    if (!count || !conn) {
        free(count);
        free(conn);
        rc = -1;
        goto out_free;
    }
    for (int v = 0; v < s->n; v++) {
        part[v] = (int)pt[v];
        if (part[v] < 0 || part[v] >= nparts)
            part[v] = 0;
        count[part[v]]++;
    }
    for (int v = 0; v < s->n; v++) {
        int p = part[v];
        if (count[p] <= cap[p])
            continue;
        int best = -1;
        for (SCOTCH_Num e = s->vert[v]; e < s->vert[v + 1]; e++)
            conn[part[s->edge[e]]] += s->wgt[e];
        for (int q = 0; q < nparts; q++) {
            if (count[q] < cap[q] && (best < 0 || conn[q] > conn[best]))
                best = q;
        }
        for (SCOTCH_Num e = s->vert[v]; e < s->vert[v + 1]; e++)
            conn[part[s->edge[e]]] = 0;
        if (best < 0)
            break;
        count[p]--;
        count[best]++;
        part[v] = best;
    }
    free(count);
    free(conn);
out_free:
    free(caps);
    free(pt);
    return rc;
}

static int map_graph(const lmpi_phys *ph, const lmpi_cgraph *g, int *slot_vertex, lmpi_remap_quality *q, char *err,
                     size_t errlen)
{
    double t0 = now_ms();
    int n = g->n;
    memset(q, 0, sizeof(*q));
    int *sock = slot_sockets(ph), *order = block_order(ph), *v2s = malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *part = malloc(sizeof(int) * (size_t)(n ? n : 1)), *cap = calloc((size_t)ph->nnodes + 1, sizeof(int));
    int *sub_of = malloc(sizeof(int) * (size_t)(n ? n : 1)), *sub_part = malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *scap = calloc((size_t)ph->sockets, sizeof(int));
    sgraph s = {0};
    int rc = -1;
    if (!sock || !order || !v2s || !part || !cap || !sub_of || !sub_part || !scap || sgraph_build(g, NULL, 0, NULL, &s)) {
        snprintf(err, errlen, "out of memory mapping a graph of %d vertices", n);
        goto out;
    }
    for (int sl = 0; sl < n; sl++)
        cap[ph->node_of[sl]]++;
    /* level 1: nodes */
    if (partition(&s, ph->nnodes, cap, part)) {
        snprintf(err, errlen, "Scotch could not map a graph of %d vertices onto %d nodes", n, ph->nnodes);
        goto out;
    }
    /* level 2: sockets inside each node; vertices go to the node's slots
     * socket by socket (order lists every node's slots together) */
    /* every node's vertices, together (a counting sort by part) */
    int *start = calloc((size_t)ph->nnodes + 1, sizeof(int)), *members = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!start || !members) {
        free(start);
        free(members);
        goto out;
    }
    for (int v = 0; v < n; v++)
        start[part[v] + 1]++;
    for (int i = 0; i < ph->nnodes; i++)
        start[i + 1] += start[i];
    for (int v = 0; v < n; v++)
        members[start[part[v]]++] = v;
    for (int i = ph->nnodes; i > 0; i--)
        start[i] = start[i - 1];
    start[0] = 0;
    for (int v = 0; v < n; v++)
        sub_of[v] = -1;
    int k = 0;
    while (k < n) {
        int node = ph->node_of[order[k]], end = k;
        while (end < n && ph->node_of[order[end]] == node)
            end++;
        int *verts = members + start[node], m = start[node + 1] - start[node];
        if (m != end - k) {
            snprintf(err, errlen, "node %d got %d vertices for %d processes", node, m, end - k);
            free(start);
            free(members);
            goto out;
        }
        for (int i = 0; i < m; i++)
            sub_of[verts[i]] = i;
        memset(scap, 0, sizeof(int) * (size_t)ph->sockets);
        for (int i = k; i < end; i++)
            scap[sock[order[i]]]++;
        int nsock = ph->sockets;
        if (nsock > 1 && m > ph->cores_per_socket) {
            sgraph ss = {0};
            if (sgraph_build(g, verts, m, sub_of, &ss) || partition(&ss, nsock, scap, sub_part)) {
                sgraph_free(&ss);
                free(start);
                free(members);
                snprintf(err, errlen, "Scotch could not map node %d's %d vertices onto its sockets", node, m);
                goto out;
            }
            sgraph_free(&ss);
        } else {
            for (int i = 0; i < m; i++)
                sub_part[i] = sock[order[k + i]];
        }
        /* hand out: each slot of this node takes a vertex of its socket */
        int *next = calloc((size_t)nsock, sizeof(int));
        if (!next) {
            free(start);
            free(members);
            goto out;
        }
        for (int i = k; i < end; i++) {
            int want = sock[order[i]], pick = -1;
            for (int j = next[want]; j < m; j++)
                if (sub_part[j] == want) {
                    pick = j;
                    next[want] = j + 1;
                    break;
                }
            if (pick < 0) /* capacities were met, so only by rounding: take any left */
                for (int j = 0; j < m; j++)
                    if (sub_part[j] >= 0) {
                        pick = j;
                        break;
                    }
            slot_vertex[order[i]] = verts[pick];
            sub_part[pick] = -1;
        }
        free(next);
        for (int i = 0; i < m; i++)
            sub_of[verts[i]] = -1;
        k = end;
    }
    free(start);
    free(members);
    rc = 0;
out:
    free(sock);
    free(order);
    free(v2s);
    free(part);
    free(cap);
    free(sub_of);
    free(sub_part);
    free(scap);
    sgraph_free(&s);
    if (rc == 0)
        q->strategy = LMPI_REMAP_SCOTCH;
    q->millis = now_ms() - t0;
    return rc;
}

/* ---- the choice, with its quality ------------------------------------------ */

/* Fill q for slot_vertex against identity and block; fall back to the
 * identity when the mapping does not beat the placement as launched. */
static void judge(const lmpi_phys *ph, const lmpi_cgraph *g, int *slot_vertex, lmpi_remap_quality *q)
{
    int n = g->n;
    int *sock = slot_sockets(ph), *blk = block_order(ph), *v2s = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!sock || !blk || !v2s) {
        free(sock), free(blk), free(v2s);
        return;
    }
    /* as launched: vertex v on slot v */
    for (int v = 0; v < n; v++)
        v2s[v] = v;
    cost_with(ph, sock, g, v2s, &q->identity);
    /* block order: the k-th vertex on the k-th slot of blk (the same as
     * launched when slots already come node by node) */
    bool launched_is_block = true;
    for (int k = 0; k < n && launched_is_block; k++)
        launched_is_block = blk[k] == k;
    if (launched_is_block) {
        q->block = q->identity;
    } else {
        for (int k = 0; k < n; k++)
            v2s[k] = blk[k];
        cost_with(ph, sock, g, v2s, &q->block);
    }
    for (int s = 0; s < n; s++)
        v2s[slot_vertex[s]] = s;
    cost_with(ph, sock, g, v2s, &q->chosen);
    free(sock), free(blk), free(v2s);
    bool better = q->chosen.hop_bytes < q->identity.hop_bytes ||
                  (q->chosen.hop_bytes == q->identity.hop_bytes && q->chosen.intersocket < q->identity.intersocket);
    if (!better) {
        for (int s = 0; s < n; s++)
            slot_vertex[s] = s;
        q->strategy = LMPI_REMAP_IDENTITY;
        q->chosen = q->identity;
    }
}

int lmpi_remap_cart(const lmpi_phys *ph, int ndims, const int *dims, const int *periods, bool allow_scotch,
                    int *slot_vertex, lmpi_remap_quality *q, char *err, size_t errlen)
{
    double t0 = now_ms();
    memset(q, 0, sizeof(*q));
    lmpi_cgraph g;
    if (lmpi_cgraph_cart(ndims, dims, periods, &g)) {
        snprintf(err, errlen, "out of memory building the graph of a %d-dimensional grid", ndims);
        return -1;
    }
    int rc = lmpi_remap_cart_analytic(ph, ndims, dims, periods, slot_vertex);
    if (rc == 0) {
        q->strategy = LMPI_REMAP_ANALYTIC;
    } else if (rc > 0 && allow_scotch) {
        rc = map_graph(ph, &g, slot_vertex, q, err, errlen);
    } else if (rc > 0) { /* not tileable, and Scotch not wanted: the caller decides */
        for (int s = 0; s < ph->nprocs; s++)
            slot_vertex[s] = s;
    }
    if (rc == 0)
        judge(ph, &g, slot_vertex, q);
    else if (rc < 0 && !*err)
        snprintf(err, errlen, "out of memory mapping a %d-dimensional grid", ndims);
    lmpi_cgraph_free(&g);
    q->millis = now_ms() - t0;
    return rc;
}

int lmpi_remap_graph(const lmpi_phys *ph, const lmpi_cgraph *g, int *slot_vertex, lmpi_remap_quality *q, char *err,
                     size_t errlen)
{
    double t0 = now_ms();
    memset(q, 0, sizeof(*q));
    int rc = map_graph(ph, g, slot_vertex, q, err, errlen);
    if (rc == 0)
        judge(ph, g, slot_vertex, q);
    q->millis = now_ms() - t0;
    return rc;
}

/* ---- stencil-like graphs ------------------------------------------------------
 * A graph that is a Cartesian grid's star stencil (each vertex joined to its
 * +-1 neighbours in every dimension, each dimension periodic or not), or its
 * box stencil (all 3^k - 1 around it), is tiled like the grid.  Candidate
 * grids are the ordered factorizations of n into 1-3 dimensions; vertex 0's
 * edges say whether a dimension wraps; every vertex's edges are compared. */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* The sorted neighbours of v in the grid (star or box); their count. */
static int grid_neighbours(int ndims, const int *dims, const int *periods, bool box, int v, int *out)
{
    int c[3], n = 0;
    unrank(ndims, dims, v, c);
    int lim = box ? 1 : 0, off[3];
    int total = 1;
    for (int i = 0; i < ndims; i++)
        total *= 3;
    for (int code = 0; code < total; code++) {
        int x = code, nonzero = 0;
        for (int i = 0; i < ndims; i++) {
            off[i] = x % 3 - 1;
            x /= 3;
            nonzero += off[i] != 0;
        }
        if (nonzero == 0 || (!lim && nonzero > 1))
            continue;
        int nc[3], ok = 1;
        for (int i = 0; i < ndims && ok; i++) {
            nc[i] = c[i] + off[i];
            if (nc[i] < 0 || nc[i] >= dims[i]) {
                if (!periods[i] || dims[i] < 3)
                    ok = 0;
                nc[i] = (nc[i] + dims[i]) % dims[i];
            }
        }
        if (ok)
            out[n++] = (int)rowmajor(ndims, dims, nc);
    }
    qsort(out, (size_t)n, sizeof(int), cmp_int);
    return n;
}

static bool grid_matches(const lmpi_cgraph *g, int ndims, const int *dims, bool box, int *periods)
{
    int *buf = malloc(sizeof(int) * 64), *mine = malloc(sizeof(int) * 64);
    bool ok = buf && mine;
    /* wrap-around from vertex 0: an edge to the last coordinate */
    int stride = 1;
    for (int i = ndims - 1; i >= 0 && ok; i--) {
        periods[i] = 0;
        for (int64_t e = g->xadj[0]; e < g->xadj[1]; e++)
            if (dims[i] > 2 && g->adj[e] == (dims[i] - 1) * stride)
                periods[i] = 1;
        stride *= dims[i];
    }
    for (int v = 0; v < g->n && ok; v++) {
        int64_t deg = g->xadj[v + 1] - g->xadj[v];
        if (deg > 26) {
            ok = false;
            break;
        }
        int n = grid_neighbours(ndims, dims, periods, box, v, buf);
        if (n != deg) {
            ok = false;
            break;
        }
        memcpy(mine, g->adj + g->xadj[v], sizeof(int) * (size_t)deg);
        qsort(mine, (size_t)deg, sizeof(int), cmp_int);
        ok = memcmp(mine, buf, sizeof(int) * (size_t)n) == 0;
    }
    free(buf);
    free(mine);
    return ok;
}

static int try_grid(const lmpi_cgraph *g, int nd, int a, int b, int c, int *ndims, int *dims, int *periods,
                    bool *box)
{
    int d[3] = {a, b, c};
    for (int bx = 0; bx <= (nd > 1); bx++)
        if (grid_matches(g, nd, d, bx, periods)) {
            *ndims = nd;
            memcpy(dims, d, sizeof(d));
            *box = bx;
            return 1;
        }
    return 0;
}

int lmpi_remap_detect_grid(const lmpi_cgraph *g, int *ndims, int *dims, int *periods, bool *box)
{
    int n = g->n;
    if (n < 4 || g->xadj[1] - g->xadj[0] > 26)
        return 0;
    if (try_grid(g, 1, n, 1, 1, ndims, dims, periods, box))
        return 1;
    for (int a = 2; a <= n / 2; a++) /* every ordered a x b */
        if (n % a == 0 && n / a >= 2 && try_grid(g, 2, a, n / a, 1, ndims, dims, periods, box))
            return 1;
    for (int a = 2; a <= n / 4; a++) /* every ordered a x b x c */
        for (int b = 2; n % a == 0 && b <= n / a / 2; b++)
            if ((n / a) % b == 0 && try_grid(g, 3, a, b, n / a / b, ndims, dims, periods, box))
                return 1;
    return 0;
}

int lmpi_remap_auto(const lmpi_phys *ph, const lmpi_cgraph *g, int *slot_vertex, lmpi_remap_quality *q, char *err,
                    size_t errlen)
{
    double t0 = now_ms();
    int nd, dims[3], periods[3];
    bool box;
    if (lmpi_remap_detect_grid(g, &nd, dims, periods, &box) &&
        lmpi_remap_cart_analytic(ph, nd, dims, periods, slot_vertex) == 0) {
        memset(q, 0, sizeof(*q));
        q->strategy = LMPI_REMAP_ANALYTIC;
        judge(ph, g, slot_vertex, q);
        q->millis = now_ms() - t0;
        return 0;
    }
    int rc = lmpi_remap_graph(ph, g, slot_vertex, q, err, errlen);
    q->millis = now_ms() - t0;
    return rc;
}
