"""Every module says what it exports: ``__all__`` names exist, and every public definition is exported."""

import importlib.util
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import swift_plugins

# plugin.py registers with swift when imported (it is run, not imported); __main__ runs a command.
MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(swift_plugins.__path__, "swift_plugins.")
    if info.name != "swift_plugins.plugin" and not info.name.endswith("__main__")
)


def test_every_task_and_the_integration_are_found():
    for package in ("swift_plugins.integration", "swift_plugins.countdown", "swift_plugins.gsm8k", "swift_plugins.gym"):
        assert package in MODULES
    assert "swift_plugins.integration.swift_adapter" in MODULES


# A module that imports ms-swift as it loads is checked where swift runs (marked stack: not in make check).
SWIFT_AT_IMPORT = re.compile(r"^(from swift(\.[\w.]+)? import|import swift($|\.| ))", re.MULTILINE)


def _param(name: str):
    source = Path(importlib.util.find_spec(name).origin).read_text()
    return pytest.param(name, marks=pytest.mark.stack) if SWIFT_AT_IMPORT.search(source) else name


@pytest.mark.parametrize("name", [_param(name) for name in MODULES])
def test_exported_names_exist_and_public_definitions_are_exported(name):
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    missing = [item for item in exported if not hasattr(module, item)]
    assert not missing, f"{name}.__all__ names what it lacks: {missing}"
    defined = [
        item
        for item, value in vars(module).items()
        if not item.startswith("_")
        and (inspect.isfunction(value) or inspect.isclass(value))
        and value.__module__ == name
    ]
    unexported = sorted(set(defined) - set(exported))
    assert not unexported, f"{name} defines public {unexported} without exporting them"
