# a2aflow container image: one binary, every command.
#
#   docker build -t a2aflow .
#   docker run --rm -p 8080:8080 -v a2aflow-data:/data a2aflow                        # serve: all in one
#   docker run --rm a2aflow worker --temporal-addr temporal.example:7233             # scaled-out worker
#   docker run --rm -p 8080:8080 -e A2AFLOW_TEMPORAL_ADDR=temporal.example:7233 a2aflow api
#
# `serve` and `temporal` listen for Temporal gRPC on 127.0.0.1:7233 and for the
# Web UI on 127.0.0.1:8233 by default, which are unreachable from outside the
# container. To reach the UI from this host only, listen on the container's
# interfaces and publish on the host's loopback:
#   docker run --rm -p 8080:8080 -p 127.0.0.1:8233:8233 -e A2AFLOW_UI_ADDR=0.0.0.0:8233 -v a2aflow-data:/data a2aflow
# (to a network only behind --ui-oidc-issuer; see "Exposing a2aflow" in the
# README). 7233 likewise with -e A2AFLOW_TEMPORAL_ADDR=0.0.0.0:7233, published
# on loopback only: the frontend has no authentication unless it requires
# client certificates (--temporal-tls-server-cert, --temporal-tls-server-key,
# --temporal-tls-client-ca; see the README). Neither is set here
# because `api` and `worker` read A2AFLOW_TEMPORAL_ADDR as the address to dial.
#
# docker-compose.yml beside this file runs the scaled-out deployment.

# The official golang images set GOTOOLCHAIN=local, so this version must be at
# least the go line of go.mod (tests/compose_test.go checks it).
ARG GO_VERSION=1.26.8

# ---- build ------------------------------------------------------------------
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# gorm.io/driver/sqlite uses mattn/go-sqlite3, which is C: cgo is required
# (the image ships gcc). The binary links glibc dynamically, which is why the
# runtime stage is the same Debian release (bookworm).
ENV CGO_ENABLED=1
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -buildvcs=false -ldflags="-s -w" -o /out/a2aflow ./cmd/a2aflow

# ---- runtime ----------------------------------------------------------------
FROM debian:bookworm-slim
# ca-certificates: the system roots that verify a remote Temporal's TLS
# certificate (Temporal Cloud: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and
# TEMPORAL_API_KEY or TEMPORAL_TLS_CLIENT_CERT_PATH and _KEY_PATH; see
# "Connecting to Temporal" in the README); curl for container health checks
# (serve and api answer GET /readyz on the API port, worker on --health-addr).
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 a2aflow \
    && useradd --system --uid 10001 --gid a2aflow --home-dir /data --no-create-home \
       --shell /usr/sbin/nologin a2aflow \
    && mkdir -p /data \
    && chown a2aflow:a2aflow /data
COPY --from=build /out/a2aflow /usr/local/bin/a2aflow

# /data holds the embedded Temporal database (serve, temporal) and a2aflow's
# own SQLite records (serve, worker). A new named volume mounted here takes
# the folder's owner, so the non-root user can write to it.
ENV A2AFLOW_DATA_DIR=/data
VOLUME /data
WORKDIR /data
USER a2aflow:a2aflow

# 8080 A2A HTTP API, 9090 A2A gRPC (with A2AFLOW_GRPC_ADDR=:9090), 7233 Temporal gRPC (serve, temporal),
# 8233 Temporal Web UI (serve, temporal).
EXPOSE 8080 9090 7233 8233
ENTRYPOINT ["a2aflow"]
CMD ["serve"]
