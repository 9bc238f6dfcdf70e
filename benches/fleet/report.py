"""The fleet benchmark's tables (benches/fleet/run.sh): wrk's figures per round and case, the
PostgreSQL replica's throughput as a share of the in-memory serve's, the approval round trip's
percentiles and the memory phase."""
import os
import re
import statistics
import sys

work, rounds = sys.argv[1], int(sys.argv[2])


def figures(path):
    text = open(path).read()
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p = {k: float(v) * scale[u] for k, v, u in re.findall(r"\s+(50|99)%\s+([\d.]+)(us|ms|s)\b", text)}
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return rps, p["50"], p["99"], int(bad.group(1)) if bad else 0


print("\n| round | case | serve | requests/s | p50 ms | p99 ms | non-2xx |")
print("|---|---|---|---:|---:|---:|---:|")
shares = {"read": [], "grant": []}
for r in range(1, rounds + 1):
    for kind in ("read", "grant"):
        row = {}
        for name, label in (("M", "memory"), ("A", "postgres")):
            rps, p50, p99, bad = figures(f"{work}/wrk.{r}.{kind}.{name}.out")
            row[name] = rps
            print(f"| {r} | {kind} | {label} | {rps:,.0f} | {p50:.3f} | {p99:.3f} | {bad} |")
        shares[kind].append(row["A"] / row["M"])
print("\n| postgres / memory | per round | mean | target |")
print("|---|---|---:|---|")
for kind, target in (("read", "≥ 80%"), ("grant", "")):
    per = " / ".join(f"{s:.0%}" for s in shares[kind])
    print(f"| {kind} | {per} | {statistics.mean(shares[kind]):.0%} | {target} |")

lines = [line.split("\t") for line in open(f"{work}/round_trip.out") if line.strip()]
times = sorted(float(ms) for ms, _ in lines)
statuses = {status.strip() for _, status in lines}
if times:
    def pct(q):
        return times[min(len(times) - 1, int(q * len(times)))]
    print(f"\napproval round trip across replicas ({len(times)} rounds, A's wait answered {sorted(statuses)}):"
          f" p50 {pct(0.50):.1f} ms, p99 {pct(0.99):.1f} ms, max {times[-1]:.1f} ms (targets: p50 ≤ 50, p99 ≤ 250)")

memory = f"{work}/memory.tsv"
if os.path.exists(memory):
    calls, a0, a1, b0, b1 = open(memory).read().split()
    print(f"\nmemory: {int(calls):,} distinct calls on replica A (reads and grant-writes alternately):"
          f" A {a0} → {a1} MiB VmRSS, B (idle replica of the same fleet) {b0} → {b1} MiB")
