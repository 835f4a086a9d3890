/* ulfm_solver: an iterative solver that survives the loss of a rank
 * (run it with mpiexec --with-ft ulfm).
 *
 * A 1-D smoothing iteration, x[i] <- (x[i-1] + x[i] + x[i+1]) / 3 with fixed
 * ends, over N values cut into one block per rank.  Every CKPT iterations
 * each rank copies its block into its own memory and into its buddy's, the
 * rank on its left.  When a rank fails (here: rank VICTIM kills itself at
 * iteration KILL_AT), the others see an error in the halo exchange, revoke
 * the communicator so that every survivor stops too, shrink it to the
 * survivors, and roll back to the checkpoint; the dead rank's blocks come
 * from its buddy's copy, and the buddy owns them from then on.  At the end
 * rank 0 compares the result with the same iterations computed alone: the
 * answer is the one the run would have had without the failure.
 *
 *   ulfm_solver [VICTIM [KILL_AT]]   (VICTIM -1: no failure; default 2, 25) */
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B 1000     /* values per block */
#define ITERS 60
#define CKPT 10

static MPI_Comm comm;
static int nblocks;              /* blocks in all: the first run's ranks */
static int lo, hi;               /* my blocks [lo, hi) */
static double *x, *mine, *buddy; /* my values; my checkpoint; my right neighbour's */
static int buddy_lo, buddy_hi;   /* which blocks the buddy copy holds */

static void step(double *v, int n, double left, double right)
{
    double prev = left;
    for (int i = 0; i < n; i++) {
        double next = i + 1 < n ? v[i + 1] : right, cur = v[i];
        v[i] = (prev + cur + next) / 3;
        prev = cur;
    }
}

/* My values into my own memory and into my buddy's (the rank on my left),
 * and my right neighbour's into mine; each says which blocks it sends. */
static int checkpoint(void)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int n = (hi - lo) * B, left = (rank + size - 1) % size, right = (rank + 1) % size;
    memcpy(mine, x, (size_t)n * sizeof(double));
    int range[2] = {lo, hi}, theirs[2];
    int rc = MPI_Sendrecv(range, 2, MPI_INT, left, 1, theirs, 2, MPI_INT, right, 1, comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return rc;
    buddy = realloc(buddy, (size_t)(theirs[1] - theirs[0]) * B * sizeof(double));
    buddy_lo = theirs[0], buddy_hi = theirs[1];
    return MPI_Sendrecv(x, n, MPI_DOUBLE, left, 2, buddy, (buddy_hi - buddy_lo) * B, MPI_DOUBLE, right, 2, comm,
                        MPI_STATUS_IGNORE);
}

static int iterate(void)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int n = (hi - lo) * B;
    double left = 1.0, right = 0.0; /* the fixed ends */
    int rc = MPI_SUCCESS;
    if (rank > 0)
        rc = MPI_Sendrecv(&x[0], 1, MPI_DOUBLE, rank - 1, 3, &left, 1, MPI_DOUBLE, rank - 1, 3, comm, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && rank < size - 1)
        rc = MPI_Sendrecv(&x[n - 1], 1, MPI_DOUBLE, rank + 1, 3, &right, 1, MPI_DOUBLE, rank + 1, 3, comm,
                          MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        step(x, n, left, right);
    return rc;
}

/* After a failure: everyone stops, the survivors continue on a new
 * communicator from the last checkpoint, the buddy adopting the blocks of
 * the rank on its right if that one is gone. */
static void recover(int *it, int ckpt_it)
{
    MPIX_Comm_revoke(comm);
    MPI_Comm survivors;
    MPIX_Comm_shrink(comm, &survivors);
    MPI_Group failed, all;
    MPIX_Comm_get_failed(comm, &failed);
    int nfailed;
    MPI_Group_size(failed, &nfailed);
    MPI_Comm_group(comm, &all);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int right = (rank + 1) % size, right_failed = 0;
    MPI_Group_translate_ranks(all, 1, &right, failed, &right_failed);
    right_failed = right_failed != MPI_UNDEFINED;
    MPI_Group_free(&failed);
    MPI_Group_free(&all);
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    comm = survivors;
    /* roll back, and adopt the right neighbour's blocks from the buddy copy */
    int n = (hi - lo) * B;
    if (right_failed && buddy_lo == hi) {
        x = realloc(x, (size_t)(buddy_hi - lo) * B * sizeof(double));
        memcpy(x, mine, (size_t)n * sizeof(double));
        memcpy(x + n, buddy, (size_t)(buddy_hi - buddy_lo) * B * sizeof(double));
        hi = buddy_hi;
        mine = realloc(mine, (size_t)(hi - lo) * B * sizeof(double));
    } else {
        memcpy(x, mine, (size_t)n * sizeof(double));
    }
    /* every survivor agrees that the recovery is complete here */
    int ok = 1;
    MPIX_Comm_agree(comm, &ok);
    int newrank;
    MPI_Comm_rank(comm, &newrank);
    if (newrank == 0)
        printf("  %d rank(s) failed at iteration %d: %d survivors go on from iteration %d\n", nfailed, *it,
               size - nfailed, ckpt_it);
    *it = ckpt_it;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int victim = argc > 1 ? atoi(argv[1]) : 2, kill_at = argc > 2 ? atoi(argv[2]) : 25;
    int rank;
    MPI_Comm_size(MPI_COMM_WORLD, &nblocks);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (victim == 0 || victim >= nblocks)
        victim = -1; /* (rank 0 reports, and has no buddy on its left to adopt it in order) */
    comm = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    lo = rank, hi = rank + 1;
    x = calloc(B, sizeof(double));
    mine = calloc(B, sizeof(double));
    for (int i = 0; i < B; i++)
        x[i] = sin(0.001 * (rank * B + i));
    /* (survivors roll back to the last checkpoint they all took: a failure
     * less than CKPT iterations after one, as here) */
    int ckpt_it = 0;
    for (int it = 0; it < ITERS;) {
        int rc = MPI_SUCCESS;
        if (it % CKPT == 0) {
            rc = checkpoint();
            ckpt_it = it;
        }
        if (rank == victim && it == kill_at)
            raise(SIGKILL);
        if (rc == MPI_SUCCESS)
            rc = iterate();
        if (rc != MPI_SUCCESS) {
            recover(&it, ckpt_it);
            continue;
        }
        it++;
    }
    /* the answer, and the same iterations computed alone */
    double sum = 0, total = 0;
    for (int i = 0; i < (hi - lo) * B; i++)
        sum += x[i];
    MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    int crank;
    MPI_Comm_rank(comm, &crank);
    if (crank == 0) {
        double *all = malloc((size_t)nblocks * B * sizeof(double)), want = 0;
        for (int i = 0; i < nblocks * B; i++)
            all[i] = sin(0.001 * i);
        for (int it = 0; it < ITERS; it++)
            step(all, nblocks * B, 1.0, 0.0);
        for (int i = 0; i < nblocks * B; i++)
            want += all[i];
        int match = fabs(total - want) <= 1e-9 * fabs(want);
        printf("  sum after %d iterations: %.12f (computed alone: %.12f): %s\n", ITERS, total, want,
               match ? "the same answer" : "DIFFERENT");
        free(all);
        if (!match)
            MPI_Abort(comm, 1);
    }
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
