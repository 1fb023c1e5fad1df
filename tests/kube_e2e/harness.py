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
import yaml  # noqa: E402 (python3-kubernetes depends on it)

TESSERA = os.environ.get("TESSERA", "build/tessera")
# The scheduler to test: the lean binary where given (as deployed), else `tessera scheduler`.
SCHEDULER = [os.environ["TESSERA_SCHEDULER"]] if os.environ.get("TESSERA_SCHEDULER") else [TESSERA, "scheduler"]


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


REAL_CLUSTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "real-cluster.sh")


def real_control_plane_missing():
    """Why a real control plane cannot be started here, or None: its binaries must be built
    (scripts/build-control-plane.sh, which the fixture build_control_plane.sh runs with
    TESSERA_REAL_CLUSTER=1) unless CONTROL_PLANE_BIN names them."""
    if os.environ.get("CONTROL_PLANE_BIN"):
        return None
    built = subprocess.run(["bash", os.path.join(os.path.dirname(REAL_CLUSTER), "build-control-plane.sh"), "--built"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if built.returncode == 0:
        return None
    return ("the real control plane is not built; run scripts/build-control-plane.sh, or the tests with "
            f"TESSERA_REAL_CLUSTER=1 to build it first {built.stderr.strip()}").strip()


class Cluster:
    """A cluster on free ports with its kubeconfig, and the schedulers started against it: `tessera
    dev cluster` (kind "dev"), or a real control plane — etcd, kube-apiserver,
    kube-controller-manager and KWOK's fake nodes — started by scripts/real-cluster.sh (kind
    "real"; `extra` then holds kube-apiserver flags)."""

    def __init__(self, nodes_yaml, *extra, kind="dev"):
        self.kind = kind
        self.dir = tempfile.mkdtemp(prefix="tessera-e2e-")
        self.nodes = os.path.join(self.dir, "nodes.yaml")
        with open(self.nodes, "w") as f:
            f.write(nodes_yaml)
        self.schedulers = {}
        self.server = None
        self.log = None
        if kind == "real":
            self.kubeconfig = self._real_cluster_up(extra)
        else:
            self.kubeconfig = os.path.join(self.dir, "kubeconfig")
            self.port = free_port()
            self.log = open(os.path.join(self.dir, "dev-cluster.log"), "w")
            self.server = subprocess.Popen(
                [TESSERA, "dev", "cluster", "--listen", f"127.0.0.1:{self.port}", "--nodes", self.nodes,
                 "--kubeconfig", self.kubeconfig, "--pod-start-seconds", "0.2", "--termination-seconds", "0.5",
                 *extra],
                stdout=self.log, stderr=subprocess.STDOUT)
            wait_for("the kubeconfig", lambda: os.path.exists(self.kubeconfig), timeout=20)
        self.api = kubernetes.config.new_client_from_config(config_file=self.kubeconfig)
        self.core = k8s.CoreV1Api(self.api)
        self.custom = k8s.CustomObjectsApi(self.api)
        self.coordination = k8s.CoordinationV1Api(self.api)
        self.policy = k8s.PolicyV1Api(self.api) if hasattr(k8s, "PolicyV1Api") else None
        wait_for("the API server", lambda: self.core.list_node().items, timeout=20)

    def _real_cluster_up(self, apiserver_flags):
        """Starts a real control plane in DIR/cluster and returns its admin kubeconfig."""
        self.cluster_dir = os.path.join(self.dir, "cluster")
        env = dict(os.environ, TESSERA=os.path.abspath(TESSERA), KUBE_APISERVER_EXTRA_ARGS=" ".join(apiserver_flags))
        with open(os.path.join(self.dir, "real-cluster-up.log"), "w") as log:
            up = subprocess.run(["bash", REAL_CLUSTER, "up", "--nodes", self.nodes, "--dir", self.cluster_dir],
                                stdout=subprocess.PIPE, stderr=log, text=True, env=env, timeout=600)
        self.server = "real"
        if up.returncode != 0:
            with open(os.path.join(self.dir, "real-cluster-up.log")) as f:
                print(f.read()[-3000:], file=sys.stderr)
            shutil.rmtree(self.dir, ignore_errors=True)
            raise AssertionError(f"scripts/real-cluster.sh up failed (exit status {up.returncode})")
        lines = [line for line in up.stdout.splitlines() if line.startswith("kubeconfig: ")]
        assert lines, f"scripts/real-cluster.sh up printed no kubeconfig: {up.stdout!r}"
        return lines[-1][len("kubeconfig: "):]

    def start_scheduler(self, name, *args, kubeconfig=None):
        with open(os.path.join(self.dir, f"{name}.log"), "a") as log:
            metrics_port = free_port()
            process = subprocess.Popen(
                [*SCHEDULER, "--kubeconfig", kubeconfig or self.kubeconfig, "--listen",
                 f"127.0.0.1:{metrics_port}", "--cycle-interval", "0.2", *args],
                stdout=log, stderr=subprocess.STDOUT)
        self.schedulers[name] = (process, metrics_port)
        return process

    def start_process(self, name, command, env=None):
        """Runs another program against the cluster (a controller) until close(), logging to NAME.log."""
        with open(os.path.join(self.dir, f"{name}.log"), "a") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        self.schedulers[name] = (process, None)
        return process

    def kubectl(self, *args):
        """Runs the control plane's own kubectl (real clusters) as admin; returns the completed process."""
        assert self.kind == "real", "kubectl() needs a real cluster"
        bin_dir = os.environ.get("CONTROL_PLANE_BIN") or subprocess.run(
            ["bash", os.path.join(os.path.dirname(REAL_CLUSTER), "build-control-plane.sh")],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True).stdout.splitlines()[-1]
        return subprocess.run([os.path.join(bin_dir, "kubectl"), "--kubeconfig", self.kubeconfig, *args],
                              capture_output=True, text=True, timeout=120)

    def server_log(self):
        if self.kind == "real":
            with open(os.path.join(self.cluster_dir, "logs", "kube-apiserver.log")) as f:
                return f.read()
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
        if self.kind == "real":
            if self.server:
                subprocess.run(["bash", REAL_CLUSTER, "down", "--dir", self.cluster_dir],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        elif self.server:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
            self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def dump_logs(self):
        paths = [os.path.join(self.dir, f"{name}.log") for name in ["dev-cluster", "real-cluster-up", *self.schedulers]]
        if self.kind == "real":
            paths += [os.path.join(self.cluster_dir, "logs", f"{name}.log")
                      for name in ["kube-apiserver", "kube-controller-manager", "kwok"]]
        for path in paths:
            if os.path.exists(path):
                with open(path) as f:
                    text = f.read()
                print(f"----- {path} (last 3000 characters) -----\n{text[-3000:]}", file=sys.stderr)

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
        """Creates the namespace unless the cluster has it (the dev cluster starts with tessera-system)."""
        try:
            self.core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        except kubernetes.client.exceptions.ApiException as error:
            if error.status != 409:
                raise
        if self.kind == "real":  # pods are admitted once the controller has made the default ServiceAccount
            wait_for(f"the default ServiceAccount of {name}",
                     lambda: self.core.read_namespaced_service_account("default", name), timeout=30)

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
            annotations=None, deadline=None, controller=None):
        """A Tessera pod; `controller` (a dict with apiVersion, kind, name, uid) makes it that object's,
        as when a Job or ReplicaSet controller creates it."""
        metadata = {"name": name, "namespace": namespace, "labels": dict(labels or {}),
                    "annotations": dict(annotations or {})}
        if controller:
            metadata["ownerReferences"] = [{**controller, "controller": True, "blockOwnerDeletion": True}]
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


def edited_kubeconfig(cluster, name, edit):
    """A copy of the cluster's kubeconfig, named `name` in its folder, changed by `edit(config)`."""
    with open(cluster.kubeconfig) as f:
        config = yaml.safe_load(f)
    edit(config)
    path = os.path.join(cluster.dir, name)
    with open(path, "w") as f:
        yaml.safe_dump(config, f)
    return path


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
