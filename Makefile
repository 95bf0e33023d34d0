# make run        set up, then start the app (on the CPU where there is no GPU)
# make test       set up, then run the whole suite
# make test-fast  set up, then run the suite without the slow (over 5 s) and end-to-end tests
# make lint       ruff (lint and format), mypy and the import contracts
#
# Set-up never replaces an installed torch. It reuses the venv's torch, else the one $(PYTHON)
# imports (a GPU box's CUDA build, through a .pth line in the venv, which works whether that torch
# lies in a system, user, conda or venv site-packages), and pins that version while pip installs
# the project. Only where no torch is found does it install one, $(NEW_TORCH): the CPU build from
# $(WHEELS) when the wheel lies there, else from PyTorch's CPU index; with a GPU (nvidia-smi
# answers), PyPI's default build, which is the CUDA one. TORCH=X.Y.Z installs that release into
# the venv instead (CI: `make test VENV=.ci/venv-torch-2.15.0 TORCH=2.15.0`).

VENV ?= .venv
PYTHON ?= python3
TORCH ?=
NEW_TORCH ?= 2.13.0
WHEELS ?= /opt/wheels
ARGS ?=
STAMP := $(VENV)/.installed
PIP := $(VENV)/bin/python -m pip
SHELL := bash

# pytest exits 5 when it collected nothing: a wrong path or marker must not pass.
define pytest
	$(VENV)/bin/python -m pytest -q -rfEs $(1) $(ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: that is a failure"; exit 1; fi; exit $$rc
endef

.PHONY: run test test-fast lint profile clean

# Set-up says each step as it starts, and each file of a megabyte or more that pip downloads, with
# its size; pip's whole output is kept in $(VENV)/pip.log and its end shown when a step fails.
$(STAMP): pyproject.toml
	@set -eo pipefail; \
	step() { echo "$$1"; shift; \
		if ! $(PIP) install --progress-bar off "$$@" 2>&1 | tee $(VENV)/pip.log \
			| { grep --line-buffered -E '^ *Downloading .*\([0-9.]+ [MG]B\)' | sed -u -E 's/^ *Downloading /  downloading /' || true; }; then \
			echo "pip failed; the end of $(VENV)/pip.log:"; tail -20 $(VENV)/pip.log; exit 1; \
		fi; }; \
	new_venv() { echo "making the virtual environment $(VENV)"; $(PYTHON) -m venv $(VENV); }; \
	if [ -n "$(TORCH)" ]; then \
		[ -x $(VENV)/bin/python ] || new_venv; \
		step "installing torch $(TORCH) into $(VENV)" "torch==$(TORCH)"; \
	elif [ -x $(VENV)/bin/python ] && $(VENV)/bin/python -c "import torch" 2>/dev/null; then \
		echo "reusing the venv's torch"; \
	elif $(PYTHON) -c "import torch" 2>/dev/null; then \
		new_venv; \
		$(PYTHON) -W ignore -c "import pathlib, torch; print(pathlib.Path(torch.__file__).parents[1])" \
			> "$$($(VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/reuse-torch.pth"; \
		echo "reusing $(PYTHON)'s torch"; \
	else \
		[ -x $(VENV)/bin/python ] || new_venv; \
		if nvidia-smi >/dev/null 2>&1; then \
			step "no torch found: installing torch $(NEW_TORCH) from PyPI (the CUDA build, several GB)" "torch==$(NEW_TORCH)"; \
		elif ls $(WHEELS)/torch-$(NEW_TORCH)+cpu-*.whl >/dev/null 2>&1; then \
			step "no torch found: installing torch $(NEW_TORCH)+cpu from $(WHEELS) (about 190 MB)" \
				--find-links $(WHEELS) "torch==$(NEW_TORCH)+cpu"; \
		else \
			step "no torch found: installing torch $(NEW_TORCH)+cpu from PyTorch's CPU index (about 190 MB)" \
				--index-url https://download.pytorch.org/whl/cpu "torch==$(NEW_TORCH)+cpu"; \
		fi; \
	fi; \
	version=$$($(VENV)/bin/python -W ignore -c "import torch, importlib.metadata as m; print(m.version('torch'))" 2>/dev/null) || \
		{ echo "torch does not import in $(VENV):"; $(VENV)/bin/python -c "import torch"; exit 1; }; \
	echo "torch==$$version" > $(VENV)/torch-pin.txt; \
	step "installing kernel-tui and its tools with torch $$version pinned (a few tens of MB)" \
		-c $(VENV)/torch-pin.txt -e ".[dev]"; \
	touch $(STAMP); \
	echo "set up in $(VENV)"

run: $(STAMP)
	$(VENV)/bin/kernel-tui $(ARGS)

profile: $(STAMP)
	$(VENV)/bin/kernel-tui profile "(a + b).relu()" $(ARGS)

FAST := -m "not slow and not e2e"

# The whole suite in one run of two processes: one collection, and the fast tests fill the gaps
# the slow ones leave. Each process keeps its device locks and caches in folders of its own
# (tests/conftest.py), so one never waits for the other's lock; the tests that must not run beside
# one another (the app in a terminal, the tests that load the machine on purpose) share one
# xdist_group, which --dist loadgroup runs in turn.
test: $(STAMP)
	@$(call pytest,-n 2 --dist loadgroup)

# Two processes: the tier's app tests spend much of their time waiting on a replayed worker.
test-fast: $(STAMP)
	@$(call pytest,-n 2 $(FAST))

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache --no-logo

clean:
	rm -rf $(VENV) .pytest_cache
