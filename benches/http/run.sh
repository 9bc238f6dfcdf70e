#!/usr/bin/env bash
# HTTP load benchmark for `askgate serve` on loopback (issue 3 targets), using wrk.
#
#   bash benches/http/run.sh            # 10 s per case
#   DURATION=3s bash benches/http/run.sh
#
# Starts `askgate serve` (release, embedded defaults: in-process sandbox), records consent,
# registers a plan through a real finalize_plan approval, then measures with wrk:
#   floor      POST /_bench/floor       auth + body parse + constant answer (the HTTP floor,
#                                       a separate bench-only binary: benches/http/floor.rs),
#                                       fed the read's body
#   floor-plan the same floor fed the plan-covered write's body (20 files): the floor for
#              plan-write, since receiving and parsing a bigger body costs the same either way
#   read       POST /v1/authorize       get_project (read-only → allow)
#   plan-write POST /v1/authorize       write_files covered by the approved plan (allow)
#   proxied    POST /v1/design/call     get_project, decided then executed upstream
#   direct     POST <sandbox>/v1/design/mcp  the same tools/call straight to the sandbox
#   *-c1       the same at one connection (latency without queueing)
#   *-upstream-2ms  proxied and direct at one connection with the sandbox answering in 2 ms
# and then the ratios the issue sets targets for, computed from the same run.
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
PORT=${PORT:-18181}
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }
cargo build --release --quiet
cargo build --release --quiet --example http_floor
BIN=target/release/askgate
FLOOR_PORT=${FLOOR_PORT:-$((PORT + 1))}
WORK=$(mktemp -d)
LOG_DIR=${LOG_DIR:-}
EXTRA=()
if [ -n "$LOG_DIR" ]; then EXTRA+=(--log-dir "$LOG_DIR"); fi
$BIN serve --listen 127.0.0.1:$PORT "${EXTRA[@]}" > "$WORK/serve.log" 2>&1 &
SERVE=$!
target/release/examples/http_floor 127.0.0.1:$FLOOR_PORT > "$WORK/floor.log" 2>&1 &
FLOOR=$!
trap 'kill $SERVE $FLOOR 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do curl -sf localhost:$PORT/healthz >/dev/null && break; sleep 0.2; done
SANDBOX=$(grep -o 'sandbox at http://[0-9.:]*' "$WORK/serve.log" | sed 's/sandbox at //')
AGENT=askgate-demo-agent-token
APPROVER=askgate-demo-approver-token
SESSION='"session":{"id":"bench","agent":"main","mode":"default","interactive":true}'
curl -sf -X POST localhost:$PORT/v1/design/consent -H "Authorization: Bearer $APPROVER" >/dev/null

# A plan for 20 paths through a real finalize_plan approval.
PATHS=$(python3 -c 'import json; print(json.dumps(["site/page-%03d.html" % i for i in range(20)]))')
ASK=$(curl -s -X POST localhost:$PORT/v1/design/call -H "Authorization: Bearer $AGENT" \
  -d "{$SESSION,\"input\":{\"operation\":\"finalize_plan\",\"arguments\":{\"project_id\":\"p1\",\"writes\":$PATHS,\"scope\":\"paths\"}}}")
