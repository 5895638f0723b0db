"""The training model's read-once copies of catalog figures (issue 21): the calibration's plain
view (hardware/training_calibration.CalibrationView) and the GPU's server figures on the Hardware
record give what the pydantic models give."""

from __future__ import annotations

from gpuplan.hardware.training_calibration import CalibrationView, TrainingCalibration, calibration_view
from gpuplan.hardware.training_frameworks import Framework
from gpuplan.physics.network import network_for
from gpuplan.training.evaluator import cost_usd
from gpuplan.training.job import Hardware


def test_the_view_holds_every_figure_of_the_calibration(cal):
    view = calibration_view(cal)
    assert isinstance(view, CalibrationView) and calibration_view(cal) is view and calibration_view(view) is view
    for name in TrainingCalibration.model_fields:
        if name != "frameworks":
            assert getattr(view, name) is getattr(cal, name), name
    assert view.state_bytes == cal.state_bytes == (2, 4, 12)  # mixed-adam-fp32-grads (training.toml)
    for key, fw in cal.frameworks.items():
        for name in Framework.model_fields:
            assert getattr(view.framework(key), name) is getattr(fw, name), (key, name)
    assert view.framework(None).source is cal.framework(None).source
    # GEMM sizes from 1 us to 10 ms, buffers from 64 KiB to 1 GiB: the same curves' values.
    for us in (1.0, 7.5, 40.0, 300.0, 10_000.0):
        assert view.gemm_fraction(us) == cal.gemm_fraction(us)
    for size in (2.0**16, 3e6, 2.0**27, 2.0**30):
        assert view.collective_fraction(size) == cal.collective_fraction(size)


def test_the_hardware_record_prices_servers_as_the_gpu_does(catalog):
    """Hardware.cost_usd against evaluator.cost_usd (Gpu.servers_for) on every catalog GPU; GB200
    NVL72 racks are bought whole: 100 GPUs take 25 trays, rounded up to two 18-tray racks."""
    for gpu in catalog.gpus.values():
        hw = Hardware.of(gpu, network_for(gpu, catalog), "bf16")
        for gpus in (1, 4, 8, 72, 100, 1000, 16384):
            for pricing in ("capex", "cloud"):
                assert hw.cost_usd(gpus, 1234.5, pricing) == cost_usd(gpu, gpus, 1234.5, pricing), (gpu.id, gpus)
    gb200 = catalog.gpus["gb200-nvl72"]
    hw = Hardware.of(gb200, network_for(gb200, catalog), "bf16")
    assert hw.purchase_unit_nodes == 18 and hw.gpus_per_node == 4
    assert hw.cost_usd(100, 0.0, "capex") == 36 * gb200.node_price_usd
