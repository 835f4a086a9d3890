/* PMI-2 wire client.  After PMI-1's init line asking for version 2, every
 * message is a 6-character length (decimal, padded with spaces) and a body
 * of key=value; pairs:
 *   -> cmd=init pmi_version=2 pmi_subversion=0\n  <- cmd=response_to_init pmi_version=2 ... rc=0\n
 *   -> cmd=fullinit;pmirank=R;threaded=FALSE;     <- cmd=fullinit-response;rank=R;size=N;appnum=A;
 *                                                    [spawner-jobid=J;]rc=0;
 *   -> cmd=job-getid;                             <- cmd=job-getid-response;jobid=J;rc=0;
 *   -> cmd=kvs-put;key=K;value=V;                 <- cmd=kvs-put-response;rc=0;
 *   -> cmd=kvs-fence;                             <- cmd=kvs-fence-response;rc=0;
 *   -> cmd=kvs-get;jobid=J;srcid=-1;key=K;        <- cmd=kvs-get-response;found=TRUE;value=V;rc=0;
 *   -> cmd=info-getjobattr;key=K;                 <- cmd=info-getjobattr-response;found=TRUE;value=V;rc=0;
 *   -> cmd=name-publish;name=S;port=P;            <- cmd=name-publish-response;rc=0;
 *   -> cmd=name-lookup;name=S;                    <- cmd=name-lookup-response;port=P;found=TRUE;rc=0;
 *                                                    (Slurm: value=P; Hydra 5: no found)
 *   -> cmd=name-unpublish;name=S;                 <- cmd=name-unpublish-response;rc=0;
 *   -> cmd=spawn;ncmds=N;preputcount=P;ppkey0=..;ppval0=..;subcmd=EXE;maxprocs=M;argc=A;argv0=..;
 *          infokeycount=I;infokey0=..;infoval0=..;  (subcmd.. once per application)
 *                                                 <- cmd=spawn-response;rc=0;jobid=J;nerrs=0;
 *   -> cmd=abort;isworld=TRUE;msg=M;              (no answer: the process exits)
 *   -> cmd=finalize;                              <- cmd=finalize-response;rc=0;
 * A ';' inside a value is written twice by the standard's client, but
 * Hydra 4.0 cuts the value there instead (a put of "v;;x" reads back "v"):
 * so nothing carrying a ';' is sent, and the caller hears why. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmi/pmi2.h"

#define LEN_DIGITS 6
#define BODY_MAX 65536 /* a spawn request with its arguments, or one reply */

static struct {
    int fd;
    bool on;
    char jobid[256];
    char reply[BODY_MAX + 1];
} p2 = {.fd = -1};

bool lmpi_pmi2_active(void) { return p2.on; }

/* ---- messages -------------------------------------------------------- */

typedef struct {
    char *buf;
    size_t cap, at;
    const char *unsafe; /* the first value that cannot travel, or NULL */
    bool full;
} message;

static void add(message *m, const char *key, const char *value)
{
    if (!m->unsafe && strchr(value, ';'))
        m->unsafe = value;
    int w = snprintf(m->buf + m->at, m->cap - m->at, "%s=%s;", key, value);
    if (w < 0 || (size_t)w >= m->cap - m->at)
        m->full = true;
    else
        m->at += (size_t)w;
}

static void add_int(message *m, const char *key, int value)
{
    char v[16];
    snprintf(v, sizeof(v), "%d", value);
    add(m, key, v);
}

/* key<i>=value */
static void add_nth(message *m, const char *key, int i, const char *value)
{
    char k[64];
    snprintf(k, sizeof(k), "%s%d", key, i);
    add(m, k, value);
}

int lmpi_pmi2_field(const char *body, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    for (const char *p = body; *p;) {
        /* p starts a pair, which runs to a single ';' */
        bool match = strncmp(p, key, kl) == 0 && p[kl] == '=';
        if (match)
            p += kl + 1;
        size_t n = 0;
        while (*p && !(p[0] == ';' && p[1] != ';')) {
            if (p[0] == ';') /* ";;": one ';' */
                p++;
            if (match && n + 1 < len)
                out[n++] = *p;
            p++;
        }
        if (match) {
            if (len)
                out[n] = '\0';
            return 0;
        }
        if (*p)
            p++;
    }
    return -1;
}

static int write_all(const char *s, size_t n) { return lmpi_pmi_write_all(p2.fd, s, n); }

