// Drives the A2A methods beyond the travel flow with the official A2A
// JavaScript SDK (@a2a-js/sdk) over one binding and version, as an
// authenticated caller, and prints what it observed as one JSON object:
// ListTasks, the four push notification config methods and the extended
// card. tests/js_test.go (TestJSMoreMethods) runs it and checks the report.
//
//	node more_methods.mjs <base URL> <JSONRPC|HTTP+JSON> <1.0|0.3> <API key> <webhook URL>
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';

const [baseURL, binding, version, apiKey, hook] = process.argv.slice(2);
if (!baseURL || !binding || !version || !apiKey || !hook) {
  console.error('usage: node more_methods.mjs <base URL> <JSONRPC|HTTP+JSON> <1.0|0.3> <API key> <webhook URL>');
  process.exit(2);
}

// Every request carries the API key.
function authedFetch(input, init) {
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  headers.set('X-API-Key', apiKey);
  return fetch(input, { ...init, headers });
}

const legacy = { legacyCompat: { enabled: true } };
const resolver = new DefaultAgentCardResolver(legacy);
const factory = new ClientFactory({
  transports: [
    new JsonRpcTransportFactory({ ...legacy, fetchImpl: authedFetch }),
    new RestTransportFactory({ ...legacy, fetchImpl: authedFetch }),
  ],
  preferredTransports: [binding],
  cardResolver: resolver,
});

const report = { failures: {} };
async function scenario(name, fn) {
  try {
    await fn();
  } catch (e) {
    report.failures[name] = `${e?.name ?? 'Error'}: ${e?.message ?? e}`;
  }
}

const fullCard = await resolver.resolve(baseURL);
const card = {
  ...fullCard,
  supportedInterfaces: fullCard.supportedInterfaces.filter(
    (i) => i.protocolVersion === version && i.protocolBinding === binding,
  ),
};
const client = await factory.createFromAgentCard(card);

const task = await client.sendMessage({
  message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'Book a flight' } }], taskId: '' },
});
report.taskId = task.id;

await scenario('ListTasks', async () => {
  // status 0 is TASK_STATE_UNSPECIFIED: no filter (left out, the SDK sends "UNRECOGNIZED").
  const page = await client.listTasks({ contextId: task.contextId, status: 0, pageSize: 10, pageToken: '' });
  report.listTasks = page.tasks.map((t) => t.id);
});

await scenario('PushConfigs', async () => {
  // Each step's result is reported as it comes, so that a later failure
  // leaves the earlier ones checked.
  const id = 'js-' + randomUUID().slice(0, 8);
  const configs = (r) => (Array.isArray(r) ? r : r?.configs ?? []);
  const push = (report.push = { id });
  const created = await client.createTaskPushNotificationConfig({ taskId: task.id, id, url: hook, token: 'tok-js-0123456789' });
  push.created = `${created.id} ${created.taskId} ${created.url}`;
  const got = await client.getTaskPushNotificationConfig({ taskId: task.id, id });
  push.got = `${got.id} ${got.taskId} ${got.url}`;
  const listed = await client.listTaskPushNotificationConfig({ taskId: task.id });
  push.listed = configs(listed).map((c) => `${c.id} ${c.url}`);
  await client.deleteTaskPushNotificationConfig({ taskId: task.id, id });
  push.deleted = true;
  const after = await client.listTaskPushNotificationConfig({ taskId: task.id });
  push.afterDelete = configs(after).map((c) => c.id);
  // How the empty list came: a list, or null.
  push.emptyList = after === null ? 'null' : 'list';
});

await scenario('GetExtendedAgentCard', async () => {
  // getAgentCard fetches the extended card when the card offers one.
  const ext = await client.getAgentCard();
  const caller = (ext.capabilities?.extensions ?? []).find((e) => e.uri === 'urn:a2aflow:ext:caller:v1');
  report.extendedCard = { name: ext.name, principal: caller?.params?.principal ?? '' };
});

process.stdout.write(JSON.stringify(report) + '\n');
