#!/usr/bin/env bash
# kafkabench's end-to-end latency against an independent reader (docs/results.md, "The reader's
# own fetch backoff"). For each rate, Kafka's own Java consumer (bench/e2e/StampReader.java,
# not librdkafka) reads the same topic as kafkabench's reader and decodes the stamp's intended
# send time; both clocks are the machine's CLOCK_MONOTONIC, so its end-to-end latency is
# comparable record for record with kafkabench's. One broker, 3 partitions, 1 KiB JSON,
# linger 20 ms, 10 s per rate (the capacity notes' case). Each rate runs twice: with
# kafkabench's consumer defaults, and with `fetch.queue.backoff.ms = 5` (issue 34's reference).
#
#   bench/e2e.sh [--rates "50000 70000 100000"] [--secs 10] [--out DIR]
#   (KAFKABENCH=path runs that binary instead of building target/release/kafkabench)
set -euo pipefail
cd "$(dirname "$0")/.."
rates="50000 70000 100000"
secs=10
out="bench/out/e2e-$(date +%Y%m%d-%H%M%S)"
while [ $# -gt 0 ]; do
  case "$1" in
    --rates) rates="$2"; shift 2 ;;
    --secs) secs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "e2e.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out" bench/build/e2e
kb="${KAFKABENCH:-}"
if [ -z "$kb" ]; then cargo build --release --locked --quiet; kb=target/release/kafkabench; fi
. scripts/broker-env
kb_ensure_broker
trap 'if [ "$KB_STARTED_BROKER" = 1 ]; then scripts/kafka-local down >&2 || true; fi' EXIT
bootstrap="${KAFKA_BOOTSTRAP:-127.0.0.1:9092}"
libs=$(ls -d .cache/kafka-*/lib | tail -1)
cp="$libs/*"
javac -d bench/build/e2e -cp "$cp" bench/e2e/StampReader.java
printf '| rate | consumer | kafkabench e2e p50 | p99 | p99.9 | Java reader e2e p50 | p99 | p99.9 | records (kb / java) | reader wait max |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n' >"$out/results.md"
for rate in $rates; do
for variant in defaults backoff5; do
  id="e2e$rate$variant"
  extra=""
  [ "$variant" = backoff5 ] && extra="fetch.queue.backoff.ms = 5"
  cat >"$out/e2e-$rate-$variant.kbs" <<KBS
scenario "e2e_bench" {
  cluster { bootstrap = "$bootstrap" }
  topic "e2e-bench" { partitions = 3 }
  producer { linger.ms = 20ms  batch.size = 256KiB }
  consumer { $extra }
  workload {
    payload  = json(size: 1KiB)
    rate     = $rate/s
    duration = ${secs}s
    warmup   = 3s
  }
}
KBS
  java -Xmx512m -cp "bench/build/e2e:$cp" StampReader "$bootstrap" "e2e-bench-$id" "$out/java-$rate-$variant.bin" 5 \
    2>"$out/java-$rate-$variant.log" &
  reader=$!
  "$kb" run "$out/e2e-$rate-$variant.kbs" --run-id "$id" --quiet --json "$out/kb-$rate-$variant.json" \
    >"$out/kb-$rate-$variant.txt"
  wait "$reader"
  python3 - "$out/kb-$rate-$variant.json" "$out/java-$rate-$variant.bin" "$rate" "$variant" >>"$out/results.md" <<'PY'
import json, struct, sys
doc = json.load(open(sys.argv[1])); r = doc["runs"][0]
origin = r["stamp_origin_monotonic_ns"]
raw = open(sys.argv[2], "rb").read()
vals = sorted(v - origin for v in struct.unpack(">%dq" % (len(raw) // 8), raw))
def pct(p): return vals[min(len(vals) - 1, int(p / 100 * len(vals)))] / 1e6
e = r["e2e"]
g = r.get("generator") or {}
consumer = "defaults" if sys.argv[4] == "defaults" else "`fetch.queue.backoff.ms = 5`"
print(f"| {int(sys.argv[3]):,}/s | {consumer} | {e['p50_ms']:.1f} ms | {e['p99_ms']:.1f} ms | {e['p999_ms']:.1f} ms "
      f"| {pct(50):.1f} ms | {pct(99):.1f} ms | {pct(99.9):.1f} ms "
      f"| {r['delivery']['consumed']:,} / {len(vals):,} | {g.get('reader_wait_secs', 0) * 1e3:.1f} ms |")
PY
done
done
cat "$out/results.md"
