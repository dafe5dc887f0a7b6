# Quick start: `make demo` (set up + main job), `make test` (set up + tests), `make docs` (API reference in site/).
# `make reproduce` re-creates every table and figure of the papers (quick mode; results/REPORT.md).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# the library alone (what `make demo` needs), then the test extras, dp-accounting (interop tests) and JAX + optax
# (the fl extra: pic-fl-incentives and its tests) on top (`make test`)
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: demo reproduce test docs bench bench-record clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(STAMP)

$(TEST_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,interop,fl]'
	touch $(TEST_STAMP)

# The main job: a PIC round over HTTP (three services on loopback; ledger, utility, viewer address),
# then the same round in process with its independent checks. A few minutes from a fresh clone.
demo: $(STAMP)
	COLUMNS=120 $(PY) -m shuffledp demo
	COLUMNS=120 $(PY) -m shuffledp pic simulate --dataset gmission --instance 0 --task min-weight --randomizer minkowski --epsilon-c 1 --out results/pic

# Every experiment in quick mode, with REPORT.md (the paper's claims beside ours): tens of minutes on 2 cores.
reproduce: $(STAMP)
	COLUMNS=120 $(PY) -m shuffledp reproduce --quick --out results

test: $(TEST_STAMP)
	$(PY) -m pytest -q -n 2 --durations=25

# The API reference site (mkdocs + mkdocstrings, numpy docstrings) in site/ (git-ignored).
# --strict: any warning (a broken reference, a malformed docstring section) fails the build.
$(DOCS_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(PY) -m mkdocs build --strict --site-dir site

# Benchmarks. `make bench` writes results/bench/*.json (git-ignored): running it never
# dirties tracked files. The numbers of record, benchmarks/results/*.json (tracked, quoted
# in the README), change only through `make bench-record`; review and commit them on purpose.
bench: $(TEST_STAMP)
	$(PY) benchmarks/bench_randomizers.py
	$(PY) benchmarks/bench_minkowski.py
	$(PY) benchmarks/bench_accounting.py
	$(PY) benchmarks/bench_blanket.py
	$(PY) benchmarks/bench_crypto.py
	$(PY) benchmarks/bench_pic.py
	$(PY) benchmarks/bench_segmented.py
	$(PY) benchmarks/bench_metric.py
	$(PY) benchmarks/bench_personalized.py
	$(PY) benchmarks/bench_matching_scale.py
	$(PY) benchmarks/load_pic_service.py --users 8000 --clients 200
	$(PY) benchmarks/load_pic_service.py --users 50000 --clients 200 --round --name load_pic_service_50k

bench-record: $(TEST_STAMP)
	SHUFFLEDP_BENCH_RECORD=1 $(MAKE) bench

clean:
	rm -rf $(VENV) results site
