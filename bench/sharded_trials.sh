#!/usr/bin/env bash
# Trials across shards, and the noise-aware compare on them (issue 36): `collect --repeat N`
# over three shards, each trial run by every shard and merged before the trials are combined.
#
#  1. A/A: the same scenario (linger.ms = 0) collected twice; `compare --alpha 0.01
#     --fail-on ack.p50:+10%` must say no change within noise and exit 0;
#  2. a real change: linger.ms = 20 against the first file; the same compare must call
#     ack.p50 worse and exit 1.
# Every figure of each file has its interval over the trials (`runs[].trials.figures`).
#
#   bench/sharded_trials.sh [--repeat 6] [--shards 3] [--rate 6000] [--no-build] [--out DIR]
#
# Uses the broker at KAFKA_BOOTSTRAP, or starts the local one (and stops it afterwards).
# About 4 minutes here. Writes DIR/results.md and every scenario, result file and output to DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=6
shards=3
rate=6000
build=1
out="bench/out/sharded-trials-$(date +%Y%m%d-%H%M%S)"
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat="${2:?--repeat needs a count}"; shift 2 ;;
    --shards) shards="${2:?--shards needs a count}"; shift 2 ;;
    --rate) rate="${2:?--rate needs records per second}"; shift 2 ;;
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sharded_trials.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
if [ "$build" = 1 ]; then cargo build --release --locked --quiet; fi
# shellcheck source=../scripts/broker-env
. scripts/broker-env
kb_ensure_broker || exit 3
trap 'if [ "$KB_STARTED_BROKER" = 1 ]; then scripts/kafka-local down >&2 || true; fi' EXIT
bootstrap="${KAFKA_BOOTSTRAP:-127.0.0.1:9092}"
kb=${KB_BIN:-target/release/kafkabench}
# shellcheck source=lib/sharded.sh
. bench/lib/sharded.sh

# `scenario NAME LINGER`: $out/NAME.kbs, paced at $rate/s over every shard together.
scenario() {
  cat >"$out/$1.kbs" <<KBS
scenario "sharded_trials_$1" {
  cluster { bootstrap = "$bootstrap" }
  topic "sharded-trials-$1" { partitions = 6 }
  producer { linger.ms = $2  acks = all }
  workload {
    payload  = random(size: 512B)
    rate     = $rate/s
    duration = 5s
    warmup   = 1s
  }
}
KBS
}
scenario a 0
scenario a_again 0
scenario linger20 20
status=0
for name in a a_again linger20; do
  sharded "$name" "$out/$name.kbs" --repeat "$repeat" || status=$?
done
if [ "$status" != 0 ]; then
  echo "a sharded collection failed (exit $status): see $out/*.txt" >&2
  exit 1
fi

compare() {
  local code=0
  $kb compare "$out/$1.json" "$out/$2.json" --alpha 0.01 --fail-on ack.p50:+10% \
    >"$out/compare-$1-$2.txt" 2>&1 || code=$?
  echo "$code"
}
aa=$(compare a a_again)
ab=$(compare a linger20)

{
  echo "# bench/sharded_trials.sh, $(date -u +%Y-%m-%dT%H:%MZ): $shards shards, --repeat $repeat, $rate/s"
  echo
  python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
print("| file | trials | throughput (median [interval]) | ack.p50 ms | ack.p99 ms |")
print("|---|---|---|---|---|")
for name in ("a", "a_again", "linger20"):
    run = json.load(open(f"{out}/{name}.json"))["runs"][0]
    figs = {f["metric"]: f for f in run["trials"]["figures"]}
    def show(m, scale=1.0, fmt="{:.0f}"):
        f = figs[m]
        return (fmt.format(f["median"] * scale) + " [" + fmt.format(f["lo"] * scale) + "–"
                + fmt.format(f["hi"] * scale) + "]")
    print(f"| {name} | {len(run['trials']['results'])} | {show('throughput')} | "
          f"{show('ack.p50', 1e3, '{:.2f}')} | {show('ack.p99', 1e3, '{:.2f}')} |")
PY
  echo
  echo "compare a a_again (A/A), --alpha 0.01 --fail-on ack.p50:+10%: exit $aa (expected 0)"
  grep -E "ack\.p50|within noise" "$out/compare-a-a_again.txt" | sed 's/^/    /' || true
  echo "compare a linger20, the same bound: exit $ab (expected 1)"
  grep -E "ack\.p50|exceeded|worse" "$out/compare-a-linger20.txt" | head -4 | sed 's/^/    /' || true
} | tee "$out/results.md"
echo "results in $out"
[ "$aa" = 0 ] && [ "$ab" = 1 ]
