/* Network descriptions: parsing and naming.  See network.h and
 * docs/mapping.md for the format. */
#include "topo/network.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Node and switch counts far beyond any machine, small enough that ids and
 * loads fit their types. */
#define MAX_NODES (1 << 26)
#define MAX_NAME 64

static void fail(char *err, size_t errlen, const char *where, int line, const char *fmt, ...)
{
    char msg[LMPI_NET_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (line > 0)
        snprintf(err, errlen, "%s:%d: %s", where, line, msg);
    else
        snprintf(err, errlen, "%s: %s", where, msg);
}

/* "8x16x32" -> dims; at most LMPI_NET_MAX_DIMS positive factors. */
static int parse_dims(const char *s, int *dims, int *ndims, int64_t *product)
{
    int n = 0;
    int64_t p = 1;
    while (*s) {
        if (n == LMPI_NET_MAX_DIMS || !isdigit((unsigned char)*s))
            return -1;
        char *end;
        long v = strtol(s, &end, 10);
        if (v < 1 || v > MAX_NODES)
            return -1;
        dims[n++] = (int)v;
        p *= v;
        if (p > MAX_NODES)
            return -1;
        s = end;
        if (*s == 'x' || *s == 'X')
            s++;
        else if (*s)
            return -1;
    }
    if (n == 0)
        return -1;
    *ndims = n;
    *product = p;
    return 0;
}

static void set_strides(lmpi_net *net)
{
    int64_t s = 1;
    for (int d = 0; d < net->ndims; d++) {
        net->stride[d] = s;
        s *= net->dims[d];
    }
    net->nodes = s;
}

/* ---- Slurm host lists: "n[0-3,7],m[00-15],login" ------------------------ */
typedef struct {
    char **v;
    int n, cap;
} names;

static int names_push(names *l, const char *s)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->v, sizeof(char *) * (size_t)cap);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n] = strdup(s);
    return l->v[l->n++] ? 0 : -1;
}

static void names_free(names *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* Expand one host list item (no top-level commas).  Returns 0 or -1 with a
 * reason in ERR. */
static int expand_item(const char *item, names *out, char *why, size_t whylen)
{
    const char *lb = strchr(item, '[');
    if (!lb) {
        if (!*item || strlen(item) >= MAX_NAME) {
            snprintf(why, whylen, "bad name '%.64s'", item);
            return -1;
        }
        return names_push(out, item);
    }
    const char *rb = strchr(lb, ']');
    if (!rb || rb[1] != '\0' || lb == item) {
        snprintf(why, whylen, "bad host list '%.64s' (expected prefix[a-b,c])", item);
        return -1;
    }
    size_t plen = (size_t)(lb - item);
    if (plen >= MAX_NAME / 2) {
        snprintf(why, whylen, "name prefix too long in '%.64s'", item);
        return -1;
    }
    const char *p = lb + 1;
    while (p < rb) {
        char *end;
        const char *start = p;
        long a = strtol(p, &end, 10);
        if (end == p || a < 0) {
            snprintf(why, whylen, "bad range in '%.64s'", item);
            return -1;
        }
        int width = (int)(end - start);
        long b = a;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a) {
                snprintf(why, whylen, "bad range in '%.64s'", item);
                return -1;
            }
            p = end;
        }
        if (b - a > MAX_NODES) {
            snprintf(why, whylen, "range too large in '%.64s'", item);
            return -1;
        }
        for (long i = a; i <= b; i++) {
            char name[MAX_NAME];
            snprintf(name, sizeof(name), "%.*s%0*ld", (int)plen, item, width, i);
            if (names_push(out, name))
                return -1;
        }
        if (*p == ',')
            p++;
        else if (p != rb) {
            snprintf(why, whylen, "bad range in '%.64s'", item);
            return -1;
        }
    }
    return 0;
}

static int expand_hostlist(const char *list, names *out, char *why, size_t whylen)
{
    char item[256];
    size_t n = 0;
    int depth = 0;
    for (const char *p = list;; p++) {
        if (*p == '[')
            depth++;
        else if (*p == ']')
            depth--;
        if ((*p == ',' && depth == 0) || *p == '\0') {
            item[n] = '\0';
            if (n == 0) {
                snprintf(why, whylen, "empty name in host list '%s'", list);
                return -1;
            }
            if (expand_item(item, out, why, whylen))
                return -1;
            n = 0;
            if (*p == '\0')
                return 0;
            continue;
        }
        if (n + 1 >= sizeof(item)) {
            snprintf(why, whylen, "host list item too long in '%s'", list);
            return -1;
        }
        item[n++] = *p;
    }
}

