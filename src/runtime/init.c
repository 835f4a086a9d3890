/* MPI_Init / MPI_Finalize and the small queries around them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "io/file.h"
#include "binding/gen/impl.h"
#include "coll/sched.h"
#include "comm/comm.h"
#include "datatype/datatype.h"
#include "ft/ft.h"
#include "match/match.h"
#include "pmi/pmi.h"
#include "pt2pt/pt2pt.h"
#include "runtime/config.h"
#include "runtime/errhandler.h"
#include "runtime/request.h"
#include "runtime/wait.h"
#include "transport/shm/shm.h"
#include "transport/shm/bridge.h"
#include "transport/transport.h"

lmpi_runtime lmpi_rt;

_Noreturn void lmpi_abort_job(int code, const char *why)
{
    fflush(stdout);
    fflush(stderr);
    lmpi_bridge_unlink();
    lmpi_pmi_abort(code, why);
    _exit(code);
}

static int parse_thread_level(const char *s, int fallback)
{
    if (!s || !*s)
        return fallback;
    if (!strcmp(s, "single")) return MPI_THREAD_SINGLE;
    if (!strcmp(s, "funneled")) return MPI_THREAD_FUNNELED;
    if (!strcmp(s, "serialized")) return MPI_THREAD_SERIALIZED;
    if (!strcmp(s, "multiple")) return MPI_THREAD_MULTIPLE;
    return fallback;
}

/* Node ids as launchers give them (PMI mapping, PMIx node ids, mpiexec
 * --network's virtual nodes) need not start at 0 or be consecutive: a job on
 * hosts 1 and 2 of a pool.  The node map wants small dense ids, so they are
 * renumbered in order of first appearance.  The largest modelled network has
 * 2^24 nodes; ids above are not ids (and would size the renumbering table). */
#define LMPI_NODE_MAX_ID ((1 << 24) - 1)

static lmpi_status dense_nodes(int n, int *node_of)
{
    int maxid = -1;
    for (int r = 0; r < n; r++) {
        if (node_of[r] < 0 || node_of[r] > LMPI_NODE_MAX_ID) {
            lmpi_err_detail("node id %d of rank %d is out of range (0 to %d)", node_of[r], r, LMPI_NODE_MAX_ID);
            return LMPI_ERR_OTHER;
        }
        maxid = node_of[r] > maxid ? node_of[r] : maxid;
    }
    /* a table indexed by the ids renumbers in one pass (every rank does
     * this at start-up) */
    int *dense = lmpi_malloc(sizeof(int) * (size_t)(maxid + 1), LMPI_MEM_OTHER);
    if (!dense)
        return LMPI_ERR_NO_MEM;
    memset(dense, -1, sizeof(int) * (size_t)(maxid + 1));
    int distinct = 0;
    for (int r = 0; r < n; r++) {
        if (dense[node_of[r]] < 0)
            dense[node_of[r]] = distinct++;
        node_of[r] = dense[node_of[r]];
    }
    lmpi_free(dense);
    return LMPI_OK;
}

/* mpiexec --network places ranks on virtual nodes and lists each rank's node
 * id in LMPI_VNODE_MAP ("3,3,7,..."): ranks on one virtual node form the
 * node-level communicators, as on a real machine. */
static lmpi_status virtual_nodes(const char *vmap, int n, int *node_of)
{
    const char *p = vmap;
    for (int r = 0; r < n; r++) {
        char *end;
        errno = 0;
        long id = strtol(p, &end, 10);
        if (end == p || errno || (*end != ',' && *end != '\0') || (*end == '\0' && r != n - 1)) {
            lmpi_err_detail("LMPI_VNODE_MAP does not list %d node ids (rank %d)", n, r);
            return LMPI_ERR_OTHER;
        }
        if (id < 0 || id > LMPI_NODE_MAX_ID) {
            lmpi_err_detail("LMPI_VNODE_MAP: node id %ld of rank %d is out of range (0 to %d)", id, r,
                            LMPI_NODE_MAX_ID);
            return LMPI_ERR_OTHER;
        }
        node_of[r] = (int)id;
        p = *end ? end + 1 : end;
    }
    return dense_nodes(n, node_of);
}

