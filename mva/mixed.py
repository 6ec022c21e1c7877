r"""Mixed networks: open (Poisson) classes and closed chains on the same stations.

An SMP node with compute threads (closed chains, a fixed number of
customers) and incoming message streams (open classes, Poisson arrivals)
is a mixed network.  For product-form stations -- load-independent
``"queue"`` stations (processor sharing, or FCFS with one service time for
all classes) and ``"delay"`` stations -- the open classes can be removed
exactly:

1. Open utilization of each queue station,
   ``U^o_k = sum_o lambda_o D_ok`` (must be ``< 1``).
2. The closed chains see each queue station slowed down:
   ``D*_ck = D_ck / (1 - U^o_k)``; delay stations are unchanged.  Solve this
   closed network (exact MVA, or any method of :func:`mva.solve`).
3. An open customer arriving at ``k`` finds the closed customers there
   and the open ones:

   .. math::

       R_{ok} = \frac{D_{ok}\,\bigl(1 + Q^{c}_{k}\bigr)}{1 - U^o_k}
       \ \text{(queue)}, \qquad R_{ok} = D_{ok}\ \text{(delay)},

   with ``Q^c_k`` the mean number of closed customers at ``k`` in the
   closed network of step 2; ``Q_ok = lambda_o R_ok``.

Closed utilizations are ``X_c D_ck`` with the original demands.  Step 2 is
exact because summing the product form over the open populations at a
station with ``m`` closed customers gives the factor
``(1 - U^o_k)^{-(m + 1)}``; step 3 is the arrival theorem for the open
classes (an arrival sees the stationary state).

References
----------
Lazowska et al., *Quantitative System Performance*, 1984, section 7.4.3
(mixed models).  Bolch et al., *Queueing Networks and Markov Chains*, 2nd
ed., 2006, section 8.2.4 (mixed networks).  Octave ``qnmix``, LINE
``pfqn_mvamx``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ._validate import check_nonnegative
from .errors import SaturationError
from .network import ClosedNetwork
from .open import OpenNetworkResult
from .results import MVAResult, plain_dict

__all__ = ["MixedNetwork", "MixedResult", "solve_mixed"]


@dataclass(frozen=True, kw_only=True)
class MixedNetwork:
    """Closed chains and open classes sharing the stations of ``closed``.

    Parameters
    ----------
    closed : ClosedNetwork
        The closed chains and the stations (kinds, names).
    arrival_rates : array_like, shape (O,)
        Poisson arrival rate of each open class (jobs per time unit).
    open_demands : array_like, shape (O, K) or (K,)
        Total demand of one open job at each station (time units).  Open
        load is allowed at ``"queue"`` and ``"delay"`` stations only.
    open_class_names : sequence of str, optional

    Examples
    --------
    >>> net = MixedNetwork(closed=ClosedNetwork.single_class([1.0, 2.0], population=2),
    ...                    arrival_rates=[0.2], open_demands=[[1.0, 0.5]])
    >>> net.n_open
    1
    """

    closed: ClosedNetwork
    arrival_rates: Any
    open_demands: Any
    open_class_names: tuple[str, ...] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        put = object.__setattr__
        if not isinstance(self.closed, ClosedNetwork):
            raise ValueError(f"closed must be a ClosedNetwork; got {type(self.closed).__name__}")
        K = self.closed.n_stations
        D = check_nonnegative("open_demands", self.open_demands)
        if D.ndim == 1:
            D = D[None, :]
        if D.ndim != 2 or D.shape[1] != K:
            raise ValueError(f"open_demands must have shape (O, {K}) (one row per open class, "
                             f"one column per station); got shape {D.shape}")
        lam = check_nonnegative("arrival_rates", self.arrival_rates).reshape(-1)
        if lam.shape != (D.shape[0],):
            raise ValueError(f"arrival_rates must have shape ({D.shape[0]},) (one per open "
                             f"class); got shape {lam.shape}")
        for k, kd in enumerate(self.closed.kinds):
            if kd not in ("queue", "delay") and (lam @ D[:, k]) > 0:
                raise ValueError(f"open load at station {self.closed.station_names[k]!r} of "
                                 f"kind {kd!r}; mixed networks take open classes at 'queue' and "
                                 "'delay' stations only")
        names = self.open_class_names
        names = (tuple(f"open{i}" for i in range(lam.size)) if names is None
                 else tuple(map(str, names)))
        if len(names) != lam.size:
            raise ValueError(f"open_class_names must have {lam.size} entries; got {len(names)}")
        put(self, "open_demands", D)
        put(self, "arrival_rates", lam)
        put(self, "open_class_names", names)

    @property
    def n_open(self) -> int:
        """Number of open classes."""
        return int(self.arrival_rates.size)


@dataclass(frozen=True, kw_only=True)
class MixedResult:
    """Solution of a :class:`MixedNetwork`.

    Attributes
    ----------
    closed : MVAResult
        The closed chains (residence times include the open interference;
        utilizations use the original demands).
    open : OpenNetworkResult
        The open classes (throughput = arrival rate).
    method : str
        The closed solver used.
    """

    closed: MVAResult
    open: OpenNetworkResult
    method: str

    @property
    def station_utilization(self) -> np.ndarray:
        """Total utilization of each station, closed plus open (K,)."""
        return self.closed.station_utilization + self.open.utilization.sum(axis=0)

    @property
    def station_queue_length(self) -> np.ndarray:
        """Mean number of customers (closed plus open) at each station (K,)."""
        return self.closed.station_queue_length + self.open.queue_length.sum(axis=0)

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary (nested results as dictionaries)."""
        return {"closed": self.closed.to_dict(), "open": plain_dict(self.open),
                "method": self.method}


