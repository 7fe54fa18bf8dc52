"""Each installed extension against the contract suite the emulator distribution ships (one adapter each)."""

from __future__ import annotations

import pytest

from agents_a365.emulator.contract import AdapterFactory, ExtensionContractTests
from contract.adapters import ADAPTERS


@pytest.mark.skipif("langchain" not in ADAPTERS, reason="the LangChain extension is not installed here")
class TestLangChainExtension(ExtensionContractTests):
    @pytest.fixture
    def adapter_factory(self) -> AdapterFactory:
        return ADAPTERS["langchain"]


@pytest.mark.skipif("openai" not in ADAPTERS, reason="the OpenAI extension is not installed here")
class TestOpenAIExtension(ExtensionContractTests):
    @pytest.fixture
    def adapter_factory(self) -> AdapterFactory:
        return ADAPTERS["openai"]


@pytest.mark.skipif("langchain" not in ADAPTERS, reason="the LangChain extension is not installed here")
class TestLangChainBuildOnce(ExtensionContractTests):
    @pytest.fixture
    def adapter_factory(self) -> AdapterFactory:
        return ADAPTERS["langchain-once"]


@pytest.mark.skipif("openai" not in ADAPTERS, reason="the OpenAI extension is not installed here")
class TestOpenAIBuildOnce(ExtensionContractTests):
    @pytest.fixture
    def adapter_factory(self) -> AdapterFactory:
        return ADAPTERS["openai-once"]
