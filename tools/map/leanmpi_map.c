/* leanmpi-map: evaluate every mapping order of a pattern on a network with
 * the contention model (src/topo/mapping.h) and print the table and the pick.
 * It needs no MPI runtime and handles partitions far larger than this
 * machine; see docs/mapping.md. */
#include "topo/mapping.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void)
{
    fprintf(stderr,
            "usage: leanmpi-map --network SPEC|FILE [--cores N] --pattern PATTERN [options]\n"
            "  --network torus:8x16x32 | mesh:4x4 | flat:16 | FILE   (docs/mapping.md)\n"
            "  --cores N            cores per node (unless the file says)\n"
            "  --pattern P          2d-nn:128x128:star, 3d-nn:AxBxC:box, fft:64x64, diagonal:128x128,\n"
            "                       edges:FILE (docs/mapping.md)\n"
            "  --size small|large   message class: dimension-ordered routing (small, default) or\n"
            "                       traffic split over the minimal next hops (large)\n"
            "  --bytes N            message size (default 8192 small, 1048576 large)\n"
            "  -n N                 the job's rank count (must match the pattern)\n"
            "  --show A,B,...       table rows for these orders only (and the pick)\n"
            "  --json               one JSON object instead of the table\n");
    exit(2);
}

static void die(const char *msg)
{
    fprintf(stderr, "leanmpi-map: %s\n", msg);
    exit(1);
}

int main(int argc, char **argv)
{
    const char *network = NULL, *pattern = NULL, *show = NULL;
    int cores = 0;
    bool large = false, json = false;
    double bytes = 0;
    long long nranks = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            json = true;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            usage();
        if (!v)
            usage();
        i++;
        char *end;
        if (!strcmp(a, "--network"))
            network = v;
        else if (!strcmp(a, "--pattern"))
            pattern = v;
        else if (!strcmp(a, "--show"))
            show = v;
        else if (!strcmp(a, "--cores")) {
            long c = strtol(v, &end, 10);
            if (*end || c < 1 || c > 1 << 16)
                die("--cores needs a positive count");
            cores = (int)c;
        } else if (!strcmp(a, "--size") || !strcmp(a, "--message-size")) {
            if (strcmp(v, "small") && strcmp(v, "large"))
                die("--size is small or large");
            large = v[0] == 'l';
        } else if (!strcmp(a, "--bytes")) {
            bytes = strtod(v, &end);
            if (*end || bytes < 0)
                die("--bytes needs a size >= 0");
        } else if (!strcmp(a, "-n") || !strcmp(a, "-np")) {
            nranks = strtoll(v, &end, 10);
            if (*end || nranks < 1)
                die("-n needs a positive rank count");
        } else {
            fprintf(stderr, "leanmpi-map: unknown option '%s'\n", a);
            usage();
        }
    }
    if (!network || !pattern)
        usage();
    if (bytes == 0)
        bytes = large ? 1048576 : 8192;
    char err[LMPI_NET_ERRLEN];
    lmpi_net net;
    lmpi_pattern pat;
    if (lmpi_net_parse(network, cores, &net, err, sizeof(err)))
        die(err);
    if (lmpi_pattern_parse(pattern, bytes, &pat, err, sizeof(err)))
        die(err);
    if (nranks >= 0 && nranks != pat.nranks) {
        snprintf(err, sizeof(err), "--pattern %s describes %lld ranks, not the %lld of -n", pattern,
                 (long long)pat.nranks, nranks);
        die(err);
    }
    if (pat.nranks > net.nodes * net.cores) {
        snprintf(err, sizeof(err), "--pattern %s has %lld ranks; the network has %lld nodes x %d cores = %lld slots",
                 pattern, (long long)pat.nranks, (long long)net.nodes, net.cores, (long long)(net.nodes * net.cores));
        die(err);
    }
    lmpi_map_order *orders = calloc(LMPI_MAP_MAX_ORDERS, sizeof(*orders));
    lmpi_map_metrics *m = calloc(LMPI_MAP_MAX_ORDERS, sizeof(*m));
    int pick;
    if (!orders || !m)
        die("out of memory");
    int n = lmpi_map_choose(&net, &pat, large, orders, m, &pick, err, sizeof(err));
    if (n < 0)
        die(err);
    char desc[160];
    lmpi_net_describe(&net, desc, sizeof(desc));
    double total = 0;
    for (int i = 0; i < n; i++)
        total += m[i].seconds;
    if (json) {
        printf("{\"network\": \"%s\", \"pattern\": \"%s\", \"ranks\": %lld, \"message\": \"%s\", \"bytes\": %.0f, "
               "\"pick\": \"%s\", \"seconds\": %.4f, \"orders\": [",
               desc, pattern, (long long)pat.nranks, large ? "large" : "small", bytes, orders[pick].name, total);
        for (int i = 0; i < n; i++)
            printf("%s{\"order\": \"%s\", \"paper_contention\": %.6g, \"avg_contention\": %.6g, "
                   "\"max_contention\": %.6g, \"hop_bytes\": %.6g, \"max_dilation\": %lld, \"seconds\": %.4f}",
                   i ? ", " : "", orders[i].name, m[i].paper_contention, m[i].avg_contention, m[i].max_contention,
                   m[i].hop_bytes, (long long)m[i].max_dilation, m[i].seconds);
        printf("]}\n");
    } else {
        printf("network: %s\n", desc);
        printf("pattern: %s, %lld ranks, %.0f-byte messages, %s\n", pattern, (long long)pat.nranks, bytes,
               large ? "large: traffic split over the minimal next hops" : "small: dimension-ordered routing");
        printf("%-18s %8s %12s %12s %14s %8s\n", "order", "paper", "avg_cont", "max_cont", "hop_bytes", "max_dil");
        for (int i = 0; i < n; i++) {
            size_t len = strlen(orders[i].name);
            const char *at = show ? strstr(show, orders[i].name) : NULL;
            if (show && i != pick && !(at && (at == show || at[-1] == ',') && (at[len] == ',' || !at[len])))
                continue;
            printf("%-18s %8.4g %12.4g %12.4g %14.4g %8lld%s\n", orders[i].name, m[i].paper_contention,
                   m[i].avg_contention, m[i].max_contention, m[i].hop_bytes, (long long)m[i].max_dilation,
                   i == pick ? "   <- pick" : "");
        }
        printf("pick: %s (least maximum contention, then hop-bytes); %d orders evaluated in %.2f s of CPU time\n",
               orders[pick].name, n, total);
        printf("(paper: the paper's per-process count, §3.2; avg/max_cont: messages per link, both directions)\n");
    }
    free(orders);
    free(m);
    lmpi_pattern_free(&pat);
    lmpi_net_free(&net);
    return 0;
}
