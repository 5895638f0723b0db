"""One engine step of a serving replica (:meth:`gpuplan.serving.model.Replica.step`), and its time.

The formulas are those of docs/serving-model.md, stated in :mod:`gpuplan.serving.model`'s
docstring. A plan takes thousands of steps (every concurrency a capacity search tries, every
decode worker's batch), so the step is written out here in one function over the replica's
constants, gathered once per replica (:func:`step_constants`): the same operations in the same
order as the small functions it inlines (:func:`~gpuplan.physics.roofline.gemm_time_s`,
:func:`~gpuplan.serving.shapes.expected_experts_touched`, :func:`~gpuplan.physics.kv_cache.cached_tokens`,
:func:`~gpuplan.serving.shapes.causal_pairs`, the engine's ``graph_tokens`` and ``host_s``, the
links' measured all-reduce), so every time is the same to the last bit. The integer counts that
multiply floats (all-reduces, hidden size) are kept as floats and floats are compared with ``0.0``:
CPython 3.11's fast paths take two floats only, and an integer below 2**53 is the same double
either way.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple


class StepTime(NamedTuple):
    """One forward step on one GPU, seconds, with its FLOPs and DRAM bytes.

    A named tuple (as the training step's, gpuplan/training/timing.py), built by :func:`step_time`:
    a plan builds thousands (every concurrency a search tries), and a tuple of eleven floats costs
    about 4k instructions less to build than a frozen record's ``__dict__`` (benchmarks/README.md,
    issue 21); the same ``repr``, equality of the same values and hash."""

    gemm_s: float
    attention_s: float
    comm_s: float
    fixed_s: float
    flops: float
    weight_bytes: float
    kv_bytes: float
    activation_bytes: float
    gemm_memory_s: float
    #: the part of ``attention_s`` its math sets (the kernels where FLOPs take longer than their reads)
    attention_math_s: float
    #: the GEMMs' FLOPs at their achievable rates, alone (``gemm_s`` is its smooth roofline with
    #: ``gemm_memory_s``)
    gemm_math_s: float

    @property
    def total_s(self) -> float:
        return self.gemm_s + self.attention_s + self.comm_s + self.fixed_s

    @property
    def bytes(self) -> float:
        return self.weight_bytes + self.kv_bytes + self.activation_bytes

    @property
    def gemm_compute_bound(self) -> bool:
        """Whether the GEMMs' math takes longer than their weight and activation stream."""
        return self.gemm_math_s > self.gemm_memory_s

    @property
    def memory_s(self) -> float:
        """The step's time in kernels bound by their DRAM reads: the GEMMs where their stream outlasts
        their math, and the attention kernels set by their KV reads."""
        return (0.0 if self.gemm_compute_bound else self.gemm_s) + self.attention_s - self.attention_math_s

    @property
    def compute_s(self) -> float:
        """The step's time in kernels bound by their math: the GEMMs where their FLOPs outlast their
        stream, and the attention kernels set by their FLOPs."""
        return (self.gemm_s if self.gemm_compute_bound else 0.0) + self.attention_math_s

    def dominant(self) -> str:
        """The largest term of the step, in words: the time in memory-bound kernels (named by the
        larger of the weights' and the KV cache's), in compute-bound ones, in communication or in the
        fixed per-layer latency. Each kernel counts whole on the side its roofline puts it."""
        kv_s = self.attention_s - self.attention_math_s
        weights_s = 0.0 if self.gemm_compute_bound else self.gemm_s
        memory = "memory bandwidth (weights)" if weights_s >= kv_s else "memory bandwidth (KV cache)"
        parts = {memory: self.memory_s, "compute": self.compute_s, "communication": self.comm_s,
                 "fixed per-layer latency": self.fixed_s}
        return max(parts, key=lambda p: parts[p])


_new = tuple.__new__


def step_time(values: tuple[float, ...] | list[float]) -> StepTime:
    """``StepTime(*values)``, the eleven fields in order, without ``StepTime.__new__``'s call by keyword."""
    return _new(StepTime, values)


