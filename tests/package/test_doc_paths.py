"""Every repository path the user docs (README.md, docs/*.md) and the recipes (shell/*.sh) name exists.

A path is named as ``swift_plugins/launch/recipes.py`` (from the repository root, ``*`` allowed),
``launch/recipes.py`` (a ``.py`` file of a subpackage), a relative Markdown link, or a module as
``swift_plugins.integration.swift_adapter.register_spec_files`` (the module, and the name it defines).
"""

import ast
import re
from pathlib import Path

import pytest

from ..helpers import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "shell").glob("*.sh"))]
FOLDERS = (".ci", "benchmarks", "docs", "requirements", "resources", "shell", "swift_plugins", "tests")
SUBPACKAGES = sorted(path.parent.name for path in (REPO / "swift_plugins").glob("*/__init__.py"))
NOT_AFTER = r"(?<![\w./-])"  # a path's start, not the middle of a URL or of a longer path
ROOTED = re.compile(NOT_AFTER + rf"((?:{'|'.join(map(re.escape, FOLDERS))})/[\w.*/-]*\w)")
IN_PACKAGE = re.compile(NOT_AFTER + rf"((?:{'|'.join(SUBPACKAGES)})/[\w/]*\.py)\b")
MODULE = re.compile(NOT_AFTER + r"swift_plugins(?:\.\w+)+")
LINK = re.compile(r"\]\(([^)#\s]+)")


def defined_names(module: Path) -> set[str]:
    """The names a module's top level binds: definitions, assignments and imports."""
    names = set()
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update(alias.asname or alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(target.id for target in targets if isinstance(target, ast.Name))
    return names


def module_missing(dotted: str) -> bool:
    """Whether ``a.b.c`` names no module of the repository, or a name its module does not define."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        base = REPO.joinpath(*parts[:end])
        source = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if source.is_file():
            return end < len(parts) and parts[end] not in defined_names(source)
    return True


def missing_paths(text: str, folder: Path) -> list[str]:
    """The paths ``text`` (a file of ``folder``) names that do not exist, in order.

    >>> missing_paths("`swift_plugins/core/vllm_cpu.py`, `core/files.py`, [data](data.md)", REPO / "docs")
    ['swift_plugins/core/vllm_cpu.py']
    """
    missing = [path for path in ROOTED.findall(text) if not any(REPO.glob(path))]
    missing += [path for path in IN_PACKAGE.findall(text) if not (REPO / "swift_plugins" / path).is_file()]
    missing += [name for name in MODULE.findall(text) if module_missing(name)]
    links = [link for link in LINK.findall(text) if "://" not in link and not link.startswith("mailto:")]
    missing += [link for link in links if not (folder / link).exists()]
    return missing


def test_the_folders_a_path_may_start_with_exist():
    assert all((REPO / folder).is_dir() for folder in FOLDERS) and "launch" in SUBPACKAGES


def test_a_stale_path_of_each_kind_is_found():
    text = (
        "`swift_plugins/launch/presets.py`, tests/launch/test_nothing_*.py, `core/vllm_cpu.py`, "
        "swift_plugins.integration.swift_adapter.register_nothing, swift_plugins.presets, [gone](gone.md#a); "
        "https://github.com/modelscope/ms-swift/blob/main/docs/source_en/x.md, [ok](recipes.md#a), "
        "tests/launch/test_launch_*.py, swift_plugins.integration.swift_adapter.register_spec_files"
    )
    assert missing_paths(text, REPO / "docs") == [
        "swift_plugins/launch/presets.py",
        "tests/launch/test_nothing_*.py",
        "core/vllm_cpu.py",
        "swift_plugins.integration.swift_adapter.register_nothing",
        "swift_plugins.presets",
        "gone.md",
    ]


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(REPO)))
def test_every_path_a_doc_names_exists(doc):
    assert missing_paths(doc.read_text(), doc.parent) == []
