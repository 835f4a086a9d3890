#!/usr/bin/env python3
"""Generate LeanMPI's Fortran bindings (mpif.h and `use mpi`) from the MPI
Forum's machine-readable standard (the pympistandard package's apis.json)
and LeanMPI's constant table (src/binding/mpi_consts.txt).

Writes, under OUTDIR (default: the repository):
  src/fortran/gen/mpif_procs.c   one C procedure per Fortran procedure, with
                                 the Fortran compiler's name (mpi_send_ and
                                 pmpi_send_), calling the C interface
  include/fortran/mpif.h         constants, sentinels, function types
  src/fortran/gen/mpi_consts.fh  the same constants, included by the module
  src/fortran/gen/mpi_interfaces.fh  the explicit interfaces of `use mpi`
  src/fortran/gen/skipped.txt    the procedures not generated yet, and why

The C procedures call LeanMPI only through the standard ABI's functions
(MPI_x and the handle conversions MPI_x_fromint / MPI_x_toint), so the
library runs over any implementation of that ABI (src/fortran/README.md).

usage: gen_fortran.py [OUTDIR] [--apis PATH]
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Forum kind -> our handle class (the C type and the ABI's conversion prefix)
HANDLES = {
    "COMMUNICATOR": ("MPI_Comm", "Comm"), "DATATYPE": ("MPI_Datatype", "Type"),
    "GROUP": ("MPI_Group", "Group"), "REQUEST": ("MPI_Request", "Request"),
    "INFO": ("MPI_Info", "Info"), "ERRHANDLER": ("MPI_Errhandler", "Errhandler"),
    "FILE": ("MPI_File", "File"), "MESSAGE": ("MPI_Message", "Message"),
    "OPERATION": ("MPI_Op", "Op"), "SESSION": ("MPI_Session", "Session"),
    "WINDOW": ("MPI_Win", "Win"),
}

# Kinds whose Fortran INTEGER(KIND=MPI_ADDRESS_KIND) is a C MPI_Aint, and
# those that are MPI_Offset / MPI_Count.
AINT_KINDS = {"EXTRA_STATE", "ALLOC_MEM_NUM_BYTES", "DISPLACEMENT", "LOCATION_SMALL", "POLYDISPLACEMENT_AINT_COUNT",
              "POLYDISPOFFSET", "POLYDTYPE_PACK_SIZE", "POLYDTYPE_STRIDE_BYTES", "POLYLOCATION",
              "RMA_DISPLACEMENT_NNI", "WINDOW_SIZE", "WIN_ATTACH_SIZE"}
OFFSET_KINDS = {"OFFSET"}
COUNT_KINDS = {"XFER_NUM_ELEM", "XFER_NUM_ELEM_NNI", "NUM_BYTES", "GENERIC_DTYPE_COUNT"}
# Kinds the first version does not express yet: callbacks and their extra
# state, argv arrays, conversions that belong to mpi_f08.
LATER_KINDS = {"FUNCTION", "POLYFUNCTION", "EXTRA_STATE", "EXTRA_STATE2", "STRING_ARRAY",
               "STRING_2DARRAY", "F08_STATUS", "F90_STATUS", "VARARGS"}
# (F08_STATUS and F90_STATUS appear in MPI_Status_f2f08/f082f only: hand-written.)
# Procedures written by hand in src/fortran/mpif_special.c.
HAND_WRITTEN = {"MPI_Comm_get_attr", "MPI_Type_get_attr", "MPI_Win_get_attr", "MPI_Attr_get",
                "MPI_Comm_set_attr", "MPI_Type_set_attr", "MPI_Win_set_attr", "MPI_Attr_put",
                "MPI_Init", "MPI_Init_thread", "MPI_Pcontrol", "MPI_Buffer_detach", "MPI_F_sync_reg",
                "MPI_Info_create_env", "MPI_Op_create", "MPI_Op_free",
                "MPI_Comm_spawn", "MPI_Comm_spawn_multiple", "MPI_Comm_create_errhandler",
                "MPI_Win_create_errhandler", "MPI_File_create_errhandler", "MPI_Session_create_errhandler",
                # mpif_keyval.c: callbacks with user data
                "MPI_Comm_create_keyval", "MPI_Type_create_keyval", "MPI_Win_create_keyval", "MPI_Keyval_create",
                "MPI_Grequest_start", "MPI_Register_datarep",
                "MPI_Info_get_string",  # buflen counts characters in Fortran
                "MPI_Status_f2f08", "MPI_Status_f082f"}
# MPI-1 procedures removed by MPI-3, still called by old Fortran programs:
# written by hand in mpif_removed.c over their replacements (mpif.h and
# `use mpi`, without explicit interfaces, as MPICH has them).
REMOVED_F77 = ["MPI_Address", "MPI_Errhandler_create", "MPI_Errhandler_get", "MPI_Errhandler_set",
               "MPI_Type_extent", "MPI_Type_hindexed", "MPI_Type_hvector", "MPI_Type_lb", "MPI_Type_struct",
               "MPI_Type_ub"]
# In the modules only (generic over every type and kind).
MODULE_ONLY = {"MPI_Sizeof"}

# User-Level Failure Mitigation (src/ft), not in the Forum's apis.json:
# described here in its terms, with Open MPI's Fortran forms (the agree
# flag an INTEGER, as in C).  In mpif.h, `use mpi` and `use mpi_f08` as
# MPICH has them, and in `use mpi_ext` / `use mpi_f08_ext` as Open MPI's
# users write (mpi_ext.F90).  The C procedures reach the MPIX_ functions
# through weak references: the layer still loads over an MPI library
# without them (MPICH's libmpi_abi.so.1), where they answer
# MPI_ERR_UNSUPPORTED_OPERATION.
MPIX_PROCS = [
    ("MPIX_Comm_revoke", [("comm", "COMMUNICATOR", "in")]),
    ("MPIX_Comm_is_revoked", [("comm", "COMMUNICATOR", "in"), ("flag", "LOGICAL", "out")]),
    ("MPIX_Comm_shrink", [("comm", "COMMUNICATOR", "in"), ("newcomm", "COMMUNICATOR", "out")]),
    ("MPIX_Comm_ishrink", [("comm", "COMMUNICATOR", "in"), ("newcomm", "COMMUNICATOR", "out"),
                           ("request", "REQUEST", "out")]),
    ("MPIX_Comm_agree", [("comm", "COMMUNICATOR", "in"), ("flag", "INTEGER", "inout")]),
    ("MPIX_Comm_iagree", [("comm", "COMMUNICATOR", "in"), ("flag", "INTEGER", "inout", "asynchronous"),
                          ("request", "REQUEST", "out")]),
    ("MPIX_Comm_failure_ack", [("comm", "COMMUNICATOR", "in")]),
    ("MPIX_Comm_failure_get_acked", [("comm", "COMMUNICATOR", "in"), ("failedgrp", "GROUP", "out")]),
    ("MPIX_Comm_get_failed", [("comm", "COMMUNICATOR", "in"), ("failedgrp", "GROUP", "out")]),
    ("MPIX_Comm_ack_failed", [("comm", "COMMUNICATOR", "in"), ("num_to_ack", "INTEGER", "in"),
                              ("num_acked", "INTEGER", "out")]),
    ("MPIX_Win_revoke", [("win", "WINDOW", "in")]),
    ("MPIX_Win_get_failed", [("win", "WINDOW", "in"), ("failedgrp", "GROUP", "out")]),
    ("MPIX_File_revoke", [("fh", "FILE", "in")]),
]
MPIX_ERRORS = ["MPIX_ERR_PROC_FAILED", "MPIX_ERR_PROC_FAILED_PENDING", "MPIX_ERR_REVOKED"]


def mpix_entries(template):
    """apis.json-shaped entries for MPIX_PROCS (attributes as template's)."""
    out = {}
    for name, params in MPIX_PROCS:
        ps = [{"name": q[0], "kind": q[1], "param_direction": q[2], "length": None, "pointer": None,
               "asynchronous": "asynchronous" in q[3:], "func_type": "", "constant": False,
               "large_only": False, "suppress": "", "optional": False} for q in params]
        ps.append({"name": "ierror", "kind": "ERROR_CODE", "param_direction": "out", "length": None,
                   "pointer": None, "asynchronous": False, "func_type": "", "constant": False,
                   "large_only": False, "suppress": "c_parameter lis_parameter", "optional": True})
        out[name.lower()] = {"name": name, "name_f90": None, "attributes": dict(template["attributes"]),
                             "parameters": ps, "return_kind": "ERROR_CODE"}
    return out


def is_mpix(p):
    return p["name"].startswith("MPIX_")


def apis_path(given):
    if given:
        return given
    try:
        import pympistandard
        return os.path.join(os.path.dirname(pympistandard.__file__), "data", "apis.json")
    except ImportError:
        pass
    for pattern in ("/opt/peers/pympistandard/lib/python3*/site-packages/pympistandard/data/apis.json",):
        found = glob.glob(pattern)
        if found:
            return found[0]
    sys.exit("gen_fortran.py: the pympistandard package (PyPI) is needed: scripts/install-deps.sh installs it "
             "into /opt/peers/pympistandard")


def large_kinds(apis):
    """The C types of the standard's POLY kinds in the large-count (_c)
    forms, from the same package's kind table (pympistandard/_kinds.py)."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(apis))))
    from pympistandard import _kinds
    return {k.name: k._iso_c_large for k in vars(_kinds).values()
            if getattr(k, "_iso_c_large", None) and k.name.startswith("POLY")}


LARGE_C = {}


# ---- constants ---------------------------------------------------------------

def read_consts():
    """(name, value) for every integer constant Fortran sees, in table order."""
    out = []
    for line in open(os.path.join(ROOT, "src/binding/mpi_consts.txt")):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if f[0] == "handle":
            out.append((f[2], int(f[3], 0)))
        elif f[0] == "enum":
            out.append((f[1], int(f[2], 0)))
        elif f[0] == "define" and len(f) == 3 and f[2].lstrip("-").isdigit():
            out.append((f[1], int(f[2])))
    return out + FORTRAN_ONLY_CONSTS


# Fortran-only constants of MPI-1's removed MPI_TYPE_HVECTOR/HINDEXED/STRUCT
# (mpif_removed.c), which old programs compare combiners against; the C
# library never returns them (those types report the C combiners), so
# their values only need to differ from every combiner of the ABI.
def offset_const(name):
    """An MPI_Offset constant of mpi_consts.txt, written ((MPI_Offset)V)."""
    import re
    for line in open(os.path.join(ROOT, "src/binding/mpi_consts.txt")):
        m = re.match(r"define\s+%s\s+\(\(MPI_Offset\)(-?\d+)\)" % name, line)
        if m:
            return int(m.group(1))
    sys.exit("gen_fortran.py: %s not in mpi_consts.txt" % name)


DISPLACEMENT_CURRENT = offset_const("MPI_DISPLACEMENT_CURRENT")
FORTRAN_ONLY_CONSTS = [("MPI_COMBINER_HVECTOR_INTEGER", 0x7F01), ("MPI_COMBINER_HINDEXED_INTEGER", 0x7F02),
                       ("MPI_COMBINER_STRUCT_INTEGER", 0x7F03)]


def removed_handle(name):
    """MPI_LB and MPI_UB: LeanMPI's mpi.h keeps them with the removed MPI-1
    functions (not in mpi_consts.txt, the ABI's table); old Fortran programs
    use them with MPI_TYPE_STRUCT."""
    import re
    m = re.search(r"#define %s\s+\(\(MPI_Datatype\)(0x[0-9a-fA-F]+)\)" % name,
                  open(os.path.join(ROOT, "include/mpi.h")).read())
    if not m:
        sys.exit("gen_fortran.py: %s not in include/mpi.h" % name)
    return int(m.group(1), 16)


FORTRAN_ONLY_CONSTS += [(n, removed_handle(n)) for n in ("MPI_LB", "MPI_UB")]


def consts_include(consts):
    """Fixed- and free-form alike: code from column 7, lines under 72."""
    lines = ["! Generated by src/fortran/gen_fortran.py: do not edit.",
             "! The standard ABI's values (src/binding/mpi_consts.txt)."]
    aliases = {}
    for line in open(os.path.join(ROOT, "src/binding/mpi_consts.txt")):
        f = line.split()
        if f and f[0] == "alias":
            aliases[f[1]] = f[2]
    values = dict(consts)
    skip = {"MPI_F_STATUS_SIZE", "MPI_F_SOURCE", "MPI_F_TAG", "MPI_F_ERROR"}
    for name, value in consts + [(a, values[b]) for a, b in aliases.items() if b in values]:
        if name in skip:
            continue
        lines.append("      INTEGER %s" % name)
        lines.append("      PARAMETER (%s=%d)" % (name, value))
    for name, value in [("MPI_STATUS_SIZE", 8), ("MPI_SOURCE", 1), ("MPI_TAG", 2), ("MPI_ERROR", 3),
                        ("MPI_ADDRESS_KIND", 8), ("MPI_OFFSET_KIND", 8), ("MPI_COUNT_KIND", 8),
                        ("MPI_INTEGER_KIND", 4)]:
        lines.append("      INTEGER %s" % name)
        lines.append("      PARAMETER (%s=%d)" % (name, value))
    # an MPI_Offset constant: after MPI_OFFSET_KIND
    lines.append("      INTEGER(KIND=MPI_OFFSET_KIND) MPI_DISPLACEMENT_CURRENT")
    lines.append("      PARAMETER (MPI_DISPLACEMENT_CURRENT=%d)" % DISPLACEMENT_CURRENT)
    lines.append("      LOGICAL MPI_SUBARRAYS_SUPPORTED")
    lines.append("      PARAMETER (MPI_SUBARRAYS_SUPPORTED=.FALSE.)")
    lines.append("      LOGICAL MPI_ASYNC_PROTECTS_NONBLOCKING")
    lines.append("      PARAMETER (MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.)")
    return lines


# The sentinels: variables in common blocks of their own, whose addresses
# the C procedures recognise (mpif_util.h).  name, Fortran declaration, block
SENTINELS = [
    ("MPI_BOTTOM", "INTEGER MPI_BOTTOM", "lmpif_bottom"),
    ("MPI_IN_PLACE", "INTEGER MPI_IN_PLACE", "lmpif_in_place"),
    ("MPI_BUFFER_AUTOMATIC", "INTEGER MPI_BUFFER_AUTOMATIC", "lmpif_buffer_automatic"),
    ("MPI_STATUS_IGNORE", "INTEGER MPI_STATUS_IGNORE(8)", "lmpif_status_ignore"),
    ("MPI_STATUSES_IGNORE", "INTEGER MPI_STATUSES_IGNORE(8,1)", "lmpif_statuses_ignore"),
    ("MPI_ERRCODES_IGNORE", "INTEGER MPI_ERRCODES_IGNORE(1)", "lmpif_errcodes_ignore"),
    ("MPI_UNWEIGHTED", "INTEGER MPI_UNWEIGHTED(1)", "lmpif_unweighted"),
    ("MPI_WEIGHTS_EMPTY", "INTEGER MPI_WEIGHTS_EMPTY(1)", "lmpif_weights_empty"),
    ("MPI_ARGV_NULL", "CHARACTER*1 MPI_ARGV_NULL(1)", "lmpif_argv_null"),
    ("MPI_ARGVS_NULL", "CHARACTER*1 MPI_ARGVS_NULL(1,1)", "lmpif_argvs_null"),
]


def sentinel_lines():
    out = []
    for name, decl, block in SENTINELS:
        out.append("      " + decl)
        out.append("      COMMON /%s/ %s" % (block.upper(), name))
    return out


# ---- procedures --------------------------------------------------------------

class Param:
    def __init__(self, j, proc):
        self.name = j["name"].lower()
        self.kind = j["kind"]
        self.dir = j["param_direction"]
        self.length = j["length"]
        self.array = j["length"] is not None
        self.pointer = bool(j.get("pointer"))  # C takes a pointer even for an input
        self.asynchronous = bool(j.get("asynchronous"))
        self.func_type = j.get("func_type") or ""
        self.constant = bool(j.get("constant"))
        self.proc = proc

    @property
    def is_string(self):
        return self.kind == "STRING"


def params_of(p, large=False):
    out = []
    for j in p["parameters"]:
        if (j.get("large_only") and not large) or "f90_parameter" in j.get("suppress", ""):
            continue
        out.append(Param(j, p))
    return out


def why_skipped(p, params):
    a = p["attributes"]
    if not a["f90_expressible"]:
        return "no Fortran binding in the standard"
    if a.get("callback") or a.get("predefined_function"):
        return "a callback type"
    for q in params:
        if q.kind in LATER_KINDS:
            return "parameter %s (%s): not generated yet" % (q.name, q.kind)
        if (q.kind in HANDLES or q.kind == "LOGICAL") and q.array and q.length in ("", "*", None) \
                and implicit_length(q) is None:
            return "parameter %s: an array of implicit length, not generated yet" % q.name
    return None


def c_int_type(q, large=False):
    if large and q.kind in LARGE_C:
        return LARGE_C[q.kind]
    if q.kind in AINT_KINDS or q.kind in ("ATTRIBUTE_VAL", "C_BUFFER"):
        return "MPI_Aint"
    if q.kind in OFFSET_KINDS:
        return "MPI_Offset"
    if q.kind in COUNT_KINDS:
        return "MPI_Count"
    return "MPI_Fint"


RETURN_TYPES = {"WALL_TIME": ("double", "DOUBLE PRECISION"), "TICK_RESOLUTION": ("double", "DOUBLE PRECISION"),
                "LOCATION_SMALL": ("MPI_Aint", "INTEGER(KIND=MPI_ADDRESS_KIND)"),
                "DISPLACEMENT": ("MPI_Aint", "INTEGER(KIND=MPI_ADDRESS_KIND)")}


def buffer_role(p, params, q):
    """How buffer q's (count, datatype) describe it, for mpi_f08's array
    sections (mpif_subarray.h): (mode, count parameter, datatype parameter),
    the parameters' names or None."""
    names = {x.name for x in params}
    proc = p["name"].lower()
    pick = lambda *c: next((x for x in c if x in names), None)
    if proc in ("mpi_buffer_attach", "mpi_comm_attach_buffer", "mpi_session_attach_buffer",
                "mpi_win_attach", "mpi_win_create"):
        return "CONTIG", None, None
    v = q.name
    if v in ("inbuf", "outbuf") and ("pack" in proc):  # MPI_Pack/Unpack(_external)
        if (v == "inbuf") == ("unpack" not in proc):
            return "TOTAL", pick("incount", "outcount"), "datatype"
        return "PERPROC", None, None  # the packed bytes
    if v in ("origin_addr", "result_addr") and pick(v.split("_")[0] + "_count"):
        w = v.split("_")[0]
        return "TOTAL", w + "_count", w + "_datatype"
    if v == "sendbuf":
        if "sendcount" in names:
            per = "scatter" in proc or "alltoall" in proc
            return ("PERPROC" if per else "TOTAL"), "sendcount", pick("sendtype")
        if "sendcounts" in names:
            return "PERPROC", None, pick("sendtype")
        if "count" in names:
            return "TOTAL", "count", "datatype"
        if pick("recvcount", "recvcounts"):  # the reduce_scatter family
            return "PERPROC", None, "datatype"
    if v == "recvbuf":
        if "recvcount" in names:
            per = "gather" in proc or "alltoall" in proc
            return ("PERPROC" if per else "TOTAL"), "recvcount", pick("recvtype", "datatype")
        if "recvcounts" in names:
            return "PERPROC", None, pick("recvtype", "datatype")
        if "count" in names:
            return "TOTAL", "count", "datatype"
    if "count" in names and "datatype" in names:  # buf, buffer, inbuf, inoutbuf
        return "TOTAL", "count", "datatype"
    return "BASE", None, None  # an address: MPI_Get_address, split collectives' end, one RMA element


def errobj(params):
    """The object whose error handler the Fortran layer's own errors reach."""
    for q in params:
        if q.kind in ("COMMUNICATOR", "WINDOW", "FILE") and not q.array and q.dir == "in":
            cls, conv = {"COMMUNICATOR": ("COMM", "Comm"), "WINDOW": ("WIN", "Win"), "FILE": ("FILE", "File")}[q.kind]
            return "(lmpif_errobj){LMPIF_%s, lmpif_%s_fromint(*%s)}" % (cls, conv, q.name)
    return "(lmpif_errobj){LMPIF_COMM, NULL}"


def is_large_kind(q):
    return q.kind in LARGE_C


def c_proc(p, params, ts=False, large=False):
    """One C procedure (and its PMPI_ twin).  ts: mpi_f08's, whose choice
    buffers are descriptors (TYPE(*), DIMENSION(..)); large: the _c form."""
    name = p["name"] + ("_c" if large else "")
    out = []
    ret = p.get("return_kind", "ERROR_CODE")
    cret = RETURN_TYPES.get(ret, ("void", None))[0] if ret != "ERROR_CODE" else "void"
    args, hidden, pre, call, post, allocs = [], [], [], [], [], []
    fastable = []  # the scalar input handles: predefined ones convert by a cast
    bufs = [q for q in params if ts and q.kind == "BUFFER"]
    # the wrapper's test for the fast body: handles predefined, buffers plain
    fast_test = lambda: ([("LMPIF_ALL_PREDEFINED(%s)" % " | ".join("*" + v for v in fastable))] if fastable else []) + \
        ["lmpif_desc_plain(%s)" % q.name for q in bufs]
    roles = {q.name: buffer_role(p, params, q) for q in bufs}
    # which buffers' conversions change a count or datatype argument
    uses = {}
    for q in bufs:
        mode, cnt, typ = roles[q.name]
        if mode == "TOTAL":
            uses.setdefault(cnt, []).append(("count", q.name))
        if mode in ("TOTAL", "PERPROC") and typ:
            uses.setdefault(typ, []).append(("type", q.name))
    for q in params:
        v = q.name
        if q.kind == "ERROR_CODE" and q.name == "ierror":
            args.append("MPI_Fint *ierror")
            continue
        if q.kind == "BUFFER" and ts:
            args.append("CFI_cdesc_t *%s" % v)
            call.append("s_%s.buf" % v)
        elif q.kind == "BUFFER" or q.kind == "C_BUFFER2":
            args.append("void *%s" % v)
            call.append("LMPIF_BUF(%s)" % v)
        elif q.kind in HANDLES:
            ctype, conv = HANDLES[q.kind]
            args.append("MPI_Fint *%s" % v)
            if q.array:
                pre.append("%s *c_%s = lmpif_handles_in(LMPIF_%s, %s, %s, %s);" % (
                    ctype, v, conv.upper(), v, lenexpr(q), "true" if q.dir != "out" else "false"))
                allocs.append("c_" + v)
                call.append("c_%s" % v)
                if q.dir != "in":
                    post.append("lmpif_handles_out(LMPIF_%s, c_%s, %s, %s);" % (conv.upper(), v, v, lenexpr(q)))
                post.append("lmpif_handles_free(c_%s);" % v)
            elif q.dir == "in" and not q.pointer:
                call.append("LMPIF_FROMINT(fast, %s, %s, *%s)" % (ctype, conv, v))
                fastable.append(v)
            else:
                pre.append("%s c_%s = %s;" % (ctype, v, "(%s)0" % ctype if q.dir == "out"
                                             else "LMPIF_FROMINT(fast, %s, %s, *%s)" % (ctype, conv, v)))
                if q.dir != "out":
                    fastable.append(v)
                call.append("&c_%s" % v)
                if q.dir != "in":
                    post.append("if (rc == MPI_SUCCESS) *%s = lmpif_%s_toint(c_%s);" % (v, conv, v))
        elif q.kind == "STATUS":
            args.append("MPI_Fint *%s" % v)
            call.append("LMPIF_STATUS(%s)" % v)
        elif q.kind == "STRING":
            if q.dir == "in":
                args.append("const char *%s" % v)
                hidden.append("size_t %s_len" % v)
                pre.append("char *c_%s = lmpif_str_in(%s, %s_len);" % (v, v, v))
                allocs.append("c_" + v)
                call.append("c_%s" % v)
                post.append("free(c_%s);" % v)
            else:
                args.append("char *%s" % v)
                hidden.append("size_t %s_len" % v)
                pre.append("char *c_%s = lmpif_str_buf(%s_len);" % (v, v))
                allocs.append("c_" + v)
                call.append("c_%s" % v)
                # a string found only when a flag says so (MPI_INFO_GET) is
                # left as it was otherwise, as the standard says
                found = " && c_flag" if any(x.name == "flag" and x.kind == "LOGICAL" and x.dir == "out"
                                            for x in params) else ""
                post.append("lmpif_str_out(c_%s, %s, %s_len, rc == MPI_SUCCESS%s);" % (v, v, v, found))
        elif q.kind == "LOGICAL":
            args.append("MPI_Fint *%s" % v)
            if q.array:
                pre.append("int *c_%s = lmpif_logicals_in(%s, %s);" % (v, v, lenexpr(q)))
                allocs.append("c_" + v)
                call.append("c_%s" % v)
                if q.dir != "in":
                    post.append("lmpif_logicals_out(c_%s, %s, %s);" % (v, v, lenexpr(q)))
                post.append("free(c_%s);" % v)
            elif q.dir == "in":
                call.append("lmpif_from_logical(*%s)" % v)
            else:
                pre.append("int c_%s = 0;" % v)
                call.append("&c_%s" % v)
                post.append("if (rc == MPI_SUCCESS) *%s = lmpif_to_logical(c_%s);" % (v, v))
        elif q.kind == "LOGICAL_VOID":
            args.append("void *%s" % v)
            call.append(v)
        elif q.kind == "ERROR_CODE" and q.array:
            args.append("MPI_Fint *%s" % v)
            call.append("LMPIF_ERRCODES(%s)" % v)
        elif q.kind == "WEIGHT" and q.array:
            args.append("MPI_Fint *%s" % v)
            call.append("LMPIF_WEIGHTS(%s)" % v)
        else:
            t = c_int_type(q, large)
            args.append("%s *%s" % (t, v))
            if q.name == "ranges":  # INTEGER RANGES(3, *): C's int ranges[][3]
                call.append("(int (*)[3])%s" % v)
            elif q.array or q.dir != "in":
                call.append(v)
            elif q.kind == "C_BUFFER":
                call.append("(void *)%s" % v)
            else:
                call.append("*%s" % v)
        if q.kind == "C_BUFFER":
            call[-1] = v  # MPI_Alloc_mem: the C side writes the address into *baseptr
        if q.name in uses:  # a count or datatype an array section's conversion replaces
            for what, b in uses[q.name]:
                call[-1] = ("LMPIF_SUB_COUNT(s_%s, %s)" if what == "count" else "LMPIF_SUB_TYPE(s_%s, %s)") % (b, call[-1])
    sig = ", ".join(args + hidden) or "void"
    body = []
    if cret != "void":
        body.append("    return prof ? P%s(%s) : %s(%s);" % (name, ", ".join(call), name, ", ".join(call)))
    else:
        body += ["    " + x for x in pre]
        if allocs:  # out of memory: free what was made (free(NULL) is nothing)
            body.append("    if (%s) {" % " || ".join("!" + a for a in allocs))
            body += ["        free(%s);" % a for a in allocs]
            body.append("        if (ierror)")
            body.append("            *ierror = MPI_ERR_NO_MEM;")
            body.append("        return;")
            body.append("    }")
        body.append("    int rc = MPI_SUCCESS;")
        if bufs:
            body.append("    lmpif_sub %s;" % ", ".join("s_" + q.name for q in bufs))
            blocking = "false" if (p["name"].endswith("_init") or any(q.asynchronous for q in bufs)) else "true"
            reduction = "true" if any(x.kind == "OPERATION" for x in params) else "false"
            done = []
            for q in bufs:
                mode, cnt, typ = roles[q.name]
                cexpr = "(MPI_Count)*%s" % cnt if cnt else "0"
                texpr = "lmpif_Type_fromint(*%s)" % typ if typ and not any(
                    x.name == typ and x.array for x in params) else "MPI_DATATYPE_NULL"
                peer = next(("&s_" + d for d in done if typ and roles[d][2] == typ), "NULL")
                body.append("    if (fast) /* the caller saw a plain buffer */")
                body.append("        lmpif_sub_set_plain(&s_%s, %s);" % (q.name, q.name))
                body.append("    else if (rc == MPI_SUCCESS && !lmpif_sub_plain(&s_%s, %s))" % (q.name, q.name))
                body.append("        rc = lmpif_sub_begin(&s_%s, %s, LMPIF_SUB_%s, %s, %s, %s, %s, %s, %s, %s, \"%s\", \"%s\");" % (
                    q.name, q.name, mode, blocking, reduction, "false" if q.constant else "true",
                    cexpr, texpr, peer, errobj(params), name.upper(), q.name))
                body.append("    else if (rc != MPI_SUCCESS)")
                body.append("        s_%s = (lmpif_sub)LMPIF_SUB_NONE;" % q.name)
                done.append(q.name)
            body.append("    if (rc == MPI_SUCCESS)")
            body.append("        rc = prof ? P%s(%s) : %s(%s);" % (name, ", ".join(call), name, ", ".join(call)))
            body.append("    if (!fast) { /* plain buffers need no end */")
            body += ["        lmpif_sub_end(&s_%s, rc == MPI_SUCCESS);" % q.name for q in bufs]
            body.append("    }")
        elif is_mpix(p):  # a weak reference: absent from another MPI library
            body.append("    if (!%s || !P%s)" % (name, name))
            body.append("        rc = lmpif_raise(%s, MPI_ERR_UNSUPPORTED_OPERATION, \"%s: this MPI library has no "
                        "User-Level Failure Mitigation\");" % (errobj(params), name.upper()))
            body.append("    else")
            body.append("        rc = prof ? P%s(%s) : %s(%s);" % (name, ", ".join(call), name, ", ".join(call)))
        else:
            body.append("    rc = prof ? P%s(%s) : %s(%s);" % (name, ", ".join(call), name, ", ".join(call)))
        body += ["    " + x for x in post]
        # request indices count from 1 in Fortran (MPI_WAITANY, MPI_TESTSOME...)
        for q in params:
            if q.kind == "INDEX" and q.dir == "out" and "request" in " ".join(x.name for x in params):
                if q.array:
                    body.append("    if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount != MPI_UNDEFINED)")
                    body.append("        for (MPI_Fint i = 0; i < *outcount; i++)")
                    body.append("            %s[i]++;" % q.name)
                else:
                    body.append("    if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *%s != MPI_UNDEFINED)" % q.name)
                    body.append("        (*%s)++;" % q.name)
        if any(q.name == "ierror" for q in params):
            body.append("    if (ierror) /* mpi_f08 calls these directly: an absent ierror is NULL */")
            body.append("        *ierror = rc;")
        else:
            body.append("    (void)rc;")
    low = name.lower()
    suffix = "_f08" if ts or large else ""
    out.append("static inline __attribute__((always_inline)) %s %s%s_body(bool prof%s%s)" % (
        cret, low, suffix, ", bool fast" if fast_test() else "", "".join(", " + a for a in args + hidden)))
    out.append("{")
    out += body
    out.append("}")
    names = [a.split()[-1].lstrip("*") for a in args + hidden]
    ret_kw = "return " if cret != "void" else ""
    fast = fast_test()
    # With input handles, two bodies: every handle predefined (the common
    # case: casts, no call before the C procedure, so few registers to
    # save) and the general one, out of line (mpif_util.h, "Handle
    # conversions on the hot path")
    if fast:
        out.append("static __attribute__((noinline, cold)) %s %s%s_slow(bool prof%s)" % (
            cret, low, suffix, "".join(", " + a for a in args + hidden)))
        out.append("{")
        out.append("    %s%s%s_body(prof, false%s);" % (ret_kw, low, suffix, "".join(", " + n for n in names)))
        out.append("}")
    # MPI_ALLOC_MEM_CPTR and its kind: the TYPE(C_PTR) baseptr of `use mpi`'s
    # overload is the same address-sized word
    cptr = [""] + (["_cptr"] if p["attributes"].get("f90_index_overload") and not (ts or large) else [])
    for prefix, prof, tail in [(a, b, c) for c in cptr for a, b in (("", "false"), ("p", "true"))]:
        out.append("%s %s%s%s%s_(%s)" % (cret, prefix, low, suffix, tail, sig))
        out.append("{")
        args_out = "".join(", " + n for n in names)
        if fast:
            out.append("    if (%s)" % " && ".join(fast))
            out.append("        %s%s%s_body(%s, true%s);" % (ret_kw, low, suffix, prof, args_out))
            out.append("    else")
            out.append("        %s%s%s_slow(%s%s);" % (ret_kw, low, suffix, prof, args_out))
        else:
            out.append("    %s%s%s_body(%s%s);" % (ret_kw, low, suffix, prof, args_out))
        out.append("}")
    out.append("")
    return out


def gen_c(procs, skipped):
    out = ["/* Generated by src/fortran/gen_fortran.py from the MPI Forum's apis.json: do not edit.",
           " * The Fortran procedures of mpif.h and `use mpi`, over the standard C ABI. */",
           '#include "fortran/mpif_util.h"', '#include "fortran/mpif_subarray.h" /* lmpif_raise */', "",
           "/* LeanMPI's extensions, weak: another library may lack them (gen_fortran.py, MPIX_PROCS) */"]
    for name, _ in MPIX_PROCS:
        for n in (name, "P" + name):
            out.append("extern __typeof__(%s) %s __attribute__((weak));" % (n, n))
    out.append("")
    for p, params in procs:
        out += c_proc(p, params)
    return out


def gen_c08(variants):
    out = ["/* Generated by src/fortran/gen_fortran.py from the MPI Forum's apis.json: do not edit.",
           " * mpi_f08's own C procedures: choice buffers as descriptors (array sections,",
           " * mpif_subarray.h) and the large-count _c forms, over the standard C ABI. */",
           '#include "fortran/mpif_subarray.h"', ""]
    for p, params, large in variants:
        out += c_proc(p, params, ts=True, large=large)
    return out


def implicit_length(q):
    """Arrays whose length the standard leaves to the communicator: the
    datatypes of the alltoallw family (one per process, or per neighbour),
    MPI_Cart_sub's remain_dims (one per dimension).  A C expression over
    the call's Fortran arguments (mpif_util.c asks the library).  The
    converted copy lives for the call, also in the nonblocking and persistent
    forms: LeanMPI builds the operation's schedule from the arrays at the
    call (coll.c's do_alltoallw, which also holds the datatypes), and MPICH's
    ABI layer converts them at the call."""
    name = q.proc["name"]
    comm = "MPI_Comm_fromint(*comm)"
    if "alltoallw" in name.lower() and q.name in ("sendtypes", "recvtypes"):
        if "neighbor" in name.lower():
            return "lmpif_neighbours(%s, %s)" % (comm, "true" if q.name == "recvtypes" else "false")
        return "lmpif_peers(%s)" % comm
    if name == "MPI_Cart_sub" and q.name == "remain_dims":
        return "lmpif_cartdim(%s)" % comm
    return None


def lenexpr(q):
    """The C expression of an array parameter's length."""
    n = q.length
    if n in ("", "*", None):
        return implicit_length(q)
    if n.isdigit():
        return n
    return "*" + n.lower()


# ---- the `use mpi` interfaces ---------------------------------------------------

F90_INT = {"MPI_Aint": "INTEGER(KIND=MPI_ADDRESS_KIND)", "MPI_Offset": "INTEGER(KIND=MPI_OFFSET_KIND)",
           "MPI_Count": "INTEGER(KIND=MPI_COUNT_KIND)", "MPI_Fint": "INTEGER"}


# Arrays a collective ignores in some calls (the send side under
# MPI_IN_PLACE, the receive side off the root), where programs written for
# MPICH, whose `use mpi` has no interface for these procedures, pass a
# scalar 0: not checked in `use mpi` either (mpi_f08 checks them).
IGNORABLE_ARRAYS = {"sendcounts", "sdispls", "sendtypes", "recvcounts", "rdispls", "recvtypes", "displs"}


def f90_decl(q):
    if q.array and q.name in IGNORABLE_ARRAYS and (q.kind in HANDLES or c_int_type(q) in ("MPI_Fint", "MPI_Aint")):
        t = "INTEGER" if q.kind in HANDLES or c_int_type(q) == "MPI_Fint" else "INTEGER(KIND=MPI_ADDRESS_KIND)"
        return ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % q.name, "%s :: %s(*)" % (t, q.name)]
    dim = ""
    if q.array:
        dim = "(*)"
        if q.kind == "STATUS":
            dim = "(MPI_STATUS_SIZE,*)"
    if q.kind == "STATUS" and not q.array:
        dim = "(MPI_STATUS_SIZE)"
    if q.kind in ("BUFFER", "C_BUFFER2"):
        return ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % q.name, "TYPE(*), DIMENSION(*) :: %s" % q.name]
    if q.kind == "STRING":
        return ["CHARACTER(LEN=*) :: %s" % q.name]
    if q.kind in ("FUNCTION", "POLYFUNCTION"):
        return ["EXTERNAL :: %s" % q.name]
    if q.kind == "STRING_ARRAY":
        return ["CHARACTER(LEN=*) :: %s(*)" % q.name]
    if q.kind == "STRING_2DARRAY":
        return ["CHARACTER(LEN=*) :: %s(%s, *)" % (q.name, "count")]
    if q.kind == "LOGICAL":
        return ["LOGICAL :: %s%s" % (q.name, dim)]
    if q.kind == "LOGICAL_VOID":
        return ["LOGICAL :: %s" % q.name]
    if q.kind == "F90_STATUS":
        return ["INTEGER :: %s(MPI_STATUS_SIZE)" % q.name]
    if q.kind == "F08_STATUS":  # the mpi module's TYPE(MPI_Status) (mpi.F90)
        return ["TYPE(MPI_Status) :: %s" % q.name]
    if q.kind in HANDLES or q.kind == "STATUS" or q.kind == "ERROR_CODE":
        return ["INTEGER :: %s%s" % (q.name, dim)]
    return ["%s :: %s%s" % (F90_INT[c_int_type(q)], q.name, dim)]


