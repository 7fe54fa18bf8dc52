"""Every dependency is used through its public API (issue 24).

Every module under ``packages/*/src`` is parsed; the test fails on

* an import of a private module or name of another distribution (a third-party package, the standard
  library or another of our packages): ``mcp.shared._httpx_utils``, ``from opentelemetry.metrics import
  _internal``, an extension importing ``agents_a365.tooling._x``;
* reading or writing a private attribute of an object that is not ours: ``x._name`` where ``x`` is not
  ``self``/``cls`` of a class of ours, a module or class of the same distribution, or an object of a class
  of this module that defines ``_name``; ``getattr``/``setattr``/``hasattr``/``delattr`` with a literal
  private name; ``vars(x)[...]`` on another distribution's object;
* ``self._name`` (read, written or overridden) in a class of ours where ``_name`` is a private member
  of a base class from another distribution (found in that class's namespace and source).

``ALLOWED`` lists the uses no public API can replace (each with its reason and what would remove it);
``PENDING_RESHAPING`` the violations the issue-24 branches are removing: the lead empties it as they
land. An entry that no longer matches anything fails too, so both lists stay current.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
import textwrap
import types
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ROOT / "packages"

# (file relative to packages/, what) -> reason and the upstream change or version that would remove it.
ALLOWED: dict[tuple[str, str], str] = {}

# Today's violations, removed by the issue-24 reshaping branches (w/openai, w/corehttp, w/sessions,
# w/lifetime ...). The lead deletes each entry when the branch that removes it lands; never add to it.
_CORE = "agents-a365-tooling/src/agents_a365/tooling/"
PENDING_RESHAPING: dict[tuple[str, str], str] = {}

# Underscore names that are documented public API.
PUBLIC_UNDERSCORE = frozenset({"_asdict", "_replace", "_make", "_fields", "_field_defaults"})  # namedtuple


def is_private(name: str) -> bool:
    """``_x`` but not ``__x__`` (dunder), ``_x_`` (enum's sunder API) or ``__x`` (name-mangled: our own)."""
    if not name.startswith("_") or name in PUBLIC_UNDERSCORE:
        return False
    if name.startswith("__"):
        return False
    return not (name.endswith("_") and len(name) > 2)


@dataclass(frozen=True)
class Distribution:
    folder: str
    package: str  # the import name, e.g. agents_a365.tooling.extensions.openai

    @property
    def src(self) -> Path:
        return PACKAGES / self.folder / "src"


def distributions() -> list[Distribution]:
    found = []
    for member in sorted(p for p in PACKAGES.iterdir() if (p / "pyproject.toml").is_file()):
        [typed] = (member / "src").rglob("py.typed")
        found.append(Distribution(member.name, ".".join(typed.parent.relative_to(member / "src").parts)))
    return found


DISTRIBUTIONS = distributions()


def owner(module: str) -> str | None:
    """The folder of the distribution of ours that ``module`` belongs to (longest prefix), else None."""
    best: Distribution | None = None
    for dist in DISTRIBUTIONS:
        if (module == dist.package or module.startswith(dist.package + ".")) and (
            best is None or len(dist.package) > len(best.package)
        ):
            best = dist
    return best.folder if best else None


@dataclass(frozen=True)
class Violation:
    file: str  # relative to packages/
    line: int
    what: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.file, self.what)


