"""Answer: the parts of a JSON-RPC answer a test reads."""

from __future__ import annotations

import json

from wymcp.testing import Answer, assert_tool_error


def tool_answer(result: dict, messages: tuple = ()) -> Answer:
    return Answer(
        status=200,
        response={"jsonrpc": "2.0", "id": 1, "result": result},
        messages=messages,
    )


def test_structured_content_is_the_value_when_there_is_one():
    answer = tool_answer(
        {
            "content": [{"type": "text", "text": '{"a":1,"hints":[]}'}],
            "structuredContent": {"a": 1},
            "isError": False,
        }
    )
    assert answer.value == {"a": 1}
    assert answer.structured == {"a": 1}
    assert answer.is_error is False
    assert answer.error is None


def test_the_first_text_block_is_decoded_else_the_text_is_the_value():
    assert tool_answer({"content": [{"type": "text", "text": "[1, 2]"}]}).value == [
        1,
        2,
    ]
    assert tool_answer({"content": [{"type": "text", "text": "null"}]}).value is None
    plain = tool_answer(
        {"content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "you"}]}
    )
    assert plain.value == "hi\nyou"
    assert plain.text == "hi\nyou"
    assert tool_answer({"content": []}).value is None


def test_a_refusal_is_a_single_json_block_with_an_error_code():
    refusal = {
        "error": "unknown_action",
        "message": "Unknown action.",
        "help": 'help {tool: "t"}',
    }
    answer = tool_answer(
        {"content": [{"type": "text", "text": json.dumps(refusal)}], "isError": True}
    )
    assert answer.refusal == refusal
    tool_error = tool_answer(
        {
            "content": [{"type": "text", "text": "Order 7 does not exist."}],
            "isError": True,
        }
    )
    assert tool_error.refusal is None
    assert tool_error.is_error


def test_a_tool_error_with_hints_is_not_a_refusal():
    payload = {
        "error": "No task 7.",
        "hints": [{"tool": "tasks", "action": "list", "description": "List tasks"}],
    }
    answer = tool_answer(
        {"content": [{"type": "text", "text": json.dumps(payload)}], "isError": True}
    )
    assert answer.refusal is None
    assert "No task 7." in assert_tool_error(answer)


def test_a_json_rpc_error_has_no_result():
    answer = Answer(
        status=400,
        response={"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "x"}},
    )
    assert answer.result is None
    assert answer.error == {"code": -32602, "message": "x"}
    assert answer.content == []
    assert answer.value is None
    assert Answer(status=202).result is None
    assert Answer(status=202).error is None


def test_streamed_messages_split_into_notifications_requests_progress_and_logs():
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "t", "progress": 1},
    }
    log = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "x"},
    }
    ask = {"jsonrpc": "2.0", "id": "s1", "method": "roots/list", "params": {}}
    answer = tool_answer({"content": []}, (progress, ask, log))
    assert answer.notifications == [progress, log]
    assert answer.requests == [ask]
    assert answer.progress == [{"progressToken": "t", "progress": 1}]
    assert answer.logs == [{"level": "info", "data": "x"}]
