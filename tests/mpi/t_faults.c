/* Faults the launcher and the library must contain (tests/tools/faults.sh
 * runs each case and checks what is left).  usage: t_faults MODE [TOKEN]
 *   exit0    rank 1 exits with status 0 without MPI_Finalize; the others
 *            wait in a barrier
 *   sleep    every rank prints "ready" and sleeps 60 s inside MPI (for
 *            killing mpiexec, or a sibling, from outside)
 *   die      like sleep, but rank 1 kills itself with SIGKILL once ready
 *   flood    rank 1, before MPI_Init, sends PMI commands and never reads
 *            the replies
 *   fuzz     rank 1, before MPI_Init, sends hostile PMI lines (over-long
 *            lines hiding a command in their tail, lines without fields,
 *            binary bytes, thousands of keys), reading the replies; then
 *            every rank runs a normal job: it must succeed
 *   cloexec  after MPI_Init: PMI_FD and LMPI_SHM_FD are gone from the
 *            environment and no socket is inherited by programs the rank
 *            starts
 *   init     MPI_Init and MPI_Finalize only (for hostile environments)
 * TOKEN is ignored: the script finds the job's processes by it. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

static int env_rank(void)
{
    const char *r = getenv("PMI_RANK");
    return r ? atoi(r) : 0;
}

static int pmi_socket(void)
{
    const char *fd = getenv("PMI_FD");
    return fd ? atoi(fd) : -1;
}

static void send_raw(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* read whatever replies are waiting, without blocking */
static void drain(int fd)
{
    char buf[65536];
    while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
        ;
}

static void fuzz(int fd)
{
    char line[20000];
    unsigned seed = 12345;
    /* an over-long line whose tail is a command: it must not be obeyed */
    memset(line, 'x', sizeof(line));
    const char *tail = " cmd=abort exitcode=77 error_msg=injected\n";
    memcpy(line + sizeof(line) - strlen(tail), tail, strlen(tail));
    send_raw(fd, line, sizeof(line));
    /* the same at exactly the launcher's line limit */
    memset(line, 'y', 4095);
    memcpy(line + 4095, tail, strlen(tail));
    send_raw(fd, line, 4095 + strlen(tail));
    static const char *const partial[] = {
        "cmd=\n", "cmd\n", "=\n", "cmd=put\n", "cmd=put key=\n", "cmd=put value=v\n", "cmd=get\n",
        "cmd=get key=\n", "cmd=lookup_name\n", "cmd=publish_name service=\n", "cmd=unpublish_name\n",
        "cmd=get_my_kvsname kvsname=other rank=0\n", "cmd=put kvsname=kvs_1_0 key=k value=v\n",
        "key=value cmd=get_maxes\n", "cmd=get_universe_size size=-1\n", "\n", "   \n", "cmd==\n",
        "cmd=put key=a=b value==\n", "cmd=spawn_result\n", "endcmd\n",
        "cmd=get_range\n", "cmd=get_range prefix=fuzz from=2147483647 count=2147483647\n",
        "cmd=get_range prefix=fuzz from=-5 count=3\n", "cmd=get_range prefix= from=0 count=0\n",
        "cmd=get_range prefix=fuzz from=x count=y\n",
    };
    for (int round = 0; round < 50; round++) {
        for (size_t i = 0; i < sizeof(partial) / sizeof(partial[0]); i++)
            send_raw(fd, partial[i], strlen(partial[i]));
        /* binary bytes, NULs and all, ending in a newline */
        size_t n = 1 + (seed = seed * 1103515245u + 12345u) % 3000;
        for (size_t i = 0; i < n; i++)
            line[i] = (char)((seed = seed * 1103515245u + 12345u) >> 16);
        for (size_t i = 0; i + 5 < n; i++) /* never a command we act on for real */
            if (!memcmp(line + i, "abort", 5) || !memcmp(line + i, "final", 5) || !memcmp(line + i, "barri", 5) ||
                !memcmp(line + i, "mcmd=", 5) || !memcmp(line + i, "spawn", 5))
                line[i] = '_';
        line[n] = '\n';
        send_raw(fd, line, n + 1);
        drain(fd);
    }
    /* thousands of keys, some of them long */
    for (int k = 0; k < 5000; k++) {
        int len = snprintf(line, sizeof(line), "cmd=put kvsname=x key=fuzz%d value=%0*d\n", k, k % 7 == 0 ? 1500 : 8, k);
        send_raw(fd, line, (size_t)len);
        if (k % 64 == 0)
            drain(fd);
    }
    drain(fd);
}

static int check_cloexec(void)
{
    int bad = 0;
    if (getenv("PMI_FD")) {
        printf("PMI_FD is still in the environment after MPI_Init\n");
        bad = 1;
    }
    if (getenv("LMPI_SHM_FD")) {
        printf("LMPI_SHM_FD is still in the environment after MPI_Init\n");
        bad = 1;
    }
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        struct stat st;
        if (e->d_name[0] == '.' || fd == dirfd(d) || fstat(fd, &st) != 0)
            continue;
        int fl = fcntl(fd, F_GETFD);
        if (S_ISSOCK(st.st_mode) && fl >= 0 && !(fl & FD_CLOEXEC)) {
            printf("socket fd %d would be inherited by programs this rank starts\n", fd);
            bad = 1;
        }
    }
    if (d)
        closedir(d);
    /* and a program it starts sees no job to talk to */
    if (system("test -z \"$PMI_FD\"") != 0) {
        printf("a child of the rank sees PMI_FD\n");
        bad = 1;
    }
    return bad;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "init";
    if (!strcmp(mode, "flood") && env_rank() == 1) {
        int fd = pmi_socket();
        for (long i = 0; i < 10000000; i++)
            send_raw(fd, "cmd=get_maxes\n", 14);
        return 3; /* the launcher should have stopped us long before */
    }
    if (!strcmp(mode, "fuzz") && env_rank() == 1)
        fuzz(pmi_socket());

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("rank %d pid %d ready\n", rank, (int)getpid());
    fflush(stdout);
    int rc = 0;
    if (!strcmp(mode, "exit0")) {
        if (rank == 1) {
            usleep(200000);
            exit(0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(mode, "sleep") || !strcmp(mode, "die") || !strcmp(mode, "spawn_sleep")) {
        if (!strcmp(mode, "spawn_sleep")) { /* and two children that sleep too */
            char *args[] = {"sleep", NULL};
            MPI_Comm inter;
            MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (!strcmp(mode, "die") && rank == 1) {
            usleep(200000);
            raise(SIGKILL);
        }
        int x;
        MPI_Request r;
        MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &r);
        for (int i = 0; i < 600; i++) {
            int done;
            MPI_Test(&r, &done, MPI_STATUS_IGNORE);
            usleep(100000);
        }
    } else if (!strcmp(mode, "fuzz")) {
        int one = 1, sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        rc = sum != size;
    } else if (!strcmp(mode, "cloexec")) {
        rc = check_cloexec();
    }
    int all = 0;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0)
        printf(all ? "FAIL\n" : "OK\n");
    return all;
}
