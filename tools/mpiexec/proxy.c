/* The proxy mpiexec starts on every host of a multi-host job (through the
 * launcher: ssh HOST mpiexec --proxy ADDR PORT INDEX).
 *
 * It reads the job's secret from its standard input (never the command
 * line, which every user of the host can read), connects back to mpiexec,
 * and learns which ranks to start and how.  For each rank it opens three
 * more connections, each introduced by the secret, and hands them to the
 * rank as its PMI socket (PMI_FD), standard output and standard error (and
 * rank 0's standard input, which mpiexec relays from its own): the proxy
 * relays nothing, and mpiexec serves a remote rank exactly as a local
 * one.  It starts the ranks with the host's shared-memory segment (a memfd
 * of this host), reports their pids and exit statuses, signals them when
 * told, and kills them all when the connection to mpiexec is lost. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proxy.h"
#include "transport/shm/notice.h"

static _Noreturn void proxy_die(int host, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mpiexec proxy on host %d: ", host);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

int lmpi_proxy_connect(const char *addr, const char *port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(addr, port, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

int lmpi_proxy_send(int fd, const char *fmt, ...)
{
    char line[LMPI_PROXY_LINE];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof(line))
        return -1;
    for (int done = 0; done < n;) {
        ssize_t w = send(fd, line + done, (size_t)(n - done), MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (int)w;
    }
    return 0;
}

/* One line, a byte at a time: what follows it on the socket is not ours. */
int lmpi_proxy_read_line(int fd, char *out, size_t len)
{
    size_t n = 0;
    for (;;) {
        char c;
        ssize_t r = recv(fd, &c, 1, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (c == '\n')
            break;
        if (n + 1 >= len)
            return -1;
        out[n++] = c;
    }
    out[n] = '\0';
    return (int)n;
}

/* own_group: the rank is a process group of its own, so that a wrapper's
 * children are signalled with it.  own_session: also a session of its own,
 * as Hydra's proxy gives each of MPICH's ranks, when the node has a
 * processor for each of the job's ranks (lmpi_launch_own_sessions).  With
 * the kernel's automatic grouping of sessions (sched_autogroup, on in most
 * distributions) the scheduler shares the processors between sessions
 * first: ranks left in the launcher's session shared one share among
 * themselves and every busy process of that session, and two ranks beside
 * four busy loops seldom ran at the same time (an 8-byte allreduce: 0.1-32
 * us a run, 100-300 beside eight loops; MPICH 0.3-6).  A job with more ranks
 * than processors stays in one session (its own: lmpi_launch_job_session,
 * below): its ranks hand the processor to each other, and in sessions of
 * their own a yield goes to whoever else runs (4 ranks on 2 cores beside a
 * second job: 70-150 us against 3-13); docs/performance.md, session 54. */
bool lmpi_launch_own_sessions(int ranks_here)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 && ranks_here <= cores;
}

/* A job with more ranks than processors here keeps its ranks out of
 * sessions of their own (above) but should not share the launcher's session
 * either: there they shared one scheduler share with every busy process the
 * user's shell had started, and four ranks on two cores beside one busy loop
 * took 6-180 us an 8-byte allreduce (median ~70), in a session of the job's
 * own 3-21 (median ~7; docs/performance.md, session 55).  Only a process
 * that leads no process group can call setsid(), and a launcher started
 * from a shell leads one (the shell's job) or must stay in the terminal's
 * session to hear its Ctrl-C, so the launcher forks: the child makes the
 * session and goes on to start the job; the parent stays behind, passes on
 * every signal a user or a batch system sends it, and exits as the child
 * did.  The child dies with the parent, whatever kills it, and the ranks
 * with the child. */