def dotted(node: ast.expr) -> list[str] | None:
    """``a.b.c`` -> ["a", "b", "c"]; None for anything that is not a plain name chain."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *parts]
    return None


@cache
def foreign_private_members(cls: type) -> frozenset[str]:
    """The private names a class defines: its namespace, annotations, slots and the ``self._x`` in its source."""
    names = {n for n in vars(cls) if is_private(n)}
    names |= {n for n in vars(cls).get("__annotations__", {}) if is_private(n)}
    slots = vars(cls).get("__slots__", ())
    names |= {n for n in ([slots] if isinstance(slots, str) else slots) if is_private(n)}
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):  # builtins, C types
        return frozenset(names)
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and is_private(node.attr)
        ):
            names.add(node.attr)
    return frozenset(names)


class ModuleChecker:
    def __init__(
        self, dist: Distribution, module: str, source: str, *, rel: str, is_package: bool = False
    ) -> None:
        self.dist = dist
        self.module = module
        self.is_package = is_package
        self.tree = ast.parse(source)
        self.rel = rel
        self.imports: dict[str, str] = {}  # local name -> absolute dotted target
        self.top_level: set[str] = set()  # module-level classes, functions and assignments: ours
        self.own_members: set[str] = set()  # private names the classes of this distribution define
        self.violations: list[Violation] = []

    # -- helpers --------------------------------------------------------------------------------
    def flag(self, node: ast.AST, what: str) -> None:
        self.violations.append(Violation(self.rel, getattr(node, "lineno", 0), what))

    def is_ours(self, target: str) -> bool:
        return owner(target) == self.dist.folder

    def absolute(self, node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        package = self.module.split(".")
        if not self.is_package:
            package = package[:-1]
        base = package[: len(package) - node.level + 1]
        return ".".join([*base, *([node.module] if node.module else [])])

    def resolve(self, parts: list[str]) -> str | None:
        """The absolute dotted path of a name chain rooted at an import, else None."""
        target = self.imports.get(parts[0])
        return ".".join([target, *parts[1:]]) if target is not None else None

    # -- passes ---------------------------------------------------------------------------------
    def check(self, shared: frozenset[str] = frozenset()) -> list[Violation]:
        """``shared``: the private names the other modules of the distribution define in their classes."""
        self.collect()
        self.own_members |= shared
        self.check_imports()
        for node in self.tree.body:
            self.visit(node, cls=None, receivers=frozenset(), params={})
        return self.violations

    def collect(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.imports[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        self.imports[root] = root
            elif isinstance(node, ast.ImportFrom):
                base = self.absolute(node)
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif isinstance(node, ast.ClassDef):
                for statement in node.body:  # methods, nested classes, class attributes
                    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        self.own_members.add(statement.name)
                    elif isinstance(statement, ast.Assign | ast.AnnAssign):
                        targets = (
                            statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                        )
                        self.own_members |= {
                            n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)
                        }
                for item in ast.walk(node):  # self._x = ... in its methods
                    if (
                        isinstance(item, ast.Attribute)
                        and isinstance(item.ctx, ast.Store)
                        and isinstance(item.value, ast.Name)
                        and item.value.id in ("self", "cls")
                    ):
                        self.own_members.add(item.attr)
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.top_level.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    self.top_level |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        self.own_members = {n for n in self.own_members if is_private(n)}

    def check_imports(self) -> None:
        for node in ast.walk(self.tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
                base = self.absolute(node)
                targets = [f"{base}.{alias.name}" for alias in node.names]
            elif (
                isinstance(node, ast.Call)
                and dotted(node.func) in (["importlib", "import_module"], ["import_module"], ["__import__"])
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                targets = [node.args[0].value]
            for target in targets:
                if not self.is_ours(target) and any(is_private(p) for p in target.split(".")):
                    self.flag(node, f"imports {target}")

    def foreign_bases(self, node: ast.ClassDef) -> list[type]:
        """The classes in the MRO of a module-level class of ours that belong to another distribution."""
        if node not in self.tree.body:
            return []
        cls = getattr(importlib.import_module(self.module), node.name)
        return [
            base
            for base in cls.__mro__[1:]
            if base is not object and owner(getattr(base, "__module__", "")) != self.dist.folder
        ]

    def visit(
        self, node: ast.AST, *, cls: ast.ClassDef | None, receivers: frozenset[str], params: dict[str, str]
    ) -> None:
        if isinstance(node, ast.ClassDef):
            bases = self.foreign_bases(node)
            for item in node.body:  # overriding a base's private member relies on it as much as calling it
                name = getattr(item, "name", None)
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and name is not None:
                    self.check_foreign_member(item, name, bases, "overrides")
            for child in ast.iter_child_nodes(node):
                self.visit(child, cls=node, receivers=frozenset(), params={})
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            annotated = {
                a.arg: ast.unparse(a.annotation).strip("'\"") for a in every if a.annotation is not None
            }
            new_receivers = receivers  # a function nested in a method still sees the method's self
            if cls is not None and not isinstance(node, ast.Lambda) and node in cls.body:
                positional = [*args.posonlyargs, *args.args]
                decorators = {ast.unparse(d) for d in node.decorator_list}
                if positional and "staticmethod" not in decorators:
                    new_receivers = frozenset({positional[0].arg})
            for child in ast.iter_child_nodes(node):
                self.visit(
                    child,
                    cls=cls,
                    receivers=new_receivers,
                    params={**params, **annotated},
                )
            return
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            self.check_access(node, node.value, node.attr, cls, receivers, params)
        elif isinstance(node, ast.Call):
            self.check_call(node, cls, receivers, params)
        elif isinstance(node, ast.Subscript):
            self.check_vars(node, node.value, cls, receivers, params)
        for child in ast.iter_child_nodes(node):
            self.visit(child, cls=cls, receivers=receivers, params=params)

    def check_foreign_member(self, node: ast.AST, name: str, bases: list[type], verb: str) -> None:
        if not is_private(name):
            return
        for base in bases:
            if name in foreign_private_members(base):
                self.flag(node, f"{verb} {base.__module__}.{base.__qualname__}.{name}")
                return

    def check_access(
        self,
        node: ast.AST,
        receiver: ast.expr,
        attr: str,
        cls: ast.ClassDef | None,
        receivers: frozenset[str],
        params: dict[str, str],
    ) -> None:
        is_super = (
            isinstance(receiver, ast.Call)
            and isinstance(receiver.func, ast.Name)
            and receiver.func.id == "super"
        )
        if cls is not None and (is_super or (isinstance(receiver, ast.Name) and receiver.id in receivers)):
            self.check_foreign_member(node, attr, self.foreign_bases(cls), "uses")
            return
        parts = dotted(receiver)
        if parts is not None:
            target = self.resolve(parts)
            if target is not None:  # a module or class we imported: whose is it?
                if not self.is_ours(target):
                    self.flag(node, f"{target}.{attr}")
                return
            if len(parts) == 1 and parts[0] in self.top_level:
                return
            annotation = params.get(parts[0]) if len(parts) == 1 else None
            if annotation is not None:
                target = self.resolve(annotation.split("[")[0].split(" | ")[0].split("."))
                if (target is not None and self.is_ours(target)) or annotation in self.top_level:
                    return
        if attr in self.own_members:  # e.g. other._x in a method of the class that defines _x, or a sibling's
            return
        self.flag(node, f"{ast.unparse(receiver)}.{attr}")

    def check_call(
        self, node: ast.Call, cls: ast.ClassDef | None, receivers: frozenset[str], params: dict[str, str]
    ) -> None:
        if not (
            isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
        ):
            if (
                isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and node.args
                and not (isinstance(node.args[0], ast.Constant) and not is_private(str(node.args[0].value)))
            ):
                self.check_vars(node, node.func.value, cls, receivers, params)
            return
        if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant):
            return
        name = node.args[1].value
        if isinstance(name, str) and is_private(name):
            self.check_access(node, node.args[0], name, cls, receivers, params)

    def check_vars(
        self,
        node: ast.AST,
        value: ast.expr,
        cls: ast.ClassDef | None,
        receivers: frozenset[str],
        params: dict[str, str],
    ) -> None:
        """``vars(x)[key]`` / ``vars(x).get(key)`` on another distribution's object (key not a public literal)."""
        if not (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "vars"
            and value.args
        ):
            return
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and not key.value.startswith("_"):
                return
        receiver = value.args[0]
        parts = dotted(receiver)
        if cls is not None and isinstance(receiver, ast.Name) and receiver.id in receivers:
            if not self.foreign_bases(cls):
                return
        elif parts is not None:
            target = self.resolve(parts)
            if (target is not None and self.is_ours(target)) or (
                len(parts) == 1 and parts[0] in self.top_level
            ):
                return
        self.flag(node, f"vars({ast.unparse(receiver)})[...]")


