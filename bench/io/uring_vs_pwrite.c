/* bench/io: does io_uring pay for the scattered runs of independent I/O?
 * (the decision in docs/performance.md, "Parallel I/O")
 *
 *   cc -O2 bench/io/uring_vs_pwrite.c -o uring_vs_pwrite -luring   (Debian: liburing-dev)
 *   ./uring_vs_pwrite FILE
 *
 * Writes 8192 runs of 2 KiB, 8 KiB apart (one process's strided view),
 * three times each way: a pwrite loop, and io_uring with 256 writes in
 * flight.  The file is made anew for every pass. */
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RUNS 8192
#define RUN 2048
#define STRIDE (4 * RUN)
#define DEPTH 256

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int fresh(const char *path)
{
    unlink(path);
    return open(path, O_RDWR | O_CREAT, 0644);
}

static double pwrite_loop(const char *path, const char *buf)
{
    int fd = fresh(path);
    double t0 = now();
    for (int i = 0; i < RUNS; i++)
        if (pwrite(fd, buf + (size_t)i * RUN, RUN, (off_t)i * STRIDE) != RUN)
            perror("pwrite");
    double t = now() - t0;
    close(fd);
    return t;
}

static double uring(const char *path, const char *buf)
{
    int fd = fresh(path);
    struct io_uring r;
    if (io_uring_queue_init(DEPTH, &r, 0) != 0) {
        fprintf(stderr, "io_uring_queue_init failed\n");
        exit(1);
    }
    double t0 = now();
    int done = 0, sent = 0;
    while (done < RUNS) {
        for (struct io_uring_sqe *s; sent < RUNS && sent - done < DEPTH && (s = io_uring_get_sqe(&r)); sent++)
            io_uring_prep_write(s, fd, buf + (size_t)sent * RUN, RUN, (off_t)sent * STRIDE);
        io_uring_submit(&r);
        struct io_uring_cqe *c;
        io_uring_wait_cqe(&r, &c);
        unsigned head, k = 0;
        io_uring_for_each_cqe(&r, head, c)
        {
            if (c->res != RUN)
                fprintf(stderr, "short write: %d\n", c->res);
            k++;
        }
        io_uring_cq_advance(&r, k);
        done += (int)k;
    }
    double t = now() - t0;
    io_uring_queue_exit(&r);
    close(fd);
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: uring_vs_pwrite FILE\n");
        return 2;
    }
    char *buf = malloc((size_t)RUNS * RUN);
    memset(buf, 7, (size_t)RUNS * RUN);
    for (int rep = 0; rep < 3; rep++)
        printf("pwrite loop %.2f ms, io_uring %.2f ms\n", pwrite_loop(argv[1], buf) * 1e3, uring(argv[1], buf) * 1e3);
    unlink(argv[1]);
    free(buf);
    return 0;
}
