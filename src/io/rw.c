/* Reads and writes (MPI 5.0 §14.4): every form funnels into access(), which
 * finds the view-stream position (explicit offset, individual or shared
 * pointer), converts the user's buffer to and from the file representation,
 * and moves the stream independently (lmpi_io_stream, here) or collectively
 * (lmpi_io_stream_all, coll.c).
 *
 * Independent non-contiguous access uses data sieving, as ROMIO does: when
 * the file runs are many and small, one read covers their span and the runs
 * are copied out of it (reads), or the span is read, patched and written back
 * under a byte-range lock (writes).  Nonblocking forms do the I/O when they
 * start and hand back a completed generalized request; split collectives do
 * it in _begin and return the status in _end. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "io/file.h"
#include "runtime/request.h"

#define RUN_BATCH 512
#define SIEVE_MAX_RUN (64 << 10) /* runs this long go straight to the file */

/* ---- byte-range locks (atomic mode, sieved writes) ---- */

static int range_lock(int fd, short type, MPI_Offset start, MPI_Offset len)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
#ifdef F_OFD_SETLKW
    /* open-file-description locks: two handles of one process do not share them */
    int rc;
    while ((rc = fcntl(fd, F_OFD_SETLKW, &fl)) != 0 && errno == EINTR)
        ;
    if (rc == 0 || errno != EINVAL)
        return rc;
