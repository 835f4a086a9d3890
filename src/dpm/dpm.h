/* Dynamic process management (MPI 5.0 chapter 11): spawn, ports,
 * connect/accept, join, the name service, and the registry of the process
 * groups this process can address.
 *
 * Every group has its own address vector (the world is pgid 0); the others
 * get small local pgids as they become known, by name (their kvsname), and
 * live as long as some rank map refers to them (rankmap.h's group hook).
 * A rank of another group is reached through the bridge (src/transport/shm/
 * bridge.h), its address is attached on first use. */
#ifndef LMPI_DPM_H
#define LMPI_DPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "av/rankmap.h"
#include "runtime/lmpi.h"

/* Transport index of a process of any group (attaches on first use); a
 * process that cannot be reached gives an index no transport accepts. */
int lmpi_dpm_addr(lmpi_gpid g);

/* The local pgid of the group with this key (lmpi_bridge_group_key of its
 * kvsname), UINT32_MAX when this process does not know it; and the key of
 * a local pgid (0: none).  Keys outlive pgids, which are reused. */
uint32_t lmpi_dpm_pgid_of_key(uint64_t key);
uint64_t lmpi_dpm_group_key(uint32_t pgid);

/* Processes of groups met through a port (whose launcher may not be ours,
 * so nobody tells us of their failures): are there any, and look at a few
 * of them, telling gone(group key, rank) of each that was killed
 * (lmpi_bridge_failed; once each).  Processes on other hosts: those a
 * transfer to failed (lmpi_bridge_failed too), and lmpi_dpm_watch_remote
 * asks the name server which of them their launcher saw fail. */
bool lmpi_dpm_watching(void);
void lmpi_dpm_watch(void (*gone)(uint64_t key, int rank));
void lmpi_dpm_watch_remote(void (*gone)(uint64_t key, int rank));

/* Registry */
uint32_t lmpi_dpm_group(const char *kvsname, int size); /* find or add; UINT32_MAX: out of memory */
const char *lmpi_dpm_group_name(uint32_t pgid);
int lmpi_dpm_group_size(uint32_t pgid);

/* A map's members in a form another process can read: the groups' names
 * and sizes, then (group index, lpid) per rank.  The blob is malloc'd. */
lmpi_status lmpi_dpm_encode_map(const lmpi_rankmap *m, void **blob, size_t *len);
lmpi_status lmpi_dpm_decode_map(const void *blob, size_t len, lmpi_rankmap *out);

/* This process's inbox for packets from other process groups (and its
 * network address where other hosts may take part): opened once. */
lmpi_status lmpi_dpm_ensure_inbox(void);

/* Runtime: after the world exists (a spawned process connects to its
 * parents here), and before it goes. */
lmpi_status lmpi_dpm_init(void);
/* Was this process spawned by a job whose processes publish their network
 * addresses (LMPI_DPM_NET): then it will open the network to reach them. */
bool lmpi_dpm_parent_net(void);
void lmpi_dpm_finalize(void);
/* Process sets of other process groups (the session model): in a spawned
 * process "lmpi://parent", the processes that spawned it (while the parent
 * intercommunicator exists); in a spawning process "lmpi://spawned/<kvsname>"
 * for each spawned job it is still connected to. */
int lmpi_dpm_pset_count(void);
/* The n-th name (0 <= n < count) into out; its length with the NUL. */
int lmpi_dpm_pset_name(int n, char *out, size_t len);
/* The members of the set NAME as a map the caller releases; false: none. */
bool lmpi_dpm_pset_map(const char *name, lmpi_rankmap *out);

/* The memory report's lines: other process groups, the bridge (rank 0). */
void lmpi_dpm_report(FILE *out);
/* A communicator is going: forget it if it is the parent. */
void lmpi_dpm_comm_gone(lmpi_comm *c);

#endif
