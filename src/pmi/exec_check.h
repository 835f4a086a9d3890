/* Can a spawn's command start here?  Shared by the library (which checks
 * before asking any launcher, Hydra included, so that a command that cannot
 * run fails the spawn instead of leaving the parents waiting for children
 * that never connect) and by mpiexec. */
#ifndef LMPI_EXEC_CHECK_H
#define LMPI_EXEC_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* wdir must be a directory (when given); cmd is found as a path (relative
 * to wdir) or in `path` (a spawn info key) and then PATH, and is an
 * executable regular file. */
static inline bool lmpi_exec_check(const char *cmd, const char *wdir, const char *path, char *why, size_t len)
{
    struct stat sb;
    if (wdir && (stat(wdir, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        snprintf(why, len, "wdir %s is not a directory", wdir);
        return false;
    }
    char full[4096];
    if (strchr(cmd, '/')) {
        snprintf(full, sizeof(full), "%s%s%s", cmd[0] != '/' && wdir ? wdir : "", cmd[0] != '/' && wdir ? "/" : "",
                 cmd);
        if (access(full, X_OK) == 0 && stat(full, &sb) == 0 && S_ISREG(sb.st_mode))
            return true;
    } else {
        const char *lists[2] = {path, getenv("PATH")};
        for (int l = 0; l < 2; l++) {
            const char *p = lists[l];
            while (p && *p) {
                size_t n = strcspn(p, ":");
                snprintf(full, sizeof(full), "%.*s/%s", (int)n, p, cmd);
                if (access(full, X_OK) == 0 && stat(full, &sb) == 0 && S_ISREG(sb.st_mode))
                    return true;
                p += n + (p[n] == ':');
            }
        }
    }
    snprintf(why, len, "command %s does not exist or is not executable", cmd);
    return false;
}

#endif
