"""A serving option (one GPU and replica layout sized for the workload), the planner's result and
the words for a limit; shared by serving/planner.py and serving/report.py."""

from __future__ import annotations

import itertools
import math
from gpuplan.core.records import cached_property, constructor, dataclass

from gpuplan.hardware.schema import Gpu
from gpuplan.fabric.demand import TrafficDemand
from gpuplan.core.contract import ServingPlan
from gpuplan.serving.capacity import ReplicaCapacity, Workpoint
from gpuplan.serving.fleet import FleetCost
from gpuplan.serving.model import Layout, Replica


LIMIT_WORDS = {
    "kv": "KV-cache capacity",
    "tpot": "the TPOT target",
    "ttft": "the TTFT target (queueing before prefill)",
    "utilisation": "the utilisation ceiling",
    "network": "a scale-out fabric (the replica spans servers that have none)",
}


@dataclass(frozen=True)
class ServingResult:
    plan: ServingPlan
    demand: TrafficDemand | None
    chosen_gpu: Gpu | None


@dataclass(frozen=True)
class Miss:
    """Why an option misses the targets, as figures (the words are written from the results, by
    serving/report.py): ``"limit"``, a limit of the replica (``Option.limit`` says which);
    ``"unpriced"``, a budget that cannot be checked; ``"budget"``, capex over ``limit`` dollars;
    ``"power"``, fleet power over ``limit`` kW."""

    kind: str
    limit: float = 0.0


@dataclass(frozen=True)
class Option:
    """One GPU and layout, sized for the workload."""

    gpu: Gpu
    replica: Replica
    capacity: ReplicaCapacity
    ceiling: Workpoint | None
    limit: str
    miss: Miss | None
    active: int = 0
    replicas: int = 0
    fleet: FleetCost | None = None
    usd_per_mtok: float | None = None
    #: Requests/s each active replica carries (``op`` is the workpoint at that rate).
    load: float | None = None

    @cached_property
    def op(self) -> Workpoint | None:
        """The workpoint at the option's load, found when first needed (a bisection; most options
        of a plan are ranked on their cost and never need it)."""
        if self.ceiling is None or self.load is None:
            return None
        return self.capacity.at_rate(self.load, self.ceiling)

    @property
    def meets(self) -> bool:
        return self.miss is None

    @property
    def gpus(self) -> int:
        return self.replicas * self.replica.layout.gpus

    @property
    def objective(self) -> float | None:
        return self.fleet.objective if self.fleet else None

    def rank(self) -> tuple:
        op_tpot = self.op.tpot_s if self.op else math.inf
        return (*self.rank_first(), op_tpot, self.replica.layout.gpus)

    def rank_first(self) -> tuple:
        """The part of :meth:`rank` that needs no workpoint."""
        obj = self.objective
        return (not self.meets, obj is None, obj if obj is not None else 0.0, self.gpus)


#: ``Option(...)`` of every field, set at once (:func:`~gpuplan.core.records.constructor`): an equal object.
sized_option = constructor(Option)


def by_rank(options: list[Option]) -> list[Option]:
    """``options`` sorted by :meth:`Option.rank` (stable), reading the workpoint of only those that
    tie on :meth:`Option.rank_first`."""
    out: list[Option] = []
    for _, group in itertools.groupby(sorted(options, key=Option.rank_first), key=Option.rank_first):
        tied = list(group)
        out += sorted(tied, key=Option.rank) if len(tied) > 1 else tied
    return out



def _layout_name(lay: Layout) -> str:
    name = f"TP{lay.tp}"
    if lay.pp > 1:
        name += f"xPP{lay.pp}"
    if lay.ep > 1:
        name += f" EP{lay.ep}"
    return name


def _shortfall(option: Option) -> float:
    """How far a layout that fits is from the latency target it misses, as a ratio: its batch-1
    decode step over the TPOT target when TPOT is its limit, else its prefill over the TTFT target.
    The layout nearest its target stands for the GPU (the one a user would try to tune)."""
    cap = option.capacity
    if option.limit == "tpot":
        return cap.at(1e-6).step_s / cap.demand.tpot_s
    return cap.prefill_latency_s / cap.demand.ttft_s


def representative(options: list[Option]) -> Option:
    """The option that stands for one GPU: its best when one meets the targets, else its most
    informative failure (a layout that fits and misses a latency target, the nearest to it first,
    then one whose cache is too small, then the largest layout that does not fit)."""
    if options[0].meets:
        return options[0]
    sized = [o for o in options if o.ceiling is not None]
    if sized:
        return by_rank(sized)[0]
    fitting = [o for o in options if o.replica.kv_budget_bytes > 0]
    if fitting:
        return min(fitting, key=lambda o: (o.limit == "kv", _shortfall(o), o.replica.layout.gpus))
    return max(options, key=lambda o: (o.replica.layout.gpus, -o.replica.resident_weight_bytes))
