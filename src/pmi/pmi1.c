/* PMI-1 wire client.  Commands are single lines of key=value words:
 *   -> cmd=init pmi_version=1 pmi_subversion=1     <- cmd=response_to_init ... rc=0
 *   -> cmd=get_my_kvsname                          <- cmd=my_kvsname kvsname=K
 *   -> cmd=put kvsname=K key=k value=v             <- cmd=put_result rc=0
 *   -> cmd=barrier_in                              <- cmd=barrier_out
 *   -> cmd=get kvsname=K key=k                     <- cmd=get_result rc=0 value=v
 *   -> cmd=abort exitcode=N                        (the launcher stops the job)
 *   -> cmd=finalize                                <- cmd=finalize_ack
 *   -> mcmd=spawn / nprocs= / execname= / ... / endcmd (a block per application)
 *                                                  <- cmd=spawn_result rc=0 nprocs=N
 *   -> cmd=publish_name service=S port=P           <- cmd=publish_result rc=0
 *   -> cmd=lookup_name service=S                   <- cmd=lookup_result rc=0 port=P
 *   -> cmd=unpublish_name service=S                <- cmd=unpublish_result rc=0
 * The launcher passes the connected socket in PMI_FD and the rank and size
 * in PMI_RANK and PMI_SIZE.  With LMPI_PMI=2 the same socket speaks PMI-2
 * (pmi2.c).  Without PMI_FD, a process a PMIx server started
 * (PMIX_NAMESPACE) goes through pmix_client.c, and any other is a
 * singleton. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmi/pmi.h"
#include "pmi/pmi2.h"
#include "runtime/config.h"
/* PMIX_RETURN(call): return call's result when a PMIx server started this
 * process (the call is not compiled without libpmix's headers). */
#ifdef LMPI_HAVE_PMIX
#include "pmi/pmix_client.h"
#define PMIX_ON() lmpi_pmix_active()
#define PMIX_RETURN(call)                                                                                  \
    do {                                                                                                   \
        if (lmpi_pmix_active())                                                                            \
            return call;                                                                                   \
    } while (0)
#else
#define PMIX_ON() false
#define PMIX_RETURN(call) ((void)0)
#endif
/* PMI2_RETURN(call): the same when the socket speaks PMI-2 (LMPI_PMI=2). */
#define PMI2_RETURN(call)                                                                                  \
    do {                                                                                                   \
        if (lmpi_pmi2_active())                                                                            \
            return call;                                                                                   \
    } while (0)

static int pmi_fd = -1;
static bool server_has_range; /* our mpiexec: cmd=get_range */
static char describe[4200] = "none (singleton)";
static char kvsname[256];
static char rbuf[4096];
static size_t rlen;

/* Singleton key-value space: a process talking to itself. */
typedef struct kv {
    struct kv *next;
    char *key;
    char *value;
} kv;
static kv *local_kvs;

int lmpi_pmi_write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

static int write_all(const char *s, size_t n) { return lmpi_pmi_write_all(pmi_fd, s, n); }

static int read_line(char *line, size_t len)
{
    for (;;) {
        char *nl = memchr(rbuf, '\n', rlen);
        if (nl) {
            size_t n = (size_t)(nl - rbuf);
            if (n >= len)
                n = len - 1;
            memcpy(line, rbuf, n);
            line[n] = '\0';
            size_t consumed = (size_t)(nl - rbuf) + 1;
            memmove(rbuf, rbuf + consumed, rlen - consumed);
            rlen -= consumed;
            return 0;
        }
        if (rlen == sizeof(rbuf))
            return -1;
        ssize_t r = read(pmi_fd, rbuf + rlen, sizeof(rbuf) - rlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        rlen += (size_t)r;
    }
}

/* Value of key in a reply line ("cmd=get_result rc=0 value=abc"); values run
 * to the end of their word. */
static int field(const char *line, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    const char *p = line;
    while ((p = strstr(p, key)) != NULL) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            p += kl + 1;
            size_t n = strcspn(p, " ");
            if (n >= len)
                n = len - 1;
            memcpy(out, p, n);
            out[n] = '\0';
            return 0;
        }
        p += kl;
    }
    return -1;
}