/* Node of every world rank: from the process manager's mapping (real
 * hosts: *hosts is set when there are several), or every LMPI_NODE_SIZE
 * consecutive ranks, or LMPI_VNODE_MAP (emulated nodes on one machine). */
static lmpi_status world_nodes(int **out, bool *hosts)
{
    int n = lmpi_rt.world_size;
    int *node_of = lmpi_calloc((size_t)n, sizeof(int), LMPI_MEM_OTHER);
    if (!node_of)
        return LMPI_ERR_NO_MEM;
    *out = node_of;
    *hosts = false;
    if (n > 1 && lmpi_pmi_node_map(n, node_of) == 0) {
        lmpi_status st = dense_nodes(n, node_of);
        if (st != LMPI_OK)
            return st;
        for (int r = 0; r < n; r++)
            if (node_of[r] != node_of[0])
                *hosts = true;
        if (*hosts)
            return LMPI_OK;
    }
    if (lmpi_config.node_size > 0) {
        for (int r = 0; r < n; r++)
            node_of[r] = r / lmpi_config.node_size;
        return LMPI_OK;
    }
    memset(node_of, 0, sizeof(int) * (size_t)n);
    const char *vmap = getenv("LMPI_VNODE_MAP");
    return vmap && *vmap ? virtual_nodes(vmap, n, node_of) : LMPI_OK;
}

/* Does the job need the network transport?  Always between real hosts;
 * between the emulated nodes of one machine only with LMPI_NET=ofi. */
static lmpi_status wants_net(const int *node_of, int n, bool hosts, bool *net)
{
    *net = false;
    const char *mode = lmpi_config.net ? lmpi_config.net : "auto";
    if (strcmp(mode, "auto") != 0 && strcmp(mode, "ofi") != 0) {
        lmpi_err_detail("LMPI_NET=%s: expected auto or ofi", mode);
        return LMPI_ERR_OTHER;
    }
    bool several = false;
    for (int r = 1; r < n && !several; r++)
        several = node_of[r] != node_of[0];
    *net = hosts || (several && strcmp(mode, "ofi") == 0);
    return LMPI_OK;
}

/* Start the process's runtime (PMI, shared memory), once: the world model
 * (MPI_Init) and sessions (MPI_Session_init) share it, and it ends when the
 * last of them finalizes. */
