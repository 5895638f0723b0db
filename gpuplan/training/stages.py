"""Pipeline stages as Megatron-Core splits them: the fullest stage has ``ceil(layers / pp)`` layers,
the middle stages are equal, and the first and last may be lighter
(``--decoder-first/last-pipeline-num-layers``; 80 layers on 15 stages = 1 + 13 x 6 + 1).

A run may state another split (:func:`rank_layers`): Megatron-Core's
``account_for_embedding_in_pipeline_split`` / ``account_for_loss_in_pipeline_split`` count the
embedding and the loss as a layer each (transformer_block.get_num_layers_to_build: NeMo's Llama
3.1 405B puts 126 layers on 8 ranks as 15 + 16 x 6 + 15), or an explicit
``pipeline_model_parallel_layout`` string (pipeline_parallel_layer_layout.py: NeMo's DeepSeek-V3
on 4 ranks x 4 virtual stages puts the embedding with 16 layers on rank 0 and 13 on the last).
"""

from __future__ import annotations

import math
import re
from typing import get_args

from gpuplan.core.memo import memo
from gpuplan.model.profile_schema import PipelineSplit
from gpuplan.physics.pipeline import layers_per_stage


def stage_split(layers: int, pp: int) -> tuple[int, int, int] | None:
    """(first, middle, last) layers per stage of a ``pp``-deep pipeline whose fullest stage holds
    ``ceil(layers / pp)`` layers, middle stages equal (Megatron-Core); None when no such split exists.
    With ``pp`` = 1 the one stage is ``middle``; with ``pp`` = 2 there are no middle stages."""
    if pp < 1 or pp > layers:
        return None
    k = layers_per_stage(layers, pp)
    if pp == 1:
        return (0, layers, 0)
    if pp == 2:
        return (layers - k, 0, k) if layers - k >= 1 else None
    for mid in range(k, 0, -1):
        rest = layers - (pp - 2) * mid
        if 2 <= rest <= 2 * k:
            last = rest // 2  # the lighter end last: it also computes the loss (timing.stated_stage)
            return (rest - last, mid, last)
    return None


def stage_layers(layers: int, pp: int) -> list[int]:
    """Layers on each stage, first to last (an even split when ``pp`` divides ``layers``)."""
    split = stage_split(layers, pp)
    if split is None:
        k = layers_per_stage(layers, pp)
        return [k] * pp
    first, mid, last = split
    if pp == 1:
        return [mid]
    return [first] + [mid] * (pp - 2) + [last]


#: The named splits a run may state (``pipeline_split``); anything else with a ``|`` is a layout.
SPLITS: tuple[str, ...] = get_args(PipelineSplit)


def rank_layers(layers: int, pp: int, split: str | None = None, vp: int = 1) -> tuple[int, ...]:
    """Decoder layers on each of ``pp`` ranks, first to last, under ``split``: None or
    ``balanced`` the default (:func:`stage_layers`); ``account-*`` Megatron-Core's
    account-for-embedding/loss split, ``(layers + counted) / pp`` per rank less one where the
    embedding (rank 0) or the loss (last rank) sits, which must divide and, interleaved, divide
    by ``vp``; else a Megatron-Core layout string (:func:`layout_layers`). ValueError when the
    split does not apply. Memoised (``_RANKS``; a split that raises is not kept)."""
    key = (layers, pp, split, vp)
    hit = _RANKS.get(key)
    if hit is None:
        if len(_RANKS) >= 4096:
            _RANKS.clear()
        hit = _RANKS[key] = _rank_layers(layers, pp, split, vp)
    return hit


#: :func:`rank_layers` by its arguments (the step model asks for the slowest stage's split of every
#: layout it times). Bounded: cleared when full.
_RANKS: dict[tuple[int, int, str | None, int], tuple[int, ...]] = memo()


