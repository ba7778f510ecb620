"""Each task as the resource `task://{id}`, and the `plan` prompt.

Direct calls first, then through an in-process server built from the demo's
settings module (fresh instances on a temporary database).
"""

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from wymcp.conf import load_settings
from wymcp.core.server import ResourceNotFoundError
from wymcp.transport.aiohttp import create_app
from wymcp_tasks import PlanningPrompt, Projects, TodoResource, Todos

TODAY = date(2026, 6, 15)
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "tasks.sqlite3"


@pytest.fixture
def tasks(database: Path) -> Todos:
    return Todos(database=database, today=lambda: TODAY)


async def create(tasks: Todos, **data: Any) -> int:
    result = await tasks.run_action("create", {"priority": 3, **data}, None)
    return int(result["task"]["id"])


# the resource ------------------------------------------------------------------


async def test_a_task_reads_as_the_json_the_tool_answers(
    database: Path, tasks: Todos
) -> None:
    task_id = await create(tasks, title="Renew passport", due="2026-06-01")
    resource = TodoResource(database=database, today=lambda: TODAY)
    text = await resource.read(f"task://{task_id}", {"id": str(task_id)}, None)
    assert (
        json.loads(text)
        == (await tasks.run_action("get", {"id": task_id}, None))["task"]
    )
    assert json.loads(text)["overdue"] is True


@pytest.mark.parametrize("raw", ["7", "0", "-1", "01", "abc", "²", "9" * 17, ""])
async def test_a_missing_or_malformed_id_cannot_be_read(
    database: Path, raw: str
) -> None:
    resource = TodoResource(database=database)
    with pytest.raises(ResourceNotFoundError):
        await resource.read(f"task://{raw}", {"id": raw}, None)


async def test_completion_suggests_existing_ids(database: Path, tasks: Todos) -> None:
    for index in range(12):
        await create(tasks, title=f"t{index}")
    resource = TodoResource(database=database)
    assert await resource.complete("id", "1", {}) == ["12", "11", "10", "1"]
    assert len(await resource.complete("id", "", {})) == 12
    assert await resource.complete("id", "x", {}) == []
    assert await resource.complete("id", "0", {}) == []
    assert await resource.complete("id", "9" * 100, {}) == []
    assert await resource.complete("other", "1", {}) == []


# the prompt --------------------------------------------------------------------


async def test_the_plan_quotes_the_tasks_not_done_overdue_first(
    database: Path, tasks: Todos
) -> None:
    await create(tasks, title="Later", due="2026-07-01")
    await create(tasks, title="Late", due="2026-06-01")
    await create(tasks, title="Undated")
    done = await create(tasks, title="Finished")
    await tasks.run_action("complete", {"id": done}, None)
    prompt = PlanningPrompt(database=database, today=lambda: TODAY)
    text = await prompt.render({"days": "3"}, None)
    assert isinstance(text, str)
    assert "Today is 2026-06-15. Plan my next 3 days." in text
    assert "3 tasks are not done (1 overdue)" in text
    assert text.index('"Late"') < text.index('"Later"') < text.index('"Undated"')
    assert "Finished" not in text


async def test_the_plan_can_keep_to_one_project(database: Path, tasks: Todos) -> None:
    await Projects(database=database).run_action("create", {"project": "site"}, None)
    await create(tasks, title="In the project", project="site")
    await create(tasks, title="Elsewhere")
    text = await PlanningPrompt(database=database).render({"project": "site"}, None)
    assert "in project site" in text
    assert "In the project" in text
    assert "Elsewhere" not in text


async def test_with_nothing_to_do_the_plan_says_so(database: Path) -> None:
    text = await PlanningPrompt(database=database, today=lambda: TODAY).render({}, None)
    assert "no open tasks" in text
    assert "next 7 days" in text


# through the server ------------------------------------------------------------


@pytest.fixture
async def client(
    database: Path, aiohttp_client: Any, monkeypatch: pytest.MonkeyPatch
) -> TestClient:
    # The settings' LIFESPAN opens this same file (not one in the working dir).
    monkeypatch.setenv("TASKS_DEMO_DB", str(database))
    settings = load_settings(
        "wymcp_tasks.settings",
        TOOLS=[Todos(database=database), Projects(database=database)],
        RESOURCES=[TodoResource(database=database)],
        PROMPTS=[PlanningPrompt(database=database)],
    )
    return await aiohttp_client(create_app(settings))


async def rpc(
    client: TestClient, method: str, params: dict[str, Any], name: str
) -> Any:
    response = await client.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": method,
            "params": {**params, "_meta": META},
        },
        headers={
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": method,
            **({"Mcp-Name": name} if name else {}),
        },
    )
    return response.status, await response.json()


async def test_the_server_lists_the_template_and_reads_a_task(
    client: TestClient, database: Path
) -> None:
    task_id = await create(Todos(database=database), title="Served")
    status, listed = await rpc(client, "resources/templates/list", {}, "")
    assert status == 200
    [template] = listed["result"]["resourceTemplates"]
    assert template["uriTemplate"] == "task://{id}"
    uri = f"task://{task_id}"
    status, read = await rpc(client, "resources/read", {"uri": uri}, uri)
    assert status == 200
    [contents] = read["result"]["contents"]
    assert contents["mimeType"] == "application/json"
    assert json.loads(contents["text"])["title"] == "Served"
    status, missing = await rpc(
        client, "resources/read", {"uri": "task://99"}, "task://99"
    )
    assert "error" in missing
    assert "Traceback" not in json.dumps(missing)


async def test_the_server_renders_the_plan_and_gates_its_arguments(
    client: TestClient,
) -> None:
    status, got = await rpc(
        client, "prompts/get", {"name": "plan", "arguments": {"days": "5"}}, "plan"
    )
    assert status == 200
    [message] = got["result"]["messages"]
    assert message["role"] == "user"
    assert "next 5 days" in message["content"]["text"]
    for bad in ({"days": "0"}, {"days": "a week"}, {"sprint": "1"}):
        status, refused = await rpc(
            client, "prompts/get", {"name": "plan", "arguments": bad}, "plan"
        )
        assert refused["error"]["code"] == -32602
        assert "a week" not in json.dumps(refused)
