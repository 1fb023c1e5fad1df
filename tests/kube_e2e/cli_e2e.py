"""The user commands (`tessera list`, `describe`, `top`, `submit`, `delete`) against a live cluster,
as a researcher runs them: a Job submitted runs with its GPUs, one too big waits and says why, the
queue and node views add up, and the errors a kubectl user expects come as one line."""
import json
import os
import shutil
import subprocess
import tempfile

from harness import TESSERA, edited_kubeconfig, k8s, wait_for


def tessera(cluster, *command, kubeconfig=None, after=(), check=True):
    """Runs `tessera COMMAND... --kubeconfig K -n ml AFTER...` and returns the completed process."""
    args = [TESSERA, *command, "--kubeconfig", kubeconfig or cluster.kubeconfig, "-n", "ml", *after]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if check:
        assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done


def workloads(cluster):
    listed = json.loads(tessera(cluster, "list", "-o", "json").stdout)
    return {item["name"]: item for item in listed["items"]}


def make_job_pods(cluster, job_name, count, gpus):
    """What the Job controller does, on the dev cluster that runs none: the Job's pods, from its template."""
    job = k8s.BatchV1Api(cluster.api).read_namespaced_job(job_name, "ml")
    template = job.spec.template
    for index in range(count):
        cluster.pod("ml", f"{job_name}-{index}", gpus=gpus, labels=dict(template.metadata.labels or {}),
                    annotations=dict(template.metadata.annotations or {}),
                    controller={"apiVersion": "batch/v1", "kind": "Job", "name": job_name, "uid": job.metadata.uid})


def one_line_error(done, starts_with):
    assert done.returncode == 1, f"exit {done.returncode}: {done.stdout}{done.stderr}"
    assert done.stdout == "", done.stdout
    assert done.stderr.startswith(starts_with) and done.stderr.count("\n") == 1, done.stderr


def refused_user_kubeconfig(cluster):
    """A user the server refuses: on a real cluster a ServiceAccount no RBAC rule lets read anything
    (403); on the dev cluster, which authorises every authenticated client, a wrong token (401)."""
    if cluster.kind == "real":
        cluster.core.create_namespaced_service_account("ml", {"metadata": {"name": "nobody"}})
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}}
        token = cluster.core.create_namespaced_service_account_token("nobody", "ml", request).status.token
    else:
        token = "not-the-token"

    def as_user(config):
        config["users"][0]["user"] = {"token": token}
    return edited_kubeconfig(cluster, "refused.kubeconfig", as_user)


