"""The extension contract suite, for this repository's extensions and third parties' alike.

``ExtensionContractTests`` is a pytest base class (as ``langchain-tests`` ships standard tests): subclass it,
override the ``adapter_factory`` fixture with an adapter that turns the neutral conversation into your
framework's types and calls your extension's API, and run pytest. See docs/contract.md.
"""

from .adapter import ExtensionAdapter, Send, Surface
from .conversation import GENERATED, SCENARIOS, Image, Message, Part, Scenario, Text, expected_history
from .suite import AdapterFactory, ExtensionContractTests, normalize_history, run_turn, send_scenario

__all__ = [
    "GENERATED",
    "SCENARIOS",
    "AdapterFactory",
    "ExtensionAdapter",
    "ExtensionContractTests",
    "Image",
    "Message",
    "Part",
    "Scenario",
    "Send",
    "Surface",
    "Text",
    "expected_history",
    "normalize_history",
    "run_turn",
    "send_scenario",
]