def modules() -> Iterator[tuple[Path, Distribution]]:
    for dist in DISTRIBUTIONS:
        for path in sorted(dist.src.rglob("*.py")):
            yield path, dist


def all_violations() -> list[Violation]:
    checkers = []
    for path, dist in modules():
        parts = path.relative_to(dist.src).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        source = path.read_text(encoding="utf-8")
        rel = path.relative_to(PACKAGES).as_posix()
        checkers.append(ModuleChecker(dist, module, source, rel=rel, is_package=is_package))
    shared: dict[str, set[str]] = {}  # distribution -> the private names its classes define
    for checker in checkers:
        checker.collect()
        shared.setdefault(checker.dist.folder, set()).update(checker.own_members)
    return [v for c in checkers for v in c.check(frozenset(shared[c.dist.folder]))]


SAMPLE_MODULE = "agents_a365.tooling.extensions.openai.sample"


def checked_source(source: str, shared: frozenset[str] = frozenset()) -> list[str]:
    """What the checker finds in a snippet, as if it were a module of the OpenAI extension."""
    dist = next(d for d in DISTRIBUTIONS if d.package == "agents_a365.tooling.extensions.openai")
    return [v.what for v in ModuleChecker(dist, SAMPLE_MODULE, source, rel="sample.py").check(shared)]


