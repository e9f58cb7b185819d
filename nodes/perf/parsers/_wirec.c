/* The protobuf wire walks of nodes/perf/parsers/perfetto_wire.py in C: the sequential varint
 * reads numpy cannot vectorise (issue #25).
 *
 * Plain CPython C API and the buffer protocol, nothing else (no numpy headers): every array
 * comes back as a bytearray of little-endian int64 / uint64 / bool that the Python side wraps
 * with np.frombuffer. The numpy functions in perfetto_wire.py are the reference: same values,
 * and a WireError wherever they raise one (tests/test_perfetto_wire_native.py compares the two
 * on real captures and on random, mutated and truncated bytes).
 *
 *   fields(buf, start, end, wanted)  ==  perfetto_wire.fields_numpy
 *   bundles(packets)                 ==  the LitePacket parse + packed + fields of
 *                                        perfetto_ftrace_batch._decode, without the joins
 *   strings(buf, off, len)           ==  [perfetto_wire.text(buf[o:o + n]) ...]
 *   intern(buf, start, end)          ==  perfetto_atrace_columns.intern_python
 *   name_threads(comm, packets, base, ..., [spans]) == perfetto_ftrace_batch._name_threads_python
 *                                        (spans: where each packet's one compact_sched is, as the
 *                                        bundle check found it, or -1: walk the packet for them)
 *   set_error(cls)                   the exception raised for bytes it does not decode
 *
 * Every read is bounds-checked against the buffer's length; nothing is read past it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyObject *wire_error = NULL; /* perfetto_wire.WireError once set_error is called */

static int fail(const char *msg)
{
    PyErr_SetString(wire_error ? wire_error : PyExc_ValueError, msg);
    return -1;
}

/* The varint at b[p]: at most 10 bytes, bits past 64 dropped (what numpy's uint64 shifts do). */
static inline int varint(const uint8_t *b, Py_ssize_t n, Py_ssize_t p, uint64_t *val, Py_ssize_t *len)
{
    uint64_t v = 0;
    if (p < 0)
        return fail("position before the buffer");
    if (p < n && b[p] < 0x80) { /* most varints: one byte (a tag, a small field) */
        *val = b[p];
        *len = 1;
        return 0;
    }
    if (p + 10 <= n) { /* all ten bytes in the buffer: no bound to check byte by byte */
        for (int k = 0; k < 10; k++) {
            uint8_t c = b[p + k];
            v |= (uint64_t)(c & 0x7F) << (7 * k);
            if (c < 0x80) {
                *val = v;
                *len = k + 1;
                return 0;
            }
        }
        return fail("varint longer than 10 bytes");
    }
    for (int k = 0; k < 10; k++) {
        if (p + k >= n)
            return fail("varint runs past the buffer");
        uint8_t c = b[p + k];
        v |= (uint64_t)(c & 0x7F) << (7 * k);
        if (c < 0x80) {
            *val = v;
            *len = k + 1;
            return 0;
        }
    }
    return fail("varint longer than 10 bytes");
}

/* One field of a message in the shapes perfetto_wire.fields decodes (no groups). */
typedef struct {
    uint64_t fno;
    int wt;
    uint64_t val; /* the varint, or for wire type 2 the length; 0 for fixed widths */
    Py_ssize_t off; /* wire type 2: where the bytes start */
    Py_ssize_t nxt; /* where the next field starts */
} field_t;

static inline int bulk_field(const uint8_t *b, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t end, field_t *f)
{
    uint64_t tag, v;
    Py_ssize_t tl, vl;
    if (varint(b, n, pos, &tag, &tl) < 0)
        return -1;
    f->fno = tag >> 3;
    f->wt = (int)(tag & 7);
    Py_ssize_t vpos = pos + tl;
    f->val = 0;
    f->off = 0;
    switch (f->wt) {
    case 0:
        if (varint(b, n, vpos, &v, &vl) < 0)
            return -1;
        f->val = v;
        f->nxt = vpos + vl;
        break;
    case 2:
        if (varint(b, n, vpos, &v, &vl) < 0)
            return -1;
        if (v >= ((uint64_t)1 << 40))
            return fail("length beyond its message");
        f->val = v;
        f->off = vpos + vl;
        f->nxt = f->off + (Py_ssize_t)v;
        break;
    case 1:
        f->nxt = vpos + 8;
        break;
    case 5:
        f->nxt = vpos + 4;
        break;
    default:
        return fail("wire type this reader does not decode in bulk");
    }
    if (f->fno == 0)
        return fail("wire type this reader does not decode in bulk");
    if (f->nxt > end)
        return fail("field ends past its message");
    return 0;
}

/* A growable array of fixed-width items, kept in a bytearray: handed back as it is, not copied
 * (a batch's columns are megabytes; a copy of each was a fresh allocation to fault in). */
typedef struct {
    char *p;
    Py_ssize_t n, cap; /* in bytes */
    PyObject *ba;      /* the bytearray holding p, or NULL before the first item */
} vec_t;

/* Room for `size` more bytes in v. */
static int vec_reserve(vec_t *v, Py_ssize_t size)
{
    if (v->n + size <= v->cap)
        return 0;
    Py_ssize_t cap = v->cap ? v->cap : 4096;
    while (cap < v->n + size)
        cap *= 2;
    if (!v->ba) {
        if (!(v->ba = PyByteArray_FromStringAndSize(NULL, cap)))
            return -1;
    } else if (PyByteArray_Resize(v->ba, cap) < 0) {
        return -1;
    }
    v->p = PyByteArray_AS_STRING(v->ba);
    v->cap = cap;
    return 0;
}

