"""One serving plan has three concurrencies; each is labelled where it is shown (docs/serving-model.md,
"Three concurrencies"): the planned operating point (the layout's batch at the target load), the
latency-limited concurrency (the most a replica runs within the targets) and the KV capacity (the
engine's running-sequence cap in `gpuplan deploy`)."""

from __future__ import annotations

import pytest

from gpuplan.model.profile import load_profile_text
from gpuplan.planning.compose import plan_workload
from gpuplan.render.deploy import deploy
from gpuplan.render.text import serving_layout
from tests.render.fixtures import serving_only_plan, serving_plan

PROFILE = """
[model]
preset = "llama-3.1-70b"
[serving]
prompt_tokens = 2000
output_tokens = 400
precision = "fp8"
qps = 40
"""


@pytest.fixture(scope="module")
def plan(catalog):
    return plan_workload(load_profile_text(PROFILE, "labels.toml", catalog), catalog).serving


def test_reasons_name_each_concurrency(plan):
    text = " ".join(plan.reasons)
    assert "latency-limited concurrency" in text
    assert "at the target load (mean concurrency" in text
    assert f"the layout's batch of {plan.layout.concurrency}" in text
    assert f"KV capacity of {plan.max_sequences_per_replica} sequences" in text


def test_the_three_are_ordered(plan):
    # operating point (at max_load_fraction of the latency-limited rate) <= latency-limited <= KV cap
    import re
    text = " ".join(plan.reasons)
    limit = float(re.search(r"latency-limited concurrency ([0-9.]+)", text).group(1))
    point = float(re.search(r"mean concurrency of ([0-9.]+)", text).group(1))
    assert point < limit <= plan.max_sequences_per_replica


def test_layout_row_says_which():
    # The fixture: batch 64 at the target load.
    assert serving_layout(serving_plan().layout) == "TP4 x PP1; batch 64 sequences at the target load"


def test_deploy_notes_tell_the_cap_from_the_operating_point():
    notes = deploy(serving_only_plan(), "vllm", model="org/model").notes
    assert ("the running-sequence cap is the KV-cache capacity, 640 sequences per replica; the plan runs 64 "
            "at the target load (the HPA's target)") in notes