def wrap(line, indent="    "):
    """Free-form lines stay under 132 columns: continue with &."""
    out = []
    while len(line) > 100:
        cut = line.rfind(", ", 0, 100) + 1
        out.append(line[:cut] + " &")
        line = indent + line[cut:].lstrip()
    return out + [line]


def gen_interfaces(procs):
    out = ["! Generated by src/fortran/gen_fortran.py: do not edit."]
    # the profiling names of the functions too: a Fortran profiler calling
    # PMPI_WTIME needs its type (subroutines need no interface)
    procs = procs + [(dict(p, name="P" + p["name"]), params) for p, params in procs
                     if p.get("return_kind", "ERROR_CODE") != "ERROR_CODE"]
    for p, params in procs:
        params = [q for q in params if q.kind != "VARARGS"]
        name = p["name"].upper()
        ret = p.get("return_kind", "ERROR_CODE")
        argnames = ", ".join(q.name for q in params)
        overload = bool(p["attributes"].get("f90_index_overload"))
        out.append("INTERFACE %s" % name if overload else "INTERFACE")
        if ret != "ERROR_CODE":
            out += wrap("FUNCTION %s(%s)" % (name, argnames))
            out.append("  IMPORT :: MPI_ADDRESS_KIND")
            out.append("  IMPLICIT NONE")
            out.append("  %s :: %s" % (RETURN_TYPES[ret][1], name))
        else:
            out += wrap("SUBROUTINE %s(%s)" % (name, argnames))
            out.append("  IMPORT :: MPI_ADDRESS_KIND, MPI_OFFSET_KIND, MPI_COUNT_KIND, MPI_STATUS_SIZE"
                       + (", MPI_Status" if any(q.kind == "F08_STATUS" for q in params) else ""))
            out.append("  IMPLICIT NONE")
        for q in params:
            for d in f90_decl(q):
                out.append("  " + d)
        out.append("END %s %s" % ("FUNCTION" if ret != "ERROR_CODE" else "SUBROUTINE", name))
        if overload:  # the TYPE(C_PTR) form, MPI_X_CPTR
            out += wrap("SUBROUTINE %s_CPTR(%s)" % (name, argnames))
            out.append("  USE, INTRINSIC :: ISO_C_BINDING, ONLY: C_PTR")
            out.append("  IMPORT :: MPI_ADDRESS_KIND")
            out.append("  IMPLICIT NONE")
            for q in params:
                for d in f90_decl(q):
                    out.append("  " + ("TYPE(C_PTR) :: %s" % q.name if q.kind == "C_BUFFER" else d))
            out.append("END SUBROUTINE %s_CPTR" % name)
        out.append("END INTERFACE")
    return out


