"""What the training timing model reads: the job (model, sequence, batch, precision) and the
hardware (one GPU's achievable rates and its network)."""

from __future__ import annotations

from dataclasses import replace
from gpuplan.core.records import dataclass, hash_once

from gpuplan.core.units import dtype_bytes
from gpuplan.hardware.schema import Gpu, servers_to_buy
from gpuplan.model.arch import Architecture
from gpuplan.physics.collectives import Network
from gpuplan.physics.power import capped_clock_fraction, capped_memory_fraction, capped_node_power_kw


@hash_once
@dataclass(frozen=True)
class Job:
    """What is trained: model, sequence length, global batch in sequences, precision, tokens."""

    arch: Architecture
    seq: int
    batch: int
    precision: str
    tokens: float
    #: The training software (training.toml [frameworks.*]); None = the default framework.
    framework: str | None = None
    #: The MoE token dispatcher a run names ("alltoall" or "flex"); None = the framework's.
    moe_dispatcher: str | None = None
    #: A power cap per GPU in watts (``[training] gpu_power_cap_w``; physics/power.py); None = none.
    gpu_power_cap_w: float | None = None
    #: The split of layers over pipeline stages a run states (stages.rank_layers); None = the default.
    pipeline_split: str | None = None

    @property
    def tokens_per_step(self) -> int:
        return self.batch * self.seq


@dataclass(frozen=True)
class Hardware:
    """What the timing model needs from one GPU and its network."""

    gpu: Gpu
    net: Network
    gemm_flops: float          # achievable GEMM FLOP/s of the training dtype (peak x MAMF)
    attn_flops: float          # achievable 16-bit matmul FLOP/s (attention runs in BF16/FP16)
    mem_bw: float              # achievable HBM bytes/s
    peak_flops: float          # dense 16-bit peak: the MFU denominator
    domain: int
    #: Bytes per GEMM input element in the training dtype: 1 for FP8 (Transformer Engine feeds
    #: the tensor cores quantized copies; outputs stay 16-bit), else 2.
    operand_bytes: float = 2.0
    #: FP8 with block scaling in the tensor cores (MXFP8: Blackwell, the GPUs with FP4 tensor
    #: cores); without it FP8 recipes scale per tensor (amax, then cast: NeMo's "FP8-CS" on H100).
    block_scaled_fp8: bool = False
    #: The GPU's server figures the search reads per bound (``Gpu`` fields and its
    #: ``purchase_unit_nodes`` property, computed once here).
    gpus_per_node: int = 1
    node_price_usd: float | None = None
    purchase_unit_nodes: int = 1
    cloud_usd_per_gpu_hour: float | None = None

    @staticmethod
    def of(gpu: Gpu, net: Network, precision: str, cap_w: float | None = None, cap_exponent: float = 2.0,
           hbm_power_fraction: float = 1.0) -> "Hardware":
        """The achievable rates of ``gpu`` in ``precision``; a power cap of ``cap_w`` below the
        board's rating slows the tensor-core rates, and the HBM ones only below the draw of a
        memory-bound kernel (``hbm_power_fraction`` of the rating; physics/power.py)."""
        half = "bf16" if precision == "bf16" else "fp16"
        peak16 = gpu.peak_tflops(half) or gpu.peak_tflops("fp16") or 0.0
        gemm_dtype = "fp8" if precision == "fp8" else half
        peak_gemm = gpu.peak_tflops(gemm_dtype) or 0.0
        clock = capped_clock_fraction(cap_w, gpu.tdp_w, cap_exponent)
        hbm = capped_memory_fraction(cap_w, gpu.tdp_w, hbm_power_fraction, cap_exponent)
        return Hardware(gpu=gpu, net=net,
                        gemm_flops=peak_gemm * 1e12 * gpu.matmul_efficiency(gemm_dtype) * clock,
                        attn_flops=peak16 * 1e12 * gpu.efficiency.matmul_bf16 * clock,
                        mem_bw=gpu.mem_bw_tb_per_s * 1e12 * gpu.efficiency.mem_bw * hbm,
                        peak_flops=peak16 * 1e12, domain=net.scaleup_domain,
                        operand_bytes=dtype_bytes(precision),
                        block_scaled_fp8=gpu.fp4_dense_tflops is not None,
                        gpus_per_node=gpu.gpus_per_node, node_price_usd=gpu.node_price_usd,
                        purchase_unit_nodes=gpu.purchase_unit_nodes,
                        cloud_usd_per_gpu_hour=gpu.cloud_usd_per_gpu_hour)

    def cost_usd(self, gpus: int, gpu_hours: float, pricing: str) -> float | None:
        """evaluator.cost_usd of this GPU: the same expressions (``Gpu.servers_for``) on the same
        figures, read once."""
        if pricing == "cloud":
            rate = self.cloud_usd_per_gpu_hour
            return gpu_hours * rate if rate else None
        price = self.node_price_usd
        if not price:
            return None
        return servers_to_buy(gpus, self.gpus_per_node, self.purchase_unit_nodes) * price

    def sixteen_bit(self) -> "Hardware":
        """The same GPU running its GEMMs in 16 bits (what FP8 recipes keep in BF16: the LM
        head and the router; Megatron-Core's output layer is not a Transformer Engine module)."""
        if self.operand_bytes == 2.0:
            return self
        return replace(self, gemm_flops=self.attn_flops, operand_bytes=2.0)


def capped_gpu(gpu: Gpu, cap_w: float | None) -> Gpu:
    """``gpu`` with its server's maximum draw under a per-GPU cap of ``cap_w`` watts (the plan's
    power, rack packing, bill of materials and energy cost follow it); its rating stays, so the
    timing model still reads the cap against it. No cap or one at or above the rating: ``gpu``."""
    if cap_w is None or cap_w >= gpu.tdp_w:
        return gpu
    kw = capped_node_power_kw(gpu.node_power_kw, gpu.gpus_per_node, gpu.tdp_w, cap_w)
    return gpu.model_copy(update={"node_power_kw": kw})
