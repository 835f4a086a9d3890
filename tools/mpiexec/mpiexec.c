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
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>

#include "nameserver.h"
#include "pmi/exec_check.h"
#include "proxy.h"
#include "topo/mapping.h"

#define MAX_LINE 4096
#define SPAWN_ROOM 4096 /* processes spawns may add to the first job's */
/* A rank that sends commands without reading the replies: beyond this many
 * unread reply bytes it is stopped rather than buffered without end. */
#define MAX_PENDING_REPLY (1 << 20)
/* Keys a job's space may hold: the library puts none, PMI users a few per
 * process; more is a runaway (or hostile) rank. */
#define KVS_KEYS_PER_PROC 256

typedef struct {
    char buf[MAX_LINE];
    size_t len;
} linebuf;

typedef struct {
    int nprocs;
    char *execname;
    char **argv;
    int argc;
    char **info_k, **info_v;
    int ninfo;
} app_t;

/* A spawn request arriving as mcmd=spawn blocks (one per application). */
typedef struct {
    bool active;   /* inside a block */
    app_t *apps;
    int napps, total;
    char **pre_k, **pre_v;
    int npre;
} spawn_req;

typedef struct {
    pid_t pid;
    int job;     /* index into jobs */
    int rank;    /* in its job */
    int appnum;
    bool adopted; /* the singleton: not our child, gone when its socket closes */
    spawn_req spawn;
    int pmi_fd;
    int out_fd;
    int err_fd;
    bool exited;
    int wait_status;
    bool finalized;
    bool pmi_inited;  /* sent cmd=init: an MPI process, which must finalize */
    bool in_barrier;
    bool skip_line;   /* dropping the rest of an over-long PMI line */
    int complaints;   /* bad PMI lines reported so far (a few, then silence) */
    pid_t pgid;       /* its process group (0: shares ours: a terminal's stdin) */
    int host;         /* index into job.hosts when another host's proxy runs it, else -1 */
    char *reply;      /* PMI replies the socket did not take yet */
    size_t reply_len, reply_cap;
    linebuf pmi_in;
    linebuf out, err;
} rank_t;

typedef struct {
    char *key;
    char *value;
} kv_t;

typedef struct {
    char *name;
    int slots;
    pid_t launcher_pid; /* ssh (or the proxy itself under --launcher fork) */
    int ctl_fd;         /* the proxy's connection, -1 before it calls and after it is gone */
    bool done;          /* the proxy reported every rank's exit */
    int nranks;
    char buf[LMPI_PROXY_LINE];
    size_t len;
    /* Past the hosts of --host/--hostfile: a spawned job's proxy on one of
     * them (one per host and application): its job, program, wdir and path. */
    int job;
    char **argv;
    char *wdir, *path;
} host_t;

typedef struct {
    char kvsname[256];
    int n, first; /* its processes: ranks[first .. first + n) */
    kv_t *kvs;
    int n_kvs, cap_kvs;
    /* open-addressing index over kvs (entry + 1; 0 empty): start-up asks for
     * every rank's address, n gets by each of n ranks, and a scan of the
     * keys made that quadratic in the keys (256 ranks: 1 s of gets) */
    int *kv_index;
    size_t kv_index_cap; /* a power of two, at least twice n_kvs */
    int barrier_count;
} job_t;

static struct {
    int n;         /* ranks of the first job */
    rank_t *ranks; /* every process of every job */
    int nprocs, cap_procs;
    job_t *jobs;
    int njobs;
    int universe;        /* MPI_UNIVERSE_SIZE */
    bool universe_given; /* --universe-size: spawns may not exceed it */
    kv_t *names;         /* the name service */
    lmpi_ns_server nameserver; /* -nameserver: names kept there (host empty: here) */
    int n_names;
    int singleton_fd;    /* --singleton */
    const char *singleton_kvs;
    bool tag_output;
    double timeout;
    char **env_add;
    int n_env;
    int n_env_user; /* the first n_env come from -genv/-x: spawned jobs get them too */
    int running;
    /* the first failure decides the exit status and the message */
    bool failed;
    int exit_code;
    double kill_deadline;
    bool sigkill_sent;
    bool verbose;
    /* placement (--network, --pattern, --map-by, --bind-to) */
    const char *network, *pattern, *map_by, *bind_to;
    int cores;
    bool large;
    char **rank_env; /* per rank: LMPI_VNODE_NAME=..., LMPI_VNODE_COORDS=... */
    int *bind_index; /* per rank: index of its core or package, -1 unbound */
    hwloc_obj_type_t bind_type;
    hwloc_topology_t topo;
    /* other hosts (--host, --hostfile): a proxy on each starts its ranks */
    host_t *hosts;
    int nhosts;
    int nhosts_given;           /* the first nhosts_given are --host/--hostfile's; spawned jobs' proxies follow */
    int spawn_cursor;           /* processes spawned so far without a host named (next_slot_host) */
    char listen_addr[64], listen_port[16];
    bool remote;                /* some host is not this machine (or --launcher fork) */
    const char *launcher;       /* ssh, rsh or fork */
    const char *launcher_exec;  /* the program behind ssh/rsh (--launcher-exec) */
    const char *iface;          /* where the hosts reach us (--iface) */
    int listen_fd;
    char **app_argv;            /* the program and its arguments (NULL-terminated) */
    char secret[LMPI_PROXY_SECRET + 1];
    int *pending;               /* accepted connections that have not introduced themselves */
    int npending;
    /* our standard input, relayed to rank 0 when another host runs it */
    struct {
        int fd;       /* the stream its proxy opened for it (-1: none, or closed) */
        size_t len, off;
        bool eof;     /* ours ended: the stream is shut once the rest is written */
        char buf[16384];
    } stdin_relay;
} job;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mpiexec: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

/* The help: on stdout with status 0 when asked for (mpiexec --help | less),
 * on stderr with status 1 after a usage error. */
static void help(FILE *out, int status);

static void usage(void) { help(stderr, 1); }

