"""The tiny random Qwen2.5-shaped model of make smoke and the e2e tests."""

import pytest

from swift_plugins.core.errors import OutputError
from swift_plugins.tools.tiny_model import build_tiny_model

pytestmark = pytest.mark.stack  # swift, transformers or vLLM of this venv


def test_tiny_model_loads_renders_the_chat_template_and_runs_forward(tiny_model):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(tiny_model, local_files_only=True)
    assert (tokenizer.eos_token, tokenizer.pad_token) == ("<|im_end|>", "<|endoftext|>")
    assert model.config.vocab_size == len(tokenizer) and model.config.tie_word_embeddings
    assert model.dtype == torch.float32 and model.config.hidden_size == 64
    assert model.generation_config.eos_token_id == [tokenizer.eos_token_id, tokenizer.pad_token_id]

    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Using the numbers [1, 2]"}], tokenize=False, add_generation_prompt=True
    )
    assert text.endswith("<|im_start|>user\nUsing the numbers [1, 2]<|im_end|>\n<|im_start|>assistant\n")
    ids = tokenizer(text, return_tensors="pt").input_ids
    with torch.no_grad():
        logits = model(ids).logits
    assert logits.shape == (1, ids.shape[1], len(tokenizer)) and torch.isfinite(logits).all()


def test_tiny_model_build_is_idempotent_and_deterministic(tiny_model, tmp_path):
    files = {path.name: path.stat().st_mtime_ns for path in tiny_model.iterdir()}
    assert build_tiny_model(tiny_model) == tiny_model
    assert {path.name: path.stat().st_mtime_ns for path in tiny_model.iterdir()} == files  # nothing rebuilt
    again = build_tiny_model(tmp_path / "again")
    assert (again / "model.safetensors").read_bytes() == (tiny_model / "model.safetensors").read_bytes()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left behind


def test_a_folder_of_something_else_is_refused_not_overwritten(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match="holds something else than a tiny model"):
        build_tiny_model(folder)
    assert [path.name for path in folder.iterdir()] == ["notes.txt"]
