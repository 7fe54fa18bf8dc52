"""A fork server ("zygote") for the benchmarks' Python processes (scripts/bench/README.md): the child's streams go over
a Unix socket, a ``Popen`` of it waits on a pidfd, the zygote reaps it and reports its exit code. With
``BENCH_GC_FREEZE=1`` (``host.py --freeze``, the tests) the zygote imports with the collector off and freezes its
heap: a child's collections skip it (less CPU at toy size), so its CPU is no longer quite a fresh process's.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import gc
import importlib
import io
import json
import os
import runpy
import select
import selectors
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO, Any

OFF, FREEZE = "BENCH_NO_FORKSERVER", "BENCH_GC_FREEZE"
EMULATOR = ("agents_a365.emulator",)  # what `python -m agents_a365.emulator` imports
HOSTED = (  # what the emulator and a host of examples/hosted_agent/agent.py (either orchestrator) import
    *EMULATOR,
    "microsoft_agents.hosting.aiohttp",
    "agents_a365.tooling.extensions.langchain.ui_stream",
    "agents_a365.tooling.extensions.openai",
    "agents_a365.tooling.redis_store",
    "langgraph.checkpoint.memory",
)

_server: _Server | None = None
_lock = threading.Lock()


def popen(args: Sequence[str], *, preload: Sequence[str] = (), **options: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(args, **options)`` (``stdin``, ``stdout``, ``stderr``, ``env``, ``cwd``, ``text``); a child
    of the zygote, which first imports ``preload`` (modules), for ``[sys.executable, script | -m module, ...]``."""
    script = (len(args) > 2 and args[1] == "-m") or (len(args) > 1 and not args[1].startswith("-"))
    if args[0] != sys.executable or not script or not hasattr(os, "pidfd_open") or os.environ.get(OFF):
        return subprocess.Popen(args, **options)
    global _server
    with _lock:
        if _server is None:
            _server = _Server()
            atexit.register(_server.close)
    return Child(_server, list(args), preload, **options)


class _Server:
    """The benchmark's end of the zygote: a SOCK_SEQPACKET socket (one message per request or report)."""

    def __init__(self) -> None:
        self.socket, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.socket.settimeout(120)  # a report never takes that long (imports: ~6 s): a hung zygote raises
        command, null = [sys.executable, __file__, str(theirs.fileno())], subprocess.DEVNULL
        self.process = subprocess.Popen(command, pass_fds=[theirs.fileno()], stdin=null, stdout=null)
        theirs.close()
        self.lock, self.exits = threading.Lock(), dict[int, int]()

    def receive(self, want: int | None) -> tuple[int, int]:
        """Reports until the spawn reply (``want`` None: its pid and pidfd) or ``want``'s exit code."""
        while want not in self.exits:
            message, fds, _, _ = socket.recv_fds(self.socket, 1 << 16, 1)
            if not message:
                raise RuntimeError("the fork server exited")
            report = json.loads(message)
            if "pid" in report:
                return report["pid"], fds[0]
            self.exits[report["exit"]] = report["code"]
        return want, self.exits.pop(want)

    def close(self) -> None:
        self.socket.close()  # the zygote exits (its children get SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(10)


class Child(subprocess.Popen[Any]):
    """A ``Popen`` of a child of the zygote (``poll``, ``wait``, ``send_signal``, ``terminate``, ``kill``)."""

    def __init__(
        self, server: _Server, args: list[str], preload: Sequence[str], *, env: Any = None, cwd: Any = None,
        text: bool = False, **streams: Any,
    ) -> None:  # fmt: skip
        self.args, self.returncode, self._child_created, self._server = args, None, False, server
        theirs, self.stdin, self.stdout, self.stderr = [], None, None, None
        for n, name in enumerate(("stdin", "stdout", "stderr")):
            how = streams.get(name)
            if how == subprocess.PIPE:  # ours: stdin's write end, the others' read end
                read, write = os.pipe()
                pipe: IO[Any] = open(write if n == 0 else read, "wb" if n == 0 else "rb")  # noqa: SIM115
                setattr(self, name, io.TextIOWrapper(pipe, write_through=n == 0) if text else pipe)
                theirs.append((read if n == 0 else write, True))
            elif how == subprocess.DEVNULL:
                theirs.append((os.open(os.devnull, os.O_RDWR), True))
            else:  # None: this process's own; a file descriptor; a file
                theirs.append((n if how is None else how if isinstance(how, int) else how.fileno(), False))
        request = {"argv": args, "preload": list(preload), "env": dict(os.environ if env is None else env)}
        request["cwd"] = os.fspath(cwd) if cwd is not None else os.getcwd()
        try:
            with server.lock:
                socket.send_fds(server.socket, [json.dumps(request).encode()], [fd for fd, _ in theirs])
                self.pid, self._pidfd = server.receive(None)
        finally:
            for fd, ours in theirs:
                if ours:
                    os.close(fd)

    def poll(self) -> int | None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self.wait(0)
        return None

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self._pidfd], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            with self._server.lock:
                if self.returncode is None:
                    self.returncode = self._server.receive(self.pid)[1]  # the zygote reports it at once
                    os.close(self._pidfd)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, sig)


