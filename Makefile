# make demo: the whole pipeline on CPU (tiny model, real swift GRPO, plot). make test: lint + pytest.
VENV ?= .venv
PYTHON ?= python3
# The CPU build of torch; change it for a GPU machine. Installed first so nothing pulls a CUDA build.
TORCH_SPEC ?= torch==2.13.0
BIN := $(VENV)/bin

.PHONY: install test lint demo clean

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(BIN)/activate pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet '$(TORCH_SPEC)'
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

lint: install
	$(BIN)/ruff check swift_plugins tests benchmarks
	$(BIN)/shellcheck shell/*.sh shell/lib/*.sh

test: lint
	$(BIN)/pytest

demo: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash shell/countdown_cpu_demo.sh

clean:
	rm -rf $(VENV) output
