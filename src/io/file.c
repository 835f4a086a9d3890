/* MPI-IO files: open, close, delete, sizes, hints, pointers, error handlers
 * (MPI 5.0 §14.2, §14.4.3-4, §14.6-7).
 *
 * Opening is collective: rank 0 creates the file, then the others open it,
 * and one allreduce of errno makes every rank return the same error.  The
 * shared file pointer lives in an 8-byte window at rank 0 of the file's
 * private communicator and moves by MPI_Fetch_and_op, so it needs no lock
 * file and no progress from rank 0. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "ft/ft.h"
#include "io/file.h"

#define DEFAULT_CB_BUFFER (16 << 20)
#define DEFAULT_IND_RD_BUFFER (4 << 20)
#define DEFAULT_IND_WR_BUFFER (512 << 10)

/* MPI_FILE_NULL's handler: the one new files start with (ERRORS_RETURN). */
static lmpi_errhandler *file_null_errh;

static lmpi_errhandler *null_errh(void)
{
    if (!file_null_errh)
        file_null_errh = lmpi_errhandler_from_handle(MPI_ERRORS_RETURN);
    return file_null_errh;
}

lmpi_status lmpi_file_arg(MPI_File h, lmpi_file **out)
{
    lmpi_file *f = (lmpi_file *)h;
    if (h == MPI_FILE_NULL || (uintptr_t)h < LMPI_PREDEF_LIMIT || f->magic != LMPI_MAGIC_FILE) {
        lmpi_err_detail(h == MPI_FILE_NULL ? "fh is MPI_FILE_NULL" : "fh is not a file (closed or garbage handle %p)",
                        (void *)h);
        return LMPI_ERR_FILE;
    }
    *out = f;
    return LMPI_OK;
}

lmpi_status lmpi_file_usable(MPI_File h, lmpi_file **out)
{
    LMPI_TRY(lmpi_file_arg(h, out));
    if (LMPI_UNLIKELY((*out)->comm->flags & LMPI_COMM_REVOKED)) {
        lmpi_err_detail("fh was revoked (MPIX_File_revoke); only MPI_File_close and local queries work on it");
        return LMPI_ERR_REVOKED;
    }
    return LMPI_OK;
}

int lmpi_file_error(const char *fn, const char *arg, lmpi_status st, MPI_File fh)
{
    lmpi_file *f = (uintptr_t)fh < LMPI_PREDEF_LIMIT || ((lmpi_file *)fh)->magic != LMPI_MAGIC_FILE
                       ? NULL
                       : (lmpi_file *)fh;
    char where[96] = "";
    if (f)
        snprintf(where, sizeof(where), "file \"%.80s\"", f->name);
    char msg[MPI_MAX_ERROR_STRING + 600];
    int code = lmpi_error_message(fn, arg, st, f ? where : NULL, msg, sizeof(msg));
    return lmpi_errh_call(f ? f->errh : null_errh(), f ? (void *)fh : (void *)MPI_FILE_NULL, code, msg);
}

lmpi_status lmpi_io_errno(int err, const char *call, const char *name)
{
    lmpi_err_detail("%s \"%s\": %s", call, name, strerror(err));
    switch (err) {
    case ENOENT:
        return LMPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM:
        return LMPI_ERR_ACCESS;
    case EEXIST:
        return LMPI_ERR_FILE_EXISTS;
    case ENOSPC:
    case EFBIG:
        return LMPI_ERR_NO_SPACE;
    case EDQUOT:
        return LMPI_ERR_QUOTA;
    case EROFS:
        return LMPI_ERR_READ_ONLY;
    case EISDIR:
    case ENOTDIR:
    case ENAMETOOLONG:
    case ELOOP:
        return LMPI_ERR_BAD_FILE;
    case ETXTBSY:
        return LMPI_ERR_FILE_IN_USE;
    default:
        return LMPI_ERR_IO;
    }
}

/* ---- hints ------------------------------------------------------------------ */

static lmpi_hint_mode hint_mode(const char *v, lmpi_hint_mode dflt)
{
    if (!v)
        return dflt;
    if (!strcmp(v, "enable") || !strcmp(v, "true"))
        return LMPI_HINT_ENABLE;
    if (!strcmp(v, "disable") || !strcmp(v, "false"))
        return LMPI_HINT_DISABLE;
    if (!strcmp(v, "automatic"))
        return LMPI_HINT_AUTO;
    return dflt;
}

static const char *mode_text(lmpi_hint_mode m)
{
    return m == LMPI_HINT_ENABLE ? "enable" : m == LMPI_HINT_DISABLE ? "disable" : "automatic";
}

static MPI_Count hint_count(const char *v, MPI_Count dflt, MPI_Count min)
{
    if (!v)
        return dflt;
    char *end;
    long long n = strtoll(v, &end, 10);
    return end != v && *end == '\0' && n >= min ? n : dflt;
}

/* Keys we act on; every other key is kept and reported back as given. */
static const char *const acted_keys[] = {"cb_buffer_size",     "cb_nodes",           "romio_cb_read",
                                         "romio_cb_write",     "romio_ds_read",      "romio_ds_write",
                                         "ind_rd_buffer_size", "ind_wr_buffer_size", "collective_buffering"};

