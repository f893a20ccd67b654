#!/usr/bin/env bash
# Builds the pinned MinIO (an S3-compatible server, for tests only; shared/notes/minio.md) once
# per machine into a cache folder outside the repository, and prints the binary's path on stdout.
# Skipped when the binary is there and is the pinned version. The first build takes about
# 5 minutes on 2 cores; a concurrent build (another checkout, another test run) is waited for,
# never duplicated.
set -euo pipefail
version=v0.0.0-20260212201848-7aac2a2c5b7c # what @latest resolved to; upstream stopped tagging
cache="${SCREENFLEET_CACHE:-$HOME/.cache/screenfleet}/minio"
bin="$cache/bin/minio"

is_pinned() {
  [ -x "$bin" ] || return 1
  # Without Go the version cannot be read; a present binary is then taken as it is.
  command -v go >/dev/null || return 0
  go version -m "$bin" 2>/dev/null | grep -q "github.com/minio/minio[[:space:]]*$version"
}

if is_pinned; then echo "$bin"; exit 0; fi

mkdir -p "$cache"
exec 9>"$cache/build.lock"
flock 9 # a second caller waits here for the first one's build
# A build started by hand with the notes' command holds no lock: wait for it too.
for _ in $(seq 1 180); do
  pgrep -f "go install github.com/minio/minio@" >/dev/null || break
  sleep 5
done
if is_pinned; then echo "$bin"; exit 0; fi

command -v go >/dev/null || { echo "tools/minio: Go is needed to build the test S3 server (or set S3_ENDPOINT)" >&2; exit 1; }
echo "tools/minio: building MinIO $version into $cache (first time on this machine: about 5 minutes)" >&2
GOBIN="$cache/bin.tmp" GOFLAGS=-mod=mod go install "github.com/minio/minio@$version" >&2
mkdir -p "$cache/bin"
mv "$cache/bin.tmp/minio" "$bin"
rmdir "$cache/bin.tmp"
echo "$bin"
