#!/usr/bin/env bash
# `npm run test:int`: the integration tier in two runs. Most files wait on sockets, child
# processes and the store more than they compute, so they run two at a time; the files below run
# one at a time afterwards, each for a reason that two at a time would break. Extra arguments go
# to both jest runs (e.g. --silent).
set -euo pipefail
cd "$(dirname "$0")/.."

alone=(
  # They stop, kill or reconfigure a service every test shares (the broker, FerretDB, MinIO).
  test/broker-cluster.int.test.ts # three more broker nodes, killed: the CPU of both cores
  test/ingest-size.int.test.ts # sets the shared broker's max_message_size
  test/ingest-faults.int.test.ts # kills and restarts FerretDB
  libs/storage/test/mongo.content-store.int.test.ts # kills FerretDB
  libs/storage/test/mongo.archive-state-store.int.test.ts # kills FerretDB
  libs/storage/test/s3.archive-store.int.test.ts # stops MinIO
  services/archive-worker/test/archive.int.test.ts # stops MinIO
  # A real desktop each (Xvfb, AT-SPI, Chromium): display numbers are taken by looking for a
  # free one, and keys pressed under a second desktop's load must still land in time.
  test/console.int.test.ts
  test/operator.int.test.ts
  test/both-modes-operator.int.test.ts
  services/operator-agent/test/press-races.int.test.ts
  services/operator-agent/test/linux-desktop.int.test.ts
  services/operator-agent/test/held-modifier.int.test.ts
  services/operator-agent/test/click-type.int.test.ts
  services/operator-agent/test/nut.input.int.test.ts
  services/operator-agent/test/dbus.connection.int.test.ts
  # They bound a latency in milliseconds (an answer within 100 ms of a reconnect, a render
  # within 100 ms, no answer past 1 s while the writer works), which a neighbour's CPU would
  # take from them.
  libs/bus/test/reconnect.int.test.ts
  services/gateway/test/console.int.test.ts
  services/gateway/test/archive.routes.int.test.ts
  test/embedded-off-loop.int.test.ts
  test/archive.int.test.ts
  test/health.int.test.ts
  # A token takes effect on every gateway within a second of its change (issue #40).
  test/tokens.int.test.ts
  services/gateway/test/token-cache.int.test.ts
)

ignore=()
for file in "${alone[@]}"; do
  [ -f "$file" ] || { echo "test-integration: $file is listed but missing" >&2; exit 1; }
  ignore+=("<rootDir>/$file")
done

npx jest --selectProjects integration --maxWorkers=2 --testPathIgnorePatterns "${ignore[@]}" "$@"
npx jest --selectProjects integration --runInBand --runTestsByPath "${alone[@]}" "$@"
