/* The slice walk of nodes/perf/metrics/hotspots.py as one pass per thread: the per-slice stack
 * walk that tests/slice_walk_reference.py keeps as the reference (hotspots' numpy walk,
 * _walk_batch and nodes/perf/metrics/slice_tree.py, computes the same with ~40 numpy passes
 * over the slices; it stays as the fallback). tests/test_slice_tree.py and
 * tests/test_metrics_native.py check that all three give the same sums, orders and paths.
 *
 *   walk(ts, dur, name, bounds, nnames, max_depth, out) -> None
 *
 *   ts, dur       float64[n]: threads laid end to end, thread s at [bounds[s], bounds[s + 1]);
 *                 times finite, durations >= 0 (the caller drops and clips as the walk does)
 *   name          int64[n], each in [0, nnames)
 *   bounds        int64[nseg + 1]
 *   out           a tuple of 27 writable buffers (hotspots._native_walk names them):
 *     o_ts, o_dur, o_name        the slices of each thread by (start, longer first), as the
 *                                stable lexsort((-dur, ts)) gives them; all three None: not
 *                                written (a caller that keeps o_at alone: 24 bytes a slice
 *                                never touched)
 *     busy                       float64[nseg]: the top-level durations added in start order
 *     roots, root_bounds         int64[n], int64[nseg + 1]: positions (into o_*) of the top-level slices
 *     self_name, self_val, self_bounds    per thread, self time per name in the order the walk
 *                                first closed a slice of that name (own time <= 0 adds 0.0)
 *     tot_name, tot_val, tot_bounds       total per name over the outermost occurrences, in the
 *                                order of their starts
 *     cnt_name, cnt_val, cnt_bounds       slices per name, names ascending
 *     listed_pid, listed_w, listed_bounds paths with own time > 0, in the order the walk first
 *                                closed a slice on each, with the sum of that own time
 *     path_up, path_name, path_bounds     the thread's paths numbered level by level, each
 *                                level by (parent path, name): path p is path_name[p] under
 *                                path_up[p] (-1: a top-level name); a slice deeper than
 *                                max_depth adds to its ancestor's path at that depth
 *     g_sum, g_min, g_max, g_ts, g_dur    float64[n], beside cnt_*: slice_stats' per-name
 *                                groups of the thread (durations added as np.add.reduceat
 *                                adds them, least, largest, the first slice's start and duration)
 *     o_at                       int64[n]: where each slice of o_* is in its thread's input
 *                                (0 .. its length): o_ts[bounds[s] + p] is ts[bounds[s] + o_at[...]];
 *                                the caller keeps these instead of o_* when it can read the input again
 *
 * Every sum starts from 0.0 and adds in the order stated, as the reference's `+=` does (and
 * numpy's bincount, which adds in index order). Plain CPython C API and the buffer protocol.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
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

/* ---- clipped sums (nodes/perf/metrics/clipped_sum.py) ------------------------------------- */

/* Thread k's intervals clipped to a window, as the literal numpy expression has them at position
 * j: np.clip(np.minimum(e, b) - np.maximum(s, a), 0, None), 0 outside [lo, hi) (they overlap
 * nothing there); `whole`: the thread lies inside the window, e - s. */
typedef struct {
    const double *s, *e;
    double a, b;
    Py_ssize_t lo, hi;
    int whole;
} clip_t;

static inline double clip_at(const clip_t *c, Py_ssize_t j)
{
    if (c->whole)
        return c->whole == 2 ? c->e[j] : c->e[j] - c->s[j]; /* 2: the values themselves (pairwise_sums) */
    if (j < c->lo || j >= c->hi)
        return 0.0;
    double hi = c->e[j] <= c->b ? c->e[j] : c->b, lo = c->s[j] >= c->a ? c->s[j] : c->a;
    double x = hi - lo;
    return x >= 0.0 ? x : 0.0;
}

/* numpy's pairwise sum (`pairwise_sum` in numpy/_core/src/umath/loops_utils.h.src: fewer than
 * 8 values one after another from -0.0, up to 128 in 8 interleaved partial sums, more split in
 * two at a multiple of 8) of positions [first, first + n) of the clipped values. A stretch of
 * only zeros sums to 0.0 there as well, so it is skipped. clipped_sum.py checks once that this
 * is numpy's sum (`_native_sums_are_numpys`) before using it. */