def step_constants(r: Any) -> tuple[Any, ...]:
    """What every step of replica ``r`` (a :class:`~gpuplan.serving.model.Replica`) reads, in :func:`replica_step`'s order: the layout, the
    rates and per-token constants, the engine's features, the all-reduce's measured terms."""
    a, lay, k, eng, links = r.arch, r.layout, r.k, r.engine, r.links
    fixed_s, launch_s, read_factor, n_ar, custom, talks = r._per_step
    experts, active = a.experts, a.active_experts
    f = eng.features if eng is not None else None
    # Links.all_reduce_s over the TP group: its measured terms where it takes them, else None (called).
    terms = links.measured_terms(lay.tp, custom) if lay.tp > 1 else None
    ring = _ring(links, lay.tp, custom) if lay.tp > 1 and terms is None else None
    ghz = r.gpu.host_cpu_max_ghz
    ref = f.host_reference_ghz if f is not None else 1.0
    knee = k.gemm_knee_exponent  # a catalog figure, read once
    return (
        lay.dp, lay.pp, a.sliding_window, r.kv_bytes_per_token, r.attn_flops_per_pair_decode,
        r.attn_flops_per_pair_prefill, r.attention_flops_per_s, r.attention_bandwidth, r.bandwidth,
        r.decode_attention_s, r.decode_attention_full_bytes, fixed_s, launch_s, read_factor, talks, eng,
        f.graph_batch_sizes if f is not None else (), f.host_us_per_sequence if f is not None else 0.0, ref,
        ghz if ghz else ref, f.host_overlap if f is not None else False,
        # the GEMMs
        experts, active, a.moe_layers, _dense_stream(r), r.expert_bytes_per_gpu, r.fixed_stream_bytes,
        r.quantised_stream_bytes, r.lm_head_flops_per_token, r.gemm_flops_per_token, r.expert_flops_per_token,
        r.activation_bytes_per_token, r.weight_stream_factor, r.elementwise_bytes_per_token, r.lm_head_flops_per_s,
        r.head_stream_bytes / r.bandwidth, r.matmul_flops_per_s, knee, 1.0 / knee,
        # the collectives
        float(n_ar), float(a.hidden), k.activation_bytes, lay.tp, custom, (*terms[0], terms[1:]) if terms else None, ring,
        _all_to_all(r) if lay.ep > 1 and a.moe_layers > 0 else None, _handoffs(r) if lay.pp > 1 else None,
        # the MoE modules (serving/moe.py moe_module_s): per-expert time, per-element times
        (k.moe.expert_us + (k.moe.expert_block_scaled_us if r.path.math == "fp4" else 0.0), k.moe.copy_ps_per_element,
         k.moe.token_ps_per_element, lay.ep) if a.is_moe else None,
    )


def _dense_stream(r: Any) -> tuple[float, float] | None:
    """A dense model's weight stream, the parts of :func:`replica_step`'s GEMM terms that do not vary
    with the step: (``w``, ``w - quantised + quantised / weight_stream_factor``), each as the step
    computes it with no expert touched (``experts`` = 0.0: ``fixed_stream + 0.0``, ...); None for an
    MoE model. Every expert term of a dense step is then 0.0 and adds nothing (``x + 0.0 == x``)."""
    if r.arch.is_moe or r.expert_flops_per_token != 0.0 or not 0.0 <= r.expert_bytes_per_gpu < math.inf:
        return None
    return r.fixed_stream_bytes + 0.0, expert_free_stream_bytes(r)


def expert_free_stream_bytes(r: Any) -> float:
    """Bytes a decode step streams for its weights other than the routed experts: the fixed stream,
    its quantised part read at ``weight_stream_factor`` (``w - quantised + quantised / factor``, the
    order :func:`replica_step` adds them in). A dense step's whole weight stream; an MoE step's
    without the experts it touches (serving/step_floor.py's floor ``S``)."""
    quantised = r.quantised_stream_bytes
    return r.fixed_stream_bytes - quantised + quantised / r.weight_stream_factor


