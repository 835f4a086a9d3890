#ifndef LMPI_SHM_H
#define LMPI_SHM_H

#include "runtime/lmpi.h"
#include "transport/shm/notice.h"

/* Create (the node's first rank, leader) or attach the node's segment, with
 * room for the n world ranks of job `job` of which nlocal are on this node;
 * collective over the job (uses one PMI barrier). */
lmpi_status lmpi_shm_init(int me, int n, int leader, int nlocal, const char *job);
/* Open a named shared-memory object another process of the job made, but
 * only one of this user's, closed to others, of at least min_size bytes
 * (another user may have made an object of that name first): the
 * descriptor and its size, or -1 with errno (EACCES for a foreign object). */
int lmpi_shm_open_ours(const char *name, size_t min_size, size_t *size);
void lmpi_shm_finalize(void);
/* Create this process's inbox for other process groups (bridge.h) and poll
 * it from now on. */
lmpi_status lmpi_shm_bridge_open(const char *kvsname, int rank);
size_t lmpi_shm_segment_size(void);
/* Lines written so far into local rank dest's fast-box ring, and the ring's
 * length in lines (unit tests aim payloads at the ring's positions). */
uint32_t lmpi_shm_fastbox_head(int dest, uint32_t *ring_units);
/* The segment's notice board of failed processes (notice.h); NULL without
 * a segment. */
const lmpi_notice *lmpi_shm_notice(void);
/* Emulated links between the emulated nodes of this machine (node_of: the
 * node of each local rank): LMPI_VNODE_LINK. */
void lmpi_shm_emulate_links(const int *node_of, int n, double lat_us, double gbytes_per_s);

/* Shared memory for collectives: BYTES (zeroed) from the segment's pool, as
 * an offset every local rank can turn into an address with lmpi_shm_at; 0
 * when the pool has no room (or there is no segment). */
uint64_t lmpi_shm_pool_alloc(size_t bytes);
void lmpi_shm_pool_free(uint64_t off, size_t bytes);
void *lmpi_shm_at(uint64_t off);

#endif
