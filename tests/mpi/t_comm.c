/* Communicators and groups: every constructor, the rank-map mode it got,
 * communication on the result, attributes, intercommunicators, nonblocking
 * dup, bad input, and memory returning to its start after freeing all. */
#include <string.h>

#include "mpitest.h"

static int rank, size;

#define pvar mpitest_pvar_read

static int table_baseline; /* argument "table": LMPI_RANKMAP=table, every map is a table */

static const char *mode_of(MPI_Comm c, char *buf)
{
    MPI_Info info;
    int flag, len = 64;
    MPI_Comm_get_info(c, &info);
    MPI_Info_get_string(info, "lmpi_rankmap", &len, buf, &flag);
    MPI_Info_free(&info);
    return flag ? buf : "?";
}

/* the mode a communicator got, or "table" under the baseline */
static int mode_is(MPI_Comm c, const char *want)
{
    char buf[64];
    return !strcmp(mode_of(c, buf), table_baseline ? "table" : want);
}

/* Every rank sends its world rank to the next rank of c and checks what the
 * previous one sent. */
static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

static void check_ring(MPI_Comm c, const int *world_of)
{
    int r, n, in = -1;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    MPI_Sendrecv(&rank, 1, MPI_INT, (r + 1) % n, 7, &in, 1, MPI_INT, (r - 1 + n) % n, 7, c, MPI_STATUS_IGNORE);
    CHECK_EQ(in, world_of[(r - 1 + n) % n]);
}

static void test_groups(void)
{
    MPI_Group world, g, h, u, x;
    int n, r, res;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int evens[64], ne = 0;
    for (int i = 0; i < size; i += 2)
        evens[ne++] = i;
    MPI_Group_incl(world, ne, evens, &g);
    MPI_Group_size(g, &n);
    CHECK_EQ(n, ne);
    MPI_Group_rank(g, &r);
    CHECK_EQ(r, rank % 2 ? MPI_UNDEFINED : rank / 2);
    MPI_Group_excl(world, ne, evens, &h); /* the odd ranks */
    MPI_Group_size(h, &n);
    CHECK_EQ(n, size - ne);
    MPI_Group_union(g, h, &u);
    MPI_Group_compare(u, world, &res);
    CHECK_EQ(res, size > 2 ? MPI_SIMILAR : MPI_IDENT);
    MPI_Group_intersection(g, h, &x);
    CHECK(x == MPI_GROUP_EMPTY);
    MPI_Group_free(&x);
    MPI_Group_difference(world, h, &x);
    MPI_Group_compare(x, g, &res);
    CHECK_EQ(res, MPI_IDENT);
    MPI_Group_free(&x);
    int ranges[1][3] = {{size - 1, 0, -1}}; /* reversed world */
    MPI_Group_range_incl(world, 1, ranges, &x);
    int in[3] = {0, size - 1, MPI_PROC_NULL}, out[3];
    MPI_Group_translate_ranks(x, 3, in, world, out);
    CHECK_EQ(out[0], size - 1);
    CHECK_EQ(out[1], 0);
    CHECK_EQ(out[2], MPI_PROC_NULL);
    MPI_Group_translate_ranks(world, 1, in, h, out);
    CHECK_EQ(out[0], MPI_UNDEFINED);
    MPI_Group_free(&x);
    int ranges2[1][3] = {{0, size - 1, 2}};
    MPI_Group_range_excl(world, 1, ranges2, &x);
    MPI_Group_compare(x, h, &res);
    CHECK_EQ(res, MPI_IDENT);
    MPI_Group_free(&x);
    /* bad input */
    int bad[1] = {size};
    CHECK_EQ(MPI_Group_incl(world, 1, bad, &x), MPI_ERR_RANK);
    int dup2[2] = {0, 0};
    if (size >= 2)
        CHECK_EQ(MPI_Group_incl(world, 2, dup2, &x), MPI_ERR_RANK);
    CHECK_EQ(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP);
    MPI_Group_free(&g);
    MPI_Group_free(&h);
    MPI_Group_free(&u);
    MPI_Group_free(&world);
    CHECK(world == MPI_GROUP_NULL);
}

