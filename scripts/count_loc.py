"""Count the library's code lines: no docstrings, no comments, no blank lines.

    uv run python scripts/count_loc.py [--max 5000] [paths...]

Counts the ``src`` of the four library packages (runtime, tooling and the two extensions; not the
emulator, which is a test tool) by default, prints one line per package and the total, and exits 1 when
``--max`` is given and the total is above it (issue 24: at most 5,000).

A line counts when a token other than a comment, a newline or indentation starts or continues on it,
and it is not part of a docstring (a string literal that is the first statement of a module, class or
function, or an attribute docstring: one right after a simple assignment in a module, a class or ``__init__``,
PEP 257's "additional docstrings"). A multi-line string that is not a docstring counts all its lines. stdlib only.
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = (
    "agents-a365-runtime",
    "agents-a365-tooling",
    "tooling-extensions-langchain",
    "tooling-extensions-openai",
)
_LAYOUT = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
_LAYOUT |= {tokenize.ENDMARKER, tokenize.ENCODING}


def _is_text(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def docstring_lines(tree: ast.Module) -> set[int]:
    """The line numbers of every docstring (with its continuation lines), as PEP 257 defines them: the
    first statement of a module, class or function, and an attribute docstring (a string right after a
    simple assignment at the top of a module or class, or in ``__init__``), which Sphinx documents too."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        attributes = isinstance(node, ast.Module | ast.ClassDef) or getattr(node, "name", "") == "__init__"
        for index, statement in enumerate(node.body):
            previous = node.body[index - 1] if index else None
            first = index == 0
            after_assignment = attributes and isinstance(previous, ast.Assign | ast.AnnAssign)
            if _is_text(statement) and (first or after_assignment):
                lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return lines


def count_source(source: str) -> int:
    """Code lines of one module's text."""
    code: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _LAYOUT:
            code.update(range(token.start[0], token.end[0] + 1))
    return len(code - docstring_lines(ast.parse(source)))


def count_tree(folder: Path) -> int:
    return sum(count_source(path.read_text(encoding="utf-8")) for path in sorted(folder.rglob("*.py")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--max", type=int, help="exit 1 when the total is above this")
    parser.add_argument(
        "folders", nargs="*", type=Path, help="folders to count (default: the four library packages' src)"
    )
    args = parser.parse_args(argv)
    folders = args.folders or [ROOT / "packages" / name / "src" for name in LIBRARY]
    total = 0
    for folder in folders:
        lines = count_tree(folder)
        total += lines
        label = folder.parent.name if folder.name == "src" else str(folder)
        print(f"{lines:>7,}  {label}")
    print(f"{total:>7,}  total")
    if args.max is not None and total > args.max:
        print(f"library size {total:,} code lines is above the limit of {args.max:,}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
