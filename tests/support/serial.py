"""The ``serial`` marker: a test that must have the machine to itself runs while no other test runs.

Its bound holds only when nothing else competes for the cores: the loop-stall tests (the process's CPU time
between two ticks of a monitor task, which counts a worker thread's work while the loop's thread waits for a
core) and the hung store's deadline. With parallel workers (pytest-xdist) every test holds a shared lock on a
file of the run for as long as it runs (setup and teardown included), a serial test the exclusive lock; a gate
taken before either makes a waiting serial test go before the next shared holders.
In one process (no workers) there is nothing to wait for.
"""

from __future__ import annotations

import contextlib
import fcntl
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from support.installs import wait_for_background_installs

__all__ = ["lock_path", "run_alone_or_alongside"]

_files: dict[Path, IO[str]] = {}


def lock_path(config: pytest.Config, name: str) -> Path | None:
    """The run's lock file ``name`` (``gate`` or ``turn``), or None outside a pytest-xdist worker."""
    if not hasattr(config, "workerinput"):  # not a pytest-xdist worker (nor a pytest this one started)
        return None
    # pytest-xdist gives each worker a base temp folder inside the run's: the workers share its parent.
    basetemp = config.option.basetemp
    run_folder = Path(basetemp).parent if basetemp else Path(tempfile.gettempdir())
    return run_folder / f"a365-serial-{config.workerinput['testrunuid']}-{name}.lock"


def _lock_file(config: pytest.Config, name: str) -> IO[str] | None:
    """The run's lock file ``name``, opened once per worker."""
    path = lock_path(config, name)
    if path is None:
        return None
    if path not in _files:
        _files[path] = path.open("a")
    return _files[path]


@contextlib.contextmanager
def _held(handle: IO[str], how: int) -> Iterator[None]:
    fcntl.flock(handle, how)
    try:
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def run_alone_or_alongside(item: pytest.Item) -> Iterator[None]:
    gate, turn = _lock_file(item.config, "gate"), _lock_file(item.config, "turn")
    if gate is None or turn is None:
        yield
    elif item.get_closest_marker("serial") is not None:
        wait_for_background_installs()  # they start after the serial tests (tests/conftest.py): no wait then
        with _held(gate, fcntl.LOCK_EX), _held(turn, fcntl.LOCK_EX):
            yield
    else:
        with _held(gate, fcntl.LOCK_EX):
            fcntl.flock(turn, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(turn, fcntl.LOCK_UN)
