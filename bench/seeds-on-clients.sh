#!/usr/bin/env bash
# The seed experiments on their own clients (issue 51 item 6; docs/results.md, "The seeds on
# their own clients"): Promo Friday on franz-go, the batch.size sweep, the tuning ladder and
# the ack vs e2e study on the Java client, each beside librdkafka on the same broker.
#
#   bench/seeds-on-clients.sh [--scale S] [--no-build] [--out DIR] [NAME ...]
#
# NAME is a file of bench/seeds-on-clients/ without .kbs (default: all of them). The tuning
# ladder's librdkafka side is scenarios/tuning_ladder.kbs, run here too. Each scenario's table,
# its result file and the machine's load before and after go to DIR. On a shared machine run it
# under `flock /tmp/kb-heavy.lock`.
set -euo pipefail
cd "$(dirname "$0")/.."
scale=1
build=1
out="bench/out/seeds-on-clients-$(date +%Y%m%d-%H%M%S)"
names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) scale="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "seeds-on-clients.sh: unknown option $1" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
[ ${#names[@]} -gt 0 ] || names=(promo_friday batch_size_sweep tuning_ladder latency_timers)
mkdir -p "$out"
if [ "$build" = 1 ] && [ -z "${KB_BIN:-}" ]; then cargo build --release --locked --quiet; fi
. scripts/broker-env
kb_ensure_broker
trap 'if [ "$KB_STARTED_BROKER" = 1 ]; then scripts/kafka-local down >&2 || true; fi' EXIT
kb=${KB_BIN:-target/release/kafkabench}
for name in "${names[@]}"; do
  files=("bench/seeds-on-clients/$name.kbs")
  [ -f "${files[0]}" ] || files=("bench/seeds-on-clients/${name}_java.kbs")
  [ "$name" = tuning_ladder ] && files=(scenarios/tuning_ladder.kbs bench/seeds-on-clients/tuning_ladder_java.kbs)
  for f in "${files[@]}"; do
    base=$(basename "$f" .kbs)
    echo "load before $base: $(uptime)" >>"$out/load.txt"
    rc=0
    $kb run -q "$f" --scale "$scale" --json "$out/$base.json" >"$out/$base.txt" 2>&1 || rc=$?
    echo "load after $base: $(uptime) (exit $rc)" >>"$out/load.txt"
    cat "$out/$base.txt"
  done
done
echo "results in $out"
