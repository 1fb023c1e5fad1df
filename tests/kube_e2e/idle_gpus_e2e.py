"""Time limits and idle-GPU reclaim end to end: Debian's Prometheus scrapes `tessera dev gpu-metrics`,
which serves dcgm-exporter's DCGM_FI_DEV_GPU_UTIL for the pods from the utilisation profile each
declares, and `tessera scheduler` reads it through Prometheus' HTTP API. A notebook that goes idle
is stopped after its limit, with its notice and the numbers; busy notebooks, and one that warms up
with an idle GPU for less than the limit, keep running; a training Job over its maximum runtime is
evicted, requeued, and runs again; with Prometheus stopped, nothing is ended for idleness. Limits
are seconds long; every wait is for an outcome, with a generous deadline."""
import os
import shutil
import subprocess
import time
import urllib.request

from harness import TESSERA, free_port, k8s, wait_for

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
NS = "lab"


def prometheus_missing():
    return None if os.access(PROMETHEUS, os.X_OK) else "Debian's prometheus is not installed (/usr/bin/prometheus)"


def start_prometheus(cluster, target):
    """A real Prometheus scraping `target` every second; returns its URL once it is ready."""
    port = free_port()
    config = os.path.join(cluster.dir, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                "scrape_configs:\n"
                f"  - job_name: dcgm\n    static_configs: [{{targets: ['{target}']}}]\n")
    cluster.start_process("prometheus", [PROMETHEUS, f"--config.file={config}",
                                         f"--storage.tsdb.path={os.path.join(cluster.dir, 'prometheus-data')}",
                                         f"--web.listen-address=127.0.0.1:{port}"])
    url = f"http://127.0.0.1:{port}"

    def ready():
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False
    wait_for("Prometheus ready", ready, timeout=60)
    return url


def stop_process(cluster, name):
    process, _ = cluster.schedulers[name]
    process.terminate()
    process.wait(timeout=30)


def lab_queue(cluster):
    rules = {"interactive": {"idleLimit": "10s", "notice": "4s", "idleWindow": "3s", "onExpiry": "stop"},
             "train": {"maxRuntime": "8s", "notice": "2s", "requeueDelay": "4s"}}
    body = {"apiVersion": "scheduling.tessera.dev/v1alpha1", "kind": "Queue", "metadata": {"name": "lab"},
            "spec": {"resources": {"gpu": {"deserved": 8}}, "rules": rules}}
    cluster.custom.create_cluster_custom_object("scheduling.tessera.dev", "v1alpha1", "queues", body)


def notebook(cluster, name, profile):
    cluster.pod(NS, name, gpus=1, queue="lab",
                annotations={"scheduling.tessera.dev/workload-type": "interactive",
                             "scheduling.tessera.dev/gpu-utilisation": profile})


def training_job(cluster):
    """A Job whose pod keeps its GPU busy; evictions are not failures it gives up on."""
    container = {"name": "main", "image": "busybox", "command": ["sleep", "3600"],
                 "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": "1"}}}
    template = {"metadata": {"labels": {"scheduling.tessera.dev/queue": "lab"},
                             "annotations": {"scheduling.tessera.dev/gpu-utilisation": "busy"}},
                "spec": {"schedulerName": "tessera", "restartPolicy": "Never", "containers": [container]}}
    body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"},
            "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 20, "template": template}}
    return k8s.BatchV1Api(cluster.api).create_namespaced_job(NS, body)


def events_with(cluster, reason):
    return [e for e in cluster.events(NS) if e.reason == reason]


