"""Drives an a2aflow server with the official A2A Python SDK (a2a-sdk).

One protocol binding and version per run; what the client observed is
printed as one JSON object on stdout. tests/python_test.go runs it and
compares the report with what the Go clients observe (tests/compat_test.go),
so the expectations of the travel matrix live in one place; the methods
beyond the matrix (ListTasks, the push config methods, an unsupported
content type) are reported under "more".

    python a2a_client.py <base URL> <JSONRPC|HTTP+JSON|GRPC> <1.0|0.3> <webhook URL>

The client is the SDK's ClientFactory, made from the card's interfaces of
the asked version and binding: its 1.0 transports, or its v0.3 compat
transports (a2a.compat.v0_3) for a 0.3 interface. A scenario that raises
unexpectedly is reported under "failures" and leaves its field empty, so the
Go test shows both.
"""

import asyncio
import json
import re
import sys
import uuid

import grpc
import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as a2a_errors


# wire records, for every A2A request, the binding it used (JSON-RPC posts to
# the base URL, HTTP+JSON uses paths under it, gRPC is gRPC) and its
# A2A-Version header or metadata, which the server chooses the protocol
# version by.
wire = set()


def note_http(base_path):
    async def hook(request):
        path = request.url.path.rstrip('/')
        kind = 'JSONRPC' if path == base_path else 'HTTP+JSON'
        wire.add(f'{kind} {request.headers.get("A2A-Version", "none")}')

    return hook


def grpc_version(metadata):
    for key, value in metadata or ():
        if key.lower() == 'a2a-version':
            return value
    return 'none'


class WireUnary(grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, details, request):
        wire.add('GRPC ' + grpc_version(details.metadata))
        return await continuation(details, request)


class WireStream(grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation, details, request):
        wire.add('GRPC ' + grpc_version(details.metadata))
        return await continuation(details, request)


def grpc_channel(url):
    target = re.sub(r'^(grpc|https?)://', '', url)
    return grpc.aio.insecure_channel(target, interceptors=[WireUnary(), WireStream()])


STATE = {v: k for k, v in pb.TaskState.items()}
ROLE = {v: k for k, v in pb.Role.items()}


def message(text, task_id=''):
    return pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)], task_id=task_id)


def text_of(msg):
    return ''.join(p.text for p in msg.parts if p.HasField('text'))


def label(ev):
    """Renders a stream event as the Go tests do: task:STATE, status:STATE, artifact:NAME."""
    kind = ev.WhichOneof('payload')
    if kind == 'task':
        return 'task:' + STATE[ev.task.status.state]
    if kind == 'status_update':
        return 'status:' + STATE[ev.status_update.status.state]
    if kind == 'artifact_update':
        return 'artifact:' + ev.artifact_update.artifact.name
    if kind == 'message':
        return 'message'
    return 'unknown:' + str(ev)


CODE_NAMES = {
    -32001: 'TaskNotFound',
    -32002: 'TaskNotCancelable',
    -32004: 'UnsupportedOperation',
    -32005: 'ContentTypeNotSupported',
    -32602: 'InvalidParams',
}


def error_name(e):
    """Names an error the way the Go side does: the A2A error class without its
    "Error" suffix when the SDK typed it. When it did not, but its message
    carries the JSON-RPC code the server sent, the name gets " (untyped)"."""
    name = type(e).__name__
    if isinstance(e, a2a_errors.A2AError) and name not in ('A2AError', 'A2AClientError') and name.endswith('Error'):
        return name[: -len('Error')]
    msg = str(e)
    m = re.search(r'(-320\d\d)', msg)
    if m and int(m.group(1)) in CODE_NAMES:
        return CODE_NAMES[int(m.group(1))] + ' (untyped)'
    # The SDK's 0.3 gRPC client types only a status whose message starts
    # with the error's Python class name; others keep the status code.
    m = re.match(r'gRPC Error ([A-Z_]+):', msg)
    if m:
        return f'gRPC {m.group(1)} (untyped)'
    return f'other: {name}: {msg}'


async def expect_error(fn):
    try:
        got = await fn()
    except Exception as e:  # noqa: BLE001 - the error is the observation
        return error_name(e)
    if isinstance(got, list):
        return f'no error, events [{" ".join(got)}]'
    return 'no error'


async def collect(stream, on_event=None):
    got = []
    async for ev in stream:
        got.append(label(ev))
        if on_event:
            await on_event(ev, len(got))
    return got


