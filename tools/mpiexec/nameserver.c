/* The wire of hydra_nameserver (MPICH 4.0 and 5.0 speak it alike), as
 * read off the server: one TCP connection per request.  A request is a
 * count of strings, then each string as its length (counting the NUL) and
 * its bytes with the NUL; the answer is one string of that form: "SUCCESS"
 * or "FAILURE" for PUBLISH and UNPUBLISH, the port for LOOKUP ("" when
 * nothing is published under the name).  Integers go as 32-bit values in
 * host order, as Hydra writes them: server and clients share a byte order. */
#include "nameserver.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_STRING 65536 /* an answer longer than this is no name server's */

int lmpi_ns_parse(const char *spec, lmpi_ns_server *s, char *err, size_t errlen)
{
    const char *colon = spec ? strrchr(spec, ':') : NULL;
    size_t hl = colon ? (size_t)(colon - spec) : spec ? strlen(spec) : 0;
    const char *port = colon ? colon + 1 : LMPI_NS_DEFAULT_PORT;
    char *end;
    long p = strtol(port, &end, 10);
    if (hl == 0 || hl >= sizeof(s->host) || *end || p < 1 || p > 65535) {
        snprintf(err, errlen, "'%s' is not HOST or HOST:PORT", spec ? spec : "(null)");
        return -1;
    }
    memcpy(s->host, spec, hl);
    s->host[hl] = '\0';
    snprintf(s->port, sizeof(s->port), "%ld", p);
    return 0;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Waits for fd to be ready for events until the deadline: 0, or -1. */
static int wait_fd(int fd, short events, double deadline)
{
    for (;;) {
        double left = deadline - now_ms();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, (int)left + 1);
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

static int connect_to(const lmpi_ns_server *s, double deadline, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai, *a;
    int rc = getaddrinfo(s->host, s->port, &hints, &ai);
    if (rc != 0) {
        snprintf(err, errlen, "cannot find the name server's host %s: %s", s->host,
                 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0)
            continue;
        int e = 0;
        socklen_t el = sizeof(e);
        if ((connect(fd, a->ai_addr, a->ai_addrlen) == 0 ||
             (errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline) == 0 &&
              getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && (errno = e) == 0)))
            break;
        e = errno;
        close(fd);
        fd = -1;
        errno = e;
    }
    freeaddrinfo(ai);
    if (fd < 0)
        snprintf(err, errlen, "cannot reach the name server %s:%s: %s", s->host, s->port, strerror(errno));
    return fd;
}

static int put_all(int fd, const void *buf, size_t len, double deadline)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            len -= (size_t)w;
        } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
            return -1;
        } else if (w < 0 && errno == EAGAIN && wait_fd(fd, POLLOUT, deadline) != 0) {
            return -1;
        }
    }
    return 0;
}

static int get_all(int fd, void *buf, size_t len, double deadline)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = recv(fd, p, len, 0);
        if (r > 0) {
            p += r;
            len -= (size_t)r;
        } else if (r == 0) {
            errno = ECONNRESET;
            return -1;
        } else if (errno != EAGAIN && errno != EINTR) {
            return -1;
        } else if (errno == EAGAIN && wait_fd(fd, POLLIN, deadline) != 0) {
            return -1;
        }
    }
    return 0;
}

static int put_string(int fd, const char *s, double deadline)
{
    int32_t n = (int32_t)strlen(s) + 1;
    return put_all(fd, &n, sizeof(n), deadline) || put_all(fd, s, (size_t)n, deadline) ? -1 : 0;
}

int lmpi_ns_request(const lmpi_ns_server *s, const char *const *words, int n, char *reply, size_t len,
                    int timeout_ms, char *err, size_t errlen)
{
    double deadline = now_ms() + timeout_ms;
    int fd = connect_to(s, deadline, err, errlen);
    if (fd < 0)
        return -1;
    int32_t count = n, rlen = 0;
    int rc = put_all(fd, &count, sizeof(count), deadline);
    for (int i = 0; i < n && rc == 0; i++)
        rc = put_string(fd, words[i], deadline);
    if (rc == 0)
        rc = get_all(fd, &rlen, sizeof(rlen), deadline);
    if (rc != 0) {
        snprintf(err, errlen, "the name server %s:%s did not answer: %s", s->host, s->port, strerror(errno));
    } else if (rlen < 1 || rlen > MAX_STRING) {
        snprintf(err, errlen, "the name server %s:%s answered a string of %d bytes", s->host, s->port, (int)rlen);
        rc = -1;
    } else {
        char buf[MAX_STRING];
        rc = get_all(fd, buf, (size_t)rlen, deadline);
        if (rc != 0)
            snprintf(err, errlen, "the name server %s:%s did not answer: %s", s->host, s->port, strerror(errno));
        else if ((size_t)rlen > len) {
            snprintf(err, errlen, "the name server %s:%s answered %d bytes, more than %zu", s->host, s->port,
                     (int)rlen, len);
            rc = -1;
        } else {
            memcpy(reply, buf, (size_t)rlen);
            reply[rlen - 1] = '\0';
        }
    }
    close(fd);
    return rc;
}
