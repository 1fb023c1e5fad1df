"""Runs `tessera dev cluster` and `tessera scheduler` processes for the end-to-end tests, and
talks to the API server through the official Kubernetes Python client."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77  # ctest's SKIP_RETURN_CODE

try:
    import kubernetes
    from kubernetes import client as k8s
except ImportError:  # the tests need Debian's python3-kubernetes
    print("SKIP: the python3-kubernetes package is not installed", file=sys.stderr)
    sys.exit(SKIP)

TESSERA = os.environ.get("TESSERA", "build/tessera")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, predicate, timeout=30.0, interval=0.1):
    """Polls `predicate` until it returns a true value, which it returns; fails after `timeout`."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except kubernetes.client.exceptions.ApiException as error:
            last = error
            if error.status not in (404, 409, 500, 503):
                raise
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last})")


class Cluster:
    """A dev cluster on a free port with its kubeconfig, and the schedulers started against it."""

    def __init__(self, nodes_yaml, *extra):
        self.dir = tempfile.mkdtemp(prefix="tessera-e2e-")
        self.nodes = os.path.join(self.dir, "nodes.yaml")
        with open(self.nodes, "w") as f:
            f.write(nodes_yaml)
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        self.port = free_port()
        self.log = open(os.path.join(self.dir, "dev-cluster.log"), "w")
        self.server = subprocess.Popen(
            [TESSERA, "dev", "cluster", "--listen", f"127.0.0.1:{self.port}", "--nodes", self.nodes,
             "--kubeconfig", self.kubeconfig, "--pod-start-seconds", "0.2", "--termination-seconds", "0.5", *extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.schedulers = {}
        wait_for("the kubeconfig", lambda: os.path.exists(self.kubeconfig), timeout=20)
        self.api = kubernetes.config.new_client_from_config(config_file=self.kubeconfig)
        self.core = k8s.CoreV1Api(self.api)
        self.custom = k8s.CustomObjectsApi(self.api)
        self.coordination = k8s.CoordinationV1Api(self.api)
        self.policy = k8s.PolicyV1Api(self.api) if hasattr(k8s, "PolicyV1Api") else None
        wait_for("the API server", lambda: self.core.list_node().items, timeout=20)

    def start_scheduler(self, name, *args, kubeconfig=None):
        with open(os.path.join(self.dir, f"{name}.log"), "a") as log:
            metrics_port = free_port()
            process = subprocess.Popen(
                [TESSERA, "scheduler", "--kubeconfig", kubeconfig or self.kubeconfig, "--listen",
                 f"127.0.0.1:{metrics_port}", "--cycle-interval", "0.2", *args],
                stdout=log, stderr=subprocess.STDOUT)
        self.schedulers[name] = (process, metrics_port)
        return process

    def server_log(self):
        self.log.flush()
        with open(os.path.join(self.dir, "dev-cluster.log")) as f:
            return f.read()

    def metrics(self, name):
        import urllib.request
        _, port = self.schedulers[name]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            return response.read().decode()

    def scheduler_log(self, name):
        with open(os.path.join(self.dir, f"{name}.log")) as f:
            return f.read()

    def close(self):
        for process, _ in self.schedulers.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process, _ in self.schedulers.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        self.server.send_signal(signal.SIGTERM)
        try:
            self.server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def dump_logs(self):
        for name in ["dev-cluster", *self.schedulers]:
            path = os.path.join(self.dir, f"{name}.log")
            if os.path.exists(path):
                with open(path) as f:
                    text = f.read()
                print(f"----- {name} log (last 3000 characters) -----\n{text[-3000:]}", file=sys.stderr)

    # Objects -----------------------------------------------------------------------------------

    def queue(self, name, deserved, parent=None, limit=None, weight=1):
        gpu = {"deserved": deserved, "overQuotaWeight": weight}
        if limit is not None:
            gpu["limit"] = limit
        spec = {"resources": {"gpu": gpu}}
        if parent:
            spec["parent"] = parent
        body = {"apiVersion": "scheduling.tessera.dev/v1alpha1", "kind": "Queue", "metadata": {"name": name},
                "spec": spec}
        return self.custom.create_cluster_custom_object("scheduling.tessera.dev", "v1alpha1", "queues", body)

    def namespace(self, name):
        self.core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    def pod_group(self, namespace, name, min_member, queue):
        body = {"apiVersion": "scheduling.tessera.dev/v1alpha1", "kind": "PodGroup",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"minMember": min_member, "queue": queue}}
        return self.custom.create_namespaced_custom_object("scheduling.tessera.dev", "v1alpha1", namespace,
                                                           "podgroups", body)

    def get_pod_group(self, namespace, name):
        return self.custom.get_namespaced_custom_object("scheduling.tessera.dev", "v1alpha1", namespace,
                                                        "podgroups", name)

    def pod(self, namespace, name, gpus=1, queue=None, group=None, duration=None, labels=None, fraction=None,
            annotations=None, deadline=None):
        metadata = {"name": name, "namespace": namespace, "labels": dict(labels or {}),
                    "annotations": dict(annotations or {})}
        if queue:
            metadata["labels"]["scheduling.tessera.dev/queue"] = queue
        if group:
            metadata["labels"]["scheduling.tessera.dev/pod-group"] = group
        if duration:
            metadata["annotations"]["scheduling.tessera.dev/duration"] = duration
        resources = {"requests": {"cpu": "1", "memory": "1Gi"}}
        if fraction:
            metadata["annotations"]["scheduling.tessera.dev/gpu-fraction"] = fraction
        elif gpus:
            resources["limits"] = {"nvidia.com/gpu": str(gpus)}
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
                "spec": {"schedulerName": "tessera",
                         "containers": [{"name": "main", "image": "busybox", "resources": resources}]}}
        if deadline:
            body["spec"]["activeDeadlineSeconds"] = deadline
        return self.core.create_namespaced_pod(namespace, body)

    def pods(self, namespace):
        return {p.metadata.name: p for p in self.core.list_namespaced_pod(namespace).items}

    def bound(self, namespace):
        return {name: p for name, p in self.pods(namespace).items() if p.spec.node_name}

    def events(self, namespace):
        return self.core.list_namespaced_event(namespace).items

    def get_queue(self, name):
        return self.custom.get_cluster_custom_object("scheduling.tessera.dev", "v1alpha1", "queues", name)


def condition(obj, kind):
    """The condition of type `kind` of a pod (client object) or a custom object (dict), or None."""
    if isinstance(obj, dict):
        conditions = obj.get("status", {}).get("conditions") or []
        return next((c for c in conditions if c.get("type") == kind), None)
    conditions = (obj.status.conditions if obj.status else None) or []
    return next((c for c in conditions if c.type == kind), None)


def gpu_nodes(count, gpus=8, model="A100", name="node"):
    """A scenario YAML with `count` nodes of `gpus` GPUs each, named NAME-0, NAME-1, ..."""
    return (f"cluster:\n  nodes:\n    - name: {name}\n      count: {count}\n      cpu: 96\n      memory: 768Gi\n"
            f"      gpus: {gpus}\n      gpu_model: {model}\n      gpu_memory: 80Gi\n")
