/* The atrace columns of a batch (nodes/perf/parsers/perfetto_atrace_columns.py) in one C pass
 * over the print lines and zero events, in arrival order (issue #25).
 *
 * Plain CPython C API and the buffer protocol, no numpy headers (as _wirec.c): arrays come in
 * as contiguous little-endian int64 buffers and go out as bytearrays the Python side wraps with
 * np.frombuffer. The numpy/Python code is the reference (perfetto_atrace_columns.split_python,
 * used with PERFSCOUT_PURE_PYTHON_WIRE=1 or without a compiler); tests/test_perfetto_atracec.py
 * compares the two on random and mutated lines.
 *
 *   split(buf, pr_ev, pr_off, pr_len, pr_tid, z_ev, z_flag, z_off, z_len, z_tid, z_pid, z_value,
 *         names, tgid_of, empty) -> dict        == perfetto_atrace_columns.split_python
 *
 * Every read is bounds-checked against the buffer's length; a line outside it raises ValueError.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_DIGITS 18 /* below 2^63: every strict number fits an int64 */
#define NONE_POS ((Py_ssize_t)1 << 62)

/* An int64 array argument: a contiguous buffer whose length is a multiple of 8. */
typedef struct {
    Py_buffer view;
    const int64_t *v;
    Py_ssize_t n;
} arr_t;

