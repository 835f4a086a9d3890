/* Collective access: two-phase I/O (del Rosario, Bordawekar, Choudhary 1993;
 * ROMIO's generic collective buffering).
 *
 * One allreduce finds the file span [lo, hi) of the whole call and whether
 * any process's access is non-contiguous.  When every process reads or writes
 * one run, independent pread/pwrite is already optimal and is used.
 * Otherwise the span is cut into one file domain per aggregator (the first
 * rank of each node, or cb_nodes of them), and each domain is walked in
 * windows of cb_buffer_size bytes.  Per window, every process sends each
 * aggregator the (offset, length) list of its runs in the window, plus, for
 * writes, their data: because a view's file offsets grow with the stream,
 * the data of one window is one contiguous piece of the process's stream and
 * goes without packing.  The aggregator fills its buffer (reading the span
 * first only when the runs leave holes), and writes it with one pwrite; for
 * reads it does one pread of the span and sends each process its bytes,
 * which land directly in the process's stream.
 *
 * Memory: the buffers are the file's and persist between calls; each grows to
 * what one window needs (the collective buffer, the run lists, the data of a
 * window) and never with the number of processes. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "io/file.h"
#include "runtime/request.h"

#define TAG_RUNS 1
#define TAG_DATA 2
#define RUN_BATCH 256

typedef struct {
    int64_t off, len;
} run_pair;

static lmpi_status grow(char **buf, MPI_Count *cap, MPI_Count need)
{
    if (need <= *cap)
        return LMPI_OK;
    MPI_Count n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    char *b = lmpi_realloc(*buf, (size_t)n, LMPI_MEM_IO);
    if (!b)
        return LMPI_ERR_NO_MEM;
    *buf = b;
    *cap = n;
    return LMPI_OK;
}

/* The first stream byte at or after file offset `at` (the stream's file
 * offsets never decrease: MPI 5.0 §14.3 makes filetypes monotonic). */