#endif
    while (fcntl(fd, F_SETLKW, &fl) != 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

static void range_unlock(int fd, MPI_Offset start, MPI_Offset len)
{
    struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
#ifdef F_OFD_SETLK
    if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
        return;
#endif
    fcntl(fd, F_SETLK, &fl);
}

/* ---- whole runs ---- */

lmpi_status lmpi_io_file_io(lmpi_file *f, bool write, char *p, MPI_Count len, MPI_Offset off, MPI_Count *got)
{
    MPI_Count done = 0;
    while (done < len) {
        size_t chunk = (size_t)(len - done < ((MPI_Count)1 << 30) ? len - done : (MPI_Count)1 << 30);
        ssize_t n = write ? pwrite(f->fd, p + done, chunk, off + done) : pread(f->fd, p + done, chunk, off + done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (n == 0 && write)) {
            /* errno stays the system call's: collective callers pass it on */
            int e = n < 0 ? errno : ENOSPC;
            *got = done;
            lmpi_status st = lmpi_io_errno(e, write ? "pwrite" : "pread", f->name);
            errno = e;
            return st;
        }
        if (n == 0)
            break;
        done += n;
    }
    *got = done;
    return LMPI_OK;
}

/* One batch of runs through a sieve buffer: the span is read once. */
static lmpi_status sieve(lmpi_file *f, bool write, const MPI_Offset *off, const MPI_Count *len, int n, char *stream,
                         MPI_Count *moved, char **buf, MPI_Count *cap)
{
    MPI_Offset lo = off[0], hi = off[n - 1] + len[n - 1];
    MPI_Count span = hi - lo;
    if (span > *cap) {
        char *nb = lmpi_realloc(*buf, (size_t)span, LMPI_MEM_IO);
        if (!nb)
            return LMPI_ERR_NO_MEM;
        *buf = nb;
        *cap = span;
    }
    bool locked = write && !f->atomic; /* atomic mode holds a lock over the whole access */
    if (locked && range_lock(f->fd, F_WRLCK, lo, span) != 0)
        return lmpi_io_errno(errno, "fcntl(F_SETLKW)", f->name);
    MPI_Count got;
    lmpi_status st = lmpi_io_file_io(f, false, *buf, span, lo, &got);
    if (st == LMPI_OK && write && got < span)
        memset(*buf + got, 0, (size_t)(span - got)); /* holes past the end read as zeros */
    MPI_Count s = 0;
    for (int i = 0; i < n && st == LMPI_OK; i++) {
        char *at = *buf + (off[i] - lo);
        if (write)
            memcpy(at, stream + s, (size_t)len[i]);
        else {
            MPI_Count avail = got - (off[i] - lo);
            if (avail <= 0)
                break;
            memcpy(stream + s, at, (size_t)(avail < len[i] ? avail : len[i]));
            if (avail < len[i]) {
                s += avail;
                break;
            }
        }
        s += len[i];
    }
    if (st == LMPI_OK && write)
        st = lmpi_io_file_io(f, true, *buf, span, lo, &got);
    if (locked)
        range_unlock(f->fd, lo, span);
    *moved = s;
    return st;
}

/* Reads sieve unless told not to.  Writes sieve only when romio_ds_write is
 * "enable": patching a span rewrites the holes, and a process writing into
 * a hole at the same moment would lose its data unless every write of the
 * file takes the lock (which they then do, see lmpi_io_stream). */
static bool want_sieve(const lmpi_file *f, bool write, int n, MPI_Count cover, MPI_Offset span)
{
    lmpi_hint_mode m = write ? f->hints.ds_write : f->hints.ds_read;
    if (m == LMPI_HINT_DISABLE || (write && m != LMPI_HINT_ENABLE) || n < 2)
        return false;
    if (write && !f->readable)
        return false; /* cannot read what it would patch */
    MPI_Count limit = write ? f->hints.ind_wr_buffer_size : f->hints.ind_rd_buffer_size;
    if (span > limit)
        return false;
    return m == LMPI_HINT_ENABLE || cover / n < SIEVE_MAX_RUN;
}

lmpi_status lmpi_io_stream(lmpi_file *f, bool write, MPI_Count s0, char *stream, MPI_Count bytes, MPI_Count *moved)
{
    MPI_Offset off[RUN_BATCH];
    MPI_Count len[RUN_BATCH];
    MPI_Count done = 0;
    char *sbuf = NULL;
    MPI_Count scap = 0;
    lmpi_status st = LMPI_OK;
    MPI_Offset lk_lo = 0, lk_len = 0;
    if (f->atomic && bytes > 0) {
        lk_lo = lmpi_view_offset(&f->view, s0);
        lk_len = lmpi_view_offset(&f->view, s0 + bytes - 1) + 1 - lk_lo;
        if (range_lock(f->fd, write ? F_WRLCK : F_RDLCK, lk_lo, lk_len) != 0)
            return lmpi_io_errno(errno, "fcntl(F_SETLKW)", f->name);
    }
    while (done < bytes && st == LMPI_OK) {
        MPI_Count cover, got = 0;
        int n = lmpi_view_runs(&f->view, s0 + done, bytes - done, off, len, RUN_BATCH, &cover);
        if (n == 0)
            break;
        if (want_sieve(f, write, n, cover, off[n - 1] + len[n - 1] - off[0])) {
            st = sieve(f, write, off, len, n, stream + done, &got, &sbuf, &scap);
            done += got;
            if (got < cover)
                break;
            continue;
        }
        MPI_Count s = 0;
        bool lock = write && f->hints.ds_write == LMPI_HINT_ENABLE && !f->atomic;
        for (int i = 0; i < n && st == LMPI_OK; i++) {
            if (lock && range_lock(f->fd, F_WRLCK, off[i], len[i]) != 0) {
                st = lmpi_io_errno(errno, "fcntl(F_SETLKW)", f->name);
                break;
            }
            st = lmpi_io_file_io(f, write, stream + done + s, len[i], off[i], &got);
            if (lock)
                range_unlock(f->fd, off[i], len[i]);
            s += got;
            if (got < len[i])
                break;
        }
        done += s;
        if (s < cover)
            break;
    }
    if (lk_len)
        range_unlock(f->fd, lk_lo, lk_len);
    lmpi_free(sbuf);
    *moved = done;
    return st;
}

/* ---- the forms ---------------------------------------------------------------- */

typedef enum { AT_OFFSET, AT_INDIVIDUAL, AT_SHARED, AT_ORDERED } position_kind;

static lmpi_status check_access(lmpi_file *f, bool write, position_kind pos, MPI_Offset offset)
{
    if (write && (f->amode & MPI_MODE_RDONLY)) {
        lmpi_err_detail("\"%s\" is open MPI_MODE_RDONLY", f->name);
        return LMPI_ERR_READ_ONLY;
    }
    if (!write && (f->amode & MPI_MODE_WRONLY)) {
        lmpi_err_detail("\"%s\" is open MPI_MODE_WRONLY (no reads)", f->name);
        return LMPI_ERR_ACCESS;
    }
    if ((f->amode & MPI_MODE_SEQUENTIAL) && pos != AT_SHARED && pos != AT_ORDERED) {
        lmpi_err_detail("\"%s\" is open MPI_MODE_SEQUENTIAL: only shared file pointers", f->name);
        return LMPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (pos == AT_OFFSET && offset < 0) {
        lmpi_err_detail("offset %lld is negative", (long long)offset);
        return LMPI_ERR_ARG;
    }
    return LMPI_OK;
}

/* Ordered: rank order over the shared pointer, one collective access. */
static lmpi_status ordered_start(lmpi_file *f, MPI_Offset n, MPI_Offset *at)
{
    lmpi_comm *c = f->comm;
    if (c->size == 1)
        return lmpi_file_shared_take(f, n, at);
    lmpi_datatype *i64 = lmpi_datatype_from_handle(MPI_INT64_T);
    int64_t mine = n, before = 0, total = 0, base = 0;
    LMPI_TRY(lmpi_impl_Exscan(&mine, &before, 1, i64, MPI_SUM, c));
    if (c->rank == 0)
        before = 0;
    LMPI_TRY(lmpi_impl_Allreduce(&mine, &total, 1, i64, MPI_SUM, c));
    if (c->rank == 0)
        LMPI_TRY(lmpi_file_shared_take(f, total, &base));
    LMPI_TRY(lmpi_impl_Bcast(&base, 1, i64, 0, c));
    *at = base + before;
    return LMPI_OK;
}

static lmpi_status do_access(lmpi_file *f, position_kind pos, bool write, bool coll, MPI_Offset offset, void *buf,
                             MPI_Count count, lmpi_datatype *dt, MPI_Status *status)
{
    const lmpi_view *v = &f->view;
    MPI_Count bytes = 0;
    lmpi_status st = check_access(f, write, pos, offset);
    if (st == LMPI_OK)
        st = lmpi_view_stream_bytes(v, count, dt, &bytes);
    if (st != LMPI_OK) {
        if (!coll)
            return st;
        bytes = 0; /* a collective goes on with nothing rather than leave the others waiting */
    }
    MPI_Offset n = bytes / v->esize, at = 0;
    switch (pos) {
    case AT_OFFSET:
        at = offset;
        break;
    case AT_INDIVIDUAL:
        at = f->fp;
        break;
    case AT_SHARED:
        LMPI_TRY(lmpi_file_shared_take(f, n, &at));
        break;
    case AT_ORDERED: {
        lmpi_status s2 = ordered_start(f, n, &at);
        if (st == LMPI_OK)
            st = s2;
        break;
    }
    }
    bool native = v->rep == LMPI_REP_NATIVE || v->rep == LMPI_REP_INTERNAL;
    char *stream = NULL, *tmp = NULL;
    if (bytes > 0 && native && dt->contiguous)
        stream = (char *)lmpi_dt_contig_ptr(buf, dt);
    else if (bytes > 0) {
        tmp = lmpi_malloc((size_t)bytes, LMPI_MEM_IO);
        if (!tmp)
            st = LMPI_ERR_NO_MEM;
        stream = tmp;
    }
    if (st == LMPI_OK && write && tmp)
        st = lmpi_view_to_file(v, buf, count, dt, at, tmp, bytes);
    MPI_Count moved = 0;
    if (coll)
        st = lmpi_io_stream_all(f, write, st, at * v->esize, stream, st == LMPI_OK ? bytes : 0, &moved);
    else if (st == LMPI_OK)
        st = lmpi_io_stream(f, write, at * v->esize, stream, bytes, &moved);
    if (st == LMPI_OK && !write && tmp && moved > 0) {
        if (native)
            lmpi_dt_unpack(buf, count, dt, 0, moved, tmp);
        else {
            /* whole elements only: a partial one at the end of the file stays as it was */
            MPI_Count per = bytes / (count ? count : 1), whole = per ? moved / per : 0;
            st = lmpi_view_from_file(v, buf, whole, dt, at, tmp, whole * per);
        }
    }
    lmpi_free(tmp);
    if (pos == AT_INDIVIDUAL)
        f->fp = at + moved / v->esize;
    if (status != MPI_STATUS_IGNORE) {
        MPI_Count user = moved;
        if (!native && bytes)
            user = moved / (bytes / count) * dt->size;
        lmpi_status_set_bytes(status, user);
        lmpi_status_set_cancelled(status, 0);
        status->MPI_SOURCE = MPI_ANY_SOURCE;
        status->MPI_TAG = MPI_ANY_TAG;
    }
    return st;
}

static lmpi_status access_fh(MPI_File fh, position_kind pos, bool write, bool coll, MPI_Offset offset, const void *buf,
                             MPI_Count count, lmpi_datatype *dt, MPI_Status *status)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_usable(fh, &f));
    if (f->split.active && coll) {
        lmpi_err_detail("a split collective is open on \"%s\"", f->name);
        return LMPI_ERR_OTHER;
    }
    return do_access(f, pos, write, coll, offset, (void *)buf, count, dt, status);
}

