"""The ``smp-contention sweep`` command: a model over a parameter grid, resumable.

::

    smp-contention sweep lopc --param P=4,8,16 --param W=100:1000:100 --store lopc.sqlite
    smp-contention sweep mypkg.sim:run --param rate=0.1,0.2 --seed 1 --replications 10 \\
        --store sim.sqlite --workers 2

``MODEL`` is a name from :data:`MODELS` or any importable ``module:function``
that takes the parameters as keyword arguments.  Each ``--param NAME=VALUES``
adds a grid dimension (comma lists and ``start:stop[:step]`` ranges, stop
inclusive; non-numeric values are passed as strings); the sweep is the
cartesian product.  ``--store`` makes it resumable: re-running the same
command computes only the points that are not in the file yet.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any, Callable

from .cli._common import add_common, emit

__all__ = ["MODELS", "PARAMS", "register_cli", "resolve_model", "parse_param", "run",
           "model_defaults"]

#: model name -> ``"module:function"`` (or ``"module:function|module:ParamsClass"``
#: when the function takes a parameter object: the keywords that are fields of
#: the class build it, the others -- e.g. ``policy`` -- go to the function).
#: Resolved lazily, only when the command runs.
MODELS: dict[str, str] = {
    "lopc": "models.lopc:solve",
    "ini": "models.ini:solve",
    "policy": "models.policy:solve|models.policy:PolicyParams",
    "pdq": "models.pdq:solve|models.pdq:PDQParams",
}

#: model name -> its parameter class: required parameters that ``--param`` leaves
#: out take the declared typical value (:attr:`mva.params.Param.example`)
PARAMS: dict[str, str] = {
    "lopc": "models.lopc:LoPCParams",
    "ini": "models.ini:INIParams",
    "policy": "models.policy:PolicyParams",
    "pdq": "models.pdq:PDQParams",
}


def model_defaults(name: str, given: Any) -> dict[str, Any]:
    """Values for the parameters of model ``name`` that ``given`` lacks and the model requires.

    Examples
    --------
    >>> model_defaults("ini", {"N": [1, 2]})
    {'W': 41789.0, 'o': 742.0, 'O': 2336.0}
    >>> model_defaults("lopc", {"P": [4], "W": [0.0]})
    {'o': 100.0, 'L': 50.0}
    """
    if name not in PARAMS:
        return {}
    from mva.params import declarations

    out = {}
    for k, spec in declarations(_import(PARAMS[name])).items():
        if k in given or spec.has_default or spec.example is None:
            continue
        out[k] = spec.example
    return out


def _import(spec: str) -> Any:
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise ValueError(f"MODEL: expected a name from {sorted(MODELS)} or 'module:function'; "
                         f"got {spec!r}")
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"MODEL: cannot import module {module!r} ({exc})") from None
    obj: Any = mod
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"MODEL: module {module!r} has no attribute {attr!r}") from None
    return obj


class ModelCall:
    """A picklable call of a model given by its import path.

    Parameters
    ----------
    spec : str
        ``"module:function"``, or ``"module:function|module:ParamsClass"``
        to call ``function(ParamsClass(**fields), **rest)`` where ``fields``
        are the keywords naming fields of the (dataclass) ``ParamsClass``.

    Examples
    --------
    >>> call = ModelCall("math:hypot")
    >>> call.__sweep_name__
    'math:hypot'
    """

    def __init__(self, spec: str) -> None:
        self.spec = spec
        func, _, params = spec.partition("|")
        self._func_spec, self._params_spec = func, params or None
        self._resolved: tuple[Callable[..., Any], Any] | None = None

    @property
    def __sweep_name__(self) -> str:
        return self.spec

    def resolve(self) -> tuple[Callable[..., Any], Any]:
        """Import the function (and parameter class); raises ValueError when missing."""
        if self._resolved is None:
            func = _import(self._func_spec)
            if not callable(func):
                raise ValueError(f"MODEL: {self._func_spec!r} is not callable")
            params = _import(self._params_spec) if self._params_spec else None
            self._resolved = (func, params)
        return self._resolved

    def __call__(self, **kwargs: Any) -> Any:
        func, params = self.resolve()
        if params is not None:
            import dataclasses
            names = {f.name for f in dataclasses.fields(params)}
            fields = {k: v for k, v in kwargs.items() if k in names}
            rest = {k: v for k, v in kwargs.items() if k not in names}
            return func(params(**fields), **rest)
        return func(**kwargs)

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["spec"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"ModelCall({self.spec!r})"


def resolve_model(name: str) -> ModelCall:
    """The callable for a registry name or a ``module:function`` string.

    Examples
    --------
    >>> resolve_model("operator:add").spec
    'operator:add'
    """
    spec = MODELS.get(name, name)
    if ":" not in spec:
        raise ValueError(f"MODEL: unknown model {name!r}; use one of {', '.join(sorted(MODELS))} "
                         f"or 'module:function'")
    call = ModelCall(spec)
    call.resolve()
    return call


def _value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def parse_param(text: str) -> tuple[str, list[Any]]:
    """argparse type for ``--param NAME=v1,v2,...`` (ranges ``a:b[:step]`` allowed).

    Integers stay integers, other numbers are floats, ``true``/``false`` are
    booleans and anything else a string.

    Examples
    --------
    >>> parse_param("N=1:4")
    ('N', [1, 2, 3, 4])
    >>> parse_param("W=0.5,1,2e3")
    ('W', [0.5, 1, 2000.0])
    >>> parse_param("policy=fixed,floating")
    ('policy', ['fixed', 'floating'])
    """
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=v1,v2,...; got {text!r}")
    out: list[Any] = []
    for part in (p.strip() for p in values.split(",")):
        if not part:
            continue
        bits = part.split(":")
        if len(bits) in (2, 3) and all(isinstance(_value(b), (int, float))
                                       and not isinstance(_value(b), bool) for b in bits):
            nums = [_value(b) for b in bits]
            start, stop = nums[0], nums[1]
            step = nums[2] if len(nums) == 3 else 1
            if step <= 0:
                raise argparse.ArgumentTypeError(f"{name}: range step must be > 0; got {step}")
            integral = all(isinstance(v, int) for v in nums)
            k = 0
            while start + k * step <= stop + abs(step) * 1e-9:
                v = start + k * step
                out.append(v if integral else round(float(v), 12))
                k += 1
        else:
            out.append(_value(part))
    if not out:
        raise argparse.ArgumentTypeError(f"{name}: no values given")
    return name, out


def run(args: argparse.Namespace) -> str:
    """Run the sweep described by parsed ``args``; returns the rendered table."""
    from mva.sweeps import sweep

    grid: dict[str, list[Any]] = {}
    for name, values in args.param or []:
        if name in grid:
            raise ValueError(f"--param {name} given twice")
        grid[name] = values
    if not grid:
        raise ValueError("give at least one --param NAME=v1,v2,...")
    fn = resolve_model(args.model)
    fixed = model_defaults(args.model, grid)
    executor: Any = None
    client = None
    if args.scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise ValueError("--scheduler needs dask.distributed: pip install "
                             "'smp-contention[dask]'") from None
        client = executor = Client(args.scheduler)
    elif args.workers is not None:
        if args.workers < 1:
            raise ValueError(f"--workers must be >= 1; got {args.workers}")
        executor = "serial" if args.workers == 1 else "process"
    try:
        table = sweep(fn, grid, executor=executor, store=args.store, progress=not args.no_progress,
                      chunk=args.chunk, seed=args.seed, replications=args.replications,
                      workers=args.workers, on_mismatch=args.on_mismatch,
                      vectorized=False if args.per_point else None,
                      title=args.title, fixed=fixed or None)
    finally:
        if client is not None:
            client.close()
    return emit(table, args)


def register_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``sweep`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "sweep", help="run a model over a parameter grid (resumable, parallel)",
        description="Evaluate MODEL over the cartesian product of the --param values, "
                    "recording finished points in an SQLite --store so that an interrupted "
                    "sweep resumes where it stopped. MODEL is one of "
                    f"{', '.join(sorted(MODELS))} or module:function.")
    p.add_argument("model", metavar="MODEL",
                   help="model name or module:function; a model's parameters not given with "
                        "--param take their defaults")
    p.add_argument("--param", "-p", action="append", type=parse_param, metavar="NAME=V1,V2,...",
                   help="a grid dimension (repeatable); values are comma lists or "
                        "start:stop[:step] ranges (default: none; a model's parameters "
                        "take their declared defaults)")
    p.add_argument("--store", metavar="FILE", default=None,
                   help="SQLite file recording finished points (resume by re-running; a "
                        "vectorised model's large chunks go to the folder FILE-chunks beside "
                        "it: keep the two together) (default: none, nothing recorded)")
    p.add_argument("--workers", "-j", type=int, default=None,
                   help="local worker processes (1 = serial; default: serial for vectorised "
                        "models, one per CPU for per-point functions)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run on a dask.distributed cluster (e.g. tcp://host:8786) "
                        "(default: none, local)")
    p.add_argument("--seed", type=int, default=None,
                   help="base seed: each point gets its own derived seed argument "
                        "(default: none, no seed argument)")
    p.add_argument("--replications", type=int, default=None,
                   help="independent replications per point (needs --seed) (default: none)")
    p.add_argument("--chunk", type=int, default=None,
                   help="points per task (default: chosen by the executor)")
    p.add_argument("--per-point", action="store_true",
                   help="call MODEL once per point (skip the vectorisation probe)")
    p.add_argument("--on-mismatch", choices=("raise", "reuse", "restart"), default="raise",
                   help="when --store holds another sweep or library version (default: raise)")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.add_argument("--title", default=None, help="table title (default: none)")
    add_common(p)
    p.set_defaults(func=run)
    return p
