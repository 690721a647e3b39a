"""The scoring pool never raises on a request and never scores silently 0: workers killed at every point."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from swift_plugins.core.errors import LaunchError, SettingError
from swift_plugins.gym.bounded import MAX_WORKERS, ScorePool, pool_settings, request
from swift_plugins.gym.generator import generate

from ..helpers import REPO, wait_until

STUCK = "9**9**9"  # polynomial_multiplication's scorer never returns on it (sympy computes the power in C)


@pytest.fixture(scope="module")
def polynomial():
    return generate("polynomial_multiplication", size=1, seed=0).train[0]


def gold(row):
    return request("polynomial_multiplication", row["answer"], row)


def stuck(row):
    return request("polynomial_multiplication", STUCK, row)


def dead(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: dead(pid), timeout=10)


def busy_worker(pool, since: float = 0.3):
    """The first worker scoring a request for ``since`` seconds (waits for one)."""
    found = []
    wait_until(lambda: found.extend(w for w in pool.workers if w.job is not None and w.job >= 0
                                    and time.monotonic() - w.started > since) or found, timeout=60)  # fmt: skip
    return found[0]


def test_a_worker_killed_while_idle_is_replaced_and_the_next_completion_scored(polynomial):
    with ScorePool(workers=1, timeout=2.0) as pool:
        assert [outcome.score for outcome in pool.score([gold(polynomial)])] == [1.0]
        first = pool.workers[0].process.pid
        kill(first)
        [outcome] = pool.score([gold(polynomial)])
        assert (outcome.score, outcome.failure) == (1.0, None) and pool.workers[0].process.pid != first


def test_a_worker_killed_while_scoring_is_replaced_and_the_request_scored_again(polynomial):
    with ScorePool(workers=1, timeout=1.0) as pool:
        pool.score([gold(polynomial)])
        killer = threading.Thread(target=lambda: kill(busy_worker(pool).process.pid))
        killer.start()
        hung, after = pool.score([stuck(polynomial), gold(polynomial)])
        killer.join()
    # scored again on the next worker, where it ran into the bound as it does anywhere: not "worker died"
    assert (hung.score, hung.failure) == (0.0, "timeout") and (after.score, after.failure) == (1.0, None)


def test_a_request_that_two_workers_die_on_scores_0_as_worker_died(polynomial):
    with ScorePool(workers=1, timeout=30.0) as pool:
        pool.score([gold(polynomial)])

        def kill_twice():
            for _ in range(2):
                worker = busy_worker(pool)
                kill(worker.process.pid)
                wait_until(lambda w=worker: w not in pool.workers, timeout=10)

        killer = threading.Thread(target=kill_twice)
        killer.start()
        hung, after = pool.score([stuck(polynomial), gold(polynomial)])
        killer.join()
    assert (hung.score, hung.failure) == (0.0, "worker died") and (after.score, after.failure) == (1.0, None)


def test_a_spare_killed_while_waiting_is_replaced_and_later_completions_still_score(polynomial):
    with ScorePool(workers=1, timeout=0.5) as pool:
        pool.score([gold(polynomial)])
        kill(pool.spare.process.pid)
        outcomes = pool.score([stuck(polynomial), gold(polynomial), stuck(polynomial), gold(polynomial)])
    assert [(outcome.score, outcome.failure) for outcome in outcomes] == [(0.0, "timeout"), (1.0, None)] * 2


def test_no_worker_can_start_the_score_call_fails_in_one_line(tmp_path, monkeypatch, polynomial):
    broken = tmp_path / "reasoning_gym"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise ImportError('a broken install')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with ScorePool(workers=2, timeout=1.0) as pool, pytest.raises(LaunchError) as error:
        pool.score([gold(polynomial)] * 3)
    assert "3 worker processes in a row exited before they were ready" in str(error.value)
    assert "\n" not in str(error.value) and pool.workers == [] and pool.spare is None


def test_a_worker_waiting_for_a_cpu_is_not_cut_short(polynomial):
    # A stopped worker uses no CPU: past the bound in wall time, it is waited for until the wall cap (10 bounds)
    with ScorePool(workers=1, timeout=0.3) as pool:
        pool.score([gold(polynomial)])
        pid = pool.workers[0].process.pid
        os.kill(pid, signal.SIGSTOP)
        threading.Timer(1.5, os.kill, (pid, signal.SIGCONT)).start()
        start = time.monotonic()
        [waited] = pool.score([gold(polynomial)])
        assert (waited.score, waited.failure) == (1.0, None) and time.monotonic() - start >= 1.4
        os.kill(pool.workers[0].process.pid, signal.SIGSTOP)  # never continued: stopped at the wall cap
        [capped] = pool.score([gold(polynomial)])
        assert (capped.score, capped.failure) == (0.0, "timeout") and 3.0 <= capped.seconds < 6.0


def test_workers_start_as_requests_need_them_and_their_count_is_bounded(polynomial):
    with ScorePool(workers=8, timeout=2.0) as pool:
        assert pool.workers == [] and pool.spare is None
        assert [outcome.score for outcome in pool.score([gold(polynomial)] * 2)] == [1.0, 1.0]
        assert len(pool.workers) == 2 and pool.spare is not None
    assert pool_settings({"GYM_SCORE_WORKERS": str(MAX_WORKERS)})[0] == MAX_WORKERS
    for text in ("1000", "0", "2.5", "-1"):
        with pytest.raises(SettingError, match=f"GYM_SCORE_WORKERS='{text}' must be a whole number of processes"):
            pool_settings({"GYM_SCORE_WORKERS": text})
    for text in ("inf", "nan", "0", "601", "1e400", "never"):
        with pytest.raises(SettingError, match="must be a number of seconds above 0, at most 600"):
            pool_settings({"GYM_SCORE_TIMEOUT": text})


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rpartition(")")[2].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_the_workers_die_with_gym_score_however_it_is_killed(how, tmp_path, polynomial):
    data, completions = tmp_path / "rows.jsonl", tmp_path / "completions.jsonl"
    data.write_text(json.dumps(polynomial) + "\n")
    completions.write_text(json.dumps({"completion": f"<answer>{STUCK}</answer>"}) + "\n")
    score = subprocess.Popen([sys.executable, "-m", "swift_plugins", "gym", "score", str(data), str(completions)],
                             cwd=REPO, env={**os.environ, "GYM_SCORE_TIMEOUT": "120", "PYTHONPATH": str(REPO)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        assert wait_until(lambda: any(cpu_seconds(pid) > 2.0 for pid in children(score.pid)), timeout=90)
        workers = children(score.pid)
        score.send_signal(how)
        score.wait(timeout=30)
        assert wait_until(lambda: all(dead(pid) for pid in workers), timeout=10), workers
    finally:
        score.kill()
        score.wait()
