# mypy: disable-error-code="name-defined"
# (the layout constants are injected from _state as globals below, for numba)
"""The compiled event loop and hardware (numba), a line-by-line port of :mod:`.hardware`.

Everything here works on one state -- two flat arrays ``I`` (int64) and
``F`` (float64) holding every field at an offset (see ``FIELDS`` in :mod:`._state`),
built and refilled by :mod:`validation.sim.engine` -- and mirrors the
reference simulator function by function (``start``, ``handler_done``,
``begin`` ... keep their names), creating events in the same order so that
their sequence numbers, and hence the order of simultaneous events, are the
same.  The heap operations are ports of CPython's :mod:`heapq`, so even the
heap's layout is the reference's.

No random number is drawn here: every random quantity is read from a buffer
that the Python side fills with NumPy blocks from the same streams the
reference uses (``Dist.arrays``), and from per-thread record buffers.  An
event never empties a buffer: when one runs low (or the message pool does)
the loop returns :data:`REFILL` *before* the next event and Python tops the
buffers up.  The loop also returns at every mark (:data:`PAUSE`), at the
last (:data:`STOP`), when no event is left (:data:`EMPTY`), and on an error
(:data:`ERROR`: a queue overflow, a request to a node that does not exist,
or an internal buffer underflow), which the Python side turns into the
reference's exception.

An event is ``(time, seq, code)`` with ``code = 8 * argument + type``.
Functions that create one event return it as ``(time, seq, code)``, with
``seq = -1`` for none (the reference's ``None``).
"""

from __future__ import annotations

import numpy as np
from numba import njit as _njit

from . import _state

# the layout and codes (upper-case names of _state) as globals: numba freezes them as constants
globals().update({k: v for k, v in vars(_state).items() if k.isupper()})


def njit(**kw):
    """``numba.njit(cache=True)``; without a writable cache directory, compile in memory.

    No function here allocates or raises, so they are compiled without numba's
    reference-counting runtime and with NumPy's error model (no division
    checks): the machine code of :func:`run` then needs no symbol outside
    itself, which lets :mod:`validation.sim._native` load it without numba.
    """
    kw.setdefault("_nrt", False)
    kw.setdefault("error_model", "numpy")

    def deco(fn):
        try:
            return _njit(**kw)(fn)
        except RuntimeError:            # numba: no locator available for the cache
            kw.pop("cache", None)
            return _njit(**kw)(fn)
    return deco

__all__ = ["run", "build_object"]


# ---------------------------------------------------------------- heap (CPython's heapq)
@njit(cache=True, inline="always")
def _less(t1, s1, t2, s2):
    return t1 < t2 or (t1 == t2 and s1 < s2)


@njit(cache=True)
def _siftdown(I, F, startpos, pos):
    ot, os_, oc = I[O_HT], I[O_HS], I[O_HC]
    t, s, c = F[ot + pos], I[os_ + pos], I[oc + pos]
    while pos > startpos:
        parent = (pos - 1) >> 1
        if _less(t, s, F[ot + parent], I[os_ + parent]):
            F[ot + pos], I[os_ + pos], I[oc + pos] = F[ot + parent], I[os_ + parent], I[oc + parent]
            pos = parent
            continue
        break
    F[ot + pos], I[os_ + pos], I[oc + pos] = t, s, c


@njit(cache=True)
def _siftup(I, F, n, pos):
    ot, os_, oc = I[O_HT], I[O_HS], I[O_HC]
    startpos = pos
    t, s, c = F[ot + pos], I[os_ + pos], I[oc + pos]
    child = 2 * pos + 1
    while child < n:
        right = child + 1
        if right < n and not _less(F[ot + child], I[os_ + child], F[ot + right], I[os_ + right]):
            child = right
        F[ot + pos], I[os_ + pos], I[oc + pos] = F[ot + child], I[os_ + child], I[oc + child]
        pos = child
        child = 2 * pos + 1
    F[ot + pos], I[os_ + pos], I[oc + pos] = t, s, c
    _siftdown(I, F, startpos, pos)


@njit(cache=True)
def _push(I, F, ev):
    t, s, c = ev
    if s < 0:
        return
    n = I[I[O_IV] + IV_HN]
    F[I[O_HT] + n] = t
    I[I[O_HS] + n] = s
    I[I[O_HC] + n] = c
    I[I[O_IV] + IV_HN] = n + 1
    _siftdown(I, F, 0, n)


@njit(cache=True)
def _pop(I, F):
    n = I[I[O_IV] + IV_HN] - 1
    I[I[O_IV] + IV_HN] = n
    if n > 0:
        ot, os_, oc = I[O_HT], I[O_HS], I[O_HC]
        F[ot], I[os_], I[oc] = F[ot + n], I[os_ + n], I[oc + n]
        _siftup(I, F, n, 0)


@njit(cache=True)
def _replace(I, F, ev):
    t, s, c = ev
    F[I[O_HT]], I[I[O_HS]], I[I[O_HC]] = t, s, c
    _siftup(I, F, I[I[O_IV] + IV_HN], 0)


