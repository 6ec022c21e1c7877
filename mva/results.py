"""Result dataclass shared by every closed-network MVA solver."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

__all__ = ["MVAResult", "ResultMixin", "plain_dict"]


@dataclass(frozen=True, kw_only=True)
class MVAResult:
    """Mean performance measures of a closed network.

    Attributes
    ----------
    throughput : numpy.ndarray, shape (C,)
        Throughput of each class in chain cycles per time unit.  Demands are
        per chain cycle, so every class of a chain has the chain's
        throughput; the throughput of class ``c`` *at station* ``k`` (visits
        per time unit) is ``throughput[c] * V[c, k]``.
    response_time : numpy.ndarray, shape (C,)
        Sum over stations of the residence times of the class (per cycle,
        think time excluded).
    residence_time : numpy.ndarray, shape (C, K)
        Time a class-``c`` customer spends at station ``k`` per cycle (all its
        visits: ``V * per-visit response time``).
    queue_length : numpy.ndarray, shape (C, K)
        Mean number of class-``c`` customers at station ``k``, waiting or in
        service.  Little's law: ``queue_length = throughput[:, None] *
        residence_time``.
    utilization : numpy.ndarray, shape (C, K)
        ``X_c D_ck`` at ``"queue"`` stations (fraction of time the server is
        busy with class ``c``); ``X_c D_ck / m_k`` per server at ``"multi"``
        stations; ``X_c D_ck / max_j alpha_k(j)`` (fraction of the peak
        capacity) at ``"ld"`` stations; ``X_c D_ck`` (mean number of busy
        servers, may exceed 1) at ``"delay"`` stations.
    chain_throughput : numpy.ndarray, shape (R,)
        Throughput of each chain (cycles per time unit).
    method : str
        Solver that produced the result.
    converged : bool
        False when an iterative solver stopped at ``max_iter`` (exact: True).
    iterations : int
        Iterations performed (exact: population levels visited).
    residual : float
        Last change of the iterate, relative to the chain population
        (exact: 0).
    station_names, class_names : tuple of str
        Labels, from the network.
    """

    throughput: np.ndarray
    response_time: np.ndarray
    residence_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    chain_throughput: np.ndarray
    method: str
    converged: bool
    iterations: int
    residual: float
    station_names: tuple[str, ...] = ()
    class_names: tuple[str, ...] = ()

    # ------------------------------------------------------------------
    @property
    def station_queue_length(self) -> np.ndarray:
        """Mean number of customers at each station, all classes (K,)."""
        return self.queue_length.sum(axis=0)

    @property
    def station_utilization(self) -> np.ndarray:
        """Utilization of each station summed over classes (K,)."""
        return self.utilization.sum(axis=0)

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python dictionary (lists and scalars), e.g. for JSON."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                v = v.tolist()
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return out

    def to_frame(self) -> Any:
        """Long-format :class:`pandas.DataFrame`, one row per (class, station).

        Columns: ``class``, ``station``, ``throughput``, ``residence_time``,
        ``queue_length``, ``utilization`` and the class ``response_time``.
        Needs pandas (optional dependency).
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on environment
            raise ImportError("MVAResult.to_frame() needs pandas: pip install pandas") from exc
        C, K = self.residence_time.shape
        cn = self.class_names or tuple(f"class{c}" for c in range(C))
        sn = self.station_names or tuple(f"station{k}" for k in range(K))
        return pd.DataFrame({
            "class": np.repeat(np.asarray(cn, dtype=object), K),
            "station": np.tile(np.asarray(sn, dtype=object), C),
            "throughput": np.repeat(self.throughput, K),
            "response_time": np.repeat(self.response_time, K),
            "residence_time": self.residence_time.ravel(),
            "queue_length": self.queue_length.ravel(),
            "utilization": self.utilization.ravel(),
        })

    def __repr__(self) -> str:
        x = np.array2string(self.throughput, precision=6, suppress_small=True)
        r = np.array2string(self.response_time, precision=6, suppress_small=True)
        return (f"MVAResult(method={self.method!r}, converged={self.converged}, "
                f"iterations={self.iterations}, throughput={x}, response_time={r})")


class ResultMixin:
    """``to_dict`` and ``to_frame`` for the result dataclasses of vectorised models.

    A model result holds one value per grid point in each field (scalars for a
    single point) plus solver diagnostics.  ``to_frame`` gives one row per grid
    point: every field that broadcasts to the grid becomes a column; fields
    named in ``_frame_skip`` (diagnostics that are not per point) and nested
    results or mappings are left out.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> import numpy as np
    >>> @dataclass(frozen=True)
    ... class Demo(ResultMixin):
    ...     R: object
    ...     method: str = "x"
    >>> Demo(R=np.array([1.0, 2.0])).to_frame()["R"].tolist()
    [1.0, 2.0]
    """

    #: fields ``to_frame`` leaves out (solver diagnostics, not per grid point)
    _frame_skip: ClassVar[tuple[str, ...]] = ("method", "iterations", "residual")

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (arrays stay arrays; nested results become dicts)."""
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            out[f.name] = v.to_dict() if isinstance(v, ResultMixin) else v
        return out

    def to_frame(self) -> Any:
        """A :class:`pandas.DataFrame` with one row per grid point (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on environment
            raise ImportError(f"{type(self).__name__}.to_frame() needs pandas: "
                              "pip install pandas") from exc
        cols: dict[str, np.ndarray] = {}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if f.name in self._frame_skip or isinstance(v, (ResultMixin, dict)):
                continue
            cols[f.name] = np.asarray(v)
        shape = max((a.shape for a in cols.values()), key=lambda s: int(np.prod(s)), default=())
        out = {}
        for k, a in cols.items():
            try:
                out[k] = np.broadcast_to(a, shape).ravel()
            except ValueError:      # not per grid point (e.g. a per-station vector)
                continue
        return pd.DataFrame(out)


def plain_dict(result: Any) -> dict[str, Any]:
    """The fields of a result dataclass as plain Python (arrays and tuples become lists).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Demo:
    ...     x: object
    ...     names: tuple = ("a",)
    >>> plain_dict(Demo(x=np.array([1.0, 2.0])))
    {'x': [1.0, 2.0], 'names': ['a']}
    """
    out: dict[str, Any] = {}
    for f in fields(result):
        v = getattr(result, f.name)
        out[f.name] = v.tolist() if isinstance(v, np.ndarray) else list(v) if isinstance(v, tuple) else v
    return out

