"""The compiled parts: nodes/perf/parsers/_wirec.c, the protobuf wire walks of the Perfetto
reader (perfetto_wire.py), and nodes/perf/parsers/_atracec.c, the atrace columns of a batch
(perfetto_atrace_columns.py). Optional: without a C compiler the install goes on and the reader uses
perfetto_wire's numpy code, which gives the same results. Everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("nodes.perf.parsers._wirec", ["nodes/perf/parsers/_wirec.c"], optional=True,
                             extra_compile_args=["-O2"]),
                   Extension("nodes.perf.parsers._atracec", ["nodes/perf/parsers/_atracec.c"], optional=True,
                             extra_compile_args=["-O2"])])