@njit(cache=True)
def _ev(I, F, t, typ, arg):
    """A new event (takes the next sequence number)."""
    s = I[I[O_IV] + IV_SEQ]
    I[I[O_IV] + IV_SEQ] = s + 1
    return (t, s, arg * 8 + typ)


@njit(cache=True, inline="always")
def _none():
    return (0.0, -1, 0)


# PDQ eligible heap of one node (row ``row`` of pq, ordered by arrival number m_pseq)
@njit(cache=True)
def _pq_push(I, F, row, m):
    q = I[O_PQ] + row * I[W_POOL]
    ps = I[O_M_PSEQ]
    pos = I[I[O_PQ_N] + row]
    I[I[O_PQ_N] + row] = pos + 1
    key = I[ps + m]
    while pos > 0:
        parent = (pos - 1) >> 1
        if key < I[ps + I[q + parent]]:
            I[q + pos] = I[q + parent]
            pos = parent
            continue
        break
    I[q + pos] = m


@njit(cache=True)
def _pq_pop(I, F, row):
    q = I[O_PQ] + row * I[W_POOL]
    ps = I[O_M_PSEQ]
    n = I[I[O_PQ_N] + row] - 1
    I[I[O_PQ_N] + row] = n
    top = I[q]
    if n > 0:
        last = I[q + n]
        pos = 0
        child = 1
        while child < n:
            right = child + 1
            if right < n and not I[ps + I[q + child]] < I[ps + I[q + right]]:
                child = right
            I[q + pos] = I[q + child]
            pos = child
            child = 2 * pos + 1
        key = I[ps + last]
        while pos > 0:
            parent = (pos - 1) >> 1
            if key < I[ps + I[q + parent]]:
                I[q + pos] = I[q + parent]
                pos = parent
                continue
            break
        I[q + pos] = last
    return top


# ---------------------------------------------------------------- draws and errors
@njit(cache=True)
def _draw(I, F, st):
    if I[I[O_ST_KIND] + st] == 0:
        return F[I[O_ST_CONST] + st]
    p = I[I[O_ST_POS] + st]
    if p >= I[I[O_ST_LEN] + st]:
        I[I[O_IV] + IV_ERR] = ERR_UNDERFLOW
        I[I[O_IV] + IV_ERR_A] = st
        return 0.0
    I[I[O_ST_POS] + st] = p + 1
    if I[I[O_ST_LEN] + st] - p - 1 < I[I[O_IV] + IV_STREAM_LOW]:
        I[I[O_IV] + IV_LOW] = 1
    return F[I[O_ST_BUF] + (st) * I[W_SCAP] + p]


@njit(cache=True)
def _node_draw(I, F, nd, slot):
    return _draw(I, F, I[I[O_ND_STREAM] + (nd) * I[W_NS] + slot])


@njit(cache=True)
def _overflow(I, F, r, now):
    if I[I[O_IV] + IV_ERR] == 0:
        I[I[O_IV] + IV_ERR] = ERR_OVERFLOW
        I[I[O_IV] + IV_ERR_A] = r
        F[I[O_FV] + FV_ERR_T] = now


# ---------------------------------------------------------------- messages
@njit(cache=True)
def _alloc(I, F):
    m = I[I[O_IV] + IV_FREE]
    if m < 0:
        I[I[O_IV] + IV_ERR] = ERR_POOL
        return 0
    I[I[O_IV] + IV_FREE] = I[I[O_M_NEXT] + m]
    I[I[O_M_NEXT] + m] = -1
    nf = I[I[O_IV] + IV_NFREE] - 1
    I[I[O_IV] + IV_NFREE] = nf
    if nf < I[I[O_IV] + IV_POOL_LOW]:
        I[I[O_IV] + IV_LOW] = 1
    return m


@njit(cache=True)
def _free(I, F, m):
    I[I[O_M_NEXT] + m] = I[I[O_IV] + IV_FREE]
    I[I[O_IV] + IV_FREE] = m
    I[I[O_IV] + IV_NFREE] += 1


# ---------------------------------------------------------------- INIs
@njit(cache=True)
def _flush(I, F, r, now):
    dt = now - F[I[O_R_LAST] + r]
    if dt:
        F[I[O_R_AREA] + r] += I[I[O_R_N] + r] * dt
        F[I[O_R_BAREA] + r] += I[I[O_R_BUSY] + r] * dt
        F[I[O_R_LAST] + r] = now


@njit(cache=True)
def _ini_service(I, F, m):
    if I[I[O_CFG] + C_SIZECOST] == 0:
        return _draw(I, F, ST_INI)
    base = _draw(I, F, ST_INI)
    return base * F[I[O_M_INIF] + m] if F[I[O_FCFG] + F_INIMEAN] > 0 else F[I[O_M_INIF] + m]


@njit(cache=True)
def _station_for(I, F, node, out):
    c = I[I[O_ND_CLUSTER] + node]
    if I[I[O_CFG] + C_SHARED]:
        return c
    K = I[I[O_CFG] + C_K]
    if I[I[O_CFG] + C_RR]:
        rr = (I[O_RR_OUT] if out else I[O_RR_IN]) + node
        k = I[rr]
        I[rr] = k + 1 if k + 1 < K else 0
        return c * K + k
    return c * K + (node % I[I[O_CFG] + C_CSIZE]) % K


