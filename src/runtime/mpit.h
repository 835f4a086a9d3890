/* What the MPI_T modules share: mpit.c owns the variables and the
 * initialization count, mpit_meta.c describes them (categories, sources). */
#ifndef LMPI_MPIT_H
#define LMPI_MPIT_H

#include "runtime/lmpi.h"

lmpi_status lmpi_mpit_need_init(void);
/* MPI_T's string convention: *len in = buffer size, out = length + 1. */
void lmpi_mpit_copy_name(const char *src, char *dst, int *len);
int lmpi_mpit_pvar_count(void);
const char *lmpi_mpit_pvar_name(int index);

#endif