def _rank_layers(layers: int, pp: int, split: str | None, vp: int) -> tuple[int, ...]:
    if split is None or split == "balanced":
        return tuple(stage_layers(layers, pp))
    if "|" in split:
        per, _ = layout_layers(split, pp)
        if sum(per) != layers:
            raise ValueError(f"the layout places {sum(per)} decoder layers, the model has {layers}")
        return per
    if split not in SPLITS:
        raise ValueError(f"expected one of {', '.join(SPLITS)} or a layout string such as 'Et*4|(t*4|)*14tL'")
    emb, loss = split in ("account-embedding-loss", "account-embedding"), split in ("account-embedding-loss", "account-loss")
    total = layers + emb + loss
    if total % pp or (total // pp) % vp:
        raise ValueError(f"{split}: {layers} layers + {int(emb) + int(loss)} do not split evenly over {pp} stages"
                         + (f" x {vp} virtual stages" if vp > 1 else ""))
    out = [total // pp] * pp
    out[0] -= emb
    out[-1] -= loss
    return tuple(out)


def layout_layers(text: str, pp: int) -> tuple[tuple[int, ...], int]:
    """(decoder layers per rank, virtual stages) of a Megatron-Core layout string: chunks split by
    ``|``, ``t`` a decoder layer, ``E`` the embedding (first chunk), ``m`` a multi-token-prediction
    layer and ``L`` the loss (last chunk), ``x*n`` and ``(...)*n`` repeat; chunk ``i`` sits on rank
    ``i mod pp`` (PipelineParallelLayerLayout.parse_str_to_list, layout[vp_rank * pp + pp_rank])."""
    flat = text.replace(",", "")
    for pattern in (r"\(([^)]+)\)\*(\d+)", r"(.)\*(\d+)"):
        flat = re.sub(pattern, lambda g: g.group(1) * int(g.group(2)), flat)
    chunks = flat.split("|")
    bad = set(flat) - set("EtmL|")
    if bad:
        raise ValueError(f"unknown layer type {sorted(bad)[0]!r} in the layout (expected E, t, m, L, |)")
    if len(chunks) % pp:
        raise ValueError(f"the layout has {len(chunks)} chunks, not a multiple of {pp} stages")
    if "E" in "".join(chunks[1:]) or "L" in "".join(chunks[:-1]):
        raise ValueError("the layout must put E in its first chunk and L in its last")
    per = [0] * pp
    for i, chunk in enumerate(chunks):
        per[i % pp] += chunk.count("t")
    return tuple(per), len(chunks) // pp


def imbalance(layers: int, per_rank: tuple[int, ...]) -> float:
    """Fraction of the stage-time the average stage idles because the fullest one paces the
    pipeline: ``1 - layers / (pp x the fullest rank's layers)`` over the split ``per_rank``
    (:func:`rank_layers`; 0 for an even split)."""
    return 1.0 - layers / (len(per_rank) * max(per_rank))


def pipeline_depths(layers: int, split: str | None = None) -> list[int]:
    """Every pipeline depth Megatron-Core can split ``layers`` into with the fullest stage at
    ``ceil(layers / pp)`` layers (even depths and those with lighter first/last stages), or, with
    a named ``split`` (:func:`rank_layers`), those it applies to."""
    return [p for p in range(1, layers + 1) if stage_split(layers, p) is not None and applies(layers, p, split)]


def applies(layers: int, pp: int, split: str | None) -> bool:
    """Whether :func:`rank_layers` can split ``layers`` over ``pp`` stages as ``split`` says."""
    try:
        rank_layers(layers, pp, split)
    except ValueError:
        return False
    return True


def batch_sequences(tokens: float, seq: int) -> int:
    """Global batch in sequences for a batch given in tokens: the nearest power of two.

    Published runs use 2^k sequences (Llama 2: 4M tokens = 1024 x 4096; Llama 3: 16M tokens =
    2048 x 8192); a power of two leaves DP and micro-batch free to be any power of two.
    """
    raw = max(1.0, tokens / seq)
    return 1 << max(0, round(math.log2(raw)))


def stage_layout(layers: int, pp: int, logits_layers: float) -> tuple[int, bool]:
    """(layers, holds the LM head) of the slowest pipeline stage when the run states no split and
    the tail is heavier than a layer (``logits_layers`` with multi-token-prediction modules): the
    last stage holds k layers with it, the others split the rest, k the count that makes the
    slowest stage fastest (the recipes' explicit layouts: Megatron-Bridge
    recipes/deepseek/deepseek_v3.py puts 13, 5 and 1 decoder layers with the MTP module and the
    loss on the last of 4, 8 and 16 stages of 61 layers). PP = 1: all layers and the head.
    Without such a tail the split's own ranks decide (:func:`stated_stage`).
    """
    if pp == 1:
        return layers, True
    lo, rem = divmod(layers, pp)
    best = (lo + logits_layers, lo, True) if not rem else (float(lo + 1), lo + 1, False)
    for k in range(lo, -1, -1):
        rest = -(-(layers - k) // (pp - 1))
        last = k + logits_layers
        cand = (last, k, True) if last > rest else (float(rest), rest, False)
        if cand[0] < best[0] - 1e-12:
            best = cand
        if rest > best[0]:
            break
    return best[1], best[2]


def stated_stage(per_rank: tuple[int, ...], logits_layers: float) -> tuple[int, bool]:
    """(layers, holds the LM head) of the slowest stage of a stated split (stages.rank_layers):
    the last rank's layers with the head (``logits_layers`` layers' worth) against the fullest
    other rank's."""
    rest = max(per_rank[:-1])
    return (per_rank[-1], True) if per_rank[-1] + logits_layers > rest else (rest, False)
