/* mpiexec: launches N ranks on this machine and serves them the PMI-1 wire
 * protocol over one socketpair each (PMI_FD, PMI_RANK, PMI_SIZE).
 *
 * It is also the universe of dynamic processes: MPI_Comm_spawn arrives as a
 * PMI spawn request and starts a new job (its own kvsname, key-value space
 * and barrier) beside the first; the name service of MPI_Publish_name lives
 * here too.  `--singleton FD KVSNAME` is the form a singleton starts on
 * demand: mpiexec adopts the process on the other end of FD as rank 0 of a
 * one-process job.
 *
 * One event loop (poll) watches the PMI sockets, the ranks' stdout/stderr
 * pipes, a signalfd for SIGCHLD/SIGINT/SIGTERM and the --timeout deadline.
 * When a rank fails (non-zero exit, a signal, MPI_Abort) every other rank gets
 * SIGTERM and, one second later, SIGKILL; the exit status and the message
 * name the rank and the cause.  Whatever way the job ends, the job's
 * shared-memory segment name is removed from /dev/shm. */
#include "mpiexec.h"

#include "transport/shm/notice.h"

mpiexec_state job;

static void launcher_ended(pid_t pid, int status);

double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mpiexec: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}


/* ---- stopping ------------------------------------------------------------- */
/* Every job's segment, and the inboxes its processes open for other
 * groups (src/transport/shm/bridge.h), whatever state they are in. */
static void cleanup_shm(void)
{
    char name[320];
    for (int j = 0; j < job.njobs; j++) {
        snprintf(name, sizeof(name), "/lmpi-%s", job.jobs[j].kvsname);
        shm_unlink(name);
        for (int r = 0; r < job.jobs[j].n; r++) {
            snprintf(name, sizeof(name), "/lmpi-%s-x%d", job.jobs[j].kvsname, r);
            shm_unlink(name);
        }
    }
}

/* A rank is its process group: a wrapper (sh -c, valgrind, time) and
 * whatever it started get the signal too, even once the rank itself (the
 * direct child) has gone. */
static void signal_rank(const rank_t *rk, int sig)
{
    if (rk->pgid > 0 && kill(-rk->pgid, sig) == 0)
        return;
    if (!rk->exited && rk->pid > 0) /* (also before the child made its group) */
        kill(rk->pid, sig);
}

static void signal_all(int sig)
{
    for (int r = 0; r < job.nprocs; r++)
        if (job.ranks[r].pid > 0 && !job.ranks[r].adopted && job.ranks[r].host < 0)
            signal_rank(&job.ranks[r], sig);
    for (int h = 0; h < job.nhosts; h++)
        if (job.hosts[h].ctl_fd >= 0)
            lmpi_proxy_send(job.hosts[h].ctl_fd, "kill %d\n", sig);
}

/* "rank 3" in the first job, "rank 1 of spawned job 2" in the others */
const char *who(int p)
{
    static char buf[64];
    if (job.ranks[p].job == 0)
        snprintf(buf, sizeof(buf), "rank %d", job.ranks[p].rank);
    else
        snprintf(buf, sizeof(buf), "rank %d of spawned job %d", job.ranks[p].rank, job.ranks[p].job);
    return buf;
}

