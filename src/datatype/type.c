/* Derived datatype constructors, their compiled form, and the queries.
 * Every constructor records its arguments exactly as given (envelope and
 * contents), computes the bounds from the old types' bounds (resized bounds
 * stick, struct extents are padded to the members' alignment), and builds
 * the loop nodes the engine walks, merging contiguous runs. */
#include <stdlib.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "runtime/objarena.h"
#include "comm/comm.h"
#include "datatype/datatype.h"

/* ---- nodes ------------------------------------------------------------------- */

static lmpi_dtnode *node_new(lmpi_dtnode_kind kind)
{
    lmpi_dtnode *n = lmpi_calloc(1, sizeof(*n), LMPI_MEM_DATATYPE);
    if (n) {
        n->kind = (uint8_t)kind;
        n->refs = 1;
    }
    return n;
}

lmpi_dtnode *lmpi_dtnode_leaf(MPI_Aint offset, MPI_Count size)
{
    lmpi_dtnode *n = node_new(LMPI_DT_LEAF);
    if (n) {
        n->leaf_offset = offset;
        n->size = size;
    }
    return n;
}

static lmpi_dtnode *node_ref(lmpi_dtnode *n)
{
    n->refs++;
    return n;
}

void lmpi_dtnode_release(lmpi_dtnode *n)
{
    if (!n || --n->refs)
        return;
    if (n->child)
        lmpi_dtnode_release(n->child);
    if (n->children)
        for (MPI_Count i = 0; i < n->count; i++)
            lmpi_dtnode_release(n->children[i]);
    lmpi_free(n->children);
    lmpi_free(n->child_extents);
    lmpi_free(n->disps);
    lmpi_free(n->blens);
    lmpi_free(n->before);
    lmpi_free(n);
}

/* Consecutive instances of t form one dense run. */
static bool is_run(const lmpi_datatype *t)
{
    return t->node->kind == LMPI_DT_LEAF && t->size == t->extent;
}

static lmpi_dtnode *make_vector(MPI_Count count, MPI_Count blocklen, MPI_Aint stride, const lmpi_datatype *old)
{
    MPI_Count size = count * blocklen * old->size;
    if (size == 0)
        return lmpi_dtnode_leaf(0, 0);
    if (is_run(old) && (count == 1 || stride == blocklen * old->extent))
        return lmpi_dtnode_leaf(old->node->leaf_offset, size);
    if (blocklen == 1 && count == 1)
        return node_ref(old->node);
    lmpi_dtnode *n = node_new(LMPI_DT_VECTOR);
    if (!n)
        return NULL;
    n->count = count;
    n->blocklen = blocklen;
    n->stride = stride;
    n->child = node_ref(old->node);
    n->child_size = old->size;
    n->child_extent = old->extent;
    n->child_is_run = is_run(old);
    n->size = size;
    return n;
}

/* Blocks of `blens[i]` instances of old at byte displacements disps[i]:
 * empty blocks dropped, touching runs merged, equal spacing made a vector. */
static lmpi_dtnode *make_blocks(MPI_Count count, const MPI_Count *blens, const MPI_Aint *disps, const lmpi_datatype *old)
{
    MPI_Count *bl = lmpi_malloc(sizeof(MPI_Count) * (size_t)(count + 1), LMPI_MEM_DATATYPE);
    MPI_Aint *dp = lmpi_malloc(sizeof(MPI_Aint) * (size_t)(count + 1), LMPI_MEM_DATATYPE);
    if (!bl || !dp) {
        lmpi_free(bl), lmpi_free(dp);
        return NULL;
    }
    bool run = is_run(old);
    MPI_Count m = 0;
    for (MPI_Count i = 0; i < count; i++) {
        if (blens[i] == 0 || old->size == 0)
            continue;
        if (run && m > 0 && dp[m - 1] + bl[m - 1] * old->extent == disps[i]) {
            bl[m - 1] += blens[i];
            continue;
        }
        bl[m] = blens[i];
        dp[m] = disps[i];
        m++;
    }
    lmpi_dtnode *n = NULL;
    if (m == 0) {
        n = lmpi_dtnode_leaf(0, 0);
    } else if (m == 1 && run) {
        n = lmpi_dtnode_leaf(dp[0] + old->node->leaf_offset, bl[0] * old->size);
    } else {
        bool regular = m > 1;
        for (MPI_Count i = 1; i < m && regular; i++)
            regular = bl[i] == bl[0] && dp[i] - dp[i - 1] == dp[1] - dp[0];
        if (regular && dp[0] == 0) {
            n = make_vector(m, bl[0], dp[1] - dp[0], old);
        } else {
            n = node_new(LMPI_DT_BLOCKS);
            if (n) {
                n->count = m;
                n->blens = bl;
                n->disps = dp;
                bl = NULL, dp = NULL;
                n->child = node_ref(old->node);
                n->child_size = old->size;
                n->child_extent = old->extent;
                n->child_is_run = run;
                n->before = lmpi_malloc(sizeof(MPI_Count) * (size_t)(m + 1), LMPI_MEM_DATATYPE);
                if (!n->before) {
                    lmpi_dtnode_release(n);
                    return NULL;
                }
                n->before[0] = 0;
                for (MPI_Count i = 0; i < m; i++)
                    n->before[i + 1] = n->before[i] + n->blens[i] * old->size;
                n->size = n->before[m];
            }
        }
    }
    lmpi_free(bl);
    lmpi_free(dp);
    return n;
}

static lmpi_dtnode byte_leaf = {.kind = LMPI_DT_LEAF, .refs = 1u << 30, .size = 1};
static lmpi_datatype byte_type = {.magic = LMPI_MAGIC_DATATYPE, .size = 1, .extent = 1, .predefined = true,
                                  .node = &byte_leaf};

