"""One declaration per model parameter: meaning, unit, default, domain and scale.

A parameter dataclass declares each field with :func:`param`, which returns a
:func:`dataclasses.field` carrying a :class:`Param` in its metadata::

    @dataclass(frozen=True, kw_only=True)
    class Params:
        W: Any = param(symbol="W", meaning="compute time between requests", unit="cycles",
                       low=0, valid=(0, 1e5), scale="log", typical=1000.0)

        def __post_init__(self) -> None:
            validate_fields(self)          # every declared field, messages of mva._validate

Everything else is generated from that single declaration: the
``__post_init__`` checks (:func:`validate_fields`), the command-line options
(:mod:`models.cli`), the parameter tables of the documentation (the
``param-table`` directive), the Hypothesis strategies of the test suite and
random designs over the domain the model claims to be valid on
(:func:`design`).

Two domains are declared:

* the *legal* domain (``low``, ``high``, ``low_open``, ``high_open``,
  ``allow_inf``, ``kind``): what the model accepts at all; anything else is
  a :class:`ValueError` naming the parameter, the value and what is allowed;
* the *validity* domain (``valid=(lo, hi)``): the range over which the model
  is claimed (and tested) to be accurate; validation designs draw from it.

Examples
--------
>>> from dataclasses import dataclass
>>> @dataclass(frozen=True, kw_only=True)
... class Toy:
...     n: int = param(symbol="n", meaning="servers", unit="", kind="int", low=1,
...                    valid=(1, 16), default=1)
...     s: float = param(symbol="S", meaning="service time", unit="cycles", low=0,
...                      low_open=True, valid=(10, 1000), scale="log", default=100.0)
...     def __post_init__(self):
...         validate_fields(self)
>>> Toy(n=0)
Traceback (most recent call last):
...
ValueError: n must be >= 1; got 0
>>> d = design(Toy, 4, seed=1)
>>> sorted(d), d["n"].dtype.kind, bool((d["s"] >= 10).all() and (d["s"] <= 1000).all())
(['n', 's'], 'i', True)
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Iterable, Mapping

import numpy as np

from mva._validate import (check_choice, check_integer, check_nonnegative, check_positive,
                           check_positive_or_inf, check_probability, check_range)

__all__ = ["Param", "param", "declarations", "declared", "validate_fields", "design",
           "parameter_rows", "cli_default", "KINDS", "SCALES", "MAX_TIME"]

#: kinds of parameter values
KINDS = ("real", "int", "bool", "choice", "text", "object")
#: scale hints for designs and sweeps
SCALES = ("linear", "log")
#: largest value a model declares for a time parameter (``high=MAX_TIME``, cycles: about 58
#: days at 200 MHz), where the models that declare it are tested; far beyond, fixed points
#: lose their precision (negative cycle times at 1e30), second and third moments overflow
#: (1e200-1e299) and Markov chains' rates underflow (1e308)
MAX_TIME = 1e15

#: largest count or size (messages, values, bytes, processors) a model declares
#: (``high=MAX_COUNT``): a count times a per-item cost of up to :data:`MAX_TIME` stays
#: far inside double precision (the layers and mechanisms models returned inf for
#: counts, sizes and costs near 1e308)
MAX_COUNT = 1e15

#: smallest bandwidth a model declares (``low=MIN_BANDWIDTH``, bytes per cycle): a
#: size of up to :data:`MAX_COUNT` bytes over it stays finite (a bandwidth of 5e-324
#: gave infinite transfer times)
MIN_BANDWIDTH = 1e-9

_MISSING = dataclasses.MISSING


@dataclasses.dataclass(frozen=True, kw_only=True)
class Param:
    """The declaration of one parameter (see :func:`param` for the fields)."""

    name: str = ""
    symbol: str
    meaning: str
    unit: str
    kind: str = "real"
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    allow_inf: bool = False
    optional: bool = False
    choices: tuple[Any, ...] = ()
    valid: tuple[float, float] | None = None
    scale: str = "linear"
    default: Any = _MISSING
    typical: Any = _MISSING
    integral: bool = False
    cli: bool = True
    aliases: tuple[str, ...] = ()
    note: str = ""

    # -- description ------------------------------------------------------
    @property
    def has_default(self) -> bool:
        """True when the dataclass field has a default."""
        return self.default is not _MISSING

    @property
    def example(self) -> Any:
        """The value commands and sweeps use when none is given.

        The field's default, else its declared typical value, else ``None``.
        """
        if self.typical is not _MISSING:
            return self.typical
        if self.default is not _MISSING:
            return self.default
        return None

    def allowed(self) -> str:
        """The legal domain in words (``"integer >= 2"``, ``"[0, 1)"``, ``"> 0 or inf"``)."""
        if self.kind == "bool":
            return "True or False"
        if self.kind in ("choice",):
            return "one of " + ", ".join(map(str, self.choices))
        if self.kind == "text":
            return "text"
        if self.kind == "object":
            return self.note or "an object checked by its class"
        lo, hi = self.low, self.high
        if lo is not None and hi is not None:
            s = f"{'(' if self.low_open else '['}{lo:g}, {hi:g}{')' if self.high_open else ']'}"
        elif lo is not None:
            s = f"{'>' if self.low_open else '>='} {lo:g}"
        elif hi is not None:
            s = f"{'<' if self.high_open else '<='} {hi:g}"
        else:
            s = "any finite number"
        if self.kind == "int":
            s = "integer " + s
        if self.allow_inf:
            s += " (inf allowed)"
        if self.optional:
            s += " or None"
        return s

    def valid_text(self) -> str:
        """The validity range in words (``"2 to 1024 (log)"``), or ``""``."""
        if self.valid is None:
            return ""
        lo, hi = self.valid
        return f"{lo:g} to {hi:g}" + (" (log)" if self.scale == "log" else "")

    def help(self) -> str:
        """One-line help: meaning, unit and allowed values (the default is added by argparse)."""
        unit = f" ({self.unit})" if self.unit else ""
        return f"{self.meaning}{unit}; {self.allowed()}"

    # -- checking ---------------------------------------------------------
    def check(self, value: Any) -> Any:
        """Validate ``value``; return it converted (float or int64 array, bool, str).

        The messages are those of :mod:`mva._validate` (name, value, what is allowed).
        """
        name = self.name
        if self.kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False; got {value!r}")
            return bool(value)
        if self.kind == "choice":
            return check_choice(name, value, self.choices)
        if self.kind == "text":
            if not isinstance(value, str):
                raise ValueError(f"{name} must be text; got {value!r}")
            return value
        if self.kind == "object":
            return value  # structured value (a tuple of nodes, a callable): the class checks it
        lo, hi = self.low, self.high
        if self.kind == "int":
            minimum = None if lo is None else int(math.floor(lo)) + (1 if self.low_open else 0)
            maximum = None if hi is None else int(math.ceil(hi)) - (1 if self.high_open else 0)
            return check_integer(name, value, minimum=minimum, maximum=maximum)
        if lo == 0 and hi is None:
            if self.low_open:
                return (check_positive_or_inf(name, value) if self.allow_inf
                        else check_positive(name, value))
            return check_nonnegative(name, value, allow_inf=self.allow_inf)
        if lo == 0 and hi == 1 and not self.allow_inf:
            return check_probability(name, value, open_low=self.low_open,
                                     open_high=self.high_open)
        if lo is not None and lo > 0 and hi is None and not self.allow_inf:
            check_positive(name, value)  # "finite and > 0" for NaN, inf and negatives
        return check_range(name, value, low=lo, high=hi, low_open=self.low_open,
                           high_open=self.high_open, allow_inf=self.allow_inf)


def param(*, symbol: str, meaning: str, unit: str, kind: str = "real",
          low: float | None = None, high: float | None = None, low_open: bool = False,
          high_open: bool = False, allow_inf: bool = False, optional: bool = False,
          choices: Iterable[Any] = (), valid: tuple[float, float] | None = None,
          scale: str = "linear", default: Any = _MISSING, typical: Any = _MISSING,
          integral: bool = False, cli: bool = True, aliases: Iterable[str] = (),
          note: str = "") -> Any:
    """Declare a dataclass field as a model parameter.

    Parameters
    ----------
    symbol : str
        The symbol of the papers and the docs (``"O_{int}"`` style LaTeX-free text).
    meaning : str
        One line saying what the parameter is.
    unit : str
        Its unit (``"cycles"``, ``"bytes"``, ``"per cycle"``; ``""`` for a
        pure number).
    kind : {"real", "int", "bool", "choice", "text", "object"}
        Value type.  ``"object"`` is a structured value (a tuple of nodes, a
        callable) that the class checks itself; ``note`` then says what is
        allowed.
    low, high, low_open, high_open, allow_inf
        The legal domain (``None``: unbounded; ``allow_inf``: ``+inf`` is
        accepted above an open upper end).
    optional : bool
        ``None`` is accepted (the value is then derived from other fields).
    choices : iterable
        The allowed values of a ``"choice"`` parameter.
    valid : (lo, hi), optional
        The range the model is claimed valid over (designs, docs, tests).
    scale : {"linear", "log"}
        How designs and sweeps spread values over ``valid``.
    default
        The dataclass default (omit for a required field).
    typical
        The value commands and sweeps use for a required field (or instead
        of the default).
    integral : bool
        A real parameter whose designs and command-line grids use whole
        numbers (``N`` PEs per INI: real in the model, whole on a machine).
    cli : bool
        Whether commands offer an option for it.
    aliases : iterable of str
        Deprecated command-line spellings (hidden, print a deprecation note).
    note : str
        A longer remark for the docs table.

    Returns
    -------
    dataclasses.Field
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}; got {scale!r}")
    if valid is not None:
        vlo, vhi = valid
        if not vlo <= vhi:
            raise ValueError(f"valid must be (lo, hi) with lo <= hi; got {valid!r}")
    spec = Param(symbol=symbol, meaning=meaning, unit=unit, kind=kind, low=low, high=high,
                 low_open=low_open, high_open=high_open, allow_inf=allow_inf, optional=optional,
                 choices=tuple(choices),
                 valid=None if valid is None else (float(valid[0]), float(valid[1])),
                 scale=scale, default=default, typical=typical, integral=integral, cli=cli,
                 aliases=tuple(aliases),
                 note=note)
    meta = {"param": spec}
    if default is _MISSING:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


