"""Entry point by name: ``mva.solve(network, method=...)``.

=====================  ===========================================================
method                 solver
=====================  ===========================================================
``"exact"``            :func:`mva.exact.exact_mva` (open networks: :func:`mva.open.solve_open`)
``"schweitzer"``       :func:`mva.approx.schweitzer` (alias ``"bard-schweitzer"``)
``"linearizer"``       :func:`mva.approx.linearizer`
``"seidmann"``         :func:`mva.approx.seidmann` (multi-server stations by Seidmann)
``"rolia"``            :func:`mva.approx.rolia` (multi-server stations by Rolia)
``"linearizer-ms"``    :func:`mva.approx.linearizer_ms` (multi-server Linearizer, Conway)
``"convolution"``      :func:`mva.normalizing.convolution` (normalizing constant)
``"auto"``             exact when the population lattice has at most
                       ``auto_limit`` vectors (default 100,000) or the network has
                       load-dependent stations, Linearizer otherwise
=====================  ===========================================================
"""

from __future__ import annotations

import sys
from typing import Any

from ._validate import check_choice, check_kwargs
__all__ = ["solve", "METHODS"]

#: method name -> keyword options it accepts
METHODS: dict[str, tuple[str, ...]] = {
    "exact": ("max_states",),
    "schweitzer": ("tol", "max_iter", "on_fail", "multiserver"),
    "bard-schweitzer": ("tol", "max_iter", "on_fail", "multiserver"),
    "linearizer": ("tol", "max_iter", "on_fail", "multiserver", "passes"),
    "seidmann": ("base", "tol", "max_iter", "on_fail", "max_states"),
    "rolia": ("base", "tol", "max_iter", "on_fail"),
    "linearizer-ms": ("tol", "max_iter", "on_fail", "passes"),
    "convolution": ("max_states",),
    "auto": ("auto_limit", "max_states", "tol", "max_iter", "on_fail", "multiserver"),
}


def _solver(method: str) -> Any:
    if method == "exact":
        from .exact import exact_mva
        return exact_mva
    if method == "convolution":
        from .normalizing import convolution
        return convolution
    from . import approx
    return {"schweitzer": approx.schweitzer, "bard-schweitzer": approx.schweitzer,
            "linearizer": approx.linearizer, "seidmann": approx.seidmann,
            "rolia": approx.rolia, "linearizer-ms": approx.linearizer_ms}[method]


def solve(network: Any, method: str = "exact", **options: Any) -> Any:
    """Solve a queueing network with the named method.

    Parameters
    ----------
    network : ClosedNetwork, OpenNetwork or MixedNetwork
        The network.  An :class:`~mva.open.OpenNetwork` is solved by
        :func:`~mva.open.solve_open` (``method="exact"`` only); a
        :class:`~mva.mixed.MixedNetwork` by :func:`~mva.mixed.solve_mixed`
        with ``method`` as its closed solver.
    method : str
        One of ``"exact"``, ``"schweitzer"`` (``"bard-schweitzer"``),
        ``"linearizer"``, ``"seidmann"``, ``"rolia"``, ``"linearizer-ms"``, ``"convolution"``,
        ``"auto"``.
    **options
        Keyword options of that method (see :data:`METHODS`), e.g. ``tol``,
        ``max_iter``, ``on_fail``.

    Returns
    -------
    MVAResult, OpenNetworkResult or MixedResult

    Raises
    ------
    ValueError
        For an unknown method or an option the method does not accept (the
        message lists the allowed values).

    Examples
    --------
    >>> from mva.network import ClosedNetwork
    >>> net = ClosedNetwork.single_class([1.0, 2.0, 0.5], population=10, think_time=5.0)
    >>> round(float(solve(net).throughput[0]), 6)
    0.495751
    >>> solve(net, method="schweitzer", tol=1e-10).method
    'schweitzer'
    >>> solve(net, method="magic")
    Traceback (most recent call last):
    ...
    ValueError: method must be one of 'exact', 'schweitzer', 'bard-schweitzer', 'linearizer', 'seidmann', 'rolia', 'linearizer-ms', 'convolution', 'auto'; got 'magic'
    >>> solve(net, method="exact", tol=1e-3)
    Traceback (most recent call last):
    ...
    ValueError: solve(method='exact') got unknown keyword argument(s) 'tol'; allowed: max_states
    """
    check_choice("method", method, METHODS)
    check_kwargs(f"solve(method={method!r})", options, METHODS[method])
    # a network whose class's module was never imported is not of that class: mva.mixed
    # and mva.open are imported only to solve their own networks (first-call cost)
    mixed = sys.modules.get(f"{__package__}.mixed")
    if mixed is not None and isinstance(network, mixed.MixedNetwork):
        return mixed.solve_mixed(network, method, **options)
    opened = sys.modules.get(f"{__package__}.open")
    if opened is not None and isinstance(network, opened.OpenNetwork):
        if method != "exact" or options:
            raise ValueError("method must be 'exact' (without options) for an OpenNetwork; got "
                             f"{method!r}")
        return opened.solve_open(network)
    from .network import ClosedNetwork
    if not isinstance(network, ClosedNetwork):
        raise ValueError(f"network must be a ClosedNetwork, OpenNetwork or MixedNetwork; got "
                         f"{type(network).__name__}")
    if method == "auto":
        from .exact import lattice_size
        limit = int(options.pop("auto_limit", 100_000))
        if lattice_size(network.populations) <= limit or "ld" in network.kinds:
            opts = {k: v for k, v in options.items() if k == "max_states"}
            res = _solver("exact")(network, **opts)
        else:
            opts = {k: v for k, v in options.items() if k != "max_states"}
            res = _solver("linearizer")(network, **opts)
        return res
    return _solver(method)(network, **options)