static int command(const char *cmd, const char *expect, char *reply, size_t len)
{
    if (write_all(cmd, strlen(cmd)) != 0)
        return -1;
    if (!expect)
        return 0;
    char c[64];
    do {
        if (read_line(reply, len) != 0)
            return -1;
    } while (field(reply, "cmd", c, sizeof(c)) != 0 || strcmp(c, expect) != 0);
    return 0;
}

static int rc_ok(const char *reply)
{
    char rc[32];
    return field(reply, "rc", rc, sizeof(rc)) != 0 || atoi(rc) == 0;
}

int lmpi_pmi_parse_int(const char *text, long lo, long hi, int *out)
{
    if (!text || *text < '0' || *text > '9')
        return -1;
    errno = 0;
    char *end;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Values from the environment are the launcher's, or anyone's who set
 * them: each is checked against its range before it sizes anything. */
static int launcher_values(lmpi_pmi_info *info, char *err, size_t errlen)
{
    const char *fd = getenv("PMI_FD"), *rank = getenv("PMI_RANK"), *size = getenv("PMI_SIZE");
    struct stat st;
    if (lmpi_pmi_parse_int(fd, 0, INT_MAX, &pmi_fd) != 0 || fstat(pmi_fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "PMI_FD=%s is not the file descriptor of a socket", fd);
        pmi_fd = -1;
        return -1;
    }
    if (lmpi_pmi_parse_int(size ? size : "1", 1, LMPI_PMI_MAX_SIZE, &info->size) != 0) {
        snprintf(err, errlen, "PMI_SIZE=%s is not a process count (1 to %d)", size, LMPI_PMI_MAX_SIZE);
        pmi_fd = -1;
        return -1;
    }
    if (lmpi_pmi_parse_int(rank ? rank : "0", 0, info->size - 1, &info->rank) != 0) {
        snprintf(err, errlen, "PMI_RANK=%s is not a rank of a job of PMI_SIZE=%d processes", rank, info->size);
        pmi_fd = -1;
        return -1;
    }
    /* Programs this process starts (system(), popen()) must not speak for
     * it to the launcher: the socket does not survive an exec, and the
     * variable naming it is gone. */
    fcntl(pmi_fd, F_SETFD, FD_CLOEXEC);
    unsetenv("PMI_FD");
    return 0;
}

int lmpi_pmi_init(lmpi_pmi_info *info, char *err, size_t errlen)
{
    memset(info, 0, sizeof(*info));
    snprintf(err, errlen, "cannot talk to the process manager");
    if (!getenv("PMI_FD") && getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK")) {
#ifdef LMPI_HAVE_PMIX
        int rc = lmpi_pmix_init(info, err, errlen);
        snprintf(describe, sizeof(describe), "PMIx (%s)", lmpi_pmix_library());
        return rc;
#else
        snprintf(err, errlen,
                 "started by a PMIx launcher (PMIX_NAMESPACE=%s), but this LeanMPI was built without PMIx "
                 "(install libpmix-dev and rebuild), or use LeanMPI's mpiexec",
                 getenv("PMIX_NAMESPACE"));
        return -1;
#endif
    }
    if (!getenv("PMI_FD")) {
        info->rank = 0;
        info->size = 1;
        info->universe_size = 1;
        info->singleton = 1;
        unsigned r = 0;
        if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
            r = (unsigned)getpid() * 2654435761u ^ (unsigned)(uintptr_t)&r;
        snprintf(info->kvsname, sizeof(info->kvsname), "singleton-%d-%08x", (int)getpid(), r);
        snprintf(kvsname, sizeof(kvsname), "%s", info->kvsname);
        return 0;
    }
    if (launcher_values(info, err, errlen) != 0)
        return -1;
    lmpi_config_ensure_loaded();
    const char *version = lmpi_config.pmi && *lmpi_config.pmi ? lmpi_config.pmi : "1";
    if (strcmp(version, "2") == 0) {
        snprintf(describe, sizeof(describe), "PMI-2");
        return lmpi_pmi2_init(pmi_fd, info, err, errlen);
    }
    if (strcmp(version, "1") != 0) {
        snprintf(err, errlen, "LMPI_PMI=%s: expected 1 or 2 (the PMI wire protocol to speak)", version);
        return -1;
    }
    char reply[1024], v[256];
    if (command("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", reply, sizeof(reply)) ||
        !rc_ok(reply))
        return -1;
    server_has_range = field(reply, "lmpi_range", v, sizeof(v)) == 0 && !strcmp(v, "1");
    snprintf(describe, sizeof(describe), "PMI-1 (%s)",
             server_has_range ? "LeanMPI's mpiexec: addresses fetched in batches" : "one get per key");
    if (command("cmd=get_my_kvsname\n", "my_kvsname", reply, sizeof(reply)) ||
        field(reply, "kvsname", kvsname, sizeof(kvsname)))
        return -1;
    snprintf(info->kvsname, sizeof(info->kvsname), "%s", kvsname);
    if (command("cmd=get_appnum\n", "appnum", reply, sizeof(reply)) == 0 && field(reply, "appnum", v, sizeof(v)) == 0)
        info->appnum = atoi(v);
    info->universe_size = 0; /* not known: Hydra without -usize answers -1 */
    int u;
    if (command("cmd=get_universe_size\n", "universe_size", reply, sizeof(reply)) == 0 &&
        field(reply, "size", v, sizeof(v)) == 0 && lmpi_pmi_parse_int(v, 1, INT_MAX, &u) == 0)
        info->universe_size = u;
    return 0;
}

int lmpi_pmi_put(const char *key, const char *value)
{
    PMIX_RETURN(lmpi_pmix_put(key, value));
    PMI2_RETURN(lmpi_pmi2_put(key, value));
    if (pmi_fd < 0) {
        kv *e = malloc(sizeof(*e));
        if (!e)
            return -1;
        e->key = strdup(key);
        e->value = strdup(value);
        e->next = local_kvs;
        local_kvs = e;
        return 0;
    }
    char cmd[1536], reply[1024];
    snprintf(cmd, sizeof(cmd), "cmd=put kvsname=%s key=%s value=%s\n", kvsname, key, value);
    if (command(cmd, "put_result", reply, sizeof(reply)) || !rc_ok(reply))
        return -1;
    return 0;
}

int lmpi_pmi_get(const char *key, char *value, size_t len) { return lmpi_pmi_get_from(-1, key, value, len); }

int lmpi_pmi_get_from(int owner, const char *key, char *value, size_t len)
{
    (void)owner; /* PMI-1's keys are one space: only PMIx needs it */
    PMIX_RETURN(lmpi_pmix_get(owner, key, value, len));
    PMI2_RETURN(lmpi_pmi2_get(key, value, len));
    if (pmi_fd < 0) {
        for (kv *e = local_kvs; e; e = e->next)
            if (!strcmp(e->key, key)) {
                snprintf(value, len, "%s", e->value);
                return 0;
            }
        return -1;
    }
    char cmd[1536], reply[2048];
    snprintf(cmd, sizeof(cmd), "cmd=get kvsname=%s key=%s\n", kvsname, key);
    if (command(cmd, "get_result", reply, sizeof(reply)) || !rc_ok(reply))
        return -1;
    return field(reply, "value", value, len);
}

const char *lmpi_pmi_describe(void) { return describe; }

/* PMI-2 is spoken by Hydra and Slurm only, never by our mpiexec */
bool lmpi_pmi_signals_failures(void)
{
    return !PMIX_ON() && pmi_fd >= 0 && (lmpi_pmi2_active() || !server_has_range);
}

int lmpi_pmi_dead_processes(char *value, size_t len)
{
    PMI2_RETURN(lmpi_pmi2_job_attr("PMI_dead_processes", value, len));
    return lmpi_pmi_get("PMI_dead_processes", value, len);
}

int lmpi_pmi_get_range(const char *prefix, int from, int count, char *values, size_t len, int *got)
{
    if (PMIX_ON() || pmi_fd < 0 || !server_has_range)
        return -1;
    char cmd[512], reply[4096], n[32];
    snprintf(cmd, sizeof(cmd), "cmd=get_range kvsname=%s prefix=%s from=%d count=%d\n", kvsname, prefix, from, count);
    if (command(cmd, "get_range_result", reply, sizeof(reply)) || !rc_ok(reply) ||
        field(reply, "count", n, sizeof(n)) || lmpi_pmi_parse_int(n, 0, count, got) ||
        field(reply, "values", values, len))
        return -1;
    return 0;
}

int lmpi_pmi_barrier(void)
{
    PMIX_RETURN(lmpi_pmix_fence());
    PMI2_RETURN(lmpi_pmi2_fence());
    if (pmi_fd < 0)
        return 0;
    char reply[256];
    return command("cmd=barrier_in\n", "barrier_out", reply, sizeof(reply));
}

void lmpi_pmi_abort(int code, const char *msg)
{
#ifdef LMPI_HAVE_PMIX
    if (PMIX_ON()) {
        lmpi_pmix_abort(code, msg);
        return;
    }
#endif
    if (lmpi_pmi2_active()) {
        lmpi_pmi2_abort(code, msg);
        return;
    }
    if (pmi_fd < 0)
        return;
    char cmd[1024];
    /* Hydra reads only exitcode; our mpiexec also prints the message. */
    char clean[512];
    snprintf(clean, sizeof(clean), "%s", msg ? msg : "");
    for (char *p = clean; *p; p++)
        if (*p == '\n')
            *p = ' ';
    snprintf(cmd, sizeof(cmd), "cmd=abort exitcode=%d error_msg=%s\n", code, clean);
    write_all(cmd, strlen(cmd));
}

int lmpi_pmi_finalize(void)
{
    while (local_kvs) {
        kv *n = local_kvs->next;
        free(local_kvs->key);
        free(local_kvs->value);
        free(local_kvs);
        local_kvs = n;
    }
    PMIX_RETURN(lmpi_pmix_finalize());
    if (lmpi_pmi2_active()) {
        pmi_fd = -1; /* closed by pmi2.c */
        return lmpi_pmi2_finalize();
    }
    if (pmi_fd < 0)
        return 0;
    char reply[256];
    int rc = command("cmd=finalize\n", "finalize_ack", reply, sizeof(reply));
    close(pmi_fd);
    pmi_fd = -1;
    return rc;
}

int lmpi_pmi_node_map(int size, int *node_of)
{
    PMIX_RETURN(lmpi_pmix_node_map(size, node_of));
    char mapping[1024];
    if (size < 2)
        return -1;
    if (lmpi_pmi2_active() ? lmpi_pmi2_job_attr("PMI_process_mapping", mapping, sizeof(mapping)) != 0
                           : lmpi_pmi_get("PMI_process_mapping", mapping, sizeof(mapping)) != 0)
        return -1;
    return lmpi_pmi_parse_mapping(mapping, size, node_of);
}

int lmpi_pmi_parse_mapping(const char *text, int size, int *node_of)
{
    const char *p = strstr(text, "vector");
    if (!p)
        return -1;
    int rank = 0;
    while (rank < size && (p = strchr(p, '(')) != NULL) {
        int node, nnodes, per;
        /* the launcher's text: node ids stay ints however the triple reads */
        if (sscanf(p, "(%d,%d,%d)", &node, &nnodes, &per) != 3 || node < 0 || nnodes <= 0 || per <= 0 ||
            nnodes > INT_MAX - node)
            return -1;
        for (int n = 0; n < nnodes && rank < size; n++)
            for (int k = 0; k < per && rank < size; k++)
                node_of[rank++] = node + n;
        p++;
    }
    /* The mapping may describe one cycle of a cyclic layout: repeat it. */
    for (int r = rank; r < size && rank > 0; r++)
        node_of[r] = node_of[r % rank];
    return rank > 0 ? 0 : -1;
}

/* ---- dynamic processes ------------------------------------------------- */

/* The launcher beside this library: <prefix>/lib/libmpi.so -> <prefix>/bin/mpiexec
 * (LMPI_MPIEXEC overrides). */
static void launcher_path(char *out, size_t len)
{
    const char *env = getenv("LMPI_MPIEXEC");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return;
    }
    Dl_info di;
    if (dladdr((void *)launcher_path, &di) && di.dli_fname) {
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s", di.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = '\0';
            snprintf(out, len, "%s/../bin/mpiexec", dir);
            if (access(out, X_OK) == 0)
                return;
        }
    }
    snprintf(out, len, "mpiexec");
}

