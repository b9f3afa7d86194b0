#!/usr/bin/env bash
# Starts nginx on a free loopback port serving DIR (laid out like the public file host:
# DIR/<N>/epoch-<N>.car plus its index files) with range requests, for rpc_fixture_server
# --archive-http. Needs nginx (apt-get install -y nginx). Prints the base URL and the command that
# stops it; nginx runs in the background until stopped.
#
#   bench/scripts/nginx-archive.sh DIR [PORT]
set -euo pipefail
dir=$(realpath "${1:?usage: nginx-archive.sh DIR [PORT]}")
port=${2:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
here=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(mktemp -d /tmp/nginx-archive.XXXXXX)
mkdir -p "$prefix/tmp"
sed -e "s|@ROOT@|$dir|g" -e "s|@PORT@|$port|g" -e "s|@PREFIX@|$prefix|g" \
    "$here/nginx-archive.conf" > "$prefix/nginx.conf"
nginx -t -q -p "$prefix" -c "$prefix/nginx.conf"
nohup nginx -p "$prefix" -c "$prefix/nginx.conf" > "$prefix/stdout.log" 2>&1 &
for _ in $(seq 50); do
    if curl -fsS -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null || [ -s "$prefix/nginx.pid" ]; then
        break
    fi
    sleep 0.1
done
echo "serving $dir at http://127.0.0.1:$port"
echo "stop: kill \$(cat $prefix/nginx.pid)"
