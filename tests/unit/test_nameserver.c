/* mpiexec's client of hydra_nameserver (tools/mpiexec/nameserver.c) against
 * a fake server on a loopback socket: the request's bytes as Hydra's server
 * reads them, its answers, and the failures a rank must hear about (nothing
 * listening, a server that says nothing, one that answers nonsense), each
 * with its reason and within the time allowed. */
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nameserver.h"
#include "unit.h"

typedef enum { ANSWER, SILENT, HUGE, SHORT } behaviour;

static struct {
    int listener;
    behaviour how;
    const char *answer;
    char got[8][64]; /* the strings of the request */
    int count;
} fake;

static int read_full(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = read(fd, p, len);
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

/* Serves one connection the way fake.how says. */
static void *serve_one(void *unused)
{
    (void)unused;
    int fd = accept(fake.listener, NULL, NULL);
    if (fd < 0)
        return NULL;
    int32_t n = 0;
    fake.count = -1;
    if (read_full(fd, &n, sizeof(n)) == 0 && n >= 0 && n <= 8) {
        fake.count = n;
        for (int i = 0; i < n; i++) {
            int32_t l = 0;
            if (read_full(fd, &l, sizeof(l)) != 0 || l < 1 || l > 64 || read_full(fd, fake.got[i], (size_t)l) != 0 ||
                fake.got[i][l - 1] != '\0') {
                fake.count = -2;
                break;
            }
        }
    }
    if (fake.how == ANSWER || fake.how == SHORT) {
        int32_t l = (int32_t)strlen(fake.answer) + 1;
        if (write(fd, &l, sizeof(l)) != sizeof(l) ||
            write(fd, fake.answer, fake.how == SHORT ? 1 : (size_t)l) < 0)
            fake.count = -3;
    } else if (fake.how == HUGE) {
        int32_t l = 1 << 30;
        if (write(fd, &l, sizeof(l)) != sizeof(l))
            fake.count = -3;
    } else {
        usleep(400 * 1000); /* past the client's 200 ms */
    }
    close(fd);
    return NULL;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* One request to the fake server behaving as how: the client's result. */
static int ask(const lmpi_ns_server *s, behaviour how, const char *answer, const char *const *words, int n,
               char *reply, size_t len, char *err, size_t errlen)
{
    fake.how = how;
    fake.answer = answer;
    pthread_t t;
    pthread_create(&t, NULL, serve_one, NULL);
    int rc = lmpi_ns_request(s, words, n, reply, len, 200, err, errlen);
    pthread_join(t, NULL);
    return rc;
}

int main(void)
{
    lmpi_ns_server s;
    char err[512], reply[128];

    /* HOST or HOST:PORT */
    CHECK_EQ(lmpi_ns_parse("node7", &s, err, sizeof(err)), 0);
    CHECK(!strcmp(s.host, "node7") && !strcmp(s.port, LMPI_NS_DEFAULT_PORT));
    CHECK_EQ(lmpi_ns_parse("10.0.0.1:7001", &s, err, sizeof(err)), 0);
    CHECK(!strcmp(s.host, "10.0.0.1") && !strcmp(s.port, "7001"));
    const char *bad[] = {"", ":5", "h:", "h:0", "h:65536", "h:x", "h:5x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        CHECK_EQ(lmpi_ns_parse(bad[i], &s, err, sizeof(err)), -1);
        CHECK(strstr(err, "is not HOST or HOST:PORT") != NULL);
    }
    CHECK_EQ(lmpi_ns_parse(NULL, &s, err, sizeof(err)), -1);

    /* the fake server */
    fake.listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    CHECK_EQ(bind(fake.listener, (struct sockaddr *)&a, sizeof(a)), 0);
    CHECK_EQ(listen(fake.listener, 4), 0);
    getsockname(fake.listener, (struct sockaddr *)&a, &al);
    snprintf(err, sizeof(err), "127.0.0.1:%d", ntohs(a.sin_port));
    CHECK_EQ(lmpi_ns_parse(err, &s, err, sizeof(err)), 0);

    /* a publish goes as 3 strings with their NULs; the answer comes back */
    const char *publish[] = {"PUBLISH", "svc", "lmpi-port:kvs:2:0:1@h"};
    CHECK_EQ(ask(&s, ANSWER, "SUCCESS", publish, 3, reply, sizeof(reply), err, sizeof(err)), 0);
    CHECK_EQ(fake.count, 3);
    CHECK(!strcmp(fake.got[0], "PUBLISH") && !strcmp(fake.got[1], "svc") &&
          !strcmp(fake.got[2], "lmpi-port:kvs:2:0:1@h"));
    CHECK(!strcmp(reply, "SUCCESS"));
    const char *lookup[] = {"LOOKUP", "svc"};
    CHECK_EQ(ask(&s, ANSWER, "lmpi-port:kvs:2:0:1@h", lookup, 2, reply, sizeof(reply), err, sizeof(err)), 0);
    CHECK_EQ(fake.count, 2);
    CHECK(!strcmp(reply, "lmpi-port:kvs:2:0:1@h"));
    /* nothing published: an empty string, still an answer */
    CHECK_EQ(ask(&s, ANSWER, "", lookup, 2, reply, sizeof(reply), err, sizeof(err)), 0);
    CHECK(!strcmp(reply, ""));
    /* an answer longer than the caller's buffer is refused, not cut */
    CHECK_EQ(ask(&s, ANSWER, "0123456789", lookup, 2, reply, 4, err, sizeof(err)), -1);
    CHECK(strstr(err, "more than 4") != NULL);

    /* a server that says nothing: the client gives up in about 200 ms */
    double t0 = now_ms();
    CHECK_EQ(ask(&s, SILENT, NULL, lookup, 2, reply, sizeof(reply), err, sizeof(err)), -1);
    double took = now_ms() - t0;
    CHECK(took >= 150 && took < 2000);
    CHECK(strstr(err, "did not answer") != NULL && strstr(err, s.port) != NULL);
    /* nonsense, or an answer cut short */
    CHECK_EQ(ask(&s, HUGE, NULL, lookup, 2, reply, sizeof(reply), err, sizeof(err)), -1);
    CHECK(strstr(err, "answered a string of") != NULL);
    CHECK_EQ(ask(&s, SHORT, "SUCCESS", lookup, 2, reply, sizeof(reply), err, sizeof(err)), -1);
    CHECK(strstr(err, "did not answer") != NULL);

    /* nothing listening */
    close(fake.listener);
    CHECK_EQ(lmpi_ns_request(&s, lookup, 2, reply, sizeof(reply), 200, err, sizeof(err)), -1);
    CHECK(strstr(err, "cannot reach the name server 127.0.0.1") != NULL);
    return unit_finish("test_nameserver");
}
