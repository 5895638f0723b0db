"""Link media and module counts, pinned to the NVIDIA DGX H100 SuperPOD reference architecture
(RA-11333-001): 4 scalable units, 127 DGX H100 (one node slot for UFM), QM9700 switches with 32
twin-port OSFP cages of 2 x NDR400 each, every compute link a fibre with a transceiver at each end."""

from __future__ import annotations

from gpuplan.fabric.media import choose_media, count_modules, links_per_cage
from gpuplan.fabric.sizing import ClosSpec, size_clos

DGX_PER_RACK = 4  # RA-11333-001: four DGX H100 per compute rack


def _superpod_4su(catalog):
    design = size_clos(ClosSpec(radix=64, nodes=127, rails=8, scalable_unit_nodes=32, reserved_node_slots=1))
    switch, gpu = catalog.switches["qm9700"], catalog.gpus["h100-sxm-80gb"]
    return design, choose_media(design, switch, 400, gpu, DGX_PER_RACK, catalog)


def test_qm9700_carries_two_ndr_links_per_cage(catalog):
    # 64 NDR400 ports / 32 OSFP cages = 2 links per twin-port module.
    assert links_per_cage(catalog.switches["qm9700"], 400) == 2


def test_superpod_links_leave_the_rack_on_fibre_with_twin_port_modules(catalog):
    _, media = _superpod_4su(catalog)
    # A leaf serves 32 nodes across 8 racks, so node-leaf links leave the rack; the twin-port
    # cage carries links to two different nodes, so no AOC: transceiver + fibre.
    assert media.node_leaf == "optical"
    assert (media.switch_lpc, media.node_lpm, media.planes_per_cable) == (2, 2, 1)


def test_superpod_4su_cable_and_transceiver_counts(catalog):
    design, media = _superpod_4su(catalog)
    counts = count_modules(design, media)
    # RA-11333-001 Table 8: 2,040 NDR compute cables = 127 x 8 = 1,016 node-leaf + 32 leaves x
    # 32 uplinks = 1,024 leaf-spine.
    assert counts.cables == {"node-leaf": ("optical", 1016), "leaf-spine": ("optical", 1024)}
    assert sum(n for _, n in counts.cables.values()) == 2040
    # Switch-side: 48 switches (32 leaves + 16 spines) x 32 cages = 1,536 twin-port modules:
    # each leaf 16 cages down + 16 up, each spine 32 cages down.
    assert counts.switch_modules == {("leaf", "node-leaf"): 32 * 16, ("leaf", "leaf-spine"): 32 * 16,
                                     ("spine", "leaf-spine"): 16 * 32}
    assert counts.switch_total == 1536
    # Node side: "4 OSFP ports serving 8 single-port ConnectX-7" per DGX: 127 x 4 = 508.
    assert counts.node_modules == 508


def test_a_leaf_inside_the_rack_is_cabled_with_dac(catalog):
    # One SU-sized leaf group that fits in a rack of 32 nodes: every node-leaf link stays in the
    # rack; twin-port cages at both ends take one twin-port DAC per two links: 32 x 8 / 2 = 128.
    design = size_clos(ClosSpec(radix=64, nodes=32, rails=8, scalable_unit_nodes=32))
    media = choose_media(design, catalog.switches["qm9700"], 400, catalog.gpus["h100-sxm-80gb"], 32, catalog)
    assert media.node_leaf == "dac"
    counts = count_modules(design, media)
    assert counts.cables["node-leaf"] == ("dac", 128)
    assert counts.node_modules == 0
