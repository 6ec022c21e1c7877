"""Load-dependent stations in Schweitzer/Linearizer and the multi-server Linearizer.

Accuracy is measured against exact MVA on a scrambled Sobol design of random
networks (the design of ``benchmarks/accuracy_approx_ld_ms.py``); the asserted
limits are the measured figures rounded up, not 1e-9 (these are approximations).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import mva
from benchmarks.accuracy_approx_ld_ms import design, errors
from mva.network import ClosedNetwork


@functools.lru_cache(maxsize=None)
def _cases(kind: str, n: int):
    nets = design(n, kind)
    return tuple(zip(nets, [mva.exact_mva(net) for net in nets]))


def _stats(kind: str, fn, n: int = 128):
    ex_x, ex_q, conv = [], [], 0
    for net, ex in _cases(kind, n):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mva.errors.ConvergenceWarning)
            res = fn(net)
        conv += res.converged
        a, b = errors(res, ex, net)
        ex_x.append(a)
        ex_q.append(b)
        # Little's law over the whole chain population holds at the fixed point
        pop = net.populations.astype(float)
        tot = res.queue_length.sum(axis=1) + res.throughput * net.think_times[net.chains]
        np.testing.assert_allclose(tot, pop[net.chains], rtol=1e-6)
    v, q = np.asarray(ex_x), np.asarray(ex_q)
    return ((v.mean(), np.quantile(v, 0.95), v.max()), (q.mean(), np.quantile(q, 0.95), q.max()),
            conv)


# measured on 128 networks (mean, p95, max), rounded up
@pytest.mark.parametrize("kind, fn, x_lim, q_lim, min_conv", [
    ("multi", lambda n: mva.linearizer_ms(n), (0.005, 0.015, 0.025), (0.005, 0.012, 0.025), 100),
    ("multi", lambda n: mva.schweitzer(n, multiserver="conway"), (0.045, 0.11, 0.16),
     (0.035, 0.06, 0.07), 100),
    ("ld", lambda n: mva.linearizer(n, tol=1e-6), (0.004, 0.012, 0.045), (0.003, 0.009, 0.02), 126),
    ("ld", lambda n: mva.schweitzer(n), (0.025, 0.065, 0.12), (0.017, 0.045, 0.055), 100),
])
def test_accuracy_against_exact_on_random_networks(kind, fn, x_lim, q_lim, min_conv):
    x, q, conv = _stats(kind, fn)
    assert conv >= min_conv
    assert np.all(np.asarray(x) <= x_lim), x
    assert np.all(np.asarray(q) <= q_lim), q


def test_one_server_conway_is_plain_linearizer():
    """m = 1: no marginal terms, so the Conway residence is the queue formula."""
    D = [[1.0, 2.0, 0.5], [2.0, 1.0, 0.7]]
    a = ClosedNetwork(demands=D, populations=[4, 3], kinds=["multi", "queue", "queue"],
                      servers=[1, 1, 1])
    b = ClosedNetwork(demands=D, populations=[4, 3])
    np.testing.assert_allclose(mva.linearizer_ms(a).throughput, mva.linearizer(b).throughput,
                               rtol=1e-7)


def test_conway_single_customer_and_saturation():
    net1 = ClosedNetwork.single_class([4.0, 1.0], population=1, servers=[4, 1], think_time=1.0)
    assert mva.linearizer_ms(net1).response_time[0] == pytest.approx(5.0)
    big = ClosedNetwork.single_class([4.0, 0.1], population=200, servers=[4, 1])
    res = mva.linearizer_ms(big)
    assert res.throughput[0] == pytest.approx(1.0, rel=1e-4)          # m / D
    assert np.all(res.utilization <= 1.0 + 1e-9)


def test_ld_with_min_j_m_rates_matches_conway_closely():
    """An "ld" station with alpha(j) = min(j, m) is an m-server station: both estimates agree
    with exact MVA to within their measured accuracy."""
    N = 6
    ld = ClosedNetwork.single_class([3.0, 1.0], population=N, kinds=["ld", "queue"],
                                    rates=[np.minimum(np.arange(1, N + 1), 3), None],
                                    think_time=2.0)
    ms = ClosedNetwork.single_class([3.0, 1.0], population=N, servers=[3, 1], think_time=2.0)
    ex = mva.exact_mva(ms).throughput[0]
    assert mva.exact_mva(ld).throughput[0] == pytest.approx(ex, rel=1e-12)
    assert mva.linearizer(ld).throughput[0] == pytest.approx(ex, rel=0.01)
    assert mva.linearizer_ms(ms).throughput[0] == pytest.approx(ex, rel=0.01)


def test_solve_dispatches_linearizer_ms():
    net = ClosedNetwork.single_class([3.0, 1.0], population=5, servers=[3, 1])
    assert mva.solve(net, method="linearizer-ms").method == "linearizer-ms"
    with pytest.raises(ValueError, match="multiserver must be one of"):
        mva.schweitzer(net, multiserver="erlang")


def test_fcfs_multi_server_with_class_dependent_times_warns():
    D = [[2.0, 1.0], [1.0, 1.0]]
    with pytest.warns(mva.NonProductFormWarning, match=r"station 'cpu'.*disciplines\[0\]='fcfs'"):
        ClosedNetwork(demands=D, populations=[2, 2], kinds=["multi", "queue"], servers=[2, 1],
                      disciplines=["fcfs", "ps"], station_names=["cpu", "disk"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # processor sharing, or FCFS with equal service times: product form, no warning
        ClosedNetwork(demands=D, populations=[2, 2], kinds=["multi", "queue"], servers=[2, 1])
        ClosedNetwork(demands=[[1.0, 1.0], [1.0, 2.0]], populations=[2, 2],
                      kinds=["multi", "queue"],
                      servers=[2, 1], disciplines=["fcfs", "ps"])
