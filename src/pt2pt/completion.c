/* Completing requests: Wait/Test and their any/all/some forms,
 * Request_get_status*, Request_free, Cancel, and the status queries.
 *
 * Every request kind answers two questions the same way for all callers:
 * lmpi_request_done() (finished, nothing freed) and finish() (status out,
 * resources released, handle nulled unless the request is persistent). */
#include <string.h>

#include "binding/gen/impl.h"
#include "datatype/datatype.h"
#include "ft/ft.h"
#include "pt2pt/pt2pt.h"
#include "runtime/errhandler.h"
#include "runtime/config.h"

bool lmpi_request_done(lmpi_request *r)
{
    switch (r->kind) {
    case LMPI_REQ_SEND:
    case LMPI_REQ_RECV:
        /* after a failure or a revoke: may it still complete? */
        return r->complete || (LMPI_UNLIKELY(lmpi_ft_active) && lmpi_ft_request_check(r));
    case LMPI_REQ_PERSISTENT:
        return !r->active || !r->child[0] || lmpi_request_done(r->child[0]);
    case LMPI_REQ_COMPOUND:
        return lmpi_request_done(r->child[0]) && lmpi_request_done(r->child[1]);
    case LMPI_REQ_FLUSH:
        return *r->pending == 0;
    case LMPI_REQ_SCHED:
        if (r->persistent && !r->active)
            return true;
        return r->complete || (r->complete = r->advance(r));
    case LMPI_REQ_GREQ:
        return r->complete;
    case LMPI_REQ_PART:
        return lmpi_part_done(r);
    }
    return true;
}

void lmpi_request_wait(lmpi_request *r)
{
    unsigned idle = 0;
    if (r->kind == LMPI_REQ_SEND || r->kind == LMPI_REQ_RECV) {
        /* the blocking calls' loop: the flag, and a failure's check (src/ft)
         * only on idle polls */
        while (!r->complete) {
            if (lmpi_progress_poll() > 0)
                idle = 0;
            else if (LMPI_UNLIKELY(lmpi_ft_active) && lmpi_ft_request_check(r))
                return;
            else
                lmpi_progress_idle(&idle);
        }
        return;
    }
    while (!lmpi_request_done(r)) {
        if (lmpi_progress_poll() > 0)
            idle = 0;
        else
            lmpi_progress_idle(&idle);
    }
}

static void empty_status(MPI_Status *s)
{
    if (s == MPI_STATUS_IGNORE)
        return;
    s->MPI_SOURCE = MPI_ANY_SOURCE;
    s->MPI_TAG = MPI_ANY_TAG;
    s->MPI_ERROR = MPI_SUCCESS;
    lmpi_status_set_bytes(s, 0);
    lmpi_status_set_cancelled(s, 0);
}

lmpi_status lmpi_pt2pt_status_error(const MPI_Status *s)
{
    switch (s->MPI_ERROR) {
    case MPI_ERR_TRUNCATE:
        lmpi_err_detail("the message is longer than the receive buffer");
        return LMPI_ERR_TRUNCATE;
    case MPIX_ERR_PROC_FAILED: /* src/ft */
        lmpi_err_detail("the process on the other side failed");
        return LMPI_ERR_PROC_FAILED;
    case MPIX_ERR_PROC_FAILED_PENDING:
        lmpi_err_detail("a process that could have sent it failed (acknowledge with MPIX_Comm_ack_failed)");
        return LMPI_ERR_PROC_FAILED_PENDING;
    case MPIX_ERR_REVOKED:
        lmpi_err_detail("the communicator was revoked while the request was pending");
        return LMPI_ERR_REVOKED;
    }
    return LMPI_OK;
}

/* The status of a done request, leaving it as it is (Request_get_status). */
static void peek_status(lmpi_request *r, MPI_Status *s)
{
    switch (r->kind) {
    case LMPI_REQ_RECV:
        *s = r->status;
        return;
    case LMPI_REQ_PERSISTENT:
        if (r->active && r->child[0])
            peek_status(r->child[0], s);
        else
            empty_status(s);
        return;
    case LMPI_REQ_COMPOUND:
        peek_status(r->child[1], s);
        return;
    case LMPI_REQ_GREQ:
        lmpi_greq_query(r, s);
        return;
    case LMPI_REQ_PART:
        lmpi_part_status(r, s);
        return;
    case LMPI_REQ_SEND:
        empty_status(s);
        lmpi_status_set_cancelled(s, lmpi_status_cancelled(&r->status));
        s->MPI_ERROR = r->status.MPI_ERROR; /* 0, or why it failed (src/ft) */
        return;
    default:
        empty_status(s);
        return;
    }
}


