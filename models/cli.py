"""The ``smp-contention`` command line (also ``python -m models``).

Subcommands are what-if calculations that print tables::

    smp-contention                      # the default what-if report
    smp-contention lopc --P 16 --W 1000 --o 100 --L 50
    smp-contention ini --N 1,2,4,8 --W 41789 --o 742 --O 2336 --format md

Model subcommands come from the :mod:`models` modules (each defines
``register_cli``).  Other packages add subcommands (``validate``, ``simulate``,
``sweep``) through the ``smp_contention.commands`` entry-point group, so that
:mod:`models` never imports the simulator.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from importlib.metadata import entry_points
from typing import Sequence

from mva._version import __version__

__all__ = ["main", "build_parser", "MODEL_COMMANDS"]

#: modules of :mod:`models` that define ``register_cli(subparsers)``
MODEL_COMMANDS: tuple[str, ...] = ("lopc", "ini", "policy", "cost", "pdq", "layers", "mechanisms",
                                   "sweep_cli")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (used by :func:`main` and the docs)."""
    parser = argparse.ArgumentParser(
        prog="smp-contention",
        description="Contention and protocol-processing what-if models for clusters of SMPs. "
                    "With no subcommand, prints the default what-if report.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from . import whatif
    whatif.register_cli(sub)
    for name in MODEL_COMMANDS:
        importlib.import_module(f"models.{name}").register_cli(sub)
    for ep in entry_points(group="smp_contention.commands"):
        ep.load()(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["whatif", *(argv or [])])
    try:
        out = args.func(args)
    except ValueError as exc:  # bad parameter values: a clear one-line error
        parser.exit(2, f"smp-contention {args.command}: error: {exc}\n")
    if isinstance(out, str):
        sys.stdout.write(out if out.endswith("\n") else out + "\n")
    return 0
