# Two commands on a fresh machine: `make demo` and `make test`. Both build .venv themselves.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench venv clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# The install also compiles the C parts in place (nodes/perf/parsers/_*.c, nodes/perf/metrics/_*.c,
# setup.py; optional: without a compiler the numpy code and upb are used), so a change to them re-runs the install.
# After the install, bytecode for the project's own modules: an editable install compiles none,
# and with PYTHONDONTWRITEBYTECODE set (as on these machines) every command would compile them
# again (~0.1 s of each `perfscout analyze`).
$(STAMP): $(BIN)/python pyproject.toml setup.py $(wildcard nodes/perf/parsers/_*.c nodes/perf/metrics/_*.c)
	$(BIN)/python -m pip install -q -e ".[dev]"
	$(BIN)/python -m compileall -q app graph nodes >/dev/null
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/perfscout ask "帮我全面分析一下 examples/slow_app.py" --allow-run

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .perfscout
