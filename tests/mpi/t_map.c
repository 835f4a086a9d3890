/* Placement through mpiexec --network/--map-by/--bind-to.
 *
 *   t_map DIMS CORES ORDER [bind]
 *
 * Each rank computes where ORDER (a permutation of T and the torus
 * dimensions, fastest first) puts every rank of DIMS (e.g. 2x4) with CORES
 * per node, and checks what the runtime reports: MPI_Get_processor_name is
 * the virtual node's name, MPI_Comm_get_info on MPI_COMM_WORLD gives its
 * coordinates, and MPI_COMM_TYPE_SHARED groups exactly the ranks of one
 * virtual node.  With "bind", each rank must be pinned to core (rank mod
 * cores) of this machine (--bind-to core). */
#include <hwloc.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define EXPECT(cond, ...)                                                  \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "t_map: %s:%d: ", __FILE__, __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                         \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static int ndims, dims[6], cores;
static char order[8];

/* node coordinates of rank R under the order */
static void place(int r, int *coord)
{
    for (size_t i = 0; i < strlen(order); i++) {
        int radix = order[i] == 'T' ? cores : dims[order[i] - 'X'];
        if (order[i] != 'T')
            coord[order[i] - 'X'] = r % radix;
        r /= radix;
    }
}

static int node_id(int r)
{
    int c[6] = {0}, id = 0;
    place(r, c);
    for (int d = ndims - 1; d >= 0; d--)
        id = id * dims[d] + c[d];
    return id;
}

static void check_binding(int rank)
{
    hwloc_topology_t topo;
    hwloc_topology_init(&topo);
    hwloc_topology_load(topo);
    int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)(rank % ncores));
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    EXPECT(hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) == 0, "rank %d: cannot read its binding", rank);
    EXPECT(hwloc_bitmap_isequal(mine, core->cpuset), "rank %d is not bound to core %d", rank, rank % ncores);
    hwloc_bitmap_free(mine);
    hwloc_topology_destroy(topo);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 4) {
        fprintf(stderr, "usage: t_map DIMS CORES ORDER [bind]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (char *s = argv[1]; *s; s++) {
        dims[ndims++] = (int)strtol(s, &s, 10);
        if (!*s)
            break;
    }
    cores = atoi(argv[2]);
    snprintf(order, sizeof(order), "%s", argv[3]);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int c[6];
    place(rank, c);
    char want_name[64] = "", want_coords[64] = "";
    for (int d = 0; d < ndims; d++) {
        size_t n = strlen(want_name), m = strlen(want_coords);
        snprintf(want_name + n, sizeof(want_name) - n, "%c%d", "xyzwvu"[d], c[d]);
        snprintf(want_coords + m, sizeof(want_coords) - m, "%s%d", d ? "," : "", c[d]);
    }
    char name[MPI_MAX_PROCESSOR_NAME];
    int len, flag;
    MPI_Get_processor_name(name, &len);
    EXPECT(!strcmp(name, want_name), "rank %d: processor name %s, expected %s", rank, name, want_name);
    MPI_Info info;
    MPI_Comm_get_info(MPI_COMM_WORLD, &info);
    char coords[128] = "";
    MPI_Info_get(info, "lmpi_node_coords", sizeof(coords) - 1, coords, &flag);
    EXPECT(flag && !strcmp(coords, want_coords), "rank %d: coordinates '%s', expected %s", rank, coords, want_coords);
    MPI_Info_free(&info);

    /* the shared-memory communicator is the virtual node */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nsize;
    MPI_Comm_size(node, &nsize);
    int *members = malloc(sizeof(int) * (size_t)nsize), expect_n = 0;
    MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, node);
    for (int r = 0, k = 0; r < size; r++)
        if (node_id(r) == node_id(rank)) {
            expect_n++;
            EXPECT(k < nsize && members[k] == r, "rank %d: its node communicator lacks rank %d", rank, r);
            k++;
        }
    EXPECT(nsize == expect_n, "rank %d: node communicator of %d ranks, expected %d", rank, nsize, expect_n);
    free(members);
    MPI_Comm_free(&node);

    if (argc > 4 && !strcmp(argv[4], "bind"))
        check_binding(rank);

    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("t_map: %s on %s x %d cores: %s\n", order, argv[1], cores, all ? "FAILED" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}