def test_private_names_of_the_distributions_own_classes() -> None:
    source = "def f(pool):\n    return pool._sessions"
    assert checked_source(source) == ["pool._sessions"]
    assert (
        checked_source(source, shared=frozenset({"_sessions"})) == []
    )  # defined by a class of a sibling module
    # The whole tree: every distribution's classes, imported for their bases, without error.
    assert {v.file.split("/")[0] for v in all_violations()} <= {d.folder for d in DISTRIBUTIONS}


def test_no_private_api_of_another_distribution() -> None:
    found = {v.key: v for v in all_violations()}
    pending = [found[k] for k in PENDING_RESHAPING if k in found]
    if pending:
        print(f"\nPENDING_RESHAPING: {len(pending)} private-API uses the issue-24 branches remove:")
        for v in pending:
            print(f"  {v.file}:{v.line}: {v.what}  ({PENDING_RESHAPING[v.key]})")
    unexplained = sorted(
        (v for k, v in found.items() if k not in ALLOWED and k not in PENDING_RESHAPING),
        key=lambda v: (v.file, v.line),
    )
    assert not unexplained, "private API of another distribution (use a public API):\n" + "\n".join(
        f"  {v.file}:{v.line}: {v.what}" for v in unexplained
    )
    stale = sorted(k for k in [*ALLOWED, *PENDING_RESHAPING] if k not in found)
    assert not stale, f"no longer found: remove from ALLOWED / PENDING_RESHAPING: {stale}"


