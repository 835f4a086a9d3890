/* Ping-pong iterations per message size, shared by pt2pt_bench.c and
 * tcp_pingpong.c so that the TCP floor and the MPIs time the same counts:
 * BASE (BENCH_ITERS) below 64 KiB, a tenth up to 1 MiB, then a fiftieth
 * (at least 20). */
#ifndef BENCH_PT2PT_ITERATIONS_H
#define BENCH_PT2PT_ITERATIONS_H

static inline int iterations(long bytes, int base)
{
    if (bytes >= 1 << 20)
        return base / 50 > 20 ? base / 50 : 20;
    if (bytes >= 1 << 16)
        return base / 10;
    return base;
}

#endif
