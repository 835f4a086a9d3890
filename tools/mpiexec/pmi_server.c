/* mpiexec: the PMI-1 server: one socket per rank, commands in, replies out. */
#include "mpiexec.h"

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
void flush_replies(rank_t *rk)
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

void pmi_reply(rank_t *rk, const char *fmt, ...)
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

const char *word(const char *line, const char *key, char *out, size_t len)
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

/* A barrier completes when every process of the job that has not failed
 * (--with-ft ulfm) entered it; a failure may complete it too. */
void barrier_check(job_t *jb)
{
    if (jb->barrier_count == 0 || jb->barrier_count < jb->n - jb->nfailed)
        return;
    for (int i = jb->first; i < jb->first + jb->n; i++) {
        if (job.ranks[i].in_barrier && job.ranks[i].pmi_fd >= 0)
            pmi_reply(&job.ranks[i], "cmd=barrier_out rc=0");
        job.ranks[i].in_barrier = false;
    }
    jb->barrier_count = 0;
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
        barrier_check(jb);
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

void pmi_read(int r)
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
