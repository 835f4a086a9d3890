/* A client of Hydra's name server, hydra_nameserver: `mpiexec -nameserver
 * HOST[:PORT]` keeps MPI_Publish_name's names there instead of in itself, so
 * that jobs started independently (ours or Hydra's, on any host) find each
 * other's ports. */
#ifndef LMPI_MPIEXEC_NAMESERVER_H
#define LMPI_MPIEXEC_NAMESERVER_H

#include <stddef.h>

#define LMPI_NS_DEFAULT_PORT "6392" /* hydra_nameserver's */

typedef struct {
    char host[256];
    char port[16];
} lmpi_ns_server;

/* "HOST" or "HOST:PORT" into *s; -1 with err filled when it is neither. */
int lmpi_ns_parse(const char *spec, lmpi_ns_server *s, char *err, size_t errlen);

/* One request (PUBLISH service port / LOOKUP service / UNPUBLISH service)
 * and its one-string answer in reply.  0: answered; -1: no answer within
 * timeout_ms (err says why, naming the server). */
int lmpi_ns_request(const lmpi_ns_server *s, const char *const *words, int n, char *reply, size_t len,
                    int timeout_ms, char *err, size_t errlen);

#endif