static bool acted_key(const char *k)
{
    for (size_t i = 0; i < sizeof(acted_keys) / sizeof(acted_keys[0]); i++)
        if (!strcmp(k, acted_keys[i]))
            return true;
    return false;
}

static lmpi_status apply_hints(lmpi_file *f, const lmpi_info *in)
{
    lmpi_hints *h = &f->hints;
    if (!h->extra) {
        h->extra = lmpi_info_new();
        if (!h->extra)
            return LMPI_ERR_NO_MEM;
        h->cb_buffer_size = DEFAULT_CB_BUFFER;
        h->cb_nodes = f->naggs;
        h->ind_rd_buffer_size = DEFAULT_IND_RD_BUFFER;
        h->ind_wr_buffer_size = DEFAULT_IND_WR_BUFFER;
    }
    if (!in)
        return LMPI_OK;
    h->cb_buffer_size = hint_count(lmpi_info_value(in, "cb_buffer_size"), h->cb_buffer_size, 4096);
    h->cb_nodes = (int)hint_count(lmpi_info_value(in, "cb_nodes"), h->cb_nodes, 1);
    if (h->cb_nodes > f->comm->size)
        h->cb_nodes = f->comm->size;
    lmpi_hint_mode cb = hint_mode(lmpi_info_value(in, "collective_buffering"), LMPI_HINT_AUTO);
    h->cb_read = hint_mode(lmpi_info_value(in, "romio_cb_read"), cb != LMPI_HINT_AUTO ? cb : h->cb_read);
    h->cb_write = hint_mode(lmpi_info_value(in, "romio_cb_write"), cb != LMPI_HINT_AUTO ? cb : h->cb_write);
    h->ds_read = hint_mode(lmpi_info_value(in, "romio_ds_read"), h->ds_read);
    h->ds_write = hint_mode(lmpi_info_value(in, "romio_ds_write"), h->ds_write);
    h->ind_rd_buffer_size = hint_count(lmpi_info_value(in, "ind_rd_buffer_size"), h->ind_rd_buffer_size, 4096);
    h->ind_wr_buffer_size = hint_count(lmpi_info_value(in, "ind_wr_buffer_size"), h->ind_wr_buffer_size, 4096);
    for (lmpi_info_entry *e = in->head; e; e = e->next)
        if (!acted_key(e->key))
            LMPI_TRY(lmpi_info_put(h->extra, e->key, e->value));
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(fh, &f));
    lmpi_info *i = lmpi_info_copy(f->hints.extra);
    if (!i)
        return LMPI_ERR_NO_MEM;
    char v[32];
    const lmpi_hints *h = &f->hints;
    snprintf(v, sizeof(v), "%lld", (long long)h->cb_buffer_size);
    lmpi_status st = lmpi_info_put(i, "cb_buffer_size", v);
    snprintf(v, sizeof(v), "%d", h->cb_nodes);
    if (st == LMPI_OK)
        st = lmpi_info_put(i, "cb_nodes", v);
    const char *modes[][2] = {{"romio_cb_read", mode_text(h->cb_read)},
                              {"romio_cb_write", mode_text(h->cb_write)},
                              {"romio_ds_read", mode_text(h->ds_read)},
                              {"romio_ds_write", mode_text(h->ds_write)}};
    for (int k = 0; k < 4 && st == LMPI_OK; k++)
        st = lmpi_info_put(i, modes[k][0], modes[k][1]);
    snprintf(v, sizeof(v), "%lld", (long long)h->ind_rd_buffer_size);
    if (st == LMPI_OK)
        st = lmpi_info_put(i, "ind_rd_buffer_size", v);
    snprintf(v, sizeof(v), "%lld", (long long)h->ind_wr_buffer_size);
    if (st == LMPI_OK)
        st = lmpi_info_put(i, "ind_wr_buffer_size", v);
    if (st == LMPI_OK)
        st = lmpi_info_put(i, "filename", f->name);
    if (st != LMPI_OK) {
        lmpi_info_destroy(i);
        return st;
    }
    *info_used = (MPI_Info)i;
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_set_info(MPI_File fh, MPI_Info info)
{
    lmpi_file *f;
    lmpi_info *in;
    LMPI_TRY(lmpi_file_usable(fh, &f));
    LMPI_TRY(lmpi_info_arg(info, &in));
    return apply_hints(f, in);
}

/* ---- aggregators --------------------------------------------------------------- */

/* One aggregator per node (the node's first rank), or cb_nodes of them:
 * the k-th rank of every node before the (k+1)-th of any, so extra
 * aggregators spread over the nodes. */
