/* Process topologies and neighbourhood collectives: the standard's
 * examples, Dims_create over many cases, every query, topologies through
 * dup/idup/Cart_sub, neighbour data checked by content (so that a reordered
 * communicator that exchanged with the wrong processes fails), all
 * neighbourhood collectives in their three forms with derived types and
 * empty neighbourhoods, and bad input.  `t_topo NAME` runs one case. */
#include <stdbool.h>

#include "mpitest.h"

static int rank, size;

/* ---- Dims_create --------------------------------------------------------- */

static long prod(const int *d, int n)
{
    long p = 1;
    for (int i = 0; i < n; i++)
        p *= d[i];
    return p;
}

/* Brute force: the smallest max-min spread over non-increasing
 * factorizations of n into k parts. */
static int best_spread(int n, int k, int maxv, int first)
{
    if (k == 1)
        return n <= maxv ? (first ? first : n) - n : 1 << 30;
    int best = 1 << 30;
    for (int v = maxv < n ? maxv : n; v >= 1; v--)
        if (n % v == 0) {
            int s = best_spread(n / v, k - 1, v, first ? first : v);
            best = s < best ? s : best;
        }
    return best;
}

static void case_dims(void)
{
    int d[6];
    memset(d, 0, sizeof(d));
    MPI_Dims_create(6, 2, d); /* the standard's examples */
    CHECK_EQ(d[0], 3); CHECK_EQ(d[1], 2);
    memset(d, 0, sizeof(d));
    MPI_Dims_create(7, 2, d);
    CHECK_EQ(d[0], 7); CHECK_EQ(d[1], 1);
    int e[3] = {0, 3, 0};
    MPI_Dims_create(6, 3, e);
    CHECK_EQ(e[0], 2); CHECK_EQ(e[1], 3); CHECK_EQ(e[2], 1);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* no communicator: MPI_COMM_SELF's handler */
    int f[3] = {0, 3, 0}, cls;
    MPI_Error_class(MPI_Dims_create(7, 3, f), &cls);
    CHECK_EQ(cls, MPI_ERR_DIMS);
    int g[2] = {-1, 0};
    MPI_Error_class(MPI_Dims_create(4, 2, g), &cls);
    CHECK_EQ(cls, MPI_ERR_DIMS);
    MPI_Error_class(MPI_Dims_create(4, -1, g), &cls);
    CHECK_EQ(cls, MPI_ERR_DIMS);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    /* many (nnodes, ndims): product right, non-increasing, as balanced as
     * a brute force finds */
    for (int n = 1; n <= 360; n += (n < 64 ? 1 : 7))
        for (int k = 1; k <= 4; k++) {
            memset(d, 0, sizeof(d));
            MPI_Dims_create(n, k, d);
            CHECK_EQ(prod(d, k), n);
            for (int i = 1; i < k; i++)
                CHECK(d[i] <= d[i - 1]);
            CHECK_EQ(d[0] - d[k - 1], best_spread(n, k, n, 0));
        }
    /* a fixed dimension stays, the rest balance around it */
    int h[3] = {0, 5, 0};
    MPI_Dims_create(100, 3, h);
    CHECK_EQ(h[1], 5); CHECK_EQ(h[0] * h[2], 20); CHECK(h[0] >= h[2]); CHECK_EQ(h[0], 5);
    int big[2] = {0, 0};
    MPI_Dims_create(1 << 30, 2, big);
    CHECK_EQ(big[0], 32768); CHECK_EQ(big[1], 32768);
    /* numbers with many divisors in many dimensions: the search that tried
     * every factorization took 23 ms, 16 s and over 2 minutes on these three (the
     * test's time limit catches a search that explodes again) */
    static const struct { int n, k, want[20]; } many[] = {
        {720720, 6, {13, 11, 10, 9, 8, 7}},
        {735134400, 8, {17, 15, 14, 13, 12, 12, 11, 10}},
        {735134400, 20, {17, 13, 11, 7, 5, 5, 3, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1}},
        {5616, 4, {13, 9, 8, 6}}, /* spread 7 both, the smaller sum: not 13x12x6x6 */
    };
    for (size_t c = 0; c < sizeof(many) / sizeof(many[0]); c++) {
        int m[20] = {0};
        MPI_Dims_create(many[c].n, many[c].k, m);
        for (int i = 0; i < many[c].k; i++)
            CHECK_EQ(m[i], many[c].want[i]);
    }
}

