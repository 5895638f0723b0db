"""Closed-form sizing of folded-Clos (fat-tree) fabrics: leaves, spines, cores and links.

Pure arithmetic, no graph: this is the hot path every plan runs. The graph in
:mod:`gpuplan.fabric.graph` is built from the same :class:`ClosDesign` and checks it.

Notation (docs/fabric-model.md): k = switch radix in ports of the endpoint speed; a node has R
fabric ports per plane (one per GPU on HGX-class servers: the "rails"); r = leaf oversubscription
(downlink : uplink bandwidth). Rules, each with its source:

* Capacities of a non-blocking folded Clos: 1 tier k, 2 tiers k^2/2, 3 tiers k^3/4 endpoints
  (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008; NVIDIA RA-11333-001 Table 3: 2,048 GPUs is the
  two-tier limit of a 64-port switch).
* Rail-optimized: in each scalable unit (SU) every rail has its own leaf group; the fabric is
  built in whole SUs (RA-11333-001 section "compute fabric": 32 nodes per SU, "if a partial SU
  is built, build the full SU's leaves and leaf-spine cables").
* Spine divisor rule: the spine count s divides the leaf's uplinks u (every leaf has u/s links
  to every spine, so ECMP / adaptive routing spreads evenly) and s*k >= leaves*u. Reproduces
  RA-11333-001 Table 4 (3 SU: 24 leaves need 12 spines by port count, the RA builds 16).
* Three tiers: pods of k/2 leaves (whole SUs), spines with k/2 down and k/2 up, core groups
  joining spine j of every pod (Al-Fares; RA-11333-001 Table 3, 16 SU: 128/128/64).
* Rail-only: every rail is its own Clos, no switch joins rails; cross-rail traffic is forwarded
  inside the node over NVLink (Wang, Ghobadi et al., arXiv 2307.12169).
"""

from __future__ import annotations

from gpuplan.fabric.clos import HOPS_BY_TIERS, ClosDesign, ClosSpec, Layout, SizingError  # noqa: F401
from gpuplan.fabric.clos_cuts import bisection_gbit, bisection_links, switch_port_usage  # noqa: F401
from gpuplan.fabric.clos_ports import (  # noqa: F401  (re-exported)
    leaf_split, min_uplinks, radix_half, smallest_divisor_at_least, spines_for, tier_capacity,
)


