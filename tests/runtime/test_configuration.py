import pytest

from agents_a365.runtime import RuntimeConfiguration


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "CLUSTER_CATEGORY",
        "PYTHON_ENVIRONMENT",
        "ENVIRONMENT",
        "ASPNETCORE_ENVIRONMENT",
        "DOTNET_ENVIRONMENT",
    ):
        monkeypatch.delenv(name, raising=False)
    config = RuntimeConfiguration()
    assert config.cluster_category == "prod"
    assert config.environment == "Development"
    assert config.is_development


def test_environment_variables_are_read_at_access(monkeypatch: pytest.MonkeyPatch) -> None:
    config = RuntimeConfiguration()
    monkeypatch.setenv("CLUSTER_CATEGORY", " gov ")
    assert config.cluster_category == "gov"
    monkeypatch.setenv("DOTNET_ENVIRONMENT", "Production")
    monkeypatch.delenv("PYTHON_ENVIRONMENT", raising=False)
    monkeypatch.delenv("ENVIRONMENT", raising=False)
    monkeypatch.delenv("ASPNETCORE_ENVIRONMENT", raising=False)
    assert not config.is_development
    monkeypatch.setenv("PYTHON_ENVIRONMENT", "development")  # first in the order wins
    assert config.is_development


def test_override_value_beats_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTER_CATEGORY", "gov")
    assert RuntimeConfiguration(cluster_category="test").cluster_category == "test"


def test_callable_override_is_evaluated_at_each_access() -> None:
    tenants = iter(["tenant-a", "tenant-b"])
    config = RuntimeConfiguration(cluster_category=lambda: next(tenants))
    assert config.cluster_category == "tenant-a"
    assert config.cluster_category == "tenant-b"


def test_a_subclass_sets_its_own_settings_through_the_public_set_overrides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agents_a365.runtime.settings import Setting, parse_float

    class Configuration(RuntimeConfiguration):
        timeout = Setting("TEST_TIMEOUT", 10.0, parse_float)

        def __init__(self, *, timeout: float | None = None, environment: str | None = None) -> None:
            super().__init__(environment=environment)
            self.set_overrides(timeout=timeout)

    monkeypatch.setenv("TEST_TIMEOUT", "3")
    assert Configuration().timeout == 3.0  # None overrides nothing
    configured = Configuration(timeout=1.5, environment="Production")
    assert (configured.timeout, configured.environment) == (1.5, "Production")
    configured.set_overrides(timeout=lambda: 2.5, environment=None)  # None keeps the earlier override
    assert (configured.timeout, configured.environment) == (2.5, "Production")


def test_a_default_may_be_a_function_of_the_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    from agents_a365.runtime.settings import Setting, parse_float

    class Configuration(RuntimeConfiguration):
        timeout = Setting("TEST_TIMEOUT", 10.0, parse_float)
        connect_timeout = Setting("TEST_CONNECT_TIMEOUT", lambda config: config.timeout / 2, parse_float)

    monkeypatch.delenv("TEST_CONNECT_TIMEOUT", raising=False)
    monkeypatch.setenv("TEST_TIMEOUT", "3")
    configuration = Configuration()
    assert configuration.connect_timeout == 1.5  # read at each access: follows the other setting
    configuration.set_overrides(timeout=8.0)
    assert configuration.connect_timeout == 4.0
    monkeypatch.setenv("TEST_CONNECT_TIMEOUT", "1")
    assert configuration.connect_timeout == 1.0