/* Inline when the item fits (every call but a few per batch), the copy a fixed 8 bytes mostly. */
static inline int vec_put(vec_t *v, const void *item, Py_ssize_t size)
{
    if (size <= 0)
        return 0;
    if (v->n + size > v->cap && vec_reserve(v, size) < 0)
        return -1;
    memcpy(v->p + v->n, item, size);
    v->n += size;
    return 0;
}

/* The items as a bytearray (a new reference); v is empty after. */
static PyObject *vec_take(vec_t *v)
{
    PyObject *r = v->ba;
    if (!r)
        r = PyByteArray_FromStringAndSize("", 0);
    else if (PyByteArray_Resize(r, v->n) < 0)
        Py_CLEAR(r);
    v->ba = NULL;
    v->p = NULL;
    v->n = v->cap = 0;
    return r;
}

static void vec_free(vec_t *v)
{
    Py_CLEAR(v->ba);
    v->p = NULL;
    v->n = v->cap = 0;
}

static PyObject *zeros(Py_ssize_t nbytes)
{
    PyObject *r = PyByteArray_FromStringAndSize(NULL, nbytes);
    if (r && nbytes)
        memset(PyByteArray_AS_STRING(r), 0, nbytes);
    return r;
}

/* ------------------------------------------------------------------------------------ */
/* fields(buf, start, end, wanted[, last]) -> ([[present, value, off, len] per wanted], [count, fno, off, len])
 * (with last false the second part's columns are empty: a caller that reads only its wanted fields)
 *
 * perfetto_wire.fields_numpy message by message instead of field position by field position:
 * each message's walk is independent of the others', so the same fields are read and the same
 * messages fail. wanted: a sequence of (field number, wire type). */

#define MAX_WANTED 32

static PyObject *w_fields(PyObject *self, PyObject *args)
{
    Py_buffer bb = {0}, sb = {0}, eb = {0};
    PyObject *wanted, *seq = NULL, *out = NULL, *lrow = NULL, *res = NULL;
    PyObject *arr[MAX_WANTED][4] = {{0}};
    PyObject *last[4] = {0};
    uint64_t wf[MAX_WANTED];
    int ww[MAX_WANTED];
    Py_ssize_t nw = 0;
    int want_last = 1;
    if (!PyArg_ParseTuple(args, "y*y*y*O|p", &bb, &sb, &eb, &wanted, &want_last))
        return NULL;
    if (!(seq = PySequence_Fast(wanted, "wanted: a sequence of (field, wire type)")))
        goto done;
    if (PySequence_Fast_GET_SIZE(seq) > MAX_WANTED) {
        PyErr_SetString(PyExc_ValueError, "too many wanted fields");
        goto done;
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        unsigned long long f;
        int w;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "Ki", &f, &w))
            goto done;
        wf[nw] = f;
        ww[nw++] = w;
    }
    if (sb.len != eb.len || sb.len % 8) {
        PyErr_SetString(PyExc_ValueError, "start and end: int64 arrays of one length");
        goto done;
    }
    Py_ssize_t n = sb.len / 8;
    const int64_t *start = sb.buf, *end = eb.buf;
    const uint8_t *b = bb.buf;
    for (Py_ssize_t i = 0; i < nw; i++)
        for (int j = 0; j < 4; j++)
            if (!(arr[i][j] = zeros(j == 0 ? n : 8 * n)))
                goto done;
    for (int j = 0; j < 4; j++)
        if (!(last[j] = zeros(want_last ? 8 * n : 0)))
            goto done;
    int64_t *lcount = (int64_t *)PyByteArray_AS_STRING(last[0]);
    uint64_t *lfno = (uint64_t *)PyByteArray_AS_STRING(last[1]);
    int64_t *loff = (int64_t *)PyByteArray_AS_STRING(last[2]);
    int64_t *llen = (int64_t *)PyByteArray_AS_STRING(last[3]);
    /* the output columns' pointers, and per (field number < 64, wire type 0 or 2) the wanted
     * entries it fills, so a field is matched by one look-up; a field number wanted twice (or
     * past 63) goes through the list of all wanted */
    char *opres[MAX_WANTED];
    uint64_t *oval[MAX_WANTED];
    int64_t *ooff[MAX_WANTED], *olen[MAX_WANTED];
    int8_t slot[64][3];
    int general = 0;
    memset(slot, -1, sizeof slot);
    for (Py_ssize_t i = 0; i < nw; i++) {
        opres[i] = PyByteArray_AS_STRING(arr[i][0]);
        oval[i] = (uint64_t *)PyByteArray_AS_STRING(arr[i][1]);
        ooff[i] = (int64_t *)PyByteArray_AS_STRING(arr[i][2]);
        olen[i] = (int64_t *)PyByteArray_AS_STRING(arr[i][3]);
        if (wf[i] >= 64 || (ww[i] != 0 && ww[i] != 2) || slot[wf[i]][ww[i]] >= 0)
            general = 1;
        else
            slot[wf[i]][ww[i]] = (int8_t)i;
    }
    for (Py_ssize_t r = 0; r < n; r++) {
        Py_ssize_t pos = start[r], e = end[r];
        while (pos < e) {
            field_t f;
            if (bulk_field(b, bb.len, pos, e, &f) < 0)
                goto done;
            if (f.wt == 2 && want_last) {
                lcount[r] += 1;
                lfno[r] = f.fno;
                loff[r] = f.off;
                llen[r] = (int64_t)f.val;
            }
            if (!general) {
                int i = (f.fno < 64 && (f.wt == 0 || f.wt == 2)) ? slot[f.fno][f.wt] : -1;
                if (i >= 0) {
                    opres[i][r] = 1;
                    if (f.wt == 2) {
                        ooff[i][r] = f.off;
                        olen[i][r] = (int64_t)f.val;
                    } else {
                        oval[i][r] = f.val;
                    }
                }
            } else {
                for (Py_ssize_t i = 0; i < nw; i++) {
                    if (f.fno != wf[i] || f.wt != ww[i])
                        continue;
                    opres[i][r] = 1;
                    if (ww[i] == 2) {
                        ooff[i][r] = f.off;
                        olen[i][r] = (int64_t)f.val;
                    } else {
                        oval[i][r] = f.val;
                    }
                }
            }
            pos = f.nxt;
        }
    }
    if (!(out = PyList_New(nw)) || !(lrow = PyList_New(4)))
        goto done;
    for (Py_ssize_t i = 0; i < nw; i++) {
        PyObject *row = PyList_New(4);
        if (!row)
            goto done;
        for (int j = 0; j < 4; j++) {
            PyList_SET_ITEM(row, j, arr[i][j]);
            arr[i][j] = NULL;
        }
        PyList_SET_ITEM(out, i, row);
    }
    for (int j = 0; j < 4; j++) {
        PyList_SET_ITEM(lrow, j, last[j]);
        last[j] = NULL;
    }
    res = PyTuple_Pack(2, out, lrow);
