"""One protocol vocabulary: codes, bounds, Retry-After, names, versions, once.

JSON-RPC error codes (-32xxx), the 120-character echo bound, the Retry-After
seconds, the MCP header names, the revision strings and the OAuth scope syntax
are constants of the vocabulary modules; other modules import them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ROOT / "packages"

VOCABULARY = {
    # JSON-RPC codes, RETRY_AFTER, request-id rules
    "packages/core-server/src/wymcp/core/server/_jsonrpc.py": {"code", "retry"},
    # ECHO_LIMIT (core-gates and core-server re-export it)
    "packages/core-schema/src/wymcp/core/schema/_echo_limit.py": {"echo"},
    # Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-
    "packages/core-server/src/wymcp/core/server/_header_names.py": {"header"},
    # MODERN, LEGACY, SUPPORTED, HANDSHAKE
    "packages/core-server/src/wymcp/core/server/_revision.py": {"version"},
    # SCOPE_TOKEN (RFC 6749 scope-token), exported by core-schema
    "packages/core-schema/src/wymcp/core/schema/_scopes.py": {"scope"},
}
"""The modules that define the vocabulary, and what each may spell."""

"""Copies in modules other branches of issue 14 rewrite: empty it after merging.

Each entry is exact (path and kind): a new copy anywhere else still fails.
"""

ECHO = 120
HEADERS = frozenset(
    {"mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name"}
)
PARAM_PREFIX = "mcp-param-"
VERSIONS = frozenset(
    {"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
)
SCOPE_SYNTAX = r"\x21\x23-\x5b\x5d-\x7e"
_RETRY_TEXT = re.compile(r"retry-after\s*:\s*[0-9]", re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (free to name codes)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for statement in body:
            if isinstance(statement, ast.Expr) and isinstance(
                statement.value, ast.Constant
            ):
                found.add(id(statement.value))
    return found


def _is_code(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
        and 32000 <= node.operand.value <= 32768
    )


def _is_retry_header(node: ast.AST) -> bool:
    """A Retry-After header given a literal value (`{"Retry-After": "5"}`)."""
    if not isinstance(node, ast.Dict):
        return False
    return any(
        isinstance(key, ast.Constant)
        and isinstance(key.value, str)
        and key.value.lower() == "retry-after"
        and isinstance(value, ast.Constant)
        for key, value in zip(node.keys, node.values, strict=True)
    )


def _is_header_name(text: str) -> bool:
    """A whole constant naming an MCP header (or the Mcp-Param- prefix)."""
    lower = text.lower()
    return lower in HEADERS or lower.startswith(PARAM_PREFIX)


def findings(source: str) -> Iterator[tuple[str, int]]:
    """(kind, line) of every vocabulary literal in `source`."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if _is_code(node):
            yield "code", node.lineno
        elif isinstance(node, ast.Constant) and id(node) not in docstrings:
            if type(node.value) is int and node.value == ECHO:
                yield "echo", node.lineno
            elif isinstance(node.value, str) and _RETRY_TEXT.search(node.value):
                yield "retry", node.lineno
            elif isinstance(node.value, str) and _is_header_name(node.value):
                yield "header", node.lineno
            elif isinstance(node.value, str) and node.value in VERSIONS:
                yield "version", node.lineno
            elif isinstance(node.value, str) and SCOPE_SYNTAX in node.value:
                yield "scope", node.lineno
        elif _is_retry_header(node):
            yield "retry", node.lineno


def _modules() -> list[Path]:
    return sorted(
        path
        for path in PACKAGES.rglob("*.py")
        if "__pycache__" not in path.parts and ".venv" not in path.parts
    )


def test_the_scan_finds_each_kind_of_copy():
    source = (
        '"""A docstring may say -32603, 120 and Retry-After: 5."""\n'
        "CODE = -32601\n"
        "name = sent[:120]\n"
        'headers = {"Retry-After": "5"}\n'
        'raw = "Retry-After: 5\\r\\n"\n'
        'sid = headers.get("mcp-session-id")\n'
        'param = f"Mcp-Param-{name}"\n'
        "old = version == '2025-03-26'\n"
        'scope = re.compile(r"[\\x21\\x23-\\x5b\\x5d-\\x7e]+")\n'
        "fine = -1, 121, {'Retry-After': str(RETRY_AFTER)}, 'Send Mcp-Name.'\n"
        "fine_too = 'at 2026-07-28 the call ends'\n"
    )
    assert sorted(findings(source)) == [
        ("code", 2),
        ("echo", 3),
        ("header", 6),
        ("header", 7),
        ("retry", 4),
        ("retry", 5),
        ("scope", 9),
        ("version", 8),
    ]


def test_the_listed_modules_exist():
    for path in VOCABULARY:
        assert (ROOT / path).is_file(), path


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_spells_the_vocabulary_outside_its_home(path: Path):
    relative = path.relative_to(ROOT).as_posix()
    allowed = VOCABULARY.get(relative, set())
    stray = [
        f"{relative}:{line}: {kind}"
        for kind, line in findings(path.read_text(encoding="utf-8"))
        if kind not in allowed
    ]
    assert not stray, (
        "import the constant (wymcp.core.server: INTERNAL_ERROR, ..., RETRY_AFTER, "
        "SESSION_HEADER, ..., MODERN, SUPPORTED; wymcp.core.schema: ECHO_LIMIT, "
        f"SCOPE_TOKEN) instead of spelling it: {stray}"
    )
