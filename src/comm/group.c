/* MPI groups.  A group is a rank map (the same compressed forms as a
 * communicator's) plus this process's rank in it, so that a communicator
 * made from a group inherits a regular map without another scan. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"

static uint64_t key_of(lmpi_gpid g) { return (uint64_t)g.pgid << 32 | g.lpid; }
static lmpi_gpid my_gpid(void) { return (lmpi_gpid){0, (uint32_t)lmpi_rt.world_rank}; }

lmpi_status lmpi_group_from_handle(MPI_Group h, lmpi_group **out, const char *what)
{
    static lmpi_group empty = {.magic = LMPI_MAGIC_GROUP, .refs = 1, .size = 0, .rank = MPI_UNDEFINED};
    if (h == MPI_GROUP_EMPTY) {
        *out = &empty;
        return LMPI_OK;
    }
    lmpi_group *g = (lmpi_group *)h;
    if (h == MPI_GROUP_NULL || (uintptr_t)h < LMPI_PREDEF_LIMIT || g->magic != LMPI_MAGIC_GROUP) {
        lmpi_err_detail(h == MPI_GROUP_NULL ? "%s is MPI_GROUP_NULL" : "%s is not a group (freed or garbage handle)",
                        what);
        return LMPI_ERR_GROUP;
    }
    *out = g;
    return LMPI_OK;
}

static lmpi_status group_adopt(lmpi_rankmap *map, MPI_Group *out)
{
    if (map->size == 0) {
        lmpi_rankmap_release(map);
        *out = MPI_GROUP_EMPTY;
        return LMPI_OK;
    }
    lmpi_group *g = lmpi_malloc(sizeof(*g), LMPI_MEM_COMM);
    if (!g) {
        lmpi_rankmap_release(map);
        return LMPI_ERR_NO_MEM;
    }
    g->magic = LMPI_MAGIC_GROUP;
    g->refs = 1;
    g->session = 0;
    g->map = *map;
    g->size = map->size;
    int r = lmpi_rankmap_find(&g->map, my_gpid());
    g->rank = r < 0 ? MPI_UNDEFINED : r;
    *out = (MPI_Group)g;
    return LMPI_OK;
}

lmpi_status lmpi_group_new(const lmpi_rankmap *map, MPI_Group *out)
{
    lmpi_rankmap m;
    lmpi_rankmap_copy(&m, map);
    return group_adopt(&m, out);
}

lmpi_status lmpi_group_from_gpids(const lmpi_gpid *gp, int n, MPI_Group *out)
{
    lmpi_rankmap m;
    if (!lmpi_rankmap_from_gpids(&m, gp, n))
        return LMPI_ERR_NO_MEM;
    return group_adopt(&m, out);
}

/* A subset of g by parent ranks idx[0..n). */
static lmpi_status group_sub(lmpi_group *g, const int *idx, int n, MPI_Group *out)
{
    if (n == 0) {
        *out = MPI_GROUP_EMPTY;
        return LMPI_OK;
    }
    lmpi_rankmap m;
    if (!lmpi_rankmap_derive(&m, &g->map, idx, n))
        return LMPI_ERR_NO_MEM;
    return group_adopt(&m, out);
}

/* ---- membership lookups: a sorted (gpid, rank) index ------------------------ */
typedef struct {
    uint64_t key;
    int rank;
} member;

static int member_cmp(const void *a, const void *b)
{
    uint64_t x = ((const member *)a)->key, y = ((const member *)b)->key;
    return x < y ? -1 : x > y;
}

static member *index_of(const lmpi_group *g)
{
    member *m = lmpi_malloc(sizeof(*m) * (size_t)(g->size ? g->size : 1), LMPI_MEM_OTHER);
    if (!m)
        return NULL;
    for (int r = 0; r < g->size; r++)
        m[r] = (member){key_of(lmpi_rankmap_gpid(&g->map, r)), r};
    qsort(m, (size_t)g->size, sizeof(*m), member_cmp);
    return m;
}

static int lookup(const member *m, int n, uint64_t key)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (m[mid].key == key)
            return m[mid].rank;
        if (m[mid].key < key)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* ---- MPI functions -------------------------------------------------------- */

