#!/usr/bin/env bash
# A capacity that says how long it holds (docs/results.md, "hold"), on issue 50's noisy search:
# 6 partitions, 256 B records, lz4, linger 5 ms, a consumer, an SLO of ack.p99 < 25 ms and
# e2e.p99 < 40 ms, 8 s probes after 2 s. Two modes:
#
#   bench/capacity-hold.sh hold [--hold 60] [--secs 8] [--runs 4] [--to 1280k]
#     one search with `hold`, which states the rate H that holds; then --runs fixed runs of
#     --hold seconds each, back to back, at 0.9 × H, each judged by the same SLO and by acking
#     at least 95 % of the target. The claim: at least 3 of 4 meet it.
#
#   bench/capacity-hold.sh answers [--searches 3] [--secs 8] [--to 1280k]
#     the same search without `hold`, --searches times in a row: what each answered (a
#     capacity, not narrowed, no stable capacity), its band, its probes and canaries, the time
#     it took against `plan`'s worst case and typical figure. With KB_BIN=<an older binary>
#     it measures that binary instead (the before of issue 50).
#
# Common options: [--ack MS] [--e2e MS] (the SLO, default ack.p99 < 25 ms and e2e.p99 < 40 ms,
# issue 50's; a machine whose broker cannot meet them at 1k/s answers "none passed", so say the
# SLO beside the figures) [--no-build] [--out DIR]. Each search writes its scenario, its table and its
# result file to DIR. Run it under `flock /tmp/kb-heavy.lock` on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
case "$mode" in
  hold|answers) shift ;;
  -h|--help|"") sed -n '2,20p' "$0"; exit 0 ;;
  *) echo "capacity-hold.sh: the mode is hold or answers, not $mode" >&2; exit 2 ;;
esac
hold=60
secs=8
runs=4
searches=3
to=1280k
ack=25
e2e=40
build=1
out="bench/out/capacity-$mode-$(date +%Y%m%d-%H%M%S)"
while [ $# -gt 0 ]; do
  case "$1" in
    --hold) hold="$2"; shift 2 ;;
    --secs) secs="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --searches) searches="$2"; shift 2 ;;
    --to) to="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --ack) ack="$2"; shift 2 ;;
    --e2e) e2e="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "capacity-hold.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
if [ "$build" = 1 ] && [ -z "${KB_BIN:-}" ]; then cargo build --release --locked --quiet; fi
. scripts/broker-env
kb_ensure_broker
trap 'if [ "$KB_STARTED_BROKER" = 1 ]; then scripts/kafka-local down >&2 || true; fi' EXIT
bootstrap="${KAFKA_BOOTSTRAP:-127.0.0.1:9092}"
kb=${KB_BIN:-target/release/kafkabench}

# The search; $1 is an extra capacity setting (`hold = 60s`, or nothing).
search_file() {
  cat <<KBS
scenario "capacity_$mode" {
  cluster { bootstrap = "$bootstrap" }
  topic "cap-$mode" { partitions = 6 }
  producer { compression.type = lz4  linger.ms = 5ms }
  consumer { }
  workload { payload = random(size: 256B) }
  capacity {
    from        = 1000/s
    to          = $to/s
    precision   = 5%
    reliability = 80%
    probes      = 24
    probe       = ${secs}s
    warmup      = 2s
    $1
    slo {
      ack.p99 < ${ack}ms
      e2e.p99 < ${e2e}ms
    }
  }
}
KBS
}

# One line on a search's result file: its answer, band, probes, canaries, long probes, time.
summary() {
  python3 - "$1" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["runs"][0]["capacity"]
worst = float(sys.argv[2])
k = lambda r: f"{r/1e6:.3g}M" if r >= 1e6 else f"{r/1000:.3g}k" if r >= 1000 else f"{r:.0f}"
band = c.get("band")
if c.get("unstable"):
    what = "no stable capacity"
elif c.get("not_narrowed"):
    nn = c["not_narrowed"]
    what = f"not narrowed (estimate {k(nn['estimate'])}/s" + (f", slope {nn['shallow']:.1f})" if nn.get("shallow") is not None else ")")
elif c.get("capacity") is None:
    what = "none passed"
else:
    what = f"{k(c['capacity'])}/s"
    if c.get("carried"):
        what += f", carried {k(c['carried'])}/s"
b = f"{k(band['low'])}–{k(band['high'])}/s" if band else "-"
hold = c.get("hold")
h = "-"
if hold:
    a = hold["answer"]
    if a["state"] == "holds":
        h = f"holds {k(a['rate'])}/s ({a['passes']} of {a['probes']})"
    else:
        h = a["state"]
    h += f", {len(hold['probes'])} long probes"
print(f"| {what} | {b} | {c['limit']} | {len(c['probes'])} | {len(c.get('canaries', []))} | {h} | {c['elapsed_secs']/60:.1f} min | {worst/60:.1f} min |")
PY
}