static lmpi_status choose_aggregators(lmpi_file *f, int want)
{
    lmpi_comm *c = f->comm;
    const lmpi_rankmap *m = lmpi_comm_local_map(c);
    int bound = lmpi_comm_node_bound(m);
    int *seen = lmpi_calloc((size_t)bound + 1, sizeof(int), LMPI_MEM_IO);
    int *idx = lmpi_malloc(sizeof(int) * (size_t)c->size, LMPI_MEM_IO);
    if (!seen || !idx) {
        lmpi_free(seen);
        lmpi_free(idx);
        return LMPI_ERR_NO_MEM;
    }
    int nodes = 0;
    for (int r = 0; r < c->size; r++) {
        int node = lmpi_comm_node_of(m, r);
        if (node < 0 || node > bound)
            node = bound;
        if (seen[node] == 0)
            nodes++;
        idx[r] = seen[node]++;
    }
    if (want <= 0)
        want = nodes;
    if (want > c->size)
        want = c->size;
    lmpi_free(f->aggs);
    f->aggs = lmpi_malloc(sizeof(int) * (size_t)want, LMPI_MEM_IO);
    if (!f->aggs) {
        lmpi_free(seen);
        lmpi_free(idx);
        return LMPI_ERR_NO_MEM;
    }
    int n = 0;
    for (int k = 0; n < want; k++)
        for (int r = 0; r < c->size && n < want; r++)
            if (idx[r] == k)
                f->aggs[n++] = r;
    /* file domains go to aggregators in rank order */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && f->aggs[j - 1] > f->aggs[j]; j--) {
            int t = f->aggs[j];
            f->aggs[j] = f->aggs[j - 1];
            f->aggs[j - 1] = t;
        }
    f->naggs = n;
    lmpi_free(seen);
    lmpi_free(idx);
    return LMPI_OK;
}

/* ---- open / close / delete ---------------------------------------------------- */

static lmpi_status check_amode(int amode, const char *name)
{
    int access = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_RDWR) + !!(amode & MPI_MODE_WRONLY);
    const int known = MPI_MODE_APPEND | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_EXCL |
                      MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL | MPI_MODE_UNIQUE_OPEN |
                      MPI_MODE_WRONLY;
    if (access != 1)
        lmpi_err_detail("amode 0x%x has %s of MPI_MODE_RDONLY, MPI_MODE_RDWR, MPI_MODE_WRONLY", (unsigned)amode,
                        access ? "more than one" : "none");
    else if (amode & ~known)
        lmpi_err_detail("amode 0x%x has bits that are not MPI_MODE_* file modes", (unsigned)amode);
    else if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        lmpi_err_detail("amode 0x%x combines MPI_MODE_RDONLY with MPI_MODE_%s", (unsigned)amode,
                        amode & MPI_MODE_CREATE ? "CREATE" : "EXCL");
    else if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        lmpi_err_detail("amode 0x%x combines MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL", (unsigned)amode);
    else
        return LMPI_OK;
    /* the detail names the file too */
    char d[512];
    lmpi_err_detail_get(d, sizeof(d));
    lmpi_err_detail("%s (opening \"%.200s\")", d, name);
    return LMPI_ERR_AMODE;
}

