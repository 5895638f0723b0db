"""Fleet arithmetic: replicas to servers, capex, cloud rate, power, and $ per output token.

* Replicas of ``g`` GPUs pack ``floor(gpus_per_node / g)`` to a server when ``g`` fits one,
  else each takes ``ceil(g / gpus_per_node)`` servers. Rack-scale superchip systems (GB200
  NVL72: 18 trays of 4 GPUs on one NVLink domain) are bought and cabled a whole scale-up domain at
  a time, so their server count rounds up to whole domains.
* Capex: servers x ``node_price_usd`` (None when the catalog has no server price).
* Cloud: GPU-hours billed; baseboard GPUs (SXM/OAM/superchip) rent by the whole server,
  PCIe cards by the GPU (cloud instances of 1, 2, 4 and 8 cards exist).
* Power: servers x ``node_power_kw`` (servers only; network power is the fabric planner's).
* $ per million output tokens: the cost of an hour the fleet carries its load over the output
  tokens of that hour at the target rate. Capex pricing: the plan's cost-of-ownership basis
  (:class:`gpuplan.fabric.tco.CostBasis`, the TCO's horizon, $/kWh, utilization and PUE), capex
  over the loaded hours of the horizon plus the energy of the hour; cloud: the rate (idle hours
  are not rented, docs/serving-model.md).
"""

from __future__ import annotations

import math
from gpuplan.core.memo import memo
from gpuplan.core.records import constructor, dataclass

from gpuplan.fabric.tco import CostBasis
from gpuplan.hardware.schema import Gpu, billed_of



@dataclass(frozen=True)
class FleetCost:
    nodes: int
    capex_usd: float | None
    cloud_usd_per_hour: float | None
    power_kw: float
    #: The cost the objective ranks by (capex or cloud $/h); None when unpriced.
    objective: float | None
    usd_per_hour: float | None


#: ``FleetCost(...)`` with its fields set at once (:func:`~gpuplan.core.records.constructor`: half
#: the instructions of ``__init__``, and a plan prices hundreds of fleets): an equal object.
_fleet = constructor(FleetCost)


