/* User-Level Failure Mitigation under mpiexec --with-ft ulfm: one rank is
 * killed (SIGKILL) while the others wait on it, and the survivors see the
 * right error class, revoke, shrink, agree and finish a computation on the
 * shrunken communicator.
 *
 *   t_ulfm basic       no failure: revoke, agree, shrink and the queries
 *   t_ulfm kill        (4+ ranks) rank 2 dies while rank 0 waits in
 *                      MPI_Recv from it, rank 1 in MPI_Recv(MPI_ANY_SOURCE)
 *                      and the others in MPI_Wait on an MPI_Irecv from it
 *                      (SIGKILL; with T_ULFM_EXIT set it exits instead)
 *   t_ulfm agree_kill  (4+ ranks) rank 0, the agreement's coordinator, dies
 *                      during MPIX_Comm_agree: the others still agree
 *   t_ulfm coord_kill  (4+ ranks) the coordinator dies having told one member
 *   t_ulfm coll_kill   (4+ ranks) rank 2 dies in the middle of a loop of
 *                      collectives (shared-memory allreduce, 64 KiB bcast
 *                      over point-to-point, barrier, ibarrier, a persistent
 *                      allreduce, a neighbourhood allgather on a ring,
 *                      iallreduce, alltoall): every
 *                      survivor's collective ends with an error, none hangs
 *   t_ulfm rma_kill    (4+ ranks) rank 2 dies between fences of a loop of
 *                      puts: every survivor's fence ends with an error; the
 *                      survivors shrink, make a window on the shrunken
 *                      communicator and check a fence epoch's data
 *   t_ulfm lock_kill   (4+ ranks) rank 2 dies holding an exclusive lock on
 *                      rank 0's window: the others' MPI_Win_lock on rank 0
 *                      ends with an error instead of waiting forever; a
 *                      lock on rank 1 (free) works or reports the failure
 *   t_ulfm io_kill     (4+ ranks) rank 2 dies in a loop of collective writes
 *                      (MPI_File_write_at_all, 64 KiB a rank): every
 *                      survivor's write ends with an error; the survivors
 *                      shrink, write and read back the file over the new
 *                      communicator
 *   t_ulfm early_revoke (2+ ranks, no failure) rank 0 revokes each new
 *                      communicator as soon as its MPI_Comm_dup returns, a
 *                      revoke that can reach a member still inside its dup:
 *                      every member sees every one revoked
 *   t_ulfm spawn_kill  (4+ ranks) rank 2 dies; MPI_Comm_spawn over
 *                      MPI_COMM_WORLD ends with an error at every survivor
 *                      (nothing is left running); over the shrunken
 *                      communicator it spawns 2 children that answer
 *   t_ulfm accept_kill (4 ranks) ranks 0-1 accept, 2-3 connect; rank 1
 *                      dies inside MPI_Comm_accept before the connect
 *                      arrives: all three survivors' calls end with
 *                      MPIX_ERR_PROC_FAILED (the connecting side's too:
 *                      its root must not wait for a root that gave up)
 *   t_ulfm connect_kill (4 ranks) the same with rank 3 dying inside
 *                      MPI_Comm_connect before the accept begins
 *   t_ulfm spawn_late  (4+ ranks) rank 2 dies inside MPI_Comm_spawn after
 *                      the root started the children (LMPI_FT_INJECT
 *                      holds the root there): every survivor's spawn ends
 *                      with MPIX_ERR_PROC_FAILED, the children end, and a
 *                      spawn over the shrunken communicator works
 *   t_ulfm jobs_serve FILE / jobs_visit FILE (2 ranks each, two jobs of
 *                      two mpiexecs, ulfm_jobs.sh) meet through a port; the
 *                      visitor's rank 1 dies: the serving job's receive from
 *                      it and a barrier over the intercommunicator end with
 *                      MPIX_ERR_PROC_FAILED without any launcher telling it;
 *                      with a third argument "inject" nobody dies and the
 *                      serving rank 0's transfers to the other job fail
 *                      (two hosts: multihost.sh jobs2)
 *   t_ulfm intercomm_kill (4 ranks) rank 1 dies; MPI_Intercomm_create
 *                      between ranks 0-1 and 2-3 over MPI_COMM_WORLD ends
 *                      with MPIX_ERR_PROC_FAILED at all three survivors
 *   t_ulfm child_kill  (4 ranks) a spawned child dies: the parents'
 *                      receive from it and collectives over the
 *                      intercommunicator end with MPIX_ERR_PROC_FAILED
 *   t_ulfm parent_kill (4 ranks) parent 3 dies: the children's receive
 *                      from it fails the same way
 *   t_ulfm respawn     (4 ranks) rank 3 dies; the survivors shrink, spawn a
 *                      replacement, agree over the intercommunicator, merge,
 *                      agree, reduce and shrink over the merged communicator
 *                      (two process groups); the replacement dies, and the
 *                      agreement and shrink go on without it
 *   t_ulfm win_revoke  (2+ ranks, no failure) a member revokes a window
 *                      while the others wait in a fence, then one while they
 *                      queue for its exclusive lock: their waits and every
 *                      later RMA call end with MPIX_ERR_REVOKED, the
 *                      queries work, MPI_Win_free succeeds
 *   t_ulfm free_kill   (4+ ranks) the coordinator of MPI_Win_free's
 *                      agreement dies having told one member; the free
 *                      completes at every survivor
 *   t_ulfm free_loop   (2+ ranks, no failure) 200 windows and 50 files made
 *                      and freed: the agreements of their frees and closes
 *                      leave no memory behind
 *   t_ulfm file_revoke (2+ ranks, no failure) rank 0 revokes a file while
 *                      the others wait in MPI_File_write_at_all: the same
 *                      for files, and MPI_File_close deletes it
 *   t_ulfm probe_kill  (4 ranks) rank 2 sends rank 0 a message and dies:
 *                      rank 0 still probes and receives that message, then
 *                      MPI_Probe from rank 2 fails; rank 1's MPI_Probe,
 *                      MPI_Iprobe and blocking MPI_Recv from MPI_ANY_SOURCE
 *                      fail with MPIX_ERR_PROC_FAILED (a blocking call
 *                      cannot stay pending) until it acknowledges, then
 *                      work; rank 3's MPI_Mprobe and MPI_Improbe from rank
 *                      2 fail
 *   t_ulfm shrink_ids  (2+ ranks, no failure, MPI_THREAD_MULTIPLE) shrinks
 *                      made beside other creations never share their
 *                      context id: an MPIX_Comm_ishrink outstanding while
 *                      MPI_Comm_dup runs in the same thread, then a thread
 *                      that shrinks while another dups; a message sent on
 *                      one communicator must never match a receive on the
 *                      other */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "mpitest.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int error_class(int code)
{
    int cls;
    MPI_Error_class(code, &cls);
    return cls;
}

/* This process's rank and the size of MPI_COMM_WORLD, whose errors from
 * here on are returned (the failure cases look at them). */
