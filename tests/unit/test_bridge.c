/* The bridge between process groups (shm/bridge.h), linked alone: group
 * keys, packets through a process's own inbox (a peer of another group that
 * happens to be itself), the dispatch of arrivals that the network hands in
 * (control packets to the control handler, others through the resolver),
 * a network peer refused while no network is open, and a killed process's
 * inbox swept by the next one.  This file plays
 * the layer above (pt2pt and dpm). */
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/shm/bridge.h"
#include "transport/transport.h"
#define UNIT_ERR_DETAIL /* this test plays the layer above */
#include "unit.h"

enum { BASE = 4 }; /* the node's ranks; bridge peers are indices from here */

static int delivered_src = -1, delivered_tag = -1, ctrl_rank = -1;
static uint64_t ctrl_key;
static char delivered[64];

static void deliver(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    delivered_src = src;
    delivered_tag = h->tag;
    memcpy(delivered, payload, len < sizeof(delivered) ? len : sizeof(delivered));
}

static uint64_t known_key;

/* (key, rank) of our one known group -> index 100 + rank; others unknown */
static int resolve(uint64_t key, int rank) { return key == known_key ? 100 + rank : -1; }

static void on_ctrl(uint64_t key, int rank, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    (void)h, (void)payload, (void)len;
    ctrl_key = key;
    ctrl_rank = rank;
}

int main(void)
{
    /* keys: 32 bits, never 0 (0 on the wire means "the receiver's world"),
     * the same for the same name, different for these two */
    uint64_t a = lmpi_bridge_group_key("kvs_1_abc"), b = lmpi_bridge_group_key("kvs_1_abc_s1");
    CHECK(a != 0 && b != 0 && a <= 0xffffffffu && b <= 0xffffffffu);
    CHECK(a == lmpi_bridge_group_key("kvs_1_abc"));
    CHECK(a != b);
    CHECK(lmpi_bridge_group_key("") != 0);

    lmpi_tr_set_handler(deliver);
    lmpi_bridge_init(BASE);
    lmpi_bridge_set_handlers(resolve, on_ctrl);
    char kvs[64];
    snprintf(kvs, sizeof(kvs), "test_bridge_%d", (int)getpid());
    known_key = lmpi_bridge_group_key(kvs);
    /* a killed process's inbox is removed by the next process that opens
     * one; a live process's stays */
    char dead[80], live[80], gone[120];
    snprintf(dead, sizeof(dead), "test_bridge_dead_%d", (int)getpid());
    snprintf(live, sizeof(live), "test_bridge_live_%d", (int)getpid());
    int ready[2], hold[2];
    CHECK_EQ(pipe(ready), 0);
    CHECK_EQ(pipe(hold), 0);
    pid_t alive = fork();
    if (alive == 0) {
        char one = 1;
        close(hold[1]);
        int ok = lmpi_bridge_open(live, 0) == LMPI_OK;
        if (write(ready[1], &one, 1) != 1 || read(hold[0], &one, 1) < 0)
            ok = 0;
        lmpi_bridge_close();
        _exit(ok ? 0 : 1);
    }
    int status;
    char byte;
    CHECK_EQ(read(ready[0], &byte, 1), 1); /* the live one's sweep is done */
    pid_t killed = fork();
    if (killed == 0) {
        lmpi_bridge_open(dead, 0);
        raise(SIGKILL);
    }
    CHECK_EQ(waitpid(killed, &status, 0), killed);
    CHECK(WIFSIGNALED(status));
    struct stat sb;
    snprintf(gone, sizeof(gone), "/dev/shm/lmpi-%s-x0", dead);
    CHECK_EQ(stat(gone, &sb), 0); /* left behind by the kill */
    CHECK_EQ(lmpi_bridge_open(kvs, 3), LMPI_OK);
    CHECK(lmpi_bridge_is_open());
    CHECK(stat(gone, &sb) != 0); /* swept */
    snprintf(gone, sizeof(gone), "/dev/shm/lmpi-%s-x0", live);
    CHECK_EQ(stat(gone, &sb), 0); /* kept */
    close(hold[1]);
    CHECK_EQ(waitpid(alive, &status, 0), alive);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(stat(gone, &sb) != 0); /* its owner removed it on the way out */

    /* our own inbox as a peer: shared memory, our pid */
    int idx = lmpi_bridge_attach(kvs, 3);
    CHECK(idx >= BASE && lmpi_bridge_is_peer(idx) && !lmpi_bridge_is_net(idx));
    CHECK_EQ(lmpi_bridge_pid(idx), getpid());
    lmpi_pkt_hdr h = {.type = LMPI_PKT_EAGER, .tag = 42, .len = 6};
    CHECK_EQ(lmpi_bridge_send(idx, &h, "hello", 6, NULL, NULL), LMPI_OK);
    CHECK_EQ(lmpi_bridge_poll(), 1);
    CHECK_EQ(delivered_src, 103); /* resolved from (our key, rank 3) */
    CHECK_EQ(delivered_tag, 42);
    CHECK(!strcmp(delivered, "hello"));
    /* a control packet goes to the control handler with the sender's name */
    lmpi_pkt_hdr c = {.type = LMPI_PKT_CTRL, .tag = 1};
    CHECK_EQ(lmpi_bridge_send(idx, &c, "x", 2, NULL, NULL), LMPI_OK);
    delivered_src = -1;
    CHECK_EQ(lmpi_bridge_poll(), 1);
    CHECK(ctrl_key == known_key && ctrl_rank == 3 && delivered_src == -1);
    /* a payload larger than a cell is refused, not cut */
    static char big[32 * 1024];
    CHECK_EQ(lmpi_bridge_send(idx, &h, big, sizeof(big), NULL, NULL), LMPI_ERR_INTERN);
    lmpi_bridge_detach(idx);
    CHECK(!lmpi_bridge_is_peer(idx));

    /* what the network hands in: the same dispatch */
    delivered_src = -1;
    lmpi_bridge_arrived(known_key, 7, &h, "net", 4);
    CHECK_EQ(delivered_src, 107);
    CHECK(!strcmp(delivered, "net"));
    ctrl_rank = -1;
    lmpi_bridge_arrived(b, 2, &c, "y", 2);
    CHECK(ctrl_key == b && ctrl_rank == 2);
    delivered_src = -1;
    lmpi_bridge_arrived(b, 2, &h, "z", 2); /* an unknown group: dropped, said so */
    CHECK_EQ(delivered_src, -1);

    /* no network open: a peer on another host cannot be named */
    unsigned char addr[16] = {1, 2, 3};
    CHECK_EQ(lmpi_bridge_attach_net("other", 0, addr, sizeof(addr)), -1);
    /* a process without an inbox */
    CHECK_EQ(lmpi_bridge_attach("no_such_kvs", 0), -1);

    char path[128];
    snprintf(path, sizeof(path), "/dev/shm/lmpi-%s-x3", kvs);
    struct stat st;
    CHECK_EQ(stat(path, &st), 0);
    lmpi_bridge_close();
    CHECK(!lmpi_bridge_is_open());
    CHECK(stat(path, &st) != 0); /* the inbox's name is gone */
    return unit_finish("test_bridge");
}
