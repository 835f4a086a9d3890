/* Windows: creation in four flavours, the shared segment, free, attributes,
 * info, names, error handlers, shared queries and dynamic attach. */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/random.h>
#include <unistd.h>

#include "binding/gen/impl.h"
#include "ft/ft.h"
#include "rma/win.h"
#include "runtime/config.h"
#include "runtime/request.h"
#include "transport/shm/shm.h"

lmpi_rma_stats lmpi_rma_stat;

lmpi_rma_fence_algo lmpi_rma_fence_algo_now(void)
{
    const char *v = lmpi_config.rma_fence;
    return v && (!strcmp(v, "reduce_scatter") || !strcmp(v, "rs")) ? LMPI_RMA_FENCE_RS : LMPI_RMA_FENCE_BARRIER;
}

lmpi_rma_lock_algo lmpi_rma_lock_algo_now(void)
{
    const char *v = lmpi_config.rma_lock;
    return v && !strcmp(v, "polling") ? LMPI_RMA_LOCK_POLLING : LMPI_RMA_LOCK_MCS;
}

lmpi_rma_issue_algo lmpi_rma_issue_algo_now(void)
{
    const char *v = lmpi_config.rma_issue;
    return v && !strcmp(v, "delayed") ? LMPI_RMA_ISSUE_DELAYED : LMPI_RMA_ISSUE_EAGER;
}

/* ---- handles and errors ------------------------------------------------------- */

lmpi_status lmpi_win_arg(MPI_Win h, lmpi_win **out)
{
    lmpi_win *w = (lmpi_win *)h;
    if (h == MPI_WIN_NULL || (uintptr_t)h < LMPI_PREDEF_LIMIT || w->magic != LMPI_MAGIC_WIN) {
        lmpi_err_detail(h == MPI_WIN_NULL ? "win is MPI_WIN_NULL" : "win is not a window (freed or garbage handle %p)",
                        (void *)h);
        return LMPI_ERR_WIN;
    }
    *out = w;
    return LMPI_OK;
}

lmpi_status lmpi_win_fail(lmpi_win *w, lmpi_status st)
{
    if (st != LMPI_OK && w)
        lmpi_err_blame_object(w->errh, (void *)w);
    return st;
}

lmpi_status lmpi_win_unusable(MPI_Win h, lmpi_win **out)
{
    LMPI_TRY(lmpi_win_arg(h, out));
    if (LMPI_UNLIKELY((*out)->revoked)) {
        lmpi_err_detail("win was revoked (MPIX_Win_revoke); only MPI_Win_free and local queries work on it");
        return lmpi_win_fail(*out, LMPI_ERR_REVOKED);
    }
    return LMPI_OK;
}

lmpi_win_region *lmpi_win_regions(const lmpi_win *w, int r)
{
    return (lmpi_win_region *)((char *)w->seg + w->seg->regions_off) + (size_t)(w->am ? 0 : r) * LMPI_RMA_MAX_REGIONS;
}

bool lmpi_rma_whole(lmpi_win *w)
{
    if (LMPI_LIKELY(!lmpi_ft_active))
        return true;
    lmpi_status st = lmpi_ft_comm_broken(w->comm);
    if (st == LMPI_OK)
        return true;
    if (st == LMPI_ERR_REVOKED)
        lmpi_err_detail("the window was revoked (MPIX_Win_revoke); the synchronization cannot complete");
    else
        lmpi_err_detail("a process of the window's group failed; the synchronization it took part in cannot complete");
    return false;
}

bool lmpi_rma_relax(lmpi_win *w, unsigned *spins)
{
    if (!lmpi_rma_whole(w))
        return false;
    /* what we wait for is a word another process writes: look at it often,
     * poll the transports now and then (others may need our progress) */
    if ((*spins & 15) == 15 && lmpi_progress_poll() > 0) {
        *spins = 0;
        return true;
    }
    lmpi_progress_idle_word(spins);
    return true;
}

/* Sense by generation: the last to arrive resets the count, then moves the
 * generation on; the others spin on the generation's line only. */
