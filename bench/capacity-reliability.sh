#!/usr/bin/env bash
# A capacity with its reliability, checked by plain fixed-rate runs (docs/results.md, "capacity
# with its reliability"). On an SLO that is noisy on one busy machine — 6 partitions, 256 B
# records, lz4, linger 5 ms, ack.p99 < 25 ms — the same search runs twice; then the first
# search's answer C (the second's when the first found none) is tested with N fixed runs at
# each of 0.9 × C and 1.2 × C, interleaved, judged as a probe is (the SLO, and acking at least
# 95 % of the target). The claim: the SLO holds in ≥ 7 of 10 at 0.9 × C and fails in ≥ 3 of 10
# at 1.2 × C; and the two searches agree within their bands, or both say no stable capacity.
# `--case quota` runs the CI's quota case instead (tests/capacity.rs): one partition, 1 KiB
# records, linger 20 ms, a broker-side produce quota of 500 KiB/s on the client, and the SLO
# ack.p99 < 200 ms, searched from 100/s to 20k/s.
#
#   bench/capacity-reliability.sh [--case noisy|quota] [--from 1000] [--to 320k] [--probes 24] [--secs 3] [--runs 10] [--no-build] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
case=noisy
to_arg=
from=
probes=24
secs=3
runs=10
build=1
out="bench/out/capacity-reliability-$(date +%Y%m%d-%H%M%S)"
while [ $# -gt 0 ]; do
  case "$1" in
    --case) case="$2"; shift 2 ;;
    --from) from="$2"; shift 2 ;;
    --to) to_arg="$2"; shift 2 ;;
    --probes) probes="$2"; shift 2 ;;
    --secs) secs="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "capacity-reliability.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
if [ "$build" = 1 ]; then cargo build --release --locked --quiet; fi
. scripts/broker-env
kb_ensure_broker
trap 'if [ "$KB_STARTED_BROKER" = 1 ]; then scripts/kafka-local down >&2 || true; fi' EXIT
bootstrap="${KAFKA_BOOTSTRAP:-127.0.0.1:9092}"
kb=${KB_BIN:-target/release/kafkabench}

# What differs between the cases: the topic, the producer, the record, the range and the SLO.
case "$case" in
  noisy)
    partitions=6; size=256B; props='compression.type = lz4  linger.ms = 5ms'
    : "${from:=1000}"; to=320k; slo_ms=25 ;;
  quota)
    partitions=1; size=1KiB; client="kb-caprel-quota-$$"
    props="client.id = \"$client\"  linger.ms = 20"
    : "${from:=100}"; to=20k; slo_ms=200
    # The broker throttles this client at 500 KiB/s, removed again however the script ends.
    config() { scripts/kafka-local tool org.apache.kafka.tools.ConfigCommand --bootstrap-server "$bootstrap" \
      --alter "$@" --entity-type clients --entity-name "$client" >/dev/null; }
    config --add-config producer_byte_rate=512000
    trap 'config --delete-config producer_byte_rate || true; if [ "$KB_STARTED_BROKER" = 1 ]; then scripts/kafka-local down >&2 || true; fi' EXIT ;;
  *) echo "capacity-reliability.sh: --case is noisy or quota, not $case" >&2; exit 2 ;;
esac
to=${to_arg:-$to}

cat >"$out/search.kbs" <<KBS
scenario "capacity_reliability" {
  cluster { bootstrap = "$bootstrap" }
  topic "cap-rel-$case" { partitions = $partitions }
  producer { $props }
  workload { payload = random(size: $size) }
  capacity {
    from        = $from/s
    to          = $to/s
    precision   = 5%
    reliability = 80%
    probes      = $probes
    probe       = ${secs}s
    warmup      = 1s
    slo { ack.p99 < ${slo_ms}ms }
  }
}
KBS

for s in a b; do
  $kb run "$out/search.kbs" --run-id "caprel$s$$" --json "$out/search-$s.json" >"$out/search-$s.txt" || true
done

