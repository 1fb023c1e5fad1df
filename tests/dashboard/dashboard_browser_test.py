"""The scheduler's dashboard in a real browser: `tessera dev cluster` with one running training
job, a fractional notebook, a guest's pod reclaimed for a research job, and two pending workloads
(one waiting for room, with a start estimate, one over its queue's limit), `tessera scheduler`
against it, and Debian's Chromium driven by
playwright-core (dashboard_browser.cjs) asserting what a person sees, with the keyboard and for
basic accessibility. Screenshots go to $TESSERA_DASHBOARD_ARTIFACTS (default
build/Testing/dashboard). Then the page load time at 10,000 nodes (`tessera bench dashboard
--serve`).

Skipped (exit 77) where Chromium or playwright-core is missing, unless CI=true, where that fails."""
import json
import os
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "kube_e2e"))
import harness  # noqa: E402 (exits 77 without python3-kubernetes)

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
PLAYWRIGHT = os.environ.get("PLAYWRIGHT_CORE",
                            os.path.join(ROOT, "build", "dashboard-test", "node_modules", "playwright-core"))
ARTIFACTS = os.environ.get("TESSERA_DASHBOARD_ARTIFACTS", os.path.join(ROOT, "build", "Testing", "dashboard"))


def missing():
    if not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} is not installed (apt-get install chromium; scripts/install-and-build.sh does)"
    if not os.path.isdir(PLAYWRIGHT):
        return f"playwright-core is not installed at {PLAYWRIGHT} (scripts/install-and-build.sh runs npm ci)"
    return None


def browser(*args):
    env = dict(os.environ, PLAYWRIGHT_CORE=PLAYWRIGHT, CHROMIUM=CHROMIUM)
    run = subprocess.run(["node", os.path.join(HERE, "dashboard_browser.cjs"), *args], env=env, capture_output=True,
                         text=True, timeout=240)
    sys.stdout.write(run.stdout)
    assert run.returncode == 0, f"the browser check failed:\n{run.stdout}{run.stderr}"


def api(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/ui/api/{path}", timeout=5) as response:
        return json.load(response)


def what_a_person_sees(cluster, shots):
    cluster.queue("research", 8)
    cluster.queue("interns", 0, limit=1)
    cluster.queue("guests", 0)
    cluster.namespace("ml")
    cluster.start_scheduler("scheduler")
    _, port = cluster.schedulers["scheduler"]
    cluster.pod("ml", "train", gpus=4, queue="research", deadline=3600)
    cluster.pod("ml", "notebook", fraction="0.5", queue="research")
    bound = harness.wait_for("the training job and the notebook bound",
                             lambda: (b := cluster.bound("ml")) and len(b) == 2 and b)
    notebook_node = bound["notebook"].spec.node_name
    assert bound["train"].spec.node_name != notebook_node, {name: p.spec.node_name for name, p in bound.items()}
    # A guest borrows an idle GPU beside the notebook; research then needs 3 whole GPUs there and
    # reclaims it.
    cluster.pod("ml", "guest", gpus=1, queue="guests")
    harness.wait_for("the guest bound", lambda: "guest" in cluster.bound("ml"))
    cluster.pod("ml", "wide", gpus=4, queue="research")
    cluster.pod("ml", "intern-job", gpus=2, queue="interns")
    cluster.pod("ml", "needs-3", gpus=3, queue="research")
    harness.wait_for("needs-3 bound in the guest's place",
                     lambda: "needs-3" in cluster.bound("ml") and "guest" not in cluster.pods("ml"), timeout=60)
    # The picture is rebuilt at most every second; the eviction's cycle keeps it for the next one.
    evictions = harness.wait_for("the eviction in /ui/api/workloads", lambda: api(port, "workloads")["evictions"])
    assert [(e["workload"], e["action"], e["madeRoomFor"]) for e in evictions] == \
        [("ml/guest", "reclaim", "ml/needs-3")], evictions

    def pending_with_estimate():
        rows = api(port, "workloads")["pending"]
        wide = [row for row in rows if row["workload"] == "ml/wide"]
        return rows if len(rows) == 2 and wide and wide[0]["estimatedStart"] else None
    pending = harness.wait_for("both pending in /ui/api/workloads, the wide job with an estimate",
                               pending_with_estimate, timeout=60)
    reasons = {row["workload"]: row["reason"] for row in pending}
    assert reasons == {"ml/wide": "Unschedulable", "ml/intern-job": "QueueLimit"}, reasons
    harness.wait_for("the queues' allocation", lambda: any(
        q["name"] == "research" and q["allocated"] == 7.5 for q in api(port, "queues")["queues"]))
    expect = {
        "gpus": 8,
        "pending": [{key: row[key] for key in ("workload", "reason", "message", "estimate")} for row in pending],
        "queues": [{"name": "research", "figures": ["8", "7.50"]}, {"name": "interns", "figures": ["0", "1"]}],
        "fraction": {"node": notebook_node, "queue": "research", "text": "0.50 queue research, 0.50 free"},
        "evictions": ["ml/guest", "reclaim to make room for ml/needs-3"],
        "estimateShown": "in ~",
    }
    expect_path = os.path.join(cluster.dir, "expect.json")
    with open(expect_path, "w") as f:
        json.dump(expect, f)
    browser("check", f"http://127.0.0.1:{port}/ui/", expect_path, shots)


def page_load_at_size(shots, nodes):
    bench = subprocess.Popen([harness.TESSERA, "bench", "dashboard", "--nodes", str(nodes), "--runs", "1",
                              "--serve", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
    try:
        url = None
        for line in bench.stdout:
            sys.stdout.write(line)
            if line.startswith("serving "):
                url = line.split()[1]
                break
        assert url, f"tessera bench dashboard --serve printed no address (exit status {bench.poll()})"
        browser("load", url, shots)
    finally:
        bench.terminate()
        bench.wait(timeout=30)


def main():
    why = missing()
    if why:
        if os.environ.get("CI") == "true":
            print(f"FAIL: {why} (CI=true: the browser test must run)", file=sys.stderr)
            return 1
        print(f"SKIP: {why}", file=sys.stderr)
        return harness.SKIP
    os.makedirs(ARTIFACTS, exist_ok=True)
    cluster = harness.Cluster(harness.gpu_nodes(2, gpus=4))
    try:
        what_a_person_sees(cluster, ARTIFACTS)
    except BaseException:
        cluster.dump_logs()
        raise
    finally:
        cluster.close()
    page_load_at_size(ARTIFACTS, int(os.environ.get("TESSERA_DASHBOARD_NODES", "10000")))
    print("dashboard browser test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
