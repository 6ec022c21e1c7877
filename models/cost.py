"""Cost-effectiveness of adding processors to an SMP node (Wood and Hill 1995, as used by
Falsafi and Wood 1997).

A change is cost-effective when its *costup* (relative cost increase) is
smaller than its *speedup*.  With a processor costing a fraction ``f`` of a
uniprocessor node,

.. math::

    \\mathrm{costup}(p) = 1 + f\\,(p - 1),\\qquad
    \\mathrm{speedup}(p) = \\frac{X(p)}{X_{1}},\\qquad
    \\mathrm{cp}(p) = \\frac{\\mathrm{costup}(p)}{\\mathrm{speedup}(p)},

where ``X(p)`` is the throughput of a ``p``-processor node and ``X_1`` that
of a uniprocessor node (Single).  A design is *cost-effective* when
``cp < 1`` and *most cost-effective* at the ``p`` minimising ``cp``.

The functions accept any model's throughput -- a callable of ``p``, an array
aligned with the ``p`` values, or a mapping ``{p: X}`` -- so they work with
:mod:`models.policy`, :mod:`models.pdq`, :mod:`models.ini` or measured data.
:func:`policy_cost` applies them to the Fixed / Floating policies.

References
----------
D. A. Wood and M. D. Hill, "Cost-Effective Parallel Computing", IEEE
Computer 28(2), 1995.  B. Falsafi and D. A. Wood, "Scheduling Communication
on an SMP Node Parallel Machine", HPCA 1997, sections 4, 5, 6.3.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Iterable, Mapping

import numpy as np

from mva._validate import (check_choice, check_integer, check_kwargs, check_nonnegative,
                           check_positive, scalar_or_array)
from mva.results import ResultMixin, with_inputs

from .policy import POLICIES, PolicyParams
from .policy import solve as _solve_policy

__all__ = [
    "DEFAULT_F",
    "costup",
    "CostResult",
    "PolicyCostResult",
    "cost_performance",
    "policy_cost",
    "register_cli",
]

#: cost of one processor as a fraction of a uniprocessor node (Falsafi and Wood 1997: 30%)
DEFAULT_F = 0.3


def costup(p: Any, f: Any = DEFAULT_F) -> Any:
    """Relative cost of a ``p``-processor node against a uniprocessor node.

    Parameters
    ----------
    p : int or array of int
        Processors per node (>= 1).
    f : float or array, default 0.3
        Cost of one processor as a fraction of a uniprocessor node's cost.

    Returns
    -------
    float or array
        ``1 + f (p - 1)``.

    Notes
    -----
    .. math:: \\mathrm{costup}(p) = 1 + f\\,(p - 1)

    References
    ----------
    .. [1] Wood and Hill 1995; Falsafi and Wood 1997, section 4.

    Examples
    --------
    >>> costup(2), costup(5)   # Falsafi and Wood 1997: "costups of 1.3 and 2.2"
    (1.3, 2.2)
    """
    pa = check_integer("p", p, minimum=1).astype(float)
    fa = check_nonnegative("f", f)
    return scalar_or_array(np.round(1.0 + fa * (pa - 1.0), 12))


@dataclass(frozen=True, kw_only=True)
class CostResult(ResultMixin):
    """Cost-performance over a range of processors per node (last axis: ``p``).

    Attributes
    ----------
    p : numpy.ndarray of int, shape (P,)
        Processors per node evaluated.
    throughput : numpy.ndarray, shape (..., P)
        Node throughput at each ``p`` (any unit, the baseline's unit).
    baseline : float or array
        Throughput of a uniprocessor node (Single), same unit.
    costup, speedup, cost_performance : numpy.ndarray, shape (..., P)
        ``1 + f (p - 1)``, ``throughput / baseline`` and their ratio.
    cost_effective : numpy.ndarray of bool, shape (..., P)
        ``cost_performance < 1``.
    best_p : int or array
        The ``p`` with the lowest cost-performance (the first one on ties).
    best_cost_performance : float or array
        That lowest cost-performance.
    f : float or array
        Processor cost fraction used.
    """

    p: np.ndarray
    throughput: Any
    baseline: Any
    costup: Any
    speedup: Any
    cost_performance: Any
    cost_effective: Any
    best_p: Any
    best_cost_performance: Any
    f: Any


@dataclass(frozen=True, kw_only=True)
class PolicyCostResult(ResultMixin):
    """Cost-performance of each policy against a uniprocessor node (Single).

    Attributes
    ----------
    policies : dict of str to CostResult
        One entry per policy; Fixed starts at ``p = 2``.
    baseline : float or array
        Single's node throughput (requests per cycle).
    most_cost_effective_policy : str or array of str
        The policy reaching the lowest cost-performance.
    """

    policies: Mapping[str, CostResult]
    baseline: Any
    most_cost_effective_policy: Any

    def _columns(self) -> dict[str, np.ndarray]:
        """Long format: one row per (policy, p) point, the policy in column ``policy``."""
        parts = []
        for name, res in self.policies.items():
            cols = res._columns()
            n = len(np.asarray(res.p)) * int(np.prod(np.shape(res.cost_performance)[:-1]))
            cols = {k: v for k, v in cols.items() if len(v) == n}
            mcp = np.asarray(self.most_cost_effective_policy, dtype=object)
            parts.append({"policy": np.full(n, name, dtype=object), **cols,
                          "most_cost_effective_policy": ResultMixin._on_grid(
                              mcp, np.shape(res.cost_performance))})
        keys = list(dict.fromkeys(k for part in parts for k in part))
        return {k: np.concatenate([part[k] for part in parts]) for k in keys
                if all(k in part for part in parts)}

    @property
    def grid_shape(self) -> tuple[int, ...]:
        """Number of rows of the long-format frame, as a 1-D shape."""
        return (sum(len(v) for v in list(self._columns().values())[:1]),)


def _throughput_values(throughput: Any, p: np.ndarray) -> np.ndarray:
    if callable(throughput):
        X = np.asarray(throughput(p), dtype=float)
    elif isinstance(throughput, Mapping):
        missing = [int(v) for v in p if int(v) not in throughput]
        if missing:
            raise ValueError(f"throughput: no value for p={missing}; "
                             f"given for p={sorted(throughput)}")
        X = np.stack([np.asarray(throughput[int(v)], dtype=float) for v in p], axis=-1)
    else:
        X = np.asarray(throughput, dtype=float)
    if X.ndim == 0 or X.shape[-1] != p.size:
        raise ValueError(f"throughput must have the p values ({p.size}) on its last axis; got "
                         f"shape {X.shape}")
    if not np.all(np.isfinite(X) & (X > 0)):
        raise ValueError("throughput must be finite and > 0 at every p")
    return X


def cost_performance(throughput: Any, p: Any, *, baseline: Any, f: Any = DEFAULT_F) -> CostResult:
    """Costup, speedup and cost-performance of any model's throughput over ``p``.

    Parameters
    ----------
    throughput : callable, array_like or mapping
        Node throughput as a function of processors per node: a callable
        ``throughput(p_array)`` returning an array with ``p`` on its last
        axis, an array whose last axis is aligned with ``p``, or a mapping
        ``{p: throughput}``.
    p : sequence of int
        Processors per node to evaluate (>= 1).
    baseline : float or array_like
        Throughput of a uniprocessor node (Single) in the same unit;
        broadcast against the leading axes of ``throughput``.
    f : float or array_like, default 0.3
        Processor cost as a fraction of a uniprocessor node.

    Returns
    -------
    CostResult

    Notes
    -----
    .. math::

        \\mathrm{cp}(p) = \\frac{1 + f (p - 1)}{X(p) / X_1},\\qquad
        p^* = \\arg\\min_p \\mathrm{cp}(p).

    Execution time for fixed work is proportional to ``1 / X``, so the
    speedup is also ``T_1 / T(p)``.

    References
    ----------
    .. [1] Wood and Hill 1995; Falsafi and Wood 1997, Figures 5 and 7.

    Examples
    --------
    Linear speedup is cost-effective at every ``p > 1``; the best ``p`` is
    the largest:

    >>> r = cost_performance(lambda p: 1.0 * p, [1, 2, 4, 8], baseline=1.0)
    >>> r.cost_performance.round(4).tolist(), int(r.best_p)
    ([1.0, 0.65, 0.475, 0.3875], 8)
    """
    pa = check_integer("p", np.atleast_1d(np.asarray(p)), minimum=1)
    if pa.ndim != 1:
        raise ValueError(f"p must be a 1-D sequence of processor counts; got shape {pa.shape}")
    X = _throughput_values(throughput, pa)
    X1 = check_positive("baseline", baseline)
    fa = check_nonnegative("f", f)
    cu = 1.0 + np.asarray(fa)[..., None] * (pa - 1.0)
    sp = X / np.asarray(X1)[..., None]
    cp = cu / sp
    i = np.argmin(cp, axis=-1)
    best = np.take_along_axis(cp, i[..., None], axis=-1)[..., 0]
    res = CostResult(p=pa, throughput=X, baseline=scalar_or_array(X1), costup=cu, speedup=sp,
                     cost_performance=cp, cost_effective=cp < 1.0,
                     best_p=scalar_or_array(pa[i]) if np.ndim(i) else int(pa[i]),
                     best_cost_performance=scalar_or_array(best), f=scalar_or_array(fa))
    return with_inputs(res, None, f=fa)


def _with_p(params: PolicyParams, p: np.ndarray) -> PolicyParams:
    """``params`` with every array field given a trailing axis and ``p`` on that axis."""
    changes: dict[str, Any] = {}
    for fld in fields(params):
        v = getattr(params, fld.name)
        if fld.name == "p" or v is None:
            continue
        if np.ndim(v) > 0:
            changes[fld.name] = np.asarray(v)[..., None]
    changes["p"] = p
    return replace(params, **changes)


def _single_is_floating_at_one(params: PolicyParams) -> bool:
    """Does Floating at ``p = 1`` give Single's throughput bit for bit?

    Yes when every field is a scalar: the grid then holds one point per
    ``p``, which the default method solves on its own (never by the
    grid-wide vectorised fixed point), and Floating with ``p = 1`` runs the
    same equations as Single (one compute thread) on the same values.
    """
    return all(np.ndim(getattr(params, fld.name)) == 0 for fld in fields(params)
               if getattr(params, fld.name) is not None)


def _policy_throughput(params: PolicyParams, pp: np.ndarray, name: str,
                       options: Mapping[str, Any], lead: tuple[int, ...]) -> np.ndarray:
    """Node throughput of policy ``name`` at processor counts ``pp`` (last axis), broadcast
    against the leading shape ``lead`` of the baseline."""
    res = _solve_policy(_with_p(params, pp), name, **options)
    X = np.asarray(res.throughput, dtype=float)
    return np.broadcast_to(X, np.broadcast_shapes(X.shape, lead + (pp.size,)))


def policy_cost(params: PolicyParams, *, p: Iterable[int] = range(1, 9),
                policies: Iterable[str] = ("fixed", "floating"), f: Any = DEFAULT_F,
                **options: Any) -> PolicyCostResult:
    """Cost-performance of protocol-processing policies against a uniprocessor node.

    Parameters
    ----------
    params : PolicyParams
        Workload and overheads; ``params.p`` is replaced by the range ``p``
        (array fields broadcast against it, ``p`` on the last axis).
    p : iterable of int, default 1..8
        Processors per node.  Fixed is evaluated only at ``p >= 2``; ``p = 1``
        of Floating is Single.
    policies : iterable of {"fixed", "floating", "single"}
        Policies to evaluate.
    f : float or array, default 0.3
        Processor cost fraction.
    **options
        Solver options of :func:`models.policy.solve`.

    Returns
    -------
    PolicyCostResult

    Notes
    -----
    The baseline is Single (one processor per node); speedup is the ratio
    of node throughputs, i.e. of execution times for the same total work.

    References
    ----------
    .. [1] Falsafi and Wood 1997, Figure 5.

    Examples
    --------
    >>> from models.policy import preset
    >>> r = policy_cost(preset("null-handler", U=0.3))
    >>> r.most_cost_effective_policy
    'fixed'
    """
    pol = [check_choice("policies", x, POLICIES) for x in policies]
    check_kwargs("policy_cost", options, ("damping", "tol", "max_iter", "fallback", "on_fail"))
    pv = np.asarray(sorted(set(int(x) for x in check_integer("p", list(p), minimum=1))))
    if pv.size == 0:
        raise ValueError("p must name at least one processor count")
    base = _solve_policy(replace(params, p=1), "single", **options)
    X1 = np.asarray(base.throughput, dtype=float)
    out: dict[str, CostResult] = {}
    for name in pol:
        pp = pv[pv >= 2] if name == "fixed" else pv
        if pp.size == 0:
            continue
        if name == "floating" and pp[0] == 1 and _single_is_floating_at_one(params):
            # Floating on one processor is Single, point by point (the same equations
            # with n_c = 1, solved alone): reuse the baseline instead of solving it again
            X = X1[None] if pp.size == 1 else np.concatenate(
                [X1[None], _policy_throughput(params, pp[1:], name, options, X1.shape)], axis=-1)
        else:
            X = _policy_throughput(params, pp, name, options, X1.shape)
        out[name] = cost_performance(X, pp, baseline=X1, f=f)
    names = list(out)
    bests = np.stack([np.asarray(out[n].best_cost_performance, dtype=float) for n in names])
    idx = np.argmin(bests, axis=0)
    mcp = names[int(idx)] if np.ndim(idx) == 0 else np.asarray(names, dtype=object)[idx]
    result = PolicyCostResult(policies=out, baseline=scalar_or_array(X1),
                              most_cost_effective_policy=mcp)
    return with_inputs(result, params)


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------

def register_cli(subparsers: Any) -> None:
    """Add the ``cost`` subcommand (kept for compatibility: see :mod:`models.cli.cost`)."""
    from models.cli.cost import register

    register(subparsers)
