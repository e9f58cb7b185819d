"""Slices whose job is to run other work: task runners and message dispatch, not hot spots.

A task runner's self time is the part of each task no traced slice inside it covers — it is
"untraced time inside tasks", not a function that is slow — so hot spots never rank these names
(nodes/perf/metrics/hotspots.py): the ranking names the work inside them, and the report shows
their self time apart. A frame (``Choreographer#doFrame``, ``DrawFrame``) is work with a deadline,
not a container: it is not listed here.

Each name with where it comes from (Chromium and AOSP sources, as the trace events name them).
"""

from __future__ import annotations

#: name → where the slice is emitted.
CONTAINERS: dict[str, str] = {
    # Chromium: base/task/common/task_annotator.cc (TaskAnnotator::RunTask, category "toplevel")
    "RunTask": "Chromium base/task/common/task_annotator.cc — TaskAnnotator::RunTask",
    "ThreadControllerImpl::RunTask": "Chromium base/task/sequence_manager/thread_controller_impl.cc",
    "ThreadControllerImpl::DoWork": "Chromium base/task/sequence_manager/thread_controller_impl.cc",
    "ThreadControllerWithMessagePumpImpl::DoWork": "Chromium base/task/sequence_manager/thread_controller_with_message_pump_impl.cc",
    "ThreadPool_RunTask": "Chromium base/task/thread_pool/task_tracker.cc — TaskTracker::RunTask",
    "MessageLoop::RunTask": "Chromium base/message_loop/message_loop.cc (before 2019) — MessageLoop::RunTask",
    "TaskQueueManager::ProcessTaskFromWorkQueue": "Chromium (before 2018) third_party/WebKit/Source/platform/scheduler/base/task_queue_manager.cc",
    "Scheduler::RunNextTask": "Chromium cc/raster task graph and older blink scheduler (task dispatch)",
    "SequenceManager::DoIdleWork": "Chromium base/task/sequence_manager/thread_controller_with_message_pump_impl.cc",
    # Android: android.os.Looper#loop traces each message it dispatches (frameworks/base/core/java/android/os/Looper.java)
    "Looper.dispatchMessage": "AOSP frameworks/base/core/java/android/os/Looper.java — loopOnce traces the dispatch",
    "Handler.dispatchMessage": "AOSP frameworks/base/core/java/android/os/Handler.java — dispatchMessage",
    "dispatchMessage": "AOSP frameworks/base/core/java/android/os/Looper.java (atrace of the message dispatch)",
}


def is_container(name: str) -> bool:
    """Whether a slice of this name only runs other work (its self time is untraced time)."""
    return name in CONTAINERS


#: How the report calls a container's self time.
UNTRACED_LABEL = "untraced time inside tasks"

__all__ = ["CONTAINERS", "UNTRACED_LABEL", "is_container"]
