/* The registry of attribute cells that carry values set from Fortran
 * (src/fortran/mpif_attrcell.c): cells are found by address only, other
 * addresses are never read, and release frees exactly once. */
#include <pthread.h>
#include <stdlib.h>

#include "fortran/mpif_attrcell.h"
#include "unit.h"

#define CELLS 5000

static void *churn(void *arg)
{
    intptr_t base = (intptr_t)arg, v = 0;
    for (int round = 0; round < 200; round++) {
        intptr_t *c[16];
        for (int i = 0; i < 16; i++)
            c[i] = lmpif_cell_new(base + i);
        for (int i = 0; i < 16; i++) {
            if (!lmpif_cell_get(c[i], &v) || v != base + i)
                return (void *)1;
            lmpif_cell_release(c[i]);
        }
    }
    return NULL;
}

int main(void)
{
    static intptr_t *cell[CELLS];
    intptr_t v = 0;
    CHECK_EQ(lmpif_cell_count(), 0);
    for (int i = 0; i < CELLS; i++) {
        cell[i] = lmpif_cell_new(1000 + i);
        CHECK(cell[i] != NULL);
        CHECK_EQ(*cell[i], 1000 + i); /* the cell's address is the value's */
    }
    CHECK_EQ(lmpif_cell_count(), CELLS);
    for (int i = 0; i < CELLS; i++)
        CHECK(lmpif_cell_get(cell[i], &v) && v == 1000 + i);

    /* not cells: NULL, small integers stored as pointers, a pointer inside
     * a cell, other memory (none is read: ASan would see it) */
    int other = 7;
    CHECK(!lmpif_cell_get(NULL, &v));
    CHECK(!lmpif_cell_get((void *)(intptr_t)17, &v));
    CHECK(!lmpif_cell_get((char *)cell[3] + 1, &v));
    CHECK(!lmpif_cell_get(&other, &v));
    lmpif_cell_release(&other); /* left alone */
    lmpif_cell_release((void *)(intptr_t)17);
    CHECK_EQ(lmpif_cell_count(), CELLS);

    /* release frees once: a second release of the same address is a no-op */
    lmpif_cell_release(cell[10]);
    CHECK(!lmpif_cell_get(cell[10], &v));
    CHECK_EQ(lmpif_cell_count(), CELLS - 1);
    for (int i = 0; i < CELLS; i++)
        if (i != 10)
            lmpif_cell_release(cell[i]);
    CHECK_EQ(lmpif_cell_count(), 0);

    /* threads making and releasing cells at once (MPI_THREAD_MULTIPLE) */
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, churn, (void *)(intptr_t)(i * 100));
    for (int i = 0; i < 4; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        CHECK(rc == NULL);
    }
    CHECK_EQ(lmpif_cell_count(), 0);
    return unit_finish("test_fortran_attrcell");
}
