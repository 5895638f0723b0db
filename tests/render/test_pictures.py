"""The HTML report's pictures (issue 22): the topology drawn from the plan's Clos design (two and
three tiers look different, the SU count and the leaf oversubscription are shown, NVL72 plans draw
racks with their NVLink switch trays, the size is capped), the roofline's achieved points, and no
two labels of any picture overlap (a label's width estimated from its character count)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from gpuplan.core.contract import Interconnect
from gpuplan.fabric.sizing import ClosSpec, size_clos
from gpuplan.fabric.topology import build_topology
from gpuplan.render import render
from gpuplan.render.svg_topology import MAX_ELEMENTS, topology_svg, topology_title

NS = "{http://www.w3.org/2000/svg}"
#: DejaVu Sans (system-ui on Debian) averages 0.56 em per character on these labels, 0.64 on digits.
EM = 0.58


def _boxes(svg: ET.Element) -> list[tuple[str, tuple[float, float, float, float]]]:
    out = []
    for node in svg.iter(f"{NS}text"):
        if "transform" in node.attrib:  # the rotated axis title sits alone left of the axis
            continue
        text = "".join(node.itertext())
        size = float(node.get("font-size", 11))
        w = len(text) * EM * size
        x, y = float(node.get("x")), float(node.get("y"))
        anchor = node.get("text-anchor", "start")
        x0 = x - w if anchor == "end" else x - w / 2 if anchor == "middle" else x
        out.append((text, (x0, y - 0.75 * size, x0 + w, y + 0.2 * size)))
    return out


def assert_labels_apart(svg: ET.Element) -> None:
    width = float(svg.get("width"))
    boxes = _boxes(svg)
    for text, (x0, _, x1, _) in boxes:
        assert x0 >= -1 and x1 <= width + 1, f"{svg.get('class')}: {text!r} leaves the picture ({x0:.0f}..{x1:.0f})"
    for i, (a, ba) in enumerate(boxes):
        for b, bb in boxes[i + 1:]:
            apart = ba[2] <= bb[0] or bb[2] <= ba[0] or ba[3] <= bb[1] or bb[3] <= ba[1]
            assert apart, f"{svg.get('class')}: labels {a!r} and {b!r} overlap"


def _svgs(html: str) -> list[ET.Element]:
    root = ET.fromstring(html.split("\n", 1)[1])
    return list(root.iter(f"{NS}svg"))


def _ic(gpus_per_node: int, domain: int, switch_trays: int = 0, rails: int = 8) -> Interconnect:
    return Interconnect(scaleup_tech="nvlink5", scaleup_domain_gpus=domain, scaleup_uni_gb_per_s=900.0,
                        scaleout_fabric="ib-ndr", scaleout_kind="infiniband", nic="cx7-400g", nics_per_node=rails,
                        nic_gbit_per_gpu=400.0, required_gbit_per_gpu=100.0, rails=rails, reasons=[],
                        gpus_per_node=gpus_per_node, scaleup_switch_trays=switch_trays)


def _picture(spec: ClosSpec, ic: Interconnect) -> ET.Element:
    topo = build_topology(size_clos(spec), switch="qm9700", port_gbit=400.0)
    return ET.fromstring(topology_svg(topo, ic, title=topology_title(topo, ic)))


def _texts(svg: ET.Element) -> str:
    return " | ".join("".join(e.itertext()) for e in svg.iter(f"{NS}text"))


def _groups(svg: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in svg.iter() if cls in (g.get("class") or "").split()]


HGX_TWO = ClosSpec(radix=64, nodes=60, rails=8)  # 2 SUs of 32 (RA-11333-001): 16 leaves, 8 spines
HGX_THREE = ClosSpec(radix=64, nodes=4000, rails=8)  # 125 SUs: beyond 2,048 GPUs, three tiers
NVL72 = ClosSpec(radix=64, nodes=1548, rails=4)  # 6,192 GB200 GPUs in 86 racks, three tiers


def test_two_and_three_tier_fabrics_are_drawn_differently():
    two, three = _picture(HGX_TWO, _ic(8, 8)), _picture(HGX_THREE, _ic(8, 8))
    assert (two.get("data-tiers"), three.get("data-tiers")) == ("2", "3")
    assert [g.get("data-tier") for g in _groups(two, "tier")] == ["spine", "leaf"]
    assert [g.get("data-tier") for g in _groups(three, "tier")] == ["spine", "core", "leaf"]
    # three tiers: core groups of 4 joining spine j of every pod, pod 1 outlined, the other pods counted
    (core,) = [g for g in _groups(three, "tier") if g.get("data-tier") == "core"]
    assert core.get("data-switches") == "512" and core.get("data-groups") == "32"
    assert _groups(three, "pod") and [g.get("data-what") for g in _groups(three, "counted")] == ["units", "pods"]
    assert "pods 2\u201332" in _texts(three) and "x 31 pods" in _texts(three)
    assert not _groups(two, "pod") and not [g for g in _groups(two, "tier") if g.get("data-tier") == "core"]
    assert ET.tostring(two) != ET.tostring(three)


def test_scalable_units_rails_and_the_oversubscription_are_shown():
    svg = _picture(ClosSpec(radix=64, nodes=200, rails=8, oversubscription=3.0), _ic(8, 8))
    text = _texts(svg)
    assert svg.get("data-units") == "7" and "7 scalable units (SU) of 32" in text
    assert "x 6 SUs" in text  # SU 1 drawn, the other 6 counted
    # the leaf port split as built (64 ports at 3:1: 32 down, 11 up, the fewest spines) and its ratio, in words and bars
    assert "32 down : 11 up ports" in text and "2.91:1 oversubscribed" in text
    (bars,) = _groups(svg, "port-bars")
    down, up = (float(r.get("width")) for r in bars.iter(f"{NS}rect"))
    assert down / up == pytest.approx(32 / 11, rel=0.01)
    # uplinks thinner than the non-blocking fabric's, in proportion
    blocking = _picture(ClosSpec(radix=64, nodes=200, rails=8), _ic(8, 8))
    stroke = {s: float(g.get("data-stroke")) for s, p in (("over", svg), ("full", blocking))
              for g in _groups(p, "links") if g.get("data-between") == "leaf-spine"}
    assert stroke["over"] == pytest.approx(stroke["full"] * 11 / 32, rel=0.01)
    # rail-optimized: rail i's leaf in the rail's colour, and every server's GPU i wired to it
    rails = [e.get("data-rail") for e in svg.iter(f"{NS}text") if e.get("class") == "rail-label"]
    assert rails == [str(r) for r in range(1, 9)]
    (links,) = [g for g in _groups(svg, "links") if g.get("data-between") == "node-leaf"]
    colours = {line.get("stroke") for line in links.iter(f"{NS}line")}
    assert len(colours) == 8


def test_an_nvl72_plan_draws_racks_with_their_nvlink_switch_trays():
    svg = _picture(NVL72, _ic(4, 72, switch_trays=9, rails=4))
    racks = _groups(svg, "rack")
    assert racks and all(r.get("data-trays") == "18" and r.get("data-switch-trays") == "9" for r in racks)
    first = racks[0]
    trays = [r for r in first.iter(f"{NS}rect") if r.get("class") == "tray"]
    switches = [r for r in first.iter(f"{NS}rect") if r.get("class") == "nvswitch-tray"]
    assert (len(trays), len(switches)) == (18, 9)
    assert _groups(svg, "racks")[0].get("data-racks") == "86"
    assert "86 NVL72 racks" in _texts(svg)
    # an 8-GPU HGX server plan draws servers, not racks
    assert not _groups(_picture(HGX_TWO, _ic(8, 8)), "rack")


@pytest.mark.parametrize("spec", [HGX_TWO, HGX_THREE, NVL72, ClosSpec(radix=64, nodes=300, rails=8, layout="rail-only"),
                                  ClosSpec(radix=64, nodes=324, rails=1, planes=2, layout="fat-tree", oversubscription=3),
                                  ClosSpec(radix=32, nodes=100, rails=8, scalable_unit_nodes=32),
                                  ClosSpec(radix=64, nodes=6, rails=1, planes=2, layout="fat-tree"),
                                  ClosSpec(radix=64, nodes=8_000, rails=8, planes=2)],
                         ids=["hgx-2", "hgx-3", "nvl72-3", "rail-only", "front-end", "2-leaves-per-rail", "single",
                              "128k-gpus"])
def test_topology_pictures_stay_small_and_their_labels_apart(spec):
    domain = 72 if spec is NVL72 else 8
    svg = _picture(spec, _ic(4 if domain == 72 else 8, domain, 9 if domain == 72 else 0, rails=spec.rails))
    assert len(list(svg.iter())) <= MAX_ELEMENTS
    assert len(ET.tostring(svg)) < 60_000
    assert_labels_apart(svg)


def test_a_topology_without_clos_parameters_gets_counts(plan, options):
    topo = plan.training.topology.model_copy(update={"clos": None})
    svg = ET.fromstring(topology_svg(topo, None, title="hand-made"))
    assert {g.get("data-tier"): g.get("data-switches") for g in _groups(svg, "tier")} == {"spine": "16", "leaf": "32"}
    assert_labels_apart(svg)


def test_serving_roofline_plots_the_achieved_points(plan, options):
    """Decode (memory-bound) and prefill at the throughput the plan achieves, under the roof."""
    rf = plan.serving.roofline.model_copy(update={"prefill_achieved_tflops": 1100.0, "decode_achieved_tflops": 90.0})
    odd = plan.model_copy(update={"serving": plan.serving.model_copy(update={"roofline": rf})})
    (_, roof) = [s for s in _svgs(render(odd, "html", options)) if s.get("class") == "roofline"]
    markers = {g.get("data-phase"): g for g in roof.iter(f"{NS}g") if g.get("class") == "marker"}
    for name, got in (("prefill", 1100.0), ("decode", 90.0)):
        g = markers[name]
        assert float(g.get("data-achieved-tflops")) == got < float(g.get("data-roof-tflops"))
        dot = [c for c in g.iter(f"{NS}circle") if c.get("class") == "achieved"][0]
        top = [c for c in g.iter(f"{NS}circle") if c.get("class") == "roof-point"][0]
        assert float(dot.get("cy")) > float(top.get("cy"))  # below the roof on screen
    assert markers["decode"].get("data-bound") == "memory"
    assert "achieves 90 of the roof's 208 TFLOP/s (43%)" in _texts(roof)


@pytest.mark.parametrize("example", ["llama-70b-train-serve", "frontier-405b-training", "chat-8b-serving",
                                     "moe-serving"])
def test_every_picture_of_the_example_reports_keeps_labels_apart(example, tmp_path):
    from gpuplan.cli.app import main

    out = tmp_path / "r.html"
    with pytest.raises(SystemExit):
        main(["recommend", f"examples/{example}.toml", "--format", "html", "-o", str(out), "-q"])
    svgs = _svgs(out.read_text())
    assert svgs
    for svg in svgs:
        assert_labels_apart(svg)
    roofs = [s for s in svgs if s.get("class") == "roofline"]
    assert roofs and all(g.get("data-achieved-tflops") for s in roofs for g in s.iter(f"{NS}g")
                         if g.get("class") == "marker")


def test_a_part_filled_rack_shows_the_power_of_the_servers_it_holds():
    """One 8-GPU H100 server (10.2 kW, catalog node power) in a rack with room for more: the rack
    is labelled with that server's draw, not a fraction of it."""
    from gpuplan.core.contract import Bom
    from gpuplan.render.svg_charts import rack_svg

    bom = Bom(items=[], capex_usd=0.0, unpriced_parts=[], power_kw=10.2, network_capex_usd=0.0,
              network_power_kw=0.0, racks=1, rack_power_kw=10.2, servers_per_rack=4)
    svg = ET.fromstring(rack_svg(bom, servers=1, title="t"))
    (rack,) = _groups(svg, "rack")
    assert rack.get("data-kw") == "10.2" and rack.get("data-servers") == "1"
    assert "1 compute rack holding 1 server (room for 4)" in _texts(svg)
    full = ET.fromstring(rack_svg(bom.model_copy(update={"rack_power_kw": 40.8}), servers=6, title="t"))
    assert [r.get("data-kw") for r in _groups(full, "rack")] == ["40.8", "20.4"]
    assert "2 compute racks of 4 servers" in _texts(full)
