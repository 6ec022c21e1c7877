"""Deprecated location of the command-line helpers: see :mod:`models.cli._common`."""

from models.cli._common import add_common, emit, int_list, number_list  # noqa: F401

__all__ = ["number_list", "int_list", "add_common", "emit"]
