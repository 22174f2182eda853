# Developer targets (DEVELOP.md).
PYTHON ?= python3

.PHONY: asan
# The compiled kernels built with AddressSanitizer, the differential, fuzz and Parquet-reader tests run under it.
asan:
	PYTHON=$(PYTHON) tools/asan.sh $(TESTS)