/* A singleton starts mpiexec as its PMI server: mpiexec adopts this process
 * as rank 0 of a one-process job under the singleton's own kvsname, and
 * dies with it. */
static int ensure_server(char *err, size_t errlen)
{
    if (pmi_fd >= 0)
        return 0;
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
        snprintf(err, errlen, "cannot create a socket for the launcher: %s", strerror(errno));
        return -1;
    }
    char path[4096], fdtxt[16];
    launcher_path(path, sizeof(path));
    pid_t pid = fork();
    if (pid < 0) {
        close(sp[0]);
        close(sp[1]);
        snprintf(err, errlen, "cannot start the launcher: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* No death signal: it would come when this thread ends, not the
         * process; the launcher sees the socket close instead. */
        int fd = dup(sp[1]); /* without CLOEXEC */
        snprintf(fdtxt, sizeof(fdtxt), "%d", fd);
        execl(path, path, "--singleton", fdtxt, kvsname, (char *)NULL);
        fprintf(stderr, "LeanMPI: cannot start the launcher %s: %s\n", path, strerror(errno));
        _exit(127);
    }
    close(sp[1]);
    pmi_fd = sp[0];
    char reply[1024];
    if (command("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", reply, sizeof(reply)) ||
        !rc_ok(reply)) {
        close(pmi_fd);
        pmi_fd = -1;
        snprintf(err, errlen, "the launcher %s did not answer (set LMPI_MPIEXEC to LeanMPI's mpiexec)", path);
        return -1;
    }
    return 0;
}

