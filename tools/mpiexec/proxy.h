/* The host proxy of multi-host jobs (proxy.c) and the small line protocol
 * it shares with mpiexec. */
#ifndef LMPI_MPIEXEC_PROXY_H
#define LMPI_MPIEXEC_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LMPI_PROXY_SECRET 32 /* hex digits: 128 random bits */
#define LMPI_PROXY_LINE 8192

/* mpiexec --proxy ADDR PORT INDEX: runs the proxy; the exit status. */
int lmpi_proxy_main(const char *addr, const char *port, int host);
/* A TCP connection to ADDR:PORT, or -1. */
int lmpi_proxy_connect(const char *addr, const char *port);
/* Write a formatted line in full (0), or -1. */
int lmpi_proxy_send(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Read one line without its newline, not a byte more; its length or -1. */
int lmpi_proxy_read_line(int fd, char *out, size_t len);
/* In a child about to exec a rank or a proxy: die with the parent
 * (SIGKILL), its own process group unless told not to, no signal blocked. */
bool lmpi_launch_own_sessions(int ranks_here);
void lmpi_launch_child_prepare(int own_group, bool own_session);
/* Go on in a forked child that leads a session of its own (a job with more
 * ranks than processors: one scheduler share for the job); the original
 * process relays signals to it and exits with its status. */
void lmpi_launch_job_session(void);
void lmpi_launch_kill_group(pid_t pid, int sig);
/* Block SIGCHLD, SIGINT, SIGTERM and SIGHUP and return a signalfd that
 * reports them (the event loops of mpiexec and the proxy poll it). */
int lmpi_launch_signalfd(void);
/* PATH = dir:PATH (the info key "path" of a spawn), in a child before exec. */
void lmpi_launch_prepend_path(const char *dir);
/* Hex of a string (arguments and variables travel as one word each). */
void lmpi_proxy_hex(const char *in, char *out, size_t len);

#endif
