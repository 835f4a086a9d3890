/* The RMA module without mpiexec (a singleton): Table II's metadata model,
 * the lock word protocol (values of the words after each call), the bounded
 * pool of delayed issue, element-wise atomics on derived layouts, dynamic
 * windows' region checks, and the path in messages to itself. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "rma/win.h"
#include "runtime/config.h"
#include "unit.h"

static void metadata_model(void)
{
    /* ours is constant in P; the per-target and queued strategies grow */
    uint64_t small = lmpi_rma_metadata_bytes(LMPI_RMA_ASPECT_WINDOW, "compact", 2, 0);
    CHECK_EQ(lmpi_rma_metadata_bytes(LMPI_RMA_ASPECT_WINDOW, "compact", 1u << 20, 0), small);
    CHECK(small <= 256);
    CHECK_EQ(lmpi_rma_metadata_bytes(LMPI_RMA_ASPECT_WINDOW, "per_target", 1u << 20, 0) -
                 lmpi_rma_metadata_bytes(LMPI_RMA_ASPECT_WINDOW, "per_target", (1u << 20) - 1, 0),
             60); /* base 8 + disp unit 4 + key 48 per target */
    CHECK_EQ(lmpi_rma_metadata_bytes(LMPI_RMA_ASPECT_FENCE, "barrier", 1u << 20, 0), 0);
    CHECK_EQ(lmpi_rma_metadata_bytes(LMPI_RMA_ASPECT_FENCE, "reduce_scatter", 1000, 0), 4000);
    CHECK_EQ(lmpi_rma_metadata_bytes(LMPI_RMA_ASPECT_LOCK, "mcs", 1u << 20, 0), 2 * LMPI_RMA_LINE);
    CHECK_EQ(lmpi_rma_metadata_bytes(LMPI_RMA_ASPECT_LOCK, "queued", 2049, 0), 2048 * 32);
    CHECK_EQ(lmpi_rma_metadata_bytes(LMPI_RMA_ASPECT_OUTGOING, "eager", 2, 4u << 20), 0);
    CHECK(lmpi_rma_metadata_bytes(LMPI_RMA_ASPECT_OUTGOING, "delayed", 2, 4u << 20) ==
          lmpi_rma_metadata_bytes(LMPI_RMA_ASPECT_OUTGOING, "delayed", 2, 1));
    CHECK_EQ(lmpi_rma_metadata_bytes(LMPI_RMA_ASPECT_OUTGOING, "delayed_unbounded", 2, 10), 10 * sizeof(lmpi_rma_op));
    CHECK_EQ(sizeof(lmpi_win_slot), 4 * LMPI_RMA_LINE);
}