# ---- the mpi_f08 module ----------------------------------------------------------
#
# Each procedure is a module procedure MPI_X_f08 (and PMPI_X_f08) behind the
# generic name MPI_X, calling the same C procedure as `use mpi` (mpi_x_)
# through a BIND(C) interface: TYPE(MPI_Comm) and the other handle types
# hold one INTEGER and TYPE(MPI_Status) the C status's 8, so they pass as
# they are; strings pass their length explicitly (gfortran's hidden
# argument); LOGICALs go through INTEGER temporaries; ierror is optional.

F08_HANDLE = {k: "MPI_" + v[1] if v[1] != "Type" else "MPI_Datatype" for k, v in HANDLES.items()}
F08_HANDLE["OPERATION"] = "MPI_Op"
F08_HANDLE["WINDOW"] = "MPI_Win"
F08_HANDLE["COMMUNICATOR"] = "MPI_Comm"
F08_LATER_KINDS = LATER_KINDS
# Kinds mpi_f08 passes on to a C procedure written by hand (callbacks:
# the f08 interfaces' arguments, TYPE(C_PTR) by value and handle types,
# are the f77 ones at the machine level; argv arrays).
F08_HAND_KINDS = {"FUNCTION", "POLYFUNCTION", "STRING_ARRAY", "STRING_2DARRAY", "EXTRA_STATE", "EXTRA_STATE2"}
F08_HAND = {"MPI_Sizeof", "MPI_Status_f2f08", "MPI_Status_f082f"}


