/* Data movement: put, get, accumulate, get_accumulate, fetch_and_op,
 * compare_and_swap and their request forms, with derived datatypes at both
 * ends.  A target in the window's segment is reached with loads, stores and
 * CPU atomics; a target's own memory (Win_create, dynamic) with
 * process_vm_readv/writev.  Nothing waits for the target to call MPI.
 *
 * Accumulates are element-wise atomic: elements of 1, 2, 4 or 8 bytes in the
 * segment are updated with CPU atomics (fetch-add and friends, else a CAS
 * loop around the reduction kernel); anything else (long double, pair types,
 * windows over user memory) takes the target's accumulate mutex, one per
 * target and never window-wide.  Which path a (type, window) takes never
 * depends on the layout, so two accumulates on one element always agree. */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "binding/check.h"
#include "rma/win.h"
#include "runtime/config.h"
#include "runtime/request.h"

#define IOV_CHUNK 64
#define STACK_BYTES 256

/* Where an operation's target data is: an address here, or one in process pid. */
typedef struct {
    char *addr; /* displacement applied, before the target type's offsets */
    pid_t pid;  /* 0: addr is ours */
} target_ref;

/* ---- target address and range ----------------------------------------------- */

static void span_of(MPI_Count count, const lmpi_datatype *dt, MPI_Aint *lo, MPI_Aint *hi)
{
    MPI_Aint a = dt->true_lb, b = (MPI_Aint)(count - 1) * dt->extent + dt->true_lb;
    *lo = a < b ? a : b;
    *hi = (a < b ? b : a) + dt->true_extent;
}

static bool dynamic_covers(const lmpi_win *w, int t, uint64_t lo, uint64_t hi)
{
    const lmpi_win_slot *s = lmpi_win_slot_of(w, t);
    const lmpi_win_region *r = lmpi_win_regions(w, t);
    for (;;) {
        uint32_t seq = atomic_load_explicit(&((lmpi_win_slot *)s)->region_seq, memory_order_acquire);
        if (seq & 1)
            continue;
        uint32_t n = atomic_load_explicit(&((lmpi_win_slot *)s)->nregions, memory_order_acquire);
        bool ok = lmpi_win_regions_cover(r, n, lo, hi);
        if (atomic_load_explicit(&((lmpi_win_slot *)s)->region_seq, memory_order_acquire) == seq)
            return ok;
    }
}

static lmpi_status resolve(const lmpi_win *w, int t, MPI_Aint disp, MPI_Count count, const lmpi_datatype *dt,
                           target_ref *ref)
{
    const lmpi_win_slot *s = lmpi_win_slot_of(w, t);
    if (!dt->committed) {
        lmpi_err_detail("target_datatype is not committed");
        return LMPI_ERR_TYPE;
    }
    MPI_Aint lo = 0, hi = 0;
    if (count > 0 && dt->size > 0)
        span_of(count, dt, &lo, &hi);
    if (w->am && t != w->rank && (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || !w->same_size || !w->same_disp)) {
        /* in messages, another member's size and regions are its own: it checks, and the
         * next flush, unlock, fence or complete reports what it refused */
        ref->addr = NULL;
        ref->pid = 0;
        return LMPI_OK;
    }
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        if (hi > lo && !dynamic_covers(w, t, (uint64_t)(disp + lo), (uint64_t)(disp + hi))) {
            lmpi_err_detail("target_disp %#lx (+%ld bytes) is not inside a region rank %d attached", (unsigned long)disp,
                            (long)(hi - lo), t);
            return LMPI_ERR_RMA_RANGE;
        }
        ref->addr = (char *)(uintptr_t)disp;
        ref->pid = t == w->rank ? 0 : s->pid;
        return LMPI_OK;
    }
    MPI_Aint du = w->same_disp ? w->disp_unit : (MPI_Aint)s->disp_unit;
    uint64_t size = w->same_size ? (uint64_t)w->win_size : s->size;
    MPI_Aint off = disp * du;
    if (hi > lo && (disp < 0 || off + lo < 0 || (uint64_t)(off + hi) > size)) {
        lmpi_err_detail("target_disp %ld (x disp_unit %ld) + %ld bytes is outside rank %d's window of %lu bytes",
                        (long)disp, (long)du, (long)(hi - lo), t, (unsigned long)size);
        return LMPI_ERR_RMA_RANGE;
    }
    if (w->shared_data) {
        ref->addr = w->data + (w->seg->stride ? (uint64_t)t * w->seg->stride : s->data_off) + off;
        ref->pid = 0;
    } else {
        ref->addr = (char *)(uintptr_t)s->base + off;
        ref->pid = t == w->rank ? 0 : s->pid;
    }
    return LMPI_OK;
}

/* ---- moving bytes ------------------------------------------------------------------ */

static lmpi_status cma(pid_t pid, char *local, struct iovec *remote, int n, size_t bytes, bool write)
{
    struct iovec l = {local, bytes};
    ssize_t got = write ? process_vm_writev(pid, &l, 1, remote, (unsigned long)n, 0)
                        : process_vm_readv(pid, &l, 1, remote, (unsigned long)n, 0);
    if (got != (ssize_t)bytes) {
        lmpi_err_detail("cross-memory %s of %zu bytes at process %d failed: %s", write ? "write" : "read", bytes,
                        (int)pid, got < 0 ? strerror(errno) : "short transfer");
        return LMPI_ERR_OTHER;
    }
    return LMPI_OK;
}

/* The packed stream of (ref, count, dt) <-> stream. */
static lmpi_status target_io(const target_ref *ref, MPI_Count count, lmpi_datatype *dt, char *stream, bool write)
{
    MPI_Count bytes = count * dt->size;
    if (bytes == 0)
        return LMPI_OK;
    if (!ref->pid) {
        if (dt->contiguous) {
            char *p = ref->addr + dt->true_lb;
            if (write)
                memcpy(p, stream, (size_t)bytes);
            else
                memcpy(stream, p, (size_t)bytes);
        } else if (write) {
            lmpi_dt_unpack(ref->addr, count, dt, 0, bytes, stream);
        } else {
            lmpi_dt_pack(ref->addr, count, dt, 0, bytes, stream);
        }
        return LMPI_OK;
    }
    struct iovec iov[IOV_CHUNK];
    if (dt->contiguous) { /* one run: no walk of the type */
        iov[0] = (struct iovec){ref->addr + dt->true_lb, (size_t)bytes};
        return cma(ref->pid, stream, iov, 1, (size_t)bytes, write);
    }
    for (MPI_Count pos = 0; pos < bytes;) {
        MPI_Count done = 0;
        int n = lmpi_dt_iov(ref->addr, count, dt, pos, bytes - pos, iov, IOV_CHUNK, &done);
        LMPI_TRY(cma(ref->pid, stream + pos, iov, n, (size_t)done, write));
        pos += done;
    }
    return LMPI_OK;
}