static void lock_words(void)
{
    long *base;
    MPI_Win win;
    MPI_Win_allocate(64 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    lmpi_win *w = (lmpi_win *)win;
    lmpi_win_slot *s = lmpi_win_slot_of(w, 0);
    CHECK_EQ(atomic_load(&s->lock), 0);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    CHECK_EQ(atomic_load(&s->lock), 1);
    MPI_Win_unlock(0, win);
    CHECK_EQ(atomic_load(&s->lock), 0);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    CHECK(atomic_load(&s->lock) == LMPI_RMA_EXCL);
    MPI_Win_unlock(0, win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, MPI_MODE_NOCHECK, win); /* nothing acquired */
    CHECK_EQ(atomic_load(&s->lock), 0);
    MPI_Win_unlock(0, win);
    MPI_Win_lock_all(0, win);
    CHECK_EQ(atomic_load(&w->seg->all_word), 1);
    CHECK_EQ(atomic_load(&s->lock), 0); /* no per-target state */

    /* element-wise atomics along a strided target: every other long */
    for (int i = 0; i < 64; i++)
        base[i] = i;
    MPI_Datatype vec;
    MPI_Type_vector(8, 1, 2, MPI_LONG, &vec);
    MPI_Type_commit(&vec);
    long add[8], old[8];
    for (int i = 0; i < 8; i++)
        add[i] = 100;
    MPI_Get_accumulate(add, 8, MPI_LONG, old, 8, MPI_LONG, 0, 0, 1, vec, MPI_SUM, win);
    MPI_Win_flush(0, win);
    for (int i = 0; i < 8; i++) {
        CHECK_EQ(old[i], 2 * i);
        CHECK_EQ(base[2 * i], 2 * i + 100);
        CHECK_EQ(base[2 * i + 1], 2 * i + 1);
    }
    double d = 1.5, dold;
    MPI_Fetch_and_op(&d, &dold, MPI_DOUBLE, 0, 20, MPI_SUM, win);
    MPI_Fetch_and_op(&d, &dold, MPI_DOUBLE, 0, 20, MPI_SUM, win);
    CHECK(dold == 1.5);
    long cmp = 21, swap = -3, res = 0;
    MPI_Compare_and_swap(&swap, &cmp, &res, MPI_LONG, 0, 21, win);
    CHECK_EQ(res, 21);
    CHECK_EQ(base[21], -3);
    MPI_Type_free(&vec);
    MPI_Win_unlock_all(win);
    CHECK_EQ(atomic_load(&w->seg->all_word), 0);
    MPI_Win_free(&win);
}

static void delayed_pool(void)
{
    const char *saved = lmpi_config.rma_issue;
    int64_t saved_pool = lmpi_config.rma_pool;
    lmpi_config.rma_issue = "delayed";
    lmpi_config.rma_pool = 4;
    long *base;
    MPI_Win win;
    MPI_Win_allocate(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    lmpi_win *w = (lmpi_win *)win;
    base[0] = 0;
    uint64_t drains = lmpi_rma_stat.pool_drains, buffered = lmpi_rma_stat.buffered;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    CHECK_EQ(atomic_load(&lmpi_win_slot_of(w, 0)->lock), 0); /* delayed: acquired at the first drain */
    long one = 1;
    for (int i = 0; i < 4; i++)
        MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
    CHECK_EQ(base[0], 0);
    CHECK_EQ(lmpi_rma_stat.pool_drains, drains);
    MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win); /* the pool is full: back-pressure */
    CHECK_EQ(lmpi_rma_stat.pool_drains, drains + 1);
    CHECK_EQ(base[0], 4);
    CHECK(atomic_load(&lmpi_win_slot_of(w, 0)->lock) == LMPI_RMA_EXCL);
    MPI_Win_unlock(0, win);
    CHECK_EQ(base[0], 5);
    CHECK_EQ(lmpi_rma_stat.buffered, buffered + 5);
    CHECK_EQ(atomic_load(&lmpi_win_slot_of(w, 0)->lock), 0);
    MPI_Win_free(&win);
    lmpi_config.rma_issue = saved;
    lmpi_config.rma_pool = saved_pool;
}

static void dynamic_regions(void)
{
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    /* two regions with a gap between them (adjacent ones would merge) */
    static long ab[48];
    long *a = ab, *b = ab + 32;
    CHECK_EQ(MPI_Win_attach(win, a, 16 * sizeof(long)), MPI_SUCCESS);
    CHECK_EQ(MPI_Win_attach(win, b, 16 * sizeof(long)), MPI_SUCCESS);
    int cls;
    MPI_Error_class(MPI_Win_attach(win, a + 15, 16), &cls);
    CHECK_EQ(cls, MPI_ERR_RMA_ATTACH);
    MPI_Aint da, db;
    MPI_Get_address(a, &da);
    MPI_Get_address(b, &db);
    long v = 7;
    MPI_Win_lock_all(0, win);
    CHECK_EQ(MPI_Put(&v, 1, MPI_LONG, 0, db + 15 * (MPI_Aint)sizeof(long), 1, MPI_LONG, win), MPI_SUCCESS);
    MPI_Error_class(MPI_Put(&v, 2, MPI_LONG, 0, db + 15 * (MPI_Aint)sizeof(long), 2, MPI_LONG, win), &cls);
    CHECK_EQ(cls, MPI_ERR_RMA_RANGE);
    MPI_Win_unlock_all(win);
    CHECK_EQ(b[15], 7);
    MPI_Win_detach(win, a);
    MPI_Win_lock_all(0, win);
    MPI_Error_class(MPI_Put(&v, 1, MPI_LONG, 0, da, 1, MPI_LONG, win), &cls);
    CHECK_EQ(cls, MPI_ERR_RMA_RANGE); /* detached */
    MPI_Win_unlock_all(win);
    MPI_Win_detach(win, b);
    MPI_Win_free(&win);
}

/* The path in messages (rma/am.c), to this process itself: operations of
 * several packets along a strided target, fetching ones, a lock, and a
 * displacement the target refuses, reported at the next quiet. */
static void in_messages(void)
{
    bool was = lmpi_config.rma_messages;
    lmpi_config.rma_messages = true;
    enum { M = 5000 }; /* 40 KB: three packets of 16 KiB */
    long *base, *src = malloc(M * sizeof(long)), *dst = malloc(M * sizeof(long));
    MPI_Win win;
    MPI_Win_allocate(M * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    lmpi_win *w = (lmpi_win *)win;
    CHECK(w->am);
    CHECK(!w->shared_data);
    for (int i = 0; i < M; i++) {
        base[i] = -1;
        src[i] = i;
    }
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(src, M - 1, MPI_LONG, 0, 1, M - 1, MPI_LONG, win);
    MPI_Win_flush(0, win);
    CHECK_EQ(base[0], -1);
    CHECK_EQ(base[1], 0);
    CHECK_EQ(base[M - 1], M - 2);
    MPI_Get(dst, M, MPI_LONG, 0, 0, M, MPI_LONG, win);
    MPI_Win_flush(0, win);
    CHECK(!memcmp(dst, base, M * sizeof(long)));
    /* 2000 runs: every other long */
    MPI_Datatype vec;
    MPI_Type_vector(M / 2, 1, 2, MPI_LONG, &vec);
    MPI_Type_commit(&vec);
    MPI_Accumulate(src, M / 2, MPI_LONG, 0, 0, 1, vec, MPI_SUM, win);
    MPI_Get_accumulate(src, M / 2, MPI_LONG, dst, M / 2, MPI_LONG, 0, 0, 1, vec, MPI_SUM, win);
    MPI_Win_flush(0, win);
    int bad = 0;
    for (int i = 0; i < M / 2; i++) {
        bad += dst[i] != (2 * i == 0 ? -1 : 2 * i - 1) + i; /* after the first accumulate */
        bad += base[2 * i] != (2 * i == 0 ? -1 : 2 * i - 1) + 2 * i;
        bad += base[2 * i + 1] != 2 * i;
    }
    CHECK_EQ(bad, 0);
    long one = 1, old = 0, cmp = 2, swap = 77;
    MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 3, MPI_SUM, win);
    MPI_Compare_and_swap(&swap, &cmp, &dst[0], MPI_LONG, 0, 3, win);
    MPI_Win_flush(0, win);
    CHECK_EQ(old, 2);
    CHECK_EQ(dst[0], 3); /* 2 + 1: no swap */
    CHECK_EQ(base[3], 3);
    /* what the target refuses comes back at the next quiet */
    lmpi_rma_op bad_op = {.kind = LMPI_RMA_PUT, .target = 0, .disp = M, .obuf = src, .ocount = 1, .tcount = 1,
                          .odt = lmpi_datatype_from_handle(MPI_LONG), .tdt = lmpi_datatype_from_handle(MPI_LONG)};
    CHECK_EQ(lmpi_rma_am_issue(w, &bad_op), LMPI_OK);
    CHECK_EQ(lmpi_rma_am_quiet(w), LMPI_ERR_RMA_RANGE);
    CHECK_EQ(lmpi_rma_am_quiet(w), LMPI_OK); /* reported once */
    /* after a first put to a target the next ones go unanswered: a refusal still comes back */
    MPI_Put(src, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
    CHECK_EQ(lmpi_rma_am_issue(w, &bad_op), LMPI_OK);
    MPI_Put(src, 1, MPI_LONG, 0, 1, 1, MPI_LONG, win);
    CHECK_EQ(lmpi_rma_am_quiet(w), LMPI_ERR_RMA_RANGE);
    MPI_Win_unlock(0, win);
    MPI_Type_free(&vec);
    MPI_Win_free(&win);
    free(src);
    free(dst);
    lmpi_config.rma_messages = was;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    metadata_model();
    lock_words();
    delayed_pool();
    dynamic_regions();
    in_messages();
    MPI_Finalize();
    return unit_finish("test_rma");
}
