"""Result dataclass shared by every closed-network MVA solver."""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Any, ClassVar, Mapping

import numpy as np

__all__ = ["Derived", "DerivedFields", "MVAResult", "ResultMixin", "plain_dict", "with_inputs",
           "with_accuracy"]


def _identity(value: Any) -> Any:
    """``value`` itself (unpickles an already computed :class:`Derived`)."""
    return value


class Derived:
    """A result field computed on first access: ``fn(*args)``, then cached.

    Large grids hold one array per output; outputs that are a formula of
    other outputs and the inputs (``Q_q = lam R_q``, ``R = 1/lam``) can be
    stored as a ``Derived`` instead, so that solving a 10^7-point grid keeps
    only the primary arrays.  A field of a :class:`DerivedFields` dataclass
    holding a ``Derived`` returns ``fn(*args)`` when read (arguments that are
    themselves ``Derived`` are resolved first) and keeps that value in place
    of the ``Derived``: later reads, ``==``, ``repr``, ``dataclasses.replace``,
    tables and frames see plain arrays, equal bit for bit to computing the
    formula eagerly.  ``fn`` must be a module-level function for the result
    to pickle (the pending formula is pickled, not its value).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True, kw_only=True)
    ... class Demo(DerivedFields):
    ...     lam: object
    ...     R: object
    >>> lam = np.array([0.5, 0.25])
    >>> r = Demo(lam=lam, R=Derived(np.reciprocal, lam))
    >>> r.R
    array([2., 4.])
    >>> type(vars(r)["R"]).__name__         # the value is kept in place of the formula
    'ndarray'
    """

    __slots__ = ("fn", "args", "_value", "_done")

    def __init__(self, fn: Any, *args: Any) -> None:
        self.fn = fn
        self.args = args
        self._value: Any = None
        self._done = False

    def value(self) -> Any:
        """``fn(*args)``, computed once."""
        if not self._done:
            self._value = self.fn(*(a.value() if type(a) is Derived else a for a in self.args))
            self._done = True
            self.args = ()          # release the inputs the formula no longer needs
        return self._value

    def __reduce__(self) -> Any:
        if self._done:
            return (_identity, (self._value,))
        return (Derived, (self.fn, *self.args))

    def __repr__(self) -> str:
        return f"Derived({getattr(self.fn, '__name__', self.fn)!s})"


class DerivedFields:
    """Mixin for result dataclasses whose fields may hold a :class:`Derived` value.

    Reading such a field computes the value once and stores it in the
    instance in place of the :class:`Derived`; every other attribute reads
    as usual.
    """

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        v = object.__getattribute__(self, name)
        if type(v) is Derived:
            v = v.value()
            object.__getattribute__(self, "__dict__")[name] = v
        return v


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


def _input_columns(params: Any, prefix: str = "") -> dict[str, Any]:
    """The fields of a parameter dataclass (recursively, dotted names), or a mapping's items."""
    if params is None:
        return {}
    if is_dataclass(params) and not isinstance(params, type):
        items = [(f.name, getattr(params, f.name)) for f in fields(params)]
    elif isinstance(params, Mapping):
        items = list(params.items())
    else:
        raise ValueError(f"params must be a dataclass instance or a mapping; "
                         f"got {type(params).__name__}")
    out: dict[str, Any] = {}
    for name, v in items:
        key = prefix + str(name)
        if v is None or callable(v):
            continue
        if (is_dataclass(v) and not isinstance(v, type)) or isinstance(v, Mapping):
            out.update(_input_columns(v, key + "."))
        else:
            out[key] = v
    return out


