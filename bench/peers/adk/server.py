"""The bench's agent on Google ADK, served by ADK's A2A server (to_a2a).

An LlmAgent on LiteLLM's OpenAI-compatible client (the model at
OPENAI_BASE_URL, the bench's fake). "Book a trip" -> "Where to?"; the city,
sent in the same A2A context, -> "Booked <city>", through the book_trip tool
in the tool variant. Sessions (the conversation) and A2A tasks are kept in
SQLite (DatabaseSessionService, a2a-sdk's DatabaseTaskStore), not in memory,
so a restarted server finds them.

    python server.py PORT booker|booker-tools DATABASE
"""

import os
import sys
from contextlib import asynccontextmanager

import uvicorn
from a2a.server.tasks import DatabaseTaskStore
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService
from sqlalchemy.ext.asyncio import create_async_engine

PROMPT = "You book trips. Ask the user where to, then book it."


def book_trip(city: str) -> str:
    """Books a trip to a city."""
    return f"Booked {city}"


def main(port: int, variant: str, database: str) -> None:
    model = LiteLlm(model="openai/fake", api_base=os.environ["OPENAI_BASE_URL"], api_key=os.environ.get("OPENAI_API_KEY", "none"))
    agent = LlmAgent(
        name=variant.replace("-", "_"),
        model=model,
        instruction=PROMPT,
        tools=[book_trip] if variant == "booker-tools" else [],
    )
    # Sessions and tasks in files of their own, each writer waiting up to 30 s
    # for SQLite's lock (the default 5 s gives "database is locked" with 8
    # clients on 2 cores).
    wait = {"connect_args": {"timeout": 30}}
    sessions = DatabaseSessionService(db_url="sqlite+aiosqlite:///" + database, **wait)
    runner = Runner(app_name=agent.name, agent=agent, session_service=sessions)
    engine = create_async_engine("sqlite+aiosqlite:///" + database + "-tasks", **wait)

    @asynccontextmanager
    async def lifespan(app):
        yield
        await engine.dispose()

    app = to_a2a(agent, host="127.0.0.1", port=port, runner=runner, task_store=DatabaseTaskStore(engine=engine), lifespan=lifespan)
    print("ready", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3])
