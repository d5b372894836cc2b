#!/usr/bin/env bash
# Side-by-side benchmark on one broker: kafkabench vs kafka-producer-perf-test and
# kafka-consumer-perf-test (org.apache.kafka.tools.ProducerPerformance / ConsumerPerformance from
# the cached Kafka jars) vs librdkafka's own rdkafka_performance (-P, and -C -G for the read
# side), on identical work, interleaved. Method and results: bench/README.md.
#
#   bench/peers.sh                     # everything (about 20 minutes on 2 cores)
#   bench/peers.sh --reps 3 --only throughput
#   bench/peers.sh --reps 1 --only consume --only verifier   # the read side
#   bench/peers.sh --help              # all options
#
# Builds kafkabench (release) and rdkafka_performance (into bench/build, git-ignored) from the
# very librdkafka tree rdkafka-sys compiled for kafkabench: same version, same build flags.
# Uses the broker at KAFKA_BOOTSTRAP, or starts the local one (and stops it afterwards).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cd "$repo"

case "${1:-}" in -h|--help) exec python3 -B bench/peers.py --help ;; esac

command -v python3 >/dev/null || { echo "bench/peers.sh needs python3" >&2; exit 2; }
command -v cc >/dev/null || { echo "bench/peers.sh needs a C compiler (cc) for rdkafka_performance" >&2; exit 2; }

cargo build --release --locked --quiet

# The librdkafka tree rdkafka-sys built (newest if several).
out=$(ls -dt target/release/build/rdkafka-sys-*/out 2>/dev/null | head -1)
zstd=$(ls -dt target/release/build/zstd-sys-*/out 2>/dev/null | head -1)
# librdkafka is built with TLS (rdkafka's ssl-vendored): link the same OpenSSL it was built with.
ssl=$(ls -dt target/release/build/openssl-sys-*/out/openssl-build/install/lib 2>/dev/null | head -1)
[ -f "$out/src/librdkafka.a" ] && [ -f "$zstd/libzstd.a" ] && [ -f "$ssl/libssl.a" ] || {
  echo "cannot find the librdkafka build under target/release/build (cargo build --release first)" >&2
  exit 2
}
mkdir -p bench/build
perf_bin=bench/build/rdkafka_performance
if [ ! -x "$perf_bin" ] || [ "$out/src/librdkafka.a" -nt "$perf_bin" ]; then
  echo "building $perf_bin from $out/examples/rdkafka_performance.c" >&2
  cc -O2 -w -I"$out/src" "$out/examples/rdkafka_performance.c" "$out/src/librdkafka.a" \
    "$zstd/libzstd.a" "$ssl/libssl.a" "$ssl/libcrypto.a" -lz -lm -ldl -lpthread -lrt -o "$perf_bin"
fi

# shellcheck source=../scripts/broker-env
. scripts/broker-env
kb_ensure_broker || exit 3
if [ "$KB_STARTED_BROKER" = 1 ]; then
  trap 'scripts/kafka-local down --wipe >&2' EXIT
fi

# -B: no __pycache__ in bench/ (peers.py imports peers_read.py).
python3 -B bench/peers.py --rdkafka-performance "$perf_bin" "$@"