/* ROMIO accepts "fstype:path" (ufs:, nfs:, ...): the prefix names a driver. */
static const char *strip_prefix(const char *name)
{
    static const char *const prefixes[] = {"ufs:", "nfs:", "lustre:", "gpfs:", "pvfs2:", "testfs:", "tmpfs:"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return name + strlen(prefixes[i]);
    return name;
}

static void file_destroy(lmpi_file *f)
{
    if (f->shared_win != MPI_WIN_NULL) {
        lmpi_impl_Win_unlock_all(f->shared_win);
        lmpi_impl_Win_free(&f->shared_win);
    }
    if (f->shared_fd >= 0)
        close(f->shared_fd);
    if (f->shared_path && f->comm && f->comm->rank == 0)
        unlink(f->shared_path);
    lmpi_free(f->shared_path);
    if (f->fd >= 0)
        close(f->fd);
    if (f->comm) {
        MPI_Comm h = f->comm->handle;
        lmpi_impl_Comm_free(&h);
    }
    lmpi_view_clear(&f->view);
    if (f->hints.extra)
        lmpi_info_destroy(f->hints.extra);
    if (f->errh)
        lmpi_errhandler_release(f->errh);
    lmpi_free(f->aggs);
    lmpi_free(f->reqs);
    lmpi_free(f->agg_state);
    lmpi_free(f->cbuf);
    lmpi_free(f->hdr);
    lmpi_free(f->stage);
    lmpi_free(f->runs);
    lmpi_free(f->name);
    f->magic = 0;
    lmpi_free(f);
}

/* The same errno everywhere: the largest any rank saw (0: none). */
static lmpi_status agree_errno(lmpi_comm *c, int *err)
{
    if (c->size == 1)
        return LMPI_OK;
    int mine = *err;
    return lmpi_impl_Allreduce(&mine, err, 1, lmpi_datatype_from_handle(MPI_INT), MPI_MAX, c);
}

static int open_flags(int amode)
{
    int fl = O_CLOEXEC;
    if (amode & MPI_MODE_RDONLY)
        fl |= O_RDONLY;
    else
        fl |= O_RDWR; /* even for WRONLY: data sieving reads before it writes */
    return fl;
}

static int open_fd(const char *path, int amode, bool create, mode_t perm)
{
    int fl = open_flags(amode);
    if (create)
        fl |= O_CREAT | (amode & MPI_MODE_EXCL ? O_EXCL : 0);
    int fd = open(path, fl, perm);
    if (fd < 0 && errno == EACCES && (amode & MPI_MODE_WRONLY))
        fd = open(path, (fl & ~O_RDWR) | O_WRONLY, perm);
    return fd;
}

/* Across hosts the shared pointer is 8 bytes in a side file next to the
 * file (".NAME.shfp-<random>", made by rank 0), read and written under an
 * fcntl lock: shared file systems (NFS, Lustre) lock across hosts.  A
 * directory nobody may write leaves the file without a shared pointer: its
 * operations fail when used. */
static lmpi_status open_shared_file(lmpi_file *f, const char *path)
{
    lmpi_comm *c = f->comm;
    char side[4096] = "";
    if (c->rank == 0) {
        const char *slash = strrchr(path, '/');
        size_t dir = slash ? (size_t)(slash - path + 1) : 0;
        unsigned char rnd[8] = {0};
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
            memset(rnd, 0, sizeof(rnd));
        int k = snprintf(side, sizeof(side), "%.*s.%s.shfp-", (int)dir, path, path + dir);
        for (size_t i = 0; i < sizeof(rnd) && k > 0 && (size_t)k + 3 < sizeof(side); i++)
            k += snprintf(side + k, sizeof(side) - (size_t)k, "%02x", rnd[i]);
        int fd = open(side, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
        MPI_Offset zero = 0;
        if (fd < 0 || pwrite(fd, &zero, sizeof(zero), 0) != (ssize_t)sizeof(zero))
            side[0] = '\0';
        if (fd >= 0)
            close(fd);
    }
    LMPI_TRY(lmpi_impl_Bcast(side, (MPI_Count)sizeof(side), lmpi_datatype_from_handle(MPI_CHAR), 0, c));
    if (!side[0])
        return LMPI_OK;
    f->shared_fd = open(side, O_RDWR | O_CLOEXEC);
    size_t len = strlen(side) + 1;
    if (c->rank == 0 && (f->shared_path = lmpi_malloc(len, LMPI_MEM_IO)))
        memcpy(f->shared_path, side, len);
    return LMPI_OK;
}

/* The side file's pointer: *old, then v (MPI_REPLACE) or old + v. */
static lmpi_status shared_file_op(lmpi_file *f, MPI_Offset v, MPI_Op op, MPI_Offset *old)
{
    struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = sizeof(MPI_Offset)};
    int rc;
    while ((rc = fcntl(f->shared_fd, F_SETLKW, &l)) != 0 && errno == EINTR)
        ;
    MPI_Offset now = 0, next;
    bool ok = rc == 0 && pread(f->shared_fd, &now, sizeof(now), 0) == (ssize_t)sizeof(now);
    next = op == MPI_REPLACE ? v : now + v;
    ok = ok && pwrite(f->shared_fd, &next, sizeof(next), 0) == (ssize_t)sizeof(next);
    int err = errno;
    l.l_type = F_UNLCK;
    fcntl(f->shared_fd, F_SETLK, &l);
    if (!ok)
        return lmpi_io_errno(err, "update the shared file pointer of", f->name);
    *old = now;
    return LMPI_OK;
}

static lmpi_status shared_op(lmpi_file *f, MPI_Offset v, MPI_Op op, MPI_Offset *old);

static lmpi_status open_file(lmpi_comm *comm, const char *filename, int amode, lmpi_info *in, lmpi_file **out)
{
    lmpi_file *f = lmpi_calloc(1, sizeof(*f), LMPI_MEM_IO);
    if (!f)
        return LMPI_ERR_NO_MEM;
    f->magic = LMPI_MAGIC_FILE;
    f->fd = -1;
    f->shared_fd = -1;
    f->shared_win = MPI_WIN_NULL;
    f->amode = amode;
    lmpi_view_default(&f->view);
    size_t nlen = strlen(filename) + 1;
    f->name = lmpi_malloc(nlen, LMPI_MEM_IO);
    if (f->name)
        memcpy(f->name, filename, nlen);
    lmpi_status st = f->name ? lmpi_comm_dup_internal(comm, &f->comm) : LMPI_ERR_NO_MEM;
    if (st != LMPI_OK) {
        file_destroy(f);
        return st;
    }
    lmpi_comm *c = f->comm;
    /* every rank must give the same, valid amode: a rank's own error is
     * everyone's (nobody goes on to the collective steps alone) */
    lmpi_status mine = check_amode(amode, filename);
    int mm[3] = {amode, -amode, -(int)mine}, agg[3] = {mm[0], mm[1], mm[2]};
    if (c->size > 1)
        st = lmpi_impl_Allreduce(mm, agg, 3, lmpi_datatype_from_handle(MPI_INT), MPI_MIN, c);
    if (st == LMPI_OK && (mine != LMPI_OK || agg[2] != 0)) {
        if (mine == LMPI_OK)
            lmpi_err_detail("another process's amode for \"%s\" is not valid", filename);
        st = mine != LMPI_OK ? mine : (lmpi_status)-agg[2];
    } else if (st == LMPI_OK && agg[0] != -agg[1]) {
        lmpi_err_detail("amode differs between the processes (0x%x and 0x%x) for \"%s\"", (unsigned)agg[0],
                        (unsigned)-agg[1], filename);
        st = LMPI_ERR_AMODE;
    }
    if (st == LMPI_OK)
        st = choose_aggregators(f, 0);
    if (st == LMPI_OK)
        st = apply_hints(f, NULL);
    if (st == LMPI_OK && in) {
        st = apply_hints(f, in);
        if (st == LMPI_OK && f->hints.cb_nodes != f->naggs)
            st = choose_aggregators(f, f->hints.cb_nodes);
        f->hints.cb_nodes = f->naggs;
    }
    if (st != LMPI_OK) {
        file_destroy(f);
        return st;
    }
    mode_t perm = 0666;
    const char *fp = in ? lmpi_info_value(in, "file_perm") : NULL;
    if (fp)
        perm = (mode_t)strtol(fp, NULL, 8) & 07777;
    const char *path = strip_prefix(filename);
    /* rank 0 creates, then the others open what it made */
    int err = 0;
    if (c->rank == 0) {
        f->fd = open_fd(path, amode, amode & MPI_MODE_CREATE, perm);
        err = f->fd < 0 ? errno : 0;
    }
    if (c->size > 1)
        st = lmpi_impl_Bcast(&err, 1, lmpi_datatype_from_handle(MPI_INT), 0, c);
    if (st == LMPI_OK && !err && c->rank != 0) {
        f->fd = open_fd(path, amode, false, perm);
        err = f->fd < 0 ? errno : 0;
    }
    if (st == LMPI_OK)
        st = agree_errno(c, &err);
    if (st == LMPI_OK && err)
        st = lmpi_io_errno(err, "open", filename);
    if (f->fd >= 0)
        f->readable = (fcntl(f->fd, F_GETFL) & O_ACCMODE) != O_WRONLY;
    f->reqs = lmpi_malloc(sizeof(MPI_Request) * (size_t)(c->size + 2 * f->naggs), LMPI_MEM_IO);
    f->agg_state = lmpi_malloc(sizeof(MPI_Count) * 4 * (size_t)f->naggs, LMPI_MEM_IO);
    if (st == LMPI_OK && (!f->reqs || !f->agg_state))
        st = LMPI_ERR_NO_MEM;
    /* the shared file pointer: 8 bytes in a window at rank 0 on one host,
     * a locked side file (as ROMIO does) across hosts */
    int elsewhere;
    if (st == LMPI_OK && c->size > 1 && !lmpi_comm_one_host(c, &elsewhere))
        st = open_shared_file(f, path);
    else if (st == LMPI_OK && c->size > 1) {
        void *base = NULL;
        st = lmpi_impl_Win_allocate(c->rank == 0 ? (MPI_Aint)sizeof(MPI_Offset) : 0, 1, MPI_INFO_NULL, c, &base,
                                    &f->shared_win);
        if (st == LMPI_OK && c->rank == 0)
            memset(base, 0, sizeof(MPI_Offset));
        if (st == LMPI_OK)
            st = lmpi_impl_Barrier(c);
        if (st == LMPI_OK)
            st = lmpi_impl_Win_lock_all(MPI_MODE_NOCHECK, f->shared_win);
    }
    if (st == LMPI_OK && (amode & MPI_MODE_APPEND)) {
        struct stat sb;
        if (fstat(f->fd, &sb) == 0) {
            f->fp = sb.st_size;
            f->shared_local = sb.st_size;
            if (c->rank == 0 && (f->shared_win != MPI_WIN_NULL || f->shared_fd >= 0)) {
                MPI_Offset old;
                st = shared_op(f, sb.st_size, MPI_REPLACE, &old);
            }
            if (st == LMPI_OK && c->size > 1)
                st = lmpi_impl_Barrier(c);
        }
    }
    if (st != LMPI_OK) {
        file_destroy(f);
        return st;
    }
    f->errh = null_errh();
    lmpi_errhandler_retain(f->errh);
    *out = f;
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_open(lmpi_comm *comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    lmpi_info *in;
    if (comm->is_inter) {
        lmpi_err_detail("comm is an intercommunicator (files need an intracommunicator)");
        return LMPI_ERR_COMM;
    }
    if (!filename || !filename[0]) {
        lmpi_err_detail("filename is %s", filename ? "empty" : "NULL");
        return LMPI_ERR_BAD_FILE;
    }
    LMPI_TRY(lmpi_info_arg(info, &in));
    lmpi_file *f;
    LMPI_TRY(open_file(comm, filename, amode, in, &f));
    *fh = (MPI_File)f;
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_close(MPI_File *fh)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(*fh, &f));
    /* everyone's writes are in before anyone deletes; a failure or a revoke
     * does not stop that (src/ft) */
    bool agreed;
    lmpi_status st = lmpi_ft_release_barrier(f->comm, &agreed);
    if (st == LMPI_OK && f->split.active) {
        /* closed all the same (the collective part is done): said, not hidden */
        lmpi_err_detail("a split collective (%s_begin) was still open on \"%s\"; its _end was never called",
                        f->split.write ? "write" : "read", f->name);
        st = LMPI_ERR_OTHER;
    }
    if (agreed && (f->amode & MPI_MODE_DELETE_ON_CLOSE)) {
        /* the group met in an agreement (--with-ft ulfm, or a revoke):
         * member 0 may be gone, so each survivor deletes it (the first one
         * does, the others find it gone), and it is gone when any close
         * returns */
        unlink(strip_prefix(f->name));
    } else if (st == LMPI_OK && (f->amode & MPI_MODE_DELETE_ON_CLOSE)) {
        if (f->comm->rank == 0)
            unlink(strip_prefix(f->name));
        /* gone for everyone when close returns (another host may look at once) */
        if (f->comm->size > 1)
            st = lmpi_impl_Barrier(f->comm);
    }
    file_destroy(f);
    *fh = MPI_FILE_NULL;
    return st;
}

/* Every member's operations on the file but MPI_File_close and the local
 * queries answer MPIX_ERR_REVOKED from now on; one waiting in a collective
 * gives up (the file's private communicator carries the revoke). */
lmpi_status lmpi_impl_File_revoke(MPI_File fh)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(fh, &f));
    return lmpi_impl_Comm_revoke(f->comm);
}