static double pairwise(const clip_t *c, Py_ssize_t first, Py_ssize_t n)
{
    if (!c->whole && (first + n <= c->lo || first >= c->hi))
        return 0.0;
    if (n < 8) {
        double res = -0.0;
        for (Py_ssize_t i = 0; i < n; i++)
            res += clip_at(c, first + i);
        return res;
    }
    if (n <= 128) {
        double r[8], res;
        Py_ssize_t i;
        for (int k = 0; k < 8; k++)
            r[k] = clip_at(c, first + k);
        for (i = 8; i < n - (n % 8); i += 8)
            for (int k = 0; k < 8; k++)
                r[k] += clip_at(c, first + i + k);
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += clip_at(c, first + i);
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise(c, first, n2) + pairwise(c, first + n2, n - n2);
}

/* np.add.reduceat's sum of one stretch v[0..n), n >= 1: the first value, plus numpy's pairwise
 * sum of the others (its reduce loop starts from a copy of the first). */
static double reduceat_sum(const double *v, Py_ssize_t n)
{
    if (n == 1)
        return v[0];
    clip_t rest = {NULL, v + 1, 0.0, 0.0, 0, 0, 2};
    return v[0] + pairwise(&rest, 0, n - 1);
}

/* ---- the order: stable, by start, longer first ---------------------------------------------- */

static inline int before(const double *ts, const double *dur, int64_t a, int64_t b)
{
    return ts[a] < ts[b] || (ts[a] == ts[b] && dur[a] > dur[b]);
}

/* Stable merge sort of idx[0..m) (insertion sort of runs of 16, then bottom-up merges). */
static void sort_slices(int64_t *idx, int64_t *tmp, Py_ssize_t m, const double *ts, const double *dur)
{
    Py_ssize_t i;
    for (i = 1; i < m; i++)
        if (before(ts, dur, idx[i], idx[i - 1]))
            break;
    if (i >= m)
        return; /* already in order: the usual case */
    const Py_ssize_t RUN = 16;
    for (Py_ssize_t lo = 0; lo < m; lo += RUN) {
        Py_ssize_t hi = lo + RUN < m ? lo + RUN : m;
        for (Py_ssize_t j = lo + 1; j < hi; j++) {
            int64_t v = idx[j];
            Py_ssize_t k = j;
            while (k > lo && before(ts, dur, v, idx[k - 1])) {
                idx[k] = idx[k - 1];
                k--;
            }
            idx[k] = v;
        }
    }
    int64_t *src = idx, *dst = tmp;
    for (Py_ssize_t w = RUN; w < m; w *= 2) {
        for (Py_ssize_t lo = 0; lo < m; lo += 2 * w) {
            Py_ssize_t mid = lo + w < m ? lo + w : m, hi = lo + 2 * w < m ? lo + 2 * w : m;
            Py_ssize_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                dst[k++] = before(ts, dur, src[b], src[a]) ? src[b++] : src[a++];
            while (a < mid)
                dst[k++] = src[a++];
            while (b < hi)
                dst[k++] = src[b++];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx)
        memcpy(idx, src, (size_t)m * sizeof(int64_t));
}

/* ---- paths: (parent path, name) -> path id, per thread -------------------------------------- */

typedef struct {
    int64_t up, name, depth, key1; /* key1: the final id of `up` while numbering */
    int64_t slot;                  /* its place in the hash table */
    int64_t listed;                /* 1 + its place among the listed paths, 0: not listed */
    int64_t final;
} path_t;

static inline uint64_t mix(int64_t up, int64_t name)
{
    uint64_t h = (uint64_t)up * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)name + 0x632BE59BD9B4E019ULL);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return h;
}

/* The path table twice as large, paths[0..npath) placed again (each path's slot updated): a
 * thread's paths are found by (parent path, name) whatever the table's size, and numbered in
 * the order they were made, so its size changes no output. */
static int grow_table(int64_t **table, Py_ssize_t *cap, path_t *paths, Py_ssize_t npath)
{
    Py_ssize_t ncap = *cap * 2;
    int64_t *t = malloc(sizeof(int64_t) * ncap);
    if (!t)
        return -1;
    for (Py_ssize_t k = 0; k < ncap; k++)
        t[k] = -1;
    const uint64_t mask = (uint64_t)ncap - 1;
    for (Py_ssize_t q = 0; q < npath; q++) {
        uint64_t h = mix(paths[q].up, paths[q].name) & mask;
        while (t[h] >= 0)
            h = (h + 1) & mask;
        t[h] = q;
        paths[q].slot = (int64_t)h;
    }
    free(*table);
    *table = t;
    *cap = ncap;
    return 0;
}
static int cmp_path(const void *a, const void *b)
{
    const path_t *x = *(path_t *const *)a, *y = *(path_t *const *)b;
    if (x->key1 != y->key1)
        return x->key1 < y->key1 ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    double end, d, child;
    int64_t name, path;
} frame_t;

enum { O_TS, O_DUR, O_NAME, O_BUSY, O_ROOTS, O_ROOT_B, O_SELF_N, O_SELF_V, O_SELF_B, O_TOT_N, O_TOT_V,
       O_TOT_B, O_CNT_N, O_CNT_V, O_CNT_B, O_LIST_P, O_LIST_W, O_LIST_B, O_UP, O_PNAME, O_PATH_B, O_G_SUM, O_G_MIN,
       O_G_MAX, O_G_TS, O_G_DUR, O_AT, N_OUT };

