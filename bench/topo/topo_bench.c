/* bench/topo, MPI level: built from this one source with every
 * implementation's mpicc (bench/run topo).
 *
 *   topo_bench neighbor [quick]  neighbor_latency op=allgather|alltoall
 *                                bytes ranks: per call, on a 2D periodic
 *                                Cartesian communicator (reorder 0: the same
 *                                communicator for everyone)
 *   topo_bench reorder           reorder_time type=cart|graph|dist_graph
 *                                ranks: ms for a creation with reorder=1 (a
 *                                2D 5-point stencil in each form), median
 *   topo_bench halo R            halo_time reorder=R ranks: one exchange of a
 *                                non-periodic 2D stencil's (up to) four 64 KiB
 *                                halos (Isend/Irecv over Cart_shift
 *                                neighbours), us, the best of 3 x 300
 *   topo_bench dims              dims_time nnodes ndims: one MPI_Dims_create
 *                                of a process count with many divisors, us,
 *                                the median of 9 (each call from all-zero dims)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static MPI_Comm grid(int reorder, int periodic)
{
    int dims[2] = {0, 0}, periods[2] = {periodic, periodic};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm c;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, &c);
    return c;
}

static void neighbor(int quick)
{
    MPI_Comm c = grid(0, 1);
    const int sizes[] = {8, 1024, 65536};
    char *sb = malloc(4 * 65536), *rb = malloc(4 * 65536);
    memset(sb, 1, 4 * 65536);
    for (int op = 0; op < 2; op++)
        for (int b = 0; b < 3; b++) {
            if (quick && b == 2)
                continue;
            int bytes = sizes[b], iters = (bytes >= 65536 ? 200 : 2000) * 4 / (size > 4 ? size : 4);
            if (quick)
                iters /= 10;
            for (int rep = 0; rep < 2; rep++) { /* the first is a warm-up */
                MPI_Barrier(c);
                double t0 = MPI_Wtime();
                for (int i = 0; i < iters; i++) {
                    if (op == 0)
                        MPI_Neighbor_allgather(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, c);
                    else
                        MPI_Neighbor_alltoall(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, c);
                }
                double t = (MPI_Wtime() - t0) / iters, worst;
                MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, c);
                if (rep == 1 && rank == 0)
                    printf("RESULT neighbor_latency op=%s bytes=%d ranks=%d value=%.3f\n",
                           op == 0 ? "allgather" : "alltoall", bytes, size, worst * 1e6);
            }
            fflush(stdout);
        }
    free(sb);
    free(rb);
    MPI_Comm_free(&c);
}

static void reorder_times(void)
{
    int dims[2] = {0, 0}, periods[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    /* the same stencil as a graph: every process knows all of it */
    int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 4 * (size_t)size), ne = 0;
    int src[4], nsrc = 0;
    for (int v = 0; v < size; v++) {
        int r = v / dims[1], c = v % dims[1];
        int nb[4][2] = {{r - 1, c}, {r + 1, c}, {r, c - 1}, {r, c + 1}};
        for (int k = 0; k < 4; k++)
            if (nb[k][0] >= 0 && nb[k][0] < dims[0] && nb[k][1] >= 0 && nb[k][1] < dims[1]) {
                edges[ne++] = nb[k][0] * dims[1] + nb[k][1];
                if (v == rank)
                    src[nsrc++] = edges[ne - 1];
            }
        index[v] = ne;
    }
    int ones[4] = {1, 1, 1, 1};
    const char *types[] = {"cart", "graph", "dist_graph"};
    double t[21];
    for (int ty = 0; ty < 3; ty++) {
        for (int i = 0; i < 21; i++) {
            MPI_Comm c;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (ty == 0)
                MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c);
            else if (ty == 1)
                MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &c);
            else
                MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nsrc, src, ones, nsrc, src, ones, MPI_INFO_NULL, 1,
                                               &c);
            double mine = MPI_Wtime() - t0;
            MPI_Allreduce(&mine, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Comm_free(&c);
        }
        qsort(t, 21, sizeof(double), cmp_double);
        if (rank == 0)
            printf("RESULT reorder_time type=%s ranks=%d value=%.4f\n", types[ty], size, t[10] * 1e3);
        fflush(stdout);
    }
    free(index);
    free(edges);
}

static void halo(int reorder)
{
    MPI_Comm c = grid(reorder, 0);
    int n = 65536, nb[4];
    MPI_Cart_shift(c, 0, 1, &nb[0], &nb[1]);
    MPI_Cart_shift(c, 1, 1, &nb[2], &nb[3]);
    char *sb = malloc(4 * (size_t)n), *rb = malloc(4 * (size_t)n);
    memset(sb, 2, 4 * (size_t)n);
    int iters = 300;
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        MPI_Barrier(c);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            MPI_Request r[8];
            for (int k = 0; k < 4; k++) {
                MPI_Irecv(rb + (size_t)k * n, n, MPI_BYTE, nb[k], k ^ 1, c, &r[k]);
                MPI_Isend(sb + (size_t)k * n, n, MPI_BYTE, nb[k], k, c, &r[4 + k]);
            }
            MPI_Waitall(8, r, MPI_STATUSES_IGNORE);
        }
        double t = (MPI_Wtime() - t0) / iters, worst;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, c);
        best = worst < best ? worst : best;
    }
    if (rank == 0)
        printf("RESULT halo_time reorder=%d ranks=%d value=%.3f\n", reorder, size, best * 1e6);
    free(sb);
    free(rb);
    MPI_Comm_free(&c);
}

static void dims_times(void)
{
    static const int cases[][2] = {{1000000, 3}, {720720, 6}, {735134400, 8}, {735134400, 12}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        double t[9];
        for (int r = 0; r < 9; r++) {
            int dims[20] = {0};
            double t0 = MPI_Wtime();
            MPI_Dims_create(cases[c][0], cases[c][1], dims);
            t[r] = MPI_Wtime() - t0;
        }
        qsort(t, 9, sizeof(double), cmp_double);
        if (rank == 0)
            printf("RESULT dims_time nnodes=%d ndims=%d value=%.2f\n", cases[c][0], cases[c][1], t[4] * 1e6);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "neighbor";
    if (!strcmp(mode, "neighbor"))
        neighbor(argc > 2 && !strcmp(argv[2], "quick"));
    else if (!strcmp(mode, "reorder"))
        reorder_times();
    else if (!strcmp(mode, "halo"))
        halo(argc > 2 ? atoi(argv[2]) : 0);
    else if (!strcmp(mode, "dims"))
        dims_times();
    MPI_Finalize();
    return 0;
}
