"""End-to-end tests of `tessera scheduler` against `tessera dev cluster` or a real control plane
(scripts/real-cluster.sh), driven through the official Kubernetes Python client.
Usage: scheduler_e2e.py [--cluster dev|real] SCENARIO (see SCENARIOS below)."""
import base64
import os
import signal
import subprocess
import sys
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (SKIP, Cluster, condition, edited_kubeconfig, gpu_nodes, k8s, real_control_plane_missing,  # noqa: E402
                     wait_for)
from cli_e2e import cli, tessera  # noqa: E402
from estimates_e2e import estimates  # noqa: E402
from idle_gpus_e2e import idle_gpus, prometheus_missing  # noqa: E402
from webhook_e2e import gpu_memory_webhook  # noqa: E402
import workload_controllers  # noqa: E402


def node_gpu_use(cluster, namespaces):
    """GPUs requested per node by the bound pods of `namespaces`."""
    use = {}
    for namespace in namespaces:
        for pod in cluster.bound(namespace).values():
            limits = pod.spec.containers[0].resources.limits or {}
            use[pod.spec.node_name] = use.get(pod.spec.node_name, 0) + int(limits.get("nvidia.com/gpu", "0"))
    return use


def gang(cluster):
    """A gang that fits starts whole; one that does not fit starts no pod and says why."""
    cluster.queue("team-a", 32)
    cluster.namespace("ml")
    cluster.start_scheduler("scheduler")
    cluster.pod_group("ml", "first", 4, "team-a")
    cluster.pod_group("ml", "second", 2, "team-a")
    for i in range(4):
        cluster.pod("ml", f"first-{i}", gpus=8, group="first")
    for i in range(2):
        cluster.pod("ml", f"second-{i}", gpus=8, group="second")
    bound = wait_for("the first gang bound", lambda: len(cluster.bound("ml")) == 4 and cluster.bound("ml"))
    assert sorted(bound) == [f"first-{i}" for i in range(4)], sorted(bound)
    assert len({pod.spec.node_name for pod in bound.values()}) == 4
    for pod in bound.values():
        assert pod.metadata.annotations["scheduling.tessera.dev/gpu-index"] == "0,1,2,3,4,5,6,7"
    status = wait_for("the waiting gang's status",
                      lambda: cluster.get_pod_group("ml", "second").get("status", {}).get("conditions"))
    condition = status[0]
    assert condition["type"] == "Scheduled" and condition["status"] == "False", condition
    assert condition["reason"] == "Unschedulable", condition
    time.sleep(1)  # the second gang stays whole-or-nothing across further cycles
    assert not any(name.startswith("second") for name in cluster.bound("ml"))
    running = wait_for("the first gang's PodGroup running",
                       lambda: cluster.get_pod_group("ml", "first").get("status", {}).get("phase") == "Running")
    assert running
    reasons = {event.reason for event in cluster.events("ml")}
    assert "Scheduled" in reasons and "FailedScheduling" in reasons, reasons
    queue = cluster.custom.get_cluster_custom_object("scheduling.tessera.dev", "v1alpha1", "queues", "team-a")
    assert queue["status"]["allocated"]["gpu"] == "32", queue["status"]
    metrics = cluster.metrics("scheduler")
    assert "tessera_pods_scheduled_total 4" in metrics, metrics
    assert 'tessera_pending_workloads{reason="Unschedulable"} 1' in metrics, metrics


def borrow_everything(cluster, gpus):
    """Two teams deserving half of `gpus` each; team-a's one-GPU pods (namespace a) hold them all."""
    cluster.queue("org", gpus)
    cluster.queue("team-a", gpus // 2, parent="org")
    cluster.queue("team-b", gpus // 2, parent="org")
    cluster.namespace("a")
    cluster.namespace("b")
    cluster.start_scheduler("scheduler")
    for i in range(gpus):
        cluster.pod("a", f"borrower-{i}", gpus=1, queue="team-a", labels={"app": "borrower"})
    wait_for("team-a borrowing every GPU", lambda: len(cluster.bound("a")) == gpus)


def reclaim(cluster):
    """A queue under its deserved quota gets it back through the Eviction API."""
    borrow_everything(cluster, 16)
    cluster.pod_group("b", "job", 2, "team-b")
    for i in range(2):
        cluster.pod("b", f"job-{i}", gpus=4, group="job")
    wait_for("team-b's gang bound", lambda: len(cluster.bound("b")) == 2, timeout=30)
    remaining = cluster.pods("a")
    assert len(remaining) == 8, f"exactly 8 borrowers evicted, {16 - len(remaining)} were"
    use = node_gpu_use(cluster, ["a", "b"])
    assert all(gpus <= 8 for gpus in use.values()), use
    reasons = [event.reason for event in cluster.events("a")]
    assert reasons.count("Reclaimed") == 8, reasons
    assert "tessera_evictions_total{action=\"reclaim\"} 8" in cluster.metrics("scheduler")


def pdb(cluster):
    """An eviction a PodDisruptionBudget forbids is refused (429) and nothing is bound over it."""
    borrow_everything(cluster, 8)
    wait_for("team-a's pods running",
             lambda: all(p.status.phase == "Running" for p in cluster.pods("a").values()))
    cluster.api.call_api(
        "/apis/policy/v1/namespaces/a/poddisruptionbudgets", "POST",
        body={"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "keep-all"},
              "spec": {"minAvailable": 8, "selector": {"matchLabels": {"app": "borrower"}}}},
        auth_settings=["BearerToken"], response_type="object")
    cluster.pod("b", "job", gpus=4, queue="team-b")
    wait_for("a refused eviction", lambda: "EvictionRefused" in {e.reason for e in cluster.events("b")}, timeout=30)
    time.sleep(2)  # cycles go on; a refused eviction is not retried for 10 s
    refusals = [e for e in cluster.events("b") if e.reason == "EvictionRefused"]
    assert len(refusals) == 1, [e.message for e in refusals]
    assert len(cluster.pods("a")) == 8, "no borrower evicted"
    assert not cluster.bound("b"), "nothing bound over pods that were not evicted"
    assert "tessera_eviction_refusals_total" in cluster.metrics("scheduler")


def failover(cluster):
    """Two replicas; the leader is killed; the standby takes over and binds."""
    cluster.queue("team-a", 64)
    cluster.namespace("ml")
    cluster.namespace("tessera-system")  # the lease's, as deploy/rbac.yaml makes it
    # TESSERA_LEASE="15,10,2" measures with the scheduler's defaults; the test uses a short lease.
    lease, renew, retry = (float(x) for x in os.environ.get("TESSERA_LEASE", "5,3,0.25").split(","))
    args = ["--leader-elect", "--lease-namespace", "tessera-system", "--lease-duration", str(lease),
            "--renew-deadline", str(renew), "--retry-period", str(retry)]
    first = cluster.start_scheduler("replica-1", *args, "--identity", "replica-1")
    wait_for("replica-1 leading", lambda: "leading as replica-1" in cluster.scheduler_log("replica-1"), timeout=20)
    cluster.start_scheduler("replica-2", *args, "--identity", "replica-2")
    cluster.pod("ml", "before", gpus=1, queue="team-a")
    wait_for("a pod bound by the leader", lambda: "before" in cluster.bound("ml"))
    wait_for("replica-2 synced", lambda: "caches synced" in cluster.scheduler_log("replica-2"))
    first.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    cluster.pod("ml", "after", gpus=1, queue="team-a")
    wait_for("the standby binding", lambda: "after" in cluster.bound("ml"), timeout=lease + 30)
    took = time.monotonic() - killed
    held = cluster.coordination.read_namespaced_lease("tessera-scheduler", "tessera-system")
    assert held.spec.holder_identity == "replica-2", held.spec
    assert "leading as replica-2" in cluster.scheduler_log("replica-2")
    print(f"failover: leader killed to standby's first binding {took:.2f} s (lease duration {lease:g} s, "
          f"retry period {retry:g} s)")
    assert took < lease + 6, f"the standby took {took:.1f} s"  # one lease, not two
    # A leader stopped cleanly (SIGTERM, as in a rolling update) releases the lease at once.
    cluster.start_scheduler("replica-3", *args, "--identity", "replica-3")
    wait_for("replica-3 synced", lambda: "caches synced" in cluster.scheduler_log("replica-3"))
    second, _ = cluster.schedulers["replica-2"]
    second.send_signal(signal.SIGTERM)
    second.wait(timeout=10)
    stopped = time.monotonic()
    released = cluster.coordination.read_namespaced_lease("tessera-scheduler", "tessera-system").spec
    assert released.holder_identity in ("", None, "replica-3"), f"the stopped leader kept the lease: {released}"
    cluster.pod("ml", "after-release", gpus=1, queue="team-a")
    wait_for("replica-3 binding", lambda: "after-release" in cluster.bound("ml"), timeout=lease + 30)
    handed_over = time.monotonic() - stopped
    # The release is checked above; how soon the standby binds after it depends on the machine's load.
    print(f"failover: leader stopped cleanly to the standby's first binding {handed_over:.2f} s")


def restart(cluster):
    """A scheduler killed in the middle of binding is restarted; it rebuilds from the API server,
    finishes the half-bound work, and no GPU is given twice."""
    cluster.queue("team-a", 240)
    cluster.namespace("ml")
    for i in range(160):
        cluster.pod("ml", f"early-{i}", gpus=1, queue="team-a")
    cluster.pod_group("ml", "gang", 8, "team-a")
    for i in range(8):
        cluster.pod("ml", f"gang-{i}", gpus=2, group="gang")
    # One API worker: binding 168 pods takes a while, and the kill lands in the middle of it.
    first = cluster.start_scheduler("first", "--api-workers", "1")
    wait_for("the first binding",
             lambda: cluster.core.list_namespaced_pod("ml", field_selector="spec.nodeName!=", limit=1).items,
             interval=0.005)
    first.send_signal(signal.SIGKILL)
    first.wait()
    bound_at_kill = len(cluster.bound("ml"))
    assert bound_at_kill < 168, f"the scheduler finished ({bound_at_kill} bound) before it was killed"
    for i in range(40):
        cluster.pod("ml", f"late-{i}", gpus=1, queue="team-a")
    restarted = time.monotonic()
    cluster.start_scheduler("second")
    wait_for("every pod bound", lambda: len(cluster.bound("ml")) == 208, timeout=60)
    took = time.monotonic() - restarted
    use = node_gpu_use(cluster, ["ml"])
    assert sum(use.values()) == 216 and all(gpus <= 8 for gpus in use.values()), use
    devices = {}
    for pod in cluster.bound("ml").values():
        for device in pod.metadata.annotations["scheduling.tessera.dev/gpu-index"].split(","):
            key = (pod.spec.node_name, device)
            assert key not in devices, f"{pod.metadata.name} and {devices[key]} share GPU {key}"
            devices[key] = pod.metadata.name
    assert "failed" not in cluster.scheduler_log("second"), cluster.scheduler_log("second")
    print(f"restart: killed with {bound_at_kill} of 168 pods bound; the restarted scheduler bound the other "
          f"{208 - bound_at_kill} (40 of them new) {took:.2f} s after it started")


def history_forgotten(cluster, namespace, resource_version):
    """Whether the server refuses to watch the namespace's pods from resource_version (410 Gone)."""
    try:
        response = cluster.core.list_namespaced_pod(namespace, watch=True, resource_version=resource_version,
                                                    timeout_seconds=1, _preload_content=False)
        return '"code":410' in response.data.decode().replace(" ", "")
    except k8s.ApiException as error:
        return error.status == 410


def watch_expiry(cluster):
    """The scheduler's watch expires while it is stopped; it relists (410 Gone) and goes on."""
    cluster.queue("team-a", 64)
    cluster.namespace("ml")
    # The dev cluster ends every watch after 1 s; a real server ends them when the client asks.
    scheduler = cluster.start_scheduler("scheduler", *(["--watch-timeout", "1"] if cluster.kind == "real" else []))
    cluster.pod("ml", "first", gpus=1, queue="team-a")
    wait_for("the first pod bound", lambda: "first" in cluster.bound("ml"))
    scheduler.send_signal(signal.SIGSTOP)
    time.sleep(2.5)
    # The scheduler has seen nothing later than this: it was stopped before (events after the
    # first pod's binding, its status say, may have reached it before the stop).
    seen = cluster.core.list_namespaced_pod("ml").metadata.resource_version
    for i in range(40):  # more events than the server's history of 20 keeps
        cluster.pod("ml", f"while-stopped-{i}", gpus=1, queue="team-a")
    # The real server forgets history when etcd compacts, every second, up to what the previous
    # compaction saw: resumed before that passes `seen`, the scheduler might still find its place.
    wait_for("the history from before the stop forgotten", lambda: history_forgotten(cluster, "ml", seen), timeout=60)
    scheduler.send_signal(signal.SIGCONT)
    wait_for("every pod bound", lambda: len(cluster.bound("ml")) == 41, timeout=30)
    metrics = cluster.metrics("scheduler")
    relists = [line for line in metrics.splitlines() if line.startswith("tessera_informer_relists_total{resource=\"pods\"}")]
    assert relists and float(relists[0].split()[-1]) >= 1, relists


def job_manifest(name, parallelism, gpus, queue="team-a", owner=None):
    """An indexed batch/v1 Job whose pods Tessera schedules."""
    container = {"name": "main", "image": "busybox", "command": ["sleep", "3600"],
                 "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": str(gpus)}}}
    metadata = {"name": name}
    if owner:
        metadata["ownerReferences"] = [{**owner, "controller": True, "blockOwnerDeletion": True}]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
            "spec": {"parallelism": parallelism, "completions": parallelism, "completionMode": "Indexed",
                     "backoffLimit": 0,
                     "template": {"metadata": {"labels": {"scheduling.tessera.dev/queue": queue}},
                                  "spec": {"schedulerName": "tessera", "restartPolicy": "Never",
                                           "containers": [container]}}}}


