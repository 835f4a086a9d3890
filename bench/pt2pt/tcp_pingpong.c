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
 *
 * The payload lives where pt2pt_bench keeps it (a calloc'd buffer, 16 bytes
 * into a page) and its 16-byte header travels in the same sendmsg, from its
 * own variable.  Both matter on this link: the kernel copies a message into
 * page fragments that start over at each message, and a copy whose
 * destination sits 1-40 bytes after its source modulo 4096 runs 2-3x slower
 * (4K aliasing).  With the 8-byte header this program used to put in front
 * of the payload inside the buffer, every receive was such a copy and the
 * 1 MiB floor measured 810 us against 360 at a neutral placement: slower
 * than the MPI libraries standing on it.
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
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "iterations.h"

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* Each message is its header and then its payload. */
typedef struct {
    uint64_t len;
    uint64_t unused; /* an MPI header is 16 bytes or more */
} header;

/* Send or receive HDR (unless NULL) and then LEN bytes of BUF. */
static void xfer(int fd, header *hdr, char *buf, size_t len, int sending)
{
    size_t hlen = hdr ? sizeof *hdr : 0, done = 0;
    while (done < hlen + len) {
        struct iovec iov[2];
        size_t n_iov = 0;
        if (done < hlen)
            iov[n_iov++] = (struct iovec){(char *)hdr + done, hlen - done};
        size_t at = done < hlen ? 0 : done - hlen;
        if (at < len)
            iov[n_iov++] = (struct iovec){buf + at, len - at};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = n_iov};
        /* polling, as MPI libraries do while they wait: a blocking receive
         * would add the kernel's sleep and wake-up to every message */
        ssize_t n = sending ? sendmsg(fd, &m, MSG_NOSIGNAL) : recvmsg(fd, &m, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            if (!sending && n == 0)
                exit(0); /* the client is done */
            die(sending ? "sendmsg" : "recvmsg");
        }
        done += (size_t)n;
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

/* The header carries the length, so one server serves every size. */
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
        header hdr;
        xfer(fd, &hdr, NULL, 0, 0);
        if (hdr.len + 1 > cap) {
            free(buf);
            cap = hdr.len + 1;
            buf = calloc(1, cap);
            if (!buf)
                die("calloc");
        }
        xfer(fd, NULL, buf, (size_t)hdr.len, 0);
        xfer(fd, &hdr, buf, (size_t)hdr.len, 1); /* the header comes back too: 0 bytes still make a round trip */
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
    char *buf = calloc(1, (size_t)maxbytes + 1);
    for (long b = 0; b <= maxbytes; b = b ? b * 4 : 1) {
        int iters = iterations(b, base), warm = iters / 10 + 1;
        header hdr = {.len = (uint64_t)b};
        double t0 = 0;
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm)
                t0 = now_us();
            /* the header and the data in one call each way, as an MPI header would go */
            xfer(fd, &hdr, buf, (size_t)b, 1);
            xfer(fd, &hdr, buf, (size_t)b, 0);
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