lmpi_status lmpi_win_barrier(lmpi_win *w)
{
    lmpi_win_seg *s = w->seg;
    if (w->size == 1)
        return LMPI_OK;
    uint32_t gen = atomic_load_explicit(&s->bar_gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&s->bar_count, 1, memory_order_acq_rel) == (uint32_t)w->size - 1) {
        atomic_store_explicit(&s->bar_count, 0, memory_order_relaxed);
        atomic_store_explicit(&s->bar_gen, gen + 1, memory_order_release);
        lmpi_wait_kick();
        return LMPI_OK;
    }
    unsigned spins = 0;
    while (atomic_load_explicit(&s->bar_gen, memory_order_acquire) == gen)
        LMPI_RMA_WAIT(w, &spins);
    return LMPI_OK;
}

/* ---- info ----------------------------------------------------------------------- */

static bool info_true(const lmpi_info *info, const char *key)
{
    const char *v = info ? lmpi_info_value(info, key) : NULL;
    return v && !strcmp(v, "true");
}

static void apply_info(lmpi_win *w, const lmpi_info *info)
{
    const char *v;
    if (info && (v = lmpi_info_value(info, "no_locks")))
        w->no_locks = !strcmp(v, "true");
    if (info && (v = lmpi_info_value(info, "accumulate_ops")))
        w->acc_same_op = !strcmp(v, "same_op"); /* a promise the window keeps no use of */
    if (info && (v = lmpi_info_value(info, "accumulate_ordering")))
        w->acc_ordering_none = !strcmp(v, "none");
}

/* The info the window uses: every key it knows, with its value. */
static lmpi_status fill_info(lmpi_win *w, lmpi_info *out)
{
    char du[32];
    snprintf(du, sizeof(du), "%ld", (long)w->disp_unit);
    LMPI_TRY(lmpi_info_put(out, "no_locks", w->no_locks ? "true" : "false"));
    LMPI_TRY(lmpi_info_put(out, "accumulate_ordering", w->acc_ordering_none ? "none" : "rar,raw,war,waw"));
    LMPI_TRY(lmpi_info_put(out, "accumulate_ops", w->acc_same_op ? "same_op" : "same_op_no_op"));
    LMPI_TRY(lmpi_info_put(out, "same_size", w->same_size ? "true" : "false"));
    LMPI_TRY(lmpi_info_put(out, "same_disp_unit", w->same_disp ? "true" : "false"));
    LMPI_TRY(lmpi_info_put(out, "mpi_accumulate_granularity", "8"));
    if (w->flavor == MPI_WIN_FLAVOR_SHARED)
        LMPI_TRY(lmpi_info_put(out, "alloc_shared_noncontig",
                          w->seg->stride && (uint64_t)w->win_size != w->seg->stride ? "true" : "false"));
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_set_info(MPI_Win win, MPI_Info info)
{
    lmpi_win *w;
    lmpi_info *in;
    LMPI_TRY(lmpi_win_arg(win, &w));
    lmpi_status st = lmpi_info_arg(info, &in);
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    apply_info(w, in);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    lmpi_info *out = lmpi_info_new();
    if (!out)
        return lmpi_win_fail(w, LMPI_ERR_NO_MEM);
    lmpi_status st = fill_info(w, out);
    if (st != LMPI_OK) {
        lmpi_info_destroy(out);
        return lmpi_win_fail(w, st);
    }
    *info_used = (MPI_Info)out;
    return LMPI_OK;
}

/* ---- creation ------------------------------------------------------------------- */

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static _Atomic uint32_t segments_made;

/* Where the window's segment comes from: a lone member maps anonymous
 * memory; a window without data (create, dynamic) takes a piece of the
 * transport segment's pool when there is room (no file, no mapping: window
 * creation costs a few collectives); otherwise member 0 creates a segment
 * file, the others map it by name, and the name is gone once all have it. */
static lmpi_status map_segment(lmpi_win *w, size_t bytes, bool small)
{
    if (w->size == 1 || w->am) { /* nobody to share with: the heap */
        void *p = NULL;
        if (posix_memalign(&p, 4096, bytes) != 0) {
            lmpi_err_detail("cannot allocate %zu bytes for the window", bytes);
            return LMPI_ERR_NO_MEM;
        }
        memset(p, 0, bytes);
        w->seg = p;
        w->heap = true;
        return LMPI_OK;
    }
    struct {
        uint64_t pool_off;
        char name[56];
    } where = {0, ""};
    int err = 0;
    if (w->rank == 0) {
        if (small)
            where.pool_off = lmpi_shm_pool_alloc(bytes);
        if (where.pool_off)
            ((lmpi_win_seg *)lmpi_shm_at(where.pool_off))->pool_off = where.pool_off;
        if (!where.pool_off) {
            unsigned rnd = 0;
            if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
                rnd = (unsigned)(uintptr_t)&rnd ^ (unsigned)time(NULL); /* unguessable enough without it */
            snprintf(where.name, sizeof(where.name), "/lmpi-win-%d-%u-%08x", (int)getpid(),
                     atomic_fetch_add(&segments_made, 1), rnd);
            int fd = shm_open(where.name, O_CREAT | O_EXCL | O_RDWR, 0600);
            if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
                err = errno;
                if (fd >= 0) {
                    close(fd);
                    shm_unlink(where.name);
                }
                where.name[0] = '\0';
            } else {
                close(fd);
            }
        }
    }
    LMPI_TRY(lmpi_impl_Bcast(&where, sizeof(where), lmpi_datatype_from_handle(MPI_BYTE), 0, w->comm));
    if (where.pool_off) {
        w->seg = lmpi_shm_at(where.pool_off);
        w->pooled = true;
        return LMPI_OK;
    }
    if (!where.name[0]) {
        lmpi_err_detail("cannot create a %zu-byte shared segment for the window: %s", bytes,
                        strerror(err ? err : ENOMEM));
        return LMPI_ERR_NO_MEM;
    }
    void *p = MAP_FAILED;
    int fd = lmpi_shm_open_ours(where.name, bytes, NULL);
    if (fd >= 0) {
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        err = errno;
        close(fd);
    } else {
        err = errno;
    }
    int ok = p != MAP_FAILED, all_ok = 0;
    LMPI_TRY(lmpi_impl_Allreduce(&ok, &all_ok, 1, lmpi_datatype_from_handle(MPI_INT), MPI_MIN, w->comm));
    if (w->rank == 0)
        shm_unlink(where.name);
    if (!all_ok) {
        if (ok)
            munmap(p, bytes);
        lmpi_err_detail("cannot map the window's %zu-byte shared segment: %s", bytes, strerror(err));
        return LMPI_ERR_NO_MEM;
    }
    w->seg = p;
    return LMPI_OK;
}

