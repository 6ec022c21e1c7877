"""Machines and workloads from the parameter objects of :mod:`models`.

:func:`machine_from_params` dispatches on the type of the parameters, so the
model and the simulator run on the same machine from one object::

    p = LoPCParams(P=16, W=1000, o=100, L=50)
    models.lopc.solve(p).R            # the model
    simulate(p).cycle_time.mean       # the simulator

Only scalar parameters describe one machine; pass one point of a grid.

Mapping of model parameters to hardware
---------------------------------------
``LoPCParams`` (P, W, o, L, cs2)
    ``P`` single-processor nodes (handlers interrupt the thread, no interrupt
    cost); compute bursts exponential with mean ``W``; request and reply
    handlers with mean ``o`` and squared coefficient of variation ``cs2``;
    constant latency ``L``; uniform all-to-all destinations.  With
    ``servers=S`` (keyword): the client-server variant -- ``S`` nodes whose one
    processor only serves requests, ``P - S`` client nodes sending to them.
``INIParams`` (N or S, K, clusters, dispatch, W, o, l, O, L, cs2_o, cs2_O)
    ``clusters`` clusters of ``S`` single-processor PEs with ``K`` INIs each;
    every request goes to a uniformly chosen PE of another cluster.  The
    thesis's round trip has ``2l`` of intra-cluster latency for four
    intra-cluster hops, so each hop takes ``l/2``; each inter-cluster hop
    takes ``L``.  INI service mean ``O`` with ``cs2_O``; PE handlers mean ``o``
    with ``cs2_o``.
``PolicyParams`` (policy keyword: ``"fixed"``, ``"floating"``, ``"single"``)
    ``nodes`` SMP nodes.  Fixed: ``p - 1`` compute and one dedicated protocol
    processor, ``t_transfer`` added to each round trip.  Floating: ``p``
    compute processors, an idle one acts as protocol processor, ``O_int`` when
    all are busy; every handler pays ``o_direct + o_indirect`` (per handler, as
    in the model).  Single: Floating with one processor.  Handlers: ``o_req``
    (a send handler on the requester's node), ``o_reply`` (request handler at
    the destination), ``o_resp`` (reply handler back home), each plus
    ``o_dispatch``, with ``handler_cs2``; ``t_extra`` is a pure delay per round
    trip; compute bursts exponential with mean ``compute_time``.
``PDQParams`` (shared discipline, not multiplexed)
    A Poisson source feeding one node of ``k`` protocol processors with PDQ
    dispatch and the model's key distribution (see :func:`pdq_machine`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mva._validate import check_choice, check_integer

from ..generators import Workload
from .dists import Dist
from .machine import Machine, NodeSpec

__all__ = ["machine_from_params", "lopc_machine", "ini_machine", "policy_machine",
           "pdq_machine"]


def _scalar(params: Any, name: str) -> float:
    v = getattr(params, name)
    arr = np.asarray(v, dtype=float)
    if arr.ndim != 0:
        raise ValueError(f"{type(params).__name__}.{name} must be a scalar to simulate one "
                         f"machine; got an array of shape {arr.shape}")
    return float(arr)


def _handler(mean: float, cs2: float) -> Dist:
    return Dist.from_cs2(mean, cs2)


def lopc_machine(params: Any, *, servers: int | None = None) -> tuple[Machine, Workload]:
    """Machine and workload of a ``models.lopc.LoPCParams`` (see the module notes).

    Examples
    --------
    >>> from models.lopc import LoPCParams
    >>> m, w = lopc_machine(LoPCParams(P=16, W=1000, o=100, L=50))
    >>> m.n_nodes, w.burst.describe(), w.request_cost.describe(), m.latency.describe()
    (16, 'exp(1000)', 'exp(100)', 'const(50)')
    """
    P = int(_scalar(params, "P"))
    W, o, L, c = (_scalar(params, n) for n in ("W", "o", "L", "cs2"))
    h = _handler(o, c)
    if servers is None:
        m = Machine.homogeneous(P, NodeSpec(compute=1), latency=L, name=f"LoPC P={P}")
        return m, Workload(burst=Dist.exponential(W), request_cost=h, reply_cost=h)
    S = int(check_integer("servers", servers, minimum=1, maximum=P - 1))
    nodes = (NodeSpec(compute=0, protocol=1),) * S + (NodeSpec(compute=1),) * (P - S)
    m = Machine(nodes=nodes, latency=L, name=f"LoPC client-server P={P} S={S}")
    return m, Workload(burst=Dist.exponential(W), request_cost=h, reply_cost=h,
                       targets=tuple(range(S)))


def ini_machine(params: Any) -> tuple[Machine, Workload]:
    """Machine and workload of a ``models.ini.INIParams`` (see the module notes).

    Examples
    --------
    >>> from models.ini import INIParams
    >>> m, w = ini_machine(INIParams(S=4, K=2, W=1000, o=10, O=100, l=20, L=50))
    >>> m.n_nodes, m.cluster_size, m.inis, m.intra_latency.mean, w.dest
    (8, 4, 2, 10.0, 'remote_cluster')
    """
    if params.S is None:
        raise ValueError(f"INIParams: N*K={_scalar(params, 'N')}*{params.K} must be a whole number "
                         "of PEs per cluster to simulate")
    S = int(_scalar(params, "S"))
    K = int(_scalar(params, "K"))
    W, o, l_, O, L, co, cO = (_scalar(params, n)
                              for n in ("W", "o", "l", "O", "L", "cs2_o", "cs2_O"))
    C = int(params.clusters)
    m = Machine(nodes=(NodeSpec(compute=1),) * (S * C), latency=L, cluster_size=S, inis=K,
                ini_dispatch=params.dispatch, ini_cost=_handler(O, cO), intra_latency=l_ / 2.0,
                name=f"INI {C} clusters x {S} PEs, K={K}")
    h = _handler(o, co)
    return m, Workload(burst=Dist.exponential(W), request_cost=h, reply_cost=h,
                       dest="remote_cluster")


def policy_machine(params: Any, *, policy: str = "fixed") -> tuple[Machine, Workload]:
    """Machine and workload of a ``models.policy.PolicyParams`` under one policy.

    Examples
    --------
    >>> from models.policy import preset
    >>> m, w = policy_machine(preset("null-handler", p=2, U=0.5), policy="floating")
    >>> m.nodes[0].policy, m.nodes[0].interrupt.mean, m.nodes[0].indirect.mean
    ('floating', 200.0, 100.0)
    """
    check_choice("policy", policy, ("fixed", "floating", "single"))
    g = {n: _scalar(params, n) for n in ("p", "nodes", "o_req", "o_reply", "o_resp", "L", "O_int",
                                         "o_direct", "o_indirect", "t_transfer", "o_dispatch",
                                         "t_extra", "handler_cs2")}
    C = _scalar(params, "compute_time")
    p, nodes, cs2, disp = int(g["p"]), int(g["nodes"]), g["handler_cs2"], g["o_dispatch"]
    send = _handler(g["o_req"] + disp, cs2)
    if policy == "fixed":
        if p < 2:
            raise ValueError(f"policy 'fixed' needs p >= 2 processors per node; got p={p}")
        node = NodeSpec(compute=p - 1, protocol=1, send=send,
                        extra_delay=g["t_transfer"] + g["t_extra"])
    else:
        node = NodeSpec(compute=p if policy == "floating" else 1, protocol=0, send=send,
                        interrupt=g["O_int"], indirect=g["o_direct"] + g["o_indirect"],
                        extra_delay=g["t_extra"])
    m = Machine.homogeneous(nodes, node, latency=g["L"], name=f"{policy} p={p}")
    w = Workload(burst=Dist.exponential(C), request_cost=_handler(g["o_reply"] + disp, cs2),
                 reply_cost=_handler(g["o_resp"] + disp, cs2))
    return m, w


def pdq_machine(params: Any, *, discipline: str = "shared") -> tuple[Machine, Workload]:
    """Machine and workload of a ``models.pdq.PDQParams`` (the shared-queue PDQ).

    One Poisson source (a thread sending one-way requests with exponential
    gaps of mean ``1 / rate``) feeds a node of ``k`` dedicated protocol
    processors with PDQ dispatch; handlers have mean ``S`` and ``cs2``; keys
    ``k0 .. k{n_keys-1}`` with Zipf skew ``key_skew``, plus the fractions
    ``f_sequential`` and ``f_nosync``.  The node's protocol resource is the
    PDQ: its response time is ``result.response["request_handler"]``.

    Only ``discipline="shared"`` without ``multiplexed`` is simulated: the
    partitioned and spin-lock organisations and multiplexed processors have no
    counterpart in the simulated hardware yet.

    Examples
    --------
    >>> from models.pdq import PDQParams
    >>> m, w = pdq_machine(PDQParams(k=4, load=0.5, S=100, n_keys=8))
    >>> m.nodes[1].protocol, m.nodes[1].dispatch, w.keys, round(w.burst.mean, 6)
    (4, 'pdq', 8, 50.0)
    """
    check_choice("discipline", discipline, ("shared",))
    if bool(params.multiplexed):
        raise ValueError("PDQParams(multiplexed=True) is not simulated: multiplexed processors "
                         "need closed compute threads, which the open PDQ model does not describe")
    k = int(_scalar(params, "k"))
    rate = float(np.asarray(params.rate, dtype=float))
    if rate <= 0:
        raise ValueError(f"PDQParams: the arrival rate must be > 0 to simulate; got {rate!r}")
    S, cs2 = _scalar(params, "S"), _scalar(params, "cs2")
    m = Machine(nodes=(NodeSpec(compute=1), NodeSpec(compute=0, protocol=k, dispatch="pdq")),
                latency=0.0, name=f"PDQ k={k}")
    w = Workload(burst=Dist.exponential(1.0 / rate), request_cost=_handler(S, cs2), reply_cost=None,
                 targets=(1,), keys=int(_scalar(params, "n_keys")),
                 key_zipf=_scalar(params, "key_skew"),
                 p_sequential=_scalar(params, "f_sequential"), p_nosync=_scalar(params, "f_nosync"))
    return m, w


def machine_from_params(params: Any, **kwargs: Any) -> tuple[Machine, Workload]:
    """The simulator's machine and workload for a model's parameter object.

    Parameters
    ----------
    params : LoPCParams, INIParams, PolicyParams or PDQParams
        Scalar parameters of one configuration.
    **kwargs
        ``servers=`` (LoPC client-server), ``policy=`` (PolicyParams), and the
        PDQ options of :func:`pdq_machine`.

    Returns
    -------
    (Machine, Workload)

    Examples
    --------
    >>> from models.lopc import LoPCParams
    >>> m, w = machine_from_params(LoPCParams(P=4, W=100, o=10, L=5))
    >>> m.describe()
    'LoPC P=4: 4xsingle(c=1,pp=0,fifo), L=const(5)'
    """
    cls = type(params).__name__
    mod = type(params).__module__
    if cls == "LoPCParams":
        return lopc_machine(params, **kwargs)
    if cls == "INIParams":
        if kwargs:
            raise ValueError("machine_from_params(INIParams) takes no options; got "
                             f"{sorted(kwargs)}")
        return ini_machine(params)
    if cls == "PolicyParams":
        return policy_machine(params, **kwargs)
    if cls == "PDQParams":
        return pdq_machine(params, **kwargs)
    raise ValueError(f"params must be LoPCParams, INIParams, PolicyParams or PDQParams; "
                     f"got {mod}.{cls}")
