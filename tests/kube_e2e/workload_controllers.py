"""Starts the JobSet, Kubeflow Trainer, LeaderWorkerSet, KubeRay and Kubeflow Training Operator
controllers (built by scripts/build-workload-controllers.sh) against a real control plane started
by the harness: their CRDs applied, their webhooks served with a certificate made here, as a user's
cluster runs them once the operators are installed."""
import base64
import os
import subprocess
import tempfile

import yaml

from harness import REAL_CLUSTER, free_port, k8s, wait_for

BUILD = os.path.join(os.path.dirname(REAL_CLUSTER), "build-workload-controllers.sh")
# Kubeflow Trainer's and the Training Operator's webhook servers read their certificate from this
# fixed folder (their cert packages).
TRAINER_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"


def built_dir():
    """The folder of the built controllers, their CRDs and webhooks, or None."""
    built = subprocess.run(["bash", BUILD, "--built"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return built.stdout.strip().splitlines()[-1] if built.returncode == 0 else None


def missing():
    """Why the controllers cannot run here, or None."""
    if built_dir():
        return None
    return ("the JobSet, Kubeflow Trainer, LeaderWorkerSet, KubeRay and Training Operator controllers are not built; "
            "run scripts/build-workload-controllers.sh "
            "(scripts/install-and-build.sh does where Go and the module proxy are at hand)")


def _serving_certificate(directory):
    """A CA and a certificate for 127.0.0.1 signed by it, as tls.crt/tls.key in `directory`; the CA's PEM."""
    os.makedirs(directory, exist_ok=True)
    ca_key, ca_crt = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.crt")
    key, csr, crt = (os.path.join(directory, name) for name in ("tls.key", "tls.csr", "tls.crt"))
    extensions = os.path.join(directory, "san.ext")
    with open(extensions, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    for command in (
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=e2e-webhook-ca",
             "-keyout", ca_key, "-out", ca_crt],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", csr],
            ["x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial", "-days", "2",
             "-extfile", extensions, "-out", crt]):
        subprocess.run(["openssl", *command], check=True, capture_output=True)
    with open(ca_crt) as f:
        return f.read()


def _trainer_certificate(source):
    """Puts a certificate where Trainer's webhook server looks (written whole, never half: other runs
    may read it). Its webhooks are not registered, so any valid pair serves."""
    if os.path.exists(os.path.join(TRAINER_CERT_DIR, "tls.crt")):
        return
    os.makedirs(TRAINER_CERT_DIR, exist_ok=True)
    for name in ("tls.key", "tls.crt"):  # the key first: the certificate's presence means both are there
        staged = tempfile.NamedTemporaryFile(dir=TRAINER_CERT_DIR, delete=False)
        with open(os.path.join(source, name), "rb") as f:
            staged.write(f.read())
        staged.close()
        os.replace(staged.name, os.path.join(TRAINER_CERT_DIR, name))


def _own_webhooks(path, prefix, port, ca_pem):
    """A controller's webhook configurations as it ships them, renamed PREFIX-NAME, with the apiserver
    sent to https://127.0.0.1:PORT (no Service: KWOK's nodes run no pods) and trusting CA_PEM."""
    documents = [d for d in yaml.safe_load_all(open(path)) if d]
    for document in documents:
        document["metadata"]["name"] = f"{prefix}-{document['metadata']['name']}"
        for hook in document["webhooks"]:
            service = hook["clientConfig"].pop("service")
            hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{service['path']}",
                                    "caBundle": base64.b64encode(ca_pem.encode()).decode()}
    return documents


def _start_with_webhooks(cluster, name, built, config_api, certs, ca_pem, env):
    """Starts a controller configured by a file of CONFIG_API (JobSet's and LeaderWorkerSet's are
    alike) with its webhooks served from the certificate in CERTS, and registers them."""
    port = free_port()
    config = os.path.join(cluster.dir, f"{name}-config.yaml")
    with open(config, "w") as f:
        yaml.safe_dump({"apiVersion": config_api, "kind": "Configuration",
                        "leaderElection": {"leaderElect": False}, "internalCertManagement": {"enable": False},
                        "webhook": {"port": port, "host": "127.0.0.1", "certDir": certs},
                        "health": {"healthProbeBindAddress": "0"}, "metrics": {"bindAddress": "0"}}, f)
    cluster.start_process(f"{name}-controller", [os.path.join(built, "bin", f"{name}-controller"), "--config", config],
                          env=env)
    admission = k8s.AdmissionregistrationV1Api(cluster.api)
    for document in _own_webhooks(os.path.join(built, "webhooks", f"{name}.yaml"), name, port, ca_pem):
        if document["kind"] == "MutatingWebhookConfiguration":
            admission.create_mutating_webhook_configuration(document)
        else:
            admission.create_validating_webhook_configuration(document)


def _webhooks_answer(cluster, what, group, version, plural, body):
    """Waits until a dry-run create of BODY passes the webhooks of its kind."""
    wait_for(what, lambda: cluster.custom.create_namespaced_custom_object(group, version, "default", plural, body,
                                                                          dry_run="All"), timeout=60, interval=0.5)


def _start_without_webhooks(cluster, name, namespace, secret, command, certs, env, started_line):
    """Starts a Kubeflow controller manager whose webhooks stay unregistered: its namespace and the
    empty Secret its certificate manager fills, a certificate where its webhook server looks; returns
    once its log shows STARTED_LINE."""
    cluster.namespace(namespace)
    cluster.core.create_namespaced_secret(namespace, {"apiVersion": "v1", "kind": "Secret",
                                                      "metadata": {"name": secret}})
    _trainer_certificate(certs)
    cluster.start_process(name, [*command, "--metrics-bind-address=0", "--health-probe-bind-address=0",
                                 f"--webhook-server-port={free_port()}"], env=env)
    wait_for(f"{name} started", lambda: started_line in cluster.scheduler_log(name), timeout=90, interval=0.5)


CRDS = {"jobset": ["jobsets.jobset.x-k8s.io"],
        "trainer": ["trainjobs.trainer.kubeflow.org", "clustertrainingruntimes.trainer.kubeflow.org",
                    "trainingruntimes.trainer.kubeflow.org"],
        "lws": ["leaderworkersets.leaderworkerset.x-k8s.io"],
        "kuberay": ["rayclusters.ray.io", "rayjobs.ray.io", "rayservices.ray.io"],
        "training-operator": ["pytorchjobs.kubeflow.org"]}


def start(cluster, *controllers):
    """Applies the CRDs of CONTROLLERS ("jobset", "trainer", "lws", "kuberay", "training-operator")
    and starts them against `cluster` (a real one, as admin); returns once their webhooks answer and
    their controllers run. They stop with the cluster (Cluster.close), and their logs are dumped
    with the others."""
    assert cluster.kind == "real", "the workload controllers need a real control plane"
    built = built_dir()
    assert built, missing()
    for controller in controllers:
        applied = cluster.kubectl("apply", "--server-side", "-f", os.path.join(built, "crds", controller))
        assert applied.returncode == 0, applied.stderr
    for crd in (crd for controller in controllers for crd in CRDS[controller]):
        # Right after the apply a CRD may have no status yet, which `kubectl wait` takes for an error.
        wait_for(f"the CRD {crd} established", lambda crd=crd: cluster.kubectl(
            "wait", "--for=condition=Established", "--timeout=10s", f"crd/{crd}").returncode == 0,
            timeout=60, interval=0.5)

    certs = os.path.join(cluster.dir, "webhook-certs")
    ca_pem = _serving_certificate(certs)
    env = dict(os.environ, KUBECONFIG=cluster.kubeconfig)
    container = {"name": "c", "image": "busybox"}

    # JobSet and LeaderWorkerSet: their defaulting webhooks fill fields their controllers read
    # (a JobSet's spec.network; the labels LeaderWorkerSet's pod webhook puts on each group's pods),
    # so they are served for real, from the certificate above.
    if "jobset" in controllers:
        _start_with_webhooks(cluster, "jobset", built, "config.jobset.x-k8s.io/v1alpha1", certs, ca_pem, env)
        _webhooks_answer(cluster, "JobSet's webhooks answering", "jobset.x-k8s.io", "v1alpha2", "jobsets", {
            "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "probe"},
            "spec": {"replicatedJobs": [{"name": "r", "template": {"spec": {"template": {"spec": {
                "containers": [container]}}}}}]}})
    if "lws" in controllers:
        _start_with_webhooks(cluster, "lws", built, "config.lws.x-k8s.io/v1alpha1", certs, ca_pem, env)
        _webhooks_answer(cluster, "LeaderWorkerSet's webhooks answering", "leaderworkerset.x-k8s.io", "v1",
                         "leaderworkersets", {
                             "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                             "metadata": {"name": "probe"},
                             "spec": {"leaderWorkerTemplate": {"workerTemplate": {"spec": {"containers": [container]}}}}})

    # Kubeflow Trainer and the Training Operator (for PyTorchJob only): their webhooks only validate
    # and their certificate managers want a Service name, so they are left unregistered; each still
    # needs its namespace and Secret, and a certificate in the fixed folder.
    if "trainer" in controllers:
        _start_without_webhooks(cluster, "trainer-controller-manager", "kubeflow-system", "kubeflow-trainer-webhook-cert",
                                [os.path.join(built, "bin", "trainer-controller-manager")], certs, env,
                                '"Starting workers","controller":"trainjob')
    if "training-operator" in controllers:
        _start_without_webhooks(cluster, "training-operator", "kubeflow", "training-operator-webhook-cert",
                                [os.path.join(built, "bin", "training-operator"), "--enable-scheme=pytorchjob"],
                                certs, env, 'Starting workers\t{"controller": "pytorchjob-controller"')

    # KubeRay: its webhook only validates RayClusters and is off unless ENABLE_WEBHOOKS=true.
    if "kuberay" in controllers:
        cluster.start_process("ray-operator", [os.path.join(built, "bin", "ray-operator"), "--metrics-addr=0",
                                               "--health-probe-bind-address=0", "--enable-leader-election=false"],
                              env=env)
        wait_for("KubeRay's RayCluster controller started", lambda: '"logger":"controllers.RayCluster","msg":"Starting workers"'
                 in cluster.scheduler_log("ray-operator"), timeout=60, interval=0.5)