/* ---- Cartesian ------------------------------------------------------------- */

/* Every process checks what its neighbours sent: their coordinates, so a
 * mapping that confused ranks is caught. */
static void check_cart_neighbours(MPI_Comm cart)
{
    int nd;
    MPI_Cartdim_get(cart, &nd);
    int dims[8], periods[8], coords[8], me;
    MPI_Cart_get(cart, nd, dims, periods, coords);
    MPI_Comm_rank(cart, &me);
    int nn = 2 * nd, *recv = malloc(sizeof(int) * (size_t)(nn * nd + 1));
    for (int i = 0; i < nn * nd; i++)
        recv[i] = -7;
    MPI_Neighbor_allgather(coords, nd, MPI_INT, recv, nd, MPI_INT, cart);
    for (int d = 0; d < nd; d++) {
        int src, dst;
        MPI_Cart_shift(cart, d, 1, &src, &dst);
        int peers[2] = {src, dst};
        for (int k = 0; k < 2; k++) {
            int *got = recv + (2 * d + k) * nd;
            if (peers[k] == MPI_PROC_NULL) {
                CHECK_EQ(got[0], -7); /* left alone */
                continue;
            }
            int want[8];
            MPI_Cart_coords(cart, peers[k], nd, want);
            for (int j = 0; j < nd; j++)
                CHECK_EQ(got[j], want[j]);
        }
    }
    /* alltoall: block k goes to neighbour k, which files it under the
     * opposite direction; small blocks (the schedule-free path) and 8 KiB
     * ones (the schedule) */
    for (int blk = 2; blk <= 2048; blk *= 1024) {
        int *sb = malloc(sizeof(int) * (size_t)(nn * blk + 1)), *rb = malloc(sizeof(int) * (size_t)(nn * blk + 1));
        for (int k = 0; k < nn; k++)
            for (int j = 0; j < blk; j++) {
                sb[k * blk + j] = j == 0 ? me : j == 1 ? k : me * 7 + j;
                rb[k * blk + j] = -9;
            }
        MPI_Neighbor_alltoall(sb, blk, MPI_INT, rb, blk, MPI_INT, cart);
        for (int d = 0; d < nd; d++) {
            int src, dst;
            MPI_Cart_shift(cart, d, 1, &src, &dst);
            int peers[2] = {src, dst};
            for (int k = 0; k < 2; k++) {
                int *got = rb + (2 * d + k) * blk;
                if (peers[k] == MPI_PROC_NULL) {
                    CHECK_EQ(got[0], -9);
                    continue;
                }
                CHECK_EQ(got[0], peers[k]);
                CHECK_EQ(got[1], 2 * d + (1 - k)); /* src sent it to its +1, dst to its -1 neighbour */
                CHECK_EQ(got[blk - 1], blk > 2 ? peers[k] * 7 + blk - 1 : 2 * d + (1 - k));
            }
        }
        free(sb);
        free(rb);
    }
    free(recv);
    /* allgather where some processes take the schedule (a strided receive
     * type, or big blocks) and others the schedule-free path: both sides
     * must agree on how many messages a pair of neighbours exchanges */
    MPI_Datatype strided;
    MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    for (int big = 0; big <= 1; big++) {
        int blk = big ? 2048 : 2, *sb = malloc(sizeof(int) * (size_t)blk);
        int *rb = malloc(sizeof(int) * (size_t)(2 * nn * blk + 2));
        for (int j = 0; j < blk; j++)
            sb[j] = me * 1000 + j;
        for (int j = 0; j < 2 * nn * blk; j++)
            rb[j] = -5;
        bool odd = me % 2 && !big; /* strided (one element apart) receives on odd ranks */
        if (odd)
            MPI_Neighbor_allgather(sb, blk, MPI_INT, rb, 1, strided, cart);
        else
            MPI_Neighbor_allgather(sb, blk, MPI_INT, rb, blk, MPI_INT, cart);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(strided, &lb, &ext);
        for (int d = 0; d < nd; d++) {
            int src, dst;
            MPI_Cart_shift(cart, d, 1, &src, &dst);
            int peers[2] = {src, dst};
            for (int k = 0; k < 2; k++) {
                int slot = 2 * d + k;
                int *got = odd ? rb + slot * (int)(ext / (MPI_Aint)sizeof(int)) : rb + slot * blk;
                int step = odd ? 2 : 1;
                if (peers[k] == MPI_PROC_NULL) {
                    CHECK_EQ(got[0], -5);
                    continue;
                }
                CHECK_EQ(got[0], peers[k] * 1000);
                CHECK_EQ(got[(blk - 1) * step], peers[k] * 1000 + blk - 1);
            }
        }
        free(sb);
        free(rb);
    }
    MPI_Type_free(&strided);
}

