"""Per-GPU memory against Korthikanti et al. 2022 (arXiv:2205.05198) Table 2 and Figure 1."""

from __future__ import annotations

import pytest

from gpuplan.training.layout import Layout
from gpuplan.training.memory import (
    GIB,
    in_flight,
    layer_activation_bytes,
    model_state_bytes,
)
from tests.training.conftest import GPT_22B, GPT_175B, arch_of

# Figure 1 of Korthikanti 2022 (values as transcribed in calculon-ai/calculon
# calculon/llm/validation.py, seqsel_fig1): GiB per GPU.
FIG1 = {
    "22b": {"states": 45.5625, "none": 59.25, "seqsel": 9.5625},
    "175b": {"states": 45.5625, "none": 66.84375, "seqsel": 12.3515625},
}


def _fig1_layouts(model):
    """The Figure 1 configurations (calculon validation/seqsel/fig1/*.json)."""
    if model == "22b":
        base = {"tp": 8, "pp": 1, "dp": 1, "micro_batch": 4, "zero": 0}
        batch = 4
    else:
        base = {"tp": 8, "pp": 8, "dp": 1, "vp": 3, "micro_batch": 1, "zero": 0}
        batch = 64
    none = Layout(**base, recompute="none", sequence_parallel=False)
    seqsel = Layout(**base, recompute="selective", sequence_parallel=True)
    return batch, none, seqsel


@pytest.mark.parametrize("model, fields", [("22b", GPT_22B), ("175b", GPT_175B)])
def test_figure1_model_states_and_activations_within_10_percent(evaluator, model, fields):
    batch, none, seqsel = _fig1_layouts(model)
    ev = evaluator(arch_of(**fields), seq=2048, batch=batch, precision="fp16")
    assert ev.attention == "materialized"  # fp16 Megatron runs of 2022: no FlashAttention
    fig = FIG1[model]
    m_none, m_sel = ev.memory(none), ev.memory(seqsel)
    assert m_none.model_states / GIB == pytest.approx(fig["states"], rel=0.10)
    assert m_none.activations / GIB == pytest.approx(fig["none"], rel=0.10)
    assert m_sel.activations / GIB == pytest.approx(fig["seqsel"], rel=0.10)


def test_model_states_use_the_18_byte_convention(evaluator, cal):
    # 22B over TP8: 2.76e9 parameters per GPU x 18 B = 46.2 GiB (Figure 1: 45.6).
    ev = evaluator(arch_of(**GPT_22B), batch=4)
    lay = Layout(tp=8, pp=1, dp=1, zero=0)
    w, g, o = model_state_bytes(ev.job.arch, lay, cal, "fp16")
    params = w / 2
    assert cal.state_convention == "mixed-adam-fp32-grads"
    assert (g / params, o / params) == (4, 12)
    assert params == pytest.approx(ev.job.arch.total_params / 8, rel=0.01)


@pytest.mark.parametrize("zero, expect", [(0, 18.0), (1, 6 + 12 / 16), (2, 2 + 16 / 16), (3, 18 / 16)])
def test_zero_stages_shard_states_over_data_parallel(evaluator, cal, zero, expect):
    # ZeRO (Rajbhandari et al. 2020): 1 shards optimizer, 2 also gradients, 3 also weights.
    ev = evaluator(arch_of(**GPT_22B), batch=64)
    lay = Layout(tp=8, pp=1, dp=16, zero=zero)
    base = sum(model_state_bytes(ev.job.arch, Layout(tp=8, pp=1, dp=1, zero=0), cal, "bf16")) / 18
    total = sum(model_state_bytes(ev.job.arch, lay, cal, "bf16"))
    if zero == 3:
        # FSDP also holds two gathered layers of 16-bit weights.
        total -= 2 * 2 * ev.job.arch.attention_params_per_layer / 8
        total -= 2 * 2 * (ev.job.arch.dense_mlp_params + ev.job.arch.norm_params_per_layer) / 8
    assert total / base == pytest.approx(expect, rel=1e-6)


def _per_layer(cal, tp, sp, rc, a=64, h=6144, s=2048, b=1):
    arch = arch_of(layers=1, hidden=h, heads=a, vocab=51200)
    lay = Layout(tp=tp, pp=1, dp=1, micro_batch=b, recompute=rc, sequence_parallel=sp)
    return layer_activation_bytes(arch, s, b, lay, "materialized", cal, False) / (s * b * h)


