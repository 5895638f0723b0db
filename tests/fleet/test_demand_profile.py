"""``[serving.demand]`` at the boundary: one line naming the file, the field and what it expects."""

from __future__ import annotations

import pytest

from gpuplan.core.errors import InputError
from gpuplan.model.profile import load_profile_text

HOURS = ", ".join(str(h + 1) for h in range(24))  # 1 .. 24 req/s


def load(catalog, serving: str, demand: str):
    text = f'[model]\npreset = "llama-3.1-8b"\n[serving]\n{serving}\n[serving.demand]\n{demand}\n'
    return load_profile_text(text, "p.toml", catalog)


def test_the_peak_is_the_sizing_load(catalog):
    wl = load(catalog, "", f"hourly_qps = [{HOURS}]\ngrowth_per_year = 0.5")
    assert wl.serving.qps == 24
    assert wl.serving.hourly_qps == tuple(float(h + 1) for h in range(24))
    assert wl.serving.growth_per_year == 0.5
    assert not any(a.field == "serving.demand" for a in wl.assumptions)


def test_qps_at_or_above_the_peak_is_kept(catalog):
    assert load(catalog, "qps = 30", f"hourly_qps = [{HOURS}]").serving.qps == 30


@pytest.mark.parametrize(("serving", "demand", "field", "text"), [
    ("", "hourly_qps = [1, 2, 3]", "serving.demand.hourly_qps", "expected 24 numbers"),
    ("", 'hourly_qps = [' + ", ".join(["1"] * 23) + ', "x"]', "serving.demand.hourly_qps", "expected 24 numbers"),
    ("", "hourly_qps = [" + ", ".join(["0"] * 24) + "]", "serving.demand.hourly_qps", "peak above 0"),
    ("", "hourly_qps = [-1" + ", 1" * 23 + "]", "serving.demand.hourly_qps[0]", "greater than or equal to 0"),
    ("", f"hourly_qps = [{HOURS}]\ngrowth_per_year = 50", "serving.demand.growth_per_year", "less than or equal to 10"),
    ("qps = 3", f"hourly_qps = [{HOURS}]", "serving", "below the peak"),
    ("", "hourlyqps = [1]", "serving.demand.hourlyqps", "hourly_qps"),
    ("min_replicas = 0", f"hourly_qps = [{HOURS}]", "serving.min_replicas", "greater than or equal to 1"),
])
def test_bad_demand_is_one_line(catalog, serving, demand, field, text):
    with pytest.raises(InputError) as err:
        load(catalog, serving, demand)
    message = str(err.value)
    assert "\n" not in message and "p.toml" in message and field in message and text in message


def test_no_qps_and_no_curve(catalog):
    with pytest.raises(InputError, match="give qps or"):
        load_profile_text('[model]\npreset = "llama-3.1-8b"\n[serving]\nprompt_tokens = 100\n', "p.toml", catalog)