def reference(obj):
    """What an ownerReference names of an object (a dict, or a client object)."""
    if isinstance(obj, dict):
        meta = obj["metadata"]
        return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"], "uid": meta["uid"]}
    return {"apiVersion": obj.api_version, "kind": obj.kind, "name": obj.metadata.name, "uid": obj.metadata.uid}


def owner_events(cluster, namespace, kind, name):
    """The messages of the Events about one object."""
    return [e.message for e in cluster.events(namespace)
            if e.involved_object.kind == kind and e.involved_object.name == name]


def owner_condition(cluster, group, version, namespace, plural, name):
    """The condition TesseraScheduled of a custom resource (a JobSet, a TrainJob), or None."""
    owner = cluster.custom.get_namespaced_custom_object(group, version, namespace, plural, name)
    return next((c for c in owner.get("status", {}).get("conditions", []) if c["type"] == "TesseraScheduled"), None)


def jobset_condition(cluster, namespace, name):
    return owner_condition(cluster, "jobset.x-k8s.io", "v1alpha2", namespace, "jobsets", name)


def metric_value(cluster, name, labels):
    """The value of one sample of the scheduler's /metrics with all of `labels`, or None."""
    for line in cluster.metrics("scheduler").splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


def workloads(cluster):
    """The workloads users already run are gangs with no PodGroup written: an indexed Job, a JobSet of
    two replicated jobs, a LeaderWorkerSet group. The dev cluster runs no controller: there the test
    makes the pods, as the Job and LeaderWorkerSet controllers would."""
    cluster.queue("team-a", 48)
    cluster.namespace("ml")
    # The JobSet kind is served before the scheduler starts, as when its operator is installed.
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "jobsets.jobset.x-k8s.io"},
           "spec": {"group": "jobset.x-k8s.io", "scope": "Namespaced",
                    "names": {"plural": "jobsets", "singular": "jobset", "kind": "JobSet", "listKind": "JobSetList"},
                    "versions": [{"name": "v1alpha2", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object",
                                                                 "x-kubernetes-preserve-unknown-fields": True}}}]}}
    k8s.ApiextensionsV1Api(cluster.api).create_custom_resource_definition(crd)
    scheduler = cluster.start_scheduler("scheduler")
    batch = k8s.BatchV1Api(cluster.api)
    acts_as_controller = cluster.kind == "dev"

    def job_pods(job, count, gpus, first=0):
        for index in range(first, first + count):
            cluster.pod("ml", f"{job.metadata.name}-{index}", gpus=gpus, queue="team-a", controller=reference(job),
                        labels={"batch.kubernetes.io/job-name": job.metadata.name})

    def pods_of(prefix):
        return {name: pod for name, pod in cluster.pods("ml").items() if name.startswith(prefix + "-")}

    def job_condition(name):
        """The Job's condition TesseraScheduled, beside the Job controller's own."""
        status = batch.read_namespaced_job_status(name, "ml").status
        conditions = (status.conditions if status else None) or []
        return next((c for c in conditions if c.type == "TesseraScheduled"), None)

    # An indexed Job of 4 pods x 8 GPUs starts whole, in one cycle; until its pods all exist, none starts.
    started = time.monotonic()
    train = batch.create_namespaced_job("ml", job_manifest("train", 4, 8))
    if acts_as_controller:
        job_pods(train, 3, 8)
        wait_for("the Job told its gang is incomplete",
                 lambda: any("GangIncomplete: Job ml/train needs 4 pods to start together and has 3" in m
                             for m in owner_events(cluster, "ml", "Job", "train")))
        assert not any(pod.spec.node_name for pod in pods_of("train").values()), "a pod of an incomplete gang bound"
        waits = wait_for("the Job's condition TesseraScheduled=False", lambda: (c := job_condition("train"))
                         and c.status == "False" and c)
        assert waits.reason == "GangIncomplete" and "has 3" in waits.message, waits
        job_pods(train, 1, 8, first=3)
    wait_for("the Job's 4 pods bound", lambda: sum(1 for p in pods_of("train").values() if p.spec.node_name) == 4,
             timeout=60)
    took = time.monotonic() - started
    assert_cycles_binding(cluster, 4, 1)  # all four in one cycle
    print(f"workloads: Job of 4 pods x 8 GPUs, apply to all bound {took:.2f} s")
    wait_for("the Job's condition TesseraScheduled=True", lambda: (c := job_condition("train")) and c.status == "True")
    # Its status is kept in the PodGroup Tessera writes for it, which goes with the Job.
    group = wait_for("the Job's PodGroup running",
                     lambda: (g := cluster.get_pod_group("ml", "job-train")).get("status", {}).get("phase") == "Running"
                     and g)
    assert group["spec"]["minMember"] == 4, group["spec"]
    assert group["metadata"]["annotations"]["scheduling.tessera.dev/workload"] == "ml/Job/train", group["metadata"]
    assert [(r["kind"], r["uid"]) for r in group["metadata"]["ownerReferences"]] == [("Job", train.metadata.uid)]
    if acts_as_controller:
        # A pod of it fails on its own; the Job controller makes a replacement, which joins the three
        # still running: one restart of the gang, for the failure.
        cluster.core.patch_namespaced_pod_status("train-0", "ml", {"status": {"phase": "Failed"}})
        wait_for("the failure on the PodGroup", lambda: cluster.get_pod_group("ml", "job-train").get("status", {}).get(
            "interruption", {}).get("reason") == "PodFailed")
        job_pods(train, 1, 8, first=4)
        group = wait_for("the restart after the failure counted", lambda: (
            g := cluster.get_pod_group("ml", "job-train")).get("status", {}).get("restarts") == 1 and g, timeout=60)
        status = group["status"]
        assert status["lastRestartReason"] == "PodFailed" and "interruption" not in status, status
        # Its 3 pods still bound when the failure was seen: 24 GPUs from their binding (the kubelet
        # may not have started them yet) to the failure, at most since the Job was made; the
        # binding's time is kept in whole seconds (PodScheduled's lastTransitionTime), so up to one
        # second earlier.
        assert 0 < status["lostGpuHours"] < 24 * (time.monotonic() - started + 1) / 3600, status
        print(f"workloads: a pod failed; restarts 1 (PodFailed), lost GPU-hours {status['lostGpuHours']}")

    # A Job that does not fit (3 x 8 GPUs, 16 free) starts no pod, and the Job says why.
    big = batch.create_namespaced_job("ml", job_manifest("big", 3, 8))
    if acts_as_controller:
        job_pods(big, 3, 8)
    wait_for("the Job told why it waits",
             lambda: any(m.startswith("Unschedulable: ") for m in owner_events(cluster, "ml", "Job", "big")), timeout=60)
    assert not any(pod.spec.node_name for pod in pods_of("big").values()), "a pod of a gang that does not fit bound"
    waiting = wait_for("the waiting Job's PodGroup saying why",
                       lambda: condition(cluster.get_pod_group("ml", "job-big"), "Scheduled"))
    assert waiting["status"] == "False" and waiting["reason"] == "Unschedulable", waiting
    batch.delete_namespaced_job("big", "ml", propagation_policy="Background")
    if not acts_as_controller:  # the garbage collector takes the PodGroup with the Job
        wait_for("the PodGroup of the deleted Job gone", lambda: _create_ignoring_missing_kind(
            lambda: cluster.get_pod_group("ml", "job-big")) is None, timeout=60)
    for name in pods_of("big"):  # the garbage collector may delete them first
        _create_ignoring_missing_kind(lambda: cluster.core.delete_namespaced_pod(name, "ml", grace_period_seconds=0))

    # A JobSet of a leader Job and a Job of 3 workers is one gang of 4.
    leader_spec = job_manifest("x", 1, 1)["spec"]
    worker_spec = job_manifest("x", 3, 1)["spec"]
    jobset_body = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "llama"},
                   "spec": {"replicatedJobs": [{"name": "leader", "replicas": 1, "template": {"spec": leader_spec}},
                                               {"name": "workers", "replicas": 1, "template": {"spec": worker_spec}}]}}
    jobset = wait_for("the JobSet kind served", lambda: _create_ignoring_missing_kind(
        lambda: cluster.custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", "ml", "jobsets",
                                                               jobset_body)), timeout=30)
    started = time.monotonic()
    leader = batch.create_namespaced_job("ml", job_manifest("llama-leader-0", 1, 1, owner=reference(jobset)))
    if acts_as_controller:
        job_pods(leader, 1, 1)
        wait_for("the JobSet told its gang is incomplete",
                 lambda: any("JobSet ml/llama needs 4 pods to start together and has 1" in m
                             for m in owner_events(cluster, "ml", "JobSet", "llama")))
    workers = batch.create_namespaced_job("ml", job_manifest("llama-workers-0", 3, 1, owner=reference(jobset)))
    if acts_as_controller:
        job_pods(workers, 3, 1)
    wait_for("the JobSet's 4 pods bound",
             lambda: sum(1 for n, p in cluster.pods("ml").items() if n.startswith("llama-") and p.spec.node_name) == 4,
             timeout=60)
    print(f"workloads: JobSet of 1 leader + 3 workers, apply to all bound {time.monotonic() - started:.2f} s")

    # Each group of a LeaderWorkerSet is a gang of the group's size (the dev cluster only: no LWS
    # controller runs on the real one).
    if acts_as_controller:
        sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "vllm-0", "uid": "sts-vllm-0"}}
        lws = {"leaderworkerset.sigs.k8s.io/name": "vllm", "leaderworkerset.sigs.k8s.io/group-index": "0"}
        size = {"leaderworkerset.sigs.k8s.io/size": "2"}
        cluster.pod("ml", "vllm-0", gpus=2, queue="team-a", controller=reference(sts), labels=lws, annotations=size)
        wait_for("the LeaderWorkerSet told its group is incomplete",
                 lambda: any("LeaderWorkerSet ml/vllm needs 2 pods" in m
                             for m in owner_events(cluster, "ml", "LeaderWorkerSet", "vllm")))
        assert not cluster.pods("ml")["vllm-0"].spec.node_name
        cluster.pod("ml", "vllm-0-1", gpus=2, queue="team-a", controller=reference(sts), labels=lws, annotations=size)
        wait_for("the group's 2 pods bound",
                 lambda: all(cluster.pods("ml")[n].spec.node_name for n in ("vllm-0", "vllm-0-1")))

    assert scheduler.poll() is None, "the scheduler exited"


