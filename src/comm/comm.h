/* Communicators and groups.
 *
 * A communicator addresses its peers through a rank map (src/av): for an
 * intracommunicator the map of its group, for an intercommunicator the map of
 * the remote group (the local group's map is kept beside it).  It owns four
 * a block of LMPI_CTX_BLOCK context ids: point-to-point (id), its
 * collectives (id + 1, so a user's wildcard receive never matches a
 * collective's message), and two each for its internal communicators: the
 * node and node-roots communicators of node-aware collectives (id + 2, id +
 * 4; disjoint across the parent's members, so every node can use the same
 * ids) and an intercommunicator's local-group communicator (id + 6). */
#ifndef LMPI_COMM_H
#define LMPI_COMM_H

#include "av/av.h"
#include "av/rankmap.h"
#include "dpm/dpm.h"
#include "runtime/errhandler.h"
#include "runtime/lmpi.h"
#include "runtime/objarena.h"

/* Tags of collectives on a communicator's collective context: a sequence
 * number in a range per kind (creation and fixed-tag agreements use
 * 0x20000000 and up, partitioned pairs below 0x10000000). */
#define LMPI_COLL_TAG_BLOCKING 0x10000000
#define LMPI_COLL_TAG_NBC 0x18000000
#define LMPI_COLL_SEQ_MASK 0x07ffffffu

/* The largest tag (the MPI_TAG_UB attribute): the whole non-negative int range. */
#define LMPI_TAG_UB 0x7fffffff

#define LMPI_CTX_BLOCK 8u
enum { LMPI_CTX_PT2PT = 0, LMPI_CTX_COLL = 1, LMPI_CTX_NODE = 2, LMPI_CTX_ROOTS = 4, LMPI_CTX_LOCAL = 6 };
/* Reserved blocks below the first allocated id: the world and self (0, 1),
 * creation from groups (2, 3), the roots of connect/accept (4). */
#define LMPI_CTX_DPM_PEER (4 * LMPI_CTX_BLOCK)
#define LMPI_CTX_FIRST_FREE (5 * LMPI_CTX_BLOCK)

typedef struct lmpi_attr lmpi_attr;
typedef struct lmpi_info lmpi_info;

/* FIXED_TAG: a temporary communicator whose internal collectives all use
 * the tag in coll_seq (agreements among a group's members only). */
typedef enum {
    LMPI_COMM_PREDEFINED = 1,
    LMPI_COMM_INTERNAL = 2,
    LMPI_COMM_FIXED_TAG = 4,
    LMPI_COMM_REVOKED = 8, /* MPIX_Comm_revoke: every call but recovery fails (src/ft) */
    LMPI_COMM_PRIVATE = 16, /* a window's or file's own duplicate: revoked with it, agreements run over it */
} lmpi_comm_flags;

typedef struct lmpi_coll_area lmpi_coll_area;

struct lmpi_comm {
    uint32_t magic;
    uint32_t context_id; /* a multiple of LMPI_CTX_BLOCK */
    int rank;            /* in the local group */
    int size;            /* of the local group */
    int peer_size;       /* ranks that point-to-point calls address: size, or the remote size */
    uint8_t is_inter;
    uint8_t flags;
    uint16_t session; /* the session it derives from (low bits of its id; 0: the world model) */
    /* fault tolerance (src/ft): failed members acknowledged (a prefix of
     * the failures in the order this process learnt them) */
    uint32_t ft_acked;
    lmpi_rankmap map;        /* the ranks point-to-point calls address */
    lmpi_rankmap *local_map; /* intercommunicators: the local group (else NULL: map) */
    MPI_Comm handle;
    lmpi_errhandler *errh;
    uint32_t coll_seq; /* tags successive (blocking) collectives apart */
    uint32_t nbc_seq;  /* ... and nonblocking and persistent ones */
    uint64_t coll_calls; /* blocking collectives called (src/coll/calls.c) */
    lmpi_attr *attrs;
    lmpi_info *info;     /* hints set by the user (NULL: none) */
    char *name;          /* NULL: no name set */
    lmpi_comm *node;     /* internal node communicator, built on first use */
    lmpi_comm *roots;    /* internal node-roots communicator (NULL on non-roots too) */
    lmpi_comm *local_comm; /* intercommunicators: the local group as an intracommunicator */
    uint8_t node_built;
    uint8_t coll_area_state; /* shared-memory collectives: unknown, attached, none (shmcoll.c) */
    int nnodes;          /* nodes c spans (known once node_built) */
    lmpi_coll_area *coll_area;
    struct lmpi_bsend_buffer *bsend; /* MPI_Comm_attach_buffer (NULL: none) */
    struct lmpi_vtopo *topo;         /* process topology (NULL: none; shared with duplicates) */
    /* every live communicator, for a revoke naming its context id */
    lmpi_comm *live_prev, *live_next;
    /* an internal communicator's (node, roots, local group): the one it
     * serves, broken when that one is (src/ft) */
    lmpi_comm *ft_parent;
    /* a window's private duplicate: the window, told when a revoke
     * arrives (lmpi_win_mark_revoked) */
    void *owner;
};

