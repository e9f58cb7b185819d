/* A TracePacket's ftrace bundle checked on the wire, so the reader need not have upb parse it
 * (issue #25): the bundle is most of a trace's bytes, and the batch reader
 * (perfetto_ftrace_batch.py) walks those bytes again in C anyway.
 *
 * upb's full parse decided which packets are dropped as undecodable; this check must never be
 * looser. It walks the bundle recursively with a schema table that perfetto_bundle_view.py
 * derives from the Perfetto descriptors at import (field number -> submessage / packed varint /
 * packed fixed32 / packed fixed64 / other, for FtraceEventBundle and every message under it) and
 * rejects every shape upb rejects — truncated varints, tags and lengths, field number 0, wire
 * types 6 and 7, packed payloads that do not split, nesting deeper than a bound — and some it
 * accepts (groups anywhere, a 10-byte varint whose last byte is above 1, tags over 32 bits, an
 * ftrace_clock outside its closed enum, the bundle written twice, compact_sched written
 * twice). A rejection means "not sure": the caller then has upb parse the whole packet, so upb
 * still decides every packet this file does not accept. tests/test_perfetto_bundle_view.py
 * checks on mutated and truncated real bundles that whenever upb raises, this rejects.
 *
 *   set_schema(tables, bundle_field, cpu, event, compact, clock, clock_values, uid, seq, pid)
 *   split(raw) -> None, or (rest, off, size, cpu, ftrace_clock, events, cs_off, cs_len, seq):
 *       rest   the packet's bytes without the bundle field (for upb: the small fields),
 *       off/size where the bundle's bytes are in raw; cpu, ftrace_clock, the number of events
 *       (field `event`, wire type 2), and where compact_sched's bytes are (cs_off -1: absent);
 *       seq    the packet's trusted_packet_sequence_id when rest holds nothing but the trusted
 *              uid, sequence id and pid as varints (a plain packet: upb need not parse rest;
 *              0 when the id is absent), else -1.
 *   process_stats(raw, stats_field, processes_field, pid_field, wanted) -> None, or the rows of a
 *       process_stats packet upb has parsed (perfetto_process_stats.py): per process, per wanted
 *       field it has, (pid, index in wanted, value) as three lists. None: not the plain shape
 *       (the stats written twice, a wanted field or pid of another wire type, a group), which
 *       the caller reads from upb's parse.
 *
 * Plain CPython C API and the buffer protocol. Every read is bounds-checked (an 8-byte load only
 * where 8 bytes remain before the end of the field it reads).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { K_OTHER = 0, K_MSG = 1, K_PVARINT = 2, K_PF32 = 3, K_PF64 = 4 };
/* Nesting below the packet: the Perfetto schema under a bundle is 4 deep; upb allows 100. */
#define MAX_DEPTH 32

typedef struct {
    uint32_t nfields; /* entries: field numbers 0..nfields-1 */
    uint32_t *ent;    /* kind | child << 3 */
} msg_t;

static msg_t *schema = NULL;
static Py_ssize_t nschema = 0;
static uint32_t f_bundle, f_cpu, f_event, f_compact, f_clock;
/* TracePacket's trusted ids: a packet of its bundle and these (as varints) alone is plain. */
static uint32_t f_uid, f_seq, f_tpid;
static uint64_t clock_ok = 0; /* bit v set: v is a value of the closed enum FtraceClock (v < 64) */

/* A varint of at most `max` bytes inside [p, end); 0 on success. The 10th byte of a 64-bit
 * varint may only be 0 or 1 (stricter than upb, which drops the extra bits). */
static inline int varint(const uint8_t *b, Py_ssize_t *p, Py_ssize_t end, int max, uint64_t *out)
{
    uint64_t v = 0;
    Py_ssize_t q = *p;
    if (q < end && b[q] < 0x80) { /* most tags and many values: one byte */
        *out = b[q];
        *p = q + 1;
        return 0;
    }
    for (int k = 0; k < max; k++) {
        if (q + k >= end)
            return -1;
        uint8_t c = b[q + k];
        if (k == 9 && c > 1)
            return -1;
        v |= (uint64_t)(c & 0x7F) << (7 * k);
        if (c < 0x80) {
            *out = v;
            *p = q + k + 1;
            return 0;
        }
    }
    return -1;
}