static void destroy(lmpi_win *w)
{
    if (w->seg && w->pooled) { /* the last member out gives the piece back */
        if (atomic_fetch_sub(&w->seg->attached, 1) == 1)
            lmpi_shm_pool_free(w->seg->pool_off, (size_t)w->seg->bytes);
    } else if (w->seg && w->heap) {
        free(w->seg);
    } else if (w->seg) {
        munmap(w->seg, w->seg->bytes);
    }
    if (w->amst)
        lmpi_rma_am_detach(w);
    if (w->comm) {
        MPI_Comm h = w->comm->handle;
        lmpi_impl_Comm_free(&h);
    }
    lmpi_errhandler_release(w->errh);
    lmpi_free(w->held);
    lmpi_free(w->pool);
    lmpi_free(w->rs_counts);
    lmpi_free(w->attached);
    lmpi_free(w->name);
    lmpi_mem_account(LMPI_MEM_RMA, -w->accounted);
    w->magic = 0;
    lmpi_free(w);
}

static lmpi_status check_args(int flavor, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, lmpi_comm *comm,
                              lmpi_info **in)
{
    if (size < 0) {
        lmpi_err_detail("size %ld is negative", (long)size);
        return LMPI_ERR_SIZE;
    }
    if (disp_unit <= 0) {
        lmpi_err_detail("disp_unit %ld is not positive", (long)disp_unit);
        return LMPI_ERR_DISP;
    }
    if (comm->is_inter) {
        lmpi_err_detail("comm is an intercommunicator (windows need an intracommunicator)");
        return LMPI_ERR_COMM;
    }
    if (flavor == MPI_WIN_FLAVOR_SHARED) {
        int elsewhere;
        if (!lmpi_comm_one_host(comm, &elsewhere)) {
            lmpi_err_detail("comm spans hosts (ranks %d and %d run on different hosts): MPI_Win_allocate_shared "
                            "needs memory every member can load from",
                            comm->rank, elsewhere);
            return LMPI_ERR_RMA_SHARED;
        }
    }
    return lmpi_info_arg(info, in);
}

