/* The scheduler state machine of perfetto_sched.py (_replay_numpy: its Python/numpy reference,
 * with the rules in that module's docstring) as one pass over the rows in (thread, time,
 * arrival) order. The numpy passes build ~280 bytes of temporaries a row and need the four
 * columns gathered into that order first (41 bytes a row); this reads the columns through the
 * order and keeps one thread's state. tests/test_perfetto_sched_native.py checks that both give
 * the same columns, on random rows and on the captures' own.
 *
 *   replay(order, starts, ts, code, detail, coarse, end, has_end, cap, running, r, dead, blocked_code,
 *          in_code, out_code, wake_code, new_code,
 *          out_thr, out_bounds, out_count, out_tot, iv_ts, iv_dur, iv_state, iv_io)
 *       -> (threads, intervals kept)
 *
 *   order            int32[n] or int64[n], the rows by thread, each thread's by time then
 *                    arrival (thread_order below)
 *   starts           int64[m + 1]: thread k's rows are order[starts[k]:starts[k + 1]]; the
 *                    last is n
 *   ts               int64[n]; code, detail, coarse int8[n], in arrival order: detail and
 *                    coarse are the state a row's event leaves (SchedState code, coarse total);
 *                    a blocked reason's detail is its io_wait (0 or 1): no thread id or
 *                    argument column is read, so the caller lets them go before the pass
 *   out_thr          int64[m]: each thread's index k (of starts)
 *   cap              intervals kept at most (-1: all), thread by thread in their order: a
 *                    thread whose intervals do not fit with those kept before it keeps none
 *                    (they are written, then the next thread's overwrite them), as
 *                    perfetto_ftrace's FtraceState.finish keeps them
 *   out_bounds       int64[m + 1]: thread k's intervals kept are out_bounds[k]:out_bounds[k + 1]
 *   out_count        int64[m]: thread k's intervals, kept or not
 *   out_tot          int64[4 m]: thread k's ns in coarse states 0..3
 *   iv_ts, iv_dur    float64[n] (µs); iv_state, iv_io int8[n]
 *
 * Threads come in the order of `starts`, each one that has a state event (not only blocked
 * reasons).
 * Plain CPython C API and the buffer protocol; every index is checked.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    Py_buffer b;
    int held;
} buf_t;

static int get(PyObject *o, buf_t *out, Py_ssize_t items, Py_ssize_t size, int writable, const char *what)
{
    if (PyObject_GetBuffer(o, &out->b, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    out->held = 1;
    if (out->b.len != items * size) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, want %zd", what, out->b.len, items * size);
        return -1;
    }
    return 0;
}

/* An integer column of n int32 or int64 items (its width: 4 or 8 bytes, in *width). */
static int get_ints(PyObject *o, buf_t *out, Py_ssize_t n, int writable, int *width, const char *what)
{
    if (PyObject_GetBuffer(o, &out->b, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    out->held = 1;
    if (out->b.len == 8 * n)
        *width = 8;
    else if (out->b.len == 4 * n)
        *width = 4;
    else {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, want %zd int32 or int64", what, out->b.len, n);
        return -1;
    }
    return 0;
}

/* Item i of an int32 (width 4) or int64 column. */
static inline int64_t load(const void *p, int width, Py_ssize_t i)
{
    return width == 4 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

/* Thread state carried across its rows: the last effective event (what it opened), the
 * blocked reason waiting for that interval, the last blocked interval since a switch-in. */
typedef struct {
    int have;          /* an effective event seen */
    int64_t ts;        /* its time */
    int8_t detail, coarse;
    int pending;       /* a blocked reason for the interval it opened */
    int8_t pending_val;
    int64_t lb;        /* last blocked interval (index), -1: none */
} thr_t;

static PyObject *replay(PyObject *self, PyObject *args)
{
    PyObject *o[14];
    long long end, cap;
    int has_end, running, r, dead, c_blocked, c_in, c_out, c_wake, c_new;
    if (!PyArg_ParseTuple(args, "OOOOOOLiLiiiiiiiiOOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &end, &has_end, &cap, &running, &r, &dead, &c_blocked, &c_in, &c_out, &c_wake, &c_new,
                          &o[6], &o[7], &o[13], &o[8], &o[9], &o[10], &o[11], &o[12]))
        return NULL;
    buf_t b[14];
    memset(b, 0, sizeof b);
    PyObject *result = NULL;
    if (PyObject_GetBuffer(o[2], &b[2].b, PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    b[2].held = 1;
    if (b[2].b.len % 8) {
        PyErr_SetString(PyExc_ValueError, "ts: not int64");
        goto done;
    }
    Py_ssize_t n = b[2].b.len / 8;
    int w_order = 8;
    if (get_ints(o[0], &b[0], n, 0, &w_order, "order") < 0)
        goto done;
    if (PyObject_GetBuffer(o[1], &b[1].b, PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    b[1].held = 1;
    if (b[1].b.len % 8 || b[1].b.len < 8) {
        PyErr_SetString(PyExc_ValueError, "starts: not int64[m + 1]");
        goto done;
    }
    Py_ssize_t m = b[1].b.len / 8 - 1;
    static const char *names[] = {"order", "starts", "ts", "code", "detail", "coarse", "out_thr", "out_bounds",
                                  "out_tot", "iv_ts", "iv_dur", "iv_state", "iv_io", "out_count"};
    const Py_ssize_t items[] = {n, m + 1, n, n, n, n, m, m + 1, 4 * m, n, n, n, n, m};
    const Py_ssize_t sizes[] = {0, 8, 8, 1, 1, 1, 8, 8, 8, 8, 8, 1, 1, 8};
    for (int k = 3; k < 14; k++)
        if (get(o[k], &b[k], items[k], sizes[k], k >= 6, names[k]) < 0)
            goto done;
    const void *order = b[0].b.buf;
    const int64_t *starts = b[1].b.buf, *ts = b[2].b.buf;
    const int8_t *code = b[3].b.buf, *detail = b[4].b.buf, *coarse = b[5].b.buf;
    int64_t *out_thr = b[6].b.buf, *out_bounds = b[7].b.buf, *out_tot = b[8].b.buf;
    double *iv_ts = b[9].b.buf, *iv_dur = b[10].b.buf;
    int8_t *iv_state = b[11].b.buf, *iv_io = b[12].b.buf;
    int64_t *out_count = b[13].b.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t row = load(order, w_order, i);
        if (row < 0 || row >= n) {
            PyErr_SetString(PyExc_ValueError, "order: index out of range");
            goto done;
        }
    }
    if (starts[0] != 0 || starts[m] != n) {
        PyErr_SetString(PyExc_ValueError, "starts: not from 0 to n");
        goto done;
    }
    for (Py_ssize_t k = 0; k < m; k++)
        if (starts[k + 1] < starts[k]) {
            PyErr_SetString(PyExc_ValueError, "starts: not ascending");
            goto done;
        }

    Py_ssize_t nthr = 0, niv = 0, kept = 0;
    thr_t t;
    int64_t *tot = NULL;
/* The interval the last effective event opened ends at `nxt` (closes: it is counted) */
#define CLOSE(closes, nxt, c_next)                                                                  \
    do {                                                                                            \
        int64_t d_ = (int64_t)((uint64_t)(nxt) - (uint64_t)t.ts);                                 \
        int emitted_ = 0;                                                                           \
        if (closes) {                                                                               \
            if (t.coarse != dead)                                                                   \
                tot[t.coarse] = (int64_t)((uint64_t)tot[t.coarse] + (uint64_t)d_);                  \
            if (d_ > 0) {                                                                           \
                emitted_ = 1;                                                                       \
                iv_ts[niv] = (double)t.ts / 1000.0;                                                 \
                iv_dur[niv] = (double)d_ / 1000.0;                                                  \
                iv_state[niv] = t.detail;                                                           \
                iv_io[niv] = t.pending ? t.pending_val : -1;                                        \
                niv++;                                                                              \
            }                                                                                       \
        }                                                                                           \
        if ((c_next) == c_in)                                                                       \
            t.lb = -1;                                                                              \
        else if (emitted_ && t.detail != running && t.detail != r)                                  \
            t.lb = niv - 1;                                                                         \
        t.pending = 0;                                                                              \
    } while (0)

    for (Py_ssize_t k = 0; k < m; k++) {
        memset(&t, 0, sizeof t);
        t.lb = -1;
        for (Py_ssize_t i = starts[k]; i < starts[k + 1]; i++) {
            int64_t row = load(order, w_order, i);
            int c = code[row];
            if (c == c_blocked) {
                if (!t.have)
                    continue;
                if (t.detail != running && t.detail != r) {
                    t.pending = 1;
                    t.pending_val = detail[row];
                } else if (t.lb >= 0) {
                    iv_io[t.lb] = detail[row];
                }
                continue;
            }
            if (c == c_wake && t.have && (t.detail == running || t.detail == r))
                continue; /* a waking of a thread running or runnable changes nothing */
            if (t.have) {
                int closes = c != c_new && !(c == c_out && t.detail != running);
                CLOSE(closes, ts[row], c);
            } else {
                out_thr[nthr] = k;
                out_bounds[nthr] = niv;
                tot = out_tot + 4 * nthr;
                tot[0] = tot[1] = tot[2] = tot[3] = 0;
                nthr++;
            }
            t.have = 1;
            t.ts = ts[row];
            t.detail = detail[row];
            t.coarse = coarse[row];
            if (t.coarse < 0 || t.coarse > 3) {
                PyErr_SetString(PyExc_ValueError, "coarse: not 0..3");
                goto done;
            }
        }
        if (t.have) {
            CLOSE(has_end, end, -1);
            Py_ssize_t mine = niv - out_bounds[nthr - 1];
            out_count[nthr - 1] = mine;
            if (cap >= 0 && mine && kept + mine > cap)
                niv = out_bounds[nthr - 1]; /* none of its intervals kept */
            else
                kept += mine;
        }
    }
#undef CLOSE
    out_bounds[nthr] = niv;
    result = Py_BuildValue("nn", nthr, niv);
done:
    for (int k = 0; k < 14; k++)
        if (b[k].held)
            PyBuffer_Release(&b[k].b);
    return result;
}

/* ---- thread_order ------------------------------------------------------------------------ */

/* tid -> thread index (first seen first), open addressing; grows at half full. */
typedef struct {
    int64_t *key;
    int64_t *val;
    size_t cap, used;
} map_t;

static inline size_t slot_of(int64_t k, size_t cap)
{
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static int map_grow(map_t *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    int64_t *key = PyMem_Malloc(cap * sizeof *key), *val = PyMem_Malloc(cap * sizeof *val);
    if (!key || !val) {
        PyMem_Free(key);
        PyMem_Free(val);
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        val[i] = -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->val[i] >= 0) {
            size_t s = slot_of(m->key[i], cap);
            while (val[s] >= 0)
                s = (s + 1) & (cap - 1);
            key[s] = m->key[i];
            val[s] = m->val[i];
        }
    PyMem_Free(m->key);
    PyMem_Free(m->val);
    m->key = key;
    m->val = val;
    m->cap = cap;
    return 0;
}

/* The thread index of `k`, a new one (m->used) when unseen; -1 on no memory. */
static inline int64_t map_index(map_t *m, int64_t k)
{
    size_t s = slot_of(k, m->cap);
    while (m->val[s] >= 0) {
        if (m->key[s] == k)
            return m->val[s];
        s = (s + 1) & (m->cap - 1);
    }
    if (2 * (m->used + 1) > m->cap) {
        if (map_grow(m) < 0)
            return -1;
        s = slot_of(k, m->cap);
        while (m->val[s] >= 0)
            s = (s + 1) & (m->cap - 1);
    }
    m->key[s] = k;
    m->val[s] = (int64_t)m->used;
    return (int64_t)m->used++;
}

typedef struct {
    int64_t ts, row;
} pair_t;

/* x[0..n) stably by time: insertion sort below 32 (a thread's rows are mostly a few short runs
 * in time order, one per CPU bundle they came in, so few moves), merges above; y: room for n. */
static void sort_pairs(pair_t *x, pair_t *y, Py_ssize_t n)
{
    if (n <= 32) {
        for (Py_ssize_t i = 1; i < n; i++) {
            pair_t v = x[i];
            Py_ssize_t j = i;
            while (j > 0 && x[j - 1].ts > v.ts) {
                x[j] = x[j - 1];
                j--;
            }
            x[j] = v;
        }
        return;
    }
    Py_ssize_t m = n / 2;
    sort_pairs(x, y, m);
    sort_pairs(x + m, y, n - m);
    if (x[m - 1].ts <= x[m].ts)
        return; /* the halves are in order already */
    Py_ssize_t p = 0, q = m, o = 0;
    while (p < m && q < n)
        y[o++] = x[q].ts < x[p].ts ? x[q++] : x[p++]; /* ties: the earlier half first */
    while (p < m)
        y[o++] = x[p++];
    memcpy(x, y, (size_t)o * sizeof *x); /* the rest of the second half is in place */
}

/* Item i of an int32 (width 4) or int64 column set to v. */
static inline void store(void *p, int width, Py_ssize_t i, int64_t v)
{
    if (width == 4)
        ((int32_t *)p)[i] = (int32_t)v;
    else
        ((int64_t *)p)[i] = v;
}

/* Row indices a[0..n) (ascending: arrival order; int32 or int64 items, `w` bytes each) stably
 * by ts, as (time, row) pairs side by side (one gather of the times, then no random reads);
 * x, y: room for n pairs each. */
static void sort_by_time(void *a, int w, pair_t *x, pair_t *y, Py_ssize_t n, const int64_t *ts)
{
    Py_ssize_t i = 1;
    while (i < n && ts[load(a, w, i - 1)] <= ts[load(a, w, i)])
        i++;
    if (i >= n)
        return; /* in order already */
    for (Py_ssize_t k = 0; k < n; k++) {
        x[k].row = load(a, w, k);
        x[k].ts = ts[x[k].row];
    }
    sort_pairs(x, y, n);
    for (Py_ssize_t k = 0; k < n; k++)
        store(a, w, k, x[k].row);
}

/* thread_order(tid, ts, order, starts) -> threads: tid int32[n] or int64[n], ts int64[n];
 * `order` (int32[n] when n fits, or int64[n]) gets the rows by thread,
 * threads in the order their first row arrived, then by time, ties in arrival order; `starts`
 * (int64[n + 1]) where each thread's rows begin, then n. perfetto_slices._thread_order is the
 * numpy reference. */
static PyObject *thread_order(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[4];
    if (!PyArg_ParseTuple(args, "OOOO", &o[0], &o[1], &o[2], &o[3]))
        return NULL;
    buf_t b[4];
    memset(b, 0, sizeof b);
    map_t m = {NULL, NULL, 0, 0};
    int64_t *count = NULL;
    pair_t *tmp = NULL;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(o[1], &b[1].b, PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    b[1].held = 1;
    if (b[1].b.len % 8) {
        PyErr_SetString(PyExc_ValueError, "ts: not int64");
        goto done;
    }
    Py_ssize_t n = b[1].b.len / 8;
    int w_tid = 8, w_order = 8;
    if (get_ints(o[0], &b[0], n, 0, &w_tid, "tid") < 0 || get_ints(o[2], &b[2], n, 1, &w_order, "order") < 0 ||
        get(o[3], &b[3], n + 1, 8, 1, "starts") < 0)
        goto done;
    if (w_order == 4 && n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "order: int32 for more rows than int32 holds");
        goto done;
    }
    const void *tid = b[0].b.buf;
    const int64_t *ts = b[1].b.buf;
    void *order = b[2].b.buf;
    int64_t *starts = b[3].b.buf;
    if (map_grow(&m) < 0)
        goto done;
    /* starts[k]: thread k's rows so far, then where they begin */
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t seen = m.used;
        int64_t k = map_index(&m, load(tid, w_tid, i));
        if (k < 0)
            goto done;
        if (m.used != seen)
            starts[k] = 0;
        starts[k]++;
    }
    Py_ssize_t nthr = (Py_ssize_t)m.used, longest = 0, at = 0;
    count = PyMem_Malloc((size_t)(nthr + 1) * sizeof *count);
    if (!count) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < nthr; k++) {
        if (starts[k] > longest)
            longest = starts[k];
        count[k] = at; /* the next place of thread k's rows */
        at += starts[k];
        starts[k] = count[k];
    }
    starts[nthr] = n;
    for (Py_ssize_t i = 0; i < n; i++)
        store(order, w_order, count[map_index(&m, load(tid, w_tid, i))]++, i); /* every tid is in the map: no growth */
    tmp = PyMem_Malloc((size_t)(longest ? 2 * longest : 2) * sizeof *tmp);
    if (!tmp) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < nthr; k++)
        sort_by_time((char *)order + (size_t)starts[k] * (size_t)w_order, w_order, tmp, tmp + longest,
                     starts[k + 1] - starts[k], ts);
    result = PyLong_FromSsize_t(nthr);
done:
    PyMem_Free(m.key);
    PyMem_Free(m.val);
    PyMem_Free(count);
    PyMem_Free(tmp);
    for (int k = 0; k < 4; k++)
        if (b[k].held)
            PyBuffer_Release(&b[k].b);
    return result;
}

static PyMethodDef methods[] = {
    {"replay", replay, METH_VARARGS, "The scheduler state machine over rows in thread, time order."},
    {"thread_order", thread_order, METH_VARARGS, "Rows by thread (first arrival first), time, arrival."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_schedc", NULL, -1, methods};

PyMODINIT_FUNC PyInit__schedc(void) { return PyModule_Create(&module); }