static lmpi_dtnode *make_struct(MPI_Count count, const MPI_Count *blens, const MPI_Aint *disps, lmpi_datatype **types)
{
    bool all_runs = true;
    for (MPI_Count i = 0; i < count; i++)
        all_runs = all_runs && (blens[i] == 0 || types[i]->size == 0 || is_run(types[i]));
    if (all_runs) { /* blocks of bytes: merges across member types */
        MPI_Count *bl = lmpi_malloc(sizeof(MPI_Count) * (size_t)(count + 1), LMPI_MEM_OTHER);
        MPI_Aint *dp = lmpi_malloc(sizeof(MPI_Aint) * (size_t)(count + 1), LMPI_MEM_OTHER);
        if (!bl || !dp) {
            lmpi_free(bl), lmpi_free(dp);
            return NULL;
        }
        for (MPI_Count i = 0; i < count; i++) {
            bl[i] = blens[i] * types[i]->size;
            dp[i] = disps[i] + (types[i]->size ? types[i]->node->leaf_offset : 0);
        }
        lmpi_dtnode *n = make_blocks(count, bl, dp, &byte_type);
        lmpi_free(bl), lmpi_free(dp);
        return n;
    }
    lmpi_dtnode *n = node_new(LMPI_DT_STRUCT);
    if (!n)
        return NULL;
    n->blens = lmpi_malloc(sizeof(MPI_Count) * (size_t)count, LMPI_MEM_DATATYPE);
    n->disps = lmpi_malloc(sizeof(MPI_Aint) * (size_t)count, LMPI_MEM_DATATYPE);
    n->children = lmpi_calloc((size_t)count, sizeof(lmpi_dtnode *), LMPI_MEM_DATATYPE);
    n->child_extents = lmpi_malloc(sizeof(MPI_Aint) * (size_t)count, LMPI_MEM_DATATYPE);
    n->before = lmpi_malloc(sizeof(MPI_Count) * (size_t)(count + 1), LMPI_MEM_DATATYPE);
    if (!n->blens || !n->disps || !n->children || !n->child_extents || !n->before) {
        lmpi_dtnode_release(n);
        return NULL;
    }
    MPI_Count m = 0;
    n->before[0] = 0;
    for (MPI_Count i = 0; i < count; i++) {
        if (blens[i] == 0 || types[i]->size == 0)
            continue;
        n->blens[m] = blens[i];
        n->disps[m] = disps[i];
        n->children[m] = node_ref(types[i]->node);
        n->child_extents[m] = types[i]->extent;
        n->before[m + 1] = n->before[m] + blens[i] * types[i]->size;
        m++;
    }
    n->count = m;
    n->size = n->before[m];
    return n;
}

/* ---- type objects --------------------------------------------------------------- */

void lmpi_datatype_retain(lmpi_datatype *dt)
{
    if (!dt->predefined)
        dt->refs++;
}

void lmpi_datatype_release(lmpi_datatype *dt)
{
    if (dt->predefined || --dt->refs)
        return;
    for (int i = 0; i < dt->nt; i++)
        lmpi_datatype_release(dt->types[i]);
    lmpi_dtnode_release(dt->node);
    lmpi_free(dt->ints);
    lmpi_free(dt->aints);
    lmpi_free(dt->counts);
    lmpi_free(dt->types);
    lmpi_free(dt->user_name);
    dt->magic = 0;
    lmpi_obj_free(dt, sizeof(*dt), LMPI_MEM_DATATYPE);
}

/* Bounds of `blen` instances of t starting at byte displacement disp. */
typedef struct {
    bool any;
    bool overflow; /* a bound left MPI_Aint: the type is refused (MPI_ERR_COUNT) */
    MPI_Aint lb, ub, tlb, tub;
    int align;
    bool marked;
} bounds;

/* a + b + c, noting an overflow in *o */
static MPI_Aint sum3(MPI_Aint a, MPI_Aint b, MPI_Aint c, bool *o)
{
    MPI_Aint r;
    *o |= __builtin_add_overflow(a, b, &r);
    *o |= __builtin_add_overflow(r, c, &r);
    return r;
}

static void add_block(bounds *b, const lmpi_datatype *t, MPI_Count blen, MPI_Aint disp)
{
    if (blen <= 0)
        return;
    MPI_Aint span;
    b->overflow |= __builtin_mul_overflow((MPI_Aint)(blen - 1), t->extent, &span);
    MPI_Aint neg = span < 0 ? span : 0, pos = span > 0 ? span : 0;
    MPI_Aint lb = sum3(disp, t->lb, neg, &b->overflow);
    MPI_Aint ub = sum3(sum3(disp, t->lb, t->extent, &b->overflow), pos, 0, &b->overflow);
    MPI_Aint tlb = sum3(disp, t->true_lb, neg, &b->overflow);
    MPI_Aint tub = sum3(sum3(disp, t->true_lb, t->true_extent, &b->overflow), pos, 0, &b->overflow);
    if (!b->any) {
        b->lb = lb, b->ub = ub, b->tlb = tlb, b->tub = tub;
        b->any = true;
    } else {
        b->lb = lb < b->lb ? lb : b->lb;
        b->ub = ub > b->ub ? ub : b->ub;
        b->tlb = tlb < b->tlb ? tlb : b->tlb;
        b->tub = tub > b->tub ? tub : b->tub;
    }
    if (t->align > b->align)
        b->align = t->align;
    b->marked = b->marked || t->marked;
}

