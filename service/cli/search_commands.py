"""Commands for exact answers: solve and census."""

from __future__ import annotations