/* A done request delivers its status and releases what it holds.  Returns
 * the error its status carries.  *handle becomes MPI_REQUEST_NULL unless
 * the request is persistent. */
static lmpi_status finish_request(lmpi_request *r, MPI_Status *status, MPI_Request *handle)
{
    if (LMPI_LIKELY((r->kind == LMPI_REQ_SEND || r->kind == LMPI_REQ_RECV) && !lmpi_ft_active)) {
        /* the common case without the status copied to a temporary: the
         * error is the one its own status carries */
        if (status != MPI_STATUS_IGNORE)
            peek_status(r, status);
        lmpi_status err = r->status.MPI_ERROR == MPI_SUCCESS ? LMPI_OK : lmpi_pt2pt_status_error(&r->status);
        lmpi_request_free(r);
        if (handle)
            *handle = MPI_REQUEST_NULL;
        return err;
    }
    MPI_Status tmp;
    MPI_Status *s = status == MPI_STATUS_IGNORE ? &tmp : status;
    if (r->kind == LMPI_REQ_GREQ) { /* the user's query fills the status, then the user's free */
        lmpi_status q = lmpi_greq_query(r, s);
        lmpi_status f = lmpi_greq_release(r);
        if (handle)
            *handle = MPI_REQUEST_NULL;
        return q != LMPI_OK ? q : f;
    }
    if (LMPI_UNLIKELY(lmpi_ft_active) && lmpi_ft_pending(r)) {
        /* still posted (src/ft): the error now, the request stays */
        *s = r->status;
        r->status.MPI_ERROR = MPI_SUCCESS; /* waited for again once the failure is acknowledged */
        return lmpi_pt2pt_status_error(s);
    }
    peek_status(r, s);
    lmpi_status err = lmpi_pt2pt_status_error(s);
    switch (r->kind) {
    case LMPI_REQ_SCHED:
        err = r->sched_error;
        if (r->persistent) { /* inactive until the next MPI_Start */
            r->active = false;
            r->complete = 0;
            return err;
        }
        if (r->sched_free)
            r->sched_free(r);
        break;
    case LMPI_REQ_PERSISTENT:
        if (r->child[0])
            lmpi_request_free(r->child[0]);
        r->child[0] = NULL;
        r->active = false;
        return err;
    case LMPI_REQ_PART: /* inactive until the next MPI_Start */
        err = r->sched_error;
        r->active = false;
        r->complete = 0;
        return err;
    case LMPI_REQ_COMPOUND:
        if (r->replace_buf) {
            if (r->dt) /* non-contiguous: the bytes arrived packed */
                lmpi_dt_unpack(r->replace_buf, r->count, r->dt, 0, r->child[1]->bytes, r->child[1]->buf);
            else
                memcpy(r->replace_buf, r->child[1]->buf, r->child[1]->bytes);
            lmpi_free(r->child[1]->buf);
        }
        lmpi_request_free(r->child[0]);
        lmpi_request_free(r->child[1]);
        break;
    default:
        break;
    }
    lmpi_request_free(r);
    if (handle)
        *handle = MPI_REQUEST_NULL;
    return err;
}

/* The error of a failed request is raised on its communicator. */
static lmpi_status finish(lmpi_request *r, MPI_Status *status, MPI_Request *handle)
{
    lmpi_comm *c = r->comm;
    lmpi_status err = finish_request(r, status, handle);
    if (err != LMPI_OK && c)
        lmpi_err_blame_comm(c);
    return err;
}

/* MPI_REQUEST_NULL and inactive persistent requests take part in no
 * completion: *out = NULL for them. */
