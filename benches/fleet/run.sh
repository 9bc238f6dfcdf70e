#!/usr/bin/env bash
# The fleet benchmark (issue 20 §4): a replica on the PostgreSQL store against an in-memory
# serve, side by side in one run, with wrk on loopback and a new body every request
# (benches/http/distinct.lua).
#
#   bash benches/fleet/run.sh                          # the full run (~6 minutes)
#   DURATION=3s ROUNDS=1 MEMORY_CALLS=100000 bash benches/fleet/run.sh   # a quick look
#
# Settings (environment): STORE_SERVER (the PostgreSQL server to create the run's database on;
# default postgres://postgres@127.0.0.1:5432/test; the database is dropped at the end),
# DURATION (6s per case), ROUNDS (2), CONNECTIONS (16), THREADS (2), PORT (18281; the next two
# ports too), ROUND_TRIPS (200), MEMORY_CALLS (1000000; 0 skips the memory phase).
#
# Processes (release build): M = `serve` in memory; A and B = `serve --store` on one fresh
# database (two replicas of one fleet). Consent and p1's durable grant are recorded through the
# real API on M and on A (B shares A's).
# Cases, interleaved per round (M then A):
#   read         POST /v1/authorize get_project, new project_id and session per request
#   grant-write  POST /v1/authorize tokenless 1-file write_files under p1's grant: the call's
#                session has no plan, so the plan store is looked up (on A: the fleet's plans)
# Then the approval round trip across replicas: ROUND_TRIPS times, a finalize_plan asked on A
# and held there (`GET /v1/approvals/{id}?wait=30s` on A), approved through B; the time from
# sending B's approve until A's held wait answers. Then the memory phase: MEMORY_CALLS distinct
# calls (reads and grant-writes alternately) on A, VmRSS of A and B before and after.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
STORE_SERVER=${STORE_SERVER:-postgres://postgres@127.0.0.1:5432/test}
DURATION=${DURATION:-6s}
ROUNDS=${ROUNDS:-2}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-2}
PORT=${PORT:-18281}
ROUND_TRIPS=${ROUND_TRIPS:-200}
MEMORY_CALLS=${MEMORY_CALLS:-1000000}
AGENT=askgate-demo-agent-token
APPROVER=askgate-demo-approver-token
ALLOW='"decision":"allow"'

command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }
command -v psql >/dev/null || { echo "psql is required (apt-get install postgresql-client)"; exit 1; }
cargo build --release --quiet --bin askgate
BIN=${CARGO_TARGET_DIR:-target}/release/askgate
WORK=$(mktemp -d)
DB="askgate_bench_$$"
STORE="${STORE_SERVER%/*}/$DB"
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  psql -q "$STORE_SERVER" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
psql -q "$STORE_SERVER" -c "CREATE DATABASE $DB" >/dev/null

declare -A PORT_OF=([M]=$PORT [A]=$((PORT + 1)) [B]=$((PORT + 2)))
declare -A PID_OF
start() { # name [serve arguments...]
  local name=$1 _
  shift
  $BIN serve --listen "127.0.0.1:${PORT_OF[$name]}" "$@" > "$WORK/$name.log" 2>&1 &
  PID_OF[$name]=$!
  PIDS+=("$!")
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:${PORT_OF[$name]}/healthz" && return 0
    sleep 0.2
  done
  echo "serve $name did not come up:"; cat "$WORK/$name.log"; exit 1
}
post() { # name token path [body]
  curl -s -X POST "http://127.0.0.1:${PORT_OF[$1]}$3" -H "Authorization: Bearer $2" ${4:+-d "$4"}
}
# Consent, and p1's durable grant: a tokenless write asks for the grant and its approval runs it.
prepare_account() { # name
  post "$1" $APPROVER /v1/design/consent > /dev/null
  local asked id done
  asked=$(post "$1" $AGENT /v1/design/call '{"session":{"id":"bench-grant","agent":"main","mode":"default","interactive":true},"input":{"operation":"write_files","arguments":{"project_id":"p1","files":[{"path":"site/grant.html","data":"x"}]}}}')
  id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["approval"]["id"])' <<< "$asked") \
    || { echo "a tokenless write on $1 did not ask: $asked"; exit 1; }
  done=$(post "$1" $APPROVER "/v1/approvals/$id/approve")
  if ! grep -q '"status":"completed"' <<< "$done"; then
    done=$(curl -s "http://127.0.0.1:${PORT_OF[$1]}/v1/approvals/$id?wait=20s" -H "Authorization: Bearer $APPROVER")
  fi
  grep -q '"status":"completed"' <<< "$done" || { echo "p1's grant on $1 did not complete: $done"; exit 1; }
}
rss_mib() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/${PID_OF[$1]}/status"; }
decisions() { # name
  curl -s "http://127.0.0.1:${PORT_OF[$1]}/metrics" | awk '/^askgate_decisions_total/ {s += $NF} END {printf "%d\n", s}'
}

