#!/usr/bin/env bash
# Sourced by .ci/run: installs what the service tests need from Debian (PostgreSQL, chromium and
# chromium-driver; nothing downloads a browser), starts PostgreSQL on loopback with a throw-away
# cluster and exports SHUFFLEDP_TEST_POSTGRES_URL for the tests (tests/service/conftest.py).
set -euo pipefail
if ! command -v chromedriver >/dev/null || ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql chromium chromium-driver >/dev/null
fi
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
PGPORT=${SHUFFLEDP_PG_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
PGDATA=$(mktemp -d /tmp/shuffledp-pg.XXXXXX)
chown postgres "$PGDATA"
su postgres -s /bin/sh -c "$PGBIN/initdb -D $PGDATA -A trust -U postgres >/dev/null"
su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $PGDATA -o '-c listen_addresses=127.0.0.1 -p $PGPORT -k $PGDATA -c fsync=on' -l $PGDATA/server.log -w start >/dev/null"
su postgres -s /bin/sh -c "$PGBIN/createdb -h 127.0.0.1 -p $PGPORT shuffledp_test"
export SHUFFLEDP_TEST_POSTGRES_URL="postgresql+psycopg://postgres@127.0.0.1:$PGPORT/shuffledp_test"
export SHUFFLEDP_PG_STOP="su postgres -s /bin/sh -c '$PGBIN/pg_ctl -D $PGDATA -m fast stop'"
