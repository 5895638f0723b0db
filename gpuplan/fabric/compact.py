"""Fabrics below one scalable unit: the fewest switches that give the bandwidth and ratio.

The reference architecture builds rail-optimized fabrics in whole scalable units (RA-11333-001:
32 nodes per unit on 64-port switches, "build the full SU's leaves"), which is right at scale and
wasteful below a unit: 6 A100 servers got 8 leaves and 4 spines. Below one unit an engineer
builds the smallest fabric that still gives every GPU its NIC rate at the requested
oversubscription. The candidates, each a closed-form design of :mod:`.sizing`:

* the reference design (one leaf per rail in a unit, spines by the divisor rule);
* a plain leaf-spine whose leaves take whole nodes (any traffic pattern);
* when the layout's cross-node traffic is rail-aligned and the server's GPUs share one NVLink
  domain (so cross-rail traffic is forwarded inside the node, PXN): the rails split into ``p``
  independent planes of ``rails / p`` rails each, every plane the smallest Clos of its own (one
  switch per plane when it fits: a switch holding rails 0-3 of every node and one holding rails
  4-7 is a "leaf pair"; ``p`` = rails is one leaf per rail, rail-only; Wang, Ghobadi et al.,
  arXiv 2307.12169).

The fewest switches win, then the fewest switch-to-switch links, then the reference design. A
fabric of a whole unit or more keeps the reference design, so every published size reproduces.
"""

from __future__ import annotations

from dataclasses import replace

from gpuplan.fabric.sizing import ClosDesign, ClosSpec, SizingError, size_clos


def switches(design: ClosDesign) -> int:
    return design.leaf_switches + design.spine_switches + design.core_switches


def below_one_unit(design: ClosDesign) -> bool:
    """A rail-optimized design that fills less than one scalable unit."""
    spec = design.spec
    return (spec.layout == "rail-optimized" and spec.scalable_unit_nodes is None and design.tiers > 1
            and design.units == 1 and spec.nodes + spec.reserved_node_slots < design.unit_nodes)


def fewest_switches(spec: ClosSpec, *, rail_planes: bool) -> ClosDesign:
    """The design of ``spec``, or below one scalable unit the one with the fewest switches.
    ``rail_planes``: the traffic allows splitting the rails into independent planes."""
    reference = size_clos(spec)
    if not below_one_unit(reference):
        return reference
    candidates = [reference]
    for planes in (p for p in range(1, spec.rails + 1) if spec.rails % p == 0):
        if planes > 1 and not rail_planes:
            continue
        try:
            candidates.append(size_clos(replace(spec, rails=spec.rails // planes, planes=spec.planes * planes,
                                                layout="fat-tree")))
        except SizingError:
            continue
    # Ties go to the earlier candidate (min keeps the first; equal designs have equal keys): by
    # position, not candidates.index(d), which compared d field by field with every earlier design.
    best = min(range(len(candidates)), key=lambda k: (switches(candidates[k]),
                                                      candidates[k].leaf_spine_links + candidates[k].spine_core_links, k))
    return candidates[best]


def compact_reason(design: ClosDesign, reference: ClosDesign) -> str:
    """Why a sub-unit fabric is smaller than the reference design's."""
    spec = design.spec
    ref = switches(reference)
    what = (f"{spec.planes} planes of {spec.rails} rail{'s' if spec.rails > 1 else ''} each (rail-aligned traffic "
            f"stays in its plane; cross-rail traffic crosses NVLink inside the node)" if spec.planes > 1 else
            "a leaf-spine whose leaves take whole nodes")
    return (f"Below one scalable unit ({spec.nodes} nodes < {reference.unit_nodes}): {what}, {switches(design)} "
            f"switch{'es' if switches(design) > 1 else ''} instead of the reference design's {ref} "
            f"({reference.leaf_switches} leaf + {reference.spine_switches} spine); every GPU keeps its NIC rate at "
            f"{design.oversubscription:g}:1.")
