#!/usr/bin/env bash
# Builds tools/ferretdb/bin/ferretdb once per machine: skipped while the binary is newer than
# the sources. The first build downloads modules (~30 s) and compiles for 1.5-3 minutes.
set -euo pipefail
cd "$(dirname "$0")"
bin=bin/ferretdb
if [ -x "$bin" ] && [ "$bin" -nt go.sum ] && [ "$bin" -nt main.go ]; then
  exit 0
fi
command -v go >/dev/null || { echo "tools/ferretdb: Go is needed to build the test database server" >&2; exit 1; }
echo "tools/ferretdb: building FerretDB (first time on this machine: a few minutes)" >&2
go build -trimpath -o "$bin.tmp" . && mv "$bin.tmp" "$bin"
