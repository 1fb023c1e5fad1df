#!/usr/bin/env python3
"""Writes scenarios/organisation.yaml: a two-level organisation on 4096 GPUs.

Four departments of ten projects each (40 leaf queues) share 512 nodes of 8 GPUs (384 A100
nodes and 128 H100 nodes). The departments deserve different shares of the GPUs (and of the
H100s) and have different over-quota weights; each department's projects deserve parts that
sum to it, some with a limit. Each department is busy in its own hours of the day: its projects
submit bursts of 1-, 2-, 4- and 8-GPU jobs (one workload entry with `count` and
`arrival_interval` per burst) and a few gangs of 4 to 16 pods x 8 GPUs, lasting 10 minutes to
6 hours, over about 12 hours, so that the GPUs asked for exceed the cluster for long stretches.

Deterministic (a fixed seed) and standard library only:

    python3 scripts/make_organisation_scenario.py            # writes scenarios/organisation.yaml
    python3 scripts/make_organisation_scenario.py -o FILE    # elsewhere; --seed N for another draw

It prints to stderr how often the GPUs asked for (as if every job ran from its arrival for its
duration) exceed the cluster's.
"""

import argparse
import os
import random
import sys

HOUR = 3600
MINUTE = 60
HORIZON = 12 * HOUR

A100_NODES = 384
H100_NODES = 128
GPUS_PER_NODE = 8
TOTAL_GPUS = (A100_NODES + H100_NODES) * GPUS_PER_NODE  # 4096
H100_GPUS = H100_NODES * GPUS_PER_NODE  # 1024

# name, deserved GPUs, deserved H100 GPUs, over-quota weight, busy hours [start, end), demand scale
DEPARTMENTS = [
    ("vision", 1400, 350, 3, (0, 7), 1.4),
    ("language", 1200, 300, 2, (2, 10), 1.3),
    ("robotics", 900, 225, 1, (5, 12), 1.2),
    ("science", 596, 149, 1, (0, 12), 0.8),
]
PROJECTS_PER_DEPARTMENT = 10

# Job sizes (GPUs per pod), how often each is drawn, and duration ranges in seconds.
JOB_SIZES = [(1, 5), (2, 3), (4, 2), (8, 2)]
DURATIONS = [(10 * MINUTE, 30 * MINUTE), (30 * MINUTE, 2 * HOUR), (2 * HOUR, 6 * HOUR)]
DURATION_WEIGHTS = [3, 4, 2]


def split(total, parts, rng):
    """`total` split into `parts` positive integers, uneven, summing exactly to it."""
    shares = [rng.uniform(0.4, 1.6) for _ in range(parts)]
    scale = total / sum(shares)
    amounts = [max(1, int(share * scale)) for share in shares]
    amounts[0] += total - sum(amounts)
    return amounts


def pod(gpus, model=None):
    fields = f"cpu: {12 * gpus}, memory: {96 * gpus}Gi, gpus: {gpus}"
    if model:
        fields += f", gpu_models: [{model}]"
    return "{" + fields + "}"