static void help(FILE *out, int status)
{
    fprintf(out,
            "usage: mpiexec [options] program [args...]\n"
            "  -h, --help              this help;  --version  LeanMPI's version\n"
            "  -n, -np N               number of ranks (default 1)\n"
            "  -genv NAME VALUE        set an environment variable in every rank (also -env)\n"
            "  -x NAME[=VALUE]         export NAME (from mpiexec's environment, or VALUE)\n"
            "  --tag-output, -l        prefix every output line with [rank]\n"
            "  --timeout SECONDS       stop the job after SECONDS (exit status 124); also MPIEXEC_TIMEOUT\n"
            "  --oversubscribe         accepted: ranks always may outnumber cores\n"
            "  --host/-hosts H[:N],..  run on these hosts, N slots each (default 1); ranks fill the\n"
            "                          slots in order, cycling when -n is larger\n"
            "  -ppn N                  with --host: N ranks per host in turn (--map-by ppr:N:node;\n"
            "                          --map-by node: 1)\n"
            "  --hostfile FILE         the hosts, one per line: H, H:N or H slots=N (also -f)\n"
            "  --launcher ssh|rsh|fork how a host's proxy starts (default ssh; fork: on this machine)\n"
            "  --launcher-exec CMD     the program ssh/rsh stands for: CMD HOST COMMAND\n"
            "  --iface NAME            the interface the hosts reach mpiexec on (default: the one\n"
            "                          routing to the first host)\n"
            "  -v, --verbose           report launch and exit of each rank (and the placement)\n"
            "  --network SPEC|FILE     model the nodes: torus:8x16x32, mesh:4x4, flat:16 or a\n"
            "                          description file (docs/mapping.md); ranks run here, each on\n"
            "                          its virtual node\n"
            "  --cores N               cores per modelled node (unless the file says)\n"
            "  --pattern P             the application's pattern (2d-nn:128x128:star, fft:64x64,\n"
            "                          diagonal:AxB, edges:FILE); -n must match it\n"
            "  --message-size small|large  the pattern's message class (default small)\n"
            "  --map-by M              auto (least contended order for --pattern), an order (TXYZ,\n"
            "                          TZXY, ...), block, cyclic, slot, core, node, ppr:N:node\n"
            "  --bind-to none|core|package  pin each rank here with hwloc (default none)\n"
            "  --universe-size N       MPI_UNIVERSE_SIZE, and the most processes spawns may bring\n"
            "                          the universe to (also -usize; default: not set, no limit)\n"
            "  -nameserver HOST[:PORT] keep MPI_Publish_name's names in a hydra_nameserver (default\n"
            "                          port 6392), shared with other jobs, ours or Hydra's, on any host\n");
    exit(status);
}

static void add_env(const char *name, const char *value);

/* What the launcher itself hands each rank: a -genv of these would let the
 * user (or a script) point a rank at another socket or rank number. */
static bool launcher_owned(const char *name)
{
    static const char *const own[] = {"PMI_FD", "PMI_RANK", "PMI_SIZE", "PMI_SPAWNED", "LMPI_SHM_FD"};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (!strcmp(name, own[i]))
            return true;
    return false;
}

static void add_user_env(const char *opt, const char *name, const char *value)
{
    if (launcher_owned(name))
        die("%s %s: the launcher sets %s itself for every rank; it cannot be overridden", opt, name, name);
    if (!*name || strchr(name, '='))
        die("%s '%s': not a variable name", opt, name);
    add_env(name, value);
}

static void add_env(const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *s = malloc(len);
    snprintf(s, len, "%s=%s", name, value);
    job.env_add = realloc(job.env_add, sizeof(char *) * (size_t)(job.n_env + 1));
    job.env_add[job.n_env++] = s;
}

static bool is_this_host(const char *h)
{
    char me[256];
    gethostname(me, sizeof(me));
    return !strcmp(h, "localhost") || !strcmp(h, "127.0.0.1") || !strcmp(h, me);
}

static void add_host(const char *name, int slots)
{
    if (!*name)
        return;
    for (int h = 0; h < job.nhosts; h++)
        if (!strcmp(job.hosts[h].name, name)) {
            job.hosts[h].slots += slots;
            return;
        }
    job.hosts = realloc(job.hosts, sizeof(host_t) * (size_t)(job.nhosts + 1));
    if (!job.hosts)
        die("out of memory");
    host_t *h = &job.hosts[job.nhosts++];
    memset(h, 0, sizeof(*h));
    h->name = strdup(name);
    h->slots = slots;
    h->ctl_fd = -1;
}

/* "a:2,b:2" (Hydra, Open MPI); a host without a count has one slot. */
static void parse_host_list(const char *list)
{
    char *copy = strdup(list);
    for (char *h = strtok(copy, ","); h; h = strtok(NULL, ",")) {
        char *colon = strchr(h, ':');
        long slots = 1;
        if (colon) {
            char *end;
            *colon = '\0';
            slots = strtol(colon + 1, &end, 10);
            if (*end || slots < 1 || slots > 1 << 20)
                die("--host %s: '%s' is not a slot count", list, colon + 1);
        }
        add_host(h, (int)slots);
    }
    free(copy);
}

/* Lines "host", "host:N" or "host slots=N" (Open MPI); # starts a comment. */
static void parse_hostfile(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("--hostfile %s: %s", path, strerror(errno));
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char name[512];
        long slots = 1;
        if (sscanf(line, " %511[^ \t\n:]", name) != 1)
            continue;
        const char *rest = line + strcspn(line, ":= \t\n");
        char *sl = strstr(line, "slots=");
        char *end;
        if (*rest == ':' || sl) {
            slots = strtol(sl ? sl + 6 : rest + 1, &end, 10);
            if (slots < 1 || slots > 1 << 20 || (*end && !strchr(" \t\n", *end)))
                die("--hostfile %s line %d: not a slot count", path, lineno);
        }
        add_host(name, (int)slots);
    }
    fclose(f);
    if (!job.nhosts)
        die("--hostfile %s names no host", path);
}