/* "mpiexec: WHAT; CONSEQUENCE" on stderr, after what we printed ourselves. */
static void say(const char *consequence, const char *fmt, va_list ap)
{
    fflush(stdout);
    fprintf(stderr, "mpiexec: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "; %s\n", consequence);
}

/* Record the first failure and start stopping the job. */
void fail(int code, const char *fmt, ...)
{
    if (job.failed)
        return;
    job.failed = true;
    job.exit_code = code ? code : 1;
    char consequence[64];
    snprintf(consequence, sizeof(consequence), "stopping the job (exit status %d)", job.exit_code);
    va_list ap;
    va_start(ap, fmt);
    say(consequence, fmt, ap);
    va_end(ap);
    signal_all(SIGTERM);
    job.kill_deadline = now() + 1.0;
}

/* --with-ft ulfm: a failure is reported and the job goes on; the first
 * one's status is still mpiexec's exit status at the end. */
static void survive(int code, const char *fmt, ...)
{
    if (!job.ft_exit_code)
        job.ft_exit_code = code ? code : 1;
    if (job.ft_quiet && !job.verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    say("the job goes on without it (--with-ft ulfm)", fmt, ap);
    va_end(ap);
}

/* ---- children ------------------------------------------------------------ */
/* Read what an exited rank still had in flight on its PMI socket: an abort
 * request must be seen before the exit it caused. */
static void drain_pmi(int r)
{
    rank_t *rk = &job.ranks[r];
    while (rk->pmi_fd >= 0) {
        struct pollfd p = {.fd = rk->pmi_fd, .events = POLLIN};
        if (poll(&p, 1, 0) <= 0)
            return;
        pmi_read(r);
    }
}

/* A rank ended with wait status STATUS (reaped here, or reported by its
 * host's proxy): the first failure stops the job. */
void rank_ended(int r, int status)
{
    rank_t *rk = &job.ranks[r];
    if (rk->exited)
        return;
    rk->exited = true;
    rk->wait_status = status;
    drain_pmi(r);
    job.running--;
    char where[300] = "";
    if (rk->host >= 0)
        snprintf(where, sizeof(where), " on host %s", job.hosts[rk->host].name);
    int pid = (int)rk->pid;
    if (job.verbose)
        fprintf(stderr, "mpiexec: %s (pid %d%s) ended with wait status 0x%x\n", who(r), pid, where, status);
    void (*report)(int, const char *, ...) = job.ft && !job.failed ? survive : fail;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        report(128 + sig, "%s (pid %d%s) was killed by signal %d (%s)", who(r), pid, where, sig, strsignal(sig));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        report(WEXITSTATUS(status), "%s (pid %d%s) exited with status %d", who(r), pid, where, WEXITSTATUS(status));
    } else if (rk->pmi_inited && !rk->finalized) {
        /* the others would wait for it forever */
        report(1, "%s (pid %d%s) exited with status 0 without calling MPI_Finalize", who(r), pid, where);
    } else {
        return;
    }
    if (report == survive)
        post_failure(r);
}

/* --with-ft with a name server: the job's failed ranks are listed there
 * under "lmpi-ft:KVSNAME" ("2,5,7"), where the processes of jobs of other
 * launchers that met this one across hosts look (src/dpm's
 * lmpi_dpm_watch_remote): no launcher of theirs knows of this job, and a
 * network provider does not always fail the transfers to a killed process.
 * (hydra_nameserver has no update: unpublish, then publish the longer list;
 * a lookup between the two sees nothing and asks again later.)  The list
 * stays after the job: a process of another job may still wait for one of
 * the dead, and the name (the job's kvsname) is never used again.  (The
 * ranks read at most 2047 characters of it: some 400 failures.) */
static void list_failed_at_nameserver(job_t *jb, int rank)
{
    size_t old = jb->ft_listed ? strlen(jb->ft_listed) : 0;
    char *l = realloc(jb->ft_listed, old + 16);
    if (!l)
        return;
    snprintf(l + old, 16, "%s%d", old ? "," : "", rank);
    jb->ft_listed = l;
    char service[300], reply[64], err[600];
    snprintf(service, sizeof(service), "lmpi-ft:%s", jb->kvsname);
    const char *unpublish[2] = {"UNPUBLISH", service}, *publish[3] = {"PUBLISH", service, l};
    if (old)
        lmpi_ns_request(&job.nameserver, unpublish, 2, reply, sizeof(reply), NS_TIMEOUT_MS, err, sizeof(err));
    if (lmpi_ns_request(&job.nameserver, publish, 3, reply, sizeof(reply), NS_TIMEOUT_MS, err, sizeof(err)) != 0)
        fprintf(stderr, "mpiexec: cannot list the failure at the name server: %s\n", err);
}

/* --with-ft ulfm: the failed process's bit on its job's notice boards, here
 * and on every host of the job (src/transport/shm/notice.h), and its job's
 * key and rank on every other job's boards (a spawned job and the job that
 * spawned it address each other).  Posting wakes every sleeping rank; each
 * sees the failure at its next idle poll. */
void post_failure(int p)
{
    rank_t *rk = &job.ranks[p];
    job_t *jb = &job.jobs[rk->job];
    uint32_t key = lmpi_notice_group_key(jb->kvsname);
    jb->nfailed++;
    if (rk->in_barrier) { /* a barrier no longer waits for it */
        rk->in_barrier = false;
        jb->barrier_count--;
    }
    for (int j = 0; j < job.njobs; j++)
        if (job.jobs[j].seg_fd > 0)
            lmpi_notice_post_fd(job.jobs[j].seg_fd, j == rk->job ? 0 : key, rk->rank);
    for (int h = 0; h < job.nhosts; h++)
        if (job.hosts[h].ctl_fd >= 0 && job.hosts[h].job == rk->job)
            lmpi_proxy_send(job.hosts[h].ctl_fd, "failed %d\n", rk->rank);
        else if (job.hosts[h].ctl_fd >= 0)
            lmpi_proxy_send(job.hosts[h].ctl_fd, "foreign %u %d\n", key, rk->rank);
    barrier_check(jb);
    if (job.ft && job.nameserver.host[0]) /* (last: a slow name server delays nobody here) */
        list_failed_at_nameserver(jb, rk->rank);
}


static void reap(void)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int r = 0; r < job.nprocs; r++)
            if (job.ranks[r].pid == pid && !job.ranks[r].adopted && job.ranks[r].host < 0)
                rank_ended(r, status);
        launcher_ended(pid, status);
    }
}