static lmpi_status request_arg(MPI_Request h, lmpi_request **out)
{
    *out = NULL;
    if (h == MPI_REQUEST_NULL)
        return LMPI_OK;
    lmpi_request *r = lmpi_request_from_handle(h);
    if (!r) {
        lmpi_err_detail("not an active request (handle %p: freed, completed or garbage)", (void *)h);
        return LMPI_ERR_REQUEST;
    }
    if ((r->kind == LMPI_REQ_PERSISTENT || r->kind == LMPI_REQ_PART) && !r->active)
        return LMPI_OK;
    *out = r;
    return LMPI_OK;
}

/* A handle of an array that request_array accepted: the arena lookup and
 * the magic word were checked there, once per call, not again in every
 * pass over the array (the second look cost ~20 instructions per request
 * of a Waitall). */
static inline lmpi_request *request_checked(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return NULL;
    lmpi_request *r = (lmpi_request *)h;
    if ((r->kind == LMPI_REQ_PERSISTENT || r->kind == LMPI_REQ_PART) && !r->active)
        return NULL;
    return r;
}

static lmpi_status request_array(int count, const MPI_Request reqs[], const char *what)
{
    if (count > 0 && !reqs) {
        lmpi_err_detail("%s is NULL", what);
        return LMPI_ERR_ARG;
    }
    for (int i = 0; i < count; i++) {
        lmpi_request *r;
        if (request_arg(reqs[i], &r) != LMPI_OK) {
            lmpi_err_detail("%s[%d] is not a valid request (handle %p)", what, i, (void *)reqs[i]);
            return LMPI_ERR_REQUEST;
        }
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Wait(MPI_Request *request, MPI_Status *status)
{
    lmpi_request *r;
    lmpi_status st = request_arg(*request, &r);
    if (st != LMPI_OK)
        return st;
    if (!r) {
        empty_status(status);
        return LMPI_OK;
    }
    lmpi_request_wait(r);
    return finish(r, status, request);
}

lmpi_status lmpi_impl_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    lmpi_request *r;
    lmpi_status st = request_arg(*request, &r);
    if (st != LMPI_OK)
        return st;
    if (!r) {
        *flag = 1;
        empty_status(status);
        return LMPI_OK;
    }
    if (!lmpi_request_done(r))
        lmpi_progress_poll();
    *flag = lmpi_request_done(r);
    if (!*flag) {
        lmpi_progress_missed();
        return LMPI_OK;
    }
    lmpi_progress_found();
    bool pending = LMPI_UNLIKELY(lmpi_ft_active) && lmpi_ft_pending(r);
    st = finish(r, status, request);
    if (pending)
        *flag = 0; /* the error, but not complete: it stays posted (src/ft), as in Open MPI */
    return st;
}

/* Finish every request of the array; per-request errors go to the statuses
 * and the call reports MPI_ERR_IN_STATUS, as the standard asks. */
/* Finish reqs[i] (wait first if `wait`); false: it failed. */
static bool finish_at(MPI_Request reqs[], int i, MPI_Status statuses[], bool wait)
{
    MPI_Status *s = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    lmpi_request *r = request_checked(reqs[i]);
    if (!r) {
        empty_status(s);
        return true;
    }
    if (wait)
        lmpi_request_wait(r);
    return finish(r, s, &reqs[i]) == LMPI_OK;
}

static lmpi_status all_finished(bool failed)
{
    if (failed) {
        lmpi_err_detail("at least one request failed; see the statuses");
        return LMPI_ERR_IN_STATUS;
    }
    return LMPI_OK;
}

static lmpi_status finish_all(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    bool failed = false;
    for (int i = 0; i < count; i++)
        failed |= !finish_at(reqs, i, statuses, false);
    return all_finished(failed);
}

/* Each request is finished as soon as it is done: one pass instead of a
 * wait pass and a finish pass (the array was checked first, so nothing is
 * finished when one handle is bad). */
lmpi_status lmpi_impl_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    lmpi_status st = request_array(count, reqs, "array_of_requests");
    if (st != LMPI_OK)
        return st;
    bool failed = false;
    for (int i = 0; i < count; i++)
        failed |= !finish_at(reqs, i, statuses, true);
    return all_finished(failed);
}

static bool all_done(int count, const MPI_Request reqs[])
{
    for (int i = 0; i < count; i++) {
        lmpi_request *r = request_checked(reqs[i]);
        if (r && !lmpi_request_done(r))
            return false;
    }
    return true;
}