def fat_tree_k_ary(k: int) -> dict[str, int]:
    """Al-Fares k-ary fat tree: k^3/4 hosts, k^2/2 edge, k^2/2 aggregation, k^2/4 core switches."""
    spec = ClosSpec(radix=k, nodes=k**3 // 4, rails=1, layout="fat-tree")
    d = size_clos(spec)
    return {"hosts": d.endpoints, "edge": d.leaves, "aggregation": d.spines, "core": d.cores,
            "switches": d.leaves + d.spines + d.cores}


# ---------------------------------------------------------------------------- sizing
def size_clos(spec: ClosSpec) -> ClosDesign:
    """Size the fabric: the fewest tiers that hold the endpoints, then switches and links."""
    k = spec.radix
    rail_only = spec.layout == "rail-only"
    ports = 1 if rail_only else spec.rails
    copies = spec.planes * (spec.rails if rail_only else 1)
    groups = ports if spec.layout == "rail-optimized" else 1
    per_node_on_leaf = 1 if spec.layout == "rail-optimized" else ports
    slots = spec.nodes + spec.reserved_node_slots
    base = dict(spec=spec, copies=copies, ports_per_node=ports, rail_groups=groups)

    # One switch holds everything (fabric.md section 3.2, tier 1); leaf_up = 0 pins it.
    if slots * ports <= k and spec.leaf_up in (None, 0):
        fill = ((0, spec.nodes, spec.reserved_node_slots),)
        return ClosDesign(**base, tiers=1, unit_nodes=slots, units=1, leaves_per_group=1,
                          slots_per_leaf=slots, leaf_down=slots * ports, leaf_up=0, leaves=1, spines=0,
                          cores=0, max_endpoints_per_copy=k, _leaf_fill=fill)
    if spec.leaf_up == 0:
        raise SizingError("a single-switch design no longer fits its switch")

    d_max, _ = leaf_split(k, spec.oversubscription)
    if spec.leaf_down is not None:
        d_max = spec.leaf_down
    nodes_per_leaf = d_max // per_node_on_leaf
    if nodes_per_leaf < 1:
        raise SizingError(f"a node's {ports} ports do not fit one leaf's {d_max} downlinks")
    # Default unit: rail-optimized -> the RA's scalable unit, one non-blocking leaf's downlinks per
    # rail (32 nodes on a 64-port switch, RA-11333-001), also when the leaf is oversubscribed (fewer
    # uplinks, same unit); plain -> one leaf's worth of nodes.
    default_unit = min(radix_half(k), nodes_per_leaf) if spec.layout == "rail-optimized" else nodes_per_leaf
    unit = spec.scalable_unit_nodes or default_unit
    per_group = -(-unit // nodes_per_leaf)
    slots_per_leaf = -(-unit // per_group)
    leaf_down = slots_per_leaf * per_node_on_leaf
    if spec.leaf_down is not None:
        leaf_down = spec.leaf_down
    units = -(-slots // unit)
    leaves = units * groups * per_group
    fill = _fill(spec.nodes, spec.reserved_node_slots, unit, units, groups, per_group, slots_per_leaf)
    common = dict(base, unit_nodes=unit, units=units, leaves_per_group=per_group,
                  slots_per_leaf=slots_per_leaf, leaf_down=leaf_down, leaves=leaves, _leaf_fill=fill)

    two = _two_tier(leaves, leaf_down, k, spec)
    if two is not None:
        up, spines = two
        return ClosDesign(**common, tiers=2, leaf_up=up, spines=spines, cores=0, pod_leaves=leaves, pods=1,
                          spines_per_pod=spines, last_pod_leaves=leaves, last_pod_spines=spines,
                          max_endpoints_per_copy=k * leaf_down)
    three = _three_tier(leaves, leaf_down, k, spec, unit_leaves=groups * per_group)
    if three is None:
        cap = tier_capacity(k, 3, leaf_down)
        raise SizingError(f"{spec.nodes * ports:,} endpoints per plane exceed the three-tier capacity of a "
                          f"{k}-port switch ({cap:,}); use a larger-radix switch or more planes")
    return ClosDesign(**common, tiers=3, **three)


def _fill(nodes: int, reserved: int, unit: int, units: int, groups: int, per_group: int,
          slots_per_leaf: int) -> tuple[tuple[int, int, int], ...]:
    """(first node, end node, reserved slots) of each leaf of one copy, in build order."""
    out = []
    total = nodes + reserved
    for u in range(units):
        base = u * unit
        for _ in range(groups):
            for j in range(per_group):
                lo = base + j * slots_per_leaf
                hi = min(base + min((j + 1) * slots_per_leaf, unit), total)
                first, end = min(lo, nodes), min(max(hi, lo), nodes)
                res = max(0, min(hi, total) - max(lo, nodes)) if hi > lo else 0
                out.append((first, max(first, end), res))
    return tuple(out)


def _two_tier(leaves: int, leaf_down: int, k: int, spec: ClosSpec) -> tuple[int, int] | None:
    """Leaf uplinks and spines: fewest spines by the divisor rule, then fewest uplinks.

    Uplinks range from ceil(down / r) (the requested ratio) to the free ports; raising them a
    little can let a divisor of u cover the ports with far fewer spines (13 uplinks, prime,
    would force 13 spines; 14 allows 2). Non-blocking RA leaves have exactly k/2 free: forced.
    """
    if leaves > k:
        return None
    if spec.leaf_up is not None:
        s = spines_for(leaves, spec.leaf_up, k)
        return (spec.leaf_up, s) if s is not None else None
    lo = min_uplinks(leaf_down, spec.oversubscription)
    best: tuple[int, int] | None = None
    for up in range(lo, k - leaf_down + 1):
        s = spines_for(leaves, up, k)
        if s is not None and (best is None or s < best[1]):
            best = (up, s)
    return best


def _three_tier(leaves: int, leaf_down: int, k: int, spec: ClosSpec, *, unit_leaves: int) -> dict[str, int] | None:
    """Pods of whole units (at most k/2 leaves), spines k/2 down + k/2 up, core groups per spine index.

    Core group j joins spine j of every pod; c cores per group with c | (uplinks of a full-pod
    spine) so every spine spreads evenly. A partial last pod gets s_last | s_pod spines, each
    serving s_pod / s_last groups. Among the feasible (s_last, c), the fewest switches win.
    """
    half = k // 2
    up = spec.leaf_up if spec.leaf_up is not None else min_uplinks(leaf_down, spec.oversubscription)
    if up + leaf_down > k:
        return None
    pod = (half // unit_leaves) * unit_leaves if unit_leaves <= half else half
    s_pod = smallest_divisor_at_least(up, -(-pod * up // half)) if pod >= 1 else None
    if s_pod is None:
        return None
    pods = -(-leaves // pod)
    last = leaves - (pods - 1) * pod
    partial = last != pod
    full = pods - (1 if partial else 0)
    x_full = pod * up // s_pod
    x_last = last * up // s_pod
    best: tuple[tuple[int, int], dict[str, int]] | None = None
    last_options = [d for d in _divisors(s_pod) if d * half >= last * up] if partial else [s_pod]
    for s_last in last_options:
        down_last = last * up // s_last
        for c in _divisors(x_full):
            y = -(-x_last // c) * c if partial else x_full
            if partial and (s_pod // s_last) * y > k - down_last:
                continue
            if c * k < full * x_full + (y if partial else 0):
                continue
            spines = full * s_pod + (s_last if partial else 0)
            key = (spines + s_pod * c, s_pod * (full * x_full + (y if partial else 0)))
            if best is None or key < best[0]:
                best = (key, dict(leaf_up=up, spines=spines, cores=s_pod * c, pod_leaves=pod, pods=pods,
                                  spines_per_pod=s_pod, last_pod_leaves=last, last_pod_spines=s_last,
                                  cores_per_group=c, group_links_full=x_full, group_links_last=y,
                                  max_endpoints_per_copy=k * pod * leaf_down))
            break  # larger c only adds cores for this s_last
    return best[1] if best else None


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]
