"""A lower bound of a replica's decode step (:func:`gpuplan.serving.step.replica_step`) from four
constants, for the searches that only ask whether a step exceeds the TPOT target.

A step of ``b`` decode sequences (per micro-batch) and ``tokens >= b`` tokens through the GEMMs
lasts at least ``F + b K + max(S, tokens G)``:

* ``F``, the per-step fixed latency (``Replica._per_step``): the step only adds to it (the host's
  launch time and per-request work, each added where positive);
* ``b K``, the decode attention's KV read, ``b / dp x context x KV bytes per token x read factor``
  over the attention bandwidth (its roofline takes the larger of that and its math, and the decode
  op's latency and any prefill attention only add);
* the GEMMs: each group's smooth roofline is at least the larger of its stream and its math
  (``hi (1 + (lo / hi)^k)^(1/k) >= hi``), so the GEMMs take at least the whole step's stream,
  whose weights part is ``S`` (the fixed weights at the weight stream factor; touched experts
  only add), and at least the dense layers' math, ``tokens / dp`` tokens at ``G`` seconds each;
* the collectives are not negative.

A budget-filled mixed step (serving/mixed.py) is a ``share`` of steps carrying ``piece`` prompt
tokens and the rest decoding alone, ``share x piece`` = the prompt tokens ``p`` that arrive per step;
since ``max`` is convex, the mean of the two bounds is at least ``F + b K + max(S, (b + p) G)``.
A caller compares with a margin of 1e-9 for the round-off of the step's own sums.

:func:`tight_floor` (and :func:`tight_rate_bound`, for the lean sizing's layouts that the cheap
:func:`ceiling_rate_bound` lets through) replaces the GEMMs' ``max`` by their smooth rooflines and
adds the all-reduces' and attention's least time: tighter, and dearer to evaluate.
"""

from __future__ import annotations

import math
from typing import Any

from gpuplan.serving.step import expert_free_stream_bytes


def floor_terms(replica: Any, mean_context: float) -> tuple[float, float, float, float]:
    """``(F, S, K, G)`` of the module docstring for ``replica`` (a
    :class:`~gpuplan.serving.model.Replica`) at ``mean_context`` cached tokens per sequence."""
    r = replica
    window = r.arch.sliding_window
    ctx = (window if window < mean_context else mean_context) if window else mean_context
    fixed, _, read_factor = r._per_step[:3]
    stream = expert_free_stream_bytes(r) / r.bandwidth
    dp = r.layout.dp
    return (fixed, stream, ctx * r.kv_bytes_per_token * read_factor / (dp * r.attention_bandwidth),
            r.gemm_flops_per_token / (dp * r.matmul_flops_per_s))


