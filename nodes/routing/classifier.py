"""Tier 2: a character n-gram logistic regression, trained on first use and cached as arrays.

Character n-grams need no word segmentation, so one model reads Simplified and Traditional
Chinese, Cantonese, English and their mixtures. scikit-learn fits it (numpy and
sklearn are imported only to train); scoring is done here in plain Python from the fitted
vocabulary, idf and coefficients: a sklearn ``predict`` call costs 1–2 ms of overhead against a
router budget under 2 ms a message, and importing numpy alone costs ~0.1 s of every
``perfscout route``. A message has ~100 n-grams in the vocabulary, so the sparse dot product is a
few hundred multiply-adds.

The cache is one file of plain data, never a pickle: a JSON header (classes, thresholds, meta,
the terms) and the float64 table of ``idf, coef…`` rows, read with the standard library's
``array``. It is keyed by the SHA-256 of the training data and the feature version: edit the
data and the next use retrains.

Two thresholds come with the model, both chosen on out-of-fold predictions of its own training
data (never a constant picked by hand):
- ``t_llm``: below it the cascade asks the model tier, because there a model is expected to be
  right more often than the classifier;
- ``t_offline``: with no model configured, below it ``end`` (the fallback that guides the
  user) is more often right than the classifier's guess.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import struct
import sys
import tempfile
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from operator import mul
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np

from nodes.routing.normalize import ROUTING_VIEW_CHARS, generalise, strip_injections
from nodes.routing.rules import negated_kinds
from nodes.routing.scope import split_scope
from nodes.routing.typos import fix_typos

#: Bump when the features or the model change: the cache key includes it. v2: the classifier
#: reads the routing view of a message, whose length is part of the key. v3: it reads the
#: asked-for text with misspelled cues mended, plus one mark per kind of set-aside cue.
FEATURE_VERSION = f"char_wb-1-4-sublinear-C20-v3-scope-typos-view{ROUTING_VIEW_CHARS}"
#: The cache file's own format (the header line, then the float64 rows); part of its name.
CACHE_FORMAT = "rows1"
CACHE_SUFFIX = f".{CACHE_FORMAT}.bin"
#: One private-use character per kind of cue the user set aside: a word of its own, so its
#: n-grams never collide with those of real text ("¬code" would share "code" with a request).
NEGATION_MARKS = {
    "code": "\ue001", "launch": "\ue002", "whole": "\ue003", "device": "\ue004",
    "data": "\ue005", "advice": "\ue006", "act": "\ue007",
}
NGRAM_RANGE = (1, 4)
C = 20.0
#: The accuracy assumed for the model tier when deciding what to send it (the issue's figure for
#: a 5-token router on this task). Only the trade-off uses it; the measured numbers do not.
ASSUMED_LLM_ACCURACY = 0.95
CALIBRATION_FOLDS = 5

_WHITESPACES = re.compile(r"\s\s+")


def features_text(text: str) -> str:
    """What the classifier reads: the asked-for part of the routing view, and what was set aside.

    Injections are removed, misspelled cue words mended (``typos.fix_typos``), the set-aside
    spans (``scope.split_scope``) replaced by one mark per kind of cue they held — "代码就不用翻了，
    帮我量一下冷启动" reads as "帮我量一下冷启动" plus "code declined" — names generalised, lower case.
    Bounding the text (``strip_injections`` cuts it to the routing view) bounds the n-grams too:
    a megabyte of one word would otherwise make four million of them.
    """
    scope = split_scope(fix_typos(strip_injections(text)))
    marks = "".join(f" {NEGATION_MARKS[k]}" for k in negated_kinds(scope))
    return generalise(scope.asked) + marks


def char_wb_ngrams(text: str, ngram_range: tuple[int, int] = NGRAM_RANGE) -> list[str]:
    """scikit-learn's ``char_wb`` analyzer (lower-cased input), without its per-call overhead."""
    text = _WHITESPACES.sub(" ", text.lower())
    lo, hi = ngram_range
    grams: list[str] = []
    append = grams.append
    for w in text.split():
        w = f" {w} "
        w_len = len(w)
        for n in range(lo, hi + 1):
            offset = 0
            append(w[offset : offset + n])
            while offset + n < w_len:
                offset += 1
                append(w[offset : offset + n])
            if offset == 0:
                break
    return grams


