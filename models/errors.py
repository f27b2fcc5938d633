"""Errors of the learned half of boaf, each in its branch of ``game.errors``."""

from __future__ import annotations

from game.errors import Failure, InvalidInput


class ModelError(Failure):
    """A model artifact is missing, malformed, or was trained on another feature schema."""


class DatasetError(InvalidInput):
    """A dataset cannot be generated or read as asked."""
