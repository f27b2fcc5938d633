"""Benchmarks: scripts that print figures, run from the repository's root as ``python benchmarks/<name>.py``.

They are a package so that they import one another, and tests import them, as ``benchmarks.<name>``
(the root is on pytest's ``pythonpath``; a script run directly puts the root first on ``sys.path``).
Nothing here ships in a distribution.
"""
