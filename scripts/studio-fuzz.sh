#!/usr/bin/env bash
# Fuzzes the `trove studio` JSON API from its OpenAPI document with
# schemathesis (PyPI, in a virtual environment under .build): generated and
# stateful requests against a server on a copy of the chat example's file.
# Fails on any 5xx, an answer that does not match the document, a server that
# died, or a file that `trove verify` finds a problem in afterwards (a write
# that went around the API's checks).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_BUDGET="${FUZZ_SECONDS:-60}"
VENV=.build/studio-fuzz-venv
if [ ! -x "$VENV/bin/st" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q schemathesis
fi
swift build --product trove
swift build --product Chat
WORK=$(mktemp -d)
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
.build/debug/Chat "$WORK/chat.trove" > /dev/null
.build/debug/trove studio "$WORK/chat.trove" --port 0 > "$WORK/server.out" 2>&1 &
SERVER=$!
for _ in $(seq 50); do grep -q "token=" "$WORK/server.out" 2>/dev/null && break; sleep 0.1; done
ADDRESS=$(grep -o 'http://[^ ]*' "$WORK/server.out" | head -1)
TOKEN=${ADDRESS#*token=}
BASE=${ADDRESS%%/\?*}
echo "fuzzing $BASE for $SECONDS_BUDGET s"
# Run from the scratch folder, where schemathesis and hypothesis leave their caches.
ROOT=$(pwd)
(cd "$WORK" && "$ROOT/$VENV/bin/st" run "$ROOT/Sources/trove/Studio/Assets/openapi.json" -u "$BASE" \
    -H "X-Trove-Token: $TOKEN" --exclude-path /api/events --max-time "$SECONDS_BUDGET" \
    --report junit --report-dir "$ROOT/.build/studio-fuzz-report" \
    -c not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance)
kill -0 "$SERVER" || { echo "the server died"; cat "$WORK/server.out"; exit 1; }
.build/debug/trove verify "$WORK/chat.trove"
