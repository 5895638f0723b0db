"""Catalog listings (``gpuplan catalog KIND [ID]``) as text tables or JSON."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from gpuplan.hardware.loader import Catalog
from gpuplan.core.errors import InputError
from gpuplan.render.safe import plain_text
from gpuplan.render.text import num, table


def _records(catalog: Catalog, kind: str) -> dict:
    return getattr(catalog, kind)


def render_catalog(catalog: Catalog, kind: str, ident: str | None, fmt: str, *, width: int | None = None) -> str:
    """A listing or one record; text tables fit ``width`` (wrapped at whole words, cut with '…')."""
    if fmt not in ("table", "json"):
        raise InputError(f"expected table or json, got {fmt!r}", field="--format")
    if kind == "parts":
        return _parts(catalog, ident, fmt, width)
    records = _records(catalog, kind)
    if ident is not None:
        rec = catalog.gpu(ident) if kind == "gpus" else catalog.lookup(kind.rstrip("s") if kind != "switches" else "switch", ident)
        text = _show(catalog, rec, fmt, width)
    elif fmt == "json":
        text = json.dumps([r.model_dump(mode="json") for r in records.values()], indent=2) + "\n"
    else:
        text = _list(kind, records, width)
    return text if fmt == "json" else plain_text(text)  # JSON: ensure_ascii escapes everything


def _show(catalog: Catalog, rec: object, fmt: str, width: int | None = None) -> str:
    data = rec.model_dump(mode="json")  # type: ignore[attr-defined]
    if fmt == "json":
        data["sources_resolved"] = {g: catalog.sources[s].model_dump(mode="json") for g, s in data["sources"].items()}
        return json.dumps(data, indent=2) + "\n"
    rows = [[k, json.dumps(v) if isinstance(v, (dict, list)) else v] for k, v in data.items() if k != "sources"]
    text = table(["field", "value"], rows, width=width)
    lines = [f"{g}: {catalog.sources[s].title} ({catalog.sources[s].date}, confidence {catalog.sources[s].confidence})"
             + (f" {catalog.sources[s].url}" if catalog.sources[s].url else "") for g, s in sorted(data["sources"].items())]
    if width is not None:  # whole words; a URL longer than the line stays whole on its own line
        lines = [textwrap.fill(line, width, initial_indent="  ", subsequent_indent="    ", break_long_words=False,
                               break_on_hyphens=False).lstrip() for line in lines]
    return text + "\nsources:\n" + "".join(f"  {line}\n" for line in lines)


def _gpu_price(g: Any) -> str:
    """The GPU's own price, else its server's price per GPU marked '*' (a10, mi325x: priced by server)."""
    if g.price_usd is not None or g.node_price_usd is None:
        return num(g.price_usd)
    return num(g.node_price_usd / g.gpus_per_node) + "*"


def _list(kind: str, records: dict, width: int | None = None) -> str:
    if kind == "gpus":
        rows = [[g.id, g.vendor, g.form_factor, num(g.memory_label_gb), num(g.mem_bw_tb_per_s), num(g.bf16_dense_tflops or g.fp16_dense_tflops),
                 num(g.fp8_dense_tflops), f"{g.scaleup_tech} x{g.scaleup_domain}", num(g.tdp_w),
                 _gpu_price(g), num(g.cloud_usd_per_gpu_hour), ", ".join(sorted(set(g.sources.values())))]
                for g in records.values()]
        text = table(["id", "vendor", "form", "mem GB", "TB/s", "bf16 TF", "fp8 TF", "scale-up", "TDP W", "price $",
                      "cloud $/h", "sources"], rows, right={3, 4, 5, 6, 8, 9, 10}, width=width, fold=11)
        if any(row[9].endswith("*") for row in rows):
            text += "* no GPU price in the catalog: the server's price over its GPUs (server included)\n"
        return text
    if kind == "models":
        from gpuplan.model.arch import ArchitectureSpec, resolve

        rows = []
        for m in records.values():
            arch, _ = resolve(ArchitectureSpec.model_validate(m.arch_fields()))
            rows.append([m.id, m.name, f"{arch.total_params / 1e9:.1f}B", f"{arch.active_params / 1e9:.1f}B",
                         arch.layers, arch.hidden, f"{arch.heads}/{arch.kv_heads}", ", ".join(sorted(set(m.sources.values())))])
        return table(["id", "name", "params", "active", "layers", "hidden", "heads/kv", "sources"], rows, right={2, 3, 4, 5},
                     width=width, fold=7)
    rows = []
    for r in records.values():
        d = r.model_dump(mode="json")
        detail = {k: v for k, v in d.items() if k not in ("id", "name", "sources") and not isinstance(v, (list, dict))}
        rows.append([r.id, d.get("name", ""), ", ".join(f"{k}={v}" for k, v in list(detail.items())[:5]),
                     ", ".join(sorted(set(r.sources.values())))])
    return table(["id", "name", "figures", "sources"], rows, width=width, fold=3)


#: The kinds ``gpuplan catalog parts`` lists, with the BOM category their lines take.
PART_KINDS = (("gpus", "server"), ("switches", "switch"), ("nics", "nic"), ("optics", "optic"), ("parts", None))


def part_rows(catalog: Catalog) -> list[dict]:
    """Every part a BOM can price: price, date, source, estimate flag and uncertainty (docs/bom.md)."""
    rows = []
    for kind, category in PART_KINDS:
        for rec in getattr(catalog, kind).values():
            if kind == "gpus":
                price, est, unc = rec.node_price_usd, rec.node_price_estimate, rec.node_price_uncertainty
                group, name = ("node_price" if "node_price" in rec.sources else "price"), rec.server_name
            else:
                price, est, unc = rec.price_usd, rec.price_estimate, rec.price_uncertainty
                group, name = "price", rec.name
            sid = rec.sources.get(group) or rec.sources.get("default")
            date = getattr(rec, "price_date", None) or (catalog.sources[sid].date if sid in catalog.sources else None)
            rows.append({"kind": category or rec.category, "id": rec.id, "name": name, "price_usd": price,
                         "price_date": date if price is not None else None, "source": sid if price is not None else None,
                         "estimate": est, "price_uncertainty": unc})
    return rows


def _parts(catalog: Catalog, ident: str | None, fmt: str, width: int | None = None) -> str:
    if ident is not None:
        for kind, _ in PART_KINDS:
            table_ = getattr(catalog, kind)
            key = catalog.aliases.get(ident, ident) if kind == "gpus" else ident
            if key in table_:
                return _show(catalog, table_[key], fmt, width)
        raise InputError(f"unknown part {ident!r}; see 'gpuplan catalog parts'")
    rows = part_rows(catalog)
    if fmt == "json":
        return json.dumps(rows, indent=2) + "\n"
    return table(["kind", "id", "price $", "date", "source", "estimate"],
                 [[r["kind"], r["id"], num(r["price_usd"]) if r["price_usd"] is not None else "unpriced",
                   r["price_date"] or "-", r["source"] or "-",
                   (f"yes, +/-{r['price_uncertainty'] * 100:.0f}%" if r["price_uncertainty"] else "yes")
                   if r["estimate"] else "-"] for r in rows], right={2}, width=width, fold=4)