static void test_split_dup(void)
{
    int world_of[256];
    MPI_Comm dup, oe, lh, rev, rnd;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK(mode_is(dup, "direct"));
    int res;
    MPI_Comm_compare(dup, MPI_COMM_WORLD, &res);
    CHECK_EQ(res, MPI_CONGRUENT);
    for (int i = 0; i < size; i++)
        world_of[i] = i;
    check_ring(dup, world_of);
    /* a message on the dup never matches a receive on the world */
    if (size > 1) {
        int v = 5, flag;
        if (rank == 0)
            MPI_Send(&v, 1, MPI_INT, 1, 0, dup);
        if (rank == 1) {
            MPI_Status st;
            do
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &flag, &st);
            while (!flag);
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            CHECK_EQ(flag, 0);
            MPI_Recv(&v, 1, MPI_INT, 0, 0, dup, MPI_STATUS_IGNORE);
        }
    }
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &oe);
    int n, r;
    MPI_Comm_size(oe, &n);
    MPI_Comm_rank(oe, &r);
    CHECK_EQ(n, rank % 2 ? size / 2 : (size + 1) / 2);
    CHECK_EQ(r, rank / 2);
    if (n > 1)
        CHECK(mode_is(oe, "stride"));
    for (int i = 0; i < n; i++)
        world_of[i] = 2 * i + rank % 2;
    check_ring(oe, world_of);
    MPI_Comm_split(MPI_COMM_WORLD, rank >= size / 2, 0, &lh);
    CHECK(mode_is(lh, rank >= size / 2 && size > 1 ? "offset" : "direct"));
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_rank(rev, &r);
    CHECK_EQ(r, size - 1 - rank);
    if (size > 1)
        CHECK(mode_is(rev, "stride")); /* stride -1 */
    for (int i = 0; i < size; i++)
        world_of[i] = size - 1 - i;
    check_ring(rev, world_of);
    /* an irregular order: a lookup table */
    /* coprime with size (the keys are a permutation) and not 1 modulo size
     * (which would keep the order: 5 at 4 ranks) */
    int mul = 3;
    while (size > 3 && (gcd(mul, size) != 1 || mul % size == 1))
        mul++;
    int key = (rank * mul) % size;
    MPI_Comm_split(MPI_COMM_WORLD, 0, key, &rnd);
    MPI_Comm_rank(rnd, &r);
    CHECK_EQ(r, key);
    if (size > 3)
        CHECK(mode_is(rnd, "lut"));
    for (int i = 0; i < size; i++)
        world_of[(i * mul) % size] = i;
    check_ring(rnd, world_of);
    /* split of a split: odd/even of a reversed communicator */
    MPI_Comm sub;
    MPI_Comm_rank(rev, &r);
    MPI_Comm_split(rev, r % 2, r, &sub);
    MPI_Comm_size(sub, &n);
    for (int i = 0; i < n; i++)
        world_of[i] = size - 1 - (2 * i + r % 2);
    check_ring(sub, world_of);
    MPI_Comm_free(&sub);
    MPI_Comm undef;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &undef);
    CHECK(rank == 0 ? undef == MPI_COMM_NULL : undef != MPI_COMM_NULL);
    if (undef != MPI_COMM_NULL)
        MPI_Comm_free(&undef);
    CHECK_EQ(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &undef), MPI_ERR_ARG);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&oe);
    MPI_Comm_free(&lh);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&rnd);
    CHECK(rnd == MPI_COMM_NULL);
}