lmpi_status lmpi_impl_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    lmpi_status st = request_array(count, reqs, "array_of_requests");
    if (st != LMPI_OK)
        return st;
    if (!all_done(count, reqs))
        lmpi_progress_poll();
    *flag = all_done(count, reqs);
    if (!*flag) {
        lmpi_progress_missed();
        return LMPI_OK;
    }
    lmpi_progress_found();
    return finish_all(count, reqs, statuses);
}

/* One pass over the array: index of a done request, MPI_UNDEFINED when none
 * is active, -1 when some are active but none is done. */
static int find_done(int count, const MPI_Request reqs[])
{
    bool any_active = false;
    for (int i = 0; i < count; i++) {
        lmpi_request *r = request_checked(reqs[i]);
        if (!r)
            continue;
        any_active = true;
        if (lmpi_request_done(r))
            return i;
    }
    return any_active ? -1 : MPI_UNDEFINED;
}

lmpi_status lmpi_impl_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    lmpi_status st = request_array(count, reqs, "array_of_requests");
    if (st != LMPI_OK)
        return st;
    int i;
    unsigned idle = 0;
    while ((i = find_done(count, reqs)) == -1)
        if (lmpi_progress_poll() == 0)
            lmpi_progress_idle(&idle);
    *index = i;
    if (i == MPI_UNDEFINED) {
        empty_status(status);
        return LMPI_OK;
    }
    lmpi_request *r = request_checked(reqs[i]);
    return finish(r, status, &reqs[i]);
}

lmpi_status lmpi_impl_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    lmpi_status st = request_array(count, reqs, "array_of_requests");
    if (st != LMPI_OK)
        return st;
    int i = find_done(count, reqs);
    if (i == -1) {
        lmpi_progress_poll();
        i = find_done(count, reqs);
    }
    if (i == -1) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        lmpi_progress_missed();
        return LMPI_OK;
    }
    lmpi_progress_found();
    *flag = 1;
    *index = i;
    if (i == MPI_UNDEFINED) {
        empty_status(status);
        return LMPI_OK;
    }
    lmpi_request *r = request_checked(reqs[i]);
    bool pending = LMPI_UNLIKELY(lmpi_ft_active) && lmpi_ft_pending(r);
    st = finish(r, status, &reqs[i]);
    if (pending)
        *flag = 0; /* as MPI_Test: index names it, but it is not complete */
    return st;
}

/* Every done request of the array: finished (reqs not NULL: Waitsome,
 * Testsome) or only looked at (Request_get_status_some).  *outcount and
 * indices as those calls report them. */
