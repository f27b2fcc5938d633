"""Package versions: what importlib.metadata says, or the caller's word for a package that is not installed."""

from __future__ import annotations

from importlib import metadata

import numpy as np

from boaf.models.provenance import package_version


def test_an_installed_package_has_its_installed_version() -> None:
    assert package_version("numpy") == metadata.version("numpy")
    assert np.__version__.startswith(package_version("numpy").split("+")[0])


def test_a_package_that_is_not_installed_has_the_callers_placeholder() -> None:
    assert package_version("boaf-no-such-distribution") == "not installed"
    assert package_version("boaf-no-such-distribution", missing="0+unknown") == "0+unknown"
