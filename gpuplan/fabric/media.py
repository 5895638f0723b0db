"""Link media (copper, AOC, transceiver + fibre) and module counts of a sized fabric.

Rules (docs/fabric-model.md, "Optics and cables"):

* A link whose two ends sit in one rack uses a passive DAC; a node-leaf link leaving the rack
  uses an AOC when the switch cage carries one link, otherwise transceivers + fibre; switch-to-
  switch links use transceivers + fibre (RA-11333-001 Table 8: every NDR compute link is a fibre
  with a transceiver at each end, node-leaf included, because a twin-port OSFP cage carries two
  links to two different nodes).
* One fibre cable per optical link (Table 8: 2,040 NDR cables = 1,016 node-leaf + 1,024
  leaf-spine links). An AOC or DAC is one item with its ends built in.
* Switch-side modules fill cages: links per cage = radix at the port speed / cages (QM9700: 64 /
  32 = 2, a twin-port 800G OSFP carries two 400G links). Down- and up-facing cages are counted
  apart because their links need different reach (Table 8: 1,536 = 48 switches x 32 cages).
* Node side: DGX/HGX 8-GPU NVIDIA baseboards at 400G use twin-port OSFP (4 modules serve 8
  single-port ConnectX-7, RA-11333-001 / RA-11334-001); every other server (DGX A100's QSFP56,
  OAM, NVL72 trays, PCIe cards, front-end NICs) one module per NIC port.
* Planes fed by one NIC port: where every GPU's NIC port runs at ``planes`` times the fabric's
  port speed (B300's ConnectX-8 at 800G split into two 400G planes), one twin-port cable carries
  one link of each plane, so a tier has ``links / planes`` cables and a GPU one node module
  (NVIDIA DGX SuperPOD B300 RA, Table 3: 2 SU on two Spectrum-X planes = 1,024 node-leaf and
  1,024 leaf-spine cables for 2 x 1,024 links per tier).
* Reach by position (optics-reach-rules: DAC < 3 m, AOC < 30 m, multimode 50 m, single-mode DR
  100-500 m; nvidia-linkx-dac: 400G passive DAC 2 m in 26AWG): in-rack 2 m; node-leaf across
  the row 30 m; leaf-spine inside a pod 50 m (the RA's SR4 multimode); spine-core across the
  hall 100 m (single-mode DR4).
"""

from __future__ import annotations

import math
from gpuplan.core.memo import memo
from gpuplan.core.records import dataclass
from typing import Literal

from gpuplan.hardware.loader import Catalog
from gpuplan.hardware.schema import Gpu, Optic, Switch
from gpuplan.fabric.sizing import ClosDesign, switch_port_usage

Medium = Literal["dac", "aoc", "optical"]

#: Metres a link must span by position (optics-reach-rules, nvidia-linkx-dac; RA-11333-001 uses
#: SR4 multimode for leaf-spine).
REACH_M = {"in-rack": 2.0, "node-leaf": 30.0, "leaf-spine": 50.0, "spine-core": 100.0}

LINK_TIERS = ("node-leaf", "leaf-spine", "spine-core")


def links_per_cage(switch: Switch, gbit: float) -> int:
    """Links one switch cage carries at this port speed (QM9700 at 400G: 64 / 32 = 2)."""
    radix = switch.radix(gbit)
    if not radix:
        raise ValueError(f"switch {switch.id} has no {gbit:g}G ports")
    return max(1, math.ceil(radix / switch.cages))


def node_links_per_module(gpu: Gpu, rails: int, link_gbit: float, catalog: Catalog) -> int:
    """2 for the compute rails of DGX-class 8-GPU NVIDIA baseboards at a twin-port speed, else 1.

    RA-11333-001 / RA-11334-001: DGX H100/H200/B200 have "4 OSFP ports serving 8 single-port
    ConnectX-7" (twin-port 2 x 400G modules). DGX A100 has one QSFP56 per HDR NIC, so the twin
    form applies only where the catalog has a two-link module at the link speed. Front-end NICs,
    PCIe-card servers, OAM and NVL72 trays use one module per NIC port.
    """
    dgx = gpu.vendor == "nvidia" and gpu.form_factor == "sxm" and gpu.gpus_per_node == 8
    if not dgx or rails != gpu.gpus_per_node:
        return 1
    twin = any(o.kind == "transceiver" and o.links_per_module == 2 and abs(o.gbit / 2 - link_gbit) < 1e-6
               for o in catalog.optics.values())
    return 2 if twin else 1


