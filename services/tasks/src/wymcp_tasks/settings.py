"""Settings for the tasks demo: `wymcp serve --settings wymcp_tasks.settings`.

A settings module is plain Python with UPPERCASE names, read once when the
server is set up. The database file comes from `TASKS_DEMO_DB` (default
`~/.local/share/wymcp-tasks/tasks.sqlite3`); LIFESPAN opens it per worker.
"""

TOOLS = [
    "wymcp_tasks.Todos",
    "wymcp_tasks.Projects",
]
# Each task as task://{id}, and a prompt that plans the next days.
RESOURCES = ["wymcp_tasks.TodoResource"]
PROMPTS = ["wymcp_tasks.PlanningPrompt"]
# One TodoStore per worker, shared by the tools, the resource and the prompt.
LIFESPAN = "wymcp_tasks.lifespan"

SERVER_NAME = "wymcp-tasks"
SERVER_VERSION = "0.1.0"
INSTRUCTIONS = (
    "A task tracker. Use the tasks tool to create, list, update, complete and"
    " search tasks, and the projects tool to group them. Every answer carries"
    " today's date and the number of overdue tasks under `context`. When a call"
    " is refused, call help with the tool and action it names."
)

# The defaults, spelled out so a reader sees what `serve` does.
HOST = "127.0.0.1"
PORT = 8000
PATH = "/mcp"
STRICT = True
