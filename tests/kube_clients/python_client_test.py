#!/usr/bin/python3
"""The official Kubernetes Python client (Debian's python3-kubernetes) against
`tessera dev cluster` over TLS: kubeconfig loading, lists, create, watch (ADDED, then MODIFIED
when the pod is bound through the binding subresource), and a watch from an expired
resourceVersion surfacing as a 410 ApiException. Exit 77 (skipped) without the client."""
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

try:
    import kubernetes
    from kubernetes import client, config, watch
except ImportError:
    print("SKIP: the kubernetes Python client is not installed (Debian: python3-kubernetes)")
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print("FAIL:", message)


def start_cluster(work):
    """Starts the dev cluster on a free port, with a short watch history so that old
    resourceVersions expire quickly."""
    kubeconfig = os.path.join(work, "kubeconfig")
    out = open(os.path.join(work, "server.out"), "w")
    err = open(os.path.join(work, "server.err"), "w")
    process = subprocess.Popen(
        [os.environ["TESSERA"], "dev", "cluster", "--listen", "127.0.0.1:0",
         "--nodes", os.path.join(ROOT, "clusters", "dev-cluster.yaml"), "--kubeconfig", kubeconfig,
         "--watch-history", "50", "--pod-start-seconds", "0.2", "--termination-seconds", "0.2"],
        stdout=out, stderr=err)
    deadline = time.time() + 20
    while time.time() < deadline:
        text = open(os.path.join(work, "server.out")).read()
        if "kubeconfig:" in text:
            return process, kubeconfig, re.search(r"^server: (\S+)", text, re.M).group(1)
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    raise SystemExit("the dev cluster did not start: " + open(os.path.join(work, "server.err")).read())


def main():
    if "TESSERA" not in os.environ:
        raise SystemExit("set TESSERA to the tessera binary")
    with tempfile.TemporaryDirectory() as work:
        process, kubeconfig, url = start_cluster(work)
        try:
            run_checks(kubeconfig, url)
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
            check(process.returncode == 0, "the server did not exit cleanly on SIGTERM: %s" % process.returncode)
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("python client end to end: all checks passed (kubernetes %s)" % kubernetes.__version__)
    return 0