/* The live communicators (lmpi_comm_alloc to lmpi_comm_destroy; not the
 * predefined ones) in no particular order. */
extern lmpi_comm *lmpi_comm_live_list;

#define LMPI_COMM_BUILTIN_BASE 0x100u
#define LMPI_COMM_BUILTIN_COUNT 3u
extern lmpi_comm lmpi_comm_builtin[LMPI_COMM_BUILTIN_COUNT];
#define lmpi_comm_world (&lmpi_comm_builtin[1])
#define lmpi_comm_self (&lmpi_comm_builtin[2])

/* One well-predicted branch maps a predefined handle to its object; any
 * other must lie in the object arena (NULL if not: garbage, unmapped). */
static inline lmpi_comm *lmpi_comm_from_handle(MPI_Comm h)
{
    uintptr_t v = (uintptr_t)h;
    if (LMPI_UNLIKELY(v < LMPI_PREDEF_LIMIT)) {
        v -= LMPI_COMM_BUILTIN_BASE;
        return v < LMPI_COMM_BUILTIN_COUNT ? &lmpi_comm_builtin[v] : NULL;
    }
    return LMPI_LIKELY(lmpi_obj_valid(h, sizeof(lmpi_comm))) ? (lmpi_comm *)h : NULL;
}

/* Rank in the communicator (the remote group for intercommunicators) -> the
 * transport address index of that process. */
static inline int lmpi_comm_world_rank(const lmpi_comm *c, int rank)
{
    /* Ranks of other process groups (spawned, connected: src/dpm) resolve
     * through their group's address vector; one compare keeps them off the
     * path of the world's communicators. */
    if (LMPI_UNLIKELY(c->map.pgid != 0))
        return lmpi_dpm_addr(lmpi_rankmap_gpid(&c->map, rank));
    return (int)lmpi_av_addr(lmpi_av_world(), lmpi_rankmap_lpid(&c->map, rank));
}

/* Node ids for node-aware algorithms over a map that contains this
 * process: the world's node map for a map of the world; for a map spanning
 * process groups every group counts as one node (each has its own
 * segment), numbered by its local pgid. */
int lmpi_comm_node_of(const lmpi_rankmap *m, int r);
int lmpi_comm_node_bound(const lmpi_rankmap *m); /* every id is below it */
int lmpi_comm_my_node(const lmpi_rankmap *m);

static inline const lmpi_rankmap *lmpi_comm_local_map(const lmpi_comm *c)
{
    return c->local_map ? c->local_map : &c->map;
}

void lmpi_comm_init_builtin(void);
lmpi_status lmpi_comm_init_world(int world_size, int world_rank, const int *node_of);
void lmpi_comm_finalize_builtin(void);