/* A contiguous view of (buf, count, dt): the buffer itself, or a packed copy
 * in *tmp (the caller frees it when it is not `local`). */
static char *packed_view(const void *buf, MPI_Count count, lmpi_datatype *dt, char *local, char **tmp)
{
    *tmp = NULL;
    if (dt->contiguous)
        return (char *)lmpi_dt_contig_ptr(buf, dt);
    size_t bytes = (size_t)(count * dt->size);
    char *p = bytes <= STACK_BYTES ? local : lmpi_malloc(bytes, LMPI_MEM_RMA);
    if (!p)
        return NULL;
    if (p != local)
        *tmp = p;
    lmpi_dt_pack(buf, count, dt, 0, (MPI_Count)bytes, p);
    return p;
}

static char *scratch(size_t bytes, char *local, char **tmp)
{
    *tmp = NULL;
    if (bytes <= STACK_BYTES)
        return local;
    return *tmp = lmpi_malloc(bytes, LMPI_MEM_RMA);
}

/* Word-sized copies inline (the common RMA payload), the rest by memcpy. */
static inline void copy_bytes(char *to, const char *from, size_t n)
{
    switch (n) {
    case 8: memcpy(to, from, 8); return;
    case 4: memcpy(to, from, 4); return;
    case 16: memcpy(to, from, 16); return;
    default: memcpy(to, from, n);
    }
}

static lmpi_status do_put(const lmpi_rma_op *op, const target_ref *ref)
{
    MPI_Count bytes = op->ocount * op->odt->size;
    if (!ref->pid && op->odt->contiguous && op->tdt->contiguous) {
        copy_bytes(ref->addr + op->tdt->true_lb, lmpi_dt_contig_ptr(op->obuf, op->odt), (size_t)bytes);
        return LMPI_OK;
    }
    char local[STACK_BYTES], *tmp;
    char *src = packed_view(op->obuf, op->ocount, op->odt, local, &tmp);
    if (!src)
        return LMPI_ERR_NO_MEM;
    lmpi_status st = target_io(ref, op->tcount, op->tdt, src, true);
    lmpi_free(tmp);
    return st;
}

static lmpi_status do_get(const lmpi_rma_op *op, const target_ref *ref)
{
    MPI_Count bytes = op->tcount * op->tdt->size;
    lmpi_datatype *odt = op->odt;
    if (!ref->pid && odt->contiguous && op->tdt->contiguous) {
        copy_bytes((char *)op->rbuf + odt->true_lb, ref->addr + op->tdt->true_lb, (size_t)bytes);
        return LMPI_OK;
    }
    if (odt->contiguous)
        return target_io(ref, op->tcount, op->tdt, (char *)op->rbuf + odt->true_lb, false);
    char local[STACK_BYTES], *tmp;
    char *p = scratch((size_t)bytes, local, &tmp);
    if (!p)
        return LMPI_ERR_NO_MEM;
    lmpi_status st = target_io(ref, op->tcount, op->tdt, p, false);
    if (st == LMPI_OK)
        lmpi_dt_unpack(op->rbuf, op->ocount, odt, 0, bytes, p);
    lmpi_free(tmp);
    return st;
}

/* ---- accumulates -------------------------------------------------------------------- */

static bool is_integer_slow(MPI_Datatype h)
{
    static const MPI_Datatype ints[] = {
        MPI_CHAR,     MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE,      MPI_SHORT,    MPI_UNSIGNED_SHORT,
        MPI_INT,      MPI_UNSIGNED,    MPI_LONG,          MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG,
        MPI_INT8_T,   MPI_INT16_T,     MPI_INT32_T,       MPI_INT64_T,   MPI_UINT8_T,  MPI_UINT16_T,
        MPI_UINT32_T, MPI_UINT64_T,    MPI_AINT,          MPI_OFFSET,    MPI_COUNT,    MPI_INTEGER,
        MPI_INTEGER1, MPI_INTEGER2,    MPI_INTEGER4,      MPI_INTEGER8,  MPI_WCHAR};
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
        if (ints[i] == h)
            return true;
    return false;
}

/* Integer types take fetch-add and friends; a table over the predefined
 * handles keeps the question off the operation's path. */
static bool is_integer(MPI_Datatype h)
{
    static int8_t table[LMPI_DATATYPE_BUILTIN_COUNT]; /* 0 unknown, 1 yes, 2 no */
    uintptr_t i = (uintptr_t)h - LMPI_DATATYPE_BUILTIN_BASE;
    if (i >= LMPI_DATATYPE_BUILTIN_COUNT)
        return false;
    if (!table[i])
        table[i] = is_integer_slow(h) ? 1 : 2;
    return table[i] == 1;
}

/* MPI_SUM on a double or float: a CAS loop with the addition inline. */
#define FLOAT_SUM(F, U)                                                                                       \
    do {                                                                                                      \
        U prev = __atomic_load_n((U *)(void *)elem, __ATOMIC_ACQUIRE), next;                                  \
        F v, x;                                                                                               \
        memcpy(&v, in, sizeof(F));                                                                            \
        do {                                                                                                  \
            memcpy(&x, &prev, sizeof(F));                                                                     \
            x += v;                                                                                           \
            memcpy(&next, &x, sizeof(F));                                                                     \
        } while (!__atomic_compare_exchange_n((U *)(void *)elem, &prev, next, false, __ATOMIC_ACQ_REL,        \
                                              __ATOMIC_ACQUIRE));                                             \
        if (old)                                                                                              \
            memcpy(old, &prev, sizeof(F));                                                                    \
    } while (0)

static bool float_sum(char *elem, const char *in, char *old, const lmpi_datatype *b)
{
    if (b->handle == MPI_DOUBLE)
        FLOAT_SUM(double, uint64_t);
    else if (b->handle == MPI_FLOAT)
        FLOAT_SUM(float, uint32_t);
    else
        return false;
    return true;
}
#undef FLOAT_SUM