static int read_exact(char *buf, size_t n)
{
    while (n > 0) {
        ssize_t r = read(p2.fd, buf, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        buf += r;
        n -= (size_t)r;
    }
    return 0;
}

static int send_body(const char *body, size_t n)
{
    if (n > BODY_MAX)
        return -1;
    char head[24];
    snprintf(head, sizeof(head), "%-6zu", n);
    return write_all(head, LEN_DIGITS) || write_all(body, n) ? -1 : 0;
}

/* One reply into p2.reply: 0, or -1 when the connection broke or the
 * length is not one. */
static int read_body(void)
{
    char head[LEN_DIGITS + 1] = {0};
    if (read_exact(head, LEN_DIGITS) != 0)
        return -1;
    char *end;
    long n = strtol(head, &end, 10);
    while (end < head + LEN_DIGITS && *end == ' ')
        end++;
    if (end != head + LEN_DIGITS || n < 0 || n > BODY_MAX || read_exact(p2.reply, (size_t)n) != 0)
        return -1;
    p2.reply[n] = '\0';
    return 0;
}

/* Send m (NULL: only wait) and read replies until one is cmd=<expect>:
 * 0 with its body in p2.reply, -1 if the launcher is gone or m cannot go. */
static int exchange(const message *m, const char *expect)
{
    if (m && (m->full || m->unsafe || send_body(m->buf, m->at) != 0))
        return -1;
    if (!expect)
        return 0;
    char cmd[64];
    do {
        if (read_body() != 0)
            return -1;
    } while (lmpi_pmi2_field(p2.reply, "cmd", cmd, sizeof(cmd)) != 0 || strcmp(cmd, expect) != 0);
    return 0;
}

static bool reply_rc_ok(void)
{
    char rc[16];
    return lmpi_pmi2_field(p2.reply, "rc", rc, sizeof(rc)) != 0 || atoi(rc) == 0;
}

/* Hydra 4 says found=TRUE or FALSE; Hydra 5 leaves it out of a name
 * lookup's answer, and its rc says. */
static bool reply_found(void)
{
    char f[16];
    if (lmpi_pmi2_field(p2.reply, "found", f, sizeof(f)) != 0)
        return reply_rc_ok();
    return strcmp(f, "TRUE") == 0;
}

/* The launcher's reason (errmsg, with '_' for spaces) after what. */
static void reply_error(const char *what, char *err, size_t errlen)
{
    char msg[512];
    if (lmpi_pmi2_field(p2.reply, "errmsg", msg, sizeof(msg)) != 0 &&
        lmpi_pmi2_field(p2.reply, "msg", msg, sizeof(msg)) != 0)
        snprintf(msg, sizeof(msg), "refused");
    for (char *p = msg; *p; p++)
        if (*p == '_')
            *p = ' ';
    snprintf(err, errlen, "%s: %s", what, msg);
}

#define MESSAGE(name, size)                                                                                \
    char name##_buf[size];                                                                                 \
    message name = {.buf = name##_buf, .cap = sizeof(name##_buf)}

/* ---- commands -------------------------------------------------------- */

int lmpi_pmi2_init(int fd, lmpi_pmi_info *info, char *err, size_t errlen)
{
    p2.fd = fd;
    static const char hello[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
    char line[256];
    size_t n = 0;
    if (write_all(hello, sizeof(hello) - 1) != 0) {
        snprintf(err, errlen, "the process manager closed the PMI socket (LMPI_PMI=2)");
        return -1;
    }
    /* the answer is still a PMI-1 line, read byte by byte: what follows is
     * the next message's length */
    while (n + 1 < sizeof(line) && read_exact(line + n, 1) == 0 && line[n] != '\n')
        n++;
    line[n] = '\0';
    if (!strstr(line, "cmd=response_to_init") || !strstr(line, "pmi_version=2") || !strstr(line, " rc=0")) {
        snprintf(err, errlen,
                 "the process manager does not speak PMI-2 (LMPI_PMI=2; its answer: \"%s\"): "
                 "unset LMPI_PMI to speak PMI-1",
                 line);
        return -1;
    }
    MESSAGE(m, 512);
    add(&m, "cmd", "fullinit");
    const char *jobid = getenv("PMI_JOBID"); /* Slurm's, which it wants back */
    if (jobid && *jobid)
        add(&m, "pmijobid", jobid);
    add_int(&m, "pmirank", info->rank);
    add(&m, "threaded", "FALSE");
    char v[256];
    if (exchange(&m, "fullinit-response") != 0 || !reply_rc_ok()) {
        snprintf(err, errlen, "the process manager refused PMI-2's fullinit");
        return -1;
    }
    if (lmpi_pmi2_field(p2.reply, "size", v, sizeof(v)) == 0 &&
        lmpi_pmi_parse_int(v, 1, LMPI_PMI_MAX_SIZE, &info->size) != 0) {
        snprintf(err, errlen, "the process manager gave a job size of %s", v);
        return -1;
    }
    if (lmpi_pmi2_field(p2.reply, "rank", v, sizeof(v)) == 0 &&
        lmpi_pmi_parse_int(v, 0, info->size - 1, &info->rank) != 0) {
        snprintf(err, errlen, "the process manager gave rank %s of a job of %d", v, info->size);
        return -1;
    }
    if (lmpi_pmi2_field(p2.reply, "appnum", v, sizeof(v)) == 0)
        info->appnum = atoi(v);
    m.at = 0;
    add(&m, "cmd", "job-getid");
    if (exchange(&m, "job-getid-response") != 0 || !reply_rc_ok() ||
        lmpi_pmi2_field(p2.reply, "jobid", p2.jobid, sizeof(p2.jobid)) != 0) {
        snprintf(err, errlen, "the process manager did not say the job's id (PMI-2 job-getid)");
        return -1;
    }
    snprintf(info->kvsname, sizeof(info->kvsname), "%s", p2.jobid);
    info->universe_size = 0; /* not known unless the launcher says */
    int u;
    if (lmpi_pmi2_job_attr("universeSize", v, sizeof(v)) == 0 && lmpi_pmi_parse_int(v, 1, 1 << 30, &u) == 0)
        info->universe_size = u;
    p2.on = true;
    return 0;
}

int lmpi_pmi2_put(const char *key, const char *value)
{
    MESSAGE(m, 2048);
    add(&m, "cmd", "kvs-put");
    add(&m, "key", key);
    add(&m, "value", value);
    return exchange(&m, "kvs-put-response") == 0 && reply_rc_ok() ? 0 : -1;
}

int lmpi_pmi2_get(const char *key, char *value, size_t len)
{
    MESSAGE(m, 1024);
    add(&m, "cmd", "kvs-get");
    add(&m, "jobid", p2.jobid);
    add(&m, "srcid", "-1");
    add(&m, "key", key);
    if (exchange(&m, "kvs-get-response") != 0 || !reply_rc_ok() || !reply_found())
        return -1;
    return lmpi_pmi2_field(p2.reply, "value", value, len);
}

int lmpi_pmi2_fence(void)
{
    MESSAGE(m, 64);
    add(&m, "cmd", "kvs-fence");
    return exchange(&m, "kvs-fence-response") == 0 && reply_rc_ok() ? 0 : -1;
}

int lmpi_pmi2_job_attr(const char *key, char *value, size_t len)
{
    MESSAGE(m, 512);
    add(&m, "cmd", "info-getjobattr");
    add(&m, "key", key);
    if (exchange(&m, "info-getjobattr-response") != 0 || !reply_rc_ok() || !reply_found())
        return -1;
    return lmpi_pmi2_field(p2.reply, "value", value, len);
}

void lmpi_pmi2_abort(int code, const char *msg)
{
    char clean[512];
    snprintf(clean, sizeof(clean), "exit code %d: %s", code, msg ? msg : "");
    for (char *p = clean; *p; p++)
        if (*p == ';' || *p == '\n')
            *p = ' ';
    MESSAGE(m, 640);
    add(&m, "cmd", "abort");
    add(&m, "isworld", "TRUE");
    add(&m, "msg", clean);
    /* Hydra 4.0 does not know PMI-2's abort and kills the job at once, and
     * the message this process just wrote to stderr, which its proxy
     * forwards on another channel, was lost 3 runs in 5.  A pause lets it
     * through: aborting is not a path to hurry on. */
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    exchange(&m, NULL);
}

int lmpi_pmi2_finalize(void)
{
    if (!p2.on)
        return 0;
    MESSAGE(m, 64);
    add(&m, "cmd", "finalize");
    int rc = exchange(&m, "finalize-response");
    close(p2.fd);
    p2.fd = -1;
    p2.on = false;
    return rc;
}

int lmpi_pmi2_spawn(int count, const lmpi_pmi_app *apps, int npreput, const char **keys, const char **values,
                    int *spawned, char *err, size_t errlen)
{
    message m = {.buf = malloc(BODY_MAX), .cap = BODY_MAX};
    if (!m.buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    add(&m, "cmd", "spawn");
    add_int(&m, "ncmds", count);
    add_int(&m, "preputcount", npreput);
    for (int i = 0; i < npreput; i++) {
        add_nth(&m, "ppkey", i, keys[i]);
        add_nth(&m, "ppval", i, values[i]);
    }
    for (int a = 0; a < count; a++) {
        int argc = 0;
        while (apps[a].argv && apps[a].argv[argc])
            argc++;
        add(&m, "subcmd", apps[a].command);
        add_int(&m, "maxprocs", apps[a].maxprocs);
        add_int(&m, "argc", argc);
        for (int i = 0; i < argc; i++)
            add_nth(&m, "argv", i, apps[a].argv[i]);
        add_int(&m, "infokeycount", apps[a].ninfo);
        for (int i = 0; i < apps[a].ninfo; i++) {
            add_nth(&m, "infokey", i, apps[a].info_keys[i]);
            add_nth(&m, "infoval", i, apps[a].info_values[i]);
        }
    }
    int rc = exchange(&m, "spawn-response"); /* -1 also when m could not go */
    if (m.unsafe)
        snprintf(err, errlen, "'%s' contains a ';', which PMI-2 cannot carry (LMPI_PMI=1 can)", m.unsafe);
    else if (m.full)
        snprintf(err, errlen, "the spawn request is longer than %d bytes", BODY_MAX);
    else if (rc != 0)
        snprintf(err, errlen, "the launcher did not answer the spawn request");
    else if (!reply_rc_ok()) {
        reply_error("the launcher refused to spawn", err, errlen);
        rc = -1;
    }
    free(m.buf);
    *spawned = -1; /* as under PMI-1: the answer does not say, so everything asked for */
    return rc;
}

/* One name-service request: 0 when the server agreed, 1 when it refused
 * (p2.reply holds why), -1 when it could not be asked (err set). */
static int name_request(const char *what, const char *service, const char *port, char *err, size_t errlen)
{
    MESSAGE(m, 2048);
    char cmd[32], expect[48];
    snprintf(cmd, sizeof(cmd), "name-%s", what);
    snprintf(expect, sizeof(expect), "name-%s-response", what);
    add(&m, "cmd", cmd);
    add(&m, "name", service);
    if (port)
        add(&m, "port", port);
    if (m.unsafe) {
        snprintf(err, errlen, "service and port names may not contain ';' under PMI-2 (LMPI_PMI=1 allows it)");
        return -1;
    }
    if (exchange(&m, expect) != 0) {
        snprintf(err, errlen, "the launcher did not answer the %s request", what);
        return -1;
    }
    return reply_rc_ok() ? 0 : 1;
}

int lmpi_pmi2_publish(const char *service, const char *port, char *err, size_t errlen)
{
    int rc = name_request("publish", service, port, err, errlen);
    if (rc > 0)
        reply_error("the name service refused to publish", err, errlen);
    return rc ? -1 : 0;
}

int lmpi_pmi2_lookup(const char *service, char *port, size_t len, char *err, size_t errlen)
{
    int rc = name_request("lookup", service, NULL, err, errlen);
    /* Hydra answers port=P, Slurm value=P; Hydra with -nameserver answers a
     * name its server does not have with an empty port */
    if (rc == 0 && (!reply_found() || (lmpi_pmi2_field(p2.reply, "port", port, len) != 0 &&
                                       lmpi_pmi2_field(p2.reply, "value", port, len) != 0) || !*port))
        rc = 1;
    if (rc > 0)
        snprintf(err, errlen, "no port is published under '%s'", service);
    return rc ? -1 : 0;
}

bool lmpi_pmi2_name_answered(const char *service)
{
    char err[256], port[8];
    return name_request("lookup", service, NULL, err, sizeof(err)) == 0 && reply_found() &&
           lmpi_pmi2_field(p2.reply, "port", port, sizeof(port)) == 0 && !port[0];
}

int lmpi_pmi2_unpublish(const char *service, char *err, size_t errlen)
{
    int rc = name_request("unpublish", service, NULL, err, errlen);
    if (rc > 0)
        snprintf(err, errlen, "'%s' is not published", service);
    return rc ? -1 : 0;
}
