"""Where the time of one serving validation case goes: the steps the harness prices, by component.

For each layout the harness considers for the case (the given one, or the searched candidates;
gpuplan/serving/cases.py), prints the steps behind each figure (gpuplan/serving/fixed.py):

* latency figures (``ttft_ms``, ``tpot_ms``, ``decode_tokens_per_s``): the prefill steps of the
  batch's prompts (``prefill_tokens_per_step`` a step) and the decode step at the mean context;
* a static ``batch``: the same prefill and decode steps at that batch;
* an offline run: the steady-state mixed step (decode tokens and prefill chunks together) of an
  engine that mixes, else the decode step and the amortised prefill.

Each step is split into what :class:`gpuplan.serving.model.StepTime` adds up: the GEMMs (their
math and operand-stream roofs, joined by the knee), attention, collectives, the fixed per-layer
and per-step latency, and what the engine adds when the GPU waits for the host (kernel launches
without CUDA graphs, per-sequence host work). Times in ms, per GPU. Usage::

    python benchmarks/breakdown_case.py ../shared/validation/serving.toml trtllm-0.5-llama-70b-a100-tp4-ttft-128
    python benchmarks/breakdown_case.py FILE CASE_ID --layout 8,1,8     # one layout: tp,pp,ep
"""

from __future__ import annotations

import argparse
import sys

from gpuplan.ci.validate import load_cases
from gpuplan.hardware.serving_calibration import serving_constants
from gpuplan.model.arch import ArchitectureSpec, resolve
from gpuplan.model.case import CaseInput
from gpuplan.planning.api import load_catalog
from gpuplan.serving.cases import ServingRun, _layouts, predict
from gpuplan.serving.engine import resolve_engine
from gpuplan.serving.mixed import offline_batch
from gpuplan.serving.model import Layout, Replica, StepTime, build_replica, default_kv_precision


def parts(replica: Replica, step: StepTime, sequences: float) -> dict[str, float]:
    """The components of ``step`` in ms; ``sequences`` scheduled on one executor (host work)."""
    fixed0 = replica._per_step[0]
    busy = step.gemm_s + step.attention_s + step.comm_s + fixed0
    eng = replica.engine
    launch = max(0.0, eng.launch_s(replica.arch.layers) - busy) if eng else 0.0
    host = step.fixed_s - fixed0 - launch
    return {"total": step.total_s, "gemm": step.gemm_s, "gemm_stream": step.gemm_memory_s,
            "attention": step.attention_s, "comm": step.comm_s, "fixed": fixed0, "launch_wait": launch,
            "host_wait": host, "host_raw": eng.host_s(sequences, replica.gpu.host_cpu_max_ghz) if eng else 0.0}


def show(label: str, p: dict[str, float], times: float = 1.0) -> None:
    cols = "  ".join(f"{k} {v * 1e3:8.3f}" for k, v in p.items())
    mult = f" x{times:g}" if times != 1.0 else ""
    print(f"  {label:34s}{mult:>8s}  {cols}")


def breakdown(replica: Replica, run: ServingRun, figures: tuple[str, ...], prefill_tokens_per_step: int) -> None:
    p, o = run.prompt_tokens, run.output_tokens
    ctx = replica.decode_context(p, o)
    latency = {"ttft_ms", "tpot_ms", "decode_tokens_per_s"} & set(figures)
    batches = []
    if latency:
        batches.append(("latency", run.batch if run.batch is not None or run.scenario == "offline" else 1))
    if set(figures) - latency:
        batches.append(("throughput", run.batch))
    for what, batch in batches:
        eng = replica.engine
        b = batch
        if batch is None:
            b = offline_batch(replica, p, o)
            # fixed.py: a run whose requests all fit at once is one static batch of them.
            static = run.requests is not None and 1 <= run.requests <= b
            b = run.requests if static else b
            print(f"  [{what}] offline batch {b} (engine limit {offline_batch(replica, p, o)}, "
                  f"cache holds {replica.admitted_sequences(p, o)}){' run as one static batch' if static else ''}")
            if not static and eng is not None and eng.features.scheduling == "mixed" and o > 1:
                req = b / (o - 1)
                m = min(replica.layout.pp, b)  # pipeline micro-batches, as mixed.py and fixed.py take them
                show(f"mixed step {b / m:g} dec + {req / m:.2f}x{p} pf",
                     parts(replica, replica.step(b / m, ctx, req / m, p), (b + req) / m))
                continue
        else:
            print(f"  [{what}] batch {b}")
        per = max(1, prefill_tokens_per_step // max(p, 1))
        full, rest = divmod(b, per)
        if full:
            show(f"prefill step {per}x{p}", parts(replica, replica.prefill_step(per, p), per), full)
        if rest:
            show(f"prefill step {rest}x{p}", parts(replica, replica.prefill_step(rest, p), rest))
        m = min(replica.layout.pp, b)
        step = replica.decode_step(b / m, ctx)
        show(f"decode step b={b / m:g} ctx={ctx:g}", parts(replica, step, b / m), max(o - 1, 0))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("case_id")
    ap.add_argument("--layout", help="tp,pp,ep (default: the layouts the harness considers)")
    args = ap.parse_args(argv)
    catalog = load_catalog()
    case = next((c for c in load_cases(args.file) if c.id == args.case_id), None)
    if case is None or case.kind != "serving" or case.model is None:
        print(f"{args.file}: no serving case {args.case_id!r}", file=sys.stderr)
        return 2
    fields = (catalog.lookup("model", case.model.preset).arch_fields() if case.model.preset
              else case.model.arch_fields())
    arch, _ = resolve(ArchitectureSpec.model_validate(fields))
    run = ServingRun.model_validate(case.run)
    k = serving_constants(catalog)
    engine = resolve_engine(k, run.engine, run.engine_version)
    gpu = catalog.gpu(run.gpu)
    ci = CaseInput(id=case.id, file=args.file, arch=arch, run=dict(case.run), figures=tuple(case.measured))
    predicted = predict(ci, catalog)
    for fig, measured in case.measured.items():
        print(f"{fig}: predicted {predicted[fig]:.4g}, measured {measured:.4g} ({predicted[fig] / measured - 1:+.1%})")
    print(engine.summary())
    if args.layout:
        tp, pp, ep = (int(x) for x in args.layout.split(","))
        layouts = [Layout(tp=tp, pp=pp, ep=ep)]
    else:
        layouts = _layouts(ci, run, gpu, catalog)
    kv = run.kv_precision or default_kv_precision(run.precision)
    for lay in layouts:
        if lay.check(arch):
            continue
        replica = build_replica(gpu, arch, lay, run.precision, kv, k, catalog, engine=engine)
        print(f"tp {lay.tp} pp {lay.pp} ep {lay.ep} (dp {lay.dp}): times in ms per GPU")
        breakdown(replica, run, tuple(case.measured), k.engine.prefill_tokens_per_step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