@functools.lru_cache(maxsize=None)
def _declarations(cls: type) -> tuple[tuple[str, Param], ...]:
    out = []
    for f in dataclasses.fields(cls):
        spec = f.metadata.get("param")
        if spec is not None:
            out.append((f.name, dataclasses.replace(spec, name=f.name)))
    return tuple(out)


def declarations(cls: Any) -> dict[str, Param]:
    """The :class:`Param` of every declared field of a parameter class (or instance), in order.

    Examples
    --------
    >>> from models.lopc import LoPCParams
    >>> d = declarations(LoPCParams)
    >>> list(d), d["P"].allowed(), d["W"].unit
    (['P', 'W', 'o', 'L', 'cs2'], 'integer >= 2', 'cycles')
    """
    if not isinstance(cls, type):
        cls = type(cls)
    return dict(_declarations(cls))


def declared(cls: Any, name: str) -> Param:
    """The declaration of field ``name`` of ``cls`` (``ValueError`` naming the allowed ones)."""
    d = declarations(cls)
    if name not in d:
        raise ValueError(f"{getattr(cls, '__name__', cls)} has no parameter {name!r}; "
                         f"parameters: {', '.join(d)}")
    return d[name]


def validate_fields(obj: Any, *, skip: Iterable[str] = (), store: bool = False,
                    only: Iterable[str] | None = None) -> dict[str, Any]:
    """Check every declared field of ``obj``; return the checked values by name.

    Fields whose value is ``None`` and that are declared ``optional`` are
    skipped (they are derived by the class); so are the names in ``skip``.
    With ``store=True`` the checked values are written back to the (frozen)
    instance: 0-d numeric arrays as Python ``float`` / ``int``.  ``only``
    restricts the check to the named fields.
    """
    out: dict[str, Any] = {}
    skipped = set(skip)
    wanted = None if only is None else set(only)
    for name, spec in _declarations(type(obj)):  # type: ignore[arg-type]
        if name in skipped or (wanted is not None and name not in wanted):
            continue
        value = getattr(obj, name)
        if value is None and spec.optional:
            continue
        v = spec.check(value)
        out[name] = v
        if store and isinstance(v, np.ndarray):
            if v.ndim == 0:
                v = int(v) if spec.kind == "int" else float(v)
            object.__setattr__(obj, name, v)
    return out


