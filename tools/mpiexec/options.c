/* mpiexec: the command line: options, environment to hand the ranks, host lists. */
#include "mpiexec.h"

/* The help: on stdout with status 0 when asked for (mpiexec --help | less),
 * on stderr with status 1 after a usage error. */
static void help(FILE *out, int status);

static void usage(void) { help(stderr, 1); }

static void help(FILE *out, int status)
{
    fprintf(out,
            "usage: mpiexec [options] program [args...] [: [-n N] [-wdir DIR] [-env NAME VALUE] program2 [args...] ...]\n"
            "  -h, --help              this help;  --version  LeanMPI's version\n"
            "  -n, -np N               number of ranks (default 1); after a ':', of that application\n"
            "                          (MPMD: one job, the applications' ranks in turn, MPI_APPNUM 0, 1, ...)\n"
            "  -genv NAME VALUE        set an environment variable in every rank (also -env)\n"
            "  -x NAME[=VALUE]         export NAME (from mpiexec's environment, or VALUE)\n"
            "  --tag-output, -l        prefix every output line with [rank]\n"
            "  --timeout SECONDS       stop the job after SECONDS (exit status 124); also MPIEXEC_TIMEOUT\n"
            "  --oversubscribe         accepted: ranks always may outnumber cores\n"
            "  --host/-hosts H[:N],..  run on these hosts, N slots each (default 1); ranks fill the\n"
            "                          slots in order, cycling when -n is larger\n"
            "  -ppn N                  with --host: N ranks per host in turn (--map-by ppr:N:node;\n"
            "                          --map-by node: 1)\n"
            "  --hostfile FILE         the hosts, one per line: H, H:N or H slots=N (also -f)\n"
            "  --launcher ssh|rsh|fork how a host's proxy starts (default ssh; fork: on this machine)\n"
            "  --launcher-exec CMD     the program ssh/rsh stands for: CMD HOST COMMAND\n"
            "  --iface NAME            the interface the hosts reach mpiexec on (default: the one\n"
            "                          routing to the first host)\n"
            "  -v, --verbose           report launch and exit of each rank (and the placement)\n"
            "  --with-ft ulfm          keep the job running when a rank fails and tell the others\n"
            "                          (MPIX_ fault tolerance); says which rank failed\n"
            "  -disable-auto-cleanup   the same, silent about failures as Hydra (-v: not silent)\n"
            "  --network SPEC|FILE     model the nodes: torus:8x16x32, mesh:4x4, flat:16 or a\n"
            "                          description file (docs/mapping.md); ranks run here, each on\n"
            "                          its virtual node\n"
            "  --cores N               cores per modelled node (unless the file says)\n"
            "  --pattern P             the application's pattern (2d-nn:128x128:star, fft:64x64,\n"
            "                          diagonal:AxB, edges:FILE); -n must match it\n"
            "  --message-size small|large  the pattern's message class (default small)\n"
            "  --map-by M              auto (least contended order for --pattern), an order (TXYZ,\n"
            "                          TZXY, ...), block, cyclic, slot, core, node, ppr:N:node\n"
            "  --bind-to none|core|package  pin each rank here with hwloc (default: a job with as\n"
            "                          many ranks as processors pins rank r to the r-th, else none)\n"
            "  --universe-size N       MPI_UNIVERSE_SIZE, and the most processes spawns may bring\n"
            "                          the universe to (also -usize; default: not set, no limit)\n"
            "  -nameserver HOST[:PORT] keep MPI_Publish_name's names in a hydra_nameserver (default\n"
            "                          port 6392), shared with other jobs, ours or Hydra's, on any host\n");
    exit(status);
}


/* What the launcher itself hands each rank: a -genv of these would let the
 * user (or a script) point a rank at another socket or rank number. */
static bool launcher_owned(const char *name)
{
    static const char *const own[] = {"PMI_FD", "PMI_RANK", "PMI_SIZE", "PMI_SPAWNED", "LMPI_SHM_FD"};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (!strcmp(name, own[i]))
            return true;
    return false;
}

static void add_user_env(const char *opt, const char *name, const char *value)
{
    if (launcher_owned(name))
        die("%s %s: the launcher sets %s itself for every rank; it cannot be overridden", opt, name, name);
    if (!*name || strchr(name, '='))
        die("%s '%s': not a variable name", opt, name);
    add_env(name, value);
}

void add_env(const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *s = malloc(len);
    snprintf(s, len, "%s=%s", name, value);
    job.env_add = realloc(job.env_add, sizeof(char *) * (size_t)(job.n_env + 1));
    job.env_add[job.n_env++] = s;
}