static void launcher_ended(pid_t pid, int status)
{
    for (int h = 0; h < job.nhosts; h++) {
        host_t *ho = &job.hosts[h];
        if (ho->launcher_pid != pid)
            continue;
        ho->launcher_pid = 0;
        if (ho->done || ho->ctl_fd >= 0)
            continue; /* finished, or the proxy's connection will say */
        if (WIFEXITED(status))
            fail(1, "the launcher for host %s exited with status %d before its proxy called back (host "
                    "unreachable, or the launcher failed)", ho->name, WEXITSTATUS(status));
        else
            fail(1, "the launcher for host %s was killed by signal %d before its proxy called back", ho->name,
                 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        host_lost(h);
    }
}

int main(int argc, char **argv)
{
    int first = parse_args(argc, argv);
    app_t *apps = NULL;
    int napps = job.singleton_kvs ? 0 : parse_apps(argc, argv, first, &apps);
    if (job.singleton_kvs) {
        adopt_singleton();
    } else {
        job.n_env_user = job.n_env;
        place_ranks();
        job.jobs = calloc(1, sizeof(job_t));
        job.njobs = 1;
        new_kvsname(job.jobs[0].kvsname, sizeof(job.jobs[0].kvsname));
        job.jobs[0].n = job.n;
        /* rank_t entries stay where they are (pointers into them live across
         * a spawn); untouched entries cost no memory */
        job.cap_procs = job.n + SPAWN_ROOM;
        job.ranks = calloc((size_t)job.cap_procs, sizeof(rank_t));
        if (!job.ranks)
            die("out of memory");
        job.remote = is_remote_job();
        job.nhosts_given = job.nhosts;
        if (job.remote) {
            assign_hosts();
        } else {
            char mapping[64];
            snprintf(mapping, sizeof(mapping), "(vector,(0,1,%d))", job.n);
            kvs_put(&job.jobs[0], "PMI_process_mapping", mapping);
        }
    }

    if (!job.remote && !job.singleton_kvs && !lmpi_launch_own_sessions(job.n))
        lmpi_launch_job_session();
    int sfd = lmpi_launch_signalfd();
    signal(SIGPIPE, SIG_IGN);
    if (job.ft) /* the ranks' MPIX_FT, and the proxies post failures of their own */
        setenv("LMPI_FT", "1", 1);

    if (job.nameserver.host[0]) {
        /* jobs that share a name server may run on other hosts: processes
         * taking part in dynamic process management publish their network
         * addresses there (src/dpm), and the server must answer now */
        char reply[64], err[600];
        const char *words[2] = {"LOOKUP", "lmpi-mpiexec-probe"};
        if (lmpi_ns_request(&job.nameserver, words, 2, reply, sizeof(reply), NS_TIMEOUT_MS, err, sizeof(err)) != 0)
            die("-nameserver: %s", err);
        setenv("LMPI_DPM_NET", "1", 1);
    }
    if (job.remote) {
        /* spawned jobs run on this machine, the others' ranks elsewhere:
         * their processes reach each other over the network (src/dpm) */
        setenv("LMPI_DPM_NET", "1", 1);
        job.app_argv = argv + first;
        job.apps = apps;
        job.napps = napps;
        for (int a = 0, r = 0; a < napps; a++) /* MPMD: the applications' ranks in turn */
            for (int k = 0; k < apps[a].nprocs; k++)
                job.ranks[r++].appnum = a;
        start_proxies();
    } else if (!job.singleton_kvs) {
        launch_job(0, apps, napps, false);
    }
    double deadline = job.timeout > 0 ? now() + job.timeout : 0;
    struct pollfd *pfd = NULL;
    int *owner = NULL, cap_fd = 0;

    for (;;) {
        bool open_fds = false;
        for (int r = 0; r < job.nprocs; r++)
            if (job.ranks[r].out_fd >= 0 || job.ranks[r].err_fd >= 0)
                open_fds = true;
        if (job.running == 0 && !open_fds)
            break;
        if (3 * job.nprocs + job.nhosts + 4 > cap_fd) {
            cap_fd = 3 * job.cap_procs + job.nhosts + 4;
            pfd = realloc(pfd, sizeof(*pfd) * (size_t)cap_fd);
            owner = realloc(owner, sizeof(*owner) * (size_t)cap_fd);
            if (!pfd || !owner)
                die("out of memory");
        }
        int nfd = 0;
        pfd[nfd].fd = sfd;
        pfd[nfd].events = POLLIN;
        owner[nfd++] = -1;
        if (job.remote) { /* owners -2: new connections, -3 - h: host h's proxy */
            pfd[nfd].fd = job.listen_fd;
            pfd[nfd].events = POLLIN;
            owner[nfd++] = -2;
            for (int h = 0; h < job.nhosts; h++)
                if (job.hosts[h].ctl_fd >= 0) {
                    pfd[nfd].fd = job.hosts[h].ctl_fd;
                    pfd[nfd].events = POLLIN;
                    owner[nfd++] = -3 - h;
                }
            /* owners INT_MIN: our stdin, INT_MIN + 1: rank 0's stream */
            if (job.stdin_relay.fd >= 0) {
                bool pending = job.stdin_relay.len > 0;
                pfd[nfd].fd = pending ? job.stdin_relay.fd : 0;
                pfd[nfd].events = pending ? POLLOUT : POLLIN;
                owner[nfd++] = pending ? INT_MIN + 1 : INT_MIN;
            }
        }
        for (int r = 0; r < job.nprocs; r++) {
            rank_t *rk = &job.ranks[r];
            int fds[3] = {rk->pmi_fd, rk->out_fd, rk->err_fd};
            for (int k = 0; k < 3; k++)
                if (fds[k] >= 0) {
                    pfd[nfd].fd = fds[k];
                    pfd[nfd].events = POLLIN | (k == 0 && rk->reply_len ? POLLOUT : 0);
                    owner[nfd++] = r * 3 + k;
                }
        }
        int wait_ms = -1;
        double t = now();
        if (deadline > 0 && !job.failed)
            wait_ms = deadline > t ? (int)((deadline - t) * 1000) + 1 : 0;
        if (job.failed && !job.sigkill_sent)
            wait_ms = job.kill_deadline > t ? (int)((job.kill_deadline - t) * 1000) + 1 : 0;
        if (job.running == 0 && wait_ms < 0)
            wait_ms = 1000; /* only pipes of exited ranks left: don't block forever on a grandchild */
        int n = poll(pfd, (nfds_t)nfd, wait_ms);
        if (n < 0 && errno != EINTR)
            die("poll failed: %s", strerror(errno));
        t = now();
        if (deadline > 0 && t >= deadline && !job.failed)
            fail(124, "the job did not finish within --timeout %g s (or MPIEXEC_TIMEOUT)", job.timeout);
        if (job.failed && !job.sigkill_sent && t >= job.kill_deadline) {
            signal_all(SIGKILL);
            job.sigkill_sent = true;
        }
        if (job.running == 0 && n == 0) {
            /* exited ranks whose pipes a surviving grandchild keeps open */
            for (int r = 0; r < job.nprocs; r++) {
                if (job.ranks[r].out_fd >= 0) close(job.ranks[r].out_fd);
                if (job.ranks[r].err_fd >= 0) close(job.ranks[r].err_fd);
                job.ranks[r].out_fd = job.ranks[r].err_fd = -1;
            }
        }
        for (int i = 0; i < nfd && n > 0; i++) {
            if (!pfd[i].revents)
                continue;
            if (owner[i] == -2) {
                accept_host_connection();
                continue;
            }
            if (owner[i] == INT_MIN || owner[i] == INT_MIN + 1) {
                if (job.stdin_relay.fd < 0)
                    continue;
                if (owner[i] == INT_MIN)
                    stdin_relay_read();
                else
                    stdin_relay_write();
                continue;
            }
            if (owner[i] <= -3) {
                read_host(-3 - owner[i]);
                continue;
            }
            if (owner[i] < 0) {
                struct signalfd_siginfo si;
                while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                    if (si.ssi_signo == SIGCHLD)
                        continue;
                    fail(128 + (int)si.ssi_signo, "received signal %d (%s)", (int)si.ssi_signo,
                         strsignal((int)si.ssi_signo));
                }
                reap();
                continue;
            }
            int r = owner[i] / 3, k = owner[i] % 3;
            rank_t *rk = &job.ranks[r];
            if (k == 0) {
                if (pfd[i].revents & POLLOUT)
                    flush_replies(rk);
                if (rk->pmi_fd >= 0 && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    pmi_read(r);
            }
            else if (k == 1)
                forward(r, &rk->out_fd, &rk->out, 1);
            else
                forward(r, &rk->err_fd, &rk->err, 2);
        }
        reap();
    }
    cleanup_shm();
    free(pfd);
    free(owner);
    return job.failed ? job.exit_code : job.ft_exit_code;
}
