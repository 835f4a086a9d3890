/* Communicators.  This first version has MPI_COMM_WORLD and MPI_COMM_SELF;
 * groups, splits and the compressed rank maps (src/av) come with the
 * communicator issue.  A communicator owns two context ids: one for
 * point-to-point traffic and one (id + 1) for its collectives, so that a
 * user's wildcard receive can never match a barrier message. */
#ifndef LMPI_COMM_H
#define LMPI_COMM_H

#include "runtime/errhandler.h"
#include "runtime/lmpi.h"

/* The largest tag (the MPI_TAG_UB attribute): the whole non-negative int range. */
#define LMPI_TAG_UB 0x7fffffff

typedef enum { LMPI_RANKMAP_DIRECT, LMPI_RANKMAP_OFFSET } lmpi_rankmap_mode;

struct lmpi_comm {
    uint32_t magic;
    uint32_t context_id; /* even; context_id + 1 carries collectives */
    int rank;
    int size;
    lmpi_rankmap_mode map_mode;
    int map_offset;
    MPI_Comm handle;
    lmpi_errhandler *errh;
    uint32_t coll_seq; /* tags successive collectives apart */
    char name[MPI_MAX_OBJECT_NAME];
};

#define LMPI_COMM_BUILTIN_BASE 0x100u
#define LMPI_COMM_BUILTIN_COUNT 3u
extern lmpi_comm lmpi_comm_builtin[LMPI_COMM_BUILTIN_COUNT];
#define lmpi_comm_world (&lmpi_comm_builtin[1])
#define lmpi_comm_self (&lmpi_comm_builtin[2])

/* One well-predicted branch maps a predefined handle to its object. */
static inline lmpi_comm *lmpi_comm_from_handle(MPI_Comm h)
{
    uintptr_t v = (uintptr_t)h;
    if (LMPI_UNLIKELY(v < LMPI_PREDEF_LIMIT)) {
        v -= LMPI_COMM_BUILTIN_BASE;
        return v < LMPI_COMM_BUILTIN_COUNT ? &lmpi_comm_builtin[v] : NULL;
    }
    return (lmpi_comm *)h;
}

/* Rank in the communicator -> rank in the world (the AV index). */
static inline int lmpi_comm_world_rank(const lmpi_comm *c, int rank)
{
    return c->map_mode == LMPI_RANKMAP_DIRECT ? rank : rank + c->map_offset;
}

void lmpi_comm_init_builtin(void);
void lmpi_comm_finalize_builtin(void);

#endif
