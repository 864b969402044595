// SPDX-License-Identifier: Apache-2.0
// A2UI over A2A with the official A2A JS client (@a2a-js/sdk) against lighttpd + tiny-harness
// (UI-1, UI-2, UI-3, UI-4, EXT-4), once per binding (JSON-RPC, then HTTP+JSON), each against its
// own server. Every A2A call goes through the SDK's Client; A2UI is activated with the client's
// extension header (withA2AExtensions) or with a2uiClientCapabilities in the message metadata.
//
// The artifact's A2UI messages are validated against the official JSON Schemas shipped in the
// pinned @a2ui/web_core (loaded as in tests/contract/a2ui_schema.mjs) and fed to web_core's
// MessageProcessor, whose dispatchAction produces the Approve action that is sent back. Refused
// actions must fail with InvalidParams (JSON-RPC -32602, REST 400 INVALID_PARAMS; the SDK's
// RequestMalformedError) naming the reason, and leave the task's rows in the database unchanged.
// Exit 77 when node_modules, lighttpd or sqlite3 is missing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import { SRCDIR, TH_BIN, Tap, assertValid, importDep, makeTmp, show } from '../contract/lib.mjs';
import { dbRows } from '../lib/db.mjs';
import { findLighttpd, onPath, sdkClient, startLighttpd } from '../lib/interop.mjs';
import { missingModules } from './deps.mjs';

const EXT = 'https://a2ui.org/a2a-extension/a2ui/v0.9.1';
const MT = 'application/a2ui+json';
const BASIC = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';

const t = new Tap();
if (!TH_BIN)
	t.skipAll('TH_BIN is not set (run through make check)');

const LIGHTTPD = findLighttpd();
if (LIGHTTPD == null)
	t.skipAll('lighttpd is not installed');
if (onPath('sqlite3') == null)
	t.skipAll('sqlite3 is not installed');

const sdk = await importDep('@a2a-js/sdk');
const client = await importDep('@a2a-js/sdk/client');
const errors = await importDep('@a2a-js/sdk/errors');
const wc = await importDep('@a2ui/web_core/v0_9');
const bc = await importDep('@a2ui/web_core/v0_9/basic_catalog');
const ajvMod = await importDep('ajv/dist/2020.js');
const fmtMod = await importDep('ajv-formats');
let schemaDir = null;
try {
	// The exports map hides package.json; the main entry is <root>/src/v0_8/index.js.
	const main = createRequire(join(SRCDIR, 'package.json')).resolve('@a2ui/web_core');
	schemaDir = join(dirname(dirname(dirname(main))), 'src', 'v0_9', 'schemas');
} catch {
	schemaDir = null;
}
if ([sdk, client, errors, wc, bc, ajvMod, fmtMod, schemaDir].includes(null))
	missingModules(t, '@a2a-js/sdk, @a2ui/web_core or ajv is not installed: run `npm ci` in the source tree');

const { Role, TaskState } = sdk;
const { ServiceParameters, withA2AExtensions } = client;
const { RequestMalformedError } = errors;
const stateName = (s) => TaskState[s] ?? String(s);

// ------------------------------------------------------------------ the official schemas
const load = (rel) => JSON.parse(readFileSync(join(schemaDir, rel), 'utf8'));
const Ajv2020 = ajvMod.default.default ?? ajvMod.default;
const addFormats = fmtMod.default.default ?? fmtMod.default;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(load('common_types.json'));
// server_to_client.json refers to "catalog.json#/$defs/...", i.e. .../v0_9/catalog.json.
ajv.addSchema({ ...load('catalogs/basic/catalog.json'), $id: 'https://a2ui.org/specification/v0_9/catalog.json' });
const s2c = ajv.compile(load('server_to_client.json'));
const s2cList = ajv.compile(load('server_to_client_list.json'));
const c2s = ajv.compile(load('client_to_server.json'));