static void test_split_type(void)
{
    MPI_Comm shm, hw;
    /* ranks per node: emulated (LMPI_NODE_SIZE), or as the launcher placed
     * them on hosts (T_NODE_SIZE) */
    const char *ns = getenv("LMPI_NODE_SIZE") ? getenv("LMPI_NODE_SIZE") : getenv("T_NODE_SIZE");
    int n, nodesize = ns ? atoi(ns) : 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
    MPI_Comm_size(shm, &n);
    int expect = nodesize ? (rank / nodesize + 1) * nodesize <= size ? nodesize : size % nodesize : size;
    CHECK_EQ(n, expect);
    MPI_Comm_free(&shm);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &hw);
    if (hw != MPI_COMM_NULL) { /* a strict subset; the info names the level (MPI 4.1) */
        char level[MPI_MAX_INFO_VAL];
        int flag = 0;
        MPI_Info_get_string(info, "mpi_hw_resource_type", &(int){sizeof(level)}, level, &flag);
        CHECK(flag);
        if (nodesize)
            CHECK(!strcmp(level, "mpi_shared_memory"));
        MPI_Comm_size(hw, &n);
        CHECK(n < size);
        if (nodesize)
            CHECK_EQ(n, expect);
        MPI_Comm_free(&hw);
    } else {
        CHECK(!nodesize || nodesize >= size);
    }
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", "Machine");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &hw);
    CHECK(hw != MPI_COMM_NULL);
    MPI_Comm_size(hw, &n);
    CHECK_EQ(n, expect);
    MPI_Info got;
    char v[64];
    int len = sizeof(v), flag;
    MPI_Comm_get_info(hw, &got);
    MPI_Info_get_string(got, "mpi_hw_resource_type", &len, v, &flag);
    CHECK(flag && !strcmp(v, "Machine"));
    MPI_Info_free(&got);
    MPI_Comm_free(&hw);
    MPI_Info_set(info, "mpi_hw_resource_type", "NoSuchThing");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &hw);
    CHECK(hw == MPI_COMM_NULL);
    MPI_Info_free(&info);
    CHECK_EQ(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &hw), MPI_ERR_ARG);
}

