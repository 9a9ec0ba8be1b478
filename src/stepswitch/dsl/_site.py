"""Declaration sites; lives in the shared leaf :mod:`stepswitch._site`."""

from stepswitch._site import Site, caller_site, display_path, function_site

__all__ = ["Site", "caller_site", "display_path", "function_site"]