/* Everything the four flavours share.  BASE is the user's memory (create) or
 * NULL; the segment carries the data when `in_segment`. */
static lmpi_status create(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, lmpi_info *info, lmpi_comm *comm,
                          lmpi_win **out)
{
    lmpi_win *w = lmpi_calloc(1, sizeof(*w), LMPI_MEM_RMA);
    if (!w)
        return LMPI_ERR_NO_MEM;
    w->magic = LMPI_MAGIC_WIN;
    w->flavor = flavor;
    w->errh = lmpi_errhandler_from_handle(MPI_ERRORS_ARE_FATAL);
    lmpi_status st = lmpi_comm_dup_internal(comm, &w->comm);
    if (st != LMPI_OK) {
        destroy(w);
        return st;
    }
    w->comm->owner = w;
    w->revoked = (w->comm->flags & LMPI_COMM_REVOKED) != 0; /* a revoke that came before it was made */
    w->rank = comm->rank;
    w->size = comm->size;
    w->win_size = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
    w->disp_unit = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 1 : disp_unit;
    w->disp_unit_int = (int)w->disp_unit;
    apply_info(w, info);
    int elsewhere;
    /* members on other hosts are reached by messages; every member decides alike */
    w->am = flavor != MPI_WIN_FLAVOR_SHARED && (lmpi_config.rma_messages || info_true(info, "lmpi_rma_messages") ||
                                                 !lmpi_comm_one_host(comm, &elsewhere));
    w->delayed = !w->am && lmpi_rma_issue_algo_now() == LMPI_RMA_ISSUE_DELAYED;
    w->polling = lmpi_rma_lock_algo_now() == LMPI_RMA_LOCK_POLLING;

    /* do sizes and disp units agree?  (declared by info, else detected) */
    int64_t mine[4] = {w->win_size, -(int64_t)w->win_size, w->disp_unit, -(int64_t)w->disp_unit}, agg[4];
    st = lmpi_impl_Allreduce(mine, agg, 4, lmpi_datatype_from_handle(MPI_INT64_T), MPI_MIN, w->comm);
    if (st != LMPI_OK) {
        destroy(w);
        return st;
    }
    w->same_size = agg[0] == -agg[1] || info_true(info, "same_size");
    w->same_disp = agg[2] == -agg[3] || info_true(info, "same_disp_unit");

    bool in_segment = flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED;
    /* MPI_Win_allocate_shared is contiguous unless told otherwise; each
     * member's part then starts where the previous one ends */
    bool contiguous = flavor == MPI_WIN_FLAVOR_SHARED && !info_true(info, "alloc_shared_noncontig");
    size_t unit = contiguous ? 1 : LMPI_RMA_LINE;
    size_t my_bytes = align_up((size_t)w->win_size, unit);
    uint64_t stride = 0, my_off = 0, total = 0;
    int members = w->am ? 1 : w->size; /* in messages, the segment is this member's alone */
    if (in_segment && w->am) {
        stride = total = my_bytes;
    } else if (in_segment) {
        if (w->same_size) {
            stride = my_bytes;
            my_off = (uint64_t)w->rank * stride;
            total = stride * (uint64_t)w->size;
        } else {
            uint64_t b = my_bytes, pre = 0, sum = 0;
            st = lmpi_impl_Exscan(&b, &pre, 1, lmpi_datatype_from_handle(MPI_UINT64_T), MPI_SUM, w->comm);
            if (st == LMPI_OK)
                st = lmpi_impl_Allreduce(&b, &sum, 1, lmpi_datatype_from_handle(MPI_UINT64_T), MPI_SUM, w->comm);
            if (st != LMPI_OK) {
                destroy(w);
                return st;
            }
            my_off = w->rank == 0 ? 0 : pre;
            total = sum;
        }
    }
    size_t head = align_up(sizeof(lmpi_win_seg), LMPI_RMA_LINE);
    size_t slots = (size_t)members * sizeof(lmpi_win_slot);
    size_t regions =
        flavor == MPI_WIN_FLAVOR_DYNAMIC ? (size_t)members * LMPI_RMA_MAX_REGIONS * sizeof(lmpi_win_region) : 0;
    /* data starts on a page: copies into it then share the page offset of
     * page-aligned user buffers, which memcpy moves fastest */
    size_t data_off = align_up(head + slots + regions, in_segment && !w->am ? 4096 : LMPI_RMA_LINE);
    size_t bytes = data_off + (size_t)total;
    st = map_segment(w, bytes, !in_segment && bytes <= 16384);
    if (st != LMPI_OK) {
        destroy(w);
        return st;
    }
    lmpi_win_seg *s = w->seg;
    if (w->rank == 0 || w->am) {
        s->nranks = (uint32_t)members;
        s->bytes = bytes;
        s->slots_off = head;
        s->regions_off = head + slots;
        s->data_off = data_off;
        s->stride = w->same_size ? stride : 0;
        s->magic = LMPI_MAGIC_WIN;
        atomic_store(&s->attached, (uint32_t)members);
    }
    /* the segment is zero; everyone's slot and header are read only after
     * the barrier below */
    w->slots = (lmpi_win_slot *)((char *)s + head);
    w->data = (char *)s + data_off;
    w->shared_data = in_segment && !w->am; /* loads and stores reach every member's data */
    lmpi_win_slot *me = lmpi_win_slot_of(w, w->rank);
    me->size = (uint64_t)w->win_size;
    me->disp_unit = (uint64_t)w->disp_unit;
    me->pid = (int32_t)getpid();
    me->data_off = my_off;
    if (in_segment)
        w->base = w->win_size > 0 || contiguous ? w->data + my_off : NULL;
    else
        w->base = base;
    me->base = (uint64_t)(uintptr_t)w->base;
    if (!w->am && lmpi_rma_fence_algo_now() == LMPI_RMA_FENCE_RS) {
        /* the paper's reduce-scatter fence keeps a count per target */
        w->rs_counts = lmpi_calloc((size_t)w->size, sizeof(uint32_t), LMPI_MEM_RMA);
        if (!w->rs_counts) {
            destroy(w);
            return LMPI_ERR_NO_MEM;
        }
    }
    /* this member's share of the segment: its slot, its region table, its
     * data and its part of the header */
    w->accounted = (int64_t)(sizeof(lmpi_win_slot) + regions / (size_t)members + my_bytes +
                             (data_off - slots - regions) / (size_t)members);
    lmpi_mem_account(LMPI_MEM_RMA, w->accounted);
    if (w->am && (st = lmpi_rma_am_attach(w)) != LMPI_OK) { /* before the barrier: others may address us after it */
        destroy(w);
        return st;
    }
    st = w->am ? lmpi_rma_am_ready(w) : lmpi_impl_Barrier(w->comm);
    if (st != LMPI_OK) {
        destroy(w);
        return st;
    }
    *out = w;
    return LMPI_OK;
}

