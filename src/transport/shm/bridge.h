/* The bridge: shared memory between process groups that do not share a
 * segment (a parent and the children it spawned, two jobs that connected).
 *
 * Every process that takes part in dynamic process management creates an
 * inbox of its own, a small segment named after its group and rank
 * (/lmpi-<kvsname>-x<rank>), holding a receive queue and a pool of cells.  A
 * foreign sender maps the receiver's inbox on first contact, takes a cell
 * from the inbox's pool, fills it and queues it; the receiver returns the
 * cell to the pool once delivered.  One queue per receiver keeps each
 * sender's packets in order.  Rendezvous data is copied once with
 * process_vm_readv, as inside a segment.
 *
 * A peer on another host (a job spanning hosts, children on another
 * machine) has no inbox to map: its packets go over the network transport
 * to its fabric address, carrying our group key and rank as the inbox's
 * cells do, and arrive through lmpi_bridge_arrived like the inbox's.
 * Large messages to and from it are streamed (no cross-memory attach).
 *
 * Peers are transport indices past the node's own ranks (base + slot), so
 * point-to-point addresses them exactly like local ranks. */
#ifndef LMPI_BRIDGE_H
#define LMPI_BRIDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "transport/transport.h"

/* Transport indices from `base` on are bridge peers (the node's rank count). */
void lmpi_bridge_init(int base);
/* Create this process's inbox (idempotent). */
lmpi_status lmpi_bridge_open(const char *kvsname, int rank);
bool lmpi_bridge_is_open(void);
/* The last send to a peer's inbox found no free cell (its owner cannot
 * know who waits for one: see lmpi_wait_sleep). */
bool lmpi_bridge_waiting_for_cell(void);
/* Unlink and unmap the inbox, detach every peer. */
void lmpi_bridge_close(void);
/* The job is ending abnormally: remove the inbox's name now (only our
 * mpiexec cleans up after a killed job; prterun and srun do not). */
void lmpi_bridge_unlink(void);

/* Name the inbox of (kvsname, rank) as a peer, mapped when something is
 * first sent to it; returns its transport index (-1: out of memory). */
int lmpi_bridge_reserve(const char *kvsname, int rank);
/* The same, mapped now: -1 with an error detail when no such process has
 * an inbox. */
int lmpi_bridge_attach(const char *kvsname, int rank);
/* A peer on another host, reached at fabric address ADDR (LEN bytes, as
 * the network transport's lmpi_ofi_foreign_address gave it): its index, or
 * -1 with an error detail. */
int lmpi_bridge_attach_net(const char *kvsname, int rank, const void *addr, size_t len);
bool lmpi_bridge_is_net(int index);
void lmpi_bridge_detach(int index);
bool lmpi_bridge_is_peer(int index);
pid_t lmpi_bridge_pid(int index);
/* Whether the process pid is gone, or a zombie its launcher has not reaped
 * (Hydra 4.0 leaves killed ranks so for a while): an inbox's owner is. */
bool lmpi_bridge_pid_gone(pid_t pid);
int lmpi_bridge_peers(void);
/* Did the process of this peer (on this host) end without letting go of
 * its inbox: killed (one that finishes marks its inbox closed)?  True once
 * per peer; a peer named but not mapped yet is mapped here (the pid is in
 * the inbox).  The fault tolerance's detector for processes that no
 * launcher of ours watches (src/ft).  A peer on another host: did the
 * network transport fail to deliver to it (lmpi_ofi_foreign_failed)? */
bool lmpi_bridge_failed(int index);
/* The peer failed, as another detector found (the name server's list):
 * true the first time it is said of it or lmpi_bridge_failed said so. */
bool lmpi_bridge_report(int index);
size_t lmpi_bridge_bytes(void);

lmpi_status lmpi_bridge_send(int index, const lmpi_pkt_hdr *hdr, const void *payload, size_t len,
                             lmpi_pkt_fill fill, void *arg);
/* Deliver what arrived in the inbox; returns the count. */
int lmpi_bridge_poll(void);
/* One packet from (group key, rank), from the inbox or the network. */
void lmpi_bridge_arrived(uint64_t key, int rank, const lmpi_pkt_hdr *hdr, const void *payload, size_t len);

/* Senders are named by (group key, rank): the key is a 32-bit hash of the
 * group's kvsname, never 0.  The resolver turns them into transport indices (attaching when
 * needed); control packets (LMPI_PKT_CTRL) go to the control handler with
 * the sender's name instead of to point-to-point. */
uint64_t lmpi_bridge_group_key(const char *kvsname);
typedef int (*lmpi_bridge_resolver)(uint64_t key, int rank);
typedef void (*lmpi_bridge_ctrl_handler)(uint64_t key, int rank, const lmpi_pkt_hdr *hdr, const void *payload,
                                         size_t len);
void lmpi_bridge_set_handlers(lmpi_bridge_resolver resolve, lmpi_bridge_ctrl_handler ctrl);

#endif