/* Can elements of b be updated with CPU atomics? */
static bool atomic_elem(const lmpi_datatype *b)
{
    return b && b->size == b->extent && b->true_lb == 0 && (b->size == 1 || b->size == 2 || b->size == 4 || b->size == 8);
}

#define ATOMIC_WIDTHS(X) X(1, uint8_t) X(2, uint16_t) X(4, uint32_t) X(8, uint64_t)

/* *old = *elem; *elem = in op *elem, atomically. */
__attribute__((always_inline)) static inline void atomic_update(char *elem, const char *in, char *old, lmpi_op *op, lmpi_datatype *b, bool integer)
{
    int o = op->predefined;
    if (!integer && in && o == (int)(uintptr_t)MPI_SUM && float_sum(elem, in, old, b))
        return;
    switch (b->size) {
#define CASE(n, T)                                                                                     \
    case n: {                                                                                          \
        T *p = (T *)(void *)elem, v = 0, prev;                                                         \
        if (in)                                                                                        \
            memcpy(&v, in, n);                                                                         \
        if (o == (int)(uintptr_t)MPI_NO_OP)                                                            \
            prev = __atomic_load_n(p, __ATOMIC_ACQUIRE);                                               \
        else if (o == (int)(uintptr_t)MPI_REPLACE)                                                     \
            prev = __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL);                                        \
        else if (integer && o == (int)(uintptr_t)MPI_SUM)                                              \
            prev = __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);                                         \
        else if (integer && o == (int)(uintptr_t)MPI_BAND)                                             \
            prev = __atomic_fetch_and(p, v, __ATOMIC_ACQ_REL);                                         \
        else if (integer && o == (int)(uintptr_t)MPI_BOR)                                              \
            prev = __atomic_fetch_or(p, v, __ATOMIC_ACQ_REL);                                          \
        else if (integer && o == (int)(uintptr_t)MPI_BXOR)                                             \
            prev = __atomic_fetch_xor(p, v, __ATOMIC_ACQ_REL);                                         \
        else {                                                                                         \
            prev = __atomic_load_n(p, __ATOMIC_ACQUIRE);                                               \
            T next;                                                                                    \
            do {                                                                                       \
                next = prev;                                                                           \
                lmpi_op_apply(op, &v, &next, 1, b);                                                    \
            } while (!__atomic_compare_exchange_n(p, &prev, next, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)); \
        }                                                                                              \
        if (old)                                                                                       \
            memcpy(old, &prev, n);                                                                     \
        return;                                                                                        \
    }
        ATOMIC_WIDTHS(CASE)
#undef CASE
    }
}

/* The target's accumulate lock (a process that died holding it leaves it
 * held: under --with-ft the wait gives up, LMPI_ERR_PROC_FAILED). */
static lmpi_status acc_lock(lmpi_win *w, lmpi_win_slot *s)
{
    unsigned spins = 0;
    uint32_t z = 0;
    while (!atomic_compare_exchange_weak_explicit(&s->acc_lock, &z, 1, memory_order_acquire, memory_order_relaxed)) {
        z = 0;
        LMPI_RMA_WAIT(w, &spins);
    }
    return LMPI_OK;
}

static void acc_unlock(lmpi_win_slot *s) { atomic_store_explicit(&s->acc_lock, 0, memory_order_release); }

/* Elements of b laid out at their extent (pair types have padding) from a
 * packed stream, and back. */
static lmpi_status natural(lmpi_datatype *b, MPI_Count n, char *packed, char **nat, bool to_nat)
{
    if (b->size == b->extent && b->true_lb == 0) {
        *nat = packed;
        return LMPI_OK;
    }
    if (to_nat) {
        *nat = lmpi_malloc((size_t)(n * b->extent), LMPI_MEM_RMA);
        if (!*nat)
            return LMPI_ERR_NO_MEM;
        lmpi_dt_unpack(*nat, n, b, 0, n * b->size, packed);
    } else {
        lmpi_dt_pack(*nat, n, b, 0, n * b->size, packed);
    }
    return LMPI_OK;
}

lmpi_status lmpi_rma_combine(lmpi_op *op, lmpi_datatype *b, MPI_Count n, char *inout, const char *in)
{
    if (op->predefined == (int)(uintptr_t)MPI_REPLACE) {
        memcpy(inout, in, (size_t)(n * b->size));
        return LMPI_OK;
    }
    char *nat_cur = NULL, *nat_in = NULL;
    lmpi_status st = natural(b, n, inout, &nat_cur, true);
    if (st == LMPI_OK)
        st = natural(b, n, (char *)in, &nat_in, true);
    if (st == LMPI_OK)
        st = lmpi_op_apply(op, nat_in, nat_cur, n, b);
    if (st == LMPI_OK)
        natural(b, n, inout, &nat_cur, false);
    if (nat_cur && nat_cur != inout)
        lmpi_free(nat_cur);
    if (nat_in && nat_in != in)
        lmpi_free(nat_in);
    return st;
}