done:
    Py_XDECREF(out);
    Py_XDECREF(lrow);
    Py_XDECREF(seq);
    for (Py_ssize_t i = 0; i < MAX_WANTED; i++)
        for (int j = 0; j < 4; j++)
            Py_XDECREF(arr[i][j]);
    for (int j = 0; j < 4; j++)
        Py_XDECREF(last[j]);
    PyBuffer_Release(&bb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&eb);
    return res;
}

/* ------------------------------------------------------------------------------------ */
/* bundles(packets, columns, pad): TracePackets (each already accepted by upb's full parse)
 * walked as perfscout_lite.Packet reads them (perfetto_wire.LitePacket): every occurrence of
 * field 1 (ftrace_events) merged into one bundle, its field-2 events in order, its field-4
 * compact_sched columns' packed chunks concatenated per column. Unknown fields of every shape
 * are skipped as upb skips them, groups included. */

#define MAX_DEPTH 100 /* upb's own limit: the walk is never stricter than the parse before it */
#define MAX_COLUMNS 16

/* Any field upb accepts: wire type 4 (an end group) is returned for the caller to match. */
static int any_field(const uint8_t *b, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t end, field_t *f, int depth)
{
    uint64_t tag, v;
    Py_ssize_t tl, vl;
    if (depth > MAX_DEPTH)
        return fail("groups nested too deep");
    if (varint(b, n, pos, &tag, &tl) < 0)
        return -1;
    f->fno = tag >> 3;
    f->wt = (int)(tag & 7);
    f->val = 0;
    f->off = 0;
    if (f->fno == 0)
        return fail("field number 0");
    Py_ssize_t vpos = pos + tl;
    switch (f->wt) {
    case 0:
        if (varint(b, n, vpos, &v, &vl) < 0)
            return -1;
        f->val = v;
        f->nxt = vpos + vl;
        break;
    case 1:
        f->nxt = vpos + 8;
        break;
    case 2:
        if (varint(b, n, vpos, &v, &vl) < 0)
            return -1;
        f->off = vpos + vl;
        if (f->off > end || v > (uint64_t)(end - f->off))
            return fail("length beyond its message");
        f->val = v;
        f->nxt = f->off + (Py_ssize_t)v;
        break;
    case 3: {
        Py_ssize_t p = vpos;
        for (;;) {
            field_t g;
            if (p >= end)
                return fail("group not closed");
            if (any_field(b, n, p, end, &g, depth + 1) < 0)
                return -1;
            if (g.wt == 4) {
                if (g.fno != f->fno)
                    return fail("group closed by another field number");
                f->nxt = g.nxt;
                break;
            }
            p = g.nxt;
        }
        break;
    }
    case 4:
        f->nxt = vpos;
        break;
    case 5:
        f->nxt = vpos + 4;
        break;
    default:
        return fail("unknown wire type");
    }
    if (f->nxt > end)
        return fail("field ends past its message");
    return 0;
}

typedef struct {
    const uint8_t *b;
    Py_ssize_t n;
    Py_ssize_t ncol;
    uint64_t colno[MAX_COLUMNS];
    vec_t chunk[MAX_COLUMNS];  /* this bundle's packed bytes, per column */
    vec_t values[MAX_COLUMNS]; /* uint64 */
    int64_t *counts[MAX_COLUMNS];
    char *unpacked;
    int64_t *ev_count;
    vec_t ts, pid, nlen, kno, koff, klen;
} walk_t;

