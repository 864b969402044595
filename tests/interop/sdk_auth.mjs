// SPDX-License-Identifier: Apache-2.0
// SEC-1 through the official A2A JS client (@a2a-js/sdk): tiny-harness behind lighttpd with
// identity = bearer, on both bindings. The credential reaches the server the way the SDK
// supports it: createAuthenticatingFetchWithRetry with an AuthenticationHandler whose
// headers() gives `Authorization: Bearer …`, handed to the transport factories as fetchImpl.
// Under it, a fetch that records each response's HTTP status, so a refusal is seen as the
// 401 it was and not only as whatever error the SDK makes of it.
//
//   - the card the client reads declares the bearer (JWT) and apiKey schemes;
//   - with an HS256 JWT made here (node:crypto) and with an API key from
//     `tiny-harness keys add`, sendMessage + getTask work and the task's reporter is the
//     credential's participant; the other participant does not see it (TaskNotFound);
//   - without the header, and with a token signed by another secret, the same calls fail
//     with HTTP 401;
//   - Client.getAgentCard fetches the extended card (GetExtendedAgentCard) with the token,
//     and fails with 401 without it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';

import { META_TASK, TH_BIN, Tap, cleanEnv, makeTmp, show } from '../contract/lib.mjs';
import { findLighttpd, startLighttpdOrExit } from '../lib/interop.mjs';
import { importDep, missingModules } from './deps.mjs';

const t = new Tap();
if (!TH_BIN)
	t.skipAll('TH_BIN is not set (run through make check)');
const sdk = await importDep('@a2a-js/sdk');
const client = await importDep('@a2a-js/sdk/client');
const errors = await importDep('@a2a-js/sdk/errors');
if ([sdk, client, errors].includes(null))
	missingModules(t, '@a2a-js/sdk is not installed (run `npm ci` in the source tree)');
if (findLighttpd() == null)
	t.skipAll('lighttpd is not installed');
const { Role, TaskState } = sdk;
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory,
	createAuthenticatingFetchWithRetry } = client;
const { TaskNotFoundError } = errors;

// ------------------------------------------------------------------ server
const SECRET = '0123456789abcdef0123456789abcdef-sdk-auth';
const AUDIENCE = 'tiny-harness';
const dir = makeTmp('th-interop-auth-');
const { base, stop, db } = startLighttpdOrExit(dir, {
	env: {
		TINY_HARNESS_IDENTITY: 'bearer',
		TINY_HARNESS_JWT_SECRET_ENV: 'TINY_HARNESS_JWT_SECRET',
		TINY_HARNESS_JWT_SECRET: SECRET,
		TINY_HARNESS_JWT_AUDIENCE: AUDIENCE,
	},
});
console.log(`# identity = bearer at ${base} (state in ${dir})`);

// ------------------------------------------------------------------ credentials
const b64url = (x) => Buffer.from(x).toString('base64url');
function jwt(claims, secret = SECRET) {
	const head = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
	return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}
const now = Math.floor(Date.now() / 1000);
const ALICE_JWT = jwt({ sub: 'alice', aud: AUDIENCE, exp: now + 600 });
const FORGED_JWT = jwt({ sub: 'alice', aud: AUDIENCE, exp: now + 600 }, 'not-the-secret-not-the-secret-not');
const keys = spawnSync(TH_BIN, ['keys', 'add', 'bob', '--name', 'sdk-auth'],
	{ env: cleanEnv({ TINY_HARNESS_DB: db }), encoding: 'utf8' });
const BOB_KEY = (keys.stdout ?? '').trim();

// ------------------------------------------------------------------ clients
// A client over BINDING whose every request carries `Authorization: Bearer TOKEN` (none when
// TOKEN is null); .statuses lists the HTTP status of each response it got.
async function makeClient(binding, token) {
	const statuses = [];
	const recording = async (url, init) => {
		const r = await fetch(url, init);
		statuses.push(r.status);
		return r;
	};
	const fetchImpl = token == null ? recording : createAuthenticatingFetchWithRetry(recording, {
		headers: async () => ({ Authorization: `Bearer ${token}` }),
		shouldRetryWithHeaders: async () => undefined,
	});
	const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
		transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
		preferredTransports: [binding],
	}));
	const c = await factory.createFromUrl(base);
	c.statuses = statuses;
	return c;
}

let seq = 0;
const req = (text) => ({
	tenant: '', configuration: undefined, metadata: undefined,
	message: {
		messageId: `auth-${process.pid}-${++seq}`, role: Role.ROLE_USER, contextId: '', taskId: '', extensions: [],
		referenceTaskIds: [], metadata: undefined, parts: [{ content: { $case: 'text', value: text }, mediaType: '', filename: '', metadata: undefined }],
	},
});
const stateName = (s) => TaskState[s] ?? String(s);
// The participant holding ROLE in the task's attributes.
const withRole = (task, role) => (task?.metadata?.[META_TASK]?.participants ?? []).find((p) => p.role === role)?.id;

