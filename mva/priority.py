r"""Preemptive-resume priorities by the BKT approximation.

Bryant, Krzesinski and Teunissen (1983) extend MVA to stations where classes
of higher priority preempt classes of lower priority (preemptive resume).  A
class-``c`` customer arriving at a single-server station ``k``

* waits for the work of every customer of the same or higher priority that it
  finds there (arrival theorem: the queue lengths it sees are those of the
  network with one customer of its own chain removed), and
* is served only during the time left over by the higher-priority classes, a
  fraction ``1 - sum_{p(s) > p(c)} U_sk`` of the time.

Per visit (time units), with per-visit service times ``S``, seen queue
lengths :math:`\tilde Q` and seen utilizations :math:`\tilde U`:

.. math::

    r_{ck} = \frac{S_{ck} + \sum_{s:\,p(s)\ge p(c)} S_{sk}\,\tilde Q_{sk}}
                  {1 - \sum_{s:\,p(s)>p(c)} \tilde U_{sk}},
    \qquad R_{ck} = V_{ck}\, r_{ck}

(the residence per chain cycle ``R`` multiplies by the visits ``V``;
``V S = D``).  This is the form behind the LoPC compute-thread equation
``R_w = (W + o Q_q) / (1 - U_q)``: the compute class (priority 0, ``S = W``)
sees the request handlers (priority 1, ``S = o``) queued and loses the
fraction ``U_q`` of the processor to them.

Variants implemented (the same for every solver):

* ``discipline="fcfs"`` (above): the equal-priority customers found waiting
  each cost their own service time ``S_sk``.  ``discipline="ps"``: they cost
  the arriving class's ``S_ck`` (processor sharing within a level), so that
  with all priorities equal the formula is the standard MVA residence
  ``D_ck (1 + Q_k)``.  Both coincide when the classes of one level share a
  service time.
* Service-time variability (FCFS only): the customer in service is met with
  probability ``U`` and has a mean residual life ``S (1 + cs2) / 2`` instead
  of ``S``, adding ``(cs2 - 1)/2 * sum_{p(s) >= p(c)} S_sk U_sk`` to the
  numerator (the residual-life correction; exact for M/G/1 with one class:
  it reproduces Pollaczek-Khinchine).

Which population the "seen" quantities refer to is the solver's business:
exact MVA uses ``Q(n - e_r)`` and ``U(n - e_r) = X(n - e_r) D`` for a
customer of chain ``r``; Bard-Schweitzer uses ``Q_s (n_s - 1)/n_s`` for the
classes of the arriving chain and ``Q_s`` for the others (and the same
scaling for ``U``); Linearizer adds its correction terms.

References
----------
R. M. Bryant, A. E. Krzesinski, P. Teunissen, "The MVA pre-empt resume
priority approximation", Proc. ACM SIGMETRICS 1983, pp. 12-27.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ._validate import check_choice, check_integer, check_nonnegative

__all__ = ["bkt_residence"]


# ----------------------------------------------------------------------
# internal building blocks shared by the solvers
# ----------------------------------------------------------------------
def level_structure(priorities: np.ndarray | None, C: int) -> tuple[np.ndarray, int, np.ndarray]:
    """Priority levels: ``lev`` (C,) index 0..L-1 ascending priority, ``L``, one-hot (C, L)."""
    if priorities is None:
        lev = np.zeros(C, dtype=np.int64)
    else:
        _, lev = np.unique(np.asarray(priorities), return_inverse=True)
        lev = lev.reshape(C).astype(np.int64)
    L = int(lev.max()) + 1
    onehot = np.zeros((C, L))
    onehot[np.arange(C), lev] = 1.0
    return lev, L, onehot


def aggregate(Q: np.ndarray, U: np.ndarray, S: np.ndarray, onehot: np.ndarray) -> np.ndarray:
    """Per-level sums ``G[..., i, l, k]`` of ``Q``, ``S Q``, ``U``, ``S U`` (i = 0..3).

    ``Q`` and ``U`` have shape (..., C, K); the result (..., 4, L, K).
    """
    return np.stack([np.einsum("...ck,cl->...lk", Q, onehot),
                     np.einsum("...ck,cl->...lk", S * Q, onehot),
                     np.einsum("...ck,cl->...lk", U, onehot),
                     np.einsum("...ck,cl->...lk", S * U, onehot)], axis=-3)


def class_terms(G: np.ndarray, lev: np.ndarray, rows: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Terms of the BKT numerator/denominator for classes at levels ``lev``.

    ``G`` has shape (..., 4, L, K).  Without ``rows`` the result has shape
    (..., len(lev), K).  With ``rows`` (one per class, indexing the first axis
    of ``G``) class ``c`` reads ``G[rows[c]]`` and the result is (C, K).

    Returns ``same_Q, same_SQ, higher_SQ, higher_U, geq_SU``.
    """
    incl = np.cumsum(G[..., ::-1, :], axis=-2)[..., ::-1, :]  # sum over levels >= l
    excl = incl - G                                          # sum over levels > l
    if rows is None:
        pick = (Ellipsis, lev, slice(None))
        return (G[..., 0, :, :][pick], G[..., 1, :, :][pick], excl[..., 1, :, :][pick],
                excl[..., 2, :, :][pick], incl[..., 3, :, :][pick])
    return (G[rows, 0, lev], G[rows, 1, lev], excl[rows, 1, lev], excl[rows, 2, lev],
            incl[rows, 3, lev])


