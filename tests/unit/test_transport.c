/* The per-destination choice between shared memory and the network
 * (transport.h): which world ranks count as this node's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "transport/transport.h"
#define UNIT_ERR_DETAIL /* this test plays the layer above */
#include "unit.h"


static int remote_count(int n)
{
    int k = 0;
    for (int r = 0; r < n; r++)
        k += lmpi_tr_remote(r);
    return k;
}

int main(void)
{
    /* off: every peer is shm's, bridge peers too */
    CHECK(!lmpi_tr_remote(0) && !lmpi_tr_remote(5) && lmpi_tr_same_host(5));

    /* consecutive blocks: a range, no bitmap */
    int block[8] = {0, 0, 0, 1, 1, 1, 2, 2};
    CHECK_EQ(lmpi_tr_net_locals(block, 8, 4), LMPI_OK);
    lmpi_tr_net.on = true;
    CHECK(lmpi_tr_net.local_bits == NULL);
    CHECK_EQ(lmpi_tr_net.lo, 3);
    CHECK_EQ(lmpi_tr_net.hi, 6);
    CHECK(lmpi_tr_remote(0) && lmpi_tr_remote(2) && !lmpi_tr_remote(3) && !lmpi_tr_remote(5) && lmpi_tr_remote(6));
    CHECK_EQ(remote_count(8), 5);
    CHECK(!lmpi_tr_remote(8)); /* beyond the world: a bridge peer, shm's */
    /* emulated nodes share the host; real hosts do not */
    lmpi_tr_net.hosts = false;
    CHECK(lmpi_tr_same_host(0));
    lmpi_tr_net.hosts = true;
    CHECK(!lmpi_tr_same_host(0) && lmpi_tr_same_host(4));
    lmpi_tr_net_forget();
    CHECK(!lmpi_tr_net.on && !lmpi_tr_remote(0));

    /* round-robin placement over 70 ranks: a bitmap spanning two words */
    enum { N = 70 };
    int rr[N];
    for (int r = 0; r < N; r++)
        rr[r] = r % 3;
    CHECK_EQ(lmpi_tr_net_locals(rr, N, 67), LMPI_OK); /* 67 % 3 == 1 */
    lmpi_tr_net.on = true;
    CHECK(lmpi_tr_net.local_bits != NULL);
    for (int r = 0; r < N; r++)
        CHECK_EQ(lmpi_tr_remote(r), r % 3 != 1);
    lmpi_tr_net_forget();

    /* one node: nothing is remote */
    int one[4] = {0, 0, 0, 0};
    CHECK_EQ(lmpi_tr_net_locals(one, 4, 2), LMPI_OK);
    lmpi_tr_net.on = true;
    CHECK_EQ(remote_count(4), 0);
    lmpi_tr_net_forget();
    return unit_finish("test_transport");
}
