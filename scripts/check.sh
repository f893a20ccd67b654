#!/usr/bin/env bash
# `npm run check`: format, then the build, lint, typecheck and unit tests side by side. None of
# the four reads what another writes (lint, typecheck and jest read the sources; the build
# writes dist/), and each mostly keeps one core busy: run one after the other they took twice
# as long on our 2-core machines. Each one's output is printed whole when it ends; exits 1 when
# any failed, naming them.
set -uo pipefail
cd "$(dirname "$0")/.."

npm run --silent format || exit 1

logs="$(mktemp -d)"
declare -A pids=()
# Each step runs in a process group of its own (setsid), so Ctrl-C or a CI timeout that ends
# this script ends every process of the four too.
stop_steps() {
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null; done
  rm -rf "$logs"
}
trap stop_steps EXIT
trap 'exit 130' INT TERM
declare -A steps=(
  [build]="npx tsc -b"
  [lint]="npm run --silent lint"
  [typecheck]="npm run --silent typecheck"
  [unit]="npm run --silent test:unit"
)
for name in "${!steps[@]}"; do
  setsid bash -c "${steps[$name]}" >"$logs/$name.log" 2>&1 &
  pids[$name]=$!
done

failed=()
for name in build lint typecheck unit; do
  if wait "${pids[$name]}"; then status=ok; else status=FAILED; failed+=("$name"); fi
  echo "== check: $name $status" >&2
  cat "$logs/$name.log"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "check failed: ${failed[*]}" >&2
  exit 1
fi