static void world_returning(int *rank, int *size)
{
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

/* A loop ended with error rc: it must be the failure's; acknowledge it and
 * shrink MPI_COMM_WORLD to the survivors. */
static MPI_Comm shrunk_after(int rc)
{
    int size, acked;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(rc != MPI_SUCCESS);
    CHECK_EQ(error_class(rc), MPIX_ERR_PROC_FAILED);
    MPIX_Comm_ack_failed(MPI_COMM_WORLD, size, &acked);
    MPI_Comm small = MPI_COMM_NULL;
    CHECK_EQ(MPIX_Comm_shrink(MPI_COMM_WORLD, &small), MPI_SUCCESS);
    return small;
}

/* Everyone alive: revoke, shrink to the survivors (ranks dead .. dead +
 * ndead - 1 failed), check the result with an allreduce over the new
 * communicator and agree on a flag. */
/* A nonblocking shrink's handle is valid when the call returns (bindings
 * convert it then, mpi4py sets its error handler at once) and names the
 * new communicator, with what was set on it meanwhile, at completion. */
static void ishrink(MPI_Comm comm, MPI_Comm *small)
{
    MPI_Request req;
    CHECK_EQ(MPIX_Comm_ishrink(comm, small, &req), MPI_SUCCESS);
    MPI_Comm early = *small;
    CHECK(early != MPI_COMM_NULL);
    int fint = MPI_Comm_toint(early);
    CHECK_EQ(MPI_Comm_set_errhandler(early, MPI_ERRORS_ARE_FATAL), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(*small == early);
    CHECK(MPI_Comm_fromint(fint) == early);
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(*small, &eh);
    CHECK(eh == MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(*small, MPI_ERRORS_RETURN);
}

static void recover_many(MPI_Comm comm, int dead, int ndead, int expect_size, bool nonblocking)
{
    int rank, flag;
    MPI_Comm_rank(comm, &rank);
    MPIX_Comm_revoke(comm);
    MPIX_Comm_is_revoked(comm, &flag);
    CHECK_EQ(flag, 1);
    CHECK_EQ(error_class(MPI_Barrier(comm)), MPIX_ERR_REVOKED);
    CHECK_EQ(error_class(MPI_Send(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, comm)), MPIX_ERR_REVOKED);
    MPI_Comm small;
    if (nonblocking)
        ishrink(comm, &small);
    else
        CHECK_EQ(MPIX_Comm_shrink(comm, &small), MPI_SUCCESS);
    int size, srank;
    MPI_Comm_size(small, &size);
    MPI_Comm_rank(small, &srank);
    CHECK_EQ(size, expect_size);
    CHECK_EQ(srank, dead >= 0 && rank >= dead + ndead ? rank - ndead : rank);
    /* the old ranks of the survivors, summed on the new communicator */
    int sum = 0, want = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, small);
    for (int r = 0; r < expect_size + (dead >= 0 ? ndead : 0); r++)
        want += dead >= 0 && r >= dead && r < dead + ndead ? 0 : r;
    CHECK_EQ(sum, want);
    int bits = ~(1 << srank);
    CHECK_EQ(MPIX_Comm_agree(small, &bits), MPI_SUCCESS);
    CHECK_EQ(bits, ~((1 << size) - 1));
    MPI_Comm_free(&small);
}

static void recover(MPI_Comm comm, int dead, int expect_size) { recover_many(comm, dead, 1, expect_size, false); }

/* A whole host goes (run with 2 ranks on each of 2 hosts): rank 2 kills its
 * host's proxy, whose ranks die with it (PR_SET_PDEATHSIG); ranks 0 and 1
 * wait in MPI_Recv from rank 3 and must see it fail. */
static void host_kill(void)
{
    int rank, size, buf;
    world_returning(&rank, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    if (rank >= 2) {
        if (rank == 2) {
            usleep(100000);
            kill(getppid(), SIGKILL);
        }
        for (;;)
            pause();
    }
    int rc = MPI_Recv(&buf, 1, MPI_INT, 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* Either survivor may hear of the other's revoke (in recover) before it
     * sees the failure itself; CI saw rank 0 do so once. */
    int cls = error_class(rc);
    if (cls != MPIX_ERR_PROC_FAILED && cls != MPIX_ERR_REVOKED)
        fprintf(stderr, "host_kill: rank %d: MPI_Recv returned class %d\n", rank, cls);
    CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED);
    if (rank == 0)
        printf("detected: %.1f ms after the barrier (the kill came 100 ms after it)\n", (now() - t0) * 1e3);
    /* The launcher posts the host's two failures one after the other: a
     * survivor stopped by the other's revoke may have been told of one so
     * far.  Both must be known within a second. */
    int acked = 0;
    for (double t1 = now(); now() - t1 < 1.0; usleep(1000)) {
        MPIX_Comm_ack_failed(MPI_COMM_WORLD, size, &acked);
        if (acked == 2)
            break;
    }
    CHECK_EQ(acked, 2);
    recover_many(MPI_COMM_WORLD, 2, 2, size - 2, false);
}

static void basic(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int flag = 1;
    MPIX_Comm_is_revoked(comm, &flag);
    CHECK_EQ(flag, 0);
    MPI_Group g;
    MPIX_Comm_get_failed(comm, &g);
    int gs;
    MPI_Group_size(g, &gs);
    CHECK_EQ(gs, 0);
    MPI_Group_free(&g);
    int acked = -1;
    MPIX_Comm_ack_failed(comm, size, &acked);
    CHECK_EQ(acked, 0);
    /* agreements in a row, each the AND of everyone's flags */
    for (int i = 0; i < 5; i++) {
        int v = rank == i % size ? 0x6 : 0x7;
        CHECK_EQ(MPIX_Comm_agree(comm, &v), MPI_SUCCESS);
        CHECK_EQ(v, 0x6);
    }
    MPI_Request req;
    int v = rank + 1;
    MPIX_Comm_iagree(comm, &v, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK_EQ(v, size == 1 ? 1 : 0);
    recover_many(comm, -1, 1, size, true);
    MPI_Comm_free(&comm);
}

static void kill_one(void)
{
    int rank, size;
    world_returning(&rank, &size);
    const int dead = 2;
    int buf = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    if (rank == dead) {
        usleep(100000);
        if (getenv("T_ULFM_EXIT")) /* under Hydra, which survives only exits */
            _exit(1);
        raise(SIGKILL);
    }
    int rc;
    if (rank == 0) {
        rc = MPI_Recv(&buf, 1, MPI_INT, dead, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_EQ(error_class(rc), MPIX_ERR_PROC_FAILED);
        printf("detected: %.1f ms after the barrier (the kill came 100 ms after it)\n", (now() - t0) * 1e3);
        /* rank 1's pending wildcard receive still gets this, once it acknowledged */
        MPI_Recv(&buf, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        buf = 42;
        MPI_Send(&buf, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else if (rank == 1) {
        /* a nonblocking wildcard receive: the wait fails, the receive stays */
        MPI_Request pending;
        int got = 0;
        MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &pending);
        rc = MPI_Wait(&pending, MPI_STATUS_IGNORE);
        CHECK_EQ(error_class(rc), MPIX_ERR_PROC_FAILED_PENDING);
        CHECK(pending != MPI_REQUEST_NULL);
        /* a test says so too, and that it is not complete (Open MPI's flag) */
        int flag = -1, index = -1;
        CHECK_EQ(error_class(MPI_Test(&pending, &flag, MPI_STATUS_IGNORE)), MPIX_ERR_PROC_FAILED_PENDING);
        CHECK_EQ(flag, 0);
        CHECK_EQ(error_class(MPI_Testany(1, &pending, &index, &flag, MPI_STATUS_IGNORE)), MPIX_ERR_PROC_FAILED_PENDING);
        CHECK_EQ(flag, 0);
        CHECK_EQ(index, 0);
        CHECK(pending != MPI_REQUEST_NULL);
        /* a blocking one fails and leaves nothing posted: it cannot stay
         * pending, so its class is MPIX_ERR_PROC_FAILED (as in Open MPI,
         * and MPICH's ft/anysource expects it) */
        rc = MPI_Recv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_EQ(error_class(rc), MPIX_ERR_PROC_FAILED);
        MPI_Group g;
        MPIX_Comm_get_failed(MPI_COMM_WORLD, &g);
        int n, wr;
        MPI_Group_size(g, &n);
        CHECK_EQ(n, 1);
        MPI_Group wg;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        int zero = 0;
        MPI_Group_translate_ranks(g, 1, &zero, wg, &wr);
        CHECK_EQ(wr, dead);
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
        int acked;
        MPIX_Comm_ack_failed(MPI_COMM_WORLD, 1, &acked);
        CHECK_EQ(acked, 1);
        /* acknowledged: the pending receive completes with rank 0's message */
        MPI_Send(&buf, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
        MPI_Status st;
        rc = MPI_Wait(&pending, &st);
        CHECK_EQ(rc, MPI_SUCCESS);
        CHECK_EQ(got, 42);
        CHECK_EQ(st.MPI_SOURCE, 0);
    } else {
        MPI_Request req;
        MPI_Irecv(&buf, 1, MPI_INT, dead, 0, MPI_COMM_WORLD, &req);
        MPI_Status st;
        rc = MPI_Wait(&req, &st);
        CHECK_EQ(error_class(rc), MPIX_ERR_PROC_FAILED);
        /* a new operation with the failed process fails at once */
        rc = MPI_Send(&buf, 1, MPI_INT, dead, 0, MPI_COMM_WORLD);
        CHECK(rc == MPI_SUCCESS || error_class(rc) == MPIX_ERR_PROC_FAILED);
    }
    /* making a communicator from one with a failed member fails, at every
     * survivor, instead of waiting for it */
    MPI_Comm d = MPI_COMM_NULL;
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &d);
    CHECK_EQ(error_class(rc), MPIX_ERR_PROC_FAILED);
    /* a blocking receive from a live rank ends when the communicator is
     * revoked: rank 0 revokes, the others wait on it */
    if (rank != 0) {
        rc = MPI_Recv(&buf, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_EQ(error_class(rc), MPIX_ERR_REVOKED);
    } else {
        usleep(20000);
    }
    recover_many(MPI_COMM_WORLD, dead, 1, size - 1, true);
}

/* Rank 0, the coordinator, dies having sent the decision to rank 1 only
 * (LMPI_FT_INJECT, set before MPI_Init): rank 1 returns with it, and the
 * others must decide the same value through the next coordinator. */
static void coord_kill(void)
{
    int rank, size;
    world_returning(&rank, &size);
    int v = 0xff & ~(1 << rank);
    MPIX_Comm_agree(MPI_COMM_WORLD, &v); /* rank 0 dies in here */
    int acked;
    MPIX_Comm_ack_failed(MPI_COMM_WORLD, size, &acked);
    MPI_Comm small;
    CHECK_EQ(MPIX_Comm_shrink(MPI_COMM_WORLD, &small), MPI_SUCCESS);
    int lo, hi;
    MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_BAND, small);
    MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_BOR, small);
    CHECK_EQ(lo, hi); /* everyone decided the same */
    int want = 0xff;
    for (int r = 0; r < size && r < 8; r++)
        want &= ~(1 << r);
    CHECK_EQ(v, want); /* rank 0 had contributed before it died */
    MPI_Comm_free(&small);
}

/* A fence epoch of puts over comm: each member puts its rank + 100 * round
 * into slot round % 2 of its right neighbour's window (the next epoch's
 * puts may land before this one's check: the other slot); returns the
 * first error. */
static int put_ring(MPI_Win win, MPI_Comm comm, int round, int *slots)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int v = rank + 100 * round;
    int rc = MPI_Put(&v, 1, MPI_INT, (rank + 1) % size, round % 2, 1, MPI_INT, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_fence(0, win);
    if (rc == MPI_SUCCESS)
        CHECK_EQ(slots[round % 2], (rank + size - 1) % size + 100 * round);
    return rc;
}

static void rma_kill(void)
{
    int rank, size, *slot;
    world_returning(&rank, &size);
    MPI_Win win;
    MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slot, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_fence(0, win);
    int rc = MPI_SUCCESS, i;
    for (i = 0; i < 100000 && rc == MPI_SUCCESS; i++) {
        if (rank == 2 && i == 300)
            raise(SIGKILL);
        rc = put_ring(win, MPI_COMM_WORLD, i, slot);
    }
    MPI_Comm small = shrunk_after(rc);
    MPI_Win win2;
    int *slot2;
    MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, small, &slot2, &win2);
    MPI_Win_fence(0, win2);
    for (int round = 1; round <= 3; round++)
        CHECK_EQ(put_ring(win2, small, round, slot2), MPI_SUCCESS);
    MPI_Win_free(&win2);
    MPI_Comm_free(&small);
    /* the broken window's memory is let go: its closing synchronization is
     * an agreement among the survivors */
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
}

static void lock_kill(void)
{
    int rank, size, *slot;
    world_returning(&rank, &size);
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slot, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    *slot = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    int v = 7;
    if (rank == 2) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        for (int r = 0; r < size; r++)
            if (r != 2)
                MPI_Send(&v, 1, MPI_INT, r, 5, MPI_COMM_WORLD);
        raise(SIGKILL); /* holding the lock */
    }
    CHECK_EQ(MPI_Recv(&v, 1, MPI_INT, 2, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    if (rank != 0) {
        int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        CHECK_EQ(error_class(rc), MPIX_ERR_PROC_FAILED);
        if (rc == MPI_SUCCESS)
            MPI_Win_unlock(0, win);
        /* a target nobody holds: in shared memory the lock needs no wait
         * and works; across hosts it waits for the target's grant, and a
         * window whose group lost a member reports that instead (as the
         * ULFM proposal allows: such a window is freed and made again) */
        if (rank == 3) {
            rc = MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            if (rc == MPI_SUCCESS) {
                int got = -1;
                rc = MPI_Get(&got, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
                int rc2 = MPI_Win_unlock(1, win);
                if (rc == MPI_SUCCESS && rc2 == MPI_SUCCESS)
                    CHECK_EQ(got, 0);
                else
                    CHECK_EQ(error_class(rc == MPI_SUCCESS ? rc2 : rc), MPIX_ERR_PROC_FAILED);
            } else {
                CHECK_EQ(error_class(rc), MPIX_ERR_PROC_FAILED);
            }
        }
    }
    /* the revoke in recover() must not overtake a survivor's receive above:
     * an agreement (which a revoke does not stop) holds everyone here */
    int all = 1;
    MPIX_Comm_agree(MPI_COMM_WORLD, &all);
    CHECK_EQ(all, 1);
    recover(MPI_COMM_WORLD, 2, size - 1);
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
}

static void io_kill(const char *dir)
{
    int rank, size;
    world_returning(&rank, &size);
    char path[512];
    int tag = (int)getpid(); /* rank 0's: one name for all (also across hosts) */
    MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/t_ulfm_io.%d", dir, tag);
    enum { N = 16384 };
    static int buf[N], back[N];
    MPI_File fh;
    CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh),
             MPI_SUCCESS);
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    int rc = MPI_SUCCESS, i;
    for (i = 0; i < 100000 && rc == MPI_SUCCESS; i++) {
        if (rank == 2 && i == 50)
            raise(SIGKILL);
        for (int k = 0; k < N; k++)
            buf[k] = rank * N + k + i;
        rc = MPI_File_write_at_all(fh, (MPI_Offset)rank * N * sizeof(int), buf, N, MPI_INT, MPI_STATUS_IGNORE);
    }
    MPI_Comm small = shrunk_after(rc);
    int srank;
    MPI_Comm_rank(small, &srank);
    MPI_File fh2;
    snprintf(path + strlen(path), sizeof(path) - strlen(path), ".small");
    CHECK_EQ(MPI_File_open(small, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                           &fh2),
             MPI_SUCCESS);
    for (int k = 0; k < N; k++)
        buf[k] = srank * N + k;
    MPI_Offset at = (MPI_Offset)srank * N * sizeof(int);
    CHECK_EQ(MPI_File_write_at_all(fh2, at, buf, N, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(MPI_File_read_at_all(fh2, at, back, N, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(memcmp(buf, back, sizeof(buf)), 0);
    CHECK_EQ(MPI_File_close(&fh2), MPI_SUCCESS);
    MPI_Comm_free(&small);
    /* its group is not whole: the survivors close it in an agreement, each
     * deletes it (MPI_MODE_DELETE_ON_CLOSE) */
    CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
    path[strlen(path) - strlen(".small")] = 0;
    CHECK(access(path, F_OK) != 0);
}

/* A child of spawn_kill: rank 0 gets a number from the parents' root and
 * sends it back plus one. */
static void spawned_child(void)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    int rank, v;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Recv(&v, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE);
        v++;
        MPI_Send(&v, 1, MPI_INT, 0, 1, parent);
    }
    MPI_Comm_disconnect(&parent);
}

static void die_now(int sig)
{
    (void)sig;
    raise(SIGKILL);
}

/* This process dies (SIGKILL) usec from now, wherever it is then. */
static void die_in(long usec)
{
    signal(SIGALRM, die_now);
    struct itimerval t = {.it_value = {.tv_sec = usec / 1000000, .tv_usec = usec % 1000000}};
    setitimer(ITIMER_REAL, &t, NULL);
}

/* late: rank 2 dies inside the spawn, after the root started the children
 * (spawn_late); else before it (spawn_kill) */
static void spawn_kill(const char *self, bool late)
{
    int rank, size;
    world_returning(&rank, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    int v;
    if (late && rank == 2) {
        die_in(300000);
    } else if (!late) {
        if (rank == 2)
            raise(SIGKILL);
        /* the failure must be known before the spawn starts (else it may
         * well succeed): wait for it in a receive from the dead */
        CHECK_EQ(error_class(MPI_Recv(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)),
                 MPIX_ERR_PROC_FAILED);
    }
    char *args[] = {"spawned_child", NULL};
    MPI_Comm kids = MPI_COMM_NULL;
    int rc = MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, MPI_ERRCODES_IGNORE);
    CHECK(rank != 2);
    CHECK(kids == MPI_COMM_NULL);
    MPI_Comm small = shrunk_after(rc);
    CHECK_EQ(MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, small, &kids, MPI_ERRCODES_IGNORE), MPI_SUCCESS);
    int srank;
    MPI_Comm_rank(small, &srank);
    if (srank == 0) {
        v = 41;
        MPI_Send(&v, 1, MPI_INT, 0, 0, kids);
        MPI_Recv(&v, 1, MPI_INT, 0, 1, kids, MPI_STATUS_IGNORE);
        CHECK_EQ(v, 42);
    }
    MPI_Comm_disconnect(&kids);
    MPI_Comm_free(&small);
}

static void early_revoke(void)
{
    int rank, missed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 300; i++) {
        MPI_Comm c;
        CHECK_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        if (rank == 0)
            MPIX_Comm_revoke(c);
        /* the revoke is sent before rank 0 enters the barrier, so it is
         * here when the barrier ends: looking once is enough */
        MPI_Barrier(MPI_COMM_WORLD);
        int flag = 0;
        MPIX_Comm_is_revoked(c, &flag);
        missed += !flag;
        MPI_Comm_free(&c);
    }
    CHECK_EQ(missed, 0);
}

/* The others wait in RMA synchronizations on a window that one member
 * revokes (MPIX_Win_revoke): every wait ends with MPIX_ERR_REVOKED, every
 * later RMA call answers it, the local queries still work and MPI_Win_free
 * frees the window at everyone.  Once in a fence, once in exclusive locks
 * queued behind the revoker's (a window over the processes' own memory). */
static void hold_others_then(int revoker, MPI_Comm comm)
{
    int rank, size, token = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == revoker) { /* everyone else is about to wait: let them get there */
        for (int r = 0; r < size - 1; r++)
            MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 9, comm, MPI_STATUS_IGNORE);
        usleep(50000);
    } else {
        MPI_Send(&token, 1, MPI_INT, revoker, 9, comm);
    }
}

static void check_win_revoked(MPI_Win win, int size)
{
    int v = 1, got = 0;
    CHECK_EQ(error_class(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win)), MPIX_ERR_REVOKED);
    CHECK_EQ(error_class(MPI_Fetch_and_op(&v, &got, MPI_INT, 0, 0, MPI_SUM, win)), MPIX_ERR_REVOKED);
    CHECK_EQ(error_class(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)), MPIX_ERR_REVOKED);
    CHECK_EQ(error_class(MPI_Win_fence(0, win)), MPIX_ERR_REVOKED);
    MPI_Group g;
    int n = -1;
    CHECK_EQ(MPIX_Win_get_failed(win, &g), MPI_SUCCESS);
    MPI_Group_size(g, &n);
    CHECK_EQ(n, 0);
    MPI_Group_free(&g);
    CHECK_EQ(MPI_Win_get_group(win, &g), MPI_SUCCESS);
    MPI_Group_size(g, &n);
    CHECK_EQ(n, size);
    MPI_Group_free(&g);
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
}

static void win_revoke(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *slot;
    MPI_Win win;
    MPI_Win_allocate(size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slot, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Win_fence(0, win), MPI_SUCCESS);
    hold_others_then(size - 1, MPI_COMM_WORLD);
    if (rank == size - 1)
        CHECK_EQ(MPIX_Win_revoke(win), MPI_SUCCESS);
    else
        CHECK_EQ(error_class(MPI_Win_fence(0, win)), MPIX_ERR_REVOKED);
    check_win_revoked(win, size);

    int mem[4] = {0};
    MPI_Win_create(mem, sizeof(mem), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (rank == 0) { /* held for certain once an operation completed under it */
        int v = 5;
        CHECK_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win), MPI_SUCCESS);
        CHECK_EQ(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_SUCCESS);
        CHECK_EQ(MPI_Win_flush(0, win), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    hold_others_then(0, MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_EQ(MPIX_Win_revoke(win), MPI_SUCCESS);
        CHECK_EQ(error_class(MPI_Win_unlock(0, win)), MPIX_ERR_REVOKED);
    } else { /* the lock may be taken at once or at the first synchronization */
        int v = rank, rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_flush(0, win);
        CHECK_EQ(error_class(rc), MPIX_ERR_REVOKED);
    }
    check_win_revoked(win, size);

    /* windows made after it work */
    MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slot, &win);
    MPI_Win_fence(0, win);
    for (int round = 1; round <= 3; round++)
        CHECK_EQ(put_ring(win, MPI_COMM_WORLD, round, slot), MPI_SUCCESS);
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
}

/* The others wait in a collective write to a file that one member revokes
 * (MPIX_File_revoke): the write ends with MPIX_ERR_REVOKED, so does every
 * later access, the local queries work, MPI_File_close closes it at everyone
 * and deletes it (MPI_MODE_DELETE_ON_CLOSE). */
static void file_revoke(const char *dir)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[512];
    int tag = (int)getpid();
    MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/t_ulfm_revoke.%d", dir, tag);
    MPI_File fh;
    CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh),
             MPI_SUCCESS);
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    int buf[1024];
    for (int k = 0; k < 1024; k++)
        buf[k] = rank + k;
    MPI_Offset at = (MPI_Offset)rank * sizeof(buf);
    CHECK_EQ(MPI_File_write_at_all(fh, at, buf, 1024, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    hold_others_then(0, MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_EQ(MPIX_File_revoke(fh), MPI_SUCCESS);
    else
        CHECK_EQ(error_class(MPI_File_write_at_all(fh, at, buf, 1024, MPI_INT, MPI_STATUS_IGNORE)),
                 MPIX_ERR_REVOKED);
    CHECK_EQ(error_class(MPI_File_write_at(fh, at, buf, 1024, MPI_INT, MPI_STATUS_IGNORE)), MPIX_ERR_REVOKED);
    CHECK_EQ(error_class(MPI_File_read_at_all(fh, at, buf, 1024, MPI_INT, MPI_STATUS_IGNORE)), MPIX_ERR_REVOKED);
    CHECK_EQ(error_class(MPI_File_sync(fh)), MPIX_ERR_REVOKED);
    MPI_Group g;
    int n = -1;
    CHECK_EQ(MPI_File_get_group(fh, &g), MPI_SUCCESS);
    MPI_Group_size(g, &n);
    CHECK_EQ(n, size);
    MPI_Group_free(&g);
    CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
    CHECK(fh == MPI_FILE_NULL);
    CHECK(access(path, F_OK) != 0);
}

/* Bytes in LeanMPI's "comm" memory category now (MPI_T), where agreements
 * keep their state. */
static long long mem_comm_now(void)
{
    int idx, count, provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    unsigned long long v = 0;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    if (MPI_T_pvar_get_index("lmpi_mem_current_comm", MPI_T_PVAR_CLASS_LEVEL, &idx) != MPI_SUCCESS)
        return -1;
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count);
    MPI_T_pvar_read(s, h, &v);
    MPI_T_pvar_handle_free(s, &h);
    MPI_T_pvar_session_free(&s);
    MPI_T_finalize();
    return (long long)v;
}

/* Under --with-ft, MPI_Win_free and MPI_File_close meet in an agreement:
 * windows and files made and freed in a loop leave nothing behind. */
static void free_loop(const char *dir)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[512];
    int tag = (int)getpid();
    MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/t_ulfm_loop.%d", dir, tag);
    long long before = 0;
    for (int i = 0; i < 201; i++) {
        if (i == 1) /* after the first of each: what is made once */
            before = mem_comm_now();
        int *slot;
        MPI_Win win;
        MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slot, &win);
        CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
        if (i % 4 == 0) {
            MPI_File fh;
            CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                   MPI_INFO_NULL, &fh),
                     MPI_SUCCESS);
            CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
        }
    }
    long long grown = mem_comm_now() - before;
    if (grown > 1024)
        fprintf(stderr, "t_ulfm free_loop: rank %d: %lld bytes more after 200 windows and 50 files\n", rank, grown);
    CHECK(before >= 0 && grown <= 1024);
}

