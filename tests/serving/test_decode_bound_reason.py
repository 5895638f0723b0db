"""The decode reason names the largest term of the modelled step and gives the times that make it so;
the plan's ``bound`` and ``roofline.decode_bound`` agree where the step is set by its reads."""

from __future__ import annotations

from pathlib import Path

from gpuplan.hardware import load_catalog
from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload

DATA = Path(__file__).resolve().parent / "data"


def test_chat8b_decode_is_named_by_its_reads_not_by_one_share_of_them():
    """Llama-3.1-8B, 60 QPS of 1,500 + 350 tokens on MI300X (a plan signer's profile): the reason said
    "Decode is bound by compute ... (297 FLOP/B against a ridge of 493 FLOP/B)" and the JSON ``bound:
    compute`` beside ``roofline.decode_bound: memory``, because the step's reads were split in two
    (weights 3.0 ms, KV cache 2.6 ms) and each was smaller than the GEMMs' 4.5 ms of math beyond their
    stream. Together the reads take 5.6 ms of the 11.2 ms step: 5.6 + 4.5 + 1.1 = 11.2."""
    path = DATA / "chat8b.toml"
    catalog = load_catalog()
    s = plan_workload(load_profile_text(path.read_text(encoding="utf-8"), str(path), catalog), catalog,
                      phases=("serving",)).serving
    line = next(r for r in s.reasons if r.startswith("Decode is bound"))
    assert line == ("Decode is bound by memory bandwidth (weights): at the target load (mean concurrency 78.0) a "
                    "step takes 11.2 ms per GPU: reads 5.6 ms (8.03 GB of weights, 8.59 GB of KV cache), compute "
                    "4.5 ms beyond them (6.05 TFLOP), fixed latency 1.1 ms; 297 FLOP/B, below the 493 FLOP/B peak "
                    "ridge.")
    assert s.bound == "memory bandwidth (weights)"
    assert s.roofline.decode_bound == "memory"
