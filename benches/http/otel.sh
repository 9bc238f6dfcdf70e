#!/usr/bin/env bash
# What OpenTelemetry costs a decision (issue 36 §3): three `askgate serve` (release, embedded
# defaults) side by side on loopback — export off; export on at the default sampling (0.1,
# parent-based); export on at ratio 1.0 (every call's spans exported) — all exporting to one
# OTLP/HTTP sink (benches/http/otlp_sink.py: answers 200, counts what it received). wrk runs
# the HTTP bench's headline `read` case (POST /v1/authorize get_project, a new project id and
# session every request: benches/http/distinct.lua) against each, interleaved over ROUNDS
# rounds so the machine's load hits the three alike, and the ratios to "off" are printed per
# round and as their mean. Usage counts (issue 36 §2) are facts of every decision and are on
# in all three.
#
#   bash benches/http/otel.sh                         # 3 rounds of 8 s per case
#   DURATION=3s ROUNDS=1 bash benches/http/otel.sh    # a quick look
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-8s}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-2}
PORT=${PORT:-18281}
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }
cargo build --release --quiet --bin askgate
BIN=${CARGO_TARGET_DIR:-target}/release/askgate
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
AGENT=askgate-demo-agent-token
APPROVER=askgate-demo-approver-token
wait_for() {
  local _
  for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.2; done
  echo "$2 did not come up at $1"; exit 1
}

SINK=$((PORT + 10))
python3 benches/http/otlp_sink.py "$SINK" > "$WORK/sink.log" 2>&1 &
PIDS+=($!)
wait_for "http://127.0.0.1:$SINK/count" "the OTLP sink"

declare -A URL
start() { # name port env...
  local name=$1 port=$2; shift 2
  env "$@" "$BIN" serve --listen "127.0.0.1:$port" > "$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  wait_for "http://127.0.0.1:$port/healthz" "askgate serve ($name)"
  curl -s -o /dev/null -X POST "http://127.0.0.1:$port/v1/design/consent" -H "Authorization: Bearer $APPROVER"
  URL[$name]="http://127.0.0.1:$port/v1/authorize"
}
ENDPOINT="OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$SINK"
start off "$PORT" OTEL_SDK_DISABLED=true
start default $((PORT + 1)) "$ENDPOINT"
start ratio1 $((PORT + 2)) "$ENDPOINT" OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=1.0

RUN_SEQ=0
rate() { # name -> requests/s
  RUN_SEQ=$((RUN_SEQ + 1))
  env CASE=read RUN="otel$RUN_SEQ" TOKEN="$AGENT" \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s benches/http/distinct.lua "${URL[$1]}" \
    | awk '/Requests\/sec/ {print $2}'
}
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION, read (distinct), $ROUNDS round(s)"
printf '%-6s %12s %12s %12s %10s %10s\n' round off default ratio1 default/off ratio1/off
SUMS="0 0"
for round in $(seq "$ROUNDS"); do
  off=$(rate off); default=$(rate default); ratio1=$(rate ratio1)
  d=$(python3 -c "print(f'{$default/$off:.3f}')"); r=$(python3 -c "print(f'{$ratio1/$off:.3f}')")
  printf '%-6s %12s %12s %12s %10s %10s\n' "$round" "$off" "$default" "$ratio1" "$d" "$r"
  SUMS=$(python3 -c "a,b='$SUMS'.split(); print(float(a)+$d, float(b)+$r)")
done
python3 -c "a,b='$SUMS'.split(); n=$ROUNDS; print(f'mean   default/off {float(a)/n:.3f}   ratio1/off {float(b)/n:.3f}')"
echo "spans received by the sink: $(curl -s "http://127.0.0.1:$SINK/count")"
