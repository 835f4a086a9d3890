/* mpiexec: other hosts: proxies started through a launcher (ssh or the test's),
 * their connections, and what they report. */
#include "mpiexec.h"

/* ---- other hosts ---------------------------------------------------------
 * mpiexec listens on the address the hosts reach it on (never 0.0.0.0) and
 * starts a proxy on each host through the launcher (proxy.c).  Every
 * connection must open with the job's secret, which travels on the
 * launcher's standard input.  A proxy hands each of its ranks three
 * connections (PMI, stdout, stderr) that this loop serves like a local
 * rank's socket and pipes; exits arrive as lines from the proxy. */
extern char **environ;

bool is_remote_job(void)
{
    bool fork_all = job.launcher && !strcmp(job.launcher, "fork");
    for (int h = 0; h < job.nhosts; h++)
        if (!is_this_host(job.hosts[h].name) || (fork_all && job.nhosts > 1))
            return true;
    return false;
}

/* The address of --iface, or of the interface that routes to the first
 * host that is not this machine. */
static void listen_address(char *out, size_t len)
{
    if (job.iface) {
        struct ifaddrs *ifs, *i;
        if (getifaddrs(&ifs) != 0)
            die("--iface %s: cannot list the interfaces: %s", job.iface, strerror(errno));
        for (i = ifs; i; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, job.iface))
                break;
        if (!i)
            die("--iface %s: no such interface with an IPv4 address", job.iface);
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, out, (socklen_t)len);
        freeifaddrs(ifs);
        return;
    }
    const char *target = NULL;
    for (int h = 0; h < job.nhosts && !target; h++)
        if (!is_this_host(job.hosts[h].name))
            target = job.hosts[h].name;
    if (!target) {
        snprintf(out, len, "127.0.0.1");
        return;
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res;
    if (getaddrinfo(target, "9", &hints, &res) != 0)
        die("host '%s' does not resolve to an address, so mpiexec cannot tell which interface the hosts reach "
            "it on: give --iface NAME",
            target);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in me;
    socklen_t ml = sizeof(me);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0 ||
        getsockname(fd, (struct sockaddr *)&me, &ml) != 0)
        die("no route from this machine to host '%s': %s", target, strerror(errno));
    close(fd);
    freeaddrinfo(res);
    inet_ntop(AF_INET, &me.sin_addr, out, (socklen_t)len);
}

/* Ranks fill the hosts' slots in order, cycling when there are more ranks
 * than slots (--map-by slot or core, the default), or N at a time per host
 * (-ppn N, --map-by ppr:N:node; --map-by node: one); the PMI mapping says
 * which ranks share a host, one block per cycle where every host takes as
 * many (so a cyclic placement of 256 ranks still fits a PMI line). */
void assign_hosts(void)
{
    const char *m = job.map_by ? job.map_by : "slot";
    int ppr = ppr_per_node(m) ? ppr_per_node(m) : !strcmp(m, "node") ? 1 : 0;
    char mapping[3072] = "(vector";
    size_t ml = strlen(mapping);
    int r = 0;
    while (r < job.n) {
        int first = r, same = -1;
        for (int h = 0; h < job.nhosts && r < job.n; h++) {
            int per = ppr ? ppr : job.hosts[h].slots;
            int k = per < job.n - r ? per : job.n - r;
            for (int i = 0; i < k; i++, r++) {
                rank_t *rk = &job.ranks[r];
                rk->host = h;
                rk->rank = r;
                rk->pmi_fd = rk->out_fd = rk->err_fd = -1;
            }
            job.hosts[h].nranks += k;
            same = h == 0 ? k : same == k ? k : -2;
            if (r == job.n && h + 1 < job.nhosts)
                same = -2; /* a short last cycle */
        }
        int w;
        if (same > 0) {
            w = snprintf(mapping + ml, sizeof(mapping) - ml, ",(0,%d,%d)", job.nhosts, same);
        } else { /* host by host */
            w = 0;
            for (int h = 0, at = first; h < job.nhosts && at < r; h++) {
                int k = 0;
                while (at < r && job.ranks[at].host == h)
                    at++, k++;
                int wh = snprintf(mapping + ml + (size_t)w, sizeof(mapping) - ml - (size_t)w, ",(%d,1,%d)", h, k);
                if (wh < 0 || ml + (size_t)(w + wh) + 2 >= sizeof(mapping))
                    break;
                w += wh;
            }
        }
        if (w < 0 || ml + (size_t)w + 2 >= sizeof(mapping))
            die("too many blocks of ranks on hosts for the PMI mapping: give the hosts more slots (or a larger -ppn)");
        ml += (size_t)w;
    }
    snprintf(mapping + ml, sizeof(mapping) - ml, ")");
    kvs_put(&job.jobs[0], "PMI_process_mapping", mapping);
    job.nprocs = job.n;
    job.running = job.n;
}