def f08_skip(p, params):
    for q in params:
        if q.kind in F08_HAND_KINDS and p["name"] in HAND_WRITTEN:
            continue
        if q.kind in F08_LATER_KINDS and q.kind != "VARARGS":
            return "parameter %s (%s): not in mpi_f08 yet" % (q.name, q.kind)
        if q.kind == "LOGICAL" and q.array and q.length in ("", "*", None) and not f08_len(q):
            return "parameter %s: a logical array of implicit length, not in mpi_f08 yet" % q.name
    return None


def f08_int(q, large=False):
    return F90_INT[c_int_type(q, large)]


def f08_dummy(q, intent=True, large=False, ts=False):
    """The declaration of q in the module procedure (ts: a choice buffer is
    assumed rank, passed on as a descriptor)."""
    dim = "(*)" if q.array else ""
    it = ""
    if intent and q.kind not in ("BUFFER", "C_BUFFER2"):
        it = ", INTENT(%s)" % {"in": "IN", "out": "OUT", "inout": "INOUT"}[q.dir]
    if q.kind == "BUFFER" and ts:
        attrs = (", INTENT(IN)" if intent and q.constant else "") + (", ASYNCHRONOUS" if q.asynchronous else "")
        return ["TYPE(*), DIMENSION(..)%s :: %s" % (attrs, q.name)]
    if q.kind == "C_BUFFER2":  # a detached buffer's address, as the standard's mpi_f08 has it
        return ["TYPE(C_PTR)%s :: %s" % (", INTENT(OUT)" if intent else "", q.name)]
    if q.kind == "BUFFER":
        return ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % q.name, "TYPE(*), DIMENSION(*) :: %s" % q.name]
    if q.kind in HANDLES:
        return ["TYPE(%s)%s :: %s%s" % (F08_HANDLE[q.kind], it, q.name, dim)]
    if q.kind == "STATUS":
        return ["TYPE(MPI_Status)%s :: %s%s" % (it, q.name, dim)]
    if q.kind == "STRING":
        return ["CHARACTER(LEN=*)%s :: %s" % (it, q.name)]
    if q.kind == "STRING_ARRAY":
        return ["CHARACTER(LEN=*)%s :: %s(*)" % (it, q.name)]
    if q.kind == "STRING_2DARRAY":
        return ["CHARACTER(LEN=*)%s :: %s(count, *)" % (it, q.name)]
    if q.kind in ("LOGICAL", "LOGICAL_VOID"):
        return ["LOGICAL%s :: %s%s" % (it, q.name, dim)]
    if q.kind == "C_BUFFER":
        return ["TYPE(C_PTR)%s :: %s" % (it, q.name)]
    if q.kind in ("FUNCTION", "POLYFUNCTION"):
        iface = [k for k in ABSTRACT if k.lower() == q.func_type.lower()]
        return ["PROCEDURE(%s) :: %s" % (iface[0], q.name) if iface else "EXTERNAL :: %s" % q.name]
    return ["%s%s%s :: %s%s" % (f08_int(q, large), it, ", ASYNCHRONOUS" if q.asynchronous else "", q.name, dim)]


