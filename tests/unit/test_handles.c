/* Integer handles (runtime/handles.c): predefined handles are their own
 * values, others round-trip through a table found by hash; converting the
 * same object twice gives the same integer, however many objects there are. */
#include <stdint.h>

#include "binding/gen/impl.h"
#include "unit.h"

#define N 20000

static char objects[N][16]; /* stand-ins: only addresses are converted */

int main(void)
{
    CHECK_EQ(lmpi_impl_Comm_toint(MPI_COMM_WORLD), 0x101);
    CHECK(lmpi_impl_Comm_fromint(0x101) == MPI_COMM_WORLD);
    CHECK(lmpi_impl_Request_fromint(0x180) == MPI_REQUEST_NULL);
    static int first[N];
    for (int i = 0; i < N; i++) {
        first[i] = lmpi_impl_Request_toint((MPI_Request)(void *)objects[i]);
        CHECK(first[i] >= 0x1000);
    }
    int wrong = 0;
    for (int i = N - 1; i >= 0; i--) {
        wrong += lmpi_impl_Request_toint((MPI_Request)(void *)objects[i]) != first[i];
        wrong += lmpi_impl_Request_fromint(first[i]) != (MPI_Request)(void *)objects[i];
        wrong += i > 0 && first[i] == first[i - 1];
    }
    CHECK_EQ(wrong, 0);
    CHECK(lmpi_impl_Comm_fromint(0x1000 + N + 5) == NULL); /* never handed out */
    CHECK(lmpi_impl_Comm_fromint(-3) == NULL);
    if (unit_failures == 0)
        printf("test_handles: passed\n");
    return unit_failures != 0;
}
