"""Consistency of the shipped catalog: required records, sourcing, units, models and overlays."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from gpuplan.model.arch import resolve
from gpuplan.hardware import load_catalog
from gpuplan.hardware.schema import GPU_GROUPS, GpuEfficiency
from gpuplan.core.errors import InputError

CATALOG_DATE = dt.date(2026, 11, 21)

REQUIRED_GPUS = [
    "a100-sxm-40gb", "a100-sxm-80gb", "a100-pcie-80gb", "h100-sxm-80gb", "h100-pcie-80gb",
    "h100-nvl-94gb", "h800-sxm-80gb", "h200-sxm-141gb", "h200-nvl-141gb", "b200-sxm-180gb",
    "gb200-nvl72", "b300-sxm-288gb", "l40s-pcie-48gb", "l4-pcie-24gb", "a10-pcie-24gb",
    "t4-pcie-16gb", "mi300x-oam-192gb", "mi325x-oam-256gb", "mi355x-oam-288gb", "gaudi3-oam-128gb",
]
ALIASES = {
    "h100": "h100-sxm-80gb", "a100": "a100-sxm-80gb", "h200": "h200-sxm-141gb",
    "b200": "b200-sxm-180gb", "gb200": "gb200-nvl72", "b300": "b300-sxm-288gb",
    "l40s": "l40s-pcie-48gb", "l4": "l4-pcie-24gb", "a10": "a10-pcie-24gb", "t4": "t4-pcie-16gb",
    "mi300x": "mi300x-oam-192gb", "mi325x": "mi325x-oam-256gb", "mi355x": "mi355x-oam-288gb",
    "gaudi3": "gaudi3-oam-128gb", "a100-40gb": "a100-sxm-40gb", "h100-pcie": "h100-pcie-80gb",
    "h100-nvl": "h100-nvl-94gb", "h200-nvl": "h200-nvl-141gb", "h800": "h800-sxm-80gb",
}
REQUIRED_FABRICS = ["ib-hdr", "ib-ndr", "ib-xdr", "ethernet-100g", "ethernet-200g", "ethernet-400g",
                    "ethernet-800g"]
REQUIRED_SWITCHES = ["qm8700", "qm9700", "q3400", "sn5600", "sn4600c", "sn5400", "th5-51t2", "sn2201"]
REQUIRED_NICS = ["cx6-200g", "cx7-400g", "cx7-2x200g", "cx8-800g", "bf3-400g", "bf3-2x200g", "cx6dx-100g"]
REQUIRED_OPTICS = ["osfp-800g-2xsr4", "osfp-800g-2xdr4", "osfp-400g-sr4", "qsfp112-400g-sr4",
                   "qsfp56-200g-sr4", "qsfp28-100g-sr4", "osfp-800g-dr8", "qsfpdd-400g-dr4", "dac-400g",
                   "dac-800g", "dac-200g", "dac-100g", "aoc-200g", "aoc-400g", "fiber-mpo-12"]
REQUIRED_MODELS = ["llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b",
                   "llama-3.1-405b", "mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "qwen2.5-72b",
                   "gpt-3-175b", "falcon-180b"]


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


# ---------------------------------------------------------------- presence


def test_catalog_metadata(cat):
    assert cat.version == "2026.11.21"
    assert cat.meta.description
    assert len(cat.sha256) == 64


@pytest.mark.parametrize(("table", "ids"), [
    ("gpus", REQUIRED_GPUS), ("fabrics", REQUIRED_FABRICS), ("switches", REQUIRED_SWITCHES),
    ("nics", REQUIRED_NICS), ("optics", REQUIRED_OPTICS), ("models", REQUIRED_MODELS),
])
def test_required_records_present(cat, table, ids):
    missing = sorted(set(ids) - set(getattr(cat, table)))
    assert not missing, f"{table} missing {missing}"


@pytest.mark.parametrize(("alias", "gid"), sorted(ALIASES.items()))
def test_aliases_resolve(cat, alias, gid):
    assert cat.gpu(alias).id == gid
    assert cat.gpu(alias.upper()).id == gid


def test_aliases_do_not_collide_with_ids(cat):
    assert not set(cat.aliases) & set(cat.gpus)


def test_unknown_gpu_suggests(cat):
    with pytest.raises(InputError, match="did you mean"):
        cat.gpu("h100-sxm-80g")


# ---------------------------------------------------------------- sourcing


@pytest.mark.parametrize("gid", REQUIRED_GPUS)
def test_gpu_groups_sourced(cat, gid):
    gpu = cat.gpus[gid]
    for group, fields in GPU_GROUPS.items():
        if any(getattr(gpu, f) is not None for f in fields):
            assert group in gpu.sources, f"{gid}: group {group!r} is set but not sourced"
    for key, src in gpu.sources.items():
        assert src in cat.sources, f"{gid}.sources.{key} -> unknown {src}"


def test_priced_records_carry_dates(cat):
    for gpu in cat.gpus.values():
        assert (gpu.price_usd is None) == (gpu.price_date is None), gpu.id
        assert (gpu.cloud_usd_per_gpu_hour is None) == (gpu.cloud_date is None), gpu.id
    for table in (cat.switches, cat.nics, cat.optics):
        for rec in table.values():
            assert (rec.price_usd is None) == (rec.price_date is None), rec.id


@pytest.mark.parametrize("table", ["fabrics", "switches", "nics", "optics", "models"])
def test_other_records_sourced(cat, table):
    for rec in getattr(cat, table).values():
        assert rec.sources, f"{rec.id} has no sources"
        for key, src in rec.sources.items():
            assert src in cat.sources, f"{rec.id}.sources.{key} -> unknown {src}"
        if table == "models":
            assert "architecture" in rec.sources
        if table in ("switches", "nics", "optics") and getattr(rec, "price_usd", None) is not None:
            assert "price" in rec.sources or "default" in rec.sources, rec.id


def test_fabric_references(cat):
    for fab in cat.fabrics.values():
        sw = cat.switches[fab.default_switch]
        nic = cat.nics[fab.default_nic]
        assert fab.kind in sw.kinds and fab.kind in nic.kinds, fab.id
        assert sw.radix(fab.port_gbit), f"{fab.id}: {sw.id} has no {fab.port_gbit}G ports"
        assert nic.port_gbit >= fab.port_gbit or nic.ports * nic.port_gbit >= fab.port_gbit, fab.id


def _parse_date(text: str) -> dt.date:
    parts = [int(p) for p in text.split("-")]
    year, month, day = (parts + [1, 1])[:3]
    return dt.date(year, month, day)


def test_source_dates_parse_and_not_in_future(cat):
    for src in cat.sources.values():
        assert _parse_date(src.date) <= CATALOG_DATE, src.id
    dated = [(g.id, g.price_date) for g in cat.gpus.values()] + [(g.id, g.cloud_date) for g in cat.gpus.values()]
    dated += [(r.id, r.price_date) for t in (cat.switches, cat.nics, cat.optics) for r in t.values()]
    for ident, date in dated:
        if date is not None:
            assert _parse_date(date) <= CATALOG_DATE, ident


def test_derived_sources_explain_themselves(cat):
    for src in cat.sources.values():
        if src.confidence in ("D", "C", "M"):
            assert src.note, f"{src.id}: confidence {src.confidence} needs a note on the method"


# ---------------------------------------------------------------- figures


SPARSE_PAIRS = [("bf16_dense_tflops", "bf16_sparse_tflops"), ("fp8_dense_tflops", "fp8_sparse_tflops"),
                ("fp4_dense_tflops", "fp4_sparse_tflops")]


@pytest.mark.parametrize("gid", REQUIRED_GPUS)
def test_dense_is_half_of_sparse(cat, gid):
    gpu = cat.gpus[gid]
    for dense_key, sparse_key in SPARSE_PAIRS:
        dense, sparse = getattr(gpu, dense_key), getattr(gpu, sparse_key)
        if sparse is None:
            continue
        assert dense is not None, f"{gid}: {sparse_key} without {dense_key}"
        assert dense <= sparse, f"{gid}: {dense_key} exceeds the sparse figure"
        if gid == "b300-sxm-288gb" and dense_key == "fp4_dense_tflops":
            continue  # Blackwell Ultra FP4 dense is stored explicitly, not sparse / 2
        assert dense == pytest.approx(sparse / 2, rel=0.01), f"{gid}: {dense_key} is not {sparse_key} / 2"


@pytest.mark.parametrize("gid", REQUIRED_GPUS)
def test_units_sanity(cat, gid):
    g = cat.gpus[gid]
    assert 0.1 < g.mem_bw_tb_per_s < 20
    assert g.memory_usable_gib <= g.memory_label_gb
    assert g.memory_usable_gib > 0.9 * g.memory_label_gb or gid == "b300-sxm-288gb"
    chain = [v for v in (g.bf16_dense_tflops, g.fp8_dense_tflops, g.fp4_dense_tflops) if v is not None]
    assert chain == sorted(chain), f"{gid}: expected bf16 <= fp8 <= fp4"
    assert g.fp16_dense_tflops <= (g.fp8_dense_tflops or float("inf"))
    assert 50 <= g.tdp_w <= 2000
    assert g.scaleup_uni_gb_per_s <= 1000
    assert g.host_link_uni_gb_per_s <= 1000
    assert g.node_power_kw * 1000 >= g.gpus_per_node * g.tdp_w, f"{gid}: node power below its GPUs' TDP"
    assert g.node_power_kw < 50
    assert 1 <= g.node_rack_units <= 12
    for money in (g.price_usd, g.node_price_usd, g.cloud_usd_per_gpu_hour):
        assert money is None or money > 0
    if g.price_usd is not None and g.node_price_usd is not None:
        assert g.node_price_usd >= g.gpus_per_node * g.price_usd * 0.9
    if g.reference_nic is not None:
        assert g.reference_nic in cat.nics
        assert g.reference_scaleout_gbit_per_gpu > 0
    eff = g.efficiency
    for name in ("matmul_bf16", "matmul_fp8", "matmul_fp4", "mem_bw", "scaleup_busbw"):
        value = getattr(eff, name)
        assert value is None or 0.3 <= value <= 1.0, f"{gid}: efficiency.{name} = {value}"
    assert set(GpuEfficiency.model_fields) >= {"matmul_bf16", "mem_bw", "scaleup_busbw"}


def test_format_holes(cat):
    t4 = cat.gpu("t4")
    assert t4.bf16_dense_tflops is None and t4.fp8_dense_tflops is None
    assert cat.gpu("a100").fp8_dense_tflops is None
    assert cat.gpu("h100").fp4_dense_tflops is None
    assert cat.gpu("b300").fp64_dense_tflops < 5  # Blackwell Ultra cut FP64


def test_known_figures(cat):
    h100 = cat.gpu("h100")
    assert h100.bf16_dense_tflops == pytest.approx(989.4)
    assert h100.scaleup_uni_gb_per_s == 450 and h100.scaleup_domain == 8
    assert cat.gpu("h800").scaleup_uni_gb_per_s == 200
    assert cat.gpu("h800").bf16_dense_tflops == h100.bf16_dense_tflops
    assert cat.gpu("gb200").scaleup_domain == 72 and cat.gpu("gb200").gpus_per_node == 4
    mi = cat.gpu("mi300x")
    assert mi.scaleup_uni_gb_per_s == 448 and mi.scaleup_p2p_uni_gb_per_s == 64
    for gid in ("l40s", "l4", "a10", "t4"):
        g = cat.gpu(gid)
        assert g.scaleup_tech == "pcie" and g.scaleup_domain == 1 and g.cloud_usd_per_gpu_hour
    for gid in ("a100-pcie", "h100-pcie", "h100-nvl", "h200-nvl"):
        assert cat.gpu(gid).scaleup_domain == 2
    nvls = {g.id for g in cat.gpus.values() if g.efficiency.scaleup_in_network_reduction}
    assert {"h100-sxm-80gb", "h200-sxm-141gb", "b200-sxm-180gb", "b300-sxm-288gb", "gb200-nvl72"} <= nvls
    assert not any(cat.gpus[g].efficiency.scaleup_in_network_reduction
                   for g in REQUIRED_GPUS if cat.gpus[g].form_factor in ("pcie", "oam"))



def test_mi300x_efficiencies_are_its_own_measurements(cat):
    """Peak x efficiency gives back what was measured on the part (catalog/sources.toml)."""
    mi = cat.gpu("mi300x")
    assert mi.bf16_dense_tflops * mi.matmul_efficiency("bf16") == pytest.approx(668.4, rel=0.01)  # MAMF, ROCm 6.3
    assert mi.fp8_dense_tflops * mi.matmul_efficiency("fp8") == pytest.approx(1222.9, rel=0.01)   # Azure hipBLASLt
    assert mi.mem_bw_tb_per_s * mi.efficiency.mem_bw == pytest.approx(3.97, rel=0.01)  # hipBLASLt M=1 median
    assert 312.9 <= mi.scaleup_uni_gb_per_s * mi.efficiency.scaleup_busbw <= 316.8      # rccl-tests, 8 GPUs
    for sibling in ("mi325x", "mi355x"):  # nearest measured sibling (gpuplan-sibling-efficiency)
        assert cat.gpu(sibling).efficiency.mem_bw == mi.efficiency.mem_bw
        assert cat.gpu(sibling).efficiency.scaleup_busbw == mi.efficiency.scaleup_busbw

def test_network_figures(cat):
    assert cat.fabrics["ib-ndr"].efficiency == pytest.approx(0.93)
    assert cat.fabrics["ib-ndr"].default_switch == "qm9700"
    qm = cat.switches["qm9700"]
    assert qm.radix(400) == 64 and qm.radix(200) == 128 and qm.cages * qm.lanes_per_cage == 64
    assert cat.switches["sn2201"].radix_by_gbit == {"1": 48}
    for sw in cat.switches.values():
        top = max(float(k) for k in sw.radix_by_gbit)
        assert sw.radix(top) == sw.cages * sw.lanes_per_cage, sw.id
    twin = cat.optics["osfp-800g-2xsr4"]
    assert twin.links_per_module == 2 and twin.end == "switch"
    for fab in cat.fabrics.values():
        assert 0.5 <= fab.efficiency <= 1 and fab.hop_latency_us < 2 and 1 <= fab.base_latency_us <= 20


# ---------------------------------------------------------------- models


@pytest.mark.parametrize("mid", REQUIRED_MODELS)
def test_model_params_match_published(cat, mid):
    model = cat.models[mid]
    arch, _ = resolve(model)
    assert model.published_params_b is not None
    assert arch.total_params / 1e9 == pytest.approx(model.published_params_b, rel=0.03)


def test_model_reference_figures(cat):
    a7, _ = resolve(cat.models["llama-2-7b"])
    assert a7.total_params == pytest.approx(6.74e9, rel=0.005)
    assert a7.kv_elements_per_token() * 2 == 524288
    a70, _ = resolve(cat.models["llama-3.1-70b"])
    assert a70.total_params == pytest.approx(70.6e9, rel=0.005)
    assert a70.kv_elements_per_token() * 2 == 327680
    ds, _ = resolve(cat.models["deepseek-v3"])
    assert ds.is_mla and ds.is_moe
    assert ds.total_params == pytest.approx(671e9, rel=0.01)
    assert ds.active_params == pytest.approx(37e9, rel=0.03)
    assert ds.kv_elements_per_token() == 61 * (512 + 64)
    mx, _ = resolve(cat.models["mixtral-8x7b"])
    assert mx.active_params == pytest.approx(12.9e9, rel=0.02)
    assert mx.sliding_window == 0


def test_models_resolve_without_defaults_for_core_fields(cat):
    for model in cat.models.values():
        _, applied = resolve(model)
        defaulted = {name for name, _, _ in applied}
        assert not defaulted & {"ffn", "gated_mlp", "vocab", "tied_embeddings", "kv_heads"}, (model.id, defaulted)


# ---------------------------------------------------------------- overlays


def test_overlay_merges_field_by_field(cat, tmp_path):
    (tmp_path / "gpus").mkdir()
    (tmp_path / "gpus" / "x.toml").write_text('[[gpu]]\nid = "h100-sxm-80gb"\nprice_usd = 25000.0\n')
    merged = load_catalog([tmp_path])
    new, old = merged.gpus["h100-sxm-80gb"], cat.gpus["h100-sxm-80gb"]
    assert new.price_usd == 25000.0
    assert new.model_dump(exclude={"price_usd"}) == old.model_dump(exclude={"price_usd"})
    assert merged.gpus.keys() == cat.gpus.keys()
    assert merged.sha256 != cat.sha256


def test_overlay_adds_new_record(tmp_path):
    (tmp_path / "extra.toml").write_text(
        '[[source]]\nid = "my-quote"\ntitle = "Vendor quote"\ndate = "2026-10"\nconfidence = "V"\n\n'
        '[[switch]]\nid = "my-switch"\nname = "Lab switch"\nvendor = "acme"\nkinds = ["ethernet"]\n'
        'radix_by_gbit = { "400" = 32 }\ncages = 32\nlanes_per_cage = 1\nrack_units = 1\n'
        'price_usd = 9000.0\nprice_date = "2026-10"\nsources = { price = "my-quote" }\n')
    merged = load_catalog([tmp_path])
    assert merged.switches["my-switch"].radix(400) == 32
    assert "qm9700" in merged.switches


def test_overlay_unknown_key_suggests(tmp_path):
    (tmp_path / "gpus").mkdir()
    (tmp_path / "gpus" / "x.toml").write_text('[[gpu]]\nid = "h100-sxm-80gb"\nprice_usdd = 25000.0\n')
    with pytest.raises(InputError) as err:
        load_catalog([tmp_path])
    message = str(err.value)
    assert "price_usdd" in message and "did you mean" in message and "price_usd" in message


def test_overlay_invalid_value_is_rejected(tmp_path):
    (tmp_path / "x.toml").write_text('[[gpu]]\nid = "h100-sxm-80gb"\nmemory_usable_gib = 500.0\n')
    with pytest.raises(InputError, match="memory_usable_gib"):
        load_catalog([tmp_path])


def test_overlay_unknown_source_is_rejected(tmp_path):
    (tmp_path / "x.toml").write_text('[[gpu]]\nid = "h100-sxm-80gb"\nsources = { price = "nope" }\n')
    with pytest.raises(InputError, match="unknown source"):
        load_catalog([tmp_path])


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks on this platform")
def test_overlay_symlink_outside_is_refused(tmp_path):
    outside = tmp_path / "outside.toml"
    outside.write_text('[[gpu]]\nid = "h100-sxm-80gb"\nprice_usd = 1.0\n')
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    try:
        (overlay / "evil.toml").symlink_to(outside)
    except OSError:
        pytest.skip("cannot create symlinks here")
    with pytest.raises(InputError, match="outside"):
        load_catalog([overlay])


def test_overlay_missing_dir(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_catalog([tmp_path / "absent"])


def test_shipped_catalog_has_no_symlinks():
    root = Path(__file__).resolve().parents[2] / "catalog"
    assert root.is_dir()
    assert not [p for p in root.rglob("*") if p.is_symlink()]
