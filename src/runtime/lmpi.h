/* lmpi.h: what every LeanMPI module shares.
 *
 * - lmpi_status, the one internal status enum (MPI error classes appear only
 *   at the binding boundary, src/binding/errors.c);
 * - the runtime state and the lock chosen from the thread level;
 * - the accounting allocator's categories;
 * - lmpi_iarray, how one implementation serves MPI_x (int arrays) and
 *   MPI_x_c (MPI_Count arrays).
 */
#ifndef LMPI_H
#define LMPI_H

#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "runtime/wait.h"

#define LMPI_LIKELY(x) __builtin_expect(!!(x), 1)
#define LMPI_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Zeroes a small object on a message path.  GCC's generic x86 tuning expands
 * a memset of known size inline as `rep stosq`, which costs about 22 ns for
 * a 288-byte request on AMD Zen (4 ns through the C library's vector
 * memset): hiding the size makes it call the library. */
static inline void lmpi_memzero(void *p, size_t n)
{
#if defined(__GNUC__)
    __asm__("" : "+r"(n));
#endif
    memset(p, 0, n);
}

/* Return a non-OK status at once. */
#define LMPI_TRY(x)                \
    do {                           \
        lmpi_status lmpi_st_ = (x); \
        if (lmpi_st_ != LMPI_OK)   \
            return lmpi_st_;       \
    } while (0)

/* Argument checks are compiled out only by an explicit build option. */
#ifndef LMPI_ARG_CHECKS
#define LMPI_ARG_CHECKS 1
#endif

/* ---- status ---------------------------------------------------------------
 * X(internal name, MPI error class, short description).  The list holds every
 * MPI 5.0 error class so that any of them can be raised from inside. */