lmpi_status lmpi_impl_Group_size(MPI_Group group, int *size)
{
    lmpi_group *g;
    lmpi_status st = lmpi_group_from_handle(group, &g, "group");
    if (st == LMPI_OK)
        *size = g->size;
    return st;
}

lmpi_status lmpi_impl_Group_rank(MPI_Group group, int *rank)
{
    lmpi_group *g;
    lmpi_status st = lmpi_group_from_handle(group, &g, "group");
    if (st == LMPI_OK)
        *rank = g->rank;
    return st;
}

lmpi_status lmpi_impl_Group_free(MPI_Group *group)
{
    lmpi_group *g;
    lmpi_status st = lmpi_group_from_handle(*group, &g, "group");
    if (st != LMPI_OK)
        return st;
    if (*group != MPI_GROUP_EMPTY && --g->refs == 0) {
        lmpi_rankmap_release(&g->map);
        g->magic = 0;
        lmpi_free(g);
    }
    *group = MPI_GROUP_NULL;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_group(lmpi_comm *comm, MPI_Group *group)
{
    return lmpi_group_new(lmpi_comm_local_map(comm), group);
}

lmpi_status lmpi_impl_Comm_remote_group(lmpi_comm *comm, MPI_Group *group)
{
    if (!comm->is_inter) {
        lmpi_err_detail("%s is not an intercommunicator", lmpi_comm_display_name(comm));
        return LMPI_ERR_COMM;
    }
    return lmpi_group_new(&comm->map, group);
}

/* The ranks must name distinct members of g. */
static lmpi_status check_ranks(const lmpi_group *g, int n, const int *ranks)
{
    if (n < 0 || n > g->size) {
        lmpi_err_detail("n %d but the group has %d ranks", n, g->size);
        return LMPI_ERR_ARG;
    }
    if (n > 0 && !ranks) {
        lmpi_err_detail("ranks is NULL");
        return LMPI_ERR_ARG;
    }
    bool *seen = lmpi_calloc((size_t)g->size + 1, 1, LMPI_MEM_OTHER);
    if (!seen)
        return LMPI_ERR_NO_MEM;
    lmpi_status st = LMPI_OK;
    for (int i = 0; i < n && st == LMPI_OK; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size) {
            lmpi_err_detail("ranks[%d] = %d is not a rank of the group (size %d)", i, ranks[i], g->size);
            st = LMPI_ERR_RANK;
        } else if (seen[ranks[i]]) {
            lmpi_err_detail("ranks[%d] = %d appears twice", i, ranks[i]);
            st = LMPI_ERR_RANK;
        } else {
            seen[ranks[i]] = true;
        }
    }
    lmpi_free(seen);
    return st;
}

/* The members named by idx (in that order), or all the others (in group
 * order). */
static lmpi_status subset(lmpi_group *g, const int *idx, int k, bool exclude, MPI_Group *newgroup)
{
    if (!exclude)
        return group_sub(g, idx, k, newgroup);
    bool *drop = lmpi_calloc((size_t)g->size + 1, 1, LMPI_MEM_OTHER);
    int *keep = lmpi_malloc(sizeof(int) * (size_t)(g->size + 1), LMPI_MEM_OTHER);
    lmpi_status st = LMPI_ERR_NO_MEM;
    if (drop && keep) {
        for (int i = 0; i < k; i++)
            drop[idx[i]] = true;
        int m = 0;
        for (int r = 0; r < g->size; r++)
            if (!drop[r])
                keep[m++] = r;
        st = group_sub(g, keep, m, newgroup);
    }
    lmpi_free(drop);
    lmpi_free(keep);
    return st;
}

static lmpi_status ranks_group(MPI_Group group, int n, const int ranks[], bool exclude, MPI_Group *newgroup)
{
    lmpi_group *g;
    lmpi_status st = lmpi_group_from_handle(group, &g, "group");
    if (st == LMPI_OK)
        st = check_ranks(g, n, ranks);
    return st != LMPI_OK ? st : subset(g, ranks, n, exclude, newgroup);
}

lmpi_status lmpi_impl_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return ranks_group(group, n, ranks, false, newgroup);
}

lmpi_status lmpi_impl_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return ranks_group(group, n, ranks, true, newgroup);
}