/* Start host entry h's proxy through the launcher (directly for this
 * machine or --launcher fork); the job's secret goes on its standard input. */
static void start_proxy(int h)
{
    static char self[4096];
    if (!self[0]) {
        ssize_t sn = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (sn <= 0)
            die("cannot find mpiexec's own path: %s", strerror(errno));
        self[sn] = '\0';
    }
    const char *how = job.launcher ? job.launcher : "ssh";
    host_t *ho = &job.hosts[h];
    int in[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        die("cannot create a pipe for host %s: %s", ho->name, strerror(errno));
    char idx[16];
    snprintf(idx, sizeof(idx), "%d", h);
    bool direct = !strcmp(how, "fork") || is_this_host(ho->name);
    const char *prog = job.launcher_exec ? job.launcher_exec : how;
    pid_t pid = fork();
    if (pid < 0)
        die("fork failed for host %s: %s", ho->name, strerror(errno));
    if (pid == 0) {
        lmpi_launch_child_prepare(1, false);
        dup2(in[0], 0);
        if (direct)
            execl(self, self, "--proxy", job.listen_addr, job.listen_port, idx, (char *)NULL);
        else
            execlp(prog, prog, ho->name, self, "--proxy", job.listen_addr, job.listen_port, idx, (char *)NULL);
        fprintf(stderr, "mpiexec: cannot run the launcher '%s' for host %s: %s\n", direct ? self : prog, ho->name,
                strerror(errno));
        _exit(127);
    }
    close(in[0]);
    char line[LMPI_PROXY_SECRET + 2];
    snprintf(line, sizeof(line), "%s\n", job.secret);
    write_all(in[1], line, strlen(line));
    close(in[1]);
    ho->launcher_pid = pid;
    if (job.verbose)
        fprintf(stderr, "mpiexec: host %s: %d ranks%s, proxy started (pid %d%s%s)\n", ho->name, ho->nranks,
                ho->job ? " of a spawned job" : "", (int)pid, direct ? "" : " through ", direct ? "" : prog);
}

void start_proxies(void)
{
    listen_address(job.listen_addr, sizeof(job.listen_addr));
    job.stdin_relay.fd = -1;
    job.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sa);
    inet_pton(AF_INET, job.listen_addr, &sa.sin_addr);
    if (job.listen_fd < 0 || bind(job.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(job.listen_fd, 4096) != 0 || getsockname(job.listen_fd, (struct sockaddr *)&sa, &sl) != 0)
        die("cannot listen on %s for the hosts: %s", job.listen_addr, strerror(errno));
    snprintf(job.listen_port, sizeof(job.listen_port), "%d", ntohs(sa.sin_port));
    unsigned char rnd[LMPI_PROXY_SECRET / 2];
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        die("cannot read random bytes for the job secret: %s", strerror(errno));
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(job.secret + 2 * i, 3, "%02x", rnd[i]);
    for (int h = 0; h < job.nhosts; h++) {
        if (!job.hosts[h].nranks) {
            job.hosts[h].done = true;
            continue;
        }
        start_proxy(h);
    }
}

/* One of --host/--hostfile's hosts by name (this machine also as
 * localhost), or -1. */
int given_host(const char *name)
{
    for (int h = 0; h < job.nhosts_given; h++)
        if (!strcmp(job.hosts[h].name, name) || (is_this_host(name) && is_this_host(job.hosts[h].name)))
            return h;
    return -1;
}

static char *strdup_or_die(const char *s)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        die("out of memory");
    return d;
}

/* The host of the next free slot: the hosts' slots in order, as the first
 * job's ranks filled them, continuing where they (and earlier spawns)
 * stopped and cycling when all are taken. */
