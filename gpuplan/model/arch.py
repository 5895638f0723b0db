"""Model architectures: the spec users write, the resolved architecture, and parameter counts.

The spec is the schema of ``[model]`` in a workload profile and of ``[case.model]`` in the
validation cases (``../shared/validation/README.md``). Every field left out takes the default
documented in ``docs/profile.md``; :func:`resolve` applies them and reports each one applied.

Parameter counts follow Narayanan et al. 2021 (arXiv:2104.04473) eq. 2 for dense GPT models,
generalised to GQA, gated MLPs (SwiGLU: three matrices), Mixture-of-Experts and MLA attention
(DeepSeek-V2/V3: low-rank compressed KV, arXiv:2405.04434 section 2.1).
"""


import math
from gpuplan.core.records import dataclass, hash_once
from functools import cached_property

from pydantic import BaseModel, model_validator

from gpuplan.core.types import STRICT, PositiveInt

DEFAULT_VOCAB = 51200
#: Aspect ratio used to derive an architecture from a bare parameter count: hidden = 128 x layers,
#: 128-wide heads, 8 KV heads, SwiGLU with ffn = 3.5 x hidden, a 128,256-token vocabulary. These
#: are the proportions of Llama-3.1 8B/70B (hidden/layers = 128 and 102, ffn/hidden = 3.5).
DERIVED_HIDDEN_PER_LAYER = 128
DERIVED_HEAD_DIM = 128
DERIVED_KV_HEADS = 8
DERIVED_FFN_RATIO = 3.5
DERIVED_VOCAB = 128256


