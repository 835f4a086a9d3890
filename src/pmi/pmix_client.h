/* PMIx backend of pmi.h (pmix_client.c), used when a PMIx server started
 * the process (PMIX_NAMESPACE and PMIX_RANK set, no PMI_FD).  Built only
 * with libpmix's headers (LMPI_HAVE_PMIX); pmi1.c dispatches to it. */
#ifndef LMPI_PMIX_CLIENT_H
#define LMPI_PMIX_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "pmi/pmi.h"

bool lmpi_pmix_active(void);
int lmpi_pmix_init(lmpi_pmi_info *info, char *err, size_t errlen);
/* The libpmix file opened (the launcher's own, LMPI_PMIX_LIB or libpmix.so.2). */
const char *lmpi_pmix_library(void);
int lmpi_pmix_put(const char *key, const char *value);
/* owner < 0: search every rank of the namespace */
int lmpi_pmix_get(int owner, const char *key, char *value, size_t len);
/* commit this rank's puts and exchange them: the PMI barrier */
int lmpi_pmix_fence(void);
int lmpi_pmix_node_map(int size, int *node_of);
void lmpi_pmix_abort(int code, const char *msg);
int lmpi_pmix_finalize(void);
int lmpi_pmix_publish(const char *service, const char *port, char *err, size_t errlen);
int lmpi_pmix_lookup(const char *service, char *port, size_t len, char *err, size_t errlen);
int lmpi_pmix_unpublish(const char *service, char *err, size_t errlen);
/* PMIx_Spawn; the npreput keys reach the children in their environment. */
int lmpi_pmix_spawn(int count, const lmpi_pmi_app *apps, int npreput, const char **keys, const char **values,
                    int *spawned, char *err, size_t errlen);

#endif
