"""Which hot spots are framework, runtime or library code rather than the user's own.

A hot spot in ``java.util.HashMap.get``, in ``json/encoder.py`` of the Python standard library,
in ``site-packages`` or in V8's garbage collector cannot be fixed by editing the user's source,
so the attributor marks it ``system`` and says why instead of searching for it. The rules are
plain prefixes and path patterns so that a report can quote the one that matched.
"""

from __future__ import annotations

import re
import sysconfig

#: Qualified-name prefixes of JVM/Android/Kotlin runtimes and libraries.
JVM_PREFIXES = (
    "android.", "androidx.", "java.", "javax.", "jdk.", "kotlin.", "kotlinx.", "dalvik.",
    "libcore.", "sun.", "com.android.", "com.google.android.", "org.chromium.", "org.json.",
    "okhttp3.", "okio.", "retrofit2.", "io.reactivex.", "com.squareup.", "com.facebook.react.",
    "com.bumptech.glide.", "org.jetbrains.", "com.sun.", "org.w3c.", "org.xml.",
)
#: C++ namespaces of Chrome, V8, Skia, ART and the Android native framework.
NATIVE_NAMESPACES = (
    "v8::", "blink::", "cc::", "viz::", "base::", "content::", "gpu::", "mojo::", "gfx::",
    "ui::", "media::", "net::", "skia::", "art::", "android::", "std::", "__cxx", "uirenderer::",
)
#: Python stdlib/site-packages and other runtime locations a profile may name.
_PY_PATHS = (
    (re.compile(r"[\\/](?:site|dist)-packages[\\/]"), "library code (site-packages)"),
    (re.compile(r"[\\/]lib[\\/](?:python|pypy)\d(?:\.\d+)?[\\/]"), "Python standard library"),
    (re.compile(r"[\\/]Lib[\\/][^\\/]+\.py$"), "Python standard library"),
)
_RUNTIME_FILES = re.compile(r"^(?:<frozen [^>]*>|<built-in>|~|<unknown>|\[native\]|native|\(native\))$")
_BUILTIN_NAMES = re.compile(r"^(?:<built-in|<method '|\{built-in|\{method '|<slot wrapper|<wrapper)")
#: Chrome DevTools pseudo-frames and V8/Blink work with no user source.
_CHROME_PSEUDO = re.compile(r"^\((?:program|garbage collector|idle|root|anonymous)\)$")
#: Trace slice names emitted by Android, Chrome and runtimes themselves, not by the app.
FRAMEWORK_SLICES = frozenset(
    """
    Choreographer#doFrame traversal measure layout draw animation input inflate
    deliverInputEvent activityStart activityResume activityRestart activityPause bindApplication
    PostFork ActivityThreadMain queueBuffer dequeueBuffer eglSwapBuffers DrawFrame DrawFrames
    syncFrameState prepareTree Looper.dispatchMessage ThreadControllerImpl::RunTask RunTask
    FunctionCall EvaluateScript v8.compile v8.run V8.GCScavenger MinorGC MajorGC
    V8.GC_MC_BACKGROUND_MARKING ParseHTML Layout UpdateLayoutTree UpdateLayerTree Paint PrePaint
    CompositeLayers RasterTask BeginFrame BeginMainThreadFrame Commit HitTest TimerFire
    EventDispatch ProfileChunk Profile RunMicrotasks v8.callFunction V8.Execute
    ScheduleStyleRecalculation RecalculateStyles onMeasure onLayout onDraw requestLayout invalidate
    ResourceSendRequest ResourceReceiveResponse ResourceFinish XHRReadyStateChange
    """.split()
) | {
    # Section names with spaces (Android's RecyclerView and View tracing).
    "RV Scroll", "RV OnBindView", "RV CreateView", "RV OnLayout", "RV Prefetch", "RV FullInvalidate",
    "Lock contention", "binder transaction", "binder reply", "Record View#draw()",
}
#: Framework classes that appear unqualified in hot-spot names (``RecyclerView.onBindViewHolder``).
FRAMEWORK_CLASSES = frozenset(
    """
    RecyclerView Adapter ViewHolder View ViewGroup Activity Fragment Handler Looper Choreographer
    TextView ImageView ListView LayoutInflater Canvas Paint Bitmap BitmapFactory MessageQueue
    ViewRootImpl ThreadedRenderer RenderThread HardwareRenderer AsyncTask Thread Object String
    HashMap ArrayList LinkedList Collections Arrays StringBuilder Gson JSONObject
    """.split()
)


def _stdlib_dirs() -> tuple[str, ...]:
    """This interpreter's stdlib and package directories (a profile made here names them)."""
    paths = sysconfig.get_paths()
    dirs = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(sorted(d.rstrip("/") + "/" for d in dirs if d))


_LOCAL_RUNTIME = _stdlib_dirs()


def system_reason(name: str, file: str | None) -> str | None:
    """Why the hot spot is runtime/framework/library code, or None when it may be the user's."""
    f = (file or "").strip()
    if f:
        if _RUNTIME_FILES.match(f):
            return f"runtime code ({f})"
        for pat, why in _PY_PATHS:
            if pat.search(f):
                return why
        if any(f.startswith(d) for d in _LOCAL_RUNTIME):
            return "Python runtime"
    n = (name or "").strip()
    if not n:
        return None
    if _BUILTIN_NAMES.match(n):
        return "Python built-in"
    if _CHROME_PSEUDO.match(n):
        return "Chrome/V8 runtime pseudo-frame"
    low = n.lstrip("L").replace("/", ".")
    for p in JVM_PREFIXES:
        if low.startswith(p):
            return f"framework/library code ({p}*)"
    for ns in NATIVE_NAMESPACES:
        if n.startswith(ns) or f" {ns}" in n:
            return f"native runtime code ({ns})"
    if n.startswith(("V8.", "v8.", "Blink.", "blink.", "cc.", "viz.", "gpu.", "Skia", "Sk")) and not re.match(r"Sk[a-z]", n):
        return "Chrome/Skia/V8 internals"
    return None


def framework_slice_reason(name: str, qualifiers: list[str]) -> str | None:
    """Why a name that no definition search found is the framework's own (checked last).

    Checked only after the search, because ``draw`` or ``Layout`` may well be the user's.
    """
    if name in FRAMEWORK_SLICES:
        return "a trace section the framework/runtime emits"
    owner = framework_owner(qualifiers)
    if owner:
        return f"a framework method ({owner}) with no override in the workspace"
    return None


def framework_owner(qualifiers: list[str]) -> str | None:
    """The framework class a qualified name is about, when it names one (``RecyclerView``)."""
    for q in qualifiers:
        if q in FRAMEWORK_CLASSES:
            return q
    return None