def test_table2_activation_formulas(cal):
    a, h, s, t = 64, 6144, 2048, 8
    score = 5 * a * s / h
    assert _per_layer(cal, 1, False, "none") == pytest.approx(34 + score)
    assert _per_layer(cal, t, False, "none") == pytest.approx(10 + 24 / t + score / t)
    assert _per_layer(cal, t, True, "none") == pytest.approx((34 + score) / t)
    assert _per_layer(cal, t, False, "selective") == pytest.approx(10 + 24 / t)
    assert _per_layer(cal, t, True, "selective") == pytest.approx(34 / t)
    assert _per_layer(cal, 1, False, "full") == pytest.approx(2)


def test_flash_attention_drops_the_score_matrix(cal):
    arch = arch_of(layers=1, hidden=6144, heads=64, vocab=51200)
    lay = Layout(tp=1, pp=1, dp=1)
    flash = layer_activation_bytes(arch, 2048, 1, lay, "flash", cal, False) / (2048 * 6144)
    assert flash == pytest.approx(34 + 4 * 64 / 6144)  # plus the fp32 log-sum-exp per head


def test_gated_mlp_keeps_gate_up_and_fc2_inputs(cal):
    arch = arch_of(layers=1, hidden=4096, heads=32, ffn=11008, gated_mlp=True, vocab=32000)
    lay = Layout(tp=1, pp=1, dp=1)
    per = layer_activation_bytes(arch, 4096, 1, lay, "flash", cal, False) / (4096 * 4096)
    # 10 replicated + Q, K, V, out (8) + 3 x 2 x ffn/h + lse
    assert per == pytest.approx(10 + 8 + 6 * 11008 / 4096 + 4 * 32 / 4096)


def test_pipeline_in_flight_micro_batches():
    # 1F1B: the first stage holds min(p, m) micro-batches; interleaved: x (1 + (p-1)/(p v)).
    assert in_flight(Layout(tp=1, pp=8, dp=1, micro_batch=1), 64) == 8
    assert in_flight(Layout(tp=1, pp=8, dp=1, micro_batch=1), 4) == 4
    assert in_flight(Layout(tp=1, pp=8, dp=1, vp=3, micro_batch=1), 64) == pytest.approx(8 * (1 + 7 / 24))
    assert in_flight(Layout(tp=1, pp=1, dp=1), 64) == 1
    # Rank r: 1F1B p - r; interleaved (2 (p-r-1) + (v-1) p + 1) chunks of 1/v of the rank's layers
    # (Megatron-Core get_pp_rank_microbatches): the last of 8 ranks at VP 3 holds 17 chunks.
    assert in_flight(Layout(tp=1, pp=8, dp=1, micro_batch=1), 64, rank=1) == 7
    assert in_flight(Layout(tp=1, pp=8, dp=1, micro_batch=1), 64, rank=7) == 1
    assert in_flight(Layout(tp=1, pp=8, dp=1, vp=3, micro_batch=1), 64, rank=7) == pytest.approx(17 / 3)


#: Llama 3.1 70B, one layer: attention 2 x 8192^2 + 2 x 8192 x 1024, SwiGLU 3 x 8192 x 28672,
#: two norms 2 x 8192; the embedding 128,256 x 8192.
L70B_LAYER, L70B_EMBEDDING = 855_654_400, 1_050_673_152
#: Bytes one Llama 3.1 70B layer keeps for one micro-batch of 8,192 tokens at TP 4 with SP and
#: FlashAttention (Korthikanti Table 2 per tensor): [10 h (norm and GEMM inputs, masks)
#: + 2 (8192 + 2 x 1024) (Q, K, V) + 2 x 8192 (attention output) + 6 x 28672 (gate, up, FC2 inputs)
#: + 4 x 64 (log-sum-exp)] x 8192 tokens / 4 = 291,072 x 2,048.
L70B_LAYER_ACTS_TP4 = 596_115_456


def test_even_pipeline_peaks_on_the_first_rank_with_the_embedding(evaluator, preset):
    """Llama 3.1 70B on PP 8 x TP 8: ten layers a rank; rank 0 holds the embedding and 8 micro-batches
    in flight, the last rank the output layer (as large) and one: rank 0 is the fullest."""
    ev = evaluator(preset("llama-3.1-70b"), gpu="h100-sxm-80gb", seq=8192, batch=256, precision="bf16")
    for vp in (1, 5):
        m = ev.memory(Layout(tp=8, pp=8, dp=4, vp=vp, micro_batch=1, sequence_parallel=True, zero=1))
        assert m.rank == 0
        assert m.weights == 2 * (10 * L70B_LAYER + L70B_EMBEDDING) / 8