static void case_cart(void)
{
    for (int reorder = 0; reorder <= 1; reorder++) {
        int dims[2] = {0, 0}, periods[2] = {1, 0};
        MPI_Dims_create(size, 2, dims);
        MPI_Comm cart;
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, &cart);
        CHECK(cart != MPI_COMM_NULL);
        int st, nd, me, csize;
        MPI_Topo_test(cart, &st);
        CHECK_EQ(st, MPI_CART);
        MPI_Cartdim_get(cart, &nd);
        CHECK_EQ(nd, 2);
        MPI_Comm_rank(cart, &me);
        MPI_Comm_size(cart, &csize);
        CHECK_EQ(csize, size);
        int gd[2], gp[2], gc[2];
        MPI_Cart_get(cart, 2, gd, gp, gc);
        CHECK_EQ(gd[0], dims[0]); CHECK_EQ(gd[1], dims[1]); CHECK_EQ(gp[0], 1); CHECK_EQ(gp[1], 0);
        int r;
        MPI_Cart_rank(cart, gc, &r);
        CHECK_EQ(r, me);
        CHECK_EQ(gc[0] * dims[1] + gc[1], me); /* row-major */
        for (int q = 0; q < csize; q++) {
            int c[2];
            MPI_Cart_coords(cart, q, 2, c);
            MPI_Cart_rank(cart, c, &r);
            CHECK_EQ(r, q);
        }
        /* periodic dimension wraps, the other does not */
        int wrap[2] = {gc[0] + dims[0], gc[1]};
        MPI_Cart_rank(cart, wrap, &r);
        CHECK_EQ(r, me);
        int src, dst;
        MPI_Cart_shift(cart, 1, 1, &src, &dst);
        CHECK_EQ(src, gc[1] == 0 ? MPI_PROC_NULL : me - 1);
        CHECK_EQ(dst, gc[1] == dims[1] - 1 ? MPI_PROC_NULL : me + 1);
        MPI_Cart_shift(cart, 0, 0, &src, &dst);
        CHECK_EQ(src, me); CHECK_EQ(dst, me);
        MPI_Cart_shift(cart, 0, dims[0] + 1, &src, &dst);
        CHECK_EQ(dst, ((gc[0] + 1) % dims[0]) * dims[1] + gc[1]);
        check_cart_neighbours(cart);

        /* the topology survives dup and idup */
        MPI_Comm dup, idup;
        MPI_Request req;
        MPI_Comm_dup(cart, &dup);
        MPI_Comm_idup(cart, &idup, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Topo_test(dup, &st);
        CHECK_EQ(st, MPI_CART);
        MPI_Topo_test(idup, &st);
        CHECK_EQ(st, MPI_CART);
        check_cart_neighbours(idup);
        MPI_Comm_free(&dup);
        MPI_Comm_free(&idup);

        /* Cart_sub: rows and columns */
        int keep[2] = {0, 1};
        MPI_Comm row;
        MPI_Cart_sub(cart, keep, &row);
        int rs, rr, rd[2], rp[2], rc[2];
        MPI_Comm_size(row, &rs);
        MPI_Comm_rank(row, &rr);
        CHECK_EQ(rs, dims[1]);
        CHECK_EQ(rr, gc[1]);
        MPI_Cart_get(row, 1, rd, rp, rc);
        CHECK_EQ(rd[0], dims[1]); CHECK_EQ(rp[0], 0); CHECK_EQ(rc[0], gc[1]);
        check_cart_neighbours(row);
        MPI_Comm_free(&row);
        int none[2] = {0, 0};
        MPI_Comm pt;
        MPI_Cart_sub(cart, none, &pt);
        MPI_Comm_size(pt, &rs);
        CHECK_EQ(rs, 1);
        MPI_Cartdim_get(pt, &nd);
        CHECK_EQ(nd, 0);
        MPI_Comm_free(&pt);
        MPI_Comm_free(&cart);
    }
    /* a grid smaller than the communicator: the others get MPI_COMM_NULL */
    if (size > 1) {
        int d1[1] = {size - 1}, p1[1] = {1};
        MPI_Comm small;
        MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 1, &small);
        CHECK_EQ(small == MPI_COMM_NULL, rank == size - 1);
        if (small != MPI_COMM_NULL) {
            check_cart_neighbours(small);
            MPI_Comm_free(&small);
        }
    }
    /* periodic dimensions of size 1 and 2: a process is its own or its
     * only neighbour twice */
    int d3[3] = {size, 1, 2}, p3[3] = {1, 1, 1};
    if (size % 2 == 0) {
        d3[0] = size / 2;
        MPI_Comm c3;
        MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 0, &c3);
        check_cart_neighbours(c3);
        MPI_Comm_free(&c3);
    }
    /* zero-byte blocks with NULL buffers (allowed when the counts are 0) */
    int dz[2] = {size, 1}, pz[2] = {1, 1};
    MPI_Comm cz;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dz, pz, 0, &cz);
    MPI_Neighbor_allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, cz);
    MPI_Neighbor_alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, cz);
    MPI_Comm_free(&cz);
    /* zero dimensions: a communicator of one process */
    MPI_Comm c0;
    MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &c0);
    CHECK_EQ(c0 == MPI_COMM_NULL, rank != 0);
    if (c0 != MPI_COMM_NULL)
        MPI_Comm_free(&c0);
    int nr;
    int dm[2] = {size, 1}, pm[2] = {0, 0};
    MPI_Cart_map(MPI_COMM_WORLD, 2, dm, pm, &nr);
    CHECK(nr >= 0 && nr < size);
}

