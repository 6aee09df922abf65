"""The bench's agent on LangGraph, with a persistent (SQLite) checkpointer.

LangGraph's own agent server (langgraph-api) persists threads only with its
licensed PostgreSQL runtime; `langgraph dev` keeps them in memory. So this is
LangGraph's prebuilt ReAct agent (create_react_agent) with the SQLite
checkpointer, behind a small HTTP server: a conversation is a thread, each
user message one run on it (POST /threads/ID/runs {"agent": ..., "input":
...} -> {"answer": ...}). "Book a trip" -> "Where to?"; the city -> "Booked
<city>", through the book_trip tool in the tool variant (agent
booker-tools). The model is at OPENAI_BASE_URL (the bench's fake).

    python server.py PORT DATABASE
"""

import json
import os
import sqlite3
import sys
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.sqlite import SqliteSaver

warnings.filterwarnings("ignore")
from langgraph.prebuilt import create_react_agent  # noqa: E402

PROMPT = "You book trips. Ask the user where to, then book it."


@tool
def book_trip(city: str) -> str:
    """Books a trip to a city."""
    return f"Booked {city}"


def agents(database: str) -> dict:
    conn = sqlite3.connect(database, check_same_thread=False)
    saver = SqliteSaver(conn)
    model = ChatOpenAI(model="fake", base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ.get("OPENAI_API_KEY", "none"), max_retries=0)
    return {
        "booker": create_react_agent(model, [], prompt=PROMPT, checkpointer=saver),
        "booker-tools": create_react_agent(model, [book_trip], prompt=PROMPT, checkpointer=saver),
    }


def main(port: int, database: str) -> None:
    graphs = agents(database)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body go out in two small writes: with Nagle's
        # algorithm on, the second waits for the client's delayed ACK (about
        # 40 ms on Linux) on a keep-alive connection, which the bench measured
        # as LangGraph's turn. Servers people deploy (uvicorn, gunicorn) set
        # TCP_NODELAY too.
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def reply(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.reply(200, {"ok": True})

        def do_POST(self):
            parts = self.path.strip("/").split("/")
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if len(parts) != 3 or parts[0] != "threads" or parts[2] != "runs" or body.get("agent") not in graphs:
                self.reply(404, {"error": "not found"})
                return
            try:
                out = graphs[body["agent"]].invoke(
                    {"messages": [{"role": "user", "content": body["input"]}]},
                    {"configurable": {"thread_id": parts[1]}},
                )
                self.reply(200, {"answer": out["messages"][-1].content})
            except Exception as e:  # the driver counts it as a failed turn
                self.reply(500, {"error": str(e)})

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