def inference(cluster):
    """A Deployment's replicas are inference workloads that training never preempts: an urgent Job
    that needs the whole node waits rather than evict them (it would take the training Job)."""
    cluster.queue("team-a", 8)
    cluster.namespace("ml")
    k8s.SchedulingV1Api(cluster.api).create_priority_class(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"}, "value": 1000})
    scheduler = cluster.start_scheduler("scheduler")
    apps = k8s.AppsV1Api(cluster.api)
    batch = k8s.BatchV1Api(cluster.api)
    container = {"name": "server", "image": "busybox",
                 "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": "1"}}}
    template = {"metadata": {"labels": {"app": "embed", "scheduling.tessera.dev/queue": "team-a"}},
                "spec": {"schedulerName": "tessera", "containers": [container]}}
    spec = {"replicas": 3, "selector": {"matchLabels": {"app": "embed"}}, "template": template}
    if cluster.kind == "dev":  # no controller runs: the ReplicaSet a Deployment would make, and its pods
        replica_set = apps.create_namespaced_replica_set(
            "ml", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "embed-7d9f"}, "spec": spec})
        for i in range(3):
            cluster.pod("ml", f"embed-7d9f-{i}", queue="team-a", controller=reference(replica_set),
                        labels={"app": "embed"})
    else:
        apps.create_namespaced_deployment(
            "ml", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "embed"}, "spec": spec})

    def running(prefix):
        return {n: p for n, p in cluster.pods("ml").items()
                if n.startswith(prefix) and p.spec.node_name and not p.metadata.deletion_timestamp}

    def job_with_pods(name, pods, priority_class=None):
        manifest = job_manifest(name, pods, 1)
        if priority_class:
            manifest["spec"]["template"]["spec"]["priorityClassName"] = priority_class
        job = batch.create_namespaced_job("ml", manifest)
        if cluster.kind == "dev":
            for index in range(pods):
                body = {"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": f"{name}-{index}", "namespace": "ml",
                                     "labels": {"scheduling.tessera.dev/queue": "team-a"},
                                     "ownerReferences": [{**reference(job), "controller": True}]},
                        "spec": manifest["spec"]["template"]["spec"]}
                cluster.core.create_namespaced_pod("ml", body)
        return job

    wait_for("the 3 inference replicas bound", lambda: len(running("embed-")) == 3)
    job_with_pods("train", 5)
    wait_for("the training Job bound", lambda: len(running("train-")) == 5)
    job_with_pods("urgent", 8, "urgent")
    # While the Job controller makes its pods the Job may first hear GangIncomplete; an Event's
    # message is updated at most every 30 s (the recorder's bound on writes), hence the wait.
    wait_for("the urgent Job told why it waits",
             lambda: any(m.startswith("Unschedulable: ") for m in owner_events(cluster, "ml", "Job", "urgent")),
             timeout=60)
    time.sleep(2)  # more cycles: preemption would have evicted by now
    assert len(running("embed-")) == 3, "an inference replica was preempted"
    assert not running("urgent-"), "the urgent Job started"
    assert "Preempted" not in {e.reason for e in cluster.events("ml")}
    # Room it may take: the training Job goes for an urgent Job that fits beside the replicas.
    job_with_pods("fits", 5, "urgent")
    wait_for("the second urgent Job bound through preemption", lambda: len(running("fits-")) == 5, timeout=60)
    assert len(running("embed-")) == 3, "an inference replica was preempted"
    assert not running("train-"), "the training Job kept running"
    assert scheduler.poll() is None, "the scheduler exited"


def gpu_memory(cluster):
    """GPU-memory pods on a node of the pool "inference", whose limits may reach 1.5 times a device:
    three 20Gi pods bursting to 40Gi share its one GPU, each bound with its request, limit and
    resolver for the node agent; a fourth has room for its request but not its limit, and says so
    on its PodScheduled condition and in the metrics; a bad resolver is an error on its pod."""
    cluster.queue("serving", 4)
    cluster.namespace("ml")
    scheduler = cluster.start_scheduler("scheduler", "--gpu-memory-overcommit", "inference=1.5")
    memory = {"scheduling.tessera.dev/gpu-memory": "20Gi", "scheduling.tessera.dev/gpu-memory-limit": "40Gi"}
    for i in range(3):
        cluster.pod("ml", f"llm-{i}", gpus=0, queue="serving",
                    annotations={**memory, "scheduling.tessera.dev/gpu-memory-resolver": "priority"})
    bound = wait_for("the 3 GPU-memory pods bound", lambda: len(cluster.bound("ml")) == 3 and cluster.bound("ml"))
    for name, pod in bound.items():
        annotations = pod.metadata.annotations
        assert annotations["scheduling.tessera.dev/gpu-memory-request-bytes"] == str(20 << 30), annotations
        assert annotations["scheduling.tessera.dev/gpu-memory-limit-bytes"] == str(40 << 30), annotations
        env = annotations["scheduling.tessera.dev/gpu-env"]
        for line in (f"TESSERA_GPU_MEMORY_REQUEST={20 << 30}", f"TESSERA_GPU_MEMORY_LIMIT={40 << 30}",
                     "TESSERA_GPU_MEMORY_RESOLVER=priority"):
            assert line + "\n" in env, (name, env)
    cluster.pod("ml", "llm-3", gpus=0, queue="serving", annotations=memory)
    waiting = wait_for("llm-3's PodScheduled condition", lambda: condition(cluster.pods("ml")["llm-3"], "PodScheduled"))
    assert waiting.status == "False", waiting
    assert ("GPU memory limits: 1 node has room for the 20Gi request but not for the 40Gi limit at overcommit 1.5"
            in waiting.message), waiting.message
    wait_for("the limit-pending gauge", lambda: "tessera_gpu_memory_limit_pending_workloads 1\n"
             in cluster.metrics("scheduler"))
    metrics = cluster.metrics("scheduler")
    assert f'tessera_gpu_memory_bytes{{measure="limits",pool="inference"}} {120 << 30}' in metrics, metrics
    cluster.pod("ml", "bad-resolver", gpus=0, queue="serving",
                annotations={**memory, "scheduling.tessera.dev/gpu-memory-resolver": "kill"})
    bad = wait_for("bad-resolver's PodScheduled condition",
                   lambda: condition(cluster.pods("ml")["bad-resolver"], "PodScheduled"))
    assert "gpu-memory-resolver" in bad.message and "'kill' is not a GPU memory resolver" in bad.message, bad.message
    assert scheduler.poll() is None, "the scheduler exited"


EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy", "examples")


def kubectl_apply(cluster, namespace, example):
    """`kubectl apply -n NAMESPACE -f deploy/examples/EXAMPLE`, as a user submits it; its start time."""
    started = time.monotonic()
    applied = cluster.kubectl("apply", "-n", namespace, "-f", os.path.join(EXAMPLES, example))
    assert applied.returncode == 0, applied.stderr
    return started


def jobset_pods(cluster, namespace, jobset):
    """The pods of a JobSet (its controller labels them), by uid."""
    pods = cluster.core.list_namespaced_pod(namespace, label_selector=f"jobset.sigs.k8s.io/jobset-name={jobset}")
    return {p.metadata.uid: p for p in pods.items}


def bound_count(pods):
    return sum(1 for p in pods.values() if p.spec.node_name and not p.metadata.deletion_timestamp)


def assert_cycles_binding(cluster, count, cycles):
    """That `cycles` cycles of the scheduler have bound exactly `count` pods each, no more (its log
    line follows the bindings the test saw)."""
    def seen():
        return cluster.scheduler_log("scheduler").count(f"cycle: {count} pods bound")
    wait_for(f"{cycles} cycles binding {count} pods each", lambda: seen() >= cycles, timeout=10)
    assert seen() == cycles, cluster.scheduler_log("scheduler")


def examples(cluster):
    """deploy/examples/training-job.yaml (an indexed Job of 4 pods x 8 GPUs, with its namespace) and
    inference-deployment.yaml (3 replicas of 1 GPU) applied with kubectl as written, to the real
    Job and Deployment controllers: the Job's 4 pods bind in one cycle, the 3 replicas bind."""
    cluster.queue("research-nlp", 40)
    cluster.start_scheduler("scheduler")
    started = kubectl_apply(cluster, "team-a", "training-job.yaml")
    wait_for("the Job's 4 pods bound", lambda: sum(1 for p in cluster.core.list_namespaced_pod(
        "team-a", label_selector="batch.kubernetes.io/job-name=bert-finetune").items if p.spec.node_name) == 4,
        timeout=90)
    print(f"examples: Job of 4 pods x 8 GPUs, kubectl apply to all 4 bound {time.monotonic() - started:.2f} s")
    assert_cycles_binding(cluster, 4, 1)
    started = kubectl_apply(cluster, "team-a", "inference-deployment.yaml")
    wait_for("the 3 replicas bound", lambda: sum(1 for p in cluster.core.list_namespaced_pod(
        "team-a", label_selector="app=embed").items if p.spec.node_name) == 3, timeout=90)
    print(f"examples: Deployment of 3 replicas x 1 GPU, kubectl apply to all 3 bound {time.monotonic() - started:.2f} s")


def second_waits_then_starts(cluster, example, owner, pods_in, condition_in):
    """EXAMPLE applied again in team-b, with no room left beside team-a's: its 4 pods are made, none
    binds, and its OWNER (kind, resource, name) carries FailedScheduling `Unschedulable: ...` and
    the condition TesseraScheduled=False beside its controller's own, which that controller keeps,
    while team-a's carries True; once team-a's is deleted, the 4 bind in one cycle and the condition
    turns True. PODS_IN(namespace) gives the pods by uid, CONDITION_IN(namespace) the condition."""
    kind, resource, name = owner
    kubectl_apply(cluster, "team-b", example)
    wait_for(f"the second {kind}'s 4 pods made", lambda: len(pods_in("team-b")) == 4, timeout=60)
    wait_for(f"the {kind} that does not fit told why", lambda: any(
        e.reason == "FailedScheduling" and e.message.startswith("Unschedulable: ")
        for e in cluster.events("team-b") if (e.involved_object.kind, e.involved_object.name) == (kind, name)),
        timeout=60)
    time.sleep(2)  # cycles more: a partial gang would have bound by now
    assert bound_count(pods_in("team-b")) == 0, f"a pod of a {kind} that does not fit bound"
    waits = wait_for(f"the waiting {kind}'s condition TesseraScheduled=False", lambda: (
        c := condition_in("team-b")) and c["status"] == "False" and c, timeout=60)
    assert waits["reason"] == "Unschedulable" and "GPU" in waits["message"], waits
    wait_for(f"the running {kind}'s condition TesseraScheduled=True", lambda: (
        c := condition_in("team-a")) and c["status"] == "True", timeout=60)

    deleted = cluster.kubectl("delete", "-n", "team-a", resource, name, "--wait=false")
    assert deleted.returncode == 0, deleted.stderr
    wait_for(f"the second {kind}'s 4 pods bound once there is room", lambda: bound_count(pods_in("team-b")) == 4,
             timeout=90)
    assert_cycles_binding(cluster, 4, 2)
    wait_for(f"the second {kind}'s condition TesseraScheduled=True once it runs", lambda: (
        c := condition_in("team-b")) and c["status"] == "True", timeout=60)


