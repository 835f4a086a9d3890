/* MPI-IO: every function, views of every kind written and read back
 * (independent, collective, nonblocking, split), shared and ordered pointers
 * under contention, atomic mode, external32 against a reference writer,
 * user data representations, and the error classes of bad input.
 *
 *   t_io [DIR]           everything, files in DIR (default /tmp)
 *   t_io nospace DIR     MPI_ERR_NO_SPACE on a small file system at DIR
 *
 * The oracle for views: MPI_Unpack of a rank's data with `tiles` filetypes
 * into an image of the file lays the data out as the view should (a view is
 * the filetype tiled from disp), independently of the I/O code. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpitest.h"

static int rank, size;
static char dir[512] = "/tmp";

static void path(char *out, size_t n, const char *what)
{
    /* one name for the whole job: rank 0's pid */
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(out, n, "%s/lmpi-t_io-%d-%s", dir, pid, what);
}

#define OK(call) CHECK_EQ((call), MPI_SUCCESS)

static int err_class(int code)
{
    int c;
    MPI_Error_class(code, &c);
    return c;
}

/* ---- views ------------------------------------------------------------------ */

typedef struct {
    const char *name;
    MPI_Datatype ftype; /* per rank */
    MPI_Offset disp;
    int count;          /* ints this rank writes */
} view_case;

/* The view kinds, each interleaving the ranks' data in one file. */
static int make_views(view_case *v)
{
    int n = 0;
    MPI_Datatype t;
    /* vector: blocks of 3 ints, ranks interleaved (each rank's disp is its first block) */
    MPI_Type_vector(4, 3, 3 * size, MPI_INT, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint)(4 * 3 * size * sizeof(int)), &v[n].ftype);
    MPI_Type_free(&t);
    v[n].name = "vector", v[n].disp = 16 + rank * 3 * (MPI_Offset)sizeof(int), v[n++].count = 24;
    /* subarray 3-D: an 8x6x(2*size) int array split along the last dimension */
    int gs[3] = {8, 6, 2 * size}, ls[3] = {8, 6, 2}, st[3] = {0, 0, 2 * rank};
    MPI_Type_create_subarray(3, gs, ls, st, MPI_ORDER_C, MPI_INT, &v[n].ftype);
    v[n].name = "subarray", v[n].disp = 0, v[n++].count = 8 * 6 * 2;
    /* darray: block-cyclic on a size x 1 grid over 12 x 10 ints */
    int gsz[2] = {12, 10}, distr[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
        dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, psz[2] = {size, 1};
    MPI_Type_create_darray(size, rank, 2, gsz, distr, dargs, psz, MPI_ORDER_C, MPI_INT, &v[n].ftype);
    MPI_Count tsz;
    MPI_Type_size_c(v[n].ftype, &tsz);
    v[n].name = "darray", v[n].disp = 0, v[n++].count = (int)(tsz / sizeof(int));
    /* struct of two int blocks with a gap, resized to interleave the ranks */
    int bl[2] = {2, 1};
    MPI_Aint dp[2] = {(MPI_Aint)(rank * 3 * sizeof(int)), (MPI_Aint)((rank * 3 + 2) * sizeof(int))};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, bl, dp, ty, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint)(3 * size * sizeof(int)), &v[n].ftype);
    MPI_Type_free(&t);
    v[n].name = "struct+resized", v[n].disp = 8, v[n++].count = 15;
    /* indexed with zero-length blocks */
    int ibl[4] = {2, 0, 3, 0}, idp[4] = {0, 3, 5 * size + rank * 3, 9 * size};
    idp[0] = rank * 2;
    MPI_Type_indexed(4, ibl, idp, MPI_INT, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint)(10 * size * sizeof(int)), &v[n].ftype);
    MPI_Type_free(&t);
    v[n].name = "indexed-zero-blocks", v[n].disp = 0, v[n++].count = 10;
    for (int i = 0; i < n; i++)
        MPI_Type_commit(&v[i].ftype);
    return n;
}

/* The file image this rank's data makes under the view (the oracle). */
static void oracle(const view_case *v, const int *data, char *image, MPI_Offset image_bytes)
{
    MPI_Count tsz;
    MPI_Type_size_c(v->ftype, &tsz);
    if (tsz == 0) /* this rank's blocks are empty at this size: it writes nothing */
        return;
    int tiles = (int)((v->count * (MPI_Count)sizeof(int) + tsz - 1) / tsz);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(v->ftype, &lb, &ext);
    CHECK(v->disp + (MPI_Offset)tiles * ext <= image_bytes);
    /* pad the stream to whole tiles with zeros, then unpack */
    char *stream = calloc((size_t)(tiles * tsz), 1);
    memcpy(stream, data, (size_t)v->count * sizeof(int));
    int pos = 0;
    char *tmp = calloc((size_t)image_bytes, 1);
    MPI_Unpack(stream, (int)(tiles * tsz), &pos, tmp + v->disp, tiles, v->ftype, MPI_COMM_SELF);
    /* only this rank's bytes: those its data touched */
    char *mask = calloc((size_t)(tiles * tsz), 1), *mimg = calloc((size_t)image_bytes, 1);
    memset(mask, 1, (size_t)v->count * sizeof(int));
    pos = 0;
    MPI_Unpack(mask, (int)(tiles * tsz), &pos, mimg + v->disp, tiles, v->ftype, MPI_COMM_SELF);
    for (MPI_Offset i = 0; i < image_bytes; i++)
        if (mimg[i])
            image[i] = tmp[i];
    free(stream);
    free(tmp);
    free(mask);
    free(mimg);
}

