"""A sized disaggregated fleet (:class:`DisaggFleet`): the record the disaggregation search
(serving/disagg_search.py) offers and the planner turns into a serving plan (serving/disagg_plan.py)."""

from __future__ import annotations

from gpuplan.core.records import dataclass
from gpuplan.serving.disagg import DecodeWorker, KvLink, PrefillWorker
from gpuplan.serving.fleet import FleetCost


@dataclass(frozen=True)
class DisaggFleet:
    """A sized disaggregated fleet: both worker kinds, their counts, the KV link and the cost."""

    prefill: PrefillWorker
    decode: DecodeWorker
    #: Prefill rate per worker within the TTFT target over this link (requests/s).
    prefill_rate: float
    link: KvLink
    kv_bytes: float
    #: Active groups and their shape (x prefill, y decode workers each).
    groups: int
    x: int
    y: int
    #: Spare capacity: whole groups in one domain, else ``spare`` prefill and ``spare`` decode workers.
    spare: int
    fleet: FleetCost
    #: Scale-out placement only: each pool's own servers and cost.
    prefill_fleet: FleetCost | None
    decode_fleet: FleetCost | None
    qps: float

    @property
    def in_domain(self) -> bool:
        return self.link.kind != "scale-out"

    @property
    def prefill_workers(self) -> int:
        return self.groups * self.x

    @property
    def decode_workers(self) -> int:
        return self.groups * self.y

    @property
    def spare_prefill(self) -> int:
        return self.spare * (self.x if self.in_domain else 1)

    @property
    def spare_decode(self) -> int:
        return self.spare * (self.y if self.in_domain else 1)

    @property
    def prefill_gpus(self) -> int:
        return (self.prefill_workers + self.spare_prefill) * self.prefill.replica.layout.gpus

    @property
    def decode_gpus(self) -> int:
        return (self.decode_workers + self.spare_decode) * self.decode.replica.layout.gpus

    @property
    def gpus(self) -> int:
        return self.prefill_gpus + self.decode_gpus

    @property
    def group_gpus(self) -> int:
        return self.x * self.prefill.replica.layout.gpus + self.y * self.decode.replica.layout.gpus

    @property
    def group_rate(self) -> float:
        """Requests/s one group carries: its smaller side (rate matching)."""
        return min(self.x * self.prefill_rate, self.y * self.decode.rate)

    @property
    def idle_fraction(self) -> tuple[str, float]:
        """The over-provisioned side and the share of its capacity the other side leaves idle."""
        p, d = self.prefill_workers * self.prefill_rate, self.decode_workers * self.decode.rate
        side, cap = ("prefill", p) if p > d else ("decode", d)
        return side, 1.0 - min(p, d) / cap if cap > 0 else 0.0
