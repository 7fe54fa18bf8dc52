"""Environment-backed settings for configuration classes (runtime's and the tooling packages').

A :class:`Setting` descriptor reads an instance override, then the first set environment
variable, then its default; :data:`Override` is what an override may be (a value or a callable).
"""

from __future__ import annotations

from ._env import Override, Setting, parse_bool, parse_float, parse_str

__all__ = ["Override", "Setting", "parse_bool", "parse_float", "parse_str"]
