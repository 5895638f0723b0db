"""Steady-state continuous batching of one replica, and the rate it sustains within targets.

A replica holds on average ``C`` sequences in decode. Every decode step emits one token for each.
With an engine that mixes prefill chunks into decode steps (in-flight batching, chunked prefill:
TensorRT-LLM, vLLM V1) a step carries the ``C / n`` prompts that start per step, TPOT is that
step, ``lam = C / (n * t_step)``, and a prompt waits for the step budget the decode tokens leave
(:meth:`ReplicaCapacity._at_mixed`). Otherwise (prefill-first engines: SGLang's default, vLLM
before V1) prefills of new requests interrupt the decode steps and take ``rho = lam * s_pf`` of
the GPU time, ``s_pf`` the prefill service time
of one request (a pipeline of ``pp`` stages accepts one every ``t_pf / pp``). So, with ``t0(C)``
the decode step at concurrency C and ``n = output_tokens - 1`` decode steps per request:

* time per output token ``TPOT = t0(C) / (1 - rho)``;
* Little's law (``C = lam * n * TPOT``) gives the request rate ``lam = C / (n * t0(C) + C * s_pf)``;
* output tokens/s ``= lam * output_tokens``;
* time to first token ``TTFT = W_q + t_pf + r``: ``W_q`` the wait of an M/G/1 queue with
  service ``s_pf`` at rate ``lam`` (gpuplan/physics/queueing.py: Pollaczek-Khinchine mean, Cramer-Lundberg
  percentiles), ``r`` the residual of the decode step in flight (``t0 / 2`` on average, ``t0``
  at a percentile).

Every quantity grows with C, so the largest C within the TTFT, TPOT, KV-capacity and utilisation
limits gives the highest sustainable rate; it is found by bisection.
"""

from __future__ import annotations

import math
from gpuplan.core.records import cached_property, constructor, dataclass, hash_once

from gpuplan.physics.queueing import PERCENTILES, wait_quantile_bound_s, wait_s
from gpuplan.serving.mixed import budget_filled_step, budget_share
from gpuplan.serving.model import Replica, StepTime
from gpuplan.serving.step_floor import floor_terms, over_target_above


