/* Every LMPI_* environment variable, declared once.
 * X(field, "LMPI_NAME", TYPE, "default", "description")
 * TYPE is BOOL, INT, FLOAT, SIZE (bytes, accepts k/m/g suffixes) or STRING.
 * leanmpi_info --config and docs/env.md are generated from this table. */
#define LMPI_CONFIG_TABLE(X)                                                                      \
    X(memory_report, "LMPI_MEMORY_REPORT", BOOL, "0",                                             \
      "Print current and peak bytes per memory category at MPI_Finalize (every rank "             \
      "reports to stderr, prefixed by its rank).")                                                \
    X(verbose_errors, "LMPI_VERBOSE_ERRORS", BOOL, "0",                                           \
      "Print every error raised at the binding boundary, also those returned to the caller "      \
      "under MPI_ERRORS_RETURN.")                                                                 \
    X(initial_errhandler, "LMPI_INITIAL_ERRHANDLER", STRING, "fatal",                             \
      "Error handler in force before MPI_Init and for new predefined communicators: fatal, "      \
      "abort or return (MPI-4 mpi_initial_errhandler).")                                          \
    X(shm_eager_max, "LMPI_SHM_EAGER_MAX", SIZE, "16k",                                           \
      "Largest message sent eagerly through shared-memory cells; larger ones use rendezvous "     \
      "(one copy with process_vm_readv). Capped at the cell payload size.")                       \
    X(shm_cells, "LMPI_SHM_CELLS", INT, "0",                                                      \
      "Cells each rank owns in the shared-memory segment; 0 chooses from the local rank count "  \
      "(64 for up to 64 ranks, fewer beyond, at least 16).")                                      \
    X(shm_fastbox, "LMPI_SHM_FASTBOX", BOOL, "1",                                                 \
      "Use the per-pair fast box for messages up to LMPI_SHM_FASTBOX_MAX bytes.")                 \
    X(shm_fastbox_max, "LMPI_SHM_FASTBOX_MAX", SIZE, "448",                                       \
      "Largest payload sent through a fast box (at most 448 bytes).")                             \
    X(shm_fastbox_ring, "LMPI_SHM_FASTBOX_RING", SIZE, "0",                                       \
      "Bytes of each ordered pair's fast-box ring, which takes small messages that find the "     \
      "pair's one-message slot full (a power of two from 512 to 64k); 0: 4 KiB up to 16 ranks on " \
      "a node, halving as the node fills, none from 46 ranks on.")                                \
    X(shm_fastbox_scan, "LMPI_SHM_FASTBOX_SCAN", INT, "8",                                        \
      "Up to this many ranks on a node, a receiver reads all its fast boxes when it polls; "       \
      "above, senders flag full boxes in a bitmap (one atomic per message, but polling stays "     \
      "cheap with many ranks). 0 forces the bitmap.")                                             \
    X(shm_coop_min, "LMPI_SHM_COOP_MIN", SIZE, "512k",                                            \
      "Rendezvous messages from this size on are copied by receiver and sender together, in "     \
      "256 KiB chunks (two cores copy about twice as fast as one); 0 disables.")                   \
    X(shm_coll_pool, "LMPI_SHM_COLL_POOL", SIZE, "64k",                                          \
      "Shared memory per local rank set aside in the segment for the areas of shared-memory "     \
      "collectives (one area per communicator that uses them; when the pool is full a "           \
      "communicator's small collectives use messages).")                                          \
    X(shm_cma, "LMPI_SHM_CMA", BOOL, "1",                                                         \
      "Copy rendezvous messages once with process_vm_readv; 0 forces the pipelined copy "        \
      "through cells (used automatically when the kernel forbids cross-memory attach).")          \
    X(match, "LMPI_MATCH", STRING, "auto",                                                        \
      "Matching structure of every context: list, array, hash, 4d or auto (list until the "       \
      "observed search depth passes the threshold, then LMPI_MATCH_AUTO_TARGET).")                \
    X(match_auto_target, "LMPI_MATCH_AUTO_TARGET", STRING, "4d",                                  \
      "Structure auto moves a deep context to: 4d, hash or array.")                              \
    X(match_adjustment, "LMPI_MATCH_ADJUSTMENT", FLOAT, "2.0",                                    \
      "The paper's Adjustment: auto switches when the average search depth exceeds "              \
      "PointerTraversalLengthThreshold (3 x dimensionSpan + 1) times this factor (>= 1.0).")      \
    X(rankmap, "LMPI_RANKMAP", STRING, "compressed",                                              \
      "Communicator rank maps: compressed (direct/offset/stride modes, shared lookup tables) or " \
      "table (the baseline: a full table per communicator, shared only by dup).")                 \
    X(node_size, "LMPI_NODE_SIZE", INT, "0",                                                      \
      "Treat every N consecutive world ranks as one node (emulates several nodes on one "         \
      "machine for node-aware communicators and collectives); 0 uses the real hosts.")            \
    X(vnode_link, "LMPI_VNODE_LINK", STRING, "",                                                  \
      "LATENCY_US:GBYTES_PER_S: give the emulated nodes of one machine (LMPI_NODE_SIZE, mpiexec " \
      "--network) a network: a message leaving a node holds the node's uplink for latency + "      \
      "bytes / bandwidth. For experiments (reordering, placement); empty: no emulated cost.")      \
    X(net, "LMPI_NET", STRING, "auto",                                                            \
      "Between nodes: auto (the network transport between real hosts; emulated nodes of one "     \
      "machine talk through shared memory) or ofi (libfabric between emulated nodes too: mixed " \
      "shm+ofi runs on one machine).")                                                            \
    X(ofi_eager_max, "LMPI_OFI_EAGER_MAX", SIZE, "16k",                                           \
      "Largest message sent eagerly to a rank on another node (at most 16 KiB); larger ones are " \
      "read by the receiver with an RMA read, or streamed in packets of that size where the "     \
      "provider has no RMA.")                                                                      \
    X(ofi_connect, "LMPI_OFI_CONNECT", STRING, "first-use",                                    \
      "When ranks open the network: first-use (one rank per node at start-up, every other rank "  \
      "at its first message to or from another node, through its node's first rank) or all "      \
      "(every rank at start-up, addresses inserted in world order: nothing stored per peer).")     \
    X(ofi_introducer_us, "LMPI_OFI_INTRODUCER_US", INT, "50000",                                  \
      "First-use connections go through each node's first rank: while it is outside MPI, a thread "\
      "of it polls the network (under the lock MPI calls then take), every 1 ms after it found "   \
      "something, backing off to this many microseconds while idle, so that first contacts "       \
      "between other ranks do not wait for it to call MPI. 0: no thread.")                         \
    X(dpm_net, "LMPI_DPM_NET", BOOL, "0",                                                         \
      "Dynamic processes may meet processes on other hosts: each process taking part publishes "  \
      "its network address in the launcher's name service.  Our mpiexec sets it in jobs with "     \
      "remote hosts and with -nameserver.  Unset, a job turns it on where it needs it: at "       \
      "MPI_Open_port under Hydra's -nameserver (other jobs may be on other hosts), and when it "  \
      "connects to a port on another host; 0 keeps it off.")                                      \
    X(dpm_connect_timeout, "LMPI_DPM_CONNECT_TIMEOUT", FLOAT, "180",                              \
      "Seconds MPI_Comm_connect waits for the port's owner to accept before it fails with "       \
      "MPI_ERR_PORT (MPICH's MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT, also 180 s); the info key "     \
      "\"timeout\" of one call overrides it.  0: wait as long as the owner lives.")               \
    X(pmi, "LMPI_PMI", STRING, "1",                                                               \
      "The wire protocol spoken to a launcher that passes PMI_FD: 1 (PMI-1: LeanMPI's mpiexec, "   \
      "Hydra, Slurm's pmi2 plugin) or 2 (PMI-2: Hydra, Slurm's srun --mpi=pmi2).  Processes "      \
      "a PMIx launcher starts speak PMIx whatever this says.")                                     \
    X(ofi_lib, "LMPI_OFI_LIB", STRING, "libfabric.so.1",                                          \
      "The libfabric the network transport opens (a file name or path): a site's own build, or "  \
      "one whose providers do not probe the machine at start-up (Debian's loads verbs, psm and "  \
      "psm2 into every process that opens it: 0.2 s asleep in psm's and psm2's clock "            \
      "calibration, then about 0.1 s of processor time in verbs' reading of /proc/kallsyms).")    \
    X(topo_map, "LMPI_TOPO_MAP", STRING, "auto",                                                  \
      "How MPI_Cart_create, MPI_Graph_create and MPI_Dist_graph_create map with reorder=1: auto "  \
      "(grids tiled analytically onto nodes and sockets, graphs with Scotch in two levels), "      \
      "scotch (Scotch for grids too) or identity (never reorder).")                               \
    X(topo_report, "LMPI_TOPO_REPORT", BOOL, "0",                                                 \
      "Rank 0 prints every reordering: the strategy, its time, and hop-bytes, inter-node weight " \
      "and heaviest node link against the placement as launched and block order.")               \
    X(topo_hwloc, "LMPI_TOPO_HWLOC", STRING, "",                                                  \
      "The node model for reordering: an hwloc synthetic topology (\"package:2 core:16\") or an "  \
      "XML file; empty reads this machine.")                                                      \
    X(network, "LMPI_NETWORK", STRING, "",                                                        \
      "The network between nodes for reordering (set by mpiexec --network: torus:AxB, mesh:..., " \
      "flat:N or a description file); empty: a flat network.")                                    \
    X(node_comms, "LMPI_NODE_COMMS", STRING, "lazy",                                              \
      "When the internal node and node-roots communicators of a communicator are built: lazy "   \
      "(first node-aware collective) or eager (at creation).")                                    \
    X(coll_short, "LMPI_COLL_SHORT", SIZE, "2k",                                                  \
      "Blocking barrier, bcast, reduce and allreduce of contiguous data up to this many bytes, "  \
      "and allgather and alltoall whose blocks together are no larger (up to 8 ranks, or any "   \
      "power of two for allgather), on an intracommunicator run without a schedule (direct "     \
      "sends and stack receives); 0 sends everything through schedules. Measured in "            \
      "docs/performance.md (collectives).")                                                        \
    X(coll_bcast_sag, "LMPI_COLL_BCAST_SAG", SIZE, "64m",                                        \
      "Broadcasts of contiguous data from this many bytes on (and 3 or more ranks) scatter the "  \
      "data and allgather it around a ring instead of a binomial tree (it lost to the tree up "  \
      "to 1 MiB at 4 and 8 ranks on 2 cores: docs/performance.md).")                          \
    X(coll_allreduce_rsag, "LMPI_COLL_ALLREDUCE_RSAG", SIZE, "32k",                               \
      "Allreduce of contiguous data with a commutative operation from this many bytes on uses "  \
      "Rabenseifner's algorithm (reduce-scatter by recursive halving, allgather by recursive "    \
      "doubling) instead of recursive doubling (it wins from 32 KiB at 4 and 8 ranks).")                                                 \
    X(coll_allreduce_ring, "LMPI_COLL_ALLREDUCE_RING", SIZE, "64m",                                \
      "... and from this many bytes on the ring algorithm (reduce-scatter and allgather around " \
      "a ring: n - 1 steps, each moving 1/n of the data; it never beat Rabenseifner up to 1 MiB " \
      "here).")                                       \
    X(coll_allgather_bruck, "LMPI_COLL_ALLGATHER_BRUCK", SIZE, "1k",                             \
      "Allgather of contiguous blocks up to this many bytes per rank (3 or more ranks) uses "     \
      "Bruck's algorithm (log2 n rounds) instead of direct exchanges or the ring; it won up to "  \
      "1 KiB at 4-16 ranks on 2 cores (16 ranks 8 B: 68 vs 102 us direct), lost from 16 KiB "     \
      "(docs/performance.md).")                                                                   \
    X(coll_allgather_ring, "LMPI_COLL_ALLGATHER_RING", SIZE, "64m",                              \
      "Allgather of blocks from this many bytes per rank forwards them around a ring (n - 1 "     \
      "dependent steps, neighbours only) instead of sending each rank's block to every other in " \
      "batches of LMPI_COLL_ALLTOALL_BATCH; the direct exchange won at 4-16 ranks up to 1 MiB "    \
      "here (16 ranks 16 KiB: 619 vs 876 us).  Allgatherv always uses the direct exchange.")       \
    X(coll_alltoall_bruck, "LMPI_COLL_ALLTOALL_BRUCK", SIZE, "0",                                \
      "Alltoall of contiguous blocks up to this many bytes per rank (4 or more ranks) uses "      \
      "Bruck's algorithm (log2 n rounds of packed blocks) instead of pairwise exchanges.  Off: "  \
      "batched pairwise exchanges beat it at 4-16 ranks for 8 B-1 KiB here (16 ranks 1 KiB: "   \
      "196 vs 238 us; docs/performance.md); it pays where a message costs more than a copy.")     \
    X(coll_alltoall_batch, "LMPI_COLL_ALLTOALL_BATCH", INT, "32",                                \
      "Pairwise alltoall: how many exchanges a rank starts before waiting for them (1: one "      \
      "partner at a time).  Waiting once per batch saves a trip through the scheduler per "       \
      "partner when ranks outnumber cores (16 ranks 16 KiB: 1080 -> 740 us).")                   \
    X(coll_shm, "LMPI_COLL_SHM", BOOL, "1",                                                       \
      "Blocking barrier, bcast, reduce and allreduce of up to LMPI_COLL_SHM_MAX bytes run their "  \
      "node phases (node-aware collectives) through a shared-memory area of the node "            \
      "communicator instead of messages.")                                                        \
    X(coll_shm_min_ranks, "LMPI_COLL_SHM_MIN_RANKS", INT, "2",                                    \
      "... and so do barrier, reduce, allreduce and (blocks that fit a slot) allgather and "     \
      "alltoall on a communicator within one node of at least this many ranks (0: never; all but " \
      "reduce take one hop through the area, where message exchanges take log2 n).")              \
    X(coll_shm_bcast_min_ranks, "LMPI_COLL_SHM_BCAST_MIN_RANKS", INT, "8",                        \
      "... and bcast from this many ranks on (0: never; below, a message tree measured faster: " \
      "4 ranks 1.1 against 4.7 us).")                                                             \
    X(coll_shm_max, "LMPI_COLL_SHM_MAX", SIZE, "256",                                             \
      "Largest collective payload through a shared-memory area (each area holds 16 slots of "    \
      "this size per member, so that a root can run 16 collectives ahead).")                    \
    X(coll_node_aware, "LMPI_COLL_NODE_AWARE", BOOL, "1",                                         \
      "Barrier, bcast, reduce and allreduce (commutative operations) on a communicator that "     \
      "spans several nodes with more than one rank on some node run node-aware: within each "     \
      "node, among one leader per node, within each node again.")                                 \
    X(coll_redscat_halving, "LMPI_COLL_REDSCAT_HALVING", BOOL, "1",                               \
      "Reduce_scatter(_block) of contiguous data with a commutative operation uses recursive "    \
      "halving; 0: a reduction to rank 0 and a scatter.")                                         \
    X(bench_dry_issue, "LMPI_BENCH_DRY_ISSUE", BOOL, "0",                                         \
      "Benchmarks only: allow MPI_Pcontrol(2) to make sends stop before the transport and "       \
      "complete at once (the issue-rate benchmark); MPI_Pcontrol(1) ends it.")                    \
    X(die_with_parent, "LMPI_DIE_WITH_PARENT", BOOL, "1",                                        \
      "A process started by a launcher (PMI_FD set) is killed when its parent dies "               \
      "(PR_SET_PDEATHSIG): under a wrapper (sh -c, valgrind, time) nothing outlives a killed "    \
      "mpiexec. 0 leaves that to the launcher.")                                                  \
    X(spin_time, "LMPI_SPIN_TIME", INT, "50",                                                     \
      "Microseconds a blocking call polls without progress before it yields the processor once "  \
      "and spins again; after LMPI_SLEEP_AFTER without progress it sleeps until woken. "          \
      "0 yields at every idle poll, which oversubscribed runs need. "                             \
      "Unset, it is 0 when the node's ranks outnumber its online cores.")                        \
    X(sleep_after, "LMPI_SLEEP_AFTER", INT, "2000",                                               \
      "Microseconds a blocking call waits without progress (spinning and yielding) before it "   \
      "sleeps in the kernel until woken. Unset, it is 100 per rank a core where that is more "    \
      "(a yield comes back after every rank sharing the core had a turn).")                      \
    X(sched_slice, "LMPI_SCHED_SLICE", INT, "100",                                               \
      "Microseconds of the time slice each rank asks the kernel for (EEVDF custom slices, "        \
      "Linux 6.12+; ignored before): a rank woken by its message then preempts a busy process "    \
      "at once instead of waiting out that process's slice; its processor share is unchanged. "  \
      "0 keeps the kernel's default.")                                                            \
    X(test_yield, "LMPI_TEST_YIELD", INT, "2",                                                     \
      "With LMPI_SPIN_TIME 0 (more ranks than cores): microseconds of consecutive calls that "     \
      "test without waiting and find nothing (MPI_Test and its kin, MPI_Iprobe, MPI_Win_test, "    \
      "MPI_Parrived) after which one of them hands the processor over, so that a program polling " \
      "in a loop lets the rank it waits for run; a program that does work between its tests "     \
      "keeps the processor that long. 0: at every such call.")                                     \
    X(wait_handoff, "LMPI_WAIT_HANDOFF", BOOL, "1",                                               \
      "A spinning wait that finds another rank of its node waiting on the same processor "       \
      "(runnable, not running) moves to a processor where none waits, or else sleeps at once "    \
      "and lets it in (src/runtime/README.md, \"Waiting\"). 0: it spins its LMPI_SPIN_TIME first.") \
    X(rma_fence, "LMPI_RMA_FENCE", STRING, "barrier",                                              \
      "Window fences: barrier (completion counters and one barrier, O(1) memory) or "              \
      "reduce_scatter (operations wait for the closing fence, a reduce-scatter of per-target "    \
      "counts tells each target how many to expect: O(P) memory; the paper's comparison).")       \
    X(rma_lock, "LMPI_RMA_LOCK", STRING, "mcs",                                                    \
      "Contended passive-target locks: mcs (waiters queue, only the head polls the lock word) "   \
      "or polling (every waiter retries the lock word with backoff).")                            \
    X(rma_issue, "LMPI_RMA_ISSUE", STRING, "eager",                                                \
      "RMA operations: eager (issued when posted) or delayed (buffered in a bounded pool, issued "\
      "at the next flush, epoch end or when the pool is full).")                                 \
    X(rma_messages, "LMPI_RMA_MESSAGES", BOOL, "0",                                                \
      "1 carries every window's operations in messages, as windows whose members span hosts "    \
      "always do (no shared segment; the target applies them when it polls). For tests and "     \
      "comparisons; 0 uses loads, stores and CPU atomics on one host.")                          \
    X(rma_wire_min, "LMPI_RMA_WIRE_MIN", SIZE, "4k",                                              \
      "Puts and gets of at least this many bytes to a rank on another host go by the network's "  \
      "own RMA writes and reads, where the provider offers them without per-member keys "         \
      "(tcp here), the window is not dynamic and its parts agree in size and displacement unit; " \
      "smaller ones, accumulates and the rest go in messages. 0: always messages.")               \
    X(rma_pool, "LMPI_RMA_POOL", INT, "1024",                                                      \
      "Delayed issue: buffered operations per window before the pool is drained (back-pressure "  \
      "keeps an epoch of millions of operations in bounded memory).")                             \
    X(thread_level, "LMPI_THREAD_LEVEL", STRING, "",                                              \
      "Override the thread level granted by MPI_Init_thread: single, funneled, serialized or "   \
      "multiple.")
