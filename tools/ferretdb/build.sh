#!/usr/bin/env bash
# Builds the FerretDB test server (main.go here) once per machine into a cache folder outside the
# repository, keyed by the sources' hash, and prints the binary's path on stdout: a fresh clone
# or a second checkout of the same sources uses the binary already built. The first build
# downloads modules (~30 s) and compiles for about a minute on 2 cores; a concurrent build is
# waited for, never duplicated.
set -euo pipefail
cd "$(dirname "$0")"
key="$(cat go.mod go.sum main.go | sha256sum | cut -c1-16)"
cache="${SCREENFLEET_CACHE:-$HOME/.cache/screenfleet}/ferretdb"
bin="$cache/$key/ferretdb"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi

mkdir -p "$cache"
exec 9>"$cache/build.lock"
flock 9 # a second caller waits here for the first one's build
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
command -v go >/dev/null || { echo "tools/ferretdb: Go is needed to build the test database server" >&2; exit 1; }
echo "tools/ferretdb: building FerretDB into $cache/$key (first time on this machine: a minute or two)" >&2
mkdir -p "$cache/$key"
go build -trimpath -o "$bin.tmp" . >&2
mv "$bin.tmp" "$bin"
echo "$bin"