/* (4+ ranks) Rank 0, the coordinator of MPI_Win_free's agreement, dies
 * having told one member (LMPI_FT_INJECT=coord:1).  That member, now the
 * lowest survivor, has decided and let go of the agreement; it answers the
 * others' contributions from what it kept, so the free completes at every
 * survivor.  Then they shrink and free a window over the survivors. */
static void free_kill(void)
{
    int rank, size, *slot;
    world_returning(&rank, &size);
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slot, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS); /* rank 0 dies in it */
    MPI_Comm small = shrunk_after(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, small, &slot, &win);
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
    MPI_Comm_free(&small);
}

/* A process of another process group dies (4 parents spawn 2 children of
 * t_ulfm spawned_victim): the launcher tells every job, so a parent's
 * receive from the dead child ends with MPIX_ERR_PROC_FAILED, the failed
 * group of the intercommunicator names it, and a collective over it ends
 * with the failure at every parent and at the surviving child.  With
 * PARENT set, parent 3 dies instead while the children wait on it. */
static void group_kill(const char *self, bool parent_dies)
{
    int rank, size;
    world_returning(&rank, &size);
    char *args[] = {parent_dies ? "spawned_orphan" : "spawned_victim", NULL};
    MPI_Comm inter;
    CHECK_EQ(MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE),
             MPI_SUCCESS);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    if (parent_dies) {
        if (rank == 3) {
            usleep(100000);
            raise(SIGKILL);
        }
        int v = 0; /* the children tell us they saw it */
        if (rank == 0)
            for (int c = 0; c < 2; c++) {
                CHECK_EQ(MPI_Recv(&v, 1, MPI_INT, c, 2, inter, MPI_STATUS_IGNORE), MPI_SUCCESS);
                CHECK_EQ(v, MPIX_ERR_PROC_FAILED);
            }
        MPI_Comm_free(&inter);
        MPI_Comm small = shrunk_after(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Comm_free(&small);
        return;
    }
    int v = 0;
    if (rank == 0) {
        double t0 = now();
        CHECK_EQ(error_class(MPI_Recv(&v, 1, MPI_INT, 1, 0, inter, MPI_STATUS_IGNORE)), MPIX_ERR_PROC_FAILED);
        printf("detected: %.1f ms after the spawn returned (the child dies 100 ms after its start)\n",
               (now() - t0) * 1e3);
    }
    CHECK_EQ(error_class(MPI_Barrier(inter)), MPIX_ERR_PROC_FAILED);
    MPI_Group g;
    int n = 0, one = 1, got = -1;
    MPIX_Comm_get_failed(inter, &g);
    MPI_Group_size(g, &n);
    CHECK_EQ(n, 1);
    MPI_Group remote;
    MPI_Comm_remote_group(inter, &remote);
    MPI_Group_translate_ranks(g, 1, (int[]){0}, remote, &got);
    CHECK_EQ(got, one);
    MPI_Group_free(&g);
    MPI_Group_free(&remote);
    MPI_Comm_free(&inter);
}

