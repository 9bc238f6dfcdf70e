#!/usr/bin/env bash
# What the usage counts cost a decision on the worst traffic for them (issue 36 §2): two
# `askgate serve` (release, embedded defaults, export off) side by side — BEFORE (a binary to
# compare with, e.g. one built from an earlier commit) and this checkout's — under distinct
# reads (a new project and a new session every request: benches/http/distinct.lua's `read`),
# interleaved rounds; prints each round's rates and both processes' VmRSS at the start and end.
#
#   BEFORE=/path/to/older/askgate bash benches/http/sessions.sh
#   ROUNDS=3 DURATION=5s BEFORE=… bash benches/http/sessions.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-8s}
PORT=${PORT:-18401}
: "${BEFORE:?set BEFORE to the askgate binary to compare with}"
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }
cargo build --release --quiet --bin askgate
declare -A BIN=([before]="$BEFORE" [after]="${CARGO_TARGET_DIR:-target}/release/askgate")
declare -A URL PID
WORK=$(mktemp -d)
cleanup() { kill "${PID[before]:-}" "${PID[after]:-}" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
port=$PORT
for name in before after; do
  OTEL_SDK_DISABLED=true "${BIN[$name]}" serve --listen "127.0.0.1:$port" > "$WORK/$name.log" 2>&1 &
  PID[$name]=$!
  URL[$name]="http://127.0.0.1:$port"
  port=$((port + 1))
done
for name in before after; do
  for _ in $(seq 100); do curl -s -o /dev/null "${URL[$name]}/healthz" && break; sleep 0.2; done
  curl -s -o /dev/null -X POST "${URL[$name]}/v1/design/consent" \
    -H "Authorization: Bearer askgate-demo-approver-token"
done
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
echo "VmRSS at start (KiB): before $(rss "${PID[before]}"), after $(rss "${PID[after]}")"
SEQ=0
for round in $(seq "$ROUNDS"); do
  line="round $round"
  for name in before after; do
    SEQ=$((SEQ + 1))
    rate=$(env CASE=read RUN="sessions$SEQ" TOKEN=askgate-demo-agent-token \
      wrk -t2 -c16 -d"$DURATION" -s benches/http/distinct.lua "${URL[$name]}/v1/authorize" \
      | awk '/Requests\/sec/ {print $2}')
    line="$line   $name $rate"
  done
  echo "$line"
done
echo "VmRSS at end (KiB): before $(rss "${PID[before]}"), after $(rss "${PID[after]}")"