// Awaits a call that must fail after an HTTP 401 from the server.
async function unauthorized(c, promise, what) {
	const before = c.statuses.length;
	let result;
	try {
		result = await promise;
	} catch (err) {
		assert.equal(c.statuses.at(-1), 401, `${what}: HTTP status ${c.statuses.slice(before)} (${err?.message})`);
		return err;
	}
	assert.fail(`${what}: expected a 401, but the call succeeded with ${show(result)}`);
}

// ------------------------------------------------------------------ tests
await t.test('SEC-1 the card the SDK reads declares the bearer (JWT) and apiKey schemes', async () => {
	const c = await makeClient('JSONRPC', null);
	const card = c.agentCard;
	assert.ok(card, 'the client holds the card');
	const schemes = card.securitySchemes ?? {};
	assert.deepEqual(Object.keys(schemes).sort(), ['apiKey', 'bearer'], `securitySchemes: ${show(schemes)}`);
	const http = (s) => s?.scheme?.value ?? s?.httpAuthSecurityScheme;
	assert.equal(http(schemes.bearer)?.scheme, 'Bearer', show(schemes.bearer));
	assert.equal(http(schemes.bearer)?.bearerFormat, 'JWT', show(schemes.bearer));
	assert.equal(http(schemes.apiKey)?.scheme, 'Bearer', show(schemes.apiKey));
	assert.equal(card.securityRequirements?.length, 2, show(card.securityRequirements));
	assert.equal(card.capabilities?.extendedAgentCard, true);
});

await t.test('SEC-1 keys add printed an API key for bob', async () => {
	assert.match(BOB_KEY, /^th_\S+$/, `keys add: status ${keys.status}, stderr ${keys.stderr}`);
});

for (const binding of ['JSONRPC', 'HTTP+JSON']) {
	const alice = await makeClient(binding, ALICE_JWT);
	const bob = await makeClient(binding, BOB_KEY);
	const nobody = await makeClient(binding, null);
	const forged = await makeClient(binding, FORGED_JWT);
	let aliceTask;

	await t.test(`SEC-1 ${binding}: with a JWT, sendMessage + getTask work and alice (its sub) is the reporter`, async () => {
		assert.equal(alice.transport.protocolName, binding);
		const sent = await alice.sendMessage(req('Book the meeting room'));
		assert.ok(sent?.id && sent.status, `a Task: ${show(sent)}`);
		aliceTask = sent;
		const got = await alice.getTask({ tenant: '', id: sent.id });
		assert.equal(got.id, sent.id);
		assert.equal(stateName(got.status.state), 'TASK_STATE_INPUT_REQUIRED');
		assert.equal(withRole(got, 'reporter'), 'alice', `participants: ${show(got.metadata?.[META_TASK])}`);
		assert.equal(got.history[0]?.metadata?.participant_id, 'alice', 'the stored message records alice');
		assert.ok(alice.statuses.length > 0 && alice.statuses.every((s) => s === 200), `statuses ${alice.statuses}`);
	});

	await t.test(`SEC-1 ${binding}: with an API key, sendMessage + getTask act as bob; alice's task is not his`, async () => {
		const sent = await bob.sendMessage(req('Order the catering'));
		const got = await bob.getTask({ tenant: '', id: sent.id });
		assert.equal(withRole(got, 'reporter'), 'bob', `participants: ${show(got.metadata?.[META_TASK])}`);
		assert.ok(aliceTask, 'not run: the JWT test failed');
		await assert.rejects(bob.getTask({ tenant: '', id: aliceTask.id }), TaskNotFoundError);
	});

	await t.test(`SEC-1 ${binding}: without the Authorization header, sendMessage and getTask fail with HTTP 401`, async () => {
		await unauthorized(nobody, nobody.sendMessage(req('not stored')), 'sendMessage');
		await unauthorized(nobody, nobody.getTask({ tenant: '', id: aliceTask?.id ?? 'x' }), 'getTask');
	});

	await t.test(`SEC-1 ${binding}: a JWT signed with another secret fails with HTTP 401`, async () => {
		await unauthorized(forged, forged.sendMessage(req('not stored')), 'sendMessage');
		await unauthorized(forged, forged.getTask({ tenant: '', id: aliceTask?.id ?? 'x' }), 'getTask');
	});

	await t.test(`SEC-1 ${binding}: getAgentCard fetches the extended card with the token, and 401 without`, async () => {
		const before = alice.statuses.length;
		const card = await alice.getAgentCard();
		assert.equal(card.name, 'tiny-harness');
		assert.deepEqual(alice.statuses.slice(before), [200], 'one GetExtendedAgentCard call');
		await unauthorized(nobody, nobody.getAgentCard(), 'getAgentCard');
	});
}

stop();
t.done();