async def main():
    base_url, binding, version, hook = sys.argv[1:5]
    base_path = httpx.URL(base_url).path.rstrip('/')
    report = {'failures': {}, 'more': {}}

    async def scenario(name, fn):
        try:
            await fn()
        except Exception as e:  # noqa: BLE001 - reported, not raised
            report['failures'][name] = f'{type(e).__name__}: {e}'

    async with httpx.AsyncClient(timeout=60, event_hooks={'request': [note_http(base_path)]}) as http:
        full = await A2ACardResolver(httpx.AsyncClient(timeout=30), base_url).get_agent_card()
        report['card'] = {
            'name': full.name,
            'streaming': full.capabilities.streaming,
            'interfaces': [f'{i.protocol_binding} {i.protocol_version}' for i in full.supported_interfaces],
        }
        # The card lists every interface; the client is made from the
        # interface of the asked binding and version, as a client of that
        # version alone sees the card.
        card = pb.AgentCard()
        card.CopyFrom(full)
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(
            i for i in full.supported_interfaces if i.protocol_version == version and i.protocol_binding == binding
        )

        def make(streaming):
            config = ClientConfig(
                streaming=streaming,
                httpx_client=http,
                grpc_channel_factory=grpc_channel,
                supported_protocol_bindings=[binding],
            )
            return ClientFactory(config).create(card)

        client, streamer = make(False), make(True)

        async def send(text, task_id='', **config):
            request = pb.SendMessageRequest(message=message(text, task_id))
            if config:
                request.configuration.CopyFrom(pb.SendMessageConfiguration(**config))
            got = [ev async for ev in client.send_message(request)]
            if len(got) != 1 or got[0].WhichOneof('payload') != 'task':
                raise RuntimeError(f'SendMessage answered {got}, want one task')
            return got[0].task

        completed = None

        async def send_message():
            nonlocal completed
            task = await send('Book a flight')
            steps = [f'{STATE[task.status.state]} {text_of(task.status.message)}']
            for answer in ('Lisbon', '2026-12-24', '2'):
                task = await send(answer, task.id)
                said = '' if task.status.state == pb.TASK_STATE_COMPLETED else ' ' + text_of(task.status.message)
                steps.append(STATE[task.status.state] + said)
            report['sendMessage'] = steps
            artifact = task.artifacts[0] if task.artifacts else pb.Artifact()
            data = {}
            if artifact.parts and artifact.parts[0].HasField('data'):
                from google.protobuf.json_format import MessageToDict

                data = MessageToDict(artifact.parts[0].data)
            ref = str(data.get('reference', ''))
            report['booking'] = {
                'artifacts': len(task.artifacts),
                'name': artifact.name,
                'destination': data.get('destination', ''),
                'date': data.get('date', ''),
                'travellers': int(data.get('travellers', 0)),
                'reference': 'AF-XXXXXX' if re.fullmatch(r'AF-[A-Z0-9]{6}', ref) else ref,
            }
            completed = task

        await scenario('SendMessage', send_message)

        async def get_task():
            if completed is None:
                raise RuntimeError('no completed task (SendMessage failed)')
            full_task = await client.get_task(pb.GetTaskRequest(id=completed.id))
            none = await client.get_task(pb.GetTaskRequest(id=completed.id, history_length=0))
            two = await client.get_task(pb.GetTaskRequest(id=completed.id, history_length=2))
            report['getTask'] = {
                'state': STATE[full_task.status.state],
                'roles': [ROLE[m.role] for m in full_task.history],
                'historyLength0': len(none.history),
                'historyLength2': len(two.history),
            }

        await scenario('GetTask', get_task)

        cancel_again = None

        async def cancel_task():
            nonlocal cancel_again
            task = await send('Book a flight')
            canceled = await client.cancel_task(pb.CancelTaskRequest(id=task.id))
            got = await client.get_task(pb.GetTaskRequest(id=task.id))
            report['cancelTask'] = {'canceled': STATE[canceled.status.state], 'getTask': STATE[got.status.state]}
            cancel_again = await expect_error(lambda: streamer.cancel_task(pb.CancelTaskRequest(id=task.id)))

        await scenario('CancelTask', cancel_task)

        async def send_streaming():
            steps = []
            task_id = ''
            for answer in ('Book a flight', 'Lisbon', '2026-12-24', '2'):

                async def on_event(ev, _n):
                    nonlocal task_id
                    if ev.WhichOneof('payload') == 'task':
                        task_id = ev.task.id

                request = pb.SendMessageRequest(message=message(answer, task_id))
                steps.append(await collect(streamer.send_message(request), on_event))
            report['sendStreamingMessage'] = steps

        await scenario('SendStreamingMessage', send_streaming)

        async def subscribe():
            task = await send('Book a flight')
            # The subscription's first event is the current task: once it
            # arrived the subscription is live and the answers can go.
            live = asyncio.Event()

            async def on_event(_ev, n):
                if n == 1:
                    live.set()

            events = asyncio.ensure_future(collect(streamer.subscribe(pb.SubscribeToTaskRequest(id=task.id)), on_event))
            waiter = asyncio.ensure_future(live.wait())
            await asyncio.wait([events, waiter], return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            for answer in ('Lisbon', '2026-12-24', '2'):
                await send(answer, task.id)
            report['subscribeToTask'] = await events

        await scenario('SubscribeToTask', subscribe)

        async def errors():
            unknown = 'no-such-task'
            errs = {
                'GetTask unknown task': await expect_error(lambda: client.get_task(pb.GetTaskRequest(id=unknown))),
                'CancelTask unknown task': await expect_error(
                    lambda: client.cancel_task(pb.CancelTaskRequest(id=unknown))
                ),
                'SendMessage unknown task': await expect_error(lambda: send('hi', unknown)),
                'SubscribeToTask unknown task': await expect_error(
                    lambda: collect(streamer.subscribe(pb.SubscribeToTaskRequest(id=unknown)))
                ),
            }
            if cancel_again:
                errs['CancelTask canceled task'] = cancel_again
            if completed is not None:
                errs['SendMessage completed task'] = await expect_error(lambda: send('more', completed.id))
                errs['SubscribeToTask completed task'] = await expect_error(
                    lambda: collect(streamer.subscribe(pb.SubscribeToTaskRequest(id=completed.id)))
                )
            report['errors'] = errs

        await scenario('errors', errors)

        more = report['more']
        task = None

        async def list_tasks():
            nonlocal task
            task = await send('Book a flight')
            page = await client.list_tasks(pb.ListTasksRequest(context_id=task.context_id, page_size=10))
            more['listTasks'] = [t.id for t in page.tasks]
            more['taskId'] = task.id

        await scenario('ListTasks', list_tasks)

        async def push_configs():
            # Each step's result is reported as it comes, so that a later
            # failure leaves the earlier ones checked.
            t = task or await send('Book a flight')
            more['pushTaskId'] = t.id
            cid = 'py-' + uuid.uuid4().hex[:8]
            push = more['push'] = {'id': cid}
            created = await client.create_task_push_notification_config(
                pb.TaskPushNotificationConfig(task_id=t.id, id=cid, url=hook, token='tok-py-0123456789')
            )
            push['created'] = f'{created.id} {created.task_id} {created.url}'
            got = await client.get_task_push_notification_config(
                pb.GetTaskPushNotificationConfigRequest(task_id=t.id, id=cid)
            )
            push['got'] = f'{got.id} {got.task_id} {got.url}'
            listed = await client.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=t.id)
            )
            push['listed'] = [f'{c.id} {c.url}' for c in listed.configs]
            await client.delete_task_push_notification_config(
                pb.DeleteTaskPushNotificationConfigRequest(task_id=t.id, id=cid)
            )
            push['deleted'] = True
            after = await client.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=t.id)
            )
            push['afterDelete'] = [c.id for c in after.configs]
            push['getDeleted'] = await expect_error(
                lambda: client.get_task_push_notification_config(
                    pb.GetTaskPushNotificationConfigRequest(task_id=t.id, id=cid)
                )
            )

        await scenario('PushConfigs', push_configs)

        async def content_types():
            # A part the travel agent does not take (its input modes are
            # text), and output modes it does not produce.
            png = pb.Message(
                message_id=str(uuid.uuid4()),
                role=pb.ROLE_USER,
                parts=[pb.Part(raw=b'\x89PNG\r\n\x1a\n', media_type='image/png', filename='x.png')],
            )

            async def send_png():
                return [ev async for ev in client.send_message(pb.SendMessageRequest(message=png))]

            more['contentType'] = {
                'input': await expect_error(send_png),
                'output': await expect_error(lambda: send('Book a flight', accepted_output_modes=['image/png'])),
            }

        await scenario('ContentType', content_types)

        await client.close()
        await streamer.close()

    report['wire'] = sorted(wire)
    print(json.dumps(report))


if __name__ == '__main__':
    asyncio.run(main())