/* ---- groups ---------------------------------------------------------------- */
typedef struct lmpi_group {
    uint32_t magic;
    uint32_t refs;
    int size;
    int rank; /* MPI_UNDEFINED when this process is not a member */
    uint32_t session; /* made from this session's process set (0: the world model) */
    lmpi_rankmap map;
} lmpi_group;

/* A communicator handed out before its members are known (MPIX_Comm_shrink
 * and ishrink): the parent's error handler and session, no traffic of its
 * own; lmpi_comm_fill makes it an intracommunicator over lmap (rmap NULL)
 * or an intercommunicator with the remote group rmap, both copied, with
 * context id ctx (src/comm/create.c). */
lmpi_status lmpi_comm_new_pending(lmpi_comm *parent, lmpi_comm **out);
lmpi_status lmpi_comm_fill(lmpi_comm *c, const lmpi_rankmap *lmap, int lrank, const lmpi_rankmap *rmap, uint32_t ctx);
/* The same for an intercommunicator: our group's map and our rank in it,
 * the remote group's map. */
lmpi_status lmpi_comm_new_inter(lmpi_comm *parent, const lmpi_rankmap *lmap, int lrank, const lmpi_rankmap *rmap,
                                uint32_t ctx, lmpi_comm **out);
lmpi_status lmpi_group_from_handle(MPI_Group h, lmpi_group **out, const char *what);
/* A new group over the map (copied); MPI_GROUP_EMPTY for size 0. */
lmpi_status lmpi_group_new(const lmpi_rankmap *map, MPI_Group *out);
lmpi_status lmpi_group_from_gpids(const lmpi_gpid *g, int n, MPI_Group *out);

/* ---- creation ---------------------------------------------------------- */
/* A new communicator object over a map (copied), not yet visible. */
lmpi_comm *lmpi_comm_alloc(const lmpi_rankmap *map, int rank, uint32_t ctx);
void lmpi_comm_destroy(lmpi_comm *c);
/* Agree on a context id block among the members of comm (collective). */
lmpi_status lmpi_comm_agree_ctx(lmpi_comm *comm, uint32_t *ctx);
/* A leader that gives up after the other leader was told to come (an
 * accept or connect whose root then failed locally) tells it so. */
lmpi_status lmpi_comm_inter_refuse(lmpi_comm *peer, int remote_leader, int tag, lmpi_status why);
/* MPI_Intercomm_create's core: the leaders (local_leader here, remote_leader
 * in peer) swap their groups and agree on the id; collective over local.
 * inboxes_open: every member of both sides has its inbox for other process
 * groups already (connect/accept open them first), else they are opened
 * here when the groups span process groups. */
lmpi_status lmpi_comm_inter_handshake(lmpi_comm *local, int local_leader, lmpi_comm *peer, int remote_leader,
                                      int tag, bool inboxes_open, MPI_Comm *newintercomm);
/* A private duplicate of an intracommunicator (windows), freed with MPI_Comm_free. */
lmpi_status lmpi_comm_dup_internal(lmpi_comm *comm, lmpi_comm **out);
/* Do all members of intracommunicator C run on this host, sharing its
 * memory?  Every member gets the same answer; when not, *elsewhere is a
 * member on another host.  The _need form fails with
 * LMPI_ERR_UNSUPPORTED_OPERATION naming WHAT, which needs shared memory. */
bool lmpi_comm_one_host(const lmpi_comm *c, int *elsewhere);
lmpi_status lmpi_comm_need_one_host(const lmpi_comm *c, const char *what);
uint32_t lmpi_ctx_next(void);
void lmpi_ctx_advance(uint32_t past);
/* Taking an agreed context id (why in comm.c): every member's verdict on it,
 * their largest decides.  check: 0 (and claimed) when the id is free here.
 * settle, with the verdict: true, taken; false, let go, and *next is this
 * member's proposal for the next try.  lmpi_ctx_confirm runs the tries with
 * max(arg, v) (the largest v among the members: lmpi_ctx_max_intra over an
 * intracommunicator, or one over both groups of an intercommunicator), from
 * *ctx, the members' first agreed id, to the one taken. */
