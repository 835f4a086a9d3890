/* The LeanMPI showcase: one short part per mechanism, ending with the memory
 * report (make demo runs it with LMPI_MEMORY_REPORT=1 under mpiexec -n 4).
 * Parts are added as the mechanisms land; each prints a few readable lines. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void part(const char *title)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("\n== %s\n", title);
}

/* Part 1: the foundation -- launch, PMI, the shared-memory transport. */
static void foundation(void)
{
    part("1. Foundation: launcher, PMI-1, shared-memory transport");
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Get_processor_name(host, &len);
    if (rank == 0)
        printf("library: %s\n%d ranks on %s\n", lib, size, host);

    /* Ping-pong between ranks 0 and 1 over the three paths of the transport:
     * fast box (tiny), cells (eager), single copy with process_vm_readv. */
    const int sizes[] = {8, 4096, 1 << 20};
    const char *path[] = {"fast box", "eager cells", "rendezvous, one copy"};
    char *buf = calloc(1, 1 << 20);
    for (int s = 0; s < 3 && size > 1; s++) {
        int iters = sizes[s] > 65536 ? 50 : 2000;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters && rank < 2; i++) {
            if (rank == 0) {
                MPI_Send(buf, sizes[s], MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, sizes[s], MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, sizes[s], MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, sizes[s], MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double half_rtt = (MPI_Wtime() - t0) / iters / 2;
        if (rank == 0)
            printf("ping-pong %8d B  %-22s %8.2f us  %8.2f MB/s\n", sizes[s], path[s], half_rtt * 1e6,
                   sizes[s] / half_rtt / 1e6);
    }
    free(buf);

    /* A 4 MiB token around the ring, content checked by every rank. */
    const int n = 4 << 20;
    unsigned char *tok = malloc(n);
    if (rank == 0)
        for (int i = 0; i < n; i++)
            tok[i] = (unsigned char)(i * 31);
    double t0 = MPI_Wtime();
    if (rank == 0) {
        MPI_Send(tok, n, MPI_BYTE, (rank + 1) % size, 1, MPI_COMM_WORLD);
        MPI_Recv(tok, n, MPI_BYTE, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(tok, n, MPI_BYTE, rank - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(tok, n, MPI_BYTE, (rank + 1) % size, 1, MPI_COMM_WORLD);
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (tok[i] != (unsigned char)(i * 31))
            bad++;
    int anybad = bad;
    /* no reductions yet: collect the verdicts with messages */
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            int b;
            MPI_Recv(&b, 1, MPI_INT, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            anybad += b;
        }
        printf("4 MiB ring through %d ranks: %.2f ms, content %s on every rank\n", size,
               (MPI_Wtime() - t0) * 1e3, anybad ? "CORRUPTED" : "verified");
    } else {
        MPI_Send(&bad, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
    free(tok);

    /* Bad input returns a clear error instead of crashing. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send(NULL, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Error_string(rc, msg, &len);
    if (rank == 0)
        printf("MPI_Send to rank %d under MPI_ERRORS_RETURN -> %s\n", size + 5, msg);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("LeanMPI showcase\n");
    foundation();
    part("Memory report (LMPI_MEMORY_REPORT=1, printed by MPI_Finalize)");
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