# kind (capacity, not_narrowed, unstable, none), capacity (the estimate when not narrowed),
# band low, band high, and a headline-ish summary of one search file
summary() {
  python3 - "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["runs"][0]["capacity"]
cap, band, un, nn = c.get("capacity"), c.get("band"), c.get("unstable"), c.get("not_narrowed")
probes = c["probes"]; passed = sum(p["pass"] for p in probes)
tally = f"({passed}/{len(probes)} probes passed)"
if un:
    print(f"unstable none none none no stable capacity: SLO met in {un['passes']} of {un['probes']} probes "
          f"between {un['low']:.0f} and {un['high']:.0f}/s {tally}")
elif nn and band:
    print(f"not_narrowed {nn['estimate']:.0f} {band['low']:.0f} {band['high']:.0f} not narrowed: 95% band "
          f"{band['low']:.0f}–{band['high']:.0f}/s (estimate {nn['estimate']:.0f}/s), limit {c['limit']} {tally}")
elif cap is None:
    print(f"none none none none no probe passed, limit {c['limit']} {tally}")
elif band:
    print(f"capacity {cap:.0f} {band['low']:.0f} {band['high']:.0f} capacity {cap:.0f}/s, 95% band "
          f"{band['low']:.0f}–{band['high']:.0f}/s, limit {c['limit']} {tally}")
else:
    print(f"capacity {cap} none none capacity {cap}, limit {c['limit']} {tally}")
PY
}
# every probe and canary of one search, in order: rate, +/−, ack.p99 (ms)
probes() {
  python3 - "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["runs"][0]["capacity"]
k = lambda r: f"{r/1e6:.3g}M" if r >= 1e6 else f"{r/1000:.3g}k" if r >= 1000 else f"{r:.0f}"
canaries = {}
for x in c.get("canaries", []):
    canaries.setdefault(x["after"], []).append(f"{k(x['target'])}{'+' if x['pass'] else '−'}")
out = []
for p in c["probes"]:
    out.append(f"{k(p['target'])}{'+' if p['pass'] else '−'} ({p['result']['ack']['p99_ms']:.1f})")
    if p["number"] in canaries:
        out.append(f"[canary {' '.join(canaries[p['number']])}]")
print(", ".join(out))
PY
}
read -r ka ca la ha rest_a < <(summary "$out/search-a.json")
echo "search a: $rest_a" | tee "$out/results.md"
read -r kb_ cb lb hb rest_b < <(summary "$out/search-b.json")
echo "search b: $rest_b" | tee -a "$out/results.md"
for s in a b; do echo "probes $s: $(probes "$out/search-$s.json")" | tee -a "$out/results.md"; done
# Two answers agree when each one's estimate lies in the other's band (a band not narrowed
# counts as a band), or when neither has a band (no stable capacity, or none passed).
python3 - "$ca" "$la" "$ha" "$cb" "$lb" "$hb" <<'PY' | tee -a "$out/results.md"
import sys
ca, la, ha, cb, lb, hb = sys.argv[1:]
if "none" in (la, lb):
    same = la == "none" and lb == "none"
    print("searches: agree, neither has a band" if same else "searches: DISAGREE, one has a band and the other none")
else:
    ca, la, ha, cb, lb, hb = map(float, (ca, la, ha, cb, lb, hb))
    ok = la <= cb <= ha or lb <= ca <= hb
    print(f"searches: {'agree' if ok else 'DISAGREE'} within their bands")
PY

# Only a claimed capacity is tested with fixed runs (a band not narrowed claims none).
c=$ca
if [ "$ka" != capacity ]; then c=$cb; fi
if [ "$ka" != capacity ] && [ "$kb_" != capacity ]; then
  echo "no claimed capacity to test with fixed runs" | tee -a "$out/results.md"
  exit 0
fi
low=$(python3 -c "print(round(0.9*$c))")
high=$(python3 -c "print(round(1.2*$c))")
trials=$(seq -s, 1 "$runs")
cat >"$out/fixed.kbs" <<KBS
scenario "capacity_reliability_fixed" {
  cluster { bootstrap = "$bootstrap" }
  topic "cap-rel-fixed-$case-{i}-{r}" { partitions = $partitions }
  matrix { i = [$trials]  r = [$low/s, $high/s] }
  producer { $props }
  workload {
    payload  = random(size: $size)
    rate     = {r}
    duration = ${secs}s
    warmup   = 1s
  }
}
KBS
$kb run "$out/fixed.kbs" --run-id "caprelf$$" --json "$out/fixed.json" >"$out/fixed.txt" || true
python3 - "$out/fixed.json" "$low" "$high" "$c" "$slo_ms" <<'PY' | tee -a "$out/results.md"
import json, sys
doc = json.load(open(sys.argv[1])); low, high, c, slo = map(float, sys.argv[2:6])
rows = {low: [], high: []}
for r in doc["runs"]:
    t = r["target_rate"]; key = low if abs(t - low) < abs(t - high) else high
    p99 = r["ack"]["p99_ms"]
    ok = p99 < slo and r["throughput_msgs"] >= 0.95 * t
    rows[key].append((p99, ok))
for k, name, need in ((low, "0.9 × C", "held ≥ 7"), (high, "1.2 × C", "failed ≥ 3")):
    v = rows[k]; held = sum(ok for _, ok in v)
    print(f"| {name} = {k:.0f}/s | {', '.join(f'{p:.1f}' for p, _ in v)} | SLO held in {held} of {len(v)} ({need}) |")
PY
echo "results in $out"
