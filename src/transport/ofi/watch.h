/* The network watcher (watch.c): wakes this rank's sleeping thread when the
 * completion queue's wait descriptor becomes readable. */
#ifndef LMPI_OFI_WATCH_H
#define LMPI_OFI_WATCH_H

#include <stdbool.h>

/* Start watching FD (once); false when no thread could be started. */
bool lmpi_ofi_watch_start(int fd);
bool lmpi_ofi_watching(void);
/* The sleeper is about to sleep, the descriptor armed by fi_trywait. */
void lmpi_ofi_watch_round(void);
/* fi_trywait said nothing is pending: clear a readiness left over (below). */
void lmpi_ofi_watch_unstick(void);
void lmpi_ofi_watch_stop(void);

#endif