typedef enum { M_COLL, M_INDEP, M_NONBLOCKING, M_SPLIT, M_COLL_AT, M_SHARED_ORDERED } io_mode;
static const char *mode_name[] = {"write_all", "write_at", "iwrite", "write_all_begin", "write_at_all", "ordered"};

static void io_view(MPI_File fh, const view_case *v, io_mode m, int write, int *buf)
{
    MPI_Status s;
    MPI_Request r;
    int count = v->count, n = -1;
    if (write) {
        switch (m) {
        case M_COLL: OK(MPI_File_write_all(fh, buf, count, MPI_INT, &s)); break;
        case M_INDEP: OK(MPI_File_write_at(fh, 0, buf, count, MPI_INT, &s)); break;
        case M_NONBLOCKING: OK(MPI_File_iwrite(fh, buf, count, MPI_INT, &r)); OK(MPI_Wait(&r, &s)); break;
        case M_SPLIT: OK(MPI_File_write_all_begin(fh, buf, count, MPI_INT)); OK(MPI_File_write_all_end(fh, buf, &s)); break;
        case M_COLL_AT: OK(MPI_File_write_at_all_c(fh, 0, buf, (MPI_Count)count, MPI_INT, &s)); break;
        case M_SHARED_ORDERED: break;
        }
    } else {
        switch (m) {
        case M_COLL: OK(MPI_File_read_all(fh, buf, count, MPI_INT, &s)); break;
        case M_INDEP: OK(MPI_File_read_at(fh, 0, buf, count, MPI_INT, &s)); break;
        case M_NONBLOCKING: OK(MPI_File_iread(fh, buf, count, MPI_INT, &r)); OK(MPI_Wait(&r, &s)); break;
        case M_SPLIT: OK(MPI_File_read_all_begin(fh, buf, count, MPI_INT)); OK(MPI_File_read_all_end(fh, buf, &s)); break;
        case M_COLL_AT: OK(MPI_File_read_at_all_c(fh, 0, buf, (MPI_Count)count, MPI_INT, &s)); break;
        case M_SHARED_ORDERED: break;
        }
    }
    MPI_Get_count(&s, MPI_INT, &n);
    CHECK_EQ(n, count);
}