static int parse_args(int argc, char **argv)
{
    job.n = 1;
    /* Hydra's MPIEXEC_TIMEOUT; --timeout on the command line wins */
    const char *env_timeout = getenv("MPIEXEC_TIMEOUT");
    if (env_timeout && *env_timeout) {
        char *end;
        job.timeout = strtod(env_timeout, &end);
        if (*end || job.timeout <= 0)
            die("invalid MPIEXEC_TIMEOUT '%s' (seconds, more than 0)", env_timeout);
    }
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-')
            break;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--n") || !strcmp(a, "--np")) {
            if (i + 1 >= argc)
                usage();
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 100000)
                die("invalid rank count '%s'", argv[i]);
            job.n = (int)v;
        } else if (!strcmp(a, "-genv") || !strcmp(a, "-env") || !strcmp(a, "--genv")) {
            if (i + 2 >= argc)
                usage();
            add_user_env(a, argv[i + 1], argv[i + 2]);
            i += 2;
        } else if (!strcmp(a, "-x")) {
            if (i + 1 >= argc)
                usage();
            char *spec = argv[++i];
            char *eq = strchr(spec, '=');
            if (eq) {
                *eq = '\0';
                add_user_env(a, spec, eq + 1);
                *eq = '=';
            } else {
                const char *v = getenv(spec);
                if (!v)
                    die("-x %s: the variable is not set in mpiexec's environment", spec);
                add_user_env(a, spec, v);
            }
        } else if (!strcmp(a, "--tag-output") || !strcmp(a, "-tag-output") || !strcmp(a, "-l") ||
                   !strcmp(a, "-prepend-rank")) {
            job.tag_output = true;
        } else if (!strcmp(a, "--timeout") || !strcmp(a, "-timeout")) {
            if (i + 1 >= argc)
                usage();
            char *end;
            job.timeout = strtod(argv[++i], &end);
            if (*end || job.timeout <= 0)
                die("invalid timeout '%s'", argv[i]);
        } else if (!strcmp(a, "--oversubscribe") || !strcmp(a, "-oversubscribe") ||
                   !strcmp(a, "--allow-run-as-root")) {
            /* ranks always may outnumber cores; root is always allowed */
        } else if (!strcmp(a, "--host") || !strcmp(a, "-host") || !strcmp(a, "-hosts") || !strcmp(a, "--hosts")) {
            if (i + 1 >= argc)
                usage();
            parse_host_list(argv[++i]);
        } else if (!strcmp(a, "--hostfile") || !strcmp(a, "-hostfile") || !strcmp(a, "-f") ||
                   !strcmp(a, "--machinefile") || !strcmp(a, "-machinefile")) {
            if (i + 1 >= argc)
                usage();
            parse_hostfile(argv[++i]);
        } else if (!strcmp(a, "--launcher") || !strcmp(a, "-launcher")) {
            if (i + 1 >= argc)
                usage();
            job.launcher = argv[++i];
            if (strcmp(job.launcher, "ssh") && strcmp(job.launcher, "rsh") && strcmp(job.launcher, "fork"))
                die("--launcher %s: expected ssh, rsh or fork", job.launcher);
        } else if (!strcmp(a, "--launcher-exec") || !strcmp(a, "-launcher-exec") || !strcmp(a, "--iface") ||
                   !strcmp(a, "-iface")) {
            if (i + 1 >= argc)
                usage();
            if (strstr(a, "iface"))
                job.iface = argv[++i];
            else
                job.launcher_exec = argv[++i];
        } else if (!strcmp(a, "--proxy")) {
            /* started by mpiexec on another host: --proxy ADDR PORT INDEX */
            if (i + 3 >= argc)
                usage();
            exit(lmpi_proxy_main(argv[i + 1], argv[i + 2], atoi(argv[i + 3])));
        } else if (!strcmp(a, "-ppn") || !strcmp(a, "--ppn")) {
            /* Hydra's processes per node: --map-by ppr:N:node */
            char *end;
            long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
            if (i + 1 >= argc || *end || v < 1 || v > 1 << 20)
                die("%s needs a process count of at least 1", a);
            static char ppr[48];
            snprintf(ppr, sizeof(ppr), "ppr:%ld:node", v);
            job.map_by = ppr;
            i++;
        } else if (!strcmp(a, "--network") || !strcmp(a, "--pattern") || !strcmp(a, "--map-by") ||
                   !strcmp(a, "-map-by") || !strcmp(a, "--bind-to") || !strcmp(a, "-bind-to") ||
                   !strcmp(a, "--cores") || !strcmp(a, "--message-size")) {
            if (i + 1 >= argc)
                usage();
            const char *v = argv[++i];
            if (!strcmp(a, "--network"))
                job.network = v;
            else if (!strcmp(a, "--pattern"))
                job.pattern = v;
            else if (strstr(a, "map-by"))
                job.map_by = v;
            else if (strstr(a, "bind-to"))
                job.bind_to = v;
            else if (!strcmp(a, "--message-size")) {
                if (strcmp(v, "small") && strcmp(v, "large"))
                    die("--message-size is small or large, not '%s'", v);
                job.large = v[0] == 'l';
            } else {
                char *end;
                long c = strtol(v, &end, 10);
                if (*end || c < 1 || c > 1 << 16)
                    die("--cores needs a positive count, not '%s'", v);
                job.cores = (int)c;
            }
        } else if (!strcmp(a, "--universe-size") || !strcmp(a, "-usize") || !strcmp(a, "--usize")) {
            if (i + 1 >= argc)
                usage();
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 1000000)
                die("invalid universe size '%s'", argv[i]);
            job.universe = (int)v;
            job.universe_given = true;
        } else if (!strcmp(a, "--singleton")) {
            /* started by a singleton's MPI library: --singleton FD KVSNAME */
            if (i + 2 >= argc)
                usage();
            job.singleton_fd = atoi(argv[i + 1]);
            job.singleton_kvs = argv[i + 2];
            return argc;
        } else if (!strcmp(a, "-nameserver") || !strcmp(a, "--nameserver")) {
            char err[300];
            if (i + 1 >= argc)
                usage();
            if (lmpi_ns_parse(argv[++i], &job.nameserver, err, sizeof(err)) != 0)
                die("%s %s", a, err);
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            job.verbose = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "-help")) {
            help(stdout, 0);
        } else if (!strcmp(a, "--version") || !strcmp(a, "-version") || !strcmp(a, "-V")) {
            printf("mpiexec (LeanMPI) %s\n"
                   "MPI 5.0 standard ABI; ranks speak PMI-1, PMI-2 or PMIx, so Hydra's mpiexec and PMIx "
                   "launchers start them too\n",
                   LMPI_VERSION_STRING);
            exit(0);
        } else {
            die("unknown option '%s' (see mpiexec --help)", a);
        }
    }
    if (i >= argc)
        usage();
    return i;
}

/* ---- key-value space ------------------------------------------------------ */
static void kv_set(kv_t **kvs, int *n, int *cap, const char *key, const char *value)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*kvs)[i].key, key)) {
            free((*kvs)[i].value);
            (*kvs)[i].value = strdup(value);
            return;
        }
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *kvs = realloc(*kvs, sizeof(kv_t) * (size_t)*cap);
        if (!*kvs)
            die("out of memory");
    }
    (*kvs)[*n].key = strdup(key);
    (*kvs)[*n].value = strdup(value);
    (*n)++;
}

static int kv_find(const kv_t *kvs, int n, const char *key)
{
    for (int i = n - 1; i >= 0; i--)
        if (!strcmp(kvs[i].key, key))
            return i;
    return -1;
}

static size_t kv_hash(const char *key)
{
    size_t h = 14695981039346656037u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    return h;
}

/* The index slot holding key, or the empty slot where it would go. */
static size_t kvs_slot(const job_t *j, const char *key)
{
    size_t mask = j->kv_index_cap - 1, i = kv_hash(key) & mask;
    while (j->kv_index[i] && strcmp(j->kvs[j->kv_index[i] - 1].key, key))
        i = (i + 1) & mask;
    return i;
}

static void kvs_reindex(job_t *j)
{
    size_t cap = j->kv_index_cap ? 2 * j->kv_index_cap : 256;
    while (cap < 2 * (size_t)(j->n_kvs + 1))
        cap *= 2;
    free(j->kv_index);
    j->kv_index = calloc(cap, sizeof(int));
    if (!j->kv_index)
        die("out of memory");
    j->kv_index_cap = cap;
    for (int k = 0; k < j->n_kvs; k++)
        j->kv_index[kvs_slot(j, j->kvs[k].key)] = k + 1;
}

