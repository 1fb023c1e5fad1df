#!/usr/bin/env python3
"""An upper bound on GPU allocation at 100% arrived workload for an Alibaba pod list.

A device that holds a GPU share s > 1 - t keeps a gap 1 - s < t, which only shares smaller than
t can fill. So for every threshold t <= 0.5 the gaps left by the big shares, minus everything
the small shares could fill, is capacity that no placement can allocate (in expectation over the arrival order):
    stranded(t) = sum_{s > 1-t} (1 - s) - sum_{s < t} s
The population is scaled to the cluster's GPU capacity (arrivals at 100% are the population in
that proportion), so the allocation at 100% arrived is at most 100% - max_t stranded(t) / capacity.

It also prints the CPU the arrivals request at that point, as a share of the cluster's CPU: above
100%, CPU runs out before the GPUs do.

Usage: scripts/share_remainder_bound.py [data/alibaba-gpu-v2023]
"""
import csv
import pathlib
import sys

data = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent / "data" / "alibaba-gpu-v2023")
with open(data / "openb_node_list_gpu_node.csv") as nodes:
    node_rows = list(csv.DictReader(nodes))
capacity = sum(int(row["gpu"]) for row in node_rows)
cpu_capacity = sum(int(row["cpu_milli"]) for row in node_rows)


def gpu_milli(row):
    whole = int(row["num_gpu"])
    return int(row["gpu_milli"]) if whole == 1 and int(row["gpu_milli"]) < 1000 else whole * 1000


print(f"{'pod list':<14}{'stranded GPUs':>15}{'ceiling at 100% arrived':>26}{'CPU requested at 100% arrived':>32}")
for path in sorted(data.glob("openb_pod_list_*.csv")):
    with open(path) as pods:
        rows = list(csv.DictReader(pods))
    scale = capacity / (sum(gpu_milli(row) for row in rows) / 1000)
    shares = [int(row["gpu_milli"]) for row in rows if row["num_gpu"] == "1" and int(row["gpu_milli"]) < 1000]
    stranded = max(
        sum(1000 - s for s in shares if 1000 - s < t) - sum(s for s in shares if s < t) for t in range(10, 501, 10)
    )
    stranded_gpus = max(stranded, 0) / 1000 * scale
    name = path.stem.removeprefix("openb_pod_list_")
    cpu_demand = scale * sum(int(row["cpu_milli"]) for row in rows) / cpu_capacity
    print(f"{name:<14}{stranded_gpus:>15.1f}{100 - 100 * stranded_gpus / capacity:>25.2f}%{100 * cpu_demand:>31.1f}%")
