"""What-if scan: TensorRT-LLM's PyTorch backend runs a step that carries a prompt without its CUDA graph.

The PyTorch executor replays a captured graph only for generation-only batches
(``tensorrt_llm/_torch/pyexecutor/scheduler.py``, ``ScheduledRequests.can_run_cuda_graph``: no
context requests), so a mixed step launches every kernel of every layer from Python, on the same
host thread that does the per-request work the overlap scheduler hides under the GPU step. The
TensorRT-LLM docs call such context-phase iterations host-bound (its piecewise CUDA graphs exist for
them, docs/source/torch/features/torch_compile_and_piecewise_cuda_graph.md). gpuplan does not model
it: no source measures the eager host time per layer of that backend. This script patches
:meth:`gpuplan.serving.model.Replica.step` (here only, not the library) so that a step with prompt
tokens on an engine with per-sequence host time lasts at least ``host + eager``, ``eager = layers
per stage x US x reference clock / host clock``, and prints, for each ``US``, every validation set's
median error and pass count and the rows it names, to show what such a constant would have to be
and what it would move::

    python benchmarks/scan_eager_prompt_steps.py --us 0 100 200 400 600 --rows q30-b200 q235-b200
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import math
import statistics
import sys
from collections.abc import Iterator
from dataclasses import replace

from gpuplan.ci.validate import validate_files
from gpuplan.planning.api import load_catalog
from gpuplan.serving import fixed as serving_fixed
from gpuplan.serving import mixed as serving_mixed
from gpuplan.serving import model as serving_model

SETS = {
    "shared main+frontier": ["../shared/validation/*.toml", "../shared/validation/frontier/*.toml"],
    "published-extra": ["tests/serving/data/published-extra.toml"],
    "perf-overview-2025": ["tests/serving/data/trtllm-perf-overview.toml"],
    "perf-overview-1.2": ["tests/serving/data/trtllm-perf-overview-1.2.toml"],
    "v0.5-v0.6": ["tests/serving/data/trtllm-v0.5-v0.6.toml"],
    "other-engines": ["tests/serving/data/published-other-engines.toml"],
}

_original_step = serving_model.Replica.step
_original_batch = serving_fixed.offline_batch
_original_filled = serving_mixed.budget_filled_step


def _bench_engine(replica) -> bool:
    eng = replica.engine
    return eng is not None and eng.name == "trtllm" and eng.features.host_us_per_sequence > 0


def bench_budget(sequences: float, prompt: int, output: int, pp: int = 1) -> int:
    """``max_num_tokens`` as trtllm-bench sets it without chunked prefill (bench/build/tuning.py
    ``finetune_setting``, benchmark/utils/general.py ``get_settings``), from the sequences the cache
    holds (gpuplan's count stands in for trtllm-bench's own estimate)."""
    raw_bs = min(sequences, 4096) / pp
    raw_token = min(raw_bs * (1 + prompt / output), 32768)
    if raw_bs < 256:
        max_bs = max(64, 32 * math.ceil(raw_bs / 32))
    elif raw_bs < 1024:
        max_bs = 128 * math.ceil(raw_bs / 128)
    else:
        max_bs = 256 * math.ceil(raw_bs / 256)
    if raw_token < 4096:
        max_token = max(2048, 256 * math.ceil(raw_token / 256))
    elif raw_token < 8192:
        max_token = 512 * math.ceil(raw_token / 512)
    else:
        max_token = 1024 * math.ceil(raw_token / 1024)
    return max(max_token, prompt + max_bs)


def bench_offline_batch(replica, prompt, output):
    """The offline batch under trtllm-bench's ``max_num_tokens`` instead of the catalog's."""
    if not _bench_engine(replica):
        return _original_batch(replica, prompt, output)
    cache = serving_mixed.engine_max_sequences(replica, prompt, output)
    cap = replica.engine.batch_cap(replica.layout.pp)
    batch = min(cache, cap * replica.layout.dp) if cap is not None else cache
    n = max(output - 1, 1)
    per_step = bench_budget(cache, prompt, output, replica.layout.pp) / (1.0 + prompt / n)
    return min(batch, max(1, math.floor(per_step)))


def bench_filled_step(replica, batch, mean_context, requests, prompt):
    """Steps that take prompts take every whole prompt that fits the room the decode tokens leave
    (prefill not chunked; uniform lengths keep the first steps' bunching): ``piece = floor(room /
    prompt) x prompt``, a share ``requests x prompt / piece`` of the steps."""
    pf = requests * prompt
    if not _bench_engine(replica) or pf <= 0.0 or replica.layout.pp != 1:
        return _original_filled(replica, batch, mean_context, requests, prompt)
    output = round(batch / requests) + 1
    cache = serving_mixed.engine_max_sequences(replica, prompt, output)
    room = bench_budget(cache, prompt, output) - batch
    piece = max(1, math.floor(room / prompt)) * prompt
    if piece <= pf:
        full = replica.step(batch, mean_context, requests, prompt)
        return full, full
    share = pf / piece
    full = replica.step(batch, mean_context, piece / prompt, prompt)
    return serving_mixed.blend(share, full, replica.step(batch, mean_context)), full


def patched(us_per_layer: float):
    """``Replica.step`` with the eager host time of a prompt-carrying step added under the overlap."""

    def step(self, batch, mean_context, requests=0.0, prompt=0):
        out = _original_step(self, batch, mean_context, requests, prompt)
        eng = self.engine
        if (us_per_layer <= 0 or eng is None or requests <= 0 or not eng.features.host_overlap
                or eng.features.host_us_per_sequence <= 0):
            return out
        local = max(batch, 0.0) / self.layout.dp + requests / self.layout.dp
        host = eng.host_s(local, self.gpu.host_cpu_max_ghz)
        ghz = self.gpu.host_cpu_max_ghz or eng.features.host_reference_ghz
        layers = -(-self.arch.layers // self.layout.pp)
        eager = layers * us_per_layer * 1e-6 * eng.features.host_reference_ghz / ghz
        wait = max(0.0, host + eager - out.total_s)
        return replace(out, fixed_s=out.fixed_s + wait)

    return step


def figures(report) -> list[tuple[str, float, bool]]:
    out = []
    for c in report.cases:
        if c.kind != "serving":
            continue
        for f in c.figures:
            if f.error is not None:
                sign = 1.0 if f.predicted >= f.measured else -1.0
                out.append((c.id, sign * f.error, bool(f.passed)))
    return out


@contextlib.contextmanager
def patched_model(us_per_layer: float, budget: bool = False) -> Iterator[None]:
    """Within the block, the library prices prompt-carrying steps eagerly (and, with ``budget``,
    sizes the step budget as trtllm-bench does); the originals come back on exit."""
    serving_model.Replica.step = patched(us_per_layer)
    if budget:
        serving_fixed.offline_batch = bench_offline_batch
        serving_mixed.budget_filled_step = bench_filled_step
    try:
        yield
    finally:
        serving_model.Replica.step = _original_step
        serving_fixed.offline_batch = _original_batch
        serving_mixed.budget_filled_step = _original_filled


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--us", type=float, nargs="+", default=[0.0, 200.0, 400.0, 600.0],
                   help="eager host time per layer, us at the catalog's reference host clock")
    p.add_argument("--bench-budget", action="store_true",
                   help="also size max_num_tokens as trtllm-bench does and pack whole prompts into the room")
    p.add_argument("--rows", nargs="*", default=["q30-b200", "qwen3-30b-b200", "q235-b200"],
                   help="print the rows whose id contains one of these")
    args = p.parse_args(argv)
    catalog = load_catalog()
    for us in args.us:
        print(f"== eager {us:g} us per layer")
        with patched_model(us, args.bench_budget):
            for name, pats in SETS.items():
                files = [f for pat in pats for f in sorted(glob.glob(pat))]
                if not files:
                    continue
                rows = figures(validate_files(files, catalog, kinds=("serving",)))
                errs = [abs(e) for _, e, _ in rows]
                print(f"  {name:22s} median {100 * statistics.median(errs):6.2f}%  "
                      f"within {sum(ok for *_, ok in rows)}/{len(rows)}")
                for cid, e, ok in rows:
                    if any(r in cid for r in args.rows):
                        print(f"      {100 * e:+7.1f}%  {'pass' if ok else 'FAIL'}  {cid}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
