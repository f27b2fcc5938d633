"""Errors of the learned half of boaf."""

from __future__ import annotations

from game.errors import BoafError


class ModelError(BoafError):
    """A model artifact is missing, malformed, or was trained on another feature schema."""


class DatasetError(BoafError):
    """A dataset cannot be generated or read as asked."""