static void reply_error(const char *reply, const char *what, char *err, size_t errlen)
{
    char msg[512];
    if (field(reply, "msg", msg, sizeof(msg)) != 0 && field(reply, "errmsg", msg, sizeof(msg)) != 0)
        snprintf(msg, sizeof(msg), "refused");
    for (char *p = msg; *p; p++)
        if (*p == '_')
            *p = ' ';
    snprintf(err, errlen, "%s: %s", what, msg);
}

/* Values travel as PMI words: no spaces, newlines or '='. */
static int wire_safe(const char *v) { return v && *v && !strpbrk(v, " \n="); }

int lmpi_pmi_spawn(int count, const lmpi_pmi_app *apps, int npreput, const char **keys, const char **values,
                   int *spawned, char *err, size_t errlen)
{
    PMIX_RETURN(lmpi_pmix_spawn(count, apps, npreput, keys, values, spawned, err, errlen));
    PMI2_RETURN(lmpi_pmi2_spawn(count, apps, npreput, keys, values, spawned, err, errlen));
    if (ensure_server(err, errlen) != 0)
        return -1;
    size_t cap = 65536, at = 0;
    char *buf = malloc(cap);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
#define EMIT(...)                                                                                          \
    do {                                                                                                   \
        int w_ = snprintf(buf + at, cap - at, __VA_ARGS__);                                                \
        if (w_ < 0 || (size_t)w_ >= cap - at) {                                                            \
            free(buf);                                                                                     \
            snprintf(err, errlen, "the spawn request is longer than 64 KiB");                              \
            return -1;                                                                                     \
        }                                                                                                  \
        at += (size_t)w_;                                                                                  \
    } while (0)
    for (int a = 0; a < count; a++) {
        int argc = 0;
        while (apps[a].argv && apps[a].argv[argc])
            argc++;
        EMIT("mcmd=spawn\nnprocs=%d\nexecname=%s\ntotspawns=%d\nspawnssofar=%d\nargcnt=%d\n", apps[a].maxprocs,
             apps[a].command, count, a + 1, argc);
        for (int i = 0; i < argc; i++) {
            if (strchr(apps[a].argv[i], '\n')) {
                free(buf);
                snprintf(err, errlen, "argument %d of %s contains a newline", i + 1, apps[a].command);
                return -1;
            }
            EMIT("arg%d=%s\n", i + 1, apps[a].argv[i]);
        }
        EMIT("preput_num=%d\n", npreput);
        for (int i = 0; i < npreput; i++)
            EMIT("preput_key_%d=%s\npreput_val_%d=%s\n", i, keys[i], i, values[i]);
        EMIT("info_num=%d\n", apps[a].ninfo);
        for (int i = 0; i < apps[a].ninfo; i++)
            EMIT("info_key_%d=%s\ninfo_val_%d=%s\n", i, apps[a].info_keys[i], i, apps[a].info_values[i]);
        EMIT("endcmd\n");
    }
#undef EMIT
    char reply[2048];
    int rc = command(buf, "spawn_result", reply, sizeof(reply));
    free(buf);
    if (rc != 0) {
        snprintf(err, errlen, "the launcher did not answer the spawn request");
        return -1;
    }
    if (!rc_ok(reply)) {
        reply_error(reply, "the launcher refused to spawn", err, errlen);
        return -1;
    }
    char v[32];
    *spawned = -1; /* Hydra does not say: everything asked for */
    if (field(reply, "nprocs", v, sizeof(v)) == 0)
        *spawned = atoi(v);
    return 0;
}

