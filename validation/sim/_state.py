"""The layout of the compiled simulator's state and its codes (no numba here).

Shared by :mod:`validation.sim._compiled` (the numba source of the event loop)
and :mod:`validation.sim.engine` (which builds, refills and reads the state),
so that running the loop from its cached machine code never imports numba.
"""

from __future__ import annotations

__all__ = ["FIELDS", "FLOAT_FIELDS", "HEADER"]


# ---------------------------------------------------------------- constants
# event types
START, COMPUTE_DONE, NODE_ARRIVE, HANDLER_DONE, INI_ARRIVE, INI_DONE, MARK, WAKE = range(8)
# loop results
EMPTY, PAUSE, STOP, REFILL, ERROR = range(5)
# errors (I[iv + IV_ERR]); details in I[iv + IV_ERR_A], I[iv + IV_ERR_B], fv[FV_ERR_T]
ERR_OVERFLOW, ERR_DEST, ERR_UNDERFLOW, ERR_POOL = 1, 2, 3, 4
# message phases and thread states, as in hardware.py
SEND, REQUEST, RESPONSE = 0, 1, 2
COMPUTING, BLOCKED, READY, DONE, BETWEEN = 0, 1, 2, 3, 4
# key codes (validation.generators)
KEY_NONE, KEY_NOSYNC, KEY_SEQUENTIAL = -1, -2, -3
# node stream slots
S_INT, S_DIR, S_IND, S_SEND, S_EXTRA, S_LOCK = range(6)
# global stream slots
ST_LAT, ST_INTRA, ST_INI = 0, 1, 2

# scalar int state iv[...]
(IV_SEQ, IV_HN, IV_COMPLETED, IV_ONEWAY, IV_INTERRUPTS, IV_MARKI, IV_NEXTMARK, IV_ISSUER,
 IV_LOW, IV_ERR, IV_ERR_A, IV_ERR_B, IV_PDQSEQ, IV_FREE, IV_NFREE, IV_POOL_LOW, IV_STREAM_LOW,
 IV_REC_LOW, IV_N) = range(19)
# scalar float state fv[...]
FV_NOW, FV_RESP_SUM, FV_ERR_T, FV_N = range(4)
# configuration cfg[...]
(C_N, C_T, C_CLUSTERED, C_K, C_CSIZE, C_SHARED, C_RR, C_LATDIRECT, C_QCAP, C_NMARKS, C_SIZECOST,
 C_RINI, C_N_) = range(13)
# float configuration fcfg[...]
F_LATDIRECT, F_INIMEAN, F_N = range(3)

FIELDS = (
    # scalars and configuration
    "iv", "fv", "cfg", "fcfg", "marks",
    # event heap
    "ht", "hs", "hc",
    # nodes
    "nd_cluster", "nd_dedicated", "nd_limit", "nd_pdq", "nd_nacting", "nd_qhead", "nd_qtail",
    "nd_qlen", "nd_idle", "nd_nidle", "nd_procs", "nd_nprocs", "nd_rr", "nd_seqrun",
    "nd_pdqwait", "nd_hwork", "nd_phdep", "nd_phres", "nd_stream", "nd_directout",
    "nd_pdqrow", "pq", "pq_n", "key_on", "key_head", "key_tail",
    # threads (processors)
    "p_node", "p_state", "p_acting", "p_hend", "p_comp_start", "p_comp_end", "p_work",
    "p_dep", "p_res", "p_cyc_start",
    # thread record buffers
    "r_kind", "r_cyc", "r_dest", "r_size", "r_req", "r_reply", "r_key", "r_inif", "r_pos",
    "r_len", "r_eof", "r_nblock",
    # messages
    "m_thread", "m_src", "m_dst", "m_req", "m_reply", "m_key", "m_size", "m_phase", "m_arr",
    "m_proc", "m_issue", "m_to", "m_hop", "m_station", "m_cost", "m_next", "m_pseq", "m_inif",
    # random streams
    "st_kind", "st_const", "st_buf", "st_pos", "st_len",
    # INI resources and stations
    "r_n", "r_busy", "r_area", "r_barea", "r_last", "r_dep", "r_res", "r_arrsum",
    "ini_servers", "ini_busy", "ini_head", "ini_tail", "rr_out", "rr_in",
    # spin-lock nodes: flag, handlers spinning, finished spin time; a spinner's spin start
    "nd_spin", "nd_nspin", "nd_spinwork", "m_spin",
)