def jobset(cluster):
    """The real JobSet controller makes the Jobs of deploy/examples/operators/jobset.yaml (a leader and 3
    workers, 8 GPUs each) and the Job controller their pods: one gang, bound in one cycle. The same
    JobSet in another namespace does not fit: none of its pods binds and the JobSet carries a
    FailedScheduling event; it starts whole once the first is deleted. Then one of its workers fails
    on its own: the JobSet's failurePolicy makes its pods again, and they start whole as the same
    workload, one restart (PodFailed) on its PodGroup with the GPU-hours lost."""
    cluster.queue("research-nlp", 32)
    for namespace in ("team-a", "team-b"):
        cluster.namespace(namespace)
    workload_controllers.start(cluster, "jobset")
    cluster.start_scheduler("scheduler")
    started = kubectl_apply(cluster, "team-a", "operators/jobset.yaml")
    wait_for("the JobSet's 4 pods bound", lambda: bound_count(jobset_pods(cluster, "team-a", "llama")) == 4, timeout=90)
    print(f"jobset: JobSet of 1 leader + 3 workers x 8 GPUs, kubectl apply to all 4 bound "
          f"{time.monotonic() - started:.2f} s")
    assert_cycles_binding(cluster, 4, 1)
    group = cluster.get_pod_group("team-a", "jobset-llama")
    assert group["spec"]["minMember"] == 4 and group["spec"]["queue"] == "research-nlp", group["spec"]

    second_waits_then_starts(cluster, "operators/jobset.yaml", ("JobSet", "jobset", "llama"),
                             lambda namespace: jobset_pods(cluster, namespace, "llama"),
                             lambda namespace: jobset_condition(cluster, namespace, "llama"))

    # A worker fails on its own, as its kubelet would say: its Job fails (backoffLimit 0), the
    # JobSet's failurePolicy makes all its Jobs again, and Tessera starts the 4 new pods as the same
    # workload, counting one restart for the failure and the GPU-hours the run threw away.
    first = jobset_pods(cluster, "team-b", "llama")
    ran_since = time.monotonic()
    worker = next(p for p in first.values() if "workers" in p.metadata.name)
    cluster.core.patch_namespaced_pod_status(worker.metadata.name, "team-b", {"status": {"phase": "Failed"}})

    def second():
        return {u: p for u, p in jobset_pods(cluster, "team-b", "llama").items() if u not in first}
    wait_for("the JobSet's 4 pods made again after the failure", lambda: len(second()) == 4, timeout=60)
    wait_for("the 4 new pods bound", lambda: bound_count(second()) == 4, timeout=90)
    print(f"jobset: a worker failed; the JobSet made its pods again and they started whole "
          f"{time.monotonic() - ran_since:.2f} s after the failure")
    status = cluster.custom.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", "team-b", "jobsets",
                                                         "llama")["status"]
    assert status.get("restarts") == 1, status
    group = wait_for("the restart counted on the PodGroup", lambda: (g := cluster.get_pod_group("team-b", "jobset-llama"))
                     and g.get("status", {}).get("restarts") == 1 and g, timeout=30)
    assert group["status"]["lastRestartReason"] == "PodFailed" and "interruption" not in group["status"], group["status"]
    # The 3 pods still running when the failure was seen: 24 GPUs x the seconds since the run started.
    assert 0 < group["status"]["lostGpuHours"] < 24 * (time.monotonic() - started) / 3600, group["status"]
    assert metric_value(cluster, "tessera_workload_restarts_total", {"queue": "research-nlp", "reason": "PodFailed"}) == 1
    print(f"jobset: restarts 1 (PodFailed), lost GPU-hours {group['status']['lostGpuHours']}")


def trainjob(cluster):
    """Kubeflow Trainer makes a JobSet of deploy/examples/operators/trainjob.yaml (4 nodes x 8 GPUs), the
    JobSet and Job controllers its pods: they bind in one cycle. Its queue holds 2 inference
    replicas too, its whole quota, so the TrainJob runs on borrowed GPUs; another queue's Job within
    its quota reclaims them, and all 4 pods are evicted together. The Job controller makes them
    again; they start again together once the reclaiming Job is done."""
    cluster.queue("research-nlp", 16)
    cluster.queue("product-search", 32)
    for namespace in ("team-a", "team-b"):
        cluster.namespace(namespace)
    workload_controllers.start(cluster, "jobset", "trainer")
    cluster.start_scheduler("scheduler")
    container = {"name": "server", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": "8"}}}
    k8s.AppsV1Api(cluster.api).create_namespaced_deployment("team-a", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "embed"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "embed"}},
                 "template": {"metadata": {"labels": {"app": "embed", "scheduling.tessera.dev/queue": "research-nlp"}},
                              "spec": {"schedulerName": "tessera", "containers": [container]}}}})
    wait_for("the 2 inference replicas bound", lambda: sum(
        1 for p in cluster.core.list_namespaced_pod("team-a", label_selector="app=embed").items if p.spec.node_name) == 2)

    started = kubectl_apply(cluster, "team-a", "operators/trainjob.yaml")
    first = wait_for("the TrainJob's 4 pods bound", lambda: (pods := jobset_pods(cluster, "team-a", "llama-finetune"))
                     and bound_count(pods) == 4 and pods, timeout=90)
    print(f"trainjob: TrainJob of 4 nodes x 8 GPUs, kubectl apply to all 4 bound {time.monotonic() - started:.2f} s")
    assert_cycles_binding(cluster, 4, 1)
    group = cluster.get_pod_group("team-a", "trainjob-llama-finetune")
    assert group["spec"]["minMember"] == 4, group["spec"]
    assert [r["kind"] for r in group["metadata"]["ownerReferences"]] == ["TrainJob"], group["metadata"]

    # product-search takes its quota back for 8 s: a Job of 4 pods x 8 GPUs.
    reclaimer = job_manifest("search", 4, 8, queue="product-search")
    reclaimer["spec"]["template"]["metadata"]["annotations"] = {"scheduling.tessera.dev/duration": "8"}
    k8s.BatchV1Api(cluster.api).create_namespaced_job("team-b", reclaimer)
    wait_for("the reclaiming Job bound", lambda: sum(1 for p in cluster.core.list_namespaced_pod(
        "team-b", label_selector="batch.kubernetes.io/job-name=search").items if p.spec.node_name) == 4, timeout=60)
    reclaimed = {e.involved_object.uid for e in cluster.events("team-a")
                 if e.reason == "Reclaimed" and e.involved_object.kind == "Pod"}
    assert reclaimed == set(first), f"evicted {len(reclaimed & set(first))} of the TrainJob's 4 pods: {reclaimed}"
    # The TrainJob hears it, once for its gang.
    told = [e for e in cluster.events("team-a") if e.reason == "Reclaimed" and e.involved_object.kind == "TrainJob"]
    assert len(told) == 1 and told[0].involved_object.name == "llama-finetune" and told[0].count == 1, told
    assert "4 pods (32 GPUs) as one gang" in told[0].message, told[0].message
    restarted = time.monotonic()

    def second():
        return {u: p for u, p in jobset_pods(cluster, "team-a", "llama-finetune").items() if u not in first}
    wait_for("the TrainJob's 4 pods made again", lambda: len(second()) == 4, timeout=60)
    wait_for("the TrainJob's 4 new pods bound once the reclaiming Job is done", lambda: bound_count(second()) == 4,
             timeout=90)
    print(f"trainjob: reclaimed whole, made again and started again whole {time.monotonic() - restarted:.2f} s after "
          "the reclaim (the reclaiming Job runs 8 s)")
    assert_cycles_binding(cluster, 4, 3)  # the search Job's cycle between
    # The JobSet made its Jobs again (its failurePolicy), once: a restart its maxRestarts does not count.
    status = cluster.custom.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", "team-a", "jobsets",
                                                         "llama-finetune")["status"]
    assert status.get("restarts") == 1 and not status.get("restartsCountTowardsMax"), status
    # Tessera counts the restart on the TrainJob's PodGroup, with the GPU-hours the reclaim threw away
    # (32 GPUs x the seconds the first run had run), and in its metrics.
    group = wait_for("the restart counted on the PodGroup", lambda: (
        g := cluster.get_pod_group("team-a", "trainjob-llama-finetune"))
        and g.get("status", {}).get("restarts") == 1 and g, timeout=30)
    assert group["status"]["lastRestartReason"] == "Reclaimed" and "interruption" not in group["status"], group["status"]
    assert 0 < group["status"]["lostGpuHours"] < 32 * (time.monotonic() - started) / 3600, group["status"]
    assert metric_value(cluster, "tessera_workload_restarts_total", {"queue": "research-nlp", "reason": "Reclaimed"}) == 1
    lost = metric_value(cluster, "tessera_lost_gpu_hours_total", {"queue": "research-nlp", "reason": "Reclaimed"})
    assert lost is not None and abs(lost - group["status"]["lostGpuHours"]) < 1e-3, lost
    print(f"trainjob: restarts 1, lost GPU-hours {group['status']['lostGpuHours']} (32 GPUs x the first run's time)")
    wait_for("the TrainJob's condition TesseraScheduled=True", lambda: (c := owner_condition(
        cluster, "trainer.kubeflow.org", "v1alpha1", "team-a", "trainjobs", "llama-finetune"))
        and c["status"] == "True")


def apply_and_bind(cluster, example, pods, what):
    """Applies deploy/examples/EXAMPLE in team-a and waits until PODS() (by uid) are 4, all bound;
    prints how long that took, and checks they bound in one cycle."""
    started = kubectl_apply(cluster, "team-a", example)
    wait_for(f"the 4 pods of the {what} bound", lambda: bound_count(pods()) == 4, timeout=90)
    scenario = os.path.splitext(os.path.basename(example))[0]
    print(f"{scenario}: {what}, kubectl apply to all 4 bound {time.monotonic() - started:.2f} s")
    assert_cycles_binding(cluster, 4, 1)


def assert_owned_pod_group(cluster, name, kind):
    """The PodGroup Tessera wrote in team-a for a gang of 4 of research-nlp, which goes with its owner."""
    group = cluster.get_pod_group("team-a", name)
    assert group["spec"]["minMember"] == 4 and group["spec"]["queue"] == "research-nlp", group["spec"]
    assert [r["kind"] for r in group["metadata"]["ownerReferences"]] == [kind], group["metadata"]


def ray_pods(cluster, namespace, name):
    """The pods of a RayCluster (KubeRay labels them), by uid."""
    pods = cluster.core.list_namespaced_pod(namespace, label_selector=f"ray.io/cluster={name}")
    return {p.metadata.uid: p for p in pods.items}


