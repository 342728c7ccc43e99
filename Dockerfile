# syntax=docker/dockerfile:1

# Build stage: full Go toolchain. go.mod/go.sum are copied and downloaded
# first so the module layer stays cached until dependencies change.
FROM golang:1.26-bookworm AS build
# Build with the toolchain go.mod names (it carries the standard library's
# security fixes), fetched through the module proxy if the image's Go is
# older.
ENV GOTOOLCHAIN=auto
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/locklab ./cmd/locklab
# scratch has no useradd: write a minimal passwd/group for the nonroot user
# and an empty data dir it owns, so a volume mounted at /data is writable.
RUN mkdir -p /out/etc /out/data \
 && echo 'nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin' > /out/etc/passwd \
 && echo 'nonroot:x:65532:' > /out/etc/group \
 && chown 65532:65532 /out/data

# Final stage: scratch holds only the static binary (course content is
# embedded) plus the user files, so nothing else ships or needs patching.
FROM scratch
LABEL org.opencontainers.image.source="https://github.com/locklab/locklab"
COPY --from=build /out/etc/passwd /out/etc/group /etc/
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build /out/locklab /locklab
USER 65532:65532
ENV LOCKLAB_ADDR=:8080 LOCKLAB_DATA=/data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 CMD ["/locklab", "healthcheck"]
ENTRYPOINT ["/locklab"]