/* ---- nonblocking: done at the start, a completed generalized request ---- */

static int greq_query(void *extra, MPI_Status *status)
{
    *status = *(MPI_Status *)extra;
    return MPI_SUCCESS;
}

static int greq_free(void *extra)
{
    lmpi_free(extra);
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static lmpi_status access_nb(MPI_File fh, position_kind pos, bool write, bool coll, MPI_Offset offset,
                             const void *buf, MPI_Count count, lmpi_datatype *dt, MPI_Request *request)
{
    MPI_Status *s = lmpi_calloc(1, sizeof(*s), LMPI_MEM_IO);
    if (!s)
        return LMPI_ERR_NO_MEM;
    lmpi_status st = access_fh(fh, pos, write, coll, offset, buf, count, dt, s);
    if (st == LMPI_OK)
        st = lmpi_impl_Grequest_start(greq_query, greq_free, greq_cancel, s, request);
    if (st != LMPI_OK) {
        lmpi_free(s);
        return st;
    }
    return lmpi_impl_Grequest_complete(*request);
}

/* ---- split collectives ---- */

static lmpi_status split_begin(MPI_File fh, position_kind pos, bool write, MPI_Offset offset, const void *buf,
                               MPI_Count count, lmpi_datatype *dt)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_usable(fh, &f));
    if (f->split.active) {
        lmpi_err_detail("a split collective is already open on \"%s\" (one at a time)", f->name);
        return LMPI_ERR_OTHER;
    }
    LMPI_TRY(do_access(f, pos, write, true, offset, (void *)buf, count, dt, &f->split.status));
    f->split.active = true;
    f->split.write = write;
    f->split.buf = buf;
    return LMPI_OK;
}

