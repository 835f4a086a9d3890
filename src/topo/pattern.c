/* Pattern descriptions: parsing and neighbour enumeration (pattern.h). */
#include "topo/pattern.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS (INT64_C(1) << 32)

static void fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int parse_grid(const char *s, size_t len, lmpi_pattern *p)
{
    int n = 0;
    int64_t prod = 1;
    const char *end = s + len;
    while (s < end) {
        if (n == 3 || !isdigit((unsigned char)*s))
            return -1;
        char *e;
        long long v = strtoll(s, &e, 10);
        if (v < 1 || e > end)
            return -1;
        p->dims[n++] = v;
        prod *= v;
        if (prod > MAX_RANKS)
            return -1;
        s = e;
        if (s < end && (*s == 'x' || *s == 'X'))
            s++;
        else if (s != end)
            return -1;
    }
    p->ndims = n;
    p->nranks = prod;
    return n ? 0 : -1;
}

static int parse_edges(const char *path, double bytes, lmpi_pattern *p, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fail(err, errlen, "%s: cannot open the edge list: %s", path, strerror(errno));
        return -1;
    }
    int64_t n = 0, cap = 1024, declared = -1;
    int64_t *src = malloc(sizeof(int64_t) * (size_t)cap), *dst = malloc(sizeof(int64_t) * (size_t)cap);
    double *w = malloc(sizeof(double) * (size_t)cap);
    char line[512];
    int lineno = 0, rc = -1;
    int64_t maxid = -1;
    while (src && dst && w && fgets(line, sizeof(line), f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (!*s)
            continue;
        if (!strncmp(s, "ranks", 5)) {
            char *e;
            declared = strtoll(s + 5, &e, 10);
            while (isspace((unsigned char)*e))
                e++;
            if (declared < 1 || declared > MAX_RANKS || *e) {
                fail(err, errlen, "%s:%d: 'ranks N' needs a positive count", path, lineno);
                goto out;
            }
            continue;
        }
        long long a, b;
        double bb = bytes;
        char extra;
        int got = sscanf(s, "%lld %lld %lf %c", &a, &b, &bb, &extra);
        if (got < 2 || got > 3 || a < 0 || b < 0 || a >= MAX_RANKS || b >= MAX_RANKS || bb < 0) {
            fail(err, errlen, "%s:%d: expected 'src dst [bytes]' with ranks >= 0 and bytes >= 0", path, lineno);
            goto out;
        }
        if (a == b)
            continue; /* a message to oneself crosses no link */
        if (n == cap) {
            cap *= 2;
            int64_t *s2 = realloc(src, sizeof(int64_t) * (size_t)cap), *d2 = realloc(dst, sizeof(int64_t) * (size_t)cap);
            double *w2 = realloc(w, sizeof(double) * (size_t)cap);
            src = s2 ? s2 : src;
            dst = d2 ? d2 : dst;
            w = w2 ? w2 : w;
            if (!s2 || !d2 || !w2) {
                fail(err, errlen, "%s: out of memory", path);
                goto out;
            }
        }
        src[n] = a;
        dst[n] = b;
        w[n] = bb;
        n++;
        maxid = a > maxid ? a : maxid;
        maxid = b > maxid ? b : maxid;
    }
    if (!src || !dst || !w) {
        fail(err, errlen, "%s: out of memory", path);
        goto out;
    }
    if (declared >= 0 && maxid >= declared) {
        fail(err, errlen, "%s: rank %lld is outside 'ranks %lld'", path, (long long)maxid, (long long)declared);
        goto out;
    }
    p->nranks = declared >= 0 ? declared : maxid + 1;
    if (p->nranks < 1) {
        fail(err, errlen, "%s: no edges and no 'ranks N' line", path);
        goto out;
    }
    p->off = calloc((size_t)p->nranks + 1, sizeof(int64_t));
    p->adj = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    p->w = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!p->off || !p->adj || !p->w) {
        fail(err, errlen, "%s: out of memory", path);
        goto out;
    }
    for (int64_t i = 0; i < n; i++)
        p->off[src[i] + 1]++;
    for (int64_t r = 0; r < p->nranks; r++) {
        if (p->off[r + 1] > p->max_degree)
            p->max_degree = p->off[r + 1];
        p->off[r + 1] += p->off[r];
    }
    int64_t *fill = calloc((size_t)p->nranks, sizeof(int64_t));
    if (!fill) {
        fail(err, errlen, "%s: out of memory", path);
        goto out;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t at = p->off[src[i]] + fill[src[i]]++;
        p->adj[at] = dst[i];
        p->w[at] = w[i];
    }
    free(fill);
    rc = 0;
