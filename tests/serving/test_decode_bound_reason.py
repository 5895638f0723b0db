"""The decode reason names the largest term of the modelled step and gives the times that make it so,
beside the roofline's whole-step intensity (``roofline.decode_bound``, an average over its kernels)."""

from __future__ import annotations

from pathlib import Path

from gpuplan.hardware import load_catalog
from tests.conftest import plan_file

DATA = Path(__file__).resolve().parent / "data"


def test_chat8b_decode_names_its_largest_term_with_the_times_that_make_it_so():
    """Llama-3.1-8B, 60 QPS of 1,500 + 350 tokens on MI300X (a plan signer's profile): the reason said
    "Decode is bound by compute" with "(297 FLOP/B against a ridge of 493 FLOP/B)" as its support, the
    memory side. A step carries 78 decode sequences and prompt chunks, 6.05 TFLOP in all: about 378
    tokens through 2 x 8.0B parameters, far past MI300X's FP8 ridge for the GEMMs (2 x 378 = 756
    FLOP/B of weights), while attention reads 8.59 GB of KV cache. The GEMMs' 7.2 ms (their math 5.7
    ms against 3.0 ms for their weights) outlast attention's 2.9 ms; the whole step averages 297 FLOP/B.
    7.2 + 2.9 + 1.1 = 11.2 ms."""
    path = DATA / "chat8b.toml"
    catalog = load_catalog()
    s = plan_file(path, catalog, "serving").serving
    line = next(r for r in s.reasons if r.startswith("Decode is bound"))
    assert line == ("Decode is bound by compute: a step at the target load (mean concurrency 78.0) takes 11.2 ms "
                    "per GPU: GEMMs 7.2 ms, compute-bound (math 5.7 ms, 8.03 GB of weights 3.0 ms); attention "
                    "2.9 ms on 8.59 GB of KV cache; fixed 1.1 ms; whole-step 297 FLOP/B against a 493 FLOP/B peak "
                    "ridge.")
    assert s.bound == "compute"
    assert s.roofline.decode_bound == "memory"  # the whole step's average: docs/json.md