def _all_to_all(r: Any) -> tuple[int, float, float | None, float, float]:
    """Links.all_to_all_s over the expert shards, its size-free terms: (shards, (n-1)/n, the tier's
    bandwidth (None: no tier), (n-1) alpha, the links' launch)."""
    n, links = r.layout.expert_shards, r.links
    tier = links.tier(n) if n > 1 else None
    return (n, (n - 1) / n, tier.bandwidth_bytes_per_s if tier else None, (n - 1) * tier.latency_s if tier else 0.0,
            links.launch_s)


def _ring(links: Any, n: int, custom: bool) -> tuple[float, float, float, float | None, float, float] | None:
    """Links.all_reduce_s's ring (or in-network) all-reduce inside the local domain, its size-free
    terms: (2(n-1)/n, bandwidth, 2(n-1) alpha, 2 alpha where the tier reduces in the network, the
    links' launch, the custom kernels' saving); None beyond the domain (hierarchical: called)."""
    from gpuplan.serving.links import CUSTOM_ALL_REDUCE_SAVING_US

    if n > links.local_domain:
        return None
    tier = links.tier(n)
    in_network = tier.in_network_reduction and not custom and n > 2
    return (2 * (n - 1) / n, tier.bandwidth_bytes_per_s, 2 * (n - 1) * tier.latency_s,
            2 * tier.latency_s if in_network else None, links.launch_s,
            CUSTOM_ALL_REDUCE_SAVING_US * 1e-6 if custom else 0.0)


def _handoffs(r: Any) -> tuple[int, float | None, float | None, int, float | None, float | None, float]:
    """The pipeline's hand-offs between its ``pp`` stages: (hand-offs inside a domain, their tier's
    bandwidth and latency, hand-offs across servers, the scale-out tier's, the links' launch); a
    tier is None where there is none (the hand-off then takes forever)."""
    lay, links = r.layout, r.links
    stage_gpus = lay.tp * lay.dp
    per_domain = links.local_domain // stage_gpus if stage_gpus <= links.local_domain else 1
    crossing = lay.pp - 1 if per_domain <= 1 else math.ceil(lay.pp / per_domain) - 1
    local = lay.pp - 1 - crossing
    near = links.tier(min(2 * stage_gpus, links.local_domain))
    far = links.network.scaleout
    return (local, near.bandwidth_bytes_per_s if near else None, near.latency_s if near else None, crossing,
            far.bandwidth_bytes_per_s if far else None, far.latency_s if far else None, links.launch_s)