bool is_this_host(const char *h)
{
    char me[256];
    gethostname(me, sizeof(me));
    return !strcmp(h, "localhost") || !strcmp(h, "127.0.0.1") || !strcmp(h, me);
}

static void add_host(const char *name, int slots)
{
    if (!*name)
        return;
    for (int h = 0; h < job.nhosts; h++)
        if (!strcmp(job.hosts[h].name, name)) {
            job.hosts[h].slots += slots;
            return;
        }
    job.hosts = realloc(job.hosts, sizeof(host_t) * (size_t)(job.nhosts + 1));
    if (!job.hosts)
        die("out of memory");
    host_t *h = &job.hosts[job.nhosts++];
    memset(h, 0, sizeof(*h));
    h->name = strdup(name);
    h->slots = slots;
    h->ctl_fd = -1;
}

/* "a:2,b:2" (Hydra, Open MPI); a host without a count has one slot. */
static void parse_host_list(const char *list)
{
    char *copy = strdup(list);
    for (char *h = strtok(copy, ","); h; h = strtok(NULL, ",")) {
        char *colon = strchr(h, ':');
        long slots = 1;
        if (colon) {
            char *end;
            *colon = '\0';
            slots = strtol(colon + 1, &end, 10);
            if (*end || slots < 1 || slots > 1 << 20)
                die("--host %s: '%s' is not a slot count", list, colon + 1);
        }
        add_host(h, (int)slots);
    }
    free(copy);
}

/* Lines "host", "host:N" or "host slots=N" (Open MPI); # starts a comment. */
static void parse_hostfile(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("--hostfile %s: %s", path, strerror(errno));
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char name[512];
        long slots = 1;
        if (sscanf(line, " %511[^ \t\n:]", name) != 1)
            continue;
        const char *rest = line + strcspn(line, ":= \t\n");
        char *sl = strstr(line, "slots=");
        char *end;
        if (*rest == ':' || sl) {
            slots = strtol(sl ? sl + 6 : rest + 1, &end, 10);
            if (slots < 1 || slots > 1 << 20 || (*end && !strchr(" \t\n", *end)))
                die("--hostfile %s line %d: not a slot count", path, lineno);
        }
        add_host(name, (int)slots);
    }
    fclose(f);
    if (!job.nhosts)
        die("--hostfile %s names no host", path);
}

/* -n, -np (and Open MPI's --n, --np): a rank count follows */
static bool is_count_option(const char *a)
{
    return !strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--n") || !strcmp(a, "--np");
}

static long rank_count(const char *opt, const char *v)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 1 || n > 100000)
        die("%s '%s': invalid rank count", opt, v);
    return n;
}