start M
start A --store "$STORE"
start B --store "$STORE"
prepare_account M
prepare_account A
# Each replica has its own in-process sandbox upstream: B's must know the consent too (B
# re-decides the approvals it gives, and consent is read from the upstream when unknown).
post B $APPROVER /v1/design/consent > /dev/null

RUN_SEQ=0
wrk_case() { # name case duration [env...]
  local name=$1 kind=$2 duration=$3
  shift 3
  RUN_SEQ=$((RUN_SEQ + 1))
  env CASE="$kind" RUN="$RUN_SEQ" TOKEN="$AGENT" "$@" \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$duration" --latency -s benches/http/distinct.lua \
    "http://127.0.0.1:${PORT_OF[$name]}/v1/authorize"
}
# Precheck: every answer of each case allows (a run that measured refusals would flatter A).
for name in M A; do
  for kind in read grant; do
    out=$(wrk_case "$name" "$kind" 1s CHECK="$ALLOW")
    grep -q 'without the expected answer: 0$' <<< "$out" && ! grep -q 'answers checked: 0,' <<< "$out" \
      || { echo "precheck of $kind on $name failed:"; grep -A1 'answers checked' <<< "$out"; exit 1; }
  done
done

echo "askgate fleet benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
  for kind in read grant; do
    for name in M A; do
      wrk_case "$name" "$kind" "$DURATION" > "$WORK/wrk.$round.$kind.$name.out"
    done
  done
done

python3 benches/fleet/round_trip.py "${PORT_OF[A]}" "${PORT_OF[B]}" "$ROUND_TRIPS" > "$WORK/round_trip.out"

if [ "$MEMORY_CALLS" -gt 0 ]; then
  before_a=$(rss_mib A) before_b=$(rss_mib B) d0=$(decisions A)
  per_thread=$(((MEMORY_CALLS + THREADS - 1) / THREADS))
  # Each wrk thread stops after its share; wrk then sleeps out -d, so it is interrupted once
  # A's decision count stops moving.
  env CASE=mixed RUN=999 TOKEN="$AGENT" STOP_AFTER="$per_thread" \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d3600s -s benches/http/distinct.lua \
    "http://127.0.0.1:${PORT_OF[A]}/v1/authorize" > "$WORK/memory.out" &
  wrk_pid=$!
  last=-1
  for _ in $(seq 3600); do
    sleep 1
    now=$(decisions A)
    [ "$now" = "$last" ] && break
    last=$now
  done
  kill -INT "$wrk_pid" 2>/dev/null || true
  wait "$wrk_pid" || true
  printf '%s\t%s\t%s\t%s\t%s\n' "$(($(decisions A) - d0))" "$before_a" "$(rss_mib A)" "$before_b" "$(rss_mib B)" > "$WORK/memory.tsv"
fi

python3 benches/fleet/report.py "$WORK" "$ROUNDS"