def cli(cluster):
    cluster.queue("org", 24)
    cluster.queue("team-a", 24, parent="org")
    cluster.namespace("ml")
    cluster.start_scheduler("scheduler")
    hold = ["--annotation", "scheduling.tessera.dev/duration=1h", "--", "sleep", "3600"]

    # A training job of 2 pods x 8 GPUs runs, whole, with its GPUs.
    made = tessera(cluster, "submit", "train", after=["--image", "busybox", "--pods", "2", "--gpus", "8",
                                                      "--queue", "team-a", "--cpu", "1", "--memory", "1Gi", *hold])
    assert made.stdout == "job.batch/train created\n", made.stdout
    if cluster.kind == "dev":
        make_job_pods(cluster, "train", 2, 8)
    train = wait_for("the Job running in tessera list",
                     lambda: workloads(cluster).get("job-train", {}).get("state") == "Running" and workloads(cluster)["job-train"])
    assert train["gpus"] == "16" and train["boundPods"] == 2 and train["minMember"] == 2, train
    assert train["owner"] == "Job/train" and train["queue"] == "team-a", train
    table = tessera(cluster, "list").stdout
    assert any(line.split()[:5] == ["job-train", "team-a", "Running", "16", "2/2"] for line in table.splitlines()), table

    # A fractional interactive workload shares a device.
    made = tessera(cluster, "submit", "nb", after=["--type", "interactive", "--image", "busybox", "--gpus", "0.5",
                                                   "--queue", "team-a", *hold])
    assert made.stdout == "podgroup.scheduling.tessera.dev/nb created\npod/nb-0 created\n", made.stdout
    wait_for("the notebook running", lambda: workloads(cluster).get("nb", {}).get("state") == "Running")
    assert workloads(cluster)["nb"]["gpus"] == "0.5"

    # Too big for what is left (two whole nodes; the one free node has half a GPU in use): it waits
    # and says why.
    tessera(cluster, "submit", "big", after=["--type", "interactive", "--image", "busybox", "--pods", "2",
                                             "--gpus", "8", "--queue", "team-a", *hold])
    # Until its two pods both exist it waits as GangIncomplete.
    big = wait_for("the big workload's reason",
                   lambda: workloads(cluster).get("big", {}).get("reason") == "Unschedulable" and workloads(cluster)["big"])
    assert big["state"] == "Pending" and big["boundPods"] == 0, big
    assert "node" in big["message"], big
    table = tessera(cluster, "list").stdout
    assert any(line.startswith("big ") and "Pending" in line and "Unschedulable: " in line
               for line in table.splitlines()), table

    # The queue tree adds up: team-a holds 16.5 GPUs and waits for 16 more.
    def team_a():
        queues = {q["name"]: q for q in json.loads(tessera(cluster, "top", "queues", "-o", "json").stdout)["items"]}
        return queues["team-a"]
    queue = wait_for("team-a's status written", lambda: team_a()["gpu"]["pending"] == 16 and team_a())
    assert queue["gpu"]["allocated"] == 16.5 and queue["gpu"]["deserved"] == 24 and queue["depth"] == 1, queue
    assert queue["gpu"]["borrowed"] == 0, queue
    table = tessera(cluster, "top", "queues").stdout
    assert "  team-a" in table and "BORROWED" in table, table

    # The nodes: 16.5 GPUs in use, half of one device.
    nodes = json.loads(tessera(cluster, "top", "nodes", "-o", "json").stdout)["items"]
    assert sum(n["usedGpus"] for n in nodes) == 16.5, nodes
    assert sorted(m for n in nodes for m in n["deviceMilli"] if m) == [500] + [1000] * 16, nodes
    assert {q for n in nodes for q in n["queues"]} == {"team-a"}, nodes
    table = tessera(cluster, "top", "nodes").stdout
    maps = [word for line in table.splitlines() for word in line.split() if word.startswith("[")]
    assert sorted(maps) == ["[########]", "[########]"] + sorted(m for m in maps if m.count("5") == 1), table
    assert any(m.count("5") == 1 and m.count(".") == 7 for m in maps), table
    # Fragmentation: the 7.5 free GPUs of the shared node are no use to the 8-GPU pods (4 of the 5
    # GPU pods: the Job's and the big workload's), all of use to the half-GPU one: 0.8 x 7.5 = 6.
    fragmented = json.loads(tessera(cluster, "top", "nodes", "-o", "json").stdout)["cluster"]["fragmentedGpus"]
    assert abs(fragmented - 6.0) < 1e-9, fragmented
    assert "Cluster: 16.5 of 24 GPUs in use; 7.5 free, of which 6.0 fragmented (80.0%; 25.0% of capacity)" in table, table

    # The whole story, by the Job's name; and why the big one waits.
    story = tessera(cluster, "describe", "train").stdout
    for expected in ["Name:        job-train\n", "Owner:       Job/train\n", "State:       Running\n",
                     "Pods:        2 bound of 2 needed to start; 2 exist\n", "Quota (GPUs):\n", "  team-a", "  org"]:
        assert expected in story, f"{expected!r} not in:\n{story}"
    why = tessera(cluster, "explain", "big").stdout
    assert "Scheduled:   False (Unschedulable)" in why and "Why:         " + big["message"] in why, why
    assert "FailedScheduling" in why, why

    # Deleting the Job takes its pods and its PodGroup; the big workload then starts.
    deleted = tessera(cluster, "delete", "train").stdout
    assert deleted.startswith("job.batch/train deleted\n"), deleted
    wait_for("the Job's pods gone", lambda: not any(name.startswith("train-") for name in cluster.pods("ml")), timeout=60)
    wait_for("the Job's PodGroup gone", lambda: "job-train" not in workloads(cluster), timeout=60)
    wait_for("the big workload running", lambda: workloads(cluster)["big"]["state"] == "Running", timeout=60)
    deleted = tessera(cluster, "delete", "nb").stdout
    assert deleted == "podgroup.scheduling.tessera.dev/nb deleted\npod/nb-0 deleted\n", deleted

    # Errors as kubectl users expect them: one line, exit status 1.
    one_line_error(tessera(cluster, "describe", "nope", check=False),
                   'error: workload "nope" not found in namespace "ml"')
    one_line_error(tessera(cluster, "delete", "train", check=False),
                   'error: workload "train" not found in namespace "ml"')

    def unreachable(config):
        config["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    one_line_error(tessera(cluster, "list", kubeconfig=edited_kubeconfig(cluster, "unreachable", unreachable),
                           check=False), "error: cannot reach the API server https://127.0.0.1:1: ")
    refused = tessera(cluster, "list", kubeconfig=refused_user_kubeconfig(cluster), check=False)
    if cluster.kind == "real":
        one_line_error(refused, "Error from server (Forbidden): podgroups.scheduling.tessera.dev is forbidden: "
                                'User "system:serviceaccount:ml:nobody" cannot list resource "podgroups"')
    else:
        one_line_error(refused, "Error from server (Unauthorized): ")

    # As a kubectl plugin: kubectl runs kubectl-tessera found on the PATH.
    kubectl = shutil.which("kubectl") or os.path.join(os.path.dirname(TESSERA),
                                                      "tools/kubernetes-client/usr/bin/kubectl")
    if os.path.exists(kubectl):
        plugins = tempfile.mkdtemp(dir=cluster.dir)
        os.symlink(os.path.abspath(TESSERA), os.path.join(plugins, "kubectl-tessera"))
        env = dict(os.environ, PATH=plugins + os.pathsep + os.environ["PATH"])
        done = subprocess.run([kubectl, "tessera", "list", "--kubeconfig", cluster.kubeconfig, "-n", "ml"],
                              capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0 and any(line.startswith("big ") for line in done.stdout.splitlines()), \
            f"kubectl tessera list exited {done.returncode}:\n{done.stdout}{done.stderr}"
    else:
        print("cli: no kubectl found: the plugin check is left out")
