"""``gpuplan sweep``: the grid, the points, the formats, and bad input."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gpuplan.core.errors import InputError
from gpuplan.hardware.loader import load_catalog
from gpuplan.planning.sweep import MAX_POINTS, grid, parse_set, run_sweep
from gpuplan.render.sweep import render_sweep

ROOT = Path(__file__).resolve().parents[2]
CHAT = ROOT / "examples" / "chat-8b-serving.toml"


def test_linear_log_and_list_values():
    assert parse_set("serving.qps=10:100:4") == ("serving.qps", [10, 40, 70, 100])
    # 1, 10, 100, 1000 tokens/s: geometric spacing, written as the decimal a person would type.
    assert parse_set("serving.qps=1:1000:4", log=True) == ("serving.qps", [1.0, 10.0, 100.0, 1000.0])
    assert parse_set("serving.qps=0.5:1:3") == ("serving.qps", [0.5, 0.75, 1.0])
    # A list field takes each value as a one-item list: one GPU per point.
    assert parse_set("constraints.allow_gpus=h100-sxm-80gb,b200-sxm-180gb") == (
        "constraints.allow_gpus", [["h100-sxm-80gb"], ["b200-sxm-180gb"]])
    assert parse_set("serving.qps=5:5:3") == ("serving.qps", [5])


@pytest.mark.parametrize("spec, expected", [
    ("serving.qpx=1:2:2", "did you mean 'qps'"),
    ("servng.qps=1:2:2", "did you mean 'serving'"),
    ("serving.qps=1:2:0", "N must be a whole number"),
    ("serving.qps=1:2:2.5", "N must be a whole number"),
    ("serving.qps=1:2", "START:STOP:N"),
    ("serving.qps", "FIELD=START:STOP:N"),
    ("serving.qps=1,,2", "comma-separated"),
])
def test_bad_specs_name_the_flag(spec, expected):
    with pytest.raises(InputError) as err:
        parse_set(spec)
    line = err.value.one_line()
    assert "--set" in line and expected in line and "\n" not in line


def test_the_grid_is_bounded_and_ordered():
    sets = [("serving.qps", [1, 2]), ("serving.ttft_ms", [100, 200, 300])]
    assert grid(sets)[:2] == [{"serving.qps": 1, "serving.ttft_ms": 100}, {"serving.qps": 1, "serving.ttft_ms": 200}]
    with pytest.raises(InputError, match="at most"):
        grid([("serving.qps", list(range(100))), ("serving.ttft_ms", list(range(MAX_POINTS // 50)))])


def test_a_fixed_gpu_fleet_grows_with_the_load_and_jobs_do_not_change_the_result():
    catalog = load_catalog()
    sets = [parse_set("serving.qps=5:60:4"), parse_set("constraints.allow_gpus=l40s-pcie-48gb")]
    one = run_sweep(CHAT.read_text(), str(CHAT), sets, catalog, overlays=[], phases=("serving",))
    two = run_sweep(CHAT.read_text(), str(CHAT), sets, catalog, overlays=[], phases=("serving",), jobs=2)
    assert render_sweep(one, "json") == render_sweep(two, "json")
    gpus = [p.serving.gpus for p in one.sweep]
    assert [p.values["serving.qps"] for p in one.sweep] == [5, 23, 42, 60]
    assert gpus == sorted(gpus) and gpus[-1] > gpus[0]
    # Every fleet carries its load: the sweep reports the planner's own capacity.
    assert all(p.serving.max_qps >= p.values["serving.qps"] for p in one.sweep)


def test_every_format():
    catalog = load_catalog()
    result = run_sweep(CHAT.read_text(), str(CHAT), [parse_set("serving.qps=5:40:3")], catalog, overlays=[],
                       phases=("serving",))
    data = json.loads(render_sweep(result, "json"))
    assert [p["values"] for p in data["sweep"]] == [{"serving.qps": 5}, {"serving.qps": 22}, {"serving.qps": 40}]
    assert set(data["sweep"][0]) == {"values", "training", "serving"} and data["sweep"][0]["training"] is None
    rows = list(csv.reader(io.StringIO(render_sweep(result, "csv"))))
    assert rows[0][:3] == ["serving.qps", "gpu", "gpus"] and len(rows) == 4
    html = render_sweep(result, "html")
    root = ET.fromstring(html.removeprefix("<!DOCTYPE html>\n"))
    (chart,) = root.findall(".//{http://www.w3.org/2000/svg}svg")
    assert chart.get("class") == "sweep" and chart.get("data-points") == "3"
    table = render_sweep(result, "table").splitlines()
    assert table[0].startswith("sweep of chat-8b-serving: 3 points")


def test_cli_bad_value_is_one_line_and_exit_2(tmp_path):
    out = tmp_path / "s.json"
    proc = subprocess.run([sys.executable, "-m", "gpuplan", "sweep", str(CHAT), "--set", "serving.qps=-5,5", "-o",
                           str(out)], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    # the bad value came from the command line: the error names the flag, not the profile file
    assert "--set serving.qps: input should be greater than 0 (got -5)" in proc.stderr
    assert str(CHAT) not in proc.stderr
    assert not out.exists()


def _serving_point(qps: float, gpu: str | None, gpus: int, capex: float, ttft: float):
    from gpuplan.planning.sweep import ServingSummary, SweepPoint

    return SweepPoint(values={"serving.qps": qps}, training=None, serving=ServingSummary(
        feasible=gpu is not None, gpu=gpu, gpus=gpus, replicas=gpus, ttft_ms_at_percentile=ttft, tpot_ms=20.0,
        max_qps=qps * 1.2, capex_usd=capex, cloud_usd_per_hour=None, power_kw=5.0))


def test_the_sweep_chart_shows_cost_gpus_sku_and_latency_and_marks_each_sku_change():
    from gpuplan.planning.sweep import SweepResult
    from tests.render.test_pictures import assert_labels_apart

    points = [_serving_point(5, "l4-pcie-24gb", 3, 140e3, 250.0), _serving_point(10, "l4-pcie-24gb", 5, 140e3, 240.0),
              _serving_point(20, "l40s-pcie-48gb", 3, 184e3, 100.0), _serving_point(40, None, 0, 0.0, 0.0),
              _serving_point(80, "h100-sxm-80gb", 2, 300e3, 30.0)]
    result = SweepResult(workload="chat", fields=["serving.qps"], sweep=points)
    root = ET.fromstring(render_sweep(result, "html").removeprefix("<!DOCTYPE html>\n"))
    ns = "{http://www.w3.org/2000/svg}"
    (chart,) = root.iter(f"{ns}svg")
    assert chart.get("data-log") == "true"  # 5..80: a factor of 16, drawn on a log axis
    panels = [g.get("data-title") for g in chart.iter(f"{ns}g") if g.get("class") == "panel"]
    assert panels == ["serving: capex", "serving: GPUs", "serving: TTFT at the target percentile (ms)"]
    runs = [(r.get("data-gpu")) for r in chart.iter(f"{ns}rect") if r.get("class") == "sku"]
    assert runs == ["l4-pcie-24gb", "l40s-pcie-48gb", "-", "h100-sxm-80gb"]  # "-": no feasible plan there
    changes = [(c.get("data-from"), c.get("data-to")) for c in chart.iter(f"{ns}line") if c.get("class") == "sku-change"]
    assert changes == [("l4-pcie-24gb", "l40s-pcie-48gb"), ("l40s-pcie-48gb", "-"), ("-", "h100-sxm-80gb")]
    # the infeasible point has no dot: 4 of 5 points per panel
    dots = [len(list(g.iter(f"{ns}circle"))) for g in chart.iter(f"{ns}g") if g.get("class") == "panel"]
    assert dots == [4, 4, 4]
    assert_labels_apart(chart)
    # the table is the report's: a header row, right-aligned numbers, "-" for the infeasible point
    cells = [[c.text for c in row] for row in root.iter("tr")]
    assert cells[0][:3] == ["serving.qps", "gpu", "gpus"] and cells[4][2] == "-"


def test_the_sweep_chart_labels_its_first_and_last_values():
    """The first value sits under the y axis's "0": a two-digit one overlapped it and was dropped."""
    from gpuplan.planning.sweep import SweepResult

    points = [_serving_point(q, "l4-pcie-24gb", 3, 140e3, 250.0) for q in (10, 40, 70, 100)]
    result = SweepResult(workload="chat", fields=["serving.qps"], sweep=points)
    root = ET.fromstring(render_sweep(result, "html").removeprefix("<!DOCTYPE html>\n"))
    ns = "{http://www.w3.org/2000/svg}"
    (ticks,) = [g for g in root.iter(f"{ns}g") if g.get("class") == "x-ticks"]
    assert [t.text for t in ticks.iter(f"{ns}text")][:2] == ["10", "100"]



def test_sweep_labels_say_what_they_show():
    """The TTFT column is the percentile TTFT (the JSON's ttft_ms_at_percentile); a training sweep's
    page speaks of days, not latency; one point is 'point'."""
    from gpuplan.planning.sweep import SweepPoint, SweepResult, TrainingSummary

    t = TrainingSummary(feasible=True, gpu="h100-sxm-80gb", gpus=512, nodes=64, wall_clock_days=30.0, mfu=0.4,
                        capex_usd=20e6, cloud_usd_per_hour=None, power_kw=700.0)
    one = SweepResult(workload="w", fields=["training.tokens"],
                      sweep=[SweepPoint(values={"training.tokens": 1e12}, training=t, serving=None)])
    page = render_sweep(one, "html")
    assert "1 point over training.tokens; per point the recommended GPU, its cost, GPU count and days to train" in page
    assert "latency" not in page.split("<svg")[0]
    assert render_sweep(one, "table").startswith("sweep of w: 1 point over training.tokens")
    from gpuplan.render.sweep import _COLUMNS

    assert [label for label, _ in _COLUMNS["serving"]][3] == "ttft_ms_at_percentile"
