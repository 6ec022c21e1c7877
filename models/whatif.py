"""The default what-if report: ``smp-contention`` with no subcommand.

It answers the product's first questions with default parameters, in a few
milliseconds, as tables:

1. How much does contention add to a request/reply round trip?  LoPC on
   ``P`` processors over a range of compute times ``W``.
2. How does INI contention grow with the number of PEs sharing an INI?  The
   thesis model with the parameters of its Figure 6-3.
3. Fixed, Floating or Single protocol processing?  The policy model on the
   paper's null-handler and fetch-block presets.

Every table comes from the models; nothing here is typed in by hand.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mva.table import Table

__all__ = ["report", "register_cli"]

#: default compute times swept in the LoPC table (cycles)
DEFAULT_W = (250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)
#: default PEs per INI swept in the INI table
DEFAULT_N = (1, 2, 4, 8, 16)


def _lopc_table(P: int, o: float, L: float, W: Any) -> Table:
    from models import lopc

    W = np.asarray(W, dtype=float)
    r = lopc.solve(lopc.LoPCParams(P=P, W=W, o=o, L=L), method="lopc")
    free = np.asarray(r.contention_free)
    return Table.from_columns(
        {"W": W, "no-contention R": free, "R": r.R, "contention": r.contention,
         "contention %": 100.0 * np.asarray(r.contention) / free, "U_q": r.U_q},
        title=f"LoPC round trip on P={P} processors (o={o:g}, L={L:g} cycles)",
        formats={"no-contention R": ".1f", "R": ".1f", "contention": ".1f",
                 "contention %": ".1f", "U_q": ".3f"})


def _ini_table(N: Any) -> Table:
    from models import ini

    N = np.asarray(N, dtype=float)
    r = ini.solve(ini.INIParams(N=N, **ini.FIGURE_6_3), method="thesis")
    return Table.from_columns(
        {"N": N.astype(int), "R": r.R, "contention": r.contention, "Q_o": r.Q_o,
         "U_o": r.U_o, "bottleneck": np.broadcast_to(np.asarray(r.bottleneck, dtype=object),
                                                     N.shape)},
        title="INI queue against PEs per INI (thesis Fig. 6-3: W=41789, o=742, O=2336, "
              "l=L=0)",
        formats={"R": ".1f", "contention": ".1f", "Q_o": ".3f", "U_o": ".3f"})


def _policy_table() -> Table:
    """Fixed/Floating/Single on the paper's presets."""
    from models import policy

    return policy.whatif_table()


def report(*, P: int = 16, o: float = 100.0, L: float = 50.0,
           W: Any = DEFAULT_W, N: Any = DEFAULT_N) -> list[Table]:
    """The default what-if tables.

    Parameters
    ----------
    P : int, default 16
        Processors in the LoPC table.
    o, L : float, default 100, 50
        Handler occupancy and network latency of the LoPC table (cycles).
    W : sequence of float
        Compute times swept in the LoPC table (cycles).
    N : sequence of int
        PEs per INI swept in the INI table.

    Returns
    -------
    list of mva.table.Table

    Examples
    --------
    >>> tables = report(W=[1000.0], N=[1, 4])
    >>> round(float(tables[0]["R"][0]))   # LoPC equations; simulators give 1404.7-1407.6
    1409
    >>> [int(n) for n in tables[1]["N"]]
    [1, 4]
    """
    return [_lopc_table(P, o, L, W), _ini_table(N), _policy_table()]


def register_cli(subparsers: Any) -> None:
    """Add the ``whatif`` subcommand (kept for compatibility: see :mod:`models.cli.whatif`)."""
    from models.cli.whatif import register

    register(subparsers)