/* The children of group_kill. */
static void spawned_victim(bool orphan)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (orphan) { /* parent 3 dies: a receive from it fails, and we say so */
        int v = 0, cls = error_class(MPI_Recv(&v, 1, MPI_INT, 3, 0, parent, MPI_STATUS_IGNORE));
        MPI_Send(&cls, 1, MPI_INT, 0, 2, parent);
    } else {
        if (rank == 1) {
            usleep(100000);
            raise(SIGKILL);
        }
        CHECK_EQ(error_class(MPI_Barrier(parent)), MPIX_ERR_PROC_FAILED);
    }
    MPI_Comm_free(&parent);
}

/* jobs_serve and jobs_visit: two jobs that different mpiexecs started
 * (tests/mpi/ulfm_jobs.sh) meet through a port written to the file FILE;
 * the visiting job's rank 1 dies 100 ms after the connect.  No launcher
 * tells the serving job: its ranks see the process gone on this host
 * (src/ft/ft.c, "processes that no launcher of ours watches"), so their
 * receive from it and a barrier over the intercommunicator end with
 * MPIX_ERR_PROC_FAILED; the visiting job's survivor learns it from its own
 * launcher.  Then the survivors of both jobs agree and shrink over the
 * intercommunicator and reduce over the shrunken one. */
