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
trap 'rm -rf "$logs"' EXIT
declare -A steps=(
  [build]="npx tsc -b"
  [lint]="npm run --silent lint"
  [typecheck]="npm run --silent typecheck"
  [unit]="npm run --silent test:unit"
)
declare -A pids=()
for name in "${!steps[@]}"; do
  bash -c "${steps[$name]}" >"$logs/$name.log" 2>&1 &
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
