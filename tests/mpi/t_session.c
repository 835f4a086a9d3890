/* MPI sessions: process sets, error handlers and session buffers, with and
 * without the world model.
 *   t_session mixed    Session_init, MPI_Init, MPI_Finalize, Session_finalize
 *   t_session only     sessions alone (two of them), no MPI_Init at all
 *   t_session reinit   a session, finalized, then two more (issue 41): groups
 *                      of the first still work, communicators from a
 *                      session's group use its buffer for MPI_Bsend, and the
 *                      from-group constructor's errors reach its handler */
#include <string.h>

#include <mpi.h>
#include <stdio.h>

static int failures;
#define CHECK(c)                                                                \
    do {                                                                        \
        if (!(c)) {                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                         \
        }                                                                       \
    } while (0)

static int session_handler_calls;
static void on_session_error(MPI_Session *s, int *code, ...)
{
    (void)s;
    (void)code;
    session_handler_calls++;
}

static void use_session(MPI_Session s)
{
    int n = 0;
    CHECK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n) == MPI_SUCCESS && n == 2);
    char name[64];
    int len = 0;
    MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL); /* ask the length */
    CHECK(len == (int)strlen("mpi://WORLD") + 1);
    len = sizeof(name);
    MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 1, &len, name);
    CHECK(strcmp(name, "mpi://SELF") == 0);
    char buf[4096];
    CHECK(MPI_Session_attach_buffer(s, buf, sizeof(buf)) == MPI_SUCCESS);
    MPI_Session_flush_buffer(s);
    MPI_Request r;
    CHECK(MPI_Session_iflush_buffer(s, &r) == MPI_SUCCESS);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    void *back;
    int size;
    CHECK(MPI_Session_detach_buffer(s, &back, &size) == MPI_SUCCESS && back == buf && size == (int)sizeof(buf));
    MPI_Errhandler e;
    MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN);
    MPI_Session_get_errhandler(s, &e);
    CHECK(e == MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&e);
    /* errors of session functions reach the session's own handler */
    int cls = -1;
    MPI_Error_class(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 7, &len, name), &cls);
    CHECK(cls == MPI_ERR_ARG);
    MPI_Errhandler mine;
    CHECK(MPI_Session_create_errhandler(on_session_error, &mine) == MPI_SUCCESS);
    MPI_Session_set_errhandler(s, mine);
    MPI_Errhandler_free(&mine);
    int before = session_handler_calls;
    int rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, name);
    CHECK(rc != MPI_SUCCESS && session_handler_calls == before + 1);
    MPI_Session_call_errhandler(s, MPI_ERR_OTHER);
    CHECK(session_handler_calls == before + 2);
    MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN);
}

static int comm_handler_calls;
static void on_comm_error(MPI_Comm *c, int *code, ...)
{
    (void)c;
    (void)code;
    comm_handler_calls++;
}

/* A ring exchange with MPI_Bsend on a communicator from the session's
 * world group; no buffer but the session's is attached. */
static void bsend_in(MPI_Session s, const char *tag)
{
    MPI_Group g;
    MPI_Comm c;
    CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g) == MPI_SUCCESS);
    CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) == MPI_SUCCESS);
    MPI_Group_free(&g);
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    static char buf[4 * (MPI_BSEND_OVERHEAD + 64)];
    CHECK(MPI_Session_attach_buffer(s, buf, sizeof(buf)) == MPI_SUCCESS);
    int v = 100 + r, w = -1;
    CHECK(MPI_Bsend(&v, 1, MPI_INT, (r + 1) % n, 3, c) == MPI_SUCCESS);
    MPI_Recv(&w, 1, MPI_INT, (r + n - 1) % n, 3, c, MPI_STATUS_IGNORE);
    CHECK(w == 100 + (r + n - 1) % n);
    void *back;
    int size;
    CHECK(MPI_Session_detach_buffer(s, &back, &size) == MPI_SUCCESS && back == buf);
    MPI_Comm_free(&c);
}

static void reinit(void)
{
    MPI_Session s1, s2, s3;
    MPI_Group old;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1) == MPI_SUCCESS);
    CHECK(MPI_Group_from_session_pset(s1, "mpi://WORLD", &old) == MPI_SUCCESS);
    bsend_in(s1, "t_session.first");
    /* the from-group constructor's errors go to the handler it was given */
    MPI_Errhandler eh;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_create_errhandler(on_comm_error, &eh);
    int rc = MPI_Comm_create_from_group(MPI_GROUP_NULL, "t_session.bad", MPI_INFO_NULL, eh, &c);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_GROUP && comm_handler_calls == 1 && c == MPI_COMM_NULL);
    MPI_Errhandler_free(&eh);
    /* a NULL name with room asked for is an error, not a crash */
    int len = 16;
    CHECK(MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, 0, &len, NULL) != MPI_SUCCESS);
    CHECK(MPI_Session_finalize(&s1) == MPI_SUCCESS);
    /* again, twice at once; the first session's group still answers */
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2) == MPI_SUCCESS);
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s3) == MPI_SUCCESS);
    int gsize = -1, grank = -1;
    CHECK(MPI_Group_size(old, &gsize) == MPI_SUCCESS && gsize >= 1);
    CHECK(MPI_Group_rank(old, &grank) == MPI_SUCCESS && grank >= 0 && grank < gsize);
    MPI_Group_free(&old);
    bsend_in(s2, "t_session.second");
    bsend_in(s3, "t_session.third");
    CHECK(MPI_Session_finalize(&s3) == MPI_SUCCESS);
    CHECK(MPI_Session_finalize(&s2) == MPI_SUCCESS);
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1) == MPI_SUCCESS);
    CHECK(MPI_Session_finalize(&s1) == MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "mixed";
    int flag = -1;
    if (!strcmp(mode, "reinit")) {
        reinit();
        if (failures)
            fprintf(stderr, "t_session reinit: %d failures\n", failures);
        else
            printf("t_session reinit: passed\n");
        return failures ? 1 : 0;
    }
    MPI_Session s1, s2;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1) == MPI_SUCCESS);
    MPI_Initialized(&flag);
    CHECK(flag == 0); /* a session is not the world model */
    use_session(s1);
    int rank = 0;
    if (!strcmp(mode, "mixed")) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Initialized(&flag);
        CHECK(flag == 1);
        int v = rank, w = -1, size;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 0, &w, 1, MPI_INT, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(w == (rank + size - 1) % size);
        MPI_Finalize();
        MPI_Finalized(&flag);
        CHECK(flag == 1);
        use_session(s1); /* the session outlives MPI_Finalize */
    } else {
        CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s2) == MPI_SUCCESS);
        use_session(s2);
        CHECK(MPI_Session_finalize(&s2) == MPI_SUCCESS && s2 == MPI_SESSION_NULL);
    }
    CHECK(MPI_Session_finalize(&s1) == MPI_SUCCESS);
    if (failures)
        fprintf(stderr, "t_session %s: %d failures\n", mode, failures);
    else if (rank == 0)
        printf("t_session %s: passed\n", mode);
    return failures ? 1 : 0;
}