/* Eight bytes at a time where the byte order allows (little-endian, GCC or Clang): one load tells
 * where the first varint byte under 0x80 is. Elsewhere the byte-by-byte loops do it all. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WORDS 1
#define HIGH_BITS 0x8080808080808080ull
static inline uint64_t ends_of(const uint8_t *b) /* bit 8i+7 set: byte i is under 0x80 */
{
    uint64_t w;
    memcpy(&w, b, 8);
    return ~w & HIGH_BITS;
}
#else
#define WORDS 0
#endif

/* Past a varint whose value is not needed, as varint(b, p, end, 10, ...) judges it. */
static inline int skip_varint(const uint8_t *b, Py_ssize_t *p, Py_ssize_t end)
{
    Py_ssize_t q = *p;
    if (q < end && b[q] < 0x80) {
        *p = q + 1;
        return 0;
    }
#if WORDS
    if (end - q >= 8) { /* a varint of at most 8 bytes: inside [q, end), the 10-byte rule moot */
        uint64_t t = ends_of(b + q);
        if (t) {
            *p = q + (__builtin_ctzll(t) >> 3) + 1;
            return 0;
        }
    }
#endif
    uint64_t v;
    return varint(b, p, end, 10, &v);
}

/* A packed varint column splits into varints of at most 10 bytes, the 10th 0 or 1 (as varint()).
 * A word is taken whole when the run of continuation bytes into its first end byte is at most 8
 * (a varint of 9 bytes or fewer, inside the word's runs all shorter); else byte by byte. */
static inline int check_packed(const uint8_t *b, Py_ssize_t p, Py_ssize_t end)
{
    int run = 0; /* continuation bytes so far in this varint */
    while (p < end) {
#if WORDS
        if (end - p >= 8) {
            uint64_t t = ends_of(b + p);
            if (t && run + (__builtin_ctzll(t) >> 3) <= 8) {
                run = __builtin_clzll(t) >> 3; /* the bytes after the word's last end byte */
                p += 8;
                continue;
            }
        }
#endif
        uint8_t c = b[p++];
        if (c & 0x80) {
            if (++run >= 10)
                return -1;
        } else {
            if (run == 9 && c > 1)
                return -1;
            run = 0;
        }
    }
    return run ? -1 : 0;
}

/* Past one field's value of wire type `wt` in b[*p:end), the value of a varint in *v, where a
 * length-delimited one starts in *q and its length in *v; 0 when it is whole. Groups (3, 4) and
 * the wire types that do not exist (6, 7) are -1: the caller leaves those to upb. */
static inline int skip_value(const uint8_t *b, Py_ssize_t *p, Py_ssize_t end, int wt, uint64_t *v, Py_ssize_t *q)
{
    switch (wt) {
    case 0:
        return varint(b, p, end, 10, v);
    case 1:
    case 5: {
        Py_ssize_t w = wt == 1 ? 8 : 4;
        if (end - *p < w)
            return -1;
        *p += w;
        return 0;
    }
    case 2:
        if (varint(b, p, end, 5, v) || *v > (uint64_t)(end - *p))
            return -1;
        *q = *p;
        *p += (Py_ssize_t)*v;
        return 0;
    default:
        return -1;
    }
}

typedef struct {
    uint64_t cpu, clock;
    Py_ssize_t events, cs_off, cs_len, cs_seen;
} info_t;

static int check_msg(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, Py_ssize_t m, int depth, info_t *info);

/* One field's payload, by the schema's kind for it; 0 when acceptable. */
static int check_payload(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, uint32_t e, int depth)
{
    switch (e & 7) {
    case K_MSG:
        if (depth + 1 > MAX_DEPTH)
            return -1;
        return check_msg(b, p, end, (Py_ssize_t)(e >> 3), depth + 1, NULL);
    case K_PVARINT:
        return check_packed(b, p, end);
    case K_PF32:
        return (end - p) % 4 ? -1 : 0;
    case K_PF64:
        return (end - p) % 8 ? -1 : 0;
    default:
        return 0;
    }
}

