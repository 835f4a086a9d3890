/* Communicator rank maps (AV-Rankmap, DESIGN.md §1): how a rank in a
 * communicator becomes an index (lpid) into its process group's address
 * vector.  Regular layouts cost a few words and no memory per rank; irregular
 * ones share reference-counted lookup tables.
 *
 *   direct   lpid = r
 *   offset   lpid = r + offset
 *   stride   lpid = offset + r * stride                       (blocksize 1)
 *   bstride  lpid = offset + (r / bs) * stride + r % bs       (bs > 1; the
 *            division is a multiply by a precomputed reciprocal)
 *   lut      lpid = lut->ids[offset + r]  (a window into a shared table)
 *   mlut     (pgid, lpid) = mlut->e[r]    (ranks from several process groups)
 *   table    lpid = lut->ids[r]           (the baseline: LMPI_RANKMAP=table)
 *
 * Strides may be negative. */
#ifndef LMPI_RANKMAP_H
#define LMPI_RANKMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    LMPI_RM_DIRECT,
    LMPI_RM_OFFSET,
    LMPI_RM_STRIDE,
    LMPI_RM_BSTRIDE,
    LMPI_RM_LUT,
    LMPI_RM_MLUT,
    LMPI_RM_TABLE,
    LMPI_RM_NMODES
} lmpi_rm_mode;

/* A shared table of lpids; identical tables are interned (one copy). */
typedef struct lmpi_lut {
    uint32_t refs;
    uint32_t n;
    uint64_t hash;
    struct lmpi_lut *next; /* intern chain */
    uint32_t interned;     /* found through the intern table */
    uint32_t ids[];
} lmpi_lut;

typedef struct {
    uint32_t pgid, lpid;
} lmpi_gpid;

typedef struct lmpi_mlut {
    uint32_t refs;
    uint32_t n;
    lmpi_gpid e[];
} lmpi_mlut;

/* pgid of an mlut map (ranks of several groups): never a real group. */
#define LMPI_PGID_MULTI UINT32_MAX

typedef struct lmpi_rankmap {
    uint8_t mode;
    uint8_t reserved[3];
    int32_t size;      /* ranks in the map */
    uint32_t pgid;     /* process group of every rank (mlut: LMPI_PGID_MULTI) */
    int32_t blocksize; /* bstride */
    int64_t offset;
    int64_t stride;
    uint64_t recip; /* bstride: ceil(2^64 / blocksize) */
    union {
        lmpi_lut *lut;
        lmpi_mlut *mlut;
    };
} lmpi_rankmap;

/* The state a communicator keeps for its map (tables are shared and
 * counted apart); bench/spawn reports it. */
_Static_assert(sizeof(lmpi_rankmap) == 48, "rank map state");

/* Exact floor(r / bs) for 0 <= r < 2^32, 1 < bs < 2^32. */
static inline uint32_t lmpi_rm_div(uint32_t r, uint64_t recip)
{
    return (uint32_t)(((unsigned __int128)r * recip) >> 64);
}

/* The hot path: rank -> lpid in the map's process group.  Direct is tested
 * first (the paper's "if-switch" hybrid: the most common mode pays one
 * compare); the others go through one jump table. */
static inline uint32_t lmpi_rankmap_lpid(const lmpi_rankmap *m, int r)
{
    if (__builtin_expect(m->mode == LMPI_RM_DIRECT, 1))
        return (uint32_t)r;
    switch ((lmpi_rm_mode)m->mode) {
    case LMPI_RM_OFFSET:
        return (uint32_t)(r + m->offset);
    case LMPI_RM_STRIDE:
        return (uint32_t)(m->offset + (int64_t)r * m->stride);
    case LMPI_RM_BSTRIDE: {
        uint32_t q = lmpi_rm_div((uint32_t)r, m->recip);
        return (uint32_t)(m->offset + (int64_t)q * m->stride + (r - (int64_t)q * m->blocksize));
    }
    case LMPI_RM_LUT:
        return m->lut->ids[m->offset + r];
    case LMPI_RM_TABLE:
        return m->lut->ids[r];
    case LMPI_RM_MLUT:
        return m->mlut->e[r].lpid;
    default:
        __builtin_unreachable();
    }
}

static inline lmpi_gpid lmpi_rankmap_gpid(const lmpi_rankmap *m, int r)
{
    if (m->mode == LMPI_RM_MLUT)
        return m->mlut->e[r];
    return (lmpi_gpid){m->pgid, lmpi_rankmap_lpid(m, r)};
}

/* ---- construction (not on the hot path) ---------------------------------- */

/* Policy: regular maps and shared tables (default), or a full table for
 * every communicator shared only by dup (the baseline). */
void lmpi_rankmap_set_table_baseline(bool on);
bool lmpi_rankmap_table_baseline(void);

void lmpi_rankmap_direct(lmpi_rankmap *m, int size, uint32_t pgid);

/* Build the map of a child whose rank i is parent rank idx[i] (n ranks):
 * detects the pattern of idx, composes it with the parent's map, and
 * re-scans irregular results for a regular form.  Returns false when out of
 * memory (m untouched). */
bool lmpi_rankmap_derive(lmpi_rankmap *m, const lmpi_rankmap *parent, const int *idx, int n);

/* Same, with the child's indirection given as a regular pattern (offset o,
 * stride s, blocksize b; b = 1 for a plain stride), so no array is needed. */
bool lmpi_rankmap_derive_pattern(lmpi_rankmap *m, const lmpi_rankmap *parent, int n, int64_t o, int64_t s, int32_t b);

/* Build a map from explicit global ids (one process group or several). */
bool lmpi_rankmap_from_gpids(lmpi_rankmap *m, const lmpi_gpid *g, int n);

/* dup: share (tables are reference counted). */
void lmpi_rankmap_copy(lmpi_rankmap *dst, const lmpi_rankmap *src);
void lmpi_rankmap_release(lmpi_rankmap *m);

/* Rank of global process g in the map, or -1 (a scan for tables). */
int lmpi_rankmap_find(const lmpi_rankmap *m, lmpi_gpid g);

const char *lmpi_rankmap_mode_name(int mode);

/* Maps hold their process groups: hook(pgid, +1 / -1) runs for every map
 * (and every mlut entry) of a group other than 0 as it is made or released,
 * so a spawned or connected group's address vector lives exactly as long as
 * something can address it. */
void lmpi_rankmap_set_group_hook(void (*hook)(uint32_t pgid, int delta));

/* Live maps per mode and bytes held in tables (for MPI_T and the memory
 * report). */
int64_t lmpi_rankmap_count(int mode);
int64_t lmpi_rankmap_table_bytes(void);

/* Pattern detection on an array of lpids: fills *m with a regular mode when
 * one fits (returns true), else leaves it. */
bool lmpi_rankmap_detect(lmpi_rankmap *m, const uint32_t *lpid, int n, uint32_t pgid);

#endif