def raycluster(cluster):
    """The real KubeRay operator makes the head and the 3 workers (8 GPUs each) of
    deploy/examples/operators/raycluster.yaml: one gang, bound in one cycle. The same RayCluster in
    another namespace does not fit: none of its pods binds, not even the head that would, and the
    RayCluster carries a FailedScheduling event and the condition TesseraScheduled=False; it
    starts whole once the first is deleted."""
    cluster.queue("research-nlp", 32)
    for namespace in ("team-a", "team-b"):
        cluster.namespace(namespace)
    workload_controllers.start(cluster, "kuberay")
    cluster.start_scheduler("scheduler")

    def condition_of(namespace):
        return owner_condition(cluster, "ray.io", "v1", namespace, "rayclusters", "tune")

    apply_and_bind(cluster, "operators/raycluster.yaml", lambda: ray_pods(cluster, "team-a", "tune"),
                   "RayCluster of a head + 3 workers x 8 GPUs")
    assert_owned_pod_group(cluster, "raycluster-tune", "RayCluster")

    second_waits_then_starts(cluster, "operators/raycluster.yaml", ("RayCluster", "raycluster", "tune"),
                             lambda namespace: ray_pods(cluster, namespace, "tune"), condition_of)


def pytorchjob(cluster):
    """The real Kubeflow Training Operator makes the master and 3 workers (8 GPUs each) of
    deploy/examples/operators/pytorchjob.yaml: one gang, bound in one cycle, and the PyTorchJob
    carries TesseraScheduled=True beside the operator's own conditions."""
    cluster.queue("research-nlp", 32)
    cluster.namespace("team-a")
    workload_controllers.start(cluster, "training-operator")
    cluster.start_scheduler("scheduler")

    def pods():
        found = cluster.core.list_namespaced_pod("team-a", label_selector="training.kubeflow.org/job-name=resnet")
        return {p.metadata.uid: p for p in found.items}

    apply_and_bind(cluster, "operators/pytorchjob.yaml", pods, "PyTorchJob of a master + 3 workers x 8 GPUs")
    assert_owned_pod_group(cluster, "pytorchjob-resnet", "PyTorchJob")
    wait_for("the PyTorchJob's condition TesseraScheduled=True", lambda: (c := owner_condition(
        cluster, "kubeflow.org", "v1", "team-a", "pytorchjobs", "resnet")) and c["status"] == "True", timeout=60)


def leaderworkerset(cluster):
    """The real LeaderWorkerSet controller makes the 2 groups of deploy/examples/operators/leaderworkerset.yaml
    (4 pods x 8 GPUs each: a leader StatefulSet, and a worker StatefulSet per leader): each group is
    a gang. On 6 nodes one group starts whole and the other not at all, though 2 of its pods would
    fit, and the LeaderWorkerSet says why."""
    cluster.queue("research-nlp", 48)
    cluster.namespace("team-a")
    workload_controllers.start(cluster, "lws")
    cluster.start_scheduler("scheduler")

    def groups():
        found = {}
        for pod in cluster.core.list_namespaced_pod(
                "team-a", label_selector="leaderworkerset.sigs.k8s.io/name=vllm").items:
            found.setdefault(pod.metadata.labels.get("leaderworkerset.sigs.k8s.io/group-index"), []).append(pod)
        return found

    def bound_in_group(pods):
        return sum(1 for p in pods if p.spec.node_name)

    started = kubectl_apply(cluster, "team-a", "operators/leaderworkerset.yaml")
    wait_for("a group's 4 pods bound", lambda: any(bound_in_group(p) == 4 for p in groups().values()), timeout=90)
    print(f"leaderworkerset: a group of 4 pods x 8 GPUs, kubectl apply to all 4 bound {time.monotonic() - started:.2f} s")
    wait_for("both groups' 8 pods made", lambda: sum(len(p) for p in groups().values()) == 8, timeout=60)
    wait_for("the LeaderWorkerSet told why a group waits", lambda: any(
        m.startswith("Unschedulable: ") for m in owner_events(cluster, "team-a", "LeaderWorkerSet", "vllm")), timeout=60)
    time.sleep(2)  # cycles more: a partial gang would have bound by now
    assert sorted(bound_in_group(p) for p in groups().values()) == [0, 4], {
        g: [(p.metadata.name, p.spec.node_name) for p in pods] for g, pods in groups().items()}
    for index in ("0", "1"):
        group = cluster.get_pod_group("team-a", f"leaderworkerset-vllm-{index}")
        assert group["spec"]["minMember"] == 4, group["spec"]


def _create_ignoring_missing_kind(create):
    """create() (or any call), or None where the server answers 404: a kind not served yet, an
    object already gone."""
    try:
        return create()
    except k8s.exceptions.ApiException as error:
        if error.status == 404:
            return None
        raise


def recent_usage(cluster, scheduler, queue):
    """The remembered GPU use of `queue` that `scheduler` exports, or None (also while it starts)."""
    prefix = f'tessera_queue_recent_usage{{queue="{queue}",resource="gpu"}} '
    try:
        metrics = cluster.metrics(scheduler)
    except OSError:  # not listening yet
        return None
    lines = [line for line in metrics.splitlines() if line.startswith(prefix)]
    return float(lines[0].split()[-1]) if lines else None


def time_fairness(cluster):
    """Time-based fairness: a queue that held every GPU lately gets less of them than one that did
    not, also after a restart, which rebuilds the remembered use from the pods that run."""
    flags = ("--usage-penalty", "30", "--usage-half-life", "10")
    cluster.queue("heavy", 0)
    cluster.queue("light", 0)
    cluster.namespace("h")
    cluster.namespace("l")
    first = cluster.start_scheduler("first", *flags)
    for i in range(8):
        cluster.pod("h", f"early-{i}", queue="heavy")
    wait_for("heavy holding every GPU", lambda: len(cluster.bound("h")) == 8)
    time.sleep(4)
    first.send_signal(signal.SIGKILL)
    first.wait()
    # The new scheduler never saw the early pods start: it rebuilds their use from their start times.
    second = cluster.start_scheduler("second", *flags)
    wait_for("the restarted scheduler remembering heavy's use",
             lambda: (recent_usage(cluster, "second", "heavy") or 0) > 6.5, timeout=60)
    # Both queues ask for all 8 GPUs while the early pods still hold them; the scheduler has seen
    # every one of them (each is bound or marked unschedulable) before the early pods go.
    for i in range(8):
        cluster.pod("h", f"late-{i}", queue="heavy")
        cluster.pod("l", f"late-{i}", queue="light")

    def marked_waiting(namespace):
        return sum(1 for name, pod in cluster.pods(namespace).items()
                   if name.startswith("late-") and (pod.spec.node_name or condition(pod, "PodScheduled")))
    wait_for("the scheduler seeing every late pod", lambda: marked_waiting("h") + marked_waiting("l") == 16)
    for i in range(8):  # reclaim may have evicted some for light already
        _create_ignoring_missing_kind(lambda: cluster.core.delete_namespaced_pod(f"early-{i}", "h",
                                                                                 grace_period_seconds=0))
    def late_bound(namespace):
        return sum(1 for name, pod in cluster.pods(namespace).items() if name.startswith("late-") and pod.spec.node_name)
    wait_for("8 GPUs given out", lambda: late_bound("h") + late_bound("l") == 8, timeout=30)
    heavy, light = late_bound("h"), late_bound("l")
    remembered = recent_usage(cluster, "second", "heavy")
    print(f"time-fairness: after holding 8 GPUs, heavy (remembered use {remembered:.2f} GPUs) got {heavy} of 8, "
          f"light {light}")
    assert light > heavy, f"light got {light}, heavy {heavy}"


def reservation(cluster):
    """A gang behind notebooks that can be neither evicted nor moved reserves both nodes; a later
    notebook without a deadline waits, one whose deadline ends before the reservation is due
    backfills the drained room; the gang starts once both nodes are empty."""
    cluster.queue("team", 16)
    cluster.namespace("ml")
    cluster.start_scheduler("scheduler", "--reservation-wait", "1")
    interactive = {"scheduling.tessera.dev/workload-type": "interactive"}
    for i in range(16):
        cluster.pod("ml", f"nb-{i}", queue="team", duration=f"{5 + i % 4}s", annotations=interactive, deadline=60)
    wait_for("the notebooks bound", lambda: len(cluster.bound("ml")) == 16)
    cluster.pod_group("ml", "gang", 2, "team")
    for i in range(2):
        cluster.pod("ml", f"gang-{i}", gpus=8, group="gang")
    wait_for("the reservation", lambda: "tessera_reserved_nodes 2" in cluster.metrics("scheduler"))
    condition = wait_for("the gang's condition", lambda: next(
        (c for c in cluster.get_pod_group("ml", "gang").get("status", {}).get("conditions", [])
         if "reserved for it drain" in c.get("message", "")), None))
    assert condition["status"] == "False", condition
    cluster.pod("ml", "late", queue="team", annotations=interactive)
    cluster.pod("ml", "quick", queue="team", duration="1s", annotations=interactive, deadline=10)
    wait_for("the quick notebook backfilled", lambda: "quick" in cluster.bound("ml"))
    bound = wait_for("the gang bound", lambda: all(f"gang-{i}" in cluster.bound("ml") for i in range(2))
                     and cluster.bound("ml"), timeout=60)
    assert "late" not in bound, "the notebook without a deadline took reserved room"
    assert len({bound[f"gang-{i}"].spec.node_name for i in range(2)}) == 2
    assert "tessera_reserved_nodes 0" in cluster.metrics("scheduler")


def quiet_periods(cluster):
    """Writes after quiet periods longer than the server's keep-alive timeout go through at once:
    the evictions of a reclaim, the bindings after it, and the events of pods that cannot fit.
    (The server closes idle connections within 1 s, as real servers and load balancers do after
    their own timeouts; a pooled connection it closed must not be used, and a transport failure
    is not a PodDisruptionBudget refusal.)"""
    borrow_everything(cluster, 16)
    time.sleep(2.5)
    cluster.pod_group("b", "job", 2, "team-b")
    for i in range(2):
        cluster.pod("b", f"job-{i}", gpus=4, group="job")
    started = time.monotonic()
    wait_for("team-b's gang bound after a quiet period", lambda: len(cluster.bound("b")) == 2, timeout=20)
    took = time.monotonic() - started
    reasons = [event.reason for event in cluster.events("b")]
    assert "EvictionRefused" not in reasons, reasons
    time.sleep(2.5)
    for i in range(3):
        cluster.pod("b", f"too-big-{i}", gpus=16, queue="team-b")
    for i in range(3):
        wait_for(f"too-big-{i}'s FailedScheduling event", lambda i=i: any(
            e.reason == "FailedScheduling" and e.involved_object.name == f"too-big-{i}" for e in cluster.events("b")),
            timeout=10)
    log = cluster.scheduler_log("scheduler")
    assert "broke or timed out" not in log and "refused" not in log, log
    print(f"quiet-periods: reclaim after a quiet period bound the gang in {took:.2f} s")