static bool kvs_put(job_t *j, const char *key, const char *value)
{
    if (2 * (size_t)(j->n_kvs + 1) > j->kv_index_cap)
        kvs_reindex(j);
    size_t at = kvs_slot(j, key);
    if (j->kv_index[at]) {
        kv_t *e = &j->kvs[j->kv_index[at] - 1];
        char *v = strdup(value);
        if (!v)
            die("out of memory");
        free(e->value);
        e->value = v;
        return true;
    }
    if (j->n_kvs >= KVS_KEYS_PER_PROC * (j->n + 1))
        return false;
    if (j->n_kvs == j->cap_kvs) {
        j->cap_kvs = j->cap_kvs ? 2 * j->cap_kvs : 64;
        j->kvs = realloc(j->kvs, sizeof(kv_t) * (size_t)j->cap_kvs);
        if (!j->kvs)
            die("out of memory");
    }
    j->kvs[j->n_kvs].key = strdup(key);
    j->kvs[j->n_kvs].value = strdup(value);
    if (!j->kvs[j->n_kvs].key || !j->kvs[j->n_kvs].value)
        die("out of memory");
    j->kv_index[at] = ++j->n_kvs;
    return true;
}

static const char *kvs_get(const job_t *j, const char *key)
{
    if (!j->kv_index_cap)
        return NULL;
    int i = j->kv_index[kvs_slot(j, key)];
    return i ? j->kvs[i - 1].value : NULL;
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
    if (rk->pgid > 0)
        kill(-rk->pgid, sig);
    else if (!rk->exited && rk->pid > 0)
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
static const char *who(int p)
{
    static char buf[64];
    if (job.ranks[p].job == 0)
        snprintf(buf, sizeof(buf), "rank %d", job.ranks[p].rank);
    else
        snprintf(buf, sizeof(buf), "rank %d of spawned job %d", job.ranks[p].rank, job.ranks[p].job);
    return buf;
}

/* Record the first failure and start stopping the job. */
static void fail(int code, const char *fmt, ...)
{
    if (job.failed)
        return;
    job.failed = true;
    job.exit_code = code ? code : 1;
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fprintf(stderr, "mpiexec: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "; stopping the job (exit status %d)\n", job.exit_code);
    va_end(ap);
    signal_all(SIGTERM);
    job.kill_deadline = now() + 1.0;
}

/* ---- output forwarding -------------------------------------------------- */
static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void emit_tagged(int fd, int rank, const char *p, size_t n)
{
    char prefix[32];
    int pl = snprintf(prefix, sizeof(prefix), "[%d] ", rank);
    write_all(fd, prefix, (size_t)pl);
    write_all(fd, p, n);
}

static void forward(int rank, int *fdp, linebuf *lb, int outfd)
{
    char buf[8192];
    ssize_t r = read(*fdp, buf, sizeof(buf));
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        if (job.tag_output && lb->len) {
            lb->buf[lb->len++] = '\n';
            emit_tagged(outfd, rank, lb->buf, lb->len);
            lb->len = 0;
        }
        close(*fdp);
        *fdp = -1;
        return;
    }
    if (!job.tag_output) {
        write_all(outfd, buf, (size_t)r);
        return;
    }
    for (ssize_t i = 0; i < r; i++) {
        lb->buf[lb->len++] = buf[i];
        if (buf[i] == '\n' || lb->len == sizeof(lb->buf) - 1) {
            emit_tagged(outfd, rank, lb->buf, lb->len);
            lb->len = 0;
        }
    }
}

/* ---- PMI-1 server ------------------------------------------------------- */
static void close_pmi(rank_t *rk)
{
    if (rk->pmi_fd >= 0)
        close(rk->pmi_fd);
    rk->pmi_fd = -1;
    free(rk->reply);
    rk->reply = NULL;
    rk->reply_len = rk->reply_cap = 0;
}

/* Write what the socket takes now; the rest waits for POLLOUT.  The event
 * loop never blocks on one rank's socket. */
static void flush_replies(rank_t *rk)
{
    size_t done = 0;
    while (done < rk->reply_len) {
        ssize_t w = send(rk->pmi_fd, rk->reply + done, rk->reply_len - done, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (w <= 0) { /* the rank is gone: its exit says why */
            rk->reply_len = 0;
            return;
        }
        done += (size_t)w;
    }
    memmove(rk->reply, rk->reply + done, rk->reply_len - done);
    rk->reply_len -= done;
}

static void pmi_reply(rank_t *rk, const char *fmt, ...)
{
    if (rk->pmi_fd < 0)
        return;
    char line[MAX_LINE];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    if (rk->reply_len + (size_t)n > MAX_PENDING_REPLY) {
        int p = (int)(rk - job.ranks);
        fail(1, "%s (pid %d) does not read its PMI replies (%d bytes unread)", who(p), (int)rk->pid,
             (int)rk->reply_len);
        close_pmi(rk);
        return;
    }
    if (rk->reply_len + (size_t)n > rk->reply_cap) {
        size_t cap = rk->reply_cap ? 2 * rk->reply_cap : 4096;
        while (cap < rk->reply_len + (size_t)n)
            cap *= 2;
        char *b = realloc(rk->reply, cap);
        if (!b)
            die("out of memory");
        rk->reply = b;
        rk->reply_cap = cap;
    }
    memcpy(rk->reply + rk->reply_len, line, (size_t)n);
    rk->reply_len += (size_t)n;
    flush_replies(rk);
}

static const char *word(const char *line, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += kl) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            p += kl + 1;
            /* error_msg runs to the end of the line; other values to a space */
            size_t n = !strcmp(key, "error_msg") ? strlen(p) : strcspn(p, " ");
            if (n >= len)
                n = len - 1;
            memcpy(out, p, n);
            out[n] = '\0';
            return out;
        }
    }
    return NULL;
}

/* cmd=get_range prefix=P from=F count=C: the values of keys P<F>, P<F+1>,
 * ... joined by commas, as many as fit in one line (LeanMPI's clients fetch
 * every rank's network address this way: n/100 round trips instead of n).
 * Stops at the first missing key or a value with a comma. */
static void get_range(rank_t *rk, const job_t *jb, const char *line)
{
    char prefix[256], num[32], values[MAX_LINE - 128], key[300];
    int from = -1, count = -1;
    char *end;
    if (word(line, "from", num, sizeof(num))) {
        long v = strtol(num, &end, 10);
        from = *num && !*end && v >= 0 && v <= INT_MAX ? (int)v : -1;
    }
    if (word(line, "count", num, sizeof(num))) {
        long v = strtol(num, &end, 10);
        count = *num && !*end && v >= 1 && v <= INT_MAX ? (int)v : -1;
    }
    if (!word(line, "prefix", prefix, sizeof(prefix)) || from < 0 || count < 1) {
        pmi_reply(rk, "cmd=get_range_result rc=-1 msg=expected_prefix_from_count");
        return;
    }
    size_t at = 0;
    int got = 0;
    values[0] = '\0';
    for (; got < count && (long)from + got <= INT_MAX; got++) {
        snprintf(key, sizeof(key), "%s%d", prefix, from + got);
        const char *v = kvs_get(jb, key);
        size_t l = v ? strlen(v) : 0;
        if (!v || strchr(v, ',') || at + l + 2 > sizeof(values))
            break;
        at += (size_t)snprintf(values + at, sizeof(values) - at, "%s%s", got ? "," : "", v);
    }
    pmi_reply(rk, "cmd=get_range_result rc=0 count=%d values=%s", got, values);
}

