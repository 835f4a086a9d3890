/* PMI-2 wire client (LMPI_PMI=2): the protocol of MPICH's Hydra and Slurm's
 * srun --mpi=pmi2, on the socket in PMI_FD.  pmi1.c decides when it speaks
 * and calls these in place of its own commands. */
#ifndef LMPI_PMI2_H
#define LMPI_PMI2_H

#include <stdbool.h>
#include <stddef.h>

#include "pmi/pmi.h"

bool lmpi_pmi2_active(void);
/* Handshake on fd (PMI-1's init line asking for version 2, then fullinit):
 * 0 and info filled, or -1 with the reason in err. */
int lmpi_pmi2_init(int fd, lmpi_pmi_info *info, char *err, size_t errlen);
int lmpi_pmi2_put(const char *key, const char *value);
int lmpi_pmi2_get(const char *key, char *value, size_t len);
int lmpi_pmi2_fence(void);
/* A job attribute (PMI_process_mapping, universeSize): 0 if found. */
int lmpi_pmi2_job_attr(const char *key, char *value, size_t len);
void lmpi_pmi2_abort(int code, const char *msg);
int lmpi_pmi2_finalize(void);
int lmpi_pmi2_spawn(int count, const lmpi_pmi_app *apps, int npreput, const char **keys, const char **values,
                    int *spawned, char *err, size_t errlen);
int lmpi_pmi2_publish(const char *service, const char *port, char *err, size_t errlen);
int lmpi_pmi2_lookup(const char *service, char *port, size_t len, char *err, size_t errlen);
/* Did the name service answer a lookup of service nobody publishes as
 * Hydra's -nameserver does (rc=0, found=TRUE, an empty port)? */
bool lmpi_pmi2_name_answered(const char *service);
int lmpi_pmi2_unpublish(const char *service, char *err, size_t errlen);

/* All n bytes of s to fd (pmi1.c), retrying where interrupted: 0 or -1. */
int lmpi_pmi_write_all(int fd, const char *s, size_t n);

/* The value of key in a PMI-2 message body ("cmd=kvs-get-response;found=TRUE;
 * value=v;rc=0;"), where a doubled ';' stands for one in the value: 0, or -1
 * if absent. */
int lmpi_pmi2_field(const char *body, const char *key, char *out, size_t len);

#endif
