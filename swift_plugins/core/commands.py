"""A command to run, as data: its title, the variables it gets, its argv, its log; printed as a pasteable line.

>>> print(Command("t", (("A", "1"),), ("swift", "rlhf", "--x", "a b"), "/l").shell())
env -u VLLM_PORT A=1 swift rlhf \\
    --x 'a b'
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["UNSET_ENV", "Command"]

# vLLM reads VLLM_PORT as the base of its internal ports (vllm/envs.py; get_open_port in vllm/utils), and
# `swift rollout` takes its data-parallel master port from that get_open_port (swift/pipelines/infer/rollout.py,
# SwiftRolloutDeploy.__init__): an inherited VLLM_PORT equal to the HTTP port makes the server unreachable.
# No command started from here sees it.
UNSET_ENV = ("VLLM_PORT",)


@dataclass(frozen=True)
class Command:
    """One process to start: a title, the variables it gets, its argv, its log file."""

    title: str
    env: tuple[tuple[str, str], ...]
    argv: tuple[str, ...]
    log: str

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` without :data:`UNSET_ENV`, plus this command's variables."""
        return {**{k: v for k, v in base.items() if k not in UNSET_ENV}, **dict(self.env)}

    def shell(self) -> str:
        """The command as a pasteable ``env -u VLLM_PORT K=V ... swift ...`` line, one flag per line."""
        head = ["env", *(w for name in UNSET_ENV for w in ("-u", name)), *(f"{k}={v}" for k, v in self.env)]
        lines, group = [], [*head, *self.argv[:2]]
        for word in self.argv[2:]:
            if word.startswith("--"):
                lines.append(shlex.join(group))
                group = []
            group.append(word)
        return " \\\n    ".join([*lines, shlex.join(group)])

    def to_json(self) -> dict:
        return {"title": self.title, "env": dict(self.env), "argv": list(self.argv), "log": self.log}

    @classmethod
    def from_json(cls, data: dict) -> Command:
        return cls(data["title"], tuple(data["env"].items()), tuple(data["argv"]), data["log"])
