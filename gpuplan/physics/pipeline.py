"""Pipeline stages: how many layers the fullest stage holds (both phases split layers the same way)."""

from __future__ import annotations


def layers_per_stage(layers: int, pp: int) -> int:
    """Layers on the fullest of ``pp`` pipeline stages: ``ceil(layers / pp)`` (a PP below 1 counts
    as 1). Megatron-Core and the serving engines give each stage ``ceil(L / PP)`` or fewer."""
    return -(-layers // max(pp, 1))
