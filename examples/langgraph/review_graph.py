"""A LangGraph graph that asks a person through askbridge, and goes on when
askbridge's webhook brings the answer.

1. The graph's `review` node calls `interrupt()` with the ask: the graph
   stops, its state kept by the checkpointer under a `thread_id`.
2. The app sends that ask to askbridge with a `callback_url` pointing to
   the small webhook endpoint below, and remembers which graph thread the
   ask belongs to. Nothing waits: the process could serve other graphs.
3. When the person answers (in a chat or on askbridge's web page),
   askbridge POSTs the ended ask to the endpoint. The handler checks the
   signature, answers 200 at once, and resumes the graph with
   `Command(resume=outcome)`: `interrupt()` returns the outcome.

See README.md beside this file for how to run it.
"""

from __future__ import annotations

import os
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Set, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from askbridge import Client, Outcome, WebhookEvent, WebhookVerificationError, verify_webhook

ASKBRIDGE_URL = os.environ.get("ASKBRIDGE_SERVER", "http://127.0.0.1:8790")
ASKBRIDGE_TOKEN = os.environ.get("ASKBRIDGE_API_TOKEN")
# The daemon's secret(s): ASKBRIDGE_WEBHOOK_SECRET, comma-separated while rotating.
WEBHOOK_SECRETS = os.environ["ASKBRIDGE_WEBHOOK_SECRET"].split(",")
HOOK_HOST, HOOK_PORT = "127.0.0.1", 8791
CALLBACK_URL = f"http://{HOOK_HOST}:{HOOK_PORT}/askbridge"


# --- The graph -----------------------------------------------------------


class State(TypedDict, total=False):
    change: str
    decision: str
    note: str


def review(state: State) -> Dict[str, Any]:
    """Ask a person whether to apply the change.

    On the first run `interrupt()` stops the graph and hands the ask to the
    app. When the graph is resumed, this node runs again from the top and
    `interrupt()` returns the resume value: the outcome. (So nothing before
    `interrupt()` should have side effects.)
    """
    answer = interrupt(
        {
            "title": "Deploy review",
            "context": {"text": state["change"], "language": "diff"},
            "questions": [
                {"id": "decision", "question": "Apply this change to production?", "options": ["Apply", "Hold"]},
                {"id": "note", "question": "Anything to tell the agent?", "type": "text", "required": False},
            ],
            "timeoutSeconds": 1800,
        }
    )
    outcome = Outcome.model_validate(answer)
    if outcome.status != "answered":
        return {"decision": f"no answer ({outcome.reason})", "note": ""}
    return {
        "decision": outcome.answers["decision"][0],
        "note": "\n".join(outcome.answers.get("note", [])),
    }


finished = threading.Event()


def report(state: State) -> Dict[str, Any]:
    print(f"decision: {state['decision']}; note: {state.get('note') or '-'}")
    finished.set()
    return {}


builder = StateGraph(State)
builder.add_node("review", review)
builder.add_node("report", report)
builder.add_edge(START, "review")
builder.add_edge("review", "report")
builder.add_edge("report", END)
# A checkpointer keeps the stopped graph's state; use a persistent one
# (SQLite, Postgres) when the process may restart while an ask is open.
graph = builder.compile(checkpointer=InMemorySaver())


# --- The app: send the ask, resume on the webhook -------------------------

client = Client(ASKBRIDGE_URL, token=ASKBRIDGE_TOKEN)
lock = threading.Lock()
threads_by_ask: Dict[str, str] = {}  # askbridge ask id -> LangGraph thread_id
seen_deliveries: Set[str] = set()  # askbridge retries a delivery with the same id


def start(change: str) -> None:
    """Run the graph until it asks, then send the ask to askbridge."""
    thread_id = str(uuid.uuid4())
    result = graph.invoke({"change": change}, {"configurable": {"thread_id": thread_id}})
    for pending in result.get("__interrupt__", []):
        # The lock keeps a very quick answer's webhook from looking up the
        # ask before it is recorded.
        with lock:
            ask = client.ask(pending.value, callback_url=CALLBACK_URL)
            threads_by_ask[ask.id] = thread_id
        print(f"asked {ask.id}; answer it at {ASKBRIDGE_URL}/")


def resume(event: WebhookEvent) -> None:
    """Resume the graph the ended ask belongs to, with its outcome."""
    with lock:
        thread_id = threads_by_ask.pop(event.ask.id, None)
    if thread_id is None:
        return  # not ours, or already resumed
    outcome = event.ask.model_dump(mode="json", by_alias=True)
    graph.invoke(Command(resume=outcome), {"configurable": {"thread_id": thread_id}})


class WebhookHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:
            payload = verify_webhook(body, self.headers.get("askbridge-signature"), WEBHOOK_SECRETS)
        except WebhookVerificationError:
            self.send_response(401)
            self.end_headers()
            return
        event = WebhookEvent.model_validate(payload)
        # Answer at once (askbridge gives up on a delivery after 10 s and
        # retries it); the graph runs on in a thread of its own.
        self.send_response(200)
        self.end_headers()
        with lock:
            repeat = event.delivery_id in seen_deliveries
            seen_deliveries.add(event.delivery_id)
        if event.event == "ask.ended" and isinstance(event.ask, Outcome) and not repeat:
            threading.Thread(target=resume, args=(event,)).start()


def main() -> None:
    server = ThreadingHTTPServer((HOOK_HOST, HOOK_PORT), WebhookHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        start("- replicas: 2\n+ replicas: 6")
        finished.wait()
    finally:
        server.shutdown()
        client.close()


if __name__ == "__main__":
    main()