int parse_args(int argc, char **argv)
{
    job.n = 1;
    /* Hydra's MPIEXEC_TIMEOUT; --timeout on the command line wins */
    const char *env_timeout = getenv("MPIEXEC_TIMEOUT");
    if (env_timeout && *env_timeout) {
        char *end;
        job.timeout = strtod(env_timeout, &end);
        if (*end || job.timeout <= 0)
            die("invalid MPIEXEC_TIMEOUT '%s' (seconds, more than 0)", env_timeout);
    }
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-')
            break;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (is_count_option(a)) {
            if (i + 1 >= argc)
                usage();
            job.n = (int)rank_count(a, argv[++i]);
        } else if (!strcmp(a, "-genv") || !strcmp(a, "-env") || !strcmp(a, "--genv")) {
            if (i + 2 >= argc)
                usage();
            add_user_env(a, argv[i + 1], argv[i + 2]);
            i += 2;
        } else if (!strcmp(a, "-x")) {
            if (i + 1 >= argc)
                usage();
            char *spec = argv[++i];
            char *eq = strchr(spec, '=');
            if (eq) {
                *eq = '\0';
                add_user_env(a, spec, eq + 1);
                *eq = '=';
            } else {
                const char *v = getenv(spec);
                if (!v)
                    die("-x %s: the variable is not set in mpiexec's environment", spec);
                add_user_env(a, spec, v);
            }
        } else if (!strcmp(a, "--tag-output") || !strcmp(a, "-tag-output") || !strcmp(a, "-l") ||
                   !strcmp(a, "-prepend-rank")) {
            job.tag_output = true;
        } else if (!strcmp(a, "--timeout") || !strcmp(a, "-timeout")) {
            if (i + 1 >= argc)
                usage();
            char *end;
            job.timeout = strtod(argv[++i], &end);
            if (*end || job.timeout <= 0)
                die("invalid timeout '%s'", argv[i]);
        } else if (!strcmp(a, "--oversubscribe") || !strcmp(a, "-oversubscribe") ||
                   !strcmp(a, "--allow-run-as-root")) {
            /* ranks always may outnumber cores; root is always allowed */
        } else if (!strcmp(a, "--host") || !strcmp(a, "-host") || !strcmp(a, "-hosts") || !strcmp(a, "--hosts")) {
            if (i + 1 >= argc)
                usage();
            parse_host_list(argv[++i]);
        } else if (!strcmp(a, "--hostfile") || !strcmp(a, "-hostfile") || !strcmp(a, "-f") ||
                   !strcmp(a, "--machinefile") || !strcmp(a, "-machinefile")) {
            if (i + 1 >= argc)
                usage();
            parse_hostfile(argv[++i]);
        } else if (!strcmp(a, "--launcher") || !strcmp(a, "-launcher")) {
            if (i + 1 >= argc)
                usage();
            job.launcher = argv[++i];
            if (strcmp(job.launcher, "ssh") && strcmp(job.launcher, "rsh") && strcmp(job.launcher, "fork"))
                die("--launcher %s: expected ssh, rsh or fork", job.launcher);
        } else if (!strcmp(a, "--launcher-exec") || !strcmp(a, "-launcher-exec") || !strcmp(a, "--iface") ||
                   !strcmp(a, "-iface")) {
            if (i + 1 >= argc)
                usage();
            if (strstr(a, "iface"))
                job.iface = argv[++i];
            else
                job.launcher_exec = argv[++i];
        } else if (!strcmp(a, "--proxy")) {
            /* started by mpiexec on another host: --proxy ADDR PORT INDEX */
            if (i + 3 >= argc)
                usage();
            exit(lmpi_proxy_main(argv[i + 1], argv[i + 2], atoi(argv[i + 3])));
        } else if (!strcmp(a, "-ppn") || !strcmp(a, "--ppn")) {
            /* Hydra's processes per node: --map-by ppr:N:node */
            char *end;
            long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
            if (i + 1 >= argc || *end || v < 1 || v > 1 << 20)
                die("%s needs a process count of at least 1", a);
            static char ppr[48];
            snprintf(ppr, sizeof(ppr), "ppr:%ld:node", v);
            job.map_by = ppr;
            i++;
        } else if (!strcmp(a, "--network") || !strcmp(a, "--pattern") || !strcmp(a, "--map-by") ||
                   !strcmp(a, "-map-by") || !strcmp(a, "--bind-to") || !strcmp(a, "-bind-to") ||
                   !strcmp(a, "--cores") || !strcmp(a, "--message-size")) {
            if (i + 1 >= argc)
                usage();
            const char *v = argv[++i];
            if (!strcmp(a, "--network"))
                job.network = v;
            else if (!strcmp(a, "--pattern"))
                job.pattern = v;
            else if (strstr(a, "map-by"))
                job.map_by = v;
            else if (strstr(a, "bind-to"))
                job.bind_to = v;
            else if (!strcmp(a, "--message-size")) {
                if (strcmp(v, "small") && strcmp(v, "large"))
                    die("--message-size is small or large, not '%s'", v);
                job.large = v[0] == 'l';
            } else {
                char *end;
                long c = strtol(v, &end, 10);
                if (*end || c < 1 || c > 1 << 16)
                    die("--cores needs a positive count, not '%s'", v);
                job.cores = (int)c;
            }
        } else if (!strcmp(a, "--universe-size") || !strcmp(a, "-usize") || !strcmp(a, "--usize")) {
            if (i + 1 >= argc)
                usage();
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 1000000)
                die("invalid universe size '%s'", argv[i]);
            job.universe = (int)v;
            job.universe_given = true;
        } else if (!strcmp(a, "--singleton")) {
            /* started by a singleton's MPI library: --singleton FD KVSNAME */
            if (i + 2 >= argc)
                usage();
            job.singleton_fd = atoi(argv[i + 1]);
            job.singleton_kvs = argv[i + 2];
            return argc;
        } else if (!strcmp(a, "-nameserver") || !strcmp(a, "--nameserver")) {
            char err[300];
            if (i + 1 >= argc)
                usage();
            if (lmpi_ns_parse(argv[++i], &job.nameserver, err, sizeof(err)) != 0)
                die("%s %s", a, err);
        } else if (!strcmp(a, "--with-ft") || !strcmp(a, "-with-ft") || !strncmp(a, "--with-ft=", 10)) {
            const char *v = !strncmp(a, "--with-ft=", 10) ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v)
                usage();
            if (!strcmp(v, "ulfm") || !strcmp(v, "mpi"))
                job.ft = true, job.ft_quiet = false;
            else if (strcmp(v, "none") != 0)
                die("--with-ft %s: only ulfm (or none) is known", v);
        } else if (!strcmp(a, "-disable-auto-cleanup") || !strcmp(a, "--disable-auto-cleanup")) {
            if (!job.ft)
                job.ft_quiet = true; /* (--with-ft ulfm given too: its notices) */
            job.ft = true;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            job.verbose = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "-help")) {
            help(stdout, 0);
        } else if (!strcmp(a, "--version") || !strcmp(a, "-version") || !strcmp(a, "-V")) {
            printf("mpiexec (LeanMPI) %s\n"
                   "MPI 5.0 standard ABI; ranks speak PMI-1, PMI-2 or PMIx, so Hydra's mpiexec and PMIx "
                   "launchers start them too\n",
                   LMPI_VERSION_STRING);
            exit(0);
        } else {
            die("unknown option '%s' (see mpiexec --help)", a);
        }
    }
    if (i >= argc)
        usage();
    return i;
}

