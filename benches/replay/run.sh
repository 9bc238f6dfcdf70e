#!/usr/bin/env bash
# Replay benchmark and 100k-record check (issue 4), run by .ci/run.
#
#   bash benches/replay/run.sh
#   RECORDS=200000 ROUND=10 bash benches/replay/run.sh
#
# Builds release, starts `askgate serve --log-dir` (embedded defaults: in-process sandbox,
# demo tokens), records consent, then drives POST /v1/authorize with wrk (three concurrent
# runs of benches/http/post.lua) mixing
#   read          ClaudeDesign get_project            (allow)
#   projects-read Projects project_read `notes.md`    (allow)
#   denied        ClaudeDesign copy_files, no token   (deny, design.tokenless-copy)
# in rounds until at least $RECORDS decisions were answered. It stops the service (SIGINT,
# graceful), checks it with `askgate log verify` (every chain whole and signed), then replays
# the log against the same (embedded) policies with --jobs 1 and --jobs 2 and asserts: exit 0
# (nothing changed), records >= $RECORDS, no problem lines, no broken-chain warning. It prints
# the hash chain's cost: the writer's time on it per line and as a share of the serve's CPU.
# Replay throughput includes reading, decoding and comparing; `replay --stats` also times raw
# `decide` on the same decoded facts, with the snapshot's answer cache warm and (on a sample) emptied
# before each decision, so both ratios are printed.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."

RECORDS=${RECORDS:-100000}
CONNECTIONS=${CONNECTIONS:-8}  # per wrk run (three run at once)
ROUND=${ROUND:-5}              # seconds per wrk round
DEADLINE=${DEADLINE:-150}      # seconds for the whole load phase
STEP_TIMEOUT=${STEP_TIMEOUT:-120}

for tool in wrk curl python3 timeout; do
  command -v "$tool" >/dev/null || { echo "replay bench: $tool is required" >&2; exit 1; }
done