static void jobs_inject(bool serve, int rank, MPI_Comm inter);

static void jobs_meet(bool serve, const char *file, bool inject)
{
    int rank, size;
    world_returning(&rank, &size);
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter;
    if (serve) {
        if (rank == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            char tmp[4096];
            snprintf(tmp, sizeof(tmp), "%s.tmp", file);
            FILE *f = fopen(tmp, "w");
            CHECK(f != NULL);
            fputs(port, f);
            fclose(f);
            rename(tmp, file); /* whole, or not there */
        }
        CHECK_EQ(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter), MPI_SUCCESS);
    } else {
        if (rank == 0) {
            FILE *f = NULL;
            for (int i = 0; i < 600 && !(f = fopen(file, "r")); i++)
                usleep(50000);
            CHECK(f != NULL);
            if (!f || !fgets(port, sizeof(port), f))
                port[0] = 0;
            if (f)
                fclose(f);
        }
        CHECK_EQ(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter), MPI_SUCCESS);
    }
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    if (inject) {
        jobs_inject(serve, rank, inter);
        return;
    }
    if (!serve && rank == 1)
        die_in(100000);
    double t0 = now();
    int v = 0;
    if (serve)
        CHECK_EQ(error_class(MPI_Recv(&v, 1, MPI_INT, 1, 0, inter, MPI_STATUS_IGNORE)), MPIX_ERR_PROC_FAILED);
    else
        CHECK_EQ(error_class(MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)),
                 MPIX_ERR_PROC_FAILED);
    printf("%s rank %d: detected %.1f ms after the connect (the visitor dies at 100 ms)\n", serve ? "serve" : "visit",
           rank, (now() - t0) * 1e3);
    CHECK_EQ(error_class(MPI_Barrier(inter)), MPIX_ERR_PROC_FAILED);
    MPI_Group g; /* (an intercommunicator's: its remote group's) */
    int n = 0;
    MPIX_Comm_get_failed(serve ? inter : MPI_COMM_WORLD, &g);
    MPI_Group_size(g, &n);
    CHECK_EQ(n, 1);
    MPI_Group_free(&g);
    /* the two jobs agree over the intercommunicator, without the dead
     * visitor (acknowledged: no error), and shrink it to the survivors:
     * 2 serving ranks and 1 visitor, whose ranks' sum crosses it */
    int acked = 0;
    MPIX_Comm_ack_failed(inter, 2, &acked);
    int flag = serve ? (rank == 0 ? 0x3 : 0x7) : 0x5;
    CHECK_EQ(MPIX_Comm_agree(inter, &flag), MPI_SUCCESS);
    CHECK_EQ(flag, 0x1);
    MPI_Comm survivors;
    CHECK_EQ(MPIX_Comm_shrink(inter, &survivors), MPI_SUCCESS);
    int lsize = 0, rsize = 0, sum = 0;
    MPI_Comm_size(survivors, &lsize);
    MPI_Comm_remote_size(survivors, &rsize);
    CHECK_EQ(lsize, serve ? 2 : 1);
    CHECK_EQ(rsize, serve ? 1 : 2);
    int mine = serve ? 10 + rank : 100; /* serving: 10, 11; visitor: 100 */
    CHECK_EQ(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, survivors), MPI_SUCCESS);
    CHECK_EQ(sum, serve ? 100 : 21); /* an intercommunicator's: the other group's */
    MPI_Comm_free(&survivors);
    MPI_Comm_free(&inter);
    if (serve && rank == 0)
        MPI_Close_port(port);
}