def replica_step(self: Any, batch: float, mean_context: float, requests: float = 0.0,
                 prompt: int = 0) -> StepTime:
    """One engine step: ``batch`` decode tokens over caches of ``mean_context`` tokens, plus
    prefill of ``requests`` prompts of ``prompt`` tokens (a mixed step of in-flight batching
    when both are given; fractional ``requests`` is a steady-state share of a chunked prompt).

    The decode and prefill tokens share one weight stream and one set of fixed costs; decode
    attention reads each cache once (``kv_read_factor`` times for engines that read a grouped
    KV head per query head), prefill attention is causal over the prompt."""
    (dp, pp, window, kv_pt, fpp_decode, fpp_prefill, attn_fps, attn_bw, bw, dec_attn_s, dec_full, fixed_s,
     launch_s, read_factor, talks, eng, graph_sizes, host_us, host_ref, host_den, overlap,
     n_exp, n_active, moe_layers, dense, expert_bytes, fixed_stream, quantised_stream, head_fpt, gemm_fpt,
     expert_fpt, act_bpt, wsf, elem_bpt, head_fps, head_mem, matmul, knee, inv_knee,
     n_ar, hidden, act_bytes, tp, custom, terms, ring, all_to_all, handoffs, moe) = self._step_constants
    b = 0.0 if 0.0 > batch else batch  # max(batch, 0.0), and below max(tokens, 1.0), spelled out
    prompt_tokens = requests * prompt
    # A decode-only step replays the CUDA graph, its batch padded to a captured size (Engine.graph_tokens).
    rows = eng.graph_tokens(b, dp) if eng is not None and requests == 0.0 and graph_sizes else b
    tokens = rows + prompt_tokens
    tokens = 1.0 if 1.0 > tokens else tokens
    logits = rows + requests
    # Per attention-DP rank. Without attention DP (dp == 1) ``x * 1.0`` is ``x / 1`` for every
    # number (both exact for a float, an int made the same float), and CPython 3.11 specialises a
    # product of two floats but no division (each a generic call, ~0.15k instructions).
    if dp == 1:
        local, head_rows, local_b, local_req = tokens * 1.0, logits * 1.0, b * 1.0, requests * 1.0
    else:
        local, head_rows, local_b, local_req = tokens / dp, logits / dp, b / dp, requests / dp
    # -- the GEMMs (each group the smooth roofline of its math and stream, roofline.gemm_time_s) ----
    head_flops = head_rows * head_fpt
    layer_flops = local * gemm_fpt
    act = local * act_bpt
    elementwise_s = local * elem_bpt / bw
    head_math = head_flops / head_fps
    layer_math = layer_flops / matmul
    if dense is not None:  # no expert: the expert terms below are 0.0 (_dense_stream)
        w, stream = dense
        expert_math = 0.0
        flops = layer_flops + head_flops
        mem_s = (stream + act) / bw
        layer_mem = mem_s - elementwise_s - head_mem
    else:
        touched = n_exp * (1.0 - (1.0 - n_active / n_exp) ** tokens) if n_exp > 0 else 0.0
        experts = moe_layers * touched * expert_bytes
        w = fixed_stream + experts
        quantised = quantised_stream + experts
        expert_flops = tokens * expert_fpt
        flops = layer_flops + expert_flops + head_flops
        mem_s = (w - quantised + quantised / wsf + act) / bw
        expert_math, expert_mem = expert_flops / matmul, experts / wsf / bw
        layer_mem = mem_s - elementwise_s - head_mem - expert_mem
        if moe is None:
            moe_s = 0.0
        else:  # moe_module_s: the fused MoE module's copies, tokens and touched experts
            per_expert_us, copy_ps, token_ps, ep = moe
            copies = tokens * n_active / ep
            moe_s = moe_layers * ((copies * copy_ps + local * token_ps) * hidden * 1e-12
                                  + touched / ep * per_expert_us * 1e-6)
    hi = layer_mem if layer_mem > layer_math else layer_math
    lo = layer_mem if layer_mem < layer_math else layer_math
    gemm_s = 0.0 if hi <= 0.0 else hi * (1.0 + (lo / hi) ** knee) ** inv_knee
    hi = head_mem if head_mem > head_math else head_math
    lo = head_mem if head_mem < head_math else head_math
    gemm_s = gemm_s + (0.0 if hi <= 0.0 else hi * (1.0 + (lo / hi) ** knee) ** inv_knee)
    if dense is None:
        gemm_s = gemm_s + expert_math + expert_mem + elementwise_s + moe_s
    else:
        gemm_s = gemm_s + elementwise_s
    # -- attention ------------------------------------------------------------------------------------
    ctx = (window if window < mean_context else mean_context) if window else mean_context
    decode_pairs = local_b * ctx
    kv_decode = decode_pairs * kv_pt
    kv_decode *= read_factor
    f_decode = decode_pairs * fpp_decode
    # Decode and prefill attention are separate kernels: each takes its own roofline.
    math_d, mem_d = f_decode / attn_fps, kv_decode / attn_bw
    if prompt == 0 and requests == 0.0:
        # No prompt (a decode-only step): the prefill terms below are all local_req, a zero of
        # requests' sign (products of it with zeros and positive constants).
        kv_prefill = f_prefill = local_req
        attn_s = (mem_d if mem_d > math_d else math_d) + local_req
        attn_math = (math_d if math_d > mem_d else 0.0) + local_req
    else:
        kv_prefill = local_req * prompt * kv_pt
        pairs = (prompt * (prompt + 1) / 2 if not window or prompt <= window
                 else window * (window + 1) / 2 + (prompt - window) * window)
        f_prefill = local_req * pairs * fpp_prefill
        math_p, mem_p = f_prefill / attn_fps, kv_prefill / bw
        attn_s = (mem_d if mem_d > math_d else math_d) + (mem_p if mem_p > math_p else math_p)
        attn_math = (math_d if math_d > mem_d else 0.0) + (math_p if math_p > mem_p else 0.0)
    if kv_decode > 0.0:
        # The decode op's fixed latency, grown in full once a layer reads decode_attention_full_mb.
        ramp = kv_decode / dec_full
        attn_s += dec_attn_s * (ramp if ramp < 1.0 else 1.0)
    # -- collectives (Replica._comm_s and _handoffs_s; none without a TP, EP or PP group) -------------
    if talks:
        size = local * hidden * act_bytes
        if tp <= 1 or size <= 0.0:
            reduce_s = 0.0
        elif terms is not None:  # Links.all_reduce_s: the fastest measured algorithm, as min() keeps it
            fixed, moved, rate, others = terms
            reduce_s = fixed + moved * size / rate
            for fixed, moved, rate in others:
                t = fixed + moved * size / rate
                if t < reduce_s:
                    reduce_s = t
        elif ring is not None:  # Links.all_reduce_s in the domain: physics.collectives.all_reduce_s
            factor, rate, ring_s, in_network_s, launch, saving = ring
            reduce_s = factor * size / rate + ring_s
            if in_network_s is not None:
                reduced = size / rate + in_network_s
                if reduced < reduce_s:
                    reduce_s = reduced
            reduce_s = reduce_s + launch - saving
        else:
            reduce_s = self.links.all_reduce_s(size, tp, custom)
        comm_s = n_ar * reduce_s
        if all_to_all is not None:  # Replica._all_to_all_s: Links.all_to_all_s, dispatch and combine
            shards, frac, a2a_rate, a2a_s, launch = all_to_all
            per_rank = tokens / shards * n_active * hidden * act_bytes
            if shards <= 1 or per_rank <= 0:
                x = 0.0
            elif a2a_rate is None:
                x = math.inf
            else:
                x = frac * per_rank / a2a_rate + a2a_s + launch
            comm_s += 2 * moe_layers * x
        if handoffs is None:
            comm_s = comm_s + 0.0
        else:  # Links.handoff_s of each hand-off: p2p_s + launch (0 for nothing sent, inf without a tier)
            near, near_rate, near_s, far, far_rate, far_s, launch = handoffs
            if size <= 0.0:
                t = 0.0
            else:
                t = (near * (size / near_rate + near_s + launch if near_rate is not None else math.inf)
                     if near else 0.0)
                if far:
                    t += far * (size / far_rate + far_s + launch if far_rate is not None else math.inf)
            comm_s = comm_s + t
    else:
        comm_s = 0.0
    if eng is not None:
        # Without CUDA graphs the host launches every kernel: the step lasts at least that long.
        busy = gemm_s + attn_s + comm_s + fixed_s
        idle = launch_s - busy
        fixed_s += idle if idle > 0.0 else 0.0
        # Per-request host work of one executor (one per attention data-parallel rank): hidden
        # under the GPU step with the overlap scheduler, added to it without (Engine.host_s).
        sequences = local_b + local_req
        host = 0.0 if host_us <= 0.0 or sequences <= 0.0 else sequences * host_us * 1e-6 * host_ref / host_den
        if requests > 0.0:
            # The CUDA graph covers decode-only steps alone: this step's ops launch from Python.
            host += self.eager_prompt_s
        if overlap:
            busy = gemm_s + attn_s + comm_s + fixed_s
            idle = host - busy
            fixed_s += idle if idle > 0.0 else 0.0
        else:
            fixed_s += host
    return _new(StepTime, (gemm_s, attn_s, comm_s, fixed_s, flops + (f_decode + f_prefill), w, kv_decode + kv_prefill,
                           act, mem_s, attn_math, layer_math + head_math + expert_math))  # step_time, inlined
