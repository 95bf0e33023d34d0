# Two commands for a newcomer:  `make run` (set up, then start the app) and `make test`.
# Set-up reuses a torch that is already installed (a GPU box's CUDA build) through a venv with
# system site-packages; elsewhere it installs torch==2.13.0 first, which is the CPU build on
# machines without a GPU, so the multi-GB CUDA build is never pulled by accident.

VENV ?= .venv
PYTHON ?= python3
STAMP := $(VENV)/.installed
ARGS ?=

.PHONY: run test profile clean

$(STAMP): pyproject.toml
	@if $(PYTHON) -c "import torch" 2>/dev/null; then \
		echo "reusing the installed torch: $$($(PYTHON) -c 'import torch; print(torch.__version__)')"; \
		$(PYTHON) -m venv --system-site-packages $(VENV); \
	else \
		$(PYTHON) -m venv $(VENV) && $(VENV)/bin/python -m pip install -q --upgrade pip && \
		$(VENV)/bin/python -m pip install -q torch==2.13.0; \
	fi
	$(VENV)/bin/python -m pip install -q -e ".[test]"
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/kernel-tui $(ARGS)

profile: $(STAMP)
	$(VENV)/bin/kernel-tui profile "(a + b).relu()" $(ARGS)

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q -rs $(ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: that is a failure"; exit 1; fi; exit $$rc

clean:
	rm -rf $(VENV) .pytest_cache
