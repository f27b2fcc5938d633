"""Where a model or a server came from: the installed versions of the packages behind it.

A model card lists the versions of the packages that built it (``boaf.jobs.retrain``),
and the service reports boaf's own version (GetServerInfo, the OpenAPI document).
"""

from __future__ import annotations

from importlib import metadata


def package_version(name: str, missing: str = "not installed") -> str:
    """The installed version of the distribution ``name`` (e.g. ``"numba"``), or ``missing`` if it is not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return missing