/* Reordered grids on emulated nodes: same checks, and the quality is in
 * the communicator's info. */
static void case_reorder(void)
{
    int dims[2] = {0, 0}, periods[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
    check_cart_neighbours(cart);
    MPI_Info info;
    MPI_Comm_get_info(cart, &info);
    if (size == 1) { /* nothing to map */
        MPI_Info_free(&info);
        MPI_Comm_free(&cart);
        return;
    }
    char v[64];
    int flag;
    MPI_Info_get(info, "lmpi_topo_mapping", sizeof(v) - 1, v, &flag);
    CHECK(flag);
    char hb[64], hbl[64];
    MPI_Info_get(info, "lmpi_topo_hop_bytes", sizeof(hb) - 1, hb, &flag);
    CHECK(flag);
    MPI_Info_get(info, "lmpi_topo_hop_bytes_launch", sizeof(hbl) - 1, hbl, &flag);
    CHECK(flag);
    CHECK(atof(hb) <= atof(hbl)); /* never worse than as launched */
    MPI_Info_free(&info);
    /* the same figures through MPI_T */
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    CHECK_EQ(mpitest_pvar_read("lmpi_topo_hop_bytes_launch"), (long long)atof(hbl));
    MPI_T_finalize();
    /* every process has a distinct new rank */
    int me, *all = malloc(sizeof(int) * (size_t)size);
    MPI_Comm_rank(cart, &me);
    MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    int *seen = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < size; i++)
        seen[all[i]]++;
    for (int i = 0; i < size; i++)
        CHECK_EQ(seen[i], 1);
    free(seen);
    free(all);
    MPI_Comm_free(&cart);

    /* a graph (ring + chords) reordered with Scotch */
    int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 3 * (size_t)size), ne = 0;
    for (int v = 0; v < size; v++) {
        edges[ne++] = (v + 1) % size;
        edges[ne++] = (v + size - 1) % size;
        if (size % 2 == 0) /* a chord across (symmetric only for even sizes) */
            edges[ne++] = (v + size / 2) % size;
        index[v] = ne;
    }
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &g);
    int gr;
    MPI_Comm_rank(g, &gr);
    int nb[3], cnt;
    MPI_Graph_neighbors_count(g, gr, &cnt);
    CHECK_EQ(cnt, size % 2 ? 2 : 3);
    MPI_Graph_neighbors(g, gr, 3, nb);
    int got[3] = {-1, -1, -1};
    MPI_Neighbor_allgather(&gr, 1, MPI_INT, got, 1, MPI_INT, g);
    for (int k = 0; k < cnt; k++)
        CHECK_EQ(got[k], nb[k]);
    MPI_Comm_free(&g);
    free(index);
    free(edges);

    /* a weighted distributed graph, reordered: neighbours by content */
    int src[2] = {(rank + size - 1) % size, (rank + 1) % size}, dst[2] = {(rank + 1) % size, (rank + size - 1) % size};
    int w[2] = {10, 1};
    int sw[2] = {10, 1};
    MPI_Comm dg;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, w, MPI_INFO_NULL, 1, &dg);
    int dr, ind, outd, wt;
    MPI_Comm_rank(dg, &dr);
    MPI_Dist_graph_neighbors_count(dg, &ind, &outd, &wt);
    CHECK_EQ(ind, 2); CHECK_EQ(outd, 2); CHECK(wt);
    int s2[2], d2[2], sw2[2], dw2[2];
    MPI_Dist_graph_neighbors(dg, 2, s2, sw2, 2, d2, dw2);
    CHECK_EQ(sw2[0], 10); CHECK_EQ(dw2[1], 1);
    int world_of[2] = {-1, -1};
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, world_of, 1, MPI_INT, dg);
    CHECK_EQ(world_of[0], src[0]); CHECK_EQ(world_of[1], src[1]);
    int ranks_of[2] = {-1, -1};
    MPI_Neighbor_allgather(&dr, 1, MPI_INT, ranks_of, 1, MPI_INT, dg);
    CHECK_EQ(ranks_of[0], s2[0]); CHECK_EQ(ranks_of[1], s2[1]);
    MPI_Comm_free(&dg);
}