def run_checks(kubeconfig, url):
    config.load_kube_config(config_file=kubeconfig)
    v1 = client.CoreV1Api()
    check(url.startswith("https://127.0.0.1:"), "server URL " + url)

    # Nodes: as many as the cluster file declares, with their GPU capacity.
    nodes = v1.list_node()
    check(len(nodes.items) == 7, "expected 7 nodes, got %d" % len(nodes.items))
    a100 = v1.read_node("a100-0")
    check(a100.status.capacity.get("nvidia.com/gpu") == "8", "a100-0 capacity %s" % a100.status.capacity)
    check(a100.metadata.labels.get("nvidia.com/gpu.product") == "A100", "a100-0 labels")
    check(a100.status.node_info.kubelet_version.startswith("v1."), "nodeInfo")

    # The CRDs are there, and custom objects go through the generic client.
    custom = client.CustomObjectsApi()
    custom.create_cluster_custom_object("scheduling.tessera.dev", "v1alpha1", "queues", {
        "apiVersion": "scheduling.tessera.dev/v1alpha1", "kind": "Queue", "metadata": {"name": "research"},
        "spec": {"resources": {"gpu": {"deserved": 8}}}})
    queues = custom.list_cluster_custom_object("scheduling.tessera.dev", "v1alpha1", "queues")
    check([q["metadata"]["name"] for q in queues["items"]] == ["research"], "queues %s" % queues)

    # Create a pod and watch it: ADDED, then MODIFIED once bound.
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="trainer", labels={"app": "trainer"}),
        spec=client.V1PodSpec(scheduler_name="tessera",
                              containers=[client.V1Container(name="main", image="busybox:1.36")]))
    created = v1.create_namespaced_pod("default", pod)
    check(created.status.phase == "Pending", "new pod phase %s" % created.status.phase)
    check(created.spec.node_name is None, "new pod is bound")
    start_version = created.metadata.resource_version

    binding_status = {}

    def bind():
        time.sleep(0.5)
        body = client.V1Binding(metadata=client.V1ObjectMeta(name="trainer"),
                                target=client.V1ObjectReference(kind="Node", name="a100-1"))
        # The server answers with a Status, which this client cannot read as a V1Binding.
        response = v1.create_namespaced_pod_binding("trainer", "default", body, _preload_content=False)
        binding_status["code"] = response.status

    binder = threading.Thread(target=bind)
    binder.start()
    events = []
    stream = watch.Watch()
    for event in stream.stream(v1.list_namespaced_pod, "default", label_selector="app=trainer", timeout_seconds=20):
        events.append((event["type"], event["object"].spec.node_name, event["object"].status.phase))
        if event["object"].status.phase == "Running":
            stream.stop()
    binder.join()
    check(binding_status.get("code") == 201, "binding answered %s" % binding_status)
    check(events[:1] == [("ADDED", None, "Pending")], "first event %s" % events[:1])
    check(("MODIFIED", "a100-1", "Pending") in events, "no MODIFIED event for the binding: %s" % events)
    check(events and events[-1] == ("MODIFIED", "a100-1", "Running"), "the pod did not start: %s" % events)

    # A second binding conflicts.
    try:
        v1.create_namespaced_pod_binding(
            "trainer", "default",
            client.V1Binding(metadata=client.V1ObjectMeta(name="trainer"),
                             target=client.V1ObjectReference(kind="Node", name="a100-2")),
            _preload_content=False)
        check(False, "second binding accepted")
    except client.exceptions.ApiException as error:
        check(error.status == 409, "second binding: %s" % error.status)

    # Resuming a watch from a resourceVersion still in the history replays what followed it.
    replay = []
    for event in watch.Watch().stream(v1.list_namespaced_pod, "default", resource_version=start_version,
                                      timeout_seconds=2):
        replay.append(event["type"])
    check(replay and set(replay) == {"MODIFIED"}, "replayed events %s" % replay)

    # Enough changes to push start_version out of the history (50 changes): the watch gets 410.
    for i in range(30):
        v1.create_namespaced_config_map("default", client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="filler-%d" % i), data={"i": str(i)}))
        v1.delete_namespaced_config_map("filler-%d" % i, "default")
    try:
        for event in watch.Watch().stream(v1.list_namespaced_pod, "default", resource_version=start_version,
                                          timeout_seconds=5):
            check(False, "event from an expired resourceVersion: %s" % event["type"])
            break
        check(False, "no error for an expired resourceVersion")
    except client.exceptions.ApiException as error:
        check(error.status == 410, "expired watch status %s" % error.status)
        check("too old resource version" in str(error.reason), "expired watch reason %s" % error.reason)

    # A list at an expired version is 410 Gone too.
    try:
        v1.list_namespaced_pod("default", resource_version=start_version, resource_version_match="Exact")
        check(False, "exact list at an expired version succeeded")
    except client.exceptions.ApiException as error:
        check(error.status == 410, "exact list status %s" % error.status)

    # Optimistic concurrency through the client: a stale replace is 409.
    current = v1.read_namespaced_pod("trainer", "default")
    current.metadata.labels["tier"] = "gpu"
    v1.replace_namespaced_pod("trainer", "default", current)
    current.metadata.labels["tier"] = "stale"
    try:
        v1.replace_namespaced_pod("trainer", "default", current)
        check(False, "stale replace accepted")
    except client.exceptions.ApiException as error:
        check(error.status == 409, "stale replace status %s" % error.status)

    # Deletion: graceful (the simulated kubelet removes the pod), then NotFound.
    v1.delete_namespaced_pod("trainer", "default")
    deadline = time.time() + 20
    gone = False
    while time.time() < deadline and not gone:
        try:
            v1.read_namespaced_pod("trainer", "default")
            time.sleep(0.1)
        except client.exceptions.ApiException as error:
            gone = error.status == 404
    check(gone, "the deleted pod did not go")

    # Without the token: 401.
    anonymous = client.Configuration.get_default_copy()  # the same server and CA, no token
    anonymous.api_key = {}
    try:
        client.CoreV1Api(client.ApiClient(anonymous)).list_node()
        check(False, "anonymous request accepted")
    except client.exceptions.ApiException as error:
        check(error.status == 401, "anonymous status %s" % error.status)


if __name__ == "__main__":
    sys.exit(main())