/* jobs_serve FILE inject / jobs_visit FILE inject (the two jobs on two
 * hosts: tests/tools/multihost.sh jobs2): nobody dies; once met, the
 * serving rank 0's network transport fails every send to the other job
 * (LMPI_FT_INJECT=ofi_foreign_error, as if its host had gone), which ended
 * the process before.  Now the destination counts as failed: rank 0's
 * receive from it ends with MPIX_ERR_PROC_FAILED within the watch's 10 ms
 * (no launcher says anything: nobody failed).  Everyone then finalizes. */
static void jobs_inject(bool serve, int rank, MPI_Comm inter)
{
    int v = 1;
    if (serve && rank == 0) {
        setenv("LMPI_FT_INJECT", "ofi_foreign_error", 1);
        double t0 = now();
        CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 1, 0, inter), MPI_SUCCESS); /* (eager: it may complete) */
        CHECK_EQ(error_class(MPI_Recv(&v, 1, MPI_INT, 1, 0, inter, MPI_STATUS_IGNORE)), MPIX_ERR_PROC_FAILED);
        double ms = (now() - t0) * 1e3;
        unsetenv("LMPI_FT_INJECT");
        printf("serve rank 0: a failed transfer to the other job counted as its failure after %.1f ms\n", ms);
        CHECK(ms < 100);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* (each job's own) */
}

/* net_error (2 ranks over the network: LMPI_NET=ofi LMPI_NODE_SIZE=1): the
 * network transport fails to send to rank 1 (LMPI_FT_INJECT=ofi_send_error
 * at rank 0, as if rank 1's host had gone), which therefore counts as
 * failed at once, where the transport used to end rank 0: rank 0's
 * receive from it ends with MPIX_ERR_PROC_FAILED long before any launcher
 * could say so (rank 1 dies 1.5 s after its start, for the launcher's
 * sake; rank 0's packets never reach it). */
static void net_error(void)
{
    int rank, size;
    world_returning(&rank, &size);
    if (rank != 0)
        for (;;)
            pause();
    int v = 1;
    double t0 = now();
    /* an eager send leaves (MPI lets it complete before its receiver fails) */
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(error_class(MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)), MPIX_ERR_PROC_FAILED);
    double ms = (now() - t0) * 1e3;
    printf("net_error: the receive failed after %.1f ms (the victim dies 1.5 s after its start)\n", ms);
    CHECK(ms < 500);
}

/* respawn's round over the merged communicator (parents and replacement
 * alike): agree (0x6 from merged rank 1's 0x6 and the others' 0x7), sum
 * the ranks, shrink with nobody failed. */
static void merged_round(MPI_Comm merged, int mrank, int flag)
{
    MPI_Comm shrunk;
    int sum = 0, msize = 0;
    CHECK_EQ(MPIX_Comm_agree(merged, &flag), MPI_SUCCESS);
    CHECK_EQ(flag, 0x6);
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK_EQ(sum, 6);
    CHECK_EQ(MPIX_Comm_shrink(merged, &shrunk), MPI_SUCCESS);
    MPI_Comm_size(shrunk, &msize);
    CHECK_EQ(msize, 4);
    MPI_Comm_free(&shrunk);
}

/* (4 ranks) The respawn pattern: rank 3 dies, the survivors shrink, spawn
 * a replacement (t_ulfm respawned), agree over the intercommunicator,
 * merge it and agree, reduce and shrink over the merged communicator,
 * which spans two process groups; then the replacement dies and the
 * parents' agreement and shrink over the merged communicator go on
 * without it. */
static void respawn(const char *self)
{
    int rank, size;
    world_returning(&rank, &size);
    if (rank == 3) {
        usleep(50000);
        raise(SIGKILL);
    }
    MPI_Comm small = shrunk_after(MPI_Barrier(MPI_COMM_WORLD));
    char *args[] = {"respawned", NULL};
    MPI_Comm inter, merged, shrunk;
    CHECK_EQ(MPI_Comm_spawn(self, args, 1, MPI_INFO_NULL, 0, small, &inter, MPI_ERRCODES_IGNORE), MPI_SUCCESS);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int flag = rank == 0 ? 0x3 : 0x7;
    CHECK_EQ(MPIX_Comm_agree(inter, &flag), MPI_SUCCESS);
    CHECK_EQ(flag, 0x1); /* the child gives 0x5 */
    CHECK_EQ(MPI_Intercomm_merge(inter, 0, &merged), MPI_SUCCESS);
    MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    int mrank, msize, sum = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK_EQ(msize, 4);
    merged_round(merged, mrank, mrank == 1 ? 0x6 : 0x7);
    /* the replacement (merged rank 3) dies now */
    int v = 1;
    int rc = MPIX_Comm_agree(merged, &v);
    CHECK(rc == MPI_SUCCESS || error_class(rc) == MPIX_ERR_PROC_FAILED);
    CHECK_EQ(v, 1);
    CHECK_EQ(MPIX_Comm_shrink(merged, &shrunk), MPI_SUCCESS);
    MPI_Comm_size(shrunk, &msize);
    CHECK_EQ(msize, 3);
    sum = 0;
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, shrunk);
    CHECK_EQ(sum, 3);
    MPI_Comm_free(&shrunk);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&small);
}

/* respawn's replacement. */
static void respawned(void)
{
    MPI_Comm parent, merged;
    MPI_Comm_get_parent(&parent);
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    int flag = 0x5, mrank;
    CHECK_EQ(MPIX_Comm_agree(parent, &flag), MPI_SUCCESS);
    CHECK_EQ(flag, 0x1);
    CHECK_EQ(MPI_Intercomm_merge(parent, 1, &merged), MPI_SUCCESS);
    MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    MPI_Comm_rank(merged, &mrank);
    CHECK_EQ(mrank, 3);
    merged_round(merged, mrank, 0x7);
    raise(SIGKILL);
}