static void launch_job(int j, const app_t *apps, int napps, bool spawned);
static void launch_spawned_on_hosts(int j, const app_t *apps, int napps);
static int given_host(const char *name);

/* ---- MPI_Comm_spawn: mcmd=spawn blocks --------------------------------------- */
static void free_request(spawn_req *q)
{
    for (int a = 0; a < q->napps; a++) {
        app_t *ap = &q->apps[a];
        free(ap->execname);
        for (int i = 0; i < ap->argc; i++)
            free(ap->argv[i]);
        free(ap->argv);
        for (int i = 0; i < ap->ninfo; i++) {
            free(ap->info_k[i]);
            free(ap->info_v[i]);
        }
        free(ap->info_k);
        free(ap->info_v);
    }
    for (int i = 0; i < q->npre; i++) {
        free(q->pre_k[i]);
        free(q->pre_v[i]);
    }
    free(q->apps);
    free(q->pre_k);
    free(q->pre_v);
    memset(q, 0, sizeof(*q));
}

/* grow *arr (of elem-size items) so that index i fits */
static void *fit(void *arr, int *n, int i, size_t elem)
{
    if (i < 0 || i > 4096)
        return arr;
    if (i >= *n) {
        char *p = realloc(arr, elem * (size_t)(i + 1));
        if (!p)
            die("out of memory");
        memset(p + elem * (size_t)*n, 0, elem * (size_t)(i + 1 - *n));
        arr = p;
        *n = i + 1;
    }
    return arr;
}

/* Key or value i of a list of pairs (preput_key_i, info_val_i, ...). */
static void set_pair(char ***keys, char ***vals, int *n, int i, const char *v, bool is_key)
{
    int nk = *n;
    *keys = fit(*keys, &nk, i, sizeof(char *));
    *vals = fit(*vals, n, i, sizeof(char *));
    if (i < 0 || i >= *n)
        return;
    char **slot = is_key ? &(*keys)[i] : &(*vals)[i];
    free(*slot);
    *slot = strdup(v);
}

static void spawn_line(spawn_req *q, const char *line)
{
    const char *eq = strchr(line, '=');
    if (!eq || q->napps == 0)
        return;
    char key[64];
    size_t kl = (size_t)(eq - line) < sizeof(key) - 1 ? (size_t)(eq - line) : sizeof(key) - 1;
    memcpy(key, line, kl);
    key[kl] = '\0';
    const char *v = eq + 1;
    app_t *ap = &q->apps[q->napps - 1];
    int i;
    if (!strcmp(key, "nprocs"))
        ap->nprocs = atoi(v);
    else if (!strcmp(key, "execname"))
        free(ap->execname), ap->execname = strdup(v);
    else if (!strcmp(key, "totspawns"))
        q->total = atoi(v);
    else if (sscanf(key, "arg%d", &i) == 1 && i >= 1) {
        ap->argv = fit(ap->argv, &ap->argc, i - 1, sizeof(char *));
        if (i - 1 < ap->argc)
            free(ap->argv[i - 1]), ap->argv[i - 1] = strdup(v);
    } else if (sscanf(key, "preput_key_%d", &i) == 1) {
        set_pair(&q->pre_k, &q->pre_v, &q->npre, i, v, true);
    } else if (sscanf(key, "preput_val_%d", &i) == 1) {
        set_pair(&q->pre_k, &q->pre_v, &q->npre, i, v, false);
    } else if (sscanf(key, "info_key_%d", &i) == 1) {
        set_pair(&ap->info_k, &ap->info_v, &ap->ninfo, i, v, true);
    } else if (sscanf(key, "info_val_%d", &i) == 1) {
        set_pair(&ap->info_k, &ap->info_v, &ap->ninfo, i, v, false);
    }
}

static const char *app_info(const app_t *ap, const char *key)
{
    for (int i = 0; i < ap->ninfo; i++)
        if (ap->info_k[i] && ap->info_v[i] && !strcmp(ap->info_k[i], key))
            return ap->info_v[i];
    return NULL;
}

/* The largest count the info key "soft" allows up to limit ("1,2,4",
 * "2:8", "2:8:2"); -1 when none or the text is not a soft list. */
static int soft_pick(const char *soft, int limit)
{
    int best = -1;
    char *copy = strdup(soft);
    for (char *t = strtok(copy, ","); t; t = strtok(NULL, ",")) {
        int a, b, step = 1, k = sscanf(t, "%d:%d:%d", &a, &b, &step);
        if (k == 1)
            b = a;
        if (k < 1 || step < 1 || a < 0 || b < a) {
            best = -1;
            break;
        }
        for (int v = a; v <= b; v += step)
            if (v <= limit && v > best)
                best = v;
    }
    free(copy);
    return best;
}

static int live_procs(void)
{
    int n = 0;
    for (int p = 0; p < job.nprocs; p++)
        n += !job.ranks[p].exited;
    return n;
}

/* Words of a reply cannot hold spaces: the message uses '_' (the client
 * turns them back). */
static int spawn_fail(rank_t *rk, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (job.verbose)
        fprintf(stderr, "mpiexec: spawn refused: %s\n", msg);
    for (char *c = msg; *c; c++)
        if (*c == ' ' || *c == '=' || *c == '\n')
            *c = '_';
    pmi_reply(rk, "cmd=spawn_result rc=-1 msg=%s", msg);
    return 0;
}