def bad_queues(cluster):
    """Bad Queue objects are left out one by one and say why on their own status; the good ones
    go on scheduling; a child deserving more than its parent is accepted with a warning."""
    cluster.queue("team-a", 8)
    cluster.queue("loop-a", 1, parent="loop-b")
    cluster.queue("loop-b", 1, parent="loop-a")
    cluster.queue("under-loop", 1, parent="loop-a")
    cluster.queue("negative", "-1")
    cluster.queue("low-limit", 4, limit=2)
    cluster.queue("orphan", 1, parent="nowhere")
    cluster.queue("parent", 2)
    cluster.queue("big-child", 4, parent="parent")
    cluster.namespace("ml")
    cluster.start_scheduler("scheduler")
    cluster.pod("ml", "good", gpus=1, queue="team-a")
    cluster.pod("ml", "in-loop", gpus=1, queue="under-loop")
    cluster.pod("ml", "big", gpus=1, queue="big-child")
    wait_for("the pods of usable queues bound", lambda: {"good", "big"} <= set(cluster.bound("ml")))
    expected = {"loop-a": "CyclicParent", "loop-b": "CyclicParent", "under-loop": "ParentExcluded",
                "negative": "InvalidSpec", "low-limit": "InvalidSpec", "orphan": "ParentMissing"}
    for name, reason in expected.items():
        accepted = wait_for(f"queue {name}'s Accepted condition",
                            lambda name=name: condition(cluster.get_queue(name), "Accepted"))
        assert accepted["status"] == "False" and accepted["reason"] == reason, (name, accepted)
    assert "negative" in condition(cluster.get_queue("negative"), "Accepted")["message"]
    assert "below deserved" in condition(cluster.get_queue("low-limit"), "Accepted")["message"]
    assert "loop-a -> loop-b -> loop-a" in condition(cluster.get_queue("loop-a"), "Accepted")["message"]
    warning = wait_for("big-child's warning", lambda: condition(cluster.get_queue("big-child"), "Accepted"))
    assert warning["status"] == "True" and warning["reason"] == "DeservedExceedsParent", warning
    good = condition(cluster.get_queue("team-a"), "Accepted")
    assert good["status"] == "True" and good["reason"] == "Valid", good
    waiting = wait_for("in-loop's PodScheduled condition",
                       lambda: condition(cluster.pods("ml")["in-loop"], "PodScheduled"))
    assert waiting.status == "False" and waiting.reason == "Unschedulable", waiting
    assert "QueueNotUsable" in waiting.message and "under-loop" in waiting.message, waiting.message
    events = wait_for("Warning events on the bad queues", lambda: {
        e.involved_object.name: e.reason for e in cluster.events("default") if e.involved_object.kind == "Queue"}
        if len([e for e in cluster.events("default") if e.involved_object.kind == "Queue"]) >= 7 else None)
    assert events.get("loop-a") == "CyclicParent" and events.get("big-child") == "DeservedExceedsParent", events
    assert "not in the tree" not in cluster.scheduler_log("scheduler")
    assert "cycle skipped" not in cluster.scheduler_log("scheduler")


def other_ca(cluster):
    """A self-signed CA certificate the dev cluster's certificate was not issued by (base64)."""
    key, cert = os.path.join(cluster.dir, "other.key"), os.path.join(cluster.dir, "other.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-subj", "/CN=another-ca", "-days", "1"], check=True, capture_output=True)
    with open(cert, "rb") as f:
        return base64.b64encode(f.read()).decode()


def misconfigured(cluster):
    """A scheduler with a wrong token or an untrusted server certificate says so at once, and
    exits after its sync timeout naming the reason."""
    def wrong_token(config):
        config["users"][0]["user"]["token"] = "not-the-token"
    ca = other_ca(cluster)

    def wrong_ca(config):
        config["clusters"][0]["cluster"]["certificate-authority-data"] = ca
    cases = [("wrong-token", wrong_token, "HTTP 401"), ("wrong-ca", wrong_ca, "is not trusted")]
    for name, edit, expected in cases:
        process = cluster.start_scheduler(name, "--cache-sync-timeout", "4",
                                          kubeconfig=edited_kubeconfig(cluster, f"{name}.kubeconfig", edit))
        wait_for(f"{name}: the reason in the log", lambda: expected in cluster.scheduler_log(name), timeout=15)
        assert process.wait(timeout=20) == 2
        last = cluster.scheduler_log(name).strip().splitlines()[-1]
        assert "did not sync within 4 s" in last and expected in last, last


def pending_reports(cluster):
    """Every pod left pending has PodScheduled=False (Unschedulable) and exactly one
    FailedScheduling Event object, through many cycles and scheduler restarts; bound pods have
    PodScheduled=True."""
    cluster.queue("team-a", 256)
    cluster.namespace("ml")
    for i in range(40):
        cluster.pod("ml", f"pod-{i}", gpus=4, queue="team-a")
    first = cluster.start_scheduler("first")
    wait_for("8 pods bound", lambda: len(cluster.bound("ml")) == 8)
    pending = sorted(set(cluster.pods("ml")) - set(cluster.bound("ml")))

    def reported():
        pods = cluster.pods("ml")
        for name in pending:
            c = condition(pods[name], "PodScheduled")
            if not c or c.status != "False" or c.reason != "Unschedulable" or not c.message:
                return False
        named = {e.involved_object.name for e in cluster.events("ml") if e.reason == "FailedScheduling"}
        return named >= set(pending)
    wait_for("every pending pod reported", reported, timeout=20)
    time.sleep(2)  # ten more cycles
    first.send_signal(signal.SIGKILL)
    first.wait()
    for restart in range(2):
        cluster.start_scheduler(f"restart-{restart}")
        wait_for("the restarted scheduler cycling", lambda restart=restart: "caches synced" in
                 cluster.scheduler_log(f"restart-{restart}"))
        time.sleep(2)
        process, _ = cluster.schedulers[f"restart-{restart}"]
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    failed = [e for e in cluster.events("ml") if e.reason == "FailedScheduling"]
    per_pod = {}
    for event in failed:
        per_pod[event.involved_object.name] = per_pod.get(event.involved_object.name, 0) + 1
    assert set(per_pod) == set(pending) and all(n == 1 for n in per_pod.values()), per_pod
    for name, pod in cluster.bound("ml").items():
        c = condition(pod, "PodScheduled")
        assert c and c.status == "True", (name, c)
    print(f"pending-reports: {len(pending)} pending pods, {len(failed)} FailedScheduling Event objects "
          f"after 3 scheduler runs ({len(failed) / len(pending):.2f} per pending pod)")


def device_owners(cluster, namespaces):
    """(node, GPU index) -> pod, failing if two pods hold one device; and GPUs in use per node."""
    owners, use = {}, {}
    for namespace in namespaces:
        for pod in cluster.bound(namespace).values():
            limits = pod.spec.containers[0].resources.limits or {}
            use[pod.spec.node_name] = use.get(pod.spec.node_name, 0) + int(limits.get("nvidia.com/gpu", "0"))
            annotations = pod.metadata.annotations or {}
            if "scheduling.tessera.dev/gpu-portion" in annotations:
                continue  # fractional pods share a device by design
            for device in filter(None, annotations.get("scheduling.tessera.dev/gpu-index", "").split(",")):
                key = (pod.spec.node_name, device)
                assert key not in owners, f"{pod.metadata.name} and {owners[key]} share GPU {key}"
                owners[key] = pod.metadata.name
    assert all(gpus <= 8 for gpus in use.values()), use
    return owners


def faults(cluster):
    """Against a hostile server (idle connections closed after random delays, connections
    dropped before or after a write is applied, 500/503/429 answers, all to the scheduler's
    requests), a workload mix converges: every pod that fits is bound, no GPU is given twice,
    every pending pod has its condition and one FailedScheduling event, and a reclaim completes."""
    cluster.queue("org", 64)
    cluster.queue("team-a", 32, parent="org")
    cluster.queue("team-b", 32, parent="org")
    cluster.namespace("a")
    cluster.namespace("b")
    cluster.start_scheduler("scheduler")
    started = time.monotonic()
    for i in range(60):
        cluster.pod("a", f"borrower-{i}", gpus=1, queue="team-a")
    for i in range(8):
        cluster.pod("a", f"notebook-{i}", gpus=0, fraction="0.5", queue="team-a")
    wait_for("team-a holding the cluster", lambda: len(cluster.bound("a")) == 68, timeout=120)
    filled = time.monotonic() - started
    cluster.pod_group("b", "train", 3, "team-b")
    for i in range(3):
        cluster.pod("b", f"train-{i}", gpus=8, group="train")
    for i in range(2):
        cluster.pod("b", f"huge-{i}", gpus=16, queue="team-b")
    reclaim_started = time.monotonic()
    wait_for("team-b's gang bound through reclaim",
             lambda: sum(name.startswith("train-") for name in cluster.bound("b")) == 3, timeout=180)
    reclaimed = time.monotonic() - reclaim_started
    device_owners(cluster, ["a", "b"])
    pending = ["huge-0", "huge-1"]

    def reported():
        pods = cluster.pods("b")
        for name in pending:
            c = condition(pods[name], "PodScheduled")
            if not c or c.status != "False" or c.reason != "Unschedulable":
                return False
        # One Event object per pod that waits, never two. The gang's pods may have one too: a
        # cycle can see the gang before all its pods exist, or before the reclaim can start.
        named = [e.involved_object.name for e in cluster.events("b") if e.reason == "FailedScheduling"]
        assert len(named) == len(set(named)), f"two FailedScheduling Event objects for one pod: {sorted(named)}"
        return sorted(name for name in named if name in pending) == pending
    try:
        wait_for("every pending pod reported", reported, timeout=60)
    except AssertionError:
        for name, pod in sorted(cluster.pods("b").items()):
            c = condition(pod, "PodScheduled")
            print(f"pod b/{name}: node {pod.spec.node_name}, PodScheduled {c and (c.status, c.reason, c.message)}")
        for e in cluster.events("b"):
            print(f"event {e.metadata.name}: {e.involved_object.kind} {e.involved_object.name} {e.reason} {e.count} "
                  f"{e.message}")
        raise
    for namespace in ["a", "b"]:
        unbound = [name for name, pod in cluster.pods(namespace).items()
                   if not pod.spec.node_name and name not in pending]
        assert not unbound, f"pods that fit are not bound: {unbound}"
        scheduled = {}
        for event in cluster.events(namespace):
            if event.reason == "Scheduled":
                scheduled[event.involved_object.name] = scheduled.get(event.involved_object.name, 0) + 1
        assert all(n == 1 for n in scheduled.values()), scheduled
    injected = cluster.api.call_api("/debug/faults", "GET", auth_settings=["BearerToken"], response_type="object",
                                    _return_http_data_only=True)
    metrics = cluster.metrics("scheduler")

    def metric(prefix):
        return sum(float(line.split()[-1]) for line in metrics.splitlines() if line.startswith(prefix))
    events_written = metric("tessera_events_written_total")
    print(f"faults: injected {injected}; cluster filled in {filled:.1f} s, reclaim converged in {reclaimed:.1f} s; "
          f"scheduler: {metric('tessera_api_connection_retries_total'):.0f} requests resent on a new connection, "
          f"{metric('tessera_bind_errors_total'):.0f} failed bindings (bound in a later cycle), "
          f"{metric('tessera_api_errors_total'):.0f} other failed writes, {events_written:.0f} event writes; "
          f"{len(pending)} pending pods with 1 FailedScheduling Event object each")
    assert sum(injected.values()) > 0, injected


RBAC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy", "rbac.yaml")


def service_account_kubeconfig(cluster):
    """A kubeconfig for the tessera-scheduler ServiceAccount of deploy/rbac.yaml (a bound token)."""
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"expirationSeconds": 3600}}
    token = cluster.core.create_namespaced_service_account_token("tessera-scheduler", "tessera-system",
                                                                 request).status.token

    def as_service_account(config):
        config["users"][0]["user"] = {"token": token}
    return edited_kubeconfig(cluster, "service-account.kubeconfig", as_service_account)


