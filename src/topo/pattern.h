/* Communication patterns an application declares at launch (DESIGN.md §4):
 *
 *   1d-nn:N[:star|:box][:periodic]      nearest neighbours on a line
 *   2d-nn:AxB[:star|:box][:periodic]    ... on an A x B grid
 *   3d-nn:AxBxC[:star|:box][:periodic]  ... on a 3D grid
 *   fft:AxB[xC]                          all-to-all along every grid dimension
 *                                        (the transposes of a 2D-decomposed 3D FFT)
 *   diagonal:AxB                         all processes on the same diagonal and
 *                                        anti-diagonal (ray tracing)
 *   edges:FILE                           "src dst [bytes]" lines, ranks from 0
 *
 * Star and box follow the paper's footnote 1: a star stencil has all 3^d - 1
 * neighbours (diagonals included), a box stencil only the 2d along the axes.
 * (PETSc's DMDA uses the two words the other way round.)  Grids are row-major:
 * the last dimension varies fastest (rank = r * B + c).  Every process sends
 * one message of the pattern's size to each neighbour. */
#ifndef LMPI_TOPO_PATTERN_H
#define LMPI_TOPO_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { LMPI_PAT_NN, LMPI_PAT_FFT, LMPI_PAT_DIAG, LMPI_PAT_EDGES } lmpi_pat_kind;

typedef struct {
    lmpi_pat_kind kind;
    int ndims;
    int64_t dims[3];
    bool axis_only; /* box stencil */
    bool periodic;
    int64_t nranks;
    double bytes; /* per message of generated patterns */
    /* edges: CSR by source rank */
    int64_t *off;
    int64_t *adj;
    double *w;
    int64_t max_degree;
    /* nearest neighbours: the stencil's offsets and the grid's strides */
    int noffsets;
    int8_t offsets[26][3];
    int64_t delta[26]; /* rank difference of each offset (inside the grid) */
    int64_t gstride[3];
    bool dedupe; /* a periodic dimension of size <= 2 reaches a rank twice */
    char desc[160];
} lmpi_pattern;

/* Parse SPEC (see above); BYTES is the message size of generated patterns and
 * the default of edge lines without one.  -1 and "where: problem" in ERR. */
int lmpi_pattern_parse(const char *spec, double bytes, lmpi_pattern *p, char *err, size_t errlen);
void lmpi_pattern_free(lmpi_pattern *p);

/* The destinations of rank R's messages and their sizes; NB and W hold at
 * least p->max_degree entries.  Returns the count. */
int64_t lmpi_pattern_neighbors(const lmpi_pattern *p, int64_t r, int64_t *nb, double *w);

#endif