static lmpi_status create_entry(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                lmpi_comm *comm, void *baseptr, MPI_Win *win)
{
    lmpi_info *in;
    LMPI_TRY(check_args(flavor, size, disp_unit, info, comm, &in));
    if (flavor == MPI_WIN_FLAVOR_CREATE && size > 0 && !base) {
        lmpi_err_detail("base is NULL with size %ld", (long)size);
        return LMPI_ERR_BUFFER;
    }
    lmpi_win *w;
    LMPI_TRY(create(flavor, base, size, disp_unit, in, comm, &w));
    if (baseptr)
        *(void **)baseptr = w->base;
    *win = (MPI_Win)w;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_create(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, lmpi_comm *comm,
                                 MPI_Win *win)
{
    return create_entry(MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win);
}

lmpi_status lmpi_impl_Win_allocate(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, lmpi_comm *comm, void *baseptr,
                                   MPI_Win *win)
{
    if (!baseptr) {
        lmpi_err_detail("baseptr is NULL");
        return LMPI_ERR_ARG;
    }
    return create_entry(MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win);
}

lmpi_status lmpi_impl_Win_allocate_shared(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, lmpi_comm *comm,
                                          void *baseptr, MPI_Win *win)
{
    if (!baseptr) {
        lmpi_err_detail("baseptr is NULL");
        return LMPI_ERR_ARG;
    }
    return create_entry(MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win);
}

lmpi_status lmpi_impl_Win_create_dynamic(MPI_Info info, lmpi_comm *comm, MPI_Win *win)
{
    return create_entry(MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, comm, NULL, win);
}

lmpi_status lmpi_impl_Win_free(MPI_Win *win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(*win, &w));
    /* a revoked window is freed whatever epoch its revoke interrupted */
    if (((w->access != LMPI_EPOCH_NONE && w->access != LMPI_EPOCH_FENCE) || w->exposure || w->nheld) && !w->revoked) {
        lmpi_err_detail("win has an open %s epoch", w->exposure ? "exposure" : "access");
        return lmpi_win_fail(w, LMPI_ERR_RMA_SYNC);
    }
    /* nobody frees until every member is done with everyone's memory; a
     * failure or a revoke does not stop that (src/ft) */
    bool agreed;
    lmpi_status st = lmpi_ft_release_barrier(w->comm, &agreed);
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    st = lmpi_attr_delete_all(&w->attrs, (void *)w, 2);
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    destroy(w);
    *win = MPI_WIN_NULL;
    return LMPI_OK;
}