static lmpi_status start_runtime(int required, int *provided)
{
    if (lmpi_rt.state == LMPI_STATE_FINALIZED) {
        lmpi_err_detail("MPI cannot be initialized again once the runtime has ended");
        return LMPI_ERR_OTHER;
    }
    if (lmpi_rt.state == LMPI_STATE_READY) {
        if (provided)
            *provided = lmpi_rt.thread_level;
        return LMPI_OK;
    }
    lmpi_config_load();
    lmpi_datatype_init_builtin();
    lmpi_comm_init_builtin();

    int level = parse_thread_level(lmpi_config.thread_level, required);
    if (level > MPI_THREAD_MULTIPLE)
        level = MPI_THREAD_MULTIPLE;
    lmpi_rt.thread_level = level;
    lmpi_rt.main_thread = pthread_self();

    lmpi_pmi_info info;
    char why[256];
    if (lmpi_pmi_init(&info, why, sizeof(why)) != 0) {
        lmpi_err_detail("%s", why);
        return LMPI_ERR_OTHER;
    }
    /* Under a wrapper our parent is not the launcher, whose own guard
     * (PR_SET_PDEATHSIG on its child) stops at the wrapper: chain it. */
    if (!info.singleton && lmpi_config.die_with_parent)
        prctl(PR_SET_PDEATHSIG, SIGKILL);
    lmpi_rt.world_rank = info.rank;
    lmpi_rt.world_size = info.size;
    lmpi_rt.peer_size_hint = info.size;
    lmpi_rt.appnum = info.appnum;
    lmpi_rt.universe_size = info.universe_size;
    snprintf(lmpi_rt.kvsname, sizeof(lmpi_rt.kvsname), "%s", info.kvsname);
    const char *vnode = getenv("LMPI_VNODE_NAME");
    if (vnode && *vnode)
        snprintf(lmpi_rt.processor_name, sizeof(lmpi_rt.processor_name), "%s", vnode);
    else if (gethostname(lmpi_rt.processor_name, sizeof(lmpi_rt.processor_name)) != 0)
        snprintf(lmpi_rt.processor_name, sizeof(lmpi_rt.processor_name), "localhost");
    lmpi_rt.processor_name[sizeof(lmpi_rt.processor_name) - 1] = '\0';
    const char *coords = getenv("LMPI_VNODE_COORDS");
    snprintf(lmpi_rt.node_coords, sizeof(lmpi_rt.node_coords), "%s", coords ? coords : "");
    const char *order = getenv("LMPI_MAP_ORDER");
    snprintf(lmpi_rt.map_order, sizeof(lmpi_rt.map_order), "%s", order ? order : "");

    int *node_of = NULL;
    bool hosts, net = false;
    lmpi_status st = world_nodes(&node_of, &hosts);
    if (st == LMPI_OK)
        st = wants_net(node_of, info.size, hosts, &net);
    if (st == LMPI_OK)
        st = lmpi_comm_init_world(info.size, info.rank, node_of);
    if (st != LMPI_OK) {
        lmpi_free(node_of);
        return st;
    }
    /* Shared memory spans a real host (all emulated nodes of one machine
     * share it): its first rank makes the segment. */
    int leader = hosts ? -1 : 0, nlocal = hosts ? 0 : info.size;
    lmpi_rt.local_rank = info.rank;
    for (int r = 0; hosts && r < info.size; r++)
        if (node_of[r] == node_of[info.rank]) {
            if (leader < 0)
                leader = r;
            if (r == info.rank)
                lmpi_rt.local_rank = nlocal;
            nlocal++;
        }
    lmpi_rt.local_size = nlocal;
    lmpi_tr_set_handler(lmpi_pt2pt_deliver);
    st = lmpi_match_select(NULL);
    if (st == LMPI_OK && net)
        st = lmpi_tr_net_start(node_of, info.size, info.rank, hosts);
    if (st != LMPI_OK) {
        lmpi_free(node_of);
        return st;
    }
    /* A spawned process whose parents may be on other hosts opens the
     * network to reach them (lmpi_dpm_init): started now, libfabric's 0.3 s
     * (Debian's) overlaps the rest, and every child opens at once rather
     * than after its node's first rank (spawning 4 children over 2 hosts:
     * 840 -> 540 ms, docs/performance.md). */
    bool open_early = lmpi_dpm_parent_net();
    if (open_early)
        lmpi_tr_net_open_early(info.rank, info.size);
    lmpi_wait_init();
    lmpi_wait_set_slice((unsigned)lmpi_config.sched_slice);
    st = lmpi_shm_init(info.rank, info.size, leader, nlocal, info.kvsname);
    if (st == LMPI_OK && net)
        st = lmpi_tr_net_connect(); /* after shm's PMI barrier: every address is published */
    if (open_early)
        (void)lmpi_tr_net_open_wait(); /* a failure is reported where the endpoint is needed */
    /* The segment's descriptor is not for the user's own children.  Unset
     * only now: the network's opening threads (lmpi_tr_net_start, _early)
     * read the environment (libfabric's getenv) until they are joined. */
    unsetenv("LMPI_SHM_FD");
    if (st == LMPI_OK)
        lmpi_ft_init(); /* the segment's notice board of failures (src/ft) */
    if (st == LMPI_OK && lmpi_config.vnode_link && *lmpi_config.vnode_link) {
        double lat, bw;
        if (sscanf(lmpi_config.vnode_link, "%lf:%lf", &lat, &bw) == 2 && lat >= 0 && bw > 0) {
            lmpi_shm_emulate_links(node_of, info.size, lat, bw);
        } else {
            lmpi_err_detail("LMPI_VNODE_LINK=%s: expected LATENCY_US:GBYTES_PER_S (e.g. 2:5)", lmpi_config.vnode_link);
            st = LMPI_ERR_OTHER;
        }
    }
    lmpi_free(node_of);
    if (st != LMPI_OK)
        return st;
    /* Ranks that outnumber the cores hand the processor over at the first
     * idle poll: spinning burns the time slice the peer needs (4 ranks on 2
     * cores: 8-byte allreduce 13 -> 5-7 us, docs/performance.md). */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!getenv("LMPI_SPIN_TIME") && cores > 0 && lmpi_rt.local_size > cores)
        lmpi_config.spin_time = 0;
    /* A waiter that yields gets its processor back once every rank sharing
     * it had a turn: with many ranks a core, 2 ms is only a turn or two,
     * and waiters that sleep then make every step of a collective a
     * wake-up.  Ranks stay in the yield phase 100 us per rank a core (256
     * ranks on 2 cores: 8-byte allreduce 100 -> 11-19 ms, agree 22-38 ->
     * 12-14 ms; up to 20 ranks a core it stays 2 ms). */
    if (lmpi_config.sleep_after < 0) {
        fprintf(stderr, "LeanMPI: ignoring LMPI_SLEEP_AFTER=%lld (negative); using 2000\n",
                (long long)lmpi_config.sleep_after);
        lmpi_config.sleep_after = 2000;
    }
    if (!getenv("LMPI_SLEEP_AFTER"))
        lmpi_config.sleep_after = lmpi_wait_sleep_after_us(lmpi_config.sleep_after, lmpi_rt.local_size, cores);
    /* Decide the lock kind last: everything above ran single-threaded. */
    lmpi_rt.thread_multiple = level == MPI_THREAD_MULTIPLE;
    lmpi_rt.lock_calls = lmpi_rt.thread_multiple;
    lmpi_rt.state = LMPI_STATE_READY;
    /* a spawned process connects to its parents here */
    st = lmpi_dpm_init();
    if (st != LMPI_OK)
        return st;
    /* last: from here a thread of ours may poll whenever this one is
     * outside MPI (it takes the lock the bindings now take) */
    lmpi_tr_net_ready();
    if (provided)
        *provided = level;
    return LMPI_OK;
}