def with_inputs(result: Any, params: Any = None, /, **inputs: Any) -> Any:
    """Attach the inputs that produced ``result`` and return it.

    Public model wrappers call this on the result they return, so that
    :meth:`ResultMixin.to_frame` and friends can label every grid point with
    its inputs.  ``params`` (a parameter dataclass or a mapping) is kept as
    ``result.params``; its fields (nested dataclasses with dotted names) and
    the keyword ``inputs`` become ``result.inputs``.  Results are frozen
    dataclasses: the inputs are stored beside the fields, so equality,
    ``dataclasses.replace`` and ``dataclasses.fields`` are unchanged.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Demo(ResultMixin):
    ...     R: object
    >>> r = with_inputs(Demo(R=np.array([1.0, 2.0])), {"W": [0, 10]}, P=4)
    >>> r.inputs
    {'W': [0, 10], 'P': 4}
    """
    cols = _input_columns(params)
    cols.update(inputs)
    object.__setattr__(result, "_params", params)
    object.__setattr__(result, "_inputs", cols)
    return result


def with_accuracy(result: Any, provider: Any, measures: Any) -> Any:
    """Attach a lazy error estimate to ``result`` and return it.

    ``provider(result, measure)`` returns the expected relative error of
    ``measure`` at every point of the result; it is called only when
    ``result.<measure>_expected_error`` (or a table, frame or display of the
    result) is asked for, so solving a grid costs nothing more.  The model
    families attach the shipped accuracy map this way (:mod:`models.accuracy`);
    ``provider`` must be picklable (a module-level function or a
    :func:`functools.partial` of one) for results sent between processes.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Demo(ResultMixin):
    ...     R: object
    >>> r = with_accuracy(Demo(R=np.array([1.0, 2.0])), lambda res, m: res.R * 0.01, ("R",))
    >>> r.R_expected_error
    array([0.01, 0.02])
    >>> r.expected_error_measures
    ('R',)
    """
    object.__setattr__(result, "_accuracy_provider", provider)
    object.__setattr__(result, "_accuracy_measures", tuple(measures))
    return result


def _is_scalar_meta(v: Any) -> bool:
    return isinstance(v, (str, bool, int, float, np.generic)) or v is None