def f08_c_dummy(q, large=False, ts=False):
    """The declaration of q in the BIND(C) interface to the C procedure."""
    if q.kind == "BUFFER" and ts:
        return ["TYPE(*), DIMENSION(..)%s :: %s" % (", ASYNCHRONOUS" if q.asynchronous else "", q.name)]
    if q.kind == "C_BUFFER2":
        return ["TYPE(C_PTR) :: %s" % q.name]
    if q.kind == "BUFFER":
        return ["TYPE(*), DIMENSION(*) :: %s" % q.name]
    if q.kind in ("STRING", "STRING_ARRAY", "STRING_2DARRAY"):
        return ["CHARACTER(KIND=C_CHAR) :: %s(*)" % q.name]
    if q.kind == "LOGICAL":
        return ["INTEGER(C_INT) :: %s%s" % (q.name, "(*)" if q.array else "")]
    if q.kind == "LOGICAL_VOID":  # the LOGICAL's own storage, as the C procedure reads it
        return ["TYPE(*) :: %s" % q.name]
    if q.kind in ("FUNCTION", "POLYFUNCTION"):  # the procedure's address (C_FUNLOC)
        return ["TYPE(C_FUNPTR), VALUE :: %s" % q.name]
    # the C kinds of the same integers, for C interoperability
    kinds = [("INTEGER(KIND=MPI_ADDRESS_KIND)", "INTEGER(C_INTPTR_T)"),
             ("INTEGER(KIND=MPI_OFFSET_KIND)", "INTEGER(C_INT64_T)"),
             ("INTEGER(KIND=MPI_COUNT_KIND)", "INTEGER(C_INT64_T)"), ("INTEGER ::", "INTEGER(C_INT) ::")]
    out = []
    for d in f08_dummy(q, large=large):
        d = d.replace(", INTENT(IN)", "").replace(", INTENT(OUT)", "").replace(", INTENT(INOUT)", "")
        for a, b in kinds:
            d = d.replace(a, b)
        out.append(d)
    return out


