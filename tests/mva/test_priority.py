"""BKT preemptive-resume priorities: the plain formula and its use by the solvers."""

from __future__ import annotations

import numpy as np
import pytest

import mva
from mva.network import ClosedNetwork


def test_bkt_formula_by_hand():
    S = np.array([[10.0, 1.0], [2.0, 0.0], [3.0, 1.0]])
    V = np.array([[1.0, 2.0], [1.0, 0.0], [2.0, 1.0]])
    Q = np.array([[0.4, 0.2], [0.3, 0.0], [0.5, 0.1]])
    U = np.array([[0.2, 0.1], [0.25, 0.0], [0.3, 0.05]])
    p = [0, 2, 1]
    R = mva.bkt_residence(S, V, Q, U, p)
    # class 0 (lowest) at station 0: waits for everybody, preempted by classes 1 and 2
    r00 = (10.0 + 10.0 * 0.4 + 2.0 * 0.3 + 3.0 * 0.5) / (1 - 0.25 - 0.3)
    # class 2 (middle): itself and class 1, preempted by class 1
    r20 = (3.0 + 3.0 * 0.5 + 2.0 * 0.3) / (1 - 0.25)
    # class 1 (top): only itself
    r10 = 2.0 + 2.0 * 0.3
    assert R[0, 0] == pytest.approx(1.0 * r00)
    assert R[2, 0] == pytest.approx(2.0 * r20)
    assert R[1, 0] == pytest.approx(r10)
    assert R[0, 1] == pytest.approx(2.0 * (1.0 + 1.0 * 0.2 + 1.0 * 0.1) / (1 - 0.05))


def test_bkt_equal_priorities_ps_is_standard_mva():
    S = np.array([[1.0, 2.0], [3.0, 0.5]])
    V = np.ones((2, 2))
    Q = np.array([[0.4, 0.2], [0.3, 0.7]])
    U = np.array([[0.2, 0.1], [0.25, 0.3]])
    R = mva.bkt_residence(S, V, Q, U, [0, 0], discipline="ps")
    np.testing.assert_allclose(R, S * (1 + Q.sum(axis=0)))


def test_bkt_cs2_residual_life():
    # one class, FCFS, deterministic: R = S (1 + Q - U/2)
    R = mva.bkt_residence([[2.0]], [[1.0]], [[0.8]], [[0.5]], [0], cs2=0.0)
    assert R[0, 0] == pytest.approx(2.0 * (1 + 0.8 - 0.5 / 2))
    # per-arrival seen arrays (C, C, K)
    Qs = np.array([[[0.0], [0.3]], [[0.5], [0.0]]])
    Us = np.array([[[0.0], [0.2]], [[0.1], [0.0]]])
    R = mva.bkt_residence([[10.0], [2.0]], [[1.0], [1.0]], Qs, Us, [0, 1])
    assert R[0, 0] == pytest.approx((10 + 2 * 0.3) / 0.8)
    assert R[1, 0] == pytest.approx(2.0)


def test_bkt_saturation_and_bad_input():
    with pytest.raises(mva.SaturationError):
        mva.bkt_residence([[1.0], [1.0]], [[1.0], [1.0]], [[0.0], [0.5]], [[0.0], [1.0]], [0, 1])
    with pytest.raises(ValueError, match="priorities must have shape"):
        mva.bkt_residence([[1.0]], [[1.0]], [[0.0]], [[0.0]], [0, 1])
    with pytest.raises(ValueError, match="queue_seen must be finite and >= 0; got -1.0"):
        mva.bkt_residence([[1.0]], [[1.0]], [[-1.0]], [[0.0]], [0])
    with pytest.raises(ValueError, match="discipline must be one of 'fcfs', 'ps'; got 'lifo'"):
        mva.bkt_residence([[1.0]], [[1.0]], [[0.0]], [[0.0]], [0], discipline="lifo")


def test_exact_bkt_two_threads_by_hand():
    """Chain 0: low-priority work W at the processor.  Chain 1: high-priority handler o, latency L.

    At N = (1, 1): the low customer sees chain 1 alone (Q_h = U_h = o / (o + L)); the high
    customer sees chain 0 but ignores it.  BKT: R_low = (W + o Q_h) / (1 - U_h), R_high = o.
    """
    W, o, L = 5.0, 2.0, 3.0
    net = ClosedNetwork(demands=[[W, 0.0], [o, L]], populations=[1, 1], kinds=("queue", "delay"),
                        priorities=[0, 1])
    res = mva.exact_mva(net)
    qh = uh = o / (o + L)
    assert res.residence_time[0, 0] == pytest.approx((W + o * qh) / (1 - uh), rel=1e-14)
    assert res.residence_time[1, 0] == pytest.approx(o, rel=1e-14)
    assert res.throughput[1] == pytest.approx(1 / (o + L))
    # without priorities: plain exact MVA (the low class then delays the high one)
    plain = mva.exact_mva(ClosedNetwork(demands=[[W, 0.0], [o, L]], populations=[1, 1],
                                        kinds=("queue", "delay")))
    assert plain.residence_time[1, 0] > o
    assert plain.residence_time[0, 0] < res.residence_time[0, 0]


def test_equal_priorities_equal_no_priorities():
    base = dict(demands=[[1.0, 2.0], [2.0, 0.5]], populations=[3, 2], think_times=[1.0, 1.0])
    a = mva.exact_mva(ClosedNetwork(**base))
    b = mva.exact_mva(ClosedNetwork(**base, priorities=[3, 3]))
    np.testing.assert_allclose(a.queue_length, b.queue_length, rtol=1e-13)
