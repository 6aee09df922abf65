// Drives an a2aflow server with the official A2A JavaScript SDK
// (@a2a-js/sdk) over one protocol binding and version, and prints what it
// observed as one JSON object on stdout. tests/js_test.go runs it and compares
// the report with what the Go clients observe (tests/compat_test.go), so the
// expectations live in one place.
//
//	node a2a_client.mjs <base URL> <JSONRPC|HTTP+JSON> <1.0|0.3>
//
// The 1.0 clients are the SDK's own; the 0.3 clients are its v0.3
// compatibility transports (legacyCompat), selected from the card's 0.3
// interfaces. A scenario that throws unexpectedly is reported under
// "failures" and leaves its field empty, so the Go test shows both.
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';

const [baseURL, binding, version] = process.argv.slice(2);
if (!baseURL || !binding || !version) {
  console.error('usage: node a2a_client.mjs <base URL> <JSONRPC|HTTP+JSON> <1.0|0.3>');
  process.exit(2);
}

// wire records, for every A2A request, the binding it used (JSON-RPC posts
// to the base URL, HTTP+JSON uses paths under it) and its A2A-Version header,
// which is what the server chooses the protocol version by.
const wire = new Set();
const base = new URL(baseURL);
function recordingFetch(input, init) {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  const path = url.pathname.replace(/\/+$/, '');
  const kind = path === base.pathname.replace(/\/+$/, '') ? 'JSONRPC' : 'HTTP+JSON';
  wire.add(`${kind} ${headers.get('A2A-Version') ?? 'none'}`);
  return fetch(input, init);
}

const legacy = { legacyCompat: { enabled: true } };
const resolver = new DefaultAgentCardResolver(legacy);
const factory = new ClientFactory({
  transports: [
    new JsonRpcTransportFactory({ ...legacy, fetchImpl: recordingFetch }),
    new RestTransportFactory({ ...legacy, fetchImpl: recordingFetch }),
  ],
  preferredTransports: [binding],
  cardResolver: resolver,
});

const stateName = (s) => TaskState[s] ?? String(s);
const roleName = (r) => Role[r] ?? String(r);

function message(text, taskId) {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text } }],
    taskId: taskId ?? '',
  };
}

function text(msg) {
  if (!msg) return '';
  return msg.parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('');
}

// label renders a stream event as the Go tests do: task:STATE, status:STATE,
// artifact:NAME.
function label(ev) {
  const p = ev.payload;
  switch (p?.$case) {
    case 'task':
      return 'task:' + stateName(p.value.status?.state);
    case 'statusUpdate':
      return 'status:' + stateName(p.value.status?.state);
    case 'artifactUpdate':
      return 'artifact:' + p.value.artifact?.name;
    case 'message':
      return 'message';
  }
  return 'unknown:' + JSON.stringify(ev);
}

const codeNames = {
  '-32001': 'TaskNotFound',
  '-32002': 'TaskNotCancelable',
  '-32004': 'UnsupportedOperation',
  '-32602': 'InvalidParams',
};
const reasonNames = {
  TASK_NOT_FOUND: 'TaskNotFound',
  TASK_NOT_CANCELABLE: 'TaskNotCancelable',
  UNSUPPORTED_OPERATION: 'UnsupportedOperation',
  INVALID_PARAMS: 'InvalidParams',
};

// errorName names an error the way the Go side does: the A2A error without
// its "Error" suffix when the SDK typed it. An Error whose cause the SDK
// typed (how it throws a JSON-RPC error that arrived as a stream's event)
// gets " (cause)". When the SDK did not type it at all, but its message
// carries the JSON-RPC code or the google.rpc.ErrorInfo reason the server
// sent, the name gets " (untyped)": the server said the right thing and the
// SDK did not recognise its form.
function typedName(e) {
  return e?.name && e.name !== 'Error' && e.name.endsWith('Error') ? e.name.slice(0, -'Error'.length) : '';
}

function errorName(e) {
  if (typedName(e)) return typedName(e);
  if (typedName(e?.cause)) return typedName(e.cause) + ' (cause)';
  const msg = String(e?.message ?? e);
  const code = /Code: (-\d+)/.exec(msg);
  if (code && codeNames[code[1]]) return codeNames[code[1]] + ' (untyped)';
  const reason = /"reason":"([A-Z_]+)"/.exec(msg);
  if (reason && reasonNames[reason[1]]) return reasonNames[reason[1]] + ' (untyped)';
  return 'other: ' + msg;
}

// expectError runs fn and names the error it throws; a stream that ends
// without one is "no error" with the events it carried.
async function expectError(fn) {
  try {
    const events = await fn();
    return Array.isArray(events) ? `no error, events [${events.join(' ')}]` : 'no error';
  } catch (e) {
    return errorName(e);
  }
}

async function send(client, text, taskId) {
  const res = await client.sendMessage({ message: message(text, taskId) });
  if (!('id' in res) || !res.status) throw new Error('SendMessage returned a message, want a task: ' + JSON.stringify(res));
  return res;
}