static lmpi_status split_end(MPI_File fh, bool write, const void *buf, MPI_Status *status)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_usable(fh, &f));
    if (!f->split.active || f->split.write != write) {
        lmpi_err_detail("no split collective %s is open on \"%s\"", write ? "write" : "read", f->name);
        return LMPI_ERR_OTHER;
    }
    if (buf != f->split.buf) {
        lmpi_err_detail("buf %p is not the buffer given to the _begin call (%p)", buf, f->split.buf);
        return LMPI_ERR_BUFFER;
    }
    f->split.active = false;
    if (status != MPI_STATUS_IGNORE)
        *status = f->split.status;
    return LMPI_OK;
}

/* ---- the entry points ------------------------------------------------------------ */

/* read/write with a pointer (individual, shared, ordered), blocking (access_fh,
 * a status) or nonblocking (access_nb, a request) */
#define POINTER_FORMS(i, name, pos, coll, call, last_t)                                                              \
    lmpi_status lmpi_impl_File_##i##read##name(MPI_File fh, void *buf, MPI_Count count, lmpi_datatype *dt,           \
                                               last_t last)                                                          \
    {                                                                                                                \
        return call(fh, pos, false, coll, 0, buf, count, dt, last);                                                  \
    }                                                                                                                \
    lmpi_status lmpi_impl_File_##i##write##name(MPI_File fh, const void *buf, MPI_Count count, lmpi_datatype *dt,    \
                                                last_t last)                                                         \
    {                                                                                                                \
        return call(fh, pos, true, coll, 0, buf, count, dt, last);                                                   \
    }

