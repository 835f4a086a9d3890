/* mpiexec: where each rank runs (--map-by, --bind-to, the contention model's
 * orders) and how the ranks of a job are started on this host. */
#include "mpiexec.h"

/* ---- placement -------------------------------------------------------- */
/* "ppr:N:node" -> N, or 0 when M is not of that form. */
int ppr_per_node(const char *m)
{
    int n;
    char tail[16];
    if (sscanf(m, "ppr:%d:%15s", &n, tail) == 2 && n > 0 && !strcmp(tail, "node"))
        return n;
    if (!strncmp(m, "ppr", 3))
        die("--map-by %s: expected ppr:N:node with N > 0", m);
    return 0;
}

static void add_rank_env(int r, const char *name, const char *value)
{
    size_t old = job.rank_env[r] ? strlen(job.rank_env[r]) : 0, add = strlen(name) + strlen(value) + 2;
    job.rank_env[r] = realloc(job.rank_env[r], old + add + 1);
    if (!job.rank_env[r])
        die("out of memory");
    /* entries separated by '\n'; split again in the child */
    snprintf(job.rank_env[r] + old, add + 1, "%s%s=%s", old ? "\n" : "", name, value);
}

/* Decide every rank's virtual node (--network) and core binding (--bind-to)
 * before anything starts: a bad description launches nothing. */