def queue_residence(D: np.ndarray, V: np.ndarray, terms: tuple[np.ndarray, ...],
                    fcfs: np.ndarray, cterm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BKT residence per cycle at single-server stations, and the free fraction.

    ``D``, ``V`` (..., C, K) broadcastable against the terms; ``fcfs`` (K,)
    bool; ``cterm`` (K,) = ``(cs2 - 1) / 2`` at FCFS stations, 0 elsewhere.
    Returns ``(R, free)`` where ``free = 1 - higher_U`` (not clipped).
    """
    same_Q, same_SQ, hi_SQ, hi_U, geq_SU = terms
    extra = hi_SQ + cterm * geq_SU
    num = np.where(fcfs, D + V * (same_SQ + extra), D * (1.0 + same_Q) + V * extra)
    free = 1.0 - hi_U
    return num / np.maximum(free, 1e-300), free


# ----------------------------------------------------------------------
# public plain function
# ----------------------------------------------------------------------
def bkt_residence(service_times: Any, visits: Any, queue_seen: Any, util_seen: Any,
                  priorities: Any, *, cs2: Any = 1.0,
                  discipline: str | Sequence[str] = "fcfs") -> np.ndarray:
    r"""BKT preemptive-resume residence times at single-server stations.

    Parameters
    ----------
    service_times : array_like, shape (C, K)
        Mean service time per visit ``S[c, k]`` (time units).
    visits : array_like, shape (C, K)
        Visits per cycle ``V[c, k]``; the residence is ``V`` times the
        per-visit response time (pass ones for per-visit times).
    queue_seen : array_like, shape (C, K) or (C, C, K)
        Mean number of class-``s`` customers at station ``k`` found by an
        arriving customer: ``[s, k]`` (the same for every arriving class) or
        ``[c, s, k]`` (seen by an arriving class-``c`` customer).
    util_seen : array_like, same shape as ``queue_seen``
        Utilization ``U_sk = X_s V_sk S_sk`` seen likewise (fraction of time
        the server is busy with class ``s``).
    priorities : array_like of int, shape (C,)
        Larger is more urgent.
    cs2 : float or array_like, shape (K,)
        Squared coefficient of variation of the service time (FCFS only).
    discipline : {"fcfs", "ps"} or sequence of them per station
        How equal-priority customers found waiting are charged (see Notes).

    Returns
    -------
    numpy.ndarray, shape (C, K)
        Residence time per cycle ``R[c, k] = V[c, k] r[c, k]``.

    Notes
    -----
    .. math::

        r_{ck} = \frac{S_{ck} + \sum_{s:\,p(s)\ge p(c)} S_{sk}\tilde Q_{sk}
                 + \tfrac{c^2_k - 1}{2}\sum_{s:\,p(s)\ge p(c)} S_{sk}\tilde U_{sk}}
                {1 - \sum_{s:\,p(s)>p(c)} \tilde U_{sk}}

    (``"fcfs"``; ``"ps"`` replaces the equal-priority part of the first sum
    by ``S_ck sum_{p(s)=p(c)} Q_sk`` and drops the ``cs2`` term, being
    insensitive to the service-time distribution).  A denominator ``<= 0``
    (higher classes saturate the server) raises ``SaturationError``.

    References
    ----------
    Bryant, Krzesinski and Teunissen, SIGMETRICS 1983.

    Examples
    --------
    LoPC's compute thread (priority 0, ``W = 10``) at a processor where
    request handlers of other threads (priority 1, ``o = 2``) queue
    ``Q_q = 0.3`` with utilization ``U_q = 0.2``:

    >>> r = bkt_residence([[10.0], [2.0]], [[1.0], [1.0]],
    ...                   queue_seen=[[0.0], [0.3]], util_seen=[[0.0], [0.2]],
    ...                   priorities=[0, 1])
    >>> round(float(r[0, 0]), 12), round((10.0 + 2.0 * 0.3) / (1 - 0.2), 12)
    (13.25, 13.25)
    >>> round(float(r[1, 0]), 12)   # the handler ignores the compute class: o (1 + Q_q)
    2.6
    """
    from .errors import SaturationError

    S = check_nonnegative("service_times", service_times)
    if S.ndim != 2:
        raise ValueError(f"service_times must have shape (C, K); got shape {S.shape}")
    C, K = S.shape
    V = check_nonnegative("visits", visits)
    if V.shape != (C, K):
        raise ValueError(f"visits must have shape {(C, K)} like service_times; got shape {V.shape}")
    Q = check_nonnegative("queue_seen", queue_seen)
    U = check_nonnegative("util_seen", util_seen)
    if Q.shape not in ((C, K), (C, C, K)):
        raise ValueError(f"queue_seen must have shape {(C, K)} or {(C, C, K)}; got shape {Q.shape}")
    if U.shape != Q.shape:
        raise ValueError(f"util_seen must have the shape of queue_seen {Q.shape}; got shape "
                         f"{U.shape}")
    p = check_integer("priorities", priorities)
    if p.shape != (C,):
        raise ValueError(f"priorities must have shape {(C,)} (one per class); got shape {p.shape}")
    c2 = check_nonnegative("cs2", cs2)
    c2 = np.broadcast_to(c2, (K,)) if c2.ndim == 0 else c2
    if c2.shape != (K,):
        raise ValueError(f"cs2 must be a number or have shape {(K,)}; got shape {c2.shape}")
    if isinstance(discipline, str):
        disc = [check_choice("discipline", discipline, ("fcfs", "ps"))] * K
    else:
        disc = [check_choice(f"discipline[{k}]", d, ("fcfs", "ps"))
                for k, d in enumerate(discipline)]
        if len(disc) != K:
            raise ValueError(f"discipline must be a string or have {K} entries; got {len(disc)}")
    fcfs = np.array([d == "fcfs" for d in disc])
    cterm = np.where(fcfs, (c2 - 1.0) / 2.0, 0.0)
    lev, _, onehot = level_structure(p, C)
    G = aggregate(Q, U, S, onehot)
    terms = class_terms(G, lev) if Q.ndim == 2 else class_terms(G, lev, rows=np.arange(C))
    R, free = queue_residence(V * S, V, terms, fcfs, cterm)
    bad = (free <= 0) & (V > 0)
    if bad.any():
        c, k = np.argwhere(bad)[0]
        raise SaturationError(
            f"higher-priority classes use {1 - free[c, k]:.6g} >= 1 of station {k}; class {c} "
            "is starved",
            bottleneck=str(k), utilization=float(1 - free[c, k]))
    return R