/* MPMD, as in MPICH's and Open MPI's mpiexec (and the MPI standard's
 * mpiexec): "mpiexec -n 2 a x : -n 3 b y" is one job of 5 ranks, ranks 0-1
 * running "a x" and 2-4 "b y", whose MPI_APPNUM is 0 and 1.  The options
 * before the first program hold for the whole job, its -n for the first
 * application; after each ':' come one application's own -n/-np (default 1),
 * -wdir DIR and -env NAME VALUE, then its program.  Returns the number of
 * applications; job.n becomes their total.  The ':' words become NULL, so
 * each application's arguments end there. */
int parse_apps(int argc, char **argv, int first, app_t **out)
{
    app_t *apps = NULL;
    int napps = 0, i = first;
    long n = job.n, total = 0;
    for (;;) {
        if (i >= argc || !strcmp(argv[i], ":"))
            die("a ':' with no program after it (mpiexec -n N PROGRAM ARGS : -n M PROGRAM2 ARGS2 ...)");
        int end = i;
        while (end < argc && strcmp(argv[end], ":"))
            end++;
        if (!(apps = realloc(apps, sizeof(app_t) * (size_t)(napps + 1))))
            die("out of memory");
        app_t *ap = &apps[napps];
        if (napps == 0)
            memset(ap, 0, sizeof(*ap)); /* later ones were set while reading their options */
        ap->nprocs = (int)n;
        ap->execname = argv[i];
        ap->argv = argv + i + 1;
        ap->argc = end - i - 1;
        napps++;
        if ((total += n) > 100000)
            die("%ld ranks in all: more than 100000", total);
        if (end >= argc)
            break;
        argv[end] = NULL;
        i = end + 1;
        n = 1;
        if (!(apps = realloc(apps, sizeof(app_t) * (size_t)(napps + 1))))
            die("out of memory");
        memset(&apps[napps], 0, sizeof(app_t));
        for (; i < argc && argv[i][0] == '-'; i++) {
            const char *a = argv[i];
            if (is_count_option(a)) {
                if (i + 1 >= argc)
                    die("%s after ':' needs a rank count", a);
                n = rank_count(a, argv[++i]);
            } else if (!strcmp(a, "-wdir") || !strcmp(a, "--wdir") || !strcmp(a, "-env") || !strcmp(a, "--env")) {
                bool env = strstr(a, "env") != NULL;
                if (i + 1 + env >= argc)
                    die("%s after ':' needs %s", a, env ? "a name and a value" : "a directory");
                app_t *ap2 = &apps[napps];
                ap2->info_k = realloc(ap2->info_k, sizeof(char *) * (size_t)(ap2->ninfo + 1));
                ap2->info_v = realloc(ap2->info_v, sizeof(char *) * (size_t)(ap2->ninfo + 1));
                if (!ap2->info_k || !ap2->info_v)
                    die("out of memory");
                if (env) {
                    if (launcher_owned(argv[i + 1]) || !*argv[i + 1] || strchr(argv[i + 1], '='))
                        die("%s '%s': not a variable a rank may be given", a, argv[i + 1]);
                    size_t len = strlen(argv[i + 1]) + strlen(argv[i + 2]) + 2;
                    char *kv = malloc(len);
                    if (!kv)
                        die("out of memory");
                    snprintf(kv, len, "%s=%s", argv[i + 1], argv[i + 2]);
                    ap2->info_k[ap2->ninfo] = (char *)"lmpi:env"; /* (not an info key of the standard: mpiexec's own) */
                    ap2->info_v[ap2->ninfo++] = kv;
                    i += 2;
                } else {
                    ap2->info_k[ap2->ninfo] = (char *)"wdir";
                    ap2->info_v[ap2->ninfo++] = argv[++i];
                }
            } else
                die("'%s' after ':': only -n/-np, -wdir and -env apply to one application; the job's "
                    "options go before the first program", a);
        }
    }
    job.n = (int)total;
    *out = apps;
    return napps;
}
