# shellcheck shell=bash
# PostgreSQL 15 for the coverage store's real-database tests (tests/store/).
# Sourced by .ci/run (as root): initialise a fresh cluster as the postgres user, start it on a local
# port, create the rsi_test database and export RSI_TEST_POSTGRES_URL. Idempotent: if a server
# already answers on the port, it is reused. Never `exit` (this file is sourced).

rsi_pg_start() {
    local port="${RSI_PG_PORT:-55432}"
    local data="${RSI_PG_DATA:-/var/tmp/rsi-pg/data}"
    local bin=""
    local candidate
    for candidate in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
        if [ -x "$candidate/pg_ctl" ]; then bin="$candidate"; break; fi
    done
    if [ -z "$bin" ]; then
        apt-get install -y -qq --no-install-recommends postgresql >/dev/null
        for candidate in /usr/lib/postgresql/*/bin; do
            if [ -x "$candidate/pg_ctl" ]; then bin="$candidate"; break; fi
        done
    fi
    if [ -z "$bin" ]; then
        echo "30-postgres: no PostgreSQL binaries found" >&2
        return 0
    fi
    if ! "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
        if [ ! -s "$data/PG_VERSION" ]; then
            rm -rf "$data"
            mkdir -p "$data"
            chown -R postgres:postgres "$(dirname "$data")"
            runuser -u postgres -- "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >/dev/null
        fi
        # Sockets in the data dir: /run/postgresql may not exist on a bare machine.
        runuser -u postgres -- "$bin/pg_ctl" -D "$data" -l "$data/../server.log" -w -t 60 \
            -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
    fi
    if ! runuser -u postgres -- "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -tAc \
            "SELECT 1 FROM pg_database WHERE datname='rsi_test'" | grep -q 1; then
        runuser -u postgres -- "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres rsi_test
    fi
    export RSI_TEST_POSTGRES_URL="postgresql+psycopg2://postgres@127.0.0.1:${port}/rsi_test"
    echo "30-postgres: ready at $RSI_TEST_POSTGRES_URL"
}
rsi_pg_start
