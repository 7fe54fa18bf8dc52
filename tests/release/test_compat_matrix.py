"""scripts/compat_matrix.py plans against the real release tags (what a run prints: docs/releasing.md)."""

from __future__ import annotations

import re

import pytest

from release.release_support import ROOT, git, script


def test_the_plan_pairs_each_extension_with_the_released_core_and_back() -> None:
    if not git(ROOT, "tag", "--list", "*==*").strip():
        pytest.skip("this clone has no release tags (<distribution>==<version>) to plan against")
    done = script("compat_matrix.py", "--plan")
    assert done.returncode == 0, done.stderr
    rows = re.findall(
        r"^\s+(\w+)@(head|release) \+ core@(head|release)\s+(allowed|skipped \(by range\))", done.stdout, re.M
    )
    assert sorted((e, x, c) for e, x, c, _ in rows) == [
        ("langchain", "head", "release"),
        ("langchain", "release", "head"),
        ("openai", "head", "release"),
        ("openai", "release", "head"),
    ]
    # Every verdict names the ranges it read, so a reader can check it.
    assert all("agents-a365-tooling" in line for line in done.stdout.splitlines()[1:] if "@" in line)


def test_an_unknown_ref_is_a_clear_error() -> None:
    done = script("compat_matrix.py", "--plan", "--ref", "no-such-ref")
    assert done.returncode != 0
    assert "unknown ref 'no-such-ref'" in done.stderr
