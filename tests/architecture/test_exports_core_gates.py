import wymcp.core.gates


def test_the_public_names_of_core_gates_are_pinned():
    assert wymcp.core.gates.__all__ == [
        "ECHO_LIMIT",
        "Verdict",
        "arguments_refusal",
        "check",
        "check_fast",
        "help_pointer",
        "plain_refusal",
        "render_path",
        "unreadable_refusal",
    ]


def test_the_echo_bound_is_one_value_from_schema_to_server():
    import wymcp.core.schema
    import wymcp.core.server

    assert wymcp.core.gates.ECHO_LIMIT == 120
    assert wymcp.core.server.ECHO_LIMIT is wymcp.core.gates.ECHO_LIMIT
    assert wymcp.core.gates.ECHO_LIMIT is wymcp.core.schema.ECHO_LIMIT


def test_every_public_name_of_core_gates_resolves():
    for name in wymcp.core.gates.__all__:
        assert getattr(wymcp.core.gates, name) is not None
