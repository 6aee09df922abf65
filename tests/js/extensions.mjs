// Drives the report agent's artifact-versions extension with the official
// A2A JavaScript SDK (@a2a-js/sdk) and prints what it observed as one JSON
// object on stdout; tests/extensions_test.go runs it and checks the report.
//
//	node extensions.mjs <agent URL> <JSONRPC|HTTP+JSON> <extension URI>
//
// The extension is activated the SDK's way (withA2AExtensions in the
// request's service parameters); the response's A2A-Extensions header is
// read from the fetch the transport makes.
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';

const [agentURL, binding, uri] = process.argv.slice(2);
if (!agentURL || !binding || !uri) {
  console.error('usage: node extensions.mjs <agent URL> <JSONRPC|HTTP+JSON> <extension URI>');
  process.exit(2);
}

// answered records the A2A-Extensions header of every A2A answer.
const answered = [];
async function recordingFetch(input, init) {
  const res = await fetch(input, init);
  answered.push(res.headers.get('A2A-Extensions') ?? '');
  return res;
}

const factory = new ClientFactory({
  transports: [
    new JsonRpcTransportFactory({ fetchImpl: recordingFetch }),
    new RestTransportFactory({ fetchImpl: recordingFetch }),
  ],
  preferredTransports: [binding],
  cardResolver: new DefaultAgentCardResolver(),
});
// The card path is resolved relative to the URL: keep the agent's path.
const fullCard = await new DefaultAgentCardResolver().resolve(agentURL.replace(/\/?$/, '/'));
// The SDK's 1.0 transports, from the card's 1.0 interfaces.
const card = { ...fullCard, supportedInterfaces: fullCard.supportedInterfaces.filter((i) => i.protocolVersion === '1.0') };
const client = await factory.createFromAgentCard(card);

function message(text, extra) {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text } }],
    ...extra,
  };
}

const report = {
  cardExtensions: (card.capabilities?.extensions ?? []).map((e) => e.uri),
};

// With the extension activated.
answered.length = 0;
const on = await client.sendMessage(
  { message: message('Q3 review\nRevenue grew 12%.', { extensions: ['urn:example:note-ext'], metadata: { 'urn:example:note-ext': { tag: 'js' } } }) },
  { serviceParameters: ServiceParameters.create(withA2AExtensions(uri)) },
);
const onArtifact = on.artifacts?.[0];
report.activated = {
  responseHeader: answered.join('|'),
  artifactExtensions: onArtifact?.extensions ?? [],
  artifactRefines: onArtifact?.metadata?.refines ?? null,
  artifactVersion: onArtifact?.metadata?.version ?? null,
};
// The message's own extension fields come back as they were sent.
const read = await client.getTask({ id: on.id });
const first = read.history?.find((m) => m.role === Role.ROLE_USER);
report.roundTrip = { extensions: first?.extensions ?? [], metadata: first?.metadata ?? null };

// Without it.
answered.length = 0;
const off = await client.sendMessage({ message: message('Plain\nNo extension.') });
report.plain = {
  responseHeader: answered.join('|'),
  artifactExtensions: off.artifacts?.[0]?.extensions ?? [],
};

console.log(JSON.stringify(report));