void lmpi_launch_job_session(void)
{
    static const int relayed[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCONT};
    sigset_t mask, old;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    for (size_t i = 0; i < sizeof(relayed) / sizeof(relayed[0]); i++)
        sigaddset(&mask, relayed[i]);
    sigprocmask(SIG_BLOCK, &mask, &old); /* nothing sent from here on is lost */
    pid_t parent = getpid();
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) { /* the job runs in the launcher's session, as before */
        sigprocmask(SIG_SETMASK, &old, NULL);
        return;
    }
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(128 + SIGKILL);
        setsid();
        sigprocmask(SIG_SETMASK, &old, NULL);
        return;
    }
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&mask, &si);
        if (sig < 0)
            continue;
        if (sig != SIGCHLD) {
            kill(child, sig);
            continue;
        }
        int status;
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w != child)
            continue;
        if (WIFEXITED(status))
            exit(WEXITSTATUS(status));
        int code = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
        signal(code, SIG_DFL);
        sigset_t only;
        sigemptyset(&only);
        sigaddset(&only, code);
        sigprocmask(SIG_UNBLOCK, &only, NULL);
        raise(code);
        exit(128 + code);
    }
}

void lmpi_launch_child_prepare(int own_group, bool own_session)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (own_group && (!own_session || setsid() < 0))
        setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Signals the process group a child made itself leader of, or the child
 * alone while it has not got there yet (fork to setsid: the group does not
 * exist; the child has started nothing else).  (Where the child makes a
 * session the parent cannot make the group itself, as with setpgid: a group
 * leader cannot call setsid.) */
void lmpi_launch_kill_group(pid_t pid, int sig)
{
    if (kill(-pid, sig) != 0 && errno == ESRCH)
        kill(pid, sig);
}

void lmpi_launch_prepend_path(const char *dir)
{
    const char *old = getenv("PATH");
    size_t len = strlen(dir) + (old ? strlen(old) : 0) + 2;
    char *np = malloc(len);
    if (np) {
        snprintf(np, len, "%s%s%s", dir, old ? ":" : "", old ? old : "");
        setenv("PATH", np, 1);
    }
}

int lmpi_launch_signalfd(void)
{
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

void lmpi_proxy_hex(const char *in, char *out, size_t len)
{
    size_t k = 0;
    for (; *in && k + 3 <= len; in++, k += 2)
        snprintf(out + k, 3, "%02x", (unsigned char)*in);
    out[k < len ? k : len - 1] = '\0';
}

static char *unhex(const char *in)
{
    size_t n = strlen(in) / 2;
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(in + 2 * i, "%2x", &v) != 1) {
            free(s);
            return NULL;
        }
        s[i] = (char)v;
    }
    s[n] = '\0';
    return s;
}

typedef struct {
    int rank;     /* mpiexec's number for it (its streams, pid and exit lines) */
    int job_rank; /* PMI_RANK: its rank in its job (a spawned job's differ) */
    int app;      /* its application (MPMD): the index in apps */
    pid_t pid;
    bool exited;
} proxied;

/* One application of the job: its program and arguments, its own -env
 * and working directory (MPMD jobs have several; "app A" switches). */
typedef struct {
    char **argv, **env, *wdir;
    int argc, nenv;
} proxy_app;

static void add_word(int host, char ***list, int *n, char *w)
{
    *list = realloc(*list, sizeof(char *) * (size_t)(*n + 2));
    if (!*list || !w)
        proxy_die(host, "out of memory or a malformed job description");
    (*list)[*n] = w;
    (*list)[++*n] = NULL;
}

