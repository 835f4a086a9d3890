#!/usr/bin/env python3
"""Bootstrap LeanMPI's signature and constant tables from a standard-ABI header.

Run once (or when the standard's ABI gains entries) against the `mpi_abi.h`
shipped with any MPI 5.0 ABI implementation, e.g. the PyPI wheel mpich==5.0.2:

    tools/abi/import_mpi_abi.py /opt/peers/mpich/include/mpi_abi.h

It writes src/binding/mpi_api.txt (one line per MPI function, each parameter
with a semantic kind) and src/binding/mpi_consts.txt (types, handles and
constants with the standard's values).  Those two tables are the source of
truth; gen_bindings.py turns them into include/mpi.h and the entry points.
Semantic kinds are guessed here from parameter names and then maintained by
hand in the table.
"""
import re
import sys
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Functions the standard allows before MPI_Init or after MPI_Finalize.
ANYTIME = {'MPI_Init', 'MPI_Init_thread', 'MPI_Initialized', 'MPI_Finalized', 'MPI_Finalize',
           'MPI_Get_version', 'MPI_Get_library_version', 'MPI_Error_class', 'MPI_Error_string',
           'MPI_Wtime', 'MPI_Wtick', 'MPI_Aint_add', 'MPI_Aint_diff', 'MPI_Abort',
           'MPI_Get_processor_name'}
ANYTIME_PREFIXES = ('MPI_T_', 'MPI_Session_', 'MPI_Info_', 'MPI_Abi_')

def is_value(name, ret):
    """Functions that return a value instead of an error code."""
    return ret != 'int' or name.endswith('_toint')

def kind_of(fn, ptype, pname, names):
    t = ptype.replace(' ', '')
    n = pname.rstrip('[]')
    arr = pname.endswith('[]')
    if fn.startswith('MPI_Init') and n in ('argc', 'argv'):
        return 'ANY'  # MPI_Init(NULL, NULL) is valid
    if t == 'MPI_Comm':
        return 'COMM'
    if t == 'MPI_Session':
        return 'SESSION'
    if t == 'MPI_Comm*':
        return 'COMM_OUT' if n != 'comm' else 'COMM_INOUT'
    if t in ('MPI_Datatype', 'MPI_Datatype*') and not arr:
        return 'DATATYPE' if t == 'MPI_Datatype' else 'HANDLE_OUT'
    if t == 'MPI_Request*' and not arr:
        if fn.startswith(('MPI_Wait', 'MPI_Test', 'MPI_Request_free', 'MPI_Start', 'MPI_Cancel')):
            return 'REQUEST_INOUT'
        return 'REQUEST_OUT'
    if t == 'MPI_Status*' and not arr:
        return 'STATUS_OUT'
    if t == 'constMPI_Status*':
        return 'STATUS_IN'
    if t.endswith('void*') and n in ('buf', 'sendbuf', 'recvbuf', 'buffer', 'origin_addr', 'inbuf', 'outbuf', 'result_addr'):
        return 'BUFFER'
    if t in ('int', 'MPI_Count') and n in ('count', 'sendcount', 'recvcount', 'incount', 'outcount', 'origin_count', 'target_count', 'result_count'):
        return 'COUNT'
    if t == 'int' and n == 'dest':
        return 'RANK_DEST'
    if t == 'int' and n == 'source':
        return 'RANK_SOURCE'
    if t == 'int' and n == 'root':
        return 'ROOT'
    if t == 'int' and n in ('tag', 'recvtag', 'sendtag'):
        recvish = n == 'recvtag' or ('source' in names and n == 'tag')
        return 'TAG_RECV' if recvish else 'TAG'
    if t == 'int' and n == 'errorcode':
        return 'ERRORCODE'
    if t.endswith('*') and not t.startswith('const') and not t.endswith('void*') \
            and 'function' not in t and not arr and t != 'char*':
        return 'OUT'
    return 'ANY'

def split_params(s):
    s = s.strip()
    if s in ('', 'void'):
        return []
    return [p.strip() for p in s.split(',')]

def parse_param(p):
    if p == '...':
        return '...', '...'
    m = re.match(r'^(.*?)([A-Za-z_][A-Za-z0-9_]*)((?:\[[0-9]*\])*)$', p)
    if not m: raise SystemExit("cannot parse parameter: %r" % p)

    return m.group(1).strip(), m.group(2) + (m.group(3) or '')

