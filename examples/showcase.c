/* The LeanMPI showcase: one short part per mechanism, ending with the memory
 * report (make demo runs it with LMPI_MEMORY_REPORT=1 under mpiexec -n 4).
 * Parts are added as the mechanisms land; each prints a few readable lines.
 * `showcase stencil` runs part 6 alone (make demo starts it as a job of its
 * own, on emulated nodes). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

static void part(const char *title)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("\n== %s\n", title);
}

/* Part 1: the foundation -- launch, PMI, the shared-memory transport. */
static void foundation(void)
{
    part("1. Foundation: launcher, PMI-1, shared-memory transport");
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Get_processor_name(host, &len);
    if (rank == 0)
        printf("library: %s\n%d ranks on %s\n", lib, size, host);

    /* Ping-pong between ranks 0 and 1 over the three paths of the transport:
     * fast box (tiny), cells (eager), and from 512 KiB the copy that receiver
     * and sender share (process_vm_readv / process_vm_writev). */
    const int sizes[] = {8, 4096, 1 << 20};
    const char *path[] = {"fast box", "eager cells", "cooperative copy"};
    char *buf = calloc(1, 1 << 20);
    for (int s = 0; s < 3 && size > 1; s++) {
        int iters = sizes[s] > 65536 ? 50 : 2000;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters && rank < 2; i++) {
            if (rank == 0) {
                MPI_Send(buf, sizes[s], MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, sizes[s], MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, sizes[s], MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, sizes[s], MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double half_rtt = (MPI_Wtime() - t0) / iters / 2;
        if (rank == 0)
            printf("ping-pong %8d B  %-22s %8.2f us  %8.2f MB/s\n", sizes[s], path[s], half_rtt * 1e6,
                   sizes[s] / half_rtt / 1e6);
    }
    free(buf);

    /* A 4 MiB token around the ring, content checked by every rank. */
    const int n = 4 << 20;
    unsigned char *tok = malloc(n);
    if (rank == 0)
        for (int i = 0; i < n; i++)
            tok[i] = (unsigned char)(i * 31);
    double t0 = MPI_Wtime();
    if (rank == 0) {
        MPI_Send(tok, n, MPI_BYTE, (rank + 1) % size, 1, MPI_COMM_WORLD);
        MPI_Recv(tok, n, MPI_BYTE, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(tok, n, MPI_BYTE, rank - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(tok, n, MPI_BYTE, (rank + 1) % size, 1, MPI_COMM_WORLD);
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (tok[i] != (unsigned char)(i * 31))
            bad++;
    int anybad = 0;
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("4 MiB ring through %d ranks: %.2f ms, content %s on every rank\n", size,
               (MPI_Wtime() - t0) * 1e3, anybad ? "CORRUPTED" : "verified");
    free(tok);

    /* Bad input returns a clear error instead of crashing. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send(NULL, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Error_string(rc, msg, &len);
    if (rank == 0)
        printf("MPI_Send to rank %d under MPI_ERRORS_RETURN -> %s\n", size + 5, msg);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MPI_T performance variables by name (LeanMPI's lmpi_* variables).
 * Counters read relative to when their handle was allocated. */
static MPI_T_pvar_session pv_session;

static MPI_T_pvar_handle pvar_handle(const char *name, int cls)
{
    int idx, count;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    if (MPI_T_pvar_get_index(name, cls, &idx) == MPI_SUCCESS)
        MPI_T_pvar_handle_alloc(pv_session, idx, NULL, &h, &count);
    return h;
}

static unsigned long long pvar_read(MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    if (h != MPI_T_PVAR_HANDLE_NULL)
        MPI_T_pvar_read(pv_session, h, &v);
    return v;
}

/* Part 2: the matching engine.  Rank 0 posts many receives; the other ranks
 * answer in the reverse order, the worst case for a list. */
static void matching(void)
{
    part("2. Matching engine: multidimensional queues");
    int provided, idx, count;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    char structure[64] = "?";
    if (MPI_T_cvar_get_index("LMPI_MATCH", &idx) == MPI_SUCCESS) {
        MPI_T_cvar_handle h;
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &count);
        MPI_T_cvar_read(h, structure);
        MPI_T_cvar_handle_free(&h);
    }
    enum { TAGS = 60 };
    MPI_T_pvar_session_create(&pv_session);
    MPI_T_pvar_handle searches = pvar_handle("lmpi_match_searches", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle visits = pvar_handle("lmpi_match_items_visited", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle migrations = pvar_handle("lmpi_match_migrations", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle posted = pvar_handle("lmpi_posted_queue_length", MPI_T_PVAR_CLASS_LEVEL);
    MPI_T_pvar_handle meta = pvar_handle("lmpi_match_metadata_bytes", MPI_T_PVAR_CLASS_SIZE);
    int n = (size - 1) * TAGS, go = 1;
    if (rank == 0) {
        int *in = malloc(sizeof(int) * (size_t)(n + 1));
        MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)(n + 1));
        for (int s = 1, k = 0; s < size; s++)
            for (int tag = 0; tag < TAGS; tag++, k++)
                MPI_Irecv(&in[k], 1, MPI_INT, s, tag, MPI_COMM_WORLD, &rq[k]);
        unsigned long long queued = pvar_read(posted);
        for (int s = 1; s < size; s++)
            MPI_Send(&go, 1, MPI_INT, s, 1000, MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
        double t = MPI_Wtime() - t0;
        unsigned long long ns = pvar_read(searches), nv = pvar_read(visits);
        printf("LMPI_MATCH=%s: %llu receives posted, the messages came in reverse order: all matched in %.0f us\n",
               structure, queued, t * 1e6);
        printf("%llu searches visited %.1f queue items each on average; auto moved %llu context(s) to 4d\n", ns,
               ns ? (double)nv / (double)ns : 0.0, pvar_read(migrations));
        printf("(auto starts every context as a list -- cheapest for short queues -- and switches once the\n"
               " average search depth passes 2 x (3 x dimensionSpan + 1) = 26, for up to 256 ranks)\n");
        printf("matching metadata now: %llu bytes\n", pvar_read(meta));
        free(in);
        free(rq);
    } else {
        MPI_Recv(&go, 1, MPI_INT, 0, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int tag = TAGS - 1; tag >= 0; tag--)
            MPI_Send(&go, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
    }
    MPI_T_pvar_handle_free(pv_session, &searches);
    MPI_T_pvar_handle_free(pv_session, &visits);
    MPI_T_pvar_handle_free(pv_session, &migrations);
    MPI_T_pvar_handle_free(pv_session, &posted);
    MPI_T_pvar_handle_free(pv_session, &meta);
    MPI_T_pvar_session_free(&pv_session);
    MPI_T_finalize();
}

static const char *rankmap_mode(MPI_Comm c, char *buf, int len)
{
    MPI_Info info;
    int flag;
    MPI_Comm_get_info(c, &info);
    MPI_Info_get_string(info, "lmpi_rankmap", &len, buf, &flag);
    MPI_Info_free(&info);
    return flag ? buf : "?";
}

/* Part 3: communicators over compressed rank maps.  Each new communicator's
 * ranks are detected as a pattern over its parent and stored as a few words
 * (direct/offset/stride) or as a shared table (lut). */
static void communicators(void)
{
    part("3. Communicators: compressed rank maps (AV-Rankmap)");
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&pv_session);
    MPI_T_pvar_handle comm_bytes = pvar_handle("lmpi_mem_current_comm", MPI_T_PVAR_CLASS_LEVEL);
    MPI_T_pvar_handle map_bytes = pvar_handle("lmpi_mem_current_rankmap", MPI_T_PVAR_CLASS_LEVEL);
    unsigned long long c0 = pvar_read(comm_bytes), m0 = pvar_read(map_bytes);
    enum { N = 5 };
    MPI_Comm c[N];
    const char *what[N] = {"MPI_Comm_dup(WORLD)", "split odd/even", "split low/high", "split reversed keys",
                           "split shuffled keys"};
    MPI_Comm_dup(MPI_COMM_WORLD, &c[0]);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c[1]);
    MPI_Comm_split(MPI_COMM_WORLD, rank >= size / 2, rank, &c[2]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c[3]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, (rank * (size % 3 ? 3 : 5) + 1) % size, &c[4]); /* a permutation */
    long table_bytes = 0;
    for (int i = 0; i < N; i++) {
        int n, r;
        char mode[32];
        MPI_Comm_size(c[i], &n);
        MPI_Comm_rank(c[i], &r);
        table_bytes += 4L * n;
        if (rank == 0)
            printf("%-22s rank %d of %d  map: %s\n", what[i], r, n, rankmap_mode(c[i], mode, sizeof(mode)));
    }
    MPI_Comm shared;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    int ns;
    MPI_Comm_size(shared, &ns);
    unsigned long long c1 = pvar_read(comm_bytes), m1 = pvar_read(map_bytes);
    if (rank == 0) {
        printf("MPI_COMM_TYPE_SHARED: %d rank%s on this node\n", ns, ns == 1 ? "" : "s");
        printf("6 communicators on rank %d: %llu bytes of communicator objects, %llu bytes of rank-map tables\n"
               "(a table per communicator would hold %ld bytes of ranks alone; bench/run comm models 1M ranks)\n",
               rank, c1 - c0, m1 - m0, table_bytes + 4L * ns);
    }
    for (int i = 0; i < N; i++)
        MPI_Comm_free(&c[i]);
    MPI_Comm_free(&shared);
    MPI_T_pvar_handle_free(pv_session, &comm_bytes);
    MPI_T_pvar_handle_free(pv_session, &map_bytes);
    MPI_T_pvar_session_free(&pv_session);
    MPI_T_finalize();
}

/* Part 4: launch-time mapping.  `make demo` starts the showcase with
 * --network and --pattern; mpiexec's contention model picked the order and
 * every rank runs on its virtual node.  (leanmpi-map shows the model on the
 * paper's 16K-rank example just before.) */
static void mapping(void)
{
    part("4. Launch-time mapping: where mpiexec --map-by auto put the ranks");
    MPI_Info info;
    MPI_Comm_get_info(MPI_COMM_WORLD, &info);
    char coords[128] = "", order[64] = "";
    int flag_c, flag_o;
    MPI_Info_get(info, "lmpi_node_coords", sizeof(coords) - 1, coords, &flag_c);
    MPI_Info_get(info, "lmpi_map_order", sizeof(order) - 1, order, &flag_o);
    MPI_Info_free(&info);
    char name[MPI_MAX_PROCESSOR_NAME], line[200];
    int len;
    MPI_Get_processor_name(name, &len);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nsize;
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    snprintf(line, sizeof(line), "rank %d on node %.40s (coordinates %.40s), %d rank(s) share the node", rank, name,
             flag_c ? coords : "-", nsize);
    char *all = rank == 0 ? malloc(sizeof(line) * (size_t)size) : NULL;
    MPI_Gather(line, sizeof(line), MPI_CHAR, all, sizeof(line), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (flag_o)
            printf("order applied: %s (the least contended for the declared pattern)\n", order);
        else
            printf("(started without --network: every rank on this machine's node)\n");
        for (int r = 0; r < size; r++)
            printf("%s\n", all + r * sizeof(line));
        free(all);
    }
}

static MPI_T_pvar_handle rma_bytes;
static void counter_round(int per_rank, int in_messages);

/* Part 5: one-sided communication.  A counter at rank 0 that every rank
 * increments with MPI_Fetch_and_op under MPI_Win_lock_all: one CPU atomic
 * in the window's shared segment per increment, no help from rank 0; then
 * the same in messages, the path between hosts. */
static void one_sided(void)
{
    part("5. One-sided: a shared counter (MPI_Fetch_and_op under MPI_Win_lock_all)");
    const int per_rank = 1000;
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&pv_session);
    rma_bytes = pvar_handle("lmpi_mem_current_rma", MPI_T_PVAR_CLASS_LEVEL);
    /* the same counter twice: in the shared segment, then in messages (the
     * path of windows whose members span hosts; info lmpi_rma_messages) */
    for (int in_messages = 0; in_messages < 2; in_messages++)
        counter_round(per_rank, in_messages);
    MPI_T_pvar_handle_free(pv_session, &rma_bytes);
    MPI_T_pvar_session_free(&pv_session);
    MPI_T_finalize();
}

static void counter_round(int per_rank, int in_messages)
{
    unsigned long long before = pvar_read(rma_bytes);
    long *counter;
    MPI_Win win;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "lmpi_rma_messages", in_messages ? "true" : "false");
    MPI_Win_allocate(rank == 0 ? sizeof(long) : 0, sizeof(long), info, MPI_COMM_WORLD, &counter, &win);
    MPI_Info_free(&info);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        *counter = 0;
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long win_bytes = pvar_read(rma_bytes) - before;
    long one = 1, ticket, last = -1, monotonic = 1;
    double t0 = MPI_Wtime();
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < per_rank; i++) {
        MPI_Fetch_and_op(&one, &ticket, MPI_LONG, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
        monotonic &= ticket > last;
        last = ticket;
    }
    MPI_Win_unlock_all(win);
    double us = (MPI_Wtime() - t0) * 1e6 / per_rank;
    long all_monotonic;
    MPI_Reduce(&monotonic, &all_monotonic, 1, MPI_LONG, MPI_LAND, 0, MPI_COMM_WORLD);
    double slowest = us;
    MPI_Reduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        printf("counter = %ld after %d ranks x %d increments (expected %d); every rank saw its tickets rise: %s\n",
               *counter, size, per_rank, size * per_rank, all_monotonic ? "yes" : "NO");
        MPI_Win_unlock(0, win);
        if (!in_messages) {
            printf("%.2f us per fetch-and-add + flush on rank 0 (a CPU atomic in the window's shared segment)\n", us);
            printf("this window costs rank 0 %llu bytes (rma category: the window object, its slot with the lock "
                   "word,\n  MCS queue node and descriptor, its share of the segment header); nothing per target, so "
                   "the same\n  at a million ranks (bench/run rma, metadata_bytes)\n",
                   win_bytes);
        } else {
            printf("in messages, as between hosts: %.2f us per fetch-and-add + flush at the slowest rank (a request\n"
                   "  that rank 0 answers when it polls), %llu bytes for the window at rank 0 (its own slot, a count\n"
                   "  of unanswered requests and its lock queue: still nothing per target)\n",
                   slowest, win_bytes);
        }
    }
    MPI_Win_free(&win);
}

/* Part 6: process topologies that reorder.  A separate job (`make demo`
 * starts it): 16 ranks on 4 emulated nodes placed round-robin, so that
 * every rank's row neighbours sit on other nodes, whose links cost 2 us +
 * bytes / 0.5 GB/s per message (LMPI_VNODE_LINK).  The same 4x4 stencil
 * with reorder 0 and 1: bytes crossing nodes per exchange, the busiest
 * node's link, and the time of a halo exchange. */
static void stencil(void)
{
    part("6. Process topologies: a 4x4 stencil on round-robin placement, reorder=0 vs 1");
    /* this rank's node: the lowest world rank sharing its memory */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_id = rank;
    MPI_Allreduce(MPI_IN_PLACE, &node_id, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    const int halo = 16384, iters = 200;
    char *sb = calloc(4, halo), *rb = calloc(4, halo);
    for (int reorder = 0; reorder <= 1; reorder++) {
        int dims[2] = {0, 0}, periods[2] = {0, 0};
        MPI_Dims_create(size, 2, dims);
        MPI_Comm cart;
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, &cart);
        /* who is where: my neighbours' nodes */
        int their[4] = {-1, -1, -1, -1}, remote = 0;
        MPI_Neighbor_allgather(&node_id, 1, MPI_INT, their, 1, MPI_INT, cart);
        int nb[4];
        MPI_Cart_shift(cart, 0, 1, &nb[0], &nb[1]);
        MPI_Cart_shift(cart, 1, 1, &nb[2], &nb[3]);
        for (int k = 0; k < 4; k++)
            remote += nb[k] != MPI_PROC_NULL && their[k] != node_id;
        long bytes = (long)remote * halo, total, busiest;
        MPI_Reduce(&bytes, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        long per_node = bytes;
        MPI_Comm nodec;
        MPI_Comm_split(MPI_COMM_WORLD, node_id, rank, &nodec);
        MPI_Allreduce(MPI_IN_PLACE, &per_node, 1, MPI_LONG, MPI_SUM, nodec);
        MPI_Comm_free(&nodec);
        MPI_Reduce(&per_node, &busiest, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Barrier(cart);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Neighbor_alltoall(sb, halo, MPI_BYTE, rb, halo, MPI_BYTE, cart);
        double us = (MPI_Wtime() - t0) * 1e6 / iters, worst;
        MPI_Reduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        char how[64] = "as launched";
        if (reorder) {
            MPI_Info info;
            int flag;
            MPI_Comm_get_info(cart, &info);
            MPI_Info_get(info, "lmpi_topo_mapping", sizeof(how) - 1, how, &flag);
            MPI_Info_free(&info);
        }
        if (rank == 0) {
            if (!reorder)
                printf("reorder  mapping      inter-node bytes  busiest node link  halo exchange (4 x %d B)\n", halo);
            printf("%-8d %-12s %16ld %18ld %16.0f us\n", reorder, how, total, busiest, worst);
        }
        MPI_Comm_free(&cart);
    }
    if (rank == 0)
        printf("(reorder=1 tiles the grid onto the nodes, 2x2 per node: fewer neighbours across nodes, and the\n"
               " busiest link carries half as much; bench/run topo measures it beside MPICH and Open MPI)\n");
    free(sb);
    free(rb);
}

/* Part 7: dynamic processes.  The world spawns two children (this program
 * again, `showcase child`), merges with them, and shows what addresses the
 * new process group: the merged communicator's mlut map, and its split back
 * into groups, which is regular again. */
static char self_path[4096];

static void child(MPI_Comm parent)
{
    MPI_Comm merged, split;
    MPI_Intercomm_merge(parent, 1, &merged);
    int one = 1, sum;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    MPI_Comm_split(merged, 1, 0, &split);
    MPI_Comm_free(&split);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&parent);
}

static void dynamic(void)
{
    part("7. Dynamic processes: MPI_Comm_spawn, a merged communicator over two process groups");
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&pv_session);
    MPI_T_pvar_handle tables = pvar_handle("lmpi_rankmap_table_bytes", MPI_T_PVAR_CLASS_SIZE);
    char *args[] = {"child", NULL};
    int errs[2];
    MPI_Comm inter, merged, split;
    double t0 = MPI_Wtime();
    MPI_Comm_spawn(self_path, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    double ms = (MPI_Wtime() - t0) * 1e3;
    unsigned long long before = pvar_read(tables);
    MPI_Intercomm_merge(inter, 0, &merged);
    unsigned long long merged_bytes = pvar_read(tables) - before;
    int one = 1, sum, msize;
    MPI_Comm_size(merged, &msize);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    MPI_Comm_split(merged, 0, 0, &split);
    char m1[32], m2[32];
    if (rank == 0) {
        printf("spawned 2 children in %.1f ms (a new job beside this one; errcodes %d %d)\n", ms, errs[0], errs[1]);
        printf("merged communicator: %d ranks from 2 process groups, map %s (48 bytes + a shared table of %llu\n"
               "  bytes: one (group, rank) pair per rank); allreduce over it: %d\n",
               msize, rankmap_mode(merged, m1, sizeof(m1)), merged_bytes, sum);
        printf("its split back into this group: map %s, no table; the children reach us through their\n"
               "  inboxes in shared memory (the bridge); disconnecting frees the group's address vector\n"
               "  (the children's own memory report is switched off: the one at the end is this job's)\n",
               rankmap_mode(split, m2, sizeof(m2)));
    }
    MPI_Comm_free(&split);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    MPI_T_pvar_handle_free(pv_session, &tables);
    MPI_T_pvar_session_free(&pv_session);
    MPI_T_finalize();
}

/* Part 8: parallel I/O.  The ranks write one 3-D array of doubles as
 * subarrays with MPI_File_write_all (two-phase: the data goes through one
 * aggregator per node), the same bytes independently, and read the file back
 * through another view (slabs of planes), checking every value. */
static void parallel_io(void)
{
    part("8. Parallel I/O: a 3-D array as subarrays, collective buffering, read back as slabs");
    const int n = 64; /* the global array is n^3 doubles */
    int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
    MPI_Dims_create(size, 3, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 3, coords);
    MPI_Comm_free(&cart);
    int gs[3] = {n, n, n}, ls[3], st[3];
    for (int d = 0; d < 3; d++)
        ls[d] = n / dims[d], st[d] = coords[d] * ls[d];
    MPI_Datatype sub;
    MPI_Type_create_subarray(3, gs, ls, st, MPI_ORDER_C, MPI_DOUBLE, &sub);
    MPI_Type_commit(&sub);
    int count = ls[0] * ls[1] * ls[2];
    double *a = malloc(sizeof(double) * (size_t)count);
    for (int i = 0, k = 0; i < ls[0]; i++)
        for (int j = 0; j < ls[1]; j++)
            for (int l = 0; l < ls[2]; l++, k++)
                a[k] = ((st[0] + i) * n + st[1] + j) * n + st[2] + l; /* its index in the file */
    char name[256];
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof(name), "/tmp/lmpi-showcase-%d.dat", pid);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                  &fh);
    MPI_File_set_view(fh, 0, MPI_DOUBLE, sub, "native", MPI_INFO_NULL);
    /* a first write of each kind makes the file's pages exist; then five
     * rounds each, alternated, and the medians (one run on a shared node
     * says little) */
    enum { ROUNDS = 5 };
    double times[2][ROUNDS], t[2];
    for (int it = 0; it < 2 * (ROUNDS + 1); it++) {
        int coll = it % 2;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (coll)
            MPI_File_write_at_all(fh, 0, a, count, MPI_DOUBLE, MPI_STATUS_IGNORE);
        else
            MPI_File_write_at(fh, 0, a, count, MPI_DOUBLE, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        if (it >= 2)
            times[coll][it / 2 - 1] = MPI_Wtime() - t0;
    }
    for (int c = 0; c < 2; c++) {
        for (int i = 1; i < ROUNDS; i++) /* insertion sort: five values */
            for (int j = i; j > 0 && times[c][j] < times[c][j - 1]; j--) {
                double x = times[c][j];
                times[c][j] = times[c][j - 1];
                times[c][j - 1] = x;
            }
        t[c] = times[c][ROUNDS / 2];
    }
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    /* another decomposition of the same file: each rank a slab of planes */
    int planes = n / size, bad = 0;
    double *slab = malloc(sizeof(double) * (size_t)planes * n * n);
    MPI_File_set_view(fh, (MPI_Offset)rank * planes * n * n * sizeof(double), MPI_DOUBLE, MPI_DOUBLE, "native",
                      MPI_INFO_NULL);
    MPI_File_read_all(fh, slab, planes * n * n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    for (int k = 0; k < planes * n * n; k++)
        bad += slab[k] != (double)rank * planes * n * n + k;
    int allbad;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Info used;
    char cbn[MPI_MAX_INFO_VAL + 1] = "?", cbs[MPI_MAX_INFO_VAL + 1] = "?";
    int flag;
    MPI_File_get_info(fh, &used);
    MPI_Info_get(used, "cb_nodes", MPI_MAX_INFO_VAL, cbn, &flag);
    MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL, cbs, &flag);
    MPI_Info_free(&used);
    MPI_File_close(&fh);
    MPI_Comm node;
    int nodes, first;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &first);
    first = first == 0;
    MPI_Allreduce(&first, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    double mb = (double)n * n * n * sizeof(double) / 1e6;
    if (rank == 0) {
        printf("%d ranks (grid %dx%dx%d) wrote a %d^3 array of doubles (%.1f MB) to %s as 3-D subarrays\n", size,
               dims[0], dims[1], dims[2], n, mb, name);
        printf("MPI_File_write_all: two-phase through %s aggregator(s), one per node (%d nodes here),\n"
               "  cb_buffer_size %s: %.2f ms (%.2f GB/s); the same bytes with independent MPI_File_write:\n"
               "  %.2f ms (%.2f GB/s) (medians of %d rounds each, alternated)\n",
               cbn, nodes, cbs, t[1] * 1e3, mb / 1e3 / t[1], t[0] * 1e3, mb / 1e3 / t[0], ROUNDS);
        printf("(each rank's subarray is %d runs of %d bytes in the file: independently, each run is a\n"
               "  write of its own; two-phase first moves the runs to the aggregators, which then write\n"
               "  contiguous stretches.  On one node both land in the page cache, so the exchange is what\n"
               "  two-phase adds and the fewer, larger writes are what it saves: it wins when runs are\n"
               "  small and many, and on a parallel file system, where every write is a request)\n",
               ls[0] * ls[1], (int)(ls[2] * sizeof(double)));
        printf("read back as %d slabs of %d planes with MPI_File_read_all: %s\n", size, planes,
               allbad ? "WRONG VALUES" : "every value in place");
        printf("(bench/run io compares the bandwidth with MPICH's ROMIO and Open MPI's OMPIO)\n");
    }
    free(slab);
    free(a);
    MPI_Type_free(&sub);
}

/* Part 9: waiting without burning a core -- the event-driven wait. */
static void waiting(void)
{
    part("9. Waiting: a blocking call sleeps until its message wakes it; a sender that runs ahead");
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&pv_session);
    MPI_T_pvar_handle sleeps = pvar_handle("lmpi_wait_sleeps", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle moves = pvar_handle("lmpi_wait_moves", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle handoffs = pvar_handle("lmpi_wait_handoffs", MPI_T_PVAR_CLASS_COUNTER);
    if (size > 1 && rank <= 1) {
        int v = 0;
        if (rank == 1) { /* computes (here: sleeps) 300 ms outside MPI, then answers */
            struct timespec ts = {0, 300000000};
            nanosleep(&ts, NULL);
            MPI_Send(&v, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
        } else {
            unsigned long long s0 = pvar_read(sleeps);
            struct timespec c0, c1;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
            double t0 = MPI_Wtime();
            MPI_Recv(&v, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double waited = MPI_Wtime() - t0;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
            double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
            printf("rank 0 waited %.0f ms in MPI_Recv for rank 1 (computing): %.1f ms of processor time, %llu\n"
                   "sleep(s) in the kernel, woken by the message itself (no timer: MPICH and Open MPI poll the\n"
                   "whole time; LeanMPI spins 50 us and yields, then sleeps once 2 ms have passed without progress)\n",
                   waited * 1e3, cpu * 1e3, pvar_read(sleeps) - s0);
            printf("(a spinning wait that finds another rank of this node waiting on its processor moves to a\n"
                   "free one, or lets it in at once: %llu such waits here, %llu of them moved; LMPI_WAIT_HANDOFF; with\n"
                   "more ranks than cores waits do not spin, so there are none)\n",
                   pvar_read(handoffs), pvar_read(moves));
        }
    }
    /* A sender far ahead of its receiver: its eager messages wait unexpected
     * at the receiver, which asks it for rendezvous past 1 MiB held. */
    MPI_T_pvar_handle held = pvar_handle("lmpi_mem_current_match", MPI_T_PVAR_CLASS_LEVEL);
    if (size > 1 && rank <= 1) {
        enum { N = 200, LEN = 16384 };
        char *buf = malloc((size_t)N * LEN);
        MPI_Request rq[N];
        int go = 1;
        if (rank == 1) {
            memset(buf, 7, (size_t)N * LEN);
            for (int i = 0; i < N; i++)
                MPI_Isend(buf + (size_t)i * LEN, LEN, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &rq[i]);
            MPI_Send(&go, 1, MPI_INT, 0, 10, MPI_COMM_WORLD);
            MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
        } else {
            unsigned long long before = pvar_read(held);
            MPI_Recv(&go, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* the last one sent */
            unsigned long long during = pvar_read(held);
            for (int i = 0; i < N; i++)
                MPI_Recv(buf + (size_t)i * LEN, LEN, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            printf("rank 1 sent %d messages of 16 KiB (%.1f MiB) before rank 0 posted a receive: rank 0 held %.2f MiB\n"
                   "of them (a receiver past 1 MiB of one sender's unexpected data asks it for rendezvous)\n",
                   N, N * (double)LEN / (1 << 20), (double)(during - before) / (1 << 20));
        }
        free(buf);
    }
    MPI_T_pvar_handle_free(pv_session, &held);
    MPI_T_pvar_handle_free(pv_session, &sleeps);
    MPI_T_pvar_handle_free(pv_session, &moves);
    MPI_T_pvar_handle_free(pv_session, &handoffs);
    MPI_T_pvar_session_free(&pv_session);
    MPI_T_finalize();
}

int main(int argc, char **argv)
{
    /* each part appears as it is printed, in order with the launcher's and
     * the spawned job's output (a pipe would hold it until exit) */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* part 7's children: the report at the end is this job's; theirs would
     * interleave with part 7 */
    if (argc > 1 && !strcmp(argv[1], "child"))
        setenv("LMPI_MEMORY_REPORT", "0", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) { /* part 7's children */
        child(parent);
        MPI_Finalize();
        return 0;
    }
    if (!realpath(argv[0], self_path))
        snprintf(self_path, sizeof(self_path), "%s", argv[0]);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "stencil")) { /* part 6, a job of its own */
        stencil();
        MPI_Finalize();
        return 0;
    }
    if (rank == 0)
        printf("LeanMPI showcase\n");
    foundation();
    matching();
    communicators();
    mapping();
    one_sided();
    dynamic();
    parallel_io();
    waiting();
    part("Memory report (LMPI_MEMORY_REPORT=1, printed by MPI_Finalize)");
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