def make(seed):
    rng = random.Random(seed)
    queues = []
    workloads = []  # (arrival, lines, [(start, end, gpus)])

    for name, deserved, h100, weight, (busy_from, busy_to), scale in DEPARTMENTS:
        queues.append(
            [
                f"  - name: {name}",
                f"    reclaim_min_runtime: 300",
                f"    preempt_min_runtime: 900",
                f"    quota:",
                f"      gpu: {{deserved: {deserved}, weight: {weight}}}",
                f"      gpu/H100: {{deserved: {h100}, weight: {weight}}}",
            ]
        )
        for index, project_deserved in enumerate(split(deserved, PROJECTS_PER_DEPARTMENT, rng)):
            project = f"{name}-{index + 1:02d}"
            lines = [f"  - name: {project}", f"    parent: {name}"]
            if index % 4 == 3:
                lines.append("    priority: 1")
            if index % 5 == 4:
                lines.append("    reclaim_min_runtime: 1800")
            quota = f"deserved: {project_deserved}, weight: {rng.choice([1, 1, 2])}"
            if index % 3 == 0:
                quota += f", limit: {project_deserved * rng.choice([2, 3])}"
            lines += ["    quota:", f"      gpu: {{{quota}}}"]
            queues.append(lines)

            # Bursts inside the department's busy hours.
            for burst in range(rng.randint(3, 6)):
                gpus = rng.choices([size for size, _ in JOB_SIZES], [w for _, w in JOB_SIZES])[0]
                low, high = rng.choices(DURATIONS, DURATION_WEIGHTS)[0]
                duration = rng.randrange(low, high + 1, MINUTE)
                count = max(2, round(rng.randint(10, 40) * scale * 4 / gpus**0.5))
                # A burst is submitted within two hours at most.
                interval = max(10, min(rng.choice([30, 60, 120, 300]), 2 * HOUR // count))
                arrival = rng.randrange(busy_from * HOUR, busy_to * HOUR - HOUR, 5 * MINUTE)
                arrival = min(arrival, HORIZON - duration) if duration < HORIZON else 0
                arrival = max(0, arrival)
                lines = [
                    f"  - name: {project}-b{burst}",
                    f"    count: {count}",
                    f"    queue: {project}",
                    f"    arrival: {arrival}",
                    f"    arrival_interval: {interval}",
                    f"    duration: {duration}",
                ]
                if duration >= HOUR:
                    lines.append(f"    checkpoint_interval: {rng.choice([900, 1800])}")
                lines.append(f"    pod: {pod(gpus)}")
                spans = [(arrival + k * interval, arrival + k * interval + duration, gpus) for k in range(count)]
                workloads.append((arrival, lines, spans))

            # A gang now and then: 4 to 16 pods of 8 GPUs, all or nothing.
            if rng.random() < 0.35:
                pods = rng.choice([4, 8, 8, 16])
                duration = rng.randrange(2 * HOUR, 6 * HOUR + 1, 10 * MINUTE)
                arrival = rng.randrange(busy_from * HOUR, max(busy_from + 1, busy_to - 2) * HOUR, 10 * MINUTE)
                model = "H100" if rng.random() < 0.5 else None
                lines = [
                    f"  - name: {project}-gang",
                    f"    queue: {project}",
                    f"    priority: 1",
                    f"    arrival: {arrival}",
                    f"    duration: {duration}",
                    f"    checkpoint_interval: 1800",
                    f"    pods: {pods}",
                    f"    pod: {pod(8, model)}",
                ]
                workloads.append((arrival, lines, [(arrival, arrival + duration, 8 * pods)]))

    workloads.sort(key=lambda item: item[0])
    return queues, workloads


HEADER = """\
# A two-level organisation on 4096 GPUs, generated by scripts/make_organisation_scenario.py
# (edit the script, not this file). Four departments of ten projects each (40 leaf queues)
# share 512 nodes of 8 GPUs: 384 A100 nodes and 128 H100 nodes. The departments deserve
# 1400, 1200, 900 and 596 GPUs (and 350, 300, 225 and 149 of the H100s) with over-quota
# weights 3, 2, 1 and 1; each department's projects deserve parts that sum to it, a third of
# them with a limit. Departments are busy in their own hours (vision 0-7 h, language 2-10 h,
# robotics 5-12 h, science all day): their projects submit bursts of 1-, 2-, 4- and 8-GPU jobs
# and a few gangs of 4 to 16 pods x 8 GPUs, lasting 10 minutes to 6 hours, so that the GPUs
# asked for exceed the cluster for long stretches and borrowed GPUs are reclaimed as
# departments come and go.
#
#   tessera sim --mode timeline --scenario scenarios/organisation.yaml
name: organisation

cluster:
  nodes:
    - name: a100
      count: 384
      cpu: 128
      memory: 1Ti
      gpus: 8
      gpu_model: A100
      gpu_memory: 80Gi
      labels: {pool: a100}
    - name: h100
      count: 128
      cpu: 192
      memory: 2Ti
      gpus: 8
      gpu_model: H100
      gpu_memory: 80Gi
      labels: {pool: h100}
"""


def demand_report(workloads):
    """Hours of the horizon during which the GPUs asked for exceed the cluster, and the peak."""
    events = []
    for _, _, spans in workloads:
        for start, end, gpus in spans:
            events += [(start, gpus), (end, -gpus)]
    events.sort()
    level = peak = over = 0
    last = 0
    for time, change in events:
        if level > TOTAL_GPUS:
            over += min(time, HORIZON) - min(last, HORIZON)
        level += change
        peak = max(peak, level)
        last = time
    return over / HOUR, peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("-o", "--output", default=os.path.join(root, "scenarios", "organisation.yaml"))
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()

    queues, workloads = make(args.seed)
    out = [HEADER, "\nqueues:\n"]
    for lines in queues:
        out.append("\n".join(lines) + "\n")
    out.append("\nworkloads:\n")
    for _, lines, _ in workloads:
        out.append("\n".join(lines) + "\n")
    with open(args.output, "w", encoding="utf-8") as file:
        file.write("".join(out))

    hours_over, peak = demand_report(workloads)
    jobs = sum(len(spans) for _, _, spans in workloads)
    print(
        f"{args.output}: {len(queues)} queues, {len(workloads)} workload entries ({jobs} workloads); "
        f"GPUs asked for exceed {TOTAL_GPUS} during {hours_over:.1f} of {HORIZON // HOUR} hours, peak {peak}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
