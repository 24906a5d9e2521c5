#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL (Debian's) on a free loopback
# port, in a temporary directory (as nobody when root: PostgreSQL refuses to
# run as root), with roles sync_owner (owns database sync) and sync_device.
# The command gets TROVE_SYNC_OWNER_URL, TROVE_SYNC_DEVICE_URL and
# TROVE_SYNC_SUPERUSER_URL. The server is stopped and removed after it.
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "PostgreSQL is not installed (make deps-postgres)"; exit 1; }
dir=$(mktemp -d /tmp/pgrun.XXXXXX)
as_server() { if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi; }
cleanup() {
	as_server "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap cleanup EXIT
secret() { od -An -tx1 -N12 /dev/urandom | tr -d ' \n'; }
super=$(secret); owner=$(secret); device=$(secret)
echo "$super" >"$dir/pwfile"
chmod 700 "$dir"
[ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$dir"
as_server "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$dir/pwfile" --auth=scram-sha-256 --no-locale -E UTF8 \
	--no-instructions >/dev/null
rm -f "$dir/pwfile"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 200
CONF
as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
PGPASSWORD=$super "$bin/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres \
	-c "CREATE ROLE sync_owner LOGIN CREATEROLE PASSWORD '$owner'" -c "CREATE ROLE sync_device LOGIN PASSWORD '$device'" \
	-c "CREATE DATABASE sync OWNER sync_owner"
export TROVE_SYNC_OWNER_URL="postgresql://sync_owner:$owner@127.0.0.1:$port/sync"
export TROVE_SYNC_DEVICE_URL="postgresql://sync_device:$device@127.0.0.1:$port/sync"
export TROVE_SYNC_SUPERUSER_URL="postgresql://postgres:$super@127.0.0.1:$port/sync"
"$@"