static int get_arr(PyObject *o, arr_t *a, const char *what)
{
    if (PyObject_GetBuffer(o, &a->view, PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (a->view.len % 8) {
        PyErr_Format(PyExc_ValueError, "%s: an int64 array", what);
        PyBuffer_Release(&a->view);
        a->view.obj = NULL;
        return -1;
    }
    a->v = (const int64_t *)a->view.buf;
    a->n = a->view.len / 8;
    return 0;
}

static void rel_arr(arr_t *a)
{
    if (a->view.obj)
        PyBuffer_Release(&a->view);
}

/* A growable int64 column, handed back as a bytearray. */
typedef struct {
    int64_t *v;
    Py_ssize_t n, cap;
} col_t;

static int col_push(col_t *c, int64_t x)
{
    if (c->n == c->cap) {
        Py_ssize_t cap = c->cap ? c->cap * 2 : 64;
        int64_t *v = PyMem_Realloc(c->v, (size_t)cap * sizeof(int64_t));
        if (!v) {
            PyErr_NoMemory();
            return -1;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = x;
    return 0;
}

static PyObject *col_bytes(const col_t *c)
{
    return PyByteArray_FromStringAndSize((const char *)c->v, c->n * (Py_ssize_t)sizeof(int64_t));
}

/* buf[a:b] is 1..18 ASCII digits: 1 and its value, else 0. */
static inline int number(const uint8_t *b, Py_ssize_t a, Py_ssize_t e, int64_t *out)
{
    Py_ssize_t w = e - a;
    if (w < 1 || w > MAX_DIGITS)
        return 0;
    int64_t v = 0;
    for (Py_ssize_t k = a; k < e; k++) {
        unsigned d = (unsigned)b[k] - '0';
        if (d > 9)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* Names interned by their bytes and how they are decoded: one hash probe per line, a Python
 * object only per distinct name. */

typedef struct {
    Py_ssize_t off, len; /* len < 0: empty slot */
    uint64_t hash;
    int64_t vid;
} slot_t;

typedef struct {
    slot_t *s;
    size_t mask, used;
} table_t;

/* An empty table of cap slots (a power of two). */
static int table_init(table_t *t, size_t cap)
{
    t->s = PyMem_Malloc(cap * sizeof(slot_t));
    if (!t->s) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        t->s[i].len = -1;
    t->mask = cap - 1;
    t->used = 0;
    return 0;
}

/* Twice the slots, every entry moved by its hash: the table stays at most half full. */
static int table_grow(table_t *t)
{
    table_t big;
    if (table_init(&big, (t->mask + 1) * 2) < 0)
        return -1;
    for (size_t k = 0; k <= t->mask; k++) {
        if (t->s[k].len < 0)
            continue;
        size_t i = (size_t)t->s[k].hash & big.mask;
        while (big.s[i].len >= 0)
            i = (i + 1) & big.mask;
        big.s[i] = t->s[k];
    }
    big.used = t->used;
    PyMem_Free(t->s);
    *t = big;
    return 0;
}

static inline uint64_t hash_bytes(const uint8_t *p, Py_ssize_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)n << 8);
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) { /* eight bytes a step */
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    memcpy(&w, p + i, (size_t)(n - i));
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 29);
}

/* The run's state while splitting: the names seen (values: name object -> index, listed: the
 * objects by index), which indices a begin has used, which threads a begin has named. */
typedef struct {
    const uint8_t *b;
    table_t names;
    PyObject *values, *listed, *empty;
    int64_t empty_vid;
    char *begun; /* per value index: a begin of it seen */
    Py_ssize_t begun_cap;
    int64_t *tids; /* open addressing set of tids (slot value INT64_MIN: empty) */
    size_t tid_mask, tid_used;
    int min_seen;
} run_t;

/* The index of obj (a new reference consumed) in values, added at the end when new. */
static int64_t value_index(run_t *r, PyObject *obj)
{
    if (!obj)
        return -1;
    Py_ssize_t k = PyList_GET_SIZE(r->listed);
    PyObject *num = PyLong_FromSsize_t(k);
    if (!num) {
        Py_DECREF(obj);
        return -1;
    }
    PyObject *got = PyDict_SetDefault(r->values, obj, num); /* borrowed */
    Py_DECREF(num);
    if (!got) {
        Py_DECREF(obj);
        return -1;
    }
    int64_t vid = PyLong_AsLongLong(got);
    if (vid == k && PyList_Append(r->listed, obj) < 0)
        vid = -1;
    Py_DECREF(obj);
    return vid;
}

/* A print line's or a zero event's name, decoded with errors="replace" (a name that is not
 * UTF-8 is still a name, as in perfetto_ftrace.py's event-by-event path). A begin's empty name
 * is ``empty``. */
static int64_t intern(run_t *r, Py_ssize_t off, Py_ssize_t len, int begin)
{
    if (begin && len == 0) {
        if (r->empty_vid < 0) {
            Py_INCREF(r->empty);
            r->empty_vid = value_index(r, r->empty);
        }
        return r->empty_vid;
    }
    const uint8_t *p = r->b + off;
    uint64_t h = hash_bytes(p, len);
    size_t i = (size_t)h & r->names.mask;
    for (;;) {
        slot_t *s = &r->names.s[i];
        if (s->len < 0)
            break;
        if (s->hash == h && s->len == len && memcmp(r->b + s->off, p, (size_t)len) == 0)
            return s->vid;
        i = (i + 1) & r->names.mask;
    }
    PyObject *obj = PyUnicode_DecodeUTF8((const char *)p, len, "replace");
    int64_t vid = value_index(r, obj);
    if (vid < 0)
        return -1;
    if (2 * (r->names.used + 1) > r->names.mask + 1) {
        if (table_grow(&r->names) < 0)
            return -1;
        i = (size_t)h & r->names.mask;
        while (r->names.s[i].len >= 0)
            i = (i + 1) & r->names.mask;
    }
    r->names.used++;
    slot_t *s = &r->names.s[i];
    s->off = off;
    s->len = len;
    s->hash = h;
    s->vid = vid;
    return vid;
}

static int tids_init(run_t *r, size_t cap)
{
    if (!(r->tids = PyMem_Malloc(cap * sizeof(int64_t)))) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        r->tids[i] = INT64_MIN;
    r->tid_mask = cap - 1;
    return 0;
}

static inline size_t tid_slot(const run_t *r, int64_t tid)
{
    size_t i = (size_t)(((uint64_t)tid * 0x9E3779B97F4A7C15ULL) >> 20) & r->tid_mask;
    while (r->tids[i] != INT64_MIN && r->tids[i] != tid)
        i = (i + 1) & r->tid_mask;
    return i;
}

/* 1 when tid is new to the set (and adds it), 0 when it was there, -1 on no memory. */
static int tid_new(run_t *r, int64_t tid)
{
    if (tid == INT64_MIN) { /* the empty slot's mark: kept aside */
        int was = r->min_seen;
        r->min_seen = 1;
        return !was;
    }
    size_t i = tid_slot(r, tid);
    if (r->tids[i] == tid)
        return 0;
    if (2 * (r->tid_used + 1) > r->tid_mask + 1) {
        int64_t *old = r->tids;
        size_t n = r->tid_mask + 1;
        if (tids_init(r, n * 2) < 0) {
            r->tids = old;
            return -1;
        }
        for (size_t k = 0; k < n; k++)
            if (old[k] != INT64_MIN)
                r->tids[tid_slot(r, old[k])] = old[k];
        PyMem_Free(old);
        i = tid_slot(r, tid);
    }
    r->tid_used++;
    r->tids[i] = tid;
    return 1;
}

typedef struct {
    col_t ev, tid, tgid, vid;
} begins_t;

typedef struct {
    col_t ev, tgid, vid, value, zero;
} counts_t;

/* A begin (event ev, thread tid, group tgid, name index vid): its row, and the first begin of a
 * thread not in tgid_of / of a name not in names noted for the ordered loop. */
static int begin(run_t *r, begins_t *bg, col_t *t_ev, PyObject *t_pairs, col_t *n_ev, PyObject *n_names,
                 PyObject *names, PyObject *tgid_of, int64_t ev, int64_t tid, int64_t tgid, int64_t vid)
{
    if (col_push(&bg->ev, ev) < 0 || col_push(&bg->tid, tid) < 0 || col_push(&bg->tgid, tgid) < 0 ||
        col_push(&bg->vid, vid) < 0)
        return -1;
    int fresh = tid_new(r, tid);
    if (fresh < 0)
        return -1;
    if (fresh) {
        PyObject *t = PyLong_FromLongLong(tid);
        if (!t)
            return -1;
        int in = PyDict_Contains(tgid_of, t);
        if (in < 0) {
            Py_DECREF(t);
            return -1;
        }
        if (!in) {
            PyObject *g = PyLong_FromLongLong(tgid);
            PyObject *pair = g ? PyTuple_Pack(2, t, g) : NULL;
            Py_XDECREF(g);
            int bad = !pair || PyList_Append(t_pairs, pair) < 0 || col_push(t_ev, ev) < 0;
            Py_XDECREF(pair);
            if (bad) {
                Py_DECREF(t);
                return -1;
            }
        }
        Py_DECREF(t);
    }
    if (vid >= r->begun_cap) {
        Py_ssize_t cap = r->begun_cap ? r->begun_cap : 64;
        while (cap <= vid)
            cap *= 2;
        char *nb = PyMem_Realloc(r->begun, (size_t)cap);
        if (!nb) {
            PyErr_NoMemory();
            return -1;
        }
        memset(nb + r->begun_cap, 0, (size_t)(cap - r->begun_cap));
        r->begun = nb;
        r->begun_cap = cap;
    }
    if (!r->begun[vid]) {
        r->begun[vid] = 1;
        PyObject *name = PyList_GET_ITEM(r->listed, vid); /* borrowed */
        int in = PyDict_Contains(names, name);
        if (in < 0)
            return -1;
        if (!in && (PyList_Append(n_names, name) < 0 || col_push(n_ev, ev) < 0))
            return -1;
    }
    return 0;
}

static int counter(counts_t *c, int64_t ev, int64_t tgid, int64_t vid, int64_t value, int zero)
{
    return (col_push(&c->ev, ev) < 0 || col_push(&c->tgid, tgid) < 0 || col_push(&c->vid, vid) < 0 ||
            col_push(&c->value, value) < 0 || col_push(&c->zero, zero) < 0) ? -1 : 0;
}

enum { REST = 0, SHAPE_B = 1, SHAPE_C = 2, SHAPE_E = 3 };

/* One print line: its shape, and for B/C its row. */
static int print_line(run_t *r, Py_ssize_t L, int64_t o, int64_t n, char *shape, int64_t *rest_c,
                      int64_t *tg, int64_t *val, Py_ssize_t *na, Py_ssize_t *ne)
{
    const uint8_t *b = r->b;
    if (o < 0 || n < 0 || o > L || n > L - o) {
        PyErr_SetString(PyExc_ValueError, "atrace split: a line outside the buffer");
        return -1;
    }
    *shape = REST;
    if (n == 0)
        return 0;
    uint8_t c0 = b[o];
    if (c0 == 'E') {
        *shape = SHAPE_E;
        return 0;
    }
    if (c0 != 'B' && c0 != 'C')
        return 0;
    Py_ssize_t e = o + n;
    while (e > o + 1 && (b[e - 1] == '\n' || b[e - 1] == 0)) /* rstrip("\n\0"); B or C stays */
        e--;
    /* the first separators: two for a begin (its name is the rest), four for a counter */
    Py_ssize_t p[4] = {NONE_POS, NONE_POS, NONE_POS, NONE_POS};
    int np_ = 0, want = c0 == 'B' ? 2 : 4;
    for (Py_ssize_t k = o; np_ < want;) {
        const uint8_t *q = memchr(b + k, '|', (size_t)(e - k));
        if (!q)
            break;
        p[np_++] = q - b;
        k = q - b + 1;
    }
    if (c0 == 'B') {
        if (np_ >= 1 && number(b, p[0] + 1, np_ >= 2 ? p[1] : e, tg)) {
            *shape = SHAPE_B;
            *na = np_ >= 2 ? p[1] + 1 : e;
            *ne = e;
        }
        return 0;
    }
    if (np_ >= 3 && number(b, p[0] + 1, p[1], tg)) {
        int neg = p[2] + 1 < e && b[p[2] + 1] == '-';
        int64_t mag;
        if (number(b, p[2] + 1 + neg, np_ >= 4 ? p[3] : e, &mag)) {
            *shape = SHAPE_C;
            *val = neg ? -mag : mag;
            *na = p[1] + 1;
            *ne = p[2];
            return 0;
        }
    }
    ++*rest_c; /* a counter line left to the line parser */
    return 0;
}

static PyObject *a_split(PyObject *self, PyObject *args)
{
    PyObject *bo, *ao[11], *names, *tgid_of, *empty;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOO!O!U", &bo, &ao[0], &ao[1], &ao[2], &ao[3], &ao[4], &ao[5], &ao[6],
                          &ao[7], &ao[8], &ao[9], &ao[10], &PyDict_Type, &names, &PyDict_Type, &tgid_of, &empty))
        return NULL;
    static const char *what[11] = {"pr_ev", "pr_off", "pr_len", "pr_tid", "z_ev", "z_flag",
                                   "z_off", "z_len", "z_tid", "z_pid", "z_value"};
    Py_buffer bb = {0};
    arr_t a[11];
    memset(a, 0, sizeof a);
    run_t r;
    memset(&r, 0, sizeof r);
    r.empty_vid = -1;
    r.empty = empty;
    begins_t bg;
    counts_t cn;
    col_t t_ev = {0}, n_ev = {0}, ends = {0};
    memset(&bg, 0, sizeof bg);
    memset(&cn, 0, sizeof cn);
    PyObject *shape = NULL, *t_pairs = NULL, *n_names = NULL, *out = NULL;
    if (PyObject_GetBuffer(bo, &bb, PyBUF_SIMPLE) < 0)
        return NULL;
    for (int k = 0; k < 11; k++)
        if (get_arr(ao[k], &a[k], what[k]) < 0)
            goto done;
    Py_ssize_t np_ = a[0].n, nz = a[4].n, L = bb.len;
    for (int k = 1; k < 4; k++)
        if (a[k].n != np_) {
            PyErr_SetString(PyExc_ValueError, "atrace split: print columns of one length");
            goto done;
        }
    for (int k = 5; k < 11; k++)
        if (a[k].n != nz) {
            PyErr_SetString(PyExc_ValueError, "atrace split: zero columns of one length");
            goto done;
        }
    r.b = bb.buf;
    if (!(r.values = PyDict_New()) || !(r.listed = PyList_New(0)) || !(t_pairs = PyList_New(0)) ||
        !(n_names = PyList_New(0)) || !(shape = PyByteArray_FromStringAndSize(NULL, np_)))
        goto done;
    if (table_init(&r.names, 1024) < 0 || tids_init(&r, 256) < 0)
        goto done;
    char *sh = PyByteArray_AS_STRING(shape);
    const int64_t *pr_ev = a[0].v, *pr_off = a[1].v, *pr_len = a[2].v, *pr_tid = a[3].v;
    const int64_t *z_ev = a[4].v, *z_flag = a[5].v, *z_off = a[6].v, *z_len = a[7].v, *z_tid = a[8].v,
                  *z_pid = a[9].v, *z_value = a[10].v;
    int64_t rest_c = 0;
    Py_ssize_t i = 0, j = 0;
    while (i < np_ || j < nz) { /* prints and zero events merged in arrival order */
        if (j >= nz || (i < np_ && pr_ev[i] < z_ev[j])) {
            int64_t tg = 0, val = 0;
            Py_ssize_t na = 0, ne = 0;
            if (print_line(&r, L, pr_off[i], pr_len[i], &sh[i], &rest_c, &tg, &val, &na, &ne) < 0)
                goto done;
            if (sh[i] == SHAPE_E && col_push(&ends, pr_ev[i]) < 0)
                goto done;
            if (sh[i] == SHAPE_B || sh[i] == SHAPE_C) {
                int64_t vid = intern(&r, na, ne - na, sh[i] == SHAPE_B);
                if (vid < 0)
                    goto done;
                if (sh[i] == SHAPE_B ? begin(&r, &bg, &t_ev, t_pairs, &n_ev, n_names, names, tgid_of, pr_ev[i],
                                             pr_tid[i], tg, vid) < 0
                                     : counter(&cn, pr_ev[i], tg, vid, val, 0) < 0)
                    goto done;
            }
            i++;
        } else {
            int64_t o = z_off[j], n = z_len[j];
            if (o < 0 || n < 0 || o > L || n > L - o) {
                PyErr_SetString(PyExc_ValueError, "atrace split: a zero event's name outside the buffer");
                goto done;
            }
            /* as perfetto_ftrace._zero_values reads the flags: B=1, else E=2, else C=4 */
            int32_t flag = (int32_t)(uint32_t)(uint64_t)z_flag[j], zpid = (int32_t)(uint32_t)(uint64_t)z_pid[j];
            int64_t tgid = zpid ? (int64_t)zpid : z_tid[j];
            int isb = (flag & 1) != 0;
            if (!isb && (flag & 2)) {
                if (col_push(&ends, z_ev[j]) < 0)
                    goto done;
                j++;
                continue;
            }
            if (!isb && !(flag & 4)) {
                j++;
                continue;
            }
            int64_t vid = intern(&r, o, n, isb);
            if (vid < 0)
                goto done;
            if (isb ? begin(&r, &bg, &t_ev, t_pairs, &n_ev, n_names, names, tgid_of, z_ev[j], z_tid[j], tgid, vid) < 0
                    : counter(&cn, z_ev[j], tgid, vid, z_value[j], 1) < 0)
                goto done;
            j++;
        }
    }
    {
        static const char *keys[] = {"b_ev", "b_tid", "b_tgid", "b_vid", "c_ev", "c_tgid", "c_vid", "c_value",
                                     "c_zero", "t_ev", "n_ev", "ends"};
        const col_t *cols[] = {&bg.ev, &bg.tid, &bg.tgid, &bg.vid, &cn.ev, &cn.tgid, &cn.vid, &cn.value, &cn.zero,
                               &t_ev, &n_ev, &ends};
        PyObject *d = Py_BuildValue("{s:O,s:L,s:O,s:O,s:O}", "shape", shape, "rest_c", (long long)rest_c, "listed",
                                    r.listed, "t_pairs", t_pairs, "n_names", n_names);
        for (size_t k = 0; d && k < sizeof keys / sizeof keys[0]; k++) {
            PyObject *c = col_bytes(cols[k]);
            if (!c || PyDict_SetItemString(d, keys[k], c) < 0)
                Py_CLEAR(d);
            Py_XDECREF(c);
        }
        out = d;
    }
done:
    Py_XDECREF(shape);
    Py_XDECREF(t_pairs);
    Py_XDECREF(n_names);
    Py_XDECREF(r.values);
    Py_XDECREF(r.listed);
    PyMem_Free(r.names.s);
    PyMem_Free(r.tids);
    PyMem_Free(r.begun);
    col_t *all[] = {&bg.ev, &bg.tid, &bg.tgid, &bg.vid, &cn.ev, &cn.tgid, &cn.vid, &cn.value, &cn.zero,
                    &t_ev, &n_ev, &ends};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        PyMem_Free(all[k]->v);
    for (int k = 0; k < 11; k++)
        rel_arr(&a[k]);
    PyBuffer_Release(&bb);
    return out;
}

static PyMethodDef methods[] = {
    {"split", a_split, METH_VARARGS,
     "split(buf, pr_ev, pr_off, pr_len, pr_tid, z_ev, z_flag, z_off, z_len, z_tid, z_pid, z_value, names,\n"
     "tgid_of, empty) -> dict: perfetto_atrace_columns.split_python's columns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_atracec", "The atrace columns of a batch in C (see _atracec.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__atracec(void)
{
    return PyModule_Create(&module);
}
