"""``gpuplan deploy``: the plan's serving layout as an engine launch command, or as Kubernetes
objects (a Deployment and a HorizontalPodAutoscaler), in text, JSON or YAML (docs/deploy.md).

A pure function of the plan: it reads no file and no catalog. The engines' flag names are in
:mod:`gpuplan.serving.deploy_engines`.
"""

from __future__ import annotations

import json
import re
import shlex
from gpuplan.core.records import dataclass
from typing import Any

from gpuplan.core.errors import InputError
from gpuplan.core.contract import Plan
from gpuplan.render.yaml_ import dump, dump_all
from gpuplan.serving.deploy_engines import Command, Launch, command, engine

DEPLOY_FORMATS = ("text", "json", "yaml")
#: Kubernetes extended resource of each vendor's GPU device plugin.
GPU_RESOURCE = {"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu", "intel": "habana.ai/gaudi"}
#: The HPA's per-pod metric; a Prometheus Adapter rule maps the engine's gauge to it (docs/deploy.md).
HPA_METRIC = "running_requests"


@dataclass(frozen=True)
class Deployment:
    """What ``gpuplan deploy`` prints: the command, the Kubernetes objects when asked, and notes
    (for stderr: what the plan could not say)."""

    command: Command
    objects: list[dict[str, Any]]
    notes: list[str]
    #: What one command serves: the GPU, GPUs per replica, and the replicas to run (min, max).
    gpu: str = ""
    gpus_per_replica: int = 1
    replicas: tuple[int, int] = (1, 1)


def launch_settings(plan: Plan, model: str | None = None) -> Launch:
    """The serving replica's engine-neutral launch settings; a plan without one is bad input."""
    s = plan.serving
    if s is None:
        raise InputError("the plan has no serving phase to deploy (plan a profile with a [serving] table)",
                         file=plan.profile, field="serving")
    if not s.feasible or s.layout is None or s.gpu is None:
        raise InputError("the serving plan is infeasible: there is no layout to deploy", file=plan.profile,
                         field="serving")
    if s.layout.disaggregated:
        raise InputError("the serving plan is disaggregated into prefill and decode pools; gpuplan deploy writes "
                         "aggregated replicas only (re-plan with [serving] disaggregation = \"never\", or launch each "
                         "pool with the engine's prefill/decode options: docs/deploy.md)", file=plan.profile,
                         field="serving.disaggregation")
    name = model or plan.model.hf_repo
    if not name:
        raise InputError(f"the plan's model {plan.model.name!r} names no Hugging Face repository; give --model "
                         "(a repository id or a path in the container)", field="--model")
    lay = s.layout
    d = s.deploy
    return Launch(model=name, tp=lay.tp, pp=lay.pp, ep=lay.ep, attn_dp=lay.ep // lay.tp if lay.ep > lay.tp else 1,
                  max_sequences=s.max_sequences_per_replica, precision=s.precision, kv_precision=s.kv_precision,
                  weights_gib=s.weights_gib_per_gpu, kv_gib=s.kv_gib_per_gpu,
                  context_length=d.context_length if d else None, usable_gib=d.gpu_memory_usable_gib if d else None,
                  overhead_gib=d.runtime_overhead_gib if d else None,
                  chunk_tokens=d.prefill_chunk_tokens if d else None,
                  vendor=d.gpu_vendor if d else "nvidia")


def replica_bounds(plan: Plan) -> tuple[int, int]:
    """(minReplicas, maxReplicas): the plan's serving autoscaling when it has one, else its replicas."""
    s = plan.serving
    assert s is not None
    auto = getattr(s, "autoscaling", None)
    lo, hi = getattr(auto, "min_replicas", None), getattr(auto, "max_replicas", None)
    if isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi:
        return lo, hi
    return max(1, s.replicas), max(1, s.replicas)


