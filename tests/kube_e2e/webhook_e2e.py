"""The GPU-memory admission webhook end to end on a real control plane: the real kube-apiserver
calls `tessera-scheduler webhook` over TLS (a MutatingWebhookConfiguration pointing at it by URL,
trusting its CA through caBundle) and stores the pods as the webhook patched them. A GPU-memory pod
of schedulerName: tessera carries the interposer's preload, its variables and both host folders,
and is bound with the annotations those variables read; other pods, and a pod injected by hand, are
stored as sent; with the webhook down, failurePolicy decides: Fail refuses the pod, Ignore stores it
unchanged."""
import base64
import os
import signal
import ssl
import subprocess
import urllib.request

from harness import SCHEDULER, TESSERA, free_port, k8s, wait_for

NS = "ml"
LIBRARY = "/var/lib/tessera-gpumem/lib/libtessera-gpumem.so"
CERTIFICATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                            "webhook-certificates.sh")
# The webhook of the binary under test: the lean one where given (as deployed), else `tessera webhook`.
WEBHOOK = [*SCHEDULER, "webhook"] if os.environ.get("TESSERA_SCHEDULER") else [TESSERA, "webhook"]
MEMORY = {"scheduling.tessera.dev/gpu-memory": "20Gi", "scheduling.tessera.dev/gpu-memory-limit": "40Gi"}


def pod_body(name, annotations=None, scheduler="tessera", env=None, volumes=None, mounts=None, init=None):
    container = {"name": "server", "image": "vllm", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    if env:
        container["env"] = env
    if mounts:
        container["volumeMounts"] = mounts
    body = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "annotations": dict(annotations or {}),
                         "labels": {"scheduling.tessera.dev/queue": "serving"}},
            "spec": {"schedulerName": scheduler, "containers": [container]}}
    if volumes:
        body["spec"]["volumes"] = volumes
    if init:
        body["spec"]["initContainers"] = init
    return body


def env_of(pod):
    return {e.name: e for e in (pod.spec.containers[0].env or [])}


def injected(pod):
    return "LD_PRELOAD" in env_of(pod)


