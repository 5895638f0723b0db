"""Counts in the plan's sentences: singular for one, thousands separators (a new user's report)."""

from __future__ import annotations

import pytest

from gpuplan.hardware import load_catalog
from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload

ONE_GPU_TYPE = """
[model]
preset = "llama-3.1-8b"
[serving]
qps = 2
prompt_tokens = 1000
output_tokens = 200
precision = "fp8"
ttft_ms = 3000
tpot_ms = 80
[constraints]
allow_gpus = ["h100-sxm-80gb"]
"""


@pytest.fixture(scope="module")
def plan():
    catalog = load_catalog()
    return plan_workload(load_profile_text(ONE_GPU_TYPE, "p.toml", catalog), catalog, phases=("serving",))


def test_one_priced_gpu_type_and_one_spare_read_in_the_singular(plan):
    s = plan.serving
    assert (s.replicas, s.spare_replicas, s.nodes) == (2, 1, 1)
    assert any(r.startswith("The only priced GPU type that meets the targets: $294,000 server capex")
               for r in s.reasons), s.reasons
    assert not any("Cheapest of 1 " in r for r in s.reasons)
    single = next(f for f in plan.findings if f.code == "serving-single-server")
    assert "the 1 spare replica covers a GPU failure" in single.message


def test_training_reasons_write_days_as_the_header_does():
    """chat-8b-finetune-fleet trains for 4.53 days: the header said 4.53 and the reason 4.5."""
    from pathlib import Path

    from gpuplan.model.profile import load_profile_text as load
    from gpuplan.render.numbers import num

    catalog = load_catalog()
    path = Path(__file__).resolve().parents[2] / "examples" / "chat-8b-finetune-fleet.toml"
    t = plan_workload(load(path.read_text(), str(path), catalog), catalog, phases=("training",)).training
    assert num(t.wall_clock_days) == "4.53"
    assert any(r.endswith(" end to end; server capex $237,500") and "; 4.53 days end to end" in r
               for r in t.reasons), t.reasons