lmpi_status lmpi_impl_File_delete(const char *filename, MPI_Info info)
{
    lmpi_info *in;
    if (!filename || !filename[0]) {
        lmpi_err_detail("filename is %s", filename ? "empty" : "NULL");
        return LMPI_ERR_BAD_FILE;
    }
    LMPI_TRY(lmpi_info_arg(info, &in));
    if (unlink(strip_prefix(filename)) != 0)
        return lmpi_io_errno(errno, "unlink", filename);
    return LMPI_OK;
}

/* ---- sizes ----------------------------------------------------------------- */

lmpi_status lmpi_impl_File_get_size(MPI_File fh, MPI_Offset *size)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(fh, &f));
    struct stat sb;
    if (fstat(f->fd, &sb) != 0)
        return lmpi_io_errno(errno, "fstat", f->name);
    *size = sb.st_size;
    return LMPI_OK;
}

/* Collective steps after local checks: every rank learns the worst status
 * (so nobody goes on alone), which also orders everyone's earlier accesses
 * before what follows. */
static lmpi_status agree_status(lmpi_file *f, lmpi_status mine)
{
    int in = (int)mine, out = in;
    if (f->comm->size > 1)
        LMPI_TRY(lmpi_impl_Allreduce(&in, &out, 1, lmpi_datatype_from_handle(MPI_INT), MPI_MAX, f->comm));
    if (mine == LMPI_OK && out != LMPI_OK)
        lmpi_err_detail("another process's arguments for \"%s\" were not valid", f->name);
    return mine != LMPI_OK ? mine : (lmpi_status)out;
}

