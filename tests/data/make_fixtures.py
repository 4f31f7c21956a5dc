"""Write the fixtures of tests/data/ that npc_nb builds from other tools' documented
formats (tests/data/README.md says where each format is documented).

Not run by the tests: run it once, from the repository's root, and commit what it
writes (``python tests/data/make_fixtures.py``). The npcpy knowledge files are written
by npcpy itself (``tests/data/npcpy/generate_with_npcpy.py``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

DATA = Path(__file__).resolve().parent


def memory_lifecycle(path: Path) -> None:
    """An older npcpy's SQLite file with its ``memory_lifecycle`` table."""
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE memory_lifecycle (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "message_id TEXT, conversation_id TEXT, npc TEXT, team TEXT, directory_path TEXT, "
        "timestamp DATETIME DEFAULT CURRENT_TIMESTAMP, initial_memory TEXT, "
        "final_memory TEXT, status TEXT, model TEXT, provider TEXT, created_at DATETIME)"
    )
    rows = [
        ("m1", "c1", "coder", "tools", "We deploy with Docker Compose", None, "human-approved"),
        ("m2", "c1", "coder", "tools", "Tests run on Python 3.10",
         "Tests run on Python 3.11 and 3.12", "human-edited"),
        ("m3", "c1", "coder", "tools", "The user prefers tabs over spaces", None, "human-rejected"),
        ("m4", "c2", "coder", "tools", "The CI runs nightly at 02:00", None, "pending_approval"),
    ]  # fmt: skip
    for number, (message, conversation, npc, team, initial, final, status) in enumerate(rows):
        stamp = f"2025-03-0{number + 1} 10:00:00"
        con.execute(
            "INSERT INTO memory_lifecycle (message_id, conversation_id, npc, team, "
            "directory_path, timestamp, initial_memory, final_memory, status, model, "
            "provider, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [message, conversation, npc, team, "/home/ada/project", stamp, initial, final,
             status, "llama3.2", "ollama", stamp],
        )  # fmt: skip
    con.commit()
    con.close()


def mem0_dump(path: Path) -> None:
    """What mem0's ``Memory.get_all()`` returns (v1.1: ``{"results": [...]}``)."""
    results = [
        {"id": "0b8e5c1e-6f1e-4a57-9b43-0f5d7a1c2e01", "memory": "Likes to travel by train",
         "hash": "4f1c2f0d7a5b3c9e8d6a1b2c3d4e5f60",
         "created_at": "2025-01-05T09:12:00.108347-08:00",
         "updated_at": "2025-01-05T09:12:00.108367-08:00", "user_id": "alex"},
        {"id": "1c9f6d2f-7a2f-4b68-8c54-1a6e8b2d3f02", "memory": "Is vegetarian",
         "hash": "5a2d3e1f8b6c4d0f9e7b2c3d4e5f6a71", "metadata": {"category": "preference"},
         "created_at": "2025-01-06T10:00:00-08:00", "updated_at": None, "user_id": "alex"},
        {"id": "2da07e3a-8b3a-4c79-9d65-2b7f9c3e4a03",
         "memory": "Answers in British English", "hash": "6b3e4f2a9c7d5e1a0f8c3d4e5f6a7b82",
         "created_at": "2025-01-07T11:30:00+00:00", "updated_at": "2025-01-08T08:00:00+00:00",
         "user_id": "alex", "agent_id": "writer", "run_id": "session-7"},
    ]  # fmt: skip
    path.write_text(json.dumps({"results": results}, indent=2) + "\n", encoding="utf-8")


def mem0_history(path: Path) -> None:
    """mem0's SQLite history table (``SQLiteManager``): an added memory, an updated one,
    a deleted one."""
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, "
        "new_memory TEXT, event TEXT, created_at DATETIME, updated_at DATETIME, "
        "is_deleted INTEGER, actor_id TEXT, role TEXT)"
    )
    events = [
        ("h1", "mem-a", None, "Works at the cell atlas lab", "ADD", 0),
        ("h2", "mem-b", None, "Uses R for plots", "ADD", 0),
        ("h3", "mem-b", "Uses R for plots", "Uses ggplot2 in R for plots", "UPDATE", 0),
        ("h4", "mem-c", None, "Lives in Berlin", "ADD", 0),
        ("h5", "mem-c", "Lives in Berlin", None, "DELETE", 1),
    ]
    for number, (row_id, memory, old, new, event, deleted) in enumerate(events):
        stamp = f"2025-02-0{number + 1}T12:00:00+00:00"
        con.execute(
            "INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [row_id, memory, old, new, event, stamp, stamp, deleted, "alex", "user"],
        )
    con.commit()
    con.close()


def letta_agent_file(path: Path) -> None:
    """A Letta agent file (``AgentFileSchema``): one agent, two memory blocks, and one
    archival passage."""
    document = {
        "agents": [
            {"id": "agent-0", "name": "companion", "agent_type": "letta_v1_agent",
             "system": "You are a helpful companion.", "block_ids": ["block-0", "block-1"],
             "tool_ids": [], "tags": [], "memory_blocks": [], "messages": [],
             "in_context_message_ids": [], "llm_config": {"model": "gpt-4o-mini"},
             "embedding_config": {"embedding_model": "text-embedding-3-small"}},
        ],
        "groups": [],
        "blocks": [
            {"id": "block-0", "label": "human", "limit": 5000, "description": "About the user",
             "metadata": {}, "read_only": False, "is_template": False,
             "value": "Name: Priya\n- Runs the proteomics core facility\n- Has two cats"},
            {"id": "block-1", "label": "preferences", "limit": 5000, "description": None,
             "metadata": {}, "read_only": False, "is_template": False,
             "value": "Prefers short answers with code first."},
        ],
        "files": [],
        "sources": [],
        "tools": [],
        "mcp_servers": [],
        "passages": [
            {"id": "passage-0", "agent_id": "agent-0", "text": "Priya's lab moved to building 4",
             "created_at": "2025-04-01T08:00:00Z"},
        ],
        "metadata": {"revision_id": "example"},
        "created_at": "2025-04-02T08:00:00Z",
    }  # fmt: skip
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    memory_lifecycle(DATA / "npcpy" / "memory_lifecycle.db")
    mem0_dump(DATA / "mem0" / "get_all.json")
    mem0_history(DATA / "mem0" / "history.db")
    letta_agent_file(DATA / "letta" / "companion.af")