static void test_create(void)
{
    MPI_Group world, odd;
    MPI_Comm c;
    int world_of[256], n = 0;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int ranges[1][3] = {{1, size - 1, 2}};
    if (size < 2) {
        MPI_Group_free(&world);
        return;
    }
    MPI_Group_range_incl(world, 1, ranges, &odd);
    for (int i = 1; i < size; i += 2)
        world_of[n++] = i;
    MPI_Comm_create(MPI_COMM_WORLD, odd, &c);
    CHECK(rank % 2 ? c != MPI_COMM_NULL : c == MPI_COMM_NULL);
    if (c != MPI_COMM_NULL) {
        check_ring(c, world_of);
        MPI_Comm_free(&c);
    }
    if (rank % 2) { /* only the members call */
        MPI_Comm_create_group(MPI_COMM_WORLD, odd, 42, &c);
        check_ring(c, world_of);
        MPI_Comm_free(&c);
    }
    MPI_Comm_create_from_group(world, "org.leanmpi.test", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    for (int i = 0; i < size; i++)
        world_of[i] = i;
    check_ring(c, world_of);
    MPI_Errhandler e;
    MPI_Comm_get_errhandler(c, &e);
    CHECK(e == MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&e);
    MPI_Comm_free(&c);
    MPI_Group_free(&odd);
    MPI_Group_free(&world);
}

static void test_inter(void)
{
    if (size < 2)
        return;
    MPI_Comm half, inter, merged, idup;
    int color = rank % 2, n, r, flag;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    /* leaders: world ranks 0 and 1 */
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, 99, &inter);
    MPI_Comm_test_inter(inter, &flag);
    CHECK(flag);
    MPI_Comm_remote_size(inter, &n);
    CHECK_EQ(n, color ? (size + 1) / 2 : size / 2);
    MPI_Comm_rank(inter, &r);
    CHECK_EQ(r, rank / 2);
    /* every member sends its world rank to rank 0 of the other group */
    MPI_Request sreq;
    MPI_Isend(&rank, 1, MPI_INT, 0, 3, inter, &sreq);
    if (r == 0) {
        for (int i = 0; i < n; i++) {
            int v;
            MPI_Status st;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, inter, &st);
            CHECK_EQ(v, 2 * st.MPI_SOURCE + !color);
        }
    }
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    MPI_Barrier(inter);
    MPI_Request req;
    MPI_Comm_idup(inter, &idup, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Comm_test_inter(idup, &flag);
    CHECK(flag);
    MPI_Comm_free(&idup);
    /* split of the intercommunicator: color by (world rank / 2) % 2 on both
     * sides, keys reversed; partners exchange world ranks */
    {
        int c2 = (rank / 2) % 2, lsz = 0, rsz = 0;
        for (int w = 0; w < size; w++)
            if ((w / 2) % 2 == c2) {
                if (w % 2 == color)
                    lsz++;
                else
                    rsz++;
            }
        MPI_Comm sp;
        MPI_Comm_split(inter, c2, -rank, &sp);
        if (lsz && rsz) {
            int a, b, lr;
            MPI_Comm_size(sp, &a);
            MPI_Comm_remote_size(sp, &b);
            MPI_Comm_rank(sp, &lr);
            CHECK_EQ(a, lsz);
            CHECK_EQ(b, rsz);
            (void)lr;
            int in[64];
            MPI_Request q[128];
            for (int k = 0; k < b; k++) { /* every remote partner, once */
                MPI_Irecv(&in[k], 1, MPI_INT, k, 4, sp, &q[k]);
                MPI_Isend(&rank, 1, MPI_INT, k, 4, sp, &q[b + k]);
            }
            MPI_Waitall(2 * b, q, MPI_STATUSES_IGNORE);
            for (int k = 0; k < b; k++)
                CHECK(in[k] >= 0 && in[k] % 2 != color && (in[k] / 2) % 2 == c2);
            MPI_Comm_free(&sp);
        } else {
            CHECK(sp == MPI_COMM_NULL);
        }
        /* create: each side keeps the first half of its group */
        MPI_Group lg, half;
        MPI_Comm_group(inter, &lg);
        int lsize, rsize, keep[64];
        MPI_Comm_size(inter, &lsize);
        MPI_Comm_remote_size(inter, &rsize);
        for (int k = 0; k < (lsize + 1) / 2; k++)
            keep[k] = k;
        MPI_Group_incl(lg, (lsize + 1) / 2, keep, &half);
        MPI_Comm cr;
        MPI_Comm_create(inter, half, &cr);
        int myr;
        MPI_Group_rank(half, &myr);
        if (myr != MPI_UNDEFINED) {
            int b;
            MPI_Comm_remote_size(cr, &b);
            CHECK_EQ(b, (rsize + 1) / 2);
            MPI_Barrier(cr);
            MPI_Comm_free(&cr);
        } else {
            CHECK(cr == MPI_COMM_NULL);
        }
        MPI_Group_free(&half);
        MPI_Group_free(&lg);
    }
    /* the odd group asks to be high: merged order is evens then odds */
    MPI_Intercomm_merge(inter, color, &merged);
    MPI_Comm_rank(merged, &r);
    CHECK_EQ(r, color ? size / 2 + (size % 2) + rank / 2 : rank / 2);
    MPI_Comm_size(merged, &n);
    CHECK_EQ(n, size);
    int world_of[256];
    for (int i = 0; i < size; i++)
        world_of[i] = i < (size + 1) / 2 ? 2 * i : 2 * (i - (size + 1) / 2) + 1;
    check_ring(merged, world_of);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    /* overlapping groups are refused */
    CHECK_EQ(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, rank, 5, &inter), MPI_ERR_ARG);
}

static int deletes, copies;
static int copy_fn(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)kv, (void)extra;
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c, (void)kv, (void)val, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static int failing_copy_fn(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)kv, (void)extra, (void)in, (void)out;
    *flag = 1;
    return MPI_ERR_OTHER;
}