out:
    fclose(f);
    free(src);
    free(dst);
    free(w);
    return rc;
}

int lmpi_pattern_parse(const char *spec, double bytes, lmpi_pattern *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    p->bytes = bytes;
    snprintf(p->desc, sizeof(p->desc), "%s", spec);
    const char *colon = strchr(spec, ':');
    if (!colon) {
        fail(err, errlen, "--pattern %s: expected KIND:SIZES (2d-nn:128x128:star, fft:64x64, diagonal:128x128, "
             "edges:FILE)", spec);
        return -1;
    }
    size_t klen = (size_t)(colon - spec);
    if (klen == 5 && !strncmp(spec, "edges", 5)) {
        p->kind = LMPI_PAT_EDGES;
        if (parse_edges(colon + 1, bytes, p, err, errlen)) {
            lmpi_pattern_free(p);
            return -1;
        }
        return 0;
    }
    const char *sizes = colon + 1;
    const char *opts = strchr(sizes, ':');
    size_t slen = opts ? (size_t)(opts - sizes) : strlen(sizes);
    int want_dims = 0;
    if (klen == 5 && !strncmp(spec + 1, "d-nn", 4) && spec[0] >= '1' && spec[0] <= '3') {
        p->kind = LMPI_PAT_NN;
        want_dims = spec[0] - '0';
    } else if (klen == 3 && !strncmp(spec, "fft", 3)) {
        p->kind = LMPI_PAT_FFT;
    } else if (klen == 8 && !strncmp(spec, "diagonal", 8)) {
        p->kind = LMPI_PAT_DIAG;
        want_dims = 2;
    } else {
        fail(err, errlen, "--pattern %s: unknown pattern '%.*s' (1d-nn, 2d-nn, 3d-nn, fft, diagonal, edges)", spec,
             (int)klen, spec);
        return -1;
    }
    if (parse_grid(sizes, slen, p) || (want_dims && p->ndims != want_dims)) {
        if (want_dims)
            fail(err, errlen, "--pattern %s: expected %d grid size%s like %s", spec, want_dims, want_dims > 1 ? "s" : "",
                 want_dims == 1 ? "1024" : want_dims == 2 ? "128x128" : "32x32x32");
        else
            fail(err, errlen, "--pattern %s: expected grid sizes like 64x64", spec);
        return -1;
    }
    while (opts) {
        const char *o = opts + 1;
        opts = strchr(o, ':');
        size_t olen = opts ? (size_t)(opts - o) : strlen(o);
        if (p->kind == LMPI_PAT_NN && olen == 4 && !strncmp(o, "star", 4))
            p->axis_only = false;
        else if (p->kind == LMPI_PAT_NN && olen == 3 && !strncmp(o, "box", 3))
            p->axis_only = true;
        else if (p->kind == LMPI_PAT_NN && olen == 8 && !strncmp(o, "periodic", 8))
            p->periodic = true;
        else {
            fail(err, errlen, "--pattern %s: unknown option '%.*s'%s", spec, (int)olen, o,
                 p->kind == LMPI_PAT_NN ? " (star, box, periodic)" : "");
            return -1;
        }
    }
    if (p->kind == LMPI_PAT_NN) {
        int64_t full = 1, st = 1;
        for (int d = p->ndims - 1; d >= 0; d--) {
            full *= 3;
            p->gstride[d] = st;
            st *= p->dims[d];
            p->dedupe |= p->periodic && p->dims[d] <= 2;
        }
        for (int64_t k = 0; k < full; k++) {
            int64_t code = k, moved = 0;
            int8_t off[3] = {0, 0, 0};
            for (int d = p->ndims - 1; d >= 0; d--) {
                off[d] = (int8_t)(code % 3 - 1);
                code /= 3;
                moved += off[d] != 0;
            }
            if (moved == 0 || (p->axis_only && moved > 1))
                continue;
            p->delta[p->noffsets] = off[0] * p->gstride[0] + off[1] * p->gstride[1] + off[2] * p->gstride[2];
            memcpy(p->offsets[p->noffsets++], off, sizeof(off));
        }
        p->max_degree = p->noffsets;
    } else if (p->kind == LMPI_PAT_FFT) {
        for (int d = 0; d < p->ndims; d++)
            p->max_degree += p->dims[d] - 1;
    } else {
        int64_t m = p->dims[0] < p->dims[1] ? p->dims[0] : p->dims[1];
        p->max_degree = 2 * (m - 1);
    }
    return 0;
}