static int walk_event(walk_t *w, Py_ssize_t s, Py_ssize_t e)
{
    uint64_t ts = 0, pid = 0, kno = 0;
    int64_t nlen = 0, koff = 0, klen = 0;
    Py_ssize_t pos = s;
    while (pos < e) {
        field_t f;
        if (bulk_field(w->b, w->n, pos, e, &f) < 0)
            return -1;
        if (f.wt == 2) {
            nlen += 1;
            kno = f.fno;
            koff = f.off;
            klen = (int64_t)f.val;
        } else if (f.wt == 0 && f.fno == 1) {
            ts = f.val;
        } else if (f.wt == 0 && f.fno == 2) {
            pid = f.val;
        }
        pos = f.nxt;
    }
    if (vec_put(&w->ts, &ts, 8) < 0 || vec_put(&w->pid, &pid, 8) < 0 || vec_put(&w->nlen, &nlen, 8) < 0
        || vec_put(&w->kno, &kno, 8) < 0 || vec_put(&w->koff, &koff, 8) < 0 || vec_put(&w->klen, &klen, 8) < 0)
        return -1;
    return 0;
}

static int walk_compact(walk_t *w, Py_ssize_t k, Py_ssize_t s, Py_ssize_t e)
{
    Py_ssize_t pos = s;
    while (pos < e) {
        field_t f;
        if (any_field(w->b, w->n, pos, e, &f, 0) < 0)
            return -1;
        if (f.wt == 4)
            return fail("end group outside a group");
        for (Py_ssize_t c = 0; c < w->ncol; c++) {
            if (f.fno != w->colno[c])
                continue;
            if (f.wt == 2) {
                if (vec_put(&w->chunk[c], w->b + f.off, (Py_ssize_t)f.val) < 0)
                    return -1;
            } else if (f.wt == 0) {
                w->unpacked[k] = 1; /* upb's full parse counts it, the packed read does not */
            }
        }
        pos = f.nxt;
    }
    return 0;
}

static int walk_bundle(walk_t *w, Py_ssize_t k, Py_ssize_t s, Py_ssize_t e)
{
    Py_ssize_t pos = s;
    while (pos < e) {
        field_t f;
        if (any_field(w->b, w->n, pos, e, &f, 0) < 0)
            return -1;
        if (f.wt == 4)
            return fail("end group outside a group");
        if (f.fno == 2 && f.wt == 2) {
            if (walk_event(w, f.off, f.nxt) < 0)
                return -1;
            w->ev_count[k] += 1;
        } else if (f.fno == 4 && f.wt == 2) {
            if (walk_compact(w, k, f.off, f.nxt) < 0)
                return -1;
        }
        pos = f.nxt;
    }
    return 0;
}

/* The bundle's packed columns, as perfetto_wire.packed reads one chunk: a chunk of m bytes
 * holds at most m varints, so their room is made once and each value stored directly. */
static int flush_columns(walk_t *w, Py_ssize_t k)
{
    for (Py_ssize_t c = 0; c < w->ncol; c++) {
        vec_t *ch = &w->chunk[c];
        const uint8_t *p = (const uint8_t *)ch->p;
        Py_ssize_t m = ch->n, i = 0;
        int64_t count = 0;
        w->counts[c][k] = 0;
        if (!m)
            continue;
        if (p[m - 1] & 0x80)
            return fail("packed column ends inside a varint");
        if (vec_reserve(&w->values[c], 8 * m) < 0)
            return -1;
        char *dst = w->values[c].p + w->values[c].n;
        while (i < m) {
            uint8_t x = p[i++]; /* in bounds: the chunk's last byte ends a varint */
            uint64_t acc = x & 0x7F;
            for (int j = 1; x >= 0x80; j++) {
                if (j == 10)
                    return fail("varint longer than 10 bytes");
                x = p[i++];
                acc |= (uint64_t)(x & 0x7F) << (7 * j);
            }
            memcpy(dst + 8 * count++, &acc, 8);
        }
        w->values[c].n += 8 * count;
        w->counts[c][k] = count;
        ch->n = 0;
    }
    return 0;
}