static lmpi_status some_done(int count, const MPI_Request in[], MPI_Request reqs[], int *outcount, int indices[],
                             MPI_Status statuses[])
{
    int n = 0;
    bool any_active = false, failed = false;
    for (int i = 0; i < count; i++) {
        lmpi_request *r = request_checked(in[i]);
        if (!r)
            continue;
        any_active = true;
        if (!lmpi_request_done(r))
            continue;
        MPI_Status *s = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        if (reqs && finish(r, s, &reqs[i]) != LMPI_OK)
            failed = true;
        else if (!reqs && s != MPI_STATUS_IGNORE)
            peek_status(r, s);
        indices[n++] = i;
    }
    *outcount = any_active ? n : MPI_UNDEFINED;
    if (failed) {
        lmpi_err_detail("at least one request failed; see the statuses");
        return LMPI_ERR_IN_STATUS;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Waitsome(int count, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    lmpi_status st = request_array(count, reqs, "array_of_requests");
    if (st != LMPI_OK)
        return st;
    unsigned idle = 0;
    while (find_done(count, reqs) == -1)
        if (lmpi_progress_poll() == 0)
            lmpi_progress_idle(&idle);
    return some_done(count, reqs, reqs, outcount, indices, statuses);
}

lmpi_status lmpi_impl_Testsome(int count, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    lmpi_status st = request_array(count, reqs, "array_of_requests");
    if (st != LMPI_OK)
        return st;
    lmpi_progress_poll();
    st = some_done(count, reqs, reqs, outcount, indices, statuses);
    lmpi_progress_tested(*outcount != 0);
    return st;
}

/* ---- status without completion (MPI 4.1 adds the array forms) ------------ */
lmpi_status lmpi_impl_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    lmpi_request *r;
    lmpi_status st = request_arg(request, &r);
    if (st != LMPI_OK)
        return st;
    if (r && !lmpi_request_done(r))
        lmpi_progress_poll();
    *flag = !r || lmpi_request_done(r);
    lmpi_progress_tested(*flag);
    if (!*flag || status == MPI_STATUS_IGNORE)
        return LMPI_OK;
    if (r)
        peek_status(r, status);
    else
        empty_status(status);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Request_get_status_any(int count, const MPI_Request reqs[], int *index, int *flag,
                                             MPI_Status *status)
{
    lmpi_status st = request_array(count, reqs, "array_of_requests");
    if (st != LMPI_OK)
        return st;
    lmpi_progress_poll();
    int i = find_done(count, reqs);
    *flag = i != -1;
    *index = i == -1 ? MPI_UNDEFINED : i;
    lmpi_progress_tested(*flag);
    if (i >= 0 && status != MPI_STATUS_IGNORE) {
        lmpi_request *r = request_checked(reqs[i]);
        peek_status(r, status);
    } else if (i == MPI_UNDEFINED) {
        empty_status(status);
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Request_get_status_all(int count, const MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    lmpi_status st = request_array(count, reqs, "array_of_requests");
    if (st != LMPI_OK)
        return st;
    lmpi_progress_poll();
    *flag = all_done(count, reqs);
    lmpi_progress_tested(*flag);
    if (*flag && statuses != MPI_STATUSES_IGNORE)
        for (int i = 0; i < count; i++) {
            lmpi_request *r = request_checked(reqs[i]);
            if (r)
                peek_status(r, &statuses[i]);
            else
                empty_status(&statuses[i]);
        }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Request_get_status_some(int count, const MPI_Request reqs[], int *outcount, int indices[],
                                              MPI_Status statuses[])
{
    lmpi_status st = request_array(count, reqs, "array_of_requests");
    if (st != LMPI_OK)
        return st;
    lmpi_progress_poll();
    st = some_done(count, reqs, NULL, outcount, indices, statuses);
    lmpi_progress_tested(*outcount != 0);
    return st;
}

/* ---- free and cancel ------------------------------------------------------- */
/* An active request without a handle finishes on its own: sends and
 * receives free themselves when they complete. */
static void orphan(lmpi_request *r)
{
    if (lmpi_request_done(r))
        lmpi_request_free(r);
    else
        r->internal = true;
}

lmpi_status lmpi_impl_Request_free(MPI_Request *request)
{
    if (*request == MPI_REQUEST_NULL) {
        lmpi_err_detail("request is MPI_REQUEST_NULL");
        return LMPI_ERR_REQUEST;
    }
    lmpi_request *r = lmpi_request_from_handle(*request);
    if (!r) {
        lmpi_err_detail("not a request (handle %p)", (void *)*request);
        return LMPI_ERR_REQUEST;
    }
    switch (r->kind) {
    case LMPI_REQ_SEND:
    case LMPI_REQ_RECV:
        orphan(r);
        break;
    case LMPI_REQ_PERSISTENT:
        if (r->active && r->child[0])
            orphan(r->child[0]);
        lmpi_request_free(r);
        break;
    case LMPI_REQ_FLUSH:
        lmpi_request_free(r); /* nothing is attached to it */
        break;
    case LMPI_REQ_PART: /* an active round finishes first */
        lmpi_request_wait(r);
        lmpi_part_free(r);
        break;
    case LMPI_REQ_GREQ: /* goes when the user completes it */
        *request = MPI_REQUEST_NULL;
        if (r->complete)
            return lmpi_greq_release(r);
        r->free_when_done = true;
        return LMPI_OK;
    case LMPI_REQ_COMPOUND:
    case LMPI_REQ_SCHED:
        /* the replace form still has to copy its data home, a schedule has
         * to finish its steps: wait for them */
        lmpi_request_wait(r);
        if (r->kind == LMPI_REQ_SCHED && r->persistent) {
            r->sched_free(r);
            lmpi_request_free(r);
            break;
        }
        finish(r, MPI_STATUS_IGNORE, NULL);
        break;
    }
    *request = MPI_REQUEST_NULL;
    return LMPI_OK;
}

/* A receive still waiting in its queue is taken out and completes as
 * cancelled.  A send that has left cannot be called back: its cancel fails
 * and it completes normally (MPI_Test_cancelled then says false), which the
 * standard allows. */
static void cancel_one(lmpi_request *r)
{
    if (!r)
        return;
    switch (r->kind) {
    case LMPI_REQ_RECV:
        if (r->mq && !r->complete) {
            lmpi_match_cancel(r->mq, &r->mqi);
            r->mq = NULL;
            r->status.MPI_SOURCE = MPI_ANY_SOURCE;
            r->status.MPI_TAG = MPI_ANY_TAG;
            r->status.MPI_ERROR = MPI_SUCCESS;
            lmpi_status_set_bytes(&r->status, 0);
            lmpi_status_set_cancelled(&r->status, 1);
            r->complete = 1;
            if (r->internal)
                lmpi_request_free(r);
        }
        return;
    case LMPI_REQ_PERSISTENT:
        if (r->active)
            cancel_one(r->child[0]);
        return;
    case LMPI_REQ_COMPOUND:
        cancel_one(r->child[1]);
        return;
    case LMPI_REQ_SEND:
        lmpi_pt2pt_cancel_send(r);
        return;
    case LMPI_REQ_FLUSH:
    case LMPI_REQ_SCHED:
    case LMPI_REQ_GREQ:
    case LMPI_REQ_PART:
        return;
    }
}

void lmpi_pt2pt_cancel_recv(lmpi_request *r) { cancel_one(r); }

lmpi_status lmpi_impl_Cancel(MPI_Request *request)
{
    lmpi_request *r;
    lmpi_status st = request_arg(*request, &r);
    if (st != LMPI_OK)
        return st;
    if (*request == MPI_REQUEST_NULL) {
        lmpi_err_detail("request is MPI_REQUEST_NULL");
        return LMPI_ERR_REQUEST;
    }
    if (r && r->kind == LMPI_REQ_GREQ)
        return lmpi_greq_cancel(r);
    cancel_one(r);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (!status) {
        lmpi_err_detail("status is NULL");
        return LMPI_ERR_ARG;
    }
    *flag = lmpi_status_cancelled(status) != 0;
    return LMPI_OK;
}

/* ---- counts ---------------------------------------------------------------- */
lmpi_status lmpi_impl_Get_count(const MPI_Status *status, lmpi_datatype *datatype, MPI_Count *count)
{
    if (!status) {
        lmpi_err_detail("status is NULL");
        return LMPI_ERR_ARG;
    }
    int64_t bytes = lmpi_status_bytes(status);
    if (datatype->size == 0)
        *count = 0;
    else
        *count = bytes % datatype->size ? MPI_UNDEFINED : bytes / datatype->size;
    return LMPI_OK;
}

/* Basic elements: for the predefined types of this version, the count. */
/* Basic elements: for derived types also the elements of a partial last
 * instance (MPI_UNDEFINED when the bytes end inside one). */
lmpi_status lmpi_impl_Get_elements(const MPI_Status *status, lmpi_datatype *datatype, MPI_Count *count)
{
    if (!status || status == MPI_STATUS_IGNORE) {
        lmpi_err_detail("status is NULL or MPI_STATUS_IGNORE");
        return LMPI_ERR_ARG;
    }
    MPI_Count n = lmpi_dt_elements(datatype, lmpi_status_bytes(status));
    *count = n < 0 ? MPI_UNDEFINED : n;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Get_elements_x(const MPI_Status *status, lmpi_datatype *datatype, MPI_Count *count)
{
    return lmpi_impl_Get_elements(status, datatype, count);
}

void lmpi_pt2pt_wait_blocking(lmpi_request *r)
{
    lmpi_request_wait(r);
    if (LMPI_UNLIKELY(lmpi_ft_active) && lmpi_ft_pending(r))
        lmpi_ft_pending_cancel(r); /* a blocking call leaves nothing posted (src/ft) */
}

lmpi_status lmpi_pt2pt_wait_free(lmpi_request *r, MPI_Status *status)
{
    lmpi_pt2pt_wait_blocking(r);
    return finish(r, status, NULL);
}
