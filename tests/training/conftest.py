"""Fixtures of the training tests: calibration, architectures of the published runs, helpers."""

from __future__ import annotations

import pytest

from gpuplan.model.arch import ArchitectureSpec, resolve
from gpuplan.physics.network import network_for
from gpuplan.model.profile import load_profile_text
from gpuplan.hardware.training_calibration import calibration
from gpuplan.training.search import Evaluator
from gpuplan.training.timing import Job


def arch_of(**fields):
    arch, _ = resolve(ArchitectureSpec.model_validate(fields))
    return arch


#: Korthikanti et al. 2022 Table 3 / Narayanan 2021 Table 1 models (Megatron GPT, vocab 51200).
GPT_22B = {"layers": 48, "hidden": 6144, "heads": 64, "vocab": 51200}
GPT_175B = {"layers": 96, "hidden": 12288, "heads": 96, "vocab": 51200}


@pytest.fixture(scope="session")
def cal(catalog):
    return calibration(catalog)


@pytest.fixture(scope="session")
def preset(catalog):
    def get(name):
        return arch_of(**catalog.models[name].arch_fields())
    return get


@pytest.fixture
def evaluator(catalog, cal):
    def make(arch, gpu="a100-sxm-80gb", seq=2048, batch=64, precision="fp16", tokens=None, network=None,
             framework=""):
        # The fp16 runs of these tests are the Megatron-LM 2021-2022 ones; others use the default.
        if framework == "":
            framework = "megatron-lm" if precision == "fp16" else None
        g = catalog.gpu(gpu)
        job = Job(arch=arch, seq=seq, batch=batch, precision=precision, tokens=tokens or float(batch * seq),
                  framework=framework)
        return Evaluator(job, g, network or network_for(g, catalog), cal)
    return make


@pytest.fixture
def workload(catalog):
    def make(text: str):
        return load_profile_text(text, "test.toml", catalog)
    return make
