/* Dynamic processes: spawn (single and multiple, info keys, errcodes),
 * the parent intercommunicator and merged communicators across groups,
 * ports with connect/accept, the name service, join, bad input, the
 * universe limit with and without "soft", and spawn/disconnect cycles that
 * must leave nothing behind.
 *
 *   t_dpm [case]          as a parent (under mpiexec or as a singleton)
 *   t_dpm serve|visit     one of two jobs started independently that meet
 *                         through the name service (T_DPM_SERVICE; with
 *                         T_DPM_TWICE both ranks 0 meet alone first)
 *   t_dpm child MODE ...  what a spawned copy does (MODE: echo, args, quit) */
#include <arpa/inet.h>
#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpitest.h"

static int rank, size;
static char self_path[4096];

#define BIG (1 << 20) /* past the eager limit: a single-copy pull across groups */

static void check_code(int rc, int cls)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    CHECK_EQ(c, cls);
}

/* ---- the children ----------------------------------------------------------- */

static int sessions_side(const char *prefix, int expect_remote);
static int iccreate_side(MPI_Comm peer, int parents);
static int iccreate_once(MPI_Comm peer, int parents, int via_merge);
static int iccreate2_child(MPI_Comm parent);

static int child(int argc, char **argv, MPI_Comm parent)
{
    const char *mode = argc > 2 ? argv[2] : "echo";
    int crank, csize, psize;
    MPI_Comm_rank(MPI_COMM_WORLD, &crank);
    MPI_Comm_size(MPI_COMM_WORLD, &csize);
    MPI_Comm_remote_size(parent, &psize);
    int failures = 0;
    char pname[MPI_MAX_OBJECT_NAME] = "";
    int plen = 0;
    MPI_Comm_get_name(parent, pname, &plen);
    failures += strcmp(pname, "MPI_COMM_PARENT") != 0;
    if (!strcmp(mode, "echo")) {
        /* a small and a large message from the parents' root, answered +1 */
        int v;
        MPI_Recv(&v, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
        v += 1 + crank;
        MPI_Send(&v, 1, MPI_INT, 0, 2, parent);
        char *big = malloc(BIG);
        MPI_Recv(big, BIG, MPI_CHAR, 0, 3, parent, MPI_STATUS_IGNORE);
        for (int i = 0; i < BIG; i++)
            failures += big[i] != (char)(i * 7 + 1);
        for (int i = 0; i < BIG; i++)
            big[i] = (char)(i * 3 + crank);
        MPI_Send(big, BIG, MPI_CHAR, 0, 4, parent);
        free(big);
        /* collectives on the parent intercommunicator */
        int b = -1;
        MPI_Bcast(&b, 1, MPI_INT, 0, parent);
        failures += b != 77;
        MPI_Reduce(&crank, NULL, 1, MPI_INT, MPI_SUM, 0, parent);
        /* merged: children after parents */
        MPI_Comm merged, half;
        MPI_Intercomm_merge(parent, 1, &merged);
        int mr, ms, one = 1, sum = 0;
        MPI_Comm_rank(merged, &mr);
        MPI_Comm_size(merged, &ms);
        failures += mr != psize + crank || ms != psize + csize;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
        failures += sum != ms;
        MPI_Comm_split(merged, mr % 2, -mr, &half);
        int hs;
        MPI_Comm_size(half, &hs);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, half);
        failures += sum != hs;
        MPI_Comm_free(&half);
        MPI_Comm_free(&merged);
        int *appnum, flag;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
        failures += !flag || *appnum != 0;
    } else if (!strcmp(mode, "echo1")) {
        int v;
        MPI_Recv(&v, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
        v++;
        MPI_Send(&v, 1, MPI_INT, 0, 2, parent);
    } else if (!strcmp(mode, "iccreate")) {
        failures += iccreate_side(parent, 0);
    } else if (!strcmp(mode, "iccreate2")) {
        failures += iccreate2_child(parent);
    } else if (!strcmp(mode, "late")) {
        /* a message to the last parent, which has never sent to us and
         * takes it only after we are gone (our inbox unlinked) */
        int v = 500 + crank;
        MPI_Send(&v, 1, MPI_INT, psize - 1, 8, parent);
    } else if (!strcmp(mode, "sessions")) {
        failures += sessions_side("lmpi://parent", psize);
    } else if (!strcmp(mode, "where")) {
        /* the host this child runs on, to the parents' root */
        char name[MPI_MAX_PROCESSOR_NAME] = "";
        int len;
        MPI_Get_processor_name(name, &len);
        MPI_Send(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 7, parent);
    } else if (!strcmp(mode, "args")) {
        /* report appnum and the first argument to the parents' root */
        int *appnum, flag, rec[2];
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
        rec[0] = flag ? *appnum : -1;
        rec[1] = argc > 3 ? argv[3][0] : 0;
        MPI_Gather(rec, 2, MPI_INT, NULL, 2, MPI_INT, 0, parent);
        char cwd[4096];
        if (getcwd(cwd, sizeof(cwd)) && argc > 4)
            failures += strcmp(cwd, argv[4]) != 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (crank == 0)
        MPI_Send(&failures, 1, MPI_INT, 0, 9, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return failures ? 1 : 0;
}

/* The session model across groups: the set naming the other side (found by
 * its prefix among the session's process sets), a group from it, and an
 * intercommunicator from the two groups; returns the failures. */
static int sessions_side(const char *prefix, int expect_remote)
{
    int failures = 0;
    MPI_Session s;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    int n;
    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
    char name[512] = "";
    for (int i = 0; i < n; i++) {
        char nm[512];
        int len = sizeof(nm);
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, nm);
        if (!strncmp(nm, prefix, strlen(prefix)))
            strcpy(name, nm);
    }
    failures += !name[0];
    MPI_Info info;
    char sz[16] = "";
    int flag = 0;
    if (name[0] && MPI_Session_get_pset_info(s, name, &info) == MPI_SUCCESS) {
        int len = sizeof(sz);
        MPI_Info_get_string(info, "mpi_size", &len, sz, &flag);
        MPI_Info_free(&info);
    }
    failures += !flag || atoi(sz) != expect_remote;
    MPI_Group mine, theirs;
    MPI_Group_from_session_pset(s, "mpi://WORLD", &mine);
    if (name[0] && MPI_Group_from_session_pset(s, name, &theirs) == MPI_SUCCESS) {
        MPI_Comm inter;
        int rc = MPI_Intercomm_create_from_groups(mine, 0, theirs, 0, "t_dpm-sessions", MPI_INFO_NULL,
                                                  MPI_ERRORS_RETURN, &inter);
        failures += rc != MPI_SUCCESS;
        if (rc == MPI_SUCCESS) {
            int rs, me, gs;
            MPI_Comm_remote_size(inter, &rs);
            MPI_Group_size(mine, &gs);
            MPI_Comm_rank(inter, &me);
            failures += rs != expect_remote;
            int *all = malloc(sizeof(int) * (size_t)rs), tagged = 1000 * gs + me;
            MPI_Allgather(&tagged, 1, MPI_INT, all, 1, MPI_INT, inter);
            for (int i = 0; i < rs; i++)
                failures += all[i] != 1000 * rs + i;
            free(all);
            MPI_Comm_free(&inter);
        }
        MPI_Group_free(&theirs);
    }
    MPI_Group_free(&mine);
    MPI_Session_finalize(&s);
    return failures;
}

/* The children's verdict, at the parents' root. */
static void children_verdict(MPI_Comm inter)
{
    if (rank == 0) {
        int f = -1;
        MPI_Recv(&f, 1, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE);
        CHECK_EQ(f, 0);
    }
}

/* ---- the cases ------------------------------------------------------------------- */

static void case_spawn(void)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL);
    int *usize, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    CHECK(!flag || *usize >= size);

    char *args[] = {"child", "echo", NULL};
    int errs[3] = {-1, -1, -1};
    MPI_Comm inter;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "wdir", "/tmp");
    CHECK_EQ(MPI_Comm_spawn(self_path, args, 3, info, 0, MPI_COMM_WORLD, &inter, errs), MPI_SUCCESS);
    MPI_Info_free(&info);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(errs[i], MPI_SUCCESS);
    int rs, is_inter;
    MPI_Comm_test_inter(inter, &is_inter);
    MPI_Comm_remote_size(inter, &rs);
    CHECK(is_inter);
    CHECK_EQ(rs, 3);
    if (rank == 0) {
        char *big = malloc(BIG), *back = malloc(BIG);
        for (int i = 0; i < BIG; i++)
            big[i] = (char)(i * 7 + 1);
        for (int c = 0; c < 3; c++) {
            int v = 100, r = 0;
            MPI_Send(&v, 1, MPI_INT, c, 1, inter);
            MPI_Recv(&r, 1, MPI_INT, c, 2, inter, MPI_STATUS_IGNORE);
            CHECK_EQ(r, 101 + c);
            MPI_Send(big, BIG, MPI_CHAR, c, 3, inter);
            MPI_Status st;
            MPI_Recv(back, BIG, MPI_CHAR, MPI_ANY_SOURCE, 4, inter, &st);
            int bad = 0;
            for (int i = 0; i < BIG; i++)
                bad += back[i] != (char)(i * 3 + st.MPI_SOURCE);
            CHECK_EQ(bad, 0);
        }
        free(big);
        free(back);
    }
    int b = 77, sum = -1;
    MPI_Bcast(&b, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    MPI_Reduce(NULL, &sum, 1, MPI_INT, MPI_SUM, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    if (rank == 0)
        CHECK_EQ(sum, 0 + 1 + 2);
    MPI_Comm merged, half;
    MPI_Intercomm_merge(inter, 0, &merged);
    int mr, ms, one = 1, total = 0;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    CHECK_EQ(mr, rank);
    CHECK_EQ(ms, size + 3);
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, merged);
    CHECK_EQ(total, size + 3);
    MPI_Comm_split(merged, mr % 2, -mr, &half);
    int hs;
    MPI_Comm_size(half, &hs);
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, half);
    CHECK_EQ(total, hs);
    /* a merged communicator spans two process groups: its map is an mlut */
    MPI_Info used;
    char mode[64] = "";
    MPI_Comm_get_info(merged, &used);
    MPI_Info_get_string(used, "lmpi_rankmap", &(int){sizeof(mode)}, mode, &flag);
    MPI_Info_free(&used);
    CHECK(!strcmp(mode, "mlut"));
    MPI_Comm_free(&half);
    MPI_Comm_free(&merged);
    children_verdict(inter);
    MPI_Comm_disconnect(&inter);
    CHECK(inter == MPI_COMM_NULL);
}

