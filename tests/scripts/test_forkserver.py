"""The benchmarks' fork server (issue 39): a child forked from the zygote is, for the benchmark, a ``python
script.py`` process of its own: its argv, environment, cwd and streams, its pid for signals, its exit code;
closing its stdin stops a host; it dies when the benchmark dies. Real processes."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "bench"))
import _forkserver as forkserver

BENCH = Path(forkserver.__file__).parent

SCRIPT = """\
import json, os, signal, sys
signal.signal(signal.SIGUSR1, lambda *_: print("usr1", flush=True))
print(json.dumps({"argv": sys.argv, "name": __name__, "cwd": os.getcwd(), "x": os.environ.get("X"),
                  "path0": sys.path[0], "ppid": os.getppid()}), flush=True)
print("err", file=sys.stderr, flush=True)
for line in sys.stdin:  # until stdin closes: the benchmark's signal to stop
    print(line.strip().upper(), flush=True)
sys.exit(int(sys.argv[1]))
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "child.py"
    path.write_text(SCRIPT)
    return path


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for child in started:
        child.kill()
        child.wait(30)
        for pipe in (child.stdin, child.stdout):
            if pipe is not None:
                pipe.close()


def start(children: list[subprocess.Popen[str]], args: list[str], **options: object) -> subprocess.Popen[str]:
    pipe = subprocess.PIPE
    child = forkserver.popen([sys.executable, *args], stdin=pipe, stdout=pipe, text=True, **options)  # type: ignore[arg-type]
    children.append(child)
    return child


def test_a_child_runs_its_script_with_its_argv_env_cwd_and_streams_and_reports_its_exit_code(
    script: Path, tmp_path: Path, children: list[subprocess.Popen[str]]
) -> None:
    err = tmp_path / "err.log"
    with open(err, "w") as log:
        child = start(children, [str(script), "3", "two words"], env={"X": "y"}, cwd="/", stderr=log)
    assert isinstance(child, forkserver.Child)
    assert child.stdin is not None
    assert child.stdout is not None
    seen = json.loads(child.stdout.readline())
    assert seen == {
        "argv": [str(script), "3", "two words"],
        "name": "__main__",
        "cwd": "/",
        "x": "y",
        "path0": str(tmp_path),
        "ppid": seen["ppid"],
    }
    assert seen["ppid"] not in (os.getpid(), 1)  # forked from the zygote
    assert child.poll() is None
    child.stdin.write("hello\n")
    child.stdin.flush()
    assert child.stdout.readline() == "HELLO\n"
    child.stdin.close()  # the script stops
    assert child.wait(30) == 3 == child.returncode
    assert err.read_text() == "err\n"


def test_a_module_runs_as_python_dash_m_in_its_cwd(
    tmp_path: Path, children: list[subprocess.Popen[str]]
) -> None:
    (tmp_path / "child_module.py").write_text(SCRIPT)
    child = start(children, ["-m", "child_module", "0"], cwd=tmp_path)
    assert child.stdin is not None
    assert child.stdout is not None
    seen = json.loads(child.stdout.readline())
    assert seen["argv"] == [str(tmp_path / "child_module.py"), "0"]
    assert (seen["name"], seen["path0"]) == ("__main__", str(tmp_path))
    child.stdin.close()
    assert child.wait(30) == 0


EXITS = """\
import atexit, os, sys
sys.stdout = os.fdopen(1, "w", buffering=1 << 16)  # block-buffered, even with PYTHONUNBUFFERED
atexit.register(lambda: print("atexit"))
print("buffered")  # in the buffer until the exit flushes it
if sys.argv[1:]:
    sys.exit(sys.argv[1])
"""


@pytest.mark.parametrize(("argv", "code", "err"), [([], 0, ""), (["why"], 1, "why\n")])
def test_a_child_exits_as_python_does_its_exit_functions_run_and_its_output_is_flushed(
    tmp_path: Path, argv: list[str], code: int, err: str
) -> None:
    (tmp_path / "exits.py").write_text(EXITS)
    pipe = subprocess.PIPE
    child = forkserver.popen(
        [sys.executable, str(tmp_path / "exits.py"), *argv], stdout=pipe, stderr=pipe, text=True
    )
    assert isinstance(child, forkserver.Child)
    assert child.stdout is not None
    assert child.stderr is not None
    with child.stdout, child.stderr:
        assert (child.stdout.read(), child.stderr.read(), child.wait(30)) == ("buffered\natexit\n", err, code)


def test_signals_reach_the_child_by_its_pid_and_terminate_and_kill_end_it(
    script: Path, children: list[subprocess.Popen[str]]
) -> None:
    first, second = (start(children, [str(script), "0"]) for _ in range(2))
    for child in (first, second):
        assert child.stdout is not None
        json.loads(child.stdout.readline())
    os.kill(first.pid, signal.SIGUSR1)  # as the benchmark asks a host for its tasks
    assert first.stdout is not None
    assert first.stdout.readline() == "usr1\n"
    with pytest.raises(subprocess.TimeoutExpired):
        first.wait(0.1)
    first.terminate()
    second.kill()
    assert (first.wait(30), second.wait(30)) == (-signal.SIGTERM, -signal.SIGKILL)


def test_other_commands_are_plain_subprocesses(children: list[subprocess.Popen[str]]) -> None:
    child = start(children, ["-c", "print('plain')"])
    assert type(child) is subprocess.Popen
    assert child.communicate(timeout=30) == ("plain\n", None)


GC_STATE = "import gc; print(gc.isenabled(), gc.get_freeze_count() > 0)\n"


@pytest.mark.parametrize(("freeze", "seen"), [("", "True False\n"), ("1", "True True\n")])
def test_with_bench_gc_freeze_a_child_collects_but_not_the_zygotes_frozen_heap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, freeze: str, seen: str
) -> None:
    monkeypatch.setenv(forkserver.FREEZE, freeze)
    (tmp_path / "gc_state.py").write_text(GC_STATE)
    server = forkserver._Server()  # a zygote of its own, started with (or without) the flag
    try:
        argv = [sys.executable, str(tmp_path / "gc_state.py")]
        child = forkserver.Child(server, argv, (), stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        with child.stdout:
            assert (child.stdout.read(), child.wait(30)) == (seen, 0)
    finally:
        server.close()


def _gone(pid: int, deadline: float) -> bool:
    """Whether process ``pid`` (not our child) exits before ``deadline``."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([pidfd], [], [], max(0.0, deadline - time.monotonic()))[0])
    finally:
        os.close(pidfd)


BENCHMARK = f"""\
import os, subprocess, sys
sys.path.insert(0, {str(BENCH)!r})
import _forkserver
child = _forkserver.popen([sys.executable, {{script!r}}], stdin=subprocess.DEVNULL)
print(child.pid, _forkserver._server.process.pid, flush=True)
sys.stdin.read()
"""


def test_the_children_and_the_zygote_die_with_the_benchmark(tmp_path: Path) -> None:
    script = tmp_path / "forever.py"
    script.write_text("import signal\nsignal.pause()\n")  # nothing to read, nothing ends it but a signal
    code = BENCHMARK.format(script=str(script))
    pipe = subprocess.PIPE
    with subprocess.Popen([sys.executable, "-c", code], stdin=pipe, stdout=pipe, text=True) as benchmark:
        assert benchmark.stdout is not None
        child, zygote = map(int, benchmark.stdout.readline().split())
        assert not _gone(child, time.monotonic() + 0.2)
        benchmark.kill()  # no clean-up of its own
        deadline = time.monotonic() + 30
        assert _gone(zygote, deadline)
        assert _gone(child, deadline)
