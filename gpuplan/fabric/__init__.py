"""The scale-out fabric: interconnect choice, closed-form Clos sizing, graph checks, link media.

Modules (docs/fabric-model.md): ``demand`` (what a planner asks of the network), ``interconnect``
(``design_fabric``), ``sizing`` (closed-form leaves/spines/cores), ``topology`` (the Topology
result), ``media`` (optics and cables), ``graph`` (build and checks on a plain adjacency;
exports through networkx, imported lazily) and ``cases`` (fabric validation cases). Nothing is
imported here so that the CLI start-up path stays light.
"""
