"""The demo's public facade: a sorted `__all__` whose every name exists."""

import wymcp_tasks

EXPECTED = [
    "DATABASE_ENVIRONMENT_VARIABLE",
    "PlanningPrompt",
    "Project",
    "Projects",
    "StoreError",
    "Todo",
    "TodoResource",
    "TodoStore",
    "Todos",
    "database_path",
    "lifespan",
]


def test_the_facade_exports_exactly_the_public_names() -> None:
    assert wymcp_tasks.__all__ == EXPECTED
    assert sorted(wymcp_tasks.__all__) == wymcp_tasks.__all__


def test_every_exported_name_exists() -> None:
    for name in wymcp_tasks.__all__:
        assert hasattr(wymcp_tasks, name), name


def test_the_settings_module_reads_nothing_at_import() -> None:
    import importlib

    settings = importlib.import_module("wymcp_tasks.settings")
    assert settings.TOOLS == ["wymcp_tasks.Todos", "wymcp_tasks.Projects"]
    names = {name for name in vars(settings) if not name.startswith("_")}
    assert all(name.isupper() for name in names), names