#: fields held in the float array ``F`` (the others are in ``I``)
FLOAT_FIELDS = frozenset((
    "ht", "fv", "fcfg", "nd_hwork", "nd_phres", "p_hend", "p_comp_start", "p_comp_end",
    "p_work", "p_res", "p_cyc_start", "r_cyc", "r_req", "r_reply", "r_inif", "m_req", "m_reply",
    "m_arr", "m_issue", "m_cost", "m_inif", "st_const", "st_buf", "r_area", "r_barea",
    "r_last", "r_res", "r_arrsum", "nd_spinwork", "m_spin"))

# The state is two flat arrays, ``I`` (int64) and ``F`` (float64).  ``I``
# starts with a header: ``I[O_<FIELD>]`` is the offset of each field (in
# ``I`` or ``F``), and ``I[W_*]`` the row widths of the 2-D fields; field
# ``x`` with row width ``w`` has element ``[i, j]`` at ``offset + i * w + j``.
# (Two arrays keep calls cheap: numba passes an array as a few words, where
# a tuple of ninety arrays costs hundreds per call.)
# O_<FIELD>: the header slot of each field, in the order of FIELDS
(O_IV, O_FV, O_CFG, O_FCFG, O_MARKS, O_HT, O_HS, O_HC, O_ND_CLUSTER, O_ND_DEDICATED,
 O_ND_LIMIT, O_ND_PDQ, O_ND_NACTING, O_ND_QHEAD, O_ND_QTAIL, O_ND_QLEN, O_ND_IDLE, O_ND_NIDLE,
 O_ND_PROCS, O_ND_NPROCS, O_ND_RR, O_ND_SEQRUN, O_ND_PDQWAIT, O_ND_HWORK, O_ND_PHDEP,
 O_ND_PHRES, O_ND_STREAM, O_ND_DIRECTOUT, O_ND_PDQROW, O_PQ, O_PQ_N, O_KEY_ON, O_KEY_HEAD,
 O_KEY_TAIL, O_P_NODE, O_P_STATE, O_P_ACTING, O_P_HEND, O_P_COMP_START, O_P_COMP_END, O_P_WORK,
 O_P_DEP, O_P_RES, O_P_CYC_START, O_R_KIND, O_R_CYC, O_R_DEST, O_R_SIZE, O_R_REQ, O_R_REPLY,
 O_R_KEY, O_R_INIF, O_R_POS, O_R_LEN, O_R_EOF, O_R_NBLOCK, O_M_THREAD, O_M_SRC, O_M_DST,
 O_M_REQ, O_M_REPLY, O_M_KEY, O_M_SIZE, O_M_PHASE, O_M_ARR, O_M_PROC, O_M_ISSUE, O_M_TO,
 O_M_HOP, O_M_STATION, O_M_COST, O_M_NEXT, O_M_PSEQ, O_M_INIF, O_ST_KIND, O_ST_CONST, O_ST_BUF,
 O_ST_POS, O_ST_LEN, O_R_N, O_R_BUSY, O_R_AREA, O_R_BAREA, O_R_LAST, O_R_DEP, O_R_RES,
 O_R_ARRSUM, O_INI_SERVERS, O_INI_BUSY, O_INI_HEAD, O_INI_TAIL, O_RR_OUT, O_RR_IN, O_ND_SPIN,
 O_ND_NSPIN, O_ND_SPINWORK, O_M_SPIN) = range(97)
assert len(FIELDS) == 97
W_MAXP, W_3, W_NS, W_POOL, W_NK, W_SCAP, W_B = range(len(FIELDS), len(FIELDS) + 7)
#: length of the header of ``I``
HEADER = len(FIELDS) + 7