# The plan's worst case for a file, seconds.
worst_case() {
  $kb plan "$1" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["estimate"]["seconds"])'
}

header="| answer | band | limited by | probes | canaries | hold | took | plan's worst case |"
rule="|---|---|---|---|---|---|---|---|"
if [ "$mode" = answers ]; then
  search_file "" >"$out/search.kbs"
  worst=$(worst_case "$out/search.kbs")
  $kb plan "$out/search.kbs" | grep estimate | tee "$out/plan.txt"
  echo "$header" | tee "$out/results.md"
  echo "$rule" | tee -a "$out/results.md"
  for i in $(seq 1 "$searches"); do
    echo "load before search $i: $(uptime)" >>"$out/load.txt"
    $kb run "$out/search.kbs" --run-id "capans$i$$" --json "$out/search-$i.json" >"$out/search-$i.txt" || true
    summary "$out/search-$i.json" "$worst" | tee -a "$out/results.md"
  done
  echo "load after: $(uptime)" >>"$out/load.txt"
  echo "results in $out"
  exit 0
fi

search_file "hold = ${hold}s" >"$out/search.kbs"
worst=$(worst_case "$out/search.kbs")
$kb plan "$out/search.kbs" | grep estimate | tee "$out/plan.txt"
echo "load before the search: $(uptime)" >"$out/load.txt"
$kb run "$out/search.kbs" --run-id "caphold$$" --json "$out/search.json" >"$out/search.txt" || true
echo "$header" | tee "$out/results.md"
echo "$rule" | tee -a "$out/results.md"
summary "$out/search.json" "$worst" | tee -a "$out/results.md"
grep -E "^  capacity:" "$out/search.txt" | tee -a "$out/results.md" || true
h=$(python3 -c '
import json, sys
a = (json.load(open(sys.argv[1]))["runs"][0]["capacity"].get("hold") or {}).get("answer", {})
print(a["rate"] if a.get("state") == "holds" else "")' "$out/search.json")
if [ -z "$h" ]; then
  echo "no rate held: no fixed runs" | tee -a "$out/results.md"
  exit 0
fi
rate=$(python3 -c "print(round(0.9*$h))")
echo "load before the fixed runs: $(uptime)" >>"$out/load.txt"
trials=$(seq -s, 1 "$runs")
cat >"$out/fixed.kbs" <<KBS
scenario "capacity_hold_fixed" {
  cluster { bootstrap = "$bootstrap" }
  topic "cap-hold-fixed-{i}" { partitions = 6 }
  matrix { i = [$trials] }
  producer { compression.type = lz4  linger.ms = 5ms }
  consumer { }
  workload {
    payload  = random(size: 256B)
    rate     = $rate/s
    duration = ${hold}s
    warmup   = 2s
  }
}
KBS
$kb run "$out/fixed.kbs" --run-id "capholdf$$" --json "$out/fixed.json" >"$out/fixed.txt" || true
echo "load after: $(uptime)" >>"$out/load.txt"
python3 - "$out/fixed.json" "$rate" "$hold" "$ack" "$e2e" <<'PY' | tee -a "$out/results.md"
import json, sys
doc = json.load(open(sys.argv[1])); rate = float(sys.argv[2]); hold = sys.argv[3]
slo_ack = float(sys.argv[4]); slo_e2e = float(sys.argv[5])
rows = []
for r in doc["runs"]:
    ack = r["ack"]["p99_ms"]; e2e = (r.get("e2e") or {}).get("p99_ms")
    ok = ack < slo_ack and e2e is not None and e2e < slo_e2e and r["throughput_msgs"] >= 0.95 * rate
    rows.append((ack, e2e, r["throughput_msgs"], ok))
met = sum(ok for *_, ok in rows)
print()
print(f"| {hold} s fixed runs at 0.9 × H = {rate:.0f}/s, back to back | ack.p99 (ms) | e2e.p99 (ms) | acked | SLO met |")
print("|---|---|---|---|---|")
for i, (ack, e2e, acked, ok) in enumerate(rows, 1):
    e = f"{e2e:.1f}" if e2e is not None else "-"
    print(f"| run {i} | {ack:.1f} | {e} | {acked:.0f}/s | {'yes' if ok else 'no'} |")
print(f"\nSLO met in {met} of {len(rows)} (the claim: at least 3 of 4)")
PY
echo "results in $out"