static PyObject *w_bundles(PyObject *self, PyObject *args)
{
    PyObject *packets, *columns, *seq = NULL, *cseq = NULL, *joined = NULL, *res = NULL;
    PyObject *evc = NULL, *unp = NULL, *cols = NULL;
    PyObject *counts[MAX_COLUMNS] = {0};
    Py_ssize_t pad;
    walk_t w;
    memset(&w, 0, sizeof w);
    if (!PyArg_ParseTuple(args, "OOn", &packets, &columns, &pad))
        return NULL;
    if (pad < 0) {
        PyErr_SetString(PyExc_ValueError, "pad < 0");
        return NULL;
    }
    if (!(seq = PySequence_Fast(packets, "packets: a sequence of bytes")))
        goto done;
    if (!(cseq = PySequence_Fast(columns, "columns: a sequence of field numbers")))
        goto done;
    if (PySequence_Fast_GET_SIZE(cseq) > MAX_COLUMNS) {
        PyErr_SetString(PyExc_ValueError, "too many columns");
        goto done;
    }
    for (Py_ssize_t c = 0; c < PySequence_Fast_GET_SIZE(cseq); c++) {
        unsigned long long no = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(cseq, c));
        if (PyErr_Occurred())
            goto done;
        w.colno[w.ncol++] = no;
    }
    Py_ssize_t nb = PySequence_Fast_GET_SIZE(seq), total = 0;
    for (Py_ssize_t k = 0; k < nb; k++) {
        Py_buffer pb;
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, k), &pb, PyBUF_SIMPLE) < 0)
            goto done;
        total += pb.len;
        PyBuffer_Release(&pb);
    }
    if (!(joined = PyBytes_FromStringAndSize(NULL, total + pad)))
        goto done;
    char *jb = PyBytes_AS_STRING(joined);
    Py_ssize_t at = 0;
    for (Py_ssize_t k = 0; k < nb; k++) {
        Py_buffer pb;
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, k), &pb, PyBUF_SIMPLE) < 0)
            goto done;
        if (at + pb.len > total) { /* a buffer that grew since it was measured */
            PyBuffer_Release(&pb);
            PyErr_SetString(PyExc_ValueError, "a packet changed size");
            goto done;
        }
        memcpy(jb + at, pb.buf, pb.len);
        at += pb.len;
        PyBuffer_Release(&pb);
    }
    memset(jb + at, 0, total + pad - at);
    w.b = (const uint8_t *)jb;
    w.n = total + pad;
    if (!(evc = zeros(8 * nb)) || !(unp = zeros(nb)))
        goto done;
    w.ev_count = (int64_t *)PyByteArray_AS_STRING(evc);
    w.unpacked = PyByteArray_AS_STRING(unp);
    for (Py_ssize_t c = 0; c < w.ncol; c++) {
        if (!(counts[c] = zeros(8 * nb)))
            goto done;
        w.counts[c] = (int64_t *)PyByteArray_AS_STRING(counts[c]);
    }
    /* the packets again, now as ranges of the joined copy */
    at = 0;
    for (Py_ssize_t k = 0; k < nb; k++) {
        Py_buffer pb;
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, k), &pb, PyBUF_SIMPLE) < 0)
            goto done;
        Py_ssize_t s = at, e = at + pb.len;
        PyBuffer_Release(&pb);
        at = e;
        if (e > total) {
            PyErr_SetString(PyExc_ValueError, "a packet changed size");
            goto done;
        }
        Py_ssize_t pos = s;
        while (pos < e) {
            field_t f;
            if (any_field(w.b, w.n, pos, e, &f, 0) < 0)
                goto done;
            if (f.wt == 4) {
                fail("end group outside a group");
                goto done;
            }
            if (f.fno == 1 && f.wt == 2 && walk_bundle(&w, k, f.off, f.nxt) < 0)
                goto done;
            pos = f.nxt;
        }
        if (flush_columns(&w, k) < 0)
            goto done;
    }
    if (!(cols = PyList_New(w.ncol)))
        goto done;
    for (Py_ssize_t c = 0; c < w.ncol; c++) {
        PyObject *v = vec_take(&w.values[c]);
        if (!v)
            goto done;
        PyObject *pair = PyTuple_Pack(2, v, counts[c]);
        Py_DECREF(v);
        if (!pair)
            goto done;
        PyList_SET_ITEM(cols, c, pair);
    }
    PyObject *ts = vec_take(&w.ts), *pid = vec_take(&w.pid), *nlen = vec_take(&w.nlen);
    PyObject *kno = vec_take(&w.kno), *koff = vec_take(&w.koff), *klen = vec_take(&w.klen);
    if (ts && pid && nlen && kno && koff && klen)
        res = Py_BuildValue("{sOsOsOsOsOsOsOsOsOsO}", "buf", joined, "ev_count", evc, "unpacked", unp,
                            "ts", ts, "pid", pid, "nlen", nlen, "kind_no", kno, "k_off", koff, "k_len", klen,
                            "compact", cols);
    Py_XDECREF(ts);
    Py_XDECREF(pid);
    Py_XDECREF(nlen);
    Py_XDECREF(kno);
    Py_XDECREF(koff);
    Py_XDECREF(klen);
done:
    Py_XDECREF(seq);
    Py_XDECREF(cseq);
    Py_XDECREF(joined);
    Py_XDECREF(evc);
    Py_XDECREF(unp);
    Py_XDECREF(cols);
    for (Py_ssize_t c = 0; c < MAX_COLUMNS; c++) {
        Py_XDECREF(counts[c]);
        vec_free(&w.chunk[c]);
        vec_free(&w.values[c]);
    }
    vec_free(&w.ts);
    vec_free(&w.pid);
    vec_free(&w.nlen);
    vec_free(&w.kno);
    vec_free(&w.koff);
    vec_free(&w.klen);
    return res;
}

/* ------------------------------------------------------------------------------------ */
/* strings(buf, off, len) -> [str]: buf[off:off+len] each as perfetto_wire.text reads a proto2
 * string (not UTF-8: decoded with errors="replace"). Ranges are clipped to the buffer as a
 * slice is. */

static PyObject *w_strings(PyObject *self, PyObject *args)
{
    Py_buffer bb = {0}, ob = {0}, lb = {0};
    PyObject *out = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*", &bb, &ob, &lb))
        return NULL;
    if (ob.len != lb.len || ob.len % 8) {
        PyErr_SetString(PyExc_ValueError, "off and len: int64 arrays of one length");
        goto done;
    }
    Py_ssize_t n = ob.len / 8, L = bb.len;
    const int64_t *off = ob.buf, *len = lb.buf;
    const char *b = bb.buf;
    if (!(out = PyList_New(n)))
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t s = off[i], e;
        if (s < 0 || len[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "negative offset or length");
            Py_CLEAR(out);
            goto done;
        }
        e = len[i] > INT64_MAX - s ? INT64_MAX : s + len[i];
        if (s > L)
            s = L;
        if (e > L)
            e = L;
        PyObject *v = PyUnicode_DecodeUTF8(b + s, (Py_ssize_t)(e - s), "replace");
        if (!v) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, i, v);
    }
