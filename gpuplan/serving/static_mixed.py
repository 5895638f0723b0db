"""A static batch run through a chunked-prefill scheduler (vLLM's ``benchmark_latency``).

vLLM's latency benchmark hands the whole batch to ``LLM.generate``, so the engine's own scheduler
runs it. With chunked prefill (V1 always; V0 for long-context models, engine.on_context) each step
first schedules one token for every sequence already decoding, then fills the rest of its token
budget ``T`` with prompt chunks (vLLM ``Scheduler._schedule_chunked_prefill`` in V0,
``v1/core/sched/scheduler.py`` in V1). A batch of ``B`` prompts of ``P`` tokens is then not one
prefill followed by decodes: step ``k`` carries the ``d_k`` sequences whose prompts are done and
``min(T - d_k, prompt tokens left)`` prompt tokens, and the sequences finish in cohorts, each
``O - 1`` decode steps after its prompt. The run lasts until the last cohort finishes::

    total = sum over mixed steps of t(d_k decodes + chunk_k) + sum over the drain of t(decodes left)

with ``t`` the replica's step time (gpuplan.serving.model.Replica.step; a chunk of ``c`` tokens
is ``c / P`` prompts, attention over the prompt as a whole). Engines that run a static batch
outside their scheduler (TensorRT-LLM's session benchmark, SGLang's ``bench_one_batch``) prefill
the batch first (capacity.static_batch_tokens_per_s).
"""

from __future__ import annotations

from gpuplan.serving.model import Replica


def static_batch_chunked_s(replica: Replica, batch: int, prompt: int, output: int, budget: int) -> float:
    """Seconds to run ``batch`` requests of ``prompt`` + ``output`` tokens to completion under a
    decode-first chunked-prefill scheduler with ``budget`` tokens a step."""
    ctx = replica.decode_context(prompt, output)
    left = batch * prompt               # prompt tokens still to prefill
    done_prompts = 0                    # requests whose prompt is complete
    finish: list[tuple[int, int]] = []  # (step at which a cohort's last token is out, its size)
    decoding = 0
    step = 0
    total = 0.0
    while left > 0:
        room = max(budget - decoding, 0)
        chunk = min(room, left) if room else min(prompt, left)   # never stall: at least one chunk
        total += replica.step(decoding, ctx, chunk / prompt, prompt).total_s
        left -= chunk
        step += 1
        now_done = (batch * prompt - left) // prompt
        cohort = now_done - done_prompts
        if cohort:
            # The chunk that completes a prompt also samples its first token.
            finish.append((step + max(output - 1, 0), cohort))
            decoding += cohort if output > 1 else 0
            done_prompts = now_done
        decoding -= sum(n for s, n in finish if s == step)
    # The drain: between two cohorts' last steps the batch is the cohorts still decoding.
    for end in sorted({s for s, _ in finish}):
        if end > step:
            active = sum(n for s, n in finish if s > step)
            total += (end - step) * replica.decode_step(active, ctx).total_s
            step = end
    return total
