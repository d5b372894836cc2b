#!/usr/bin/env bash
# The capacity band's coverage with the search in the loop (docs/results.md, "The band's
# coverage"): whole searches — bracket, adaptive probes, 24-probe budget, stopping rule,
# canaries — against simulated systems whose true capacity is known, over the grid of issue 50
# (slopes 1.5, 3, 6 and 10 per unit of ln rate; lapses 0 and 5 %), until each curve has
# --claims searches that claim a capacity (or --most searches). Prints, per curve, how often
# the claimed band covered the truth, and how often the search said "not narrowed".
# No broker; CPU only, on --threads threads (the figures do not depend on how many).
#
#   bench/capacity-coverage.sh [--claims 2000] [--most 60000] [--threads 2] [--cutoff K]
#       [--floor F] [--min-slope S] [--low-margin M] [--explore CUTOFFS:SLOPES:STEEPS]
#       [--floors F1,F2] [--margins M1,M2] [--no-build] [--out DIR]
#
# --cutoff and --min-slope replace the calibrated band (--cutoff 3.84 --min-slope 0: Wilks'
# cutoff, no slope rule, as before issue 50); --explore answers every search again at each
# pair listed (CSV), which is how the calibrated pair was chosen.
set -euo pipefail
cd "$(dirname "$0")/.."
build=1
out="bench/out/capacity-coverage-$(date +%Y%m%d-%H%M%S)"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --claims|--most|--threads|--cutoff|--floor|--floors|--low-margin|--margins|--min-slope|--steep|--explore|--seed|--slopes|--lapses)
      args+=("$1" "$2"); shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "capacity-coverage.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
if [ "$build" = 1 ]; then cargo build --profile quick --locked --quiet --example capacity_coverage; fi
started=$(date +%s)
{
  echo "load before: $(uptime)"
  target/quick/examples/capacity_coverage "${args[@]}"
  echo "load after: $(uptime)"
  echo "wall time: $(( $(date +%s) - started ))s"
} | tee "$out/coverage.md"
echo "results in $out"