static void case_multiple(void)
{
    char cwd[4096];
    if (!getcwd(cwd, sizeof(cwd)))
        strcpy(cwd, "/");
    char *a0[] = {"child", "args", "A", "/tmp", NULL}, *a1[] = {"child", "args", "B", cwd, NULL};
    char *cmds[2] = {self_path, self_path};
    char **argvs[2] = {a0, a1};
    int np[2] = {1, 2}, errs[3];
    MPI_Info infos[2];
    MPI_Info_create(&infos[0]);
    MPI_Info_set(infos[0], "wdir", "/tmp");
    infos[1] = MPI_INFO_NULL;
    MPI_Comm inter;
    CHECK_EQ(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &inter, errs), MPI_SUCCESS);
    MPI_Info_free(&infos[0]);
    int rec[6] = {0};
    MPI_Gather(NULL, 0, MPI_INT, rec, 2, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    if (rank == 0) {
        int want[6] = {0, 'A', 1, 'B', 1, 'B'};
        for (int i = 0; i < 6; i++)
            CHECK_EQ(rec[i], want[i]);
    }
    children_verdict(inter);
    MPI_Comm_disconnect(&inter);
}

/* Process sets of the spawned group on both sides, and an
 * intercommunicator made from the two groups alone. */
static void case_sessions(void)
{
    char *args[] = {"child", "sessions", NULL};
    MPI_Comm inter;
    CHECK_EQ(MPI_Comm_spawn(self_path, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE),
             MPI_SUCCESS);
    CHECK_EQ(sessions_side("lmpi://spawned/", 2), 0);
    children_verdict(inter);
    MPI_Comm_disconnect(&inter);
}

