"""Context factories for ``stepswitch run --context``."""

from tests.interop.sdk_apps.support import Account


def ada() -> Account:
    return Account("ada")


def broken() -> Account:
    raise RuntimeError("no database")