@njit(cache=True)
def _travel(I, F, now, m, a, b):
    """The event of message ``m`` leaving node ``a`` for node ``b``."""
    I[I[O_M_TO] + m] = b
    if I[I[O_CFG] + C_LATDIRECT]:
        return _ev(I, F, now + F[I[O_FCFG] + F_LATDIRECT], NODE_ARRIVE, m)
    if not I[I[O_CFG] + C_CLUSTERED]:
        return _ev(I, F, now + _draw(I, F, ST_LAT), NODE_ARRIVE, m)
    if I[I[O_ND_CLUSTER] + a] == I[I[O_ND_CLUSTER] + b]:
        return _ev(I, F, now + _draw(I, F, ST_INTRA), NODE_ARRIVE, m)
    I[I[O_M_HOP] + m] = 0
    I[I[O_M_STATION] + m] = _station_for(I, F, a, True)
    return _ev(I, F, now + _draw(I, F, ST_INTRA), INI_ARRIVE, m)


@njit(cache=True)
def ini_arrive(I, F, now, m):
    s = I[I[O_M_STATION] + m]
    r = I[I[O_CFG] + C_RINI] + s
    _flush(I, F, r, now)
    I[I[O_R_N] + r] += 1
    if I[I[O_R_N] + r] > I[I[O_CFG] + C_QCAP]:
        _overflow(I, F, r, now)
    F[I[O_R_ARRSUM] + r] += now
    F[I[O_M_ARR] + m] = now
    if I[I[O_INI_BUSY] + s] < I[I[O_INI_SERVERS] + s]:
        I[I[O_INI_BUSY] + s] += 1
        I[I[O_R_BUSY] + r] += 1
        return _ev(I, F, now + _ini_service(I, F, m), INI_DONE, m)
    I[I[O_M_NEXT] + m] = -1
    if I[I[O_INI_HEAD] + s] < 0:
        I[I[O_INI_HEAD] + s] = m
    else:
        I[I[O_M_NEXT] + I[I[O_INI_TAIL] + s]] = m
    I[I[O_INI_TAIL] + s] = m
    return _none()


@njit(cache=True)
def ini_done(I, F, now, m):
    s = I[I[O_M_STATION] + m]
    r = I[I[O_CFG] + C_RINI] + s
    _flush(I, F, r, now)
    I[I[O_R_N] + r] -= 1
    a = F[I[O_M_ARR] + m]
    F[I[O_R_ARRSUM] + r] -= a
    F[I[O_R_RES] + r] += now - a
    I[I[O_R_DEP] + r] += 1
    m2 = I[I[O_INI_HEAD] + s]
    if m2 >= 0:
        I[I[O_INI_HEAD] + s] = I[I[O_M_NEXT] + m2]
        I[I[O_M_NEXT] + m2] = -1
        _push(I, F, _ev(I, F, now + _ini_service(I, F, m2), INI_DONE, m2))
    else:
        I[I[O_INI_BUSY] + s] -= 1
        I[I[O_R_BUSY] + r] -= 1
    if I[I[O_M_HOP] + m] == 0:
        I[I[O_M_HOP] + m] = 1
        I[I[O_M_STATION] + m] = _station_for(I, F, I[I[O_M_TO] + m], False)
        return _ev(I, F, now + _draw(I, F, ST_LAT), INI_ARRIVE, m)
    return _ev(I, F, now + _draw(I, F, ST_INTRA), NODE_ARRIVE, m)


# ---------------------------------------------------------------- protocol queues
@njit(cache=True)
def _queue_nonempty(I, F, nd):
    if I[I[O_ND_PDQ] + nd]:
        return I[I[O_PQ_N] + I[I[O_ND_PDQROW] + nd]] > 0
    return I[I[O_ND_QLEN] + nd] > 0


@njit(cache=True)
def _fifo_append(I, F, nd, m):
    I[I[O_M_NEXT] + m] = -1
    if I[I[O_ND_QHEAD] + nd] < 0:
        I[I[O_ND_QHEAD] + nd] = m
    else:
        I[I[O_M_NEXT] + I[I[O_ND_QTAIL] + nd]] = m
    I[I[O_ND_QTAIL] + nd] = m
    I[I[O_ND_QLEN] + nd] += 1


@njit(cache=True)
def _is_sync_key(k):
    return k >= 0