static int next_slot_host(void)
{
    int total = 0;
    for (int h = 0; h < job.nhosts_given; h++)
        total += job.hosts[h].slots;
    int s = (job.n + job.spawn_cursor++) % total;
    for (int h = 0; h < job.nhosts_given; h++) {
        if (s < job.hosts[h].slots)
            return h;
        s -= job.hosts[h].slots;
    }
    return 0;
}

/* A spawned job of a job with remote hosts: its processes go to the hosts
 * its info names (host/hosts), else to the next free slots of the job's
 * hosts, each host's share started by a proxy of its own per application.
 * Every proxy is a node of its own in the PMI mapping (its own
 * shared-memory segment). */
void launch_spawned_on_hosts(int j, const app_t *apps, int napps)
{
    job_t *jb = &job.jobs[j];
    jb->first = job.nprocs;
    int first_entry = job.nhosts, r = 0;
    for (int a = 0; a < napps; a++) {
        const app_t *ap = &apps[a];
        const char *named = app_info(ap, "host") ? app_info(ap, "host") : app_info(ap, "hosts");
        int picks[64], npicks = 0;
        if (named) {
            char *copy = strdup_or_die(named);
            for (char *h = strtok(copy, ", "); h && npicks < 64; h = strtok(NULL, ", ")) {
                char *colon = strchr(h, ':');
                if (colon)
                    *colon = '\0';
                picks[npicks++] = given_host(h); /* do_spawn checked each */
            }
            free(copy);
        }
        int app_entry0 = job.nhosts;
        for (int k = 0; k < ap->nprocs; k++, r++) {
            int h = npicks ? picks[k % npicks] : next_slot_host();
            int e = app_entry0;
            while (e < job.nhosts && strcmp(job.hosts[e].name, job.hosts[h].name))
                e++;
            if (e == job.nhosts) {
                job.hosts = realloc(job.hosts, sizeof(host_t) * (size_t)(job.nhosts + 1));
                if (!job.hosts)
                    die("out of memory");
                host_t *ho = &job.hosts[job.nhosts++];
                memset(ho, 0, sizeof(*ho));
                ho->name = strdup_or_die(job.hosts[h].name);
                ho->ctl_fd = -1;
                ho->job = j;
                ho->wdir = strdup_or_die(app_info(ap, "wdir"));
                ho->path = strdup_or_die(app_info(ap, "path"));
                ho->argv = calloc((size_t)ap->argc + 2, sizeof(char *));
                if (!ho->argv)
                    die("out of memory");
                ho->argv[0] = strdup_or_die(ap->execname);
                for (int i = 0; i < ap->argc; i++)
                    ho->argv[i + 1] = strdup_or_die(ap->argv[i] ? ap->argv[i] : "");
            }
            int p = job.nprocs++;
            rank_t *rk = &job.ranks[p];
            memset(rk, 0, sizeof(*rk));
            rk->host = e;
            rk->job = j;
            rk->rank = r;
            rk->appnum = a;
            rk->pmi_fd = rk->out_fd = rk->err_fd = -1;
            job.hosts[e].nranks++;
            job.running++;
        }
    }
    /* node ids: the proxies in order, blocks of consecutive ranks */
    size_t cap = 64 + 32 * (size_t)jb->n, ml;
    char *mapping = malloc(cap);
    if (!mapping)
        die("out of memory");
    ml = (size_t)snprintf(mapping, cap, "(vector");
    for (int k = 0; k < jb->n;) {
        int e = job.ranks[jb->first + k].host, run = 1;
        while (k + run < jb->n && job.ranks[jb->first + k + run].host == e)
            run++;
        ml += (size_t)snprintf(mapping + ml, cap - ml, ",(%d,1,%d)", e - first_entry, run);
        k += run;
    }
    snprintf(mapping + ml, cap - ml, ")");
    kvs_put(jb, "PMI_process_mapping", mapping);
    free(mapping);
    for (int e = first_entry; e < job.nhosts; e++)
        start_proxy(e);
}

/* Constant time: a wrong secret learns nothing from how long it took. */
static bool secret_ok(const char *given)
{
    unsigned diff = strlen(given) != LMPI_PROXY_SECRET;
    for (int i = 0; i < LMPI_PROXY_SECRET && given[i]; i++)
        diff |= (unsigned)(given[i] ^ job.secret[i]);
    return diff == 0;
}