def cli_default(cls: Any, name: str) -> Any:
    """The value a command uses for ``name`` when no option is given (see :attr:`Param.example`)."""
    return declared(cls, name).example


# ---------------------------------------------------------------------------
# designs over the validity domain
# ---------------------------------------------------------------------------

def _to_values(spec: Param, u: np.ndarray) -> np.ndarray:
    """Map uniform ``u`` in [0, 1) onto ``spec.valid`` honouring scale and integrality."""
    lo, hi = (float(x) for x in spec.valid)  # type: ignore[union-attr]
    if spec.kind == "int" or spec.integral:
        if spec.scale == "log":
            a, b = math.log(lo - 0.5 if lo > 0.5 else 0.5), math.log(hi + 0.5)
            x = np.exp(a + u * (b - a))
        else:
            x = lo - 0.5 + u * (hi - lo + 1.0)
        x = np.clip(np.round(x), lo, hi)
        return x.astype(np.int64) if spec.kind == "int" else x
    if spec.scale == "log":
        if lo > 0:
            return np.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))
        # a log scale that includes 0: spread log(1 + x) uniformly
        return np.clip(np.expm1(u * math.log1p(hi - lo)) + lo, lo, hi)
    return lo + u * (hi - lo)


def design(cls: Any, n: int, *, seed: int, method: str = "sobol",
           vary: Iterable[str] | None = None, fixed: Mapping[str, Any] | None = None,
           output: str = "dict") -> Any:
    """A random design of ``n`` points over the declared validity domain of ``cls``.

    Parameters
    ----------
    cls : type
        A parameter dataclass declared with :func:`param`.
    n : int
        Number of points (a power of two keeps a Sobol design balanced).
    seed : int
        Seed of the scrambled sequence (required: designs are reproducible).
    method : {"sobol", "lhs", "halton", "random"}
        :class:`scipy.stats.qmc.Sobol`, :class:`~scipy.stats.qmc.LatinHypercube`,
        :class:`~scipy.stats.qmc.Halton` or plain uniform draws.
    vary : iterable of str, optional
        The fields to vary (default: every field with a ``valid`` range not
        in ``fixed``).
    fixed : mapping, optional
        Values for other fields (kept constant).
    output : {"dict", "params", "list"}
        A dict of arrays (``fixed`` included), one parameter object with array
        fields, or a list of ``n`` parameter objects.

    Returns
    -------
    dict or parameter object or list

    Notes
    -----
    Integer fields are rounded to the nearest integer of their (log-)uniform
    image, so every integer of the range has about equal probability;
    ``scale="log"`` spreads values uniformly in ``log x`` (``log(1 + x)``
    when the range starts at 0).

    Examples
    --------
    >>> from models.lopc import LoPCParams
    >>> d = design(LoPCParams, 8, seed=0)
    >>> int(d["P"].min()) >= 2 and int(d["P"].max()) <= 1024
    True
    >>> p = design(LoPCParams, 8, seed=0, output="params")
    >>> p.W.shape
    (8,)
    """
    from scipy.stats import qmc

    from mva._validate import check_choice as _choice

    _choice("method", method, ("sobol", "lhs", "halton", "random"))
    _choice("output", output, ("dict", "params", "list"))
    n = int(check_integer("n", n, minimum=1))
    decl = declarations(cls)
    fixed = dict(fixed or {})
    for k in fixed:
        declared(cls, k)
    if vary is None:
        names = [k for k, s in decl.items() if s.valid is not None and k not in fixed]
    else:
        names = list(vary)
        for k in names:
            if declared(cls, k).valid is None:
                raise ValueError(f"{k} has no declared validity range to vary over")
    if not names:
        raise ValueError(f"{getattr(cls, '__name__', cls)}: nothing to vary")
    d = len(names)
    if method == "sobol":
        import warnings
        with warnings.catch_warnings():  # non-power-of-two n is allowed, just less balanced
            warnings.simplefilter("ignore", UserWarning)
            u = qmc.Sobol(d, scramble=True, seed=seed).random(n)
    elif method == "lhs":
        u = qmc.LatinHypercube(d, seed=seed).random(n)
    elif method == "halton":
        u = qmc.Halton(d, scramble=True, seed=seed).random(n)
    else:
        u = np.random.default_rng(seed).random((n, d))
    out: dict[str, Any] = {k: _to_values(decl[k], u[:, j]) for j, k in enumerate(names)}
    out.update({k: np.broadcast_to(np.asarray(v), (n,)).copy()
                if np.ndim(v) == 0 and not isinstance(v, (str, bool)) and v is not None else v
                for k, v in fixed.items()})
    if output == "dict":
        return out
    if output == "params":
        return cls(**out)
    return [cls(**{k: (v[i].item() if isinstance(v, np.ndarray) else v) for k, v in out.items()})
            for i in range(n)]


# ---------------------------------------------------------------------------
# documentation
# ---------------------------------------------------------------------------

def parameter_rows(cls: Any) -> list[dict[str, str]]:
    """One row per declared field for the docs (name, symbol, meaning, unit, default, allowed,
    valid).

    Examples
    --------
    >>> from models.lopc import LoPCParams
    >>> parameter_rows(LoPCParams)[0]["allowed"]
    'integer >= 2'
    """
    rows = []
    for name, s in declarations(cls).items():
        if s.has_default:
            dflt = "none" if s.default is None else repr(s.default)
        elif s.typical is not _MISSING:
            dflt = f"required (commands: {s.typical!r})"
        else:
            dflt = "required"
        rows.append({"name": name, "symbol": s.symbol, "meaning": s.meaning,
                     "unit": s.unit or "-", "default": dflt, "allowed": s.allowed(),
                     "valid": s.valid_text() or "-"})
    return rows