done:
    PyBuffer_Release(&bb);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&lb);
    return out;
}

/* ------------------------------------------------------------------------------------ */

/* intern(buf, start, end) == perfetto_atrace_columns.intern_python: the distinct byte strings
 * buf[start:end] in order of first appearance, and each slice's index among them (int64).
 * One bytes object and one dict look-up per slice, no interpreter step (the atrace names of
 * a batch: ~1 M slices at 100 MB). Offsets must lie within buf, start <= end. */
static PyObject *w_intern(PyObject *self, PyObject *args)
{
    Py_buffer bb = {0}, sb = {0}, eb = {0};
    PyObject *uniq = NULL, *seen = NULL, *idx = NULL, *out = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*", &bb, &sb, &eb))
        return NULL;
    if (sb.len != eb.len || sb.len % 8) {
        PyErr_SetString(PyExc_ValueError, "start and end: int64 arrays of one length");
        goto done;
    }
    Py_ssize_t n = sb.len / 8, L = bb.len;
    const int64_t *st = sb.buf, *en = eb.buf;
    const char *b = bb.buf;
    if (!(uniq = PyList_New(0)) || !(seen = PyDict_New()) || !(idx = PyByteArray_FromStringAndSize(NULL, n * 8)))
        goto done;
    int64_t *at = (int64_t *)PyByteArray_AS_STRING(idx);
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t s = st[i], e = en[i];
        if (s < 0 || e < s || e > L) {
            PyErr_SetString(PyExc_ValueError, "intern: a slice outside the buffer");
            goto done;
        }
        PyObject *key = PyBytes_FromStringAndSize(b + s, (Py_ssize_t)(e - s));
        if (!key)
            goto done;
        PyObject *v = PyDict_GetItemWithError(seen, key); /* borrowed */
        if (v) {
            at[i] = PyLong_AsLongLong(v);
        } else if (PyErr_Occurred()) {
            Py_DECREF(key);
            goto done;
        } else {
            Py_ssize_t k = PyList_GET_SIZE(uniq);
            PyObject *num = PyLong_FromSsize_t(k);
            int bad = !num || PyDict_SetItem(seen, key, num) < 0 || PyList_Append(uniq, key) < 0;
            Py_XDECREF(num);
            if (bad) {
                Py_DECREF(key);
                goto done;
            }
            at[i] = k;
        }
        Py_DECREF(key);
    }
    out = PyTuple_Pack(2, uniq, idx);
done:
    Py_XDECREF(uniq);
    Py_XDECREF(seen);
    Py_XDECREF(idx);
    PyBuffer_Release(&bb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&eb);
    return out;
}

/* ------------------------------------------------------------------------------------ */
/* name_threads(comm, packets, base, sw_b, sw_pid, sw_idx, wk_b, wk_pid, wk_idx, ev_b, ev_pid, ev_name)
 *   == perfetto_ftrace_batch._name_threads_python(comm, tables, base, ...) with tables the packets'
 *   intern tables
 *
 * The thread names a run of bundles sets, written into the dict `comm` (tid -> name) as the
 * event-by-event reader (perfetto_ftrace.FtraceState) writes them bundle by bundle: the
 * bundle's compact-sched switch rows (b, pid, idx) assign comm[pid], then its waking rows name
 * a pid not yet in comm (a non-empty name only), then its events' rows (b, pid, name: new tasks
 * and renames) assign comm[pid] = name. A compact row whose idx is outside its bundle's table
 * names nothing. Row b - base is the row's packet; rows come in arrival order (b never
 * decreases), checked before comm is touched. Each packet's intern table is read as upb reads
 * CompactSched.intern_table (field 5 of field 4 of field 1, every occurrence, in order): each
 * entry a str, decoded as perfetto_wire.text decodes it (not UTF-8: errors="replace").
 *
 * comm is read only by these writes, so what they leave is, per pid, the last assignment, or
 * failing one the first waking's name when the pid was not named before; a new key comes at
 * the pid's first row. So the rows are folded first (a table over the pids, in first-seen
 * order) and comm is written once per pid, not once per row; a switch name comm holds already
 * is not written again, and no str is made for it. */

typedef struct {
    Py_ssize_t *off, *len;
    Py_ssize_t n, cap;
} spans_t;

static int spans_put(spans_t *t, Py_ssize_t off, Py_ssize_t len)
{
    if (t->n == t->cap) {
        Py_ssize_t cap = t->cap ? 2 * t->cap : 256;
        Py_ssize_t *o = PyMem_Realloc(t->off, cap * sizeof *o);
        if (!o) {
            PyErr_NoMemory();
            return -1;
        }
        t->off = o;
        Py_ssize_t *l = PyMem_Realloc(t->len, cap * sizeof *l);
        if (!l) {
            PyErr_NoMemory();
            return -1;
        }
        t->len = l;
        t->cap = cap;
    }
    t->off[t->n] = off;
    t->len[t->n++] = len;
    return 0;
}

/* The fields numbered `want` (wire type 2) of the message b[s:e], into `out`, or with
 * depth < 2 the same walk one message further in (path 1 -> 4 -> 5). */