@dataclass
class NgramModel:
    """A fitted multinomial logistic regression over sublinear TF-IDF char n-grams.

    ``rows`` is the flat float64 table: for term ``i`` (``vocab[term]``), ``rows[i*w]`` is its idf
    and ``rows[i*w+1 : i*w+w]`` its coefficient for each class (``w = 1 + len(classes)``). Scoring
    reads it as one tuple a term (``_table``, unpacked by ``struct`` in C on first use), so the
    per-class sums run in C too (``sum(map(mul, …))``) rather than in a Python loop.
    """

    vocab: dict[str, int]
    rows: array
    intercept: tuple[float, ...]
    classes: tuple[str, ...]
    t_llm: float = 0.5
    t_offline: float = 0.0
    meta: dict = field(default_factory=dict)
    _table: dict[str, tuple[float, ...]] | None = field(default=None, repr=False, compare=False)

    def table(self) -> dict[str, tuple[float, ...]]:
        """term → (idf, coefficient of each class), built once from ``rows``."""
        if self._table is None:
            width = len(self.classes) + 1
            terms = sorted(self.vocab, key=self.vocab.__getitem__)
            self._table = dict(zip(terms, struct.iter_unpack(f"={width}d", self.rows.tobytes())))
        return self._table

    def proba(self, text: str) -> list[float]:
        """Class probabilities for a raw message (same features as training)."""
        table = self.table()
        counts = Counter(filter(table.__contains__, char_wb_ngrams(features_text(text))))
        logits = list(self.intercept)
        if counts:
            rows = [table[g] for g in counts]
            weights = [(1.0 + math.log(c)) * r[0] for c, r in zip(counts.values(), rows)]
            scale = 1.0 / math.sqrt(sum(map(mul, weights, weights)))
            columns = list(zip(*rows))  # columns[0] is the idf, then one column per class
            logits = [b + sum(map(mul, weights, col)) * scale for b, col in zip(logits, columns[1:])]
        top = max(logits)
        z = [math.exp(v - top) for v in logits]
        total = sum(z)
        return [v / total for v in z]

    def predict(self, text: str) -> tuple[str, float]:
        p = self.proba(text)
        i = max(range(len(p)), key=p.__getitem__)
        return self.classes[i], p[i]


def _rows(idf: np.ndarray, coef_t: np.ndarray) -> array:
    """The flat ``idf, coef…`` table of :class:`NgramModel` from sklearn's arrays."""
    import numpy as np

    table = np.ascontiguousarray(np.column_stack([idf, coef_t]), dtype=np.float64)
    return array("d", table.tobytes())


# --- training (scikit-learn is imported only here: a cache hit never loads it) ---------------


