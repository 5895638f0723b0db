"""The sweep's table and CSV name their cost columns as the plan JSON does."""

from __future__ import annotations

import csv
import io

from gpuplan.planning.sweep import ServingSummary, SweepPoint, SweepResult
from gpuplan.render.sweep import render_sweep


def test_the_hourly_column_is_named_the_cloud_rate_it_is():
    """'usd_per_h' next to 'capex_usd' read as the fleet's own cost per hour; the figure is
    cloud_usd_per_hour (GPUs x the catalog's cloud rate; 4 x l40s at $1.95 in the chat-8b sweep at 30 QPS)."""
    s = ServingSummary(feasible=True, gpu="l40s-pcie-48gb", gpus=4, replicas=4, ttft_ms_at_percentile=95.9,
                       tpot_ms=34.9, max_qps=38.3, capex_usd=184_343.0, cloud_usd_per_hour=7.8, power_kw=8.53)
    result = SweepResult(workload="chat", fields=["serving.qps"],
                         sweep=[SweepPoint(values={"serving.qps": 30}, training=None, serving=s)])
    header, row = list(csv.reader(io.StringIO(render_sweep(result, "csv"))))
    assert dict(zip(header, row))["cloud_usd_per_hour"] == "7.8" and "usd_per_h" not in header
    assert dict(zip(header, row))["power_kw"] == "8.53" and "kw" not in header
    assert "cloud_usd_per_hour  power_kw" in render_sweep(result, "table")