/* Message `m` of the schema in b[p:end]; `info` (the bundle only) collects what the reader uses. */
static int check_msg(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, Py_ssize_t m, int depth, info_t *info)
{
    if (m < 0 || m >= nschema)
        return -1;
    const msg_t *s = &schema[m];
    while (p < end) {
        uint64_t tag, v = 0;
        if (varint(b, &p, end, 5, &tag) || tag > 0xFFFFFFFFu)
            return -1;
        uint64_t fno = tag >> 3;
        int wt = (int)(tag & 7);
        if (fno == 0)
            return -1;
        uint32_t e = fno < s->nfields ? s->ent[fno] : K_OTHER;
        switch (wt) {
        case 0:
            if (!info) {
                if (skip_varint(b, &p, end))
                    return -1;
                break;
            }
            if (varint(b, &p, end, 10, &v))
                return -1;
            if (fno == f_cpu)
                info->cpu = v & 0xFFFFFFFFu;
            if (fno == f_clock) {
                int32_t c = (int32_t)(uint32_t)v; /* an enum is read as int32 */
                if (c < 0 || c >= 64 || !(clock_ok >> c & 1))
                    return -1; /* upb keeps it as an unknown field: let upb decide */
                info->clock = (uint64_t)c;
            }
            break;
        case 1:
            if (end - p < 8)
                return -1;
            p += 8;
            break;
        case 5:
            if (end - p < 4)
                return -1;
            p += 4;
            break;
        case 2: {
            uint64_t len;
            if (varint(b, &p, end, 5, &len) || len > (uint64_t)(end - p))
                return -1;
            Py_ssize_t q = p + (Py_ssize_t)len;
            if (check_payload(b, p, q, e, depth))
                return -1;
            if (info && fno == f_event)
                info->events++;
            if (info && fno == f_compact) {
                if (info->cs_seen++)
                    return -1; /* written twice: upb merges the two; let it */
                info->cs_off = p;
                info->cs_len = q - p;
            }
            p = q;
            break;
        }
        default: /* groups (3, 4) and the wire types that do not exist (6, 7) */
            return -1;
        }
    }
    return p == end ? 0 : -1;
}

