"""Async client of the Screvi public API, for the hosted service and the embedded library."""

from screvi_mcp.client.client import DEFAULT_BASE_URL, ScreviClient, mask_key
from screvi_mcp.client.errors import (
    ConflictError,
    InsufficientScopeError,
    InternalServerError,
    InvalidApiKeyError,
    InvalidParameterError,
    LegacyKeyReadOnlyError,
    MissingApiKeyError,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitedError,
    ScreviAPIError,
    ScreviConnectionError,
    ScreviError,
    ScreviTimeoutError,
    SubscriptionRequiredError,
    UnexpectedResponseError,
    ValidationFailedError,
)
from screvi_mcp.client.inputs import NewHighlight
from screvi_mcp.client.params import UNSET, Unset
from screvi_mcp.client.ratelimit import RateLimiter
from screvi_mcp.client.results import CreatedTag, SourceWithHighlightsPage
from screvi_mcp.client.retry import RetryPolicy
from screvi_mcp.client.skill import SkillFile, SkillFileUnavailable, load_bundled_skill

__all__ = [
    "DEFAULT_BASE_URL",
    "UNSET",
    "ConflictError",
    "CreatedTag",
    "InsufficientScopeError",
    "InternalServerError",
    "InvalidApiKeyError",
    "InvalidParameterError",
    "LegacyKeyReadOnlyError",
    "MissingApiKeyError",
    "NewHighlight",
    "NotFoundError",
    "PayloadTooLargeError",
    "RateLimitedError",
    "RateLimiter",
    "RetryPolicy",
    "ScreviAPIError",
    "ScreviClient",
    "ScreviConnectionError",
    "ScreviError",
    "ScreviTimeoutError",
    "SkillFile",
    "SkillFileUnavailable",
    "SourceWithHighlightsPage",
    "SubscriptionRequiredError",
    "UnexpectedResponseError",
    "Unset",
    "ValidationFailedError",
    "load_bundled_skill",
    "mask_key",
]
