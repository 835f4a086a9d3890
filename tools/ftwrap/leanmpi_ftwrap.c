/* leanmpi-ftwrap: run a program as a child and end as it ended, but always
 * by exit(), never by a signal.
 *
 *   mpiexec.hydra -disable-auto-cleanup -genv LMPI_FT 1 -n 4 leanmpi-ftwrap ./app ARGS
 *
 * Hydra's proxies end every process of their host when one of them dies by
 * a signal, -disable-auto-cleanup or not; an exit they survive and report
 * to the others (SIGUSR1, PMI_dead_processes: src/ft/README.md, "Under
 * Hydra").  Between the proxy and the rank, this program turns a rank
 * killed by signal S into an exit with status 128 + S (a shell's way of
 * telling it), so a job under Hydra survives a SIGKILL as it survives an
 * exit.  Our mpiexec needs none of this (--with-ft ulfm).
 *
 * What the launcher sends the wrapper goes on to the program: SIGUSR1 (the
 * failure notice), and the signals it stops a job with.  The program dies
 * with the wrapper (PR_SET_PDEATHSIG) when the wrapper is killed outright.
 * The wrapper closes its copy of the launcher's PMI socket (PMI_FD), so the
 * launcher sees the socket close when the program ends, as without it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static const int forwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT, SIGWINCH, SIGALRM};
#define NFORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))

static void close_pmi_socket(void)
{
    const char *fd = getenv("PMI_FD");
    char *end;
    long v = fd ? strtol(fd, &end, 10) : -1;
    if (fd && *fd && !*end && v > 2)
        close((int)v);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: leanmpi-ftwrap PROGRAM [ARGS...]\n"
                "Runs PROGRAM and exits with its status, or with 128 + the signal that killed it,\n"
                "so that a launcher which survives a rank's exit (mpiexec.hydra -disable-auto-cleanup)\n"
                "also survives its death by a signal.  Signals sent to the wrapper go on to PROGRAM.\n");
        return argc < 2 ? 2 : 0;
    }
    /* blocked before the fork: none is lost before the loop below waits for it */
    sigset_t set, old;
    sigemptyset(&set);
    for (size_t i = 0; i < NFORWARDED; i++)
        sigaddset(&set, forwarded[i]);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, &old);
    pid_t me = getpid();
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "leanmpi-ftwrap: fork: %s\n", strerror(errno));
        return 127;
    }
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != me) /* the wrapper was gone before the line above */
            _exit(127);
        sigprocmask(SIG_SETMASK, &old, NULL);
        execvp(argv[1], argv + 1);
        fprintf(stderr, "leanmpi-ftwrap: cannot run %s: %s\n", argv[1], strerror(errno));
        _exit(127);
    }
    close_pmi_socket();
    for (;;) {
        int sig = sigwaitinfo(&set, NULL);
        if (sig < 0)
            continue; /* EINTR: a stop and continue of the wrapper itself */
        if (sig != SIGCHLD) {
            kill(child, sig);
            continue;
        }
        int status;
        pid_t p = waitpid(child, &status, WNOHANG);
        if (p == child && WIFEXITED(status))
            return WEXITSTATUS(status);
        if (p == child && WIFSIGNALED(status))
            return 128 + WTERMSIG(status);
        /* stopped or continued: keep waiting */
    }
}