static PyObject *b_split(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (!schema) {
        PyErr_SetString(PyExc_RuntimeError, "split: set_schema first");
        return NULL;
    }
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const uint8_t *b = (const uint8_t *)view.buf;
    Py_ssize_t n = view.len, p = 0, f0 = -1, f1 = -1, off = 0, size = 0;
    int seen = 0, ok = 1, plain = 1;
    uint32_t seq = 0;
    while (p < n) {
        Py_ssize_t start = p;
        uint64_t tag, v = 0;
        if (varint(b, &p, n, 5, &tag) || tag > 0xFFFFFFFFu || (tag >> 3) == 0) {
            ok = 0;
            break;
        }
        Py_ssize_t q = 0;
        if (skip_value(b, &p, n, (int)(tag & 7), &v, &q)) {
            ok = 0;
            break;
        }
        uint64_t fno = tag >> 3;
        if (fno == f_bundle && (tag & 7) == 2) {
            if (seen++) {
                ok = 0; /* two bundle fields merge in upb: let it */
                break;
            }
            f0 = start;
            f1 = p;
            off = q;
            size = (Py_ssize_t)v;
        } else if ((tag & 7) == 0 && (fno == f_uid || fno == f_seq || fno == f_tpid)) {
            if (fno == f_seq)
                seq = (uint32_t)v; /* uint32: the low 32 bits; the last one written wins */
        } else {
            plain = 0;
        }
    }
    info_t info = {0, 0, 0, -1, 0, 0};
    if (ok && seen == 1 && check_msg(b, off, off + size, 0, 1, &info) == 0) {
        PyObject *rest = PyBytes_FromStringAndSize(NULL, n - (f1 - f0));
        if (!rest) {
            PyBuffer_Release(&view);
            return NULL;
        }
        char *r = PyBytes_AS_STRING(rest);
        memcpy(r, b, (size_t)f0);
        memcpy(r + f0, b + f1, (size_t)(n - f1));
        PyBuffer_Release(&view);
        return Py_BuildValue("(NnnKKnnnL)", rest, off, size, (unsigned long long)info.cpu,
                             (unsigned long long)info.clock, info.events, info.cs_off, info.cs_len,
                             plain ? (long long)seq : -1LL);
    }
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

#define MAX_WANTED 16

/* One ProcessStats.Process in b[p:end): its pid and the wanted fields it has, appended to the
 * three lists in `wanted` order; 1 when the process is not the plain shape (let upb read it). */
static int stats_process(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, uint32_t f_pid, const uint32_t *want,
                         int nwant, PyObject *pids, PyObject *ks, PyObject *values)
{
    uint64_t got[MAX_WANTED], v = 0;
    uint32_t have = 0;
    int32_t pid = 0;
    while (p < end) {
        uint64_t tag;
        Py_ssize_t q;
        if (varint(b, &p, end, 5, &tag) || tag > 0xFFFFFFFFu || (tag >> 3) == 0)
            return 1;
        uint32_t fno = (uint32_t)(tag >> 3);
        int wt = (int)(tag & 7), k = -1;
        for (int j = 0; j < nwant; j++)
            if (want[j] == fno)
                k = j;
        if ((fno == f_pid || k >= 0) && wt != 0)
            return 1; /* a known scalar of another wire type: upb keeps it unknown; let it */
        if (skip_value(b, &p, end, wt, &v, &q))
            return 1;
        if (fno == f_pid)
            pid = (int32_t)(uint32_t)v; /* int32: the low 32 bits; the last one written wins */
        else if (k >= 0) {
            got[k] = v;
            have |= 1u << k;
        }
    }
    for (int k = 0; k < nwant; k++) {
        if (!(have >> k & 1))
            continue;
        PyObject *a = PyLong_FromLong(pid), *c = PyLong_FromLong(k), *x = PyLong_FromUnsignedLongLong(got[k]);
        int bad = !a || !c || !x || PyList_Append(pids, a) || PyList_Append(ks, c) || PyList_Append(values, x);
        Py_XDECREF(a);
        Py_XDECREF(c);
        Py_XDECREF(x);
        if (bad)
            return -1;
    }
    return 0;
}

/* process_stats(raw, stats_field, processes_field, pid_field, wanted) -> None or (pids, ks, values). */
static PyObject *b_process_stats(PyObject *self, PyObject *args)
{
    Py_buffer view;
    unsigned int f_stats, f_procs, f_pid;
    PyObject *wanted;
    if (!PyArg_ParseTuple(args, "y*IIIO!", &view, &f_stats, &f_procs, &f_pid, &PyTuple_Type, &wanted))
        return NULL;
    uint32_t want[MAX_WANTED];
    int nwant = (int)PyTuple_GET_SIZE(wanted);
    PyObject *pids = NULL, *ks = NULL, *values = NULL, *out = NULL;
    if (nwant > MAX_WANTED) {
        PyErr_SetString(PyExc_ValueError, "process_stats: too many wanted fields");
        goto done;
    }
    for (int j = 0; j < nwant; j++) {
        unsigned long w = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(wanted, j));
        if (w == (unsigned long)-1 && PyErr_Occurred())
            goto done;
        want[j] = (uint32_t)w;
    }
    const uint8_t *b = (const uint8_t *)view.buf;
    Py_ssize_t n = view.len, p = 0, s0 = -1, s1 = -1;
    while (p < n) { /* the packet: exactly one process_stats field */
        uint64_t tag, v = 0;
        Py_ssize_t q = 0;
        if (varint(b, &p, n, 5, &tag) || tag > 0xFFFFFFFFu || (tag >> 3) == 0 ||
            skip_value(b, &p, n, (int)(tag & 7), &v, &q))
            goto unsure;
        if ((tag >> 3) == f_stats) {
            if ((tag & 7) != 2 || s0 >= 0)
                goto unsure; /* written twice: upb merges the two */
            s0 = q, s1 = p;
        }
    }
    if (s0 < 0)
        goto unsure;
    if (!(pids = PyList_New(0)) || !(ks = PyList_New(0)) || !(values = PyList_New(0)))
        goto done;
    for (p = s0; p < s1;) { /* the stats: each process */
        uint64_t tag, v = 0;
        Py_ssize_t q = 0;
        if (varint(b, &p, s1, 5, &tag) || tag > 0xFFFFFFFFu || (tag >> 3) == 0)
            goto unsure;
        int wt = (int)(tag & 7);
        if ((tag >> 3) == f_procs && wt != 2)
            goto unsure;
        if (skip_value(b, &p, s1, wt, &v, &q))
            goto unsure;
        if ((tag >> 3) == f_procs) {
            int r = stats_process(b, q, p, f_pid, want, nwant, pids, ks, values);
            if (r < 0)
                goto done;
            if (r)
                goto unsure;
        }
    }
    out = PyTuple_Pack(3, pids, ks, values);
    goto done;
unsure:
    out = Py_None;
    Py_INCREF(out);
done:
    Py_XDECREF(pids);
    Py_XDECREF(ks);
    Py_XDECREF(values);
    PyBuffer_Release(&view);
    return out;
}