/* A new derived type from its node, bounds and recorded constructor. */
static lmpi_status new_type(lmpi_dtnode *node, MPI_Count size, const bounds *b, int combiner, MPI_Datatype *out,
                            lmpi_datatype **made)
{
    if (!node)
        return LMPI_ERR_NO_MEM;
    MPI_Aint extent;
    if (b->overflow || __builtin_sub_overflow(b->ub, b->lb, &extent) || __builtin_sub_overflow(b->tub, b->tlb, &extent)) {
        lmpi_dtnode_release(node);
        lmpi_err_detail("the type's bounds overflow MPI_Aint (count times extent beyond 2^63 bytes)");
        return LMPI_ERR_COUNT;
    }
    lmpi_datatype *d = lmpi_obj_alloc(sizeof(*d), LMPI_MEM_DATATYPE);
    if (!d) {
        lmpi_dtnode_release(node);
        return LMPI_ERR_NO_MEM;
    }
    d->magic = LMPI_MAGIC_DATATYPE;
    d->refs = 1;
    d->node = node;
    d->size = size;
    d->lb = b->any ? b->lb : 0;
    d->extent = b->any ? b->ub - b->lb : 0;
    d->true_lb = b->any ? b->tlb : 0;
    d->true_extent = b->any ? b->tub - b->tlb : 0;
    d->align = b->align ? b->align : 1;
    d->marked = b->marked;
    d->combiner = combiner;
    d->handle = (MPI_Datatype)d;
    /* contiguous: one leaf whose instances touch */
    d->contiguous = node->kind == LMPI_DT_LEAF && (size == d->extent || size == 0);
    *made = d;
    *out = d->handle;
    return LMPI_OK;
}

/* Record the constructor's arguments (copies). */
static lmpi_status record(lmpi_datatype *d, int ni, const int *ints, int na, const MPI_Aint *aints, int nc,
                          const MPI_Count *counts, int nt, lmpi_datatype **types, bool large)
{
    d->large = large;
    d->ni = ni, d->na = na, d->nc = nc, d->nt = nt;
    d->ints = lmpi_malloc(sizeof(int) * (size_t)(ni + 1), LMPI_MEM_DATATYPE);
    d->aints = lmpi_malloc(sizeof(MPI_Aint) * (size_t)(na + 1), LMPI_MEM_DATATYPE);
    d->counts = lmpi_malloc(sizeof(MPI_Count) * (size_t)(nc + 1), LMPI_MEM_DATATYPE);
    d->types = lmpi_malloc(sizeof(*d->types) * (size_t)(nt + 1), LMPI_MEM_DATATYPE);
    if (!d->ints || !d->aints || !d->counts || !d->types) {
        d->nt = 0;
        return LMPI_ERR_NO_MEM;
    }
    if (ni)
        memcpy(d->ints, ints, sizeof(int) * (size_t)ni);
    if (na)
        memcpy(d->aints, aints, sizeof(MPI_Aint) * (size_t)na);
    if (nc)
        memcpy(d->counts, counts, sizeof(MPI_Count) * (size_t)nc);
    for (int i = 0; i < nt; i++) {
        d->types[i] = types[i];
        lmpi_datatype_retain(types[i]);
    }
    return LMPI_OK;
}

static lmpi_status check_count(MPI_Count c, const char *what)
{
    if (c < 0) {
        lmpi_err_detail("%s %lld is negative", what, (long long)c);
        return LMPI_ERR_COUNT;
    }
    return LMPI_OK;
}

/* size * count must fit: a type's size is an MPI_Count. */
static lmpi_status check_size(MPI_Count a, MPI_Count b)
{
    if (b != 0 && a > INT64_MAX / b) {
        lmpi_err_detail("the type's size (%lld x %lld bytes) overflows MPI_Count", (long long)a, (long long)b);
        return LMPI_ERR_COUNT;
    }
    return LMPI_OK;
}

/* Integers given by the caller: int-wide arrays go to `ints`, count-wide
 * (the _c constructors) to `counts`; `large` tells which. */
typedef struct {
    int *i;
    MPI_Count *c;
    int ni, nc;
} argrec;

static void put(argrec *r, bool large, MPI_Count v)
{
    if (large)
        r->c[r->nc++] = v;
    else
        r->i[r->ni++] = (int)v;
}

static lmpi_status finish(lmpi_status st, lmpi_datatype *d, argrec *r, int na, const MPI_Aint *aints,
                          lmpi_datatype **types, int nt, bool large, MPI_Datatype *out)
{
    if (st == LMPI_OK)
        st = record(d, r->ni, r->i, na, aints, r->nc, r->c, nt, types, large);
    lmpi_free(r->i);
    lmpi_free(r->c);
    if (st != LMPI_OK && d) {
        lmpi_datatype_release(d);
        *out = MPI_DATATYPE_NULL;
    }
    return st;
}

static lmpi_status args_alloc(argrec *r, MPI_Count n)
{
    r->i = lmpi_malloc(sizeof(int) * (size_t)(n + 4), LMPI_MEM_OTHER);
    r->c = lmpi_malloc(sizeof(MPI_Count) * (size_t)(n + 4), LMPI_MEM_OTHER);
    r->ni = r->nc = 0;
    if (!r->i || !r->c) {
        lmpi_free(r->i), lmpi_free(r->c);
        return LMPI_ERR_NO_MEM;
    }
    return LMPI_OK;
}

