/* MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED, _RESOURCE_GUIDED and
 * _HW_UNGUIDED: colors from the hardware objects (hwloc) that contain each
 * process's binding.  The topology is loaded only when one of these is
 * called. */
#include <hwloc.h>
#include <string.h>
#include <strings.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "runtime/info.h"

#define MAX_LEVELS 16

static hwloc_topology_t topo;
static bool topo_loaded;

static hwloc_topology_t topology(void)
{
    if (!topo_loaded) {
        if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0)
            topo_loaded = true;
    }
    return topo_loaded ? topo : NULL;
}

/* Logical index of the object of the given depth that contains the whole
 * binding of this process, or -1. */
static int container_at(hwloc_topology_t t, hwloc_const_cpuset_t set, int depth)
{
    hwloc_obj_t o = hwloc_get_obj_covering_cpuset(t, set);
    while (o && o->depth > depth)
        o = o->parent;
    return o && o->depth == depth ? (int)o->logical_index : -1;
}

static lmpi_status my_binding(hwloc_topology_t t, hwloc_cpuset_t set)
{
    if (hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) != 0)
        hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(t));
    return LMPI_OK;
}

/* A color unique to (node, object): node * 2^16 + index. */
static int node_color(int index)
{
    return index < 0 ? MPI_UNDEFINED : lmpi_av_world()->my_node * 65536 + index;
}

static lmpi_status guided(lmpi_info *info, int *color, char *type, size_t len)
{
    const char *want = info ? lmpi_info_value(info, "mpi_hw_resource_type") : NULL;
    *color = MPI_UNDEFINED;
    if (!want)
        return LMPI_OK; /* the standard: no (valid) type, no communicator */
    snprintf(type, len, "%s", want);
    if (strcmp(want, "mpi_shared_memory") == 0) {
        *color = lmpi_av_world()->my_node;
        return LMPI_OK;
    }
    hwloc_topology_t t = topology();
    hwloc_obj_type_t ty;
    if (!t || hwloc_type_sscanf(want, &ty, NULL, 0) != 0)
        return LMPI_OK;
    int depth = hwloc_get_type_depth(t, ty);
    if (depth < 0)
        return LMPI_OK;
    hwloc_cpuset_t set = hwloc_bitmap_alloc();
    my_binding(t, set);
    *color = node_color(container_at(t, set, depth));
    hwloc_bitmap_free(set);
    return LMPI_OK;
}

/* Unguided: the first level of the hierarchy (node, then hwloc's levels
 * from the top) at which the parent's members do not all share one object;
 * everyone computes the same level from the same gathered vectors. */
static lmpi_status unguided(lmpi_comm *comm, int *color, char *type, size_t len)
{
    hwloc_topology_t t = topology();
    int levels[MAX_LEVELS];
    char names[MAX_LEVELS][32];
    int nlev = 1;
    levels[0] = lmpi_av_world()->my_node;
    snprintf(names[0], sizeof(names[0]), "mpi_shared_memory");
    if (t) {
        hwloc_cpuset_t set = hwloc_bitmap_alloc();
        my_binding(t, set);
        int top = hwloc_topology_get_depth(t);
        for (int d = 1; d < top && nlev < MAX_LEVELS; d++) {
            levels[nlev] = container_at(t, set, d);
            snprintf(names[nlev], sizeof(names[nlev]), "%s", hwloc_obj_type_string(hwloc_get_depth_type(t, d)));
            nlev++;
        }
        hwloc_bitmap_free(set);
    }
    for (int i = nlev; i < MAX_LEVELS; i++)
        levels[i] = -1;
    int n = comm->size;
    int *all = lmpi_malloc(sizeof(levels) * (size_t)n, LMPI_MEM_OTHER);
    if (!all)
        return LMPI_ERR_NO_MEM;
    lmpi_status st = lmpi_icoll_allgather(comm, levels, all, sizeof(levels));
    *color = MPI_UNDEFINED;
    for (int l = 0; st == LMPI_OK && l < MAX_LEVELS; l++) {
        bool split = false, any = false;
        for (int r = 0; r < n; r++) {
            int v = all[r * MAX_LEVELS + l];
            any = any || v >= 0;
            split = split || v != all[l];
        }
        if (!any)
            break;
        if (split) {
            /* colors: node ids at level 0, (node, object) below */
            *color = levels[l] < 0 ? MPI_UNDEFINED : l == 0 ? levels[0] : node_color(levels[l]);
            snprintf(type, len, "%s", l < nlev ? names[l] : "");
            break;
        }
    }
    lmpi_free(all);
    return st;
}

lmpi_status lmpi_comm_hw_color(lmpi_comm *comm, int split_type, lmpi_info *info, int *color, char *type, size_t len)
{
    if (split_type == MPI_COMM_TYPE_HW_UNGUIDED)
        return unguided(comm, color, type, len);
    return guided(info, color, type, len);
}

/* MPI_Get_hw_resource_info: the resource types this process may name in
 * MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED), each with the number of such
 * objects its binding covers ("mpi_shared_memory" is the node). */
lmpi_status lmpi_impl_Get_hw_resource_info(MPI_Info *hw_info)
{
    lmpi_info *i = lmpi_info_new();
    if (!i)
        return LMPI_ERR_NO_MEM;
    lmpi_status st = lmpi_info_put(i, "mpi_shared_memory", "1");
    hwloc_topology_t t = topology();
    if (t && st == LMPI_OK) {
        hwloc_cpuset_t set = hwloc_bitmap_alloc();
        my_binding(t, set);
        int top = hwloc_topology_get_depth(t);
        for (int d = 1; d < top && st == LMPI_OK; d++) {
            char n[16];
            snprintf(n, sizeof(n), "%d", hwloc_get_nbobjs_inside_cpuset_by_depth(t, set, (unsigned)d));
            st = lmpi_info_put(i, hwloc_obj_type_string(hwloc_get_depth_type(t, d)), n);
        }
        hwloc_bitmap_free(set);
    }
    if (st != LMPI_OK) {
        lmpi_info_destroy(i);
        return st;
    }
    *hw_info = (MPI_Info)i;
    return LMPI_OK;
}
