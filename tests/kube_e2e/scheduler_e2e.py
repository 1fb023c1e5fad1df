"""End-to-end tests of `tessera scheduler` against `tessera dev cluster`, driven through the
official Kubernetes Python client. Usage: scheduler_e2e.py SCENARIO (see SCENARIOS below)."""
import base64
import os
import signal
import subprocess
import sys
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Cluster, condition, gpu_nodes, wait_for  # noqa: E402


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
    cluster.pod("ml", "after-release", gpus=1, queue="team-a")
    wait_for("replica-3 binding", lambda: "after-release" in cluster.bound("ml"), timeout=lease + 30)
    handed_over = time.monotonic() - stopped
    print(f"failover: leader stopped cleanly to the standby's first binding {handed_over:.2f} s")
    assert handed_over < lease, f"a released lease took {handed_over:.1f} s to change hands"


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
    cluster.start_scheduler("second")
    wait_for("every pod bound", lambda: len(cluster.bound("ml")) == 208, timeout=60)
    use = node_gpu_use(cluster, ["ml"])
    assert sum(use.values()) == 216 and all(gpus <= 8 for gpus in use.values()), use
    devices = {}
    for pod in cluster.bound("ml").values():
        for device in pod.metadata.annotations["scheduling.tessera.dev/gpu-index"].split(","):
            key = (pod.spec.node_name, device)
            assert key not in devices, f"{pod.metadata.name} and {devices[key]} share GPU {key}"
            devices[key] = pod.metadata.name
    assert "failed" not in cluster.scheduler_log("second"), cluster.scheduler_log("second")
    print(f"restart: killed with {bound_at_kill} of 168 pods bound; the restarted scheduler bound the rest")


def watch_expiry(cluster):
    """The scheduler's watch expires while it is stopped; it relists (410 Gone) and goes on."""
    cluster.queue("team-a", 64)
    cluster.namespace("ml")
    scheduler = cluster.start_scheduler("scheduler")
    cluster.pod("ml", "first", gpus=1, queue="team-a")
    wait_for("the first pod bound", lambda: "first" in cluster.bound("ml"))
    scheduler.send_signal(signal.SIGSTOP)
    time.sleep(2.5)  # the server ends every watch after 1 s
    for i in range(40):  # more events than the server's history of 20 keeps
        cluster.pod("ml", f"while-stopped-{i}", gpus=1, queue="team-a")
    scheduler.send_signal(signal.SIGCONT)
    wait_for("every pod bound", lambda: len(cluster.bound("ml")) == 41, timeout=30)
    metrics = cluster.metrics("scheduler")
    relists = [line for line in metrics.splitlines() if line.startswith("tessera_informer_relists_total{resource=\"pods\"}")]
    assert relists and float(relists[0].split()[-1]) >= 1, relists


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


def edited_kubeconfig(cluster, name, edit):
    with open(cluster.kubeconfig) as f:
        config = yaml.safe_load(f)
    edit(config)
    path = os.path.join(cluster.dir, name)
    with open(path, "w") as f:
        yaml.safe_dump(config, f)
    return path


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
        named = [e.involved_object.name for e in cluster.events("b") if e.reason == "FailedScheduling"]
        return sorted(named) == pending
    wait_for("every pending pod reported", reported, timeout=60)
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


SCENARIOS = {
    "gang": (gang, gpu_nodes(4), []),
    "reclaim": (reclaim, gpu_nodes(2), []),
    "pdb": (pdb, gpu_nodes(1), []),
    "failover": (failover, gpu_nodes(8), []),
    "restart": (restart, gpu_nodes(30), []),
    "watch-expiry": (watch_expiry, gpu_nodes(8), ["--watch-history", "20", "--max-watch-seconds", "1"]),
    "reservation": (reservation, gpu_nodes(2), []),
    "quiet-periods": (quiet_periods, gpu_nodes(2), ["--fault-idle-close", "1"]),
    "bad-queues": (bad_queues, gpu_nodes(2), []),
    "misconfigured": (misconfigured, gpu_nodes(1), []),
    "pending-reports": (pending_reports, gpu_nodes(4), []),
    "faults": (faults, gpu_nodes(8), ["--fault-seed", "7", "--fault-idle-close", "2", "--fault-drop", "0.05",
                                      "--fault-errors", "0.05", "--fault-user-agent", "tessera"]),
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        print(f"usage: {sys.argv[0]} {{{','.join(SCENARIOS)}}}", file=sys.stderr)
        return 2
    test, nodes, server_args = SCENARIOS[sys.argv[1]]
    cluster = Cluster(nodes, *server_args)
    try:
        test(cluster)
    except BaseException:
        cluster.dump_logs()
        raise
    finally:
        cluster.close()
    print(f"{sys.argv[1]}: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