def __getattr__(name: str) -> object:
    """The offline throughputs of gpuplan/serving/offline.py, re-exported when first asked for (a
    plan runs neither: its import stays off the planning path)."""
    if name in ("offline_tokens_per_s", "static_batch_tokens_per_s"):
        from gpuplan.serving import offline

        return getattr(offline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hash_once
@dataclass(frozen=True)
class Demand:
    """What each request asks of a replica, and the targets."""

    prompt_tokens: int
    output_tokens: int
    ttft_s: float
    tpot_s: float
    percentile: str
    #: Longest sequence a replica must hold (context_length); sizes nothing else.
    context_tokens: int = 0

    @cached_property
    def decode_steps(self) -> int:
        return max(self.output_tokens - 1, 0)


@dataclass(frozen=True)
class Workpoint:
    """A replica's steady state at concurrency ``concurrency``."""

    concurrency: float
    rate: float
    rho: float
    tpot_s: float
    step: StepTime
    step_s: float
    prefill_latency_s: float
    prefill_service_s: float
    ttft_mean_s: float
    ttft_target_stat_s: float
    ttft_p99_s: float
    #: Decode steps per request (output_tokens - 1).
    step_count: int = 0

    @property
    def e2e_mean_s(self) -> float:
        """Mean request latency: ``TTFT + (output_tokens - 1) * TPOT``."""
        return self.ttft_mean_s + self.step_count * self.tpot_s


#: ``Workpoint(...)`` with its fields set at once (the frozen dataclass sets them one by one; a
#: capacity search builds hundreds): an equal object.
_workpoint = constructor(Workpoint)


class ReplicaCapacity:
    """Steady-state model of one replica for one demand (caches the prefill times)."""

    def __init__(self, replica: Replica, demand: Demand):
        self.replica = replica
        self.demand = demand
        q = replica.k.queueing  # a catalog record, read once
        self.scv = q.prefill_service_scv
        self.max_rho = q.max_utilisation
        self.mean_context = replica.decode_context(demand.prompt_tokens, max(demand.output_tokens, 1))
        self.prefill_step = replica.prefill_step(1, demand.prompt_tokens)
        self.prefill_latency_s = self.prefill_step.total_s
        self.prefill_service_s = self.prefill_latency_s / replica.layout.pp
        full = demand.prompt_tokens + demand.output_tokens
        #: Sequences the cache holds: paged engines fill it at the mean length (Replica.admitted_sequences).
        self.max_sequences = replica.admitted_sequences(demand.prompt_tokens, demand.output_tokens)
        eng = replica.engine
        #: In-flight batching with chunked prefill: prefill shares the decode steps (module doc).
        self.mixed = eng is not None and eng.features.scheduling == "mixed" and demand.decode_steps > 0
        self.step_tokens = replica.step_budget  # the engine's max_step_tokens (0 without one), read once
        self.fits_context = (replica.max_sequences(max(demand.context_tokens, full)) >= 1)
        #: Decode steps by concurrency: the searches over concurrency revisit the same points.
        self._steps: dict[float, StepTime] = {}
        #: The step of the mix that carries prompt tokens, by concurrency (>= 1) (:meth:`step`).
        self._carrying: dict[float, StepTime] = {}
        #: Workpoints by rate (at_rate): the runners-up a plan re-plans ask for the same ones.
        self._loads: dict[tuple[float, float], Workpoint] = {}
        #: Workpoints by concurrency (at): the search for the ceiling ends on two it has seen, and
        #: the frontier and the report ask for the idle one again.
        self._points: dict[float, Workpoint] = {}
        #: Concurrencies whose decode step is proven over the TPOT target by its floor
        #: (serving/step_floor.py): the ceiling search breaks there without the step.
        self._tpot_beyond = math.inf if not demand.decode_steps else over_target_above(
            floor_terms(replica, self.mean_context), replica.layout.pp,
            1 + demand.prompt_tokens / demand.decode_steps if self.mixed else 1.0, demand.tpot_s)

    # -- decode -----------------------------------------------------------------------------------
    def step(self, concurrency: float) -> StepTime:
        """Decode step of the replica at concurrency C (micro-batches of C / min(pp, C) with PP)."""
        c = 1.0 if 1.0 > concurrency else concurrency  # max(concurrency, 1.0), spelled out: this runs per probe
        hit = self._steps.get(c)
        if hit is not None:
            return hit
        pp = self.replica.layout.pp
        micro = c if c < pp else pp  # min(pp, c)
        if self.mixed:
            # The prompts of the C / n requests that start per step enter in steps filled up to
            # the engine's token budget; TPOT is the mean step of that mix (serving/mixed.py).
            share = c / self.demand.decode_steps / micro
            out, carrying = budget_filled_step(self.replica, c / micro, self.mean_context, share,
                                               self.demand.prompt_tokens)
        else:
            out, carrying = self.replica.decode_step(c / micro, self.mean_context), None
        if len(self._steps) >= 4096:  # bounded: a long sweep keeps the capacity alive
            self._steps.clear()
            self._carrying.clear()
        self._steps[c] = out
        if carrying is not None:
            self._carrying[c] = carrying
        return out

    def rate(self, concurrency: float, step_s: float | None = None) -> float:
        """Requests/s at concurrency C: ``C / (n * t0 + C * s_pf)``.

        With one output token there is no decode batch; C then parametrises the prefill load
        linearly, ``lam = min(C / C_max, 1) / s_pf``, so the same search applies."""
        n = self.demand.decode_steps
        c = max(concurrency, 0.0)
        if n == 0:
            return min(c / max(self.max_sequences, 1), 1.0) / self.prefill_service_s
        t0 = self.step(concurrency).total_s if step_s is None else step_s
        if self.mixed:
            return c / (n * t0)
        return c / (n * t0 + c * self.prefill_service_s)

    def _mixed_load(self, concurrency: float,
                    step: StepTime | None = None) -> tuple[StepTime, float, float, float, float]:
        """(mixed step, its time, rate, prefill chunk, time of the mix's step that carries prompt
        tokens) at C: the parts of :meth:`_at_mixed` that come before the queue (``step``: the
        step at C, where the caller has it)."""
        d = self.demand
        if step is None:
            step = self.step(concurrency)
        t0 = step.total_s
        c = max(concurrency, 0.0)
        lam = c / (d.decode_steps * t0)  # self.rate(concurrency, t0) of a mixed replica
        micro = min(self.replica.layout.pp, max(c, 1.0))
        b = c / micro
        chunk = self.step_tokens - b
        own = math.inf
        if chunk > 0:
            # A step carrying this prompt's chunks: the decode batch plus one prompt, or what
            # arrives per step, up to the room (the prompt-carrying step of the mix; the step
            # above computed it from the same terms when C >= 1).
            carrying = self._carrying.get(c)
            if carrying is None:
                p = d.prompt_tokens
                _, piece = budget_share(b, max(c, 1e-9) / d.decode_steps / micro * p, p, self.step_tokens)
                carrying = self.replica.step(b, self.mean_context, piece / p, p)
            own = carrying.total_s
        return step, t0, lam, chunk, own

    def _at_mixed(self, concurrency: float, load: tuple[StepTime, float, float, float, float] | None = None,
                  tail: bool = True) -> Workpoint:
        """Workpoint of mixed steps: TPOT is the mean step of the budget-filled mix; a prompt is
        prefilled in chunks of the step budget the decode tokens leave (``max_step_tokens - C``),
        so it needs ``ceil(prompt / chunk)`` steps, each the step of the mix that carries prompt
        tokens (``t_own``), and waits (M/G/1) for the budget the other prompts hold, service
        ``t_own * prompt / chunk``. ``tail`` False: the percentiles of the wait are left NaN
        (:meth:`sketch`)."""
        d = self.demand
        step, t0, lam, chunk, own = self._mixed_load(concurrency) if load is None else load
        if chunk <= 0:
            s, base, rho = math.inf, math.inf, math.inf
        else:
            base = math.ceil(d.prompt_tokens / chunk) * own
            s = own * d.prompt_tokens / chunk
            rho = lam * s
        mean = wait_s(lam, s, "mean", self.scv) + base + t0 / 2 if rho < 1 else math.inf
        pct = d.percentile
        if not tail:
            p99 = math.nan
            stat = mean if pct == "mean" else p99
            return _workpoint(concurrency, lam, rho, t0, step, t0, base, s, mean, stat, p99, d.decode_steps)
        p99 = wait_s(lam, s, "p99", self.scv) + base + t0 if rho < 1 else math.inf
        stat = mean if pct == "mean" else p99 if pct == "p99" else (
            wait_s(lam, s, pct, self.scv) + base + t0 if rho < 1 else math.inf)
        return _workpoint(concurrency, lam, rho, t0, step, t0, base, s, mean, stat, p99, d.decode_steps)

    def sketch(self, concurrency: float) -> tuple[Workpoint, bool]:
        """The workpoint at C and whether it meets every limit; its queue's tail is solved only when
        the limits before it (KV, utilisation, TPOT) hold and a bound does not settle the TTFT
        (:meth:`_ttft_holds`), and the percentiles are NaN otherwise (the frontier reads the rate,
        TPOT, mean TTFT and the verdict)."""
        wp = self._points.get(concurrency)
        if wp is not None:
            return wp, not self.violations(wp)
        load = self._mixed_load(concurrency) if self.mixed else None
        wp = self._at_mixed(concurrency, load, tail=False) if self.mixed else self._at(concurrency, tail=False)
        if self.violations(wp):  # KV, utilisation or TPOT (a NaN TTFT breaks nothing)
            return wp, False
        if self._ttft_holds(wp.rate, wp.prefill_service_s, wp.prefill_latency_s, wp.step_s):
            return wp, True  # within the TTFT target by a bound: the tail stays unsolved (NaN)
        wp = self._keep(concurrency, self._at_mixed(concurrency, load) if self.mixed else self._at(concurrency))
        return wp, not self.violations(wp)

    def at(self, concurrency: float) -> Workpoint:
        """The workpoint at concurrency ``concurrency`` (memoised: a pure function of it)."""
        hit = self._points.get(concurrency)
        if hit is None:
            hit = self._keep(concurrency, self._at_mixed(concurrency) if self.mixed else self._at(concurrency))
        return hit

    def _keep(self, concurrency: float, wp: Workpoint) -> Workpoint:
        if len(self._points) >= 4096:  # bounded, as the decode steps
            self._points.clear()
        self._points[concurrency] = wp
        return wp

    def _at(self, concurrency: float, tail: bool = True) -> Workpoint:
        step = self.step(concurrency)
        decoding = self.demand.decode_steps > 0
        t0 = step.total_s if decoding else 0.0
        lam = self.rate(concurrency, t0)
        rho = lam * self.prefill_service_s
        tpot = t0 / (1 - rho) if rho < 1 else math.inf
        s = self.prefill_service_s
        base = self.prefill_latency_s
        mean = wait_s(lam, s, "mean", self.scv) + base + t0 / 2
        pct = self.demand.percentile
        p99 = wait_s(lam, s, "p99", self.scv) + base + t0 if tail else math.nan
        stat = mean if pct == "mean" else p99 if pct == "p99" or not tail else wait_s(lam, s, pct, self.scv) + base + t0
        return _workpoint(concurrency, lam, rho, tpot, step, t0, base, s, mean, stat, p99, self.demand.decode_steps)

    # -- limits -----------------------------------------------------------------------------------
    def violations(self, wp: Workpoint) -> list[str]:
        """Which limits a workpoint breaks (empty when it meets every target)."""
        d = self.demand
        out = []
        if wp.concurrency > self.max_sequences + 1e-9:
            out.append("kv")
        if wp.rho > self.max_rho + 1e-12:
            out.append("utilisation")
        if d.decode_steps and wp.tpot_s > d.tpot_s:
            out.append("tpot")
        if wp.ttft_target_stat_s > d.ttft_s:
            out.append("ttft")
        return out

    def _breaks(self, concurrency: float) -> bool:
        """Whether the workpoint at ``concurrency`` breaks a limit (``violations`` not empty). A
        limit broken before the queue (KV, utilisation, TPOT: the queue's tail solve comes last)
        is known without the queue; a mixed step over the TPOT target, also without the step
        carrying a prompt chunk (TPOT is the mixed step itself)."""
        if concurrency in self._points:
            return bool(self.violations(self._points[concurrency]))
        if concurrency > self.max_sequences + 1e-9:
            return True
        if concurrency > self._tpot_beyond:  # a mixed step is TPOT; a prefill-first one is at most TPOT
            return True
        limit = self.max_rho + 1e-12
        if self.mixed:
            step = self.step(concurrency)
            if step.total_s > self.demand.tpot_s:
                return True
            load = self._mixed_load(concurrency, step)
            _, t0, lam, chunk, own = load
            # rho as _at_mixed computes it (a chunk of no tokens: infinite)
            if chunk <= 0 or lam * (own * self.demand.prompt_tokens / chunk) > limit:
                return True
            p = self.demand.prompt_tokens
            if self._ttft_holds(lam, own * p / chunk, math.ceil(p / chunk) * own, t0):
                return False
            return bool(self.violations(self._keep(concurrency, self._at_mixed(concurrency, load))))
        decoding = self.demand.decode_steps > 0
        t0 = self.step(concurrency).total_s if decoding else 0.0
        lam = self.rate(concurrency, t0)
        rho = lam * self.prefill_service_s
        if rho > limit or (decoding and (t0 / (1 - rho) if rho < 1 else math.inf) > self.demand.tpot_s):
            return True
        if self._ttft_holds(lam, self.prefill_service_s, self.prefill_latency_s, t0):
            return False
        return bool(self.violations(self.at(concurrency)))

    def _ttft_holds(self, lam: float, service_s: float, base_s: float, t0: float) -> bool:
        """Whether the TTFT at a percentile (``wait + base_s + t0``, as :meth:`_at` and
        :meth:`_at_mixed` compute it) is proven within the target by an upper bound of the wait
        (:func:`~gpuplan.physics.queueing.wait_quantile_bound_s`), without the queue's tail solve:
        a capacity search mostly stops at the TPOT target, its TTFT well within. False: unproven."""
        pct = self.demand.percentile
        if not lam * service_s < 1:
            return False
        p = PERCENTILES.get(pct)
        if p is None:
            return False
        bound = wait_quantile_bound_s(lam, service_s, p, self.scv)
        return bound + base_s + t0 <= self.demand.ttft_s

    def best(self) -> tuple[Workpoint | None, str]:
        """The highest-rate workpoint within every limit, and the limit that stops it.

        None (with the reason) when even an idle replica misses a target."""
        if self.max_sequences < 1 or not self.fits_context:
            return None, "kv"
        if not math.isfinite(self.prefill_latency_s):
            return None, "network"
        low = self.at(1e-6)
        bad = self.violations(low)
        if bad:
            return None, bad[0]
        hi_c = float(self.max_sequences)
        if not self._breaks(hi_c):
            return self.at(hi_c), "kv"
        lo_c = 1e-6
        for _ in range(40):
            mid = 0.5 * (lo_c + hi_c)
            if self._breaks(mid):
                hi_c = mid
            else:
                lo_c = mid
            if hi_c - lo_c <= 1e-3 * max(lo_c, 1.0):
                break
        limit = self.violations(self.at(hi_c))
        return self.at(lo_c), (limit[0] if limit else "kv")

    def at_rate(self, lam: float, ceiling: Workpoint) -> Workpoint:
        """The workpoint carrying ``lam`` requests/s (below the ceiling's rate)."""
        if lam >= ceiling.rate:
            return ceiling
        key = (lam, ceiling.concurrency)
        hit = self._loads.get(key)
        if hit is None:
            if len(self._loads) >= 4096:
                self._loads.clear()
            hit = self._loads[key] = self._at_rate(lam, ceiling)
        return hit

    def _at_rate(self, lam: float, ceiling: Workpoint) -> Workpoint:
        lo_c, hi_c = 0.0, ceiling.concurrency
        for _ in range(50):
            mid = 0.5 * (lo_c + hi_c)
            if self.rate(mid) < lam:
                lo_c = mid
            else:
                hi_c = mid
            if hi_c - lo_c <= 1e-6 * max(hi_c, 1.0):
                break
        return self.at(hi_c)