def test_allow_list_stays_short_and_explained() -> None:
    assert len(ALLOWED) <= 5
    for key, reason in ALLOWED.items():
        assert len(reason) > 40, key
        assert "issue" in reason or "version" in reason or "release" in reason, key


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from mcp.shared._httpx_utils import X", ["imports mcp.shared._httpx_utils.X"]),
        ("from opentelemetry.metrics import _internal", ["imports opentelemetry.metrics._internal"]),
        ("import opentelemetry.metrics._internal as m", ["imports opentelemetry.metrics._internal"]),
        ("from agents_a365.tooling._turn import x", ["imports agents_a365.tooling._turn.x"]),
        ("from agents_a365.tooling import _helper", ["imports agents_a365.tooling._helper"]),
        ("from ._server import A", []),  # our own private module
        ("from agents_a365.tooling.extensions.openai._server import A", []),
        ("from __future__ import annotations", []),
        ("import importlib\nimportlib.import_module('mcp._x')", ["imports mcp._x"]),
        (
            "from opentelemetry import trace\nx = trace._TRACER_PROVIDER",
            ["opentelemetry.trace._TRACER_PROVIDER"],
        ),
        ("from opentelemetry import trace\nx = getattr(trace, '_P', None)", ["opentelemetry.trace._P"]),
        ("def f(session):\n    session._cookie_jar = 1", ["session._cookie_jar"]),
        ("def f(s):\n    return getattr(s, '_tool_output_schemas', None)", ["s._tool_output_schemas"]),
        ("def f(s):\n    setattr(s, '_x', 1)", ["s._x"]),
        ("def f(s):\n    return getattr(s, 'public', None), s.public, s.__dict__", []),
        ("from pydantic import BaseModel\nvars(BaseModel)['__dict__'].__set__", ["vars(BaseModel)[...]"]),
        ("from pydantic import BaseModel\nvars(BaseModel).get(k)", ["vars(BaseModel)[...]"]),
        ("class A:\n    pass\nvars(A).get('_x')", []),
        # Own classes: self._x, cls._x, other._x of a class here, a module-level name of ours.
        (
            "class A:\n    def __init__(self):\n        self._x = 1\n"
            "    def __eq__(self, other):\n        return other._x == self._x\n"
            "    @classmethod\n    def m(cls):\n        return cls._y\nA._y = 2",
            [],
        ),
        ("from . import _server\n_server._private()", []),
        # A function nested in a method: its own first argument is not self.
        (
            "class A:\n    def m(self):\n        self._x = 1\n"
            "        def inner(other):\n            return self._x, other._secret\n        return inner",
            ["other._secret"],
        ),
        # A method's local variable is not a member of its class.
        ("class A:\n    def m(self):\n        _y = 1\n\n\ndef f(x):\n    return x._y", ["x._y"]),
        ("from agents_a365.tooling import service\nservice._x", ["agents_a365.tooling.service._x"]),
        ("from __future__ import annotations\ndef f(x: A):\n    return x._y\nclass A:\n    _y = 1", []),
        # Subclasses of another distribution's class: its private members are not ours.
        (
            "from agents.mcp import MCPServerStreamableHttp\n"
            "class S(MCPServerStreamableHttp):\n"
            "    def __init__(self):\n        self._mine = 1\n        self._tools_list = []\n"
            "    async def f(self):\n        return await super()._apply_tool_filter([], None, None)\n",
            [
                "uses agents.mcp.server._MCPServerWithClientSession._tools_list",
                "uses agents.mcp.server._MCPServerWithClientSession._apply_tool_filter",
            ],
        ),
        (
            "from agents.mcp import MCPServerStreamableHttp\n"
            "class S(MCPServerStreamableHttp):\n    async def _apply_tool_filter(self, *a):\n        return []\n",
            ["overrides agents.mcp.server._MCPServerWithClientSession._apply_tool_filter"],
        ),
        (
            "from typing import NamedTuple\nclass P(NamedTuple):\n    a: int\ndef f(p: P):\n    return p._replace(a=1)",
            [],
        ),
    ],
)
def test_checker(source: str, expected: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    if "class " in source:  # the checker imports a module to read its classes' bases: give it one
        module = types.ModuleType(SAMPLE_MODULE)
        exec(compile(source, "sample", "exec"), vars(module))
        monkeypatch.setitem(sys.modules, SAMPLE_MODULE, module)
    assert sorted(checked_source(source)) == sorted(expected)
