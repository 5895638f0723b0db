"""Catalog listings (``gpuplan catalog KIND [ID]``) as text tables or JSON."""

from __future__ import annotations

import json

from gpuplan.catalog.loader import Catalog
from gpuplan.errors import InputError
from gpuplan.render.safe import plain_text
from gpuplan.render.text import num, table


def _records(catalog: Catalog, kind: str) -> dict:
    return getattr(catalog, kind)


def render_catalog(catalog: Catalog, kind: str, ident: str | None, fmt: str) -> str:
    if fmt not in ("table", "json"):
        raise InputError(f"expected table or json, got {fmt!r}", field="--format")
    records = _records(catalog, kind)
    if ident is not None:
        rec = catalog.gpu(ident) if kind == "gpus" else catalog.lookup(kind.rstrip("s") if kind != "switches" else "switch", ident)
        text = _show(catalog, rec, fmt)
    elif fmt == "json":
        text = json.dumps([r.model_dump(mode="json") for r in records.values()], indent=2) + "\n"
    else:
        text = _list(kind, records)
    return text if fmt == "json" else plain_text(text)  # JSON: ensure_ascii escapes everything


def _show(catalog: Catalog, rec: object, fmt: str) -> str:
    data = rec.model_dump(mode="json")  # type: ignore[attr-defined]
    if fmt == "json":
        data["sources_resolved"] = {g: catalog.sources[s].model_dump(mode="json") for g, s in data["sources"].items()}
        return json.dumps(data, indent=2) + "\n"
    rows = [[k, json.dumps(v) if isinstance(v, (dict, list)) else v] for k, v in data.items() if k != "sources"]
    text = table(["field", "value"], rows)
    text += "\nsources:\n" + "".join(
        f"  {g}: {catalog.sources[s].title} ({catalog.sources[s].date}, confidence {catalog.sources[s].confidence})"
        + (f" {catalog.sources[s].url}" if catalog.sources[s].url else "") + "\n"
        for g, s in sorted(data["sources"].items()))
    return text


def _list(kind: str, records: dict) -> str:
    if kind == "gpus":
        rows = [[g.id, g.vendor, g.form_factor, num(g.memory_gib), num(g.mem_bw_tbps), num(g.bf16_dense_tflops or g.fp16_dense_tflops),
                 num(g.fp8_dense_tflops), f"{g.scaleup_tech} x{g.scaleup_domain}", num(g.tdp_w),
                 num(g.price_usd), num(g.cloud_usd_per_gpu_hour), ",".join(sorted(set(g.sources.values())))]
                for g in records.values()]
        return table(["id", "vendor", "form", "mem GiB", "TB/s", "bf16 TF", "fp8 TF", "scale-up", "TDP W", "price $",
                      "cloud $/h", "sources"], rows, right={3, 4, 5, 6, 8, 9, 10})
    if kind == "models":
        from gpuplan.arch import ArchitectureSpec, resolve

        rows = []
        for m in records.values():
            arch, _ = resolve(ArchitectureSpec.model_validate(m.arch_fields()))
            rows.append([m.id, m.name, f"{arch.total_params / 1e9:.1f}B", f"{arch.active_params / 1e9:.1f}B",
                         arch.layers, arch.hidden, f"{arch.heads}/{arch.kv_heads}", ",".join(sorted(set(m.sources.values())))])
        return table(["id", "name", "params", "active", "layers", "hidden", "heads/kv", "sources"], rows, right={2, 3, 4, 5})
    rows = []
    for r in records.values():
        d = r.model_dump(mode="json")
        detail = {k: v for k, v in d.items() if k not in ("id", "name", "sources") and not isinstance(v, (list, dict))}
        rows.append([r.id, d.get("name", ""), ", ".join(f"{k}={v}" for k, v in list(detail.items())[:5]),
                     ",".join(sorted(set(r.sources.values())))])
    return table(["id", "name", "figures", "sources"], rows)