static lmpi_status resize(lmpi_file *f, MPI_Offset size, bool grow_only)
{
    lmpi_status mine = LMPI_OK;
    if (size < 0) {
        lmpi_err_detail("size %lld is negative", (long long)size);
        mine = LMPI_ERR_ARG;
    } else if (f->amode & MPI_MODE_RDONLY) {
        lmpi_err_detail("\"%s\" is open MPI_MODE_RDONLY", f->name);
        mine = LMPI_ERR_READ_ONLY;
    } else if (f->amode & MPI_MODE_SEQUENTIAL) {
        lmpi_err_detail("\"%s\" is open MPI_MODE_SEQUENTIAL", f->name);
        mine = LMPI_ERR_UNSUPPORTED_OPERATION;
    }
    /* also: nobody's earlier access meets the new size half-way */
    LMPI_TRY(agree_status(f, mine));
    int err = 0;
    if (f->comm->rank == 0) {
        struct stat sb;
        if (fstat(f->fd, &sb) != 0)
            err = errno;
        else if (!grow_only && ftruncate(f->fd, size) != 0)
            err = errno;
        else if (grow_only && size > sb.st_size) {
            /* posix_fallocate returns the error, it does not set errno */
            int rc = posix_fallocate(f->fd, 0, size);
            if (rc == EOPNOTSUPP || rc == EINVAL)
                rc = ftruncate(f->fd, size) != 0 ? errno : 0;
            err = rc;
        }
    }
    LMPI_TRY(agree_errno(f->comm, &err));
    if (err)
        return lmpi_io_errno(err, grow_only ? "preallocate" : "ftruncate", f->name);
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_set_size(MPI_File fh, MPI_Offset size)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_usable(fh, &f));
    return resize(f, size, false);
}

lmpi_status lmpi_impl_File_preallocate(MPI_File fh, MPI_Offset size)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_usable(fh, &f));
    return resize(f, size, true);
}

lmpi_status lmpi_impl_File_sync(MPI_File fh)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_usable(fh, &f));
    int err = fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS ? errno : 0;
    LMPI_TRY(agree_errno(f->comm, &err));
    if (err)
        return lmpi_io_errno(err, "fsync", f->name);
    return LMPI_OK;
}