@njit(cache=True)
def pdq_enqueue(I, F, nd, m, now):
    """Message ``m`` joins node ``nd``'s PDQ: eligible, or behind its key's earlier messages."""
    I[I[O_ND_PDQWAIT] + nd] += 1
    if I[I[O_ND_PDQWAIT] + nd] + I[I[O_ND_NACTING] + nd] > I[I[O_CFG] + C_QCAP]:
        _overflow(I, F, nd, now)
    I[I[O_M_PSEQ] + m] = I[I[O_IV] + IV_PDQSEQ]
    I[I[O_IV] + IV_PDQSEQ] += 1
    k = I[I[O_M_KEY] + m]
    if _is_sync_key(k):
        if I[I[O_KEY_ON] + (nd) * I[W_NK] + k]:            # the key is running or already has an eligible message
            I[I[O_M_NEXT] + m] = -1
            if I[I[O_KEY_HEAD] + (nd) * I[W_NK] + k] < 0:
                I[I[O_KEY_HEAD] + (nd) * I[W_NK] + k] = m
            else:
                I[I[O_M_NEXT] + I[I[O_KEY_TAIL] + (nd) * I[W_NK] + k]] = m
            I[I[O_KEY_TAIL] + (nd) * I[W_NK] + k] = m
            return
        I[I[O_KEY_ON] + (nd) * I[W_NK] + k] = 1
        I[I[O_KEY_HEAD] + (nd) * I[W_NK] + k] = -1
    _pq_push(I, F, I[I[O_ND_PDQROW] + nd], m)


@njit(cache=True)
def pick(I, F, nd):
    """Remove and return the next dispatchable handler of node ``nd`` (or -1)."""
    if I[I[O_ND_NACTING] + nd] >= I[I[O_ND_LIMIT] + nd]:
        return -1
    if not _queue_nonempty(I, F, nd):
        return -1
    if not I[I[O_ND_PDQ] + nd]:
        m = I[I[O_ND_QHEAD] + nd]
        if I[I[O_ND_SPIN] + nd] and (I[I[O_ND_SEQRUN] + nd] or (
                I[I[O_M_KEY] + m] == KEY_SEQUENTIAL and I[I[O_ND_NACTING] + nd])):
            return -1  # a sequential handler runs alone, or drains
        I[I[O_ND_QHEAD] + nd] = I[I[O_M_NEXT] + m]
        I[I[O_M_NEXT] + m] = -1
        I[I[O_ND_QLEN] + nd] -= 1
        return m
    if I[I[O_ND_SEQRUN] + nd]:
        return -1
    row = I[I[O_ND_PDQROW] + nd]
    m = I[I[O_PQ] + (row) * I[W_POOL] + 0]
    if I[I[O_M_KEY] + m] == KEY_SEQUENTIAL and I[I[O_ND_NACTING] + nd]:
        return -1
    _pq_pop(I, F, row)
    I[I[O_ND_PDQWAIT] + nd] -= 1
    return m


@njit(cache=True)
def dispatch_more(I, F, nd, now):
    while True:
        m = pick(I, F, nd)
        if m < 0:
            return
        _push(I, F, start(I, F, nd, now, m, -1))


@njit(cache=True)
def victim(I, F, nd):
    """A computing processor of node ``nd`` to interrupt (round-robin), or -1."""
    k = I[I[O_ND_NPROCS] + nd]
    if k == 1:
        y = I[I[O_ND_PROCS] + (nd) * I[W_MAXP] + 0]
        return y if I[I[O_P_STATE] + y] == COMPUTING and not I[I[O_P_ACTING] + y] else -1
    i = I[I[O_ND_RR] + nd]
    for _ in range(k):
        i = i + 1 if i + 1 < k else 0
        y = I[I[O_ND_PROCS] + (nd) * I[W_MAXP] + i]
        if I[I[O_P_STATE] + y] == COMPUTING and not I[I[O_P_ACTING] + y]:
            I[I[O_ND_RR] + nd] = i
            return y
    return -1


@njit(cache=True)
def _idle_append(I, F, nd, x):
    I[I[O_ND_IDLE] + (nd) * I[W_MAXP] + I[I[O_ND_NIDLE] + nd]] = x
    I[I[O_ND_NIDLE] + nd] += 1


@njit(cache=True)
def _idle_remove(I, F, nd, x):
    n = I[I[O_ND_NIDLE] + nd]
    ids = I[O_ND_IDLE] + nd * I[W_MAXP]
    for i in range(n):
        if I[ids + i] == x:
            for j in range(i, n - 1):
                I[ids + j] = I[ids + j + 1]
            I[I[O_ND_NIDLE] + nd] = n - 1
            return


