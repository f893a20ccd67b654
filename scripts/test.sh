#!/usr/bin/env bash
# `npm test`: every test. The machine is made ready (scripts/ensure-machine.sh: Debian packages,
# RabbitMQ, the Go builds of FerretDB and MinIO, minutes on a fresh machine) while `npm run
# check` runs, which needs none of it; then the integration tier (scripts/test-integration.sh).
set -uo pipefail
cd "$(dirname "$0")/.."

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
echo "test: making the machine ready (scripts/ensure-machine.sh) beside the check; its output follows the check's" >&2
bash scripts/ensure-machine.sh >"$log" 2>&1 &
ensure=$!

npm run --silent check
check=$?
wait "$ensure"
ready=$?
cat "$log" >&2
if [ "$check" != 0 ]; then exit "$check"; fi
if [ "$ready" != 0 ]; then
  echo "test: the machine is not ready for the integration tests (scripts/ensure-machine.sh, above)" >&2
  exit "$ready"
fi
npm run --silent test:int
