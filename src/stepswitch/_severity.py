"""The three severities of a diagnostic. A shared leaf module: the analyzer makes
diagnostics with them and the renderers colour them, without importing each other."""

from typing import Literal, TypeAlias

__all__ = ["Severity"]

Severity: TypeAlias = Literal["error", "warning", "info"]