def f08_len(q):
    """A Fortran expression of an array's length; None where unknown."""
    n = q.length
    if n in ("", "*", None):
        if q.proc["name"] == "MPI_Cart_sub" and q.name == "remain_dims":
            return "lmpif_cartdim_f(comm)"
        return None
    return n if n.isdigit() else n.lower()


def f08_variants(p, params):
    """The module procedures of one procedure: (params, ts, large).  ts:
    its choice buffers are array sections passed on as descriptors (the
    procedures written by hand keep DIMENSION(*)); large: the _c form."""
    ts = p["name"] not in HAND_WRITTEN and any(q.kind == "BUFFER" for q in params)
    out = [(params, ts, False)]
    lp = params_of(p, large=True)
    if large_form(p, lp) is None:
        out.append(([q for q in lp if q.kind != "VARARGS"], ts, True))
    return out


MPI_H = None


def large_form(p, lp):
    """Why p has no large-count module procedure; None when it has one."""
    global MPI_H
    if MPI_H is None:
        MPI_H = open(os.path.join(ROOT, "include/mpi.h")).read()
    if not any(q.kind in LARGE_C or q.kind == "POLYFUNCTION" for q in lp):
        return "no count to enlarge"
    if p["name"] in ("MPI_Op_create", "MPI_Register_datarep"):
        return "mpi_f08.F90's MPI_Op_create_c"  # a name of its own (as _c), not an overload
    if p["name"] == "MPI_Buffer_detach":
        return None  # mpi_f08's own C procedure, generated: TYPE(C_PTR) gets the address
    if p["name"] in HAND_WRITTEN or any(q.kind == "POLYFUNCTION" for q in lp):
        return "written by hand"
    if " %s_c(" % p["name"] not in MPI_H:
        return "no %s_c in mpi.h" % p["name"]
    if not any(q.kind in LARGE_C and c_int_type(q) == "MPI_Fint" for q in lp) and \
            len(lp) == len(params_of(p)):
        return "its large form has the same kinds (MPI_ADDRESS_KIND = MPI_COUNT_KIND)"
    return None


def gen_f08(procs):
    ifaces = ["! Generated by src/fortran/gen_fortran.py: do not edit."]
    bodies = ["! Generated by src/fortran/gen_fortran.py: do not edit."]
    generics = []
    c08 = []
    direct = []
    for p, allparams in procs:
        for params, ts, large in f08_variants(p, [q for q in allparams if q.kind != "VARARGS"]):
            if ts or large:
                c08.append((p, params_of(p, large), large))
            if f08_direct(p, params):
                direct += f08_direct_proc(p, params, ts, large)
                continue
            i, b, g = f08_proc(p, params, ts, large)
            ifaces += i
            bodies += b
            generics += g
    gen = ["! Generated by src/fortran/gen_fortran.py: do not edit."]
    for g, f in generics:
        gen.append("INTERFACE %s" % g)
        gen.append("  MODULE PROCEDURE %s" % f)
        gen.append("END INTERFACE %s" % g)
    return ifaces, bodies, gen + direct, c08


F08_NOT_INTEROPERABLE = {"LOGICAL", "LOGICAL_VOID", "STRING", "STRING_ARRAY", "STRING_2DARRAY", "FUNCTION",
                         "POLYFUNCTION"}


def f08_direct(p, params):
    """A procedure whose arguments are all interoperable is the C procedure
    itself under the generic (BIND(C), an absent optional ierror arriving as
    NULL): no Fortran procedure in between."""
    return (p.get("return_kind", "ERROR_CODE") == "ERROR_CODE" and p["name"] not in HAND_WRITTEN and
            not any(q.kind in F08_NOT_INTEROPERABLE for q in params))


def c_kinds(decl):
    """The same integers with their C kinds' names (equal kinds: a default
    INTEGER argument still matches INTEGER(C_INT)), as BIND(C) wants."""
    for a, b in (("INTEGER(KIND=MPI_ADDRESS_KIND)", "INTEGER(C_INTPTR_T)"),
                 ("INTEGER(KIND=MPI_OFFSET_KIND)", "INTEGER(C_INT64_T)"),
                 ("INTEGER(KIND=MPI_COUNT_KIND)", "INTEGER(C_INT64_T)"),
                 ("INTEGER,", "INTEGER(C_INT),"), ("INTEGER ::", "INTEGER(C_INT) ::")):
        decl = decl.replace(a, b)
    return decl


