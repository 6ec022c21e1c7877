"""The ``sweep`` command (implemented in :mod:`models.sweep_cli`)."""

from __future__ import annotations

from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``sweep`` subcommand."""
    from models.sweep_cli import register_cli

    register_cli(subparsers)