static void coll_kill(void)
{
    int rank, size;
    world_returning(&rank, &size);
    const int dead = 2;
    static char big[65536];
    int rc = MPI_SUCCESS, i, failed_at = -1;
    /* a persistent allreduce, started again and again, and a periodic
     * ring for neighbourhood collectives */
    int pv = 1, psum = 0;
    MPI_Request preq;
    CHECK_EQ(MPI_Allreduce_init(&pv, &psum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &preq), MPI_SUCCESS);
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring), MPI_SUCCESS);
    MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
    for (i = 0; i < 4000 && rc == MPI_SUCCESS; i++) {
        if (rank == dead && i == 400)
            raise(SIGKILL);
        int v = 1, sum = 0, nb[2] = {-1, -1}, ab[64], ar[64];
        MPI_Request req;
        switch (i % 8) {
        case 0:
            rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            if (rc == MPI_SUCCESS)
                CHECK_EQ(sum, size);
            break;
        case 1:
            rc = MPI_Bcast(big, sizeof(big), MPI_BYTE, i % size, MPI_COMM_WORLD);
            break;
        case 2:
            rc = MPI_Barrier(MPI_COMM_WORLD);
            break;
        case 3:
            rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            break;
        case 4:
            rc = MPI_Start(&preq);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&preq, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                CHECK_EQ(psum, size);
            break;
        case 5:
            rc = MPI_Neighbor_allgather(&rank, 1, MPI_INT, nb, 1, MPI_INT, ring);
            if (rc == MPI_SUCCESS)
                CHECK(nb[0] == (rank + size - 1) % size && nb[1] == (rank + 1) % size);
            break;
        case 6:
            rc = MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                CHECK_EQ(sum, size);
            break;
        case 7:
            for (int k = 0; k < size && k < 64; k++)
                ab[k] = rank;
            rc = size <= 64 ? MPI_Alltoall(ab, 1, MPI_INT, ar, 1, MPI_INT, MPI_COMM_WORLD) : MPI_SUCCESS;
            for (int k = 0; rc == MPI_SUCCESS && k < size && k < 64; k++)
                CHECK_EQ(ar[k], k);
            break;
        }
        if (rc != MPI_SUCCESS)
            failed_at = i;
    }
    CHECK(rc != MPI_SUCCESS);
    CHECK(failed_at >= 399);
    int cls = error_class(rc);
    CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED);
    /* the broken persistent request and the ring are let go without
     * waiting for anyone */
    CHECK_EQ(MPI_Request_free(&preq), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_free(&ring), MPI_SUCCESS);
    recover(MPI_COMM_WORLD, dead, size - 1);
}

static void agree_kill(void)
{
    int rank, size;
    world_returning(&rank, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* the coordinator: dies before everyone arrived */
        raise(SIGKILL);
    }
    if (rank == 1)
        usleep(50000);
    int v = 0xff & ~(1 << rank);
    int rc = MPIX_Comm_agree(MPI_COMM_WORLD, &v);
    /* the agreement names a failure nobody acknowledged */
    CHECK_EQ(error_class(rc), MPIX_ERR_PROC_FAILED);
    int want = 0xff;
    for (int r = 1; r < size; r++)
        want &= ~(1 << r);
    CHECK_EQ(v & ~1, want & ~1); /* rank 0's flag may or may not have counted */
    int acked;
    MPIX_Comm_ack_failed(MPI_COMM_WORLD, size, &acked);
    CHECK_EQ(acked, 1);
    v = 1;
    CHECK_EQ(MPIX_Comm_agree(MPI_COMM_WORLD, &v), MPI_SUCCESS);
    CHECK_EQ(v, 1);
    MPI_Comm small;
    CHECK_EQ(MPIX_Comm_shrink(MPI_COMM_WORLD, &small), MPI_SUCCESS);
    int ssize;
    MPI_Comm_size(small, &ssize);
    CHECK_EQ(ssize, size - 1);
    MPI_Comm_free(&small);
}

/* accept_kill and connect_kill: the victim (a non-root member of one side)
 * dies 0.2 s into its call; the other side's root comes 0.6 s late, so the
 * victim's root has told the other root to come, or does so after. */
static void port_kill(bool accepting_side_dies)
{
    int rank, size;
    world_returning(&rank, &size);
    CHECK_EQ(size, 4);
    bool accepting = rank < 2;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, accepting ? 0 : 1, rank, &half);
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 2, 0, MPI_COMM_WORLD);
    } else if (rank == 2) {
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int victim = accepting_side_dies ? 1 : 3;
    if (rank == victim)
        die_in(200000);
    if (rank == (accepting_side_dies ? 2 : 0))
        usleep(600000);
    MPI_Comm inter = MPI_COMM_NULL;
    int rc = accepting ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter)
                       : MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter);
    CHECK(rank != victim); /* it died in the call */
    CHECK(inter == MPI_COMM_NULL);
    /* the survivors go on together */
    MPI_Comm small = shrunk_after(rc);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, small);
    CHECK_EQ(sum, 0 + 1 + 2 + 3 - victim);
    MPI_Comm_free(&small);
    if (rank == 0)
        MPI_Close_port(port);
}

static void intercomm_kill(void)
{
    int rank, size;
    world_returning(&rank, &size);
    CHECK_EQ(size, 4);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &half);
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        raise(SIGKILL);
    /* rank 0 knows before it starts (the other leader does not) */
    int v;
    if (rank == 0)
        CHECK_EQ(error_class(MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)), MPIX_ERR_PROC_FAILED);
    MPI_Comm inter = MPI_COMM_NULL;
    int rc = MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank < 2 ? 2 : 0, 7, &inter);
    CHECK_EQ(error_class(rc), MPIX_ERR_PROC_FAILED);
    CHECK(inter == MPI_COMM_NULL);
}

/* World ranks 0 and 1 over `a` and `b` (the same processes): 0 sends on b,
 * then on a, to rank `to`; 1 receives on a first, from rank `from`.  Were
 * the two one context, the receive on a would take b's message. */
static void apart(MPI_Comm a, MPI_Comm b, int round, int to, int from)
{
    int rank, x = 1000 + round, y = 2000 + round;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Send(&x, 1, MPI_INT, to, 7, b);
        MPI_Send(&y, 1, MPI_INT, to, 7, a);
    } else if (rank == 1) {
        MPI_Recv(&y, 1, MPI_INT, from, 7, a, MPI_STATUS_IGNORE);
        MPI_Recv(&x, 1, MPI_INT, from, 7, b, MPI_STATUS_IGNORE);
        CHECK_EQ(y, 2000 + round);
        CHECK_EQ(x, 1000 + round);
    }
}

#define SHRINK_ROUNDS 40

/* One thread's loop: shrink (or dup) its own parent and check that the
 * value it receives on the new communicator is its own. */
typedef struct {
    MPI_Comm parent;
    bool shrink;
    int bad;
} maker;

static void *make_loop(void *arg)
{
    maker *m = arg;
    int rank;
    MPI_Comm_rank(m->parent, &rank);
    for (int i = 0; i < SHRINK_ROUNDS; i++) {
        MPI_Comm c;
        if (m->shrink)
            CHECK_EQ(MPIX_Comm_shrink(m->parent, &c), MPI_SUCCESS);
        else
            CHECK_EQ(MPI_Comm_dup(m->parent, &c), MPI_SUCCESS);
        int v = (m->shrink ? 1 << 20 : 2 << 20) + i, got = -1;
        if (rank == 0) {
            MPI_Send(&v, 1, MPI_INT, 1, 9, c);
        } else if (rank == 1) {
            MPI_Recv(&got, 1, MPI_INT, 0, 9, c, MPI_STATUS_IGNORE);
            m->bad += got != v;
        }
        MPI_Comm_free(&c);
    }
    return NULL;
}