/* read_at/write_at (explicit offsets), the same four ways */
#define OFFSET_FORMS(i, name, coll, call, last_t)                                                                    \
    lmpi_status lmpi_impl_File_##i##read_at##name(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,        \
                                                  lmpi_datatype *dt, last_t last)                                    \
    {                                                                                                                \
        return call(fh, AT_OFFSET, false, coll, offset, buf, count, dt, last);                                       \
    }                                                                                                                \
    lmpi_status lmpi_impl_File_##i##write_at##name(MPI_File fh, MPI_Offset offset, const void *buf,                  \
                                                   MPI_Count count, lmpi_datatype *dt, last_t last)                  \
    {                                                                                                                \
        return call(fh, AT_OFFSET, true, coll, offset, buf, count, dt, last);                                        \
    }

POINTER_FORMS(, , AT_INDIVIDUAL, false, access_fh, MPI_Status *)
POINTER_FORMS(, _all, AT_INDIVIDUAL, true, access_fh, MPI_Status *)
POINTER_FORMS(, _shared, AT_SHARED, false, access_fh, MPI_Status *)
POINTER_FORMS(, _ordered, AT_ORDERED, true, access_fh, MPI_Status *)
POINTER_FORMS(i, , AT_INDIVIDUAL, false, access_nb, MPI_Request *)
POINTER_FORMS(i, _all, AT_INDIVIDUAL, true, access_nb, MPI_Request *)
POINTER_FORMS(i, _shared, AT_SHARED, false, access_nb, MPI_Request *)
OFFSET_FORMS(, , false, access_fh, MPI_Status *)
OFFSET_FORMS(, _all, true, access_fh, MPI_Status *)
OFFSET_FORMS(i, , false, access_nb, MPI_Request *)
OFFSET_FORMS(i, _all, true, access_nb, MPI_Request *)

#define SPLIT_FORMS(name, pos)                                                                                       \
    lmpi_status lmpi_impl_File_read##name##_begin(MPI_File fh, void *buf, MPI_Count count, lmpi_datatype *dt)        \
    {                                                                                                                \
        return split_begin(fh, pos, false, 0, buf, count, dt);                                                       \
    }                                                                                                                \
    lmpi_status lmpi_impl_File_write##name##_begin(MPI_File fh, const void *buf, MPI_Count count,                    \
                                                   lmpi_datatype *dt)                                                \
    {                                                                                                                \
        return split_begin(fh, pos, true, 0, buf, count, dt);                                                        \
    }                                                                                                                \
    lmpi_status lmpi_impl_File_read##name##_end(MPI_File fh, void *buf, MPI_Status *status)                          \
    {                                                                                                                \
        return split_end(fh, false, buf, status);                                                                    \
    }                                                                                                                \
    lmpi_status lmpi_impl_File_write##name##_end(MPI_File fh, const void *buf, MPI_Status *status)                   \
    {                                                                                                                \
        return split_end(fh, true, buf, status);                                                                     \
    }

SPLIT_FORMS(_all, AT_INDIVIDUAL)
SPLIT_FORMS(_ordered, AT_ORDERED)

lmpi_status lmpi_impl_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                             lmpi_datatype *dt)
{
    return split_begin(fh, AT_OFFSET, false, offset, buf, count, dt);
}

lmpi_status lmpi_impl_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                              lmpi_datatype *dt)
{
    return split_begin(fh, AT_OFFSET, true, offset, buf, count, dt);
}

lmpi_status lmpi_impl_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return split_end(fh, false, buf, status);
}

lmpi_status lmpi_impl_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return split_end(fh, true, buf, status);
}
