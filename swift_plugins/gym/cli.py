"""``python -m swift_plugins gym``: list reasoning-gym's datasets, generate gym data, score completions offline, write
cold-start SFT rows.

``python -m swift_plugins.gym`` is the same command.

``gym score`` prints one JSON line per row, ``{"row": N, "reward": R, "seconds": S}`` (and ``"failure"`` when the
score overran its time bound or raised), computed exactly as the trainer's ``external_gym`` reward computes it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..core.cli import int_at_least, run_task_command
from ..core.errors import DataError
from ..core.files import FORMATS, check_outputs, read_rows, split_paths, write_rows
from ..core.held_out import check_split, record_split
from ..core.splits import SPLIT_ROWS

__all__ = ["add_command", "main"]

# generate notes a gold answer that this many rows, and this share of them, have: a model that gives that one
# answer to every question scores as much, so a trained model's accuracy is read against it
COMMON_ANSWER_ROWS, COMMON_ANSWER_SHARE = 10, 0.2


def _print_lines(lines: Iterable[str]) -> None:
    """Print each line as it comes; a reader that stops early (``| head``) ends the output quietly."""
    try:
        for line in lines:
            print(line, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes


def _list(args: argparse.Namespace) -> None:
    from .generator import dataset_names, describe

    names = dataset_names()
    width = max(map(len, names))
    _print_lines(f"{name:<{width}}  {describe(name)}" for name in names)


def _generate(args: argparse.Namespace) -> None:
    from .generator import generate
    from .settings import parse_settings

    settings = parse_settings(args.name, args.settings)
    paths = split_paths(args.out, args.size, args.test_size, args.dev_size)
    check_split(args.out, paths)
    split = generate(args.name, args.size, args.test_size, args.seed, settings, args.dev_size, args.split_seed)
    for name, path in paths.items():
        write_rows(getattr(split, name), path)
        if not args.quiet:
            print(f"wrote {len(getattr(split, name))} {SPLIT_ROWS[name]} to {path}"
                  + ("" if name == "train" else " (no question in two splits)"))  # fmt: skip
    record_split(paths, {name: len(getattr(split, name)) for name in paths})  # last: it vouches for the files above
    for note in _notes(args.name, split.train, split.test or split.dev):  # with --quiet too: what a reader must know
        print(f"note: {note}", file=sys.stderr)


def _notes(name: str, train: list[dict], held_out: list[dict]) -> Iterator[str]:
    """What ``generate`` says of the rows it wrote: questions that repeat, an answer that many questions share."""
    from .generator import commonest_answer

    distinct = len({row["question"] for row in train})
    if distinct < len(train):
        yield (f"{len(train) - distinct} of the {len(train)} rows repeat a question ({distinct} distinct): gym:{name} "
               "draws from few questions at these settings")  # fmt: skip
    rows, which = (held_out, "held-out rows") if held_out else (train, "rows")
    answer, count = commonest_answer(rows)
    if count >= max(COMMON_ANSWER_ROWS, len(rows) * COMMON_ANSWER_SHARE):
        yield (f"{count} of the {len(rows)} {which} ({count / len(rows):.0%}) have the gold answer {answer!r}: one "
               "answer to every question scores that much")  # fmt: skip


def _score(args: argparse.Namespace) -> None:
    from .data import GYM, check_row
    from .rewards import score_completions

    rows = []
    for where, row in read_rows(args.data):
        GYM.check_columns(row, where)
        rows.append(check_row(row, where))
    completions = []
    for where, row in read_rows(args.completions):
        if "completion" not in row:
            raise DataError(f"{where}: no 'completion' field")
        completions.append(row["completion"])
    if len(completions) != len(rows):
        raise DataError(f"{args.completions}: {len(completions)} completions for the {len(rows)} rows of {args.data}")
    outcomes = score_completions(completions, rows)
    _print_lines(
        json.dumps({"row": index, "reward": outcome.score, "seconds": round(outcome.seconds, 6)}
                   | ({"failure": outcome.failure} if outcome.failure else {}))
        for index, outcome in enumerate(outcomes)
    )  # fmt: skip


def _sft_data(args: argparse.Namespace) -> None:
    from .cold_start import sft_rows
    from .data import GYM, check_row

    check_outputs([(args.out, FORMATS)], inputs=[args.rows])
    rows = []
    for where, row in read_rows(args.rows):
        GYM.check_columns(row, where)
        try:
            rows.extend(sft_rows([check_row(row, where)]))
        except DataError as error:
            raise DataError(f"{where}: {error}") from None
    if not rows:
        raise DataError(f"{args.rows}: no rows in it, so no SFT rows to write")
    write_rows(rows, args.out)
    print(f"wrote {len(rows)} SFT rows to {args.out}")


class _IntermixedParser(argparse.ArgumentParser):
    """A subcommand parser taking positionals between options: ``generate NAME --size 8 key=value``."""

    _intermixing = False

    def parse_known_args(self, args=None, namespace=None):
        if self._intermixing:  # argparse's intermixed parse calls this twice, positionals then options
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def add_command(parent: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``gym list|generate|score|sft-data`` to a command line's subcommands."""
    gym = parent.add_parser(
        "gym", help="reasoning-gym datasets as tasks (TASK=gym:<name>): list, generate, score, sft-data"
    )
    actions = gym.add_subparsers(dest="task_command", required=True, parser_class=_IntermixedParser)
    actions.add_parser("list", help="every dataset with a one-line description").set_defaults(run=_list)

    generate = actions.add_parser("generate", help="seeded train rows (and held-out rows) of one dataset")
    generate.add_argument("name", help="a dataset of gym list, e.g. basic_arithmetic")
    generate.add_argument("settings", nargs="*", metavar="key=value", help="fields of the dataset's config")
    generate.add_argument("--size", type=int_at_least(1), required=True, help="training rows")
    generate.add_argument("--test-size", type=int_at_least(0), default=0,
                          help="held-out rows, chosen at random among the questions drawn, written beside OUT with "
                          ".test before its suffix (x.jsonl: x.test.jsonl)")
    generate.add_argument("--dev-size", type=int_at_least(0), default=0,
                          help="development rows for choosing settings, held out as the test rows are, written beside "
                          "OUT with .dev before its suffix (x.dev.jsonl)")
    generate.add_argument("--seed", type=int_at_least(0), default=0, help="items use seeds SEED, SEED+1, ...; with "
                          "--split-seed, only the order of the training rows")
    generate.add_argument("--split-seed", type=int_at_least(0), help="items use seeds SPLIT_SEED, SPLIT_SEED+1, ... "
                          "(default: --seed): the same held-out files for every --seed")
    generate.add_argument("--out", type=Path, required=True, help=".jsonl, .json or .parquet")
    generate.add_argument("--quiet", action="store_true", help="no lines but the notes (on stderr)")
    generate.set_defaults(run=_generate)

    score = actions.add_parser("score", help="score completions against gym rows as the trainer's reward does")
    score.add_argument("data", type=Path, help="gym rows (gym generate's output)")
    score.add_argument("completions", type=Path, help="rows with a 'completion' field, one per row of DATA")
    score.set_defaults(run=_score)

    sft = actions.add_parser("sft-data", help="gym rows as swift SFT rows: the gold answer in the think/answer frame")
    sft.add_argument("rows", type=Path, help="gym rows (gym generate's output)")
    sft.add_argument("--out", type=Path, required=True, help="the SFT rows (.jsonl, .json or .parquet)")
    sft.set_defaults(run=_sft_data)
    return gym


def main(argv: list[str] | None = None) -> None:
    """``python -m swift_plugins.gym ARGS``: ``python -m swift_plugins gym ARGS``."""
    run_task_command(add_command, argv)