# -- the zygote ---------------------------------------------------------------------------------------------


def _serve(control: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """Fork a child per request, report each child's exit; exit when the benchmark is gone. Returns in a child:
    its request and file descriptors."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the benchmark's to handle; its hosts get it too
    children: dict[int, int] = {}  # pidfd -> pid
    with selectors.DefaultSelector() as selector:
        selector.register(control, selectors.EVENT_READ)
        while True:
            for key, _ in selector.select():
                if key.fileobj is not control:  # a child exited
                    selector.unregister(key.fd)
                    code = os.waitstatus_to_exitcode(os.waitpid(pid := children.pop(key.fd), 0)[1])
                    os.close(key.fd)
                    control.send(json.dumps({"exit": pid, "code": code}).encode())
                    continue
                message, fds, _, _ = socket.recv_fds(control, 1 << 20, 3)
                if not message:
                    os._exit(0)  # the benchmark closed its end or died
                request = json.loads(message)
                for module in request["preload"]:
                    with contextlib.suppress(ImportError):
                        importlib.import_module(module)
                if os.environ.get(FREEZE):
                    gc.freeze()
                if (pid := os.fork()) == 0:
                    for fd in children:
                        os.close(fd)
                    selector.close()
                    control.close()
                    return request, fds
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                children[pidfd] = pid
                selector.register(pidfd, selectors.EVENT_READ)
                socket.send_fds(control, [json.dumps({"pid": pid}).encode()], [pidfd])


def die_with_parent(parent: int | None = None) -> None:
    """Linux: SIGTERM when this process's parent dies (the benchmark, or the zygote), so nothing outlives an
    interrupted run; exit at once if it already has (the parent is init, or no longer ``parent``)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() == 1 or parent not in (None, os.getppid()):
        os._exit(1)


def _become(request: dict[str, Any], fds: list[int], zygote: int) -> None:
    """In the child: die with the zygote, take the request's streams, argv, environment and cwd; run it."""
    die_with_parent(zygote)
    for n, fd in enumerate(fds):
        os.dup2(fd, n)
        os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    gc.enable()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=unbuffered or stream is sys.stderr or os.isatty(stream.fileno()))  # type: ignore[union-attr]
    argv = request["argv"][1:]
    try:
        if argv[0] == "-m":
            sys.argv, sys.path[0] = argv[1:], os.getcwd()
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv, sys.path[0] = argv, os.path.dirname(os.path.realpath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
        _exit_code[0] = 0
    except SystemExit as stop:  # as Python exits: its code, or its message on stderr and 1
        if isinstance(stop.code, int | None):
            _exit_code[0] = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
            _exit_code[0] = 1


_exit_code = [1]  # a child's, once its script ended (an uncaught exception: 1, as Python)


def _exit_without_teardown() -> None:
    """The last exit function (registered first): a child exits as Python does (threads joined, the script's
    and its modules' exit functions run), minus tearing down the heap shared with the zygote (~1.5 CPU-s a
    child: copies)."""
    with contextlib.suppress(OSError, ValueError):  # a stream closed or gone
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(_exit_code[0])


if __name__ == "__main__":
    atexit.register(_exit_without_teardown)  # before any other: it runs last
    if os.environ.get(FREEZE):
        gc.disable()
    _zygote = os.getpid()
    _request, _fds = _serve(socket.socket(fileno=int(sys.argv[1])))
    # In a child: an exception or SystemExit ends it as it would end `python script.py`.
    _become(_request, _fds, _zygote)
