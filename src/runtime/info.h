/* MPI_Info objects: ordered key/value lists (the order of MPI_Info_set is
 * the order of MPI_Info_get_nthkey). */
#ifndef LMPI_INFO_H
#define LMPI_INFO_H

#include "runtime/lmpi.h"

typedef struct lmpi_info_entry {
    struct lmpi_info_entry *next;
    char *key;
    char *value;
} lmpi_info_entry;

struct lmpi_info {
    uint32_t magic;
    int nkeys;
    lmpi_info_entry *head;
};
typedef struct lmpi_info lmpi_info;

/* MPI_INFO_NULL -> NULL (allowed), a live info -> it, else an error. */
lmpi_status lmpi_info_arg(MPI_Info h, lmpi_info **out);
lmpi_info *lmpi_info_new(void);
lmpi_info *lmpi_info_copy(const lmpi_info *src);
void lmpi_info_destroy(lmpi_info *info);
const char *lmpi_info_value(const lmpi_info *info, const char *key);
lmpi_status lmpi_info_put(lmpi_info *info, const char *key, const char *value);

#endif