/* One name-service request, cmd=<what>_name service=S [port=P]: 0 with the
 * reply when the server agreed, 1 when it refused (reply set), -1 when it
 * could not be asked (err set). */
static int name_request(const char *what, const char *service, const char *port, char *reply, size_t rlen,
                        char *err, size_t errlen)
{
    if (!wire_safe(service) || (port && !wire_safe(port))) {
        snprintf(err, errlen, "service and port names may not be empty or contain spaces, newlines or '='");
        return -1;
    }
    if (ensure_server(err, errlen) != 0)
        return -1;
    char cmd[2600], expect[32];
    snprintf(cmd, sizeof(cmd), "cmd=%s_name service=%s%s%s\n", what, service, port ? " port=" : "", port ? port : "");
    snprintf(expect, sizeof(expect), "%s_result", what);
    if (command(cmd, expect, reply, rlen) != 0) {
        snprintf(err, errlen, "the launcher did not answer the %s request", what);
        return -1;
    }
    return rc_ok(reply) ? 0 : 1;
}

/* A refused lookup or unpublish: err stays as the caller put it where the
 * name is not there (msg=<absent>, or none), else it becomes the launcher's
 * reason (a name server it could not reach, say). */
static void name_refused(const char *reply, const char *absent, const char *service, char *err, size_t errlen)
{
    char msg[512];
    if (field(reply, "msg", msg, sizeof(msg)) == 0 && strcmp(msg, absent))
        reply_error(reply, service, err, errlen);
}

