/* bench/io, MPI level: built from this one source with every
 * implementation's mpicc (bench/run io).
 *
 *   io_bench DIR PATTERN MODE BYTES REPS
 *
 * Every rank writes BYTES bytes of one file in DIR through a view, then
 * reads them back; the time is from a barrier before the call to a barrier
 * after it (the slowest rank), the median of REPS repetitions after a warm-up.
 * The file is made anew for every repetition (the pages are allocated as a
 * real output is) and not synced: the figures are page-cache bandwidth,
 * what the library adds to the file system, not the disk.
 *
 *   PATTERN contiguous   rank r's block at r * BYTES
 *           subarray-3d  a 3-D array of doubles on a 3-D process grid
 *                        (MPI_Dims_create), each rank a cube of about BYTES
 *           strided-1d   blocks of 2 KiB dealt round-robin to the ranks
 *   MODE    collective (MPI_File_write_all / read_all), independent
 *           (MPI_File_write / read), posix (plain open/pwrite/pread of the
 *           same bytes: the reference, contiguous only)
 *
 * Prints RESULT write_bandwidth / read_bandwidth pattern=... mode=...
 * ranks=... bytes=... value=GB/s (total bytes of all ranks per second).
 */
#include <fcntl.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STRIDE_BLOCK 2048

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The view of this rank, and the bytes it really moves. */
static MPI_Datatype make_view(const char *pattern, int rank, int size, long long bytes, MPI_Offset *disp,
                              long long *mine)
{
    MPI_Datatype t = MPI_BYTE;
    *disp = 0;
    *mine = bytes;
    if (!strcmp(pattern, "contiguous")) {
        *disp = (MPI_Offset)rank * bytes;
    } else if (!strcmp(pattern, "subarray-3d")) {
        int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
        MPI_Dims_create(size, 3, dims);
        MPI_Comm cart;
        MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
        MPI_Cart_coords(cart, rank, 3, coords);
        MPI_Comm_free(&cart);
        int n = (int)cbrt((double)bytes / sizeof(double));
        int gs[3], ls[3] = {n, n, n}, st[3];
        for (int d = 0; d < 3; d++)
            gs[d] = n * dims[d], st[d] = n * coords[d];
        MPI_Type_create_subarray(3, gs, ls, st, MPI_ORDER_C, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        *mine = (long long)n * n * n * (long long)sizeof(double);
    } else if (!strcmp(pattern, "strided-1d")) {
        MPI_Datatype v;
        long long blocks = bytes / STRIDE_BLOCK;
        MPI_Type_vector((int)blocks, STRIDE_BLOCK, STRIDE_BLOCK * size, MPI_BYTE, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)blocks * STRIDE_BLOCK * size, &t);
        MPI_Type_free(&v);
        MPI_Type_commit(&t);
        *disp = (MPI_Offset)rank * STRIDE_BLOCK;
        *mine = blocks * STRIDE_BLOCK;
    } else {
        fprintf(stderr, "unknown pattern %s\n", pattern);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return t;
}

static void posix_io(const char *name, int write, char *buf, long long bytes, int rank)
{
    int fd = open(name, write ? O_WRONLY | O_CREAT : O_RDONLY, 0644);
    if (fd < 0) {
        perror(name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long long done = 0;
    while (done < bytes) {
        ssize_t n = write ? pwrite(fd, buf + done, (size_t)(bytes - done), (off_t)rank * bytes + done)
                          : pread(fd, buf + done, (size_t)(bytes - done), (off_t)rank * bytes + done);
        if (n <= 0) {
            perror("pwrite/pread");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        done += n;
    }
    close(fd);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 6) {
        if (rank == 0)
            fprintf(stderr, "usage: io_bench DIR PATTERN MODE BYTES REPS\n");
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1], *pattern = argv[2], *mode = argv[3];
    long long bytes = atoll(argv[4]);
    int reps = atoi(argv[5]);
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char name[4096];
    snprintf(name, sizeof(name), "%s/io-bench-%d", dir, pid);
    MPI_Offset disp;
    long long mine;
    MPI_Datatype view = make_view(pattern, rank, size, bytes, &disp, &mine);
    char *buf = malloc((size_t)mine);
    for (long long i = 0; i < mine; i++)
        buf[i] = (char)(i * 7 + rank);
    long long total;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    int coll = !strcmp(mode, "collective"), posix = !strcmp(mode, "posix");
    double *tw = malloc(sizeof(double) * (size_t)reps), *tr = malloc(sizeof(double) * (size_t)reps);
    for (int r = -1; r < reps; r++) {
        MPI_File fh = MPI_FILE_NULL;
        if (!posix) {
            MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
            MPI_File_set_view(fh, disp, MPI_BYTE, view, "native", MPI_INFO_NULL);
        }
        for (int write = 1; write >= 0; write--) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (posix)
                posix_io(name, write, buf, mine, rank);
            else if (write)
                coll ? MPI_File_write_at_all(fh, 0, buf, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE)
                     : MPI_File_write_at(fh, 0, buf, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE);
            else
                coll ? MPI_File_read_at_all(fh, 0, buf, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE)
                     : MPI_File_read_at(fh, 0, buf, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE);
            MPI_Barrier(MPI_COMM_WORLD);
            double dt = MPI_Wtime() - t0;
            if (r >= 0)
                (write ? tw : tr)[r] = dt;
        }
        if (!posix)
            MPI_File_close(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            unlink(name);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* the data read back is the data written */
    int bad = 0;
    for (long long i = 0; i < mine; i++)
        bad += buf[i] != (char)(i * 7 + rank);
    int allbad;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (allbad)
            fprintf(stderr, "io_bench: %d bytes read back wrong\n", allbad);
        else {
            const char *fs = strncmp(dir, "/dev/shm", 8) ? "disk" : "tmpfs";
            printf("RESULT write_bandwidth pattern=%s mode=%s fs=%s ranks=%d bytes=%lld value=%.3f\n", pattern,
                   mode, fs, size, bytes, total / median(tw, reps) / 1e9);
            printf("RESULT read_bandwidth pattern=%s mode=%s fs=%s ranks=%d bytes=%lld value=%.3f\n", pattern, mode,
                   fs, size, bytes, total / median(tr, reps) / 1e9);
        }
    }
    free(buf);
    free(tw);
    free(tr);
    if (view != MPI_BYTE)
        MPI_Type_free(&view);
    MPI_Finalize();
    return allbad != 0;
}