def f08_direct_proc(p, params, ts, large):
    name = p["name"]
    csuffix = ("_c" if large else "") + ("_f08" if ts or large else "")
    out, generics = [], []
    for prefix in ("", "p"):
        fname = "%s%s_f08%s" % ("P" if prefix else "", name, "c" if large else "")
        out.append("INTERFACE %s%s" % ("P" if prefix else "", name))
        out += wrap("  SUBROUTINE %s(%s) BIND(C, NAME=\"%s%s%s_\")" % (
            fname, ", ".join(q.name for q in params), prefix, name.lower(), csuffix), "      ")
        out.append("    IMPORT")
        out.append("    IMPLICIT NONE")
        for q in params:
            if q.name == "ierror":
                out.append("    INTEGER(C_INT), OPTIONAL, INTENT(OUT) :: ierror")
            else:
                out += ["    " + c_kinds(d) for d in f08_dummy(q, large=large, ts=ts) if not d.startswith("!GCC$")]
        out.append("  END SUBROUTINE %s" % fname)
        out.append("END INTERFACE %s%s" % ("P" if prefix else "", name))
    return out


# written by hand with an mpi_f08 entry point of their own (mpif_special.c)
F08_OWN_C = {"MPI_Comm_spawn", "MPI_Comm_spawn_multiple", "MPI_Buffer_detach"}


def f08_proc(p, params, ts, large):
    ifaces, bodies, generics = [], [], []
    name = p["name"]
    low = name.lower()
    ret = p.get("return_kind", "ERROR_CODE")
    has_ierror = any(q.name == "ierror" for q in params)
    strings = [q for q in params if q.kind in ("STRING", "STRING_ARRAY", "STRING_2DARRAY")]
    cargs = [q.name for q in params] + [q.name + "_len" for q in strings]
    csuffix = ("_c" if large else "") + ("_f08" if ts or large or name in F08_OWN_C else "")
    for prefix in ("", "p"):
        stem = low[4:] if low.startswith("mpi_") else "x" + low[4:]  # mpix_comm_revoke: x_comm_revoke
        cname = "lmpif_%s%s%s" % (prefix + "_" if prefix else "", stem, csuffix)
        if ret != "ERROR_CODE":
            ifaces += wrap("FUNCTION %s(%s) BIND(C, NAME=\"%s%s%s_\") RESULT(r)" % (cname, ", ".join(cargs), prefix, low, csuffix))
        else:
            ifaces += wrap("SUBROUTINE %s(%s) BIND(C, NAME=\"%s%s%s_\")" % (cname, ", ".join(cargs), prefix, low, csuffix))
        ifaces.append("  IMPORT")
        ifaces.append("  IMPLICIT NONE")
        if ret != "ERROR_CODE":
            ifaces.append("  %s :: r" % ("REAL(C_DOUBLE)" if RETURN_TYPES[ret][0] == "double"
                                          else "INTEGER(C_INTPTR_T)"))
        for q in params:
            ifaces += ["  " + d for d in f08_c_dummy(q, large, ts)]
        for q in strings:
            ifaces.append("  INTEGER(C_SIZE_T), VALUE :: %s_len" % q.name)
        ifaces.append("END %s %s" % ("FUNCTION" if ret != "ERROR_CODE" else "SUBROUTINE", cname))
        # the module procedure
        fname = "%s%s_f08%s" % ("P" if prefix else "", name, "c" if large else "")
        generics.append(("%s%s" % ("P" if prefix else "", name), fname))
        dargs = [q.name for q in params]
        if ret != "ERROR_CODE":
            bodies += wrap("FUNCTION %s(%s) RESULT(r)" % (fname, ", ".join(dargs)))
        else:
            bodies += wrap("SUBROUTINE %s(%s)" % (fname, ", ".join(dargs)))
        if ret != "ERROR_CODE":
            bodies.append("  %s :: r" % ("DOUBLE PRECISION" if RETURN_TYPES[ret][0] == "double"
                                         else "INTEGER(KIND=MPI_ADDRESS_KIND)"))
        pre, post, call = [], [], []
        for q in params:
            if q.name == "ierror":
                bodies.append("  INTEGER, OPTIONAL, INTENT(OUT) :: ierror")
                bodies.append("  INTEGER :: ierr")
                call.append("ierr")
                continue
            bodies += ["  " + d for d in f08_dummy(q, large=large, ts=ts)]
            if q.kind == "LOGICAL":
                if q.array:
                    bodies.append("  INTEGER, ALLOCATABLE :: l_%s(:)" % q.name)
                    pre.append("ALLOCATE(l_%s(%s))" % (q.name, f08_len(q)))
                    if q.dir != "out":
                        pre.append("l_%s = MERGE(1, 0, %s(1:%s))" % (q.name, q.name, f08_len(q)))
                    if q.dir != "in":
                        post.append("%s(1:%s) = l_%s /= 0" % (q.name, f08_len(q), q.name))
                else:
                    bodies.append("  INTEGER :: l_%s" % q.name)
                    if q.dir != "out":
                        pre.append("l_%s = MERGE(1, 0, %s)" % (q.name, q.name))
                    if q.dir != "in":
                        post.append("%s = l_%s /= 0" % (q.name, q.name))
                call.append("l_" + q.name)
            elif q.kind in ("FUNCTION", "POLYFUNCTION"):
                call.append("C_FUNLOC(%s)" % q.name)
            else:
                call.append(q.name)
        for q in strings:
            call.append("LEN(%s, KIND=C_SIZE_T)" % q.name)
        if ret != "ERROR_CODE":
            bodies.append("  r = %s(%s)" % (cname, ", ".join(call)))
            bodies.append("END FUNCTION %s" % fname)
            continue
        bodies += ["  " + x for x in pre]
        bodies += wrap("  CALL %s(%s)" % (cname, ", ".join(call)))
        bodies += ["  " + x for x in post]
        if has_ierror:
            bodies.append("  IF (PRESENT(ierror)) ierror = ierr")
        bodies.append("END SUBROUTINE %s" % fname)
    return ifaces, bodies, generics


def gen_f08_consts(consts):
    """Handles as constants of their types, the rest as INTEGERs; the
    sentinels are the C procedures' own variables (BIND(C))."""
    out = ["! Generated by src/fortran/gen_fortran.py: do not edit."]
    handle_of = {}
    for line in open(os.path.join(ROOT, "src/binding/mpi_consts.txt")):
        f = line.split()
        if f and f[0] == "handle":
            handle_of[f[2]] = f[1]
    handle_of.update({"MPI_LB": "MPI_Datatype", "MPI_UB": "MPI_Datatype"})
    # the aliases (MPI_LONG_LONG_INT = MPI_LONG_LONG), typed as what they name
    values = dict(consts)
    for line in open(os.path.join(ROOT, "src/binding/mpi_consts.txt")):
        f = line.split()
        if f and f[0] == "alias" and f[2] in values:
            if f[2] in handle_of:
                handle_of[f[1]] = handle_of[f[2]]
            consts = consts + [(f[1], values[f[2]])]
    for name, value in consts:
        if name in ("MPI_F_STATUS_SIZE", "MPI_F_SOURCE", "MPI_F_TAG", "MPI_F_ERROR"):
            continue
        t = handle_of.get(name)
        if t and t not in F08_HANDLE.values():
            continue  # the tools interface's handles: C only
        if t:
            out.append("TYPE(%s), PARAMETER :: %s = %s(%d)" % (t, name, t, value))
        else:
            out.append("INTEGER, PARAMETER :: %s = %d" % (name, value))
    for name, value in [("MPI_STATUS_SIZE", 8), ("MPI_SOURCE", 1), ("MPI_TAG", 2), ("MPI_ERROR", 3),
                        ("MPI_ADDRESS_KIND", 8), ("MPI_OFFSET_KIND", 8),
                        ("MPI_COUNT_KIND", 8), ("MPI_INTEGER_KIND", 4)]:
        out.append("INTEGER, PARAMETER :: %s = %d" % (name, value))
    out.append("INTEGER(KIND=MPI_OFFSET_KIND), PARAMETER :: MPI_DISPLACEMENT_CURRENT = %d" % DISPLACEMENT_CURRENT)
    out.append("LOGICAL, PARAMETER :: MPI_SUBARRAYS_SUPPORTED = .TRUE.")
    out.append("LOGICAL, PARAMETER :: MPI_ASYNC_PROTECTS_NONBLOCKING = .TRUE.")
    for name, decl, block in SENTINELS:
        if decl.startswith("CHARACTER"):
            dims = decl[decl.index("("):]
            out.append("CHARACTER(KIND=C_CHAR), BIND(C, NAME=\"%s_\") :: %s%s" % (block, name, dims))
        elif "STATUS" in name:
            dims = "(1)" if "STATUSES" in name else ""
            out.append("TYPE(MPI_Status), BIND(C, NAME=\"%s_\") :: %s%s" % (block, name, dims))
        else:
            dims = decl[decl.index("("):] if "(" in decl else ""
            out.append("INTEGER(C_INT), BIND(C, NAME=\"%s_\") :: %s%s" % (block, name, dims))
    for lines in ABSTRACT.values():
        out += lines
    for n in PREDEFINED_FNS:  # external procedures (mpif_keyval.c) with the standard's interface
        iface = [k for k in ABSTRACT if k.lower() == PREDEFINED_TYPE.get(n, "").lower()]
        out.append("PROCEDURE(%s) :: %s" % (iface[0], n) if iface else "EXTERNAL :: %s" % n)
    return out


