/* mpiexec: MPI_Comm_spawn: a spawn request arrives as an mcmd=spawn block and starts
 * a new job beside the first. */
#include "mpiexec.h"

/* ---- MPI_Comm_spawn: mcmd=spawn blocks --------------------------------------- */
void free_request(spawn_req *q)
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
void *fit(void *arr, int *n, int i, size_t elem)
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

void spawn_line(spawn_req *q, const char *line)
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

const char *app_info(const app_t *ap, const char *key)
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

int do_spawn(int p)
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
