/* mpiexec's own header: the launcher's state and the functions its files
 * share (mpiexec.c: the event loop and stopping; options.c, kvs.c, output.c,
 * pmi_server.c, spawn.c, names.c, placement.c, hosts.c). */
#ifndef LMPI_MPIEXEC_H
#define LMPI_MPIEXEC_H

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
/* The longest mpiexec waits for a hydra_nameserver's answer (names.c). */
#define NS_TIMEOUT_MS 5000


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
    /* --with-ft ulfm: the job's segment here (a memfd, kept to post
     * failures on its notice board: src/transport/shm/notice.h); 0 (never
     * a segment: our stdin) when it has none */
    int seg_fd;
    int nfailed; /* its processes that failed: barriers no longer wait for them */
    char *ft_listed; /* --with-ft -nameserver: "2,5,7", published as lmpi-ft:KVSNAME */
} job_t;

typedef struct {
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
    /* --with-ft ulfm / -disable-auto-cleanup: a failed rank does not stop
     * the job; the survivors are told (post_failure) */
    bool ft;
    /* -disable-auto-cleanup: as Hydra, a failure is not announced (MPICH's
     * own fault tests take any output but theirs as a failure); with
     * --with-ft ulfm (or -v) mpiexec says which rank failed and why */
    bool ft_quiet;
    int ft_exit_code; /* the first failure's status, returned at the end */
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
    const app_t *apps;          /* the first job's applications (MPMD with ':'), napps of them */
    int napps;
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
} mpiexec_state;

/* The whole launcher's state (mpiexec.c): one per process. */
extern mpiexec_state job;

/* mpiexec.c */
double now(void);
void die(const char *fmt, ...);
const char *who(int p);
void fail(int code, const char *fmt, ...);
void rank_ended(int r, int status);
/* --with-ft ulfm: tell every survivor of process p's job that p failed */
void post_failure(int p);
void barrier_check(job_t *jb);

/* options.c */
void add_env(const char *name, const char *value);
bool is_this_host(const char *h);
int parse_args(int argc, char **argv);
int parse_apps(int argc, char **argv, int first, app_t **apps);

/* kvs.c */
void kv_set(kv_t **kvs, int *n, int *cap, const char *key, const char *value);
int kv_find(const kv_t *kvs, int n, const char *key);
bool kvs_put(job_t *j, const char *key, const char *value);
const char *kvs_get(const job_t *j, const char *key);

/* output.c */
void write_all(int fd, const char *p, size_t n);
void forward(int rank, int *fdp, linebuf *lb, int outfd);
void stdin_relay_write(void);
void stdin_relay_read(void);

/* pmi_server.c */
void flush_replies(rank_t *rk);
void pmi_reply(rank_t *rk, const char *fmt, ...);
const char *word(const char *line, const char *key, char *out, size_t len);
void pmi_read(int r);

/* spawn.c */
void free_request(spawn_req *q);
void *fit(void *arr, int *n, int i, size_t elem);
void spawn_line(spawn_req *q, const char *line);
const char *app_info(const app_t *ap, const char *key);
int do_spawn(int p);

/* names.c */
void name_command(rank_t *rk, const char *cmd, const char *line);

/* placement.c */
int ppr_per_node(const char *m);
void place_ranks(void);
void new_kvsname(char *out, size_t len);
void launch_job(int j, const app_t *apps, int napps, bool spawned);
void adopt_singleton(void);

/* hosts.c */
bool is_remote_job(void);
void assign_hosts(void);
void start_proxies(void);
int given_host(const char *name);
void launch_spawned_on_hosts(int j, const app_t *apps, int napps);
void accept_host_connection(void);
void host_lost(int h);
void read_host(int h);

#endif