PREDEFINED_FNS = []  # MPI_COMM_DUP_FN and the others (mpif_keyval.c), from apis.json
ABSTRACT = {}        # callback type -> mpi_f08's abstract interface (lines), from pympistandard
PREDEFINED_TYPE = {}  # MPI_COMM_DUP_FN -> its callback type


def load_callbacks(apis):
    """mpi_f08's abstract interfaces of the callback types, as the
    standard's own package renders them (its rendering lacks the SUBROUTINE
    and END lines, and a module needs IMPORT), and the callback type of each
    predefined callback."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(apis))))
    import pympistandard as std
    std.use_api_version(1)
    for cb in std.CALLBACKS.values():
        text = cb.express.f08
        if text is None:
            continue
        lines = [x.strip() for x in str(text).splitlines() if x.strip()]
        head, decls = lines[1], lines[2:]
        uses = [d for d in decls if d.upper().startswith("USE")]
        ABSTRACT[head.split("(")[0]] = (["ABSTRACT INTERFACE", "  SUBROUTINE %s" % head] + ["    " + u for u in uses] +
                             ["    IMPORT", "    IMPLICIT NONE"] +
                             ["    " + d for d in decls if d not in uses] +
                             ["  END SUBROUTINE", "END INTERFACE"])
    for p in std.PREDEFINED_FUNCTIONS.values():
        PREDEFINED_TYPE[p.name.upper()] = p.callback.name


def predefined_externals():
    return ["      EXTERNAL %s" % n for n in PREDEFINED_FNS]


def gen_mpif(consts):
    out = ["! mpif.h: LeanMPI's Fortran 77 interface (include 'mpif.h').",
           "! Generated by src/fortran/gen_fortran.py: do not edit.",
           "! Fixed and free form alike: code from column 7, lines under 72."]
    out += consts_include(consts)
    out += sentinel_lines()
    out += predefined_externals()
    # REAL(KIND=8), not DOUBLE PRECISION: -fdefault-real-8 alone makes
    # DOUBLE PRECISION 16 bytes, and the C functions return a double
    for fn, t in (("MPI_WTIME", "REAL(KIND=8)"), ("MPI_WTICK", "REAL(KIND=8)"),
                  ("PMPI_WTIME", "REAL(KIND=8)"), ("PMPI_WTICK", "REAL(KIND=8)")):
        # (not MPI_AINT_ADD/DIFF: as in MPICH's mpif.h, programs declare
        # those themselves, and a second declaration would not compile)
        out.append("      %s %s" % (t, fn))
        out.append("      EXTERNAL %s" % fn)
    return out


def main():
    argv = sys.argv[1:]
    given = None
    if "--apis" in argv:
        i = argv.index("--apis")
        given = argv[i + 1]
        del argv[i:i + 2]
    outdir = argv[0] if argv else ROOT
    LARGE_C.update(large_kinds(apis_path(given)))
    load_callbacks(apis_path(given))
    apis = json.load(open(apis_path(given)))
    apis.update(mpix_entries(apis["mpi_comm_test_inter"]))
    PREDEFINED_FNS.extend(sorted(p["name"] for p in apis.values() if p["attributes"].get("predefined_function")))
    procs, skipped, hand = [], [], []
    for key in sorted(apis):
        p = apis[key]
        if p["attributes"].get("callback") or p["attributes"].get("predefined_function"):
            continue
        if p["name"] in MODULE_ONLY:
            continue
        if p["name"] in HAND_WRITTEN:
            hand.append((p, params_of(p)))
            continue
        params = params_of(p)
        why = why_skipped(p, params)
        if why:
            skipped.append("%s: %s" % (p["name"], why))
        else:
            procs.append((p, params))
    consts = read_consts()
    everything = sorted(procs + hand, key=lambda x: x[0]["name"])
    f08_procs, f08_skipped = [], []
    for p, params in everything:
        if p["name"] in F08_HAND:  # mpi_f08.F90
            continue
        why = f08_skip(p, params)
        if why:
            f08_skipped.append("%s (mpi_f08): %s" % (p["name"], why))
        else:
            f08_procs.append((p, params))
    f08_ifaces, f08_bodies, f08_generics, c08 = gen_f08(f08_procs)
    for p, params in f08_procs:
        why = large_form(p, params_of(p, large=True))
        if why and why not in ("no count to enlarge", "mpi_f08.F90's MPI_Op_create_c"):
            f08_skipped.append("%s_c (mpi_f08): %s" % (p["name"], why))
    # where each procedure is, for leanmpi_info --functions: 1 mpif.h, 2 the
    # mpi module, 4 mpi_f08; 8: the standard gives it no Fortran binding
    where = {}
    for key in apis:
        p = apis[key]
        if p["attributes"].get("callback") or p["attributes"].get("predefined_function"):
            continue
        if not p["attributes"]["f90_expressible"] and not p["attributes"].get("f08_expressible"):
            where[p["name"]] = 8
    for p, _ in procs + hand:
        where[p["name"]] = where.get(p["name"], 0) & ~8 | 1 | 2
    for n in MODULE_ONLY:
        where[n] = 2 | 4
    for n in REMOVED_F77:  # mpif_removed.c: gone from the standard, kept for old programs
        where[n] = 1 | 2
    where["MPI_Op_create_c"] = where["MPI_Register_datarep_c"] = 4  # mpi_f08.F90
    for n in ("MPI_Status_f2f08", "MPI_Status_f082f"):  # mpi_f08.F90 too
        where[n] |= 4
    for p, params in f08_procs:
        where[p["name"]] = where.get(p["name"], 0) & ~8 | 4
        if large_form(p, params_of(p, large=True)) is None:
            where[p["name"] + "_c"] = 4
    table = ["/* Generated by src/fortran/gen_fortran.py: do not edit.  Where each MPI procedure",
             " * has its Fortran binding (leanmpi_info --functions): 1 mpif.h, 2 `use mpi`,",
             " * 4 `use mpi_f08`; 8 none in the standard (C only). */",
             "static const struct lmpi_fortran_proc {",
             "    const char *name;",
             "    unsigned char where;",
             "} lmpi_fortran_procs[] = {"]
    table += ['    {"%s", %d},' % (n, w) for n, w in sorted(where.items())]
    table += ["    {0, 0},", "};"]
    files = {
        "src/fortran/gen/fortran_procs.h": table,
        "src/fortran/gen/mpif_procs.c": gen_c(procs, skipped),
        "src/fortran/gen/mpif08_procs.c": gen_c08(c08),
        "include/fortran/mpif.h": gen_mpif(consts),
        "src/fortran/gen/mpi_consts.fh": consts_include(consts) + sentinel_lines() + predefined_externals(),
        "src/fortran/gen/mpi_interfaces.fh": gen_interfaces(sorted(procs + hand, key=lambda x: x[0]["name"])),
        "src/fortran/gen/skipped.txt": ["# Procedures with a Fortran binding that gen_fortran.py does not generate yet",
                                        "# (the others are generated, or written by hand in src/fortran/mpif_special.c)."]
                                       + [s for s in skipped if "no Fortran binding" not in s] + f08_skipped,
        "src/fortran/gen/mpi_f08_consts.fh": gen_f08_consts(consts),
        "src/fortran/gen/mpi_f08_cprocs.fh": f08_ifaces,
        "src/fortran/gen/mpi_f08_generics.fh": f08_generics,
        "src/fortran/gen/mpi_f08_procs.fh": f08_bodies,
        # Open MPI's module names for its extensions (mpi_ext.F90): the same entities
        "src/fortran/gen/mpi_ext_use.fh": ["! Generated by src/fortran/gen_fortran.py: do not edit."]
                                          + wrap("USE mpi, ONLY: " + ", ".join(
                                              MPIX_ERRORS + [n.upper() for n, _ in MPIX_PROCS]), "    "),
        "src/fortran/gen/mpi_f08_ext_use.fh": ["! Generated by src/fortran/gen_fortran.py: do not edit."]
                                              + wrap("USE mpi_f08, ONLY: " + ", ".join(
                                                  MPIX_ERRORS + [p + n for n, _ in MPIX_PROCS for p in ("", "P")]),
                                                  "    "),
    }
    for rel, lines in files.items():
        path = os.path.join(outdir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
    print("gen_fortran.py: %d procedures generated, %d written by hand, %d not yet" %
          (len(procs), len(HAND_WRITTEN) + len(MODULE_ONLY), len([s for s in skipped if "no Fortran binding" not in s])))


if __name__ == "__main__":
    main()