static bool send_hex(int fd, const char *what, const char *text)
{
    char hex[LMPI_PROXY_LINE / 2 - 8];
    if (strlen(text) * 2 >= sizeof(hex))
        return false;
    lmpi_proxy_hex(text, hex, sizeof(hex));
    return lmpi_proxy_send(fd, "%s %s\n", what, hex) == 0;
}

/* The first job's applications after the first (MPMD, ':'), each that has
 * ranks on host h: "app A", its program and arguments, its -env and -wdir. */
static bool send_other_apps(int fd, int h)
{
    bool ok = true;
    for (int a = 1; a < job.napps && ok; a++) {
        const app_t *ap = &job.apps[a];
        bool here = false;
        for (int p = 0; p < job.n && !here; p++)
            here = job.ranks[p].host == h && job.ranks[p].appnum == a;
        if (!here)
            continue;
        ok = lmpi_proxy_send(fd, "app %d\n", a) == 0;
        if (ok && !send_hex(fd, "arg", ap->execname))
            die("program name too long for another host: %.40s...", ap->execname);
        for (int i = 0; i < ap->argc && ok; i++)
            if (!send_hex(fd, "arg", ap->argv[i]))
                die("argument too long for another host: %.40s...", ap->argv[i]);
        for (int i = 0; i < ap->ninfo && ok; i++) {
            bool env = !strcmp(ap->info_k[i], "lmpi:env");
            if ((env || !strcmp(ap->info_k[i], "wdir")) && !send_hex(fd, env ? "appenv" : "wdir", ap->info_v[i]))
                die("-env/-wdir value too long for another host: %.40s...", ap->info_v[i]);
        }
    }
    return ok;
}

/* The job a proxy starts: its size, its ranks ("rank P R A": process P of
 * ours, rank R of its job, of application A), the environment (mpiexec's,
 * then -genv), the program, and for a spawned job "spawned", wdir and path;
 * for an MPMD job the other applications' programs (send_other_apps). */
static void send_job(host_t *ho, int h)
{
    int fd = ho->ctl_fd;
    job_t *jb = &job.jobs[ho->job];
    bool ok = lmpi_proxy_send(fd, "size %d\n", jb->n) == 0;
    for (int p = jb->first; p < jb->first + jb->n && ok; p++)
        if (job.ranks[p].host == h)
            ok = lmpi_proxy_send(fd, "rank %d %d %d\n", p, job.ranks[p].rank, ho->job ? 0 : job.ranks[p].appnum) == 0;
    for (char **e = environ; *e && ok; e++) {
        if (!strncmp(*e, "PMI_", 4) || !strncmp(*e, "LMPI_SHM_FD=", 12))
            continue;
        if (!send_hex(fd, "env", *e))
            continue; /* too long for a line: this variable stays behind */
    }
    for (int i = 0; i < (ho->job ? job.n_env_user : job.n_env) && ok; i++)
        if (!send_hex(fd, "env", job.env_add[i]))
            die("-genv/-x value too long for another host: %.40s...", job.env_add[i]);
    char **argv = ho->argv ? ho->argv : job.app_argv;
    for (int i = 0; argv[i] && ok; i++)
        if (!send_hex(fd, "arg", argv[i])) {
            if (ho->job)
                fail(1, "an argument of a spawned program is too long for another host: %.40s...", argv[i]);
            else
                die("argument too long for another host: %.40s...", argv[i]);
            return;
        }
    if (ok && ho->job)
        ok = lmpi_proxy_send(fd, "spawned 1\n") == 0 && (!ho->wdir || send_hex(fd, "wdir", ho->wdir)) &&
             (!ho->path || send_hex(fd, "path", ho->path));
    if (ok && !ho->job)
        ok = send_other_apps(fd, h);
    if (!ok || lmpi_proxy_send(fd, "go\n") != 0)
        fail(1, "lost host %s's proxy while sending it the job", ho->name);
}