static void test_attrs(void)
{
    int kv1, kv2, flag;
    void *v;
    static char base[4];
    MPI_Comm_create_keyval(copy_fn, delete_fn, &kv1, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv2, NULL);
    MPI_Comm c, d;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_attr(c, kv1, base);
    MPI_Comm_set_attr(c, kv2, base);
    MPI_Comm_dup(c, &d);
    CHECK_EQ(copies, 1);
    MPI_Comm_get_attr(d, kv1, &v, &flag);
    CHECK(flag && v == base + 1);
    MPI_Comm_get_attr(d, kv2, &v, &flag);
    CHECK(!flag); /* the null copy function does not copy */
    MPI_Comm_free_keyval(&kv1);   /* still attached: stays usable by the attributes */
    CHECK_EQ(kv1, MPI_KEYVAL_INVALID);
    MPI_Comm_free(&d);
    CHECK_EQ(deletes, 1);
    MPI_Comm_delete_attr(c, kv2);
    MPI_Comm_free(&c);
    CHECK_EQ(deletes, 2);
    int *tag_ub;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    CHECK(flag && *tag_ub >= 32767);
    int *wtg;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wtg, &flag);
    CHECK(flag);
    /* keyval misuse */
    CHECK_EQ(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, base), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Comm_get_attr(MPI_COMM_WORLD, 123456, &v, &flag), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Comm_free_keyval(&kv2), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_free_keyval(&kv2), MPI_ERR_KEYVAL);
    int tkv;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &tkv, NULL);
    CHECK_EQ(MPI_Comm_delete_attr(MPI_COMM_WORLD, tkv), MPI_SUCCESS); /* not set: nothing to do (as MPICH) */
    MPI_Comm_free_keyval(&tkv);
    /* a copy callback that fails fails the dup, which leaves MPI_COMM_NULL
     * (as MPICH; MPICH's attr/attrerr checks it) */
    int fkv;
    MPI_Comm_create_keyval(failing_copy_fn, MPI_COMM_NULL_DELETE_FN, &fkv, NULL);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_set_attr(c, fkv, base);
    d = MPI_COMM_WORLD;
    CHECK(MPI_Comm_dup(c, &d) != MPI_SUCCESS);
    CHECK(d == MPI_COMM_NULL);
    d = MPI_COMM_WORLD;
    CHECK(MPI_Comm_dup_with_info(c, MPI_INFO_NULL, &d) != MPI_SUCCESS);
    CHECK(d == MPI_COMM_NULL);
    MPI_Comm_free(&c);
    MPI_Comm_free_keyval(&fkv);
}

static void test_idup_and_errors(void)
{
    enum { N = 4 };
    MPI_Comm c[N];
    MPI_Request r[N];
    for (int i = 0; i < N; i++)
        MPI_Comm_idup(i % 2 ? MPI_COMM_SELF : MPI_COMM_WORLD, &c[i], &r[i]);
    /* point-to-point traffic between the nonblocking dups */
    int v = rank, in = -1;
    MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 1, &in, 1, MPI_INT, (rank - 1 + size) % size, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Waitall(N, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < N; i++) {
        int n;
        MPI_Comm_size(c[i], &n);
        CHECK_EQ(n, i % 2 ? 1 : size);
        MPI_Barrier(c[i]);
        MPI_Comm_free(&c[i]);
    }
    MPI_Comm w = MPI_COMM_WORLD;
    CHECK_EQ(MPI_Comm_free(&w), MPI_ERR_COMM);
    MPI_Comm s = MPI_COMM_SELF;
    CHECK_EQ(MPI_Comm_free(&s), MPI_ERR_COMM);
    MPI_Comm nul = MPI_COMM_NULL;
    CHECK_EQ(MPI_Comm_free(&nul), MPI_ERR_COMM);
    int n;
    CHECK_EQ(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_get_name(d, name, &len);
    CHECK_EQ(len, 0);
    MPI_Comm_set_name(d, "mine");
    MPI_Comm_get_name(d, name, &len);
    CHECK(!strcmp(name, "mine"));
    MPI_Comm_free(&d);
}

/* Outstanding idups over two parents, started and waited for in opposite
 * orders on alternate ranks (allowed: different communicators): the
 * members' context counters are the same for both agreements, which once
 * gave both new communicators one id, so every message below crossed to
 * the other; and a wait on one must move the other along (MPICH's
 * comm_idup_overlap hung when it did not). */
static void test_idup_order(void)
{
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    int crossed = 0;
    for (int i = 0; i < 50; i++) {
        MPI_Comm da, db;
        MPI_Request r[2];
        if (rank % 2 == 0) {
            MPI_Comm_idup(a, &da, &r[0]);
            MPI_Comm_idup(b, &db, &r[1]);
        } else {
            MPI_Comm_idup(b, &db, &r[1]);
            MPI_Comm_idup(a, &da, &r[0]);
        }
        MPI_Wait(&r[rank % 2], MPI_STATUS_IGNORE);
        MPI_Wait(&r[1 - rank % 2], MPI_STATUS_IGNORE);
        int to = (rank + 1) % size, from = (rank - 1 + size) % size, x = 1, y = 2, ix = 0, iy = 0;
        MPI_Request q[4];
        MPI_Irecv(&ix, 1, MPI_INT, from, 0, da, &q[0]);
        MPI_Irecv(&iy, 1, MPI_INT, from, 0, db, &q[1]);
        MPI_Isend(&y, 1, MPI_INT, to, 0, db, &q[2]);
        MPI_Isend(&x, 1, MPI_INT, to, 0, da, &q[3]);
        MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
        crossed += ix != 1 || iy != 2;
        MPI_Comm_free(&da);
        MPI_Comm_free(&db);
    }
    CHECK_EQ(crossed, 0);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
}

/* MPI_Comm_free with operations pending: they complete normally. */
static void test_free_pending(void)
{
    if (size < 2)
        return;
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    int peer = rank ^ 1, in = -1, out = rank + 100;
    if (peer >= size)
        peer = rank; /* odd size: the last rank talks to itself */
    MPI_Request r[2];
    MPI_Irecv(&in, 1, MPI_INT, peer, 6, d, &r[0]);
    MPI_Isend(&out, 1, MPI_INT, peer, 6, d, &r[1]);
    MPI_Comm_free(&d);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    CHECK_EQ(in, peer + 100);
}

/* Many communicators alive at once, then all freed. */
static void test_many(void)
{
    enum { N = 300 };
    static MPI_Comm c[N];
    for (int i = 0; i < N; i++)
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, i % 3 ? rank : -rank, &c[i]);
    CHECK_EQ(pvar("lmpi_comms") >= N, 1);
    for (int i = 0; i < N; i++)
        MPI_Comm_free(&c[i]);
}