def plane_share(gpu: Gpu, planes: int, rails: int, link_gbit: float) -> int:
    """Links one cable carries, one per plane: ``planes`` where each GPU's own NIC port feeds every
    plane (its scale-out speed is ``planes x link_gbit``, one rail per GPU), else 1."""
    if planes <= 1 or rails != gpu.gpus_per_node:
        return 1
    return planes if gpu.reference_scaleout_gbit_per_gpu >= planes * link_gbit - 1e-6 else 1


@dataclass(frozen=True)
class Media:
    """How each link tier is cabled."""

    node_leaf: Medium
    switch_lpc: int
    node_lpm: int
    #: Links one cable carries across planes (1 unless one NIC port feeds every plane).
    planes_per_cable: int = 1

    def cables(self, links: int) -> int:
        """Cables of a tier of ``links`` links."""
        return -(-links // self.planes_per_cable)

    @property
    def dac_links(self) -> int:
        """Links one node-leaf DAC carries: 2 between twin-port cages, else 1."""
        return min(self.switch_lpc, self.node_lpm)

    def medium(self, tier: str) -> Medium:
        return self.node_leaf if tier == "node-leaf" else "optical"

    def reach_m(self, tier: str) -> float:
        return REACH_M["in-rack"] if tier == "node-leaf" and self.node_leaf == "dac" else REACH_M[tier]


def choose_media(design: ClosDesign, switch: Switch, gbit: float, gpu: Gpu, nodes_per_rack: int,
                 catalog: Catalog) -> Media:
    lpc = links_per_cage(switch, gbit)
    in_rack = design.slots_per_leaf <= nodes_per_rack
    if in_rack:
        node_leaf: Medium = "dac"
    elif lpc == 1 and pick_cable(catalog, "aoc", gbit, REACH_M["node-leaf"]) is not None:
        node_leaf = "aoc"
    else:
        node_leaf = "optical"
    return Media(node_leaf=node_leaf, switch_lpc=lpc,
                 node_lpm=node_links_per_module(gpu, design.spec.rails, gbit, catalog),
                 planes_per_cable=plane_share(gpu, design.spec.planes, design.spec.rails, gbit))


@dataclass(frozen=True)
class ModuleCounts:
    """Transceiver modules and cables of one fabric (all copies)."""

    #: (switch tier, link tier) -> switch-side modules.
    switch_modules: dict[tuple[str, str], int]
    node_modules: int
    #: link tier -> (medium, cables): fibres for optical links, AOC/DAC items otherwise.
    cables: dict[str, tuple[Medium, int]]

    @property
    def switch_total(self) -> int:
        return sum(self.switch_modules.values())


def count_modules(design: ClosDesign, media: Media) -> ModuleCounts:
    """Switch-side modules by cage, node-side modules per node, one cable per link."""
    usage = switch_port_usage(design)
    lpc = media.switch_lpc
    mods: dict[tuple[str, str], int] = {}
    below = {"leaf": "node-leaf", "spine": "leaf-spine", "core": "spine-core"}
    above = {"leaf": "leaf-spine", "spine": "spine-core"}
    for sw_tier, groups in usage.items():
        for down, up, count in groups:
            down_tier = below[sw_tier]
            if media.medium(down_tier) == "optical" and down:
                key = (sw_tier, down_tier)
                mods[key] = mods.get(key, 0) + count * -(-down // lpc) * design.copies
            if up and sw_tier in above:
                key = (sw_tier, above[sw_tier])
                mods[key] = mods.get(key, 0) + count * -(-up // lpc) * design.copies
    node_mods = 0
    if media.node_leaf == "optical":
        planes = design.spec.planes // media.planes_per_cable
        node_mods = design.spec.nodes * planes * -(-design.spec.rails // media.node_lpm)
    node_cables = media.cables(design.node_leaf_links)
    if media.node_leaf == "dac":
        # Twin-port cages at both ends take one twin-port DAC per two links (NVIDIA MCP7Y00 family).
        node_cables = -(-node_cables // media.dac_links)
    cables = {"node-leaf": (media.node_leaf, node_cables)}
    if design.tiers >= 2:
        cables["leaf-spine"] = ("optical", media.cables(design.leaf_spine_links))
    if design.tiers == 3:
        cables["spine-core"] = ("optical", media.cables(design.spine_core_links))
    return ModuleCounts(switch_modules=mods, node_modules=node_mods, cables=cables)


# ---------------------------------------------------------------------------- catalog parts
def _rank(o: Optic) -> tuple:
    """Shortest adequate reach first (multimode before single-mode), then price, then id."""
    return (o.reach_m, o.price_usd is None, o.price_usd or 0.0, o.id)


#: The picks of :func:`pick_module`, :func:`pick_cable` and :func:`pick_fiber` by (catalog, what is
#: asked): each scans the catalog's optics and sorts them, and a plan's bills ask the same few a
#: dozen times (32 picks, 8 distinct, default profile). The arguments enter only comparisons, so equal arguments pick the same part; the
#: catalog is keyed by identity and held in the entry, so its id is not reused while it lives. Bounded.
_PICKS: dict[tuple[object, ...], tuple[Catalog, object]] = memo()


def _picked(key: tuple[object, ...], catalog: Catalog, pick):  # type: ignore[no-untyped-def]
    """``pick()``, memoised in :data:`_PICKS` under ``(id(catalog), *key)``."""
    full = (id(catalog), *key)
    hit = _PICKS.get(full)
    if hit is None:
        if len(_PICKS) >= 256:
            _PICKS.clear()
        hit = _PICKS[full] = (catalog, pick())
    return hit[1]


def pick_module(catalog: Catalog, end: Literal["switch", "node"], link_gbit: float, lpm: int,
                reach_m: float) -> tuple[Optic | None, str]:
    """The transceiver for one end of a link tier; a note when a stand-in part is used.

    When the catalog has no node-side twin-port module, the switch-side one stands in: the
    DGX's flat-top twin-port OSFP has the same optics (RA-11333-001 Table 8 lists both).
    Memoised (:data:`_PICKS`).
    """
    return _picked(("module", end, link_gbit, lpm, reach_m), catalog,
                   lambda: _pick_module(catalog, end, link_gbit, lpm, reach_m))


def _pick_module(catalog: Catalog, end: Literal["switch", "node"], link_gbit: float, lpm: int,
                 reach_m: float) -> tuple[Optic | None, str]:
    def fits(o: Optic, ends: tuple[str, ...]) -> bool:
        return (o.kind == "transceiver" and o.end in ends and o.links_per_module == lpm
                and abs(o.gbit / o.links_per_module - link_gbit) < 1e-6 and o.reach_m >= reach_m)

    found = sorted((o for o in catalog.optics.values() if fits(o, (end, "any"))), key=_rank)
    if found:
        return found[0], ""
    other = "switch" if end == "node" else "node"
    found = sorted((o for o in catalog.optics.values() if fits(o, (other,))), key=_rank)
    if found:
        return found[0], f"{other}-side part used on the {end} side (same optics)"
    return None, ""


def pick_cable(catalog: Catalog, kind: Literal["dac", "aoc"], link_gbit: float, reach_m: float) -> Optic | None:
    """The cheapest adequate copper or active cable (memoised, :data:`_PICKS`)."""
    return _picked(("cable", kind, link_gbit, reach_m), catalog,
                   lambda: _pick_cable(catalog, kind, link_gbit, reach_m))


def _pick_cable(catalog: Catalog, kind: Literal["dac", "aoc"], link_gbit: float, reach_m: float) -> Optic | None:
    found = sorted((o for o in catalog.optics.values() if o.kind == kind and abs(o.gbit - link_gbit) < 1e-6
                    and o.links_per_module == 1 and o.reach_m >= reach_m), key=_rank)
    return found[0] if found else None


def pick_fiber(catalog: Catalog, reach_m: float, mode: str | None = None) -> Optic | None:
    """The cheapest fibre cable that reaches ``reach_m`` and, when given, is of the ``mode`` the
    link's transceivers need (an SR module on single-mode fibre does not link up; memoised,
    :data:`_PICKS`)."""
    return _picked(("fiber", reach_m, mode), catalog, lambda: _pick_fiber(catalog, reach_m, mode))


def _pick_fiber(catalog: Catalog, reach_m: float, mode: str | None = None) -> Optic | None:
    found = sorted((o for o in catalog.optics.values() if o.kind == "fiber" and o.reach_m >= reach_m
                    and (mode is None or o.fiber_mode == mode)), key=_rank)
    return found[0] if found else None
