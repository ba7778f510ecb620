import wymcp.core.schema


def test_the_public_names_of_core_schema_are_pinned():
    assert wymcp.core.schema.__all__ == [
        "DATA_DESCRIPTION_LIMIT",
        "ECHO_LIMIT",
        "RESERVED_NAME",
        "SCOPE_TOKEN",
        "TASK_SUPPORT",
        "Action",
        "ActionSpec",
        "ConfigurationError",
        "Context",
        "Description",
        "Format",
        "Ge",
        "Gt",
        "HeaderAnnotation",
        "Le",
        "Lt",
        "MaxLen",
        "MinLen",
        "OverBudgetError",
        "Pattern",
        "Prompt",
        "PromptArgument",
        "Resource",
        "ResourceNotFoundError",
        "Tool",
        "ToolError",
        "ToolSpec",
        "UnreadableDataError",
        "ValueNode",
        "action",
        "action_binding",
        "action_output_schema",
        "action_reader",
        "action_summaries",
        "build_input_schema",
        "close_properties",
        "close_schema",
        "data_description",
        "decode_header_value",
        "dispatch_action",
        "encode_header_value",
        "full_input_schema",
        "header_annotation_problems",
        "header_annotations",
        "multiple_of_problem",
        "prepare",
        "prepare_all",
        "published_description",
        "published_task_support",
        "required_scopes",
        "spend_work",
        "work_budget",
    ]


def test_every_public_name_of_core_schema_resolves():
    for name in wymcp.core.schema.__all__:
        assert getattr(wymcp.core.schema, name) is not None


def test_the_declarations_beside_tool_are_the_ones_core_server_re_exports():
    import wymcp.core.server

    for name in ("Prompt", "PromptArgument", "Resource", "ResourceNotFoundError"):
        assert getattr(wymcp.core.server, name) is getattr(wymcp.core.schema, name)
