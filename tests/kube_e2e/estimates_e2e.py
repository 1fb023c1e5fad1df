"""Start-time estimates on a live cluster: a running gang that declares its run time (the max-runtime
annotation) fills the GPUs; the gang waiting behind it gets status.startEstimate near the running
one's end with a cause that names it, its place in its queue, and `tessera list -o wide` and
`tessera describe` show both."""
import datetime
import json
import time

from cli_e2e import tessera
from harness import wait_for


def unix_time(rfc3339):
    """Unix seconds of a time as the API writes it ("2026-11-26T06:30:00Z")."""
    at = datetime.datetime.strptime(rfc3339, "%Y-%m-%dT%H:%M:%SZ")
    return at.replace(tzinfo=datetime.timezone.utc).timestamp()


def estimates(cluster):
    cluster.queue("team-a", 16)
    cluster.namespace("ml")
    cluster.start_scheduler("scheduler")
    # Running: 2 pods x 8 GPUs, the two nodes' every GPU, declared to run 30 minutes at most.
    cluster.pod_group("ml", "running", 2, "team-a")
    for i in range(2):
        cluster.pod("ml", f"running-{i}", gpus=8, group="running",
                    annotations={"scheduling.tessera.dev/max-runtime": "30m"})
    wait_for("the running gang bound", lambda: len(cluster.bound("ml")) == 2)
    started = wait_for("the running gang's start time", lambda: min(
        (p.status.start_time.timestamp() for p in cluster.bound("ml").values() if p.status.start_time),
        default=None))
    # Waiting behind it: a gang as large, then (a second later, so that it is younger) one pod of 8
    # GPUs that waits for the first to end too, and has no run time declared to wait for.
    cluster.pod_group("ml", "waiting", 2, "team-a")
    for i in range(2):
        cluster.pod("ml", f"waiting-{i}", gpus=8, group="waiting")
    time.sleep(1.1)
    cluster.pod_group("ml", "later", 1, "team-a")
    cluster.pod("ml", "later-0", gpus=8, group="later")

    def status(name):
        return cluster.get_pod_group("ml", name).get("status", {})
    estimate = wait_for("the waiting gang's estimate", lambda: status("waiting").get("startEstimate", {}).get("time")
                        and status("waiting")["startEstimate"])
    expected = started + 30 * 60
    at = unix_time(estimate["time"])
    # The estimator's resolution is a minute; the start times are whole seconds.
    assert abs(at - expected) <= 90, (estimate, expected)
    assert estimate["message"] == "when 16 GPUs of queue team-a's work end (ml/running)", estimate
    # Once the scheduler has seen the later pod too: two wait in team-a.
    place = wait_for("the waiting gang's place among two",
                     lambda: (status("waiting").get("queuePosition") or {}).get("pending") == 2
                     and status("waiting")["queuePosition"])
    assert place == {"queue": "team-a", "position": 1, "pending": 2}, place
    later = wait_for("the later pod's place and estimate",
                     lambda: status("later").get("queuePosition") and status("later").get("startEstimate") and status("later"))
    assert later["queuePosition"] == {"queue": "team-a", "position": 2, "pending": 2}, later
    assert "time" not in later["startEstimate"], later
    assert later["startEstimate"]["message"] == \
        "no estimate: it waits for work with no time limit or expected runtime to end", later

    # tessera list -o wide: STARTS for each.
    listed = {item["name"]: item for item in json.loads(tessera(cluster, "list", "-o", "json").stdout)["items"]}
    assert listed["waiting"]["estimate"] == estimate["message"], listed["waiting"]
    assert listed["waiting"]["estimatedStart"] == estimate["time"], listed["waiting"]
    table = tessera(cluster, "list", "-o", "wide").stdout
    header = table.splitlines()[0].split()
    assert "STARTS" in header, table
    rows = {line.split()[0]: line for line in table.splitlines()[1:]}
    # About half an hour from now (its time is within 90 s of the running gang's end).
    assert any(f"   ~{minutes} min   " in rows["waiting"] for minutes in range(27, 32)), table
    assert "   no estimate   " in rows["later"], table
    assert listed["running"]["estimate"] == "", listed["running"]

    # tessera describe: the estimate with its time and cause, and the place in the queue.
    story = tessera(cluster, "describe", "waiting").stdout
    assert f"(at {estimate['time']}): when 16 GPUs of queue team-a's work end (ml/running)\n" in story, story
    assert any(f"Estimate:    ~{minutes} min (at " in story for minutes in range(27, 32)), story
    assert "Position:    1 of 2 pending in queue team-a (1 is considered first)\n" in story, story
    story = tessera(cluster, "describe", "later").stdout
    assert "Position:    2 of 2 pending in queue team-a" in story, story
    assert "Estimate:    no estimate: it waits for work with no time limit or expected runtime to end\n" in story, story
