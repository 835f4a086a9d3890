/* Reduction operations: the predefined ones on every type the standard
 * defines them for, and user operations (MPI_Op_create, _c). */
#ifndef LMPI_OP_H
#define LMPI_OP_H

#include "datatype/datatype.h"
#include "runtime/lmpi.h"

typedef struct lmpi_op {
    uint32_t magic;
    uint32_t refs;
    int predefined; /* the MPI_Op value for predefined operations, else 0 */
    bool commutative;
    MPI_User_function *fn;
    MPI_User_function_c *fn_c;
    MPI_Op handle;
} lmpi_op;

/* Pending operations hold user ops so that MPI_Op_free only marks them. */
void lmpi_op_retain(lmpi_op *o);
void lmpi_op_release(lmpi_op *o);

/* A valid operation handle (not MPI_OP_NULL), or an error naming `what`. */
lmpi_status lmpi_op_arg(MPI_Op h, lmpi_op **out, const char *what);

/* Is op defined on dt?  LMPI_OK, or MPI_ERR_OP with a message naming both. */
lmpi_status lmpi_op_check(const lmpi_op *op, const lmpi_datatype *dt);

/* inout[i] = in[i] op inout[i] for count elements of dt (checked before). */
lmpi_status lmpi_op_apply(const lmpi_op *op, const void *in, void *inout, MPI_Count count, lmpi_datatype *dt);

/* The one basic type all of dt's elements share (a pair type counts as one), or NULL. */
const lmpi_datatype *lmpi_op_basic_type(const lmpi_datatype *dt);

#define LMPI_MAGIC_OP 0x4f704f70u

#endif