/* ---- graph: the standard's example ------------------------------------------ */

static void case_graph(void)
{
    if (size < 4)
        return;
    /* MPI 5.0 §8.5.3: 4 nodes, 0: 1 3; 1: 0; 2: 3; 3: 0 2 */
    int index[4] = {2, 3, 4, 6}, edges[6] = {1, 3, 0, 3, 0, 2};
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &g);
    CHECK_EQ(g == MPI_COMM_NULL, rank >= 4);
    if (g == MPI_COMM_NULL)
        return;
    int st, nn, ne, cnt, nb[4], gi[4], ge[6];
    MPI_Topo_test(g, &st);
    CHECK_EQ(st, MPI_GRAPH);
    MPI_Graphdims_get(g, &nn, &ne);
    CHECK_EQ(nn, 4); CHECK_EQ(ne, 6);
    MPI_Graph_get(g, 4, 6, gi, ge);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(gi[i], index[i]);
    for (int i = 0; i < 6; i++)
        CHECK_EQ(ge[i], edges[i]);
    MPI_Graph_neighbors_count(g, 3, &cnt);
    CHECK_EQ(cnt, 2);
    MPI_Graph_neighbors(g, 3, 4, nb);
    CHECK_EQ(nb[0], 0); CHECK_EQ(nb[1], 2);
    MPI_Graph_neighbors_count(g, rank, &cnt);
    MPI_Graph_neighbors(g, rank, 4, nb);
    /* alltoallv with a vector type: send neighbour k my rank * 10 + k */
    int sbuf[4], rbuf[8], sc[4], sd[4], rc[4], rdsp[4];
    for (int k = 0; k < cnt; k++) {
        sbuf[k] = rank * 10 + k;
        sc[k] = 1, sd[k] = k, rc[k] = 1, rdsp[k] = 2 * k;
        rbuf[2 * k] = rbuf[2 * k + 1] = -1;
    }
    MPI_Neighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rdsp, MPI_INT, g);
    for (int k = 0; k < cnt; k++) {
        /* which position am I in my neighbour's list? */
        int theirs[4], tc;
        MPI_Graph_neighbors_count(g, nb[k], &tc);
        MPI_Graph_neighbors(g, nb[k], 4, theirs);
        int pos = -1;
        for (int j = 0; j < tc; j++)
            if (theirs[j] == rank)
                pos = j;
        CHECK_EQ(rbuf[2 * k], nb[k] * 10 + pos);
        CHECK_EQ(rbuf[2 * k + 1], -1);
    }
    MPI_Comm_free(&g);
}

