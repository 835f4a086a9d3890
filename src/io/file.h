/* MPI-IO: files, views, independent and collective access.
 *
 * A file is one POSIX descriptor per process on a private duplicate of the
 * opening communicator.  Every access goes through the view: the data of a
 * call is a byte stream in the file representation (the "view stream"), and
 * the view maps stream bytes to file bytes (disp + tiles of the filetype).
 * Independent access reads and writes the file runs of that mapping, with
 * data sieving when the runs are many and small (rw.c); collective access
 * moves them through one aggregator per node in two phases (coll.c). */
#ifndef LMPI_IO_FILE_H
#define LMPI_IO_FILE_H

#include "datatype/datatype.h"
#include "runtime/errhandler.h"
#include "runtime/info.h"

/* Data representations: the built-in three and the user's (MPI_Register_datarep). */
typedef struct lmpi_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    bool large; /* registered with _c conversion functions */
    MPI_Datarep_conversion_function *read_fn, *write_fn;
    MPI_Datarep_conversion_function_c *read_fn_c, *write_fn_c;
    MPI_Datarep_extent_function *extent_fn;
    void *extra_state;
    struct lmpi_datarep *next;
} lmpi_datarep;

typedef enum { LMPI_REP_NATIVE, LMPI_REP_INTERNAL, LMPI_REP_EXTERNAL32, LMPI_REP_USER } lmpi_rep_kind;

typedef struct {
    MPI_Offset disp;
    lmpi_datatype *etype, *ftype; /* retained */
    lmpi_rep_kind rep;
    const lmpi_datarep *user;     /* LMPI_REP_USER */
    char datarep[MPI_MAX_DATAREP_STRING];
    MPI_Count esize;   /* bytes of one etype in the file */
    MPI_Count tsize;   /* data bytes of one filetype tile in the file */
    MPI_Aint textent;  /* file bytes from one tile to the next */
    MPI_Aint tfirst;   /* dense views: where the data of tile 0 starts */
    bool dense;        /* the tiles' data are one run: stream byte s is at disp + tfirst + s */
} lmpi_view;

/* Hints in force (MPI 5.0 §14.2.8 and ROMIO's names). */
typedef enum { LMPI_HINT_AUTO, LMPI_HINT_ENABLE, LMPI_HINT_DISABLE } lmpi_hint_mode;
typedef struct {
    MPI_Count cb_buffer_size;
    int cb_nodes;
    lmpi_hint_mode cb_read, cb_write, ds_read, ds_write;
    MPI_Count ind_rd_buffer_size, ind_wr_buffer_size;
    lmpi_info *extra; /* accepted keys we only report back (striping_*, access_style, ...) */
} lmpi_hints;

/* A split collective in progress (one per file, MPI 5.0 §14.4.5). */
typedef struct {
    bool active;
    bool write;
    const void *buf;
    MPI_Status status;
} lmpi_split;

typedef struct lmpi_file {
    uint32_t magic;
    int fd;
    bool readable;            /* fd can read (data sieving of writes needs it) */
    int amode;
    bool atomic;
    char *name;
    lmpi_comm *comm;          /* private duplicate: collective traffic never meets the user's */
    lmpi_errhandler *errh;
    lmpi_view view;
    lmpi_hints hints;
    MPI_Offset fp;            /* individual pointer, in etypes of the view */
    MPI_Offset shared_local;  /* shared pointer when the file has one process */
    MPI_Win shared_win;       /* the shared pointer (8 bytes at rank 0), else MPI_WIN_NULL */
    int shared_fd;            /* processes on several hosts: the pointer in a locked side file, else -1 */
    char *shared_path;        /* ... which rank 0 made and removes at close */
    int naggs;                /* collective buffering: aggregators (comm ranks), one per node */
    int *aggs;
    MPI_Request *reqs;        /* scratch: a message per rank and two per aggregator (allocated at open) */
    MPI_Count *agg_state;     /* two-phase bookkeeping: four counts per aggregator (allocated at open) */
    /* two-phase buffers, kept from call to call (aggregators: the collective
     * buffer, the received headers and data; everyone: the run lists) */
    char *cbuf, *hdr, *stage, *runs;
    MPI_Count cbuf_cap, hdr_cap, stage_cap, runs_cap;
    lmpi_split split;
} lmpi_file;