/* Expand (first, last, stride) triplets into ranks, checking each. */
static lmpi_status expand_ranges(const lmpi_group *g, int n, int ranges[][3], int **out, int *count)
{
    if (n < 0) {
        lmpi_err_detail("n %d is negative", n);
        return LMPI_ERR_ARG;
    }
    if (n > 0 && !ranges) {
        lmpi_err_detail("ranges is NULL");
        return LMPI_ERR_ARG;
    }
    bool *seen = lmpi_calloc((size_t)g->size + 1, 1, LMPI_MEM_OTHER);
    int *idx = lmpi_malloc(sizeof(int) * (size_t)(g->size + 1), LMPI_MEM_OTHER);
    if (!seen || !idx) {
        lmpi_free(seen);
        lmpi_free(idx);
        return LMPI_ERR_NO_MEM;
    }
    int k = 0;
    lmpi_status st = LMPI_OK;
    for (int i = 0; i < n && st == LMPI_OK; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0 || first < 0 || first >= g->size || last < 0 || last >= g->size ||
            (stride > 0 && first > last) || (stride < 0 && first < last)) {
            lmpi_err_detail("ranges[%d] = (%d, %d, %d) is not a valid range of a group of %d", i, first, last, stride,
                            g->size);
            st = LMPI_ERR_RANK;
            break;
        }
        for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (seen[r]) {
                lmpi_err_detail("rank %d appears twice in the ranges", r);
                st = LMPI_ERR_RANK;
                break;
            }
            seen[r] = true;
            idx[k++] = r;
        }
    }
    lmpi_free(seen);
    if (st != LMPI_OK) {
        lmpi_free(idx);
        return st;
    }
    *out = idx;
    *count = k;
    return LMPI_OK;
}

/* The ranks named by the ranges (incl), or all the others (excl), in order. */
static lmpi_status ranges_group(MPI_Group group, int n, int ranges[][3], bool exclude, MPI_Group *newgroup)
{
    lmpi_group *g;
    int *idx, k;
    lmpi_status st = lmpi_group_from_handle(group, &g, "group");
    if (st == LMPI_OK)
        st = expand_ranges(g, n, ranges, &idx, &k);
    if (st != LMPI_OK)
        return st;
    st = subset(g, idx, k, exclude, newgroup);
    lmpi_free(idx);
    return st;
}

lmpi_status lmpi_impl_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return ranges_group(group, n, ranges, false, newgroup);
}

lmpi_status lmpi_impl_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return ranges_group(group, n, ranges, true, newgroup);
}

/* Set operations keep the order of the first group, then the second's. */
typedef enum { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE } set_op;

static lmpi_status set_operation(MPI_Group h1, MPI_Group h2, set_op op, MPI_Group *out)
{
    lmpi_group *a, *b;
    lmpi_status st = lmpi_group_from_handle(h1, &a, "group1");
    if (st == LMPI_OK)
        st = lmpi_group_from_handle(h2, &b, "group2");
    if (st != LMPI_OK)
        return st;
    member *ib = index_of(b), *ia = index_of(a);
    lmpi_gpid *res = lmpi_malloc(sizeof(*res) * (size_t)(a->size + b->size + 1), LMPI_MEM_OTHER);
    if (!ia || !ib || !res) {
        st = LMPI_ERR_NO_MEM;
        goto out;
    }
    int n = 0;
    for (int r = 0; r < a->size; r++) {
        lmpi_gpid g = lmpi_rankmap_gpid(&a->map, r);
        bool in_b = lookup(ib, b->size, key_of(g)) >= 0;
        if (op == SET_UNION || (op == SET_INTERSECTION) == in_b)
            res[n++] = g;
    }
    if (op == SET_UNION)
        for (int r = 0; r < b->size; r++) {
            lmpi_gpid g = lmpi_rankmap_gpid(&b->map, r);
            if (lookup(ia, a->size, key_of(g)) < 0)
                res[n++] = g;
        }
    st = n ? lmpi_group_from_gpids(res, n, out) : (*out = MPI_GROUP_EMPTY, LMPI_OK);
out:
    lmpi_free(ia);
    lmpi_free(ib);
    lmpi_free(res);
    return st;
}