class ResultMixin:
    """Labelled data and notebook display for the result dataclasses of vectorised models.

    A model result holds one value per grid point in each field (scalars for a
    single point) plus solver diagnostics.  The public wrapper attaches the
    inputs it solved for (:func:`with_inputs`): ``result.params`` is the
    parameter object and ``result.inputs`` its fields.

    * :meth:`to_frame`: a :class:`pandas.DataFrame` with one row per grid
      point and one column per input, then one per output.  Nested results
      (e.g. the three policies of a comparison) give dotted columns
      (``fixed.throughput``); fields not defined per grid point are left out.
    * :meth:`to_dict`: the same columns as 1-D arrays (plus the scalar
      diagnostics such as ``method``), so ``pandas.DataFrame(r.to_dict())``
      works for grids of any dimension.
    * :meth:`to_xarray`: an :class:`xarray.Dataset` with a named dimension per
      grid axis (extra ``xarray``).
    * :meth:`table`, ``_repr_html_``, ``_repr_markdown_``: an
      :class:`mva.table.Table` of those columns, shown as a table in notebooks.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Demo(ResultMixin):
    ...     R: object
    ...     method: str = "x"
    >>> W = np.array([[0.0], [10.0]])
    >>> r = with_inputs(Demo(R=W + np.array([1.0, 2.0, 3.0])), W=W, o=np.array([1.0, 2.0, 3.0]))
    >>> r.grid_shape
    (2, 3)
    >>> r.to_frame().shape          # 6 points; columns W, o, R
    (6, 3)
    >>> r.to_frame().iloc[4].tolist()
    [10.0, 2.0, 12.0]
    """

    #: fields ``to_frame`` leaves out (solver diagnostics, not per grid point)
    _frame_skip: ClassVar[tuple[str, ...]] = ("method", "iterations", "residual")
    #: per-point properties (not fields) that are columns too, e.g. a combined ``saturated``
    _extra_columns: ClassVar[tuple[str, ...]] = ()

    # -- expected error (accuracy map) -----------------------------------------
    @property
    def expected_error_measures(self) -> tuple[str, ...]:
        """Measures with an ``<measure>_expected_error`` figure (see :func:`with_accuracy`)."""
        return tuple(self.__dict__.get("_accuracy_measures") or ())

    def __getattr__(self, name: str) -> Any:
        if name.endswith("_expected_error"):
            provider = self.__dict__.get("_accuracy_provider")
            measure = name[: -len("_expected_error")]
            if provider is not None and measure in (self.__dict__.get("_accuracy_measures")
                                                    or ()):
                return provider(self, measure)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # -- inputs ---------------------------------------------------------------
    @property
    def params(self) -> Any:
        """The parameter object the result was solved for (``None`` if not attached)."""
        return self.__dict__.get("_params")

    @property
    def inputs(self) -> dict[str, Any]:
        """Input values by name (the fields of :attr:`params` and other wrapper inputs)."""
        return dict(self.__dict__.get("_inputs") or {})

    # -- columns --------------------------------------------------------------
    def _output_arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            key = prefix + f.name
            if f.name in self._frame_skip:
                continue
            if isinstance(v, ResultMixin):
                out.update(v._output_arrays(key + "."))
            elif isinstance(v, Mapping):
                for k, sub in v.items():
                    if isinstance(sub, ResultMixin):
                        out.update(sub._output_arrays(f"{key}.{k}."))
            elif isinstance(v, str):     # a label of the whole result (``policy``, ``kind``)
                continue
            elif v is not None:
                a = np.asarray(v)
                if a.dtype != object or a.ndim:
                    out[key] = a
        for name in self._extra_columns:
            out[prefix + name] = np.asarray(getattr(self, name))
        if not prefix:
            for m in self.expected_error_measures:
                out[f"{m}_expected_error"] = np.asarray(getattr(self, f"{m}_expected_error"))
        return out

    @property
    def grid_shape(self) -> tuple[int, ...]:
        """Shape of the grid of points: the broadcast shape of the per-point outputs."""
        arrays = list(self._output_arrays().values())
        shape = max((a.shape for a in arrays), key=lambda s: (int(np.prod(s)), len(s)), default=())
        return tuple(shape)

    @staticmethod
    def _on_grid(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """``a`` broadcast to the grid, flattened; a leading-axes array (one value per
        curve, e.g. ``CostResult.best_p`` over the ``p`` axis) is repeated along the rest."""
        try:
            return np.broadcast_to(a, shape).ravel()
        except ValueError:
            if 0 < a.ndim < len(shape) and a.shape == shape[:a.ndim]:
                return np.broadcast_to(a.reshape(a.shape + (1,) * (len(shape) - a.ndim)),
                                       shape).ravel()
            raise

    def _columns(self) -> dict[str, np.ndarray]:
        """Inputs then outputs, each broadcast to the grid and flattened (C order)."""
        shape = self.grid_shape
        out: dict[str, np.ndarray] = {}
        outputs = self._output_arrays()
        for name, v in self.inputs.items():
            if name in outputs:
                continue
            try:
                a = np.asarray(v)
                if a.dtype == object and a.ndim == 0:
                    continue
                out[name] = self._on_grid(a, shape)
            except ValueError:       # not per grid point (e.g. a per-phase vector)
                continue
        n = int(np.prod(shape))
        for name, v in self._labels().items():
            out[name] = np.full(n, v, dtype=object)
        for name, a in outputs.items():
            try:
                out[name] = self._on_grid(a, shape)
            except ValueError:       # not per grid point
                continue
        return out

    def _labels(self) -> dict[str, str]:
        """String fields that label the whole result (``policy="fixed"``), not diagnostics."""
        return {f.name: getattr(self, f.name) for f in fields(self)  # type: ignore[arg-type]
                if isinstance(getattr(self, f.name), str) and f.name not in self._frame_skip}

    def _meta(self) -> dict[str, Any]:
        """Scalar diagnostics (``method``, ``iterations`` ...) that are not per point."""
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if f.name in self._frame_skip and _is_scalar_meta(v):
                out[f.name] = v.item() if isinstance(v, np.generic) else v
        return out

    def to_dict(self) -> dict[str, Any]:
        """One 1-D array per input and output column; labels and diagnostics as scalars.

        ``pandas.DataFrame(r.to_dict())`` has one row per grid point whatever
        the grid's dimension (a single point gives one row).
        """
        out: dict[str, Any] = dict(self._columns())
        out.update(self._labels())
        for k, v in self._meta().items():
            out.setdefault(k, v)
        return out

    def to_frame(self) -> Any:
        """A :class:`pandas.DataFrame`: one row per grid point, a column per input and output.

        Needs pandas.  Grid point ``i`` is ``numpy.unravel_index(i, r.grid_shape)``
        (C order), so ``frame[c].to_numpy().reshape(r.grid_shape)`` gives a field back.
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on environment
            raise ImportError(f"{type(self).__name__}.to_frame() needs pandas: "
                              "pip install pandas") from exc
        return pd.DataFrame(self._columns())

    def grid_axes(self) -> list[tuple[str, np.ndarray]]:
        """Per grid axis, its name and coordinates: the input that varies only along it.

        Axes along which no single input varies are named ``dim_<i>`` with
        coordinates ``0, 1, ...``.
        """
        shape = self.grid_shape
        axes: list[tuple[str, np.ndarray]] = []
        used: set[str] = set()
        for i, n in enumerate(shape):
            name, coord = f"dim_{i}", np.arange(n)
            for k, v in self.inputs.items():
                a = np.asarray(v)
                if k in used or a.dtype == object or a.ndim > len(shape):
                    continue
                a_full: np.ndarray = a.reshape((1,) * (len(shape) - a.ndim) + a.shape)
                others: list[int] = [d for j, d in enumerate(a_full.shape) if j != i]
                if a_full.shape[i] == n and n > 1 and all(d == 1 for d in others):
                    name, coord = k, a_full.reshape(n)
                    used.add(k)
                    break
            axes.append((name, coord))
        return axes

    def to_xarray(self) -> Any:
        """An :class:`xarray.Dataset` with a named dimension per grid axis (needs xarray).

        Each axis is named after the input that varies along it (``dim_<i>``
        when none does); that input is the axis' coordinate, the other inputs
        and the outputs are data variables over the grid, and the scalar
        diagnostics are attributes.
        """
        try:
            import xarray as xr
        except ImportError as exc:
            raise ImportError(f"{type(self).__name__}.to_xarray() needs xarray: "
                              "pip install xarray (or the 'xarray' extra)") from exc
        shape = self.grid_shape
        axes = self.grid_axes()
        dims = [name for name, _ in axes]
        coords = {name: coord for name, coord in axes if not name.startswith("dim_")}
        data = {k: (dims, v.reshape(shape)) for k, v in self._columns().items() if k not in coords}
        attrs = {k: (str(v) if v is None else v) for k, v in self._meta().items()}
        return xr.Dataset(data, coords=coords, attrs=attrs)

    # -- display --------------------------------------------------------------
    def table(self, columns: Any = None) -> Any:
        """The columns as an :class:`mva.table.Table` (all of them, or those named)."""
        from .table import Table

        cols = self._columns()
        meta = self._meta()
        title = type(self).__name__ + (f" (method {meta['method']})" if "method" in meta else "")
        t = Table.from_columns(cols, title=title)
        return t.select(list(columns)) if columns is not None else t

    def _repr_html_(self) -> str:
        """Notebook display: :meth:`table` as HTML (inputs, outputs, ``saturated`` and any
        error-estimate columns the result carries)."""
        return self.table()._repr_html_()

    def _repr_markdown_(self) -> str:
        """Notebook display as a Markdown table."""
        return self.table()._repr_markdown_()


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
        out[f.name] = (v.tolist() if isinstance(v, np.ndarray)
                       else list(v) if isinstance(v, tuple) else v)
    return out
