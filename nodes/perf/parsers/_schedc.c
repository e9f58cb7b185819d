/* The scheduler state machine of perfetto_sched.py (_replay_numpy: its Python/numpy reference,
 * with the rules in that module's docstring) as one pass over the rows in (thread, time,
 * arrival) order. The numpy passes build ~280 bytes of temporaries a row and need the four
 * columns gathered into that order first (41 bytes a row); this reads the columns through the
 * order and keeps one thread's state. tests/test_perfetto_sched_native.py checks that both give
 * the same columns, on random rows and on the captures' own.
 *
 *   replay(order, tid, ts, code, arg, detail, coarse, end, has_end, running, r, dead, blocked_code,
 *          in_code, out_code, wake_code, new_code,
 *          out_tid, out_first, out_bounds, out_tot, iv_ts, iv_dur, iv_state, iv_io)
 *       -> (threads, intervals)
 *
 *   order            int64[n], the rows in (tid, ts, arrival) order (by_thread_time)
 *   tid, ts, arg     int64[n]; code, detail, coarse int8[n], in arrival order: detail and
 *                    coarse are the state a row's event leaves (SchedState code, coarse total)
 *   out_tid/out_first int64[n]: each thread's tid and the least arrival index of its rows
 *   out_bounds       int64[n + 1]: thread k's intervals are out_bounds[k]:out_bounds[k + 1]
 *   out_tot          int64[4 n]: thread k's ns in coarse states 0..3
 *   iv_ts, iv_dur    float64[n] (µs); iv_state, iv_io int8[n]
 *
 * Threads come in tid order, each one that has a state event (not only blocked reasons).
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
    PyObject *o[15];
    long long end;
    int has_end, running, r, dead, c_blocked, c_in, c_out, c_wake, c_new;
    if (!PyArg_ParseTuple(args, "OOOOOOOLiiiiiiiiiOOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                          &end, &has_end, &running, &r, &dead, &c_blocked, &c_in, &c_out, &c_wake, &c_new,
                          &o[7], &o[8], &o[9], &o[10], &o[11], &o[12], &o[13], &o[14]))
        return NULL;
    buf_t b[15];
    memset(b, 0, sizeof b);
    PyObject *result = NULL;
    Py_buffer *ob = NULL;
    if (PyObject_GetBuffer(o[0], &b[0].b, PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    b[0].held = 1;
    ob = &b[0].b;
    if (ob->len % 8) {
        PyErr_SetString(PyExc_ValueError, "order: not int64");
        goto done;
    }
    Py_ssize_t n = ob->len / 8;
    static const char *names[] = {"order", "tid", "ts", "code", "arg", "detail", "coarse", "out_tid", "out_first",
                                  "out_bounds", "out_tot", "iv_ts", "iv_dur", "iv_state", "iv_io"};
    const Py_ssize_t items[] = {n, n, n, n, n, n, n, n, n, n + 1, 4 * n, n, n, n, n};
    const Py_ssize_t sizes[] = {8, 8, 8, 1, 8, 1, 1, 8, 8, 8, 8, 8, 8, 1, 1};
    for (int k = 1; k < 15; k++)
        if (get(o[k], &b[k], items[k], sizes[k], k >= 7, names[k]) < 0)
            goto done;
    const int64_t *order = b[0].b.buf, *tid = b[1].b.buf, *ts = b[2].b.buf, *arg = b[4].b.buf;
    const int8_t *code = b[3].b.buf, *detail = b[5].b.buf, *coarse = b[6].b.buf;
    int64_t *out_tid = b[7].b.buf, *out_first = b[8].b.buf, *out_bounds = b[9].b.buf, *out_tot = b[10].b.buf;
    double *iv_ts = b[11].b.buf, *iv_dur = b[12].b.buf;
    int8_t *iv_state = b[13].b.buf, *iv_io = b[14].b.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        if (order[i] < 0 || order[i] >= n) {
            PyErr_SetString(PyExc_ValueError, "order: index out of range");
            goto done;
        }

    Py_ssize_t nthr = 0, niv = 0;
    thr_t t;
    memset(&t, 0, sizeof t);
    int64_t cur = 0, first = 0; /* the thread, the first arrival index of its rows so far */
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

    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t row = order[i];
        int64_t th = tid[row];
        if (i == 0 || th != cur) {
            if (t.have) {
                CLOSE(has_end, end, -1);
                out_first[nthr - 1] = first;
            }
            memset(&t, 0, sizeof t);
            t.lb = -1;
            cur = th;
            first = row;
        }
        if (row < first)
            first = row;
        int c = code[row];
        if (c == c_blocked) {
            if (!t.have)
                continue;
            if (t.detail != running && t.detail != r) {
                t.pending = 1;
                t.pending_val = (int8_t)arg[row];
            } else if (t.lb >= 0) {
                iv_io[t.lb] = (int8_t)arg[row];
            }
            continue;
        }
        if (c == c_wake && t.have && (t.detail == running || t.detail == r))
            continue; /* a waking of a thread running or runnable changes nothing */
        if (t.have) {
            int closes = c != c_new && !(c == c_out && t.detail != running);
            CLOSE(closes, ts[row], c);
        } else {
            out_tid[nthr] = th;
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
        out_first[nthr - 1] = first;
    }
#undef CLOSE
    out_bounds[nthr] = niv;
    result = Py_BuildValue("nn", nthr, niv);
done:
    for (int k = 0; k < 15; k++)
        if (b[k].held)
            PyBuffer_Release(&b[k].b);
    return result;
}

static PyMethodDef methods[] = {
    {"replay", replay, METH_VARARGS, "The scheduler state machine over rows in thread, time order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_schedc", NULL, -1, methods};

PyMODINIT_FUNC PyInit__schedc(void) { return PyModule_Create(&module); }