static lmpi_status vector_common(MPI_Count count, MPI_Count blocklen, MPI_Count stride, lmpi_datatype *old,
                                 bool bytes, bool large, MPI_Datatype *out)
{
    lmpi_status st = check_count(count, "count");
    if (st == LMPI_OK)
        st = check_count(blocklen, "blocklength");
    if (st == LMPI_OK)
        st = check_size(blocklen, old->size);
    if (st == LMPI_OK)
        st = check_size(count, blocklen * old->size);
    if (st != LMPI_OK)
        return st;
    bounds b = {0};
    MPI_Aint sb = (MPI_Aint)stride, last = 0;
    if (!bytes)
        b.overflow |= __builtin_mul_overflow((MPI_Aint)stride, old->extent, &sb);
    if (count > 1)
        b.overflow |= __builtin_mul_overflow((MPI_Aint)(count - 1), sb, &last);
    if (count > 0) /* the first and last blocks bound a vector */
        add_block(&b, old, blocklen, 0);
    if (count > 1)
        add_block(&b, old, blocklen, last);
    lmpi_datatype *d = NULL;
    st = new_type(make_vector(count, blocklen, sb, old), count * blocklen * old->size, &b,
                  bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR, out, &d);
    argrec r;
    if (st == LMPI_OK)
        st = args_alloc(&r, 3);
    else
        return st;
    put(&r, large, count);
    put(&r, large, blocklen);
    MPI_Aint a = (MPI_Aint)stride;
    if (!bytes)
        put(&r, large, stride);
    else if (large)
        r.c[r.nc++] = stride;
    return finish(st, d, &r, bytes && !large ? 1 : 0, &a, &old, 1, large, out);
}

lmpi_status lmpi_impl_Type_contiguous(MPI_Count count, lmpi_datatype *old, MPI_Datatype *out)
{
    lmpi_status st = check_count(count, "count");
    if (st == LMPI_OK)
        st = check_size(count, old->size);
    if (st != LMPI_OK)
        return st;
    bounds b = {0};
    add_block(&b, old, count, 0);
    lmpi_datatype *d = NULL;
    st = new_type(make_vector(1, count, old->extent, old), count * old->size, &b, MPI_COMBINER_CONTIGUOUS, out, &d);
    if (st != LMPI_OK)
        return st;
    bool large = count > INT32_MAX;
    argrec r;
    st = args_alloc(&r, 1);
    if (st != LMPI_OK)
        return st;
    put(&r, large, count);
    return finish(st, d, &r, 0, NULL, &old, 1, large, out);
}

lmpi_status lmpi_impl_Type_vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride, lmpi_datatype *old,
                                  MPI_Datatype *out)
{
    return vector_common(count, blocklength, stride, old, false,
                         count > INT32_MAX || blocklength > INT32_MAX || stride > INT32_MAX || stride < INT32_MIN,
                         out);
}

lmpi_status lmpi_impl_Type_create_hvector(MPI_Count count, MPI_Count blocklength, MPI_Count stride, lmpi_datatype *old,
                                          MPI_Datatype *out)
{
    return vector_common(count, blocklength, stride, old, true, count > INT32_MAX || blocklength > INT32_MAX, out);
}

/* indexed / hindexed / indexed_block / hindexed_block */
static lmpi_status indexed_common(MPI_Count count, lmpi_iarray blens, MPI_Count blocklen, lmpi_iarray disps,
                                  lmpi_datatype *old, bool bytes, bool block, MPI_Datatype *out)
{
    lmpi_status st = check_count(count, "count");
    if (st == LMPI_OK && block)
        st = check_count(blocklen, "blocklength");
    if (st != LMPI_OK)
        return st;
    /* the _c variants: count-wide block lengths (indexed, hindexed), or
     * count-wide displacements where the plain form has ints; for
     * hindexed_block both forms pass 8-byte displacements, so only values
     * beyond int make it large */
    bool large = block ? (bytes ? count > INT32_MAX || blocklen > INT32_MAX : disps.width == 8) : blens.width == 8;
    MPI_Count *bl = lmpi_malloc(sizeof(MPI_Count) * (size_t)(count + 1), LMPI_MEM_OTHER);
    MPI_Aint *dp = lmpi_malloc(sizeof(MPI_Aint) * (size_t)(count + 1), LMPI_MEM_OTHER);
    if (!bl || !dp) {
        lmpi_free(bl), lmpi_free(dp);
        return LMPI_ERR_NO_MEM;
    }
    bounds b = {0};
    MPI_Count size = 0;
    for (MPI_Count i = 0; i < count && st == LMPI_OK; i++) {
        bl[i] = block ? blocklen : lmpi_iarray_get(blens, (size_t)i);
        st = check_count(bl[i], "a block length");
        MPI_Count dv = lmpi_iarray_get(disps, (size_t)i);
        dp[i] = bytes ? (MPI_Aint)dv : (MPI_Aint)dv * old->extent;
        add_block(&b, old, bl[i], dp[i]);
        if (st == LMPI_OK)
            st = check_size(bl[i], old->size);
        size += bl[i] * old->size;
    }
    int combiner = block ? (bytes ? MPI_COMBINER_HINDEXED_BLOCK : MPI_COMBINER_INDEXED_BLOCK)
                         : (bytes ? MPI_COMBINER_HINDEXED : MPI_COMBINER_INDEXED);
    lmpi_datatype *d = NULL;
    if (st == LMPI_OK)
        st = new_type(make_blocks(count, bl, dp, old), size, &b, combiner, out, &d);
    argrec r = {0};
    MPI_Aint *aints = NULL;
    int na = 0;
    if (st == LMPI_OK)
        st = args_alloc(&r, 2 * count + 2);
    if (st == LMPI_OK) {
        put(&r, large, count);
        if (block)
            put(&r, large, blocklen);
        else
            for (MPI_Count i = 0; i < count; i++)
                put(&r, large, bl[i]);
        if (bytes && !large) {
            aints = lmpi_malloc(sizeof(MPI_Aint) * (size_t)(count + 1), LMPI_MEM_OTHER);
            for (MPI_Count i = 0; aints && i < count; i++)
                aints[na++] = (MPI_Aint)lmpi_iarray_get(disps, (size_t)i);
        } else {
            for (MPI_Count i = 0; i < count; i++)
                put(&r, large, lmpi_iarray_get(disps, (size_t)i));
        }
        st = finish(st, d, &r, na, aints, &old, 1, large, out);
    } else if (d) {
        lmpi_datatype_release(d);
    }
    lmpi_free(aints);
    lmpi_free(bl);
    lmpi_free(dp);
    return st;
}