lmpi_status lmpi_file_arg(MPI_File h, lmpi_file **out);
/* The same for the calls that touch the file's data or its group (reads,
 * writes, views, sizes, sync, collectives): a revoked file
 * (MPIX_File_revoke) answers MPIX_ERR_REVOKED; MPI_File_close and the local
 * queries take lmpi_file_arg. */
lmpi_status lmpi_file_usable(MPI_File h, lmpi_file **out);
/* errno of a failed system call on file `name` as a status with detail. */
lmpi_status lmpi_io_errno(int err, const char *call, const char *name);

/* The shared pointer: take n etypes (*at: where they start); set it
 * (collective: rank 0 moves it, then a barrier). */
lmpi_status lmpi_file_shared_take(lmpi_file *f, MPI_Offset n, MPI_Offset *at);
lmpi_status lmpi_file_shared_set(lmpi_file *f, MPI_Offset v);
/* Where a seek from `cur` lands, in etypes of the view. */
lmpi_status lmpi_file_seek_target(lmpi_file *f, MPI_Offset cur, MPI_Offset offset, int whence, MPI_Offset *out);
void lmpi_io_finalize(void);

/* ---- views and data representations (view.c) ---- */
void lmpi_view_default(lmpi_view *v);
/* Check and build a view (the file's pointers are the caller's business). */
lmpi_status lmpi_view_build(lmpi_view *v, MPI_Offset disp, lmpi_datatype *etype, lmpi_datatype *ftype,
                            const char *datarep,
                            bool writable);
void lmpi_view_clear(lmpi_view *v);
/* File bytes of a predefined or derived type in representation v (what
 * MPI_File_get_type_extent answers). */
lmpi_status lmpi_view_type_extent(const lmpi_view *v, lmpi_datatype *dt, MPI_Count *extent);
/* The file runs of view-stream bytes [first, first + len): up to max runs
 * into off/len, returns how many and sets *done to the stream bytes they cover. */
int lmpi_view_runs(const lmpi_view *v, MPI_Count first, MPI_Count len, MPI_Offset *off, MPI_Count *rlen, int max,
                   MPI_Count *done);
/* The file offset of view-stream byte s. */
MPI_Offset lmpi_view_offset(const lmpi_view *v, MPI_Count s);
/* Bytes in the file representation of count elements of dt. */
lmpi_status lmpi_view_stream_bytes(const lmpi_view *v, MPI_Count count, lmpi_datatype *dt, MPI_Count *bytes);
/* Converting between the user's buffer and the file representation: NULL
 * when the representation is native (the stream is the packed buffer). */
lmpi_status lmpi_view_to_file(const lmpi_view *v, const void *buf, MPI_Count count, lmpi_datatype *dt, MPI_Offset pos,
                              void *out, MPI_Count bytes);
lmpi_status lmpi_view_from_file(const lmpi_view *v, void *buf, MPI_Count count, lmpi_datatype *dt, MPI_Offset pos,
                                const void *in, MPI_Count bytes);
void lmpi_datarep_finalize(void);

/* ---- access (rw.c, coll.c) ---- */
/* Move `bytes` bytes of view stream starting at stream byte `s0` between the
 * file and the contiguous buffer `stream` (independent: this process only).
 * *moved: bytes actually moved (short at end of file when reading). */
lmpi_status lmpi_io_stream(lmpi_file *f, bool write, MPI_Count s0, char *stream, MPI_Count bytes, MPI_Count *moved);
/* pread/pwrite of one run until done, EOF (*got short) or an error. */
lmpi_status lmpi_io_file_io(lmpi_file *f, bool write, char *p, MPI_Count len, MPI_Offset off, MPI_Count *got);
/* lmpi_io_stream, collectively over the file's communicator (two-phase).
 * `local` is this rank's status so far: a rank that failed its own checks
 * still takes part (moving nothing), and every rank returns the same class. */
lmpi_status lmpi_io_stream_all(lmpi_file *f, bool write, lmpi_status local, MPI_Count s0, char *stream,
                               MPI_Count bytes, MPI_Count *moved);

#endif
