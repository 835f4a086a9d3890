/* Process management interface: the PMI-1 wire protocol (as spoken by our
 * mpiexec and by MPICH's Hydra), PMIx (Open MPI's prterun, Slurm), or a
 * singleton when no launcher is present.
 * Keys put before lmpi_pmi_barrier() are visible to every rank after it,
 * which is all it promises: under PMI-1 and PMIx it is also a barrier, but
 * PMI-2's kvs-fence (Hydra) answers at once, and a get after it waits
 * until the key is put or every rank has fenced.  So what a key names
 * must be ready before the key is put. */
#ifndef LMPI_PMI_H
#define LMPI_PMI_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    int rank;
    int size;
    int appnum;
    int universe_size;
    int singleton;
    char kvsname[256];
} lmpi_pmi_info;

/* The most processes one job may have (PMI_SIZE is checked against it). */
#define LMPI_PMI_MAX_SIZE (1 << 24)

/* 0 when PMI_FD, PMI_RANK and PMI_SIZE (if set) are sane and the launcher
 * answers; -1 with the reason in err otherwise. */
int lmpi_pmi_init(lmpi_pmi_info *info, char *err, size_t errlen);
/* A decimal integer in [lo, hi] and nothing else: 0, or -1. */
int lmpi_pmi_parse_int(const char *text, long lo, long hi, int *out);
int lmpi_pmi_put(const char *key, const char *value);
/* 0 and the value if the key exists, -1 otherwise. */
int lmpi_pmi_get(const char *key, char *value, size_t len);
/* The same, for a key that rank owner put (PMIx finds it without a search). */
int lmpi_pmi_get_from(int owner, const char *key, char *value, size_t len);
/* The values of keys PREFIX<from>, PREFIX<from+1>, ... (at most count),
 * comma-joined in values, in one round trip: 0 and *got (which may be 0),
 * or -1 where the process manager cannot (Hydra, PMIx: get each key). */
int lmpi_pmi_get_range(const char *prefix, int from, int count, char *values, size_t len, int *got);
int lmpi_pmi_barrier(void);
/* Which process manager started this process, for the memory report. */
const char *lmpi_pmi_describe(void);
/* Launched by a PMI-1 server other than LeanMPI's mpiexec (MPICH's Hydra):
 * there a failure survived (-disable-auto-cleanup) is told by SIGUSR1, and
 * the dead are listed under the key PMI_dead_processes (src/ft). */
bool lmpi_pmi_signals_failures(void);
/* There: the list of dead processes ("2,5-7"; a job attribute in PMI-2). */
int lmpi_pmi_dead_processes(char *value, size_t len);
void lmpi_pmi_abort(int code, const char *msg);
int lmpi_pmi_finalize(void);

/* ---- dynamic processes ---------------------------------------------------
 * A singleton has no launcher; the first call below that needs one starts
 * mpiexec as its server (as MPICH's singletons do) and talks PMI to it from
 * then on.  Each returns 0 on success, -1 with a message in err. */
typedef struct {
    const char *command;
    char **argv; /* NULL-terminated, may be NULL */
    int maxprocs;
    int ninfo;
    const char **info_keys, **info_values;
} lmpi_pmi_app;

/* Start count applications as one new job whose key-value space holds the
 * npreput pairs; *spawned: how many processes started (fewer than asked
 * with the info key "soft"). */
int lmpi_pmi_spawn(int count, const lmpi_pmi_app *apps, int npreput, const char **keys, const char **values,
                   int *spawned, char *err, size_t errlen);
int lmpi_pmi_publish(const char *service, const char *port, char *err, size_t errlen);
int lmpi_pmi_lookup(const char *service, char *port, size_t len, char *err, size_t errlen);
int lmpi_pmi_unpublish(const char *service, char *err, size_t errlen);
/* Does the launcher keep published names in a server that other jobs share
 * (Hydra's -nameserver)?  Then those jobs may run on other hosts.  Told by
 * a lookup of a name nobody publishes, once: Hydra's own name service
 * refuses it (rc=1), while with -nameserver it answers rc=0 and an empty
 * port, under PMI-1 and PMI-2 alike.  False in a singleton and under PMIx. */
bool lmpi_pmi_names_shared(void);

/* The node of every rank as the launcher placed them (PMI_process_mapping,
 * or PMIx's node ids): 0 and node_of[0..size) filled, or -1 if it does not say. */
int lmpi_pmi_node_map(int size, int *node_of);

/* The node of every rank from a PMI_process_mapping value such as
 * "(vector,(0,2,4),(2,1,3))" (blocks of nodes x ranks per node).
 * Returns 0 and fills node_of[0..size) or -1 if the text cannot be parsed. */
int lmpi_pmi_parse_mapping(const char *text, int size, int *node_of);

#endif