def dns_name(*parts: str) -> str:
    """A Kubernetes object name (RFC 1123 label: lowercase letters, digits, '-', at most 63)."""
    text = re.sub(r"[^a-z0-9-]+", "-", "-".join(parts).lower()).strip("-")
    text = re.sub(r"-{2,}", "-", text)[:63].strip("-")
    return text or "gpuplan-serving"


def deploy(plan: Plan, engine_name: str, *, k8s: bool = False, model: str | None = None,
           image: str | None = None) -> Deployment:
    """The launch command of the plan's serving replica for ``engine_name``, and with ``k8s`` its
    Kubernetes objects; what the plan cannot say becomes a note. Bad input is an InputError."""
    eng = engine(engine_name)
    for flag, value in (("--model", model), ("--image", image)):
        if value is not None and (not value.strip() or any(c.isspace() or not c.isprintable() for c in value)):
            raise InputError(f"expected a name without spaces, got {value[:60]!r}", field=flag)
    settings = launch_settings(plan, model)
    cmd = command(eng, settings)
    notes = list(cmd.notes)
    s = plan.serving
    assert s is not None
    if s.deploy is not None and s.gpus_per_replica > s.deploy.gpus_per_node:
        notes.append(f"a replica spans {s.gpus_per_replica} GPUs, more than the {s.deploy.gpus_per_node} of one "
                     f"server: launch it across servers as {eng.name} documents for multi-node serving")
    if s.layout is not None and s.max_sequences_per_replica > 0:
        notes.append(f"the running-sequence cap is the KV-cache capacity, {s.max_sequences_per_replica:,} sequences "
                     f"per replica; the plan runs {s.layout.concurrency:,} at the target load (the HPA's target)")
    fleet = {"gpu": s.gpu or "", "gpus_per_replica": s.gpus_per_replica, "replicas": replica_bounds(plan)}
    if not k8s:
        return Deployment(command=cmd, objects=[], notes=notes, **fleet)
    if s.deploy is not None and s.gpus_per_replica > s.deploy.gpus_per_node:
        raise InputError(f"a replica needs {s.gpus_per_replica} GPUs across servers of {s.deploy.gpus_per_node}; a "
                         "Deployment's pod runs on one server (use a LeaderWorkerSet)", field="--k8s")
    if image is None and settings.vendor != "nvidia":
        raise InputError(f"no default {eng.name} image for {settings.vendor} GPUs; give --image", field="--image")
    objects = _k8s(plan, cmd, image or eng.image, settings.vendor, eng.running_metric, notes)
    return Deployment(command=cmd, objects=objects, notes=notes, **fleet)