/* ---- fault tolerance (src/ft) ------------------------------------------------ */

/* Every member's RMA calls on the window but MPI_Win_free and the local
 * queries answer MPIX_ERR_REVOKED from now on; one waiting in a
 * synchronization gives up (the window's private communicator carries
 * the revoke). */
void lmpi_win_mark_revoked(void *win) { ((lmpi_win *)win)->revoked = true; }

lmpi_status lmpi_impl_Win_revoke(MPI_Win win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    return lmpi_win_fail(w, lmpi_impl_Comm_revoke(w->comm));
}

lmpi_status lmpi_impl_Win_get_failed(MPI_Win win, MPI_Group *failedgrp)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    return lmpi_win_fail(w, lmpi_impl_Comm_get_failed(w->comm, failedgrp));
}

/* ---- queries -------------------------------------------------------------------- */

lmpi_status lmpi_impl_Win_get_group(MPI_Win win, MPI_Group *group)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    return lmpi_win_fail(w, lmpi_impl_Comm_group(w->comm, group));
}

lmpi_status lmpi_impl_Win_set_name(MPI_Win win, const char *name)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    if (!name) {
        lmpi_err_detail("win_name is NULL");
        return lmpi_win_fail(w, LMPI_ERR_ARG);
    }
    char *copy = lmpi_malloc(MPI_MAX_OBJECT_NAME, LMPI_MEM_RMA);
    if (!copy)
        return lmpi_win_fail(w, LMPI_ERR_NO_MEM);
    snprintf(copy, MPI_MAX_OBJECT_NAME, "%s", name);
    lmpi_free(w->name);
    w->name = copy;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_get_name(MPI_Win win, char *name, int *resultlen)
{
    if (!name || !resultlen) {
        lmpi_err_detail("%s is NULL", name ? "resultlen" : "win_name");
        return LMPI_ERR_ARG;
    }
    if (win == MPI_WIN_NULL) {
        *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "MPI_WIN_NULL");
        return LMPI_OK;
    }
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", w->name ? w->name : "");
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        lmpi_err_detail("win is a dynamic window (no memory to share)");
        return lmpi_win_fail(w, LMPI_ERR_RMA_FLAVOR);
    }
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size)) {
        lmpi_err_detail("rank %d is not in the window's group of %d", rank, w->size);
        return lmpi_win_fail(w, LMPI_ERR_RANK);
    }
    if (!size || !disp_unit || !baseptr) {
        lmpi_err_detail("%s is NULL", !size ? "size" : !disp_unit ? "disp_unit" : "baseptr");
        return lmpi_win_fail(w, LMPI_ERR_ARG);
    }
    if (w->am) { /* in messages: only this member's own memory is in reach (MPI 4.1: others size 0, NULL) */
        bool mine = rank == w->rank || (rank == MPI_PROC_NULL && w->rank == 0);
        *disp_unit = w->disp_unit;
        *size = mine ? w->win_size : 0;
        *(void **)baseptr = mine ? w->base : NULL;
        return LMPI_OK;
    }
    int r = rank;
    if (r == MPI_PROC_NULL) { /* the first member with memory */
        r = 0;
        while (r < w->size - 1 && w->slots[r].size == 0)
            r++;
    }
    const lmpi_win_slot *s = &w->slots[r];
    *disp_unit = (MPI_Aint)s->disp_unit;
    if (!w->shared_data) { /* MPI 4.1: windows of other flavours answer "not shared" */
        *size = 0;
        *(void **)baseptr = NULL;
        return LMPI_OK;
    }
    *size = (MPI_Aint)s->size;
    *(void **)baseptr = s->size ? w->data + s->data_off : NULL; /* (a segment of 0 bytes: NULL, as MPICH) */
    return LMPI_OK;
}

