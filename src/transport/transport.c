/* What both kinds of transport share: the handler arriving packets go to,
 * and which world ranks the network transport reaches (transport.h). */
#include <string.h>

#include "transport/transport.h"

lmpi_pkt_handler lmpi_tr_deliver;
uint64_t lmpi_tr_eager_key;
lmpi_tr_net_state lmpi_tr_net;
static uint64_t *local_bits;

void lmpi_tr_set_handler(lmpi_pkt_handler h) { lmpi_tr_deliver = h; }

/* This node's ranks as a range when they are consecutive (the usual block
 * placement: nothing stored per rank), else one bit per world rank. */
lmpi_status lmpi_tr_net_locals(const int *node_of, int n, int me)
{
    int lo = me, hi = me + 1;
    while (lo > 0 && node_of[lo - 1] == node_of[me])
        lo--;
    while (hi < n && node_of[hi] == node_of[me])
        hi++;
    bool consecutive = true;
    for (int r = 0; r < n && consecutive; r++)
        consecutive = (node_of[r] == node_of[me]) == (r >= lo && r < hi);
    lmpi_tr_net.world = n;
    lmpi_tr_net.lo = lo;
    lmpi_tr_net.hi = hi;
    lmpi_tr_net.local_bits = NULL;
    if (consecutive)
        return LMPI_OK;
    local_bits = lmpi_calloc(((size_t)n + 63) / 64, sizeof(uint64_t), LMPI_MEM_OTHER);
    if (!local_bits)
        return LMPI_ERR_NO_MEM;
    for (int r = 0; r < n; r++)
        if (node_of[r] == node_of[me])
            local_bits[r / 64] |= 1ull << (r % 64);
    lmpi_tr_net.local_bits = local_bits;
    return LMPI_OK;
}

void lmpi_tr_net_forget(void)
{
    lmpi_free(local_bits);
    local_bits = NULL;
    memset(&lmpi_tr_net, 0, sizeof(lmpi_tr_net));
}

#if LMPI_HAVE_OFI
lmpi_status lmpi_ofi_open(int me, int n, const int *node_of);
lmpi_status lmpi_ofi_connect(void);
void lmpi_ofi_ready(void);
void lmpi_ofi_close(void);
const char *lmpi_ofi_describe(void);
void lmpi_ofi_packet(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len);
size_t lmpi_ofi_entry_bytes(void);
void lmpi_ofi_open_early(int me, int n);
lmpi_status lmpi_ofi_open_wait(void);
bool lmpi_ofi_sleep_ok(void);
bool lmpi_ofi_sleep_prepare(void);
#else
static lmpi_status lmpi_ofi_open(int me, int n, const int *node_of)
{
    (void)me, (void)n, (void)node_of;
    lmpi_err_detail("ranks are on different hosts, and this LeanMPI was built without a network transport "
                    "(libfabric-dev was missing when it was built)");
    return LMPI_ERR_UNSUPPORTED_OPERATION;
}
static lmpi_status lmpi_ofi_connect(void) { return LMPI_ERR_UNSUPPORTED_OPERATION; }
static void lmpi_ofi_ready(void) {}
static void lmpi_ofi_close(void) {}
static const char *lmpi_ofi_describe(void) { return NULL; }
static void lmpi_ofi_packet(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    (void)src, (void)h, (void)payload, (void)len;
}
static size_t lmpi_ofi_entry_bytes(void) { return 0; }
static void lmpi_ofi_open_early(int me, int n) { (void)me, (void)n; }
static lmpi_status lmpi_ofi_open_wait(void) { return LMPI_OK; }
static bool lmpi_ofi_sleep_ok(void) { return true; }
static bool lmpi_ofi_sleep_prepare(void) { return true; }
#endif

bool lmpi_tr_sleep_ok(void) { return !lmpi_tr_net.on || lmpi_ofi_sleep_ok(); }

bool lmpi_tr_sleep_prepare(void) { return !lmpi_tr_net.on || lmpi_ofi_sleep_prepare(); }

lmpi_status lmpi_tr_net_start(const int *node_of, int n, int me, bool hosts)
{
    LMPI_TRY(lmpi_tr_net_locals(node_of, n, me));
    lmpi_tr_net.hosts = hosts;
    return lmpi_ofi_open(me, n, node_of);
}

void lmpi_tr_net_open_early(int me, int n) { lmpi_ofi_open_early(me, n); }

lmpi_status lmpi_tr_net_open_wait(void) { return lmpi_ofi_open_wait(); }

lmpi_status lmpi_tr_net_connect(void)
{
    LMPI_TRY(lmpi_ofi_connect());
    lmpi_tr_net.on = true;
    return LMPI_OK;
}

void lmpi_tr_net_ready(void)
{
    if (lmpi_tr_net.on)
        lmpi_ofi_ready();
}

void lmpi_tr_net_stop(void)
{
    lmpi_ofi_close();
    lmpi_tr_net_forget();
}

const char *lmpi_tr_net_describe(void) { return lmpi_tr_net.on ? lmpi_ofi_describe() : NULL; }

void lmpi_tr_net_packet(int src, const lmpi_pkt_hdr *h, const void *payload, size_t len)
{
    lmpi_ofi_packet(src, h, payload, len);
}

size_t lmpi_tr_net_entry_bytes(void) { return lmpi_tr_net.on ? lmpi_ofi_entry_bytes() : 0; }

lmpi_status lmpi_tr_net_foreign_address(int me, int n, char *hex, size_t len)
{
#if LMPI_HAVE_OFI
    if (!lmpi_tr_net.on) { /* every world rank stays on shared memory */
        lmpi_tr_net.world = n;
        lmpi_tr_net.lo = 0;
        lmpi_tr_net.hi = n;
        lmpi_tr_net.local_bits = NULL;
    }
    LMPI_TRY(lmpi_ofi_foreign_address(me, n, hex, len));
    lmpi_tr_net.on = true; /* polled from now on */
    return LMPI_OK;
#else
    (void)me, (void)n, (void)hex, (void)len;
    lmpi_err_detail("this LeanMPI was built without a network transport (libfabric-dev was missing when it was "
                    "built), so it cannot reach processes of other groups on other hosts");
    return LMPI_ERR_UNSUPPORTED_OPERATION;
#endif
}
