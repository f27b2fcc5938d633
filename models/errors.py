"""Errors of the learned half of boaf, each in its branch of ``boaf.game.errors``."""

from __future__ import annotations

from boaf.game.errors import Failure, InvalidInput, Stopped


class ModelError(Failure):
    """A model artifact is missing, malformed, or was trained on another feature schema."""


class DatasetError(InvalidInput):
    """A dataset cannot be generated or read as asked."""


class ClassifyStopped(Stopped):
    """The cancel flag was set before every state of the batch had its answer."""
