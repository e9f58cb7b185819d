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
 *   split(raw[, rows]) -> None, or (rest, off, size, cpu, ftrace_clock, events, cs_off, cs_len, seq, row):
 *       rest   the packet's bytes without the bundle field (for upb: the small fields),
 *       off/size where the bundle's bytes are in raw; cpu, ftrace_clock, the number of events
 *       (field `event`, wire type 2), and where compact_sched's bytes are (cs_off -1: absent);
 *       seq    the packet's trusted_packet_sequence_id when rest holds nothing but the trusted
 *              uid, sequence id and pid as varints (a plain packet: upb need not parse rest;
 *              0 when the id is absent), else -1.
 *       row    the packet's number in `rows` (below), -1 without them.
 *   split(raw, rows) -> the same, and while checking the bundle it records what the batch reader's
 *       walk (_wirec.c bundles, perfetto_wire.bundles) reads of it into `rows`, a Rows: per event
 *       its time, pid, message-field count, kind and the kind's bytes, per packet its event
 *       count, whether a compact column was written unpacked and the compact columns' values.
 *       The tuple then ends with the packet's number in `rows` (-1 when not recorded: the check
 *       was unsure, and what it had recorded of the packet is taken back). One walk of the bytes
 *       instead of two (~0.1 s of CPU at 100 MB).
 *   Rows(columns).take() -> what perfetto_wire.bundles returns for the packets recorded (without
 *       "buf", which is the packets joined), "packets" and "bytes" beside it; Rows.reset() drops
 *       them, Rows.drop(k) packet k when it was the last recorded. tests/test_perfetto_bundle_rows.py
 *       compares take() with perfetto_wire.bundles on real and mutated packets.
 *   process_tree(raw, ...) -> None, or a process_tree packet's entries as columns and its named
 *       processes and threads (perfetto_system.py; below).
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
    if (end - q >= max) { /* all `max` bytes inside: no bound to check byte by byte (a time: 6-7 bytes) */
        for (int k = 0; k < max; k++) {
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

typedef struct rows rows_t;

static int check_msg(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, Py_ssize_t m, int depth, info_t *info,
                     rows_t *rec);
static int check_event(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, uint32_t e, int depth, rows_t *r);
static int check_compact(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, uint32_t e, int depth, rows_t *r);

/* One field's payload, by the schema's kind for it; 0 when acceptable. */
static int check_payload(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, uint32_t e, int depth)
{
    switch (e & 7) {
    case K_MSG:
        if (depth + 1 > MAX_DEPTH)
            return -1;
        return check_msg(b, p, end, (Py_ssize_t)(e >> 3), depth + 1, NULL, NULL);
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

/* Message `m` of the schema in b[p:end]; `info` (the bundle only) collects what the reader uses,
 * `rec` (the bundle only, or NULL) records its events and compact columns. */
static int check_msg(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, Py_ssize_t m, int depth, info_t *info,
                     rows_t *rec)
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
            if (rec && fno == f_event) {
                if (check_event(b, p, q, e, depth, rec))
                    return -1;
            } else if (rec && fno == f_compact) {
                if (check_compact(b, p, q, e, depth, rec))
                    return -1;
            } else if (check_payload(b, p, q, e, depth)) {
                return -1;
            }
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

/* ------------------------------------------------------------------------------------ */
/* Rows: what the batch reader's walk (_wirec.c w_bundles) reads of each bundle, recorded by the
 * check as it passes over the same bytes. The same arrays, in the same layout: the check accepts
 * only what upb accepts, and on those bytes the walk never fails, so its rows are these. */

#define MAX_COLUMNS 16

/* A growable array of bytes kept in a bytearray, handed over by take() without a copy. `hint`:
 * the size it had when last taken, its first room after (a batch is like the one before it, so
 * the doubling and its copies are mostly skipped). */
typedef struct {
    char *p;
    Py_ssize_t n, cap, hint;
    PyObject *ba;
} vec_t;

static int vec_reserve(vec_t *v, Py_ssize_t size)
{
    if (v->n + size <= v->cap)
        return 0;
    Py_ssize_t cap = v->cap ? v->cap : (v->hint > (1 << 16) ? v->hint + v->hint / 8 : (1 << 16));
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

static inline int vec_put8(vec_t *v, uint64_t x)
{
    if (v->n + 8 > v->cap && vec_reserve(v, 8) < 0)
        return -1;
    memcpy(v->p + v->n, &x, 8);
    v->n += 8;
    return 0;
}

static PyObject *vec_take(vec_t *v)
{
    PyObject *r = v->ba;
    if (!r)
        r = PyByteArray_FromStringAndSize("", 0);
    else if (PyByteArray_Resize(r, v->n) < 0)
        Py_CLEAR(r);
    v->hint = v->n;
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

enum { R_TS, R_PID, R_NLEN, R_KNO, R_KOFF, R_KLEN, R_EVC, R_UNP, R_EVENT_VECS };

/* Where the recording stood before a packet: taken back to it when the check is unsure. */
typedef struct {
    Py_ssize_t n[R_EVENT_VECS], vals[MAX_COLUMNS];
} mark_t;

struct rows {
    PyObject_HEAD
    vec_t v[R_EVENT_VECS];    /* per event: ts, pid, nlen, kind_no, k_off, k_len; per packet: ev_count, unpacked */
    Py_ssize_t ncol;
    uint64_t colno[MAX_COLUMNS];
    vec_t vals[MAX_COLUMNS];   /* compact column values, uint64 */
    vec_t counts[MAX_COLUMNS]; /* per packet: how many values of the column, int64 */
    Py_ssize_t packets, bytes; /* packets recorded; their bytes (the next packet's offset once joined) */
    /* the packet being checked */
    Py_ssize_t base;           /* its offset in the packets joined */
    int64_t events, unpacked, cnt[MAX_COLUMNS];
    mark_t last;               /* where the recording stood before the last packet (drop) */
    Py_ssize_t last_size;
    int has_last;
};

/* One FtraceEvent (schema entry `e`), checked as check_payload checks it, its row recorded as
 * _wirec.c walk_event reads it: time and pid (fields 1 and 2 as varints, the last of each), the
 * count of length-delimited fields and the last one's number, offset (in the packets joined) and
 * length. */
static int check_event(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, uint32_t e, int depth, rows_t *r)
{
    if ((e & 7) != K_MSG || depth + 1 > MAX_DEPTH)
        return -1;
    Py_ssize_t m = (Py_ssize_t)(e >> 3);
    if (m < 0 || m >= nschema)
        return -1;
    const msg_t *s = &schema[m];
    depth += 1;
    uint64_t ts = 0, pid = 0, kno = 0, nlen = 0, koff = 0, klen = 0;
    while (p < end) {
        uint64_t tag, v = 0;
        if (varint(b, &p, end, 5, &tag) || tag > 0xFFFFFFFFu)
            return -1;
        uint64_t fno = tag >> 3;
        if (fno == 0)
            return -1;
        switch (tag & 7) {
        case 0:
            if (fno == 1 || fno == 2) {
                if (varint(b, &p, end, 10, &v))
                    return -1;
                if (fno == 1)
                    ts = v;
                else
                    pid = v;
            } else if (skip_varint(b, &p, end)) {
                return -1;
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
            if (check_payload(b, p, q, fno < s->nfields ? s->ent[fno] : K_OTHER, depth))
                return -1;
            nlen += 1;
            kno = fno;
            koff = (uint64_t)(r->base + p);
            klen = len;
            p = q;
            break;
        }
        default:
            return -1;
        }
    }
    if (vec_put8(&r->v[R_TS], ts) || vec_put8(&r->v[R_PID], pid) || vec_put8(&r->v[R_NLEN], nlen)
        || vec_put8(&r->v[R_KNO], kno) || vec_put8(&r->v[R_KOFF], koff) || vec_put8(&r->v[R_KLEN], klen))
        return -2;
    r->events += 1;
    return 0;
}

/* A packed varint column's payload split and decoded, as check_packed judges it; its values
 * appended to `out`, their number added to *count. */
static int decode_packed(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, vec_t *out, int64_t *count)
{
    if (vec_reserve(out, 8 * (end - p)) < 0)
        return -2;
    char *dst = out->p + out->n;
    int64_t k = 0;
    while (p < end) {
        uint8_t x = b[p++];
        uint64_t acc = x & 0x7F;
        for (int j = 1; x >= 0x80; j++) {
            if (p >= end)
                return -1; /* ends inside a varint */
            x = b[p++];
            if (j == 9 && x > 1)
                return -1; /* an 11th byte, or a 10th above 1 */
            acc |= (uint64_t)(x & 0x7F) << (7 * j);
        }
        memcpy(dst + 8 * k++, &acc, 8);
    }
    out->n += 8 * k;
    *count += k;
    return 0;
}

/* The bundle's compact_sched (schema entry `e`), checked as check_payload checks it, its columns
 * recorded as _wirec.c walk_compact and flush_columns read them: a column's packed chunks decoded
 * in order, a column written as a varint noted (`unpacked`). */
static int check_compact(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, uint32_t e, int depth, rows_t *r)
{
    if ((e & 7) != K_MSG || depth + 1 > MAX_DEPTH)
        return -1;
    Py_ssize_t m = (Py_ssize_t)(e >> 3);
    if (m < 0 || m >= nschema)
        return -1;
    const msg_t *s = &schema[m];
    depth += 1;
    while (p < end) {
        uint64_t tag;
        if (varint(b, &p, end, 5, &tag) || tag > 0xFFFFFFFFu)
            return -1;
        uint64_t fno = tag >> 3;
        if (fno == 0)
            return -1;
        Py_ssize_t c = -1;
        for (Py_ssize_t j = 0; j < r->ncol; j++)
            if (r->colno[j] == fno)
                c = j;
        uint32_t fe = fno < s->nfields ? s->ent[fno] : K_OTHER;
        switch (tag & 7) {
        case 0:
            if (skip_varint(b, &p, end))
                return -1;
            if (c >= 0)
                r->unpacked = 1; /* upb's full parse counts it, the packed read does not */
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
            if (c >= 0) {
                if ((fe & 7) != K_PVARINT)
                    return -1; /* not the schema this was written for: let upb decide */
                int rc = decode_packed(b, p, q, &r->vals[c], &r->cnt[c]);
                if (rc)
                    return rc;
            } else if (check_payload(b, p, q, fe, depth)) {
                return -1;
            }
            p = q;
            break;
        }
        default:
            return -1;
        }
    }
    return 0;
}

static void rows_mark(rows_t *r, mark_t *mk, Py_ssize_t base)
{
    r->has_last = 0;
    for (int i = 0; i < R_EVENT_VECS; i++)
        mk->n[i] = r->v[i].n;
    for (Py_ssize_t c = 0; c < r->ncol; c++) {
        mk->vals[c] = r->vals[c].n;
        r->cnt[c] = 0;
    }
    r->base = base;
    r->events = r->unpacked = 0;
}

static void rows_back(rows_t *r, const mark_t *mk)
{
    for (int i = 0; i < R_EVENT_VECS; i++)
        r->v[i].n = mk->n[i];
    for (Py_ssize_t c = 0; c < r->ncol; c++)
        r->vals[c].n = mk->vals[c];
}

/* The packet checked: its per-packet entries written, its bytes counted. */
static int rows_commit(rows_t *r, Py_ssize_t size)
{
    uint8_t u = (uint8_t)r->unpacked;
    if (vec_put8(&r->v[R_EVC], (uint64_t)r->events))
        return -1;
    if (r->v[R_UNP].n + 1 > r->v[R_UNP].cap && vec_reserve(&r->v[R_UNP], 1) < 0)
        return -1;
    r->v[R_UNP].p[r->v[R_UNP].n++] = (char)u;
    for (Py_ssize_t c = 0; c < r->ncol; c++)
        if (vec_put8(&r->counts[c], (uint64_t)r->cnt[c]))
            return -1;
    r->packets += 1;
    r->bytes += size;
    r->last_size = size;
    r->has_last = 1;
    return 0;
}

static PyTypeObject RowsType;

static void rows_clear(rows_t *r)
{
    r->has_last = 0;
    for (int i = 0; i < R_EVENT_VECS; i++)
        vec_free(&r->v[i]);
    for (Py_ssize_t c = 0; c < MAX_COLUMNS; c++) {
        vec_free(&r->vals[c]);
        vec_free(&r->counts[c]);
    }
    r->packets = r->bytes = 0;
}

static PyObject *rows_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *columns, *seq;
    if (!PyArg_ParseTuple(args, "O", &columns))
        return NULL;
    if (!(seq = PySequence_Fast(columns, "columns: a sequence of field numbers")))
        return NULL;
    if (PySequence_Fast_GET_SIZE(seq) > MAX_COLUMNS) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many columns");
        return NULL;
    }
    rows_t *r = (rows_t *)type->tp_alloc(type, 0);
    if (!r) {
        Py_DECREF(seq);
        return NULL;
    }
    for (Py_ssize_t c = 0; c < PySequence_Fast_GET_SIZE(seq); c++) {
        unsigned long long no = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(seq, c));
        if (PyErr_Occurred()) {
            Py_DECREF(seq);
            Py_DECREF(r);
            return NULL;
        }
        r->colno[r->ncol++] = no;
    }
    Py_DECREF(seq);
    return (PyObject *)r;
}

static void rows_dealloc(rows_t *r)
{
    rows_clear(r);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static PyObject *rows_reset(rows_t *r, PyObject *unused)
{
    for (int i = 0; i < R_EVENT_VECS; i++)
        r->v[i].n = 0;
    for (Py_ssize_t c = 0; c < r->ncol; c++)
        r->vals[c].n = r->counts[c].n = 0;
    r->packets = r->bytes = 0;
    r->has_last = 0;
    Py_RETURN_NONE;
}

/* drop(k): packet k, the last recorded, taken back (the reader did not take its bundle from this
 * view after all: perfetto_bundle_view.parse_packet). */
static PyObject *rows_drop(rows_t *r, PyObject *arg)
{
    Py_ssize_t k = PyLong_AsSsize_t(arg);
    if (k == -1 && PyErr_Occurred())
        return NULL;
    if (!r->has_last || k != r->packets - 1) {
        PyErr_SetString(PyExc_ValueError, "drop: only the packet recorded last");
        return NULL;
    }
    rows_back(r, &r->last); /* the per-packet entries too: they were written after the mark */
    for (Py_ssize_t c = 0; c < r->ncol; c++)
        r->counts[c].n -= 8;
    r->packets -= 1;
    r->bytes -= r->last_size;
    r->has_last = 0;
    Py_RETURN_NONE;
}

static PyObject *rows_take(rows_t *r, PyObject *unused)
{
    static const char *names[] = {"ts", "pid", "nlen", "kind_no", "k_off", "k_len", "ev_count", "unpacked"};
    PyObject *out = PyDict_New(), *cols = NULL;
    if (!out)
        return NULL;
    for (int i = 0; i < R_EVENT_VECS; i++) {
        PyObject *a = vec_take(&r->v[i]);
        if (!a || PyDict_SetItemString(out, names[i], a) < 0) {
            Py_XDECREF(a);
            goto fail;
        }
        Py_DECREF(a);
    }
    if (!(cols = PyList_New(r->ncol)))
        goto fail;
    for (Py_ssize_t c = 0; c < r->ncol; c++) {
        PyObject *v = vec_take(&r->vals[c]), *n = vec_take(&r->counts[c]), *pair = NULL;
        if (v && n)
            pair = PyTuple_Pack(2, v, n);
        Py_XDECREF(v);
        Py_XDECREF(n);
        if (!pair)
            goto fail;
        PyList_SET_ITEM(cols, c, pair);
    }
    if (PyDict_SetItemString(out, "compact", cols) < 0)
        goto fail;
    Py_CLEAR(cols);
    PyObject *np_ = PyLong_FromSsize_t(r->packets), *nb = PyLong_FromSsize_t(r->bytes);
    int bad = !np_ || !nb || PyDict_SetItemString(out, "packets", np_) < 0 || PyDict_SetItemString(out, "bytes", nb) < 0;
    Py_XDECREF(np_);
    Py_XDECREF(nb);
    if (bad)
        goto fail;
    r->packets = r->bytes = 0;
    r->has_last = 0;
    return out;
fail:
    Py_XDECREF(cols);
    Py_DECREF(out);
    rows_clear(r);
    return NULL;
}

static PyObject *rows_get_packets(rows_t *r, void *closure)
{
    return PyLong_FromSsize_t(r->packets);
}

static PyMethodDef rows_methods[] = {
    {"take", (PyCFunction)rows_take, METH_NOARGS,
     "take() -> the rows recorded as perfetto_wire.bundles returns them (no 'buf'), with 'packets' and 'bytes';\n"
     "the recorder is empty after."},
    {"reset", (PyCFunction)rows_reset, METH_NOARGS, "reset(): drop every row recorded."},
    {"drop", (PyCFunction)rows_drop, METH_O, "drop(k): take back packet k, the one recorded last."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef rows_getset[] = {
    {"packets", (getter)rows_get_packets, NULL, "packets recorded", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject RowsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "nodes.perf.parsers._bundlec.Rows",
    .tp_basicsize = sizeof(rows_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Rows(columns): what split(raw, rows) records of the bundles it checks (see _bundlec.c).",
    .tp_new = rows_new,
    .tp_dealloc = (destructor)rows_dealloc,
    .tp_methods = rows_methods,
    .tp_getset = rows_getset,
};

static PyObject *b_split(PyObject *self, PyObject *args)
{
    Py_buffer view;
    PyObject *arg, *rows_arg = Py_None;
    rows_t *rec = NULL;
    if (!PyArg_ParseTuple(args, "O|O", &arg, &rows_arg))
        return NULL;
    if (rows_arg != Py_None) {
        if (!PyObject_TypeCheck(rows_arg, &RowsType)) {
            PyErr_SetString(PyExc_TypeError, "split: rows must be a Rows or None");
            return NULL;
        }
        rec = (rows_t *)rows_arg;
    }
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
    int rc = -1;
    if (ok && seen == 1) {
        if (rec)
            rows_mark(rec, &rec->last, rec->bytes);
        rc = check_msg(b, off, off + size, 0, 1, &info, rec);
        if (rc == 0 && rec && rows_commit(rec, n) < 0)
            rc = -2;
        if (rc && rec)
            rows_back(rec, &rec->last);
        if (rc == -2) { /* out of memory while recording */
            PyBuffer_Release(&view);
            return NULL;
        }
    }
    if (rc == 0) {
        PyObject *rest = PyBytes_FromStringAndSize(NULL, n - (f1 - f0));
        if (!rest) {
            if (rec) { /* the packet is not read from this view */
                rows_back(rec, &rec->last);
                rec->packets -= 1, rec->bytes -= n, rec->has_last = 0;
                for (Py_ssize_t c = 0; c < rec->ncol; c++)
                    rec->counts[c].n -= 8;
            }
            PyBuffer_Release(&view);
            return NULL;
        }
        char *r = PyBytes_AS_STRING(rest);
        memcpy(r, b, (size_t)f0);
        memcpy(r + f0, b + f1, (size_t)(n - f1));
        PyBuffer_Release(&view);
        return Py_BuildValue("(NnnKKnnnLn)", rest, off, size, (unsigned long long)info.cpu,
                             (unsigned long long)info.clock, info.events, info.cs_off, info.cs_len,
                             plain ? (long long)seq : -1LL, rec ? rec->packets - 1 : (Py_ssize_t)-1);
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

/* ------------------------------------------------------------------------------------ */
/* process_tree(raw, tree_field, processes_field, threads_field, pid, cmdline, tid, tgid, name)
 *   -> None (not the plain shape: let upb's parse be read) or
 *   (processes, p_pid, p_name, tids, tgids, t_tid, t_tgid, t_name): the number of processes; the
 *   named ones' pid and first cmdline (as perfetto_wire.text decodes it, not empty), in order;
 *   every entry's (tid, tgid) as int64 bytes, the processes' (pid, pid) first, then the threads';
 *   the named threads' tid, tgid and name, in order. Plain: one process_tree field; pid, tid and
 *   tgid varints (int32: the low 32 bits), cmdline and name length-delimited; no groups. The walk
 *   runs only on packets upb has parsed whole, so upb has already judged the bytes. */

typedef struct {
    char *p;
    Py_ssize_t n, cap;
} raw_t;

static int raw_put8(raw_t *v, int64_t x)
{
    if (v->n + 8 > v->cap) {
        Py_ssize_t cap = v->cap ? 2 * v->cap : 4096;
        char *q = PyMem_Realloc(v->p, cap);
        if (!q) {
            PyErr_NoMemory();
            return -1;
        }
        v->p = q, v->cap = cap;
    }
    memcpy(v->p + v->n, &x, 8);
    v->n += 8;
    return 0;
}

static int append_new(PyObject *list, PyObject *item)
{
    if (!item)
        return -1;
    int r = PyList_Append(list, item);
    Py_DECREF(item);
    return r;
}

/* One Process or Thread message in b[p:end): its id fields (a, c: pid / tid and tgid) and its
 * string (the first cmdline, or the last name): 1 when not the plain shape. */
static int tree_entry(const uint8_t *b, Py_ssize_t p, Py_ssize_t end, uint32_t fa, uint32_t fc, uint32_t fs,
                      int first_string, int32_t *a, int32_t *c, Py_ssize_t *s_off, Py_ssize_t *s_len)
{
    *s_off = -1, *s_len = 0;
    while (p < end) {
        uint64_t tag, v = 0;
        Py_ssize_t q = 0;
        if (varint(b, &p, end, 5, &tag) || tag > 0xFFFFFFFFu || (tag >> 3) == 0)
            return 1;
        uint32_t fno = (uint32_t)(tag >> 3);
        int wt = (int)(tag & 7);
        if (((fno == fa || fno == fc) && wt != 0) || (fno == fs && wt != 2))
            return 1; /* a known field of another wire type: upb keeps it unknown; let it */
        if (skip_value(b, &p, end, wt, &v, &q))
            return 1;
        if (fno == fa)
            *a = (int32_t)(uint32_t)v;
        else if (fno == fc)
            *c = (int32_t)(uint32_t)v;
        else if (fno == fs && (!first_string || *s_off < 0))
            *s_off = q, *s_len = (Py_ssize_t)v;
    }
    return 0;
}

static PyObject *b_process_tree(PyObject *self, PyObject *args)
{
    Py_buffer view;
    unsigned int f_tree, f_procs, f_threads, f_pid, f_cmd, f_tid, f_tgid, f_name;
    if (!PyArg_ParseTuple(args, "y*IIIIIIII", &view, &f_tree, &f_procs, &f_threads, &f_pid, &f_cmd, &f_tid, &f_tgid,
                          &f_name))
        return NULL;
    PyObject *lists[6] = {0}, *out = NULL;
    raw_t ptid = {0}, ptgid = {0}, ttid = {0}, ttgid = {0};
    const uint8_t *b = (const uint8_t *)view.buf;
    Py_ssize_t n = view.len, p = 0, s0 = -1, s1 = -1, nproc = 0;
    while (p < n) { /* the packet: exactly one process_tree field */
        uint64_t tag, v = 0;
        Py_ssize_t q = 0;
        if (varint(b, &p, n, 5, &tag) || tag > 0xFFFFFFFFu || (tag >> 3) == 0 ||
            skip_value(b, &p, n, (int)(tag & 7), &v, &q))
            goto unsure;
        if ((tag >> 3) == f_tree) {
            if ((tag & 7) != 2 || s0 >= 0)
                goto unsure; /* written twice: upb merges the two */
            s0 = q, s1 = p;
        }
    }
    if (s0 < 0)
        goto unsure;
    for (int i = 0; i < 6; i++)
        if (!(lists[i] = PyList_New(0)))
            goto done;
    for (p = s0; p < s1;) { /* the tree: processes and threads, each kind in its order */
        uint64_t tag, v = 0;
        Py_ssize_t q = 0;
        if (varint(b, &p, s1, 5, &tag) || tag > 0xFFFFFFFFu || (tag >> 3) == 0)
            goto unsure;
        int wt = (int)(tag & 7);
        uint32_t fno = (uint32_t)(tag >> 3);
        if ((fno == f_procs || fno == f_threads) && wt != 2)
            goto unsure;
        if (skip_value(b, &p, s1, wt, &v, &q))
            goto unsure;
        if (fno != f_procs && fno != f_threads)
            continue;
        int32_t a = 0, c = 0;
        Py_ssize_t so, sl;
        int proc = fno == f_procs;
        if (tree_entry(b, q, p, proc ? f_pid : f_tid, proc ? f_pid : f_tgid, proc ? f_cmd : f_name, proc, &a, &c,
                       &so, &sl))
            goto unsure;
        if (proc) {
            nproc += 1;
            if (raw_put8(&ptid, a) || raw_put8(&ptgid, a))
                goto done;
        } else if (raw_put8(&ttid, a) || raw_put8(&ttgid, c)) {
            goto done;
        }
        if (sl > 0) { /* a name: not empty (text of non-empty bytes is not empty) */
            PyObject *name = PyUnicode_DecodeUTF8((const char *)b + so, sl, "replace");
            int base = proc ? 0 : 2;
            if (append_new(lists[base], PyLong_FromLong(a)) < 0
                || (!proc && append_new(lists[base + 1], PyLong_FromLong(c)) < 0)
                || append_new(lists[proc ? 1 : 4], name) < 0)
                goto done;
        }
    }
    {
        PyObject *tids = PyBytes_FromStringAndSize(NULL, ptid.n + ttid.n);
        PyObject *tgids = PyBytes_FromStringAndSize(NULL, ptgid.n + ttgid.n);
        if (tids && tgids) {
            if (ptid.n)
                memcpy(PyBytes_AS_STRING(tids), ptid.p, ptid.n);
            if (ttid.n)
                memcpy(PyBytes_AS_STRING(tids) + ptid.n, ttid.p, ttid.n);
            if (ptgid.n)
                memcpy(PyBytes_AS_STRING(tgids), ptgid.p, ptgid.n);
            if (ttgid.n)
                memcpy(PyBytes_AS_STRING(tgids) + ptgid.n, ttgid.p, ttgid.n);
            out = Py_BuildValue("(nOOOOOOO)", nproc, lists[0], lists[1], tids, tgids, lists[2], lists[3], lists[4]);
        }
        Py_XDECREF(tids);
        Py_XDECREF(tgids);
    }
    goto done;
unsure:
    out = Py_None;
    Py_INCREF(out);
done:
    for (int i = 0; i < 6; i++)
        Py_XDECREF(lists[i]);
    PyMem_Free(ptid.p);
    PyMem_Free(ptgid.p);
    PyMem_Free(ttid.p);
    PyMem_Free(ttgid.p);
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
    {"split", b_split, METH_VARARGS,
     "split(raw, rows=None) -> None (let upb decide) or (rest, off, size, cpu, ftrace_clock, events, cs_off, cs_len,\n"
     "seq, row): row the packet's number in rows (a Rows) when given, which records the bundle's events, else -1."},
    {"process_tree", b_process_tree, METH_VARARGS,
     "process_tree(raw, tree, processes, threads, pid, cmdline, tid, tgid, name) -> None (let upb read it) or\n"
     "(processes, p_pid, p_name, tids, tgids, t_tid, t_tgid, t_name) (see _bundlec.c)."},
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
    if (PyType_Ready(&RowsType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Py_INCREF(&RowsType);
    if (PyModule_AddObject(m, "Rows", (PyObject *)&RowsType) < 0) {
        Py_DECREF(&RowsType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
