"""Goodput: the fraction of wall-clock time that trains, after failures, restarts and checkpoints.

A synchronous job stops at every interruption of any of its N GPUs. With interruptions arriving
at ``lambda`` per GPU-hour, the job's mean time between interruptions is M = 1 / (lambda N).
Checkpointing every T hours at a blocking cost of C hours, each interruption loses the restart
time R plus on average half an interval of work; the overhead fraction is

    waste = C / T + (R + T / 2) / M,       T = sqrt(2 C M)  (Young 1974; Daly 2006)

and goodput = (1 - fixed_downtime) x (1 - waste). Constants and sources are in
``catalog/calibration/training.toml`` (Llama 3: 466 interruptions in 54 days on 16,384 H100,
>90% effective training time).
"""

from __future__ import annotations

import math
from gpuplan.core.records import dataclass

from gpuplan.hardware.training_calibration import TrainingCalibration

#: Goodput never drops below this in the model; a job this unreliable does not finish.
MIN_GOODPUT = 0.05


@dataclass(frozen=True)
class Goodput:
    fraction: float
    mtbi_hours: float
    checkpoint_interval_hours: float

    def describe(self) -> str:
        if math.isinf(self.mtbi_hours):
            return f"goodput {self.fraction:.1%} (no interruption rate configured)"
        return (f"goodput {self.fraction:.1%}: an interruption every {self.mtbi_hours:.1f} h, "
                f"checkpoint every {self.checkpoint_interval_hours * 60:.0f} min")


def goodput(gpus: int, cal: TrainingCalibration) -> Goodput:
    """Expected fraction of wall-clock spent training on ``gpus`` GPUs."""
    fixed = 1.0 - cal.fixed_downtime_fraction
    rate = cal.interruptions_per_gpu_hour * gpus
    if rate <= 0:
        return Goodput(fixed, math.inf, math.inf)
    mtbi = 1.0 / rate
    c = cal.checkpoint_save_hours
    interval = math.sqrt(2.0 * c * mtbi) if c > 0 else 0.0
    waste = (c / interval if interval > 0 else 0.0) + (cal.restart_hours + interval / 2.0) / mtbi
    return Goodput(max(MIN_GOODPUT, fixed * (1.0 - waste)), mtbi, interval)