@njit(cache=True)
def start(I, F, nd, now, m, x):
    """Start handler ``m`` at node ``nd``; returns the handler's end event.

    ``x`` is the processor continuing as protocol processor, or -1 to
    choose one: an idle one, else a computing one to interrupt.
    """
    I[I[O_ND_NACTING] + nd] += 1
    dur = F[I[O_M_COST] + m]
    if (I[I[O_ND_PDQ] + nd] or I[I[O_ND_SPIN] + nd]) and I[I[O_M_KEY] + m] == KEY_SEQUENTIAL:
        I[I[O_ND_SEQRUN] + nd] = 1
    if I[I[O_ND_DEDICATED] + nd]:
        I[I[O_M_PROC] + m] = -1
        k = I[I[O_M_KEY] + m]
        if I[I[O_ND_SPIN] + nd] and _is_sync_key(k):
            if I[I[O_ND_STREAM] + (nd) * I[W_NS] + S_LOCK] >= 0:
                dur += _node_draw(I, F, nd, S_LOCK)
            kk = (nd) * I[W_NK] + k
            if I[I[O_KEY_ON] + kk]:             # held: spin until it is released
                F[I[O_M_COST] + m] = dur
                F[I[O_M_SPIN] + m] = now
                I[I[O_M_NEXT] + m] = -1
                if I[I[O_KEY_HEAD] + kk] < 0:
                    I[I[O_KEY_HEAD] + kk] = m
                else:
                    I[I[O_M_NEXT] + I[I[O_KEY_TAIL] + kk]] = m
                I[I[O_KEY_TAIL] + kk] = m
                I[I[O_ND_NSPIN] + nd] += 1
                return _none()
            I[I[O_KEY_ON] + kk] = 1             # acquired
            I[I[O_KEY_HEAD] + kk] = -1
        F[I[O_ND_HWORK] + nd] += dur
        return _ev(I, F, now + dur, HANDLER_DONE, m)
    if x < 0:
        if I[I[O_ND_NIDLE] + nd]:
            I[I[O_ND_NIDLE] + nd] -= 1
            x = I[I[O_ND_IDLE] + (nd) * I[W_MAXP] + I[I[O_ND_NIDLE] + nd]]
        else:
            x = victim(I, F, nd)
            if x >= 0:
                I[I[O_IV] + IV_INTERRUPTS] += 1
                if I[I[O_ND_STREAM] + (nd) * I[W_NS] + S_INT] >= 0:
                    dur += _node_draw(I, F, nd, S_INT)
            else:  # only the thread issuing this message is left: it runs it
                x = I[I[O_IV] + IV_ISSUER]
        if I[I[O_ND_STREAM] + (nd) * I[W_NS] + S_DIR] >= 0:
            dur += _node_draw(I, F, nd, S_DIR)
        I[I[O_P_ACTING] + x] = 1
    if I[I[O_ND_STREAM] + (nd) * I[W_NS] + S_IND] >= 0:
        dur += _node_draw(I, F, nd, S_IND)
    if I[I[O_P_STATE] + x] == COMPUTING:
        F[I[O_P_COMP_END] + x] += dur
    end = now + dur
    F[I[O_P_HEND] + x] = end
    I[I[O_M_PROC] + m] = x
    F[I[O_ND_HWORK] + nd] += dur
    return _ev(I, F, end, HANDLER_DONE, m)


@njit(cache=True)
def node_arrive(I, F, now, m):
    nd = I[I[O_M_TO] + m]
    F[I[O_M_ARR] + m] = now
    if I[I[O_ND_PDQ] + nd]:
        pdq_enqueue(I, F, nd, m, now)
        dispatch_more(I, F, nd, now)
        return _none()
    if I[I[O_ND_SPIN] + nd]:
        _fifo_append(I, F, nd, m)
        if I[I[O_ND_QLEN] + nd] + I[I[O_ND_NACTING] + nd] > I[I[O_CFG] + C_QCAP]:
            _overflow(I, F, nd, now)
        dispatch_more(I, F, nd, now)
        return _none()
    a = I[I[O_ND_NACTING] + nd]
    if a < I[I[O_ND_LIMIT] + nd]:
        return start(I, F, nd, now, m, -1)
    _fifo_append(I, F, nd, m)
    if I[I[O_ND_QLEN] + nd] + a > I[I[O_CFG] + C_QCAP]:
        _overflow(I, F, nd, now)
    return _none()


@njit(cache=True)
def _mark_if_due(I, F, now):
    if I[I[O_IV] + IV_COMPLETED] == I[I[O_IV] + IV_NEXTMARK]:
        _push(I, F, _ev(I, F, now, MARK, 0))


