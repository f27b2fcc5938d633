"""Commands for features: show, export and Kahn's sieve."""

from __future__ import annotations