/* Accumulate and get_accumulate (rbuf set) with any op the standard allows. */
static lmpi_status do_acc(lmpi_win *w, const lmpi_rma_op *op, const target_ref *ref)
{
    lmpi_datatype *b = (lmpi_datatype *)lmpi_op_basic_type(op->tdt);
    MPI_Count bytes = op->tcount * op->tdt->size, n = b && b->size ? bytes / b->size : 0;
    bool noop = op->op->predefined == (int)(uintptr_t)MPI_NO_OP;
    if (bytes == 0)
        return LMPI_OK;
    if (w->shared_data && op->tcount == 1 && op->tdt->predefined && atomic_elem(op->tdt) &&
        (noop || op->odt == op->tdt) && (!op->rbuf || op->rdt == op->tdt)) {
        /* one predefined element (fetch_and_op, the common accumulate): straight to the CPU */
        atomic_update(ref->addr, noop ? NULL : op->obuf, op->rbuf, op->op, op->tdt, is_integer(op->tdt->handle));
        return LMPI_OK;
    }
    char lin[STACK_BYTES], lres[STACK_BYTES], *tin = NULL, *tres = NULL;
    char *in = noop ? NULL : packed_view(op->obuf, op->ocount, op->odt, lin, &tin);
    char *res = op->rbuf ? scratch((size_t)bytes, lres, &tres) : NULL;
    lmpi_status st = LMPI_OK;
    if ((!noop && !in) || (op->rbuf && !res)) {
        st = LMPI_ERR_NO_MEM;
        goto out;
    }
    if (w->shared_data && atomic_elem(b)) {
        /* element by element along the target's runs */
        bool integer = is_integer(b->handle);
        struct iovec iov[IOV_CHUNK];
        for (MPI_Count pos = 0; pos < bytes;) {
            MPI_Count done = 0;
            int k = lmpi_dt_iov(ref->addr, op->tcount, op->tdt, pos, bytes - pos, iov, IOV_CHUNK, &done);
            for (int i = 0; i < k; i++) {
                char *e = iov[i].iov_base;
                for (size_t j = 0; j < iov[i].iov_len; j += (size_t)b->size, pos += b->size)
                    atomic_update(e + j, in ? in + pos : NULL, res ? res + pos : NULL, op->op, b, integer);
            }
        }
    } else {
        lmpi_win_slot *s = lmpi_win_slot_of(w, op->target);
        char lcur[STACK_BYTES], *tcur = NULL;
        char *cur = scratch((size_t)bytes, lcur, &tcur);
        if (!cur) {
            st = LMPI_ERR_NO_MEM;
            goto out;
        }
        st = acc_lock(w, s);
        if (st != LMPI_OK) {
            lmpi_free(tcur);
            goto out;
        }
        st = target_io(ref, op->tcount, op->tdt, cur, false);
        if (st == LMPI_OK && res)
            memcpy(res, cur, (size_t)bytes);
        if (st == LMPI_OK && !noop) {
            st = lmpi_rma_combine(op->op, b, n, cur, in);
            if (st == LMPI_OK)
                st = target_io(ref, op->tcount, op->tdt, cur, true);
        }
        acc_unlock(s);
        lmpi_free(tcur);
    }
    if (st == LMPI_OK && res)
        lmpi_dt_unpack(op->rbuf, op->rcount, op->rdt, 0, bytes, res);
out:
    lmpi_free(tin);
    lmpi_free(tres);
    return st;
}

/* *old = *elem; *elem = in if it was *cmp, atomically (n: 1, 2, 4 or 8). */
static inline void cas_elem(char *elem, const void *cmp, const void *in, void *old, size_t n)
{
    switch (n) {
#define CASE(k, T)                                                                                       \
    case k: {                                                                                            \
        T expect, desired;                                                                               \
        memcpy(&expect, cmp, k);                                                                         \
        memcpy(&desired, in, k);                                                                         \
        __atomic_compare_exchange_n((T *)(void *)elem, &expect, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE); \
        memcpy(old, &expect, k);                                                                         \
        return;                                                                                          \
    }
        ATOMIC_WIDTHS(CASE)
#undef CASE
    }
}

static lmpi_status do_cas(lmpi_win *w, const lmpi_rma_op *op, const target_ref *ref)
{
    lmpi_datatype *dt = op->tdt;
    size_t n = (size_t)dt->size;
    char *t = ref->addr + dt->true_lb;
    if (w->shared_data && atomic_elem(dt)) {
        cas_elem(t, op->cbuf, op->obuf, op->rbuf, n);
        return LMPI_OK;
    }
    lmpi_win_slot *s = lmpi_win_slot_of(w, op->target);
    char cur[64];
    LMPI_TRY(acc_lock(w, s));
    lmpi_status st = target_io(ref, 1, dt, cur, false);
    if (st == LMPI_OK && !memcmp(cur, op->cbuf, n))
        st = target_io(ref, 1, dt, (char *)op->obuf, true);
    acc_unlock(s);
    if (st == LMPI_OK)
        memcpy(op->rbuf, cur, n);
    return st;
}

/* ---- issuing -------------------------------------------------------------------------- */

/* Carry out OP at REF (resolved, range checked). */
static lmpi_status perform_at(lmpi_win *w, const lmpi_rma_op *op, const target_ref *at)
{
    if (w->am) {
        LMPI_TRY(lmpi_rma_am_open(w, op->target));
        lmpi_rma_stat.issued++;
        return lmpi_rma_am_issue(w, op);
    }
    if (w->delayed || w->rs_counts) {
        LMPI_TRY(lmpi_rma_open_target(w, op->target));
    } else if (w->access == LMPI_EPOCH_LOCK_ALL) {
        /* an exclusive holder that came before our lock_all keeps the target */
        unsigned spins = 0;
        while (LMPI_UNLIKELY(atomic_load(&lmpi_win_slot_of(w, op->target)->lock) & LMPI_RMA_EXCL))
            LMPI_RMA_WAIT(w, &spins);
    }
    target_ref ref = *at;
    lmpi_status st;
    switch (op->kind) {
    case LMPI_RMA_PUT: st = do_put(op, &ref); break;
    case LMPI_RMA_GET: st = do_get(op, &ref); break;
    case LMPI_RMA_CAS: st = do_cas(w, op, &ref); break;
    default: st = do_acc(w, op, &ref); break;
    }
    lmpi_rma_stat.issued++;
    if (w->rs_counts)
        atomic_fetch_add_explicit(&lmpi_win_slot_of(w, op->target)->landed, 1, memory_order_release);
    return st;
}

static lmpi_status perform(lmpi_win *w, const lmpi_rma_op *op)
{
    target_ref ref;
    LMPI_TRY(resolve(w, op->target, op->disp, op->tcount, op->tdt, &ref));
    return perform_at(w, op, &ref);
}

static void release_op(lmpi_rma_op *op)
{
    lmpi_datatype_release(op->odt);
    lmpi_datatype_release(op->tdt);
    if (op->rdt)
        lmpi_datatype_release(op->rdt);
}

lmpi_status lmpi_rma_drain(lmpi_win *w)
{
    lmpi_status st = LMPI_OK;
    lmpi_rma_pool *p = w->pool;
    if (!p || !p->n)
        return LMPI_OK;
    lmpi_rma_stat.pool_drains++;
    for (int i = 0; i < p->n; i++) {
        if (st == LMPI_OK)
            st = perform(w, &p->ops[i]);
        release_op(&p->ops[i]);
    }
    p->n = 0;
    return st;
}

/* Post OP, already checked (its target resolved at REF): carried out now, or
 * buffered. */
