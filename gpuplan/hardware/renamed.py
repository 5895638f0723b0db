"""Catalog keys renamed so that their unit cannot be misread (issue 13): an ``_gbps`` key read as
gigabits to anyone from networking, ``mem_bw_tbps`` as terabits, ``memory_gib`` as a binary size.

A catalog or overlay record that still uses an old key is refused with one line naming the file,
the record, the old key and the new one, not with "unknown field" (docs/catalog.md, "Renamed keys").
rename-keys: skip-file  (/work/tools/rename_keys.py leaves this table of old names alone)
"""

from __future__ import annotations

from typing import Any

from gpuplan.core.errors import InputError
from gpuplan.core.io import clip

#: record kind -> old key -> (new key, unit).
RENAMED: dict[str, dict[str, tuple[str, str]]] = {
    "gpu": {
        "mem_bw_tbps": ("mem_bw_tb_per_s", "TB/s"),
        "scaleup_uni_gbps": ("scaleup_uni_gb_per_s", "GB/s"),
        "scaleup_p2p_uni_gbps": ("scaleup_p2p_uni_gb_per_s", "GB/s"),
        "host_link_uni_gbps": ("host_link_uni_gb_per_s", "GB/s"),
        "memory_gib": ("memory_label_gb", "the vendor's label"),
    },
    "part": {
        "write_gbps": ("write_gb_per_s", "GB/s"),
        "read_gbps": ("read_gb_per_s", "GB/s"),
    },
}


def refuse_renamed(kind: str, item: dict[str, Any], *, file: str) -> None:
    """Raise if ``item`` (one ``[[kind]]`` record as read) uses a renamed key."""
    renamed = RENAMED.get(kind)
    if not renamed:
        return
    for old in item:
        if old in renamed:
            new, unit = renamed[old]
            ident = item.get("id")
            record = f"{kind}[{clip(ident)}]" if isinstance(ident, str) else kind
            raise InputError(f"renamed to {new} ({unit})", file=file, field=f"{record}.{old}")