static PyObject *walk(PyObject *self, PyObject *args)
{
    PyObject *o_in[4], *outs;
    long long nnames_ll;
    int max_depth;
    if (!PyArg_ParseTuple(args, "OOOOLiO!", &o_in[0], &o_in[1], &o_in[2], &o_in[3], &nnames_ll, &max_depth,
                          &PyTuple_Type, &outs))
        return NULL;
    if (PyTuple_GET_SIZE(outs) != N_OUT) {
        PyErr_Format(PyExc_ValueError, "out: %d buffers wanted", (int)N_OUT);
        return NULL;
    }
    if (nnames_ll < 1 || nnames_ll > ((long long)1 << 40) || max_depth < 1) {
        PyErr_SetString(PyExc_ValueError, "nnames or max_depth out of range");
        return NULL;
    }
    Py_ssize_t nnames = (Py_ssize_t)nnames_ll;
    buf_t in[4], out[N_OUT];
    memset(in, 0, sizeof in);
    memset(out, 0, sizeof out);
    PyObject *result = NULL;
    /* scratch */
    int64_t *perm = NULL, *tmp = NULL, *self_slot = NULL, *tot_slot = NULL, *active = NULL, *count = NULL;
    int64_t *grp_at = NULL;
    double *gval = NULL, *gts = NULL;
    int64_t *table = NULL, *names = NULL;
    path_t *paths = NULL, **by_level = NULL;
    frame_t *stack = NULL;
    int64_t *level_count = NULL;

    if (PyObject_GetBuffer(o_in[3], &in[3].b, PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    in[3].held = 1;
    if (in[3].b.len % 8 || in[3].b.len < 8) {
        PyErr_SetString(PyExc_ValueError, "bounds: not int64[nseg + 1]");
        goto done;
    }
    Py_ssize_t nseg = in[3].b.len / 8 - 1;
    const int64_t *bounds = in[3].b.buf;
    if (PyObject_GetBuffer(o_in[0], &in[0].b, PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    in[0].held = 1;
    if (in[0].b.len % 8) {
        PyErr_SetString(PyExc_ValueError, "ts: not float64");
        goto done;
    }
    Py_ssize_t n = in[0].b.len / 8;
    if (get(o_in[1], &in[1], n, 8, 0, "dur") < 0 || get(o_in[2], &in[2], n, 8, 0, "name") < 0)
        goto done;
    static const char *onames[N_OUT] = {"o_ts", "o_dur", "o_name", "busy", "roots", "root_bounds", "self_name",
                                        "self_val", "self_bounds", "tot_name", "tot_val", "tot_bounds", "cnt_name",
                                        "cnt_val", "cnt_bounds", "listed_pid", "listed_w", "listed_bounds",
                                        "path_up", "path_name", "path_bounds", "g_sum", "g_min", "g_max", "g_ts",
                                        "g_dur", "o_at"};
    int sorted_out = PyTuple_GET_ITEM(outs, O_TS) != Py_None;
    if ((PyTuple_GET_ITEM(outs, O_DUR) != Py_None) != sorted_out ||
        (PyTuple_GET_ITEM(outs, O_NAME) != Py_None) != sorted_out) {
        PyErr_SetString(PyExc_ValueError, "o_ts, o_dur, o_name: all three or none");
        goto done;
    }
    for (int k = 0; k < N_OUT; k++) {
        if (!sorted_out && (k == O_TS || k == O_DUR || k == O_NAME))
            continue;
        Py_ssize_t items = n;
        if (k == O_BUSY)
            items = nseg;
        else if (k == O_ROOT_B || k == O_SELF_B || k == O_TOT_B || k == O_CNT_B || k == O_LIST_B || k == O_PATH_B)
            items = nseg + 1;
        if (get(PyTuple_GET_ITEM(outs, k), &out[k], items, 8, 1, onames[k]) < 0)
            goto done;
    }
    const double *ts = in[0].b.buf, *dur = in[1].b.buf;
    const int64_t *name = in[2].b.buf;
    if (bounds[0] != 0 || bounds[nseg] != n) {
        PyErr_SetString(PyExc_ValueError, "bounds: not 0 .. n");
        goto done;
    }
    Py_ssize_t maxm = 0;
    for (Py_ssize_t s = 0; s < nseg; s++) {
        if (bounds[s + 1] < bounds[s]) {
            PyErr_SetString(PyExc_ValueError, "bounds: not ascending");
            goto done;
        }
        if (bounds[s + 1] - bounds[s] > maxm)
            maxm = (Py_ssize_t)(bounds[s + 1] - bounds[s]);
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (name[i] < 0 || name[i] >= nnames) {
            PyErr_SetString(PyExc_ValueError, "name: id out of range");
            goto done;
        }
    double *o_ts = out[O_TS].b.buf, *o_dur = out[O_DUR].b.buf, *busy = out[O_BUSY].b.buf;
    double *self_val = out[O_SELF_V].b.buf, *tot_val = out[O_TOT_V].b.buf, *listed_w = out[O_LIST_W].b.buf;
    int64_t *o_name = out[O_NAME].b.buf, *roots = out[O_ROOTS].b.buf, *root_b = out[O_ROOT_B].b.buf;
    int64_t *self_name = out[O_SELF_N].b.buf, *self_b = out[O_SELF_B].b.buf;
    int64_t *tot_name = out[O_TOT_N].b.buf, *tot_b = out[O_TOT_B].b.buf;
    int64_t *cnt_name = out[O_CNT_N].b.buf, *cnt_val = out[O_CNT_V].b.buf, *cnt_b = out[O_CNT_B].b.buf;
    int64_t *listed_pid = out[O_LIST_P].b.buf, *list_b = out[O_LIST_B].b.buf;
    int64_t *path_up = out[O_UP].b.buf, *path_name = out[O_PNAME].b.buf, *path_b = out[O_PATH_B].b.buf;
    double *g_sum = out[O_G_SUM].b.buf, *g_min = out[O_G_MIN].b.buf, *g_max = out[O_G_MAX].b.buf;
    double *g_ts = out[O_G_TS].b.buf, *g_dur = out[O_G_DUR].b.buf;
    int64_t *o_at = out[O_AT].b.buf;

    /* the path table starts small and doubles as paths come (grow_table): sized for a path a
     * slice, it was 64 MB for a thread of 3 M slices that has a handful of paths */
    Py_ssize_t cap = 1024;
    Py_ssize_t m1 = maxm > 0 ? maxm : 1;
    perm = malloc(sizeof(int64_t) * m1);
    tmp = malloc(sizeof(int64_t) * m1);
    names = malloc(sizeof(int64_t) * m1);
    paths = malloc(sizeof(path_t) * m1);
    by_level = malloc(sizeof(path_t *) * m1);
    stack = malloc(sizeof(frame_t) * m1);
    level_count = calloc((size_t)max_depth + 1, sizeof(int64_t));
    table = malloc(sizeof(int64_t) * cap);
    self_slot = calloc((size_t)nnames, sizeof(int64_t));
    tot_slot = calloc((size_t)nnames, sizeof(int64_t));
    active = calloc((size_t)nnames, sizeof(int64_t));
    count = calloc((size_t)nnames, sizeof(int64_t));
    grp_at = calloc((size_t)nnames, sizeof(int64_t));
    /* slice_stats' groups are laid out after a thread's walk, when its order (perm) and the
     * sort's scratch (tmp) are done with: they reuse those two columns (8 bytes a slice each),
     * which the next thread's sort fills again */
    gval = (double *)tmp;
    gts = (double *)perm;
    if (!perm || !tmp || !names || !paths || !by_level || !stack || !level_count || !table || !self_slot ||
        !tot_slot || !active || !count || !grp_at) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < cap; k++)
        table[k] = -1;
    uint64_t mask = (uint64_t)cap - 1;

    Py_ssize_t nroot = 0, nself = 0, ntot = 0, ncnt = 0, nlist = 0, npath_all = 0;
    root_b[0] = self_b[0] = tot_b[0] = cnt_b[0] = list_b[0] = path_b[0] = 0;
    for (Py_ssize_t s = 0; s < nseg; s++) {
        const Py_ssize_t lo = (Py_ssize_t)bounds[s], m = (Py_ssize_t)(bounds[s + 1] - bounds[s]);
        for (Py_ssize_t p = 0; p < m; p++)
            perm[p] = lo + p;
        sort_slices(perm, tmp, m, ts, dur);
        const Py_ssize_t self0 = nself, tot0 = ntot, list0 = nlist;
        Py_ssize_t sp = 0, npath = 0;
        double b = 0.0;

/* A slice closes: its own time (duration minus its direct children's) to its name and path. */
#define CLOSE()                                                                                     \
    do {                                                                                            \
        frame_t *f_ = &stack[--sp];                                                                 \
        double own_ = f_->d - f_->child;                                                            \
        int64_t nm_ = f_->name;                                                                     \
        if (!self_slot[nm_]) {                                                                      \
            self_slot[nm_] = ++nself - self0;                                                       \
            self_name[nself - 1] = nm_;                                                             \
            self_val[nself - 1] = 0.0;                                                              \
        }                                                                                           \
        self_val[self0 + self_slot[nm_] - 1] += own_ > 0.0 ? own_ : 0.0;                            \
        if (own_ > 0.0) {                                                                           \
            path_t *pt_ = &paths[f_->path];                                                         \
            if (!pt_->listed) {                                                                     \
                pt_->listed = ++nlist - list0;                                                      \
                listed_pid[nlist - 1] = f_->path; /* a temporary id until numbered below */        \
                listed_w[nlist - 1] = 0.0;                                                          \
            }                                                                                       \
            listed_w[list0 + pt_->listed - 1] += own_;                                              \
        }                                                                                           \
        active[nm_]--;                                                                              \
    } while (0)

        for (Py_ssize_t p = 0; p < m; p++) {
            const int64_t i = perm[p];
            const double t = ts[i], d0 = dur[i];
            const int64_t nm = name[i];
            if (sorted_out) {
                o_ts[lo + p] = t;
                o_dur[lo + p] = d0;
                o_name[lo + p] = nm;
            }
            o_at[lo + p] = i - lo;
            count[nm]++;
            while (sp && stack[sp - 1].end <= t)
                CLOSE();
            double end = t + d0, d = d0;
            int64_t up = -1, path;
            if (sp) {
                frame_t *parent = &stack[sp - 1];
                if (end > parent->end) {
                    /* runs past its parent's end: only the part inside is its own */
                    end = parent->end;
                    d = end - t;
                }
                parent->child += d;
                up = parent->path;
            } else {
                b += d0;
                roots[nroot++] = lo + p;
            }
            if (sp >= max_depth) {
                path = up;
            } else {
                if (2 * (npath + 1) > cap) { /* at most half full, as the table sized for every slice was */
                    if (grow_table(&table, &cap, paths, npath) < 0) {
                        PyErr_NoMemory();
                        goto done;
                    }
                    mask = (uint64_t)cap - 1;
                }
                uint64_t h = mix(up, nm) & mask;
                for (;;) {
                    int64_t at = table[h];
                    if (at < 0) {
                        path = npath++;
                        path_t *pt = &paths[path];
                        pt->up = up;
                        pt->name = nm;
                        pt->depth = sp;
                        pt->slot = (int64_t)h;
                        pt->listed = 0;
                        table[h] = path;
                        level_count[sp]++;
                        break;
                    }
                    if (paths[at].up == up && paths[at].name == nm) {
                        path = at;
                        break;
                    }
                    h = (h + 1) & mask;
                }
            }
            if (active[nm] == 0) {
                /* the outermost occurrence: recursion is not counted twice */
                if (!tot_slot[nm]) {
                    tot_slot[nm] = ++ntot - tot0;
                    tot_name[ntot - 1] = nm;
                    tot_val[ntot - 1] = 0.0;
                }
                tot_val[tot0 + tot_slot[nm] - 1] += d;
            }
            active[nm]++;
            frame_t *f = &stack[sp++];
            f->end = end;
            f->d = d;
            f->child = 0.0;
            f->name = nm;
            f->path = path;
        }
        while (sp)
            CLOSE();
#undef CLOSE
        busy[s] = b;
        root_b[s + 1] = nroot;
        self_b[s + 1] = nself;
        tot_b[s + 1] = ntot;
        /* counts, names ascending; the thread's names are those its closings listed */
        Py_ssize_t k = nself - self0;
        memcpy(names, self_name + self0, (size_t)k * sizeof(int64_t));
        qsort(names, (size_t)k, sizeof(int64_t), cmp_i64);
        /* slice_stats' groups (hotspots._thread_groups): each name's slices in walk order,
         * laid out name after name; per name its count, its durations added as
         * np.add.reduceat adds a stretch (the first, plus numpy's pairwise sum of the rest),
         * the least and largest (the caller takes these only when no duration is -0.0), and
         * the first's start and duration */
        Py_ssize_t g = 0;
        for (Py_ssize_t j = 0; j < k; j++) {
            grp_at[names[j]] = g;
            g += count[names[j]];
        }
        for (Py_ssize_t p = 0; p < m; p++) { /* the slices in walk order, read through o_at */
            const int64_t i = lo + o_at[lo + p];
            Py_ssize_t q = grp_at[name[i]]++;
            gval[q] = dur[i];
            gts[q] = ts[i];
        }
        g = 0;
        for (Py_ssize_t j = 0; j < k; j++) {
            const Py_ssize_t c = count[names[j]];
            const double *v = gval + g;
            double lo_v = v[0], hi_v = v[0];
            for (Py_ssize_t q = 1; q < c; q++) {
                if (v[q] < lo_v)
                    lo_v = v[q];
                if (v[q] > hi_v)
                    hi_v = v[q];
            }
            g_sum[ncnt] = reduceat_sum(v, c);
            g_min[ncnt] = lo_v;
            g_max[ncnt] = hi_v;
            g_ts[ncnt] = gts[g];
            g_dur[ncnt] = v[0];
            g += c;
            cnt_name[ncnt] = names[j];
            cnt_val[ncnt++] = c;
            self_slot[names[j]] = tot_slot[names[j]] = active[names[j]] = count[names[j]] = grp_at[names[j]] = 0;
        }
        cnt_b[s + 1] = ncnt;
        /* the paths numbered level by level, each level by (parent's number, name) */
        Py_ssize_t at = 0;
        for (int dd = 0; dd < max_depth; dd++) {
            Py_ssize_t c = level_count[dd];
            level_count[dd] = at;
            at += c;
        }
        for (Py_ssize_t q = 0; q < npath; q++)
            by_level[level_count[paths[q].depth]++] = &paths[q];
        Py_ssize_t start = 0;
        for (int dd = 0; dd < max_depth && start < npath; dd++) {
            Py_ssize_t stop = level_count[dd];
            for (Py_ssize_t q = start; q < stop; q++)
                by_level[q]->key1 = by_level[q]->up < 0 ? -1 : paths[by_level[q]->up].final;
            qsort(by_level + start, (size_t)(stop - start), sizeof(path_t *), cmp_path);
            for (Py_ssize_t q = start; q < stop; q++)
                by_level[q]->final = q;
            start = stop;
        }
        for (int dd = 0; dd <= max_depth; dd++)
            level_count[dd] = 0;
        for (Py_ssize_t q = 0; q < npath; q++) {
            path_t *pt = &paths[q];
            path_up[npath_all + pt->final] = pt->up < 0 ? -1 : paths[pt->up].final;
            path_name[npath_all + pt->final] = pt->name;
            table[pt->slot] = -1;
        }
        for (Py_ssize_t j = list0; j < nlist; j++)
            listed_pid[j] = paths[listed_pid[j]].final;
        npath_all += npath;
        path_b[s + 1] = npath_all;
        list_b[s + 1] = nlist;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    for (int k = 0; k < 4; k++)
        if (in[k].held)
            PyBuffer_Release(&in[k].b);
    for (int k = 0; k < N_OUT; k++)
        if (out[k].held)
            PyBuffer_Release(&out[k].b);
    free(perm);
    free(tmp);
    free(names);
    free(paths);
    free(by_level);
    free(stack);
    free(level_count);
    free(table);
    free(self_slot);
    free(tot_slot);
    free(active);
    free(count);
    free(grp_at);
    return result;
}

/* clipped_sums(starts, ends, offsets, threads, a, b, out): out[k] = Intervals.clipped_sum(
 * threads[k], a[k], b[k]) for threads whose intervals follow one another in time with finite
 * times, and finite windows (the caller asks for no others). Bisections as searchsorted's. */
static PyObject *clipped_sums(PyObject *self, PyObject *args)
{
    PyObject *o[7];
    if (!PyArg_ParseTuple(args, "OOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6]))
        return NULL;
    buf_t b[7];
    memset(b, 0, sizeof b);
    PyObject *result = NULL;
    for (int k = 0; k < 7; k++) {
        if (PyObject_GetBuffer(o[k], &b[k].b, PyBUF_C_CONTIGUOUS | (k == 6 ? PyBUF_WRITABLE : 0)) < 0)
            goto done;
        b[k].held = 1;
        if (b[k].b.len % 8) {
            PyErr_SetString(PyExc_ValueError, "clipped_sums: 8-byte items wanted");
            goto done;
        }
    }
    Py_ssize_t niv = b[0].b.len / 8, nthr = b[2].b.len / 8 - 1, rows = b[3].b.len / 8;
    if (b[1].b.len / 8 != niv || nthr < 0 || b[4].b.len / 8 != rows || b[5].b.len / 8 != rows ||
        b[6].b.len / 8 != rows) {
        PyErr_SetString(PyExc_ValueError, "clipped_sums: lengths differ");
        goto done;
    }
    const double *starts = b[0].b.buf, *ends = b[1].b.buf, *wa = b[4].b.buf, *wb = b[5].b.buf;
    const int64_t *off = b[2].b.buf, *thr = b[3].b.buf;
    double *out = b[6].b.buf;
    for (Py_ssize_t k = 0; k < rows; k++) {
        int64_t i = thr[k];
        if (i < 0 || i >= nthr || off[i] < 0 || off[i] > off[i + 1] || off[i + 1] > niv) {
            PyErr_SetString(PyExc_ValueError, "clipped_sums: thread out of range");
            goto done;
        }
    }
    for (Py_ssize_t k = 0; k < rows; k++) {
        const int64_t i = thr[k];
        const Py_ssize_t n = (Py_ssize_t)(off[i + 1] - off[i]);
        clip_t c = {starts + off[i], ends + off[i], wa[k], wb[k], 0, 0, 0};
        if (!n) {
            out[k] = 0.0;
            continue;
        }
        Py_ssize_t lo = 0, hi = n; /* ends.searchsorted(a, side="right") */
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (c.e[mid] <= c.a)
                lo = mid + 1;
            else
                hi = mid;
        }
        c.lo = lo;
        lo = 0, hi = n; /* starts.searchsorted(b, side="left") */
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (c.s[mid] < c.b)
                lo = mid + 1;
            else
                hi = mid;
        }
        c.hi = lo;
        if (c.hi <= c.lo)
            out[k] = 0.0;
        else if (c.lo == 0 && c.hi == n && c.a <= c.s[0] && c.e[n - 1] <= c.b) {
            c.whole = 1;
            out[k] = 0.0 + pairwise(&c, 0, n);
        } else if (c.hi - c.lo == 1)
            out[k] = 0.0 + clip_at(&c, c.lo);
        else
            out[k] = 0.0 + pairwise(&c, 0, n);
    }
    result = Py_None;
    Py_INCREF(result);
done:
    for (int k = 0; k < 7; k++)
        if (b[k].held)
            PyBuffer_Release(&b[k].b);
    return result;
}

/* pairwise_sums(values, offsets, out, reduceat=False): out[k] = numpy's pairwise sum (above,
 * without the 0.0 +) of values[offsets[k]:offsets[k + 1]], what clipped_sum.py compares with
 * np.add.reduce once; reduceat: the first value plus that sum of the others, as the walk adds
 * slice_stats' groups, what hotspots.py compares with np.add.reduceat once. */
static PyObject *pairwise_sums(PyObject *self, PyObject *args)
{
    PyObject *o[3];
    int reduceat = 0;
    if (!PyArg_ParseTuple(args, "OOO|p", &o[0], &o[1], &o[2], &reduceat))
        return NULL;
    buf_t b[3];
    memset(b, 0, sizeof b);
    PyObject *result = NULL;
    for (int k = 0; k < 3; k++) {
        if (PyObject_GetBuffer(o[k], &b[k].b, PyBUF_C_CONTIGUOUS | (k == 2 ? PyBUF_WRITABLE : 0)) < 0)
            goto done;
        b[k].held = 1;
    }
    Py_ssize_t nv = b[0].b.len / 8, rows = b[2].b.len / 8;
    const double *v = b[0].b.buf;
    const int64_t *off = b[1].b.buf;
    if (b[1].b.len / 8 != rows + 1) {
        PyErr_SetString(PyExc_ValueError, "pairwise_sums: offsets");
        goto done;
    }
    for (Py_ssize_t k = 0; k < rows; k++) {
        if (off[k] < 0 || off[k] > off[k + 1] || off[k + 1] > nv) {
            PyErr_SetString(PyExc_ValueError, "pairwise_sums: offsets");
            goto done;
        }
        Py_ssize_t len = (Py_ssize_t)(off[k + 1] - off[k]);
        double *o = (double *)b[2].b.buf + k;
        if (reduceat) { /* as the walk adds slice_stats' groups */
            *o = len ? reduceat_sum(v + off[k], len) : 0.0;
        } else {
            clip_t c = {NULL, v + off[k], 0.0, 0.0, 0, 0, 2};
            *o = pairwise(&c, 0, len);
        }
    }
    result = Py_None;
    Py_INCREF(result);
done:
    for (int k = 0; k < 3; k++)
        if (b[k].held)
            PyBuffer_Release(&b[k].b);
    return result;
}

/* ---- the CPU lens's interval columns (cpu._SchedIndex, clipped_sum.Intervals) ---------------- */

/* split_states(ts, dur, state, bounds, run_code, wait_a, wait_b, run_out, wait_out) -> None
 *
 * Threads' scheduler intervals laid end to end (thread i at [bounds[i], bounds[i + 1])) split
 * into the Running ones (state == run_code) and the runnable ones (wait_a or wait_b), each as
 * Intervals' columns, in a tuple of writable buffers:
 *   starts, ends    float64[n]: ts and ts + dur, thread after thread (the first rows used)
 *   offsets         int64[nthr + 1]
 *   first, last     float64[nthr]: the first start and last end (inf, -inf: none)
 *   ordered         uint8[nthr]: starts and ends never go back (NaN compares as not back)
 *   finite          uint8[nthr]: every start and end finite
 * Unordered threads' first and last are the ends of their stretch here: the caller takes their
 * min and max itself. */
static PyObject *split_states(PyObject *self, PyObject *args)
{
    PyObject *o[4], *outs[2];
    int run_code, wait_a, wait_b;
    if (!PyArg_ParseTuple(args, "OOOOiiiO!O!", &o[0], &o[1], &o[2], &o[3], &run_code, &wait_a, &wait_b,
                          &PyTuple_Type, &outs[0], &PyTuple_Type, &outs[1]))
        return NULL;
    if (PyTuple_GET_SIZE(outs[0]) != 7 || PyTuple_GET_SIZE(outs[1]) != 7) {
        PyErr_SetString(PyExc_ValueError, "split_states: 7 buffers a state");
        return NULL;
    }
    buf_t in[4], ob[2][7];
    memset(in, 0, sizeof in);
    memset(ob, 0, sizeof ob);
    PyObject *result = NULL;
    if (PyObject_GetBuffer(o[3], &in[3].b, PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    in[3].held = 1;
    if (in[3].b.len % 8 || in[3].b.len < 8) {
        PyErr_SetString(PyExc_ValueError, "bounds: not int64[nthr + 1]");
        goto done;
    }
    Py_ssize_t nthr = in[3].b.len / 8 - 1;
    const int64_t *bounds = in[3].b.buf;
    if (PyObject_GetBuffer(o[0], &in[0].b, PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    in[0].held = 1;
    Py_ssize_t n = in[0].b.len / 8;
    if (in[0].b.len % 8 || get(o[1], &in[1], n, 8, 0, "dur") < 0 || get(o[2], &in[2], n, 1, 0, "state") < 0)
        goto done;
    if (bounds[0] != 0 || bounds[nthr] != n) {
        PyErr_SetString(PyExc_ValueError, "bounds: not 0 .. n");
        goto done;
    }
    for (Py_ssize_t i = 0; i < nthr; i++)
        if (bounds[i + 1] < bounds[i]) {
            PyErr_SetString(PyExc_ValueError, "bounds: not ascending");
            goto done;
        }
    static const char *what[7] = {"starts", "ends", "offsets", "first", "last", "ordered", "finite"};
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 7; j++) {
            Py_ssize_t items = j < 2 ? n : j == 2 ? nthr + 1 : nthr, size = j < 5 ? 8 : 1;
            if (get(PyTuple_GET_ITEM(outs[k], j), &ob[k][j], items, size, 1, what[j]) < 0)
                goto done;
        }
    const double *ts = in[0].b.buf, *dur = in[1].b.buf;
    const int8_t *state = in[2].b.buf;
    for (int k = 0; k < 2; k++) {
        double *st = ob[k][0].b.buf, *en = ob[k][1].b.buf, *first = ob[k][3].b.buf, *last = ob[k][4].b.buf;
        int64_t *off = ob[k][2].b.buf;
        uint8_t *ordered = ob[k][5].b.buf, *finite = ob[k][6].b.buf;
        Py_ssize_t m = 0;
        off[0] = 0;
        for (Py_ssize_t i = 0; i < nthr; i++) {
            const Py_ssize_t from = m;
            int ord = 1, fin = 1;
            for (Py_ssize_t j = (Py_ssize_t)bounds[i]; j < (Py_ssize_t)bounds[i + 1]; j++) {
                const int8_t c = state[j];
                if (k == 0 ? c != run_code : (c != wait_a && c != wait_b))
                    continue;
                const double a = ts[j], e = ts[j] + dur[j];
                if (m > from && (a < st[m - 1] || e < en[m - 1]))
                    ord = 0;
                if (!isfinite(a) || !isfinite(e))
                    fin = 0;
                st[m] = a;
                en[m] = e;
                m++;
            }
            off[i + 1] = m;
            ordered[i] = (uint8_t)ord;
            finite[i] = (uint8_t)fin;
            first[i] = m > from ? st[from] : Py_HUGE_VAL;
            last[i] = m > from ? en[m - 1] : -Py_HUGE_VAL;
        }
    }
    result = Py_None;
    Py_INCREF(result);
done:
    for (int k = 0; k < 4; k++)
        if (in[k].held)
            PyBuffer_Release(&in[k].b);
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 7; j++)
            if (ob[k][j].held)
                PyBuffer_Release(&ob[k][j].b);
    return result;
}

/* ---- memory: anon + file + shmem per process (memory._parts_totals) ------------------------ */

typedef struct {
    double t, v;
    int part;
} prow_t;

static inline int prow_before(const prow_t *a, const prow_t *b)
{
    return a->t < b->t || (a->t == b->t && (a->part < b->part || (a->part == b->part && a->v < b->v)));
}

/* parts_totals(ts, value, lo, hi, nums, out, kind) -> None
 *
 * Process g's three series (numbers nums[3g .. 3g + 2] into the columns, series k at rows
 * [lo[k], hi[k])): its rows sorted by (time, part, value), stably; at each row the latest value
 * of each part; once all three have come, their total (0.0, then the parts in the order they
 * first came); out[g] the largest total, kind[g] 1. kind[g] 0: no row has all three; 2: a time
 * or value is not finite (the caller's loop decides). */
static PyObject *parts_totals(PyObject *self, PyObject *args)
{
    PyObject *o[7];
    if (!PyArg_ParseTuple(args, "OOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6]))
        return NULL;
    buf_t b[7];
    memset(b, 0, sizeof b);
    PyObject *result = NULL;
    prow_t *rows = NULL, *tmp = NULL;
    for (int k = 0; k < 7; k++) {
        if (PyObject_GetBuffer(o[k], &b[k].b, PyBUF_C_CONTIGUOUS | (k >= 5 ? PyBUF_WRITABLE : 0)) < 0)
            goto done;
        b[k].held = 1;
    }
    Py_ssize_t npts = b[0].b.len / 8, nser = b[2].b.len / 8, ng = b[5].b.len / 8;
    if (b[0].b.len % 8 || b[1].b.len != b[0].b.len || b[3].b.len != b[2].b.len || b[4].b.len != 3 * ng * 8 ||
        b[6].b.len != ng) {
        PyErr_SetString(PyExc_ValueError, "parts_totals: lengths differ");
        goto done;
    }
    const double *ts = b[0].b.buf, *val = b[1].b.buf;
    const int64_t *lo = b[2].b.buf, *hi = b[3].b.buf, *nums = b[4].b.buf;
    double *out = b[5].b.buf;
    int8_t *kind = b[6].b.buf;
    Py_ssize_t most = 1;
    for (Py_ssize_t g = 0; g < ng; g++) {
        Py_ssize_t m = 0;
        for (int k = 0; k < 3; k++) {
            int64_t s = nums[3 * g + k];
            if (s < 0 || s >= nser || lo[s] < 0 || lo[s] > hi[s] || hi[s] > npts) {
                PyErr_SetString(PyExc_ValueError, "parts_totals: series out of range");
                goto done;
            }
            m += (Py_ssize_t)(hi[s] - lo[s]);
        }
        if (m > most)
            most = m;
    }
    rows = malloc(sizeof(prow_t) * most);
    tmp = malloc(sizeof(prow_t) * most);
    if (!rows || !tmp) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t g = 0; g < ng; g++) {
        Py_ssize_t m = 0;
        int finite = 1;
        for (int k = 0; k < 3; k++) {
            int64_t s = nums[3 * g + k];
            for (int64_t j = lo[s]; j < hi[s]; j++) {
                rows[m].t = ts[j];
                rows[m].v = val[j];
                rows[m].part = k;
                if (!isfinite(ts[j]) || !isfinite(val[j]))
                    finite = 0;
                m++;
            }
        }
        out[g] = 0.0;
        if (!finite) {
            kind[g] = 2;
            continue;
        }
        /* stable merge sort, bottom-up (runs of one part come sorted by time as a rule) */
        prow_t *src = rows, *dst = tmp;
        for (Py_ssize_t w = 1; w < m; w *= 2) {
            for (Py_ssize_t a0 = 0; a0 < m; a0 += 2 * w) {
                Py_ssize_t mid = a0 + w < m ? a0 + w : m, end = a0 + 2 * w < m ? a0 + 2 * w : m;
                Py_ssize_t x = a0, y = mid, z = a0;
                if (mid < end && !prow_before(&src[mid], &src[mid - 1])) {
                    memcpy(dst + a0, src + a0, (size_t)(end - a0) * sizeof(prow_t)); /* already in order */
                    continue;
                }
                while (x < mid && y < end)
                    dst[z++] = prow_before(&src[y], &src[x]) ? src[y++] : src[x++];
                while (x < mid)
                    dst[z++] = src[x++];
                while (y < end)
                    dst[z++] = src[y++];
            }
            prow_t *t_ = src;
            src = dst;
            dst = t_;
        }
        double latest[3] = {0.0, 0.0, 0.0}, best = 0.0;
        int seen[3] = {0, 0, 0}, order[3], nseen = 0, have = 0;
        for (Py_ssize_t r = 0; r < m; r++) {
            int k = src[r].part;
            latest[k] = src[r].v;
            if (!seen[k]) {
                seen[k] = 1;
                order[nseen++] = k;
            }
            if (nseen == 3) {
                double total = 0.0 + latest[order[0]];
                total = total + latest[order[1]];
                total = total + latest[order[2]];
                if (!have || total > best)
                    best = total;
                have = 1;
            }
        }
        out[g] = best;
        kind[g] = (int8_t)have;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    free(rows);
    free(tmp);
    for (int k = 0; k < 7; k++)
        if (b[k].held)
            PyBuffer_Release(&b[k].b);
    return result;
}

static PyMethodDef methods[] = {
    {"parts_totals", parts_totals, METH_VARARGS, "memory._parts_totals: the largest anon + file + shmem per process."},
    {"split_states", split_states, METH_VARARGS, "Running and runnable intervals as Intervals' columns."},
    {"walk", walk, METH_VARARGS, "The slice walk of hotspots.py, one pass per thread."},
    {"clipped_sums", clipped_sums, METH_VARARGS, "Intervals.clipped_sum of many threads and windows."},
    {"pairwise_sums", pairwise_sums, METH_VARARGS, "numpy's pairwise sum of each stretch, as clipped_sums adds."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_metricsc", NULL, -1, methods};

PyMODINIT_FUNC PyInit__metricsc(void) { return PyModule_Create(&module); }