int lmpi_pmi_publish(const char *service, const char *port, char *err, size_t errlen)
{
    PMIX_RETURN(lmpi_pmix_publish(service, port, err, errlen));
    PMI2_RETURN(lmpi_pmi2_publish(service, port, err, errlen));
    char reply[1024];
    int rc = name_request("publish", service, port, reply, sizeof(reply), err, errlen);
    if (rc > 0)
        reply_error(reply, "the name service refused to publish", err, errlen);
    return rc ? -1 : 0;
}

int lmpi_pmi_lookup(const char *service, char *port, size_t len, char *err, size_t errlen)
{
    PMIX_RETURN(lmpi_pmix_lookup(service, port, len, err, errlen));
    PMI2_RETURN(lmpi_pmi2_lookup(service, port, len, err, errlen));
    char reply[2600];
    int rc = name_request("lookup", service, NULL, reply, sizeof(reply), err, errlen);
    /* Hydra with -nameserver answers a name its server does not have with
     * rc=0 and an empty port */
    if (rc == 0 && (field(reply, "port", port, len) != 0 || !*port))
        rc = 1;
    if (rc > 0) {
        snprintf(err, errlen, "no port is published under '%s'", service);
        name_refused(reply, "not_found", service, err, errlen);
    }
    return rc ? -1 : 0;
}

bool lmpi_pmi_names_shared(void)
{
    static int shared = -1;
    if (shared >= 0)
        return shared;
    char service[300], reply[1024], err[256], port[8];
    snprintf(service, sizeof(service), "lmpi-probe:%s", kvsname);
    if (PMIX_ON())
        shared = 0;
    else if (lmpi_pmi2_active())
        shared = lmpi_pmi2_name_answered(service);
    else
        shared = pmi_fd >= 0 && name_request("lookup", service, NULL, reply, sizeof(reply), err, sizeof(err)) == 0 &&
                 field(reply, "port", port, sizeof(port)) == 0 && !port[0];
    return shared;
}

int lmpi_pmi_unpublish(const char *service, char *err, size_t errlen)
{
    PMIX_RETURN(lmpi_pmix_unpublish(service, err, errlen));
    PMI2_RETURN(lmpi_pmi2_unpublish(service, err, errlen));
    char reply[1024];
    int rc = name_request("unpublish", service, NULL, reply, sizeof(reply), err, errlen);
    if (rc > 0) {
        snprintf(err, errlen, "'%s' is not published", service);
        name_refused(reply, "not_published", service, err, errlen);
    }
    return rc ? -1 : 0;
}
