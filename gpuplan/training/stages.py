"""Pipeline stages as Megatron-Core splits them: the fullest stage has ``ceil(layers / pp)`` layers,
the middle stages are equal, and the first and last may be lighter
(``--decoder-first/last-pipeline-num-layers``; 80 layers on 15 stages = 1 + 13 x 6 + 1)."""

from __future__ import annotations

import math

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
            last = min(k, rest - 1)
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


def imbalance(layers: int, pp: int) -> float:
    """Fraction of the stage-time the average stage idles because the fullest one paces the
    pipeline (0 for an even split)."""
    k = layers_per_stage(layers, pp)
    return 1.0 - layers / (pp * k)


def pipeline_depths(layers: int) -> list[int]:
    """Every pipeline depth Megatron-Core can split ``layers`` into with the fullest stage at
    ``ceil(layers / pp)`` layers (even depths and those with lighter first/last stages)."""
    return [p for p in range(1, layers + 1) if stage_split(layers, p) is not None]


def batch_sequences(tokens: float, seq: int) -> int:
    """Global batch in sequences for a batch given in tokens: the nearest power of two.

    Published runs use 2^k sequences (Llama 2: 4M tokens = 1024 x 4096; Llama 3: 16M tokens =
    2048 x 8192); a power of two leaves DP and micro-batch free to be any power of two.
    """
    raw = max(1.0, tokens / seq)
    return 1 << max(0, round(math.log2(raw)))
