"""The bench's agent on the OpenAI Agents SDK with Temporal's integration.

A conversation is a Temporal workflow (Booker, its ID the conversation's);
each user message is an update ("send") that runs the agent (Runner.run,
the model call an activity of the integration's plugin) over the
conversation so far and returns its answer. "Book a trip" -> "Where to?";
the city -> "Booked <city>", with the book_trip tool (an activity) in the
tool variant. The workflow waits for the answer between the two, and ends
after the booking. The model is at OPENAI_BASE_URL (the bench's fake),
spoken to with Chat Completions.

    python worker.py TEMPORAL_ADDRESS
"""

import asyncio
import sys
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin
from temporalio.openai_agents.workflow import activity_as_tool

with workflow.unsafe.imports_passed_through():
    from agents import Agent, Runner
    from agents.models.openai_provider import OpenAIProvider

TASK_QUEUE = "peers"
PROMPT = "You book trips. Ask the user where to, then book it."


@activity.defn
async def book_trip(city: str) -> str:
    """Books a trip to a city."""
    return f"Booked {city}"


@workflow.defn
class Booker:
    @workflow.init
    def __init__(self, tools: bool) -> None:
        # Set before the first update (update-with-start) runs.
        self.tools = tools
        self.items: list = []
        self.done = False
        self.lock = asyncio.Lock()

    @workflow.run
    async def run(self, tools: bool) -> None:
        await workflow.wait_condition(lambda: self.done and workflow.all_handlers_finished())

    @workflow.update
    async def send(self, text: str) -> str:
        async with self.lock:
            tools = [activity_as_tool(book_trip, start_to_close_timeout=timedelta(seconds=30))] if self.tools else []
            agent = Agent(name="booker", instructions=PROMPT, model="fake", tools=tools)
            result = await Runner.run(agent, self.items + [{"role": "user", "content": text}])
            self.items = result.to_input_list()
            answer = str(result.final_output)
            if answer.startswith("Booked"):
                self.done = True
            return answer


async def main(address: str) -> None:
    plugin = OpenAIAgentsPlugin(
        model_params=ModelActivityParameters(start_to_close_timeout=timedelta(seconds=30)),
        model_provider=OpenAIProvider(use_responses=False),
    )
    client = await Client.connect(address, plugins=[plugin])
    worker = Worker(client, task_queue=TASK_QUEUE, workflows=[Booker], activities=[book_trip])
    print("ready", flush=True)
    await worker.run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