def nodes_for(replicas: int, gpus_per_replica: int, gpus_per_node: int, nodes_per_unit: int = 1) -> int:
    """Servers holding ``replicas`` replicas of ``gpus_per_replica`` GPUs, in whole purchase units
    of ``nodes_per_unit`` servers."""
    if replicas <= 0:
        return 0
    if gpus_per_replica <= gpus_per_node:
        nodes = math.ceil(replicas / (gpus_per_node // gpus_per_replica))
    else:
        nodes = replicas * math.ceil(gpus_per_replica / gpus_per_node)
    return math.ceil(nodes / nodes_per_unit) * nodes_per_unit


#: Fleets by (GPU, replicas, GPUs per replica, pricing, cost basis): a plan prices ~1,200 fleets,
#: a third of them distinct (the layouts' floors, the capex re-rank's re-plans, the disaggregation
#: search's bounds). The GPU and the basis are keyed by identity and held in the entry, so
#: their ids are not reused while it lives. Bounded: cleared when full.
_FLEETS: dict[tuple[object, ...], tuple[Gpu, CostBasis, FleetCost]] = memo()
_FLEETS_MAX = 8192


def fleet_cost(gpu: Gpu, replicas: int, gpus_per_replica: int, pricing: str, cost: CostBasis) -> FleetCost:
    """Servers, capex, cloud $/h, power and the ranking cost of a fleet (memoised, :data:`_FLEETS`)."""
    key = (id(gpu), replicas, gpus_per_replica, pricing, id(cost))
    hit = _FLEETS.get(key)
    if hit is None:
        if len(_FLEETS) >= _FLEETS_MAX:
            _FLEETS.clear()
        hit = _FLEETS[key] = (gpu, cost, _fleet_cost(gpu, replicas, gpus_per_replica, pricing, cost))
    return hit[2]


#: Each GPU's figures that :func:`_fleet_cost` reads, by the GPU's identity (held in the entry, so
#: its id is not reused while the entry lives): its properties (``purchase_unit_nodes``,
#: ``billing_terms``) computed once, not for each of the ~400 fleets a plan prices. The catalog's
#: GPUs are frozen records (hardware/record.py). Bounded: cleared when full.
_GPU_TERMS: dict[int, tuple[Gpu, int, int, float | None, float | None, float, dict[int, int], tuple]] = memo()


def gpu_terms(gpu: Gpu) -> tuple[Gpu, int, int, float | None, float | None, float, dict[int, int], tuple]:
    """(``gpu``, GPUs a server, servers a purchase unit, server price, cloud $/GPU-hour, server kW,
    ``gpu.billed_gpus`` by GPUs in use: filled as asked, a function of the GPU's fixed figures, and
    those figures: ``gpu.billing_terms``)."""
    hit = _GPU_TERMS.get(id(gpu))
    if hit is None:
        if len(_GPU_TERMS) >= 1024:
            _GPU_TERMS.clear()
        hit = _GPU_TERMS[id(gpu)] = (gpu, gpu.gpus_per_node, gpu.purchase_unit_nodes, gpu.node_price_usd,
                                     gpu.cloud_usd_per_gpu_hour, gpu.node_power_kw, {}, gpu.billing_terms)
    return hit


def _fleet_cost(gpu: Gpu, replicas: int, gpus_per_replica: int, pricing: str, cost: CostBasis) -> FleetCost:
    """:func:`fleet_cost`, computed (the GPU's figures from :func:`gpu_terms`; the cloud's billed GPUs
    only where the GPU has a cloud rate)."""
    terms = gpu_terms(gpu)
    nodes, capex = _servers(terms, replicas, gpus_per_replica)
    rate, node_kw, billed, billing = terms[4:]
    cloud = None if rate is None else _cloud_usd_per_hour(rate, billed, billing, replicas * gpus_per_replica)
    power = nodes * node_kw
    if pricing == "cloud":
        objective, hourly = cloud, cloud
    else:
        objective = capex
        hourly = None if capex is None else cost.owned_usd_per_hour(capex, power, cost.pue(gpu, nodes))
    return _fleet(nodes, capex, cloud, power, objective, hourly)


#: :func:`fleet_objective` by (GPU, replicas, GPUs per replica, pricing), the GPU keyed by identity
#: and held in the entry: a QPS sweep asks for the same floors at every point. Bounded.
_OBJECTIVES: dict[tuple[int, int, int, str], tuple[Gpu, float | None]] = memo()


def fleet_objective(gpu: Gpu, replicas: int, gpus_per_replica: int, pricing: str) -> float | None:
    """``fleet_cost(...).objective`` alone, the same value (servers x price, or billed GPUs x the
    cloud rate), without the fleet's power, PUE and cost per hour: the searches' bounds and floors
    (serving/planner.py, serving/disagg_search.py) rank fleets they never size by it (memoised in
    :data:`_OBJECTIVES`)."""
    key = (id(gpu), replicas, gpus_per_replica, pricing)
    hit = _OBJECTIVES.get(key)
    if hit is None:
        if len(_OBJECTIVES) >= _FLEETS_MAX:
            _OBJECTIVES.clear()
        hit = _OBJECTIVES[key] = (gpu, _objective(gpu, replicas, gpus_per_replica, pricing))
    return hit[1]


def _objective(gpu: Gpu, replicas: int, gpus_per_replica: int, pricing: str) -> float | None:
    """:func:`fleet_objective`, computed."""
    terms = gpu_terms(gpu)
    if pricing == "cloud":
        rate = terms[4]
        return None if rate is None else _cloud_usd_per_hour(rate, terms[6], terms[7], replicas * gpus_per_replica)
    return _servers(terms, replicas, gpus_per_replica)[1]


def _servers(terms: tuple, replicas: int, gpus_per_replica: int) -> tuple[int, float | None]:
    """The servers a fleet buys (whole purchase units, :func:`nodes_for`) and their capex (None:
    the GPU has no server price); ``terms``: the GPU's :func:`gpu_terms`."""
    _, per_node, unit, price = terms[:4]
    nodes = nodes_for(replicas, gpus_per_replica, per_node, unit)
    return nodes, (nodes * price if price is not None else None)


def _cloud_usd_per_hour(rate: float, billed: dict[int, int], billing: tuple, used: int) -> float:
    """The cloud's dollars an hour for ``used`` GPUs: the GPUs billed (``billed``: the GPU's memo of
    :func:`billed_of` by GPUs in use, :func:`gpu_terms`; ``billing``: its billing terms) x ``rate``."""
    n = billed.get(used)
    if n is None:
        if len(billed) >= 4096:
            billed.clear()
        n = billed[used] = billed_of(billing, used)
    return n * rate


def sum_fleets(a: FleetCost, b: FleetCost) -> FleetCost:
    """Two pools bought side by side (a disaggregated fleet's prefill and decode servers)."""

    def add(x: float | None, y: float | None) -> float | None:
        return None if x is None or y is None else x + y

    return _fleet(nodes=a.nodes + b.nodes, capex_usd=add(a.capex_usd, b.capex_usd),
                  cloud_usd_per_hour=add(a.cloud_usd_per_hour, b.cloud_usd_per_hour),
                  power_kw=a.power_kw + b.power_kw, objective=add(a.objective, b.objective),
                  usd_per_hour=add(a.usd_per_hour, b.usd_per_hour))


def domain_fleet(gpu: Gpu, groups: int, span: int, local: int, pricing: str, cost: CostBasis) -> FleetCost:
    """Servers and cost of ``groups`` groups of ``span`` GPUs, none straddling a domain of ``local``
    GPUs: a server holds ``floor(gpus_per_node / span)`` groups; a rack-scale domain (NVL72) holds
    ``floor(local / span)`` and is bought whole, while a cloud rents only the trays in use
    (memoised with the fleets, :data:`_FLEETS`: the disaggregation search prices ~500)."""
    key = (id(gpu), groups, span, local, pricing, id(cost))  # six items: apart from fleet_cost's five
    hit = _FLEETS.get(key)
    if hit is None:
        if len(_FLEETS) >= _FLEETS_MAX:
            _FLEETS.clear()
        hit = _FLEETS[key] = (gpu, cost, _domain_fleet(gpu, groups, span, local, pricing, cost))
    return hit[2]


def domain_objective(gpu: Gpu, groups: int, span: int, local: int, pricing: str) -> float | None:
    """``domain_fleet(...).objective`` alone, the same value (:func:`fleet_objective`): the whole
    domains bought, or the trays rented in the cloud."""
    if local <= gpu_terms(gpu)[1] or pricing == "cloud":
        return fleet_objective(gpu, groups, span, pricing)
    return fleet_objective(gpu, *_whole_domains(groups, span, local), pricing)


def _whole_domains(groups: int, span: int, local: int) -> tuple[int, int]:
    """The rack-scale domains of ``local`` GPUs bought whole for ``groups`` groups of ``span`` GPUs
    (``floor(local / span)`` a domain), as (domains, GPUs a domain)."""
    return -(-groups // (local // span)), local


def _domain_fleet(gpu: Gpu, groups: int, span: int, local: int, pricing: str, cost: CostBasis) -> FleetCost:
    """:func:`domain_fleet`, computed."""
    if local <= gpu.gpus_per_node:
        return fleet_cost(gpu, groups, span, pricing, cost)
    bought = fleet_cost(gpu, *_whole_domains(groups, span, local), pricing, cost)
    rented = fleet_cost(gpu, groups, span, pricing, cost)
    if pricing == "cloud":
        return _fleet(nodes=bought.nodes, capex_usd=bought.capex_usd, cloud_usd_per_hour=rented.cloud_usd_per_hour,
                      power_kw=bought.power_kw, objective=rented.objective, usd_per_hour=rented.usd_per_hour)
    return _fleet(nodes=bought.nodes, capex_usd=bought.capex_usd, cloud_usd_per_hour=rented.cloud_usd_per_hour,
                  power_kw=bought.power_kw, objective=bought.objective, usd_per_hour=bought.usd_per_hour)


def usd_per_million_tokens(usd_per_hour: float | None, tokens_per_s: float) -> float | None:
    """``usd_per_hour / (tokens_per_s * 3600) * 1e6``."""
    if usd_per_hour is None or tokens_per_s <= 0:
        return None
    return usd_per_hour / (tokens_per_s * 3600.0) * 1e6
