"""What every renderer shows of disaggregated prefill/decode serving: the xPyD fleet when the plan
chose it, or the alternative it weighed and its cost (docs/serving-model.md, "Disaggregated
prefill/decode"). Plain labels and lines; each format lays them out."""

from __future__ import annotations

from gpuplan.core.contract import DisaggregatedPool, DisaggregationComparison, ServingPlan
from gpuplan.render.numbers import num, usd


def chosen(s: ServingPlan) -> DisaggregationComparison | None:
    """The plan's disaggregated fleet, when the plan is one."""
    d = s.disaggregation
    return d if d is not None and d.chosen else None


def gpu_label(s: ServingPlan) -> str:
    """``N x gpu``, or each pool's GPUs when the two pools run on different GPU types."""
    d = chosen(s)
    if d is not None and len({p.gpu for p in d.pools}) > 1:
        return " + ".join(f"{p.gpus:,} x {p.gpu} ({p.role})" for p in d.pools)
    return f"{s.gpus:,} x {s.gpu}"


def shape(d: DisaggregationComparison) -> str:
    """``n x xPyD`` and its spares."""
    spare = ""
    if d.spare_groups:
        spare = (f" + {d.spare_groups} spare group{'s' if d.spare_groups != 1 else ''}" if d.placement != "scale-out"
                 else f" + {d.spare_groups} spare prefill + {d.spare_groups} spare decode")
    return f"{d.groups:,} x {d.prefill_per_group}P{d.decode_per_group}D{spare}"


def _pool(p: DisaggregatedPool) -> str:
    lay = f"TP{p.layout.tp}" + (f"xPP{p.layout.pp}" if p.layout.pp > 1 else "") + (
        f" EP{p.layout.ep}" if p.layout.ep > 1 else "")
    each = (f"{num(p.capacity_per_worker)} prompt tokens/s" if p.role == "prefill"
            else f"{p.layout.concurrency} of {num(p.capacity_per_worker)} sequences")
    return (f"{p.role} {p.workers:,} x {p.gpu} {lay} ({num(p.rate_per_worker)} req/s, {each} each, "
            f"{p.load_fraction:.0%} load)")


def _cost(capex: float | None, cloud: float | None, pricing: str) -> str:
    if pricing == "cloud":
        return f"{usd(cloud)}/h" if cloud is not None else "unpriced"
    return f"{usd(capex)} capex" if capex is not None else "unpriced"


def line(d: DisaggregationComparison, pricing: str) -> str:
    """One line: the fleet the plan runs, or the alternative it weighed and why not."""
    if not d.pools:  # a plan saved before schema 1.3: the GPU counts and the verdict
        return (f"{d.prefill_gpus:,} prefill + {d.decode_gpus:,} decode = {d.total_gpus:,} GPUs vs "
                f"{d.aggregated_gpus:,} aggregated, KV transfer {num(d.kv_transfer_gbit_per_s)} Gb/s; "
                f"{'recommended' if d.recommended else 'not recommended'}: {d.reason}")
    where = {"scale-out": "the scale-out NICs", "scale-up": "the scale-up domain", "pcie": "PCIe in one server"}
    kv = (f"KV {num(d.kv_bytes_per_request / 1e6)} MB per request over {where.get(d.placement or '', '-')} in "
          f"{num(d.kv_transfer_ms)} ms")
    if d.chosen:
        idle = f"; {d.idle_fraction:.0%} of {d.idle_side} idle (whole workers)" if d.idle_side else ""
        return ", ".join(_pool(p) for p in d.pools) + f"; {kv}{idle}"
    gpus = " + ".join(dict.fromkeys(p.gpu for p in d.pools))
    basis = "with its network" if d.network_included else "servers only"
    agg = _cost(d.aggregated_capex_usd, d.aggregated_cloud_usd_per_hour, pricing)
    return (f"considered, not chosen: {shape(d)} on {gpus}, {d.gpus:,} GPUs, "
            f"{_cost(d.capex_usd, d.cloud_usd_per_hour, pricing)} ({basis}) against {agg} aggregated; {kv}")


def facts(s: ServingPlan, pricing: str) -> list[tuple[str, str]]:
    """``pools`` (a summary fact) for the fleet the plan runs, ``disagg`` for the one it weighed."""
    d = s.disaggregation
    if d is None or not s.feasible:
        return []
    return [("pools" if d.chosen else "disagg", line(d, pricing))]