/* ---- trees ------------------------------------------------------------- */
typedef struct {
    char *name;
    int line;
    names nodes, switches;
} switch_decl;

static int find_name(char **v, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i], s))
            return i;
    return -1;
}

static char **sort_base;
static int cmp_name_idx(const void *a, const void *b)
{
    return strcmp(sort_base[*(const int *)a], sort_base[*(const int *)b]);
}

/* Index of NAME among the N sorted ids of V, or -1. */
static int lookup_sorted(char **v, const int *sorted, int n, const char *name)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(v[sorted[mid]], name);
        if (!c)
            return sorted[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Build parent/depth arrays from the switch declarations.  Nodes are numbered
 * in the order they appear; a node under two switches, a child with two
 * parents, an unknown switch, a cycle or several roots is an error. */
static int build_tree(lmpi_net *net, switch_decl *sw, int nsw, const char *where, char *err, size_t errlen)
{
    names nodes = {0};
    for (int s = 0; s < nsw; s++)
        for (int i = 0; i < sw[s].nodes.n; i++)
            if (names_push(&nodes, sw[s].nodes.v[i])) {
                names_free(&nodes);
                fail(err, errlen, where, 0, "out of memory");
                return -1;
            }
    if (nodes.n == 0) {
        fail(err, errlen, where, 0, "no SwitchName line lists any Nodes=");
        return -1;
    }
    int *sorted = malloc(sizeof(int) * (size_t)nodes.n);
    if (!sorted) {
        names_free(&nodes);
        fail(err, errlen, where, 0, "out of memory");
        return -1;
    }
    for (int i = 0; i < nodes.n; i++)
        sorted[i] = i;
    sort_base = nodes.v;
    qsort(sorted, (size_t)nodes.n, sizeof(int), cmp_name_idx);
    for (int i = 1; i < nodes.n; i++)
        if (!strcmp(nodes.v[sorted[i - 1]], nodes.v[sorted[i]])) {
            const char *dup = nodes.v[sorted[i]];
            int line = 0;
            for (int s = 0, seen = 0; s < nsw && !line; s++)
                for (int k = 0; k < sw[s].nodes.n; k++)
                    if (!strcmp(sw[s].nodes.v[k], dup) && seen++) {
                        line = sw[s].line;
                        break;
                    }
            fail(err, errlen, where, line, "node %s is attached to two switches", dup);
            free(sorted);
            names_free(&nodes);
            return -1;
        }
    int nv = nodes.n + nsw;
    net->kind = LMPI_NET_TREE;
    net->nodes = nodes.n;
    net->nswitches = nsw;
    net->parent = malloc(sizeof(int) * (size_t)nv);
    net->depth = calloc((size_t)nv, sizeof(int));
    net->names = calloc((size_t)nv, sizeof(char *));
    if (!net->parent || !net->depth || !net->names) {
        free(sorted);
        names_free(&nodes);
        fail(err, errlen, where, 0, "out of memory");
        return -1;
    }
    for (int i = 0; i < nodes.n; i++) {
        net->names[i] = nodes.v[i];
        nodes.v[i] = NULL;
    }
    names_free(&nodes);
    for (int s = 0; s < nsw; s++)
        net->names[net->nodes + s] = strdup(sw[s].name);
    for (int v = 0; v < nv; v++)
        net->parent[v] = -1;
    char **swnames = net->names + net->nodes;
    for (int s = 0; s < nsw; s++)
        for (int i = 0; i < sw[s].nodes.n; i++)
            net->parent[lookup_sorted(net->names, sorted, (int)net->nodes, sw[s].nodes.v[i])] = (int)net->nodes + s;
    free(sorted);
    for (int s = 0; s < nsw; s++) {
        for (int i = 0; i < sw[s].switches.n; i++) {
            const char *c = sw[s].switches.v[i];
            int k = find_name(swnames, nsw, c);
            if (k < 0) {
                fail(err, errlen, where, sw[s].line, "switch %s is not declared by any SwitchName line", c);
                return -1;
            }
            if (k == s) {
                fail(err, errlen, where, sw[s].line, "switch %s lists itself", c);
                return -1;
            }
            int v = (int)net->nodes + k;
            if (net->parent[v] >= 0) {
                fail(err, errlen, where, sw[s].line, "switch %s has two parents (%s and %s)", c,
                     net->names[net->parent[v]], sw[s].name);
                return -1;
            }
            net->parent[v] = (int)net->nodes + s;
        }
    }
    int root = -1;
    for (int s = 0; s < nsw; s++) {
        int v = (int)net->nodes + s;
        if (net->parent[v] >= 0)
            continue;
        if (root >= 0) {
            fail(err, errlen, where, sw[s].line,
                 "switches %s and %s have no common parent (the tree needs one root switch)",
                 net->names[root], sw[s].name);
            return -1;
        }
        root = v;
    }
    if (root < 0) {
        fail(err, errlen, where, 0, "the switches form a cycle (no root switch)");
        return -1;
    }
    for (int v = 0; v < nv; v++) {
        int d = 0;
        for (int u = v; net->parent[u] >= 0; u = net->parent[u])
            if (++d > nv) {
                fail(err, errlen, where, 0, "the switches form a cycle through %s", net->names[v]);
                return -1;
            }
        net->depth[v] = d;
    }
    return 0;
}

static void free_decls(switch_decl *sw, int nsw)
{
    for (int s = 0; s < nsw; s++) {
        free(sw[s].name);
        names_free(&sw[s].nodes);
        names_free(&sw[s].switches);
    }
    free(sw);
}

static int make_flat(lmpi_net *net, int64_t nodes)
{
    net->kind = LMPI_NET_TREE;
    net->flat = true;
    net->nodes = nodes;
    net->nswitches = 1;
    int nv = (int)nodes + 1;
    net->parent = malloc(sizeof(int) * (size_t)nv);
    net->depth = malloc(sizeof(int) * (size_t)nv);
    net->names = calloc((size_t)nv, sizeof(char *));
    if (!net->parent || !net->depth || !net->names)
        return -1;
    for (int v = 0; v < nv; v++) {
        net->parent[v] = v < nodes ? (int)nodes : -1;
        net->depth[v] = v < nodes ? 1 : 0;
        char name[MAX_NAME];
        if (v < nodes)
            snprintf(name, sizeof(name), "node%d", v);
        else
            snprintf(name, sizeof(name), "switch");
        net->names[v] = strdup(name);
        if (!net->names[v])
            return -1;
    }
    return 0;
}

/* "torus 8x16x32", "mesh 4x4", "flat 16" (a space or a colon between). */
static int parse_shape(const char *kind, const char *arg, lmpi_net *net, const char *where, int line, char *err,
                       size_t errlen)
{
    int64_t product;
    if (!strcmp(kind, "torus") || !strcmp(kind, "mesh")) {
        if (!arg || parse_dims(arg, net->dims, &net->ndims, &product)) {
            fail(err, errlen, where, line, "%s needs dimensions like 8x16x32 (at most %d, product at most %d), got '%s'",
                 kind, LMPI_NET_MAX_DIMS, MAX_NODES, arg ? arg : "");
            return -1;
        }
        net->kind = kind[0] == 't' ? LMPI_NET_TORUS : LMPI_NET_MESH;
        set_strides(net);
        return 0;
    }
    if (!strcmp(kind, "flat")) {
        char *end;
        long n = arg ? strtol(arg, &end, 10) : 0;
        if (!arg || *end || n < 1 || n > MAX_NODES / 4) {
            fail(err, errlen, where, line, "flat needs a node count, got '%s'", arg ? arg : "");
            return -1;
        }
        if (make_flat(net, n)) {
            fail(err, errlen, where, line, "out of memory");
            return -1;
        }
        return 0;
    }
    fail(err, errlen, where, line, "unknown network '%s' (torus, mesh, flat, tree or SwitchName= lines)", kind);
    return -1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

int lmpi_net_parse_text(const char *text, const char *where, int cores, lmpi_net *net, char *err, size_t errlen)
{
    memset(net, 0, sizeof(*net));
    net->cores = cores;
    char *copy = strdup(text);
    if (!copy) {
        fail(err, errlen, where, 0, "out of memory");
        return -1;
    }
    switch_decl *sw = NULL;
    int nsw = 0;
    bool have_shape = false, tree = false;
    int shape_line = 0, rc = -1, nodes_line = 0;
    long long declared_nodes = -1;
    int line = 0;
    char *save = NULL;
    for (char *raw = strtok_r(copy, "\n", &save); raw; raw = strtok_r(NULL, "\n", &save)) {
        line++;
        char *hash = strchr(raw, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(raw);
        if (!*s)
            continue;
        if (!strncmp(s, "SwitchName=", 11)) {
            switch_decl *grown = realloc(sw, sizeof(switch_decl) * (size_t)(nsw + 1));
            if (!grown)
                goto out;
            sw = grown;
            switch_decl *d = &sw[nsw++];
            memset(d, 0, sizeof(*d));
            d->line = line;
            char *tsave = NULL;
            for (char *tok = strtok_r(s, " \t", &tsave); tok; tok = strtok_r(NULL, " \t", &tsave)) {
                char why[LMPI_NET_ERRLEN];
                if (!strncmp(tok, "SwitchName=", 11)) {
                    if (!tok[11] || strchr(tok + 11, '[')) {
                        fail(err, errlen, where, line, "SwitchName needs one name");
                        goto out;
                    }
                    d->name = strdup(tok + 11);
                } else if (!strncmp(tok, "Nodes=", 6)) {
                    if (expand_hostlist(tok + 6, &d->nodes, why, sizeof(why))) {
                        fail(err, errlen, where, line, "%s", why);
                        goto out;
                    }
                } else if (!strncmp(tok, "Switches=", 9)) {
                    if (expand_hostlist(tok + 9, &d->switches, why, sizeof(why))) {
                        fail(err, errlen, where, line, "%s", why);
                        goto out;
                    }
                } else if (strncmp(tok, "LinkSpeed=", 10)) {
                    fail(err, errlen, where, line, "unknown key '%s' (SwitchName=, Nodes=, Switches=, LinkSpeed=)", tok);
                    goto out;
                }
            }
            if (!d->name) {
                fail(err, errlen, where, line, "SwitchName needs one name");
                goto out;
            }
            for (int k = 0; k < nsw - 1; k++)
                if (!strcmp(sw[k].name, d->name)) {
                    fail(err, errlen, where, line, "switch %s declared twice (first on line %d)", d->name, sw[k].line);
                    goto out;
                }
            if (!d->nodes.n && !d->switches.n) {
                fail(err, errlen, where, line, "switch %s has neither Nodes= nor Switches=", d->name);
                goto out;
            }
            continue;
        }
        char *key = s, *arg = s + strcspn(s, " \t:");
        if (*arg) {
            *arg++ = '\0';
            arg = trim(arg);
            if (*arg == ':')
                arg = trim(arg + 1);
        } else
            arg = NULL;
        if (!strcmp(key, "cores")) {
            char *end;
            long c = arg ? strtol(arg, &end, 10) : 0;
            if (!arg || *end || c < 1 || c > 1 << 16) {
                fail(err, errlen, where, line, "cores needs a positive count, got '%s'", arg ? arg : "");
                goto out;
            }
            net->cores = (int)c;
            continue;
        }
        if (!strcmp(key, "nodes")) {
            char *end;
            declared_nodes = arg ? strtoll(arg, &end, 10) : 0;
            if (!arg || *end || declared_nodes < 1) {
                fail(err, errlen, where, line, "nodes needs a positive count, got '%s'", arg ? arg : "");
                goto out;
            }
            nodes_line = line;
            continue;
        }
        if (strcmp(key, "torus") && strcmp(key, "mesh") && strcmp(key, "flat") && strcmp(key, "tree")) {
            fail(err, errlen, where, line,
                 "unknown line '%s' (torus DIMS, mesh DIMS, flat N, tree, cores N, nodes N, SwitchName=...)", key);
            goto out;
        }
        if (have_shape || tree) {
            fail(err, errlen, where, line, "a second network shape (the first is on line %d)", shape_line);
            goto out;
        }
        shape_line = line;
        if (!strcmp(key, "tree")) {
            if (arg) {
                fail(err, errlen, where, line, "'tree' takes no argument; the SwitchName= lines describe it");
                goto out;
            }
            tree = true;
            continue;
        }
        if (parse_shape(key, arg, net, where, line, err, errlen))
            goto out;
        have_shape = true;
    }
    if (have_shape && nsw) {
        fail(err, errlen, where, sw[0].line, "SwitchName= lines belong to a tree, not to this %s",
             net->kind == LMPI_NET_TREE ? "flat network" : "torus/mesh");
        goto out;
    }
    if (!have_shape) {
        if (!nsw) {
            fail(err, errlen, where, 0, "no network described (torus DIMS, mesh DIMS, flat N, or SwitchName= lines)");
            goto out;
        }
        if (build_tree(net, sw, nsw, where, err, errlen))
            goto out;
    }
    if (declared_nodes >= 0 && declared_nodes != net->nodes) {
        fail(err, errlen, where, nodes_line, "nodes %lld does not match the network (%lld nodes%s)", declared_nodes,
             (long long)net->nodes, net->kind == LMPI_NET_TREE ? "" : ": the dimensions' product");
        goto out;
    }
    if (net->cores < 1) {
        fail(err, errlen, where, 0, "cores per node unknown (a 'cores N' line or --cores)");
        goto out;
    }
    rc = 0;
out:
    free_decls(sw, nsw);
    free(copy);
    if (rc)
        lmpi_net_free(net);
    return rc;
}

int lmpi_net_parse(const char *spec, int cores, lmpi_net *net, char *err, size_t errlen)
{
    const char *colon = strchr(spec, ':');
    if (colon && colon - spec < 8 && !strchr(spec, '/')) {
        char kind[8];
        snprintf(kind, sizeof(kind), "%.*s", (int)(colon - spec), spec);
        if (!strcmp(kind, "torus") || !strcmp(kind, "mesh") || !strcmp(kind, "flat")) {
            memset(net, 0, sizeof(*net));
            net->cores = cores;
            if (parse_shape(kind, colon + 1, net, "--network", 0, err, errlen)) {
                lmpi_net_free(net);
                return -1;
            }
            if (cores < 1) {
                fail(err, errlen, "--network", 0, "cores per node unknown (give --cores N)");
                lmpi_net_free(net);
                return -1;
            }
            return 0;
        }
    }
    FILE *f = fopen(spec, "r");
    if (!f) {
        fail(err, errlen, spec, 0, "cannot open the network description: %s "
             "(or give torus:DIMS, mesh:DIMS, flat:N)", strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *grown = realloc(text, cap *= 2);
            if (!grown) {
                free(text);
                text = NULL;
            } else
                text = grown;
        }
    }
    fclose(f);
    if (!text) {
        fail(err, errlen, spec, 0, "out of memory");
        return -1;
    }
    text[len] = '\0';
    int rc = lmpi_net_parse_text(text, spec, cores, net, err, errlen);
    free(text);
    return rc;
}

void lmpi_net_free(lmpi_net *net)
{
    if (net->names) {
        int nv = (int)net->nodes + net->nswitches;
        for (int v = 0; v < nv; v++)
            free(net->names[v]);
    }
    free(net->names);
    free(net->parent);
    free(net->depth);
    memset(net, 0, sizeof(*net));
}

static const char dim_letters[] = "XYZWVU";

void lmpi_net_describe(const lmpi_net *net, char *buf, size_t len)
{
    if (net->kind == LMPI_NET_TREE) {
        if (net->flat)
            snprintf(buf, len, "flat network of %lld nodes, %d cores per node", (long long)net->nodes, net->cores);
        else
            snprintf(buf, len, "switch tree of %lld nodes and %d switches, %d cores per node",
                     (long long)net->nodes, net->nswitches, net->cores);
        return;
    }
    int n = snprintf(buf, len, "%s ", net->kind == LMPI_NET_TORUS ? "torus" : "mesh");
    for (int d = 0; d < net->ndims && n > 0 && (size_t)n < len; d++)
        n += snprintf(buf + n, len - (size_t)n, "%s%d", d ? "x" : "", net->dims[d]);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ", %d cores per node", net->cores);
}

void lmpi_net_node_name(const lmpi_net *net, int64_t node, char *buf, size_t len)
{
    if (net->kind == LMPI_NET_TREE) {
        snprintf(buf, len, "%s", net->names[node]);
        return;
    }
    int n = 0;
    for (int d = 0; d < net->ndims && n >= 0 && (size_t)n < len; d++)
        n += snprintf(buf + n, len - (size_t)n, "%c%d", tolower(dim_letters[d]), lmpi_net_coord(net, node, d));
}

void lmpi_net_node_coords(const lmpi_net *net, int64_t node, char *buf, size_t len)
{
    int n = 0;
    buf[0] = '\0';
    if (net->kind == LMPI_NET_TREE) {
        /* the switches from the root down to the node */
        int path[64], k = 0;
        for (int v = net->parent[node]; v >= 0 && k < 64; v = net->parent[v])
            path[k++] = v;
        while (k-- > 0 && n >= 0 && (size_t)n < len)
            n += snprintf(buf + n, len - (size_t)n, "%s%s", n ? "," : "", net->names[path[k]]);
        return;
    }
    for (int d = 0; d < net->ndims && n >= 0 && (size_t)n < len; d++)
        n += snprintf(buf + n, len - (size_t)n, "%s%d", d ? "," : "", lmpi_net_coord(net, node, d));
}