class ArchitectureSpec(BaseModel):
    """An architecture as written in a file; omitted fields take documented defaults."""

    model_config = STRICT
    layers: PositiveInt | None = None
    hidden: PositiveInt | None = None
    heads: PositiveInt | None = None
    kv_heads: PositiveInt | None = None
    head_dim: PositiveInt | None = None
    ffn: PositiveInt | None = None
    gated_mlp: bool | None = None
    vocab: PositiveInt | None = None
    tied_embeddings: bool | None = None
    experts: int | None = None
    active_experts: PositiveInt | None = None
    expert_ffn: PositiveInt | None = None
    shared_experts: int | None = None
    dense_layers: int | None = None
    kv_lora_rank: PositiveInt | None = None
    rope_head_dim: PositiveInt | None = None
    q_lora_rank: PositiveInt | None = None
    v_head_dim: PositiveInt | None = None
    sliding_window: PositiveInt | None = None
    #: Multi-token-prediction modules trained with the model (DeepSeek-V3 ``num_nextn_predict_layers``).
    mtp_layers: int | None = None
    #: Longest sequence the model is configured for (config.json ``max_position_embeddings``): what
    #: an engine takes as its maximum model length when a run sets none.
    max_context_tokens: PositiveInt | None = None

    @model_validator(mode="after")
    def _check(self) -> "ArchitectureSpec":
        for name in ("experts", "shared_experts", "dense_layers", "mtp_layers"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.heads and self.kv_heads and self.heads % self.kv_heads:
            raise ValueError(f"kv_heads ({self.kv_heads}) must divide heads ({self.heads})")
        if self.kv_heads and self.heads and self.kv_heads > self.heads:
            raise ValueError("kv_heads exceeds heads")
        if self.experts and self.active_experts and self.active_experts > self.experts:
            raise ValueError("active_experts exceeds experts")
        if self.layers and self.dense_layers and self.dense_layers > self.layers:
            raise ValueError("dense_layers exceeds layers")
        if self.layers and self.mtp_layers and self.mtp_layers > self.layers:
            raise ValueError("mtp_layers exceeds layers")
        if (self.kv_lora_rank is None) != (self.rope_head_dim is None):
            raise ValueError("MLA needs both kv_lora_rank and rope_head_dim")
        return self

    def arch_fields(self) -> dict[str, object]:
        # attribute reads, not model_dump: a catalog preset read from the pre-parsed catalog then
        # never builds its serializer (every field here is a scalar, so the values are the same)
        values = ((k, getattr(self, k)) for k in ArchitectureSpec.model_fields)
        return {k: v for k, v in values if v is not None}


@hash_once
@dataclass(frozen=True)
class Architecture:
    """A fully resolved transformer architecture. All sizes are counts (not bytes)."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    gated_mlp: bool
    vocab: int
    tied_embeddings: bool
    experts: int = 0
    active_experts: int = 0
    expert_ffn: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    kv_lora_rank: int = 0
    rope_head_dim: int = 0
    q_lora_rank: int = 0
    v_head_dim: int = 0
    sliding_window: int = 0
    #: Multi-token-prediction modules (DeepSeek-V3, arXiv:2412.19437 section 2.2): each is one
    #: more transformer block of the last layer's kind, a 2h x h projection and the shared output
    #: head run again, trained with the model.
    mtp_layers: int = 0
    #: config.json ``max_position_embeddings`` (0: not given).
    max_context_tokens: int = 0

    # -- structure -------------------------------------------------------------------------
    @cached_property
    def is_moe(self) -> bool:
        return self.experts > 0

    @cached_property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @cached_property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    @cached_property
    def mlp_matrices(self) -> int:
        """Weight matrices per MLP: 3 for gated (SwiGLU), 2 otherwise."""
        return 3 if self.gated_mlp else 2

    # -- parameter counts --------------------------------------------------------------------
    @cached_property
    def attention_params_per_layer(self) -> int:
        h, a, d = self.hidden, self.heads, self.head_dim
        if self.is_mla:
            v = self.v_head_dim or d
            q_in = self.q_lora_rank
            q = (h * q_in + q_in * a * (d + self.rope_head_dim)) if q_in else h * a * (d + self.rope_head_dim)
            kv = h * (self.kv_lora_rank + self.rope_head_dim) + self.kv_lora_rank * a * (d + v)
            return q + kv + a * v * h
        return h * a * d + 2 * h * self.kv_heads * d + a * d * h

    @cached_property
    def dense_mlp_params(self) -> int:
        return self.mlp_matrices * self.hidden * self.ffn

    @cached_property
    def expert_params(self) -> int:
        """Parameters of one routed expert."""
        return self.mlp_matrices * self.hidden * self.expert_ffn

    @cached_property
    def moe_mlp_params(self) -> int:
        """All parameters of one MoE layer's MLP (routed + shared experts + router)."""
        return (self.experts + self.shared_experts) * self.expert_params + self.hidden * self.experts

    @cached_property
    def moe_mlp_active_params(self) -> int:
        return (self.active_experts + self.shared_experts) * self.expert_params + self.hidden * self.experts

    @cached_property
    def norm_params_per_layer(self) -> int:
        return 2 * self.hidden

    @cached_property
    def embedding_params(self) -> int:
        return self.vocab * self.hidden

    @cached_property
    def lm_head_params(self) -> int:
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    @cached_property
    def dense_layer_count(self) -> int:
        return self.layers - self.moe_layers

    @cached_property
    def transformer_params(self) -> int:
        """Parameters of all transformer blocks (no embeddings)."""
        per_layer_common = self.attention_params_per_layer + self.norm_params_per_layer
        return (self.layers * per_layer_common + self.dense_layer_count * self.dense_mlp_params
                + self.moe_layers * self.moe_mlp_params)

    @cached_property
    def total_params(self) -> int:
        return self.transformer_params + self.embedding_params + self.lm_head_params + self.hidden

    @cached_property
    def active_params(self) -> int:
        """Parameters touched per token (routed experts counted at ``active_experts``)."""
        if not self.is_moe:
            return self.total_params
        return self.total_params - self.moe_layers * (self.moe_mlp_params - self.moe_mlp_active_params)

    @cached_property
    def active_matmul_params(self) -> int:
        """Weights multiplied per token in the forward pass, LM head included, embedding lookup not."""
        return self.active_params - self.embedding_params - self.hidden * (2 * self.layers + 1) + (
            self.embedding_params if self.tied_embeddings else 0)

    # -- KV cache ----------------------------------------------------------------------------
    def kv_elements_per_token(self) -> int:
        """Cached elements per token for the whole model (K and V, or MLA's latent + rope key)."""
        if self.is_mla:
            return self.layers * (self.kv_lora_rank + self.rope_head_dim)
        return 2 * self.layers * self.kv_heads * self.head_dim


def resolve(spec: ArchitectureSpec) -> tuple[Architecture, list[tuple[str, object, str]]]:
    """Apply documented defaults; return the architecture and the defaults applied.

    Each applied default is ``(field, value, reason)``.
    """
    applied: list[tuple[str, object, str]] = []
    missing = [f for f in ("layers", "hidden", "heads") if getattr(spec, f) is None]
    if missing:
        raise ValueError(f"architecture needs {', '.join(missing)}")
    assert spec.layers and spec.hidden and spec.heads

    def pick(name: str, default: object, reason: str) -> object:
        value = getattr(spec, name)
        if value is None:
            applied.append((name, default, reason))
            return default
        return value

    if spec.head_dim is None and spec.hidden % spec.heads:
        raise ValueError(f"heads ({spec.heads}) must divide hidden ({spec.hidden}) when head_dim is not given")
    head_dim = pick("head_dim", spec.hidden // spec.heads, "hidden / heads")
    kv_heads = pick("kv_heads", spec.heads, "multi-head attention (kv_heads = heads)")
    ffn = pick("ffn", 4 * spec.hidden, "4 x hidden")
    gated = pick("gated_mlp", False, "plain two-matrix MLP")
    vocab = pick("vocab", DEFAULT_VOCAB, "GPT/Megatron vocabulary")
    tied = pick("tied_embeddings", False, "separate output layer")
    experts = spec.experts or 0
    active = spec.active_experts or 0
    if experts and not active:
        raise ValueError("a mixture-of-experts model needs active_experts")
    if active and not experts:
        raise ValueError("active_experts given without experts")
    expert_ffn = (pick("expert_ffn", ffn, "ffn") if experts else 0)
    arch = Architecture(
        layers=spec.layers, hidden=spec.hidden, heads=spec.heads, kv_heads=int(kv_heads),  # type: ignore[arg-type]
        head_dim=int(head_dim), ffn=int(ffn), gated_mlp=bool(gated), vocab=int(vocab),  # type: ignore[arg-type]
        tied_embeddings=bool(tied), experts=experts, active_experts=active,
        expert_ffn=int(expert_ffn), shared_experts=spec.shared_experts or 0,  # type: ignore[arg-type]
        dense_layers=spec.dense_layers or 0, kv_lora_rank=spec.kv_lora_rank or 0,
        rope_head_dim=spec.rope_head_dim or 0, q_lora_rank=spec.q_lora_rank or 0,
        v_head_dim=spec.v_head_dim or 0, sliding_window=spec.sliding_window or 0,
        mtp_layers=spec.mtp_layers or 0, max_context_tokens=spec.max_context_tokens or 0,
    )
    return arch, applied


def derive_from_params(params: float) -> Architecture:
    """A plausible dense decoder with about ``params`` parameters (see the DERIVED_* constants).

    hidden is a multiple of 512 (128-wide heads); layers is solved for ``params`` at each hidden
    and kept between hidden / 160 and hidden / 64, near the aspect ratio hidden = 128 x layers.
    """
    if not (5e8 <= params <= 1e14):
        raise ValueError("params must be between 5e8 and 1e14")

    def build(hidden: int, layers: int) -> Architecture:
        heads = hidden // DERIVED_HEAD_DIM
        ffn = int(round(DERIVED_FFN_RATIO * hidden / 256.0)) * 256
        return Architecture(layers=layers, hidden=hidden, heads=heads, kv_heads=math.gcd(heads, DERIVED_KV_HEADS),
                            head_dim=DERIVED_HEAD_DIM, ffn=ffn, gated_mlp=True, vocab=DERIVED_VOCAB,
                            tied_embeddings=False)

    candidates = []
    for k in range(1, 257):
        hidden = 512 * k
        one = build(hidden, 1)
        per_layer = build(hidden, 2).total_params - one.total_params
        fixed = one.total_params - per_layer
        layers = round((params - fixed) / per_layer)
        layers = min(max(layers, max(2, hidden // 160)), hidden // 64)
        candidates.append(build(hidden, layers))
    return min(candidates, key=lambda a: (round(abs(math.log(a.total_params / params)), 2),
                                          abs(a.hidden - DERIVED_HIDDEN_PER_LAYER * a.layers)))
