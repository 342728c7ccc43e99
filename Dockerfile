# syntax=docker/dockerfile:1

# Build stage: full Go toolchain. go.mod/go.sum are copied and downloaded
# first so the module layer stays cached until dependencies change; the
# module and build caches are cache mounts, so a one-line change rebuilds
# in seconds.
FROM golang:1.26-bookworm AS build
# Build with the toolchain go.mod names (it carries the standard library's
# security fixes), fetched through the module proxy if the image's Go is
# older.
ENV GOTOOLCHAIN=auto
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go mod download
# What `locklab version` prints and the image's labels say, declared after
# the download (which they would otherwise run again). The image is built
# without .git, so they come from the builder:
#   docker build --build-arg VERSION=v1.2.0 \
#     --build-arg REVISION=$(git rev-parse HEAD) \
#     --build-arg CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ) -t locklab .
ARG VERSION=(devel)
ARG REVISION=unknown
ARG CREATED=
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath \
      -ldflags="-s -w -X main.version=${VERSION} -X main.revision=${REVISION} -X main.buildTime=${CREATED}" \
      -o /out/locklab ./cmd/locklab
# scratch has no useradd: write a minimal passwd/group for the nonroot user
# and an empty data dir it owns, so a volume mounted at /data is writable.
# The CA certificates let the server reach a rediss:// (TLS) Redis.
RUN mkdir -p /out/etc/ssl/certs /out/data \
 && cp /etc/ssl/certs/ca-certificates.crt /out/etc/ssl/certs/ \
 && echo 'nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin' > /out/etc/passwd \
 && echo 'nonroot:x:65532:' > /out/etc/group \
 && chown 65532:65532 /out/data

# Final stage: scratch holds only the static binary (course content is
# embedded), the CA certificates and the user files, so nothing else ships
# or needs patching.
FROM scratch
ARG VERSION=(devel)
ARG REVISION=unknown
ARG CREATED=
LABEL org.opencontainers.image.title="Lock Lab" \
      org.opencontainers.image.description="An interactive course on Redis distributed locks" \
      org.opencontainers.image.source="https://github.com/locklab/locklab" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=build /out/etc/passwd /out/etc/group /etc/
COPY --from=build /out/etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build /out/locklab /locklab
USER 65532:65532
ENV LOCKLAB_ADDR=:8080 LOCKLAB_DATA=/data
EXPOSE 8080
# The health check does not see the server's arguments: it reads the
# address the server recorded in LOCKLAB_DATA (server.addr), so a server
# given -addr on the command line is found on its port too.
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 CMD ["/locklab", "healthcheck"]
ENTRYPOINT ["/locklab"]
