/* PMI-1 wire client.  Commands are single lines of key=value words:
 *   -> cmd=init pmi_version=1 pmi_subversion=1     <- cmd=response_to_init ... rc=0
 *   -> cmd=get_my_kvsname                          <- cmd=my_kvsname kvsname=K
 *   -> cmd=put kvsname=K key=k value=v             <- cmd=put_result rc=0
 *   -> cmd=barrier_in                              <- cmd=barrier_out
 *   -> cmd=get kvsname=K key=k                     <- cmd=get_result rc=0 value=v
 *   -> cmd=abort exitcode=N                        (the launcher stops the job)
 *   -> cmd=finalize                                <- cmd=finalize_ack
 * The launcher passes the connected socket in PMI_FD and the rank and size
 * in PMI_RANK and PMI_SIZE; without PMI_FD the process is a singleton. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmi/pmi.h"

static int pmi_fd = -1;
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

static int write_all(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(pmi_fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

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

int lmpi_pmi_init(lmpi_pmi_info *info)
{
    memset(info, 0, sizeof(*info));
    const char *fd = getenv("PMI_FD");
    if (!fd) {
        info->rank = 0;
        info->size = 1;
        info->universe_size = 1;
        info->singleton = 1;
        snprintf(info->kvsname, sizeof(info->kvsname), "singleton-%d", (int)getpid());
        snprintf(kvsname, sizeof(kvsname), "%s", info->kvsname);
        return 0;
    }
    pmi_fd = atoi(fd);
    info->rank = getenv("PMI_RANK") ? atoi(getenv("PMI_RANK")) : 0;
    info->size = getenv("PMI_SIZE") ? atoi(getenv("PMI_SIZE")) : 1;
    char reply[1024], v[256];
    if (command("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", reply, sizeof(reply)) ||
        !rc_ok(reply))
        return -1;
    if (command("cmd=get_my_kvsname\n", "my_kvsname", reply, sizeof(reply)) ||
        field(reply, "kvsname", kvsname, sizeof(kvsname)))
        return -1;
    snprintf(info->kvsname, sizeof(info->kvsname), "%s", kvsname);
    if (command("cmd=get_appnum\n", "appnum", reply, sizeof(reply)) == 0 && field(reply, "appnum", v, sizeof(v)) == 0)
        info->appnum = atoi(v);
    info->universe_size = info->size;
    if (command("cmd=get_universe_size\n", "universe_size", reply, sizeof(reply)) == 0 &&
        field(reply, "size", v, sizeof(v)) == 0 && atoi(v) > 0)
        info->universe_size = atoi(v);
    return 0;
}

int lmpi_pmi_put(const char *key, const char *value)
{
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

int lmpi_pmi_get(const char *key, char *value, size_t len)
{
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

int lmpi_pmi_barrier(void)
{
    if (pmi_fd < 0)
        return 0;
    char reply[256];
    return command("cmd=barrier_in\n", "barrier_out", reply, sizeof(reply));
}

void lmpi_pmi_abort(int code, const char *msg)
{
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
    if (pmi_fd < 0)
        return 0;
    char reply[256];
    int rc = command("cmd=finalize\n", "finalize_ack", reply, sizeof(reply));
    close(pmi_fd);
    pmi_fd = -1;
    return rc;
}

int lmpi_pmi_parse_mapping(const char *text, int size, int *node_of)
{
    const char *p = strstr(text, "vector");
    if (!p)
        return -1;
    int rank = 0;
    while (rank < size && (p = strchr(p, '(')) != NULL) {
        int node, nnodes, per;
        if (sscanf(p, "(%d,%d,%d)", &node, &nnodes, &per) != 3 || nnodes <= 0 || per <= 0)
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
