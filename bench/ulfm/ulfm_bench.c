/* bench/ulfm: User-Level Failure Mitigation, one source for every MPI that
 * has it (run under its launcher's --with-ft ulfm).
 *
 *   ulfm_bench agree    MPIX_Comm_agree on MPI_COMM_WORLD, no failure (us/call)
 *   ulfm_bench shrink   MPIX_Comm_shrink + free, no failure (us/call)
 *   ulfm_bench detect   the last rank kills itself 50 ms after a barrier
 *                       while every other waits in MPI_Recv from it: the
 *                       slowest survivor's time from the kill to its error;
 *                       then one shrink and one agree among the survivors
 *                       (agree_after_failure: the longest time a survivor
 *                       spent in the agree, which includes waiting for the
 *                       last one to leave the shrink; ..._from_last: from
 *                       the last survivor's call to the last return)
 *   ulfm_bench revoke   rank 0 revokes 10 ms after a barrier while every
 *                       other waits in MPI_Recv from MPI_ANY_SOURCE: the
 *                       slowest survivor's time from rank 0's call to its
 *                       error
 *   ulfm_bench latency  0-byte ping-pong between ranks 0 and 1 (us, one way)
 *
 * Prints RESULT lines for bench/run.  Times are CLOCK_MONOTONIC, which all
 * processes of one host share. */
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int rank, size;

static void loop(const char *what)
{
    int iters = 0;
    double t0 = 0, t = 0;
    for (int round = 0; round < 2; round++) { /* the first round sizes the second: 0.3 s */
        int n = round ? iters : 10;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now();
        for (int i = 0; i < n; i++) {
            if (!strcmp(what, "agree")) {
                int flag = ~0;
                MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
            } else {
                MPI_Comm c;
                MPIX_Comm_shrink(MPI_COMM_WORLD, &c);
                MPI_Comm_free(&c);
            }
        }
        t = now() - t0;
        double each = t / n;
        MPI_Bcast(&each, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        iters = (int)(0.3 / (each > 1e-7 ? each : 1e-7));
        iters = iters < 5 ? 5 : iters > 100000 ? 100000 : iters;
        if (round)
            t /= n;
    }
    if (rank == 0)
        printf("RESULT %s_time ranks=%d value=%.3f\n", what, size, t * 1e6);
}

static void detect(void)
{
    MPI_Comm aux;
    MPI_Comm_dup(MPI_COMM_WORLD, &aux);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int victim = size - 1, buf;
    MPI_Barrier(MPI_COMM_WORLD);
    double kill_at = now() + 0.05;
    if (rank == victim) {
        while (now() < kill_at)
            ;
        raise(SIGKILL);
    }
    MPI_Recv(&buf, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double seen = now() - kill_at;
    MPI_Comm small;
    double t0 = now();
    MPIX_Comm_shrink(MPI_COMM_WORLD, &small);
    double shrink = now() - t0;
    int flag = 1;
    t0 = now();
    MPIX_Comm_agree(small, &flag);
    double t1 = now(), agree = t1 - t0;
    double v[5] = {seen, shrink, agree, t0, t1}, worst[5];
    MPI_Reduce(v, worst, 5, MPI_DOUBLE, MPI_MAX, 0, small);
    int srank;
    MPI_Comm_rank(small, &srank);
    if (srank == 0) {
        printf("RESULT detect_time ranks=%d value=%.3f\n", size, worst[0] * 1e3);
        printf("RESULT shrink_after_failure ranks=%d value=%.3f\n", size, worst[1] * 1e3);
        printf("RESULT agree_after_failure ranks=%d value=%.3f\n", size, worst[2] * 1e3);
        printf("RESULT agree_after_failure_from_last ranks=%d value=%.3f\n", size, (worst[4] - worst[3]) * 1e3);
    }
    fflush(stdout);
    MPI_Comm_free(&small);
    (void)aux;
}

static void revoke_time(void)
{
    MPI_Comm aux;
    MPI_Comm_dup(MPI_COMM_WORLD, &aux);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int buf;
    MPI_Barrier(MPI_COMM_WORLD);
    double at = now() + 0.01;
    double seen = 0;
    if (rank == 0) {
        while (now() < at)
            ;
        at = now();
        MPIX_Comm_revoke(MPI_COMM_WORLD);
    } else {
        MPI_Recv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        seen = now();
    }
    /* from the revoker's call, not from each rank's own estimate of it
     * (the barrier's exits differ by up to a scheduler slice) */
    MPI_Bcast(&at, 1, MPI_DOUBLE, 0, aux);
    if (rank != 0)
        seen -= at;
    double worst;
    MPI_Reduce(&seen, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, aux);
    if (rank == 0)
        printf("RESULT revoke_time ranks=%d value=%.3f\n", size, worst * 1e6);
    MPI_Comm_free(&aux);
}

static void latency(void)
{
    char b = 0;
    int n = 20000;
    double t0 = 0;
    for (int i = -n / 10; i < n; i++) {
        if (i == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = now();
        }
        if (rank == 0) {
            MPI_Send(&b, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&b, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(&b, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&b, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 0)
        printf("RESULT latency bytes=0 value=%.3f\n", (now() - t0) / n / 2 * 1e6);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "agree";
    if (!strcmp(what, "agree") || !strcmp(what, "shrink"))
        loop(what);
    else if (!strcmp(what, "detect"))
        detect();
    else if (!strcmp(what, "revoke"))
        revoke_time();
    else
        latency();
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
