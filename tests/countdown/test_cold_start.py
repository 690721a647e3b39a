"""Cold-start SFT rows: every worked answer is right, well formatted, and its steps are true arithmetic."""

import json
import operator
import re
from fractions import Fraction

import pytest

from swift_plugins.core.think_answer import think_answer_format_reward
from swift_plugins.countdown.cli import main
from swift_plugins.countdown.cold_start import assistant_turn, sft_rows, simplest_solution, solution_steps
from swift_plugins.countdown.data import prompt_for
from swift_plugins.countdown.generator import CountdownConfig, generate
from swift_plugins.countdown.rewards import countdown_accuracy_reward
from swift_plugins.countdown.solver import all_solutions

CONFIGS = [CountdownConfig(3, 3, 1, 20, 1, 50), CountdownConfig(), CountdownConfig(2, 4, 1, 999, 1, 999)]
OPERATIONS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}
STEP = re.compile(r"^(-?[0-9/]+) ([-+*/]) (-?[0-9/]+) = (-?[0-9/]+)$")


@pytest.fixture(scope="module", params=CONFIGS, ids=["demo", "hub-like", "wide"])
def rows(request):
    return list(generate(request.param, count=300, seed=3))


def test_every_answer_scores_one_under_the_training_rewards(rows):
    turns = [row["messages"][1]["content"] for row in sft_rows(rows)]
    nums, targets = [row["nums"] for row in rows], [row["target"] for row in rows]
    assert countdown_accuracy_reward(turns, nums, targets) == [1.0] * len(rows)
    assert think_answer_format_reward(turns) == [1.0] * len(rows)


def test_every_step_is_true_and_the_last_reaches_the_target(rows):
    for row in rows:
        steps = solution_steps(simplest_solution(row["nums"], row["target"]))
        assert len(steps) == len(row["nums"]) - 1  # one operation joins two of the values
        for step in steps:
            left, op, right, result = STEP.match(step).groups()
            left, right, result = Fraction(left), Fraction(right), Fraction(result)
            assert OPERATIONS[op](left, right) == result
        assert Fraction(STEP.match(steps[-1])[4]) == row["target"]


def test_the_thinking_checks_the_sum_first_and_keeps_it_when_it_hits():
    assert "6 + 2 + 6 = 14, not 24." in assistant_turn([6, 2, 6], 24)
    assert assistant_turn([6, 2, 16], 24) == "<think>\n6 + 2 + 16 = 24.\n</think>\n<answer>6 + 2 + 16 = 24</answer>"


def test_the_simplest_solution_avoids_division_and_parentheses_when_it_can(rows):
    for row in rows[:100]:
        chosen = simplest_solution(row["nums"], row["target"])
        others = all_solutions(row["nums"], row["target"])
        assert chosen in others
        assert "/" not in chosen or all("/" in other for other in others)
        if "/" not in chosen:
            assert chosen.count("(") == min(o.count("(") for o in others if "/" not in o)


def test_rows_carry_the_prompt_the_rewards_and_score_read_back():
    row = next(sft_rows([{"nums": [3, 5, 7], "target": 22}]))
    assert row["messages"][0] == {"role": "user", "content": prompt_for([3, 5, 7], 22)}
    assert row["messages"][1]["content"].endswith("<answer>3 * 5 + 7 = 22</answer>")


def test_cli_writes_sft_rows_from_generated_puzzles(tmp_path, capsys):
    puzzles = tmp_path / "puzzles.jsonl"
    main(["generate", "--size", "20", "--out", str(puzzles), "--jobs", "1", "--quiet"])
    main(["sft-data", str(puzzles), "--out", str(tmp_path / "sft.jsonl")])
    written = [json.loads(line) for line in (tmp_path / "sft.jsonl").read_text().splitlines()]
    assert len(written) == 20 and all(len(row["messages"]) == 2 for row in written)


def test_cli_refuses_an_unsolvable_puzzle_naming_its_row(tmp_path, capsys):
    puzzles = tmp_path / "hub.jsonl"
    puzzles.write_text('{"nums": [1, 2, 3], "target": 6}\n{"nums": [1, 1, 1], "target": 100}\n')
    with pytest.raises(SystemExit) as error:
        main(["sft-data", str(puzzles), "--out", str(tmp_path / "sft.jsonl")])
    assert error.value.code == 2
    assert "hub.jsonl:2: [1, 1, 1] cannot make 100" in capsys.readouterr().err
    assert not (tmp_path / "sft.jsonl").exists()
