"""Where a test needs a service (PostgreSQL, Redis, Temporal's binaries).

On a contributor's laptop without the service the test skips, saying why; CI sets
``STEPSWITCH_REQUIRE_SERVICES=1`` (see ``.ci/run``) and the same test fails instead,
so a missing service can never turn CI green by skipping.
"""

from __future__ import annotations

import os

import pytest

__all__ = ["require_services", "service_missing"]


def require_services() -> bool:
    """True when a missing service must fail the test instead of skipping it."""
    return os.environ.get("STEPSWITCH_REQUIRE_SERVICES", "") not in ("", "0")


def service_missing(reason: str) -> None:
    """Skip (or, in CI, fail) the calling test because a service is not there."""
    if require_services():
        pytest.fail(f"required service missing (STEPSWITCH_REQUIRE_SERVICES=1): {reason}")
    pytest.skip(reason)
