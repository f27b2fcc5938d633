"""The session's server on a loopback port, a channel to it, and a stub (tests/server_fixtures.py)."""

from server_fixtures import channel, server, stub

__all__ = ["channel", "server", "stub"]