@njit(cache=True)
def handler_done(I, F, now, m):
    nd = I[I[O_M_TO] + m]
    I[I[O_ND_NACTING] + nd] -= 1
    ph = I[I[O_M_PHASE] + m]
    I[I[O_ND_PHDEP] + (nd) * I[W_3] + ph] += 1
    F[I[O_ND_PHRES] + (nd) * I[W_3] + ph] += now - F[I[O_M_ARR] + m]
    if I[I[O_ND_PDQ] + nd]:
        k = I[I[O_M_KEY] + m]
        if k == KEY_SEQUENTIAL:
            I[I[O_ND_SEQRUN] + nd] = 0
        elif _is_sync_key(k):
            later = I[I[O_KEY_HEAD] + (nd) * I[W_NK] + k]
            if later >= 0:              # the key's next message becomes eligible
                I[I[O_KEY_HEAD] + (nd) * I[W_NK] + k] = I[I[O_M_NEXT] + later]
                I[I[O_M_NEXT] + later] = -1
                _pq_push(I, F, I[I[O_ND_PDQROW] + nd], later)
            else:
                I[I[O_KEY_ON] + (nd) * I[W_NK] + k] = 0
    elif I[I[O_ND_SPIN] + nd]:
        k = I[I[O_M_KEY] + m]
        if k == KEY_SEQUENTIAL:
            I[I[O_ND_SEQRUN] + nd] = 0
        elif _is_sync_key(k):
            kk = (nd) * I[W_NK] + k
            w = I[I[O_KEY_HEAD] + kk]
            if w >= 0:                  # the lock passes to the earliest spinner
                I[I[O_KEY_HEAD] + kk] = I[I[O_M_NEXT] + w]
                I[I[O_M_NEXT] + w] = -1
                I[I[O_ND_NSPIN] + nd] -= 1
                spun = now - F[I[O_M_SPIN] + w]
                d = F[I[O_M_COST] + w]
                F[I[O_ND_SPINWORK] + nd] += spun
                F[I[O_ND_HWORK] + nd] += spun + d
                _push(I, F, _ev(I, F, now + d, HANDLER_DONE, w))
            else:                       # released
                I[I[O_KEY_ON] + kk] = 0
    # the message moves on
    new = _none()
    free = False
    if ph == RESPONSE:                  # the reply handler ran: the request cycle is complete
        I[I[O_IV] + IV_COMPLETED] += 1
        F[I[O_FV] + FV_RESP_SUM] += now - F[I[O_M_ISSUE] + m]
        th = I[I[O_M_THREAD] + m]
        F[I[O_P_CYC_START] + th] = now
        _mark_if_due(I, F, now)
        if I[I[O_P_ACTING] + th]:
            I[I[O_P_STATE] + th] = READY
        else:
            if not I[I[O_ND_DEDICATED] + nd]:
                _idle_remove(I, F, nd, th)
            new = begin(I, F, now, th)
        free = True
    elif ph == REQUEST:
        if np.isnan(F[I[O_M_REPLY] + m]):
            complete_one_way(I, F, now, m)
            free = True
        else:
            I[I[O_M_PHASE] + m] = RESPONSE
            F[I[O_M_COST] + m] = F[I[O_M_REPLY] + m]
            new = _travel(I, F, now, m, nd, I[I[O_M_SRC] + m])
    else:                               # SEND
        I[I[O_M_PHASE] + m] = REQUEST
        F[I[O_M_COST] + m] = F[I[O_M_REQ] + m]
        t = now
        if I[I[O_ND_STREAM] + (nd) * I[W_NS] + S_EXTRA] >= 0:
            t = now + _node_draw(I, F, nd, S_EXTRA)
        new = _travel(I, F, t, m, nd, I[I[O_M_DST] + m])
    x = I[I[O_M_PROC] + m]
    if free:
        _free(I, F, m)
    # the node's protocol processing goes on
    if I[I[O_ND_DEDICATED] + nd]:
        dispatch_more(I, F, nd, now)
        return new
    if not _queue_nonempty(I, F, nd):      # nothing waits: x stops acting (release)
        I[I[O_P_ACTING] + x] = 0
        st = I[I[O_P_STATE] + x]
        if st == READY:
            e = begin(I, F, now, x)
            if new[1] < 0:
                return e
            _push(I, F, e)
        elif st != COMPUTING:
            _idle_append(I, F, nd, x)
        return new
    nm = pick(I, F, nd)
    if nm < 0:                          # x stops acting as protocol processor (release)
        I[I[O_P_ACTING] + x] = 0
        st = I[I[O_P_STATE] + x]
        if st == READY:
            e = begin(I, F, now, x)
            if e[1] >= 0:
                if new[1] < 0:
                    new = e
                else:
                    _push(I, F, e)
        elif st != COMPUTING:
            become_idle(I, F, now, x, nd)
    else:
        st = I[I[O_P_STATE] + x]
        if (st == COMPUTING or st == READY) and I[I[O_ND_NIDLE] + nd]:
            _push(I, F, start(I, F, nd, now, nm, -1))     # an idle processor takes over
            _push(I, F, release(I, F, now, x, nd))
        else:
            _push(I, F, start(I, F, nd, now, nm, x))      # x keeps the protocol role
    if I[I[O_ND_PDQ] + nd]:
        dispatch_more(I, F, nd, now)
    return new


@njit(cache=True)
def release(I, F, now, x, nd):
    """Processor ``x`` stops acting as protocol processor (returns its thread's next event)."""
    I[I[O_P_ACTING] + x] = 0
    st = I[I[O_P_STATE] + x]
    if st == COMPUTING:
        return _none()
    if st == READY:
        return begin(I, F, now, x)
    become_idle(I, F, now, x, nd)
    return _none()


@njit(cache=True)
def become_idle(I, F, now, x, nd):
    if I[I[O_ND_DEDICATED] + nd]:
        return
    m = pick(I, F, nd) if _queue_nonempty(I, F, nd) else -1
    _idle_append(I, F, nd, x)
    if m >= 0:
        _push(I, F, start(I, F, nd, now, m, -1))   # pops x back: it assumes the role