static void free_schema(void)
{
    if (schema) {
        for (Py_ssize_t i = 0; i < nschema; i++)
            PyMem_Free(schema[i].ent);
        PyMem_Free(schema);
    }
    schema = NULL;
    nschema = 0;
}

static PyObject *b_set_schema(PyObject *self, PyObject *args)
{
    PyObject *tables, *clocks;
    unsigned int fb, fc, fe, fk, fl, fu, fs, fp;
    if (!PyArg_ParseTuple(args, "O!IIIIIO!III", &PyTuple_Type, &tables, &fb, &fc, &fe, &fk, &fl, &PyTuple_Type, &clocks,
                          &fu, &fs, &fp))
        return NULL;
    Py_ssize_t nm = PyTuple_GET_SIZE(tables);
    msg_t *s = PyMem_Calloc((size_t)(nm ? nm : 1), sizeof(msg_t));
    if (!s)
        return PyErr_NoMemory();
    free_schema();
    schema = s;
    nschema = nm;
    for (Py_ssize_t i = 0; i < nm; i++) {
        PyObject *fields = PyTuple_GET_ITEM(tables, i);
        if (!PyTuple_Check(fields))
            goto bad;
        uint32_t maxf = 0;
        Py_ssize_t nf = PyTuple_GET_SIZE(fields);
        for (Py_ssize_t j = 0; j < nf; j++) {
            unsigned int no, kind, child;
            PyObject *t = PyTuple_GET_ITEM(fields, j);
            if (!PyTuple_Check(t) || !PyArg_ParseTuple(t, "III", &no, &kind, &child))
                goto bad;
            if (no == 0 || no > (1u << 29) || kind > K_PF64 || (kind == K_MSG && child >= (unsigned)nm))
                goto bad;
            if (no > maxf)
                maxf = no;
        }
        s[i].nfields = maxf + 1;
        s[i].ent = PyMem_Calloc(maxf + 1, sizeof(uint32_t));
        if (!s[i].ent) {
            free_schema();
            return PyErr_NoMemory();
        }
        for (Py_ssize_t j = 0; j < nf; j++) {
            unsigned int no, kind, child;
            PyArg_ParseTuple(PyTuple_GET_ITEM(fields, j), "III", &no, &kind, &child);
            s[i].ent[no] = kind | (kind == K_MSG ? child << 3 : 0);
        }
    }
    f_bundle = fb, f_cpu = fc, f_event = fe, f_compact = fk, f_clock = fl;
    f_uid = fu, f_seq = fs, f_tpid = fp;
    clock_ok = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(clocks); i++) {
        long c = PyLong_AsLong(PyTuple_GET_ITEM(clocks, i));
        if (c == -1 && PyErr_Occurred())
            goto bad;
        if (c >= 0 && c < 64)
            clock_ok |= 1ull << c;
    }
    Py_RETURN_NONE;
bad:
    free_schema();
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "set_schema: ((field, kind, child), ...) per message");
    return NULL;
}

static PyMethodDef methods[] = {
    {"set_schema", b_set_schema, METH_VARARGS,
     "set_schema(tables, bundle_field, cpu, event, compact, clock, clock_values, uid, seq, pid): the schema\n"
     "table (message 0 the bundle; per message ((field, kind, child), ...)), the fields split reports,\n"
     "and the packet's trusted ids."},
    {"split", b_split, METH_O,
     "split(raw) -> None (let upb decide) or (rest, off, size, cpu, ftrace_clock, events, cs_off, cs_len, seq)."},
    {"process_stats", b_process_stats, METH_VARARGS,
     "process_stats(raw, stats_field, processes_field, pid_field, wanted) -> None (let upb read it) or\n"
     "(pids, ks, values): per process, per wanted field it has (k its index in wanted), in order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_bundlec", "The ftrace bundle's wire check, process_stats' rows (see _bundlec.c).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__bundlec(void)
{
    return PyModule_Create(&module);
}