def test_uneven_pipeline_peaks_on_a_middle_rank_without_the_embedding(evaluator, preset):
    """Llama 3.1 70B on 480 H100 as examples/llama-70b-480-h100.toml lays it out: PP 15 x TP 4,
    VP 6, 256 micro-batches; 80 layers split 1 + 13 x 6 + 1 (Megatron-Core uneven first/last
    stages). Rank 1 holds six layers and no embedding, and (2 x 13 + 5 x 15 + 1) / 6 = 17
    micro-batches of them in flight, plus one layer being differentiated: 103 layer-micro-batches."""
    ev = evaluator(preset("llama-3.1-70b"), gpu="h100-sxm-80gb", seq=8192, batch=2048, precision="bf16")
    m = ev.memory(Layout(tp=4, pp=15, dp=8, vp=6, micro_batch=1, sequence_parallel=True, zero=1))
    assert m.rank == 1
    assert m.weights == 2 * 6 * L70B_LAYER / 4
    assert m.activations == pytest.approx(103 * L70B_LAYER_ACTS_TP4, rel=1e-12)


def test_large_vocabulary_puts_the_peak_on_the_last_rank(evaluator, catalog):
    """Llama 3.1 8B with a 262,144-token vocabulary on PP 4, full recompute, sequences of 8,192: the
    last rank keeps one micro-batch of its 8 layers' inputs (8 x 64 MiB), one layer being
    differentiated (1,209,008,128 B: 10 h + 2 (4096 + 2 x 1024) + 2 x 4096 + 6 x 14336 + 4 x 32 bytes
    per token) and the fp32 logits, 4 x 8192 x 262144 = 8 GiB; rank 0 keeps 4 micro-batches (2 GiB)."""
    arch = arch_of(**{**catalog.models["llama-3.1-8b"].arch_fields(), "vocab": 262144})
    ev = evaluator(arch, gpu="h100-sxm-80gb", seq=8192, batch=256, precision="bf16")
    m = ev.memory(Layout(tp=1, pp=4, dp=8, micro_batch=1, recompute="full", zero=1))
    assert m.rank == 3
    assert m.activations == 8 * 64 * 2**20 + 1_209_008_128 + 8 * GIB


def test_partial_recompute_interpolates(evaluator):
    ev = evaluator(arch_of(**GPT_175B), batch=64)
    base = Layout(tp=8, pp=8, dp=1, micro_batch=1, sequence_parallel=True, zero=0)
    none = ev.memory(base).activations
    full = ev.memory(base._replace(recompute="full")).activations
    half = ev.memory(base._replace(recompute="full", recompute_layers=6)).activations
    assert full < half < none
    assert half == pytest.approx((none + full) / 2, rel=0.15)


def test_overhead_and_capacity(catalog, cal):
    """22B on TP8, micro-batch 4, no recompute, no SP (Korthikanti 2022 Figure 1: 59.25 GiB of
    activations, 45.56 GiB of model states per GPU). With a 3 GiB runtime and 10 % fragmentation
    (test values) the overhead is 3 + 0.1 x 59.25 = 8.93 GiB, and without fragmentation exactly 3 GiB;
    45.56 + 59.25 + 8.93 = 113.7 GiB does not fit the 79.5 GiB an 80 GB A100 reports usable."""
    from gpuplan.physics.network import network_for
    from gpuplan.training.search import Evaluator
    from gpuplan.training.timing import Job

    gpu = catalog.gpu("a100-sxm-80gb")
    job = Job(arch=arch_of(**GPT_22B), seq=2048, batch=4, precision="fp16", tokens=4 * 2048.0,
              framework="megatron-lm")
    lay = Layout(tp=8, pp=1, dp=1, micro_batch=4, zero=0)

    def memory(runtime_gib: float, fragmentation: float):
        c = cal.model_copy(update={"runtime_overhead_gib": runtime_gib, "fragmentation_fraction": fragmentation})
        return Evaluator(job, gpu, network_for(gpu, catalog), c).memory(lay)

    m, bare = memory(3.0, 0.10), memory(3.0, 0.0)
    assert bare.overhead == 3 * GIB
    assert m.activations == bare.activations  # the overhead never changes what is stored
    assert m.overhead / GIB == pytest.approx(8.93, rel=0.10)
    assert m.capacity == 79.5 * GIB
    assert m.total / GIB == pytest.approx(113.7, rel=0.10)
    assert not m.fits and m.headroom < 0