/* A new connection introduces itself: a proxy, or one stream of a rank. */
void accept_host_connection(void)
{
    struct sockaddr_in from;
    socklen_t fl = sizeof(from);
    int fd = accept4(job.listen_fd, (struct sockaddr *)&from, &fl, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char line[256], secret[80], who_ip[64];
    int a = -1, b = -1;
    inet_ntop(AF_INET, &from.sin_addr, who_ip, sizeof(who_ip));
    bool intro = lmpi_proxy_read_line(fd, line, sizeof(line)) > 0;
    tv.tv_sec = 0;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (intro && sscanf(line, "proxy %79s %d", secret, &a) == 2 && secret_ok(secret) && a >= 0 &&
        a < job.nhosts && job.hosts[a].ctl_fd < 0 && !job.hosts[a].done) {
        job.hosts[a].ctl_fd = fd;
        send_job(&job.hosts[a], a);
        fcntl(fd, F_SETFL, O_NONBLOCK);
        return;
    }
    if (intro && sscanf(line, "rank %79s %d %d", secret, &a, &b) == 3 && secret_ok(secret) && a == 0 &&
        job.ranks[0].host >= 0 && b == 3 && job.stdin_relay.fd < 0 && !job.stdin_relay.eof &&
        lmpi_proxy_send(fd, "ok\n") == 0) {
        shutdown(fd, SHUT_RD); /* input only goes out */
        fcntl(fd, F_SETFL, O_NONBLOCK);
        job.stdin_relay.fd = fd;
        return;
    }
    if (intro && sscanf(line, "rank %79s %d %d", secret, &a, &b) == 3 && secret_ok(secret) && a >= 0 &&
        a < job.nprocs && job.ranks[a].host >= 0 && b >= 0 && b < 3) {
        rank_t *rk = &job.ranks[a];
        int *slot = b == 0 ? &rk->pmi_fd : b == 1 ? &rk->out_fd : &rk->err_fd;
        if (*slot < 0 && !rk->exited && lmpi_proxy_send(fd, "ok\n") == 0) {
            if (b != 0)
                shutdown(fd, SHUT_WR); /* output only comes in */
            fcntl(fd, F_SETFL, O_NONBLOCK);
            *slot = fd;
            return;
        }
    }
    fprintf(stderr, "mpiexec: refused a connection from %s that did not give the job's secret or asked for "
                    "something it may not have\n",
            who_ip);
    close(fd);
}


/* Its ranks will report nothing more: they count as ended (the failure
 * that caused this stops the job). */
void host_lost(int h)
{
    job.hosts[h].done = true;
    for (int r = 0; r < job.nprocs; r++)
        if (job.ranks[r].host == h && !job.ranks[r].exited) {
            job.ranks[r].exited = true;
            job.running--;
        }
}

/* Lines from a host's proxy: "pid R PID", "exit R STATUS". */
void read_host(int h)
{
    host_t *ho = &job.hosts[h];
    ssize_t n = read(ho->ctl_fd, ho->buf + ho->len, sizeof(ho->buf) - 1 - ho->len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        close(ho->ctl_fd);
        ho->ctl_fd = -1;
        bool all = true;
        for (int r = 0; r < job.nprocs; r++)
            if (job.ranks[r].host == h && !job.ranks[r].exited)
                all = false;
        if (!all && job.ft && !job.failed) {
            /* --with-ft ulfm: its ranks count as failed, the others go on */
            if (!job.ft_quiet || job.verbose)
                fprintf(stderr, "mpiexec: lost the connection to host %s (its proxy or the host is gone); the job "
                                "goes on without its ranks (--with-ft ulfm)\n", ho->name);
            if (!job.ft_exit_code)
                job.ft_exit_code = 1;
            for (int r = 0; r < job.nprocs; r++)
                if (job.ranks[r].host == h && !job.ranks[r].exited) {
                    job.ranks[r].exited = true;
                    job.running--;
                    post_failure(r);
                }
        } else if (!all) {
            fail(1, "lost the connection to host %s (its proxy or the host is gone)", ho->name);
        }
        host_lost(h);
        return;
    }
    ho->len += (size_t)n;
    char *start = ho->buf, *nl;
    while ((nl = memchr(start, '\n', ho->len - (size_t)(start - ho->buf))) != NULL) {
        *nl = '\0';
        int r, v;
        if (sscanf(start, "pid %d %d", &r, &v) == 2 && r >= 0 && r < job.nprocs && job.ranks[r].host == h)
            job.ranks[r].pid = v;
        else if (sscanf(start, "exit %d %d", &r, &v) == 2 && r >= 0 && r < job.nprocs && job.ranks[r].host == h)
            rank_ended(r, v);
        start = nl + 1;
    }
    ho->len -= (size_t)(start - ho->buf);
    memmove(ho->buf, start, ho->len);
    if (ho->len == sizeof(ho->buf) - 1)
        ho->len = 0;
}

/* A launcher (ssh) or a proxy run directly ended. */