/* Children send to the last parent and finish before it receives: the
 * packets must still be delivered although their senders' inboxes are gone. */
static void case_late(void)
{
    char *args[] = {"child", "late", NULL};
    MPI_Comm inter;
    CHECK_EQ(MPI_Comm_spawn(self_path, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE),
             MPI_SUCCESS);
    children_verdict(inter);
    if (rank == size - 1) {
        usleep(300000); /* the children finalize meanwhile */
        int got[2] = {0, 0};
        for (int c = 0; c < 2; c++)
            MPI_Recv(&got[c], 1, MPI_INT, c, 8, inter, MPI_STATUS_IGNORE);
        CHECK_EQ(got[0], 500);
        CHECK_EQ(got[1], 501);
    }
    MPI_Comm_disconnect(&inter);
}

/* Several threads spawn at once (each over its own duplicate of
 * MPI_COMM_SELF): their handshakes must not take each other's messages. */
static void *spawn_thread(void *arg)
{
    MPI_Comm self = *(MPI_Comm *)arg, inter;
    char *args[] = {"child", "echo1", NULL};
    long ok = MPI_Comm_spawn(self_path, args, 1, MPI_INFO_NULL, 0, self, &inter, MPI_ERRCODES_IGNORE) == MPI_SUCCESS;
    if (ok) {
        int v = 7, r = 0;
        MPI_Sendrecv(&v, 1, MPI_INT, 0, 1, &r, 1, MPI_INT, 0, 2, inter, MPI_STATUS_IGNORE);
        ok = r == 8;
        int f = -1;
        MPI_Recv(&f, 1, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE);
        ok = ok && f == 0;
        MPI_Comm_disconnect(&inter);
    }
    return (void *)ok;
}

static void case_threads(void)
{
    int level;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE)
        return;
    enum { NT = 3 };
    MPI_Comm selfs[NT];
    pthread_t t[NT];
    for (int i = 0; i < NT; i++)
        MPI_Comm_dup(MPI_COMM_SELF, &selfs[i]);
    for (int i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, spawn_thread, &selfs[i]);
    for (int i = 0; i < NT; i++) {
        void *ok;
        pthread_join(t[i], &ok);
        CHECK(ok != NULL);
        MPI_Comm_free(&selfs[i]);
    }
}