int lmpi_proxy_main(const char *addr, const char *port, int host)
{
    char secret[LMPI_PROXY_SECRET + 2];
    if (!fgets(secret, sizeof(secret), stdin) || strlen(secret) < LMPI_PROXY_SECRET)
        proxy_die(host, "no job secret on standard input");
    secret[LMPI_PROXY_SECRET] = '\0';
    int ctl = lmpi_proxy_connect(addr, port);
    if (ctl < 0)
        proxy_die(host, "cannot reach mpiexec at %s port %s: %s", addr, port, strerror(errno));
    if (lmpi_proxy_send(ctl, "proxy %s %d\n", secret, host) != 0)
        proxy_die(host, "lost mpiexec while introducing itself");

    /* the job: size, our ranks, argv, environment */
    int size = 0, nr = 0, nenv = 0, napps = 1, cur = 0;
    bool spawned = false;
    proxied *ranks = NULL;
    proxy_app *apps = calloc(1, sizeof(proxy_app));
    char **env = NULL, *path = NULL, line[LMPI_PROXY_LINE];
    if (!apps)
        proxy_die(host, "out of memory");
    for (;;) {
        if (lmpi_proxy_read_line(ctl, line, sizeof(line)) < 0)
            proxy_die(host, "mpiexec refused this proxy or went away");
        if (!strcmp(line, "go"))
            break;
        char *val = strchr(line, ' ');
        if (!val)
            continue;
        *val++ = '\0';
        if (!strcmp(line, "size")) {
            size = atoi(val);
        } else if (!strcmp(line, "rank")) {
            ranks = realloc(ranks, sizeof(*ranks) * (size_t)(nr + 1));
            if (!ranks)
                proxy_die(host, "out of memory");
            int p = -1, r = -1, a = 0;
            if (sscanf(val, "%d %d %d", &p, &r, &a) < 1 || a < 0 || a > 100000)
                proxy_die(host, "a malformed job description");
            ranks[nr++] = (proxied){.rank = p, .job_rank = r >= 0 ? r : p, .app = a};
        } else if (!strcmp(line, "app")) {
            cur = atoi(val);
            if (cur < 0 || cur > 100000)
                proxy_die(host, "a malformed job description");
            if (cur >= napps) {
                proxy_app *n = realloc(apps, sizeof(proxy_app) * (size_t)(cur + 1));
                if (!n)
                    proxy_die(host, "out of memory");
                memset(n + napps, 0, sizeof(proxy_app) * (size_t)(cur + 1 - napps));
                apps = n;
                napps = cur + 1;
            }
        } else if (!strcmp(line, "spawned")) {
            spawned = true;
        } else if (!strcmp(line, "wdir") || !strcmp(line, "path")) {
            char **dst = line[0] == 'w' ? &apps[cur].wdir : &path;
            free(*dst);
            if (!(*dst = unhex(val)))
                proxy_die(host, "out of memory or a malformed job description");
        } else if (!strcmp(line, "arg")) {
            add_word(host, &apps[cur].argv, &apps[cur].argc, unhex(val));
        } else if (!strcmp(line, "appenv")) {
            add_word(host, &apps[cur].env, &apps[cur].nenv, unhex(val));
        } else if (!strcmp(line, "env")) {
            add_word(host, &env, &nenv, unhex(val));
        }
    }
    bool complete = nr > 0 && size >= 1;
    for (int i = 0; i < nr && complete; i++)
        complete = ranks[i].app < napps && apps[ranks[i].app].argc > 0;
    if (!complete)
        proxy_die(host, "an incomplete job description");

    bool own_sessions = lmpi_launch_own_sessions(nr);
    if (!own_sessions)
        lmpi_launch_job_session();
    int sfd = lmpi_launch_signalfd();
    /* this host's segment: its ranks inherit it, nobody else can name it */
    int seg = memfd_create("lmpi-host", MFD_CLOEXEC);
    for (int i = 0; i < nr; i++) {
        int fds[4] = {-1, -1, -1, -1}, nstreams = ranks[i].rank == 0 && !spawned ? 4 : 3;
        char ok[8];
        for (int s = 0; s < nstreams; s++) {
            fds[s] = lmpi_proxy_connect(addr, port);
            if (fds[s] < 0 || lmpi_proxy_send(fds[s], "rank %s %d %d\n", secret, ranks[i].rank, s) != 0)
                proxy_die(host, "cannot connect rank %d's streams to mpiexec", ranks[i].rank);
        }
        /* mpiexec says ok on each stream it accepts (on rank 0's input
         * before any of it).  Taken here, not left to the rank: a socket
         * closed with unread bytes is reset, and a reset discards what the
         * rank wrote last and mpiexec had not read yet (its final lines). */
        for (int s = 0; s < nstreams; s++)
            if (lmpi_proxy_read_line(fds[s], ok, sizeof(ok)) < 0 || strcmp(ok, "ok"))
                proxy_die(host, "mpiexec refused stream %d of rank %d", s, ranks[i].rank);
        pid_t pid = fork();
        if (pid < 0)
            proxy_die(host, "fork failed for rank %d: %s", ranks[i].rank, strerror(errno));
        if (pid == 0) {
            lmpi_launch_child_prepare(1, own_sessions);
            int devnull = fds[3] >= 0 ? fds[3] : open("/dev/null", O_RDONLY);
            if (devnull >= 0)
                dup2(devnull, 0);
            dup2(fds[1], 1);
            dup2(fds[2], 2);
            const proxy_app *ap = &apps[ranks[i].app];
            char **argv = ap->argv;
            const char *wdir = ap->wdir;
            for (int e = 0; e < nenv; e++)
                putenv(env[e]);
            for (int e = 0; e < ap->nenv; e++) /* its application's -env: after the job's */
                putenv(ap->env[e]);
            char v[32];
            snprintf(v, sizeof(v), "%d", dup(fds[0])); /* without CLOEXEC */
            setenv("PMI_FD", v, 1);
            snprintf(v, sizeof(v), "%d", ranks[i].job_rank);
            setenv("PMI_RANK", v, 1);
            snprintf(v, sizeof(v), "%d", size);
            setenv("PMI_SIZE", v, 1);
            if (seg >= 0) {
                snprintf(v, sizeof(v), "%d", dup(seg));
                setenv("LMPI_SHM_FD", v, 1);
            }
            if (spawned)
                setenv("PMI_SPAWNED", "1", 1);
            else
                unsetenv("PMI_SPAWNED");
            if (wdir && chdir(wdir) != 0) {
                fprintf(stderr, "mpiexec: cannot change to %s on host %d: %s\n", wdir, host, strerror(errno));
                _exit(127);
            }
            if (path && !strchr(argv[0], '/'))
                lmpi_launch_prepend_path(path);
            execvp(argv[0], argv);
            fprintf(stderr, "mpiexec: cannot execute '%s' on host %d: %s\n", argv[0], host, strerror(errno));
            _exit(127);
        }
        if (!own_sessions)
            setpgid(pid, pid); /* also here: no window where a signal to the group misses it */
        ranks[i].pid = pid;
        for (int s = 0; s < nstreams; s++)
            close(fds[s]);
        lmpi_proxy_send(ctl, "pid %d %d\n", ranks[i].rank, (int)pid);
    }
    /* --with-ft ulfm (LMPI_FT in the ranks' environment): the segment stays
     * open to post failures on its notice board, ours at once, the other
     * hosts' when mpiexec relays them ("failed R"), and other jobs'
     * processes ("foreign KEY R": spawned jobs, or the job that spawned us) */
    bool ft = false;
    for (int e = 0; e < nenv; e++)
        if (!strcmp(env[e], "LMPI_FT=1"))
            ft = true;
    if (seg >= 0 && !ft) {
        close(seg);
        seg = -1;
    }

    /* watch the ranks and the line to mpiexec */
    int left = nr;
    while (left > 0) {
        struct pollfd p[2] = {{.fd = ctl, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[1].revents) {
            struct signalfd_siginfo si;
            bool stop = false;
            while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                stop |= si.ssi_signo != SIGCHLD;
            if (stop) /* the launcher (ssh) hung up, or someone stops us: the ranks go too */
                break;
            int status;
            pid_t pid;
            while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
                for (int i = 0; i < nr; i++)
                    if (ranks[i].pid == pid && !ranks[i].exited) {
                        ranks[i].exited = true;
                        left--;
                        if (seg >= 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
                            lmpi_notice_post_fd(seg, 0, ranks[i].job_rank);
                        lmpi_proxy_send(ctl, "exit %d %d\n", ranks[i].rank, status);
                    }
        }
        if (p[0].revents) {
            if (lmpi_proxy_read_line(ctl, line, sizeof(line)) < 0)
                break; /* mpiexec is gone */
            int sig, failed;
            unsigned key;
            if (sscanf(line, "failed %d", &failed) == 1 && seg >= 0)
                lmpi_notice_post_fd(seg, 0, failed);
            else if (sscanf(line, "foreign %u %d", &key, &failed) == 2 && seg >= 0)
                lmpi_notice_post_fd(seg, key, failed); /* a process of another job */
            else if (sscanf(line, "kill %d", &sig) == 1)
                for (int i = 0; i < nr; i++)
                    if (!ranks[i].exited)
                        lmpi_launch_kill_group(ranks[i].pid, sig);
        }
    }
    for (int i = 0; i < nr; i++)
        if (!ranks[i].exited)
            lmpi_launch_kill_group(ranks[i].pid, SIGKILL);
    return left > 0 ? 1 : 0;
}