lmpi_status lmpi_impl_Type_indexed(MPI_Count count, lmpi_iarray blens, lmpi_iarray disps, lmpi_datatype *old,
                                   MPI_Datatype *out)
{
    return indexed_common(count, blens, 0, disps, old, false, false, out);
}

lmpi_status lmpi_impl_Type_create_hindexed(MPI_Count count, lmpi_iarray blens, lmpi_iarray disps, lmpi_datatype *old,
                                           MPI_Datatype *out)
{
    return indexed_common(count, blens, 0, disps, old, true, false, out);
}

lmpi_status lmpi_impl_Type_create_indexed_block(MPI_Count count, MPI_Count blocklength, lmpi_iarray disps,
                                                lmpi_datatype *old, MPI_Datatype *out)
{
    lmpi_iarray none = {NULL, disps.width};
    return indexed_common(count, none, blocklength, disps, old, false, true, out);
}

lmpi_status lmpi_impl_Type_create_hindexed_block(MPI_Count count, MPI_Count blocklength, lmpi_iarray disps,
                                                 lmpi_datatype *old, MPI_Datatype *out)
{
    lmpi_iarray none = {NULL, disps.width};
    return indexed_common(count, none, blocklength, disps, old, true, true, out);
}

static lmpi_status create_struct(MPI_Count count, lmpi_iarray blens, lmpi_iarray disps, const MPI_Datatype types[],
                                 MPI_Datatype *out)
{
    lmpi_status st = check_count(count, "count");
    if (st != LMPI_OK)
        return st;
    if (count > 0 && !types) {
        lmpi_err_detail("array_of_types is NULL");
        return LMPI_ERR_ARG;
    }
    bool large = blens.width == 8;
    MPI_Count *bl = lmpi_malloc(sizeof(MPI_Count) * (size_t)(count + 1), LMPI_MEM_OTHER);
    MPI_Aint *dp = lmpi_malloc(sizeof(MPI_Aint) * (size_t)(count + 1), LMPI_MEM_OTHER);
    lmpi_datatype **t = lmpi_malloc(sizeof(*t) * (size_t)(count + 1), LMPI_MEM_OTHER);
    if (!bl || !dp || !t) {
        lmpi_free(bl), lmpi_free(dp), lmpi_free(t);
        return LMPI_ERR_NO_MEM;
    }
    bounds b = {0};
    MPI_Count size = 0;
    for (MPI_Count i = 0; i < count && st == LMPI_OK; i++) {
        t[i] = lmpi_datatype_from_handle(types[i]);
        if (!t[i] || t[i]->magic != LMPI_MAGIC_DATATYPE) {
            lmpi_err_detail("array_of_types[%lld] is not a datatype", (long long)i);
            st = LMPI_ERR_TYPE;
            break;
        }
        bl[i] = lmpi_iarray_get(blens, (size_t)i);
        dp[i] = (MPI_Aint)lmpi_iarray_get(disps, (size_t)i);
        st = check_count(bl[i], "a block length");
        if (st == LMPI_OK)
            st = check_size(bl[i], t[i]->size);
        add_block(&b, t[i], bl[i], dp[i]);
        size += bl[i] * t[i]->size;
    }
    /* the extent is padded to the strictest member alignment, unless a
     * member carries resized bounds */
    if (st == LMPI_OK && b.any && !b.marked && b.align > 1) {
        MPI_Aint ext = b.ub - b.lb, pad = (b.align - ext % b.align) % b.align;
        b.ub += pad;
    }
    lmpi_datatype *d = NULL;
    if (st == LMPI_OK)
        st = new_type(make_struct(count, bl, dp, t), size, &b, MPI_COMBINER_STRUCT, out, &d);
    argrec r = {0};
    if (st == LMPI_OK)
        st = args_alloc(&r, count + 2);
    if (st == LMPI_OK) {
        put(&r, large, count);
        for (MPI_Count i = 0; i < count; i++)
            put(&r, large, bl[i]);
        if (large)
            for (MPI_Count i = 0; i < count; i++)
                r.c[r.nc++] = dp[i];
        st = finish(st, d, &r, large ? 0 : (int)count, dp, t, (int)count, large, out);
    } else if (d) {
        lmpi_datatype_release(d);
    }
    lmpi_free(bl), lmpi_free(dp), lmpi_free(t);
    return st;
}

/* MPI_LB and MPI_UB (removed in MPI 3.0; mpi.h keeps them, as MPICH does,
 * unless LMPI_NO_REMOVED_FUNCTIONS) are markers, not types: they leave the
 * list, and the lowest MPI_LB and highest MPI_UB displacement become the
 * bounds of the type made from the rest (MPI-1 §3.12.3).  A marker inside
 * a type then used again does not stick to the outer type (MPI-1's
 * "sticky" bounds): MPI_Type_create_resized, which stands for it, has
 * none. */
static bool is_marker(MPI_Datatype t) { return t == MPI_LB || t == MPI_UB; }

