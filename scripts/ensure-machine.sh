#!/usr/bin/env bash
# Makes this machine able to run the system and its tests, doing only what is missing:
# Debian packages for the real-desktop tests (as root, via apt-get), a running RabbitMQ, and
# the FerretDB test server built from tools/ferretdb, and the MinIO test server built from
# tools/minio. Used by `npm test`, `npm run start:stack` and CI.
#   scripts/ensure-machine.sh            everything
#   scripts/ensure-machine.sh --no-apt   only the broker and FerretDB (npm run start:stack)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" != "--no-apt" ]; then
  packages=(xvfb x11-utils xdotool libxtst6 at-spi2-core dbus-x11 chromium prometheus)
  missing=()
  for pkg in "${packages[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "ensure-machine: missing Debian packages: ${missing[*]} (run as root, or apt-get install them)" >&2
      exit 1
    fi
    echo "ensure-machine: apt-get install ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# The broker runs on our machines; start it when a previous job left it stopped.
if [ -z "${RABBITMQ_URL:-}" ] && ! (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null; then
  if command -v rabbitmq-server >/dev/null; then
    echo "ensure-machine: starting RabbitMQ" >&2
    rabbitmq-server -detached
    timeout 60 bash -c 'until rabbitmqctl -q status >/dev/null 2>&1; do sleep 1; done'
  else
    echo "ensure-machine: no RabbitMQ on 127.0.0.1:5672 and none installed; set RABBITMQ_URL" >&2
    exit 1
  fi
fi

if [ -z "${MONGODB_URL:-}" ]; then
  bash tools/ferretdb/build.sh >/dev/null
fi

# The test object store: only tests need it (npm start archives to S3 only when configured so).
if [ "${1:-}" != "--no-apt" ] && [ -z "${S3_ENDPOINT:-}" ]; then
  bash tools/minio/build.sh >/dev/null
fi