#define LMPI_STATUS_LIST(X)                                                        \
    X(OK, MPI_SUCCESS, "no error")                                                 \
    X(ERR_BUFFER, MPI_ERR_BUFFER, "invalid buffer pointer")                        \
    X(ERR_COUNT, MPI_ERR_COUNT, "invalid count argument")                          \
    X(ERR_TYPE, MPI_ERR_TYPE, "invalid datatype")                                  \
    X(ERR_TAG, MPI_ERR_TAG, "invalid tag")                                         \
    X(ERR_COMM, MPI_ERR_COMM, "invalid communicator")                              \
    X(ERR_RANK, MPI_ERR_RANK, "invalid rank")                                      \
    X(ERR_REQUEST, MPI_ERR_REQUEST, "invalid request")                             \
    X(ERR_ROOT, MPI_ERR_ROOT, "invalid root")                                      \
    X(ERR_GROUP, MPI_ERR_GROUP, "invalid group")                                   \
    X(ERR_OP, MPI_ERR_OP, "invalid operation")                                     \
    X(ERR_TOPOLOGY, MPI_ERR_TOPOLOGY, "invalid topology")                          \
    X(ERR_DIMS, MPI_ERR_DIMS, "invalid dimension argument")                        \
    X(ERR_ARG, MPI_ERR_ARG, "invalid argument")                                    \
    X(ERR_UNKNOWN, MPI_ERR_UNKNOWN, "unknown error")                               \
    X(ERR_TRUNCATE, MPI_ERR_TRUNCATE, "message truncated")                         \
    X(ERR_OTHER, MPI_ERR_OTHER, "other error")                                     \
    X(ERR_INTERN, MPI_ERR_INTERN, "internal error")                                \
    X(ERR_PENDING, MPI_ERR_PENDING, "pending request")                             \
    X(ERR_IN_STATUS, MPI_ERR_IN_STATUS, "error code is in status")                 \
    X(ERR_ACCESS, MPI_ERR_ACCESS, "permission denied")                             \
    X(ERR_AMODE, MPI_ERR_AMODE, "invalid file access mode")                        \
    X(ERR_ASSERT, MPI_ERR_ASSERT, "invalid assert argument")                       \
    X(ERR_BAD_FILE, MPI_ERR_BAD_FILE, "invalid file name")                         \
    X(ERR_BASE, MPI_ERR_BASE, "invalid base address")                              \
    X(ERR_CONVERSION, MPI_ERR_CONVERSION, "data conversion error")                 \
    X(ERR_DISP, MPI_ERR_DISP, "invalid displacement")                              \
    X(ERR_DUP_DATAREP, MPI_ERR_DUP_DATAREP, "data representation already defined") \
    X(ERR_FILE_EXISTS, MPI_ERR_FILE_EXISTS, "file exists")                         \
    X(ERR_FILE_IN_USE, MPI_ERR_FILE_IN_USE, "file in use")                         \
    X(ERR_FILE, MPI_ERR_FILE, "invalid file handle")                               \
    X(ERR_INFO_KEY, MPI_ERR_INFO_KEY, "invalid info key")                          \
    X(ERR_INFO_NOKEY, MPI_ERR_INFO_NOKEY, "info key not defined")                  \
    X(ERR_INFO_VALUE, MPI_ERR_INFO_VALUE, "invalid info value")                    \
    X(ERR_INFO, MPI_ERR_INFO, "invalid info object")                               \
    X(ERR_IO, MPI_ERR_IO, "I/O error")                                             \
    X(ERR_KEYVAL, MPI_ERR_KEYVAL, "invalid attribute key")                         \
    X(ERR_LOCKTYPE, MPI_ERR_LOCKTYPE, "invalid lock type")                         \
    X(ERR_NAME, MPI_ERR_NAME, "invalid service name")                              \
    X(ERR_NO_MEM, MPI_ERR_NO_MEM, "out of memory")                                 \
    X(ERR_NOT_SAME, MPI_ERR_NOT_SAME, "collective arguments differ")               \
    X(ERR_NO_SPACE, MPI_ERR_NO_SPACE, "no space left")                             \
    X(ERR_NO_SUCH_FILE, MPI_ERR_NO_SUCH_FILE, "no such file")                      \
    X(ERR_PORT, MPI_ERR_PORT, "invalid port name")                                 \
    X(ERR_QUOTA, MPI_ERR_QUOTA, "quota exceeded")                                  \
    X(ERR_READ_ONLY, MPI_ERR_READ_ONLY, "read-only file")                          \
    X(ERR_RMA_ATTACH, MPI_ERR_RMA_ATTACH, "memory cannot be attached")             \
    X(ERR_RMA_CONFLICT, MPI_ERR_RMA_CONFLICT, "conflicting RMA accesses")          \
    X(ERR_RMA_RANGE, MPI_ERR_RMA_RANGE, "RMA target out of window")                \
    X(ERR_RMA_SHARED, MPI_ERR_RMA_SHARED, "memory cannot be shared")               \
    X(ERR_RMA_SYNC, MPI_ERR_RMA_SYNC, "wrong RMA synchronization")                 \
    X(ERR_SERVICE, MPI_ERR_SERVICE, "invalid service")                             \
    X(ERR_SIZE, MPI_ERR_SIZE, "invalid size")                                      \
    X(ERR_SPAWN, MPI_ERR_SPAWN, "spawn failed")                                    \
    X(ERR_UNSUPPORTED_DATAREP, MPI_ERR_UNSUPPORTED_DATAREP, "unsupported datarep") \
    X(ERR_UNSUPPORTED_OPERATION, MPI_ERR_UNSUPPORTED_OPERATION,                    \
      "operation not supported (not implemented yet)")                             \
    X(ERR_WIN, MPI_ERR_WIN, "invalid window")                                      \
    X(ERR_RMA_FLAVOR, MPI_ERR_RMA_FLAVOR, "wrong window flavor")                   \
    X(ERR_PROC_ABORTED, MPI_ERR_PROC_ABORTED, "peer process aborted")              \
    X(ERR_VALUE_TOO_LARGE, MPI_ERR_VALUE_TOO_LARGE, "value too large")             \
    X(ERR_SESSION, MPI_ERR_SESSION, "invalid session")                             \
    X(ERR_ERRHANDLER, MPI_ERR_ERRHANDLER, "invalid error handler")                 \
    X(ERR_ABI, MPI_ERR_ABI, "ABI mismatch")                                        \
    X(ERR_PROC_FAILED, MPIX_ERR_PROC_FAILED, "a process taking part failed")      \
    X(ERR_PROC_FAILED_PENDING, MPIX_ERR_PROC_FAILED_PENDING,                       \
      "a process that could match failed; the request is pending")                \
    X(ERR_REVOKED, MPIX_ERR_REVOKED, "the communicator was revoked")              \
    X(T_ERR_NOT_INITIALIZED, MPI_T_ERR_NOT_INITIALIZED, "MPI_T is not initialized") \
    X(T_ERR_INVALID_INDEX, MPI_T_ERR_INVALID_INDEX, "invalid MPI_T variable index") \
    X(T_ERR_INVALID_HANDLE, MPI_T_ERR_INVALID_HANDLE, "invalid MPI_T handle")      \
    X(T_ERR_INVALID_SESSION, MPI_T_ERR_INVALID_SESSION, "invalid MPI_T session")   \
    X(T_ERR_INVALID_NAME, MPI_T_ERR_INVALID_NAME, "no MPI_T variable of that name") \
    X(T_ERR_INVALID, MPI_T_ERR_INVALID, "invalid MPI_T argument")                  \
    X(T_ERR_PVAR_NO_WRITE, MPI_T_ERR_PVAR_NO_WRITE, "performance variable is read-only") \
    X(T_ERR_PVAR_NO_STARTSTOP, MPI_T_ERR_PVAR_NO_STARTSTOP, "continuous variable: no start/stop") \
    X(T_ERR_CVAR_SET_NEVER, MPI_T_ERR_CVAR_SET_NEVER, "control variable is read-only")

