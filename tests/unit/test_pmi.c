#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pmi/pmi.h"
#include "pmi/pmi2.h"
#include "runtime/config.h"
#include "unit.h"

/* ---- a PMI-2 server playing Hydra on the other end of a socketpair ---- */

static int srv_read(int fd, char *body, size_t len)
{
    char head[7] = {0};
    for (size_t got = 0; got < 6;) {
        ssize_t r = read(fd, head + got, 6 - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    size_t n = (size_t)atoi(head);
    if (n >= len)
        return -1;
    for (size_t got = 0; got < n;) {
        ssize_t r = read(fd, body + got, n - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    body[n] = '\0';
    return 0;
}

static void srv_send(int fd, const char *body)
{
    char head[24];
    snprintf(head, sizeof(head), "%-6zu", strlen(body));
    if (write(fd, head, 6) != 6 || write(fd, body, strlen(body)) != (ssize_t)strlen(body))
        _exit(90);
}

/* Answers what lmpi_pmi_init .. lmpi_pmi_finalize send, checking each
 * request; exits 0 when all went as expected, the failing step otherwise. */
static void fake_pmi2_server(int fd)
{
    char line[256], body[4096], v[256];
    size_t n = 0;
    while (n + 1 < sizeof(line) && read(fd, line + n, 1) == 1 && line[n] != '\n')
        n++;
    line[n] = '\0';
    if (strcmp(line, "cmd=init pmi_version=2 pmi_subversion=0"))
        _exit(1);
    if (write(fd, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n", 57) != 57)
        _exit(2);
    if (srv_read(fd, body, sizeof(body)) || lmpi_pmi2_field(body, "pmirank", v, sizeof(v)) || strcmp(v, "2"))
        _exit(3);
    /* Slurm's order of fields; a value with an escaped ';' */
    srv_send(fd, "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=2;size=4;appnum=1;"
                 "spawner-jobid=a;;b;debugged=FALSE;");
    if (srv_read(fd, body, sizeof(body)) || strcmp(body, "cmd=job-getid;"))
        _exit(4);
    srv_send(fd, "cmd=job-getid-response;jobid=job7;rc=0;");
    if (srv_read(fd, body, sizeof(body)) || strcmp(body, "cmd=info-getjobattr;key=universeSize;"))
        _exit(5);
    srv_send(fd, "cmd=info-getjobattr-response;found=TRUE;value=16;rc=0;");
    for (;;) {
        if (srv_read(fd, body, sizeof(body)))
            _exit(6);
        char cmd[64];
        lmpi_pmi2_field(body, "cmd", cmd, sizeof(cmd));
        if (!strcmp(cmd, "kvs-put")) {
            if (strcmp(body, "cmd=kvs-put;key=k;value=v1;"))
                _exit(7);
            srv_send(fd, "cmd=kvs-put-response;rc=0;");
        } else if (!strcmp(cmd, "kvs-fence")) {
            srv_send(fd, "cmd=kvs-fence-response;rc=0;");
        } else if (!strcmp(cmd, "kvs-get")) {
            if (strstr(body, "jobid=job7;") == NULL)
                _exit(8);
            srv_send(fd, strstr(body, "key=k;") ? "cmd=kvs-get-response;found=TRUE;value=v1;rc=0;"
                                                 : "cmd=kvs-get-response;found=FALSE;rc=0;");
        } else if (!strcmp(cmd, "info-getjobattr")) {
            srv_send(fd, "cmd=info-getjobattr-response;found=TRUE;value=(vector,(0,2,2));rc=0;");
        } else if (!strcmp(cmd, "name-publish")) {
            srv_send(fd, "cmd=name-publish-response;rc=1;errmsg=duplicate_service_s;");
        } else if (!strcmp(cmd, "name-lookup")) {
            srv_send(fd, "cmd=name-lookup-response;port=p;;q;found=TRUE;rc=0;");
        } else if (!strcmp(cmd, "finalize")) {
            srv_send(fd, "cmd=finalize-response;rc=0;");
            _exit(0);
        } else {
            _exit(9);
        }
    }
}

static void test_pmi2(void)
{
    /* fields: pairs split at single ';', ";;" is one ';' inside a value */
    char v[32];
    CHECK_EQ(lmpi_pmi2_field("cmd=x;a=1;;2;b=;c=3;", "a", v, sizeof(v)), 0);
    CHECK(strcmp(v, "1;2") == 0);
    CHECK_EQ(lmpi_pmi2_field("cmd=x;a=1;;2;b=;c=3;", "b", v, sizeof(v)), 0);
    CHECK(strcmp(v, "") == 0);
    CHECK_EQ(lmpi_pmi2_field("cmd=x;a=1;;2;b=;c=3;", "c", v, sizeof(v)), 0);
    CHECK(strcmp(v, "3") == 0);
    CHECK_EQ(lmpi_pmi2_field("cmd=x;ab=1;", "a", v, sizeof(v)), -1);
    CHECK_EQ(lmpi_pmi2_field("cmd=x;xa=1;;a=2;", "a", v, sizeof(v)), -1); /* inside a value: not a key */
    CHECK_EQ(lmpi_pmi2_field("cmd=x;a=12345;", "a", v, 3), 0);            /* cut to the buffer */
    CHECK(strcmp(v, "12") == 0);

    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        fake_pmi2_server(sv[1]);
    }
    close(sv[1]);
    char fdtext[16], why[256];
    snprintf(fdtext, sizeof(fdtext), "%d", sv[0]);
    setenv("PMI_FD", fdtext, 1);
    setenv("PMI_RANK", "2", 1);
    setenv("PMI_SIZE", "4", 1);
    setenv("LMPI_PMI", "2", 1);
    lmpi_config_load();
    lmpi_pmi_info info;
    CHECK_EQ(lmpi_pmi_init(&info, why, sizeof(why)), 0);
    CHECK_EQ(info.rank, 2);
    CHECK_EQ(info.size, 4);
    CHECK_EQ(info.appnum, 1);
    CHECK_EQ(info.universe_size, 16);
    CHECK(strcmp(info.kvsname, "job7") == 0);
    CHECK(strcmp(lmpi_pmi_describe(), "PMI-2") == 0);
    CHECK_EQ(lmpi_pmi_put("k", "v1"), 0);
    CHECK_EQ(lmpi_pmi_put("k", "has;semicolon"), -1); /* refused before it is sent */
    CHECK_EQ(lmpi_pmi_barrier(), 0);
    char got[32];
    CHECK_EQ(lmpi_pmi_get("k", got, sizeof(got)), 0);
    CHECK(strcmp(got, "v1") == 0);
    CHECK_EQ(lmpi_pmi_get("missing", got, sizeof(got)), -1);
    int node[4];
    CHECK_EQ(lmpi_pmi_node_map(4, node), 0);
    CHECK(node[0] == 0 && node[1] == 0 && node[2] == 1 && node[3] == 1);
    char err[256];
    CHECK_EQ(lmpi_pmi_publish("s", "p", err, sizeof(err)), -1);
    CHECK(strstr(err, "duplicate service s") != NULL);
    CHECK_EQ(lmpi_pmi_lookup("s", got, sizeof(got), err, sizeof(err)), 0);
    CHECK(strcmp(got, "p;q") == 0);
    CHECK_EQ(lmpi_pmi_unpublish("a;b", err, sizeof(err)), -1);
    CHECK(strstr(err, "may not contain ';'") != NULL);
    CHECK_EQ(lmpi_pmi_finalize(), 0);
    int st = -1;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr, "fake PMI-2 server failed at step %d\n", WEXITSTATUS(st));

    /* a launcher that answers PMI-1 only: LMPI_PMI=2 fails MPI_Init saying so */
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pid = fork();
    if (pid == 0) {
        close(sv[0]);
        char c;
        while (read(sv[1], &c, 1) == 1 && c != '\n')
            ;
        const char *r = "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n";
        _exit(write(sv[1], r, strlen(r)) > 0 ? 0 : 1);
    }
    close(sv[1]);
    snprintf(fdtext, sizeof(fdtext), "%d", sv[0]);
    setenv("PMI_FD", fdtext, 1);
    CHECK_EQ(lmpi_pmi_init(&info, why, sizeof(why)), -1);
    CHECK(strstr(why, "does not speak PMI-2") != NULL);
    waitpid(pid, &st, 0);
    /* the socket stays open for MPI_Init's abort to reach the launcher;
     * finalize closes it (its peer is gone) */
    signal(SIGPIPE, SIG_IGN);
    lmpi_pmi_finalize();
    setenv("LMPI_PMI", "3", 1);
    lmpi_config_load();
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    snprintf(fdtext, sizeof(fdtext), "%d", sv[0]);
    setenv("PMI_FD", fdtext, 1);
    CHECK_EQ(lmpi_pmi_init(&info, why, sizeof(why)), -1);
    CHECK(strstr(why, "LMPI_PMI=3: expected 1 or 2") != NULL);
    close(sv[1]);
    lmpi_pmi_finalize();
    unsetenv("LMPI_PMI");
    unsetenv("PMI_RANK");
    unsetenv("PMI_SIZE");
    lmpi_config_load();
}

int main(void)
{
    int node[8];
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(0,1,4))", 4, node), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(node[i], 0);
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(0,2,3),(2,1,2))", 8, node), 0);
    int expect[8] = {0, 0, 0, 1, 1, 1, 2, 2};
    for (int i = 0; i < 8; i++)
        CHECK_EQ(node[i], expect[i]);
    /* a cyclic layout given as one cycle */
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(0,2,1))", 6, node), 0);
    CHECK_EQ(node[4], 0);
    CHECK_EQ(node[5], 1);
    CHECK_EQ(lmpi_pmi_parse_mapping("garbage", 4, node), -1);
    /* hostile mappings: refused, never an overflow */
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(2147483647,2147483647,2147483647))", 8, node), -1);
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(-5,2,1))", 8, node), -1);
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(0,1,4)", 8, node), 0); /* truncated: the cycle repeats */
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(0,1,", 8, node), -1);

    /* integers from the environment: decimal, in range, nothing after */
    int n;
    CHECK_EQ(lmpi_pmi_parse_int("17", 0, 20, &n), 0);
    CHECK_EQ(n, 17);
    CHECK_EQ(lmpi_pmi_parse_int("21", 0, 20, &n), -1);
    CHECK_EQ(lmpi_pmi_parse_int("-1", 0, 20, &n), -1);
    CHECK_EQ(lmpi_pmi_parse_int("3x", 0, 20, &n), -1);
    CHECK_EQ(lmpi_pmi_parse_int("", 0, 20, &n), -1);
    CHECK_EQ(lmpi_pmi_parse_int(" 3", 0, 20, &n), -1);
    CHECK_EQ(lmpi_pmi_parse_int("99999999999999999999", 0, 2147483647L, &n), -1);

    /* launcher values out of range fail MPI_Init with the value named,
     * before a word goes to the socket */
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    char fdtext[16], why0[256];
    snprintf(fdtext, sizeof(fdtext), "%d", sv[0]);
    lmpi_pmi_info bad;
    setenv("PMI_FD", "not-a-number", 1);
    CHECK_EQ(lmpi_pmi_init(&bad, why0, sizeof(why0)), -1);
    CHECK(strstr(why0, "PMI_FD=not-a-number") != NULL);
    FILE *devnull = fopen("/dev/null", "r"); /* a descriptor, but not a socket */
    char nulltext[16];
    snprintf(nulltext, sizeof(nulltext), "%d", fileno(devnull));
    setenv("PMI_FD", nulltext, 1);
    CHECK_EQ(lmpi_pmi_init(&bad, why0, sizeof(why0)), -1);
    CHECK(strstr(why0, "not the file descriptor of a socket") != NULL);
    fclose(devnull);
    setenv("PMI_FD", fdtext, 1);
    setenv("PMI_SIZE", "4", 1);
    setenv("PMI_RANK", "1000000", 1);
    CHECK_EQ(lmpi_pmi_init(&bad, why0, sizeof(why0)), -1);
    CHECK(strstr(why0, "PMI_RANK=1000000") != NULL);
    setenv("PMI_SIZE", "0", 1);
    CHECK_EQ(lmpi_pmi_init(&bad, why0, sizeof(why0)), -1);
    CHECK(strstr(why0, "PMI_SIZE=0") != NULL);
    unsetenv("PMI_SIZE");
    unsetenv("PMI_RANK");
    close(sv[0]);
    close(sv[1]);

    test_pmi2();

    /* singleton: no PMI_FD, a key-value space of its own */
    unsetenv("PMI_FD");
    lmpi_pmi_info info;
    char why[256];
    CHECK_EQ(lmpi_pmi_init(&info, why, sizeof(why)), 0);
    CHECK_EQ(info.singleton, 1);
    CHECK_EQ(info.size, 1);
    CHECK_EQ(lmpi_pmi_put("k", "v1"), 0);
    char v[16];
    CHECK_EQ(lmpi_pmi_get("k", v, sizeof(v)), 0);
    CHECK(strcmp(v, "v1") == 0);
    CHECK_EQ(lmpi_pmi_get("missing", v, sizeof(v)), -1);
    CHECK_EQ(lmpi_pmi_barrier(), 0);
    CHECK_EQ(lmpi_pmi_finalize(), 0);
    return unit_finish("test_pmi");
}
