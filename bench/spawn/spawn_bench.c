/* bench/spawn, MPI level: built from this one source with every
 * implementation's mpicc (bench/run spawn).
 *
 *   spawn_bench spawn N REPS    spawn_time children=N: ms from the call of
 *                               MPI_Comm_spawn to its return (the children
 *                               have finished MPI_Init and are connected),
 *                               median of REPS spawn/disconnect cycles after
 *                               one warm-up; run as one process
 *   spawn_bench connect REPS    connect_time: ms for MPI_Comm_connect at the
 *                               connecting side (rank 1) against a waiting
 *                               MPI_Comm_accept (rank 0), both on
 *                               MPI_COMM_SELF, median of REPS cycles
 *   spawn_bench rankmap K       (LeanMPI) rankmap_bytes spawns=1..K comm=...:
 *                               rank-map bytes of the communicator merged from
 *                               K successive spawns of one child each, of a
 *                               duplicate of it, and of its split by process
 *                               group, from LeanMPI's MPI_T variables
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static char self_path[4096];

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void spawn_time(int n, int reps)
{
    double *t = malloc(sizeof(double) * (size_t)reps);
    char *args[] = {"child", NULL};
    for (int r = -1; r < reps; r++) {
        MPI_Comm inter;
        double t0 = MPI_Wtime();
        MPI_Comm_spawn(self_path, args, n, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, MPI_ERRCODES_IGNORE);
        double dt = MPI_Wtime() - t0;
        if (r >= 0)
            t[r] = dt;
        MPI_Comm_disconnect(&inter);
    }
    printf("RESULT spawn_time children=%d value=%.3f\n", n, median(t, reps) * 1e3);
    free(t);
}

static void connect_time(int reps)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (int r = -1; r < reps; r++) {
        char port[MPI_MAX_PORT_NAME] = "";
        MPI_Comm inter;
        if (rank == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
            MPI_Close_port(port);
        } else {
            MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double t0 = MPI_Wtime();
            MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
            if (r >= 0)
                t[r] = MPI_Wtime() - t0;
        }
        MPI_Comm_disconnect(&inter);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 1)
        printf("RESULT connect_time value=%.3f\n", median(t, reps) * 1e3);
    free(t);
}

/* LeanMPI's MPI_T size variable NAME (-1: absent, e.g. another MPI). */
static long long pvar(const char *name)
{
    int n, idx = -1;
    MPI_T_pvar_get_num(&n);
    for (int i = 0; i < n && idx < 0; i++) {
        char nm[128], desc[256];
        int nl = sizeof(nm), dl = sizeof(desc), verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_T_pvar_get_info(i, nm, &nl, &verb, &cls, &dt, &en, desc, &dl, &bind, &ro, &cont, &atomic);
        if (!strcmp(nm, name))
            idx = i;
    }
    if (idx < 0)
        return -1;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    unsigned long long v = 0;
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count);
    MPI_T_pvar_read(s, h, &v);
    MPI_T_pvar_handle_free(s, &h);
    MPI_T_pvar_session_free(&s);
    return (long long)v;
}

/* Spawn K times from the growing merged communicator: after step k it holds
 * the parent and k children, one process group each. */