typedef enum lmpi_status {
#define LMPI_STATUS_ENUM(name, cls, text) LMPI_##name,
    LMPI_STATUS_LIST(LMPI_STATUS_ENUM)
#undef LMPI_STATUS_ENUM
    LMPI_STATUS_COUNT
} lmpi_status;

/* MPI error class of an internal status. */
int lmpi_status_class(lmpi_status st);
/* The status whose class is that of MPI error code `code` (user callbacks'
 * results: a user-defined code keeps its class); LMPI_ERR_OTHER if none. */
lmpi_status lmpi_status_from_code(int code);
/* The same, and the binding returns `code` itself (a user callback's code). */
lmpi_status lmpi_status_user(int code);

/* Attach a detail to the error being raised ("dest=7 but the communicator
 * has 4 ranks"); the binding prints it after the function and class. */
void lmpi_err_detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Copy the pending detail (to extend it). */
void lmpi_err_detail_get(char *out, size_t len);

/* ---- objects ------------------------------------------------------------- */
typedef struct lmpi_comm lmpi_comm;
typedef struct lmpi_datatype lmpi_datatype;
typedef struct lmpi_request lmpi_request;
typedef struct lmpi_errhandler lmpi_errhandler;

/* Predefined handles in the standard ABI are small integers (all below 0x400);
 * anything larger is a pointer to one of our objects. */
#define LMPI_PREDEF_LIMIT 0x400u

/* Magic words, cleared on free, catch stale and garbage handles. */
enum {
    LMPI_MAGIC_COMM = 0x436f6d6du,
    LMPI_MAGIC_DATATYPE = 0x44747970u,
    LMPI_MAGIC_REQUEST = 0x52657175u,
    LMPI_MAGIC_ERRHANDLER = 0x45727248u,
    LMPI_MAGIC_MESSAGE = 0x4d657367u,
    LMPI_MAGIC_GROUP = 0x47727570u,
    LMPI_MAGIC_INFO = 0x496e666fu,
    LMPI_MAGIC_FILE = 0x46696c65u,
};

const char *lmpi_predefined_name(uintptr_t value);
int lmpi_error_last_code(void);
void lmpi_attr_finalize(void);
typedef void (*lmpi_generic_fn)(void);
typedef struct {
    const char *name;
    lmpi_generic_fn impl;
} lmpi_function_entry;
extern const lmpi_function_entry lmpi_functions[];

/* ---- integer arrays of either width -------------------------------------- */
typedef struct {
    const void *p;
    int width; /* 4: int, 8: MPI_Count or MPI_Aint */
} lmpi_iarray;

typedef struct {
    void *p;
    int width;
} lmpi_iarray_out;

static inline int64_t lmpi_iarray_get(lmpi_iarray a, size_t i)
{
    return a.width == 4 ? ((const int *)a.p)[i] : ((const int64_t *)a.p)[i];
}

/* Narrowing for int outputs of the non-_c variants: the standard asks for
 * MPI_UNDEFINED when the value does not fit. */
static inline int lmpi_narrow_int(int64_t v)
{
    return (v > INT32_MAX || v < INT32_MIN) ? MPI_UNDEFINED : (int)v;
}

static inline MPI_Aint lmpi_narrow_aint(int64_t v)
{
    return (MPI_Aint)v;
}

/* ---- runtime state -------------------------------------------------------- */
enum lmpi_state { LMPI_STATE_NONE = 0, LMPI_STATE_READY = 1, LMPI_STATE_FINALIZED = 2 };

typedef struct lmpi_runtime {
    int state;            /* the process: NONE -> READY -> FINALIZED */
    bool world_init;      /* the world model: MPI_Init called ... */
    bool world_finalized; /* ... and MPI_Finalize called */
    bool world_finalizing; /* MPI_Finalize is deleting MPI_COMM_SELF's attributes */
    int sessions;         /* live MPI sessions; the runtime ends with the last user */
    int world_rank;
    int world_size;
    int appnum;
    int universe_size;
    int thread_level;
    bool thread_multiple; /* lock kind: a mutex only under MPI_THREAD_MULTIPLE */
    bool lock_calls;      /* ... or while a thread of ours polls too (the network's introducer) */
    pthread_t main_thread;
    int node_id;
    int local_rank;
    int local_size;
    char processor_name[MPI_MAX_PROCESSOR_NAME];
    char node_coords[128]; /* a virtual node's coordinates (mpiexec --network) */
    char map_order[48];    /* the mapping order mpiexec applied */
    char kvsname[256];
    int peer_size_hint; /* the largest rank a packet may carry (src/dpm) */
} lmpi_runtime;