typedef struct lmpi_ctx_claim {
    struct lmpi_ctx_claim *next;
    uint32_t ctx;
    bool held;
} lmpi_ctx_claim;
uint32_t lmpi_ctx_check(lmpi_ctx_claim *c, uint32_t ctx);
bool lmpi_ctx_settle(lmpi_ctx_claim *c, uint32_t verdict, uint32_t *next);
/* This member's proposal after `refused` was refused (what settle gives). */
uint32_t lmpi_ctx_above(uint32_t refused);
lmpi_status lmpi_ctx_confirm(lmpi_status (*max)(void *, uint32_t *), void *arg, uint32_t *ctx);
/* No other creation can be in flight here while a blocking one runs (one
 * thread, no idup outstanding): when every member says so, the agreed id
 * is taken without the check. */
bool lmpi_ctx_alone(void);
/* A nonblocking creation that agrees its id outside the idup list (an
 * MPIX_Comm_ishrink) starts (+1) or ends (-1): none is alone meanwhile. */
void lmpi_ctx_nonblocking(int delta);
/* Takes *ctx, the members' agreed id over intracommunicator comm: checked
 * first when shared (some member said !lmpi_ctx_alone()). */
lmpi_status lmpi_ctx_take(lmpi_comm *comm, bool shared, uint32_t *ctx);
lmpi_status lmpi_ctx_max_intra(void *comm, uint32_t *v);

/* The internal node and node-roots communicators of c, built on first use
 * (locally, with no communication).  roots is NULL unless this process is
 * its node's first rank in c. */
lmpi_status lmpi_comm_node_comms(lmpi_comm *c, lmpi_comm **node, lmpi_comm **roots);

/* Counts and bytes for MPI_T and the memory report. */
int64_t lmpi_comm_live(void);
const char *lmpi_comm_display_name(const lmpi_comm *c);

/* Attributes (src/comm/attr.c). */
lmpi_status lmpi_attr_copy_all(lmpi_comm *old, lmpi_comm *newc);
lmpi_status lmpi_attr_delete_all(lmpi_attr **list, void *object, int kind);
lmpi_status lmpi_attr_copy_type(lmpi_datatype *old, lmpi_datatype *newt);

/* Internal collectives used while building communicators (src/comm/icoll.c):
 * they run on the parent's collective context. */
lmpi_status lmpi_icoll_allgather(lmpi_comm *c, const void *mine, void *all, size_t bytes);
lmpi_status lmpi_icoll_allreduce_max_u32(lmpi_comm *c, uint32_t *v);
lmpi_status lmpi_icoll_allreduce_max_u32n(lmpi_comm *c, uint32_t *v, int k);
lmpi_status lmpi_icoll_bcast(lmpi_comm *c, void *buf, size_t bytes, int root);
/* Byte-level steps on an explicit context and tag (icoll.c), shared with the
 * schedule-free collectives: nothing allocated when the transport takes a
 * message at once; a longer message than expected is LMPI_ERR_TRUNCATE. */
lmpi_status lmpi_icoll_send(lmpi_comm *c, uint32_t ctx, int tag, const void *buf, size_t bytes, int dest);
lmpi_status lmpi_icoll_recv(lmpi_comm *c, uint32_t ctx, int tag, void *buf, size_t bytes, int src);
/* A receive into a request the caller owns (on its stack), and its end. */
struct lmpi_request;
void lmpi_icoll_post_recv(struct lmpi_request *r, lmpi_comm *c, uint32_t ctx, int tag, void *buf, size_t bytes,
                          int src);
lmpi_status lmpi_icoll_finish_recv(struct lmpi_request *r);
lmpi_status lmpi_icoll_exchange(lmpi_comm *c, uint32_t ctx, int tag, const void *out, size_t sbytes, int dest,
                                void *in, size_t rbytes, int src);
lmpi_status lmpi_icoll_tree_bcast(lmpi_comm *c, uint32_t ctx, int tag, void *buf, size_t bytes, int root,
                                  bool mismatched);

#endif
