/* Datatypes: predefined and derived, and the pack engine.
 *
 * A committed type is compiled into a small tree of loop nodes (src/datatype
 * engine.c): contiguous runs are merged into leaves, vectors stay loops
 * (nested vectors stay nested loops), irregular blocks keep one array of
 * (displacement, length) with prefix sums for seeking.  Pack, unpack and
 * iovec generation walk that tree from any byte offset of the packed stream,
 * without allocating.
 *
 * Each type also keeps its constructor arguments exactly as given, for
 * MPI_Type_get_envelope / MPI_Type_get_contents, and for the per-element
 * walks (external32 conversion, MPI_Get_elements). */
#ifndef LMPI_DATATYPE_H
#define LMPI_DATATYPE_H

#include <sys/uio.h>

#include "runtime/lmpi.h"
#include "runtime/objarena.h"

typedef enum { LMPI_DT_LEAF, LMPI_DT_VECTOR, LMPI_DT_BLOCKS, LMPI_DT_STRUCT } lmpi_dtnode_kind;

typedef struct lmpi_dtnode {
    uint8_t kind;
    uint8_t child_is_run; /* VECTOR/BLOCKS: consecutive child instances are one dense run */
    uint32_t refs;
    MPI_Count size;       /* data bytes of one instance */
    MPI_Count count;      /* blocks */
    MPI_Count child_size; /* VECTOR/BLOCKS: data bytes of one child instance */
    MPI_Aint child_extent;
    MPI_Aint leaf_offset; /* LEAF: the run starts here */
    MPI_Count blocklen;   /* VECTOR: child instances per block */
    MPI_Aint stride;      /* VECTOR: bytes between block starts */
    MPI_Aint *disps;      /* BLOCKS/STRUCT: block starts */
    MPI_Count *blens;     /* BLOCKS/STRUCT: child instances per block */
    MPI_Count *before;    /* BLOCKS/STRUCT: data bytes before block i (count + 1 entries) */
    struct lmpi_dtnode *child;
    struct lmpi_dtnode **children; /* STRUCT */
    MPI_Aint *child_extents;       /* STRUCT */
} lmpi_dtnode;

struct lmpi_datatype {
    uint32_t magic;
    uint32_t refs;   /* user handles (MPI_Type_get_contents hands out more) + types built on it */
    MPI_Count size;  /* bytes of data in one element */
    MPI_Aint extent;
    MPI_Aint lb;
    MPI_Aint true_lb;
    MPI_Aint true_extent;
    bool contiguous; /* `count` instances are one dense run starting at true_lb */
    bool committed;
    bool predefined;
    MPI_Datatype handle;
    const char *name;  /* predefined name, or the user's (owned) */
    char *user_name;
    lmpi_dtnode *node; /* the compiled form (all types have one, committed or not) */
    /* constructor, as given */
    int combiner;
    bool large;        /* made by a _c constructor */
    int ni, na, nc, nt; /* integers, addresses, large counts, types */
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;
    struct lmpi_datatype **types;
    int align;    /* alignment of the most aligned basic type inside (struct padding) */
    bool marked;  /* has resized bounds (they stick, as MPI_LB/MPI_UB markers did) */
    bool cached;  /* an MPI_Type_create_f90_* result: shared, never freed */
    struct lmpi_attr *attrs;
};

/* Predefined datatype handles are 0x200..0x2ff in the standard ABI. */
#define LMPI_DATATYPE_BUILTIN_BASE 0x200u
#define LMPI_DATATYPE_BUILTIN_COUNT 0x100u
extern lmpi_datatype lmpi_datatype_builtin[LMPI_DATATYPE_BUILTIN_COUNT];

static inline lmpi_datatype *lmpi_datatype_from_handle(MPI_Datatype h)
{
    uintptr_t v = (uintptr_t)h;
    if (LMPI_UNLIKELY(v < LMPI_PREDEF_LIMIT)) {
        v -= LMPI_DATATYPE_BUILTIN_BASE;
        if (v >= LMPI_DATATYPE_BUILTIN_COUNT || lmpi_datatype_builtin[v].magic != LMPI_MAGIC_DATATYPE)
            return NULL;
        return &lmpi_datatype_builtin[v];
    }
    /* derived types live in the object arena: anything else is not one */
    return LMPI_LIKELY(lmpi_obj_valid(h, sizeof(lmpi_datatype))) ? (lmpi_datatype *)h : NULL;
}

/* Does count x size or count x extent leave MPI_Count?  (A multiply with
 * an overflow flag each: the _c calls take counts up to 2^63.) */
static inline bool lmpi_dt_count_overflows(MPI_Count count, const lmpi_datatype *dt)
{
    MPI_Count bytes, span;
    return __builtin_mul_overflow(count, dt->size, &bytes) ||
           __builtin_mul_overflow(count, (MPI_Count)dt->extent, &span);
}

void lmpi_datatype_init_builtin(void);
void lmpi_datatype_finalize(void);

/* ---- engine ------------------------------------------------------------------ */

/* Pack bytes [first, first + len) of the packed stream of (buf, count, dt)
 * into out. */
void lmpi_dt_pack(const void *buf, MPI_Count count, const lmpi_datatype *dt, MPI_Count first, MPI_Count len,
                  void *out);
/* Unpack len bytes from in into stream bytes [first, first + len). */
void lmpi_dt_unpack(void *buf, MPI_Count count, const lmpi_datatype *dt, MPI_Count first, MPI_Count len,
                    const void *in);
/* The memory runs of stream bytes [first, first + len): fills up to max
 * iovecs, returns how many, and sets *done to the bytes they cover. */
int lmpi_dt_iov(const void *buf, MPI_Count count, const lmpi_datatype *dt, MPI_Count first, MPI_Count len,
                struct iovec *iov, int max, MPI_Count *done);
/* Number of contiguous runs of one instance (a measure of fragmentation). */
MPI_Count lmpi_dt_runs(const lmpi_datatype *dt);

void lmpi_dtnode_release(lmpi_dtnode *n);
lmpi_dtnode *lmpi_dtnode_leaf(MPI_Aint offset, MPI_Count size);

/* Basic elements in the first `bytes` bytes of a stream of dt (for
 * MPI_Get_elements): -1 when bytes ends inside an element. */
MPI_Count lmpi_dt_elements(const lmpi_datatype *dt, MPI_Count bytes);
/* The bytes that `elements` basic elements of dt take (MPI_Status_set_elements). */
MPI_Count lmpi_dt_elements_bytes(const lmpi_datatype *dt, MPI_Count elements);

/* Visit every basic element of one instance of t, in typemap order, with its
 * byte offset (for conversions between representations). */
typedef void (*lmpi_dt_elem_fn)(const lmpi_datatype *basic, MPI_Aint offset, void *arg);
lmpi_status lmpi_dt_walk_elements(const lmpi_datatype *t, MPI_Aint off, lmpi_dt_elem_fn fn, void *arg);

/* The start of the data of a contiguous type. */
static inline const char *lmpi_dt_contig_ptr(const void *buf, const lmpi_datatype *dt)
{
    return (const char *)buf + dt->true_lb;
}

void lmpi_datatype_retain(lmpi_datatype *dt);
void lmpi_datatype_release(lmpi_datatype *dt);

#endif