static int do_spawn(int p)
{
    rank_t *rk = &job.ranks[p];
    spawn_req *q = &rk->spawn;
    int avail = job.universe_given ? job.universe - live_procs() : 1 << 30;
    int total = 0;
    for (int a = 0; a < q->napps; a++) {
        app_t *ap = &q->apps[a];
        if (!ap->execname || ap->nprocs < 1)
            return spawn_fail(rk, "application %d has no command or no process count", a);
        const char *wdir = app_info(ap, "wdir"), *host = app_info(ap, "host"), *soft = app_info(ap, "soft");
        const char *hosts = host ? host : app_info(ap, "hosts");
        if (hosts) {
            char *copy = strdup(hosts);
            for (char *h = strtok(copy, ", "); h; h = strtok(NULL, ", ")) {
                char *colon = strchr(h, ':');
                if (colon)
                    *colon = '\0';
                if (job.remote ? given_host(h) < 0 : !is_this_host(h)) {
                    if (job.remote)
                        spawn_fail(rk, "host %s is not one of the job's hosts (--host, --hostfile)", h);
                    else
                        spawn_fail(rk, "host %s is not this machine (give --host to run on others)", h);
                    free(copy);
                    return 0;
                }
            }
            free(copy);
        }
        char why[512];
        if (!lmpi_exec_check(ap->execname, wdir, app_info(ap, "path"), why, sizeof(why)))
            return spawn_fail(rk, "%s", why);
        int limit = ap->nprocs < avail - total ? ap->nprocs : avail - total;
        if (soft) {
            int pick = soft_pick(soft, limit);
            if (pick < 0)
                return spawn_fail(rk, "soft=%s allows no count up to %d (universe size %d, %d processes running)",
                                  soft, limit, job.universe, live_procs());
            ap->nprocs = pick;
        } else if (ap->nprocs > limit) {
            return spawn_fail(rk, "%d more processes do not fit in the universe of %d (%d running; give soft or a "
                              "larger --universe-size)", total + ap->nprocs, job.universe, live_procs());
        }
        total += ap->nprocs;
    }
    if (total == 0)
        return spawn_fail(rk, "no process to start");
    if (job.nprocs + total > job.cap_procs)
        return spawn_fail(rk, "one mpiexec starts at most %d processes in all", job.cap_procs);
    job.jobs = realloc(job.jobs, sizeof(job_t) * (size_t)(job.njobs + 1));
    if (!job.jobs)
        die("out of memory");
    int j = job.njobs++;
    job_t *nj = &job.jobs[j];
    memset(nj, 0, sizeof(*nj));
    char suffix[16];
    int sl = snprintf(suffix, sizeof(suffix), "_s%d", j);
    size_t bl = strnlen(job.jobs[0].kvsname, sizeof(nj->kvsname) - 1 - (size_t)sl);
    memcpy(nj->kvsname, job.jobs[0].kvsname, bl);
    memcpy(nj->kvsname + bl, suffix, (size_t)sl + 1);
    nj->n = total;
    char mapping[64];
    snprintf(mapping, sizeof(mapping), "(vector,(0,1,%d))", total);
    kvs_put(nj, "PMI_process_mapping", mapping);
    for (int i = 0; i < q->npre; i++)
        if (q->pre_k[i] && q->pre_v[i])
            kvs_put(nj, q->pre_k[i], q->pre_v[i]);
    if (job.remote)
        launch_spawned_on_hosts(j, q->apps, q->napps);
    else
        launch_job(j, q->apps, q->napps, true);
    if (job.verbose)
        fprintf(stderr, "mpiexec: %s spawned job %d (%s): %d processes\n", who(p), j, nj->kvsname, total);
    pmi_reply(rk, "cmd=spawn_result rc=0 nprocs=%d", total);
    return 1;
}

/* ---- the name service ------------------------------------------------------- */

/* The same three commands answered by hydra_nameserver (-nameserver): the
 * names are shared with every job that uses it, on any host.  mpiexec waits
 * for the answer (at most NS_TIMEOUT_MS), as the rank asking does. */
#define NS_TIMEOUT_MS 5000
/* cmd: publish_name (port given), lookup_name or unpublish_name (port NULL) */
static void name_command_remote(rank_t *rk, const char *cmd, const char *service, const char *port)
{
    bool publish = port != NULL, lookup = !strcmp(cmd, "lookup_name");
    const char *words[3] = {publish ? "PUBLISH" : lookup ? "LOOKUP" : "UNPUBLISH", service, port};
    char result[32], reply[2048], err[600];
    snprintf(result, sizeof(result), "%.*s_result", (int)(strlen(cmd) - 5), cmd); /* publish_name: publish_result */
    /* hydra_nameserver refuses a name published twice but keeps the second
     * port anyway, and hands it out once the first is unpublished: a port of
     * a process told its publish failed.  So a taken name is not sent. */
    const char *probe[2] = {"LOOKUP", service};
    if (publish &&
        lmpi_ns_request(&job.nameserver, probe, 2, reply, sizeof(reply), NS_TIMEOUT_MS, err, sizeof(err)) == 0 &&
        *reply) {
        pmi_reply(rk, "cmd=%s rc=-1 msg=already_published_at_the_name_server", result);
        return;
    }
    if (lmpi_ns_request(&job.nameserver, words, publish ? 3 : 2, reply, sizeof(reply), NS_TIMEOUT_MS, err,
                        sizeof(err)) != 0) {
        for (char *c = err; *c; c++) /* one PMI word; the rank turns '_' back into spaces */
            if (*c == ' ' || *c == '=' || *c == '\n')
                *c = '_';
        pmi_reply(rk, "cmd=%s rc=-1 msg=%s", result, err);
    } else if (lookup) {
        if (*reply && !strpbrk(reply, " \n"))
            pmi_reply(rk, "cmd=%s rc=0 port=%s", result, reply);
        else
            pmi_reply(rk, "cmd=%s rc=-1 msg=not_found", result);
    } else if (strcmp(reply, "SUCCESS")) {
        /* the rank names the service; a word here would lose its '_'s */
        pmi_reply(rk, "cmd=%s rc=-1 msg=%s_at_the_name_server", result,
                  publish ? "already_published" : "not_published");
    } else {
        pmi_reply(rk, "cmd=%s rc=0 info=ok", result);
    }
}

static void name_command(rank_t *rk, const char *cmd, const char *line)
{
    char service[512], port[2048];
    bool have = word(line, "service", service, sizeof(service)) != NULL;
    if (job.nameserver.host[0]) {
        bool publish = !strcmp(cmd, "publish_name");
        if (!have || (publish && !word(line, "port", port, sizeof(port))))
            pmi_reply(rk, "cmd=%.*s_result rc=-1 msg=missing_service_or_port", (int)(strlen(cmd) - 5), cmd);
        else
            name_command_remote(rk, cmd, service, publish ? port : NULL);
        return;
    }
    int at = have ? kv_find(job.names, job.n_names, service) : -1;
    if (!strcmp(cmd, "publish_name")) {
        if (!have || !word(line, "port", port, sizeof(port)))
            pmi_reply(rk, "cmd=publish_result rc=-1 msg=missing_service_or_port");
        else if (at >= 0)
            pmi_reply(rk, "cmd=publish_result rc=-1 msg=%s_is_already_published", service);
        else {
            int cap = job.n_names;
            kv_set(&job.names, &job.n_names, &cap, service, port);
            pmi_reply(rk, "cmd=publish_result rc=0 info=ok");
        }
    } else if (!strcmp(cmd, "lookup_name")) {
        if (at < 0)
            pmi_reply(rk, "cmd=lookup_result rc=-1 msg=not_found");
        else
            pmi_reply(rk, "cmd=lookup_result rc=0 port=%s", job.names[at].value);
    } else {
        if (at < 0) {
            pmi_reply(rk, "cmd=unpublish_result rc=-1 msg=not_published");
            return;
        }
        free(job.names[at].key);
        free(job.names[at].value);
        job.names[at] = job.names[--job.n_names];
        pmi_reply(rk, "cmd=unpublish_result rc=0 info=ok");
    }
}