static void rankmap_bytes(int k, int map_struct)
{
    MPI_Comm merged = MPI_COMM_SELF;
    char *args[] = {"child", "stay", NULL};
    for (int s = 1; s <= k; s++) {
        MPI_Comm inter, next;
        if (merged != MPI_COMM_SELF) { /* the children so far take part */
            int what = 0;
            MPI_Bcast(&what, 1, MPI_INT, 0, merged);
        }
        MPI_Comm_spawn(self_path, args, 1, MPI_INFO_NULL, 0, merged, &inter, MPI_ERRCODES_IGNORE);
        long long before = pvar("lmpi_rankmap_table_bytes");
        MPI_Intercomm_merge(inter, 0, &next);
        long long mine = pvar("lmpi_rankmap_table_bytes") - before;
        MPI_Comm dup, split;
        before = pvar("lmpi_rankmap_table_bytes");
        MPI_Comm_dup(next, &dup);
        long long dup_bytes = pvar("lmpi_rankmap_table_bytes") - before;
        int r;
        MPI_Comm_rank(next, &r);
        before = pvar("lmpi_rankmap_table_bytes");
        MPI_Comm_split(next, r == 0 ? 0 : 1, 0, &split); /* the parent; the children (k groups) */
        long long split_bytes = pvar("lmpi_rankmap_table_bytes") - before;
        if (r == 0 && (s <= 4 || (s & (s - 1)) == 0 || s == k)) {
            /* the parent's rank map has a share of the tables and a fixed struct */
            printf("RESULT rankmap_bytes spawns=%d comm=merged value=%lld\n", s, mine + map_struct);
            printf("RESULT rankmap_bytes spawns=%d comm=dup value=%lld\n", s, dup_bytes + map_struct);
            printf("RESULT rankmap_bytes spawns=%d comm=split_self value=%lld\n", s, split_bytes + map_struct);
        }
        MPI_Comm_free(&dup);
        MPI_Comm_free(&split);
        if (merged != MPI_COMM_SELF)
            MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&inter);
        merged = next;
    }
    /* release the children: they wait on the merged communicator */
    int stop = 1;
    MPI_Bcast(&stop, 1, MPI_INT, 0, merged);
    MPI_Comm_free(&merged);
}

/* Children: the rankmap children follow every later spawn and merge (they
 * are members of the merged communicator) until told to stop. */
static void child(int argc, char **argv, MPI_Comm parent)
{
    if (argc > 2 && !strcmp(argv[2], "stay")) {
        MPI_Comm merged, dup, split;
        MPI_Intercomm_merge(parent, 1, &merged);
        MPI_Comm_dup(merged, &dup);
        MPI_Comm_split(merged, 1, 0, &split);
        MPI_Comm_free(&dup);
        MPI_Comm_free(&split);
        MPI_Comm_disconnect(&parent);
        char *args[] = {"child", "stay", NULL};
        for (;;) {
            /* the next step is a spawn over merged, or the stop broadcast:
             * the root says which */
            int what = 0;
            MPI_Bcast(&what, 1, MPI_INT, 0, merged);
            if (what == 1)
                break;
            MPI_Comm inter, next, dup, split;
            MPI_Comm_spawn(NULL, args, 1, MPI_INFO_NULL, 0, merged, &inter, MPI_ERRCODES_IGNORE);
            MPI_Intercomm_merge(inter, 0, &next);
            MPI_Comm_dup(next, &dup);
            MPI_Comm_split(next, 1, 0, &split);
            MPI_Comm_free(&dup);
            MPI_Comm_free(&split);
            MPI_Comm_free(&merged);
            MPI_Comm_disconnect(&inter);
            merged = next;
        }
        MPI_Comm_free(&merged);
    } else {
        MPI_Comm_disconnect(&parent);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        child(argc, argv, parent);
        MPI_Finalize();
        return 0;
    }
    if (!realpath(argv[0], self_path))
        snprintf(self_path, sizeof(self_path), "%s", argv[0]);
    const char *mode = argc > 1 ? argv[1] : "spawn";
    if (!strcmp(mode, "spawn"))
        spawn_time(argc > 2 ? atoi(argv[2]) : 4, argc > 3 ? atoi(argv[3]) : 5);
    else if (!strcmp(mode, "connect"))
        connect_time(argc > 2 ? atoi(argv[2]) : 20);
    else if (!strcmp(mode, "rankmap")) {
        int provided;
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        rankmap_bytes(argc > 2 ? atoi(argv[2]) : 64, 48 /* sizeof(lmpi_rankmap), asserted in rankmap.h */);
        MPI_T_finalize();
    }
    MPI_Finalize();
    return 0;
}