static void test_views(void)
{
    view_case v[8];
    int nv = make_views(v);
    char name[600];
    path(name, sizeof(name), "views");
    const char *hints[][2] = {{NULL, NULL}, {"cb_buffer_size", "4096"}, {"cb_nodes", "2"},
                              {"romio_cb_write", "disable"}, {"romio_ds_read", "disable"},
                              {"romio_ds_write", "enable"}};
    for (int h = 0; h < 6; h++) {
        MPI_Info info = MPI_INFO_NULL;
        if (hints[h][0]) {
            MPI_Info_create(&info);
            MPI_Info_set(info, hints[h][0], hints[h][1]);
            if (h == 3)
                MPI_Info_set(info, "romio_cb_read", "disable");
        }
        MPI_File fh;
        OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
        for (int i = 0; i < nv; i++)
            for (int m = M_COLL; m <= M_COLL_AT; m++) {
                if (h && m != M_COLL && m != M_INDEP)
                    continue; /* the hints matter to these two */
                OK(MPI_File_set_size(fh, 0));
                int *w = malloc(sizeof(int) * (size_t)v[i].count), *r = malloc(sizeof(int) * (size_t)v[i].count);
                for (int k = 0; k < v[i].count; k++)
                    w[k] = 1 + rank * 100000 + k, r[k] = -1;
                OK(MPI_File_set_view(fh, v[i].disp, MPI_INT, v[i].ftype, "native", MPI_INFO_NULL));
                io_view(fh, &v[i], (io_mode)m, 1, w);
                OK(MPI_File_sync(fh));
                MPI_Barrier(MPI_COMM_WORLD);
                OK(MPI_File_sync(fh));
                OK(MPI_File_set_view(fh, v[i].disp, MPI_INT, v[i].ftype, "native", MPI_INFO_NULL));
                io_view(fh, &v[i], (io_mode)m, 0, r);
                int bad = 0, first = -1;
                for (int k = 0; k < v[i].count; k++)
                    if (r[k] != w[k] && !bad++)
                        first = k;
                if (bad)
                    fprintf(stderr, "rank %d: view %s mode %s hint %s: %d of %d ints differ (first [%d]: %d, not %d)\n",
                            rank, v[i].name, mode_name[m], hints[h][0] ? hints[h][0] : "-", bad, v[i].count, first,
                            r[first], w[first]);
                CHECK_EQ(bad, 0);
                /* the whole file against the oracle */
                MPI_Offset fsize;
                OK(MPI_File_get_size(fh, &fsize));
                MPI_Offset isz = 1 << 16;
                char *mine = calloc((size_t)isz, 1), *all = calloc((size_t)isz, 1), *file = calloc((size_t)isz, 1);
                oracle(&v[i], w, mine, isz);
                MPI_Allreduce(mine, all, (int)isz, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
                MPI_Offset expect = 0;
                for (MPI_Offset k = 0; k < isz; k++)
                    if (all[k])
                        expect = k + 1;
                CHECK(fsize >= expect);
                OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
                MPI_Status s;
                OK(MPI_File_read_at(fh, 0, file, (int)fsize, MPI_BYTE, &s));
                CHECK_EQ(memcmp(file, all, (size_t)expect), 0);
                free(mine);
                free(all);
                free(file);
                free(w);
                free(r);
            }
        OK(MPI_File_close(&fh));
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    }
    if (rank == 0)
        OK(MPI_File_delete(name, MPI_INFO_NULL));
    for (int i = 0; i < nv; i++)
        MPI_Type_free(&v[i].ftype);
}

/* ---- shared and ordered pointers ---------------------------------------------------- */

static void test_shared(void)
{
    char name[600];
    path(name, sizeof(name), "shared");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    const int K = 50;
    /* contention: every rank appends K records through the shared pointer */
    for (int i = 0; i < K; i++) {
        int rec[2] = {rank, i};
        MPI_Status s;
        if (i % 2)
            OK(MPI_File_write_shared(fh, rec, 2, MPI_INT, &s));
        else {
            MPI_Request r;
            OK(MPI_File_iwrite_shared(fh, rec, 2, MPI_INT, &r));
            OK(MPI_Wait(&r, &s));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos;
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK_EQ(pos, (MPI_Offset)K * size * 2 * (MPI_Offset)sizeof(int));
    int *all = malloc(sizeof(int) * 2 * (size_t)K * (size_t)size);
    OK(MPI_File_read_at(fh, 0, all, 2 * K * size, MPI_INT, MPI_STATUS_IGNORE));
    /* each record exactly once, each rank's in its own order */
    int *next = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < K * size; i++) {
        int r = all[2 * i], k = all[2 * i + 1];
        CHECK(r >= 0 && r < size);
        if (r >= 0 && r < size) {
            CHECK_EQ(k, next[r]);
            next[r]++;
        }
    }
    for (int r = 0; r < size; r++)
        CHECK_EQ(next[r], K);
    /* ordered: rank order, after what the shared pointer holds */
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    int mine[3] = {rank, rank, rank};
    OK(MPI_File_write_ordered(fh, mine, rank % 3 + 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_write_ordered_begin(fh, mine, 1, MPI_INT));
    OK(MPI_File_write_ordered_end(fh, mine, MPI_STATUS_IGNORE));
    int tot = 0;
    for (int r = 0; r < size; r++)
        tot += r % 3 + 1;
    int *ord = malloc(sizeof(int) * (size_t)(tot + size));
    OK(MPI_File_read_at(fh, 2 * K * size * (MPI_Offset)sizeof(int), ord, tot + size, MPI_INT, MPI_STATUS_IGNORE));
    int at = 0;
    for (int r = 0; r < size; r++)
        for (int j = 0; j < r % 3 + 1; j++)
            CHECK_EQ(ord[at++], r);
    for (int r = 0; r < size; r++)
        CHECK_EQ(ord[at++], r);
    /* read_ordered and read_shared read back from the start */
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int two[2];
    OK(MPI_File_read_ordered(fh, two, 2, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_EQ(memcmp(two, all + 2 * rank, sizeof(two)), 0);
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK_EQ(pos, (MPI_Offset)size * 2 * (MPI_Offset)sizeof(int));
    OK(MPI_File_close(&fh));
    CHECK(access(name, F_OK) != 0); /* deleted on close */
    free(all);
    free(next);
    free(ord);
}

static int twice_extent(MPI_Datatype t, MPI_Aint *ext, void *extra);

/* ---- every read/write form not exercised above, each writing its own
 * region and reading it back with the matching read form ---- */
static void test_forms(void)
{
    char name[600];
    path(name, sizeof(name), "forms");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    /* each rank's region k is 4 ints at ((k * size) + rank) * 4 ints */
    MPI_Datatype mine;
    MPI_Type_vector(16, 4, 4 * size, MPI_INT, &mine);
    MPI_Datatype tile;
    MPI_Type_create_resized(mine, 0, (MPI_Aint)(64 * size * sizeof(int)), &tile);
    MPI_Type_commit(&tile);
    OK(MPI_File_set_view(fh, 4 * rank * (MPI_Offset)sizeof(int), MPI_INT, tile, "native", MPI_INFO_NULL));
    int w[4], r[4];
    MPI_Request q;
    MPI_Status st;
    int n;
#define FORM(k, WRITE, READ)                                                                                         \
    do {                                                                                                             \
        for (int i = 0; i < 4; i++)                                                                                  \
            w[i] = (k) * 1000 + rank * 10 + i, r[i] = -1;                                                            \
        WRITE;                                                                                                       \
        OK(MPI_File_sync(fh));                                                                                       \
        MPI_Barrier(MPI_COMM_WORLD);                                                                                 \
        OK(MPI_File_sync(fh));                                                                                       \
        READ;                                                                                                        \
        MPI_Get_count(&st, MPI_INT, &n);                                                                             \
        CHECK_EQ(n, 4);                                                                                              \
        CHECK_EQ(memcmp(w, r, sizeof(w)), 0);                                                                        \
    } while (0)
    FORM(0, OK(MPI_File_iwrite_at_all(fh, 0, w, 4, MPI_INT, &q)); OK(MPI_Wait(&q, MPI_STATUS_IGNORE)),
         OK(MPI_File_iread_at_all(fh, 0, r, 4, MPI_INT, &q)); OK(MPI_Wait(&q, &st)));
    FORM(1, OK(MPI_File_write_at_all_begin(fh, 4, w, 4, MPI_INT)); OK(MPI_File_write_at_all_end(fh, w, &st)),
         OK(MPI_File_read_at_all_begin(fh, 4, r, 4, MPI_INT)); OK(MPI_File_read_at_all_end(fh, r, &st)));
    OK(MPI_File_seek(fh, 8, MPI_SEEK_SET));
    FORM(2, OK(MPI_File_iwrite_all(fh, w, 4, MPI_INT, &q)); OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
         OK(MPI_File_seek(fh, -4, MPI_SEEK_CUR)),
         OK(MPI_File_iread_all(fh, r, 4, MPI_INT, &q)); OK(MPI_Wait(&q, &st)));
    FORM(3, OK(MPI_File_iwrite_at(fh, 12, w, 4, MPI_INT, &q)); OK(MPI_Wait(&q, MPI_STATUS_IGNORE)),
         OK(MPI_File_iread_at(fh, 12, r, 4, MPI_INT, &q)); OK(MPI_Wait(&q, &st)));
    /* shared pointer: each rank takes 4 etypes of its own view, so the
     * ordered form puts rank r's ints in rank r's region */
    OK(MPI_File_seek_shared(fh, 16, MPI_SEEK_SET));
    FORM(4, OK(MPI_File_write_ordered_begin(fh, w, 4, MPI_INT)); OK(MPI_File_write_ordered_end(fh, w, &st));
         OK(MPI_File_seek_shared(fh, 16, MPI_SEEK_SET)),
         OK(MPI_File_read_ordered_begin(fh, r, 4, MPI_INT)); OK(MPI_File_read_ordered_end(fh, r, &st)));
    /* independent shared access: one rank at a time, so the places are known */
    OK(MPI_File_seek_shared(fh, 20 * (MPI_Offset)size, MPI_SEEK_SET));
    for (int turn = 0; turn < size; turn++) {
        if (turn == rank) {
            for (int i = 0; i < 4; i++)
                w[i] = 5000 + rank * 10 + i;
            OK(MPI_File_iwrite_shared(fh, w, 4, MPI_INT, &q));
            OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    OK(MPI_File_seek_shared(fh, 20 * (MPI_Offset)size, MPI_SEEK_SET));
    for (int turn = 0; turn < size; turn++) {
        if (turn == rank) {
            if (rank % 2)
                OK(MPI_File_read_shared(fh, r, 4, MPI_INT, &st));
            else {
                OK(MPI_File_iread_shared(fh, r, 4, MPI_INT, &q));
                OK(MPI_Wait(&q, &st));
            }
            CHECK_EQ(memcmp(w, r, sizeof(w)), 0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
#undef FORM
    /* a large-count datarep registration */
    OK(MPI_Register_datarep_c("lmpi-forms-c", MPI_CONVERSION_FN_NULL_C, MPI_CONVERSION_FN_NULL_C, twice_extent,
                              NULL));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "lmpi-forms-c", MPI_INFO_NULL));
    MPI_Count ext;
    OK(MPI_File_get_type_extent_c(fh, MPI_INT, &ext));
    CHECK_EQ(ext, 8);
    MPI_Type_free(&tile);
    MPI_Type_free(&mine);
    OK(MPI_File_close(&fh));
}

/* ---- atomic mode ------------------------------------------------------------------------ */

static void test_atomic(void)
{
    char name[600];
    path(name, sizeof(name), "atomic");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    OK(MPI_File_set_atomicity(fh, 1));
    int flag;
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK_EQ(flag, 1);
    /* every rank writes the same strided region with its own value, many
     * times; in atomic mode a read sees one writer's whole access */
    MPI_Datatype vec;
    MPI_Type_vector(64, 16, 32, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    OK(MPI_File_set_view(fh, 0, MPI_INT, vec, "native", MPI_INFO_NULL));
    int *buf = malloc(sizeof(int) * 1024), *rd = malloc(sizeof(int) * 1024);
    int torn = 0;
    for (int it = 0; it < 20; it++) {
        for (int i = 0; i < 1024; i++)
            buf[i] = rank * 1000 + it;
        OK(MPI_File_write_at(fh, 0, buf, 1024, MPI_INT, MPI_STATUS_IGNORE));
        OK(MPI_File_read_at(fh, 0, rd, 1024, MPI_INT, MPI_STATUS_IGNORE));
        for (int i = 1; i < 1024; i++)
            torn += rd[i] != rd[0];
    }
    CHECK_EQ(torn, 0);
    MPI_Type_free(&vec);
    free(buf);
    free(rd);
    OK(MPI_File_close(&fh));
}

/* ---- external32 and user representations ---------------------------------------------- */

static void be_put(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

static int twice_extent(MPI_Datatype t, MPI_Aint *ext, void *extra)
{
    (void)extra;
    MPI_Aint lb;
    MPI_Type_get_extent(t, &lb, ext);
    *ext *= 2;
    return MPI_SUCCESS;
}

/* "padded": each int as 8 bytes, the value then 4 bytes of 0xee */
static int pad_write(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset pos, void *extra)
{
    (void)t, (void)pos, (void)extra;
    for (int i = 0; i < count; i++) {
        memcpy((char *)filebuf + 8 * i, (int *)userbuf + i, 4);
        memset((char *)filebuf + 8 * i + 4, 0xee, 4);
    }
    return MPI_SUCCESS;
}

static int pad_read(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset pos, void *extra)
{
    (void)t, (void)pos, (void)extra;
    for (int i = 0; i < count; i++)
        memcpy((int *)userbuf + i, (char *)filebuf + 8 * i, 4);
    return MPI_SUCCESS;
}

static void test_datareps(void)
{
    char name[600];
    path(name, sizeof(name), "ext32");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    /* external32: ints, doubles and longs (4 bytes in external32) per rank */
    struct rec {
        int i[2];
        double d;
        long l[2];
    } in = {{rank + 1, -(rank + 7)}, 1.5 + rank, {-3 - rank, 70000 + rank}}, out;
    MPI_Datatype rec;
    int bl[3] = {2, 1, 2};
    MPI_Aint dp[3] = {offsetof(struct rec, i), offsetof(struct rec, d), offsetof(struct rec, l)};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_LONG};
    MPI_Type_create_struct(3, bl, dp, ty, &rec);
    MPI_Type_commit(&rec);
    const int recbytes = 4 * 2 + 8 + 4 * 2; /* external32 */
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    MPI_Aint fext;
    OK(MPI_File_get_type_extent(fh, MPI_LONG, &fext));
    CHECK_EQ(fext, 4);
    OK(MPI_File_write_at_all(fh, rank * recbytes, &in, 1, rec, MPI_STATUS_IGNORE));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_read_at_all(fh, rank * recbytes, &out, 1, rec, MPI_STATUS_IGNORE));
    CHECK_EQ(out.i[0], in.i[0]);
    CHECK_EQ(out.i[1], in.i[1]);
    CHECK(out.d == in.d);
    CHECK_EQ(out.l[0], in.l[0]);
    CHECK_EQ(out.l[1], in.l[1]);
    /* the bytes in the file are the reference writer's */
    unsigned char ref[32], got[32];
    be_put(ref, (uint32_t)in.i[0], 4);
    be_put(ref + 4, (uint32_t)in.i[1], 4);
    uint64_t dbits;
    memcpy(&dbits, &in.d, 8);
    be_put(ref + 8, dbits, 8);
    be_put(ref + 16, (uint32_t)in.l[0], 4);
    be_put(ref + 20, (uint32_t)in.l[1], 4);
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at(fh, rank * recbytes, got, recbytes, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_EQ(memcmp(got, ref, (size_t)recbytes), 0);
    MPI_Type_free(&rec);

    /* a user representation: registered once, twice is MPI_ERR_DUP_DATAREP */
    OK(MPI_Register_datarep("lmpi-padded", pad_read, pad_write, twice_extent, NULL));
    CHECK_EQ(err_class(MPI_Register_datarep("lmpi-padded", pad_read, pad_write, twice_extent, NULL)),
             MPI_ERR_DUP_DATAREP);
    CHECK_EQ(err_class(MPI_Register_datarep("external32", pad_read, pad_write, twice_extent, NULL)),
             MPI_ERR_DUP_DATAREP);
    OK(MPI_File_set_size(fh, 0));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "lmpi-padded", MPI_INFO_NULL));
    char dr[MPI_MAX_DATAREP_STRING];
    MPI_Offset d;
    MPI_Datatype et, ft;
    OK(MPI_File_get_view(fh, &d, &et, &ft, dr));
    CHECK_EQ(strcmp(dr, "lmpi-padded"), 0);
    int vals[3] = {rank, rank + 10, rank + 20}, back[3] = {0, 0, 0};
    OK(MPI_File_write_at_all(fh, 3 * rank, vals, 3, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_read_at(fh, 3 * rank, back, 3, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_EQ(memcmp(vals, back, sizeof(vals)), 0);
    MPI_Offset fsz;
    OK(MPI_File_get_size(fh, &fsz));
    CHECK_EQ(fsz, (MPI_Offset)size * 3 * 8);
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[8];
    OK(MPI_File_read_at(fh, 3 * rank * 8, raw, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_EQ(raw[4], 0xee);
    CHECK_EQ(memcmp(raw, &vals[0], 4), 0);
    CHECK_EQ(err_class(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL)),
             MPI_ERR_UNSUPPORTED_DATAREP);
    OK(MPI_File_close(&fh));
}

/* ---- every other function ------------------------------------------------------------- */

static int handler_calls, handler_code;
static MPI_File handler_file;
static void file_handler(MPI_File *f, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_file = *f;
}

static void comm_handler(MPI_Comm *c, int *code, ...)
{
    (void)c, (void)code;
}

static void test_misc(void)
{
    char name[600];
    path(name, sizeof(name), "misc");
    MPI_File fh;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_factor", "4");
    MPI_Info_set(info, "cb_buffer_size", "65536");
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    MPI_Info used;
    OK(MPI_File_get_info(fh, &used));
    char val[MPI_MAX_INFO_VAL + 1];
    int flag;
    MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && !strcmp(val, "65536"));
    MPI_Info_get(used, "striping_factor", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && !strcmp(val, "4"));
    MPI_Info_get(used, "cb_nodes", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && atoi(val) >= 1);
    MPI_Info_free(&used);
    int amode;
    OK(MPI_File_get_amode(fh, &amode));
    CHECK_EQ(amode, MPI_MODE_CREATE | MPI_MODE_RDWR);
    MPI_Group fg, cg;
    int cmp;
    OK(MPI_File_get_group(fh, &fg));
    MPI_Comm_group(MPI_COMM_WORLD, &cg);
    MPI_Group_compare(fg, cg, &cmp);
    CHECK_EQ(cmp, MPI_IDENT);
    MPI_Group_free(&fg);
    MPI_Group_free(&cg);
    /* sizes */
    MPI_Offset sz;
    OK(MPI_File_set_size(fh, 1000));
    OK(MPI_File_get_size(fh, &sz));
    CHECK_EQ(sz, 1000);
    OK(MPI_File_preallocate(fh, 500));
    OK(MPI_File_get_size(fh, &sz));
    CHECK_EQ(sz, 1000);
    OK(MPI_File_preallocate(fh, 4096));
    OK(MPI_File_get_size(fh, &sz));
    CHECK_EQ(sz, 4096);
    OK(MPI_File_set_size(fh, 0));
    /* individual pointers, seeks, byte offsets, in etypes of the view */
    MPI_Datatype every_other;
    MPI_Type_vector(1, 1, 2, MPI_INT, &every_other);
    MPI_Datatype eo;
    MPI_Type_create_resized(every_other, 0, 2 * sizeof(int), &eo);
    MPI_Type_commit(&eo);
    OK(MPI_File_set_view(fh, 4 * rank, MPI_INT, eo, "native", MPI_INFO_NULL));
    MPI_Offset pos, bo;
    OK(MPI_File_get_byte_offset(fh, 3, &bo));
    CHECK_EQ(bo, 4 * rank + 3 * 8);
    int w[4] = {1, 2, 3, 4};
    if (rank < 2)
        OK(MPI_File_write(fh, w, 4, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_get_position(fh, &pos));
    CHECK_EQ(pos, rank < 2 ? 4 : 0);
    if (rank < 2) {
        OK(MPI_File_seek(fh, -1, MPI_SEEK_CUR));
        OK(MPI_File_get_position(fh, &pos));
        CHECK_EQ(pos, 3);
    }
    OK(MPI_File_seek(fh, 1, MPI_SEEK_SET));
    int r1 = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank < 2) {
        OK(MPI_File_read(fh, &r1, 1, MPI_INT, MPI_STATUS_IGNORE));
        CHECK_EQ(r1, 2);
    }
    OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    OK(MPI_File_get_position(fh, &pos));
    if (size >= 2 && rank < 2)
        CHECK_EQ(pos, 4);
    CHECK_EQ(err_class(MPI_File_seek(fh, -100, MPI_SEEK_SET)), MPI_ERR_ARG);
    CHECK_EQ(err_class(MPI_File_seek(fh, 0, 12345)), MPI_ERR_ARG);
    MPI_Type_free(&eo);
    MPI_Type_free(&every_other);
    /* get_view hands out derived types to free, predefined ones as they are */
    MPI_Offset d;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    OK(MPI_File_get_view(fh, &d, &et, &ft, rep));
    CHECK_EQ(d, 4 * rank);
    CHECK(et == MPI_INT);
    CHECK(!strcmp(rep, "native"));
    MPI_Aint lb, ext;
    MPI_Type_get_extent(ft, &lb, &ext);
    CHECK_EQ(ext, 8);
    MPI_Type_free(&ft);
    /* shared pointer seeks are collective */
    OK(MPI_File_seek_shared(fh, 2, MPI_SEEK_SET));
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK_EQ(pos, 2);
    /* handles through Fortran integers */
    MPI_Fint fi = MPI_File_c2f(fh);
    CHECK(MPI_File_f2c(fi) == fh);
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL);
    /* error handlers: ERRORS_RETURN by default, a user one gets the file */
    MPI_Errhandler eh;
    OK(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    OK(MPI_File_create_errhandler(file_handler, &eh));
    OK(MPI_File_set_errhandler(fh, eh));
    int junk;
    MPI_File_read_at(fh, -5, &junk, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_EQ(handler_calls, 1);
    CHECK_EQ(err_class(handler_code), MPI_ERR_ARG);
    CHECK(handler_file == fh);
    /* a handler made for files is not one for communicators, and back */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_EQ(err_class(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh)), MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler ceh;
    MPI_Comm_create_errhandler(comm_handler, &ceh);
    CHECK_EQ(err_class(MPI_File_set_errhandler(fh, ceh)), MPI_ERR_ARG); /* raised on fh: its handler runs */
    CHECK_EQ(handler_calls, 2);
    MPI_Errhandler_free(&ceh);
    OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK_EQ(handler_calls, 3);
    CHECK_EQ(err_class(handler_code), MPI_ERR_IO);
    MPI_Errhandler_free(&eh);
    OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    /* the window error handler kinds are not file ones */
    CHECK_EQ(err_class(MPI_File_set_errhandler(fh, MPI_ERRHANDLER_NULL)), MPI_ERR_ARG);
    OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        OK(MPI_File_delete(name, MPI_INFO_NULL));
    /* MPI_MODE_APPEND starts both pointers at the end */
    if (rank == 0) {
        FILE *fp = fopen(name, "w");
        fputs("0123456789", fp);
        fclose(fp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_APPEND | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    OK(MPI_File_get_position(fh, &pos));
    CHECK_EQ(pos, 10);
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK_EQ(pos, 10);
    CHECK_EQ(err_class(MPI_File_read_at(fh, 0, &junk, 1, MPI_INT, MPI_STATUS_IGNORE)), MPI_ERR_ACCESS);
    OK(MPI_File_close(&fh));
}

/* ---- bad input ------------------------------------------------------------------------ */

static void test_errors(void)
{
    char name[600], missing[600];
    path(name, sizeof(name), "errors");
    path(missing, sizeof(missing), "no-such-file");
    MPI_File fh = MPI_FILE_NULL;
    CHECK_EQ(err_class(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)),
             MPI_ERR_NO_SUCH_FILE);
    CHECK(fh == MPI_FILE_NULL);
    CHECK_EQ(err_class(MPI_File_delete(missing, MPI_INFO_NULL)), MPI_ERR_NO_SUCH_FILE);
    CHECK_EQ(err_class(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh)),
             MPI_ERR_AMODE);
    CHECK_EQ(err_class(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh)),
             MPI_ERR_AMODE);
    CHECK_EQ(err_class(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE, MPI_INFO_NULL, &fh)), MPI_ERR_AMODE);
    /* amodes that differ between the ranks */
    if (size > 1)
        CHECK_EQ(err_class(MPI_File_open(MPI_COMM_WORLD, name,
                                         rank ? MPI_MODE_RDWR | MPI_MODE_CREATE : MPI_MODE_WRONLY | MPI_MODE_CREATE,
                                         MPI_INFO_NULL, &fh)),
                 MPI_ERR_AMODE);
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    /* etype/filetype mismatch: a filetype that is not whole etypes */
    MPI_Datatype six;
    MPI_Type_contiguous(6, MPI_BYTE, &six);
    MPI_Type_commit(&six);
    CHECK_EQ(err_class(MPI_File_set_view(fh, 0, MPI_INT, six, "native", MPI_INFO_NULL)), MPI_ERR_TYPE);
    MPI_Datatype uncommitted;
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    CHECK_EQ(err_class(MPI_File_set_view(fh, 0, MPI_INT, uncommitted, "native", MPI_INFO_NULL)), MPI_ERR_TYPE);
    MPI_Type_free(&uncommitted);
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    /* a buffer type that is not whole etypes */
    CHECK_EQ(err_class(MPI_File_write_at(fh, 0, "abcdef", 1, six, MPI_STATUS_IGNORE)), MPI_ERR_TYPE);
    MPI_Type_free(&six);
    CHECK_EQ(err_class(MPI_File_set_view(fh, -8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL)), MPI_ERR_ARG);
    int v = 7;
    OK(MPI_File_write_at(fh, rank, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_close(&fh));
    /* MPI_MODE_EXCL on a file that exists */
    CHECK_EQ(err_class(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                                     MPI_INFO_NULL, &fh)),
             MPI_ERR_FILE_EXISTS);
    /* writes on a read-only file */
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    CHECK_EQ(err_class(MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE)), MPI_ERR_READ_ONLY);
    CHECK_EQ(err_class(MPI_File_write_all(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE)), MPI_ERR_READ_ONLY);
    CHECK_EQ(err_class(MPI_File_set_size(fh, 0)), MPI_ERR_READ_ONLY);
    int back = 0;
    OK(MPI_File_read_at(fh, 4 * rank, &back, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_EQ(back, 7);
    OK(MPI_File_close(&fh));
    /* a closed or garbage handle */
    CHECK_EQ(err_class(MPI_File_get_size(MPI_FILE_NULL, &(MPI_Offset){0})), MPI_ERR_FILE);
    /* permission: a file nobody may write (root may write anything on a
     * normal file system, but not a read-only sysctl) */
    MPI_Barrier(MPI_COMM_WORLD);
    if (geteuid() != 0) {
        if (rank == 0)
            chmod(name, 0400);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_EQ(err_class(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh)), MPI_ERR_ACCESS);
    } else if (access("/proc/sys/kernel/ostype", F_OK) == 0) {
        CHECK_EQ(err_class(MPI_File_open(MPI_COMM_WORLD, "/proc/sys/kernel/ostype", MPI_MODE_RDWR, MPI_INFO_NULL,
                                         &fh)),
                 MPI_ERR_ACCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        OK(MPI_File_delete(name, MPI_INFO_NULL));
    /* a full device: /dev/full fails every write with ENOSPC */
    if (access("/dev/full", W_OK) == 0) {
        OK(MPI_File_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
        CHECK_EQ(err_class(MPI_File_write(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE)), MPI_ERR_NO_SPACE);
        OK(MPI_File_close(&fh));
    }
    /* bad input at one rank only: the collective call fails at every rank
     * with the same class and nobody is left waiting */
    if (size > 1) {
        CHECK_EQ(err_class(MPI_File_open(MPI_COMM_WORLD, name,
                                         rank == size - 1 ? MPI_MODE_RDWR | MPI_MODE_WRONLY
                                                          : MPI_MODE_RDWR | MPI_MODE_CREATE,
                                         MPI_INFO_NULL, &fh)),
                 MPI_ERR_AMODE);
        OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
        MPI_Datatype odd;
        MPI_Type_contiguous(3, MPI_BYTE, &odd);
        MPI_Type_commit(&odd);
        CHECK_EQ(err_class(MPI_File_set_view(fh, 0, MPI_INT, rank == 0 ? odd : MPI_INT, "native", MPI_INFO_NULL)),
                 MPI_ERR_TYPE);
        OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
        CHECK_EQ(err_class(MPI_File_write_at_all(fh, rank == 0 ? -1 : rank, &v, 1, MPI_INT, MPI_STATUS_IGNORE)),
                 MPI_ERR_ARG);
        CHECK_EQ(err_class(MPI_File_write_ordered(fh, &v, 1, rank == 0 ? odd : MPI_INT, MPI_STATUS_IGNORE)),
                 MPI_ERR_TYPE);
        CHECK_EQ(err_class(MPI_File_set_size(fh, rank == 0 ? -1 : 8)), MPI_ERR_ARG);
        MPI_Type_free(&odd);
        /* a filetype without data (all blocks empty) at some ranks, as
         * PnetCDF's fill makes them: legal, and those ranks move nothing */
        int zbl[2] = {rank == 0 ? 4 : 0, 0};
        MPI_Aint zdp[2] = {64, 128};
        MPI_Datatype ztype;
        MPI_Type_create_hindexed(2, zbl, zdp, MPI_BYTE, &ztype);
        MPI_Type_commit(&ztype);
        OK(MPI_File_set_view(fh, 0, MPI_BYTE, ztype, "native", MPI_INFO_NULL));
        MPI_Type_free(&ztype);
        int zval = 0x5a5a5a5a;
        OK(MPI_File_write_at_all(fh, 0, &zval, rank == 0 ? 4 : 0, MPI_BYTE, MPI_STATUS_IGNORE));
        if (rank != 0)
            CHECK_EQ(err_class(MPI_File_write_at(fh, 0, &zval, 4, MPI_BYTE, MPI_STATUS_IGNORE)), MPI_ERR_ARG);
        OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        int zback = 0;
        OK(MPI_File_read_at_all(fh, 64, &zback, 4, MPI_BYTE, MPI_STATUS_IGNORE));
        CHECK_EQ(zback, zval);
        OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
        /* and the file still works */
        OK(MPI_File_write_at_all(fh, rank, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
        OK(MPI_File_close(&fh));
    }
    /* errors of open and delete go to MPI_FILE_NULL's handler */
    handler_calls = 0;
    MPI_Errhandler eh;
    OK(MPI_File_create_errhandler(file_handler, &eh));
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK_EQ(handler_calls, 1);
    CHECK(handler_file == MPI_FILE_NULL);
    CHECK_EQ(err_class(handler_code), MPI_ERR_NO_SUCH_FILE);
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&eh);
}

/* A small file system fills up: MPI_ERR_NO_SPACE, and what was written
 * before reads back intact. */
static void test_nospace(void)
{
    char name[600];
    path(name, sizeof(name), "full");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    const int chunk = 64 << 10;
    char *buf = malloc((size_t)chunk), *rd = malloc((size_t)chunk);
    int err = MPI_SUCCESS, n = 0;
    for (; n < 4096 && err == MPI_SUCCESS; n++) {
        memset(buf, 'a' + (n + rank) % 26, (size_t)chunk);
        err = MPI_File_write_at_all(fh, ((MPI_Offset)n * size + rank) * chunk, buf, chunk, MPI_BYTE,
                                    MPI_STATUS_IGNORE);
    }
    CHECK_EQ(err_class(err), MPI_ERR_NO_SPACE);
    /* every round before the failing one reads back as written */
    for (int k = 0; k < n - 1; k++) {
        OK(MPI_File_read_at(fh, ((MPI_Offset)k * size + rank) * chunk, rd, chunk, MPI_BYTE, MPI_STATUS_IGNORE));
        memset(buf, 'a' + (k + rank) % 26, (size_t)chunk);
        CHECK_EQ(memcmp(rd, buf, (size_t)chunk), 0);
    }
    if (rank == 0)
        printf("t_io nospace: MPI_ERR_NO_SPACE after %d rounds of %d x %d bytes, earlier rounds intact\n", n - 1,
               size, chunk);
    OK(MPI_File_close(&fh));
    if (rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);
    free(buf);
    free(rd);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int a = 1;
    if (argc > 1 && !strcmp(argv[1], "fatal")) {
        /* the message names the function, the class and the file */
        MPI_File fh;
        MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
        MPI_File_open(MPI_COMM_WORLD, "/nonexistent-dir/lmpi-missing", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    } else if (argc > 1 && !strcmp(argv[1], "fatal-ro")) {
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, "/proc/self/cmdline", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        MPI_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL);
        MPI_File_write(fh, &a, 1, MPI_INT, MPI_STATUS_IGNORE);
    } else if (argc > 1 && !strcmp(argv[1], "nospace")) {
        snprintf(dir, sizeof(dir), "%s", argc > 2 ? argv[2] : "/tmp");
        test_nospace();
    } else {
        if (argc > 1)
            snprintf(dir, sizeof(dir), "%s", argv[a]);
        test_misc();
        test_errors();
        test_views();
        test_shared();
        test_forms();
        test_atomic();
        test_datareps();
    }
    int fails = mpitest_failures, all;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("t_io: %s (%d failed checks)\n", all ? "FAILED" : "ok", all);
    MPI_Finalize();
    return all != 0;
}