static lmpi_status init_world(int required, int *provided)
{
    if (lmpi_rt.world_init) {
        lmpi_err_detail(lmpi_rt.world_finalized ? "MPI cannot be initialized again after MPI_Finalize"
                                                : "MPI is already initialized");
        return LMPI_ERR_OTHER;
    }
    lmpi_status st = start_runtime(required, provided);
    if (st == LMPI_OK)
        lmpi_rt.world_init = true;
    return st;
}

lmpi_status lmpi_session_start(int required, int *provided)
{
    lmpi_status st = start_runtime(required, provided);
    if (st == LMPI_OK)
        lmpi_rt.sessions++;
    return st;
}

lmpi_status lmpi_impl_Init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *lvl = getenv("LMPI_THREAD_LEVEL");
    return init_world(parse_thread_level(lvl, MPI_THREAD_SINGLE), NULL);
}

lmpi_status lmpi_impl_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    if (required != MPI_THREAD_SINGLE && required != MPI_THREAD_FUNNELED && required != MPI_THREAD_SERIALIZED &&
        required != MPI_THREAD_MULTIPLE) {
        lmpi_err_detail("required=%d is not a thread level", required);
        return LMPI_ERR_ARG;
    }
    if (!provided) {
        lmpi_err_detail("provided is NULL");
        return LMPI_ERR_ARG;
    }
    return init_world(required, provided);
}

/* Rank 0 prints every category: its own current and peak bytes and the
 * largest peak of any rank (gathered with plain messages). */
