/* bench/rma, module level: Table II's growth.  The bytes one process keeps
 * for one window, per aspect and strategy, from 2 to 1 M ranks (the sizes
 * the window module allocates for its own strategies, the paper's costs for
 * the others; src/rma/meta.c).
 *
 *   bench_rma_module [--quick]   RESULT metadata_bytes aspect=... strategy=... ranks=... value=<bytes> */
#include <stdio.h>
#include <string.h>

#include "rma/win.h"
#include "runtime/config.h"

static unsigned next_ranks(unsigned p, int quick)
{
    if (!quick)
        return 2 * p;
    return p == 2 ? 1024 : p == 1024 ? 1u << 20 : 2 * p;
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    lmpi_config_ensure_loaded();
    static const struct {
        lmpi_rma_aspect aspect;
        const char *name;
        const char *strategies[4];
    } rows[] = {
        {LMPI_RMA_ASPECT_WINDOW, "window", {"compact", "per_target_disp", "per_target", NULL}},
        {LMPI_RMA_ASPECT_FENCE, "fence", {"barrier", "reduce_scatter", NULL}},
        {LMPI_RMA_ASPECT_LOCK, "lock", {"mcs", "polling", "queued", NULL}},
        {LMPI_RMA_ASPECT_OUTGOING, "outgoing", {"eager", "delayed", "delayed_unbounded", NULL}},
    };
    printf("%-9s %-18s", "aspect", "strategy");
    for (unsigned p = 2; p <= 1u << 20; p <<= quick ? 10 : 4)
        printf(" %12u", p);
    printf("   (bytes per process; outgoing: 4 M operations in one epoch)\n");
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
        for (int s = 0; rows[r].strategies[s]; s++) {
            printf("%-9s %-18s", rows[r].name, rows[r].strategies[s]);
            for (unsigned p = 2; p <= 1u << 20; p <<= quick ? 10 : 4)
                printf(" %12llu", (unsigned long long)lmpi_rma_metadata_bytes(rows[r].aspect, rows[r].strategies[s], p,
                                                                             4u << 20));
            printf("\n");
        }
    /* RESULT lines: every power of two from 2 to 1 048 576 ranks (quick: 2, 1024, 1 M) */
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
        for (int s = 0; rows[r].strategies[s]; s++)
            for (unsigned p = 2; p <= 1u << 20; p = next_ranks(p, quick))
                printf("RESULT metadata_bytes aspect=%s strategy=%s ranks=%u value=%llu\n", rows[r].name,
                       rows[r].strategies[s], p,
                       (unsigned long long)lmpi_rma_metadata_bytes(rows[r].aspect, rows[r].strategies[s], p, 4u << 20));
    return 0;
}
