"""The compiled parts of the Perfetto reader, each optional and each with a Python reference:
nodes/perf/parsers/_wirec.c, the protobuf wire walks (perfetto_wire.py); _atracec.c, the atrace
columns of a batch (perfetto_atrace_columns.py); _bundlec.c, the ftrace bundle check
(perfetto_bundle_view.py) and process_stats' rows (perfetto_process_stats.py); _schedc.c, the
scheduler state machine (perfetto_sched.py); nodes/perf/metrics/_metricsc.c, the slice walk of
the metrics (metrics/hotspots.py). Without a C
compiler the install goes on and the reader uses the Python/numpy code, which gives the same
results. Everything else is in pyproject.toml."""

from setuptools import Extension, setup

_PARTS = ("parsers._wirec", "parsers._atracec", "parsers._bundlec", "parsers._schedc", "metrics._metricsc")

setup(ext_modules=[Extension(f"nodes.perf.{name}", [f"nodes/perf/{name.replace('.', '/')}.c"], optional=True,
                             extra_compile_args=["-O2"]) for name in _PARTS])
