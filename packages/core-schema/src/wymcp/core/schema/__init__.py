"""Declaring wymcp tools: Tool, Action and @action, registration checks, schemas.

Also the key-set closure, the compiled value roots the gates read, and the MCP
2026-07-28 header annotations with their `Mcp-Param` value codec.
"""

from wymcp.core.schema._action import Action
from wymcp.core.schema._action_decorator import action
from wymcp.core.schema._bindings import (
    action_binding,
    action_output_schema,
    action_reader,
    dispatch_action,
)
from wymcp.core.schema._constraints import (
    Description,
    Format,
    Ge,
    Gt,
    Le,
    Lt,
    MaxLen,
    MinLen,
    Pattern,
)
from wymcp.core.schema._context import Context
from wymcp.core.schema._declarations import (
    Prompt,
    PromptArgument,
    Resource,
    ResourceNotFoundError,
)
from wymcp.core.schema._echo_limit import ECHO_LIMIT
from wymcp.core.schema._errors import ConfigurationError, ToolError
from wymcp.core.schema._field_guide import (
    DATA_DESCRIPTION_LIMIT,
    data_description,
    published_description,
)
from wymcp.core.schema._full_schema import full_input_schema
from wymcp.core.schema._header_annotations import (
    HeaderAnnotation,
    header_annotation_problems,
    header_annotations,
)
from wymcp.core.schema._header_codec import decode_header_value, encode_header_value
from wymcp.core.schema._input_schema import action_summaries, build_input_schema
from wymcp.core.schema._key_set import close_properties, close_schema
from wymcp.core.schema._multiple_of import multiple_of_problem
from wymcp.core.schema._registration import RESERVED_NAME, prepare, prepare_all
from wymcp.core.schema._scopes import SCOPE_TOKEN, required_scopes
from wymcp.core.schema._spec import ActionSpec, ToolSpec
from wymcp.core.schema._task_support import TASK_SUPPORT, published_task_support
from wymcp.core.schema._tool import Tool
from wymcp.core.schema._unreadable import UnreadableDataError
from wymcp.core.schema._value_root import ValueNode
from wymcp.core.schema._work_budget import OverBudgetError, spend_work, work_budget

__all__ = [
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