async function collect(stream, onEvent) {
  const got = [];
  for await (const ev of stream) {
    got.push(label(ev));
    if (onEvent) await onEvent(ev, got.length);
  }
  return got;
}

const report = { failures: {} };
async function scenario(name, fn) {
  try {
    await fn();
  } catch (e) {
    report.failures[name] = `${e?.name ?? 'Error'}: ${e?.message ?? e}`;
  }
}

const fullCard = await resolver.resolve(baseURL);
// The card lists every interface; a 1.0 client takes a 1.0 one, and the 0.3
// client is made from the card's 0.3 interfaces, as a 0.3-only client sees it.
const card = {
  ...fullCard,
  supportedInterfaces: fullCard.supportedInterfaces.filter((i) => i.protocolVersion === version),
};
const client = await factory.createFromAgentCard(card);
report.card = {
  name: fullCard.name,
  streaming: !!fullCard.capabilities?.streaming,
  interfaces: fullCard.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`),
};

let completed; // the task of the SendMessage scenario, reused by GetTask and the error cases
await scenario('SendMessage', async () => {
  const steps = [];
  let task = await send(client, 'Book a flight');
  steps.push(`${stateName(task.status.state)} ${text(task.status.message)}`);
  for (const answer of ['Lisbon', '2026-12-24', '2']) {
    task = await send(client, answer, task.id);
    const said = task.status.state === TaskState.TASK_STATE_COMPLETED ? '' : ' ' + text(task.status.message);
    steps.push(stateName(task.status.state) + said);
  }
  report.sendMessage = steps;
  const artifact = task.artifacts[0];
  const data = artifact?.parts[0]?.content?.$case === 'data' ? artifact.parts[0].content.value : {};
  report.booking = {
    artifacts: task.artifacts.length,
    name: artifact?.name ?? '',
    destination: data.destination ?? '',
    date: data.date ?? '',
    travellers: data.travellers ?? 0,
    reference: /^AF-[A-Z0-9]{6}$/.test(data.reference ?? '') ? 'AF-XXXXXX' : String(data.reference),
  };
  completed = task;
});

await scenario('GetTask', async () => {
  if (!completed) throw new Error('no completed task (SendMessage failed)');
  const full = await client.getTask({ id: completed.id });
  const none = await client.getTask({ id: completed.id, historyLength: 0 });
  const two = await client.getTask({ id: completed.id, historyLength: 2 });
  report.getTask = {
    state: stateName(full.status.state),
    roles: full.history.map((m) => roleName(m.role)),
    historyLength0: none.history.length,
    historyLength2: two.history.length,
  };
});

let cancelAgain; // the error of cancelling the canceled task again
await scenario('CancelTask', async () => {
  const task = await send(client, 'Book a flight');
  const canceled = await client.cancelTask({ id: task.id });
  const got = await client.getTask({ id: task.id });
  report.cancelTask = { canceled: stateName(canceled.status.state), getTask: stateName(got.status.state) };
  cancelAgain = await expectError(() => client.cancelTask({ id: task.id }));
});

await scenario('SendStreamingMessage', async () => {
  const steps = [];
  let taskId = '';
  for (const answer of ['Book a flight', 'Lisbon', '2026-12-24', '2']) {
    steps.push(
      await collect(client.sendMessageStream({ message: message(answer, taskId) }), (ev) => {
        if (ev.payload?.$case === 'task') taskId = ev.payload.value.id;
      }),
    );
  }
  report.sendStreamingMessage = steps;
});

await scenario('SubscribeToTask', async () => {
  const task = await send(client, 'Book a flight');
  // The subscription's first event is the current task: once it arrived the
  // subscription is live and the answers can go.
  let live;
  const subscribed = new Promise((resolve) => (live = resolve));
  const events = collect(client.resubscribeTask({ id: task.id }), (_, n) => n === 1 && live());
  await Promise.race([subscribed, events]);
  for (const answer of ['Lisbon', '2026-12-24', '2']) await send(client, answer, task.id);
  report.subscribeToTask = await events;
});

await scenario('errors', async () => {
  const unknown = 'no-such-task';
  const errors = {
    'GetTask unknown task': await expectError(() => client.getTask({ id: unknown })),
    'CancelTask unknown task': await expectError(() => client.cancelTask({ id: unknown })),
    'SendMessage unknown task': await expectError(() => client.sendMessage({ message: message('hi', unknown) })),
    'SubscribeToTask unknown task': await expectError(() => collect(client.resubscribeTask({ id: unknown }))),
  };
  if (cancelAgain) errors['CancelTask canceled task'] = cancelAgain;
  if (completed) {
    errors['SendMessage completed task'] = await expectError(() => client.sendMessage({ message: message('more', completed.id) }));
    errors['SubscribeToTask completed task'] = await expectError(() => collect(client.resubscribeTask({ id: completed.id })));
  }
  report.errors = errors;
});

report.wire = [...wire].sort();
process.stdout.write(JSON.stringify(report) + '\n');