def main(path):
    text = open(path).read()
    funcs = {}
    order = []
    for line in text.splitlines():
        m = re.match(r'^([A-Za-z_][A-Za-z0-9_ ]*?\**)\s*(MPI_[A-Za-z0-9_]+)\((.*)\);(.*)$', line)
        if not m:
            continue
        ret, name, params, rest = m.groups()
        if name in funcs:
            continue
        funcs[name] = (ret.strip(), [parse_param(p) for p in split_params(params)],
                       'deprecated' if 'deprecated' in rest else '')
        order.append(name)
    out = ['# LeanMPI signature table: every MPI 5.0 function, one per line.',
           '# <ret> <name>(<type> <param>:<KIND>, ...) [large] [deprecated]',
           '# {int|MPI_Count} marks a type that widens in the generated large-count _c variant.',
           '# Kinds drive the generated argument checks (src/binding/check.h).']
    def pairable(base, large):
        # A _c variant is generated from its base only where it differs by
        # widened integer types; anything else is a function of its own.
        if large is None or len(large[1]) != len(base[1]):
            return False
        widen = {('int', 'MPI_Count'), ('int', 'MPI_Aint'), ('MPI_Aint', 'MPI_Count')}
        for (t, n), (lt, ln) in zip(base[1], large[1]):
            a = t.replace('const ', '').replace('*', '').strip()
            b = lt.replace('const ', '').replace('*', '').strip()
            if n != ln or (a != b and (a, b) not in widen):
                return False
        return True
    for name in order:
        if name.endswith('_c') and pairable(funcs.get(name[:-2]), funcs[name]):
            continue
        ret, params, dep = funcs[name]
        large = funcs.get(name + '_c')
        if not pairable(funcs[name], large):
            large = None
        names = [p[1].rstrip('[]') for p in params]
        ps = []
        for i, (t, n) in enumerate(params):
            tt = t
            if large:
                lt = large[1][i][0]
                if lt != t:
                    a = t.replace('const ', '').replace('*', '').strip()
                    b = lt.replace('const ', '').replace('*', '').strip()
                    tt = t.replace(a, '{%s|%s}' % (a, b))
            if t == '...':
                ps.append('...')
                continue
            k = kind_of(name, t, n, names)
            ps.append('%s %s:%s' % (tt, n, k) if not tt.endswith('*') else '%s%s:%s' % (tt, n, k))
        flags = (' large' if large else '') + (' ' + dep if dep else '')
        if name in ANYTIME or name.startswith(ANYTIME_PREFIXES) or is_value(name, ret):
            flags += ' anytime'
        if is_value(name, ret):
            flags += ' value'
            ps = [p.rsplit(':', 1)[0] + ':ANY' for p in ps]
        out.append('%s %s(%s)%s' % (ret, name, ', '.join(ps), flags))
    open(os.path.join(ROOT, 'src/binding/mpi_api.txt'), 'w').write('\n'.join(out) + '\n')

    # constants: everything before "/* MPI functions */"
    pre = text.split('/* MPI functions */')[0]
    c = ['# LeanMPI constant table: the MPI 5.0 standard ABI values.',
         '# handle <Type> <NAME> <value> | alias <NAME> <NAME> | enum <NAME> <value> |',
         '# define <NAME> <C expression> | typedef <C declaration> | section <title> |',
         '# handletype <Type> | enumgroup <typedef name or ->  (the enum lines after it form one C enum)']
    for line in pre.splitlines():
        s = line.strip()
        m = re.match(r'typedef struct MPI_ABI_(\w+)\* (MPI_\w+);', s)
        if m:
            c.append('handletype %s' % m.group(2))
            continue
        m = re.match(r'(typedef )?enum\s*(\w*)\s*\{', s)
        if m:
            c.append('enumgroup %s' % (m.group(2) or '-'))
            continue
        m = re.match(r'#define (MPI\w+)\s+\(\((MPI_\w+)\)(0x[0-9a-fA-F]+|[0-9]+)\)', s)
        if m:
            c.append('handle %s %s %s' % (m.group(2), m.group(1), m.group(3)))
            continue
        m = re.match(r'#define (MPI\w+)\s+(MPI_\w+)\s*$', s)
        if m and not m.group(1).startswith('MPI_ABI_'):
            c.append('alias %s %s' % (m.group(1), m.group(2)))
            continue
        m = re.match(r'#define (MPI\w+)\s+(.*?)\s*(/\*.*)?$', s)
        if m and not m.group(1).startswith('MPI_H_ABI') and not m.group(1).startswith('MPI_ABI_'):
            c.append('define %s %s' % (m.group(1), m.group(2)))
            continue
        m = re.match(r'(MPIX?_\w+)\s*=\s*([-0-9a-fA-Fx]+),?', s)
        if m and not m.group(1).startswith('MPIX'):
            c.append('enum %s %s' % (m.group(1), m.group(2)))
            continue
        m = re.match(r'/\* (.*) \*/$', s)
        if m and 'MPICH' not in s and 'deprecated' not in s:
            c.append('section %s' % m.group(1))
            continue
        plain = re.sub(r'\s*/\*.*\*/', '', s)
        if plain.startswith('typedef') and 'MPIX' not in plain and 'MPI_ABI_' not in plain and plain.endswith(';'):
            c.append('typedef %s' % plain[len('typedef '):])
    open(os.path.join(ROOT, 'src/binding/mpi_consts.txt'), 'w').write('\n'.join(c) + '\n')

if __name__ == '__main__':
    main(sys.argv[1])
