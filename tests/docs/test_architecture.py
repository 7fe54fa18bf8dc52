"""docs/architecture.md names modules that exist: a moved or renamed module fails here, not in a reader's hands."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
SOURCES = [p for p in ROOT.glob("packages/*/src/agents_a365/**/*.py")]


def _named_modules() -> set[str]:
    # `tooling/_history.py`, `_discovery.py`, `langchain/_connections.py` …
    return set(re.findall(r"`((?:[\w]+/)*\w+\.py)`", PAGE.read_text(encoding="utf-8")))


def test_every_module_the_page_names_exists() -> None:
    names = _named_modules()
    assert len(names) > 15  # the table is there
    missing = [name for name in sorted(names) if not any(p.as_posix().endswith("/" + name) for p in SOURCES)]
    assert missing == []


def test_no_source_module_is_much_longer_than_one_concern() -> None:
    # "about 300 lines at most": a margin of 10% for docstrings.
    long = {
        p.relative_to(ROOT).as_posix(): n for p in SOURCES if (n := len(p.read_text().splitlines())) > 330
    }
    assert long == {}
