#!/usr/bin/env bash
# Makes sure the PostgreSQL server binaries are installed for the checkpoint tests and the load
# benchmark. The tests start their own throwaway server from them (tests/postgres_server.py):
# a temp data folder, a free loopback port, trust auth on 127.0.0.1 only, stopped at exit.
# Set PERFSCOUT_TEST_POSTGRES_URL to use a server that is already running instead.
# Called from .ci/run; safe to run again (installs nothing when the binaries are there).
set -euo pipefail

have_pg() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; }

if ! have_pg; then
  if [ "$(id -u)" != "0" ]; then
    echo "setup_postgres: PostgreSQL is missing and this is not root; install the 'postgresql' package" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Only the binaries are needed; the packaged cluster is not used by the tests.
  apt-get install -y -qq postgresql >/dev/null
fi
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
echo "setup_postgres: PostgreSQL binaries in ${bin:-$(dirname "$(command -v initdb)")}"