static lmpi_status post(lmpi_win *w, const lmpi_rma_op *op, const target_ref *ref)
{
    if (w->rs_counts)
        w->rs_counts[op->target]++;
    if (!w->delayed)
        return perform_at(w, op, ref);
    if (!w->pool) {
        int cap = lmpi_config.rma_pool > 0 ? (int)lmpi_config.rma_pool : 1;
        w->pool = lmpi_malloc(sizeof(*w->pool) + (size_t)cap * sizeof(lmpi_rma_op), LMPI_MEM_RMA);
        if (!w->pool)
            return LMPI_ERR_NO_MEM;
        w->pool->n = 0;
        w->pool->cap = cap;
    }
    if (w->pool->n == w->pool->cap) /* back-pressure: the pool never grows */
        LMPI_TRY(lmpi_rma_drain(w));
    lmpi_rma_op *slot = &w->pool->ops[w->pool->n++];
    *slot = *op;
    lmpi_datatype_retain(slot->odt);
    lmpi_datatype_retain(slot->tdt);
    if (slot->rdt)
        lmpi_datatype_retain(slot->rdt);
    lmpi_rma_stat.buffered++;
    return LMPI_OK;
}

/* ---- the calls ------------------------------------------------------------------------- */

static lmpi_status check_epoch(lmpi_win *w, int target, bool request_based)
{
    if (target < 0 || target >= w->size) {
        lmpi_err_detail("target_rank %d is not in the window's group of %d", target, w->size);
        return LMPI_ERR_RANK;
    }
    switch (w->access) {
    case LMPI_EPOCH_NONE:
        lmpi_err_detail("no access epoch is open on win (MPI_Win_fence, MPI_Win_start, MPI_Win_lock or "
                        "MPI_Win_lock_all opens one)");
        return LMPI_ERR_RMA_SYNC;
    case LMPI_EPOCH_LOCK:
        for (int i = 0; i < w->nheld; i++)
            if (w->held[i].rank == target)
                return LMPI_OK;
        lmpi_err_detail("target_rank %d is not locked by this process", target);
        return LMPI_ERR_RMA_SYNC;
    case LMPI_EPOCH_START: {
        int lo = 0, hi = w->nstart - 1;
        while (lo <= hi) {
            int mid = (lo + hi) / 2;
            if (w->start_ranks[mid] == target)
                goto active;
            if (w->start_ranks[mid] < target)
                lo = mid + 1;
            else
                hi = mid - 1;
        }
        lmpi_err_detail("target_rank %d is not in the group given to MPI_Win_start", target);
        return LMPI_ERR_RMA_SYNC;
    }
    default:
        break;
    }
    if (w->access == LMPI_EPOCH_LOCK_ALL)
        return LMPI_OK;
active:
    if (request_based) {
        lmpi_err_detail("request-based operations need a passive-target epoch (lock or lock_all)");
        return LMPI_ERR_RMA_SYNC;
    }
    return LMPI_OK;
}

/* Is o defined on dt?  Predefined pairs are answered once and remembered
 * (the question sits on every accumulate's path). */
static lmpi_status op_defined(const lmpi_op *o, const lmpi_datatype *dt)
{
    static uint8_t known[64][LMPI_DATATYPE_BUILTIN_COUNT]; /* 1 defined, 2 not, 0 not asked yet */
    uintptr_t oi = (uintptr_t)o->predefined - 0x20u, ti = (uintptr_t)dt->handle - LMPI_DATATYPE_BUILTIN_BASE;
    bool cacheable = dt->predefined && oi < 64 && ti < LMPI_DATATYPE_BUILTIN_COUNT;
    if (cacheable && known[oi][ti] == 1)
        return LMPI_OK;
    lmpi_status st = lmpi_op_check(o, dt); /* also when known to fail: it writes the message */
    if (cacheable)
        known[oi][ti] = st == LMPI_OK ? 1 : 2;
    return st;
}

static lmpi_status check_acc(const lmpi_rma_op *op)
{
    lmpi_op *o = op->op;
    if (!o->predefined) {
        lmpi_err_detail("op is a user-defined operation; RMA accumulates take predefined ones only");
        return LMPI_ERR_OP;
    }
    bool noop = o->predefined == (int)(uintptr_t)MPI_NO_OP;
    if (noop && op->kind == LMPI_RMA_ACC) {
        lmpi_err_detail("MPI_NO_OP is for MPI_Get_accumulate and MPI_Fetch_and_op only");
        return LMPI_ERR_OP;
    }
    const lmpi_datatype *bt = lmpi_op_basic_type(op->tdt);
    if (!bt) {
        lmpi_err_detail("target_datatype mixes basic types");
        return LMPI_ERR_TYPE;
    }
    if (!noop && lmpi_op_basic_type(op->odt) != bt && op->ocount * op->odt->size > 0) {
        lmpi_err_detail("origin and target datatypes are built from different basic types");
        return LMPI_ERR_TYPE;
    }
    if (op->rdt && op->rcount * op->rdt->size > 0 && lmpi_op_basic_type(op->rdt) != bt) {
        lmpi_err_detail("result and target datatypes are built from different basic types");
        return LMPI_ERR_TYPE;
    }
    LMPI_TRY(op_defined(o, op->tdt));
    return LMPI_OK;
}

/* The fast paths' view of a segment window: the address of BYTES at byte
 * offset LB of displacement DISP in member T's data, or NULL when out of
 * range (the long way then reports it).  Under lock_all it first waits out
 * an exclusive holder that came before us. */
__attribute__((always_inline)) static inline char *segment_at(lmpi_win *w, int t, MPI_Aint disp, MPI_Aint lb, MPI_Count bytes)
{
    const lmpi_win_slot *s = lmpi_win_slot_of(w, t);
    MPI_Aint du = w->same_disp ? w->disp_unit : (MPI_Aint)s->disp_unit;
    uint64_t size = w->same_size ? (uint64_t)w->win_size : s->size;
    MPI_Aint off = disp * du + lb;
    if (disp < 0 || off < 0 || (uint64_t)off + (uint64_t)bytes > size)
        return NULL;
    if (w->access == LMPI_EPOCH_LOCK_ALL) {
        unsigned spins = 0;
        while (LMPI_UNLIKELY(atomic_load(&((lmpi_win_slot *)s)->lock) & LMPI_RMA_EXCL))
            if (!lmpi_rma_relax(w, &spins))
                return NULL; /* the long way reports it */
    }
    return w->data + (w->seg->stride ? (uint64_t)t * w->seg->stride : s->data_off) + off;
}

