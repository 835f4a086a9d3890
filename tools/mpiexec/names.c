/* mpiexec: the name service of MPI_Publish_name / MPI_Lookup_name: kept here, or in
 * a hydra_nameserver (-nameserver) shared with other jobs. */
#include "mpiexec.h"

/* ---- the name service ------------------------------------------------------- */

/* The same three commands answered by hydra_nameserver (-nameserver): the
 * names are shared with every job that uses it, on any host.  mpiexec waits
 * for the answer (at most NS_TIMEOUT_MS, mpiexec.h), as the rank asking does. */
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

void name_command(rank_t *rk, const char *cmd, const char *line)
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
