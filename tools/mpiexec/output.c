/* mpiexec: the ranks' stdout and stderr forwarded (with --tag-output prefixes), and
 * remote rank 0's standard input relayed. */
#include "mpiexec.h"

/* ---- output forwarding -------------------------------------------------- */
void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void emit_tagged(int fd, int rank, const char *p, size_t n)
{
    char prefix[32];
    int pl = snprintf(prefix, sizeof(prefix), "[%d] ", rank);
    write_all(fd, prefix, (size_t)pl);
    write_all(fd, p, n);
}

void forward(int rank, int *fdp, linebuf *lb, int outfd)
{
    char buf[8192];
    ssize_t r = read(*fdp, buf, sizeof(buf));
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        if (job.tag_output && lb->len) {
            lb->buf[lb->len++] = '\n';
            emit_tagged(outfd, rank, lb->buf, lb->len);
            lb->len = 0;
        }
        close(*fdp);
        *fdp = -1;
        return;
    }
    if (!job.tag_output) {
        write_all(outfd, buf, (size_t)r);
        return;
    }
    for (ssize_t i = 0; i < r; i++) {
        lb->buf[lb->len++] = buf[i];
        if (buf[i] == '\n' || lb->len == sizeof(lb->buf) - 1) {
            emit_tagged(outfd, rank, lb->buf, lb->len);
            lb->len = 0;
        }
    }
}


/* Remote rank 0's standard input: what we read waits in the buffer until
 * the stream takes it (we read no more meanwhile); our end of input, or
 * rank 0 closing its stdin, ends the relay. */
static void stdin_relay_close(void)
{
    if (job.stdin_relay.fd >= 0)
        close(job.stdin_relay.fd);
    job.stdin_relay.fd = -1;
    job.stdin_relay.eof = true;
}

void stdin_relay_write(void)
{
    while (job.stdin_relay.off < job.stdin_relay.len) {
        ssize_t w = send(job.stdin_relay.fd, job.stdin_relay.buf + job.stdin_relay.off,
                         job.stdin_relay.len - job.stdin_relay.off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (w <= 0) {
            stdin_relay_close();
            return;
        }
        job.stdin_relay.off += (size_t)w;
    }
    job.stdin_relay.len = job.stdin_relay.off = 0;
    if (job.stdin_relay.eof)
        stdin_relay_close();
}

void stdin_relay_read(void)
{
    ssize_t n = read(0, job.stdin_relay.buf, sizeof(job.stdin_relay.buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        job.stdin_relay.eof = true;
        stdin_relay_write(); /* nothing pending: closes the stream, rank 0 reads end of file */
        return;
    }
    job.stdin_relay.len = (size_t)n;
    job.stdin_relay.off = 0;
    stdin_relay_write();
}