static lmpi_status submit(MPI_Win win, lmpi_rma_op *op, MPI_Request *request)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    if (request)
        *request = MPI_REQUEST_NULL;
    if (op->target == MPI_PROC_NULL)
        goto done;
    lmpi_status st = check_epoch(w, op->target, request != NULL);
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    MPI_Count obytes = op->ocount * op->odt->size, tbytes = op->tcount * op->tdt->size;
    bool noop_origin = (op->kind == LMPI_RMA_GACC && op->op->predefined == (int)(uintptr_t)MPI_NO_OP);
    if (op->kind != LMPI_RMA_CAS && !noop_origin && obytes != tbytes) {
        lmpi_err_detail("the origin's %lld bytes do not match the target's %lld", (long long)obytes,
                        (long long)tbytes);
        return lmpi_win_fail(w, LMPI_ERR_TYPE);
    }
    if (op->rdt && op->rcount * op->rdt->size != tbytes) {
        lmpi_err_detail("the result buffer's %lld bytes do not match the target's %lld",
                        (long long)(op->rcount * op->rdt->size), (long long)tbytes);
        return lmpi_win_fail(w, LMPI_ERR_TYPE);
    }
    if ((op->kind == LMPI_RMA_ACC || op->kind == LMPI_RMA_GACC) && tbytes > 0) { /* nothing moves: nothing to check */
        st = check_acc(op);
        if (st != LMPI_OK)
            return lmpi_win_fail(w, st);
    }
    if (tbytes == 0 && op->kind != LMPI_RMA_CAS) /* nothing to move (the buffers may be NULL) */
        goto done;
    /* every check happens when the operation is posted, also when it is
     * carried out later (delayed issue) */
    target_ref ref;
    st = resolve(w, op->target, op->disp, op->tcount, op->tdt, &ref);
    if (st == LMPI_OK && request) { /* a request completes when its operation does: issue it now */
        st = lmpi_rma_drain(w);
        if (st == LMPI_OK)
            st = perform_at(w, op, &ref);
        if (st == LMPI_OK && w->am) /* its answer, and those before it */
            st = lmpi_rma_am_quiet(w);
    } else if (st == LMPI_OK) {
        st = post(w, op, &ref);
    }
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
done:
    if (request) {
        static const size_t none_pending = 0;
        lmpi_request *r = lmpi_request_alloc(LMPI_REQ_FLUSH); /* done at once: nothing is pending */
        if (!r)
            return lmpi_win_fail(w, LMPI_ERR_NO_MEM);
        r->pending = &none_pending;
        *request = (MPI_Request)r;
    }
    return LMPI_OK;
}

/* Every field named: a partial initializer would zero the whole record first
 * (a rep stos that cost half of an 8-byte put). */
static inline lmpi_rma_op make_op(lmpi_rma_kind kind, int target, MPI_Aint disp, const void *obuf, MPI_Count ocount,
                                  lmpi_datatype *odt, void *rbuf, MPI_Count rcount, lmpi_datatype *rdt,
                                  MPI_Count tcount, lmpi_datatype *tdt, lmpi_op *op, const void *cbuf)
{
    lmpi_rma_op r;
    r.kind = (uint8_t)kind;
    r.target = target;
    r.disp = disp;
    r.obuf = obuf;
    r.rbuf = rbuf;
    r.cbuf = cbuf;
    r.ocount = ocount;
    r.tcount = tcount;
    r.rcount = rcount;
    r.odt = odt;
    r.tdt = tdt;
    r.rdt = rdt;
    r.op = op;
    return r;
}

/* The commonest put or get: contiguous at both ends, into a segment window,
 * eager issue, in range, in an epoch that allows it.  Carried out here;
 * false sends it the long way (which also reports whatever is wrong). */
static inline bool contiguous_move(MPI_Win win, bool put, void *obuf, MPI_Count oc, const lmpi_datatype *odt, int t,
                                   MPI_Aint disp, MPI_Count tc, const lmpi_datatype *tdt)
{
    lmpi_win *w = (lmpi_win *)win;
    if ((uintptr_t)win < LMPI_PREDEF_LIMIT || w->magic != LMPI_MAGIC_WIN || !w->shared_data || w->delayed ||
        w->revoked || w->rs_counts || !odt->contiguous || !tdt->contiguous || !tdt->committed ||
        (unsigned)t >= (unsigned)w->size)
        return false;
    MPI_Count bytes = tc * tdt->size;
    if (oc * odt->size != bytes || (w->access != LMPI_EPOCH_LOCK_ALL && check_epoch(w, t, false) != LMPI_OK))
        return false;
    char *at = segment_at(w, t, disp, tdt->true_lb, bytes);
    if (!at)
        return false;
    char *mine = (char *)obuf + odt->true_lb;
    if (put)
        copy_bytes(at, mine, (size_t)bytes);
    else
        copy_bytes(mine, at, (size_t)bytes);
    lmpi_rma_stat.issued++;
    return true;
}

lmpi_status lmpi_impl_Put(const void *oa, MPI_Count oc, lmpi_datatype *odt, int t, MPI_Aint disp, MPI_Count tc,
                          lmpi_datatype *tdt, MPI_Win win)
{
    if (contiguous_move(win, true, (void *)oa, oc, odt, t, disp, tc, tdt))
        return LMPI_OK;
    lmpi_rma_op op = make_op(LMPI_RMA_PUT, t, disp, oa, oc, odt, NULL, 0, NULL, tc, tdt, NULL, NULL);
    return submit(win, &op, NULL);
}

lmpi_status lmpi_impl_Get(void *oa, MPI_Count oc, lmpi_datatype *odt, int t, MPI_Aint disp, MPI_Count tc,
                          lmpi_datatype *tdt, MPI_Win win)
{
    if (contiguous_move(win, false, oa, oc, odt, t, disp, tc, tdt))
        return LMPI_OK;
    lmpi_rma_op op = make_op(LMPI_RMA_GET, t, disp, NULL, oc, odt, oa, 0, NULL, tc, tdt, NULL, NULL);
    return submit(win, &op, NULL);
}