/* ---- dynamic windows ------------------------------------------------------------ */

/* Write the attached regions into this member's table in the segment,
 * adjacent ones merged and empty ones left out, under the seqlock that
 * origins reading it retry on; false (nothing written) if they do not fit. */
static bool publish_regions(lmpi_win *w)
{
    const lmpi_win_attached *l = w->attached;
    uint32_t n = 0;
    uint64_t end = 0;
    for (uint32_t i = 0; l && i < l->n; i++)
        if (l->r[i].size > 0) {
            n += !(n > 0 && end == l->r[i].base);
            end = l->r[i].base + l->r[i].size;
        }
    if (n > LMPI_RMA_MAX_REGIONS)
        return false;
    lmpi_win_slot *me = lmpi_win_slot_of(w, w->rank);
    lmpi_win_region *t = lmpi_win_regions(w, w->rank);
    atomic_fetch_add_explicit(&me->region_seq, 1, memory_order_acq_rel);
    n = 0;
    for (uint32_t i = 0; l && i < l->n; i++) {
        const lmpi_win_region *a = &l->r[i];
        if (a->size == 0)
            continue;
        if (n > 0 && t[n - 1].base + t[n - 1].size == a->base)
            t[n - 1].size += a->size;
        else
            t[n++] = *a;
    }
    atomic_store_explicit(&me->nregions, n, memory_order_release);
    atomic_fetch_add_explicit(&me->region_seq, 1, memory_order_release);
    return true;
}

lmpi_status lmpi_impl_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        lmpi_err_detail("win was not made by MPI_Win_create_dynamic");
        return lmpi_win_fail(w, LMPI_ERR_RMA_FLAVOR);
    }
    if (size < 0) {
        lmpi_err_detail("size %ld is negative", (long)size);
        return lmpi_win_fail(w, LMPI_ERR_SIZE);
    }
    if (size > 0 && !base) {
        lmpi_err_detail("base is NULL");
        return lmpi_win_fail(w, LMPI_ERR_RMA_ATTACH);
    }
    uint64_t b = (uint64_t)(uintptr_t)base, e = b + (uint64_t)size;
    lmpi_win_attached *l = w->attached;
    for (uint32_t i = 0; l && i < l->n; i++) {
        const lmpi_win_region *t = &l->r[i];
        if (b < t->base + t->size && t->base < e && size > 0) {
            lmpi_err_detail("region [%p, +%ld) overlaps the attached region [%p, +%lu)", base, (long)size,
                            (void *)(uintptr_t)t->base, (unsigned long)t->size);
            return lmpi_win_fail(w, LMPI_ERR_RMA_ATTACH);
        }
    }
    if (!l || l->n == l->cap) {
        uint32_t cap = l ? 2 * l->cap : 16;
        l = lmpi_realloc(l, sizeof(*l) + cap * sizeof(l->r[0]), LMPI_MEM_RMA);
        if (!l)
            return lmpi_win_fail(w, LMPI_ERR_NO_MEM);
        if (!w->attached)
            l->n = 0;
        l->cap = cap;
        w->attached = l;
    }
    /* sorted by base: the segment's table is the same list, adjacent
     * regions merged (an access may span them) */
    uint32_t at = l->n;
    while (at > 0 && l->r[at - 1].base > b) {
        l->r[at] = l->r[at - 1];
        at--;
    }
    l->r[at] = (lmpi_win_region){b, (uint64_t)size};
    l->n++;
    if (!publish_regions(w)) {
        memmove(&l->r[at], &l->r[at + 1], (l->n - at - 1) * sizeof(l->r[0]));
        l->n--;
        publish_regions(w);
        lmpi_err_detail("more than %d separate regions would be attached (the most one process may have; "
                        "adjacent regions count as one)",
                        LMPI_RMA_MAX_REGIONS);
        return lmpi_win_fail(w, LMPI_ERR_RMA_ATTACH);
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_detach(MPI_Win win, const void *base)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        lmpi_err_detail("win was not made by MPI_Win_create_dynamic");
        return lmpi_win_fail(w, LMPI_ERR_RMA_FLAVOR);
    }
    lmpi_win_attached *l = w->attached;
    for (uint32_t i = 0; l && i < l->n; i++)
        if (l->r[i].base == (uint64_t)(uintptr_t)base) {
            memmove(&l->r[i], &l->r[i + 1], (l->n - i - 1) * sizeof(l->r[0]));
            l->n--;
            publish_regions(w); /* fewer entries than before: it fits */
            return LMPI_OK;
        }
    lmpi_err_detail("base %p is not the start of an attached region", base);
    return lmpi_win_fail(w, LMPI_ERR_RMA_ATTACH);
}