/* Two halves of the world meet through a published port. */
static void case_connect(void)
{
    if (size < 2)
        return;
    MPI_Comm half, inter;
    int color = rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    char port[MPI_MAX_PORT_NAME] = "";
    if (color == 0) {
        if (rank == 0) {
            CHECK_EQ(MPI_Open_port(MPI_INFO_NULL, port), MPI_SUCCESS);
            CHECK_EQ(MPI_Publish_name("t_dpm-service", MPI_INFO_NULL, port), MPI_SUCCESS);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_EQ(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter), MPI_SUCCESS);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1)
            CHECK_EQ(MPI_Lookup_name("t_dpm-service", MPI_INFO_NULL, port), MPI_SUCCESS);
        CHECK_EQ(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter), MPI_SUCCESS);
    }
    int hs, rs;
    MPI_Comm_size(half, &hs);
    MPI_Comm_remote_size(inter, &rs);
    CHECK_EQ(hs + rs, size);
    /* every member sends its world rank to every remote member */
    int *all = malloc(sizeof(int) * (size_t)rs);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, inter);
    for (int i = 0; i < rs; i++)
        CHECK_EQ(all[i], 2 * i + (1 - color));
    free(all);
    MPI_Comm_disconnect(&inter);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_EQ(MPI_Unpublish_name("t_dpm-service", MPI_INFO_NULL, port), MPI_SUCCESS);
        CHECK_EQ(MPI_Close_port(port), MPI_SUCCESS);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 5, MPI_COMM_WORLD);
    }
    if (rank == 1) {
        /* the port is closed: connect fails, and so does looking the name up */
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        check_code(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter), MPI_ERR_PORT);
        check_code(MPI_Lookup_name("t_dpm-service", MPI_INFO_NULL, port), MPI_ERR_NAME);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* rank 0 answers the connect to its closed port while it waits here */
    MPI_Comm_free(&half);
}

/* A connect to a port nobody accepts on fails with MPI_ERR_PORT within its
 * info key "timeout": once while the owner waits inside MPI (it answers the
 * withdrawal), once while it is outside MPI (it never answers); a real
 * connect and accept on the same port still work afterwards. */
static void case_timeout(void)
{
    if (size < 2)
        return;
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0)
        CHECK_EQ(MPI_Open_port(MPI_INFO_NULL, port), MPI_SUCCESS);
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Comm inter;
    if (rank == 1) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "timeout", "0.3");
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        for (int round = 0; round < 2; round++) {
            double t0 = MPI_Wtime();
            check_code(MPI_Comm_connect(port, info, 0, MPI_COMM_SELF, &inter), MPI_ERR_PORT);
            double took = MPI_Wtime() - t0;
            CHECK(took >= 0.3 && took < 5.0);
            MPI_Send(&round, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
        }
        MPI_Info_free(&info);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
        CHECK_EQ(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter), MPI_SUCCESS);
    } else if (rank == 0) {
        int r;
        MPI_Recv(&r, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* polling meanwhile */
        sleep(2); /* outside MPI through the second attempt */
        MPI_Recv(&r, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_EQ(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter), MPI_SUCCESS);
    }
    if (rank < 2) {
        int v = rank == 0 ? 31 : -1;
        MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : 0, inter);
        if (rank == 1)
            CHECK_EQ(v, 31);
        MPI_Comm_disconnect(&inter);
    }
    if (rank == 0)
        MPI_Close_port(port);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Ranks 0 and 1 join over a TCP connection: to rank 0's host by name
 * (the ranks may be on different hosts), or over the loopback interface
 * where that name does not resolve. */
