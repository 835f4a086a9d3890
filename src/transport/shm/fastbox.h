/* The records of a fast-box ring (shm.c), in a header of their own so that
 * tests/unit/test_shm.c can forge one exactly.
 *
 * A ring is made of 8-byte units; a record spans whole units and never wraps
 * (one that would leaves a skip record to the ring's end).  Most messages are
 * plain eager packets, whose header says little beyond (rank, tag,
 * context): those records are compact, 24 bytes before the payload, so an
 * 8-byte message takes 32 bytes and a 64-byte line carries two of them (the
 * whole packet header, 48 bytes, made it two lines per message, and a
 * compact record that kept the sender's request 40 bytes: each line is a
 * cache-line transfer between the sender's and the receiver's cores, which
 * is what limits a stream of small messages).  A compact record's sender
 * request is named by the pair's sequence number instead (LMPI_TR_KEY_SEQ,
 * transport.h); a synchronous send, whose receiver answers its request,
 * keeps the whole header, as does any other packet. */
#ifndef LMPI_SHM_FASTBOX_H
#define LMPI_SHM_FASTBOX_H

#include <stdatomic.h>
#include <stdint.h>

#include "transport/transport.h"

#define FB_UNIT 8
#define FB_SKIP UINT16_MAX /* a record's len: the rest of the ring is unused, go to its start */

/* Every record begins so; a skip record is its first unit alone. */
typedef struct {
    _Atomic uint32_t mark; /* the record's position in units since the ring began, + 1 */
    uint16_t len;          /* payload bytes, or FB_SKIP */
    uint8_t units;         /* units the record spans */
    uint8_t whole;         /* 1: a whole packet header follows (fastbox_whole) */
    uint16_t seq;          /* the pair's sequence number, modulo 2^16: enough, since a
                            * pair has fewer packets in flight (a ring of at most 64 KiB
                            * holds 2048 records, a sender has at most 64 cells) */
    uint8_t type, flags;
    uint32_t ctx;
} fastbox_record;

/* An eager, not synchronous packet with nothing in tr, rreq and addr,
 * whose len is the payload's */
typedef struct {
    fastbox_record r;
    int32_t rank, tag;
} fastbox_compact;

typedef struct {
    fastbox_record r;
    lmpi_pkt_hdr hdr;
} fastbox_whole;

_Static_assert(sizeof(fastbox_record) == 16 && sizeof(fastbox_compact) == 24 && sizeof(fastbox_whole) == 64,
               "fast-box record layout");

#endif
