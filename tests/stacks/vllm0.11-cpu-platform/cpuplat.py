"""vLLM 0.11's CPU platform, named through its platform-plugin entry point (test-only; see pyproject.toml)."""


def cpu() -> str:
    return "vllm.platforms.cpu.CpuPlatform"