lmpi_status lmpi_impl_Group_union(MPI_Group g1, MPI_Group g2, MPI_Group *out) { return set_operation(g1, g2, SET_UNION, out); }
lmpi_status lmpi_impl_Group_intersection(MPI_Group g1, MPI_Group g2, MPI_Group *out)
{
    return set_operation(g1, g2, SET_INTERSECTION, out);
}
lmpi_status lmpi_impl_Group_difference(MPI_Group g1, MPI_Group g2, MPI_Group *out)
{
    return set_operation(g1, g2, SET_DIFFERENCE, out);
}

lmpi_status lmpi_impl_Group_translate_ranks(MPI_Group h1, int n, const int ranks1[], MPI_Group h2, int ranks2[])
{
    lmpi_group *a, *b;
    lmpi_status st = lmpi_group_from_handle(h1, &a, "group1");
    if (st == LMPI_OK)
        st = lmpi_group_from_handle(h2, &b, "group2");
    if (st != LMPI_OK)
        return st;
    if (n < 0 || (n > 0 && (!ranks1 || !ranks2))) {
        lmpi_err_detail(n < 0 ? "n %d is negative" : "ranks1 or ranks2 is NULL", n);
        return LMPI_ERR_ARG;
    }
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= a->size)) {
            lmpi_err_detail("ranks1[%d] = %d is not a rank of group1 (size %d)", i, ranks1[i], a->size);
            return LMPI_ERR_RANK;
        }
    member *ib = index_of(b);
    if (!ib)
        return LMPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        int r = lookup(ib, b->size, key_of(lmpi_rankmap_gpid(&a->map, ranks1[i])));
        ranks2[i] = r < 0 ? MPI_UNDEFINED : r;
    }
    lmpi_free(ib);
    return LMPI_OK;
}

/* IDENT: same members in the same order; SIMILAR: same members. */
int lmpi_group_compare_maps(const lmpi_rankmap *a, const lmpi_rankmap *b)
{
    if (a->size != b->size)
        return MPI_UNEQUAL;
    bool same_order = true;
    for (int r = 0; r < a->size && same_order; r++)
        same_order = key_of(lmpi_rankmap_gpid(a, r)) == key_of(lmpi_rankmap_gpid(b, r));
    if (same_order)
        return MPI_IDENT;
    lmpi_group ga = {.size = a->size, .map = *a};
    member *ia = index_of(&ga);
    if (!ia)
        return MPI_UNEQUAL;
    int res = MPI_SIMILAR;
    for (int r = 0; r < b->size && res == MPI_SIMILAR; r++)
        if (lookup(ia, a->size, key_of(lmpi_rankmap_gpid(b, r))) < 0)
            res = MPI_UNEQUAL;
    lmpi_free(ia);
    return res;
}

lmpi_status lmpi_impl_Group_compare(MPI_Group h1, MPI_Group h2, int *result)
{
    lmpi_group *a, *b;
    lmpi_status st = lmpi_group_from_handle(h1, &a, "group1");
    if (st == LMPI_OK)
        st = lmpi_group_from_handle(h2, &b, "group2");
    if (st == LMPI_OK)
        *result = lmpi_group_compare_maps(&a->map, &b->map);
    return st;
}

lmpi_status lmpi_impl_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    lmpi_status st = lmpi_session_check(session);
    if (st != LMPI_OK)
        return st;
    if (!pset_name) {
        lmpi_err_detail("pset_name is NULL");
        return LMPI_ERR_ARG;
    }
    lmpi_rankmap m;
    int p = lmpi_pset_find(pset_name);
    if (p == 0)
        lmpi_rankmap_direct(&m, lmpi_rt.world_size, 0);
    else if (p == 1)
        lmpi_rankmap_derive_pattern(&m, &lmpi_comm_world->map, 1, lmpi_rt.world_rank, 1, 1);
    else if (!lmpi_dpm_pset_map(pset_name, &m)) {
        lmpi_err_detail("no process set named \"%s\" (see MPI_Session_get_nth_pset)", pset_name);
        return LMPI_ERR_ARG;
    }
    st = group_adopt(&m, newgroup);
    if (st == LMPI_OK && *newgroup != MPI_GROUP_EMPTY)
        ((lmpi_group *)*newgroup)->session = lmpi_session_id(session);
    return st;
}