static void memory_report(void)
{
    int64_t peaks[LMPI_MEM_NCAT];
    for (int c = 0; c < LMPI_MEM_NCAT; c++)
        peaks[c] = lmpi_mem_peak((lmpi_mem_cat)c);
    lmpi_comm *w = lmpi_comm_world;
    uint32_t ctx = w->context_id + 1;
    if (w->rank != 0) {
        lmpi_request *r;
        if (lmpi_pt2pt_isend(peaks, sizeof(peaks), 0, 1, w, ctx, LMPI_MODE_STANDARD, NULL, &r) == LMPI_OK)
            lmpi_pt2pt_wait_free(r, MPI_STATUS_IGNORE);
        return;
    }
    int64_t maxpeak[LMPI_MEM_NCAT];
    memcpy(maxpeak, peaks, sizeof(peaks));
    for (int src = 1; src < w->size; src++) {
        int64_t other[LMPI_MEM_NCAT];
        lmpi_request *r;
        if (lmpi_pt2pt_irecv(other, sizeof(other), src, 1, w, ctx, &r) != LMPI_OK)
            continue;
        lmpi_pt2pt_wait_free(r, MPI_STATUS_IGNORE);
        for (int c = 0; c < LMPI_MEM_NCAT; c++)
            if (other[c] > maxpeak[c])
                maxpeak[c] = other[c];
    }
    fprintf(stdout, "LeanMPI memory report (%s%d ranks; bytes)\n", getenv("PMI_SPAWNED") ? "a spawned job, " : "",
            w->size);
    fprintf(stdout, "  %-10s %14s %14s %16s\n", "category", "rank0 current", "rank0 peak", "max peak (rank)");
    int64_t tc = 0, tp = 0, tm = 0;
    for (int c = 0; c < LMPI_MEM_NCAT; c++) {
        int64_t cur = lmpi_mem_current((lmpi_mem_cat)c);
        fprintf(stdout, "  %-10s %14lld %14lld %16lld\n", lmpi_mem_cat_name((lmpi_mem_cat)c), (long long)cur,
                (long long)peaks[c], (long long)maxpeak[c]);
        tc += cur;
        tp += peaks[c];
        tm += maxpeak[c];
    }
    fprintf(stdout, "  %-10s %14lld %14lld %16lld\n", "total", (long long)tc, (long long)tp, (long long)tm);
    fprintf(stdout, "  (shm is this rank's share of the node segment: %zu bytes / %d ranks)\n",
            lmpi_shm_segment_size(), w->size);
    const lmpi_av *av = lmpi_av_world();
    size_t net_bytes = lmpi_tr_net_entry_bytes();
    fprintf(stdout, "  address vector: %d entries of %zu bytes stored (%s%s), node map %s (%d nodes, %zu bytes)\n",
            av->size, lmpi_av_entry_bytes(av) + net_bytes, av->entries ? "table" : "computed from the rank",
            net_bytes ? "; the fabric index of the ranks reached, set at first contact" : "",
            lmpi_nodemap_mode_name(&av->nodes), av->nodes.nnodes, lmpi_nodemap_bytes(&av->nodes));
    const char *net = lmpi_tr_net_describe();
    fprintf(stdout, "  transports: shm inside the node%s%s\n", net ? ", between nodes " : "", net ? net : "");
    fprintf(stdout, "  process manager: %s\n", lmpi_pmi_describe());
    fprintf(stdout, "  rank maps alive on rank 0:");
    for (int m = 0; m < LMPI_RM_NMODES; m++)
        if (m != LMPI_RM_BSTRIDE)
            fprintf(stdout, " %s %lld", lmpi_rankmap_mode_name(m),
                    (long long)(lmpi_rankmap_count(m) + (m == LMPI_RM_STRIDE ? lmpi_rankmap_count(LMPI_RM_BSTRIDE) : 0)));
    fprintf(stdout, "; tables %lld bytes; %lld user communicators\n", (long long)lmpi_rankmap_table_bytes(),
            (long long)lmpi_comm_live());
    lmpi_dpm_report(stdout);
}

