"""The parallel layout of one serving replica: tensor, pipeline and expert parallelism."""

from __future__ import annotations

from gpuplan.core.records import cached_property, dataclass

from gpuplan.model.arch import Architecture


@dataclass(frozen=True)
class Layout:
    """Parallelism of one replica. ``ep > tp`` means attention data parallelism (dp = ep / tp)."""

    tp: int = 1
    pp: int = 1
    ep: int = 1

    @cached_property
    def dp(self) -> int:
        return self.ep // self.tp if self.ep > self.tp else 1

    @cached_property
    def expert_shards(self) -> int:
        """GPUs one MoE layer's experts are spread over."""
        return max(self.tp, self.ep)

    @cached_property
    def gpus(self) -> int:
        return self.tp * self.dp * self.pp

    def check(self, arch: Architecture) -> str | None:
        """Why the layout cannot run ``arch``, or None."""
        if arch.heads % self.tp:
            return f"tp {self.tp} does not divide {arch.heads} attention heads"
        if self.pp > arch.layers:
            return f"pp {self.pp} exceeds {arch.layers} layers"
        if self.ep > 1 and not arch.is_moe:
            return "ep > 1 needs a mixture-of-experts model"
        if self.ep > 1 and self.ep % self.tp and self.tp % self.ep:
            return f"ep {self.ep} and tp {self.tp} must divide one another"
        if arch.is_moe and self.ep > arch.experts:
            return f"ep {self.ep} exceeds {arch.experts} experts"
        return None