void place_ranks(void)
{
    job.rank_env = calloc((size_t)job.n, sizeof(char *));
    job.bind_index = malloc(sizeof(int) * (size_t)job.n);
    const char *m = job.map_by ? job.map_by : "slot";
    bool is_auto = !strcmp(m, "auto");
    int ppr = ppr_per_node(m);
    if (!job.network) {
        if (is_auto || job.pattern)
            die("--map-by auto and --pattern need --network (the nodes to map onto)");
        if (ppr && job.n > ppr && !job.nhosts)
            die("--map-by %s places %d ranks per node and only this node is known (give --network "
                "to model more, or --host)", m, ppr);
        if (strcmp(m, "slot") && strcmp(m, "core") && strcmp(m, "node") && !ppr)
            die("--map-by %s needs --network; without one the forms are slot, core, node, ppr:N:node", m);
    } else {
        char err[LMPI_NET_ERRLEN];
        lmpi_net net;
        if (lmpi_net_parse(job.network, job.cores, &net, err, sizeof(err)))
            die("%s", err);
        lmpi_pattern pat;
        bool have_pat = job.pattern != NULL;
        if (have_pat) {
            if (lmpi_pattern_parse(job.pattern, job.large ? 1048576 : 8192, &pat, err, sizeof(err)))
                die("%s", err);
            if (pat.nranks != job.n)
                die("--pattern %s describes %lld ranks, not the %d of -n", job.pattern, (long long)pat.nranks, job.n);
        }
        lmpi_map_order order;
        int32_t *node_of = malloc(sizeof(int32_t) * (size_t)job.n), *core_of = malloc(sizeof(int32_t) * (size_t)job.n);
        if (!node_of || !core_of)
            die("out of memory");
        if (is_auto) {
            if (!have_pat)
                die("--map-by auto needs --pattern (what the application communicates)");
            lmpi_map_order *orders = calloc(LMPI_MAP_MAX_ORDERS, sizeof(*orders));
            lmpi_map_metrics *met = calloc(LMPI_MAP_MAX_ORDERS, sizeof(*met));
            int pick = 0;
            if (!orders || !met || lmpi_map_choose(&net, &pat, job.large, orders, met, &pick, err, sizeof(err)) < 0)
                die("%s", orders && met ? err : "out of memory");
            order = orders[pick];
            if (job.verbose)
                fprintf(stderr, "mpiexec: --map-by auto picked %s (max contention %g, hop-bytes %g)\n", order.name,
                        met[pick].max_contention, met[pick].hop_bytes);
            free(orders);
            free(met);
        } else if (ppr) {
            if (ppr > net.cores)
                die("--map-by %s: a node has %d cores", m, net.cores);
            order.name[0] = '\0';
        } else {
            const char *o = !strcmp(m, "slot") || !strcmp(m, "core") ? "block" : !strcmp(m, "node") ? "cyclic" : m;
            if (lmpi_map_parse_order(&net, o, &order, err, sizeof(err)))
                die("%s", err);
        }
        if (ppr) {
            if ((int64_t)job.n > (int64_t)ppr * net.nodes)
                die("--map-by %s: %d ranks need %d nodes; the network has %lld", m, job.n, (job.n + ppr - 1) / ppr,
                    (long long)net.nodes);
            for (int r = 0; r < job.n; r++) {
                node_of[r] = r / ppr;
                core_of[r] = r % ppr;
            }
        } else if (lmpi_map_assign(&net, &order, job.n, node_of, core_of, err, sizeof(err)))
            die("%s", err);
        size_t maplen = (size_t)job.n * 12 + 1;
        char *map = malloc(maplen), *at = map;
        for (int r = 0; r < job.n; r++) {
            char name[128], coords[128];
            lmpi_net_node_name(&net, node_of[r], name, sizeof(name));
            lmpi_net_node_coords(&net, node_of[r], coords, sizeof(coords));
            add_rank_env(r, "LMPI_VNODE_NAME", name);
            add_rank_env(r, "LMPI_VNODE_COORDS", coords);
            at += sprintf(at, "%s%d", r ? "," : "", (int)node_of[r]);
            if (job.verbose)
                fprintf(stderr, "mpiexec: rank %d on node %s (%s) core %d\n", r, name, coords, (int)core_of[r]);
        }
        add_env("LMPI_VNODE_MAP", map);
        add_env("LMPI_NETWORK", job.network); /* reordering measures links on it */
        add_env("LMPI_MAP_ORDER", ppr ? m : order.name);
        free(map);
        free(node_of);
        free(core_of);
        if (have_pat)
            lmpi_pattern_free(&pat);
        lmpi_net_free(&net);
    }
    /* Binding: the r-th rank on this machine takes its r-th core (or that
     * core's package), wrapping when ranks outnumber cores. */
    const char *b = job.bind_to ? job.bind_to : "none";
    if (strcmp(b, "none") && strcmp(b, "core") && strcmp(b, "package") && strcmp(b, "socket"))
        die("--bind-to %s: expected none, core or package", b);
    for (int r = 0; r < job.n; r++)
        job.bind_index[r] = -1;
    if (!strcmp(b, "none"))
        return;
    job.bind_type = strcmp(b, "core") ? HWLOC_OBJ_PACKAGE : HWLOC_OBJ_CORE;
    if (hwloc_topology_init(&job.topo) || hwloc_topology_load(job.topo))
        die("--bind-to %s: hwloc cannot read this machine's topology", b);
    int ncores = hwloc_get_nbobjs_by_type(job.topo, HWLOC_OBJ_CORE);
    if (ncores < 1)
        die("--bind-to %s: hwloc finds no cores", b);
    for (int r = 0; r < job.n; r++) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(job.topo, HWLOC_OBJ_CORE, (unsigned)(r % ncores));
        if (job.bind_type == HWLOC_OBJ_PACKAGE)
            obj = hwloc_get_ancestor_obj_by_type(job.topo, HWLOC_OBJ_PACKAGE, obj);
        if (!obj)
            die("--bind-to %s: hwloc finds no %s above core %d", b, b, r % ncores);
        job.bind_index[r] = (int)obj->logical_index;
        if (job.verbose)
            fprintf(stderr, "mpiexec: rank %d bound to %s %d\n", r, b, job.bind_index[r]);
    }
}

/* No --bind-to given: a job that fills the processors mpiexec may use (as
 * many ranks here as processors in its affinity mask) pins its r-th rank to
 * the r-th of them, as Open MPI binds small jobs by default.  Left to the
 * scheduler, such a job had both ranks of a ping-pong put on one processor
 * now and then beside busy processes on the other (the kernel places a
 * woken task near its waker): every message a context switch, runs of 2-15
 * us where the rest took 0.1 (docs/performance.md, session 55).  A smaller
 * job is not pinned: jobs sharing a larger node would all pile onto its
 * first processors.  Returns the processor for rank r, or -1. */