/* ---- simple queries ------------------------------------------------------------ */

lmpi_status lmpi_impl_File_get_group(MPI_File fh, MPI_Group *group)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(fh, &f));
    return lmpi_impl_Comm_group(f->comm, group);
}

lmpi_status lmpi_impl_File_get_amode(MPI_File fh, int *amode)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(fh, &f));
    *amode = f->amode;
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_set_atomicity(MPI_File fh, int flag)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_usable(fh, &f));
    int mm[2] = {!!flag, -!!flag}, agg[2] = {mm[0], mm[1]};
    if (f->comm->size > 1)
        LMPI_TRY(lmpi_impl_Allreduce(mm, agg, 2, lmpi_datatype_from_handle(MPI_INT), MPI_MIN, f->comm));
    if (agg[0] != -agg[1]) {
        lmpi_err_detail("flag differs between the processes of \"%s\"", f->name);
        return LMPI_ERR_ARG;
    }
    f->atomic = flag != 0;
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_get_atomicity(MPI_File fh, int *flag)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(fh, &f));
    *flag = f->atomic;
    return LMPI_OK;
}

/* ---- views and pointers ------------------------------------------------------------ */

static lmpi_status shared_op(lmpi_file *f, MPI_Offset v, MPI_Op op, MPI_Offset *old)
{
    if (f->shared_fd >= 0)
        return shared_file_op(f, v, op, old);
    if (f->shared_win == MPI_WIN_NULL && f->comm->size > 1) {
        lmpi_err_detail("no shared file pointer for \"%s\": its processes run on several hosts and the "
                        "side file that holds it could not be made next to it",
                        f->name);
        return LMPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (f->shared_win == MPI_WIN_NULL) {
        *old = f->shared_local;
        f->shared_local = op == MPI_REPLACE ? v : f->shared_local + v;
        return LMPI_OK;
    }
    LMPI_TRY(lmpi_impl_Fetch_and_op(&v, old, lmpi_datatype_from_handle(MPI_INT64_T), 0, 0, op, f->shared_win));
    return lmpi_impl_Win_flush(0, f->shared_win);
}

/* Take n etypes of the shared pointer: *at is where they start. */
lmpi_status lmpi_file_shared_take(lmpi_file *f, MPI_Offset n, MPI_Offset *at)
{
    return shared_op(f, n, MPI_SUM, at);
}

/* Collective: every rank sets the shared pointer to v (rank 0 does it). */
lmpi_status lmpi_file_shared_set(lmpi_file *f, MPI_Offset v)
{
    MPI_Offset old;
    if (f->comm->rank == 0 && (f->shared_win != MPI_WIN_NULL || f->shared_fd >= 0 || f->comm->size == 1))
        LMPI_TRY(shared_op(f, v, MPI_REPLACE, &old));
    return f->comm->size > 1 ? lmpi_impl_Barrier(f->comm) : LMPI_OK;
}

lmpi_status lmpi_impl_File_set_view(MPI_File fh, MPI_Offset disp, lmpi_datatype *etype, lmpi_datatype *filetype,
                                    const char *datarep, MPI_Info info)
{
    lmpi_file *f;
    lmpi_info *in;
    LMPI_TRY(lmpi_file_usable(fh, &f));
    lmpi_status st = lmpi_info_arg(info, &in);
    lmpi_view v;
    memset(&v, 0, sizeof(v));
    if (st != LMPI_OK) {
    } else if (disp == MPI_DISPLACEMENT_CURRENT && !(f->amode & MPI_MODE_SEQUENTIAL)) {
        lmpi_err_detail("MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL");
        st = LMPI_ERR_ARG;
    } else if (disp != MPI_DISPLACEMENT_CURRENT && disp < 0) {
        lmpi_err_detail("disp %lld is negative", (long long)disp);
        st = LMPI_ERR_ARG;
    } else if (f->split.active) {
        lmpi_err_detail("a split collective is open on \"%s\"", f->name);
        st = LMPI_ERR_OTHER;
    }
    if (st == LMPI_OK && disp == MPI_DISPLACEMENT_CURRENT) {
        MPI_Offset at;
        st = shared_op(f, 0, MPI_SUM, &at);
        disp = f->view.disp + at * f->view.esize;
    }
    if (st == LMPI_OK)
        st = lmpi_view_build(&v, disp, etype, filetype, datarep, !(f->amode & MPI_MODE_RDONLY));
    /* collective: one rank's bad view fails it everywhere */
    lmpi_status all = agree_status(f, st);
    if (all != LMPI_OK) {
        if (st == LMPI_OK)
            lmpi_view_clear(&v);
        return all;
    }
    lmpi_view_clear(&f->view);
    f->view = v;
    f->fp = 0;
    if (in)
        LMPI_TRY(apply_hints(f, in));
    /* set_view is collective and resets the shared pointer too */
    return lmpi_file_shared_set(f, 0);
}

/* Where a seek lands, in etypes; SEEK_END counts from the view position of
 * the end of the file. */
lmpi_status lmpi_file_seek_target(lmpi_file *f, MPI_Offset cur, MPI_Offset offset, int whence, MPI_Offset *out)
{
    MPI_Offset base;
    if (whence == MPI_SEEK_SET)
        base = 0;
    else if (whence == MPI_SEEK_CUR)
        base = cur;
    else if (whence == MPI_SEEK_END) {
        struct stat sb;
        if (fstat(f->fd, &sb) != 0)
            return lmpi_io_errno(errno, "fstat", f->name);
        /* the first stream byte at or past the end, in whole etypes */
        MPI_Count lo = 0, hi = 1;
        while (lmpi_view_offset(&f->view, hi * f->view.esize) < sb.st_size && hi < ((MPI_Count)1 << 60))
            hi *= 2;
        while (lo < hi) {
            MPI_Count mid = lo + (hi - lo) / 2;
            if (lmpi_view_offset(&f->view, mid * f->view.esize) < sb.st_size)
                lo = mid + 1;
            else
                hi = mid;
        }
        base = lo;
    } else {
        lmpi_err_detail("whence %d is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END", whence);
        return LMPI_ERR_ARG;
    }
    if (base + offset < 0) {
        lmpi_err_detail("the seek lands at %lld, before the start of the view", (long long)(base + offset));
        return LMPI_ERR_ARG;
    }
    *out = base + offset;
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(fh, &f));
    if (f->amode & MPI_MODE_SEQUENTIAL) {
        lmpi_err_detail("\"%s\" is open MPI_MODE_SEQUENTIAL (individual pointers are not allowed)", f->name);
        return LMPI_ERR_UNSUPPORTED_OPERATION;
    }
    return lmpi_file_seek_target(f, f->fp, offset, whence, &f->fp);
}