/* ---- error handlers ------------------------------------------------------------- */

lmpi_status lmpi_impl_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    lmpi_errhandler *e;
    if (!fn) {
        lmpi_err_detail("win_errhandler_fn is NULL");
        return LMPI_ERR_ARG;
    }
    LMPI_TRY(lmpi_errhandler_new(LMPI_ERRH_USER_WIN, LMPI_MEM_RMA, &e));
    e->win_fn = fn;
    *errhandler = e->handle;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    lmpi_errhandler *e = lmpi_errhandler_from_handle(errhandler);
    if (!lmpi_errhandler_fits(e, LMPI_ERRH_USER_WIN)) {
        lmpi_err_detail("errhandler is not a window error handler (%s)",
                        e && e->kind != LMPI_ERRH_NULL ? lmpi_errhandler_made_for(e) : "MPI_ERRHANDLER_NULL or garbage");
        return lmpi_win_fail(w, LMPI_ERR_ARG);
    }
    lmpi_errhandler_retain(e);
    lmpi_errhandler_release(w->errh);
    w->errh = e;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    lmpi_errhandler_retain(w->errh);
    *errhandler = w->errh->handle;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_call_errhandler(MPI_Win win, int errorcode)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    lmpi_errh_call(w->errh, (void *)w, errorcode, NULL);
    return LMPI_OK;
}

/* ---- attributes ------------------------------------------------------------------ */

/* The predefined attributes point at values the window keeps. */
bool lmpi_win_predefined_attr(MPI_Win win, int keyval, void **out)
{
    static const int unified = MPI_WIN_UNIFIED; /* one copy: loads and stores see RMA at once */
    lmpi_win *w = (lmpi_win *)win;
    switch (keyval) {
    case MPI_WIN_BASE:
        *out = w->base;
        return true;
    case MPI_WIN_SIZE:
        *out = &w->win_size;
        return true;
    case MPI_WIN_DISP_UNIT:
        *out = &w->disp_unit_int;
        return true;
    case MPI_WIN_CREATE_FLAVOR:
        *out = &w->flavor;
        return true;
    case MPI_WIN_MODEL:
        *out = (void *)&unified;
        return true;
    default:
        return false;
    }
}

struct lmpi_attr **lmpi_win_attrs(MPI_Win win) { return &((lmpi_win *)win)->attrs; }

/* DESIGN.md §5: window metadata at most 256 bytes per process at any size
 * when sizes and disp units agree (the object plus its descriptor line). */
_Static_assert(sizeof(lmpi_win) + LMPI_RMA_LINE <= 256, "window metadata over 256 bytes per process");
