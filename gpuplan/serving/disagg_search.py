"""The cheapest disaggregated fleet: a prefill and a decode layout (any GPU pair), their worker
counts, their pairing over the KV link, and the cost, searched with a cost lower bound.

For a demand of ``Q`` requests/s at most ``L`` (``max_load_fraction``) of the capacity:

* **scale-out placement** (KV over the NICs; the pools on servers of their own, possibly of two
  GPU types of one vendor): ``P = ceil(Q / (L r_p))`` prefill and ``D = ceil(Q / (L r_d))`` decode
  workers, each pool with ``spare_replicas`` spare workers (N+1 per pool). As replica groups:
  ``g = gcd(P, D)`` groups of ``(P/g)P(D/g)D``.
* **in-domain placement** (DistServe's placement for clusters with slow links, OSDI 2024 section
  4.2: a prefill and a decode worker share an NVLink domain or a server, the KV never leaves it):
  groups of ``x`` prefill and ``y`` decode workers with ``x g_p + y g_d`` GPUs within the domain,
  one GPU type, ``y`` rate-matched to ``x`` (``floor`` and ``ceil`` of ``x r_p / r_d``, and the most
  that fit); ``n = ceil(Q / (L min(x r_p, y r_d)))`` groups plus ``spare_replicas`` spare groups.

Rate matching loses the surplus of the larger side: a group carries ``min(x r_p, y r_d)``, so the
other side idles a fraction ``1 - min / its capacity`` (:attr:`DisaggFleet.idle_fraction`). The
aiconfigurator tool (NVIDIA, sdk/picking.py, 2026-08) rates a group the same way,
``min(x r_p 0.9, y r_d 0.92)``, on measured static throughputs; its two derating factors stand for
queueing and unfilled decode slots, which here are the M/G/1 wait at the TTFT percentile, the
utilisation ceiling and ``L``, so they are not applied again.

Cost is the planner's objective (capex of the servers, or cloud $/h; GPUs where nothing is
priced). A pair is skipped when a lower bound of its cost (the GPUs it needs at its
transfer-free prefill rate, at the GPU's price per GPU) is already above the best found.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from gpuplan.core.records import dataclass

from gpuplan.hardware.schema import Gpu
from gpuplan.fabric.tco import CostBasis
from gpuplan.serving.capacity import Demand
from gpuplan.serving.disagg_fleet import DisaggFleet
from gpuplan.serving.disagg_workers import MEMO_MAX, RATES, UNSIZED, decode_of, prefill_of, workers_of
from gpuplan.serving.disagg import (
    DecodeWorker,
    KvLink,
    PrefillWorker,
    domain_link,
    request_kv_bytes,
    scaleout_link,
)
from gpuplan.serving.fleet import FleetCost, domain_fleet, domain_objective, fleet_cost, fleet_objective, gpu_terms, sum_fleets
from gpuplan.serving.lazy_order import LazyOrder
from gpuplan.serving.model import Replica
from gpuplan.serving.step_floor import decode_tight_rate_bound


def _key(r: Replica) -> tuple[str, int, int, int]:
    return (r.gpu.id, r.layout.tp, r.layout.pp, r.layout.ep)


def _count(need: float, rate: float) -> int:
    return max(1, math.ceil(need / rate - 1e-9))


@dataclass
class _Search:
    demand: Demand
    qps: float
    spare: int
    max_load: float
    pricing: str
    cost: CostBasis
    #: Rank by GPU count (nothing is priced) instead of the objective.
    by_gpus: bool
    best: DisaggFleet | None = None
    best_key: tuple[float, int] = (math.inf, 0)

    @property
    def need(self) -> float:
        return self.qps / self.max_load

    def metric(self, f: FleetCost, gpus: int) -> float:
        return self.ranked(f.objective, gpus)

    def ranked(self, objective: float | None, gpus: int) -> float:
        """:meth:`metric` of a fleet of that objective and GPUs."""
        if self.by_gpus:
            return float(gpus)
        return objective if objective is not None else math.inf

    def per_gpu(self, gpu: Gpu) -> float:
        """A lower bound of the cost of one GPU in the metric (whole servers and instances only add)."""
        if self.by_gpus:
            return 1.0
        _, per_node, _, price, rate, _, _, _ = gpu_terms(gpu)  # the catalog's figures, read once a GPU
        if self.pricing == "cloud":
            return rate if rate is not None else math.inf
        return price / per_node if price is not None else math.inf

    def lower_bound(self, w: Replica, rate: float) -> float:
        """Workers of ``w`` at ``rate`` or faster, and the spares (a spare group holds one at least)."""
        return self.per_gpu(w.gpu) * (_count(self.need, rate) + self.spare) * w.layout.gpus

    def dear_groups(self, gpu: Gpu, groups: int, span: int, local: int) -> bool:
        """Whether a one-domain fleet of ``groups`` active groups of ``span`` GPUs (domains of
        ``local``) and the spare groups is no cheaper than the best found. A fleet of more groups, or
        of wider ones, is no cheaper either: :func:`domain_fleet`'s servers (whole servers or whole
        domains), billed GPUs and GPUs never fall as either grows."""
        n = groups + self.spare
        return (self.ranked(domain_objective(gpu, n, span, local, self.pricing), n * span), n * span) >= self.best_key

    def offer(self, fleet: DisaggFleet) -> None:
        key = (self.metric(fleet.fleet, fleet.gpus), fleet.gpus)
        if math.isfinite(key[0]) and key < self.best_key:
            self.best, self.best_key = fleet, key


def search(replicas: list[Replica], demand: Demand, qps: float, spare: int, max_load: float, pricing: str,
           cost: CostBasis, *, by_gpus: bool = False, worth_below: float | None = None,
           latencies: list[float | None] | None = None) -> list[DisaggFleet]:
    """The cheapest disaggregated fleet of each placement (scale-out, one domain) over ``replicas``
    (every allowed GPU and layout), cheapest first: their networks differ, so the planner prices
    both with their fabric before it chooses.

    ``worth_below``: a fleet costing this much or more is of use only as the cheapest of all (the
    aggregated plan's cost, which a disaggregated fleet must undercut to be built): the one-domain
    fleet is then searched only below the larger of it and the scale-out fleet's cost, and left
    out when none is cheaper (the fleets below that are found as without the limit).
    ``latencies``: each replica's prefill time of one prompt where the caller knows it.

    The prefill workers are met cheapest first by the bound of their cost at their rate, the
    decode workers (scale-out) by their cost (:class:`LazyOrder`): a prefill rate waits under its
    utilisation ceiling, a decode worker under one worker plus the spares, so the workers whose
    bound is already above the best fleet found are never sized."""
    s = _Search(demand, qps, spare, max_load, pricing, cost, by_gpus)
    entries = [workers_of(r, demand, None if latencies is None else latencies[k]) for k, r in enumerate(replicas)]
    # The first replica's prefill worker (each is made when the search first needs it): the request's
    # KV bytes are the first worker's.
    first = next((w for e in entries if (w := prefill_of(e, demand)) is not None), None)
    if first is None or qps <= 0:
        return []
    keys = [e[0] for e in entries]
    # Each replica's prefill worker and its rate's ceiling, the utilisation ceiling over the service
    # time (PrefillWorker.rate), once made (made()): the orders below read them after.
    pres: list[PrefillWorker] = [None] * len(entries)  # type: ignore[list-item]
    top: list[float] = [math.inf] * len(entries)

    def made(i: int) -> PrefillWorker | None:
        w = pres[i]
        if w is None:
            w = pres[i] = prefill_of(entries[i], demand)  # type: ignore[call-overload]
            if w is not None:
                top[i] = w.replica.k.queueing.max_utilisation / w.service_s
        return w

    def rate(i: int, extra: float, dear: Callable[[float], bool] | None = None) -> float:
        """Prefill worker ``i``'s rate with ``extra`` seconds of TTFT taken (memoised); 0.0 without
        the bisection when ``dear(ceiling)``: the pairing is too dear even at the ceiling."""
        key = (keys[i], round(extra, 12))
        if key not in RATES:
            if dear is not None and dear(top[i]):
                return 0.0
            if len(RATES) >= MEMO_MAX:
                RATES.clear()
            RATES[key] = pres[i].rate(demand, extra)
        return RATES[key]

    def refine_prefill(i: int) -> float:
        """The prefill pool's bound at its worker's utilisation ceiling, the worker made (a replica
        waits under one worker and the spares until it may come next)."""
        w = made(i)
        if w is None:  # no prefill worker: computed now, and not in the order
            return -math.inf
        return s.lower_bound(w.replica, top[i])

    def price_prefill(i: int) -> tuple[float, float] | None:
        if made(i) is None:
            return None
        free = rate(i, 0.0)
        return None if free <= 0 else (s.lower_bound(pres[i].replica, free), free)

    pre = LazyOrder([(s.lower_bound(e[3], math.inf), _key(e[3]), i) for i, e in enumerate(entries)], price_prefill,
                    refine_prefill)
    # The least any decode pool costs: its workers at a rate no decode worker of the replica exceeds
    # (decode_rate_bound; one worker and the spares where there is no such rate), so that the
    # searches size only the decode workers whose pool may undercut the best fleet found.
    floor = [s.lower_bound(e[3], e[4] if e[5] is None else e[5]) for e in entries]

    def price_decode(j: int) -> tuple[float, tuple[int, FleetCost, DecodeWorker]] | None:
        w = decode_of(entries[j], demand)
        if w is None:
            return None
        d = _count(s.need, w.rate)
        f = fleet_cost(w.replica.gpu, d + s.spare, w.replica.layout.gpus, s.pricing, s.cost)
        return s.metric(f, (d + s.spare) * w.replica.layout.gpus), (d, f, w)

    refined: dict[int, float] = {}

    def refine(j: int) -> float:
        """The decode pool's cost at a tighter bound of its worker's rate (decode_tight_rate_bound:
        within a few percent of the rate where decode_rate_bound is 2-5x above it), asked only of
        the workers that would otherwise be sized next: its workers and the spares, on whole servers
        (a pool of more workers costs no less). The pool's per-GPU floor at that rate is kept for
        the one-domain search, whose groups share servers."""
        hit = refined.get(j)
        if hit is None:
            e = entries[j]
            if e[2] is not UNSIZED:  # sized already (an earlier search): its cost is at hand
                return -math.inf
            r, tight = e[3], e[5]
            if tight is None:
                tight = e[5] = decode_tight_rate_bound(r, demand)
            if not tight > 0.0:  # no worker at all, or no bound: sized now
                return -math.inf
            least = s.lower_bound(r, tight)
            if least > floor[j]:
                floor[j] = least
            d = _count(s.need, tight) + s.spare
            hit = refined[j] = s.ranked(fleet_objective(r.gpu, d, r.layout.gpus, s.pricing), d * r.layout.gpus)
        return hit

    # Whole servers or billed instances cost at least the per-GPU price (the margin covers the
    # rounding of the bound's two products where the two are equal).
    waiting = [(floor[j] * (1 - 1e-12), _key(e[3]), j) for j, e in enumerate(entries)]
    dec = LazyOrder(waiting, price_decode, refine)
    vendors: dict[str, LazyOrder] = {}

    def of_vendor(vendor: str) -> LazyOrder:
        """The decode workers of one vendor's GPUs in the same order (a prefill worker pairs with no
        other: the KV layout and transfer library are one vendor's); a worker sized by one order is
        sized for all (decode_of keeps it)."""
        hit = vendors.get(vendor)
        if hit is None:
            hit = vendors[vendor] = LazyOrder([t for t in waiting if entries[t[2]][3].gpu.vendor == vendor],
                                              price_decode, refine)
        return hit

    kv = request_kv_bytes(first.replica, demand.prompt_tokens)
    _scaleout(s, pres, pre, dec, of_vendor, rate, kv, entries)
    d = _Search(demand, qps, spare, max_load, pricing, cost, by_gpus)
    if worth_below is not None and s.best is not None:
        # Above both, the one-domain fleet would be neither built nor first (ties go to scale-out).
        d.best_key = (max(worth_below, math.nextafter(s.best_key[0], math.inf)), 0)
    _in_domain(d, pres, pre, entries, floor, rate, kv)
    found = [(x.best_key, k, x.best) for k, x in enumerate((s, d)) if x.best is not None]
    return [f for _, _, f in sorted(found, key=lambda t: (t[0], t[1]))]  # type: ignore[misc]


def _scaleout(s: _Search, pres: list[PrefillWorker], pre: LazyOrder, dec: LazyOrder,
              of_vendor: Callable[[str], LazyOrder], rate, kv: float, entries: list[list]) -> None:
    def unlinked(j: int, bound: float) -> bool:
        """A decode worker whose server has no scale-out NIC pairs with no prefill worker here
        (scaleout_link is None): it leaves the order unsized, as the loop below would skip it."""
        return entries[j][3].links.network.scaleout is None

    first = dec.get(0, drop=unlinked)
    if first is None:
        return
    cheapest = first[0]
    k = 0
    while (got := pre.get(k, lambda lb: lb + cheapest >= s.best_key[0])) is not None:
        lb, i = got
        if lb + cheapest >= s.best_key[0]:
            break
        k += 1
        pw = pres[i]
        if pw.replica.links.network.scaleout is None:
            continue  # no scale-out link to any decode worker (scaleout_link is None)
        # The prefill pool costs at least its workers at its transfer-free rate and the spares on
        # whole servers (its rate over a link is no higher): a pairing dearer than the best even so
        # is not offered, nor any after it in the order (their decode pools cost no less).
        free = pre.payload(i)
        gp = pw.replica.layout.gpus
        p_least = _count(s.need, free) + s.spare
        least = s.ranked(fleet_objective(pw.replica.gpu, p_least, gp, s.pricing), p_least * gp)

        def fails(c: float) -> bool:
            return lb + c >= s.best_key[0] or least + c > s.best_key[0]

        decode = of_vendor(pw.replica.gpu.vendor)  # the KV layout and transfer library are one vendor's
        m = 0
        while (e := decode.get(m, fails, drop=unlinked)) is not None:
            d_cost, j = e
            if fails(d_cost):
                break
            m += 1
            d, d_fleet, dw = decode.payload(j)
            link = scaleout_link(pw.replica, dw.replica)
            if link is None:
                continue
            def dear(r: float, pw: PrefillWorker = pw, dw: DecodeWorker = dw, d_fleet: FleetCost = d_fleet,
                     d: int = d) -> bool:
                """This pairing at prefill rate ``r`` or less is no cheaper (costs grow with workers):
                the objective of ``sum_fleets(prefill pool, d_fleet)``, without building the pool's fleet."""
                p = _count(s.need, r)
                gpus = (p + s.spare) * pw.replica.layout.gpus + (d + s.spare) * dw.replica.layout.gpus
                pool = fleet_objective(pw.replica.gpu, p + s.spare, pw.replica.layout.gpus, s.pricing)
                both = None if pool is None or d_fleet.objective is None else pool + d_fleet.objective
                return (s.ranked(both, gpus), gpus) >= s.best_key

            r = rate(i, link.seconds(kv) + dw.residual_s(s.demand.percentile), dear)
            if r <= 0:
                continue
            p = _count(s.need, r)
            p_fleet = fleet_cost(pw.replica.gpu, p + s.spare, pw.replica.layout.gpus, s.pricing, s.cost)
            g = math.gcd(p, d)
            s.offer(DisaggFleet(pw, dw, r, link, kv, g, p // g, d // g, s.spare, sum_fleets(p_fleet, d_fleet),
                                p_fleet, d_fleet, s.qps))


def _in_domain(s: _Search, pres: list[PrefillWorker], pre: LazyOrder, entries: list[list], floor: list[float],
               rate, kv: float) -> None:
    same: dict[str, list[int]] = {}  # each GPU's decode candidates, in the replicas' order
    for j, e in enumerate(entries):
        same.setdefault(e[3].gpu.id, []).append(j)

    def least(j: int) -> float | None:
        """A lower bound of the decode pool's lower_bound (None: the replica has no decode worker)."""
        w = entries[j][2]
        if w is UNSIZED:
            return floor[j]
        return None if w is None else s.lower_bound(w.replica, w.rate)

    def hopeless(i: int, bound: float) -> bool:
        """Whether every pairing of prefill worker ``i`` (its bound ``bound``) is already too dear."""
        lows = [b for b in map(least, same.get(entries[i][3].gpu.id, ())) if b is not None]
        return not lows or bound + min(lows) >= s.best_key[0]

    k = 0
    while (got := pre.get(k, drop=hopeless)) is not None:
        k += 1
        lb, i = got
        pw = pres[i]
        free = pre.payload(i)
        gp = pw.replica.layout.gpus
        local = pw.replica.links.local_domain
        for j in same.get(pw.replica.gpu.id, ()):
            if entries[j][2] is UNSIZED and lb + floor[j] >= s.best_key[0]:
                continue
            span = gp + entries[j][3].layout.gpus  # the least group: one worker of each
            if span > local or s.dear_groups(pw.replica.gpu, 1, span, local):
                continue  # no group fits the domain, or even one of the least span (and the spares) is too dear
            dw = decode_of(entries[j], s.demand)
            if dw is None:
                continue
            gd = dw.replica.layout.gpus
            if s.lower_bound(pw.replica, free) + s.lower_bound(dw.replica, dw.rate) >= s.best_key[0]:
                continue
            residual = dw.residual_s(s.demand.percentile)
            spans: dict[int, tuple[KvLink | None, float]] = {}  # the link and the TTFT it takes, by span
            for x in range(1, (local - gd) // gp + 1):
                most = (local - x * gp) // gd
                matched = x * free / dw.rate
                for y in sorted({max(1, min(most, math.floor(matched))), max(1, min(most, math.ceil(matched))), most}):
                    span = x * gp + y * gd
                    # Its prefill rate over the link is at most ``free`` (the TTFT the link takes
                    # only lowers it): too dear at ``free``, too dear at its rate; not, then not
                    # at the ceiling either (rate()'s test), and the rate is sized.
                    if s.dear_groups(pw.replica.gpu, _count(s.need, min(x * free, y * dw.rate)), span, local):
                        continue
                    hit = spans.get(span)
                    if hit is None:
                        link = domain_link(pw.replica, dw.replica, span)
                        hit = spans[span] = (link, 0.0 if link is None else link.seconds(kv) + residual)
                    link, extra = hit
                    if link is None:
                        continue
                    r = rate(i, extra)
                    if r <= 0:
                        continue
                    n = _count(s.need, min(x * r, y * dw.rate))
                    f = domain_fleet(pw.replica.gpu, n + s.spare, span, local, s.pricing, s.cost)
                    s.offer(DisaggFleet(pw, dw, r, link, kv, n, x, y, s.spare, f, None, None, s.qps))
