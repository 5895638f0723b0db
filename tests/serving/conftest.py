"""Helpers for the serving tests: presets resolved from the catalog and small profiles."""

from __future__ import annotations

import pytest

from gpuplan.model.arch import Architecture, ArchitectureSpec, resolve
from gpuplan.model.profile import load_profile_text


@pytest.fixture(scope="session")
def preset(catalog):
    def get(name: str) -> Architecture:
        return resolve(ArchitectureSpec.model_validate(catalog.models[name].arch_fields()))[0]

    return get


@pytest.fixture(scope="session")
def k(catalog):
    from gpuplan.hardware.serving_calibration import serving_constants

    return serving_constants(catalog)


@pytest.fixture(scope="session")
def serving_profile(catalog):
    def make(model: str = "llama-3.1-8b", qps: float = 5, prompt: int = 1000, output: int = 256,
             ttft_ms: float = 5000, tpot_ms: float = 100, precision: str = "bf16", pricing: str = "capex",
             constraints: str = "", percentile: str = "p99", spare: int = 1, context: int | None = None):
        ctx = f"context_length = {context}\n" if context else ""
        text = (f'[model]\npreset = "{model}"\n[serving]\nqps = {qps}\nprompt_tokens = {prompt}\n'
                f'output_tokens = {output}\n{ctx}ttft_ms = {ttft_ms}\ntpot_ms = {tpot_ms}\nprecision = "{precision}"\n'
                f'latency_percentile = "{percentile}"\nspare_replicas = {spare}\n'
                f'[constraints]\npricing = "{pricing}"\n{constraints}\n')
        return load_profile_text(text, "test.toml", catalog)

    return make