def idle_gpus(cluster):
    lab_queue(cluster)
    cluster.namespace(NS)
    exporter_port = free_port()
    cluster.start_process("gpu-metrics", [TESSERA, "dev", "gpu-metrics", "--kubeconfig", cluster.kubeconfig,
                                          "--listen", f"127.0.0.1:{exporter_port}"])
    prometheus = start_prometheus(cluster, f"127.0.0.1:{exporter_port}")
    cluster.start_scheduler("scheduler", "--prometheus-url", prometheus, "--gpu-utilisation-interval", "1")
    wait_for("the scheduler saying idle detection is on",
             lambda: "idle detection: on, GPU utilisation from Prometheus at " in cluster.scheduler_log("scheduler"))

    # Notebooks: one idle after 3 s, one busy, one that warms up with an idle GPU for 3 s (well under
    # the 10 s limit, so it must not be stopped).
    notebook(cluster, "nb-idle", "idle_after 3s")
    notebook(cluster, "nb-busy", "busy")
    notebook(cluster, "nb-warm", "warmup 3s")
    wait_for("the notebooks bound", lambda: len(cluster.bound(NS)) == 3, timeout=60)
    wait_for("nb-idle told it will be stopped",
             lambda: any(e.involved_object.name == "nb-idle" for e in events_with(cluster, "LimitNotice")), timeout=120)
    notice = next(e for e in events_with(cluster, "LimitNotice") if e.involved_object.name == "nb-idle")
    assert "(limit 10 s, GPU utilisation under 5%): stops in 4 s unless its GPUs are used" in notice.message, \
        notice.message
    wait_for("nb-idle stopped", lambda: "nb-idle" not in cluster.pods(NS), timeout=120)
    stopped = next(e for e in events_with(cluster, "LimitStopped") if e.involved_object.name == "nb-idle")
    assert stopped.message.startswith("idle for ") and stopped.message.endswith(
        "(limit 10 s, GPU utilisation under 5%): stopped"), stopped.message
    assert 'tessera_workloads_ended_total{reason="idle"} 1' in cluster.metrics("scheduler")

    # Training over its maximum runtime: evicted, requeued, and running again. On the dev cluster,
    # which runs no controller, the test makes the Job's pods as its controller would.
    job = training_job(cluster)
    real = cluster.kind == "real"
    controller = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": job.metadata.uid}

    def train_pods():
        return {name: p for name, p in cluster.pods(NS).items() if name.startswith("train")}
    if not real:
        cluster.pod(NS, "train-0", gpus=1, queue="lab", controller=controller,
                    labels={"batch.kubernetes.io/job-name": "train"},
                    annotations={"scheduling.tessera.dev/gpu-utilisation": "busy"})
    first = wait_for("the training pod bound",
                     lambda: next((n for n, p in train_pods().items() if p.spec.node_name), None), timeout=60)
    wait_for("the training job requeued", lambda: events_with(cluster, "LimitRequeued"), timeout=120)
    requeued = events_with(cluster, "LimitRequeued")[0]
    assert requeued.message.endswith("(limit 8 s): requeued, back in its queue after 4 s"), requeued.message
    wait_for(f"{first} evicted", lambda: first not in train_pods() or train_pods()[first].metadata.deletion_timestamp,
             timeout=60)
    if not real:
        wait_for(f"{first} gone", lambda: first not in train_pods(), timeout=60)
        cluster.pod(NS, "train-1", gpus=1, queue="lab", controller=controller,
                    labels={"batch.kubernetes.io/job-name": "train"},
                    annotations={"scheduling.tessera.dev/gpu-utilisation": "busy"})
    wait_for("the training job running again",
             lambda: any(p.spec.node_name and not p.metadata.deletion_timestamp and n != first
                         for n, p in train_pods().items()), timeout=120)
    assert 'tessera_workloads_requeued_total{reason="max-runtime"}' in cluster.metrics("scheduler")

    # Prometheus stops: a notebook that goes idle is not stopped while its idle time cannot be read.
    notebook(cluster, "nb-late", "idle_after 8s")
    wait_for("nb-late bound", lambda: cluster.pods(NS).get("nb-late") and cluster.pods(NS)["nb-late"].spec.node_name,
             timeout=60)
    stop_process(cluster, "prometheus")
    wait_for("the scheduler saying GPU utilisation is unavailable",
             lambda: "GPU utilisation unavailable (" in cluster.scheduler_log("scheduler"), timeout=60)
    time.sleep(30)  # well past nb-late's 8 s busy start, 3 s window and 10 s limit
    pods = cluster.pods(NS)
    for name in ("nb-late", "nb-busy", "nb-warm"):
        assert name in pods and not pods[name].metadata.deletion_timestamp, f"{name} was ended"
    assert not [e for e in events_with(cluster, "LimitStopped") if e.involved_object.name != "nb-idle"], \
        [e.message for e in events_with(cluster, "LimitStopped")]
    metrics = cluster.metrics("scheduler")
    assert "tessera_gpu_telemetry_up 0" in metrics, metrics
    assert "idle time does not accrue until it is back" in cluster.scheduler_log("scheduler")