void lmpi_pattern_free(lmpi_pattern *p)
{
    free(p->off);
    free(p->adj);
    free(p->w);
    p->off = NULL;
    p->adj = NULL;
    p->w = NULL;
}

static int64_t grid_rank(const lmpi_pattern *p, const int64_t *c)
{
    int64_t r = 0;
    for (int d = 0; d < p->ndims; d++)
        r = r * p->dims[d] + c[d];
    return r;
}

static void grid_coords(const lmpi_pattern *p, int64_t r, int64_t *c)
{
    for (int d = p->ndims - 1; d >= 0; d--) {
        c[d] = r % p->dims[d];
        r /= p->dims[d];
    }
}

int64_t lmpi_pattern_neighbors(const lmpi_pattern *p, int64_t r, int64_t *nb, double *w)
{
    int64_t n = 0;
    if (p->kind == LMPI_PAT_EDGES) {
        for (int64_t i = p->off[r]; i < p->off[r + 1]; i++) {
            nb[n] = p->adj[i];
            w[n++] = p->w[i];
        }
        return n;
    }
    int64_t c[3] = {0}, q[3] = {0}; /* grids have up to 3 dimensions */
    grid_coords(p, r, c);
    if (p->kind == LMPI_PAT_NN) {
        bool inside = true;
        for (int d = 0; d < p->ndims; d++)
            inside &= c[d] > 0 && c[d] < p->dims[d] - 1;
        if (inside) { /* every neighbour exists and is distinct */
            for (int k = 0; k < p->noffsets; k++) {
                nb[k] = r + p->delta[k];
                w[k] = p->bytes;
            }
            return p->noffsets;
        }
        for (int k = 0; k < p->noffsets; k++) {
            const int8_t *off = p->offsets[k];
            int64_t to = r;
            bool ok = true;
            for (int d = 0; d < p->ndims; d++) {
                int64_t q = c[d] + off[d];
                if (q < 0 || q >= p->dims[d]) {
                    if (!p->periodic) {
                        ok = false;
                        break;
                    }
                    q = (q + p->dims[d]) % p->dims[d];
                }
                to += (q - c[d]) * p->gstride[d];
            }
            if (!ok || to == r)
                continue; /* off the grid, or a periodic dimension of size 1 */
            bool dup = false;
            for (int64_t i = 0; p->dedupe && i < n && !dup; i++)
                dup = nb[i] == to; /* size 2: -1 and +1 are the same rank */
            if (dup)
                continue;
            nb[n] = to;
            w[n++] = p->bytes;
        }
        return n;
    }
    if (p->kind == LMPI_PAT_FFT) {
        for (int d = 0; d < p->ndims; d++) {
            memcpy(q, c, sizeof(q));
            for (int64_t v = 0; v < p->dims[d]; v++) {
                if (v == c[d])
                    continue;
                q[d] = v;
                nb[n] = grid_rank(p, q);
                w[n++] = p->bytes;
            }
        }
        return n;
    }
    /* diagonal and anti-diagonal through (c0, c1) */
    for (int dir = -1; dir <= 1; dir += 2)
        for (int64_t i = 0; i < p->dims[0]; i++) {
            int64_t j = c[1] + dir * (i - c[0]);
            if (i == c[0] || j < 0 || j >= p->dims[1])
                continue;
            q[0] = i;
            q[1] = j;
            nb[n] = grid_rank(p, q);
            w[n++] = p->bytes;
        }
    return n;
}