static MPI_Count stream_at(const lmpi_file *f, MPI_Count s0, MPI_Count bytes, MPI_Offset at)
{
    MPI_Count lo = 0, hi = bytes;
    while (lo < hi) {
        MPI_Count mid = lo + (hi - lo) / 2;
        if (lmpi_view_offset(&f->view, s0 + mid) < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Append this process's runs inside [ws, we), from stream position *cur, to
 * the run list at f->runs + *used (bytes).  Returns the stream bytes taken. */
static lmpi_status window_runs(lmpi_file *f, MPI_Count s0, MPI_Count bytes, MPI_Count *cur, MPI_Offset ws,
                               MPI_Offset we, MPI_Count *used, MPI_Count *taken)
{
    MPI_Offset off[RUN_BATCH];
    MPI_Count len[RUN_BATCH];
    *taken = 0;
    while (*cur < bytes) {
        MPI_Count cover;
        int n = lmpi_view_runs(&f->view, s0 + *cur, bytes - *cur, off, len, RUN_BATCH, &cover);
        if (n == 0)
            break;
        for (int i = 0; i < n; i++) {
            if (off[i] >= we)
                return LMPI_OK;
            MPI_Count part = off[i] + len[i] <= we ? len[i] : we - off[i];
            if (off[i] >= ws) {
                LMPI_TRY(grow(&f->runs, &f->runs_cap, *used + (MPI_Count)sizeof(run_pair)));
                run_pair *p = (run_pair *)(f->runs + *used);
                p->off = off[i];
                p->len = part;
                *used += sizeof(run_pair);
                *taken += part;
            }
            *cur += part;
            if (part < len[i])
                return LMPI_OK;
        }
    }
    return LMPI_OK;
}

typedef struct {
    MPI_Offset lo, domain, hi;
    MPI_Count cb;
} layout;

static void window_of(const lmpi_file *f, const layout *L, int a, MPI_Count r, MPI_Offset *ws, MPI_Offset *we)
{
    (void)f;
    MPI_Offset dstart = L->lo + (MPI_Offset)a * L->domain;
    MPI_Offset dend = dstart + L->domain < L->hi ? dstart + L->domain : L->hi;
    *ws = dstart + r * L->cb;
    *we = *ws + L->cb < dend ? *ws + L->cb : dend;
}

/* The runs of one process in the collective buffer as a datatype: its data
 * moves between the buffer and the wire without a staging copy. */
static lmpi_status runs_type(lmpi_file *f, const run_pair *p, MPI_Count n, MPI_Offset mn, MPI_Datatype *out)
{
    LMPI_TRY(grow(&f->stage, &f->stage_cap, n * 16));
    MPI_Aint *disp = (MPI_Aint *)f->stage;
    MPI_Count *blen = (MPI_Count *)(f->stage + n * 8);
    for (MPI_Count i = 0; i < n; i++) {
        disp[i] = (MPI_Aint)(p[i].off - mn);
        blen[i] = p[i].len;
    }
    LMPI_TRY(lmpi_impl_Type_create_hindexed(n, (lmpi_iarray){blen, 8}, (lmpi_iarray){disp, 8},
                                            lmpi_datatype_from_handle(MPI_BYTE), out));
    lmpi_status st = lmpi_impl_Type_commit(out);
    if (st != LMPI_OK)
        lmpi_impl_Type_free(out);
    return st;
}

/* The aggregator's side of one window: every process's run list first, then
 * the buffer (read first where the runs leave holes, or for reads), then the
 * data straight between the buffer and each process. */
static lmpi_status aggregate(lmpi_file *f, bool write, MPI_Offset ws, MPI_Offset we, const char *my_runs,
                             MPI_Count my_nbytes, char *my_data, int *err)
{
    lmpi_comm *c = f->comm;
    lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
    MPI_Count hdr_used = 0;
    /* run lists in rank order: per-pair order keeps consecutive calls apart */
    for (int src = 0; src < c->size; src++) {
        MPI_Count nb;
        if (src == c->rank) {
            nb = my_nbytes;
            LMPI_TRY(grow(&f->hdr, &f->hdr_cap, hdr_used + 8 + nb));
            memcpy(f->hdr + hdr_used + 8, my_runs, (size_t)nb);
        } else {
            MPI_Status s;
            LMPI_TRY(lmpi_impl_Probe(src, TAG_RUNS, c, &s));
            nb = lmpi_status_bytes(&s);
            LMPI_TRY(grow(&f->hdr, &f->hdr_cap, hdr_used + 8 + nb));
            LMPI_TRY(lmpi_impl_Recv(f->hdr + hdr_used + 8, nb, byte, src, TAG_RUNS, c, MPI_STATUS_IGNORE));
        }
        memcpy(f->hdr + hdr_used, &nb, 8);
        hdr_used += 8 + nb;
    }
    /* the span the runs touch, and whether they fill it */
    MPI_Offset mn = we, mx = ws;
    MPI_Count covered = 0;
    for (MPI_Count h = 0; h < hdr_used;) {
        MPI_Count nb;
        memcpy(&nb, f->hdr + h, 8);
        const run_pair *p = (const run_pair *)(f->hdr + h + 8);
        for (MPI_Count i = 0; i < nb / (MPI_Count)sizeof(run_pair); i++) {
            if (p[i].off < mn)
                mn = p[i].off;
            if (p[i].off + p[i].len > mx)
                mx = p[i].off + p[i].len;
            covered += p[i].len;
        }
        h += 8 + nb;
    }
    if (mx <= mn)
        return LMPI_OK;
    MPI_Count span = mx - mn, got = 0;
    LMPI_TRY(grow(&f->cbuf, &f->cbuf_cap, span));
    if (!write || covered != span) {
        /* reads, and writes that leave holes: the span's current bytes first */
        if (!*err && lmpi_io_file_io(f, false, f->cbuf, span, mn, &got) != LMPI_OK)
            *err = errno ? errno : EIO;
        if (got < span)
            memset(f->cbuf + got, 0, (size_t)(span - got));
    }
    MPI_Request *reqs = f->reqs + 2 * f->naggs; /* past this process's own sends and receives */
    int nreq = 0;
    lmpi_status st = LMPI_OK;
    int src = 0;
    for (MPI_Count h = 0; h < hdr_used && st == LMPI_OK; src++) {
        MPI_Count nb;
        memcpy(&nb, f->hdr + h, 8);
        const run_pair *p = (const run_pair *)(f->hdr + h + 8);
        MPI_Count n = nb / (MPI_Count)sizeof(run_pair);
        h += 8 + nb;
        if (n == 0)
            continue;
        if (src == c->rank) {
            char *mine = my_data;
            for (MPI_Count i = 0; i < n; mine += p[i++].len) {
                char *at = f->cbuf + (p[i].off - mn);
                if (write)
                    memcpy(at, mine, (size_t)p[i].len);
                else
                    memcpy(mine, at, (size_t)p[i].len);
            }
            continue;
        }
        MPI_Datatype t;
        st = runs_type(f, p, n, mn, &t);
        if (st != LMPI_OK)
            break;
        lmpi_datatype *to = lmpi_datatype_from_handle(t);
        if (write)
            st = lmpi_impl_Recv(f->cbuf, 1, to, src, TAG_DATA, c, MPI_STATUS_IGNORE);
        else
            st = lmpi_impl_Isend(f->cbuf, 1, to, src, TAG_DATA, c, &reqs[nreq++]);
        lmpi_impl_Type_free(&t); /* a pending send keeps its own reference */
    }
    if (nreq) {
        lmpi_status st2 = lmpi_impl_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        if (st == LMPI_OK)
            st = st2;
    }
    if (st == LMPI_OK && write && !*err && lmpi_io_file_io(f, true, f->cbuf, span, mn, &got) != LMPI_OK)
        *err = errno ? errno : EIO;
    return st;
}

static lmpi_status two_phase(lmpi_file *f, bool write, MPI_Count s0, char *stream, MPI_Count bytes,
                             const layout *L, int *err)
{
    lmpi_comm *c = f->comm;
    lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
    int na = f->naggs;
    MPI_Count nrounds = (L->domain + L->cb - 1) / L->cb;
    /* per aggregator: stream cursor, run-list start, window start, window bytes
     * (the file's, allocated at open) */
    MPI_Count *cur = f->agg_state, *runs_at = cur + na, *starts = runs_at + na, *takens = starts + na;
    for (int a = 0; a < na; a++) {
        MPI_Offset ws, we;
        window_of(f, L, a, 0, &ws, &we);
        cur[a] = bytes ? stream_at(f, s0, bytes, ws) : 0;
    }
    lmpi_status st = LMPI_OK;
    int me_agg = -1;
    for (int a = 0; a < na; a++)
        if (f->aggs[a] == c->rank)
            me_agg = a;
    for (MPI_Count r = 0; r < nrounds && st == LMPI_OK; r++) {
        /* 1. my runs for every aggregator's window, then headers (and data) out */
        MPI_Count used = 0;
        int nreq = 0;
        char *my_data = NULL;
        MPI_Count my_nbytes = 0, my_at = 0;
        for (int a = 0; a < na && st == LMPI_OK; a++) {
            MPI_Offset ws, we;
            window_of(f, L, a, r, &ws, &we);
            runs_at[a] = used;
            starts[a] = cur[a];
            takens[a] = 0;
            if (ws < we && bytes)
                st = window_runs(f, s0, bytes, &cur[a], ws, we, &used, &takens[a]);
        }
        for (int a = 0; a < na && st == LMPI_OK; a++) {
            MPI_Offset ws, we;
            window_of(f, L, a, r, &ws, &we);
            if (ws >= we)
                continue;
            MPI_Count nb = (a + 1 < na ? runs_at[a + 1] : used) - runs_at[a];
            /* the data of a window is one piece of the stream */
            char *piece = stream ? stream + starts[a] : NULL;
            if (f->aggs[a] == c->rank) {
                my_nbytes = nb;
                my_at = runs_at[a];
                my_data = piece;
                continue;
            }
            st = lmpi_impl_Isend(f->runs + runs_at[a], nb, byte, f->aggs[a], TAG_RUNS, c, &f->reqs[nreq++]);
            if (st == LMPI_OK && takens[a]) {
                if (write)
                    st = lmpi_impl_Isend(piece, takens[a], byte, f->aggs[a], TAG_DATA, c, &f->reqs[nreq++]);
                else
                    st = lmpi_impl_Irecv(piece, takens[a], byte, f->aggs[a], TAG_DATA, c, &f->reqs[nreq++]);
            }
        }
        /* 2. the aggregator's window */
        if (st == LMPI_OK && me_agg >= 0) {
            MPI_Offset ws, we;
            window_of(f, L, me_agg, r, &ws, &we);
            if (ws < we)
                st = aggregate(f, write, ws, we, f->runs + my_at, my_nbytes, my_data, err);
        }
        /* 3. my messages are through */
        if (nreq) {
            lmpi_status st2 = lmpi_impl_Waitall(nreq, f->reqs, MPI_STATUSES_IGNORE);
            if (st == LMPI_OK)
                st = st2;
        }
    }
    return st;
}

/* A collective fails everywhere or nowhere: the worst status of any rank, or
 * the errno an aggregator met, is everyone's (the detail stays with the rank
 * that saw it).  Every rank calls this exactly once per collective access. */
static lmpi_status agree(lmpi_file *f, bool write, lmpi_status st, int err)
{
    int in[2] = {(int)st, err}, out[2];
    LMPI_TRY(lmpi_impl_Allreduce(in, out, 2, lmpi_datatype_from_handle(MPI_INT), MPI_MAX, f->comm));
    if (st != LMPI_OK)
        return st;
    if (out[1])
        return lmpi_io_errno(out[1], write ? "pwrite" : "pread", f->name);
    if (out[0] != LMPI_OK)
        lmpi_err_detail("another process's part of the collective access to \"%s\" failed", f->name);
    return (lmpi_status)out[0];
}

lmpi_status lmpi_io_stream_all(lmpi_file *f, bool write, lmpi_status local, MPI_Count s0, char *stream,
                               MPI_Count bytes, MPI_Count *moved)
{
    lmpi_comm *c = f->comm;
    *moved = 0;
    if (c->size == 1)
        return local != LMPI_OK ? local : lmpi_io_stream(f, write, s0, stream, bytes, moved);
    if (local != LMPI_OK)
        bytes = 0; /* a rank that failed its checks still takes its part, with nothing */
    int64_t lo = INT64_MAX, hi = 0;
    if (bytes > 0) {
        lo = lmpi_view_offset(&f->view, s0);
        hi = lmpi_view_offset(&f->view, s0 + bytes - 1) + 1;
    }
    /* one run exactly when the span holds nothing but this stream */
    int64_t scattered = bytes > 0 && hi - lo != bytes;
    int64_t in[3] = {lo, -hi, -scattered}, out[3];
    LMPI_TRY(lmpi_impl_Allreduce(in, out, 3, lmpi_datatype_from_handle(MPI_INT64_T), MPI_MIN, c));
    layout L = {.lo = out[0], .hi = -out[1], .cb = f->hints.cb_buffer_size};
    bool any_scattered = out[2] != 0;
    lmpi_hint_mode mode = write ? f->hints.cb_write : f->hints.cb_read;
    if (L.lo >= L.hi || mode == LMPI_HINT_DISABLE || (mode == LMPI_HINT_AUTO && !any_scattered)) {
        lmpi_status st = local != LMPI_OK ? local : lmpi_io_stream(f, write, s0, stream, bytes, moved);
        return agree(f, write, st, 0);
    }
    L.domain = (L.hi - L.lo + f->naggs - 1) / f->naggs;
    int err = 0;
    lmpi_status st = two_phase(f, write, s0, stream, bytes, &L, &err);
    st = agree(f, write, local != LMPI_OK ? local : st, st == LMPI_OK ? err : 0);
    if (st != LMPI_OK || bytes == 0)
        return st;
    if (write) {
        *moved = bytes;
        return LMPI_OK;
    }
    /* reads stop at the end of the file */
    struct stat sb;
    if (fstat(f->fd, &sb) != 0)
        return lmpi_io_errno(errno, "fstat", f->name);
    *moved = hi <= sb.st_size ? bytes : stream_at(f, s0, bytes, sb.st_size);
    return LMPI_OK;
}