static void probe_kill(void)
{
    int rank, size, v = 0, flag = -1;
    world_returning(&rank, &size);
    const int dead = 2;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == dead) {
        v = 5;
        MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
        raise(SIGKILL);
    }
    MPI_Message msg;
    MPI_Status st;
    if (rank == 0) {
        /* what it sent before it died is still there */
        CHECK_EQ(MPI_Probe(dead, 3, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        CHECK_EQ(MPI_Recv(&v, 1, MPI_INT, dead, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_EQ(v, 5);
        CHECK_EQ(error_class(MPI_Probe(dead, 4, MPI_COMM_WORLD, &st)), MPIX_ERR_PROC_FAILED);
    } else if (rank == 1) {
        CHECK_EQ(error_class(MPI_Probe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st)), MPIX_ERR_PROC_FAILED);
        CHECK_EQ(error_class(MPI_Iprobe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &flag, &st)), MPIX_ERR_PROC_FAILED);
        CHECK_EQ(error_class(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st)),
                 MPIX_ERR_PROC_FAILED);
        int acked;
        MPIX_Comm_ack_failed(MPI_COMM_WORLD, size, &acked);
        CHECK_EQ(acked, 1);
        CHECK_EQ(MPI_Iprobe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &flag, &st), MPI_SUCCESS);
        MPI_Send(&v, 1, MPI_INT, 3, 6, MPI_COMM_WORLD); /* now rank 3 may send */
        CHECK_EQ(MPI_Probe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        CHECK_EQ(st.MPI_SOURCE, 3);
        CHECK_EQ(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        CHECK_EQ(v, 33);
    } else {
        CHECK_EQ(error_class(MPI_Mprobe(dead, 4, MPI_COMM_WORLD, &msg, &st)), MPIX_ERR_PROC_FAILED);
        CHECK_EQ(error_class(MPI_Improbe(dead, 4, MPI_COMM_WORLD, &flag, &msg, &st)), MPIX_ERR_PROC_FAILED);
        MPI_Recv(&v, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        v = 33;
        MPI_Send(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
    }
    /* every survivor done with its checks before anyone revokes (recover) */
    for (int r = 0; r < size; r++)
        if (r != rank && r != dead)
            MPI_Send(&v, 1, MPI_INT, r, 7, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        if (r != rank && r != dead)
            MPI_Recv(&v, 1, MPI_INT, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    recover(MPI_COMM_WORLD, dead, size - 1);
}

static void shrink_ids(void)
{
    int provided;
    MPI_Query_thread(&provided);
    /* an ishrink outstanding while a blocking creation runs, over
     * MPI_COMM_WORLD and then over an intercommunicator between the even
     * and the odd ranks (world ranks 0 and 1 are each other's rank 0) */
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 5, &inter);
    for (int round = 0; round < 4; round++) {
        MPI_Comm parent = round < 2 ? MPI_COMM_WORLD : inter, s, d;
        int peer = round < 2 ? 1 - rank : 0;
        MPI_Request req;
        CHECK_EQ(MPIX_Comm_ishrink(parent, &s, &req), MPI_SUCCESS);
        CHECK_EQ(MPI_Comm_dup(parent, &d), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        apart(s, d, round, peer, peer);
        apart(d, s, round, peer, peer);
        MPI_Comm_free(&s);
        MPI_Comm_free(&d);
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    if (provided < MPI_THREAD_MULTIPLE)
        return;
    /* a shrink in one thread while another dups (other parents) */
    maker m[2] = {{.shrink = true}, {.shrink = false}};
    MPI_Comm_dup(MPI_COMM_WORLD, &m[0].parent);
    MPI_Comm_dup(MPI_COMM_WORLD, &m[1].parent);
    pthread_t t;
    pthread_create(&t, NULL, make_loop, &m[1]);
    make_loop(&m[0]);
    pthread_join(t, NULL);
    CHECK_EQ(m[0].bad, 0);
    CHECK_EQ(m[1].bad, 0);
    MPI_Comm_free(&m[0].parent);
    MPI_Comm_free(&m[1].parent);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "basic";
    const char *pr = getenv("PMI_RANK");
    if ((!strcmp(what, "coord_kill") || !strcmp(what, "free_kill")) && pr && !strcmp(pr, "0"))
        setenv("LMPI_FT_INJECT", "coord:1", 1);
    if (!strcmp(what, "spawn_late") && pr && !strcmp(pr, "0"))
        setenv("LMPI_FT_INJECT", "spawn_late", 1);
    if (!strcmp(what, "net_error") && pr && !strcmp(pr, "0"))
        setenv("LMPI_FT_INJECT", "ofi_send_error:1", 1);
    if (!strcmp(what, "net_error") && pr && !strcmp(pr, "1"))
        die_in(1500000); /* wherever it is then: rank 0's packets never reach it */
    if (!strcmp(what, "shrink_ids")) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    if (!strcmp(what, "shrink_ids"))
        shrink_ids();
    else if (!strcmp(what, "probe_kill"))
        probe_kill();
    else if (!strcmp(what, "coord_kill"))
        coord_kill();
    else if (!strcmp(what, "coll_kill"))
        coll_kill();
    else if (!strcmp(what, "host_kill"))
        host_kill();
    else if (!strcmp(what, "kill"))
        kill_one();
    else if (!strcmp(what, "agree_kill"))
        agree_kill();
    else if (!strcmp(what, "rma_kill"))
        rma_kill();
    else if (!strcmp(what, "lock_kill"))
        lock_kill();
    else if (!strcmp(what, "early_revoke"))
        early_revoke();
    else if (!strcmp(what, "spawn_kill") || !strcmp(what, "spawn_late"))
        spawn_kill(argv[0], !strcmp(what, "spawn_late"));
    else if (!strcmp(what, "spawned_child"))
        spawned_child();
    else if (!strcmp(what, "respawn"))
        respawn(argv[0]);
    else if (!strcmp(what, "respawned"))
        respawned();
    else if (!strcmp(what, "child_kill") || !strcmp(what, "parent_kill"))
        group_kill(argv[0], !strcmp(what, "parent_kill"));
    else if (!strcmp(what, "spawned_victim") || !strcmp(what, "spawned_orphan"))
        spawned_victim(!strcmp(what, "spawned_orphan"));
    else if (!strcmp(what, "accept_kill") || !strcmp(what, "connect_kill"))
        port_kill(!strcmp(what, "accept_kill"));
    else if (!strcmp(what, "jobs_serve") || !strcmp(what, "jobs_visit"))
        jobs_meet(!strcmp(what, "jobs_serve"), argc > 2 ? argv[2] : "/tmp/t_ulfm.port",
                  argc > 3 && !strcmp(argv[3], "inject"));
    else if (!strcmp(what, "net_error"))
        net_error();
    else if (!strcmp(what, "intercomm_kill"))
        intercomm_kill();
    else if (!strcmp(what, "io_kill"))
        io_kill(argc > 2 ? argv[2] : "/tmp");
    else if (!strcmp(what, "free_kill"))
        free_kill();
    else if (!strcmp(what, "free_loop"))
        free_loop(argc > 2 ? argv[2] : "/tmp");
    else if (!strcmp(what, "win_revoke"))
        win_revoke();
    else if (!strcmp(what, "file_revoke"))
        file_revoke(argc > 2 ? argv[2] : "/tmp");
    else
        basic();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (mpitest_failures)
        fprintf(stderr, "t_ulfm %s: rank %d: %d failure(s)\n", what, rank, mpitest_failures);
    else if (rank == 0 || (rank == 1 && strcmp(what, "basic")))
        printf("t_ulfm %s: ok\n", what);
    return mpitest_failures != 0;
}
