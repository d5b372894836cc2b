#!/usr/bin/env bash
# A capacity search across shards, checked by fixed-rate runs across the same shards (issue 36).
# The limit is known: a broker-side produce quota of 500 KiB/s on one client id, which the
# shards share (the broker throttles them as one client). 1 KiB records, linger 20 ms, three
# partitions, the SLO ack.p99 < 200 ms: tests/capacity.rs's case, at full length here.
#
#  1. the search as one process, then as three `run --shard I/3` processes and a `collect`;
#  2. the sharded answer C tested with fixed sharded runs at 0.9 × C and 1.2 × C, each
#     `--reps` times (default 3), judged as a probe is: the SLO, and acking at least 95 % of
#     the target. The claim: every run at 0.9 × C holds, every run at 1.2 × C fails, and the
#     sharded capacity is within the search's precision (5 %) of the single process's.
#
#   bench/sharded.sh [--reps 3] [--shards 3] [--no-build] [--out DIR]
#
# Uses the broker at KAFKA_BOOTSTRAP, or starts the local one (and stops it afterwards).
# About 15 minutes here. Writes DIR/results.md and every scenario and result file to DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=3
shards=3
build=1
out="bench/out/sharded-$(date +%Y%m%d-%H%M%S)"
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps="${2:?--reps needs a count}"; shift 2 ;;
    --shards) shards="${2:?--shards needs a count}"; shift 2 ;;
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sharded.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
if [ "$build" = 1 ]; then cargo build --release --locked --quiet; fi
# shellcheck source=../scripts/broker-env
. scripts/broker-env
kb_ensure_broker || exit 3
bootstrap="${KAFKA_BOOTSTRAP:-127.0.0.1:9092}"
kb=${KB_BIN:-target/release/kafkabench}
client="kb-sharded-bench-$$"
config() {
  scripts/kafka-local tool org.apache.kafka.tools.ConfigCommand --bootstrap-server "$bootstrap" \
    --alter "$@" --entity-type clients --entity-name "$client" >/dev/null
}
# Removed again however the script ends.
config --add-config producer_byte_rate=512000
trap 'config --delete-config producer_byte_rate || true; if [ "$KB_STARTED_BROKER" = 1 ]; then scripts/kafka-local down >&2 || true; fi' EXIT

cat >"$out/search.kbs" <<KBS
scenario "sharded_search" {
  cluster { bootstrap = "$bootstrap" }
  topic "sharded-search" { partitions = 3 }
  producer { client.id = "$client"  linger.ms = 20 }
  workload { payload = random(size: 1KiB) }
  capacity {
    from      = 100/s
    to        = 20k/s
    precision = 5%
    probe     = 3s
    warmup    = 1s
    slo { ack.p99 < 200ms }
  }
}
KBS

# shellcheck source=lib/sharded.sh
. bench/lib/sharded.sh

capacity() {
  python3 - "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["runs"][0]["capacity"]
cap = c.get("capacity")
print(f"{cap:.0f}" if cap else "none", c["limit"], len(c["probes"]))
PY
}

$kb run "$out/search.kbs" --quiet --run-id "sb$$one" --json "$out/search-one.json" >"$out/search-one.txt" 2>&1 || true
sharded search-sharded "$out/search.kbs" || true
read -r one one_limit one_probes < <(capacity "$out/search-one.json")
read -r c c_limit c_probes < <(capacity "$out/search-sharded.json")
{
  echo "# bench/sharded.sh, $(date -u +%Y-%m-%dT%H:%MZ), $shards shards"
  echo
  echo "| search | capacity | limit | probes |"
  echo "|---|---|---|---|"
  echo "| one process | $one/s | $one_limit | $one_probes |"
  echo "| $shards shards + collect | $c/s | $c_limit | $c_probes |"
} | tee "$out/results.md"
if [ "$c" = none ] || [ "$one" = none ]; then
  echo "a search found no capacity: see $out/search-*.txt" | tee -a "$out/results.md"
  exit 1
fi
python3 -c "
one, c = $one, $c
d = abs(c - one) / one
print(f'\nsharded against one process: {d * 100:.1f} % apart ({\"within\" if d <= 0.05 else \"OUTSIDE\"} the 5 % precision)')
" | tee -a "$out/results.md"

low=$(python3 -c "print(round(0.9 * $c))")
high=$(python3 -c "print(round(1.2 * $c))")
trials=$(seq -s, 1 "$reps")
cat >"$out/fixed.kbs" <<KBS
scenario "sharded_fixed" {
  cluster { bootstrap = "$bootstrap" }
  topic "sharded-fixed-{i}-{r}" { partitions = 3 }
  matrix { i = [$trials]  r = [$low/s, $high/s] }
  producer { client.id = "$client"  linger.ms = 20 }
  workload {
    payload  = random(size: 1KiB)
    rate     = {r}
    duration = 3s
    warmup   = 1s
  }
}
KBS
sharded fixed "$out/fixed.kbs" || true
python3 - "$out/fixed.json" "$low" "$high" <<'PY' | tee -a "$out/results.md"
import json, sys
doc = json.load(open(sys.argv[1])); low, high = map(float, sys.argv[2:4])
rows = {low: [], high: []}
for r in doc["runs"]:
    t = r["target_rate"]; key = low if abs(t - low) < abs(t - high) else high
    p99 = r["ack"]["p99_ms"]
    ok = p99 < 200 and r["throughput_msgs"] >= 0.95 * t
    rows[key].append((p99, r["throughput_msgs"], ok))
print()
print("| fixed sharded runs | ack p99 (ms) | acked/s | SLO held |")
print("|---|---|---|---|")
for k, name in ((low, "0.9 × C"), (high, "1.2 × C")):
    v = rows[k]; held = sum(ok for *_, ok in v)
    print(f"| {name} = {k:.0f}/s | {', '.join(f'{p:.1f}' for p, _, _ in v)} | "
          f"{', '.join(f'{a:.0f}' for _, a, _ in v)} | {held} of {len(v)} |")
PY
echo "results in $out"
