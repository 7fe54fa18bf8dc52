import pytest

from agents_a365.runtime import OperationError, OperationResult


def test_success_is_a_shared_singleton() -> None:
    assert OperationResult.success() is OperationResult.success()
    assert OperationResult.success().succeeded
    assert OperationResult.success().errors == ()
    assert str(OperationResult.success()) == "Succeeded"


def test_failed_lists_every_error_message() -> None:
    result = OperationResult.failed(
        OperationError(RuntimeError("first")), OperationError(ValueError("second"))
    )
    assert not result.succeeded
    assert not result
    assert [e.message for e in result.errors] == ["first", "second"]
    assert str(result) == "Failed : first, second"


def test_failed_accepts_bare_exceptions() -> None:
    boom = RuntimeError("boom")
    result = OperationResult.failed(boom)
    assert result.errors[0].exception is boom


def test_failed_results_are_distinct_objects() -> None:
    assert OperationResult.failed(RuntimeError("a")) is not OperationResult.failed(RuntimeError("a"))


def test_operation_error_requires_an_exception() -> None:
    with pytest.raises(ValueError, match="exception is required"):
        OperationError(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        OperationError("not an exception")  # type: ignore[arg-type]


def test_operation_error_message_falls_back_to_the_type_name() -> None:
    assert OperationError(TimeoutError()).message == "TimeoutError"
    assert "RuntimeError" in repr(OperationError(RuntimeError("x")))


def test_results_and_errors_are_read_only_and_errors_equal_by_their_exception() -> None:
    boom = RuntimeError("boom")
    assert OperationError(boom) == OperationError(boom)
    assert hash(OperationError(boom)) == hash(OperationError(boom))
    assert OperationError(boom) != OperationError(RuntimeError("boom"))
    given = [OperationError(boom)]
    result = OperationResult(False, given)
    given.clear()
    assert result.errors == (OperationError(boom),)
    with pytest.raises(AttributeError):
        result.succeeded = True  # type: ignore[misc]
    with pytest.raises(AttributeError):
        OperationError(boom).exception = ValueError()  # type: ignore[misc]


def test_require_returns_the_value_and_names_a_missing_argument() -> None:
    from agents_a365.runtime import require

    value: list[int] = []
    assert require(value, "history") is value  # a falsy value is given, not missing
    with pytest.raises(ValueError, match=r"^turn_context\.activity is required$"):
        require(None, "turn_context.activity")