extern lmpi_runtime lmpi_rt;

static inline bool lmpi_runtime_ready(void)
{
    return lmpi_rt.state == LMPI_STATE_READY;
}

/* The global lock: taken at the binding boundary only when the thread level
 * is MPI_THREAD_MULTIPLE or a thread of ours polls beside the user's (the
 * network transport's introducer, ofi.c), so single-threaded runs pay one
 * predicted branch.  Re-entry from the same thread (a user callback calling
 * MPI) is allowed. */
extern pthread_mutex_t lmpi_big_lock;
extern _Thread_local bool lmpi_lock_held;

static inline int lmpi_lock_enter(void)
{
    if (LMPI_LIKELY(!lmpi_rt.lock_calls) || lmpi_lock_held)
        return 0;
    pthread_mutex_lock(&lmpi_big_lock);
    lmpi_lock_held = true;
    return 1;
}

void lmpi_wait_after_call(void);

/* Every MPI call's exit.  Beside the lock: words of shared areas this call
 * wrote may be awaited by sleeping ranks (one load when none sleeps), and
 * a thread of ours may sleep on what it completed (runtime/wait.h). */
static inline void lmpi_lock_leave(int locked)
{
    if (locked) {
        lmpi_lock_held = false;
        pthread_mutex_unlock(&lmpi_big_lock);
    }
    if (LMPI_UNLIKELY(atomic_load_explicit(&lmpi_wait_local_sleepers, memory_order_relaxed)))
        lmpi_wait_after_call();
    lmpi_wait_leave_call();
    lmpi_wait_kick();
}

/* Around a user callback that may wait for a lock of the user's while
 * another thread holding that lock waits for ours (an attribute's delete
 * callback in Python needs the GIL; mpi4py's threads hold the GIL while
 * they enter MPI): the big lock is let go while it runs, then taken back. */
static inline int lmpi_lock_suspend(void)
{
    if (!lmpi_lock_held)
        return 0;
    lmpi_lock_held = false;
    pthread_mutex_unlock(&lmpi_big_lock);
    return 1;
}

static inline void lmpi_lock_resume(int suspended)
{
    if (suspended) {
        pthread_mutex_lock(&lmpi_big_lock);
        lmpi_lock_held = true;
    }
}

/* Let other threads (and, under oversubscription, other processes) run while
 * a blocking call waits. */
void lmpi_lock_yield(void);

/* ---- memory accounting ---------------------------------------------------- */
#define LMPI_MEM_CATEGORIES(X) \
    X(AV, "av")                \
    X(RANKMAP, "rankmap")      \
    X(COMM, "comm")            \
    X(MATCH, "match")          \
    X(REQUEST, "request")      \
    X(DATATYPE, "datatype")    \
    X(COLL, "coll")            \
    X(TOPO, "topo")            \
    X(RMA, "rma")              \
    X(IO, "io")                \
    X(SHM, "shm")              \
    X(OFI, "ofi")              \
    X(OTHER, "other")

typedef enum lmpi_mem_cat {
#define LMPI_MEM_ENUM(name, text) LMPI_MEM_##name,
    LMPI_MEM_CATEGORIES(LMPI_MEM_ENUM)
#undef LMPI_MEM_ENUM
    LMPI_MEM_NCAT
} lmpi_mem_cat;

void *lmpi_malloc(size_t size, lmpi_mem_cat cat);
void *lmpi_calloc(size_t n, size_t size, lmpi_mem_cat cat);
void *lmpi_realloc(void *p, size_t size, lmpi_mem_cat cat);
void lmpi_free(void *p);
char *lmpi_strdup(const char *s, lmpi_mem_cat cat);
lmpi_status lmpi_set_object_name(char **slot, const char *name, const char *what, lmpi_mem_cat cat);
/* Memory we do not allocate ourselves (the shm segment) is only counted. */
void lmpi_mem_account(lmpi_mem_cat cat, int64_t delta);
int64_t lmpi_mem_current(lmpi_mem_cat cat);
int64_t lmpi_mem_peak(lmpi_mem_cat cat);
const char *lmpi_mem_cat_name(lmpi_mem_cat cat);

/* ---- misc ------------------------------------------------------------------ */
double lmpi_wtime(void);
/* The monotonic clock in nanoseconds (the clock of MPI_Wtime). */
static inline uint64_t lmpi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
_Noreturn void lmpi_abort_job(int code, const char *why);

#endif