lmpi_status lmpi_impl_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(fh, &f));
    *offset = f->fp;
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_usable(fh, &f));
    /* collective: every rank must ask for the same place */
    MPI_Offset cur, to;
    LMPI_TRY(shared_op(f, 0, MPI_SUM, &cur));
    lmpi_status st = lmpi_file_seek_target(f, cur, offset, whence, &to);
    int64_t mm[2] = {st == LMPI_OK ? to : -1, st == LMPI_OK ? -to : 1}, agg[2] = {mm[0], mm[1]};
    if (f->comm->size > 1) {
        /* everyone read the pointer before anyone moves it */
        LMPI_TRY(lmpi_impl_Allreduce(mm, agg, 2, lmpi_datatype_from_handle(MPI_INT64_T), MPI_MIN, f->comm));
    }
    if (st != LMPI_OK)
        return st;
    if (agg[0] != -agg[1]) {
        lmpi_err_detail("the processes seek the shared pointer of \"%s\" to different places", f->name);
        return LMPI_ERR_ARG;
    }
    return lmpi_file_shared_set(f, to);
}

lmpi_status lmpi_impl_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(fh, &f));
    return shared_op(f, 0, MPI_SUM, offset);
}

/* ---- error handlers --------------------------------------------------------------- */

lmpi_status lmpi_impl_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    lmpi_errhandler *e;
    if (!fn) {
        lmpi_err_detail("file_errhandler_fn is NULL");
        return LMPI_ERR_ARG;
    }
    LMPI_TRY(lmpi_errhandler_new(LMPI_ERRH_USER_FILE, LMPI_MEM_IO, &e));
    e->file_fn = fn;
    *errhandler = e->handle;
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    lmpi_file *f = NULL;
    if (file != MPI_FILE_NULL)
        LMPI_TRY(lmpi_file_arg(file, &f));
    lmpi_errhandler *e = lmpi_errhandler_from_handle(errhandler);
    if (!lmpi_errhandler_fits(e, LMPI_ERRH_USER_FILE)) {
        lmpi_err_detail("errhandler is not a file error handler (%s)",
                        e && e->kind != LMPI_ERRH_NULL ? lmpi_errhandler_made_for(e) : "MPI_ERRHANDLER_NULL or garbage");
        return LMPI_ERR_ARG;
    }
    lmpi_errhandler **slot = f ? &f->errh : &file_null_errh;
    lmpi_errhandler_retain(e);
    if (*slot)
        lmpi_errhandler_release(*slot);
    *slot = e;
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    lmpi_file *f = NULL;
    if (file != MPI_FILE_NULL)
        LMPI_TRY(lmpi_file_arg(file, &f));
    lmpi_errhandler *e = f ? f->errh : null_errh();
    lmpi_errhandler_retain(e);
    *errhandler = e->handle;
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_call_errhandler(MPI_File fh, int errorcode)
{
    lmpi_file *f = NULL;
    if (fh != MPI_FILE_NULL)
        LMPI_TRY(lmpi_file_arg(fh, &f));
    lmpi_errh_call(f ? f->errh : null_errh(), (void *)fh, errorcode, NULL);
    return LMPI_OK;
}

/* Finalize: the handler set on MPI_FILE_NULL and the registered datareps go. */
void lmpi_io_finalize(void)
{
    if (file_null_errh)
        lmpi_errhandler_release(file_null_errh);
    file_null_errh = NULL;
    lmpi_datarep_finalize();
}
