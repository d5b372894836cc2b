# kafkabench's container image, for `kafkabench k8s` (docs/distributed.md).
#   docker build -t kafkabench:0.1 .
# Not built in CI (no Docker engine there): keep it to what the build needs, nothing more.

# ---- build --------------------------------------------------------------------------------
FROM rust:1.95-bookworm AS build
# rdkafka builds librdkafka from source (its configure script and make, C and C++), with
# OpenSSL vendored (openssl-src: perl and make) and zstd and zlib (cc).
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential perl make pkg-config zlib1g-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin kafkabench \
 && strip target/release/kafkabench

# ---- run ----------------------------------------------------------------------------------
FROM debian:bookworm-slim
# CA certificates for SSL clusters; zlib is in the base image. Nothing else links dynamically
# (librdkafka and OpenSSL are static in the binary).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/kafkabench /usr/local/bin/kafkabench
# A numeric non-root user, so Kubernetes' runAsNonRoot (set by `kafkabench k8s`) can verify it.
USER 10001:10001
WORKDIR /home/kafkabench
ENTRYPOINT ["kafkabench"]
CMD ["--help"]
