"""The compiled parts: nodes/perf/parsers/_wirec.c, the protobuf wire walks of the Perfetto
reader (perfetto_wire.py), and nodes/perf/parsers/_bundlec.c, its ftrace bundle check
(perfetto_bundle_view.py). Optional: without a C compiler the install goes on and the reader uses
perfetto_wire's numpy code, which gives the same results. Everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("nodes.perf.parsers._wirec", ["nodes/perf/parsers/_wirec.c"], optional=True,
                             extra_compile_args=["-O2"]),
                   Extension("nodes.perf.parsers._bundlec", ["nodes/perf/parsers/_bundlec.c"], optional=True,
                             extra_compile_args=["-O2"])])
