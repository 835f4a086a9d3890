/* Generalized requests (MPI 5.0 §13.2): operations the user runs and
 * completes, waited on and tested like any other request.  The request
 * holds the user's three callbacks; completion.c calls lmpi_greq_query
 * when it delivers a status and lmpi_greq_release when the request goes. */
#include "binding/gen/impl.h"
#include "pt2pt/pt2pt.h"
#include "runtime/errhandler.h"

struct lmpi_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
};

lmpi_status lmpi_impl_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                                     MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                                     MPI_Request *request)
{
    if (!query_fn || !free_fn || !cancel_fn) {
        lmpi_err_detail("%s is NULL", !query_fn ? "query_fn" : !free_fn ? "free_fn" : "cancel_fn");
        return LMPI_ERR_ARG;
    }
    lmpi_request *r = lmpi_request_alloc(LMPI_REQ_GREQ);
    struct lmpi_greq *g = lmpi_malloc(sizeof(*g), LMPI_MEM_REQUEST);
    if (!r || !g) {
        if (r)
            lmpi_request_free(r);
        lmpi_free(g);
        return LMPI_ERR_NO_MEM;
    }
    *g = (struct lmpi_greq){query_fn, free_fn, cancel_fn, extra_state};
    r->greq = g;
    *request = (MPI_Request)r;
    return LMPI_OK;
}

/* The user's code, as the status the binding raises (its class). */
static lmpi_status user_result(int rc, const char *fn)
{
    if (rc == MPI_SUCCESS)
        return LMPI_OK;
    lmpi_err_detail("the generalized request's %s returned error %d", fn, rc);
    return lmpi_status_user(rc);
}

lmpi_status lmpi_greq_query(lmpi_request *r, MPI_Status *s)
{
    /* defaults the query function may leave alone */
    s->MPI_SOURCE = MPI_UNDEFINED;
    s->MPI_TAG = MPI_UNDEFINED;
    s->MPI_ERROR = MPI_SUCCESS;
    lmpi_status_set_bytes(s, 0);
    lmpi_status_set_cancelled(s, 0);
    return user_result(r->greq->query(r->greq->extra, s), "query_fn");
}

/* The request is going: the user's free function runs, then ours. */
lmpi_status lmpi_greq_release(lmpi_request *r)
{
    struct lmpi_greq *g = r->greq;
    lmpi_status st = user_result(g->free(g->extra), "free_fn");
    lmpi_free(g);
    r->greq = NULL;
    lmpi_request_free(r);
    return st;
}

lmpi_status lmpi_greq_cancel(lmpi_request *r)
{
    return user_result(r->greq->cancel(r->greq->extra, r->complete), "cancel_fn");
}

lmpi_status lmpi_impl_Grequest_complete(MPI_Request request)
{
    lmpi_request *r = lmpi_request_from_handle(request);
    if (!r || r->kind != LMPI_REQ_GREQ || r->complete) {
        lmpi_err_detail("request is not a pending generalized request");
        return LMPI_ERR_REQUEST;
    }
    r->complete = 1;
    /* freed by MPI_Request_free before it completed: it goes now */
    return r->free_when_done ? lmpi_greq_release(r) : LMPI_OK;
}
