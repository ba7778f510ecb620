import wymcp.core.gates


def test_the_public_names_of_core_gates_are_pinned():
    assert wymcp.core.gates.__all__ == [
        "Verdict",
        "arguments_refusal",
        "check",
        "check_fast",
        "help_pointer",
        "plain_refusal",
        "render_path",
    ]


def test_every_public_name_of_core_gates_resolves():
    for name in wymcp.core.gates.__all__:
        assert getattr(wymcp.core.gates, name) is not None