ID=$(echo "$ASK" | python3 -c 'import json,sys; print(json.load(sys.stdin)["approval"]["id"])')
DONE=$(curl -s -X POST localhost:$PORT/v1/approvals/$ID/approve -H "Authorization: Bearer $APPROVER")
TOKEN_PLAN=$(echo "$DONE" | python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; print(json.loads(r["content"][0]["text"])["plan_token"])')
FILES=$(python3 -c 'import json; print(json.dumps([{"path": "site/page-%03d.html" % i, "data": "x"} for i in range(20)]))')

echo "{$SESSION,\"tool\":\"ClaudeDesign\",\"input\":{\"operation\":\"get_project\",\"arguments\":{\"project_id\":\"p1\"}}}" > "$WORK/read.json"
echo "{$SESSION,\"tool\":\"ClaudeDesign\",\"input\":{\"operation\":\"write_files\",\"arguments\":{\"project_id\":\"p1\",\"plan_token\":\"$TOKEN_PLAN\",\"files\":$FILES}}}" > "$WORK/plan.json"
echo "{$SESSION,\"input\":{\"operation\":\"get_project\",\"arguments\":{\"project_id\":\"p1\"}}}" > "$WORK/call.json"
echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_project","arguments":{"project_id":"p1"}}}' > "$WORK/mcp.json"

# Check each body decides as expected before loading it.
for body in read plan; do
  curl -s -X POST localhost:$PORT/v1/authorize -H "Authorization: Bearer $AGENT" -d @"$WORK/$body.json" \
    | python3 -c "import json,sys; d=json.load(sys.stdin); assert d['decision']=='allow', d; print('$body:', d['decision'], d['policies'])"
done
MCP_SESSION=$(curl -s -D - -o /dev/null -X POST "$SANDBOX/v1/design/mcp" -H "Authorization: Bearer sandbox-access-token" \
  -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
  | grep -i '^mcp-session-id' | awk '{print $2}' | tr -d '\r')

run() { # name url body token [header-name header-value]
  BODY_FILE="$WORK/$3" TOKEN="$4" HEADER_NAME="${5:-}" HEADER_VALUE="${6:-}" \
    wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s benches/http/post.lua "$2" > "$WORK/$1.out"
  python3 - "$1" "$WORK/$1.out" "$WORK/results.tsv" <<'PY'
import re, sys
name, path, results = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
def ms(v, unit):
    return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p = {k: ms(v, u) for k, v, u in re.findall(r"\s+(50|99)%\s+([\d.]+)(us|ms|s)", text)}
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print(f"| {name} | {rps:,.0f} | {p['50']:.3f} | {p['99']:.3f} | {non2xx.group(1) if non2xx else 0} |")
with open(results, "a") as out:
    out.write(f"{name}\t{rps}\t{p['50']}\n")
PY
}
echo
echo "| case | requests/s | p50 ms | p99 ms | non-2xx |"
echo "|---|---:|---:|---:|---:|"
run floor "http://127.0.0.1:$FLOOR_PORT/_bench/floor" read.json $AGENT
run floor-plan "http://127.0.0.1:$FLOOR_PORT/_bench/floor" plan.json $AGENT
run read "http://127.0.0.1:$PORT/v1/authorize" read.json $AGENT
run plan-write "http://127.0.0.1:$PORT/v1/authorize" plan.json $AGENT
run proxied "http://127.0.0.1:$PORT/v1/design/call" call.json $AGENT
run direct "$SANDBOX/v1/design/mcp" mcp.json sandbox-access-token Mcp-Session-Id "$MCP_SESSION"
# Latency of one call at a time (no queueing): the gateway's overhead on a proxied call. A
# proxied call crosses two loopback HTTP hops (agent -> askgate -> upstream) where a direct
# call crosses one; floor-c1 is the cost of the extra hop alone.
CONNECTIONS=1 run floor-c1 "http://127.0.0.1:$FLOOR_PORT/_bench/floor" read.json $AGENT
CONNECTIONS=1 run read-c1 "http://127.0.0.1:$PORT/v1/authorize" read.json $AGENT
CONNECTIONS=1 run proxied-c1 "http://127.0.0.1:$PORT/v1/design/call" call.json $AGENT
CONNECTIONS=1 run direct-c1 "$SANDBOX/v1/design/mcp" mcp.json sandbox-access-token Mcp-Session-Id "$MCP_SESSION"
# The same pair against an upstream that takes 2 ms per call (the sandbox's delay fault on
# every get_project), closer to a real remote service: what the gateway adds, relatively.
curl -sf -X POST "$SANDBOX/_sandbox/faults" -H 'content-type: application/json' \
  -d '{"fault":"delay","ms":2,"count":4000000000,"tool":"get_project"}' >/dev/null
CONNECTIONS=1 run proxied-c1-upstream-2ms "http://127.0.0.1:$PORT/v1/design/call" call.json $AGENT
CONNECTIONS=1 run direct-c1-upstream-2ms "$SANDBOX/v1/design/mcp" mcp.json sandbox-access-token Mcp-Session-Id "$MCP_SESSION"

python3 - "$WORK/results.tsv" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    name, rps, p50 = line.split("\t")
    rows[name] = (float(rps), float(p50))
rps = lambda name: rows[name][0]
p50 = lambda name: rows[name][1]
print()
print("| target | figure |")
print("|---|---:|")
print(f"| read ≥ 60% of the floor | {rps('read') / rps('floor'):.0%} |")
print(f"| plan-covered write ≥ 60% of the floor fed the same body | {rps('plan-write') / rps('floor-plan'):.0%} |")
print(f"| (plan-covered write against the read's floor) | {rps('plan-write') / rps('floor'):.0%} |")
overhead = (p50('proxied-c1') - p50('direct-c1')) * 1000
print(f"| proxied ≤ 1.2× direct, upstream answering in 2 ms | {p50('proxied-c1-upstream-2ms') / p50('direct-c1-upstream-2ms'):.2f}× |")
print(f"| (proxied against the in-memory sandbox) | {p50('proxied-c1') / p50('direct-c1'):.2f}× |")
print(f"| gateway overhead per proxied call (p50, one connection) | {overhead:.0f} µs |")
print(f"| of which the extra loopback hop (floor, one connection) | {p50('floor-c1') * 1000:.0f} µs |")
print(f"| 1.2× holds for any upstream slower than | {overhead / 0.2 / 1000:.2f} ms |")
PY