static void case_join(void)
{
    if (size < 2)
        return;
    int fd = -1;
    if (rank == 0) {
        int ls = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
        socklen_t al = sizeof(a);
        CHECK_EQ(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
        listen(ls, 1);
        getsockname(ls, (struct sockaddr *)&a, &al);
        char where[300] = "";
        gethostname(where, 255);
        int p = ntohs(a.sin_port);
        snprintf(where + strlen(where), sizeof(where) - strlen(where), " %d", p);
        MPI_Send(where, (int)sizeof(where), MPI_CHAR, 1, 6, MPI_COMM_WORLD);
        fd = accept(ls, NULL, NULL);
        close(ls);
    } else if (rank == 1) {
        char where[300], host[300];
        int p = 0;
        MPI_Recv(where, (int)sizeof(where), MPI_CHAR, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_EQ(sscanf(where, "%299s %d", host, &p), 2);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
        if (getaddrinfo(host, NULL, &hints, &res) == 0 && res) {
            a.sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
            freeaddrinfo(res);
        }
        fd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    }
    if (rank < 2) {
        MPI_Comm inter;
        CHECK_EQ(MPI_Comm_join(fd, &inter), MPI_SUCCESS);
        close(fd);
        int rs, v = rank * 10, w = -1;
        MPI_Comm_remote_size(inter, &rs);
        CHECK_EQ(rs, 1);
        MPI_Sendrecv(&v, 1, MPI_INT, 0, 0, &w, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE);
        CHECK_EQ(w, (1 - rank) * 10);
        MPI_Comm_disconnect(&inter);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Bad input: clear error classes, nothing hangs, the job goes on. */
static void case_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm inter = MPI_COMM_NULL;
    int errs[2] = {-1, -1};
    int rc = MPI_Comm_spawn("/nonexistent/t_dpm_child", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                            errs);
    check_code(rc, MPI_ERR_SPAWN);
    CHECK_EQ(errs[0], MPI_ERR_SPAWN); /* at every member */
    CHECK_EQ(errs[1], MPI_ERR_SPAWN);
    /* not executable: a plain file */
    char plain[64];
    snprintf(plain, sizeof(plain), "/tmp/t_dpm-plain-%d", (int)getpid());
    if (rank == 0) {
        FILE *f = fopen(plain, "w");
        if (f)
            fclose(f);
    }
    MPI_Bcast(plain, sizeof(plain), MPI_CHAR, 0, MPI_COMM_WORLD);
    rc = MPI_Comm_spawn(plain, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    check_code(rc, MPI_ERR_SPAWN);
    if (rank == 0)
        unlink(plain);
    /* a wdir that is not a directory */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "wdir", "/nonexistent-dir");
    rc = MPI_Comm_spawn(self_path, MPI_ARGV_NULL, 1, info, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    MPI_Info_free(&info);
    check_code(rc, MPI_ERR_SPAWN);
    if (rank == 0) {
        char port[MPI_MAX_PORT_NAME];
        check_code(MPI_Comm_connect("not-a-port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter), MPI_ERR_PORT);
        check_code(MPI_Comm_connect("lmpi-port:no-such-job:4:3:1", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter),
                   MPI_ERR_PORT);
        check_code(MPI_Comm_accept("lmpi-port:no-such-job:4:3:1", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter),
                   MPI_ERR_PORT);
        check_code(MPI_Close_port("not-a-port"), MPI_ERR_PORT);
        check_code(MPI_Lookup_name("t_dpm-never-published", MPI_INFO_NULL, port), MPI_ERR_NAME);
        check_code(MPI_Unpublish_name("t_dpm-never-published", MPI_INFO_NULL, "x"), MPI_ERR_SERVICE);
        MPI_Open_port(MPI_INFO_NULL, port);
        CHECK_EQ(MPI_Publish_name("t_dpm-twice", MPI_INFO_NULL, port), MPI_SUCCESS);
        check_code(MPI_Publish_name("t_dpm-twice", MPI_INFO_NULL, port), MPI_ERR_SERVICE);
        CHECK_EQ(MPI_Unpublish_name("t_dpm-twice", MPI_INFO_NULL, port), MPI_SUCCESS);
        MPI_Close_port(port);
        check_code(MPI_Close_port(port), MPI_ERR_PORT); /* twice */
    }
    /* the job still works */
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(sum, size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Run with mpiexec -n 1 and no --universe-size: MPI_UNIVERSE_SIZE is not
 * set (as MPICH 5.0.2's Hydra leaves it), and a spawn still works; the
 * children's parent communicator is named MPI_COMM_PARENT (checked there). */
static void case_nousize(void)
{
    int *usize, flag = -1;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    CHECK_EQ(flag, 0);
    MPI_Comm inter;
    int errs[2];
    char *args[] = {"child", "echo1", NULL};
    CHECK_EQ(MPI_Comm_spawn(self_path, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs), MPI_SUCCESS);
    if (rank == 0)
        for (int c = 0; c < 2; c++) {
            int v = 40, r = 0;
            MPI_Send(&v, 1, MPI_INT, c, 1, inter);
            MPI_Recv(&r, 1, MPI_INT, c, 2, inter, MPI_STATUS_IGNORE);
            CHECK_EQ(r, 41);
        }
    children_verdict(inter);
    MPI_Comm_disconnect(&inter);
}

/* Both sides of a spawn build a second intercommunicator with
 * MPI_Intercomm_create over their worlds, the spawn's intercommunicator as
 * the peer communicator, and talk on it: every rank sends its rank to every
 * remote rank and receives theirs.  Returns the failures. */
static int iccreate_side(MPI_Comm peer, int parents)
{
    int failures = 0;
    for (int via_merge = 0; via_merge < 2; via_merge++)
        failures += iccreate_once(peer, parents, via_merge);
    return failures;
}

/* One intercommunicator over the worlds, through the spawn's
 * intercommunicator or (via_merge) through its merge, where the remote
 * leader is the other side's first rank in the merged order. */
static int iccreate_once(MPI_Comm peer, int parents, int via_merge)
{
    int failures = 0, me, lsize, rsize;
    MPI_Comm ic, merged = MPI_COMM_NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &lsize);
    int leader = 0;
    if (via_merge) {
        MPI_Intercomm_merge(peer, !parents, &merged);
        leader = parents ? lsize : 0; /* parents first in the merged order */
    }
    if (MPI_Intercomm_create(MPI_COMM_WORLD, 0, via_merge ? merged : peer, leader, 77 + via_merge, &ic) != MPI_SUCCESS)
        return 1;
    if (merged != MPI_COMM_NULL)
        MPI_Comm_free(&merged);
    MPI_Comm_remote_size(ic, &rsize);
    int rsize_peer;
    MPI_Comm_remote_size(peer, &rsize_peer);
    failures += rsize != rsize_peer;
    int *got = malloc(sizeof(int) * rsize);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * rsize);
    int mine = (parents ? 1000 : 2000) + me;
    for (int r = 0; r < rsize; r++) {
        MPI_Irecv(&got[r], 1, MPI_INT, r, 5, ic, &rq[r]);
        MPI_Isend(&mine, 1, MPI_INT, r, 5, ic, &rq[rsize + r]);
    }
    MPI_Waitall(2 * rsize, rq, MPI_STATUSES_IGNORE);
    for (int r = 0; r < rsize; r++)
        failures += got[r] != (parents ? 2000 : 1000) + r;
    int sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, ic); /* the remote group's sum */
    failures += sum != (parents ? 2000 * rsize : 1000 * rsize) + rsize * (rsize - 1) / 2;
    MPI_Comm_free(&ic);
    free(got);
    free(rq);
    return failures;
}

static void case_iccreate(void)
{
    MPI_Comm inter;
    int errs[3];
    char *args[] = {"child", "iccreate", NULL};
    CHECK_EQ(MPI_Comm_spawn(self_path, args, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs), MPI_SUCCESS);
    CHECK_EQ(iccreate_side(inter, 1), 0);
    children_verdict(inter);
    MPI_Comm_disconnect(&inter);
}

/* Only world rank 0 spawns (over MPI_COMM_SELF); an intercommunicator
 * between the whole parent world and the child, through the merge of the
 * spawn's intercommunicator, lets parent ranks that never met the child
 * talk to it. */
static void case_iccreate2(void)
{
    MPI_Comm inter = MPI_COMM_NULL, merged = MPI_COMM_NULL, ic;
    if (rank == 0) {
        char *args[] = {"child", "iccreate2", NULL};
        int err;
        CHECK_EQ(MPI_Comm_spawn(self_path, args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, &err), MPI_SUCCESS);
        MPI_Intercomm_merge(inter, 0, &merged); /* rank 0, then the child */
    }
    CHECK_EQ(MPI_Intercomm_create(MPI_COMM_WORLD, 0, merged, 1, 99, &ic), MPI_SUCCESS);
    int rs, v = 0;
    MPI_Comm_remote_size(ic, &rs);
    CHECK_EQ(rs, 1);
    MPI_Send(&rank, 1, MPI_INT, 0, 3, ic);
    MPI_Recv(&v, 1, MPI_INT, 0, 4, ic, MPI_STATUS_IGNORE);
    CHECK_EQ(v, 100 + rank);
    MPI_Comm_free(&ic);
    if (rank == 0) {
        MPI_Comm_free(&merged);
        children_verdict(inter);
        MPI_Comm_disconnect(&inter);
    }
}

static int iccreate2_child(MPI_Comm parent)
{
    MPI_Comm merged, ic;
    int failures = 0, rs;
    MPI_Intercomm_merge(parent, 1, &merged);
    if (MPI_Intercomm_create(MPI_COMM_WORLD, 0, merged, 0, 99, &ic) != MPI_SUCCESS)
        return 1;
    MPI_Comm_remote_size(ic, &rs);
    for (int i = 0; i < rs; i++) {
        int r = -1;
        MPI_Status st;
        MPI_Recv(&r, 1, MPI_INT, MPI_ANY_SOURCE, 3, ic, &st);
        failures += r != st.MPI_SOURCE;
        r += 100;
        MPI_Send(&r, 1, MPI_INT, st.MPI_SOURCE, 4, ic);
    }
    MPI_Comm_free(&ic);
    MPI_Comm_free(&merged);
    return failures;
}

/* Run with mpiexec --universe-size 3 -n 1: four do not fit; soft takes what
 * fits (2), and errcodes say which ones started. */
static void case_universe(void)
{
    int *usize, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    CHECK(flag);
    CHECK_EQ(*usize, 3);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm inter;
    int errs[4];
    char *args[] = {"child", "quit", NULL};
    check_code(MPI_Comm_spawn(self_path, args, 4, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs), MPI_ERR_SPAWN);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(errs[i], MPI_ERR_SPAWN);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "soft", "1:4");
    CHECK_EQ(MPI_Comm_spawn(self_path, args, 4, info, 0, MPI_COMM_WORLD, &inter, errs), MPI_SUCCESS);
    MPI_Info_free(&info);
    int want[4] = {MPI_SUCCESS, MPI_SUCCESS, MPI_ERR_SPAWN, MPI_ERR_SPAWN};
    for (int i = 0; i < 4; i++)
        CHECK_EQ(errs[i], want[i]);
    int rs;
    MPI_Comm_remote_size(inter, &rs);
    CHECK_EQ(rs, 2);
    children_verdict(inter);
    MPI_Comm_disconnect(&inter);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static long long lmpi_bytes(void)
{
    static const char *cats[] = {"av", "rankmap", "comm", "match", "request", "datatype", "coll", "topo", "rma",
                                 "shm", "ofi", "other"};
    long long t = 0;
    for (size_t i = 0; i < sizeof(cats) / sizeof(cats[0]); i++) {
        char name[64];
        snprintf(name, sizeof(name), "lmpi_mem_current_%s", cats[i]);
        long long v = mpitest_pvar_read(name);
        t += v > 0 ? v : 0;
    }
    return t;
}

/* Segments of this job and of the jobs it spawned (their kvsnames extend
 * ours), other than the parents' own inboxes: the port name tells the
 * kvsname. */
static int shm_files(void)
{
    char port[MPI_MAX_PORT_NAME], prefix[300];
    MPI_Open_port(MPI_INFO_NULL, port);
    MPI_Close_port(port);
    char *kvs = strchr(port, ':') + 1, *end = strrchr(port, ':');
    *end = '\0';
    *strrchr(kvs, ':') = '\0';
    snprintf(prefix, sizeof(prefix), "lmpi-%s", kvs);
    int n = 0;
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));) {
        char mine[320];
        int r;
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        if (sscanf(e->d_name + strlen(prefix), "-x%d", &r) == 1) {
            snprintf(mine, sizeof(mine), "%s-x%d", prefix, r);
            if (!strcmp(mine, e->d_name) && r < size)
                continue; /* a parent's inbox */
        }
        n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* Processes whose parent is our launcher, other than the world's ranks. */
static int launcher_children(void)
{
    int n = 0;
    pid_t launcher = getppid();
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[300], buf[512];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue; /* self, thread-self, ... */
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int pid, ppid;
        char state;
        if (fgets(buf, sizeof(buf), f)) {
            char *close_paren = strrchr(buf, ')');
            if (close_paren && sscanf(close_paren + 2, "%c %d", &state, &ppid) == 2 && sscanf(buf, "%d", &pid) == 1)
                n += ppid == launcher;
        }
        fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

/* 100 spawn/disconnect cycles: memory flat, no segments, no processes left. */
static void case_cycles(void)
{
    MPI_T_init_thread(MPI_THREAD_SINGLE, &(int){0});
    char *args[] = {"child", "quit", NULL};
    long long after10 = 0;
    for (int i = 0; i < 100; i++) {
        MPI_Comm inter;
        CHECK_EQ(MPI_Comm_spawn(self_path, args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE),
                 MPI_SUCCESS);
        children_verdict(inter);
        MPI_Comm_disconnect(&inter);
        if (i == 9)
            after10 = lmpi_bytes();
    }
    long long growth = lmpi_bytes() - after10;
    if (rank == 0)
        printf("t_dpm cycles: %lld bytes of growth over 90 cycles (%.1f per cycle)\n", growth, growth / 90.0);
    CHECK(growth <= 90 * 1024);
    /* children finish on their own after disconnecting: wait for them */
    int left = -1;
    for (int t = 0; t < 100 && left != 0; t++) {
        MPI_Barrier(MPI_COMM_WORLD);
        int procs = launcher_children() - size, files = shm_files();
        if (t == 99)
            fprintf(stderr, "t_dpm cycles: rank %d: %d processes and %d segments left\n", rank, procs, files);
        left = procs > 0 || files > 0;
        MPI_Allreduce(MPI_IN_PLACE, &left, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (left)
            usleep(50000);
    }
    CHECK_EQ(left, 0);
    MPI_T_finalize();
}

/* Across hosts under our mpiexec: children go to the host the info key
 * "host" names (the last rank's), and a host that is not one of the job's
 * fails the spawn, which the job survives. */
static void case_hosts(void)
{
    char last[MPI_MAX_PROCESSOR_NAME] = "";
    int len;
    MPI_Get_processor_name(last, &len);
    MPI_Bcast(last, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, size - 1, MPI_COMM_WORLD);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "host", last);
    char *args[] = {"child", "where", NULL};
    MPI_Comm inter;
    CHECK_EQ(MPI_Comm_spawn(self_path, args, 2, info, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE), MPI_SUCCESS);
    for (int c = 0; rank == 0 && c < 2; c++) {
        char where[MPI_MAX_PROCESSOR_NAME];
        MPI_Recv(where, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, c, 7, inter, MPI_STATUS_IGNORE);
        CHECK(!strcmp(where, last));
    }
    children_verdict(inter);
    MPI_Comm_disconnect(&inter);
    MPI_Info_set(info, "host", "no-such-host.invalid");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    check_code(MPI_Comm_spawn(self_path, args, 1, info, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE),
               MPI_ERR_SPAWN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Info_free(&info);
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(sum, size);
}

/* Two jobs started independently (t_dpm serve / t_dpm visit, under
 * launchers sharing a name service, on one host or two) meet through a
 * published name: the visitor waits for it, then every member exchanges
 * its rank and host with every remote member, and a merged communicator
 * sums over both jobs. */
/* What the other job must see to fail cleanly: the reason, then an abort. */
static void must(int rc)
{
    if (rc == MPI_SUCCESS)
        return;
    char why[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, why, &len);
    printf("t_dpm: rank %d: %s\n", rank, why);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void independent_jobs(int serving)
{
    const char *service = getenv("T_DPM_SERVICE") ? getenv("T_DPM_SERVICE") : "t_dpm-jobs";
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter, merged;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (serving) {
        if (rank == 0) {
            CHECK_EQ(MPI_Open_port(MPI_INFO_NULL, port), MPI_SUCCESS);
            must(MPI_Publish_name(service, MPI_INFO_NULL, port));
        }
    } else {
        if (rank == 0) {
            int rc = MPI_ERR_NAME;
            for (int i = 0; i < 600 && rc != MPI_SUCCESS; i++) { /* the other job may start later */
                rc = MPI_Lookup_name(service, MPI_INFO_NULL, port);
                if (rc != MPI_SUCCESS)
                    usleep(50000);
            }
            CHECK_EQ(rc, MPI_SUCCESS);
        }
    }
    if (getenv("T_DPM_TWICE") && rank == 0) {
        /* rank 0 alone meets the other job's rank 0 first: where that
         * turns the network on in one process, the whole job's meeting
         * below must still bring the other members in */
        MPI_Comm first;
        if (serving)
            CHECK_EQ(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &first), MPI_SUCCESS);
        else
            must(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &first));
        CHECK_EQ(MPI_Comm_disconnect(&first), MPI_SUCCESS);
    }
    if (serving)
        CHECK_EQ(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter), MPI_SUCCESS);
    else
        must(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    int rs;
    MPI_Comm_remote_size(inter, &rs);
    CHECK(rs >= 1);
    /* every member sends its rank to every remote member, tagged by side */
    int mine = (serving ? 1000 : 2000) + rank, *all = malloc(sizeof(int) * (size_t)rs);
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, inter);
    for (int i = 0; i < rs; i++)
        CHECK_EQ(all[i], (serving ? 2000 : 1000) + i);
    free(all);
    /* a message past the eager limit between the two jobs */
    char *big = malloc(BIG);
    if (rank == 0) {
        if (serving) {
            memset(big, 0x5a, BIG);
            CHECK_EQ(MPI_Send(big, BIG, MPI_CHAR, 0, 9, inter), MPI_SUCCESS);
        } else {
            CHECK_EQ(MPI_Recv(big, BIG, MPI_CHAR, 0, 9, inter, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK(big[0] == 0x5a && big[BIG - 1] == 0x5a);
        }
    }
    free(big);
    int one = 1, sum = 0;
    CHECK_EQ(MPI_Intercomm_merge(inter, serving, &merged), MPI_SUCCESS);
    CHECK_EQ(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged), MPI_SUCCESS);
    CHECK_EQ(sum, size + rs);
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    printf("t_dpm %s: rank %d of %d on %s met %d remote processes\n", serving ? "serve" : "visit", rank, size, host,
           rs);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    if (serving && rank == 0) {
        CHECK_EQ(MPI_Unpublish_name(service, MPI_INFO_NULL, port), MPI_SUCCESS);
        CHECK_EQ(MPI_Close_port(port), MPI_SUCCESS);
    }
}

static void case_serve(void) { independent_jobs(1); }
static void case_visit(void) { independent_jobs(0); }

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return child(argc, argv, parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!realpath(argv[0], self_path))
        snprintf(self_path, sizeof(self_path), "%s", argv[0]);
    const char *only = argc > 1 ? argv[1] : NULL;
    struct {
        const char *name;
        void (*fn)(void);
        int by_default;
    } cases[] = {{"spawn", case_spawn, 1},   {"multiple", case_multiple, 1}, {"connect", case_connect, 1},
                 {"join", case_join, 1}, {"timeout", case_timeout, 1},     {"errors", case_errors, 1},     {"sessions", case_sessions, 1},
                 {"late", case_late, 1},         {"threads", case_threads, 1},     {"universe", case_universe, 0},
                 {"nousize", case_nousize, 0},   {"iccreate", case_iccreate, 1},
                 {"iccreate2", case_iccreate2, 1},
                 {"cycles", case_cycles, 0},       {"hosts", case_hosts, 0},         {"serve", case_serve, 0},
                 {"visit", case_visit, 0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (only ? !strcmp(only, cases[i].name) : cases[i].by_default) {
            if (getenv("T_DPM_TRACE"))
                fprintf(stderr, "t_dpm: rank %d: case %s\n", rank, cases[i].name);
            cases[i].fn();
        }
    return mpitest_finish("t_dpm");
}
