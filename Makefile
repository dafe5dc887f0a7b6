# Quick start: `make demo` (set up + main job), `make test` (set up + tests), `make docs` (API reference in site/).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: demo test docs bench bench-record clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,interop]'
	touch $(STAMP)

demo: $(STAMP)
	COLUMNS=120 $(PY) -m shuffledp demo
	COLUMNS=120 $(PY) -m shuffledp pic simulate --dataset gmission --instance 0 --task min-weight --randomizer minkowski --epsilon-c 1 --out results/pic
	COLUMNS=120 $(PY) -m shuffledp reproduce --quick --out results

test: $(STAMP)
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
bench: $(STAMP)
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

bench-record: $(STAMP)
	SHUFFLEDP_BENCH_RECORD=1 $(MAKE) bench

clean:
	rm -rf $(VENV) results site
