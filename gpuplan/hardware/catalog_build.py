"""Write the pre-parsed catalog (:mod:`gpuplan.hardware.preparsed`) when the wheel is built.

``hatch_build.py`` calls :func:`write_preparsed` on ``catalog/``; so can a packager that builds
the wheel another way (``python -c "from gpuplan.hardware.catalog_build import write_preparsed;
..."``). Without the file gpuplan works the same, parsing the TOML at every start.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from gpuplan.hardware.loader import Catalog, parse_dir, catalog_classes, load_catalog
from gpuplan.hardware.preparsed import preparsed_text


def write_preparsed(root: Path, out: Path) -> None:
    """Load the catalog in ``root`` the normal way (every check and validation of the loader) and
    write its pre-parsed file to ``out``; a ValueError when it would not read back the same."""
    catalog = load_catalog(base=root)
    files = [(rel, blob, data) for _, rel, blob, data in parse_dir(root)]
    parts = {f.name: getattr(catalog, f.name) for f in fields(Catalog)}
    out.write_text(preparsed_text(parts, files, catalog_classes()), encoding="utf-8")