@njit(cache=True)
def begin(I, F, now, x):
    """Thread ``x`` proceeds to its next record(s); returns the event that creates."""
    while True:
        p = I[I[O_R_POS] + x]
        if p >= I[I[O_R_LEN] + x]:
            if not I[I[O_R_EOF] + x]:
                I[I[O_IV] + IV_ERR] = ERR_UNDERFLOW
                I[I[O_IV] + IV_ERR_A] = -1 - x
                return _none()
            I[I[O_P_STATE] + x] = DONE
            if not I[I[O_P_ACTING] + x]:
                become_idle(I, F, now, x, I[I[O_P_NODE] + x])
            return _none()
        I[I[O_R_POS] + x] = p + 1
        if I[I[O_R_KIND] + (x) * I[W_B] + p] == 0:         # compute
            I[I[O_R_NBLOCK] + x] -= 1
            if I[I[O_R_NBLOCK] + x] < 2 and not I[I[O_R_EOF] + x]:
                I[I[O_IV] + IV_LOW] = 1
            w = F[I[O_R_CYC] + (x) * I[W_B] + p]
            I[I[O_P_STATE] + x] = COMPUTING
            end = (F[I[O_P_HEND] + x] if I[I[O_P_ACTING] + x] else now) + w
            F[I[O_P_COMP_END] + x] = end
            F[I[O_P_COMP_START] + x] = now
            F[I[O_P_WORK] + x] += w
            return _ev(I, F, end, COMPUTE_DONE, x)
        if I[I[O_R_KIND] + (x) * I[W_B] + p] == 2:         # idle: the processor is free
            I[I[O_R_NBLOCK] + x] -= 1
            if I[I[O_R_NBLOCK] + x] < 2 and not I[I[O_R_EOF] + x]:
                I[I[O_IV] + IV_LOW] = 1
            I[I[O_P_STATE] + x] = BLOCKED
            nd = I[I[O_P_NODE] + x]
            if _queue_nonempty(I, F, nd):
                become_idle(I, F, now, x, nd)
            elif not I[I[O_ND_DEDICATED] + nd]:
                _idle_append(I, F, nd, x)
            return _ev(I, F, now + F[I[O_R_CYC] + (x) * I[W_B] + p], WAKE, x)
        d = I[I[O_R_DEST] + (x) * I[W_B] + p]
        if not 0 <= d < I[I[O_CFG] + C_N]:
            I[I[O_IV] + IV_ERR] = ERR_DEST
            I[I[O_IV] + IV_ERR_A] = x
            I[I[O_IV] + IV_ERR_B] = d
            return _none()
        nd = I[I[O_P_NODE] + x]
        m = _alloc(I, F)
        if I[I[O_IV] + IV_ERR]:
            return _none()
        I[I[O_M_THREAD] + m] = x
        I[I[O_M_SRC] + m] = nd
        I[I[O_M_DST] + m] = d
        F[I[O_M_REQ] + m] = F[I[O_R_REQ] + (x) * I[W_B] + p]
        F[I[O_M_REPLY] + m] = F[I[O_R_REPLY] + (x) * I[W_B] + p]
        I[I[O_M_KEY] + m] = I[I[O_R_KEY] + (x) * I[W_B] + p]
        I[I[O_M_SIZE] + m] = I[I[O_R_SIZE] + (x) * I[W_B] + p]
        F[I[O_M_INIF] + m] = F[I[O_R_INIF] + (x) * I[W_B] + p]
        I[I[O_M_PHASE] + m] = REQUEST
        F[I[O_M_ARR] + m] = 0.0
        I[I[O_M_PROC] + m] = -1
        F[I[O_M_ISSUE] + m] = now
        I[I[O_M_TO] + m] = d
        I[I[O_M_HOP] + m] = 0
        I[I[O_M_STATION] + m] = 0
        F[I[O_M_COST] + m] = F[I[O_R_REQ] + (x) * I[W_B] + p]
        if np.isnan(F[I[O_M_REPLY] + m]):      # one-way: the thread goes on
            I[I[O_P_STATE] + x] = BETWEEN
            I[I[O_IV] + IV_ISSUER] = x
            _push(I, F, issue(I, F, now, m, nd))
            I[I[O_IV] + IV_ISSUER] = -1
            continue
        I[I[O_R_NBLOCK] + x] -= 1
        if I[I[O_R_NBLOCK] + x] < 2 and not I[I[O_R_EOF] + x]:
            I[I[O_IV] + IV_LOW] = 1
        I[I[O_P_STATE] + x] = BLOCKED
        if _queue_nonempty(I, F, nd):
            become_idle(I, F, now, x, nd)
        elif not I[I[O_ND_DEDICATED] + nd]:
            _idle_append(I, F, nd, x)
        if not I[I[O_ND_DIRECTOUT] + nd]:
            return issue(I, F, now, m, nd)
        return _travel(I, F, now, m, nd, d)


@njit(cache=True)
def wake(I, F, now, x):
    """The idle period of thread ``x`` ends (as a reply does for a blocked thread)."""
    if I[I[O_P_ACTING] + x]:
        I[I[O_P_STATE] + x] = READY
        return _none()
    nd = I[I[O_P_NODE] + x]
    if not I[I[O_ND_DEDICATED] + nd]:
        _idle_remove(I, F, nd, x)
    return begin(I, F, now, x)


@njit(cache=True)
def issue(I, F, now, m, nd):
    """Message ``m`` leaves its thread: through a send handler, or onto the network."""
    if I[I[O_ND_STREAM] + (nd) * I[W_NS] + S_SEND] < 0:
        t = now
        if I[I[O_ND_STREAM] + (nd) * I[W_NS] + S_EXTRA] >= 0:
            t = now + _node_draw(I, F, nd, S_EXTRA)
        return _travel(I, F, t, m, nd, I[I[O_M_DST] + m])
    I[I[O_M_PHASE] + m] = SEND
    F[I[O_M_COST] + m] = _node_draw(I, F, nd, S_SEND)
    I[I[O_M_TO] + m] = nd
    return node_arrive(I, F, now, m)