/* 2^20 communicators alive at once (MPICH allows 2048, Open MPI 65535):
 * context ids cost no memory per communicator to allocate. */
static int many_alive(void)
{
    enum { N = 1 << 20 };
    MPI_Comm *c = malloc(sizeof(MPI_Comm) * N);
    for (int i = 0; i < N; i++)
        if (MPI_Comm_dup(MPI_COMM_SELF, &c[i]) != MPI_SUCCESS) {
            fprintf(stderr, "t_comm many: dup %d failed\n", i);
            return 1;
        }
    /* the first and the last still work and are distinct */
    int a = 1, b = 2, x = 0, y = 0;
    MPI_Request r[2];
    MPI_Irecv(&x, 1, MPI_INT, 0, 0, c[0], &r[0]);
    MPI_Irecv(&y, 1, MPI_INT, 0, 0, c[N - 1], &r[1]);
    MPI_Send(&b, 1, MPI_INT, 0, 0, c[N - 1]);
    MPI_Send(&a, 1, MPI_INT, 0, 0, c[0]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    CHECK_EQ(x, 1);
    CHECK_EQ(y, 2);
    CHECK_EQ(pvar("lmpi_comms") >= N, 1);
    for (int i = 0; i < N; i++)
        MPI_Comm_free(&c[i]);
    free(c);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "many")) {
        int provided;
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        if (many_alive())
            mpitest_failures++;
        MPI_T_finalize();
        return mpitest_finish("t_comm many");
    }
    table_baseline = argc > 1 && !strcmp(argv[1], "table");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    long long comm0 = pvar("lmpi_mem_current_comm"), rm0 = pvar("lmpi_mem_current_rankmap"),
              n0 = pvar("lmpi_comms");
    test_groups();
    test_split_dup();
    test_split_type();
    test_create();
    test_inter();
    test_attrs();
    test_idup_and_errors();
    test_idup_order();
    test_free_pending();
    test_many();
    /* everything freed: the accounting is back where it started */
    CHECK_EQ(pvar("lmpi_comms"), n0);
    CHECK_EQ(pvar("lmpi_mem_current_rankmap"), rm0);
    CHECK_EQ(pvar("lmpi_mem_current_comm"), comm0);
    MPI_T_finalize();
    return mpitest_finish("t_comm");
}