def rbac(cluster):
    """Everything in deploy/ passes the real server's validation (kubectl apply --dry-run=server).
    The scheduler under the ServiceAccount of deploy/rbac.yaml, bound by exactly its rules,
    binds, evicts, reports and leads; with any one rule left out, the operation that rule allows
    fails with a log line that says which and why (so every rule is needed)."""
    deploy = os.path.dirname(RBAC)
    for namespace in ["tessera-system", "team-a", "team-b"]:  # a dry run creates no namespace for what follows
        cluster.namespace(namespace)
    dry_run = cluster.kubectl("apply", "--dry-run=server", "-f", os.path.join(deploy, "crds"), "-f", RBAC,
                              "-f", os.path.join(deploy, "scheduler.yaml"), "-f", os.path.join(deploy, "examples"))
    assert dry_run.returncode == 0, f"kubectl apply --dry-run=server of deploy/:\n{dry_run.stdout}{dry_run.stderr}"
    with open(RBAC) as f:
        documents = [d for d in yaml.safe_load_all(f) if d]
    applied = cluster.kubectl("apply", "-f", RBAC)
    assert applied.returncode == 0, f"kubectl apply -f deploy/rbac.yaml:\n{applied.stdout}{applied.stderr}"
    role = next(d for d in documents if d["kind"] == "ClusterRole")
    lease_role = next(d for d in documents if d["kind"] == "Role")
    rbac_api = k8s.RbacAuthorizationV1Api(cluster.api)
    batch = k8s.BatchV1Api(cluster.api)
    kubeconfig = service_account_kubeconfig(cluster)

    def grant(rules=None, lease_rules=None):
        """The ClusterRole and the leader-election Role with these rules (deploy/rbac.yaml's when None)."""
        body = dict(role, rules=role["rules"] if rules is None else rules)
        body["metadata"] = dict(role["metadata"], resourceVersion=rbac_api.read_cluster_role(
            role["metadata"]["name"]).metadata.resource_version)
        rbac_api.replace_cluster_role(role["metadata"]["name"], body)
        body = dict(lease_role, rules=lease_role["rules"] if lease_rules is None else lease_rules)
        namespace = lease_role["metadata"]["namespace"]
        body["metadata"] = dict(lease_role["metadata"], resourceVersion=rbac_api.read_namespaced_role(
            lease_role["metadata"]["name"], namespace).metadata.resource_version)
        rbac_api.replace_namespaced_role(lease_role["metadata"]["name"], namespace, body)
        time.sleep(1)  # the authorizer's caches follow the roles through a watch

    runs = 0

    def scheduler(expected=None):
        """Starts a replica as the ServiceAccount; with `expected`, waits for the log line that
        has every one of those words and stops the replica."""
        nonlocal runs
        runs += 1
        name = f"replica-{runs}"
        process = cluster.start_scheduler(name, "--leader-elect", "--identity", name, "--lease-duration", "4",
                                          "--renew-deadline", "3", "--retry-period", "0.25",
                                          "--cache-sync-timeout", "30", kubeconfig=kubeconfig)
        if expected is None:
            return process
        line = wait_for(f"{name}: a log line with {expected}", lambda: next(
            (line for line in cluster.scheduler_log(name).splitlines() if all(w in line for w in expected)), None),
            timeout=30)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)
        return line

    for name, deserved in [("team-a", 8), ("team-b", 8), ("team-c", 8)]:
        cluster.queue(name, deserved)
    for namespace in ["a", "b"]:
        cluster.namespace(namespace)
    for i in range(24):
        cluster.pod("a", f"borrower-{i}", gpus=1, queue="team-a")
    first = scheduler()
    wait_for("team-a borrowing every GPU", lambda: len(cluster.bound("a")) == 24, timeout=60)
    first.send_signal(signal.SIGTERM)
    first.wait(timeout=15)

    # Without pods/eviction, the reclaim for team-b's gang fails, and says so.
    index = {(tuple(r["apiGroups"]), tuple(r["resources"])): i for i, r in enumerate(role["rules"])}
    without = {key: role["rules"][:i] + role["rules"][i + 1:] for key, i in index.items()}
    grant(without[(("",), ("pods/eviction",))])
    cluster.pod_group("b", "job", 2, "team-b")
    for i in range(2):
        cluster.pod("b", f"job-{i}", gpus=4, group="job")
    lines = [scheduler(["eviction of a/borrower-", "failed", "403"])]

    # With every rule: reclaim, bind, report, lead.
    grant()
    full = scheduler()
    wait_for("team-b's gang bound through reclaim", lambda: len(cluster.bound("b")) == 2, timeout=60)
    cluster.pod("b", "too-big", gpus=16, queue="team-b")
    reported = wait_for("the pending pod's condition and event", lambda: (
        (c := condition(cluster.pods("b")["too-big"], "PodScheduled")) and c.status == "False"
        and any(e.reason == "FailedScheduling" for e in cluster.events("b")) and c))
    assert reported.reason == "Unschedulable", reported
    assert "Reclaimed" in {e.reason for e in cluster.events("a")}
    wait_for("team-b's queue status", lambda: cluster.get_queue("team-b").get("status", {}).get("allocated"))
    wait_for("the gang's PodGroup running",
             lambda: cluster.get_pod_group("b", "job").get("status", {}).get("phase") == "Running")
    log = cluster.scheduler_log(f"replica-{runs}")
    assert "leading as" in log and "failed" not in log and "cannot sync" not in log, log
    full.send_signal(signal.SIGTERM)
    full.wait(timeout=15)

    # Every other rule left out in turn, with something for it to allow waiting.
    # Which borrowers the reclaim evicted depends on where each was bound: free a survivor.
    survivor = min(name for name, pod in cluster.bound("a").items() if not pod.metadata.deletion_timestamp)
    cluster.core.delete_namespaced_pod(survivor, "a", grace_period_seconds=0)
    wait_for("a GPU freed", lambda: len(cluster.pods("a")) == 15)
    cases = [
        (("",), ("pods",), None, ["cannot sync", "pods", "403"]),
        (("",), ("nodes",), None, ["cannot sync", "nodes", "403"]),
        (("",), ("namespaces",), None, ["cannot sync", "namespaces", "403"]),
        (("scheduling.tessera.dev",), ("queues", "podgroups"), None, ["cannot sync", "403"]),
        (("scheduling.tessera.dev",), ("topologies",), None, ["not reading topologies", "403"]),
        (("scheduling.tessera.dev",), ("podgroups",),
         lambda n: batch.create_namespaced_job("b", job_manifest(f"grouped-{n}", 1, 16, queue="team-b")),
         ["creating the PodGroup b/job-grouped-", "failed", "403"]),
        (("batch", "jobset.x-k8s.io", "kubeflow.org", "trainer.kubeflow.org", "ray.io"),
         ("jobs", "jobsets", "pytorchjobs", "trainjobs", "rayclusters"), None, ["not grouping by", "/apis/batch/v1/jobs", "403"]),
        (("batch", "jobset.x-k8s.io", "kubeflow.org", "trainer.kubeflow.org", "ray.io"),
         ("jobs/status", "jobsets/status", "pytorchjobs/status", "trainjobs/status", "rayclusters/status"),
         lambda n: batch.create_namespaced_job("b", job_manifest(f"told-{n}", 1, 16, queue="team-b")),
         ["TesseraScheduled condition of Job b/", "failed", "403"]),
        (("",), ("pods/binding",), lambda n: cluster.pod("a", f"fits-{n}", gpus=1, queue="team-a"),
         ["binding a/fits-", "failed", "403"]),
        (("",), ("pods/status",), lambda n: cluster.pod("b", f"waits-{n}", gpus=16, queue="team-b"),
         ["PodScheduled condition of pod b/", "failed", "403"]),
        # The first refused write is logged (once per kind of write and cause): the new pod's event,
        # or the event of the Job of the PodGroup case above, which still waits and is told again.
        (("",), ("events",), lambda n: cluster.pod("b", f"waits-{n}", gpus=16, queue="team-b"),
         ["FailedScheduling event of ", " b/", "failed", "403"]),
        (("scheduling.tessera.dev",), ("queues/status", "podgroups/status"),
         lambda n: cluster.queue(f"new-{n}", 1), ["status of Queue", "failed", "403"]),
    ]
    assert {(groups, resources) for groups, resources, _, _ in cases} | {(("",), ("pods/eviction",))} == set(index)
    for n, (groups, resources, prepare, expected) in enumerate(cases):
        grant(without[(groups, resources)])
        if prepare:
            prepare(n)
        lines.append(scheduler(expected))
    grant(lease_rules=[])
    lines.append(scheduler(["leader election", "the lease tessera-system/tessera-scheduler failed", "403"]))
    grant()
    print("rbac: every rule of deploy/rbac.yaml is needed; without each one:\n  " + "\n  ".join(lines))


# name: (test, nodes, flags of `tessera dev cluster` (None: the scenario needs a real control plane),
# flags of kube-apiserver on a real control plane (None: it needs the dev cluster's fault injection)).
def topology(cluster):
    """A PodGroup that needs one rack (a Topology object, spec.topologyConstraint) starts within one
    rack; one that no rack can hold starts no pod and says where the most room is."""
    cluster.queue("team-a", 32)
    cluster.namespace("ml")
    cluster.custom.create_cluster_custom_object(
        "scheduling.tessera.dev", "v1alpha1", "topologies",
        {"apiVersion": "scheduling.tessera.dev/v1alpha1", "kind": "Topology", "metadata": {"name": "network"},
         "spec": {"levels": [{"nodeLabel": "tessera.dev/rack"}]}})
    cluster.start_scheduler("scheduler")
    cluster.pod("ml", "single", gpus=8, queue="team-a")
    wait_for("the single pod bound", lambda: "single" in cluster.bound("ml"))
    within_rack = {"topology": "network", "requiredTopologyLevel": "tessera.dev/rack"}
    for name, size in (("pair", 2), ("wide", 3)):
        cluster.custom.create_namespaced_custom_object(
            "scheduling.tessera.dev", "v1alpha1", "ml", "podgroups",
            {"apiVersion": "scheduling.tessera.dev/v1alpha1", "kind": "PodGroup",
             "metadata": {"name": name, "namespace": "ml"},
             "spec": {"minMember": size, "queue": "team-a", "topologyConstraint": within_rack}})
        for i in range(size):
            cluster.pod("ml", f"{name}-{i}", gpus=8, group=name)
    bound = wait_for("the pair bound", lambda: {n: p for n, p in cluster.bound("ml").items() if n.startswith("pair")}
                     if len([n for n in cluster.bound("ml") if n.startswith("pair")]) == 2 else None)
    racks = {pod.spec.node_name.split("-")[0] for pod in bound.values()}
    assert len(racks) == 1, {name: pod.spec.node_name for name, pod in bound.items()}
    single_rack = cluster.bound("ml")["single"].spec.node_name.split("-")[0]
    assert racks != {single_rack}, (racks, single_rack)
    # Until all its pods exist the wide gang is GangIncomplete; then Unschedulable.
    condition = wait_for("the wide gang's status", lambda: next(
        (c for c in cluster.get_pod_group("ml", "wide").get("status", {}).get("conditions") or []
         if c["reason"] == "Unschedulable"), None))
    assert condition["message"].startswith("needs 24 GPUs within one rack; the most free in a rack is 8"), condition
    assert not any(name.startswith("wide") for name in cluster.bound("ml"))
    # Another pair: only evicting the single pod (of its own priority) would free a rack, and the
    # reason says so, in the PodGroup's status, its pods' events, `tessera explain` and `describe`.
    cluster.custom.create_namespaced_custom_object(
        "scheduling.tessera.dev", "v1alpha1", "ml", "podgroups",
        {"apiVersion": "scheduling.tessera.dev/v1alpha1", "kind": "PodGroup",
         "metadata": {"name": "second", "namespace": "ml"},
         "spec": {"minMember": 2, "queue": "team-a", "topologyConstraint": within_rack}})
    for i in range(2):
        cluster.pod("ml", f"second-{i}", gpus=8, group="second")
    clause = (f"; preemption could free rack r{single_rack[len('rack'):]} by evicting 1 workload of queue 'team-a', "
              "but it is not of lower priority")
    message = wait_for("the second pair's reason", lambda: next(
        (c["message"] for c in cluster.get_pod_group("ml", "second").get("status", {}).get("conditions") or []
         if clause in c["message"]), None))
    assert message.startswith("needs 16 GPUs within one rack; the most free in a rack is 8"), message
    wait_for("the second pair's event", lambda: any(
        clause in (event.message or "") for event in cluster.events("ml")
        if event.involved_object.name.startswith("second")))
    for command in ("explain", "describe"):
        why = tessera(cluster, command, "second").stdout
        assert clause in why, why
    assert "second-0" not in cluster.bound("ml") and "single" in cluster.bound("ml")