static int intern_walk(const uint8_t *b, Py_ssize_t n, Py_ssize_t s, Py_ssize_t e, int depth, spans_t *out)
{
    static const uint64_t path[3] = {1, 4, 5};
    Py_ssize_t pos = s;
    while (pos < e) {
        field_t f;
        if (any_field(b, n, pos, e, &f, 0) < 0)
            return -1;
        if (f.wt == 4)
            return fail("end group outside a group");
        if (f.fno == path[depth] && f.wt == 2) {
            if (depth == 2) {
                if (spans_put(out, f.off, (Py_ssize_t)f.val) < 0)
                    return -1;
            } else if (intern_walk(b, n, f.off, f.nxt, depth + 1, out) < 0) {
                return -1;
            }
        }
        pos = f.nxt;
    }
    return 0;
}

/* One pid's rows of a name_threads call: the last assignment (0 none, 1 a switch's name k of
 * bundle kb, 2 the event name ev_name[k]) and the first waking's name (wk >= 0: name wk of
 * bundle wb). */
typedef struct {
    int64_t pid;
    int as;
    Py_ssize_t k, kb, wk, wb;
} namer_t;

static PyObject *w_name_threads(PyObject *self, PyObject *args)
{
    PyObject *comm, *packets, *ev_name, *seq = NULL, *evs = NULL, *res = NULL;
    Py_ssize_t base;
    Py_buffer rb[8] = {{0}}, cs = {0};
    Py_buffer *pbufs = NULL;
    Py_ssize_t np_ = 0, *tstart = NULL, *slots = NULL;
    spans_t sp = {0};
    namer_t *ent = NULL;
    if (!PyArg_ParseTuple(args, "O!Ony*y*y*y*y*y*y*y*O|y*", &PyDict_Type, &comm, &packets, &base, &rb[0], &rb[1],
                          &rb[2], &rb[3], &rb[4], &rb[5], &rb[6], &rb[7], &ev_name, &cs))
        return NULL;
    if (!(evs = PySequence_Fast(ev_name, "ev_name: a sequence of names")))
        goto done;
    if (rb[0].len != rb[1].len || rb[0].len != rb[2].len || rb[3].len != rb[4].len || rb[3].len != rb[5].len
        || rb[6].len != rb[7].len || rb[6].len != 8 * PySequence_Fast_GET_SIZE(evs) || rb[0].len % 8
        || rb[3].len % 8 || rb[6].len % 8) {
        PyErr_SetString(PyExc_ValueError, "name_threads: row columns of int64, one length per kind");
        goto done;
    }
    if (!(seq = PySequence_Fast(packets, "packets: a sequence of bytes")))
        goto done;
    np_ = PySequence_Fast_GET_SIZE(seq);
    if (cs.obj && cs.len != 16 * np_) {
        PyErr_SetString(PyExc_ValueError, "name_threads: compact spans: int64 (offset, length) per packet");
        goto done;
    }
    for (int kind = 0; kind < 3; kind++) { /* every row in range and in order, before comm is written */
        const int64_t *rbun = rb[kind == 2 ? 6 : 3 * kind].buf;
        for (Py_ssize_t r = 0; r < rb[kind == 2 ? 6 : 3 * kind].len / 8; r++)
            if (rbun[r] < base || rbun[r] - base >= np_ || (r && rbun[r] < rbun[r - 1])) {
                PyErr_SetString(PyExc_ValueError, "name_threads: bundle out of range or out of order");
                goto done;
            }
    }
    if (!(pbufs = PyMem_Calloc(np_ ? np_ : 1, sizeof *pbufs)) || !(tstart = PyMem_Calloc(np_ + 1, sizeof *tstart))) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < np_; k++) {
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, k), &pbufs[k], PyBUF_SIMPLE) < 0)
            goto done;
        tstart[k] = sp.n;
        const int64_t *span = cs.obj ? (const int64_t *)cs.buf + 2 * k : NULL;
        if (span && span[0] >= 0) { /* the packet's one compact_sched, where the bundle check found it */
            if (span[1] < 0 || span[0] > pbufs[k].len || span[1] > pbufs[k].len - span[0]) {
                PyErr_SetString(PyExc_ValueError, "name_threads: compact span outside its packet");
                goto done;
            }
            if (intern_walk(pbufs[k].buf, pbufs[k].len, span[0], span[0] + span[1], 2, &sp) < 0)
                goto done;
        } else if (intern_walk(pbufs[k].buf, pbufs[k].len, 0, pbufs[k].len, 0, &sp) < 0) {
            goto done;
        }
    }
    tstart[np_] = sp.n;
    Py_ssize_t nrows = (rb[0].len + rb[3].len + rb[6].len) / 8, m = 16, ne = 0;
    while (m < 2 * nrows)
        m *= 2;
    if (!(slots = PyMem_Malloc(m * sizeof *slots)) || !(ent = PyMem_Malloc((nrows + 1) * sizeof *ent))) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < m; j++)
        slots[j] = -1;
    Py_ssize_t at[3] = {0, 0, 0};
    for (Py_ssize_t bi = 0; bi < np_; bi++) {
        for (int kind = 0; kind < 3; kind++) { /* a bundle's switches, its wakings, its events */
            const int64_t *rbun = rb[kind == 2 ? 6 : 3 * kind].buf, *rpid = rb[kind == 2 ? 7 : 3 * kind + 1].buf;
            const int64_t *ridx = kind == 2 ? NULL : rb[3 * kind + 2].buf;
            Py_ssize_t nr = rb[kind == 2 ? 6 : 3 * kind].len / 8, r = at[kind];
            for (; r < nr && rbun[r] - base == bi; r++) {
                Py_ssize_t k = r;
                if (kind < 2) {
                    int64_t i = ridx[r];
                    if (i < 0 || i >= tstart[bi + 1] - tstart[bi])
                        continue;
                    k = tstart[bi] + (Py_ssize_t)i;
                    if (kind == 1 && sp.len[k] == 0)
                        continue; /* an empty name does not count for a waking */
                }
                uint64_t h = (uint64_t)rpid[r] * 0x9E3779B97F4A7C15ull;
                Py_ssize_t j = (Py_ssize_t)(h >> 40) & (m - 1);
                while (slots[j] >= 0 && ent[slots[j]].pid != rpid[r])
                    j = (j + 1) & (m - 1);
                if (slots[j] < 0) {
                    slots[j] = ne;
                    ent[ne++] = (namer_t){rpid[r], 0, -1, -1, -1, -1};
                }
                namer_t *e = &ent[slots[j]];
                if (kind == 1) {
                    if (e->wk < 0) {
                        e->wk = k;
                        e->wb = bi;
                    }
                } else {
                    e->as = kind == 0 ? 1 : 2;
                    e->k = k;
                    e->kb = bi;
                }
            }
            at[kind] = r;
        }
    }
    for (Py_ssize_t i = 0; i < ne; i++) {
        namer_t *e = &ent[i];
        PyObject *pid = PyLong_FromLongLong(e->pid), *name = NULL;
        if (!pid)
            goto done;
        PyObject *cur = PyDict_GetItemWithError(comm, pid); /* borrowed */
        int bad = !cur && PyErr_Occurred();
        if (!bad && e->as == 2) {
            name = PySequence_Fast_GET_ITEM(evs, e->k);
            Py_INCREF(name);
        } else if (!bad && (e->as == 1 || !cur)) {
            Py_ssize_t k = e->as == 1 ? e->k : e->wk, kb = e->as == 1 ? e->kb : e->wb;
            const char *b = (const char *)pbufs[kb].buf + sp.off[k];
            if (cur && PyUnicode_CheckExact(cur)) { /* the same name again: comm stays as it is */
                Py_ssize_t cl;
                const char *cu = PyUnicode_AsUTF8AndSize(cur, &cl);
                if (!cu)
                    PyErr_Clear(); /* not encodable (a lone surrogate): not this name */
                else if (cl == sp.len[k] && !memcmp(cu, b, (size_t)cl)) {
                    Py_DECREF(pid);
                    continue;
                }
            }
            name = PyUnicode_DecodeUTF8(b, sp.len[k], "replace"); /* as perfetto_wire.text */
            bad = !name;
        }
        if (name) {
            bad = PyDict_SetItem(comm, pid, name) < 0;
            Py_DECREF(name);
        }
        Py_DECREF(pid);
        if (bad)
            goto done;
    }
    res = Py_None;
    Py_INCREF(res);
