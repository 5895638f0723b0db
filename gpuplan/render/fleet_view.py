"""What every renderer shows of the fleet answer: the serving fleet's autoscaling bounds and the
fleet strategies (docs/fleet-model.md). Plain rows and lines; each format lays them out."""

from __future__ import annotations

from gpuplan.core.contract import Autoscaling, Fleet, Plan
from gpuplan.render.text import num, usd

STRATEGY_HEADERS = ["strategy", "gpu", "gpus", "capex", "$/year", "util", "train days", "SLO met"]
#: Right-aligned columns of STRATEGY_HEADERS.
STRATEGY_RIGHT = {2, 3, 4, 5, 6}


def autoscaling_facts(a: Autoscaling | None) -> list[tuple[str, str]]:
    if a is None:
        return []
    saving = (f"saves {a.saving_fraction:.0%}, {usd(a.saving_usd_per_year)} a year" if a.saving_fraction > 0
              else "no saving: the peak fleet runs every hour")
    rows = [("autoscaling", f"{a.span()} replicas at {a.target_load_fraction:.0%} target load "
                            f"({a.demand} demand)"),
            ("scale-up", f"{num(a.scale_up_s)} s; ramp headroom {num(a.ramp_headroom_qps)} req/s "
                         f"({a.headroom_fraction:.1%})"),
            ("replica-hours", f"{num(a.replica_hours_per_day)} a day of {num(a.peak_replica_hours_per_day)} at peak "
                              f"all day ({saving})")]
    if a.reserved_replicas is not None:
        rows.append(("reserved / on-demand", f"{a.reserved_replicas} replicas reserved {usd(a.reserved_usd_per_year)} + "
                                             f"{num(a.on_demand_replica_hours_per_day)} replica-hours a day on demand "
                                             f"{usd(a.on_demand_usd_per_year)} a year"))
    if a.max_replicas_next_year is not None:
        rows.append(("growth", f"{a.growth_per_year:+.0%} a year: {a.max_replicas_next_year} replicas at next year's peak"))
    return rows


def strategy_rows(fleet: Fleet) -> list[list[str]]:
    return [[s.name + (" *" if s.name == fleet.recommended else ""), s.gpu or "-", f"{s.gpus:,}",
             usd(s.capex_usd), usd(s.cost_usd_per_year), f"{s.utilization:.0%}",
             num(s.training_days) if s.feasible else "-",
             "yes" if s.serving_slo_met else "no"] for s in fleet.strategies]


def fleet_lines(fleet: Fleet) -> list[str]:
    """The recommendation's reasons, then each strategy's reasons and risks."""
    out = [f"* recommended: {fleet.recommended or 'none'}", *fleet.reasons]
    for s in fleet.strategies:
        out += [f"{s.name}: {r}" for r in s.reasons]
        out += [f"{s.name}: {r.severity}: {r.code}: {r.message}" for r in s.risks]
    return out


def fleet_of(plan: Plan) -> Fleet | None:
    return plan.fleet