def with_all_reduce(replica: Any, terms: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    """``terms`` with a lower bound of the step's TP all-reduces added: ``F + n A`` and ``K + n B h a
    / dp`` (``n`` all-reduces a step of ``h`` hidden values of ``a`` bytes per token, ``dp``
    attention-DP ranks). :func:`~gpuplan.serving.step.replica_step` takes the fastest measured
    algorithm, ``fixed + moved x size / rate`` each, so at least ``A + B x size`` with ``A`` the
    least fixed term and ``B`` the least ``moved / rate``; or the ring in the domain, ``factor x size
    / rate + ring`` (or ``size / rate + in-network`` where the switch reduces, the lesser) ``+ launch
    - saving``. A step's tokens (``size = tokens / dp x h x a``) are at least its decode sequences, a
    budget-filled mix's mean at least as many (the bound is affine in them). The other collectives
    are not negative. ``terms`` unchanged without a TP group, for the hierarchical all-reduce, or
    where ``A`` or ``B`` would be negative or not finite."""
    found = _all_reduce_lines(replica)
    if found is None:
        return terms
    n_ar, hidden, act_bytes, dp, lines = found
    # min_i (A_i) and min_i (B_i); over the ring and in-network lines the same values as the least of
    # their fixed terms plus launch less saving, and the lesser factor over the rate (each monotone).
    least = min(a for a, _ in lines)
    slope = min(b for _, b in lines)
    if not (0.0 <= least < math.inf and 0.0 <= slope < math.inf):
        return terms
    fixed, stream, kv, gemm = terms
    return fixed + n_ar * least, stream, kv + n_ar * slope * hidden * act_bytes / dp, gemm


def gemm_terms(replica: Any) -> tuple[float, float, float, float, float, float, float] | None:
    """The GEMMs' smooth rooflines (``hi (1 + (lo / hi)^k)^(1/k)``, the ``L_k`` norm of math and
    stream) as :func:`~gpuplan.serving.step.replica_step` computes them, per GEMM token ``t`` and
    decode sequence ``b``: the layers' ``L_k(S0 + t a, t G)`` (their stream: the expert-free weights
    less the head's, the activations less the elementwise part; their math: the dense layers'
    FLOPs), the head's ``L_k(H, b h)`` (its rows are the decode sequences and prompts, at least
    ``b``), the elementwise stream ``t e`` (the routed experts, their math and the MoE module only
    add). Returns ``(S0, a, G, H, h, e, k)``; None where a coefficient is negative or not finite
    (the floor then keeps ``max(S, t G)``). With ``k >= 1`` (the catalog's bound) each norm is
    convex and non-decreasing in ``t`` and ``b``, and its value over ``t`` (``b``) does not grow:
    so a budget-filled mix's mean keeps it (Jensen), and the rate bound's argument holds."""
    c = replica._step_constants  # replica_step's order (serving/step.py step_constants)
    dp, bw = float(c[0]), c[8]
    head_fpt, gemm_fpt, _, act_bpt, _, elem_bpt, head_fps, head_mem, matmul, knee = c[28:38]
    out = (expert_free_stream_bytes(replica) / bw - head_mem, (act_bpt - elem_bpt) / (dp * bw),
           gemm_fpt / (dp * matmul), head_mem, head_fpt / (dp * head_fps), elem_bpt / (dp * bw), knee)
    if not knee >= 1.0 or not all(0.0 <= x < math.inf for x in out):
        return None
    return out


def _norm(x: float, y: float, k: float) -> float:
    """``L_k(x, y)`` as replica_step writes it: ``hi (1 + (lo / hi)^k)^(1/k)``, 0 for none."""
    hi, lo = (x, y) if x > y else (y, x)
    return 0.0 if hi <= 0.0 else hi * (1.0 + (lo / hi) ** k) ** (1.0 / k)


def tight_floor(terms: tuple[float, float, float, float], gemm: tuple[float, ...] | None, batch: float,
                tokens: float, reduce: tuple[float, float, tuple[tuple[float, float], ...]] | None = None,
                attention: tuple[float, float, float, float] | None = None) -> float:
    """:func:`step_floor` with the GEMMs' smooth rooflines (:func:`gemm_terms`) in place of
    ``max(S, tokens G)`` where they are known (at least that: ``S = S0 + H``), the all-reduces'
    :func:`reduce_floor` and attention's :func:`attention_terms` (``tokens - batch`` prompt tokens) in
    place of ``batch K``: at most the step, or a budget-filled mix's mean, of ``batch`` decode
    sequences and ``tokens`` GEMM tokens. :func:`tight_rate_bound` writes it out."""
    comm = reduce_floor(reduce, batch, tokens)
    fixed, _, kv, _ = terms
    attn = batch * kv
    if attention is not None:
        kv, ramp_s, ramp, prefill = attention
        read = batch * ramp
        attn = batch * kv + ramp_s * (read if read < 1.0 else 1.0) + (tokens - batch) * prefill
    if gemm is None:
        stream, math_s = terms[1], tokens * terms[3]
        return fixed + attn + (stream if stream > math_s else math_s) + comm
    s0, a, g, head, h, e, k = gemm
    return (fixed + attn + _norm(s0 + tokens * a, tokens * g, k) + _norm(head, batch * h, k) + tokens * e
            + comm)


def reduce_lines(replica: Any) -> tuple[float, float, tuple[tuple[float, float], ...]] | None:
    """The step's TP all-reduces as :func:`~gpuplan.serving.step.replica_step` times them: ``n`` a
    step, each ``min_i (A_i + B_i x size)`` over the measured algorithms (``fixed``, ``moved /
    rate``) or the ring and in-network lines (launch less the custom saving in ``A``), ``size`` =
    tokens x ``w`` bytes (``w`` = hidden x activation bytes / dp). Returns ``(n, w, lines)``; None
    where :func:`with_all_reduce` adds nothing or a line is negative or not finite."""
    found = _all_reduce_lines(replica)
    if found is None:
        return None
    n_ar, hidden, act_bytes, dp, lines = found
    if not all(0.0 <= a < math.inf and 0.0 <= b < math.inf for a, b in lines):
        return None
    return n_ar, hidden * act_bytes / dp, lines


def _all_reduce_lines(replica: Any) -> tuple[float, float, float, float, tuple[tuple[float, float], ...]] | None:
    """``(n, h, a, dp, lines)`` of the step's TP all-reduces as replica_step times them: ``n`` a step of
    ``h`` hidden values of ``a`` bytes per token over ``dp`` attention-DP ranks, each at ``min_i (A_i +
    B_i x size)`` over ``lines``: the measured algorithms' ``(fixed, moved / rate)``, or the ring's
    and the in-network reduction's ``(fixed + launch - saving, factor / rate)`` (factor 1 in-network).
    None without a TP group that talks, for a step of no size, or at a rate that is not positive."""
    constants = replica._step_constants  # replica_step's order (serving/step.py step_constants)
    dp, talks = constants[0], constants[14]
    n_ar, hidden, act_bytes, tp, _custom, measured, ring = constants[39:46]
    if not talks or tp <= 1 or not (hidden > 0.0 and act_bytes > 0.0):  # a step of no size reduces nothing
        return None
    if measured is not None:
        fixed0, moved0, rate0, others = measured
        algs = ((fixed0, moved0, rate0), *others)
        if any(not rate > 0.0 for _, _, rate in algs):
            return None
        return n_ar, hidden, act_bytes, dp, tuple((fixed, moved / rate) for fixed, moved, rate in algs)
    if ring is not None:
        factor, rate, ring_s, in_network_s, launch, saving = ring
        if not rate > 0.0:
            return None
        lines = ((ring_s + launch - saving, factor / rate),)
        if in_network_s is not None:
            lines += ((in_network_s + launch - saving, 1.0 / rate),)
        return n_ar, hidden, act_bytes, dp, lines
    return None


def reduce_floor(reduce: tuple[float, float, tuple[tuple[float, float], ...]] | None, batch: float,
                 tokens: float) -> float:
    """A lower bound of a step's all-reduce time (:func:`reduce_lines`): each step's ``min_i (A_i +
    B_i size)`` is at least ``min A + (min B) size``, affine in its tokens, so a budget-filled mix's
    mean is at least that at the mean's ``tokens``; and it is non-decreasing in the size, each step
    carrying at least the ``batch`` decode tokens, so the mean is at least ``min_i (A_i + B_i w
    batch)``. The larger of the two; each non-decreasing, and over ``batch`` (``tokens``) not
    growing (``A_i >= 0``). 0 without lines."""
    if reduce is None:
        return 0.0
    n, w, lines = reduce
    least = min(a for a, _ in lines) + min(b for _, b in lines) * w * tokens
    size = w * batch
    exact = min(a + b * size for a, b in lines)
    return n * (least if least > exact else exact)


def step_floor(terms: tuple[float, float, float, float], batch: float, tokens: float) -> float:
    """``F + b K + max(S, tokens G)``: at most the step of ``batch`` decode sequences with ``tokens``
    tokens through the GEMMs (module docstring), before round-off."""
    fixed, stream, kv, gemm = terms
    math_s = tokens * gemm
    return fixed + batch * kv + (stream if stream > math_s else math_s)


def over_target_above(terms: tuple[float, float, float, float], pp: int, tokens_per_sequence: float,
                      target_s: float) -> float:
    """A concurrency above which every decode step of the replica exceeds ``target_s`` (``inf``:
    none proven). At concurrency ``C`` a step carries ``b = max(1, C / pp)`` sequences per
    micro-batch and, here, ``b x tokens_per_sequence`` GEMM tokens (1 for a decode-only step; a
    budget-filled mixed step adds the prompt tokens that arrive per step, ``prompt / (output - 1)``
    per sequence). Its floor ``F + b K + max(S, b t G)`` grows with ``b`` and exceeds ``X`` past
    ``min((X - F - S) / K, (X - F) / (K + t G))``; ``X`` is the target plus 1e-9 for the step's
    own round-off, and the concurrency 1e-9 above ``pp`` times that for this one's."""
    fixed, stream, kv, gemm = terms
    x = target_s * (1 + 1e-9)
    per = kv + tokens_per_sequence * gemm
    first = (x - fixed - stream) / kv if kv > 0 else (-math.inf if fixed + stream > x else math.inf)
    second = (x - fixed) / per if per > 0 else (-math.inf if fixed > x else math.inf)
    least = first if first < second else second
    if not least < math.inf:  # never proven (NaN included)
        return math.inf
    return pp * (least if least > 1.0 else 1.0) * (1 + 1e-9)


def ceiling_limits(replica: Any, demand: Any) -> tuple[int, int, float, float] | None:
    """What both bounds of a ceiling's rate read alike: the decode steps of a request, the most
    sequences the engine admits, the GEMM tokens a decode sequence brings to a step (``1 + prompt /
    n`` with mixed scheduling, else 1) and the mean cache context; None where there is no decode
    step or not one sequence fits."""
    n = demand.decode_steps
    cap = replica.admitted_sequences(demand.prompt_tokens, demand.output_tokens)
    if n == 0 or cap < 1:
        return None
    eng = replica.engine
    per = 1 + demand.prompt_tokens / n if eng is not None and eng.features.scheduling == "mixed" else 1.0
    return n, cap, per, replica.decode_context(demand.prompt_tokens, max(demand.output_tokens, 1))


def ceiling_rate_bound(replica: Any, demand: Any) -> float:
    """An upper bound of the request rate at ``replica``'s ceiling for ``demand``
    (:meth:`~gpuplan.serving.capacity.ReplicaCapacity.best`; ``inf`` where none is cheap), without
    its search. The ceiling's concurrency ``C`` meets the TPOT target, so it is at most the cache's
    capacity and the concurrency past which the floor proves a miss (:func:`over_target_above`); its
    rate ``C / (n t0(C))`` (less with prefill-first scheduling, ``C / (n t0 + C s)``) is at most
    ``C / (n L(C))``, ``L`` the floor with the all-reduces' (:func:`with_all_reduce`), which grows with
    ``C`` (``L / C`` falls): so at most its value
    at the lesser of the two limits. 1e-6 covers the round-off of both rates."""
    limits = ceiling_limits(replica, demand)
    if limits is None:
        return math.inf
    n, cap, per, context = limits
    terms = with_all_reduce(replica, floor_terms(replica, context))
    pp = replica.layout.pp
    top = min(float(cap), over_target_above(terms, pp, per, demand.tpot_s))
    batch = top / pp if top > pp else 1.0
    low = step_floor(terms, batch, batch * per)
    return top / (n * low) * (1 + 1e-6) if low > 0 else math.inf


def attention_terms(replica: Any, context: float, prompt: int, kv: float) -> tuple[float, float, float, float]:
    """Attention's least time in :func:`~gpuplan.serving.step.replica_step`, per decode sequence
    ``b`` and prompt token: ``(K', D, R, P)``, a step's attention at least ``b K' + D min(1, b R) + p
    P`` (``p`` its prompt tokens). ``K'`` the larger of the decode kernel's KV read (``kv``,
    :func:`floor_terms`' ``K``) and its math, ``D min(1, b R)`` the decode op's latency ramp (the
    same ``b`` in every step of a mix), ``P`` the prefill kernel's roofline per prompt token (its
    reads and its causal pairs' math each proportional to the prompts of the step, so a mix's mean
    is ``P`` times the tokens that arrive per step; ``prompt`` 0: none). Zeros where a figure is
    negative or not finite (each term then only adds nothing)."""
    c = replica._step_constants  # replica_step's order (serving/step.py step_constants)
    dp, _, window, kv_pt, fpp_decode, fpp_prefill, attn_fps, _, bw, dec_s, dec_full = c[:11]
    read_factor = c[13]
    ctx = (window if window < context else context) if window else context
    decode_math = ctx * fpp_decode / (dp * attn_fps)
    ramp = ctx * kv_pt * read_factor / (dp * dec_full) if dec_full > 0.0 else math.inf
    prefill = 0.0
    if prompt > 0:
        pairs = (prompt * (prompt + 1) / 2 if not window or prompt <= window
                 else window * (window + 1) / 2 + (prompt - window) * window)
        mem, math_s = kv_pt / bw, pairs * fpp_prefill / (prompt * attn_fps)
        prefill = (mem if mem > math_s else math_s) / dp
    out = (decode_math if decode_math > kv else kv, dec_s, ramp, prefill)
    return tuple(x if 0.0 <= x < math.inf else 0.0 for x in out)  # type: ignore[return-value]


def tight_rate_bound(replica: Any, demand: Any, steps: int = 12) -> float:
    """A tighter upper bound of the ceiling's rate than :func:`ceiling_rate_bound` (``inf`` where
    the GEMMs' terms are not known: that one then holds), for the layouts it does not rule out:
    the same argument with :func:`tight_floor` (the GEMMs' smooth rooflines, :func:`reduce_floor`'s
    all-reduces), which also grows with ``C`` while ``L / C`` falls. Where it exceeds the TPOT
    target at the cache's or the linear floor's limit, ``steps`` halvings find a ``C`` where it
    still does, above the ceiling's concurrency (whose mean step meets the target), and the bound
    is ``C / (n L(C))`` there. 1e-6 covers the round-off of both rates."""
    limits = ceiling_limits(replica, demand)
    if limits is None:
        return math.inf
    n, cap, per, context = limits
    return _tight_bound(replica, n, cap, per, context, demand.prompt_tokens if per > 1.0 else 0, demand.tpot_s, steps)


def decode_limits(replica: Any, demand: Any) -> tuple[int, int, float] | None:
    """What bounds a disaggregated decode worker (serving/disagg.py ``decode_worker``) and its rate's
    bounds read alike: the decode steps of a request, the most sequences of ``prompt + output``
    tokens the cache holds, and the mean cache context of a decode step; None where there is no
    decode step or not one sequence fits."""
    n = demand.decode_steps
    cap = replica.max_sequences(demand.prompt_tokens + demand.output_tokens)
    if n == 0 or cap < 1:
        return None
    return n, cap, replica.decode_context(demand.prompt_tokens, demand.output_tokens)


def decode_tight_rate_bound(replica: Any, demand: Any, steps: int = 12) -> float:
    """An upper bound of a disaggregated decode worker's rate (serving/disagg.py ``decode_worker``:
    decode-only steps, at most the sequences of ``prompt + output`` tokens the cache holds, ``C /
    (n t0(C))`` at the largest ``C`` whose step meets the TPOT target), by :func:`tight_rate_bound`'s
    argument with no prompt tokens in a step (``inf`` where the GEMMs' terms are not known)."""
    limits = decode_limits(replica, demand)
    if limits is None:
        return math.inf
    n, cap, context = limits
    return _tight_bound(replica, n, cap, 1.0, context, 0, demand.tpot_s, steps)


def _tight_bound(replica: Any, n: int, cap: int, per: float, context: float, prompt: int, tpot_s: float,
                 steps: int) -> float:
    """:func:`tight_rate_bound`'s bound: ``n`` decode steps a request, at most ``cap`` sequences,
    ``per`` GEMM tokens a decode sequence, ``prompt`` tokens in a step's prompt (0: none), caches of
    ``context`` tokens, a TPOT target of ``tpot_s``."""
    gemm = gemm_terms(replica)
    if gemm is None:
        return math.inf
    base = floor_terms(replica, context)
    pp = replica.layout.pp
    top = min(float(cap), over_target_above(with_all_reduce(replica, base), pp, per, tpot_s))
    if not top < math.inf:
        return math.inf
    fixed, _, kv, _ = base
    s0, a, g, head, h, e, k = gemm
    kv, ramp_s, ramp, prefill = attention_terms(replica, context, prompt, kv)
    inv = 1.0 / k
    reduce = reduce_lines(replica)
    n_ar, w, lines = reduce if reduce is not None else (0.0, 0.0, ((0.0, 0.0),))
    least_a, least_b = min(x for x, _ in lines), min(y for _, y in lines)

    def floor_at(c: float) -> float:  # tight_floor(base, gemm, b, b per, reduce, attention), written out
        b = c / pp if c > pp else 1.0
        t = b * per
        hi, lo = s0 + t * a, t * g
        if lo > hi:
            hi, lo = lo, hi
        layers = 0.0 if hi <= 0.0 else hi * (1.0 + (lo / hi) ** k) ** inv
        hi, lo = head, b * h
        if lo > hi:
            hi, lo = lo, hi
        heads = 0.0 if hi <= 0.0 else hi * (1.0 + (lo / hi) ** k) ** inv
        comm = least_a + least_b * w * t  # reduce_floor
        size = w * b
        exact = math.inf
        for x, y in lines:
            one = x + y * size
            if one < exact:
                exact = one
        if exact > comm:
            comm = exact
        read = b * ramp
        return (fixed + b * kv + (ramp_s * (read if read < 1.0 else 1.0)) + (t - b) * prefill + layers + heads
                + t * e + n_ar * comm)

    low = floor_at(top)
    target = tpot_s * (1 + 1e-9)
    if low > target:
        lo_c, hi_c = 0.0, top
        for _ in range(steps):
            mid = 0.5 * (lo_c + hi_c)
            if floor_at(mid) > target:
                hi_c = mid
            else:
                lo_c = mid
        top, low = hi_c, floor_at(hi_c)
    return top / (n * low) * (1 + 1e-6) if low > 0 else math.inf