@njit(cache=True)
def compute_done(I, F, now, x):
    end = F[I[O_P_COMP_END] + x]
    if end > now or I[I[O_P_ACTING] + x]:      # suspended meanwhile: the burst ends later
        return _ev(I, F, end, COMPUTE_DONE, x)
    I[I[O_P_DEP] + x] += 1
    F[I[O_P_RES] + x] += now - F[I[O_P_COMP_START] + x]
    return begin(I, F, now, x)


@njit(cache=True)
def complete_one_way(I, F, now, m):
    I[I[O_IV] + IV_COMPLETED] += 1
    I[I[O_IV] + IV_ONEWAY] += 1
    F[I[O_FV] + FV_RESP_SUM] += now - F[I[O_M_ISSUE] + m]
    _mark_if_due(I, F, now)


@njit(cache=True)
def start_thread(I, F, now, x):
    nd = I[I[O_P_NODE] + x]
    if not I[I[O_ND_DEDICATED] + nd]:
        _idle_remove(I, F, nd, x)
    return begin(I, F, now, x)


# ---------------------------------------------------------------- the loop
@njit(cache=True)
def run(I, F):
    """Run events until a mark, the end, a refill, an error or an empty heap (see the module)."""
    iv = I[O_IV]
    while True:
        if I[iv + IV_HN] == 0:
            return EMPTY
        if I[iv + IV_LOW]:
            return REFILL
        t = F[I[O_HT] + 0]
        code = I[I[O_HC] + 0]
        F[I[O_FV] + FV_NOW] = t
        typ = code & 7
        arg = code >> 3
        if typ == COMPUTE_DONE:
            new = compute_done(I, F, t, arg)
        elif typ == NODE_ARRIVE:
            new = node_arrive(I, F, t, arg)
        elif typ == HANDLER_DONE:
            new = handler_done(I, F, t, arg)
        elif typ == INI_ARRIVE:
            new = ini_arrive(I, F, t, arg)
        elif typ == INI_DONE:
            new = ini_done(I, F, t, arg)
        elif typ == START:
            new = start_thread(I, F, t, arg)
        elif typ == WAKE:
            new = wake(I, F, t, arg)
        else:                           # MARK: the snapshot is taken by the caller
            i = I[iv + IV_MARKI]
            I[iv + IV_MARKI] = i + 1
            if i + 1 >= I[I[O_CFG] + C_NMARKS]:
                _pop(I, F)
                return STOP
            I[iv + IV_NEXTMARK] = I[I[O_MARKS] + i + 1]
            if I[iv + IV_COMPLETED] >= I[iv + IV_NEXTMARK]:   # several marks at one instant
                _push(I, F, _ev(I, F, t, MARK, 0))
            _pop(I, F)
            return PAUSE
        if I[iv + IV_ERR]:
            return ERROR
        if new[1] < 0:
            _pop(I, F)
        else:
            _replace(I, F, new)


# ---------------------------------------------------------------- machine code of the loop
def build_object() -> tuple[bytes, str]:
    """The machine code of :func:`run` as a native object file, and its entry symbol.

    The entry is a C function ``int64 run(int64 *I, int64 nI, double *F,
    int64 nF)`` (a numba ``cfunc`` around :func:`run`).  Its module keeps
    only that symbol (everything else internal, then optimised again so
    that the unused Python wrappers are dropped), so the object refers to no
    outside symbol and :mod:`validation.sim._native` can load it with
    llvmlite alone.

    Raises
    ------
    RuntimeError
        When the object would still need an outside symbol.
    """
    import llvmlite.binding as ll
    from numba import carray, cfunc, types

    sig = types.int64(types.CPointer(types.int64), types.int64,
                      types.CPointer(types.float64), types.int64)

    def entry(ip, ni, fp, nf):
        return run(carray(ip, (ni,)), carray(fp, (nf,)))

    entry_c = cfunc(sig, error_model="numpy")(entry)
    lib = entry_c._library  # type: ignore[attr-defined]  # numba's compiled library
    symbol = entry_c.native_name            # the C-callable wrapper (``cfunc.<name>``)
    mod = ll.parse_bitcode(lib._final_module.as_bitcode())
    for f in mod.functions:
        if not f.is_declaration and f.name != symbol:
            f.linkage = "internal"
    for g in mod.global_variables:
        if not g.is_declaration:
            g.linkage = "internal"
    tm = lib._codegen._tm
    pb = ll.create_pass_builder(tm, ll.create_pipeline_tuning_options(speed_level=3))
    pb.getModulePassManager().run(mod, pb)
    outside = sorted(f.name for f in mod.functions
                     if f.is_declaration and not f.name.startswith("llvm."))
    if outside:
        raise RuntimeError(f"the compiled simulator's object needs outside symbols: {outside[:5]}")
    return tm.emit_object(mod), symbol
