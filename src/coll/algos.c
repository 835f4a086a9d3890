/* Size-dependent collective algorithms, as schedule builders (chosen in
 * coll.c by the LMPI_COLL_* thresholds of the configuration table):
 *
 *   bcast          scatter + ring allgather (van de Geijn) for large data
 *   allreduce      Rabenseifner (recursive halving reduce-scatter, recursive
 *                  doubling allgather) and ring (reduce-scatter and
 *                  allgather around a ring) for commutative operations
 *   allgather      Bruck (log2 n rounds) for small blocks
 *   alltoall       Bruck (log2 n rounds of packed blocks) for small blocks
 *   reduce_scatter recursive halving for commutative operations
 *
 * Non-powers of two fold the first 2 * (n - pof2) ranks in pairs first, as
 * MPICH does.  All of them work on contiguous data (the callers check). */
#include "coll/algos.h"

static int pof2_below(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* The real rank of NEWRANK after the fold (ranks below 2 * rem paired). */
static int unfold(int newrank, int rem) { return newrank < rem ? newrank * 2 + 1 : newrank + rem; }

/* ---- bcast: binomial scatter of n chunks, then a ring allgather ---------- */
lmpi_status lmpi_coll_bcast_sag(lmpi_sched *s, lmpi_comm *c, void *buf, MPI_Count count, lmpi_datatype *dt, int root)
{
    lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
    int n = c->size, rel = (c->rank - root + n) % n;
    MPI_Count nbytes = count * dt->size, ss = (nbytes + n - 1) / n;
    char *p = (char *)lmpi_dt_contig_ptr(buf, dt);
#define CHUNK_LO(j) ((MPI_Count)(j) * ss < nbytes ? (MPI_Count)(j) * ss : nbytes)
    /* scatter: relative rank r receives chunks [r, r + lowbit(r)) from r - lowbit(r) */
    int mask = 1;
    while (mask < n && !(rel & mask))
        mask <<= 1;
    if (rel != 0) {
        int hi = rel + mask < n ? rel + mask : n;
        MPI_Count lo_b = CHUNK_LO(rel), hi_b = CHUNK_LO(hi);
        if (hi_b > lo_b)
            TRY(lmpi_sched_recv(s, p + lo_b, hi_b - lo_b, byte, (c->rank - mask + n) % n));
        TRY(lmpi_sched_fence(s));
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        int child = rel + mask;
        if (child >= n)
            continue;
        int hi = child + mask < n ? child + mask : n;
        MPI_Count lo_b = CHUNK_LO(child), hi_b = CHUNK_LO(hi);
        if (hi_b > lo_b)
            TRY(lmpi_sched_send(s, p + lo_b, hi_b - lo_b, byte, (c->rank + mask) % n));
    }
    TRY(lmpi_sched_fence(s));
    /* ring allgather of the chunks, in relative ranks */
    int right = (c->rank + 1) % n, left = (c->rank - 1 + n) % n;
    for (int k = 0; k < n - 1; k++) {
        int sj = (rel - k + n) % n, rj = (rel - k - 1 + n) % n;
        MPI_Count slo = CHUNK_LO(sj), shi = CHUNK_LO(sj + 1), rlo = CHUNK_LO(rj), rhi = CHUNK_LO(rj + 1);
        if (shi > slo)
            TRY(lmpi_sched_send(s, p + slo, shi - slo, byte, right));
        if (rhi > rlo)
            TRY(lmpi_sched_recv(s, p + rlo, rhi - rlo, byte, left));
        TRY(lmpi_sched_fence(s));
    }
#undef CHUNK_LO
    return LMPI_OK;
}

/* Copy the contribution into the result buffer, which then accumulates. */
static lmpi_status start_acc(lmpi_sched *s, const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt)
{
    if (!IN_PLACE(sbuf))
        TRY(lmpi_sched_copy(s, sbuf, count, dt, rbuf, count, dt));
    return lmpi_sched_fence(s);
}

/* ---- allreduce: ring ----------------------------------------------------- */
lmpi_status lmpi_coll_allreduce_ring(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                                     lmpi_datatype *dt, lmpi_op *op)
{
    int n = c->size, me = c->rank, right = (me + 1) % n, left = (me - 1 + n) % n;
    MPI_Count base = count / n, extra = count % n;
#define CNT(j) (base + ((j) < extra))
#define OFF(j) ((MPI_Count)(j) * base + ((j) < extra ? (j) : extra))
    void *tmp = scratch_for(s, base + 1, dt);
    if (!tmp)
        return LMPI_ERR_NO_MEM;
    TRY(start_acc(s, sbuf, rbuf, count, dt));
    for (int k = 0; k < n - 1; k++) { /* reduce-scatter: chunk me+1 ends up complete here */
        int sj = (me - k + n) % n, rj = (me - k - 1 + n) % n;
        TRY(lmpi_sched_send(s, at(rbuf, OFF(sj), dt), CNT(sj), dt, right));
        TRY(lmpi_sched_recv(s, tmp, CNT(rj), dt, left));
        TRY(lmpi_sched_fence(s));
        TRY(lmpi_sched_reduce(s, tmp, at(rbuf, OFF(rj), dt), CNT(rj), dt, op));
        TRY(lmpi_sched_fence(s));
    }
    for (int k = 0; k < n - 1; k++) { /* allgather of the complete chunks */
        int sj = (me + 1 - k + n) % n, rj = (me - k + n) % n;
        TRY(lmpi_sched_send(s, at(rbuf, OFF(sj), dt), CNT(sj), dt, right));
        TRY(lmpi_sched_recv(s, at(rbuf, OFF(rj), dt), CNT(rj), dt, left));
        TRY(lmpi_sched_fence(s));
    }
#undef CNT
#undef OFF
    return LMPI_OK;
}

/* ---- allreduce: Rabenseifner --------------------------------------------- */
/* The fold: ranks below 2 * rem pair up, the odd one of each pair carries
 * on with both contributions.  Returns the new rank (-1: sits out). */
lmpi_status lmpi_coll_fold_in(lmpi_sched *s, lmpi_comm *c, void *acc, void *tmp, MPI_Count count, lmpi_datatype *dt,
                              lmpi_op *op, int rem, int *newrank)
{
    int me = c->rank;
    *newrank = me - rem;
    if (me >= 2 * rem)
        return LMPI_OK;
    if (me % 2 == 0) {
        TRY(lmpi_sched_send(s, acc, count, dt, me + 1));
        *newrank = -1;
    } else {
        TRY(lmpi_sched_recv(s, tmp, count, dt, me - 1));
        TRY(lmpi_sched_fence(s));
        TRY(lmpi_sched_reduce(s, tmp, acc, count, dt, op));
        *newrank = me / 2;
    }
    return lmpi_sched_fence(s);
}

lmpi_status lmpi_coll_allreduce_rsag(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                                     lmpi_datatype *dt, lmpi_op *op)
{
    int n = c->size, pof2 = pof2_below(n), rem = n - pof2, newrank;
    void *tmp = scratch_for(s, count, dt);
    MPI_Count *cnts = lmpi_sched_scratch(s, sizeof(MPI_Count) * 2 * (size_t)pof2);
    if (!tmp || !cnts)
        return LMPI_ERR_NO_MEM;
    MPI_Count *disps = cnts + pof2;
    for (int i = 0; i < pof2; i++) {
        cnts[i] = count / pof2 + (i < count % pof2);
        disps[i] = i ? disps[i - 1] + cnts[i - 1] : 0;
    }
    TRY(start_acc(s, sbuf, rbuf, count, dt));
    TRY(lmpi_coll_fold_in(s, c, rbuf, tmp, count, dt, op, rem, &newrank));
    if (newrank >= 0) {
        int mask = 1, send_idx = 0, recv_idx = 0, last_idx = pof2;
        while (mask < pof2) { /* recursive halving */
            int newdst = newrank ^ mask, dst = unfold(newdst, rem);
            MPI_Count send_cnt = 0, recv_cnt = 0;
            if (newrank < newdst) {
                send_idx = recv_idx + pof2 / (mask * 2);
                for (int i = send_idx; i < last_idx; i++)
                    send_cnt += cnts[i];
                for (int i = recv_idx; i < send_idx; i++)
                    recv_cnt += cnts[i];
            } else {
                recv_idx = send_idx + pof2 / (mask * 2);
                for (int i = send_idx; i < recv_idx; i++)
                    send_cnt += cnts[i];
                for (int i = recv_idx; i < last_idx; i++)
                    recv_cnt += cnts[i];
            }
            TRY(lmpi_sched_send(s, at(rbuf, disps[send_idx], dt), send_cnt, dt, dst));
            TRY(lmpi_sched_recv(s, at(tmp, disps[recv_idx], dt), recv_cnt, dt, dst));
            TRY(lmpi_sched_fence(s));
            TRY(lmpi_sched_reduce(s, at(tmp, disps[recv_idx], dt), at(rbuf, disps[recv_idx], dt), recv_cnt, dt, op));
            TRY(lmpi_sched_fence(s));
            send_idx = recv_idx;
            mask <<= 1;
            if (mask < pof2)
                last_idx = recv_idx + pof2 / mask;
        }
        for (mask >>= 1; mask > 0; mask >>= 1) { /* recursive doubling */
            int newdst = newrank ^ mask, dst = unfold(newdst, rem);
            MPI_Count send_cnt = 0, recv_cnt = 0;
            if (newrank < newdst) {
                if (mask != pof2 / 2)
                    last_idx += pof2 / (mask * 2);
                recv_idx = send_idx + pof2 / (mask * 2);
                for (int i = send_idx; i < recv_idx; i++)
                    send_cnt += cnts[i];
                for (int i = recv_idx; i < last_idx; i++)
                    recv_cnt += cnts[i];
            } else {
                recv_idx = send_idx - pof2 / (mask * 2);
                for (int i = send_idx; i < last_idx; i++)
                    send_cnt += cnts[i];
                for (int i = recv_idx; i < send_idx; i++)
                    recv_cnt += cnts[i];
            }
            TRY(lmpi_sched_send(s, at(rbuf, disps[send_idx], dt), send_cnt, dt, dst));
            TRY(lmpi_sched_recv(s, at(rbuf, disps[recv_idx], dt), recv_cnt, dt, dst));
            TRY(lmpi_sched_fence(s));
            if (newrank > newdst)
                send_idx = recv_idx;
        }
    }
    return lmpi_coll_fold_out(s, c, rbuf, count, dt, rem);
}

lmpi_status lmpi_coll_fold_out(lmpi_sched *s, lmpi_comm *c, void *acc, MPI_Count count, lmpi_datatype *dt, int rem)
{
    int me = c->rank;
    if (me >= 2 * rem)
        return LMPI_OK;
    if (me % 2) /* the odd partner hands the result back */
        TRY(lmpi_sched_send(s, acc, count, dt, me - 1));
    else
        TRY(lmpi_sched_recv(s, acc, count, dt, me + 1));
    return lmpi_sched_fence(s);
}

/* ---- alltoall: Bruck ------------------------------------------------------- */
lmpi_status lmpi_coll_alltoall_bruck(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                     lmpi_datatype *sdt, void *rbuf, MPI_Count rcount, lmpi_datatype *rdt)
{
    lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
    int n = c->size, me = c->rank;
    MPI_Count bsz = scount * sdt->size;
    if (bsz != rcount * rdt->size) {
        lmpi_err_detail("alltoall: %lld bytes sent per rank, %lld expected", (long long)bsz,
                        (long long)(rcount * rdt->size));
        return LMPI_ERR_TRUNCATE;
    }
    /* any layout: blocks are packed into tmp and unpacked at the end (ranks
     * may pass types of one signature but different layouts, and every
     * rank must take this algorithm or none) */
    MPI_Count sstride = scount * sdt->extent, rstride = rcount * rdt->extent;
    char *tmp = lmpi_sched_scratch(s, (size_t)(n * bsz) + 1);
    char *pack = lmpi_sched_scratch(s, (size_t)(n * bsz) + 1), *unpack = lmpi_sched_scratch(s, (size_t)(n * bsz) + 1);
    if (!tmp || !pack || !unpack)
        return LMPI_ERR_NO_MEM;
    /* rotate: block i of tmp is what goes i ranks ahead */
    for (int i = 0; i < n; i++)
        TRY(lmpi_sched_copy(s, (const char *)sbuf + ((me + i) % n) * sstride, scount, sdt, tmp + i * bsz, bsz, byte));
    TRY(lmpi_sched_fence(s));
    for (int pof = 1; pof < n; pof <<= 1) {
        /* the blocks whose distance has this bit travel pof ranks ahead */
        int k = 0;
        for (int i = 1; i < n; i++)
            if (i & pof)
                TRY(lmpi_sched_copy(s, tmp + i * bsz, bsz, byte, pack + (k++) * bsz, bsz, byte));
        TRY(lmpi_sched_fence(s));
        TRY(lmpi_sched_send(s, pack, k * bsz, byte, (me + pof) % n));
        TRY(lmpi_sched_recv(s, unpack, k * bsz, byte, (me - pof + n) % n));
        TRY(lmpi_sched_fence(s));
        k = 0;
        for (int i = 1; i < n; i++)
            if (i & pof)
                TRY(lmpi_sched_copy(s, unpack + (k++) * bsz, bsz, byte, tmp + i * bsz, bsz, byte));
        TRY(lmpi_sched_fence(s));
    }
    /* block i came from i ranks behind */
    for (int i = 0; i < n; i++)
        TRY(lmpi_sched_copy(s, tmp + i * bsz, bsz, byte, (char *)rbuf + ((me - i + n) % n) * rstride, rcount, rdt));
    return lmpi_sched_fence(s);
}

/* ---- allgather: Bruck --------------------------------------------------------- */
/* ceil(log2 n) rounds instead of the ring's n - 1: in round k every rank
 * passes the blocks it has gathered so far to the rank 2^k behind it.  Each
 * round is a wait for another process, which costs a context switch when
 * ranks outnumber cores; the ring's n - 1 of them made 16 ranks on 2 cores
 * twice as slow as the peers (docs/performance.md). */
lmpi_status lmpi_coll_allgather_bruck(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                      lmpi_datatype *sdt, void *rbuf, MPI_Count rcount, lmpi_datatype *rdt)
{
    lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
    int n = c->size, me = c->rank;
    MPI_Count bsz = rcount * rdt->size, rstride = rcount * rdt->extent;
    char *rp = rbuf; /* any layout of rdt: the blocks travel packed in tmp */
    /* block i of tmp is the block of rank me + i */
    char *tmp = lmpi_sched_scratch(s, (size_t)(n * bsz) + 1);
    if (!tmp)
        return LMPI_ERR_NO_MEM;
    if (IN_PLACE(sbuf))
        TRY(lmpi_sched_copy(s, rp + me * rstride, rcount, rdt, tmp, bsz, byte));
    else
        TRY(lmpi_sched_copy(s, sbuf, scount, sdt, tmp, bsz, byte));
    TRY(lmpi_sched_fence(s));
    for (int pof = 1; pof < n; pof <<= 1) {
        int k = pof < n - pof ? pof : n - pof;
        TRY(lmpi_sched_send(s, tmp, k * bsz, byte, (me - pof + n) % n));
        TRY(lmpi_sched_recv(s, tmp + pof * bsz, k * bsz, byte, (me + pof) % n));
        TRY(lmpi_sched_fence(s));
    }
    TRY(lmpi_sched_copy(s, tmp, (n - me) * bsz, byte, rp + me * rstride, (n - me) * rcount, rdt));
    if (me > 0)
        TRY(lmpi_sched_copy(s, tmp + (n - me) * bsz, me * bsz, byte, rp, me * rcount, rdt));
    return lmpi_sched_fence(s);
}

/* ---- reduce_scatter: recursive halving --------------------------------------- */
lmpi_status lmpi_coll_reduce_scatter_halving(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf,
                                             const blocks *rb, lmpi_datatype *dt, lmpi_op *op)
{
    int n = c->size, me = c->rank, pof2 = pof2_below(n), rem = n - pof2, newrank;
    MPI_Count total = 0;
    MPI_Count *disps = lmpi_sched_scratch(s, sizeof(MPI_Count) * (size_t)(n + 2 * pof2));
    if (!disps)
        return LMPI_ERR_NO_MEM;
    MPI_Count *ncnt = disps + n, *ndisp = ncnt + pof2;
    for (int i = 0; i < n; i++) {
        disps[i] = total;
        total += block_count(rb, i);
    }
    /* new rank i covers the blocks of the ranks it stands for */
    for (int i = 0; i < pof2; i++) {
        int r = unfold(i, rem);
        ncnt[i] = block_count(rb, r) + (i < rem ? block_count(rb, r - 1) : 0);
        ndisp[i] = i < rem ? disps[r - 1] : disps[r];
    }
    void *acc = scratch_for(s, total, dt), *tmp = scratch_for(s, total, dt);
    if (!acc || !tmp)
        return LMPI_ERR_NO_MEM;
    TRY(lmpi_sched_copy(s, IN_PLACE(sbuf) ? rbuf : sbuf, total, dt, acc, total, dt));
    TRY(lmpi_sched_fence(s));
    TRY(lmpi_coll_fold_in(s, c, acc, tmp, total, dt, op, rem, &newrank));
    if (newrank >= 0) {
        int send_idx = 0, recv_idx = 0, last_idx = pof2;
        for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
            int newdst = newrank ^ mask, dst = unfold(newdst, rem);
            int s_lo, s_hi, r_lo, r_hi;
            if (newrank < newdst) { /* keep the lower half */
                send_idx = recv_idx + mask;
                s_lo = send_idx, s_hi = last_idx, r_lo = recv_idx, r_hi = send_idx;
            } else {
                recv_idx = send_idx + mask;
                s_lo = send_idx, s_hi = recv_idx, r_lo = recv_idx, r_hi = last_idx;
            }
            MPI_Count send_cnt = 0, recv_cnt = 0;
            for (int i = s_lo; i < s_hi; i++)
                send_cnt += ncnt[i];
            for (int i = r_lo; i < r_hi; i++)
                recv_cnt += ncnt[i];
            TRY(lmpi_sched_send(s, at(acc, ndisp[s_lo], dt), send_cnt, dt, dst));
            TRY(lmpi_sched_recv(s, at(tmp, ndisp[r_lo], dt), recv_cnt, dt, dst));
            TRY(lmpi_sched_fence(s));
            TRY(lmpi_sched_reduce(s, at(tmp, ndisp[r_lo], dt), at(acc, ndisp[r_lo], dt), recv_cnt, dt, op));
            TRY(lmpi_sched_fence(s));
            /* the kept range starts at recv_idx either way */
            if (newrank < newdst)
                last_idx = send_idx;
            send_idx = recv_idx;
        }
    }
    /* acc now holds the blocks of the ranks this new rank stands for */
    MPI_Count mine = block_count(rb, me);
    if (me < 2 * rem && me % 2) {
        TRY(lmpi_sched_send(s, at(acc, disps[me - 1], dt), block_count(rb, me - 1), dt, me - 1));
    } else if (me < 2 * rem) {
        TRY(lmpi_sched_recv(s, rbuf, mine, dt, me + 1));
        return lmpi_sched_fence(s);
    }
    TRY(lmpi_sched_copy(s, at(acc, disps[me], dt), mine, dt, rbuf, mine, dt));
    return lmpi_sched_fence(s);
}