static lmpi_status op_of(MPI_Op h, lmpi_op **o, MPI_Win win)
{
    lmpi_status st = lmpi_op_arg(h, o, "op");
    lmpi_win *w;
    if (st != LMPI_OK && lmpi_win_arg(win, &w) == LMPI_OK)
        return lmpi_win_fail(w, st);
    return st;
}

/* What one element of predefined type dt under predefined op oph takes:
 * CPU atomics (ACC_ATOMIC_INT: integer ones), or the long way.  Asked once
 * per pair (op_defined, atomic_elem and is_integer together cost as much
 * as the update). */
enum { ACC_UNKNOWN, ACC_LONG, ACC_ATOMIC, ACC_ATOMIC_INT };
enum { ACC_OPS = 32 }; /* the predefined operations' handles, from MPI_OP_NULL */
static uint8_t one_element_known[ACC_OPS][LMPI_DATATYPE_BUILTIN_COUNT];

static uint8_t one_element_ask(MPI_Op oph, lmpi_datatype *dt)
{
    lmpi_op *o;
    uint8_t path = ACC_LONG;
    if (atomic_elem(dt) && lmpi_op_arg(oph, &o, "op") == LMPI_OK && o->predefined && op_defined(o, dt) == LMPI_OK)
        path = is_integer(dt->handle) ? ACC_ATOMIC_INT : ACC_ATOMIC;
    return path;
}

static inline uint8_t one_element_path(MPI_Op oph, lmpi_datatype *dt)
{
    uintptr_t oi = (uintptr_t)oph - (uintptr_t)MPI_OP_NULL, ti = (uintptr_t)dt->handle - LMPI_DATATYPE_BUILTIN_BASE;
    if (!dt->predefined || oi >= ACC_OPS || ti >= LMPI_DATATYPE_BUILTIN_COUNT)
        return ACC_LONG;
    uint8_t *known = &one_element_known[oi][ti];
    if (LMPI_UNLIKELY(!*known))
        *known = one_element_ask(oph, dt);
    return *known;
}

/* *old = *elem; *elem += *in (an integer of n bytes), atomically: the
 * commonest accumulate, without atomic_update's dispatch. */
static inline void add_elem(char *elem, const void *in, void *old, size_t n)
{
    switch (n) {
#define CASE(k, T)                                                                                       \
    case k: {                                                                                            \
        T v, prev;                                                                                       \
        memcpy(&v, in, k);                                                                               \
        prev = __atomic_fetch_add((T *)(void *)elem, v, __ATOMIC_ACQ_REL);                               \
        if (old)                                                                                         \
            memcpy(old, &prev, k);                                                                       \
        return;                                                                                          \
    }
        ATOMIC_WIDTHS(CASE)
#undef CASE
    }
}

/* The commonest accumulate (fetch_and_op, a counter, a histogram bin),
 * checked straight on the arguments of MPI_Accumulate (old NULL),
 * MPI_Get_accumulate or MPI_Fetch_and_op: one predefined element of dt that
 * CPU atomics can update, the same type at every end, in a segment window,
 * eager issue, every check passing.  The record and submit() cost as much
 * again as the update itself (85 against 50 ns for an 8-byte accumulate with
 * its flush).  false: the long way. */
__attribute__((always_inline)) static inline bool atomic_direct(MPI_Win win, const void *in, void *old,
                                                               lmpi_datatype *dt, int t, MPI_Aint disp, MPI_Op oph)
{
    lmpi_win *w = (lmpi_win *)win;
    if ((uintptr_t)win < LMPI_PREDEF_LIMIT || w->magic != LMPI_MAGIC_WIN || !w->shared_data || w->delayed ||
        w->revoked || w->rs_counts || (unsigned)t >= (unsigned)w->size)
        return false;
    uint8_t path = one_element_path(oph, dt);
    bool noop = oph == MPI_NO_OP;
    if (path == ACC_LONG || (noop && !old) || (w->access != LMPI_EPOCH_LOCK_ALL && check_epoch(w, t, false) != LMPI_OK))
        return false;
    char *at = segment_at(w, t, disp, 0, dt->size);
    if (!at)
        return false;
    lmpi_op *o;
    if (path == ACC_ATOMIC_INT && oph == MPI_SUM)
        add_elem(at, in, old, (size_t)dt->size);
    else if (lmpi_op_arg(oph, &o, "op") == LMPI_OK) /* (known to succeed: one_element_ask asked it) */
        atomic_update(at, noop ? NULL : in, old, o, dt, path == ACC_ATOMIC_INT);
    lmpi_rma_stat.issued++;
    return true;
}

/* The blocking and request forms differ only in the request. */
static lmpi_status accumulate(const void *oa, MPI_Count oc, lmpi_datatype *odt, void *ra, MPI_Count rc,
                              lmpi_datatype *rdt, int t, MPI_Aint disp, MPI_Count tc, lmpi_datatype *tdt, MPI_Op oph,
                              MPI_Win win, MPI_Request *request)
{
    lmpi_op *o;
    LMPI_TRY(op_of(oph, &o, win));
    lmpi_rma_op op = make_op(rdt ? LMPI_RMA_GACC : LMPI_RMA_ACC, t, disp, oa, oc, odt, ra, rc, rdt, tc, tdt, o, NULL);
    return submit(win, &op, request);
}

lmpi_status lmpi_impl_Accumulate(const void *oa, MPI_Count oc, lmpi_datatype *odt, int t, MPI_Aint disp,
                                 MPI_Count tc, lmpi_datatype *tdt, MPI_Op oph, MPI_Win win)
{
    if (oc == 1 && tc == 1 && odt == tdt && oa && atomic_direct(win, oa, NULL, tdt, t, disp, oph))
        return LMPI_OK;
    return accumulate(oa, oc, odt, NULL, 0, NULL, t, disp, tc, tdt, oph, win, NULL);
}

/* Get_accumulate's origin arguments are ignored under MPI_NO_OP (NULL,
 * any count, MPI_DATATYPE_NULL are legal there: the binding passes odt NULL
 * for a handle that is no datatype); otherwise they are checked here, and
 * errors go to the window's handler. */
