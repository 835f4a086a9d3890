/* The configuration table as a struct: lmpi_config.<field>, read from the
 * environment once at MPI_Init (or on first use before it). */
#ifndef LMPI_CONFIG_H
#define LMPI_CONFIG_H

#include <stdint.h>

#include "runtime/config_table.h"

#define LMPI_CFG_CTYPE_BOOL int
#define LMPI_CFG_CTYPE_INT int64_t
#define LMPI_CFG_CTYPE_SIZE int64_t
#define LMPI_CFG_CTYPE_FLOAT double
#define LMPI_CFG_CTYPE_STRING const char *

typedef struct lmpi_config_values {
#define LMPI_CFG_FIELD(field, env, type, def, doc) LMPI_CFG_CTYPE_##type field;
    LMPI_CONFIG_TABLE(LMPI_CFG_FIELD)
#undef LMPI_CFG_FIELD
} lmpi_config_values;

extern lmpi_config_values lmpi_config;

typedef struct {
    const char *env;
    const char *type;
    const char *def;
    const char *doc;
} lmpi_config_entry;

extern const lmpi_config_entry lmpi_config_entries[];
extern const int lmpi_config_count;

/* Parse the environment; returns the number of malformed values (each is
 * reported on stderr and replaced by its default). */
int lmpi_config_load(void);
/* Load once, for code that may run before MPI_Init (error handling). */
void lmpi_config_ensure_loaded(void);
/* Parse one value of a type; 0 on success. */
int lmpi_config_parse(const char *type, const char *text, int64_t *num);

#endif