def solve_mixed(network: MixedNetwork, method: str = "exact", **options: Any) -> MixedResult:
    r"""Solve a mixed open/closed network.

    Parameters
    ----------
    network : MixedNetwork
    method : str
        Closed solver for step 2, any closed method of :func:`mva.solve`
        (``"exact"`` by default; the result is exact only with an exact
        method).
    **options
        Options of that method.

    Returns
    -------
    MixedResult

    Raises
    ------
    SaturationError
        If the open classes alone load a queue station to ``U^o_k >= 1``.

    Notes
    -----
    See the module docstring: closed demands ``D_ck / (1 - U^o_k)``, then
    ``R_ok = D_ok (1 + Q^c_k) / (1 - U^o_k)`` at queue stations.

    References
    ----------
    Lazowska et al. (1984), section 7.4.3; Bolch et al. (2006), section
    8.2.4.

    Examples
    --------
    One closed customer and an open stream on a single station: the
    closed customer sees ``D / (1 - U^o) = 1 / 0.5``, the open jobs
    ``D (1 + Q^c) / (1 - U^o)`` with ``Q^c = 1``.

    >>> closed = ClosedNetwork.single_class([1.0], population=1)
    >>> res = solve_mixed(MixedNetwork(closed=closed, arrival_rates=[0.5], open_demands=[1.0]))
    >>> float(res.closed.residence_time[0, 0]), float(res.open.residence_time[0, 0])
    (2.0, 4.0)
    """
    from .dispatch import solve
    if not isinstance(network, MixedNetwork):
        raise ValueError(f"network must be a MixedNetwork; got {type(network).__name__}")
    net = network.closed
    lam, Do = network.arrival_rates, network.open_demands
    kinds = np.array(net.kinds)
    queue = kinds == "queue"
    Uo = lam @ Do                                           # (K,)
    for k in np.nonzero(queue & (Uo >= 1.0))[0]:
        st = net.station_names[k]
        raise SaturationError(f"open classes load station {st!r} to utilization {Uo[k]:.6g} >= 1",
                              bottleneck=st, utilization=float(Uo[k]))
    slow = np.where(queue, 1.0 / (1.0 - np.where(queue, Uo, 0.0)), 1.0)
    inflated = replace(net, demands=net.demands * slow)
    res = solve(inflated, method=method, **options)
    U = res.throughput[:, None] * net.demands / _cap(net)
    closed = replace(res, utilization=U)
    Qc = res.queue_length.sum(axis=0)
    Ro = np.where(queue, Do * (1.0 + Qc) * slow, Do)
    Uopen = lam[:, None] * Do
    opened = OpenNetworkResult(throughput=lam.copy(), response_time=Ro.sum(axis=1),
                               residence_time=Ro,
                               queue_length=lam[:, None] * Ro, utilization=Uopen, method="mixed",
                               station_names=net.station_names,
                               class_names=network.open_class_names)
    return MixedResult(closed=closed, open=opened, method=res.method)


def _cap(net: ClosedNetwork) -> np.ndarray:
    """Utilization divisor per station (servers at multi, peak rate at ld, else 1)."""
    cap = np.ones(net.n_stations)
    for k, kd in enumerate(net.kinds):
        if kd == "multi":
            cap[k] = float(net.servers[k])
        elif kd == "ld":
            cap[k] = float(np.max(net.rates[k]))
    return cap
