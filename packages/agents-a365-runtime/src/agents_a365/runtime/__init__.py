"""Agent 365 runtime: operation results, settings, token helpers and agent identity."""

from .arguments import require
from .authentication import AgenticAuthenticationService
from .configuration import RuntimeConfiguration
from .identity import get_application_name, resolve_agent_identity
from .operation_result import OperationError, OperationResult
from .protocols import AuthorizationLike, TokenResponseLike, TurnContextLike
from .tokens import (
    InvalidTokenError,
    MalformedTokenError,
    TokenExpiredError,
    TokenMissingExpiryError,
    TokenPayloadError,
    decode_token_payload,
    get_agent_id_from_token,
    get_app_id_from_token,
    validate_token,
)
from .user_agent import get_sdk_version, get_user_agent_header

__all__ = [
    "AgenticAuthenticationService",
    "AuthorizationLike",
    "InvalidTokenError",
    "MalformedTokenError",
    "OperationError",
    "OperationResult",
    "RuntimeConfiguration",
    "TokenExpiredError",
    "TokenMissingExpiryError",
    "TokenPayloadError",
    "TokenResponseLike",
    "TurnContextLike",
    "decode_token_payload",
    "get_agent_id_from_token",
    "get_app_id_from_token",
    "get_application_name",
    "get_sdk_version",
    "get_user_agent_header",
    "require",
    "resolve_agent_identity",
    "validate_token",
]