/* Report a bad PMI line, at most MAX_COMPLAINTS times per rank: a hostile or
 * broken rank must not flood the job's stderr. */
#define MAX_COMPLAINTS 10
__attribute__((format(printf, 2, 3))) static void complain(int r, const char *fmt, ...)
{
    rank_t *rk = &job.ranks[r];
    if (rk->complaints >= MAX_COMPLAINTS)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mpiexec: %s ", who(r));
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (++rk->complaints == MAX_COMPLAINTS)
        fprintf(stderr, " (further bad PMI lines from %s are ignored silently)", who(r));
    fputc('\n', stderr);
}

static void pmi_command(int r, const char *line)
{
    rank_t *rk = &job.ranks[r];
    job_t *jb = &job.jobs[rk->job];
    char cmd[64], key[512], value[2048];
    if (!strcmp(line, "mcmd=spawn")) {
        spawn_req *q = &rk->spawn;
        q->apps = realloc(q->apps, sizeof(app_t) * (size_t)(q->napps + 1));
        if (!q->apps)
            die("out of memory");
        memset(&q->apps[q->napps++], 0, sizeof(app_t));
        q->active = true;
        return;
    }
    if (rk->spawn.active) {
        if (!strcmp(line, "endcmd")) {
            rk->spawn.active = false;
            if (rk->spawn.napps >= rk->spawn.total) {
                do_spawn(r);
                free_request(&rk->spawn);
            }
        } else {
            spawn_line(&rk->spawn, line);
        }
        return;
    }
    if (!word(line, "cmd", cmd, sizeof(cmd))) {
        complain(r, "sent a malformed PMI line: %.200s", line);
        return;
    }
    if (!strcmp(cmd, "init")) {
        rk->pmi_inited = true;
        /* lmpi_range=1: this server answers get_range (below) */
        pmi_reply(rk, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0 lmpi_range=1");
    } else if (!strcmp(cmd, "get_maxes")) {
        pmi_reply(rk, "cmd=maxes rc=0 kvsname_max=64 keylen_max=512 vallen_max=2048");
    } else if (!strcmp(cmd, "get_appnum")) {
        pmi_reply(rk, "cmd=appnum rc=0 appnum=%d", rk->appnum);
    } else if (!strcmp(cmd, "get_my_kvsname")) {
        pmi_reply(rk, "cmd=my_kvsname rc=0 kvsname=%s", jb->kvsname);
    } else if (!strcmp(cmd, "get_universe_size")) {
        /* without --universe-size, Hydra's answer: -1, "not known", and MPI_UNIVERSE_SIZE
         * is then not set (MPICH 5.0.2's mpiexec -n 1 and -n 3 both leave it unset) */
        pmi_reply(rk, "cmd=universe_size rc=0 size=%d", job.universe_given ? job.universe : -1);
    } else if (!strcmp(cmd, "put")) {
        if (!word(line, "key", key, sizeof(key)) || !word(line, "value", value, sizeof(value))) {
            pmi_reply(rk, "cmd=put_result rc=-1 msg=missing_key_or_value");
            return;
        }
        if (!kvs_put(jb, key, value)) {
            pmi_reply(rk, "cmd=put_result rc=-1 msg=key_value_space_full");
            return;
        }
        pmi_reply(rk, "cmd=put_result rc=0 msg=success");
    } else if (!strcmp(cmd, "get")) {
        const char *v = word(line, "key", key, sizeof(key)) ? kvs_get(jb, key) : NULL;
        if (v)
            pmi_reply(rk, "cmd=get_result rc=0 msg=success value=%s", v);
        else
            pmi_reply(rk, "cmd=get_result rc=-1 msg=key_%s_not_found", key);
    } else if (!strcmp(cmd, "get_range")) {
        get_range(rk, jb, line);
    } else if (!strcmp(cmd, "barrier_in")) {
        if (!rk->in_barrier) {
            rk->in_barrier = true;
            jb->barrier_count++;
        }
        if (jb->barrier_count == jb->n) {
            for (int i = jb->first; i < jb->first + jb->n; i++) {
                job.ranks[i].in_barrier = false;
                if (job.ranks[i].pmi_fd >= 0)
                    pmi_reply(&job.ranks[i], "cmd=barrier_out rc=0");
            }
            jb->barrier_count = 0;
        }
    } else if (!strcmp(cmd, "finalize")) {
        rk->finalized = true;
        pmi_reply(rk, "cmd=finalize_ack rc=0");
    } else if (!strcmp(cmd, "publish_name") || !strcmp(cmd, "lookup_name") || !strcmp(cmd, "unpublish_name")) {
        name_command(rk, cmd, line);
    } else if (!strcmp(cmd, "abort")) {
        char code[32], msg[1024];
        int c = word(line, "exitcode", code, sizeof(code)) ? atoi(code) : 1;
        const char *m = word(line, "error_msg", msg, sizeof(msg));
        fail(c, "%s (pid %d) called MPI_Abort with error code %d%s%s", who(r), (int)rk->pid, c,
             m && *m ? ": " : "", m && *m ? m : "");
    } else {
        complain(r, "sent unsupported PMI command '%s'", cmd);
        pmi_reply(rk, "cmd=%s_result rc=-1 msg=unsupported", cmd);
    }
}

static void pmi_read(int r)
{
    rank_t *rk = &job.ranks[r];
    linebuf *lb = &rk->pmi_in;
    ssize_t n = read(rk->pmi_fd, lb->buf + lb->len, sizeof(lb->buf) - 1 - lb->len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        close_pmi(rk);
        if (rk->adopted && !rk->exited) { /* the singleton is gone (or done with us) */
            rk->exited = true;
            job.running--;
            if (!rk->finalized && job.running > 0)
                fail(1, "the singleton (pid %d) that spawned these jobs ended without MPI_Finalize", (int)rk->pid);
        }
        return;
    }
    lb->len += (size_t)n;
    char *start = lb->buf;
    char *nl;
    while ((nl = memchr(start, '\n', lb->len - (size_t)(start - lb->buf))) != NULL) {
        *nl = '\0';
        if (rk->skip_line) /* the tail of an over-long line is not a command */
            rk->skip_line = false;
        else if (memchr(start, '\0', (size_t)(nl - start)))
            complain(r, "sent a PMI line with a NUL byte; ignored");
        else
            pmi_command(r, start);
        if (rk->pmi_fd < 0)
            return;
        start = nl + 1;
    }
    size_t rest = lb->len - (size_t)(start - lb->buf);
    memmove(lb->buf, start, rest);
    lb->len = rest;
    if (lb->len == sizeof(lb->buf) - 1) {
        if (!rk->skip_line)
            complain(r, "sent an over-long PMI line (over %d bytes); ignored", MAX_LINE - 1);
        rk->skip_line = true;
        lb->len = 0;
    }
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
static void rank_ended(int r, int status)
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
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        fail(128 + sig, "%s (pid %d%s) was killed by signal %d (%s)", who(r), pid, where, sig, strsignal(sig));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        fail(WEXITSTATUS(status), "%s (pid %d%s) exited with status %d", who(r), pid, where, WEXITSTATUS(status));
    } else if (rk->pmi_inited && !rk->finalized) {
        /* the others would wait for it forever */
        fail(1, "%s (pid %d%s) exited with status 0 without calling MPI_Finalize", who(r), pid, where);
    }
}

