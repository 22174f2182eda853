# Developer targets (DEVELOP.md, "Make targets"). On a fresh clone the first target makes .venv with the
# test dependencies and the compiled kernels; PYTHON=... uses another interpreter's packages instead.
VENV ?= .venv
PYTHON ?= $(VENV)/bin/python
PYTEST = $(PYTHON) -m pytest -q -n 2 --dist loadfile
# pytest arguments: make test-py TESTS=tests/scan
TESTS ?=
BENCH_SIZE ?= 20MB
BENCH_CORPUS = bench-data/lichess-$(BENCH_SIZE)-seed0.pgn
BENCH_ONLY ?= kernel-lines-cy,fastpgn-games-cy,fastpgn-arrow-cy,convert-cy-j2,convert-cy-j2-parquet,convert-cy-j2-validate,grep,py-zstd

# The environment exists when PYTHON does; the default one is made here (README's install, compiled kernels
# required).
ifeq ($(PYTHON),$(VENV)/bin/python)
ENVIRONMENT = $(VENV)/bin/python
endif

.PHONY: test test-cy test-py lint asan bench wheel kernels

$(VENV)/bin/python:
	python3 -m venv $(VENV)
	FASTPGN_IMPLEMENTATION=cython $(VENV)/bin/pip install -q -e '.[test]'

# The compiled kernels in place (after a .pyx/.pxi/.pxd change; a no-op when they are current), with the
# build requirements of pyproject.toml's [build-system] (pip installs them apart, in an isolated build).
BUILD_REQUIRES = $(PYTHON) -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")'
kernels: $(ENVIRONMENT)
	@$(PYTHON) -c 'import Cython' 2>/dev/null || $(BUILD_REQUIRES) | xargs -d '\n' $(PYTHON) -m pip install -q
	FASTPGN_IMPLEMENTATION=cython $(PYTHON) setup.py -q build_ext --inplace -j 2

# The whole suite on each backend, as CI runs it: compiled (and checked to be the one that ran), then pure.
test: test-cy test-py

test-cy: kernels
	FASTPGN_IMPLEMENTATION=cython $(PYTEST) $(TESTS)

test-py: $(ENVIRONMENT)
	FASTPGN_IMPLEMENTATION=python $(PYTEST) $(TESTS)

# What tests/test_lint.py and tests/test_typing.py hold: ruff and mypy with pyproject.toml's settings.
lint: $(ENVIRONMENT)
	$(PYTHON) -m ruff check fastpgn tests benchmarks tools examples
	$(PYTHON) -m mypy fastpgn

# The compiled kernels built with AddressSanitizer, the differential, fuzz and Parquet-reader tests run under it.
asan: kernels
	PYTHON=$(if $(findstring /,$(PYTHON)),$(abspath $(PYTHON)),$(PYTHON)) tools/asan.sh $(TESTS)

# A short benchmark (about a minute): a 20 MB corpus from the shared games, fastpgn's main rows and two floors.
bench: kernels
	$(PYTHON) -m benchmarks.make_corpus --size $(BENCH_SIZE)
	$(PYTHON) -m benchmarks.compare $(BENCH_CORPUS) --runs 3 --only $(BENCH_ONLY)

# The sdist and the wheel built from it, as pip builds it, in dist/ (kernels required).
wheel: $(ENVIRONMENT)
	FASTPGN_IMPLEMENTATION=cython $(PYTHON) -m build --outdir dist
