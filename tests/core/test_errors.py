"""One error policy: expected failures are PluginErrors printed as one line; a bug keeps its traceback."""

import argparse
import ast
import subprocess
import sys
from pathlib import Path

import pytest

import swift_plugins
from swift_plugins.core.cli import run_command
from swift_plugins.core.errors import DataError, PluginError, SettingError
from swift_plugins.countdown.cold_start import simplest_solution
from swift_plugins.countdown.expression import parse_equation
from swift_plugins.countdown.generator import CountdownConfig, generate
from swift_plugins.tools.plot import find_log

PACKAGE = Path(swift_plugins.__file__).parent


def _parser(run) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tool")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("go").set_defaults(run=run)
    return parser


def _raise(error):
    def run(args):
        raise error

    return run


@pytest.mark.parametrize("bug", [ValueError("int() of 'x'"), OSError(5, "I/O error"), KeyError("nums")])
def test_a_bug_in_a_command_keeps_its_traceback(bug):
    with pytest.raises(type(bug)):
        run_command(_parser(_raise(bug)), ["go"])


def test_an_expected_failure_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_command(_parser(_raise(DataError("rows.jsonl:3: target must be an integer"))), ["go"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == "tool go: error: rows.jsonl:3: target must be an integer\n"


@pytest.mark.parametrize(
    ("failing", "kind"),
    [
        (lambda: parse_equation("1 +"), PluginError),
        (lambda: simplest_solution([1, 1], 99), DataError),
        (lambda: CountdownConfig(min_count=9), SettingError),
        (lambda: list(generate(CountdownConfig(), -1, 0)), SettingError),
        (lambda: find_log(Path("/nonexistent/run")), DataError),
    ],
)
def test_every_expected_failure_is_a_plugin_error(failing, kind):
    with pytest.raises(kind):
        failing()


def _caught_names(handler: ast.ExceptHandler) -> set[str]:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {kind.id for kind in kinds if isinstance(kind, ast.Name)}


@pytest.mark.parametrize("cli", sorted(PACKAGE.rglob("cli.py")), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_command_line_module_turns_value_errors_into_messages(cli):
    handlers = [node for node in ast.walk(ast.parse(cli.read_text())) if isinstance(node, ast.ExceptHandler)]
    assert not [h.lineno for h in handlers if "ValueError" in _caught_names(h)]


def test_a_bad_equation_reaches_the_user_as_one_line_not_a_traceback(tmp_path):
    puzzles = tmp_path / "puzzles.jsonl"
    puzzles.write_text('{"nums": [1, 1], "target": 99}\n')
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins.countdown", "sft-data", str(puzzles), "--out", str(tmp_path / "s.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    program = "python -m swift_plugins countdown sft-data"
    message = f"{puzzles}:1: [1, 1] cannot make 99 with each number used once"
    assert result.stderr.splitlines() == [f"{program}: error: {message}"]