static int default_cpu(int r)
{
    if (job.bind_to || job.n < 2)
        return -1;
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof(mask), &mask) != 0 || CPU_COUNT(&mask) != job.n)
        return -1;
    for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &mask) && seen++ == r)
            return cpu;
    return -1;
}

/* In the child, before exec: pin to the chosen core or package. */
static void bind_self(int r)
{
    int idx = job.bind_index[r];
    if (idx < 0) {
        int cpu = default_cpu(r);
        if (cpu >= 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            sched_setaffinity(0, sizeof(one), &one); /* (a hint: the rank runs anyway) */
        }
        return;
    }
    hwloc_obj_t obj = hwloc_get_obj_by_type(job.topo, job.bind_type, (unsigned)idx);
    if (!obj || hwloc_set_cpubind(job.topo, obj->cpuset, HWLOC_CPUBIND_PROCESS))
        fprintf(stderr, "mpiexec: rank %d: binding failed: %s\n", r, strerror(errno));
}

/* Start the processes of job j: the applications' processes in order,
 * ranks first .. first + n of the process table.  Spawned jobs get the
 * user's -genv/-x variables, not the first job's placement. */
/* "kvs_<pid>_<16 hex digits>": the job's name, and through it the names of
 * its shared-memory objects; the random part makes them unguessable. */
void new_kvsname(char *out, size_t len)
{
    unsigned char rnd[8];
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        die("cannot read random bytes for the job name: %s", strerror(errno));
    int n = snprintf(out, len, "kvs_%d_", (int)getpid());
    for (size_t i = 0; i < sizeof(rnd) && n + 2 < (int)len; i++)
        n += snprintf(out + n, len - (size_t)n, "%02x", rnd[i]);
}