done:
    PyMem_Free(slots);
    PyMem_Free(ent);
    if (pbufs) {
        for (Py_ssize_t k = 0; k < np_; k++)
            if (pbufs[k].obj)
                PyBuffer_Release(&pbufs[k]);
        PyMem_Free(pbufs);
    }
    PyMem_Free(tstart);
    PyMem_Free(sp.off);
    PyMem_Free(sp.len);
    Py_XDECREF(seq);
    Py_XDECREF(evs);
    if (cs.obj)
        PyBuffer_Release(&cs);
    for (int j = 0; j < 8; j++)
        PyBuffer_Release(&rb[j]);
    return res;
}

/* ------------------------------------------------------------------------------------ */

static PyObject *w_set_error(PyObject *self, PyObject *cls)
{
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, (PyTypeObject *)PyExc_Exception)) {
        PyErr_SetString(PyExc_TypeError, "set_error: an exception class");
        return NULL;
    }
    Py_INCREF(cls);
    Py_XSETREF(wire_error, cls);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"fields", w_fields, METH_VARARGS,
     "fields(buf, start, end, wanted) -> (per wanted [present, value, off, len], [count, fno, off, len]);\n"
     "perfetto_wire.fields_numpy's arrays as bytearrays."},
    {"bundles", w_bundles, METH_VARARGS,
     "bundles(packets, columns, pad) -> dict: the packets joined (+pad zero bytes), per bundle event\n"
     "counts and unpacked-column flags, per event ts/pid/nlen/kind_no/k_off/k_len, per column\n"
     "(values, counts)."},
    {"strings", w_strings, METH_VARARGS,
     "strings(buf, off, len) -> [str] (not UTF-8: errors=\"replace\"): buf[off:off+len] each."},
    {"intern", w_intern, METH_VARARGS,
     "intern(buf, start, end) -> ([distinct bytes in first-seen order], bytearray of int64 indices)."},
    {"name_threads", w_name_threads, METH_VARARGS,
     "name_threads(comm, packets, base, sw_b, sw_pid, sw_idx, wk_b, wk_pid, wk_idx, ev_b, ev_pid, ev_name[, spans])\n"
     "-> None: the thread names a run of bundles sets, into comm (perfetto_ftrace_batch._name_threads_python);\n"
     "spans: int64 (offset, length) per packet of its one compact_sched (offset -1: walk the packet)."},
    {"set_error", w_set_error, METH_O, "set_error(cls): the exception raised for bytes not decoded."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_wirec", "Protobuf wire walks for perfetto_wire (see _wirec.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__wirec(void)
{
    return PyModule_Create(&module);
}