DASHBOARD_RBAC = os.path.join(os.path.dirname(RBAC), "dashboard-rbac.yaml")


def dashboard_auth(cluster):
    """The dashboard with --dashboard-auth kubernetes on a real API server, the scheduler under the
    ServiceAccount of deploy/rbac.yaml and deploy/dashboard-rbac.yaml: a token whose ServiceAccount
    is bound to tessera-dashboard-viewer (list podgroups) gets 200 and the data; a token without
    that binding gets 403 saying what it lacks; no token or a made-up one gets 401."""
    import json
    import urllib.error
    import urllib.request
    cluster.namespace("tessera-system")
    for path in (RBAC, DASHBOARD_RBAC):
        applied = cluster.kubectl("apply", "-f", path)
        assert applied.returncode == 0, f"kubectl apply -f {path}:\n{applied.stdout}{applied.stderr}"
    cluster.queue("team-a", 8)
    cluster.namespace("viewers")
    for name in ("dashboard-viewer", "no-rights"):
        cluster.core.create_namespaced_service_account("viewers", {"metadata": {"name": name}})
    k8s.RbacAuthorizationV1Api(cluster.api).create_cluster_role_binding({
        "metadata": {"name": "dashboard-viewer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "tessera-dashboard-viewer"},
        "subjects": [{"kind": "ServiceAccount", "name": "dashboard-viewer", "namespace": "viewers"}]})

    def token(name):
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                   "spec": {"expirationSeconds": 3600}}
        return cluster.core.create_namespaced_service_account_token(name, "viewers", request).status.token
    viewer, outsider = token("dashboard-viewer"), token("no-rights")
    cluster.start_scheduler("scheduler", "--dashboard-auth", "kubernetes",
                            kubeconfig=service_account_kubeconfig(cluster))
    _, port = cluster.schedulers["scheduler"]
    cluster.namespace("ml")
    cluster.pod("ml", "train", gpus=2, queue="team-a")
    wait_for("the pod bound", lambda: "train" in cluster.bound("ml"), timeout=60)

    def get(path, bearer=None):
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
        if bearer is not None:
            request.add_header("Authorization", f"Bearer {bearer}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def allocated():
        status, body = get("/ui/api/queues", viewer)
        assert status == 200, (status, body)
        queues = {q["name"]: q["allocated"] for q in json.loads(body)["queues"]}
        return queues.get("team-a") == 2
    wait_for("the viewer to see team-a's 2 GPUs at /ui/api/queues", allocated, timeout=30)
    status, page = get("/ui/", viewer)
    assert status == 200 and "<title>Tessera scheduler</title>" in page, (status, page[:200])
    status, body = get("/ui/api/nodes", outsider)
    assert status == 403, (status, body)
    assert "system:serviceaccount:viewers:no-rights may not list podgroups.scheduling.tessera.dev in all " \
           "namespaces" in body, body
    status, body = get("/ui/api/overview")
    assert status == 401 and "Authorization: Bearer" in body, (status, body)
    status, body = get("/ui/api/overview", "not-a-token")
    assert status == 401 and "not authenticated" in body, (status, body)
    status, _ = get("/metrics")
    assert status == 200, "the metrics stay open to scrapers"
    print("dashboard-auth: the viewer's token 200, a token without the binding 403, none or a made-up one 401")
    dashboard_sign_in_in_a_browser(port, outsider, viewer)


def dashboard_sign_in_in_a_browser(port, refused_token, viewer_token):
    """The page's token form in Debian's Chromium (tests/dashboard/dashboard_browser.cjs signin).
    Skipped where Chromium or playwright-core is missing, except under CI=true."""
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    playwright = os.environ.get("PLAYWRIGHT_CORE",
                                os.path.join(root, "build", "dashboard-test", "node_modules", "playwright-core"))
    if not (os.access(chromium, os.X_OK) and os.path.isdir(playwright)):
        assert os.environ.get("CI") != "true", f"the sign-in check needs {chromium} and {playwright}"
        print("dashboard-auth: the browser sign-in check skipped (no Chromium or playwright-core here)")
        return
    shots = os.environ.get("TESSERA_DASHBOARD_ARTIFACTS", os.path.join(root, "build", "Testing", "dashboard"))
    os.makedirs(shots, exist_ok=True)
    run = subprocess.run(["node", os.path.join(root, "tests", "dashboard", "dashboard_browser.cjs"), "signin",
                          f"http://127.0.0.1:{port}/ui/", refused_token, viewer_token, shots],
                         env=dict(os.environ, PLAYWRIGHT_CORE=playwright, CHROMIUM=chromium),
                         capture_output=True, text=True, timeout=240)
    sys.stdout.write(run.stdout)
    assert run.returncode == 0, f"the browser sign-in failed:\n{run.stdout}{run.stderr}"


def racked_nodes(racks, per_rack):
    """A scenario YAML with `racks` racks of `per_rack` 8-GPU nodes, named rackR-0, rackR-1, ... and
    labelled tessera.dev/rack: rR."""
    nodes = "".join(f"    - name: rack{r}\n      count: {per_rack}\n      cpu: 96\n      memory: 768Gi\n"
                    f"      gpus: 8\n      gpu_model: A100\n      gpu_memory: 80Gi\n"
                    f"      labels: {{tessera.dev/rack: r{r}}}\n" for r in range(racks))
    return "cluster:\n  nodes:\n" + nodes


SCENARIOS = {
    "gang": (gang, gpu_nodes(4), [], []),
    "topology": (topology, racked_nodes(2, 2), [], []),
    "reclaim": (reclaim, gpu_nodes(2), [], []),
    "pdb": (pdb, gpu_nodes(1), [], []),
    "failover": (failover, gpu_nodes(8), [], []),
    "restart": (restart, gpu_nodes(30), [], []),
    # On a real server pods are watched from etcd, whose history is compacted every second (a watch
    # cache keeps minutes of history whatever its size).
    "watch-expiry": (watch_expiry, gpu_nodes(8), ["--watch-history", "20", "--max-watch-seconds", "1"],
                     ["--watch-cache-sizes=pods#0", "--etcd-compaction-interval=1s"]),
    "reservation": (reservation, gpu_nodes(2), [], []),
    "time-fairness": (time_fairness, gpu_nodes(1), [], []),
    "workloads": (workloads, gpu_nodes(6), [], []),
    "inference": (inference, gpu_nodes(1), [], []),
    "gpu-memory": (gpu_memory, gpu_nodes(1, gpus=1) + "      labels: {scheduling.tessera.dev/node-pool: inference}\n",
                   [], []),
    # The dev cluster calls no admission webhooks; the real kube-apiserver does.
    "gpu-memory-webhook": (gpu_memory_webhook, gpu_nodes(1, gpus=1), None, []),
    "quiet-periods": (quiet_periods, gpu_nodes(2), ["--fault-idle-close", "1"], None),
    "bad-queues": (bad_queues, gpu_nodes(2), [], []),
    "misconfigured": (misconfigured, gpu_nodes(1), [], None),
    "pending-reports": (pending_reports, gpu_nodes(4), [], []),
    "cli": (cli, gpu_nodes(3), [], []),
    "estimates": (estimates, gpu_nodes(2), [], []),
    # The dev cluster lets every authenticated client do anything; RBAC needs the real authorizer.
    "rbac": (rbac, gpu_nodes(3), None, []),
    # deploy/examples applied with kubectl (the real Job and Deployment controllers).
    "examples": (examples, gpu_nodes(5), None, []),
    # The real JobSet, Kubeflow Trainer and LeaderWorkerSet controllers
    # (scripts/build-workload-controllers.sh).
    "jobset": (jobset, gpu_nodes(4), None, []),
    "trainjob": (trainjob, gpu_nodes(6), None, []),
    "leaderworkerset": (leaderworkerset, gpu_nodes(6), None, []),
    # The real KubeRay operator and Kubeflow Training Operator.
    "raycluster": (raycluster, gpu_nodes(4), None, []),
    "pytorchjob": (pytorchjob, gpu_nodes(4), None, []),
    # TokenReview and SubjectAccessReview need the real authenticator and authorizer.
    "dashboard-auth": (dashboard_auth, gpu_nodes(1), None, []),
    # A real Prometheus (Debian's) scraping `tessera dev gpu-metrics`; limits of seconds.
    "idle-gpus": (idle_gpus, gpu_nodes(1), [], []),
    "faults": (faults, gpu_nodes(8), ["--fault-seed", "7", "--fault-idle-close", "2", "--fault-drop", "0.05",
                                      "--fault-errors", "0.05", "--fault-user-agent", "tessera"], None),
}


def main():
    args = sys.argv[1:]
    kind = "dev"
    if len(args) == 3 and args[0] == "--cluster" and args[1] in ("dev", "real"):
        kind = args[1]
        args = args[2:]
    if len(args) != 1 or args[0] not in SCENARIOS:
        print(f"usage: {sys.argv[0]} [--cluster dev|real] {{{','.join(SCENARIOS)}}}", file=sys.stderr)
        return 2
    name = args[0]
    test, nodes, dev_flags, real_flags = SCENARIOS[name]
    if kind == "real" and real_flags is None:
        print(f"SKIP: {name} needs the dev cluster's fault injection", file=sys.stderr)
        return SKIP
    if kind == "dev" and dev_flags is None:
        print(f"SKIP: {name} needs a real control plane (--cluster real)", file=sys.stderr)
        return SKIP
    if kind == "real" and real_control_plane_missing():
        print(f"SKIP: {real_control_plane_missing()}", file=sys.stderr)
        return SKIP
    if test is idle_gpus and prometheus_missing():
        print(f"SKIP: {prometheus_missing()}", file=sys.stderr)
        return SKIP
    if test in (jobset, trainjob, leaderworkerset, raycluster, pytorchjob) and workload_controllers.missing():
        print(f"SKIP: {workload_controllers.missing()}", file=sys.stderr)
        return SKIP
    cluster = Cluster(nodes, *(real_flags if kind == "real" else dev_flags), kind=kind)
    try:
        test(cluster)
    except BaseException:
        cluster.dump_logs()
        raise
    finally:
        cluster.close()
    print(f"{name} ({kind} cluster): passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
