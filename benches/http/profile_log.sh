#!/usr/bin/env bash
# Where the logged path spends its time (issue 24): `askgate serve --log-dir` (fsync) under
# the benchmark's distinct /v1/authorize reads (wrk, CONNECTIONS=16, DURATION=10s), with
# `perf record -g` on the serve for the run. Prints the writer's phases from /metrics
# (askgate_log_*), the top symbols by self time, and the threads' share of the samples.
#
#     bash benches/http/profile_log.sh          # after cargo build --release
#
# Informational only; needs perf and wrk. Settings: PORT (18191), DURATION, CONNECTIONS.
set -euo pipefail
cd "$(dirname "$0")/../.."
PORT=${PORT:-18191}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
WORK=$(mktemp -d)
SERVE=
cleanup() {
  if [ -n "$SERVE" ]; then kill "$SERVE" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
"${CARGO_TARGET_DIR:-target}"/release/askgate serve --listen "127.0.0.1:$PORT" --log-dir "$WORK/logs" > "$WORK/serve.log" 2>&1 &
SERVE=$!
for _ in $(seq 100); do curl -sf "localhost:$PORT/healthz" > /dev/null && break; sleep 0.1; done
perf record -F 999 -g -p "$SERVE" -o "$WORK/perf.data" -- sleep "${DURATION%s}" > /dev/null 2>&1 &
PERF=$!
env CASE=read RUN=1 TOKEN=askgate-demo-agent-token \
  wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -s benches/http/distinct.lua "http://127.0.0.1:$PORT/v1/authorize" \
  | grep -E "Requests/sec|^ +(50|99)%"
wait "$PERF" || true
echo
curl -s "localhost:$PORT/metrics" | grep '^askgate_log_'
echo
echo "samples by thread:"
perf report -i "$WORK/perf.data" --no-children --sort comm --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -8
echo
echo "top symbols (self):"
perf report -i "$WORK/perf.data" --no-children --sort comm,symbol --stdio -g none 2>/dev/null | grep -E '^ +[0-9]' | head -40
