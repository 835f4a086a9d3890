/* The floor under MPI between hosts: a plain TCP ping-pong over the same
 * link, with the same sizes, iteration counts and output as pt2pt_bench's
 * latency test, so bench/run can report what each MPI adds above it.
 *
 *   tcp_pingpong server PORT
 *   tcp_pingpong client HOST PORT MAXBYTES      (sizes 0, 1, 4, 16, ... MAXBYTES)
 *
 * The server echoes every message back until the client closes; the client
 * prints "RESULT latency bytes=N value=US" (half the round trip, as the MPI
 * benchmarks do).  TCP_NODELAY on both ends and receives that poll: what
 * MPI libraries do too.
 * BENCH_ITERS as for pt2pt_bench. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "iterations.h"

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void full(int fd, char *buf, size_t len, int sending)
{
    while (len > 0) {
        /* polling, as MPI libraries do while they wait: a blocking recv
         * would add the kernel's sleep and wake-up to every message */
        ssize_t n = sending ? send(fd, buf, len, MSG_NOSIGNAL) : recv(fd, buf, len, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            if (!sending && n == 0)
                exit(0); /* the client is done */
            die(sending ? "send" : "recv");
        }
        buf += n;
        len -= (size_t)n;
    }
}

static void nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Each message is preceded by its length (8 bytes, as an MPI header would
 * go), so one server serves every size. */
static void serve(const char *port)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (ls < 0)
        die("socket");
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
    if (bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 1) != 0)
        die("bind/listen");
    printf("listening\n");
    fflush(stdout);
    int fd = accept(ls, NULL, NULL);
    if (fd < 0)
        die("accept");
    nodelay(fd);
    char *buf = NULL;
    size_t cap = 0;
    for (;;) {
        uint64_t len;
        full(fd, (char *)&len, sizeof len, 0);
        if (len + sizeof len > cap) {
            cap = len + sizeof len;
            buf = realloc(buf, cap);
            if (!buf)
                die("realloc");
        }
        memcpy(buf, &len, sizeof len);
        full(fd, buf + sizeof len, len, 0);
        full(fd, buf, sizeof len + len, 1); /* the header comes back too: 0 bytes still make a round trip */
    }
}

static void client(const char *host, const char *port, long maxbytes)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, port, &hints, &ai) != 0)
        die("getaddrinfo");
    int fd = -1;
    for (int tries = 0; tries < 200; tries++) { /* the server may still be starting */
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        close(fd);
        fd = -1;
        usleep(10000);
    }
    if (fd < 0)
        die("connect");
    nodelay(fd);
    const char *it = getenv("BENCH_ITERS");
    int base = it ? atoi(it) : 2000;
    char *buf = calloc(1, (size_t)maxbytes + sizeof(uint64_t));
    for (long b = 0; b <= maxbytes; b = b ? b * 4 : 1) {
        int iters = iterations(b, base), warm = iters / 10 + 1;
        uint64_t len = (uint64_t)b;
        double t0 = 0;
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm)
                t0 = now_us();
            /* the length and the data in one send, as an MPI header would go */
            memcpy(buf, &len, sizeof len);
            full(fd, buf, sizeof len + (size_t)b, 1);
            full(fd, buf, sizeof len + (size_t)b, 0);
        }
        printf("RESULT latency bytes=%ld value=%.3f\n", b, (now_us() - t0) / iters / 2);
        fflush(stdout);
    }
    free(buf);
    close(fd);
    freeaddrinfo(ai);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "server"))
        serve(argv[2]);
    else if (argc == 5 && !strcmp(argv[1], "client"))
        client(argv[2], argv[3], atol(argv[4]));
    else {
        fprintf(stderr, "usage: tcp_pingpong server PORT | client HOST PORT MAXBYTES\n");
        return 2;
    }
    return 0;
}
