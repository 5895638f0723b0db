"""Fit a job to a GPU count someone already has: pipeline depths with uneven first and last
stages, global batches that are not powers of two, and the nearest counts that work.

* Pipeline stages (Megatron-Core ``--decoder-first-pipeline-num-layers`` /
  ``--decoder-last-pipeline-num-layers``): the middle stages hold the same number of layers, the
  first and the last may hold fewer. The slowest stage paces the pipeline, so a depth is worth
  trying when its fullest stage holds ``ceil(L / PP)`` layers; the lighter stages idle for the
  difference (the *stage imbalance*, part of the step time).
* Global batch: published runs use ``2^k`` sequences, which leaves DP and micro-batch free to be
  powers of two; on a count such as 1,016 GPUs (127 servers) no DP divides it. The batch is then the
  one, of the few nearest the requested ``global_batch_tokens`` that a DP of that count divides,
  nearest the request among those that plan within :data:`BATCH_TIME_TOLERANCE` of the fastest.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpuplan.training.memory import GIB
from gpuplan.training.stages import batch_sequences, imbalance, pipeline_depths, rank_layers

if TYPE_CHECKING:
    from gpuplan.hardware.loader import Catalog
    from gpuplan.hardware.schema import Gpu
    from gpuplan.physics.collectives import Network
    from gpuplan.model.profile import Workload
    from gpuplan.training.search import Evaluation, Evaluator
    from gpuplan.training.timing import Job

#: Batches (nearest first) tried on a fixed GPU count when the power-of-two batch has no layout.
MAX_BATCHES = 4
#: Servers scanned either side of an unusable count for the nearest counts that work.
NEAREST_SCAN_SERVERS = 64


#: How much slower than the fastest tried batch the batch nearest the requested one may plan and
#: still be kept on a fixed GPU count: a larger batch is always a little faster (less bubble,
#: fewer steps), and the profile's batch is the user's choice for convergence; within a few
#: percent, the nearest batch wins (1,016 H100s: 1,016 sequences at 172 days, not 1,524 at 169).
BATCH_TIME_TOLERANCE = 0.05


def batch_options(requested: float, dps: set[int], *, limit: int = MAX_BATCHES) -> list[int]:
    """Global batches (sequences) nearest ``requested`` that one of ``dps`` divides, nearest first."""
    seen: set[int] = set()
    for d in dps:
        low = max(d, math.floor(requested / d) * d)
        seen.update((low, low + d))
    return sorted(seen, key=lambda b: (abs(b - requested), b))[:limit]


def describe_batch(batch: int, seq: int, requested_tokens: float, dp: int, micro_batch: int, gpus: int,
                   power_of_two: int) -> str:
    """The plan's note for a batch that is not the power of two the planner starts from."""
    return (f"global batch: {batch:,} sequences ({batch * seq / 1e6:.2f}M tokens), of the batches "
            f"nearest the requested {requested_tokens / 1e6:.2f}M tokens that a DP of the count divides, the "
            f"nearest that plans within {BATCH_TIME_TOLERANCE:.0%} of the fastest (DP {dp} x "
            f"micro-batch {micro_batch}, {batch / (requested_tokens / seq) - 1:+.1%}); the power of two "
            f"{power_of_two:,} has no layout on exactly {gpus:,} GPUs")


def fixed_count_dps(ev: "Evaluator", gpus: int) -> set[int]:
    """The DP values a layout on exactly ``gpus`` GPUs can have (TP x CP x PP x DP = gpus), within
    what the run's framework varies."""
    from gpuplan.training.framework import constrain
    from gpuplan.training.search import Fixed, cp_candidates, tp_candidates

    fixed = constrain(ev.framework, Fixed())  # FSDP: no pipeline, no CP
    out: set[int] = set()
    for tp in tp_candidates(ev, fixed):
        for cp in cp_candidates(ev.job.seq, fixed):
            for pp in ([fixed.pp] if fixed.pp is not None else pipeline_depths(ev.job.arch.layers, ev.job.pipeline_split)):
                mp = tp * cp * pp
                if mp <= gpus and gpus % mp == 0:
                    out.add(gpus // mp)
    return out


def count_works(ev: "Evaluator", gpus: int) -> bool:
    """Whether some layout can use exactly ``gpus`` GPUs: a TP x PP that divides the count and
    fits memory at the most sharding and recompute (the batch then follows the count's DP)."""
    from gpuplan.training.search import min_memory_at

    return min_memory_at(ev, gpus) <= ev.limit


def nearest_counts(ev: "Evaluator", gpus: int, *, scan: int = NEAREST_SCAN_SERVERS) -> tuple[int | None, int | None]:
    """The nearest whole-server counts below and above ``gpus`` that some layout can use."""
    step = ev.gpu.gpus_per_node
    base = gpus // step * step
    below = next((n for n in range(base if base < gpus else base - step, 0, -step)
                  if base - n <= scan * step and count_works(ev, n)), None)
    above = next((n for n in range(base + step, base + (scan + 1) * step, step) if count_works(ev, n)), None)
    return below, above


def counts_phrase(nearest: tuple[int | None, int | None]) -> str:
    """'; the nearest counts that work: 1,008 or 1,024 GPUs' (empty when none was found)."""
    found = [f"{n:,}" for n in nearest if n is not None]
    return f"; the nearest counts that work: {' or '.join(found)} GPUs" if found else ""


def search_network(workload: "Workload", gpu: "Gpu", catalog: "Catalog") -> "Network":
    """The network layouts are searched on: the reference server's, or a checked cluster's own
    fabric, NIC speed and oversubscription (``gpuplan check``)."""
    from gpuplan.physics.network import network_for

    cluster = workload.cluster_network
    if cluster is None:
        return network_for(gpu, catalog)
    fabric = catalog.fabrics[cluster.fabric] if cluster.fabric else None
    return network_for(gpu, catalog, fabric, gbit_per_gpu=cluster.nic_gbit_per_gpu,
                       oversubscription=cluster.oversubscription)


def usable_text(usable_gib: float, limit_bytes: float, headroom: float) -> str:
    """Usable GiB, and what the headroom leaves of it."""
    if headroom <= 0:
        return f"{usable_gib:.1f}"
    return f"{usable_gib:.1f} ({limit_bytes / GIB:.1f} with the {headroom:.0%} memory headroom kept free)"


def sizing_notes(job: "Job", e: "Evaluation", workload: "Workload") -> list[str]:
    """The batch when it is not the profile's power of two, and uneven pipeline stages."""
    out = []
    spec = workload.training
    lay = e.layout
    if spec is not None:
        pow2 = batch_sequences(spec.global_batch_tokens, spec.sequence_length)
        if job.batch != pow2:
            out.append(describe_batch(job.batch, job.seq, spec.global_batch_tokens, lay.dp, lay.micro_batch,
                                      e.gpus, pow2))
    stages = rank_layers(job.arch.layers, lay.pp, job.pipeline_split) if lay.pp > 1 else (job.arch.layers,)
    idle = imbalance(job.arch.layers, stages)
    if idle > 0:
        middle = f"{lay.pp - 2} x {stages[1]}, " if lay.pp > 2 else ""
        how = job.pipeline_split if job.pipeline_split is not None else "Megatron-Core uneven first/last stages"
        out.append(f"pipeline: {job.arch.layers} layers on {lay.pp} stages (first {stages[0]}, {middle}last "
                   f"{stages[-1]}; {how}); the fullest stage paces the pipeline, "
                   f"the others idle {idle:.1%} of it (stage imbalance, in the step time: "
                   f"{idle * e.step.pipeline:.1f} s of {e.step_time:.1f} s)")
    return out
