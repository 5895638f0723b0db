"""A parallel layout, its validity for a model, and where each parallel group sits.

Rank order (Megatron-LM ``RankGenerator`` default "tp-cp-ep-dp-pp"): TP innermost, then CP,
then DP (whose innermost factor is the expert-parallel group), PP outermost. A group whose
members are ``stride`` ranks apart and ``size`` strong sits

* inside one scale-up domain when stride x size <= domain (NVLink/XGMI tier),
* across domains with ``domain / stride`` members per domain when stride < domain (a
  hierarchical collective: scale-up part, then scale-out part),
* one member per domain when stride >= domain (scale-out tier; members share a local rank,
  so the traffic is rail-aligned).
"""

# No ``from __future__ import annotations``: the NamedTuples' field types stay objects (typing
# turns a string annotation into a ForwardRef, compiled at import: ~70k instructions a field).

import math
from gpuplan.core.records import dataclass
from functools import lru_cache
from typing import NamedTuple

from gpuplan.model.arch import Architecture
from gpuplan.physics.pipeline import layers_per_stage  # noqa: F401  (re-exported)

RECOMPUTE_ORDER = ("none", "selective", "full")


class Layout(NamedTuple):
    """A parallel layout. A named tuple: immutable, hashable, ordered field by field (the
    search's tie-break) and cheap to copy."""

    tp: int
    pp: int
    dp: int
    cp: int = 1
    ep: int = 1
    vp: int = 1
    micro_batch: int = 1
    recompute: str = "none"
    sequence_parallel: bool = False
    zero: int = 1
    #: With recompute "full": layers per stage that are recomputed (Megatron-LM
    #: --recompute-num-layers); 0 means all of them.
    recompute_layers: int = 0
    #: Expert layers folded onto the TP ranks (expert TP 1, EP drawn from TP x CP x DP; see
    #: :func:`folded`). False: experts split by TP like the dense MLP, EP from DP x CP.
    fold_experts: bool = False

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp * self.cp

    def but(self, **changes: object) -> "Layout":
        """A copy with ``changes`` (the search's hot path: faster than ``_replace``)."""
        values = list(self)
        for name, value in changes.items():
            values[_FIELD_INDEX[name]] = value
        return tuple.__new__(Layout, values)

    def microbatches(self, batch: int) -> int:
        """Micro-batches per pipeline per step: B / (DP x micro_batch)."""
        return batch // (self.dp * self.micro_batch)


_FIELD_INDEX = {name: i for i, name in enumerate(Layout._fields)}