def webhook_configuration(url, ca_bundle, failure_policy):
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "tessera-gpu-memory"},
            "webhooks": [{"name": "gpu-memory.scheduling.tessera.dev", "admissionReviewVersions": ["v1"],
                          "clientConfig": {"url": url, "caBundle": ca_bundle},
                          "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                     "resources": ["pods"], "scope": "Namespaced"}],
                          "failurePolicy": failure_policy, "sideEffects": "None", "timeoutSeconds": 5,
                          "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NS}}}]}


def gpu_memory_webhook(cluster):
    cluster.queue("serving", 4)
    cluster.namespace(NS)
    tls = os.path.join(cluster.dir, "webhook-tls")
    ca_bundle = subprocess.run(["bash", CERTIFICATES, tls, "127.0.0.1"], capture_output=True, text=True,
                               check=True).stdout.strip()
    assert base64.b64decode(ca_bundle).startswith(b"-----BEGIN CERTIFICATE-----"), ca_bundle
    port = free_port()
    webhook = cluster.start_process("webhook", [*WEBHOOK, "--host", "127.0.0.1", "--port", str(port),
                                                "--tls-cert-file", os.path.join(tls, "tls.crt"),
                                                "--tls-private-key-file", os.path.join(tls, "tls.key")])
    trust = ssl.create_default_context(cafile=os.path.join(tls, "ca.crt"))

    def healthy():
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{port}/healthz", context=trust, timeout=2) as response:
                return response.status == 200
        except OSError:
            return False
    wait_for("the webhook's /healthz over TLS", healthy, timeout=20)

    admission = k8s.AdmissionregistrationV1Api(cluster.api)
    admission.create_mutating_webhook_configuration(
        webhook_configuration(f"https://127.0.0.1:{port}/mutate", ca_bundle, "Fail"))
    # The API server picks up a new webhook configuration within a second or so: a dry-run create
    # runs the admission chain without storing anything.
    wait_for("the API server calling the webhook",
             lambda: injected(cluster.core.create_namespaced_pod(NS, pod_body("probe", MEMORY), dry_run="All")),
             timeout=30, interval=0.5)

    scheduler = cluster.start_scheduler("scheduler")
    warm_up = {"name": "warm-up", "image": "vllm", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    cluster.core.create_namespaced_pod(NS, pod_body("llm", MEMORY, env=[{"name": "MODEL", "value": "llama"}],
                                                    init=[warm_up]))
    pod = cluster.pods(NS)["llm"]
    # An init container that touches the GPU is governed as the containers are.
    init_env = {e.name: e for e in (pod.spec.init_containers[0].env or [])}
    assert init_env["LD_PRELOAD"].value == LIBRARY, init_env
    assert {m.name for m in pod.spec.init_containers[0].volume_mounts} >= {"tessera-gpumem-lib",
                                                                          "tessera-gpumem-ledger"}, pod.spec
    env = env_of(pod)
    assert env["LD_PRELOAD"].value == LIBRARY, env
    assert env["MODEL"].value == "llama", env
    assert env["TESSERA_GPUMEM_LEDGER"].value == "/var/run/tessera-gpumem/ledger", env
    assert env["TESSERA_POD_UID"].value_from.field_ref.field_path == "metadata.uid", env
    for name, annotation in [("TESSERA_GPU_MEMORY_LIMIT", "gpu-memory-limit-bytes"),
                             ("TESSERA_GPU_MEMORY_REQUEST", "gpu-memory-request-bytes"),
                             ("TESSERA_GPU_MEMORY_RESOLVER", "gpu-memory-resolver"),
                             ("TESSERA_GPU_MEMORY_SWAP_SLICE_MS", "gpu-memory-swap-slice-ms"),
                             ("NVIDIA_VISIBLE_DEVICES", "gpu-index")]:
        path = env[name].value_from.field_ref.field_path
        assert path == f"metadata.annotations['scheduling.tessera.dev/{annotation}']", (name, path)
    mounts = {m.name: m for m in pod.spec.containers[0].volume_mounts}
    assert mounts["tessera-gpumem-lib"].mount_path == "/var/lib/tessera-gpumem/lib", mounts
    assert mounts["tessera-gpumem-lib"].read_only, mounts
    assert mounts["tessera-gpumem-ledger"].mount_path == "/var/run/tessera-gpumem", mounts
    volumes = {v.name: v for v in pod.spec.volumes}
    assert volumes["tessera-gpumem-lib"].host_path.path == "/var/lib/tessera-gpumem/lib", volumes
    assert volumes["tessera-gpumem-ledger"].host_path.path == "/var/run/tessera-gpumem", volumes
    # What the downward-API variables read is written at binding, before the containers start.
    bound = wait_for("llm bound", lambda: cluster.bound(NS).get("llm"))
    annotations = bound.metadata.annotations
    assert annotations["scheduling.tessera.dev/gpu-memory-limit-bytes"] == str(40 << 30), annotations
    assert annotations["scheduling.tessera.dev/gpu-memory-request-bytes"] == str(20 << 30), annotations
    assert "scheduling.tessera.dev/gpu-index" in annotations, annotations

    # Never touched: a pod of another scheduler, a Tessera pod without GPU memory, and a pod that
    # carries the interposer already (written by hand as docs/gpu-memory.md shows).
    cluster.core.create_namespaced_pod(NS, pod_body("other-scheduler", MEMORY, scheduler="default-scheduler"))
    cluster.core.create_namespaced_pod(NS, pod_body("whole-gpu"))
    by_hand_env = [{"name": "LD_PRELOAD", "value": LIBRARY},
                   {"name": "TESSERA_GPUMEM_LEDGER", "value": "/var/run/tessera-gpumem/ledger"}]
    by_hand_env += [{"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}} for name, path in [
        ("TESSERA_POD_UID", "metadata.uid"), ("TESSERA_POD_NAME", "metadata.name"),
        ("TESSERA_GPU_MEMORY_REQUEST", "metadata.annotations['scheduling.tessera.dev/gpu-memory-request-bytes']"),
        ("TESSERA_GPU_MEMORY_LIMIT", "metadata.annotations['scheduling.tessera.dev/gpu-memory-limit-bytes']"),
        ("TESSERA_GPU_MEMORY_RESOLVER", "metadata.annotations['scheduling.tessera.dev/gpu-memory-resolver']"),
        ("TESSERA_GPU_MEMORY_SWAP_SLICE_MS", "metadata.annotations['scheduling.tessera.dev/gpu-memory-swap-slice-ms']"),
        ("NVIDIA_VISIBLE_DEVICES", "metadata.annotations['scheduling.tessera.dev/gpu-index']")]]
    by_hand = pod_body("by-hand", MEMORY, env=by_hand_env,
                       mounts=[{"name": "tessera-gpumem-ledger", "mountPath": "/var/run/tessera-gpumem"},
                               {"name": "tessera-gpumem-lib", "mountPath": "/var/lib/tessera-gpumem/lib",
                                "readOnly": True}],
                       volumes=[{"name": "tessera-gpumem-ledger", "hostPath": {"path": "/var/run/tessera-gpumem"}},
                                {"name": "tessera-gpumem-lib", "hostPath": {"path": "/var/lib/tessera-gpumem/lib"}}])
    cluster.core.create_namespaced_pod(NS, by_hand)
    pods = cluster.pods(NS)
    assert not injected(pods["other-scheduler"]), pods["other-scheduler"].spec
    assert not injected(pods["whole-gpu"]), pods["whole-gpu"].spec
    assert not pods["whole-gpu"].spec.containers[0].volume_mounts or all(
        not m.name.startswith("tessera-gpumem") for m in pods["whole-gpu"].spec.containers[0].volume_mounts)
    assert [e.name for e in pods["by-hand"].spec.containers[0].env] == [e["name"] for e in by_hand_env]
    assert len(pods["by-hand"].spec.volumes) == 2 + sum(  # the service account's token volume, if any
        1 for v in pods["by-hand"].spec.volumes if v.projected), pods["by-hand"].spec.volumes

    # The webhook down: with failurePolicy Fail the pod is refused, with Ignore it is stored as sent.
    webhook.send_signal(signal.SIGTERM)
    assert webhook.wait(timeout=10) == 0, "the webhook did not stop cleanly on SIGTERM"
    try:
        cluster.core.create_namespaced_pod(NS, pod_body("refused", MEMORY))
        raise AssertionError("a GPU-memory pod was created while the webhook (failurePolicy Fail) was down")
    except k8s.rest.ApiException as error:
        assert error.status == 500 and "gpu-memory.scheduling.tessera.dev" in error.body, (error.status, error.body)
    admission.patch_mutating_webhook_configuration(
        "tessera-gpu-memory", [{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}])
    wait_for("a pod created while the webhook is down (failurePolicy Ignore)",
             lambda: cluster.core.create_namespaced_pod(NS, pod_body("unenforced", MEMORY)), timeout=30,
             interval=0.5)
    assert not injected(cluster.pods(NS)["unenforced"])
    assert scheduler.poll() is None, "the scheduler exited"
