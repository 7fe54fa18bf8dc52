"""The ``serial`` marker (tests/support/serial.py): with parallel workers, a serial test runs while no other test
runs, and the others run alongside each other. Probed with non-blocking locks of another holder, as another
worker would take them (no waiting: a probe that would wait fails at once)."""

from __future__ import annotations

import fcntl
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from support.serial import lock_path, run_alone_or_alongside


def worker(run_folder: Path, name: str) -> Any:
    """What the lock reads of a pytest-xdist worker's config: its base temp folder (inside the run's), the run."""
    return SimpleNamespace(
        option=SimpleNamespace(basetemp=str(run_folder / f"popen-{name}")), workerinput={"testrunuid": "r1"}
    )


def item(config: Any, *, serial: bool) -> Any:
    marker = object() if serial else None
    return SimpleNamespace(
        config=config, get_closest_marker=lambda name: marker if name == "serial" else None
    )


def another_worker_can(config: Any, name: str, how: int) -> bool:
    """Whether another worker would get lock ``name`` now (``how``: shared or exclusive)."""
    path = lock_path(config, name)
    assert path is not None
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, how | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True


def test_a_serial_test_runs_while_no_other_test_runs(tmp_path: Path) -> None:
    gw0, gw1 = worker(tmp_path, "gw0"), worker(tmp_path, "gw1")
    assert lock_path(gw0, "turn") == lock_path(gw1, "turn")  # the workers of a run share the locks
    with run_alone_or_alongside(item(gw0, serial=True)):
        assert not another_worker_can(gw1, "turn", fcntl.LOCK_SH)  # no other test starts ...
        assert not another_worker_can(gw1, "gate", fcntl.LOCK_EX)  # ... nor queues ahead
    assert another_worker_can(gw1, "turn", fcntl.LOCK_EX)
    assert another_worker_can(gw1, "gate", fcntl.LOCK_EX)


def test_other_tests_run_alongside_each_other_and_keep_a_serial_one_waiting(tmp_path: Path) -> None:
    gw0, gw1 = worker(tmp_path, "gw0"), worker(tmp_path, "gw1")
    with run_alone_or_alongside(item(gw0, serial=False)):
        assert another_worker_can(gw1, "turn", fcntl.LOCK_SH)  # another test runs alongside
        assert not another_worker_can(gw1, "turn", fcntl.LOCK_EX)  # a serial one waits for this one
        assert another_worker_can(gw1, "gate", fcntl.LOCK_EX)  # (the gate is only held while taking the turn)
    assert another_worker_can(gw1, "turn", fcntl.LOCK_EX)


def test_in_one_process_nothing_is_locked() -> None:
    single = SimpleNamespace(option=SimpleNamespace(basetemp=None))  # no workerinput: not an xdist worker
    assert lock_path(single, "turn") is None
    with run_alone_or_alongside(item(single, serial=True)):
        pass
