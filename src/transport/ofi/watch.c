/* The network watcher: a thread that lets a rank with an open network
 * endpoint sleep in the kernel (runtime/wait.h) and still be woken at once
 * by a network event.
 *
 * A futex cannot be waited on together with a file descriptor, and the
 * completion queue's wait descriptor (FI_WAIT_FD) cannot be signalled by
 * shared-memory senders.  So the sleeping thread waits on its futex word,
 * and while it sleeps this thread waits on the descriptor: when it becomes
 * readable it wakes the sleeper through the word, as a packet's sender
 * would.  Only libfabric's own fi_trywait (by the sleeper, before it
 * sleeps: ofi.c) touches the provider's state; this thread only polls.
 *
 * Rounds: the sleeper moves `round` on each time it sleeps; the watcher
 * waits for a round it has not watched, polls, wakes, and waits again.  A
 * sleeper that woke for another reason leaves the watcher in poll() until
 * the next network event (one spurious look, nothing else). */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/wait.h"
#include "transport/ofi/watch.h"

static struct {
    int fd;   /* the completion queue's wait descriptor */
    int stop; /* an eventfd: readable when the watcher must end */
    pthread_t thread;
    bool running;
    _Atomic uint32_t round; /* moved on by each sleep; UINT32_MAX: stop */
} w = {.fd = -1, .stop = -1};

static void *watch(void *arg)
{
    (void)arg;
    uint32_t seen = 0;
    for (;;) {
        uint32_t r;
        while ((r = atomic_load_explicit(&w.round, memory_order_acquire)) == seen)
            syscall(SYS_futex, (uint32_t *)&w.round, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
        if (r == UINT32_MAX)
            return NULL;
        seen = r;
        struct pollfd p[2] = {{.fd = w.fd, .events = POLLIN}, {.fd = w.stop, .events = POLLIN}};
        while (poll(p, 2, -1) < 0 && errno == EINTR)
            ;
        if (p[1].revents)
            return NULL;
        lmpi_wait_wake_local();
    }
}

bool lmpi_ofi_watch_start(int fd)
{
    if (w.running || fd < 0)
        return w.running;
    w.stop = eventfd(0, EFD_CLOEXEC);
    if (w.stop < 0)
        return false;
    w.fd = fd;
    atomic_store(&w.round, 0);
    if (pthread_create(&w.thread, NULL, watch, NULL) != 0) {
        close(w.stop);
        w.stop = -1;
        return false;
    }
    w.running = true;
    return true;
}

bool lmpi_ofi_watching(void) { return w.running; }

/* A stale byte.  The descriptor libfabric gives out (FI_GETWAIT) is an
 * epoll set holding the provider's progress set and the completion queue's
 * own signal, a socket pair written when a completion is queued.  Debian's
 * libfabric 1.17 (tcp;ofi_rxm) writes that byte at the first completion
 * and fi_trywait never reads it back: the set stays readable, the watcher
 * woke the sleeper at once every time, and a rank waiting for a message
 * from another host ran its core at 95 % (bench/idle_cpu.c).  Completions
 * are only queued by a thread inside our progress (manual progress), and
 * such a thread wakes a sleeper itself (the introducer), so the byte tells
 * a sleeper nothing: when the set is readable although fi_trywait found
 * nothing, the set's member sockets of the local kind are drained.  The
 * provider's progress set (the network's sockets) is an epoll member of
 * another kind and stays untouched. */
void lmpi_ofi_watch_unstick(void)
{
    struct pollfd p = {.fd = w.fd, .events = POLLIN};
    if (w.fd < 0 || poll(&p, 1, 0) <= 0)
        return;
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", w.fd);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        int fd, domain;
        socklen_t len = sizeof(domain);
        struct stat st;
        if (sscanf(line, "tfd: %d", &fd) != 1 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) ||
            getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX)
            continue;
        char drain[64];
        while (recv(fd, drain, sizeof(drain), MSG_DONTWAIT) > 0)
            ;
    }
    fclose(f);
}

void lmpi_ofi_watch_round(void)
{
    uint32_t next = atomic_load_explicit(&w.round, memory_order_relaxed) + 1;
    atomic_store_explicit(&w.round, next == UINT32_MAX ? 1 : next, memory_order_release);
    syscall(SYS_futex, (uint32_t *)&w.round, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void lmpi_ofi_watch_stop(void)
{
    if (!w.running)
        return;
    atomic_store(&w.round, UINT32_MAX);
    syscall(SYS_futex, (uint32_t *)&w.round, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    uint64_t one = 1;
    (void)!write(w.stop, &one, sizeof(one));
    pthread_join(w.thread, NULL);
    close(w.stop);
    w.stop = -1;
    w.fd = -1;
    w.running = false;
}