static void launcher_ended(pid_t pid, int status);

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

/* ---- placement -------------------------------------------------------- */
/* "ppr:N:node" -> N, or 0 when M is not of that form. */
static int ppr_per_node(const char *m)
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
static void place_ranks(void)
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

/* In the child, before exec: pin to the chosen core or package. */
static void bind_self(int r)
{
    int idx = job.bind_index[r];
    if (idx < 0)
        return;
    hwloc_obj_t obj = hwloc_get_obj_by_type(job.topo, job.bind_type, (unsigned)idx);
    if (!obj || hwloc_set_cpubind(job.topo, obj->cpuset, HWLOC_CPUBIND_PROCESS))
        fprintf(stderr, "mpiexec: rank %d: binding failed: %s\n", r, strerror(errno));
}

/* Start the processes of job j: the applications' processes in order,
 * ranks first .. first + n of the process table.  Spawned jobs get the
 * user's -genv/-x variables, not the first job's placement. */
/* "kvs_<pid>_<16 hex digits>": the job's name, and through it the names of
 * its shared-memory objects; the random part makes them unguessable. */
static void new_kvsname(char *out, size_t len)
{
    unsigned char rnd[8];
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        die("cannot read random bytes for the job name: %s", strerror(errno));
    int n = snprintf(out, len, "kvs_%d_", (int)getpid());
    for (size_t i = 0; i < sizeof(rnd) && n + 2 < (int)len; i++)
        n += snprintf(out + n, len - (size_t)n, "%02x", rnd[i]);
}

static void launch_job(int j, const app_t *apps, int napps, bool spawned)
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
                lmpi_launch_child_prepare(!(r == 0 && !spawned && tty_stdin));
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
    if (seg >= 0)
        close(seg);
}

/* The singleton that started us: rank 0 of a one-process job under its own
 * kvsname, reached on the socket it gave us. */
static void adopt_singleton(void)
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

/* ---- other hosts ---------------------------------------------------------
 * mpiexec listens on the address the hosts reach it on (never 0.0.0.0) and
 * starts a proxy on each host through the launcher (proxy.c).  Every
 * connection must open with the job's secret, which travels on the
 * launcher's standard input.  A proxy hands each of its ranks three
 * connections (PMI, stdout, stderr) that this loop serves like a local
 * rank's socket and pipes; exits arrive as lines from the proxy. */
extern char **environ;

static bool is_remote_job(void)
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
static void assign_hosts(void)
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
        lmpi_launch_child_prepare(1);
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

static void start_proxies(void)
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
static int given_host(const char *name)
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
static void launch_spawned_on_hosts(int j, const app_t *apps, int napps)
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

/* The job a proxy starts: its size, its ranks ("rank P R": process P of
 * ours, rank R of its job), the environment (mpiexec's, then -genv), the
 * program, and for a spawned job "spawned", wdir and path. */
static void send_job(host_t *ho, int h)
{
    int fd = ho->ctl_fd;
    job_t *jb = &job.jobs[ho->job];
    bool ok = lmpi_proxy_send(fd, "size %d\n", jb->n) == 0;
    for (int p = jb->first; p < jb->first + jb->n && ok; p++)
        if (job.ranks[p].host == h)
            ok = lmpi_proxy_send(fd, "rank %d %d\n", p, job.ranks[p].rank) == 0;
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
    if (!ok || lmpi_proxy_send(fd, "go\n") != 0)
        fail(1, "lost host %s's proxy while sending it the job", ho->name);
}

/* A new connection introduces itself: a proxy, or one stream of a rank. */
static void accept_host_connection(void)
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

/* Remote rank 0's standard input: what we read waits in the buffer until
 * the stream takes it (we read no more meanwhile); our end of input, or
 * rank 0 closing its stdin, ends the relay. */
static void stdin_relay_close(void)
{
    if (job.stdin_relay.fd >= 0)
        close(job.stdin_relay.fd);
    job.stdin_relay.fd = -1;
    job.stdin_relay.eof = true;
}

static void stdin_relay_write(void)
{
    while (job.stdin_relay.off < job.stdin_relay.len) {
        ssize_t w = send(job.stdin_relay.fd, job.stdin_relay.buf + job.stdin_relay.off,
                         job.stdin_relay.len - job.stdin_relay.off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (w <= 0) {
            stdin_relay_close();
            return;
        }
        job.stdin_relay.off += (size_t)w;
    }
    job.stdin_relay.len = job.stdin_relay.off = 0;
    if (job.stdin_relay.eof)
        stdin_relay_close();
}

static void stdin_relay_read(void)
{
    ssize_t n = read(0, job.stdin_relay.buf, sizeof(job.stdin_relay.buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        job.stdin_relay.eof = true;
        stdin_relay_write(); /* nothing pending: closes the stream, rank 0 reads end of file */
        return;
    }
    job.stdin_relay.len = (size_t)n;
    job.stdin_relay.off = 0;
    stdin_relay_write();
}

/* Its ranks will report nothing more: they count as ended (the failure
 * that caused this stops the job). */
static void host_lost(int h)
{
    job.hosts[h].done = true;
    for (int r = 0; r < job.nprocs; r++)
        if (job.ranks[r].host == h && !job.ranks[r].exited) {
            job.ranks[r].exited = true;
            job.running--;
        }
}

/* Lines from a host's proxy: "pid R PID", "exit R STATUS". */
static void read_host(int h)
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
        if (!all)
            fail(1, "lost the connection to host %s (its proxy or the host is gone)", ho->name);
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

    int sfd = lmpi_launch_signalfd();
    signal(SIGPIPE, SIG_IGN);

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
        start_proxies();
    } else if (!job.singleton_kvs) {
        app_t app = {.nprocs = job.n, .execname = argv[first], .argv = argv + first + 1, .argc = argc - first - 1};
        launch_job(0, &app, 1, false);
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
    return job.failed ? job.exit_code : 0;
}