def fit(texts: Sequence[str], labels: Sequence[str]) -> NgramModel:
    """Fit vectorizer and regression on raw messages; thresholds left at their defaults."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=NGRAM_RANGE, sublinear_tf=True, lowercase=True)
    x = vec.fit_transform([features_text(t) for t in texts])
    # newton-cg converges in a few iterations here (lbfgs takes ~8x longer on these features).
    clf = LogisticRegression(C=C, solver="newton-cg", max_iter=200)
    clf.fit(x, list(labels))
    coef = clf.coef_
    intercept = clf.intercept_
    if coef.shape[0] == 1:  # binary data: sklearn keeps one row; make it two-class softmax
        coef = np.vstack([-coef[0] / 2, coef[0] / 2])
        intercept = np.array([-intercept[0] / 2, intercept[0] / 2])
    return NgramModel(
        vocab={term: int(i) for term, i in vec.vocabulary_.items()},
        rows=_rows(np.asarray(vec.idf_, dtype=np.float64), np.asarray(coef.T, dtype=np.float64)),
        intercept=tuple(float(v) for v in intercept),
        classes=tuple(str(c) for c in clf.classes_),
    )


def kfold_indices(n: int, k: int, seed: int = 0) -> list[np.ndarray]:
    """k disjoint index folds after a seeded shuffle (the held-out sets)."""
    import numpy as np

    order = np.random.default_rng(seed).permutation(n)
    return [order[i::k] for i in range(k)]


def out_of_fold(texts: Sequence[str], labels: Sequence[str], k: int, seed: int = 0) -> list[tuple[str, float]]:
    """(prediction, confidence) for every item from a model that never saw it."""
    preds: list[tuple[str, float]] = [("", 0.0)] * len(texts)
    for held in kfold_indices(len(texts), k, seed):
        held_set = set(held.tolist())
        train = [i for i in range(len(texts)) if i not in held_set]
        model = fit([texts[i] for i in train], [labels[i] for i in train])
        for i in held:
            preds[i] = model.predict(texts[i])
    return preds


def choose_thresholds(
    preds: Sequence[tuple[str, float]], labels: Sequence[str], llm_accuracy: float = ASSUMED_LLM_ACCURACY
) -> tuple[float, float]:
    """(t_llm, t_offline) maximising held-out accuracy of each fallback; ties: fewer deferrals."""
    import numpy as np

    conf = np.array([p for _, p in preds])
    right = np.array([pred == gold for (pred, _), gold in zip(preds, labels)], dtype=float)
    is_end = np.array([gold == "end" for gold in labels], dtype=float)
    candidates = np.unique(np.concatenate([[0.0], conf]))
    best_llm = max(candidates, key=lambda t: (right[conf >= t].sum() + llm_accuracy * (conf < t).sum(), -t))
    best_off = max(candidates, key=lambda t: (right[conf >= t].sum() + is_end[conf < t].sum(), -t))
    return float(best_llm), float(best_off)


def fit_calibrated(
    texts: Sequence[str], labels: Sequence[str], reaches: Sequence[bool] | None = None, k: int = CALIBRATION_FOLDS
) -> NgramModel:
    """Fit on everything; calibrate both thresholds on k held-out folds.

    ``reaches`` marks the items the rules leave open: the thresholds are chosen on those (the
    messages the classifier actually decides in the cascade) when there are enough of them.
    """
    t0 = time.perf_counter()
    preds = out_of_fold(texts, labels, k)
    mask = list(reaches) if reaches is not None and sum(reaches) >= 30 else [True] * len(texts)
    sel = [i for i, m in enumerate(mask) if m]
    t_llm, t_off = choose_thresholds([preds[i] for i in sel], [labels[i] for i in sel])
    model = fit(texts, labels)
    model.t_llm, model.t_offline = t_llm, t_off
    model.meta = {
        "feature_version": FEATURE_VERSION,
        "n_train": len(texts),
        "n_calibration": len(sel),
        "calibration_folds": k,
        "train_seconds": round(time.perf_counter() - t0, 3),
    }
    return model


# --- the cache -------------------------------------------------------------------------------


def default_data_path() -> Path:
    return Path(str(resources.files("nodes.routing") / "data" / "routing_dev.jsonl"))


def default_cache_dir() -> Path:
    """``$PERFSCOUT_CACHE_DIR`` or ``$XDG_CACHE_HOME/perfscout`` or ``~/.cache/perfscout``."""
    env = os.environ.get("PERFSCOUT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "perfscout"


def read_labelled(path: str | os.PathLike[str]) -> tuple[list[str], list[str]]:
    texts, labels = [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                texts.append(row["text"])
                labels.append(row["route"])
    return texts, labels


#: The modules the model depends on besides its data: the features (normalize, scope, typos and
#: their word list) and the rules, whose open/decided split chooses the calibration set.
_FEATURE_SOURCES = ("classifier.py", "normalize.py", "rules.py", "scope.py", "typos.py", "data/cue_lookalikes.json")


def cache_key(data: bytes) -> str:
    """SHA-256 of the training data, the feature version and the feature/rule sources.

    The sources are part of the key because a rule change moves which messages reach the
    classifier, and so its calibrated thresholds: a cache trained under older rules would be
    loaded with stale thresholds otherwise (reading six small files costs well under 1 ms).
    """
    h = hashlib.sha256(data + FEATURE_VERSION.encode())
    package = resources.files("nodes.routing")
    for name in _FEATURE_SOURCES:
        h.update((package / name).read_bytes())
    return h.hexdigest()[:24]


def save(model: NgramModel, path: Path) -> None:
    """Write atomically (temp file + rename): a concurrent reader sees all or nothing."""
    terms = sorted(model.vocab, key=model.vocab.__getitem__)
    header = {
        "format": CACHE_FORMAT,
        "classes": list(model.classes),
        "intercept": list(model.intercept),
        "thresholds": [model.t_llm, model.t_offline],
        "meta": model.meta,
        "terms": terms,
    }
    rows = model.rows
    if sys.byteorder != "little":
        rows = array("d", rows)
        rows.byteswap()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(json.dumps(header, ensure_ascii=True).encode("ascii") + b"\n")
            fh.write(rows.tobytes())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load(path: Path) -> NgramModel:
    """Read a cache file written by :func:`save`; ``ValueError`` when it is damaged."""
    data = path.read_bytes()
    end = data.find(b"\n")
    if end < 0:
        raise ValueError(f"{path}: no header line")
    header = json.loads(data[:end])
    if header.get("format") != CACHE_FORMAT:
        raise ValueError(f"{path}: cache format {header.get('format')!r}, not {CACHE_FORMAT!r}")
    classes = tuple(str(c) for c in header["classes"])
    terms = header["terms"]
    rows = array("d")
    rows.frombytes(data[end + 1 :])
    if sys.byteorder != "little":
        rows.byteswap()
    if len(rows) != len(terms) * (1 + len(classes)) or len(header["intercept"]) != len(classes):
        raise ValueError(f"{path}: {len(rows)} numbers for {len(terms)} terms and {len(classes)} classes")
    t_llm, t_off = (float(v) for v in header["thresholds"])
    return NgramModel(
        vocab={t: i for i, t in enumerate(terms)},
        rows=rows,
        intercept=tuple(float(v) for v in header["intercept"]),
        classes=classes,
        t_llm=t_llm,
        t_offline=t_off,
        meta=dict(header["meta"]),
    )


def load_or_train(
    data_path: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    reaches_fn=None,
) -> NgramModel:
    """The cached model for this data, training (and caching) it when there is none.

    ``reaches_fn(text) -> bool`` says whether the rules leave a message open. An unwritable
    cache directory is not an error: the model is then trained for this process only.
    """
    path = Path(data_path) if data_path else default_data_path()
    raw = path.read_bytes()
    target = Path(cache_dir or default_cache_dir()) / f"router-{cache_key(raw)}{CACHE_SUFFIX}"
    if target.exists():
        try:
            model = load(target)
            model.meta["source"] = "cache"
            model.meta["cache_path"] = str(target)
            return model
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a damaged cache file is rebuilt below
    texts, labels = read_labelled(path)
    reaches = [reaches_fn(t) for t in texts] if reaches_fn else None
    model = fit_calibrated(texts, labels, reaches)
    try:
        save(model, target)
        model.meta["cache_path"] = str(target)
    except OSError as exc:
        model.meta["cache_error"] = str(exc)
    model.meta["source"] = "trained"
    return model



__all__ = [
    "NgramModel",
    "char_wb_ngrams",
    "features_text",
    "fit",
    "fit_calibrated",
    "out_of_fold",
    "choose_thresholds",
    "kfold_indices",
    "load_or_train",
    "read_labelled",
    "default_cache_dir",
    "default_data_path",
    "FEATURE_VERSION",
]
