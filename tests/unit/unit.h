/* Minimal unit-test helpers: each test file is its own program (CTest runs it
 * with a timeout); CHECK_EQ prints both values. */
#ifndef LMPI_UNIT_H
#define LMPI_UNIT_H
#include <stdio.h>
#include <stdlib.h>

static int unit_failures;

#define CHECK_EQ(a, b)                                                                                 \
    do {                                                                                               \
        long long _a = (long long)(a), _b = (long long)(b);                                            \
        if (_a != _b) {                                                                                \
            fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a, _a, #b, \
                    _b);                                                                               \
            unit_failures++;                                                                           \
        }                                                                                              \
    } while (0)

#define CHECK(cond) CHECK_EQ(!!(cond), 1)

/* Tests of a module alone play the layer above it: they define
 * UNIT_ERR_DETAIL before including this for the error-detail sink. */
#ifdef UNIT_ERR_DETAIL
#include <stdarg.h>
void lmpi_err_detail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}
#endif

static inline int unit_finish(const char *name)
{
    if (unit_failures) {
        fprintf(stderr, "%s: %d failures\n", name, unit_failures);
        return 1;
    }
    printf("%s: passed\n", name);
    return 0;
}
#endif