@dataclass(frozen=True)
class Group:
    """Placement of one parallel group: ``size`` members, ``stride`` ranks apart."""

    size: int
    stride: int

    def local(self, domain: int) -> int:
        """Members inside one scale-up domain."""
        if self.size <= 1:
            return 1
        if self.stride >= domain:
            return 1
        return max(1, min(self.size, domain // self.stride))

    def crosses(self, domain: int) -> bool:
        return self.size > 1 and self.local(domain) < self.size


def folded(layout: Layout) -> bool:
    """Whether the expert layers are folded onto the TP ranks ("MoE parallel folding", Liu et
    al. 2025, arXiv:2504.14960; Megatron-Core ``--expert-tensor-parallel-size 1``): EP is drawn
    from TP x CP x DP, so it may exceed DP x CP (a published run at TP 2, DP 16, EP 32)."""
    return layout.fold_experts and layout.ep > 1 and layout.tp > 1


def expert_tp(layout: Layout) -> int:
    """Tensor parallelism of the expert GEMMs: the layout's TP (experts split like the dense
    MLP), or 1 when folded (each TP rank dispatches its 1/TP share of the tokens)."""
    return 1 if folded(layout) else layout.tp


def groups(layout: Layout) -> dict[str, Group]:
    """Placement of the TP, CP, EP, DP (x CP for gradient reduction), expert-DP and PP groups.
    Shared between layouts of the same sizes (the step model asks for it at every evaluation): read
    it, do not change it."""
    return _groups(layout.tp, layout.cp, layout.dp, layout.ep, layout.pp, folded(layout))


@lru_cache(maxsize=8192)
def _groups(t: int, c: int, d: int, e: int, pp: int, fold: bool) -> dict[str, Group]:
    if fold:
        # Expert grid ETP 1 x EP x EDP over the same TP x CP x DP ranks, EP innermost.
        ep, edp = Group(e, 1), Group(t * c * d // e, e)
    else:
        # EP from the DP x CP ranks; expert gradients reduced over those holding the same experts.
        ep = Group(e, t * c)
        edp = Group(d * c // e, t * c * e) if e > 1 else Group(d * c, t)
    return {
        "tp": Group(t, 1),
        "cp": Group(c, t),
        "ep": ep,
        # Dense gradients are reduced over DP x CP (Megatron: the CP ranks hold the same weights).
        "dp": Group(d * c, t),
        "edp": edp,
        "pp": Group(pp, t * c * d),
    }


def dense_layers_per_rank(dense_layers: int, layers: int, pp: int, vp: int) -> tuple[float, float]:
    """(fewest, most) of a model's leading dense layers held by one pipeline rank.

    Megatron-Core assigns layers in order, ``layers / (pp x vp)`` per virtual chunk, chunk j on
    rank j mod pp; the dense layers of an MoE model come first (DeepSeek-V3
    ``first_k_dense_replace = 3``; Megatron-Core ``moe_layer_freq``), so with PP > 1 they sit on the
    first rank (the first chunks) and the other ranks hold MoE layers only."""
    if dense_layers <= 0 or pp <= 1:
        return float(dense_layers), float(dense_layers)
    chunks = pp * max(1, vp)
    size = layers / chunks
    per_rank = [0.0] * pp
    for j in range(chunks):
        start = j * size
        per_rank[j % pp] += max(0.0, min(start + size, dense_layers) - start)
    return min(per_rank), max(per_rank)


def sharding(layout: Layout) -> int:
    """The ZeRO stage a layout's sharding amounts to. With PP > 1, ZeRO-2 is ZeRO-1: a pipeline
    schedule accumulates whole gradients over the step's micro-batches and reduces them once
    (Megatron-Core: the DDP ``no_sync`` of every micro-batch but the last, schedules.py; PyTorch
    pipelining: ``set_requires_gradient_sync(False)`` on every backward, torchtitan's FSDP with
    PP; DeepSpeed's pipeline engine refuses ZeRO-2), so the gradients are not sharded and are
    reduce-scattered once per step, as the distributed optimizer does."""
    return 1 if layout.zero == 2 and layout.pp > 1 else layout.zero


def recomputed_layers(layout: Layout, layers: int) -> int:
    """Layers of a stage of ``layers`` that are fully recomputed (Megatron-LM
    --recompute-num-layers; 0, every layer, without a count)."""
    if layout.recompute != "full":
        return 0
    k = layout.recompute_layers
    return layers if k <= 0 else min(k, layers)


def recomputed_fraction(layout: Layout, layers: int) -> float:
    """Fraction of the fullest stage's layers that are fully recomputed (0 without full recompute)."""
    n = layers_per_stage(layers, layout.pp)
    return recomputed_layers(layout, n) / n


def check(layout: Layout, arch: Architecture, seq: int, batch: int, domain: int) -> str | None:
    """Why ``layout`` cannot run this model, or None when it can (Megatron-LM's constraints)."""
    if layout.tp > domain:
        return f"TP {layout.tp} exceeds the scale-up domain ({domain})"
    if arch.heads % layout.tp:
        return f"TP {layout.tp} does not divide {arch.heads} heads"
    if arch.kv_heads % layout.tp and not arch.is_mla:
        return f"TP {layout.tp} does not divide {arch.kv_heads} KV heads"
    if arch.ffn % layout.tp or (arch.is_moe and arch.expert_ffn % layout.tp):
        return f"TP {layout.tp} does not divide the MLP width"
    if layout.pp > arch.layers:
        return f"PP {layout.pp} exceeds {arch.layers} layers"
    if layout.vp > 1:
        if layout.pp < 2:
            return "interleaving needs PP >= 2"
        if layers_per_stage(arch.layers, layout.pp) % layout.vp:
            return f"VP {layout.vp} does not divide {layers_per_stage(arch.layers, layout.pp)} layers per stage"
    if layout.cp > 1 and seq % (2 * layout.cp):
        return f"CP {layout.cp} needs the sequence ({seq}) divisible by 2 x CP"
    if layout.ep > 1:
        if not arch.is_moe or arch.experts % layout.ep:
            return f"EP {layout.ep} does not divide {arch.experts} experts"
        if folded(layout):
            if (layout.tp * layout.dp * layout.cp) % layout.ep:
                return f"EP {layout.ep} does not divide TP x DP x CP ({layout.tp * layout.dp * layout.cp})"
        elif (layout.dp * layout.cp) % layout.ep:
            return f"EP {layout.ep} does not divide DP x CP ({layout.dp * layout.cp})"
    if layout.sequence_parallel and layout.tp == 1:
        return "sequence parallelism needs TP > 1"
    if layout.zero == 3 and layout.pp > 1:
        return "ZeRO-3/FSDP with pipeline parallelism is not modelled"
    if layout.zero not in (0, 1, 2, 3):
        return f"zero must be 0..3, got {layout.zero}"
    if layout.recompute not in RECOMPUTE_ORDER:
        return f"recompute must be one of {', '.join(RECOMPUTE_ORDER)}"
    if layout.recompute_layers and (layout.recompute != "full"
                                    or layout.recompute_layers > layers_per_stage(arch.layers, layout.pp)):
        return "recompute_layers needs full recompute and at most the layers of a stage"
    if batch % (layout.dp * layout.micro_batch):
        return (f"global batch {batch} is not divisible by DP x micro-batch "
                f"({layout.dp} x {layout.micro_batch})")
    m = layout.microbatches(batch)
    if layout.vp > 1 and m < layout.pp:
        return f"interleaving needs at least PP ({layout.pp}) micro-batches, got {m}"
    return None


def divisors(n: int) -> list[int]:
    return list(_divisors(n))


@lru_cache(maxsize=4096)
def _divisors(n: int) -> tuple[int, ...]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))