/* The end of the runtime: everything MPI_Init or the first session set up. */
static lmpi_status end_runtime(void)
{
    /* MPI_COMM_SELF's attributes are deleted first, so that their delete
     * callbacks can still use MPI (MPI 5.0 §11.2.4). */
    lmpi_attr_delete_all(&lmpi_comm_self->attrs, MPI_COMM_SELF, 0);
    if (lmpi_config.memory_report)
        memory_report();
    lmpi_bsend_finalize();
    /* with failures survivable (src/ft), an agreement: it ends whoever failed */
    lmpi_status st = lmpi_ft_enabled ? lmpi_ft_finalize_barrier() : lmpi_impl_Barrier(lmpi_comm_world);
    if (st != LMPI_OK)
        return st;
    lmpi_ft_finalize();
    lmpi_rt.thread_multiple = false;
    lmpi_dpm_finalize();
    lmpi_tr_net_stop(); /* joins the introducer first */
    lmpi_rt.lock_calls = false;
    lmpi_shm_finalize();
    lmpi_pmi_finalize();
    lmpi_sched_finalize();
    lmpi_pt2pt_finalize();
    lmpi_request_pool_finalize();
    lmpi_io_finalize();
    lmpi_comm_finalize_builtin();
    lmpi_datatype_finalize();
    lmpi_errors_finalize();
    lmpi_rt.state = LMPI_STATE_FINALIZED;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Finalize(void)
{
    if (!lmpi_rt.world_init || lmpi_rt.world_finalized || lmpi_rt.world_finalizing) {
        lmpi_err_detail(!lmpi_rt.world_init ? "MPI_Finalize called before MPI_Init" : "MPI_Finalize called twice");
        return LMPI_ERR_OTHER;
    }
    /* MPI_COMM_SELF's delete callbacks run while MPI_Finalized still says
     * false and every function works (MPI 5.0 §11.2.4) */
    lmpi_rt.world_finalizing = true;
    lmpi_status st = lmpi_attr_delete_all(&lmpi_comm_self->attrs, MPI_COMM_SELF, 0);
    lmpi_rt.world_finalized = true;
    if (st != LMPI_OK)
        return st;
    return lmpi_rt.sessions ? LMPI_OK : end_runtime();
}

/* The runtime of a process that only ever used sessions ends when it exits:
 * a program may finalize its last session and initialize another (MPI 5.0
 * §11.3.1), also with groups it made in the earlier one, and starting the
 * runtime anew would connect to the launcher and map the segment again. */
static void end_at_exit(void)
{
    if (lmpi_rt.state == LMPI_STATE_READY && lmpi_rt.sessions == 0 && !lmpi_rt.world_init)
        end_runtime();
}

lmpi_status lmpi_session_end(void)
{
    static bool registered;
    if (--lmpi_rt.sessions > 0)
        return LMPI_OK;
    if (lmpi_rt.world_init && lmpi_rt.world_finalized)
        return end_runtime();
    if (!lmpi_rt.world_init && !registered) {
        registered = true;
        atexit(end_at_exit);
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Initialized(int *flag)
{
    *flag = lmpi_rt.world_init;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Finalized(int *flag)
{
    *flag = lmpi_rt.world_finalized;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Abort(lmpi_comm *comm, int errorcode)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "MPI_Abort(%s, %d) called by rank %d", lmpi_comm_display_name(comm), errorcode, lmpi_rt.world_rank);
    fprintf(stderr, "[LeanMPI rank %d] %s\n", lmpi_rt.world_rank, msg);
    lmpi_abort_job(errorcode, msg);
}

lmpi_status lmpi_impl_Query_thread(int *provided)
{
    *provided = lmpi_rt.thread_level;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Is_thread_main(int *flag)
{
    *flag = pthread_equal(pthread_self(), lmpi_rt.main_thread);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Abi_get_version(int *abi_major, int *abi_minor)
{
    *abi_major = MPI_ABI_VERSION;
    *abi_minor = MPI_ABI_SUBVERSION;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Get_library_version(char *version, int *resultlen)
{
    if (!version) {
        lmpi_err_detail("version is NULL");
        return LMPI_ERR_ARG;
    }
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "LeanMPI %s (MPI %d.%d, standard ABI %d.%d; transports: shm)", LEANMPI_VERSION, MPI_VERSION,
                     MPI_SUBVERSION, MPI_ABI_VERSION, MPI_ABI_SUBVERSION);
    *resultlen = n;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Get_processor_name(char *name, int *resultlen)
{
    if (!name) {
        lmpi_err_detail("name is NULL");
        return LMPI_ERR_ARG;
    }
    if (lmpi_rt.processor_name[0] == '\0' && gethostname(lmpi_rt.processor_name, sizeof(lmpi_rt.processor_name)))
        snprintf(lmpi_rt.processor_name, sizeof(lmpi_rt.processor_name), "localhost");
    size_t n = strnlen(lmpi_rt.processor_name, MPI_MAX_PROCESSOR_NAME - 1);
    memcpy(name, lmpi_rt.processor_name, n);
    name[n] = '\0';
    *resultlen = (int)n;
    return LMPI_OK;
}

double lmpi_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double lmpi_impl_Wtime(void)
{
    return lmpi_wtime();
}

double lmpi_impl_Wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

MPI_Aint lmpi_impl_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint lmpi_impl_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
