"""Wheel build hook: ship the catalog pre-parsed (gpuplan/hardware/preparsed.py).

The wheel maps ``catalog/`` to ``gpuplan/_catalog/`` (pyproject.toml); this hook loads that
catalog with gpuplan's own loader, so every check and schema validation runs at build time, and
adds the result as ``gpuplan/_catalog.json``. A catalog that does not validate fails the build.
Editable installs get no file: they parse ``catalog/`` at every start.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class PreparsedCatalog(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = str(Path(self.root).resolve())
        sys.path.insert(0, root)
        try:
            from gpuplan.hardware.catalog_build import write_preparsed
        finally:
            sys.path.remove(root)
        self._tmp = tempfile.mkdtemp(prefix="gpuplan-catalog-")
        out = Path(self._tmp) / "_catalog.json"
        write_preparsed(Path(root) / "catalog", out)
        build_data["force_include"][str(out)] = "gpuplan/_catalog.json"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