static lmpi_status create_struct_marked(MPI_Count count, lmpi_iarray blens, lmpi_iarray disps,
                                        const MPI_Datatype types[], MPI_Datatype *out)
{
    MPI_Count *bl = lmpi_malloc(sizeof(MPI_Count) * (size_t)(count + 1), LMPI_MEM_DATATYPE);
    MPI_Count *dp = lmpi_malloc(sizeof(MPI_Count) * (size_t)(count + 1), LMPI_MEM_DATATYPE);
    MPI_Datatype *ty = lmpi_malloc(sizeof(MPI_Datatype) * (size_t)(count + 1), LMPI_MEM_DATATYPE);
    if (!bl || !dp || !ty) {
        lmpi_free(bl), lmpi_free(dp), lmpi_free(ty);
        return LMPI_ERR_NO_MEM;
    }
    MPI_Count n = 0;
    bool has_lb = false, has_ub = false;
    MPI_Aint lb = 0, ub = 0;
    for (MPI_Count i = 0; i < count; i++) {
        MPI_Aint d = (MPI_Aint)lmpi_iarray_get(disps, (size_t)i);
        if (types[i] == MPI_LB) {
            lb = has_lb && lb < d ? lb : d;
            has_lb = true;
        } else if (types[i] == MPI_UB) {
            ub = has_ub && ub > d ? ub : d;
            has_ub = true;
        } else {
            bl[n] = lmpi_iarray_get(blens, (size_t)i);
            dp[n] = d;
            ty[n++] = types[i];
        }
    }
    MPI_Datatype plain;
    lmpi_status st = create_struct(n, (lmpi_iarray){bl, 8}, (lmpi_iarray){dp, 8}, ty, &plain);
    lmpi_free(bl), lmpi_free(dp), lmpi_free(ty);
    if (st != LMPI_OK)
        return st;
    lmpi_datatype *p = lmpi_datatype_from_handle(plain);
    MPI_Count plb = p->lb, pext = p->extent;
    MPI_Aint l = has_lb ? lb : (MPI_Aint)plb, u = has_ub ? ub : (MPI_Aint)(plb + pext);
    st = lmpi_impl_Type_create_resized(p, l, u - l, out);
    lmpi_impl_Type_free(&plain);
    return st;
}

lmpi_status lmpi_impl_Type_create_struct(MPI_Count count, lmpi_iarray blens, lmpi_iarray disps,
                                         const MPI_Datatype types[], MPI_Datatype *out)
{
    for (MPI_Count i = 0; types && blens.p && disps.p && i < count; i++)
        if (is_marker(types[i]))
            return create_struct_marked(count, blens, disps, types, out);
    return create_struct(count, blens, disps, types, out);
}

lmpi_status lmpi_impl_Type_create_resized(lmpi_datatype *old, MPI_Count lb, MPI_Count extent, MPI_Datatype *out)
{
    bounds b = {.any = true, .lb = (MPI_Aint)lb, .ub = (MPI_Aint)(lb + extent), .tlb = old->true_lb,
                .tub = old->true_lb + old->true_extent, .align = old->align, .marked = true};
    lmpi_datatype *d = NULL;
    lmpi_status st = new_type(node_ref(old->node), old->size, &b, MPI_COMBINER_RESIZED, out, &d);
    if (st != LMPI_OK)
        return st;
    if (old->size == 0)
        d->true_lb = 0, d->true_extent = 0;
    bool large = lb > INT32_MAX || lb < INT32_MIN || extent > INT32_MAX || extent < INT32_MIN;
    MPI_Aint a[2] = {(MPI_Aint)lb, (MPI_Aint)extent};
    MPI_Count c[2] = {lb, extent};
    st = record(d, 0, NULL, large ? 0 : 2, a, large ? 2 : 0, c, 1, &old, large);
    if (st != LMPI_OK) {
        lmpi_datatype_release(d);
        *out = MPI_DATATYPE_NULL;
    }
    return st;
}

lmpi_status lmpi_impl_Type_dup(lmpi_datatype *old, MPI_Datatype *out)
{
    bounds b = {.any = true, .lb = old->lb, .ub = old->lb + old->extent, .tlb = old->true_lb,
                .tub = old->true_lb + old->true_extent, .align = old->align, .marked = old->marked};
    lmpi_datatype *d = NULL;
    lmpi_status st = new_type(node_ref(old->node), old->size, &b, MPI_COMBINER_DUP, out, &d);
    if (st != LMPI_OK)
        return st;
    d->contiguous = old->contiguous;
    d->committed = old->committed;
    st = record(d, 0, NULL, 0, NULL, 0, NULL, 1, &old, false);
    if (st == LMPI_OK)
        st = lmpi_attr_copy_type(old, d);
    if (st != LMPI_OK) {
        lmpi_datatype_release(d);
        *out = MPI_DATATYPE_NULL;
    }
    return st;
}

