"""Service-time, latency and burst distributions for the simulator and the generators.

A :class:`Dist` is a frozen description (family and parameters); its
:meth:`Dist.sampler` binds it to a :class:`random.Random` stream and returns a
zero-argument callable that draws one value.  Python's :mod:`random` is used
(not NumPy) because the simulator draws one value at a time, where a bound
``random.Random`` method costs about a tenth of a NumPy scalar draw.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from typing import Any, Callable

from mva._validate import check_nonnegative
from mva.params import param, validate_fields

__all__ = ["Dist", "as_dist", "dist_param", "validate_declared", "FAMILIES"]

#: distribution families understood by :class:`Dist`
FAMILIES = ("deterministic", "exponential", "erlang", "hyperexponential", "uniform")


@dataclass(frozen=True, kw_only=True)
class Dist:
    """A non-negative random variable (a time in processor cycles, or a size).

    Parameters
    ----------
    family : {"deterministic", "exponential", "erlang", "hyperexponential", "uniform"}
        Distribution family.
    mean : float
        Mean, in the unit of the quantity described (cycles for times).
    k : int
        Number of phases of an Erlang distribution (``family="erlang"``).
    cs2 : float
        Squared coefficient of variation of a hyperexponential distribution
        (``> 1``; balanced means).  For the other families it is ignored on
        input and set to the family's value (0, 1, ``1/k``, ...).
    width : float
        Half-width of a uniform distribution, ``mean - width`` to
        ``mean + width`` (``0 <= width <= mean``).

    Notes
    -----
    Squared coefficients of variation: deterministic 0, exponential 1,
    Erlang-:math:`k` :math:`1/k`, uniform :math:`w^2 / (3 m^2)`, and the
    two-phase hyperexponential with balanced means

    .. math::

        p_1 = \\tfrac12\\Bigl(1 + \\sqrt{\\tfrac{c^2 - 1}{c^2 + 1}}\\Bigr),\\quad
        \\mu_i = \\frac{2 p_i}{m},

    which has mean :math:`m` and squared coefficient of variation :math:`c^2`.

    Examples
    --------
    >>> import random
    >>> d = Dist(family="erlang", mean=10.0, k=4)
    >>> d.cs2
    0.25
    >>> draw = d.sampler(random.Random(1))
    >>> x = [draw() for _ in range(20000)]
    >>> round(sum(x) / len(x), 0)
    10.0
    >>> Dist.from_cs2(5.0, 0.0)
    Dist(family='deterministic', mean=5.0, k=1, cs2=0.0, width=0.0)
    """

    family: str = param(symbol="family", meaning="distribution family", unit="",
                        kind="choice", choices=FAMILIES, default="exponential", cli=False)
    mean: float = param(symbol="m", meaning="mean of the distribution",
                        unit="cycles (bytes for sizes)", low=0, default=1.0, cli=False)
    k: int = param(symbol="k", meaning="phases of an Erlang distribution", unit="",
                   kind="int", low=1, default=1, cli=False)
    cs2: float = param(symbol="c^2", meaning="squared coefficient of variation "
                       "(input of the hyperexponential family only, > 1 there)", unit="",
                       low=0, default=1.0, cli=False)
    width: float = param(symbol="w", meaning="half-width of a uniform distribution "
                         "(<= mean)", unit="cycles (bytes for sizes)", low=0, default=0.0,
                         cli=False)

    def __post_init__(self) -> None:
        v = validate_fields(self, skip=("cs2",))
        object.__setattr__(self, "mean", float(v["mean"]))
        object.__setattr__(self, "k", int(v["k"]))
        if self.family == "hyperexponential":
            c = float(validate_fields(self, only=("cs2",))["cs2"])
            if c <= 1.0:
                raise ValueError(f"cs2 must be > 1 for a hyperexponential distribution; got {c!r}")
        w = float(v["width"])
        if w > self.mean:
            raise ValueError(f"width must lie in [0, mean={self.mean!r}]; got {w!r}")
        object.__setattr__(self, "width", w)
        object.__setattr__(self, "cs2", float(self._family_cs2()))

    # -- constructors ---------------------------------------------------------
    @classmethod
    def constant(cls, value: float) -> "Dist":
        """A deterministic value."""
        return cls(family="deterministic", mean=value)

    @classmethod
    def exponential(cls, mean: float) -> "Dist":
        """An exponential distribution with the given mean."""
        return cls(family="exponential", mean=mean)

    @classmethod
    def from_cs2(cls, mean: float, cs2: float) -> "Dist":
        """The usual two-moment fit: deterministic (0), Erlang (< 1), exponential (1), H2 (> 1).

        For ``0 < cs2 < 1`` the Erlang order is ``k = round(1 / cs2)``, so the
        fitted squared coefficient of variation is ``1/k`` (exact when ``1/cs2``
        is an integer).
        """
        cs2 = float(check_nonnegative("cs2", cs2))
        if cs2 == 0.0:
            return cls(family="deterministic", mean=mean)
        if cs2 == 1.0:
            return cls(family="exponential", mean=mean)
        if cs2 < 1.0:
            return cls(family="erlang", mean=mean, k=max(1, round(1.0 / cs2)))
        return cls(family="hyperexponential", mean=mean, cs2=cs2)

    # -- moments ---------------------------------------------------------------
    def _family_cs2(self) -> float:
        if self.family == "deterministic" or self.mean == 0.0:
            return 0.0
        if self.family == "exponential":
            return 1.0
        if self.family == "erlang":
            return 1.0 / self.k
        if self.family == "uniform":
            return self.width ** 2 / (3.0 * self.mean ** 2)
        return self.cs2

    @property
    def variance(self) -> float:
        """Variance, ``cs2 * mean**2``."""
        return self.cs2 * self.mean ** 2

    # -- sampling --------------------------------------------------------------
    def sampler(self, rng: random.Random, *, chunk: int = 256) -> Callable[[], float]:
        """Return a zero-argument function drawing one value.

        The values come from a NumPy generator seeded from ``rng`` (one
        ``getrandbits(64)`` call), drawn ``chunk`` at a time (see
        :meth:`blocks`) and handed out one by one by a C-level iterator:
        several times cheaper per value than a Python-level draw.
        Deterministic for a given state of ``rng``; a constant draws nothing
        from ``rng``.
        """
        m = self.mean
        if self.family == "deterministic" or m == 0.0:
            return lambda: m
        return itertools.chain.from_iterable(iter(self.blocks(rng, chunk=chunk), None)).__next__

    def blocks(self, rng: random.Random, *, chunk: int = 256) -> Callable[[], list[float]]:
        """Return a function giving the next ``chunk`` values of the stream as a list.

        ``blocks(rng)()`` called ``j`` times yields the same values, in the
        same order, as ``chunk * j`` calls of ``sampler(rng)`` on an ``rng``
        in the same state (generators use it to build records in batches).

        Examples
        --------
        >>> import random
        >>> d = Dist.exponential(3.0)
        >>> one = d.sampler(random.Random(5))
        >>> d.blocks(random.Random(5), chunk=4)() == [one() for _ in range(4)]
        True
        """
        arrays = self.arrays(rng, chunk=chunk)
        return lambda: arrays().tolist()

    def arrays(self, rng: random.Random, *, chunk: int = 256) -> Callable[[], Any]:
        """Like :meth:`blocks`, but each block is a NumPy array (the compiled simulator's form).

        The values do not depend on ``chunk`` when it is a multiple of 256
        (the hyperexponential draws its two variates in blocks of 256).

        Examples
        --------
        >>> import random
        >>> d = Dist(family="hyperexponential", mean=2.0, cs2=3.0)
        >>> d.arrays(random.Random(5), chunk=8)().tolist() == d.blocks(random.Random(5), chunk=8)()
        True
        """
        import numpy as np
        m = self.mean
        fam = self.family
        n = int(chunk)
        if fam == "deterministic" or m == 0.0:
            const = np.full(n, m)
            return const.copy
        g = np.random.default_rng(rng.getrandbits(64))
        if fam == "exponential":
            def block() -> Any:
                return g.standard_exponential(n) * m
        elif fam == "erlang":
            k = self.k
            scale = m / k

            def block() -> Any:
                return g.gamma(k, scale, n)
        elif fam == "uniform":
            lo = m - self.width
            span = 2.0 * self.width

            def block() -> Any:
                return lo + span * g.random(n)
        else:  # balanced-means two-phase hyperexponential
            c = self.cs2
            p1 = 0.5 * (1.0 + math.sqrt((c - 1.0) / (c + 1.0)))
            m1 = m / (2.0 * p1)
            m2 = m / (2.0 * (1.0 - p1))

            sub = min(n, 256)       # drawn 256 at a time whatever the chunk (same stream)

            def part(k: int) -> Any:
                e = g.standard_exponential(k)
                return e * np.where(g.random(k) < p1, m1, m2)

            def block() -> Any:
                if n <= sub:
                    return part(n)
                return np.concatenate([part(min(sub, n - i)) for i in range(0, n, sub)])
        return block

    def describe(self) -> str:
        """Short text, e.g. ``"exp(100)"``."""
        m = f"{self.mean:g}"
        return {"deterministic": f"const({m})", "exponential": f"exp({m})",
                "erlang": f"erlang{self.k}({m})", "uniform": f"unif({m}+-{self.width:g})",
                "hyperexponential": f"h2({m}, cs2={self.cs2:g})"}[self.family]


def dist_param(*, symbol: str, meaning: str, unit: str = "cycles", default: Any = 0.0,
               optional: bool = False) -> Any:
    """Declare a field that holds a :class:`Dist` or a number (a constant).

    The declaration (:func:`mva.params.param`) describes the mean: ``>= 0`` in
    ``unit``; :func:`validate_declared` coerces the value with :func:`as_dist`.
    """
    import dataclasses

    f = param(symbol=symbol, meaning=meaning, unit=unit, low=0, optional=optional,
              default=default, cli=False,
              note="a Dist, or a number (a constant)" + (", or None" if optional else ""))
    return dataclasses.field(default=default, metadata={**f.metadata, "dist": True})


def validate_declared(obj: Any, *, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Validate every declared field of a simulator parameter object.

    Fields declared with :func:`dist_param` are coerced to :class:`Dist`
    (:func:`as_dist`) and stored; the others are checked by
    :func:`mva.params.validate_fields`.  Returns the checked values of the
    non-distribution fields by name (the caller stores what it converts).
    """
    import dataclasses

    dists = []
    for f in dataclasses.fields(obj):
        if f.metadata.get("dist") and f.name not in skip:
            dists.append(f.name)
            value = getattr(obj, f.name)
            if value is None and f.metadata["param"].optional:
                continue
            object.__setattr__(obj, f.name, as_dist(f.name, value))
    return validate_fields(obj, skip=(*skip, *dists))


def as_dist(name: str, value: Any) -> Dist:
    """Coerce ``value`` to a :class:`Dist`: a number is a constant, a Dist passes through."""
    if isinstance(value, Dist):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Dist(family="deterministic", mean=float(check_nonnegative(name, value)))
    try:
        import numpy as np
        arr = np.asarray(value)
        if arr.ndim == 0 and arr.dtype.kind in "iuf":
            return Dist(family="deterministic", mean=float(check_nonnegative(name, arr)))
    except Exception:  # pragma: no cover - fall through to the error
        pass
    raise ValueError(f"{name} must be a number of cycles or a Dist; got {value!r}")