void launch_job(int j, const app_t *apps, int napps, bool spawned)
{
    job_t *jb = &job.jobs[j];
    jb->first = job.nprocs; /* the table never moves: do_spawn checked the room */
    int r = 0;
    /* The job's shared-memory segment is a memfd the ranks inherit: it has
     * no name, so nobody can take the name first, and nothing is left in
     * /dev/shm whenever and however the job dies (the library falls back to
     * a named segment under other launchers). */
    char segname[300];
    snprintf(segname, sizeof(segname), "lmpi-%s", jb->kvsname);
    int seg = memfd_create(segname, MFD_CLOEXEC);
    bool tty_stdin = isatty(0);
    int launching = 0;
    for (int a = 0; a < napps; a++)
        launching += apps[a].nprocs;
    bool own_sessions = lmpi_launch_own_sessions(job.running + launching);
    for (int a = 0; a < napps; a++) {
        const app_t *ap = &apps[a];
        const char *wdir = app_info(ap, "wdir"), *path = app_info(ap, "path");
        char **argv = calloc((size_t)ap->argc + 2, sizeof(char *));
        if (!argv)
            die("out of memory");
        argv[0] = ap->execname;
        for (int i = 0; i < ap->argc; i++)
            argv[i + 1] = ap->argv[i] ? ap->argv[i] : (char *)"";
        for (int k = 0; k < ap->nprocs; k++, r++) {
            int p = job.nprocs;
            int sp[2], out[2], err[2];
            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) || pipe2(out, O_CLOEXEC) ||
                pipe2(err, O_CLOEXEC))
                die("cannot create pipes for rank %d: %s (too many ranks for the open-file limit?)", r,
                    strerror(errno));
            pid_t pid = fork();
            if (pid < 0)
                die("fork failed for rank %d: %s", r, strerror(errno));
            if (pid == 0) {
                /* The rank dies with mpiexec, whatever kills mpiexec.  Its
                 * own process group, so that a wrapper's children are
                 * signalled with it; rank 0 reading a terminal stays in the
                 * foreground group (a background group would stop on read). */
                lmpi_launch_child_prepare(!(r == 0 && !spawned && tty_stdin), own_sessions);
                /* mpiexec's own stderr, for an exec that fails: the cause
                 * must come before mpiexec's report of the exit status,
                 * which the relayed pipe would not guarantee */
                int own_err = fcntl(2, F_DUPFD_CLOEXEC, 3);
                dup2(out[1], 1);
                dup2(err[1], 2);
                if (r != 0 || spawned) {
                    int devnull = open("/dev/null", O_RDONLY);
                    if (devnull >= 0)
                        dup2(devnull, 0);
                }
                /* the user's variables first: the launcher's own win */
                for (int i = 0; i < (spawned ? job.n_env_user : job.n_env); i++)
                    putenv(job.env_add[i]);
                if (!spawned && job.rank_env[r])
                    for (char *e = strtok(job.rank_env[r], "\n"); e; e = strtok(NULL, "\n"))
                        putenv(e);
                for (int i = 0; !spawned && i < ap->ninfo; i++) /* an MPMD application's -env */
                    if (ap->info_k[i] && !strcmp(ap->info_k[i], "lmpi:env"))
                        putenv(ap->info_v[i]);
                int fd = dup(sp[1]); /* without CLOEXEC */
                char v[32];
                snprintf(v, sizeof(v), "%d", fd);
                setenv("PMI_FD", v, 1);
                if (seg >= 0) {
                    snprintf(v, sizeof(v), "%d", dup(seg));
                    setenv("LMPI_SHM_FD", v, 1);
                } else {
                    unsetenv("LMPI_SHM_FD");
                }
                snprintf(v, sizeof(v), "%d", r);
                setenv("PMI_RANK", v, 1);
                snprintf(v, sizeof(v), "%d", jb->n);
                setenv("PMI_SIZE", v, 1);
                if (spawned)
                    setenv("PMI_SPAWNED", "1", 1);
                else
                    unsetenv("PMI_SPAWNED");
                if (!spawned)
                    bind_self(r);
                if (wdir && chdir(wdir) != 0) {
                    dprintf(own_err >= 0 ? own_err : 2, "mpiexec: cannot change to %s: %s\n", wdir, strerror(errno));
                    _exit(127);
                }
                if (path && !strchr(argv[0], '/'))
                    lmpi_launch_prepend_path(path);
                execvp(argv[0], argv);
                dprintf(own_err >= 0 ? own_err : 2, "mpiexec: cannot execute '%s': %s\n", argv[0], strerror(errno));
                _exit(127);
            }
            close(sp[1]);
            close(out[1]);
            close(err[1]);
            rank_t *rk = &job.ranks[p];
            memset(rk, 0, sizeof(*rk));
            rk->host = -1;
            rk->pid = pid;
            if (!(r == 0 && !spawned && tty_stdin)) {
                if (!own_sessions) /* (a session the child makes itself: lmpi_launch_child_prepare) */
                    setpgid(pid, pid); /* also here: no window where a signal to the group misses it */
                rk->pgid = pid;
            }
            fcntl(sp[0], F_SETFL, O_NONBLOCK);
            rk->job = j;
            rk->rank = r;
            rk->appnum = a;
            rk->pmi_fd = sp[0];
            rk->out_fd = out[0];
            rk->err_fd = err[0];
            job.nprocs++;
            job.running++;
        }
        free(argv);
    }
    if (seg > 0 && job.ft)
        jb->seg_fd = seg; /* failures are posted there (post_failure) */
    else if (seg >= 0)
        close(seg);
}

/* The singleton that started us: rank 0 of a one-process job under its own
 * kvsname, reached on the socket it gave us. */
void adopt_singleton(void)
{
    job.jobs = calloc(1, sizeof(job_t));
    job.njobs = 1;
    snprintf(job.jobs[0].kvsname, sizeof(job.jobs[0].kvsname), "%s", job.singleton_kvs);
    job.jobs[0].n = 1;
    kvs_put(&job.jobs[0], "PMI_process_mapping", "(vector,(0,1,1))");
    job.cap_procs = 1 + SPAWN_ROOM;
    job.ranks = calloc((size_t)job.cap_procs, sizeof(rank_t));
    if (!job.ranks)
        die("out of memory");
    rank_t *rk = &job.ranks[0];
    rk->pid = getppid();
    rk->adopted = true;
    rk->host = -1;
    rk->pmi_fd = job.singleton_fd;
    rk->out_fd = rk->err_fd = -1;
    fcntl(rk->pmi_fd, F_SETFD, FD_CLOEXEC);
    job.nprocs = 1;
    job.running = 1;
}