/* MPI_Type_get_value_index: the pair type of (value, index) for MINLOC/MAXLOC. */
lmpi_status lmpi_impl_Type_get_value_index(lmpi_datatype *value, lmpi_datatype *index, MPI_Datatype *pair)
{
    static const struct {
        MPI_Datatype v, i, pair;
    } pairs[] = {{MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},       {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
                 {MPI_LONG, MPI_INT, MPI_LONG_INT},         {MPI_INT, MPI_INT, MPI_2INT},
                 {MPI_SHORT, MPI_INT, MPI_SHORT_INT},       {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
                 {MPI_REAL, MPI_REAL, MPI_2REAL},           {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
                 {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER}};
    for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++)
        if (value->handle == pairs[k].v && index->handle == pairs[k].i) {
            *pair = pairs[k].pair;
            return LMPI_OK;
        }
    *pair = MPI_DATATYPE_NULL;
    return LMPI_OK;
}

/* ---- commit, free, queries --------------------------------------------------------- */

lmpi_status lmpi_impl_Type_commit(MPI_Datatype *h)
{
    lmpi_datatype *d = lmpi_datatype_from_handle(*h);
    if (!d || d->magic != LMPI_MAGIC_DATATYPE) {
        lmpi_err_detail(*h == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL" : "not a datatype");
        return LMPI_ERR_TYPE;
    }
    d->committed = true; /* the loop form is built at construction */
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_free(MPI_Datatype *h)
{
    lmpi_datatype *d = lmpi_datatype_from_handle(*h);
    if (!d || d->magic != LMPI_MAGIC_DATATYPE) {
        lmpi_err_detail(*h == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL" : "not a datatype (freed?)");
        return LMPI_ERR_TYPE;
    }
    if (d->predefined || d->cached) {
        lmpi_err_detail("%s cannot be freed", d->predefined ? d->name : "a type from MPI_Type_create_f90_*");
        return LMPI_ERR_TYPE;
    }
    /* the handle's attributes go with it, even when the object lives on
     * (types built on it, pending operations) */
    lmpi_status st = lmpi_attr_delete_all(&d->attrs, d->handle, 1);
    if (st != LMPI_OK)
        return st;
    lmpi_datatype_release(d);
    *h = MPI_DATATYPE_NULL;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_get_true_extent(lmpi_datatype *dt, MPI_Count *lb, MPI_Count *extent)
{
    *lb = dt->true_lb;
    *extent = dt->true_extent;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_get_true_extent_x(lmpi_datatype *dt, MPI_Count *lb, MPI_Count *extent)
{
    return lmpi_impl_Type_get_true_extent(dt, lb, extent);
}

lmpi_status lmpi_impl_Type_get_extent_x(lmpi_datatype *dt, MPI_Count *lb, MPI_Count *extent)
{
    return lmpi_impl_Type_get_extent(dt, lb, extent);
}

lmpi_status lmpi_impl_Type_set_name(lmpi_datatype *dt, const char *name)
{
    lmpi_status st = lmpi_set_object_name(&dt->user_name, name, "type_name", LMPI_MEM_DATATYPE);
    if (st == LMPI_OK)
        dt->name = dt->user_name;
    return st;
}

lmpi_status lmpi_impl_Type_get_envelope_c(lmpi_datatype *dt, MPI_Count *ni, MPI_Count *na, MPI_Count *nc,
                                          MPI_Count *nt, int *combiner)
{
    if (dt->predefined) {
        *ni = *na = *nc = *nt = 0;
        *combiner = MPI_COMBINER_NAMED;
        return LMPI_OK;
    }
    *ni = dt->ni, *na = dt->na, *nc = dt->nc, *nt = dt->nt;
    *combiner = dt->combiner;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_get_envelope(lmpi_datatype *dt, int *ni, int *na, int *nt, int *combiner)
{
    MPI_Count a, b, c, d;
    lmpi_impl_Type_get_envelope_c(dt, &a, &b, &c, &d, combiner);
    if (c) {
        lmpi_err_detail("the type was made by a large-count constructor: use MPI_Type_get_envelope_c");
        return LMPI_ERR_TYPE;
    }
    *ni = (int)a, *na = (int)b, *nt = (int)d;
    return LMPI_OK;
}

static lmpi_status contents(lmpi_datatype *dt, MPI_Count mi, MPI_Count ma, MPI_Count mc, MPI_Count mt, int *ints,
                            MPI_Aint *aints, MPI_Count *counts, MPI_Datatype *types)
{
    if (dt->predefined) {
        lmpi_err_detail("%s is predefined: it has no contents", dt->name);
        return LMPI_ERR_TYPE;
    }
    if (mi < dt->ni || ma < dt->na || mc < dt->nc || mt < dt->nt) {
        lmpi_err_detail("the arrays are too small (need %d integers, %d addresses, %d large counts, %d types)", dt->ni,
                        dt->na, dt->nc, dt->nt);
        return LMPI_ERR_ARG;
    }
    if (dt->ni)
        memcpy(ints, dt->ints, sizeof(int) * (size_t)dt->ni);
    if (dt->na)
        memcpy(aints, dt->aints, sizeof(MPI_Aint) * (size_t)dt->na);
    if (dt->nc && counts) /* MPI_Type_get_contents has no counts (and refused nc > 0) */
        memcpy(counts, dt->counts, sizeof(MPI_Count) * (size_t)dt->nc);
    for (int i = 0; i < dt->nt; i++) {
        /* derived types come back as new handles the caller frees */
        lmpi_datatype_retain(dt->types[i]);
        types[i] = dt->types[i]->handle;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_get_contents(lmpi_datatype *dt, int mi, int ma, int mt, int ints[], MPI_Aint aints[],
                                        MPI_Datatype types[])
{
    if (dt->nc) {
        lmpi_err_detail("the type was made by a large-count constructor: use MPI_Type_get_contents_c");
        return LMPI_ERR_TYPE;
    }
    return contents(dt, mi, ma, 0, mt, ints, aints, NULL, types);
}

lmpi_status lmpi_impl_Type_get_contents_c(lmpi_datatype *dt, MPI_Count mi, MPI_Count ma, MPI_Count mc, MPI_Count mt,
                                          int ints[], MPI_Aint aints[], MPI_Count counts[], MPI_Datatype types[])
{
    return contents(dt, mi, ma, mc, mt, ints, aints, counts, types);
}

lmpi_status lmpi_impl_Get_address(const void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)(uintptr_t)location;
    return LMPI_OK;
}


lmpi_status lmpi_impl_Type_match_size(int typeclass, int size, MPI_Datatype *out)
{
    static const struct {
        int cls, size;
        MPI_Datatype t;
    } table[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INT8_T},       {MPI_TYPECLASS_INTEGER, 2, MPI_INT16_T},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INT32_T},      {MPI_TYPECLASS_INTEGER, 8, MPI_INT64_T},
        {MPI_TYPECLASS_REAL, 4, MPI_FLOAT},           {MPI_TYPECLASS_REAL, 8, MPI_DOUBLE},
        {MPI_TYPECLASS_REAL, (int)sizeof(long double), MPI_LONG_DOUBLE},
        {MPI_TYPECLASS_COMPLEX, 8, MPI_C_FLOAT_COMPLEX}, {MPI_TYPECLASS_COMPLEX, 16, MPI_C_DOUBLE_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, (int)(2 * sizeof(long double)), MPI_C_LONG_DOUBLE_COMPLEX},
        /* sizes C has no type for: the Fortran ones */
        {MPI_TYPECLASS_INTEGER, 16, MPI_INTEGER16},   {MPI_TYPECLASS_REAL, 2, MPI_REAL2},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},         {MPI_TYPECLASS_COMPLEX, 4, MPI_COMPLEX4},
        {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (table[i].cls == typeclass && table[i].size == size) {
            *out = table[i].t;
            return LMPI_OK;
        }
    lmpi_err_detail("no predefined type of class %d with %d bytes", typeclass, size);
    return LMPI_ERR_ARG;
}

/* ---- MPI_Type_create_f90_*: the smallest type with the asked precision
 * and range (IEEE float/double, x87 long double, two's complement
 * integers), one cached object per (kind, p, r) as the standard asks ---- */
typedef struct f90_entry {
    struct f90_entry *next;
    int combiner, p, r;
    lmpi_datatype *t;
} f90_entry;
static f90_entry *f90_cache;

static lmpi_status f90_type(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *out)
{
    for (f90_entry *e = f90_cache; e; e = e->next)
        if (e->combiner == combiner && e->p == p && e->r == r) {
            *out = e->t->handle;
            return LMPI_OK;
        }
    f90_entry *e = lmpi_malloc(sizeof(*e), LMPI_MEM_DATATYPE);
    if (!e)
        return LMPI_ERR_NO_MEM;
    MPI_Datatype h;
    lmpi_status st = lmpi_impl_Type_dup(lmpi_datatype_from_handle(base), &h);
    if (st != LMPI_OK) {
        lmpi_free(e);
        return st;
    }
    lmpi_datatype *t = lmpi_datatype_from_handle(h);
    /* the envelope lists no types, but types[0] keeps naming the
     * predefined base (reductions look it up: src/coll/op.c) */
    t->nt = 0;
    t->combiner = combiner;
    t->cached = true;
    t->committed = true;
    t->ni = 0;
    if (combiner != MPI_COMBINER_F90_INTEGER)
        t->ints[t->ni++] = p; /* record() left room for one int; grow for two */
    int *ints = lmpi_realloc(t->ints, sizeof(int) * 2, LMPI_MEM_DATATYPE);
    if (!ints) {
        lmpi_free(e);
        return LMPI_ERR_NO_MEM;
    }
    t->ints = ints;
    t->ints[t->ni++] = r;
    *e = (f90_entry){f90_cache, combiner, p, r, t};
    f90_cache = e;
    *out = h;
    return LMPI_OK;
}

static lmpi_status f90_real_base(int p, int r, bool cplx, MPI_Datatype *base)
{
    if (p == MPI_UNDEFINED)
        p = 0;
    if (r == MPI_UNDEFINED)
        r = 0;
    if (p <= 6 && r <= 37)
        *base = cplx ? MPI_C_FLOAT_COMPLEX : MPI_FLOAT;
    else if (p <= 15 && r <= 307)
        *base = cplx ? MPI_C_DOUBLE_COMPLEX : MPI_DOUBLE;
    else if (p <= 18 && r <= 4931)
        *base = cplx ? MPI_C_LONG_DOUBLE_COMPLEX : MPI_LONG_DOUBLE;
    else {
        lmpi_err_detail("no real type with precision %d and range %d", p, r);
        return LMPI_ERR_ARG;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_create_f90_real(int p, int r, MPI_Datatype *out)
{
    MPI_Datatype base;
    lmpi_status st = f90_real_base(p, r, false, &base);
    return st != LMPI_OK ? st : f90_type(MPI_COMBINER_F90_REAL, p, r, base, out);
}

lmpi_status lmpi_impl_Type_create_f90_complex(int p, int r, MPI_Datatype *out)
{
    MPI_Datatype base;
    lmpi_status st = f90_real_base(p, r, true, &base);
    return st != LMPI_OK ? st : f90_type(MPI_COMBINER_F90_COMPLEX, p, r, base, out);
}

lmpi_status lmpi_impl_Type_create_f90_integer(int r, MPI_Datatype *out)
{
    MPI_Datatype base = r <= 2 ? MPI_INT8_T : r <= 4 ? MPI_INT16_T : r <= 9 ? MPI_INT32_T : r <= 18 ? MPI_INT64_T
                                                                                                   : MPI_DATATYPE_NULL;
    if (base == MPI_DATATYPE_NULL) {
        lmpi_err_detail("no integer type with range %d (at most 18)", r);
        return LMPI_ERR_ARG;
    }
    return f90_type(MPI_COMBINER_F90_INTEGER, 0, r, base, out);
}

void lmpi_datatype_finalize(void)
{
    while (f90_cache) {
        f90_entry *e = f90_cache;
        f90_cache = e->next;
        e->t->cached = false;
        lmpi_datatype_release(e->t);
        lmpi_free(e);
    }
}
