"""Whatever the gates accept, the demo's tools answer in their output schema or
refuse with a ToolError: never another exception (any Unicode, lone surrogates
included, since JSON can carry them).
"""

import asyncio
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wymcp.core.gates import check
from wymcp.core.schema import Tool, ToolError, prepare
from wymcp_tasks import Projects, Todos

ANY_TEXT = st.text(st.characters(exclude_categories=[]), max_size=60)
TITLE = st.text(st.characters(exclude_categories=[]), min_size=1, max_size=60)
DATES = st.dates(min_value=date(1, 1, 1)).map(date.isoformat)
IDS = st.integers(min_value=1, max_value=2**53 - 1)
STATUS = st.sampled_from(["open", "in_progress", "done"])
PRIORITY = st.integers(min_value=1, max_value=5)
PROJECT = st.from_regex(r"[a-z0-9][a-z0-9-]{0,10}", fullmatch=True)

CALLS = st.one_of(
    st.tuples(
        st.just("create"),
        st.fixed_dictionaries(
            {"title": TITLE},
            optional={
                "description": ANY_TEXT,
                "priority": PRIORITY,
                "due": DATES,
                "project": PROJECT,
            },
        ),
    ),
    st.tuples(
        st.just("list"),
        st.fixed_dictionaries(
            {},
            optional={
                "status": STATUS,
                "priority": PRIORITY,
                "due_before": DATES,
                "due_after": DATES,
                "project": PROJECT,
                "limit": st.integers(min_value=1, max_value=200),
            },
        ),
    ),
    st.tuples(st.just("search"), st.fixed_dictionaries({"text": TITLE})),
    st.tuples(
        st.sampled_from(["get", "complete", "delete"]),
        st.fixed_dictionaries({"id": IDS}),
    ),
    st.tuples(
        st.just("update"),
        st.fixed_dictionaries(
            {"id": st.integers(min_value=1, max_value=3), "title": TITLE},
            optional={
                "description": st.none() | ANY_TEXT,
                "status": STATUS,
                "due": st.none() | DATES,
                "project": st.none() | PROJECT,
            },
        ),
    ),
)

PROJECT_CALLS = st.one_of(
    st.tuples(
        st.sampled_from(["create", "archive"]),
        st.fixed_dictionaries({"project": PROJECT}, optional={"description": ANY_TEXT}),
    ).map(
        lambda call: (
            call[0],
            call[1] if call[0] == "create" else {"project": call[1]["project"]},
        )
    ),
    st.tuples(
        st.just("list"),
        st.fixed_dictionaries({}, optional={"include_archived": st.booleans()}),
    ),
)


@pytest.fixture
def tools(tmp_path: Path) -> Iterator[tuple[Todos, Projects]]:
    database = tmp_path / "tasks.sqlite3"
    tasks = Todos(database=database, today=lambda: date(2026, 6, 15))
    projects = Projects(database=database)
    asyncio.run(tasks.run_action("create", {"title": "seed", "priority": 3}, None))
    yield tasks, projects
    tasks.store.close()


async def answer(tool: Tool, action: str, data: dict[str, Any]) -> None:
    verdict = check(tool, action, data)
    assert verdict.accepted, verdict.refusal
    try:
        result = await tool.run_action(action, dict(verdict.data), None)
    except ToolError:
        return
    jsonschema.validate(result, prepare(tool).output_schema)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    calls=st.lists(CALLS | PROJECT_CALLS.map(lambda c: ("projects", *c)), max_size=6)
)
def test_any_accepted_call_answers_in_shape_or_refuses(
    tools: tuple[Todos, Projects], calls: list[tuple[str, ...]]
) -> None:
    tasks, projects = tools

    async def run() -> None:
        for call in calls:
            if call[0] == "projects":
                await answer(projects, call[1], call[2])  # type: ignore[arg-type]
            else:
                await answer(tasks, call[0], call[1])  # type: ignore[arg-type]

    asyncio.run(run())


def test_a_lone_surrogate_is_a_tool_error(tools: tuple[Todos, Projects]) -> None:
    tasks, projects = tools
    with pytest.raises(ToolError, match="surrogate"):
        asyncio.run(
            tasks.run_action("create", {"title": "\ud800", "priority": 3}, None)
        )
    with pytest.raises(ToolError, match="surrogate"):
        asyncio.run(tasks.run_action("search", {"text": "\udfff", "limit": 5}, None))
    with pytest.raises(ToolError, match="surrogate"):
        asyncio.run(
            projects.run_action(
                "create", {"project": "p", "description": "\ud834"}, None
            )
        )