// ------------------------------------------------------------------ per binding
async function runBinding(binding) {
	const tag = binding === 'JSONRPC' ? 'JSON-RPC' : 'HTTP+JSON';
	const dir = makeTmp(`th-interop-a2ui-${binding === 'JSONRPC' ? 'rpc' : 'rest'}-`);
	const { base, ok, stderr, stop, db: DB } = startLighttpd(dir, { lighttpd: LIGHTTPD, signals: false });
	if (!ok) {
		await t.test(`${tag}: lighttpd with tiny-harness starts (server.sh start)`, async () => {
			assert.fail(stderr);
		});
		stop();
		return;
	}
	console.log(`# ${tag} against ${base} (state in ${dir})`);

	const sql = (query, ...args) => {
		const q = query.replace(/\?/g, () => `'${String(args.shift()).replaceAll("'", "''")}'`);
		return dbRows(DB, q, { timeout: 10000 });
	};
	const rows = (taskId) => ({
		messages: sql('SELECT count(*) AS n FROM messages WHERE task_id = ?', taskId)[0].n,
		channel: sql('SELECT count(*) AS n FROM channel_messages WHERE task_id = ?', taskId)[0].n,
		events: sql('SELECT count(*) AS n FROM events WHERE task_id = ?', taskId)[0].n,
		registry: sql('SELECT * FROM a2ui_registry WHERE task_id = ?', taskId),
	});

	const alice = await sdkClient(client, base, binding, 'alice');
	const a2ui = () => ({ serviceParameters: ServiceParameters.create(withA2AExtensions(EXT)) });

	let seq = 0;
	const nextId = () => `a2ui-${binding}-${process.pid}-${++seq}`;
	const textPart = (text) => ({ content: { $case: 'text', value: text }, mediaType: '', filename: '', metadata: undefined });
	const a2uiPart = (data, { mediaType = MT, metadata = { mimeType: MT } } = {}) =>
		({ content: { $case: 'data', value: data }, mediaType, filename: '', metadata });
	const message = (parts, taskId = '', metadata = undefined) => ({
		messageId: nextId(), role: Role.ROLE_USER, contextId: '', taskId, extensions: [],
		referenceTaskIds: [], metadata, parts,
	});
	const req = (msg) => ({ tenant: '', message: msg, configuration: undefined, metadata: undefined });
	const textOf = (m) => (m?.parts ?? []).filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('');
	const need = (v, what) => {
		assert.ok(v, `not run: ${what} failed earlier`);
		return v;
	};
	const getTask = (id) => alice.getTask({ tenant: '', id });
	const a2uiArtifacts = (task) => (task.artifacts ?? []).filter((a) => a.name === 'a2ui');

	// Validates an A2UI artifact (UI-1) and returns its messages.
	function checkArtifact(a) {
		assert.match(a.artifactId, /^a2ui:\d+$/, `artifactId: ${show(a)}`);
		assert.equal(a.name, 'a2ui');
		assert.equal(a.parts.length, 1);
		const p = a.parts[0];
		assert.equal(p.content?.$case, 'data', `part: ${show(p)}`);
		assert.equal(p.mediaType, MT);
		assert.deepEqual(p.metadata, { mimeType: MT });
		assert.ok(Array.isArray(p.content.value), 'data is an array of messages');
		assertValid(s2cList, p.content.value, `${a.artifactId} (server_to_client_list.json)`);
		for (const [i, m] of p.content.value.entries())
			assertValid(s2c, m, `${a.artifactId} message ${i} (server_to_client.json)`);
		return p.content.value;
	}

	// The Card's messages, checked: createSurface on the basic catalog, the question, the buttons.
	function checkCard(msgs, question) {
		assert.equal(msgs.length, 2, `messages: ${show(msgs)}`);
		const cs = msgs[0].createSurface;
		assert.ok(cs, 'first message createSurface');
		assert.equal(cs.catalogId, BASIC);
		assert.equal(msgs[1].updateComponents?.surfaceId, cs.surfaceId);
		const comps = Object.fromEntries(msgs[1].updateComponents.components.map((c) => [c.id, c]));
		assert.equal(comps.root?.component, 'Card');
		assert.ok(Object.values(comps).some((c) => c.component === 'Text' && c.text === question), 'the question');
		for (const [id, label] of [['approve', 'Approve'], ['reject', 'Reject']]) {
			assert.equal(comps[id]?.component, 'Button', `${id} Button`);
			assert.deepEqual(comps[id].action, { event: { name: id, context: {} } }, `${id} event`);
			assert.equal(comps[comps[id].child]?.text, label, `${id} label`);
		}
		return cs.surfaceId;
	}

	// Renders the messages in web_core's engine and returns the action its Approve/Reject button
	// dispatches, as the client message {version, action}.
	async function clickInEngine(msgs, componentId) {
		const dispatched = [];
		const proc = new wc.MessageProcessor([bc.basicCatalog], (a) => dispatched.push(a));
		proc.processMessages(msgs);
		const surfaceId = msgs[0].createSurface.surfaceId;
		const surface = proc.model.getSurface(surfaceId);
		assert.ok(surface, 'web_core created the surface');
		const comp = msgs[1].updateComponents.components.find((c) => c.id === componentId);
		await surface.dispatchAction(comp.action, componentId);
		assert.equal(dispatched.length, 1, 'web_core dispatched no action');
		const msg = { version: 'v0.9', action: dispatched[0] };
		assertValid(c2s, msg, 'the dispatched action (client_to_server.json)');
		return { msg, capabilities: proc.getClientCapabilities() };
	}

	// A /confirm with A2UI activated: the task, the Card's messages and its surface id.
	async function confirm(question) {
		const r = await alice.sendMessage(req(message([textPart(`/confirm ${question}`)])), a2ui());
		assert.ok(r?.id && r.status, `expected a Task: ${show(r)}`);
		const got = await getTask(r.id);
		const arts = a2uiArtifacts(got);
		assert.equal(arts.length, 1, `a2ui artifacts: ${show(got.artifacts)}`);
		const msgs = checkArtifact(arts[0]);
		return { task: r, artifact: arts[0], msgs, surfaceId: checkCard(msgs, question) };
	}

	// Sends msg, which must be refused with InvalidParams naming reason; nothing stored.
	async function refusedInvalid(taskId, msg, reason, what) {
		const before = rows(taskId);
		let result;
		try {
			result = await alice.sendMessage(req(msg), a2ui());
		} catch (err) {
			assert.ok(err instanceof RequestMalformedError,
				`${what}: expected RequestMalformedError (InvalidParams), got ${err?.constructor?.name}: ${err?.message}`);
			if (binding === 'JSONRPC')
				assert.equal(err.envelopeCode, -32602, `${what}: JSON-RPC code`);
			else
				assert.equal(err.statusCode, 400, `${what}: HTTP status`);
			assert.match(err.message, reason, `${what}: the message names the reason`);
			console.log(`# ${what}: ${err.message}`);
			assert.deepEqual(rows(taskId), before, `${what}: rows changed in SQLite`);
			return err;
		}
		assert.fail(`${what}: expected InvalidParams, but the call succeeded with ${show(result)}`);
	}

	// ------------------------------------------------------------------ tests
	const Q1 = 'Ship the 2.0 release notes?';
	let first;
	await t.test(`${tag}: UI-1 UI-4 EXT-4 /confirm with A2UI activated by the client's extension header gives artifact a2ui:<n> (application/a2ui+json) with the Card`, async () => {
		first = await confirm(Q1);
		assert.match(textOf(first.task.status.message), new RegExp(`card is artifact ${first.artifact.artifactId}`));
		assert.equal(stateName(first.task.status.state), 'TASK_STATE_INPUT_REQUIRED');
	});

	await t.test(`${tag}: UI-1 the artifact's messages pass the official server_to_client schemas and web_core's MessageProcessor`, async () => {
		const f = need(first, '/confirm');
		const proc = new wc.MessageProcessor([bc.basicCatalog]);
		proc.processMessages(f.msgs); // throws on anything it cannot process
		assert.ok(proc.model.getSurface(f.surfaceId), 'web_core has the surface');
	});

	await t.test(`${tag}: UI-1 sendMessageStream /confirm yields an artifactUpdate event carrying the Card`, async () => {
		const Q = 'Stream the Card?';
		const events = [];
		for await (const ev of alice.sendMessageStream(req(message([textPart(`/confirm ${Q}`)])), a2ui()))
			events.push(ev);
		const updates = events.filter((e) => e.payload?.$case === 'artifactUpdate').map((e) => e.payload.value);
		assert.equal(updates.length, 1, `artifactUpdate events: ${show(events)}`);
		checkCard(checkArtifact(updates[0].artifact), Q);
	});

	let approved;
	await t.test(`${tag}: UI-2 UI-3 UI-4 web_core's Approve action sent through the client: "alice approved: …", recorded in history and channel_messages`, async () => {
		const f = need(first, '/confirm');
		const { msg, capabilities } = await clickInEngine(f.msgs, 'approve');
		const sent = message([a2uiPart([msg])], f.task.id, { a2uiClientCapabilities: capabilities });
		const r = await alice.sendMessage(req(sent), a2ui());
		assert.equal(r.id, f.task.id);
		assert.equal(textOf(r.status.message), `alice approved: ${Q1}`, `reply: ${show(r.status)}`);
		assert.equal(stateName(r.status.state), 'TASK_STATE_INPUT_REQUIRED', 'the task parks');
		const got = await getTask(f.task.id);
		const stored = got.history.find((m) => m.messageId === sent.messageId);
		assert.ok(stored, `the action is not in history: ${show(got.history)}`);
		assert.equal(stored.metadata?.participant_id, 'alice');
		assert.deepEqual(stored.parts[0].content.value, [msg]);
		assert.ok(got.history.some((m) => m.role === Role.ROLE_AGENT && textOf(m) === `alice approved: ${Q1}`), 'the decision in history');
		const ch = sql('SELECT kind, text FROM channel_messages WHERE task_id = ?', f.task.id);
		assert.ok(ch.some((c) => c.kind === 'message' && c.text === `alice approved: ${Q1}`), `channel_messages: ${show(ch)}`);
		// The Card is deleted by a second artifact, itself valid A2UI.
		const del = a2uiArtifacts(got).filter((a) => a.artifactId !== f.artifact.artifactId);
		assert.equal(del.length, 1, `artifacts: ${show(got.artifacts)}`);
		assert.deepEqual(checkArtifact(del[0]), [{ version: 'v0.9', deleteSurface: { surfaceId: f.surfaceId } }]);
		approved = { ...f, msg, capabilities };
	});

	await t.test(`${tag}: UI-2 deleted surface: a second click is InvalidParams "deleted surface", nothing stored`, async () => {
		const a = need(approved, 'the approval');
		await refusedInvalid(a.task.id, message([a2uiPart([a.msg])], a.task.id), /deleted surface/, 'second click');
	});

	// A fresh Card whose surface stays live through the refusals below.
	const Q2 = 'Grant bob write access?';
	let live;
	await t.test(`${tag}: UI-2 forged surface id: InvalidParams "unknown surface", nothing stored`, async () => {
		live = await confirm(Q2);
		live.click = (await clickInEngine(live.msgs, 'approve')).msg;
		const forged = { ...live.click, action: { ...live.click.action, surfaceId: 'confirm-forged0' } };
		await refusedInvalid(live.task.id, message([a2uiPart([forged])], live.task.id), /unknown surface/, 'forged surface');
		// Another task's real surface is as foreign as a made-up one.
		const other = { ...live.click, action: { ...live.click.action, surfaceId: need(approved, 'the approval').surfaceId } };
		await refusedInvalid(live.task.id, message([a2uiPart([other])], live.task.id), /unknown surface/, 'another task\'s surface');
	});

	await t.test(`${tag}: UI-2 component not on the surface: InvalidParams "unknown component", nothing stored`, async () => {
		const l = need(live, 'the second /confirm');
		const bad = { ...l.click, action: { ...l.click.action, sourceComponentId: 'delete_everything' } };
		await refusedInvalid(l.task.id, message([a2uiPart([bad])], l.task.id), /unknown component/, 'unknown component');
	});

	await t.test(`${tag}: UI-2 action name mismatch (Approve button, name "reject"): InvalidParams "action name mismatch", nothing stored`, async () => {
		const l = need(live, 'the second /confirm');
		const bad = { ...l.click, action: { ...l.click.action, name: 'reject' } };
		await refusedInvalid(l.task.id, message([a2uiPart([bad])], l.task.id), /action name mismatch/, 'renamed action');
	});

	await t.test(`${tag}: UI-2 inline catalog (a2uiClientCapabilities.inlineCatalogs): InvalidParams "inline catalog", nothing stored`, async () => {
		const l = need(live, 'the second /confirm');
		const inline = { 'v0.9': { supportedCatalogIds: [BASIC], inlineCatalogs: [{ catalogId: 'https://example.test/mine.json', components: {} }] } };
		await refusedInvalid(l.task.id, message([a2uiPart([l.click])], l.task.id, { a2uiClientCapabilities: inline }),
			/inline catalog/, 'inline catalog in the message metadata');
		await refusedInvalid(l.task.id, message([a2uiPart([l.click], { metadata: { mimeType: MT, a2uiClientCapabilities: inline } })], l.task.id),
			/inline catalog/, 'inline catalog in the part metadata');
	});

	await t.test(`${tag}: UI-2 oversized context (65 keys; 17 KiB): InvalidParams "context too large", nothing stored`, async () => {
		const l = need(live, 'the second /confirm');
		const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i]));
		await refusedInvalid(l.task.id, message([a2uiPart([{ ...l.click, action: { ...l.click.action, context: many } }])], l.task.id),
			/context too large/, '65 context keys');
		const big = { note: 'x'.repeat(17 * 1024) };
		await refusedInvalid(l.task.id, message([a2uiPart([{ ...l.click, action: { ...l.click.action, context: big } }])], l.task.id),
			/context too large/, '17 KiB context');
	});

	await t.test(`${tag}: UI-2 EXT-4 after the refusals the live Card still takes its real click, sent without activating A2UI`, async () => {
		const l = need(live, 'the second /confirm');
		const r = await alice.sendMessage(req(message([a2uiPart([l.click])], l.task.id)));
		assert.equal(textOf(r.status.message), `alice approved: ${Q2}`, `reply: ${show(r.status)}`);
	});

	await t.test(`${tag}: UI-2 the other part encodings are accepted too: one object (media type in metadata.mimeType only), {messages} (legacy media type, v0.9.1)`, async () => {
		const Q3 = 'Accept a single object?';
		const c3 = await confirm(Q3);
		const m3 = (await clickInEngine(c3.msgs, 'reject')).msg;
		const r3 = await alice.sendMessage(req(message([a2uiPart(m3, { mediaType: '', metadata: { mimeType: MT } })], c3.task.id)), a2ui());
		assert.equal(textOf(r3.status.message), `alice rejected: ${Q3}`);
		const Q4 = 'Accept a messages wrapper?';
		const c4 = await confirm(Q4);
		const m4 = (await clickInEngine(c4.msgs, 'approve')).msg;
		const r4 = await alice.sendMessage(req(message([a2uiPart({ messages: [{ ...m4, version: 'v0.9.1' }] },
			{ mediaType: 'application/json+a2ui', metadata: undefined })], c4.task.id)), a2ui());
		assert.equal(textOf(r4.status.message), `alice approved: ${Q4}`);
	});

	await t.test(`${tag}: EXT-4 a2uiClientCapabilities naming the basic catalog, without the header, also gets the Card`, async () => {
		const Q = 'Capabilities only?';
		const caps = new wc.MessageProcessor([bc.basicCatalog]).getClientCapabilities();
		const r = await alice.sendMessage(req(message([textPart(`/confirm ${Q}`)], '', { a2uiClientCapabilities: caps })));
		const arts = a2uiArtifacts(await getTask(r.id));
		assert.equal(arts.length, 1, 'no Card');
		checkCard(checkArtifact(arts[0]), Q);
	});

	await t.test(`${tag}: EXT-4 UI-4 without A2UI activated /confirm answers in text, no artifact; typing "approve" decides it`, async () => {
		const Q = 'Plain text please?';
		const r = await alice.sendMessage(req(message([textPart(`/confirm ${Q}`)])));
		assert.equal(textOf(r.status.message), `Please answer approve or reject: ${Q}`);
		assert.deepEqual(a2uiArtifacts(await getTask(r.id)), [], 'an A2UI artifact for a text client');
		assert.equal(sql('SELECT count(*) AS n FROM artifacts WHERE task_id = ?', r.id)[0].n, 0, 'artifact rows');
		const d = await alice.sendMessage(req(message([textPart('approve')], r.id)));
		assert.equal(textOf(d.status.message), `alice approved: ${Q}`);
		const ch = sql('SELECT text FROM channel_messages WHERE task_id = ?', r.id);
		assert.ok(ch.some((c) => c.text === `alice approved: ${Q}`), `channel_messages: ${show(ch)}`);
	});

	stop();
}

await runBinding('JSONRPC');
await runBinding('HTTP+JSON');
t.done();