def _k8s(plan: Plan, cmd: Command, image: str, vendor: str, gauge: str | None,
         notes: list[str]) -> list[dict[str, Any]]:
    """A ConfigMap (engines with a config file), the Deployment and its HorizontalPodAutoscaler."""
    s = plan.serving
    assert s is not None and s.layout is not None
    name = dns_name(plan.workload, cmd.engine)
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "serving",
              "app.kubernetes.io/managed-by": "gpuplan"}
    gpus = str(s.gpus_per_replica)
    container: dict[str, Any] = {
        "name": cmd.engine, "image": image, "command": list(cmd.argv[:1]), "args": list(cmd.argv[1:]),
        "ports": [{"name": "http", "containerPort": cmd.port, "protocol": "TCP"}],
        "resources": {"limits": {GPU_RESOURCE[vendor]: gpus}, "requests": {GPU_RESOURCE[vendor]: gpus}},
        "readinessProbe": {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 10,
                           "failureThreshold": 3},
        "startupProbe": {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 10,
                         "failureThreshold": 180},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    volumes: list[dict[str, Any]] = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    objects: list[dict[str, Any]] = []
    if cmd.config_file:
        config_name = dns_name(name, "config")
        objects.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": config_name, "labels": labels},
                        "data": {cmd.config_file: dump(cmd.config)}})
        mounted = f"/etc/gpuplan/{cmd.config_file}"
        container["args"] = [mounted if a == cmd.config_file else a for a in container["args"]]
        container["volumeMounts"].append({"name": "engine-config", "mountPath": "/etc/gpuplan", "readOnly": True})
        volumes.append({"name": "engine-config", "configMap": {"name": config_name}})
    lo, hi = replica_bounds(plan)
    annotations = {"gpuplan.dev/gpu": s.gpu or "", "gpuplan.dev/engine-release": f"{cmd.engine} {cmd.release}"}
    objects.append({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
        "spec": {"replicas": lo, "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
                 # a rollout takes down at most the plan's spares and needs no GPU beyond the fleet
                 "strategy": {"type": "RollingUpdate",
                              "rollingUpdate": {"maxSurge": 0, "maxUnavailable": max(1, s.spare_replicas)}},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [container], "volumes": volumes}}},
    })
    target = max(1, s.layout.concurrency)
    hpa_annotations = {"gpuplan.dev/metric-source": gauge} if gauge else {}
    if gauge is None:
        notes.append(f"map the engine's running-requests gauge to the pod metric {HPA_METRIC!r} for the HPA "
                     "(docs/deploy.md)")
    objects.append({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "labels": labels, **({"annotations": hpa_annotations} if hpa_annotations else {})},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                 "minReplicas": lo, "maxReplicas": hi,
                 "metrics": [{"type": "Pods", "pods": {"metric": {"name": HPA_METRIC},
                                                        "target": {"type": "AverageValue",
                                                                   "averageValue": str(target)}}}]},
    })
    return objects


def render_deploy(result: Deployment, fmt: str) -> str:
    """The deployment as text (a shell command, or YAML manifests with --k8s), JSON or YAML."""
    if fmt not in DEPLOY_FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {', '.join(DEPLOY_FORMATS)}", field="--format")
    cmd = result.command
    if result.objects:
        if fmt == "json":
            return json.dumps({"apiVersion": "v1", "kind": "List", "items": result.objects}, indent=2) + "\n"
        return dump_all(result.objects)
    data: dict[str, Any] = {"engine": cmd.engine, "release": cmd.release, "argv": cmd.argv, "port": cmd.port,
                            "gpu": result.gpu, "gpus_per_replica": result.gpus_per_replica,
                            "min_replicas": result.replicas[0], "max_replicas": result.replicas[1]}
    if cmd.config_file:
        data["config_file"] = cmd.config_file
        data["config"] = cmd.config
    data["notes"] = result.notes
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    if fmt == "yaml":
        return dump(data)
    lo, hi = result.replicas
    count = f"{lo}" if lo == hi else f"{lo} to {hi}"
    return (f"# {engine(cmd.engine).name} {cmd.release}: one replica on {result.gpus_per_replica} x {result.gpu}; run {count} "
            f"replica{'s' if hi > 1 else ''} (gpuplan deploy, docs/deploy.md)\n" + shell_text(cmd))


def shell_text(cmd: Command) -> str:
    """The command as a shell script: the config file first (a here-document), then the launch."""
    out = []
    if cmd.config_file:
        out += [f"cat > {shlex.quote(cmd.config_file)} <<'EOF'", dump(cmd.config).rstrip("\n"), "EOF"]
    words = [shlex.quote(w) for w in cmd.argv]
    first = next((i for i, w in enumerate(cmd.argv) if w.startswith("--")), len(words))
    lines, rest, i = [" ".join(words[:first])], words[first:], 0
    while i < len(rest):  # one flag (with its value) per line
        if i + 1 < len(rest) and not rest[i + 1].startswith("--"):
            lines.append(f"{rest[i]} {rest[i + 1]}")
            i += 2
        else:
            lines.append(rest[i])
            i += 1
    out.append(" \\\n    ".join(lines))
    return "\n".join(out) + "\n"