/* ---- distributed graphs, all collectives, all forms ---------------------- */

static void case_dist(void)
{
    /* each process names the edges into it (as MPI_Dist_graph_create lets
     * any process name any edge): rank -> rank+1 and rank -> rank+2 */
    int srcs[2] = {(rank + size - 1) % size, (rank + size - 2) % size}, degs[2] = {1, 1}, dsts[2] = {rank, rank};
    MPI_Comm dg;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 2, srcs, degs, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
    int st, ind, outd, wt;
    MPI_Topo_test(dg, &st);
    CHECK_EQ(st, MPI_DIST_GRAPH);
    MPI_Dist_graph_neighbors_count(dg, &ind, &outd, &wt);
    CHECK_EQ(ind, 2); CHECK_EQ(outd, 2); CHECK(!wt);
    int in[2], out[2];
    MPI_Dist_graph_neighbors(dg, 2, in, MPI_UNWEIGHTED, 2, out, MPI_UNWEIGHTED);
    /* sorted check (the order of MPI_Dist_graph_create lists is free) */
    int a = (rank + size - 1) % size, b = (rank + size - 2) % size;
    CHECK((in[0] == a && in[1] == b) || (in[0] == b && in[1] == a));
    int c = (rank + 1) % size, d = (rank + 2) % size;
    CHECK((out[0] == c && out[1] == d) || (out[0] == d && out[1] == c));

    /* every collective, in its three forms: content names the sender */
    for (int form = 0; form < 3; form++) {
        double sv[2] = {rank + 0.5, rank + 0.25}, rv[4] = {-1, -1, -1, -1};
        MPI_Request r;
        if (form == 0) {
            MPI_Neighbor_alltoall(sv, 1, MPI_DOUBLE, rv, 1, MPI_DOUBLE, dg);
        } else if (form == 1) {
            MPI_Ineighbor_alltoall(sv, 1, MPI_DOUBLE, rv, 1, MPI_DOUBLE, dg, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Neighbor_alltoall_init(sv, 1, MPI_DOUBLE, rv, 1, MPI_DOUBLE, dg, MPI_INFO_NULL, &r);
            for (int it = 0; it < 3; it++) {
                rv[0] = rv[1] = -1;
                MPI_Start(&r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            }
            MPI_Request_free(&r);
        }
        for (int k = 0; k < 2; k++) /* one of the two blocks the sender had */
            CHECK(rv[k] == in[k] + 0.5 || rv[k] == in[k] + 0.25);
        int gv[2] = {-1, -1};
        if (form == 0) {
            MPI_Neighbor_allgather(&rank, 1, MPI_INT, gv, 1, MPI_INT, dg);
        } else if (form == 1) {
            MPI_Ineighbor_allgather(&rank, 1, MPI_INT, gv, 1, MPI_INT, dg, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Neighbor_allgather_init(&rank, 1, MPI_INT, gv, 1, MPI_INT, dg, MPI_INFO_NULL, &r);
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPI_Request_free(&r);
        }
        CHECK_EQ(gv[0], in[0]); CHECK_EQ(gv[1], in[1]);
        /* allgatherv into a gap */
        int gvv[4] = {-1, -1, -1, -1}, rc[2] = {1, 1}, dsp[2] = {3, 0};
        if (form == 0) {
            MPI_Neighbor_allgatherv(&rank, 1, MPI_INT, gvv, rc, dsp, MPI_INT, dg);
        } else if (form == 1) {
            MPI_Ineighbor_allgatherv(&rank, 1, MPI_INT, gvv, rc, dsp, MPI_INT, dg, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Neighbor_allgatherv_init(&rank, 1, MPI_INT, gvv, rc, dsp, MPI_INT, dg, MPI_INFO_NULL, &r);
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPI_Request_free(&r);
        }
        CHECK_EQ(gvv[3], in[0]); CHECK_EQ(gvv[0], in[1]); CHECK_EQ(gvv[1], -1);
        /* alltoallw: an int to one neighbour, a double to the other */
        int ival = rank * 3, iin = -1;
        double dval = rank * 0.5, din = -1;
        char sbuf[16], rbuf[16];
        memcpy(sbuf, &ival, sizeof(int));
        memcpy(sbuf + 8, &dval, sizeof(double));
        MPI_Aint sdp[2] = {0, 8}, rdp[2] = {0, 8};
        int scn[2] = {1, 1}, rcn[2] = {1, 1};
        /* out[k]'s in-list position of me decides the type it expects: use
         * one type per direction (rank+1: int, rank+2: double) */
        MPI_Datatype stypes[2], rtypes[2];
        for (int k = 0; k < 2; k++) {
            stypes[k] = out[k] == (rank + 1) % size && !(size <= 2) ? MPI_INT : MPI_DOUBLE;
            rtypes[k] = in[k] == (rank + size - 1) % size && !(size <= 2) ? MPI_INT : MPI_DOUBLE;
        }
        memset(rbuf, 0xff, sizeof(rbuf));
        if (size > 2) {
            /* send the int from offset 0 or the double from offset 8 */
            for (int k = 0; k < 2; k++)
                sdp[k] = stypes[k] == MPI_INT ? 0 : 8;
            if (form == 0) {
                MPI_Neighbor_alltoallw(sbuf, scn, sdp, stypes, rbuf, rcn, rdp, rtypes, dg);
            } else if (form == 1) {
                MPI_Ineighbor_alltoallw(sbuf, scn, sdp, stypes, rbuf, rcn, rdp, rtypes, dg, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            } else {
                MPI_Neighbor_alltoallw_init(sbuf, scn, sdp, stypes, rbuf, rcn, rdp, rtypes, dg, MPI_INFO_NULL, &r);
                MPI_Start(&r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
                MPI_Request_free(&r);
            }
            for (int k = 0; k < 2; k++) {
                if (rtypes[k] == MPI_INT) {
                    memcpy(&iin, rbuf + rdp[k], sizeof(int));
                    CHECK_EQ(iin, in[k] * 3);
                } else {
                    memcpy(&din, rbuf + rdp[k], sizeof(double));
                    CHECK(din == in[k] * 0.5);
                }
            }
        }
    }
    MPI_Comm_free(&dg);

    /* an empty neighbourhood on every process, weights MPI_WEIGHTS_EMPTY */
    MPI_Comm e;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL, MPI_WEIGHTS_EMPTY,
                                   MPI_INFO_NULL, 0, &e);
    MPI_Dist_graph_neighbors_count(e, &ind, &outd, &wt);
    CHECK_EQ(ind, 0); CHECK_EQ(outd, 0);
    int dummy = 5, untouched = -3;
    MPI_Neighbor_allgather(&dummy, 1, MPI_INT, &untouched, 1, MPI_INT, e);
    MPI_Request r;
    MPI_Ineighbor_alltoall(&dummy, 1, MPI_INT, &untouched, 1, MPI_INT, e, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_EQ(untouched, -3);
    MPI_Comm_free(&e);

    /* derived types: a strided column to every neighbour of a ring */
    int s1[1] = {(rank + size - 1) % size}, d1[1] = {(rank + 1) % size};
    MPI_Comm ring;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, s1, MPI_UNWEIGHTED, 1, d1, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                   &ring);
    int mat[4][3], col[4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            mat[i][j] = rank * 100 + i * 3 + j;
    MPI_Datatype column;
    MPI_Type_vector(4, 1, 3, MPI_INT, &column);
    MPI_Type_commit(&column);
    MPI_Neighbor_allgather(&mat[0][1], 1, column, col, 4, MPI_INT, ring);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(col[i], s1[0] * 100 + i * 3 + 1);
    MPI_Type_free(&column);
    MPI_Comm_free(&ring);
}

/* ---- bad input ------------------------------------------------------------ */

static int err_class(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

static void case_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm c = MPI_COMM_NULL;
    int dims[2] = {size, 0}, periods[2] = {0, 0};
    CHECK_EQ(err_class(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c)), MPI_ERR_DIMS);
    int neg[1] = {-2};
    CHECK_EQ(err_class(MPI_Cart_create(MPI_COMM_WORLD, 1, neg, periods, 0, &c)), MPI_ERR_DIMS);
    CHECK_EQ(err_class(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &c)), MPI_ERR_DIMS);
    int big[1] = {size + 1};
    CHECK_EQ(err_class(MPI_Cart_create(MPI_COMM_WORLD, 1, big, periods, 0, &c)), MPI_ERR_ARG);
    CHECK(c == MPI_COMM_NULL);
    /* queries on a communicator without (or with another) topology */
    int nd, coords[2], r;
    CHECK_EQ(err_class(MPI_Cartdim_get(MPI_COMM_WORLD, &nd)), MPI_ERR_TOPOLOGY);
    CHECK_EQ(err_class(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, coords)), MPI_ERR_TOPOLOGY);
    CHECK_EQ(err_class(MPI_Graphdims_get(MPI_COMM_WORLD, &nd, &r)), MPI_ERR_TOPOLOGY);
    CHECK_EQ(err_class(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &nd, &r, &r)), MPI_ERR_TOPOLOGY);
    int sb = 0, rb[4];
    CHECK_EQ(err_class(MPI_Neighbor_allgather(&sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD)), MPI_ERR_TOPOLOGY);
    int d1[1] = {size}, p1[1] = {0};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &cart);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    CHECK_EQ(err_class(MPI_Graphdims_get(cart, &nd, &r)), MPI_ERR_TOPOLOGY);
    CHECK_EQ(err_class(MPI_Cart_coords(cart, size, 1, coords)), MPI_ERR_RANK);
    CHECK_EQ(err_class(MPI_Cart_shift(cart, 1, 1, &r, &nd)), MPI_ERR_ARG);
    int far[1] = {size};
    CHECK_EQ(err_class(MPI_Cart_rank(cart, far, &r)), MPI_ERR_ARG);
    CHECK_EQ(err_class(MPI_Cart_get(cart, 0, dims, periods, coords)), MPI_ERR_ARG);
    MPI_Comm_free(&cart);
    /* graphs: a bad edge, a decreasing index, too many nodes */
    int index[2] = {1, 2}, edges[2] = {1, 2};
    MPI_Comm g = MPI_COMM_NULL;
    if (size >= 2) {
        CHECK_EQ(err_class(MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &g)), MPI_ERR_ARG);
        int dec[2] = {2, 1}, ok[2] = {1, 0};
        CHECK_EQ(err_class(MPI_Graph_create(MPI_COMM_WORLD, 2, dec, ok, 0, &g)), MPI_ERR_ARG);
    }
    CHECK_EQ(err_class(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &g)), MPI_ERR_ARG);
    CHECK(g == MPI_COMM_NULL);
    int bad[1] = {size};
    CHECK_EQ(err_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, bad, MPI_UNWEIGHTED, 0, NULL,
                                                      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g)),
             MPI_ERR_RANK);
    /* an intercommunicator has no topology */
    if (size >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        CHECK_EQ(err_class(MPI_Cart_create(inter, 1, d1, p1, 0, &c)), MPI_ERR_COMM);
        CHECK_EQ(err_class(MPI_Cartdim_get(inter, &nd)), MPI_ERR_COMM);
        CHECK_EQ(err_class(MPI_Neighbor_allgather(&sb, 1, MPI_INT, rb, 1, MPI_INT, inter)), MPI_ERR_COMM);
        int st;
        MPI_Topo_test(inter, &st);
        CHECK_EQ(st, MPI_UNDEFINED);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *only = argc > 1 ? argv[1] : NULL;
    struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {{"dims", case_dims},   {"cart", case_cart},   {"reorder", case_reorder},
                 {"graph", case_graph}, {"dist", case_dist},   {"errors", case_errors}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (!only || !strcmp(only, cases[i].name))
            cases[i].fn();
    return mpitest_finish("t_topo");
}