cargo build --release --quiet
BIN=${CARGO_TARGET_DIR:-target}/release/askgate
WORK=$(mktemp -d)
LOGS="$WORK/logs"
SERVE=""
cleanup() {
  if [ -n "$SERVE" ] && kill -0 "$SERVE" 2>/dev/null; then
    kill -9 "$SERVE" 2>/dev/null || true
    wait "$SERVE" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

PORT=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
URL="http://127.0.0.1:$PORT"
"$BIN" serve --listen "127.0.0.1:$PORT" --log-dir "$LOGS" --watch-seconds 0 >"$WORK/serve.log" 2>&1 &
SERVE=$!
for _ in $(seq 100); do
  curl -sf -m 1 "$URL/healthz" >/dev/null && break
  kill -0 "$SERVE" 2>/dev/null || { cat "$WORK/serve.log" >&2; exit 1; }
  sleep 0.1
done
curl -sf -m 2 "$URL/healthz" >/dev/null || { echo "serve did not start" >&2; cat "$WORK/serve.log" >&2; exit 1; }

AGENT=askgate-demo-agent-token
APPROVER=askgate-demo-approver-token
curl -sf -m 5 -X POST "$URL/v1/design/consent" -H "Authorization: Bearer $APPROVER" >/dev/null

SESSION='"session":{"id":"replay-bench","agent":"main","mode":"default","interactive":true}'
echo "{$SESSION,\"tool\":\"ClaudeDesign\",\"input\":{\"operation\":\"get_project\",\"arguments\":{\"project_id\":\"p1\"}}}" >"$WORK/read.json"
echo "{$SESSION,\"tool\":\"Projects\",\"input\":{\"method\":\"project_read\",\"path\":\"notes.md\"}}" >"$WORK/projects-read.json"
echo "{$SESSION,\"tool\":\"ClaudeDesign\",\"input\":{\"operation\":\"copy_files\",\"arguments\":{\"project_id\":\"p1\",\"files\":[{\"src\":\"index.html\",\"dest\":\"copy.html\"}]}}}" >"$WORK/denied.json"

# Each body must decide as expected before it is loaded.
for pair in read:allow projects-read:allow denied:deny; do
  body=${pair%%:*} expected=${pair##*:}
  curl -s -m 5 -X POST "$URL/v1/authorize" -H "Authorization: Bearer $AGENT" -d @"$WORK/$body.json" \
    | python3 -c "import json,sys; d=json.load(sys.stdin); assert d['decision']=='$expected', d; print('$body:', d['decision'], d['policies'])"
done

# One round: the three bodies at once for $ROUND seconds; prints the answered requests.
round() {
  local pids=() name
  for name in read projects-read denied; do
    BODY_FILE="$WORK/$name.json" TOKEN="$AGENT" timeout $((ROUND + 30)) \
      wrk -t1 -c"$CONNECTIONS" -d"${ROUND}s" --latency -s benches/http/post.lua \
      "$URL/v1/authorize" >"$WORK/$name.out" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  python3 - "$WORK" <<'PY'
import re, sys
total = 0
for name in ("read", "projects-read", "denied"):
    text = open(f"{sys.argv[1]}/{name}.out").read()
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if non2xx:
        sys.exit(f"{name}: {non2xx.group(1)} non-2xx responses\n{text}")
    total += int(re.search(r"(\d+) requests in", text).group(1))
print(total)
PY
}

ANSWERED=0
LOAD_STARTED=$(date +%s.%N)
while [ "$ANSWERED" -lt "$RECORDS" ]; do
  if [ "$(python3 -c "import time; print(int(time.time() - $LOAD_STARTED))")" -ge "$DEADLINE" ]; then
    echo "replay bench: only $ANSWERED of $RECORDS requests within ${DEADLINE}s" >&2
    exit 1
  fi
  COUNT=$(round)
  ANSWERED=$((ANSWERED + COUNT))
done
LOAD_SECONDS=$(python3 -c "import time; print(f'{time.time() - $LOAD_STARTED:.1f}')")

# The hash chain's cost (issue 37): the writer's time on it, against the serve's CPU over
# the load (user + system, its whole life: start-up is a fraction of a second of it).
CHAIN=$(curl -sf -m 5 "$URL/metrics" | python3 -c '
import re, sys
text = sys.stdin.read()
value = lambda name: float(re.search(rf"^{name} (\S+)$", text, re.M).group(1))
print(value("askgate_log_chain_seconds_total"), value("askgate_log_lines_total"))')
SERVE_CPU=$(awk -v tck="$(getconf CLK_TCK)" '{print ($14 + $15) / tck}' "/proc/$SERVE/stat")

# Graceful stop (the service handles SIGINT); SIGKILL if it does not exit in 10 s.
kill -INT "$SERVE"
for _ in $(seq 100); do kill -0 "$SERVE" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$SERVE" 2>/dev/null; then
  echo "replay bench: serve ignored SIGINT; killing" >&2
  kill -9 "$SERVE" 2>/dev/null || true
fi
wait "$SERVE" 2>/dev/null || true
SERVE=""
du -sh "$LOGS" | awk '{print "log size:", $1}'

replay() { # jobs
  local code=0
  timeout "$STEP_TIMEOUT" "$BIN" replay "$LOGS" --stats --jobs "$1" --format json \
    >"$WORK/replay-$1.json" 2>"$WORK/replay-$1.err" || code=$?
  if [ "$code" -ne 0 ]; then
    echo "replay bench: replay --jobs $1 exited $code" >&2
    head -c 2000 "$WORK/replay-$1.json" >&2
    cat "$WORK/replay-$1.err" >&2
    exit 1
  fi
  python3 - "$WORK/replay-$1.json" "$WORK/replay-$1.err" "$RECORDS" "$1" <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read()
minimum, jobs = int(sys.argv[3]), sys.argv[4]
assert report["records"] >= minimum, f"only {report['records']} records"
assert report["changed"] == 0, report["changes"][:3]
assert not report["problems"], report["problems"][:3]
assert not any("chain" in warning for warning in report.get("warnings", [])), report["warnings"]
m = re.search(r"replayed (\d+) records in ([\d.]+)s: (\d+) records/s", err)
assert m, err
print(f"{jobs} {report['records']} {report['decisions']} {m.group(2)} {m.group(3)}")
PY
}
# The log verifies: every chain whole, every checkpoint signed (the last one at the stop).
VERIFY_STARTED=$(date +%s.%N)
timeout "$STEP_TIMEOUT" "$BIN" log verify "$LOGS" >"$WORK/verify.out" 2>&1 \
  || { echo "replay bench: log verify failed" >&2; tail -20 "$WORK/verify.out" >&2; exit 1; }
VERIFY_SECONDS=$(python3 -c "import time; print(f'{time.time() - $VERIFY_STARTED:.1f}')")
grep -q "^verify: ok" "$WORK/verify.out" || { cat "$WORK/verify.out" >&2; exit 1; }

replay 1 >"$WORK/replay-1.line"
replay 2 >"$WORK/replay-2.line"
read -r _ RECORDS_1 DECISIONS_1 SECONDS_1 RATE_1 <"$WORK/replay-1.line"
read -r _ RECORDS_2 _ SECONDS_2 RATE_2 <"$WORK/replay-2.line"
[ "$RECORDS_1" -eq "$RECORDS_2" ] || { echo "replay bench: jobs disagree on records" >&2; exit 1; }

echo
echo "| measure | value |"
echo "|---|---:|"
echo "| requests answered by serve (wrk, 3 bodies) | $ANSWERED in ${LOAD_SECONDS}s |"
echo "| records in the log / decisions | $RECORDS_1 / $DECISIONS_1 |"
echo "| replay, 1 job | $RATE_1 records/s (${SECONDS_1}s) |"
echo "| replay, 2 jobs | $RATE_2 records/s (${SECONDS_2}s) |"
python3 -c "print(f'| scaling 2 jobs / 1 job | {$RATE_2 / $RATE_1:.2f}x |')"
RAW=$(grep -o 'raw decide on the same [0-9]* decisions: [0-9]* decisions/s' "$WORK/replay-1.err" | awk '{print $(NF-1)}')
COLD=$(grep -o 'raw decide with a cold cache on [0-9]* of them: [0-9]* decisions/s' "$WORK/replay-1.err" | awk '{print $(NF-1)}')
echo "| raw decide on the same decisions (1 thread, answer cache warm) | $RAW decisions/s |"
echo "| raw decide, answer cache emptied before each (1 thread, sample) | $COLD decisions/s |"
python3 -c "print(f'| replay (1 job) / raw decide, cache warm | {$RATE_1 / $RAW:.0%} |')"
python3 -c "print(f'| replay (1 job) / raw decide, cache cold | {$RATE_1 / $COLD:.0%} |')"
read -r CHAIN_SECONDS CHAIN_LINES <<<"$CHAIN"
python3 -c "print(f'| hash chain and checkpoints, writer time per line | {$CHAIN_SECONDS / max($CHAIN_LINES, 1) * 1e6:.2f} µs |')"
python3 -c "print(f'| hash chain / serve CPU over the load (the most it takes from logged throughput) | {$CHAIN_SECONDS / $SERVE_CPU:.2%} of {$SERVE_CPU:.1f} s |')"
echo "| askgate log verify of the whole log | ${VERIFY_SECONDS}s |"
echo "replay bench: ok"