static lmpi_status gacc_origin(const void **oa, MPI_Count *oc, lmpi_datatype **odt, lmpi_datatype *tdt, MPI_Op oph,
                               MPI_Win win)
{
    if (oph == MPI_NO_OP) {
        *oa = NULL;
        *oc = 0;
        *odt = tdt;
        return LMPI_OK;
    }
    lmpi_status st = LMPI_OK;
    if (!*odt) {
        lmpi_err_detail("origin_datatype is not a datatype (MPI_DATATYPE_NULL is allowed with MPI_NO_OP only)");
        st = LMPI_ERR_TYPE;
    } else if ((st = lmpi_check_count(*oc)) != LMPI_OK) {
        lmpi_err_detail("origin_count is %lld", (long long)*oc);
    } else if ((st = lmpi_check_buffer(*oa, *oc, *odt)) != LMPI_OK) {
        lmpi_err_detail("origin_addr is NULL with %lld elements to send", (long long)*oc);
    }
    lmpi_win *w;
    if (st != LMPI_OK && lmpi_win_arg(win, &w) == LMPI_OK)
        return lmpi_win_fail(w, st);
    return st;
}

lmpi_status lmpi_impl_Get_accumulate(const void *oa, MPI_Count oc, lmpi_datatype *odt, void *ra, MPI_Count rc,
                                     lmpi_datatype *rdt, int t, MPI_Aint disp, MPI_Count tc, lmpi_datatype *tdt,
                                     MPI_Op oph, MPI_Win win)
{
    LMPI_TRY(gacc_origin(&oa, &oc, &odt, tdt, oph, win));
    if (tc == 1 && rc == 1 && rdt == tdt && ra && (oph == MPI_NO_OP || (oc == 1 && odt == tdt && oa)) &&
        atomic_direct(win, oa, ra, tdt, t, disp, oph))
        return LMPI_OK;
    return accumulate(oa, oc, odt, ra, rc, rdt, t, disp, tc, tdt, oph, win, NULL);
}

lmpi_status lmpi_impl_Fetch_and_op(const void *oa, void *ra, lmpi_datatype *dt, int t, MPI_Aint disp, MPI_Op oph,
                                   MPI_Win win)
{
    if (ra && (oa || oph == MPI_NO_OP) && atomic_direct(win, oa, ra, dt, t, disp, oph))
        return LMPI_OK;
    lmpi_op *o;
    LMPI_TRY(op_of(oph, &o, win));
    if (!dt->predefined) {
        lmpi_win *w;
        LMPI_TRY(lmpi_win_arg(win, &w));
        lmpi_err_detail("datatype must be predefined for MPI_Fetch_and_op");
        return lmpi_win_fail(w, LMPI_ERR_TYPE);
    }
    lmpi_rma_op op = make_op(LMPI_RMA_GACC, t, disp, oa, 1, dt, ra, 1, dt, 1, dt, o, NULL);
    return submit(win, &op, NULL);
}

lmpi_status lmpi_impl_Compare_and_swap(const void *oa, const void *ca, void *ra, lmpi_datatype *dt, int t,
                                       MPI_Aint disp, MPI_Win win)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_usable(win, &w));
    /* the standard's list: integers, logicals, byte, multi-language types */
    if (!dt->predefined || (!is_integer(dt->handle) && dt->handle != MPI_C_BOOL && dt->handle != MPI_LOGICAL &&
                            dt->handle != MPI_CXX_BOOL)) {
        lmpi_err_detail("datatype %s is not an integer, logical or byte type (MPI_Compare_and_swap)",
                        dt->name ? dt->name : "(derived)");
        return lmpi_win_fail(w, LMPI_ERR_TYPE);
    }
    if (!ca || (t != MPI_PROC_NULL && !oa)) {
        lmpi_err_detail("%s is NULL", !ca ? "compare_addr" : "origin_addr");
        return lmpi_win_fail(w, LMPI_ERR_BUFFER);
    }
    if (ra && w->shared_data && !w->delayed && !w->rs_counts && (unsigned)t < (unsigned)w->size &&
        atomic_elem(dt) && (w->access == LMPI_EPOCH_LOCK_ALL || check_epoch(w, t, false) == LMPI_OK)) {
        char *at = segment_at(w, t, disp, 0, dt->size); /* atomic_direct's case, for compare_and_swap */
        if (at) {
            cas_elem(at, ca, oa, ra, (size_t)dt->size);
            lmpi_rma_stat.issued++;
            return LMPI_OK;
        }
    }
    lmpi_rma_op op = make_op(LMPI_RMA_CAS, t, disp, oa, 1, dt, ra, 0, NULL, 1, dt, NULL, ca);
    return submit(win, &op, NULL);
}

lmpi_status lmpi_impl_Rput(const void *oa, MPI_Count oc, lmpi_datatype *odt, int t, MPI_Aint disp, MPI_Count tc,
                           lmpi_datatype *tdt, MPI_Win win, MPI_Request *request)
{
    lmpi_rma_op op = make_op(LMPI_RMA_PUT, t, disp, oa, oc, odt, NULL, 0, NULL, tc, tdt, NULL, NULL);
    return submit(win, &op, request);
}

lmpi_status lmpi_impl_Rget(void *oa, MPI_Count oc, lmpi_datatype *odt, int t, MPI_Aint disp, MPI_Count tc,
                           lmpi_datatype *tdt, MPI_Win win, MPI_Request *request)
{
    lmpi_rma_op op = make_op(LMPI_RMA_GET, t, disp, NULL, oc, odt, oa, 0, NULL, tc, tdt, NULL, NULL);
    return submit(win, &op, request);
}

lmpi_status lmpi_impl_Raccumulate(const void *oa, MPI_Count oc, lmpi_datatype *odt, int t, MPI_Aint disp,
                                  MPI_Count tc, lmpi_datatype *tdt, MPI_Op oph, MPI_Win win, MPI_Request *request)
{
    return accumulate(oa, oc, odt, NULL, 0, NULL, t, disp, tc, tdt, oph, win, request);
}

lmpi_status lmpi_impl_Rget_accumulate(const void *oa, MPI_Count oc, lmpi_datatype *odt, void *ra, MPI_Count rc,
                                      lmpi_datatype *rdt, int t, MPI_Aint disp, MPI_Count tc, lmpi_datatype *tdt,
                                      MPI_Op oph, MPI_Win win, MPI_Request *request)
{
    LMPI_TRY(gacc_origin(&oa, &oc, &odt, tdt, oph, win));
    return accumulate(oa, oc, odt, ra, rc, rdt, t, disp, tc, tdt, oph, win, request);
}
