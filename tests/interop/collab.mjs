// SPDX-License-Identifier: Apache-2.0
// Collaboration through the official A2A JS client (@a2a-js/sdk) against lighttpd with two
// tiny-harness workers, over JSON-RPC and over HTTP+JSON. Every A2A call goes through the
// SDK's Client; the database (sqlite3, or psql under TH_TEST_PG: tests/lib/db.mjs) is only
// read for row counts, to prove that refusals stored nothing.
//
// What the SDK hands back (checked here, see docs/interop.md): Task.metadata is a plain
// object, so the status sub-state is task.metadata['io.github.madarauchiha-314.tiny-harness/status'];
// a data part is {content: {$case: 'data', value: <the decoded JSON>}, mediaType, …}; TaskState
// is a number (TaskState[n] gives its name); -32602 / INVALID_PARAMS is RequestMalformedError.
//
// Per binding: a task envelope creates a task with alice (reporter), bob (admin) and wendy
// (watcher) (TASK-4, ID-2); /ask bob parks it awaiting-answer (CH-4, STATUS-1); a help reply
// from wendy is refused (CH-5); bob's reply through the client resumes it (CH-5); a streamed
// /ask to the watcher carries the sub-state in the status update, and she answers (STATUS-1,
// ID-4); completing a parent with an open /subtask child returns INPUT_REQUIRED naming the
// child (CTL-4); once the child is completed the parent completes (CTL-5).
import assert from 'node:assert/strict';

import { META_STATUS, META_TASK, MT_CHANNEL, MT_EVENT, TH_BIN, Tap, makeTmp, show } from '../contract/lib.mjs';
import { dbSql } from '../lib/db.mjs';
import { findLighttpd, onPath, sdkClient, startLighttpdOrExit } from '../lib/interop.mjs';
import { importDep, missingModules } from './deps.mjs';

const EXT = 'https://madarauchiha-314.github.io/tiny-harness/a2a/ext';
const TASK_EXT = `${EXT}/task/v1`;
const CHANNEL_EXT = `${EXT}/channel/v1`;
const STATUS_EXT = `${EXT}/status/v1`;

const t = new Tap();
if (!TH_BIN)
	t.skipAll('TH_BIN is not set (run through make check)');
const sdk = await importDep('@a2a-js/sdk');
const clientMod = await importDep('@a2a-js/sdk/client');
const errors = await importDep('@a2a-js/sdk/errors');
if ([sdk, clientMod, errors].includes(null))
	missingModules(t, '@a2a-js/sdk is not installed (run `npm ci` in the source tree)');
const LIGHTTPD = findLighttpd();
if (LIGHTTPD == null)
	t.skipAll('lighttpd is not installed');
const SQLITE3 = onPath('sqlite3');
if (SQLITE3 == null)
	t.skipAll('sqlite3 is not installed (needed to prove that refusals store nothing)');

const { Role, TaskState } = sdk;
const { ServiceParameters, withA2AExtensions } = clientMod;
const { RequestMalformedError, UnsupportedOperationError } = errors;
const stateName = (s) => TaskState[s] ?? String(s);

// ------------------------------------------------------------------ server
const dir = makeTmp('th-interop-collab-');
const { base, stop, db: DB } = startLighttpdOrExit(dir, { lighttpd: LIGHTTPD });
console.log(`# lighttpd at ${base} (state in ${dir})`);

// ------------------------------------------------------------------ helpers
const TABLES = ['tasks', 'messages', 'turns', 'events', 'participants', 'channel_messages', 'help_requests', 'subtask_links'];
function sql(query) {
	return dbSql(DB, query, { timeout: 10000 }).trim();
}
// Waits (bounded) until no turn is queued or running — a /subtask child runs a turn on its
// goal after the response — then returns the row count of every table a message could touch.
async function counts() {
	for (let i = 0; i < 100 && sql("SELECT COUNT(*) FROM turns WHERE state IN ('queued', 'running')") !== '0'; i++)
		await new Promise((r) => setTimeout(r, 100));
	return Object.fromEntries(TABLES.map((name) => [name, Number(sql(`SELECT COUNT(*) FROM ${name}`))]));
}

const makeClient = (binding, participant) => sdkClient(clientMod, base, binding, participant);

let seq = 0;
const nextId = () => `collab-${process.pid}-${++seq}`;
const part = (content, mediaType = '') => ({ content, mediaType, filename: '', metadata: undefined });
const textPart = (text) => part({ $case: 'text', value: text });
const dataPart = (value, mediaType) => part({ $case: 'data', value }, mediaType);
const message = (parts, taskId = '') => ({
	messageId: nextId(), role: Role.ROLE_USER, contextId: '', taskId, extensions: [],
	referenceTaskIds: [], metadata: undefined, parts,
});
const req = (msg) => ({ tenant: '', message: msg, configuration: undefined, metadata: undefined });
const extensions = { serviceParameters: ServiceParameters.create(withA2AExtensions(TASK_EXT, CHANNEL_EXT, STATUS_EXT)) };
const textMsg = (text, taskId) => message([textPart(text)], taskId);
const completeMsg = (taskId) => message([dataPart({ kind: 'control', action: 'complete' }, MT_EVENT)], taskId);
const channelMsg = (taskId, value) => message([dataPart(value, MT_CHANNEL)], taskId);
const asTask = (r) => {
	assert.ok(r && r.status && typeof r.id === 'string', `expected a Task, got ${show(r)}`);
	return r;
};
const textOf = (msg) => (msg?.parts ?? []).filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('\n');
const dataParts = (msg, mediaType) => (msg?.parts ?? []).filter((p) => p.content?.$case === 'data' && p.mediaType === mediaType).map((p) => p.content.value);
const roles = (task) => Object.fromEntries((task.metadata?.[META_TASK]?.participants ?? []).map((p) => [p.id, p.role]));
// Every text in the history, with the text of channel data parts.
const historyTexts = (task) => (task.history ?? []).flatMap((m) => m.parts.map((p) =>
	p.content?.$case === 'text' ? p.content.value : (p.content?.$case === 'data' ? p.content.value?.text : undefined))).filter((x) => typeof x === 'string');
const need = (v, what) => {
	assert.ok(v, `not run: ${what} failed earlier`);
	return v;
};

async function refused(promise, cls, re, what) {
	let result;
	try {
		result = await promise;
	} catch (err) {
		assert.ok(err instanceof cls,
			`${what}: expected ${cls.name}, got ${err?.constructor?.name}: ${err?.message}`);
		if (re != null)
			assert.match(err.message, re, `${what}: message`);
		return err;
	}
	assert.fail(`${what}: expected ${cls.name}, but the call succeeded with ${show(result)}`);
}

// ------------------------------------------------------------------ the scenario, per binding
async function scenario(binding) {
	const tag = binding === 'JSONRPC' ? 'JSON-RPC' : 'HTTP+JSON';
	const alice = await makeClient(binding, 'alice');
	const bob = await makeClient(binding, 'bob');
	const wendy = await makeClient(binding, 'wendy');

	let task;
	await t.test(`[${tag}] TASK-4 ID-2 STATUS-1 a task envelope creates the task with alice reporter, bob admin, wendy watcher`, async () => {
		assert.equal(alice.transport.protocolName, binding);
		const envelope = dataPart({
			kind: 'task',
			payload: {
				name: `Launch (${tag})`, goal: 'Launch the product',
				participants: [{ id: 'bob', role: 'admin' }, { id: 'wendy', role: 'watcher' }],
			},
		}, MT_EVENT);
		const r = asTask(await alice.sendMessage(req(message([envelope, textPart('Kick-off')])), extensions));
		task = r;
		assert.equal(stateName(r.status.state), 'TASK_STATE_INPUT_REQUIRED', `status: ${show(r.status)}`);
		assert.deepEqual(r.metadata?.[META_STATUS], { sub_state: 'awaiting-next-message' }, `metadata: ${show(r.metadata)}`);
		assert.equal(r.metadata?.[META_TASK]?.name, `Launch (${tag})`);
		assert.equal(r.metadata?.[META_TASK]?.goal, 'Launch the product');
		assert.deepEqual(roles(r), { alice: 'reporter', bob: 'admin', wendy: 'watcher', 'tiny-harness': 'assignee' });
		// The stored envelope comes back as an SDK data part holding the decoded JSON.
		const first = r.history[0];
		assert.equal(first.parts[0].content?.$case, 'data', `first part: ${show(first.parts[0])}`);
		assert.equal(first.parts[0].mediaType, MT_EVENT);
		assert.equal(first.parts[0].content.value.kind, 'task');
		assert.equal(first.metadata?.participant_id, 'alice');
		const seen = await wendy.getTask({ tenant: '', id: r.id });
		assert.equal(seen.id, r.id, 'the watcher reads the task');
	});

	let requestId;
	await t.test(`[${tag}] CH-4 STATUS-1 /ask bob: INPUT_REQUIRED with sub_state awaiting-answer, participant_id bob, a request_id`, async () => {
		const t0 = need(task, 'the envelope');
		const r = asTask(await alice.sendMessage(req(textMsg('/ask bob Which launch date?', t0.id)), extensions));
		assert.equal(stateName(r.status.state), 'TASK_STATE_INPUT_REQUIRED');
		const st = r.metadata?.[META_STATUS];
		assert.equal(st?.sub_state, 'awaiting-answer', `metadata: ${show(r.metadata)}`);
		assert.equal(st?.participant_id, 'bob');
		assert.equal(typeof st?.request_id, 'string');
		assert.ok(st.request_id.length > 0);
		requestId = st.request_id;
		assert.equal(r.status.message?.role, Role.ROLE_AGENT);
		assert.equal(textOf(r.status.message), 'Which launch date?');
		const [hr] = dataParts(r.status.message, MT_CHANNEL);
		assert.ok(hr, `no channel data part in the status message: ${show(r.status.message)}`);
		assert.equal(hr.kind, 'help_request');
		assert.deepEqual(hr.to, ['bob']);
		assert.equal(hr.channel_id, t0.id);
		assert.equal(hr.text, 'Which launch date?');
	});

	await t.test(`[${tag}] CH-5 wendy's help_reply to bob's question is RequestMalformedError naming bob; nothing stored`, async () => {
		const t0 = need(task, 'the envelope');
		const rid = need(requestId, '/ask');
		const before = await counts();
		await refused(wendy.sendMessage(req(channelMsg(t0.id, {
			channel_id: t0.id, sender: 'wendy', kind: 'help_reply', text: 'June', in_reply_to: rid,
		}))), RequestMalformedError, /bob/, 'help_reply from wendy');
		assert.deepEqual(await counts(), before, 'rows changed');
		const got = await alice.getTask({ tenant: '', id: t0.id });
		assert.equal(got.metadata?.[META_STATUS]?.sub_state, 'awaiting-answer');
		assert.equal(got.metadata?.[META_STATUS]?.participant_id, 'bob');
	});

	await t.test(`[${tag}] CH-5 alice's message while bob is asked is kept but starts no turn`, async () => {
		const t0 = need(task, 'the envelope');
		const before = await counts();
		const r = asTask(await alice.sendMessage(req(textMsg('Bob, any idea?', t0.id))));
		assert.equal(r.metadata?.[META_STATUS]?.sub_state, 'awaiting-answer');
		const after = await counts();
		assert.equal(after.turns, before.turns, 'a turn was started');
		assert.equal(after.messages, before.messages + 1, 'the message was not stored');
	});

	await t.test(`[${tag}] CH-5 STATUS-1 bob's reply through the client resumes the task, which parks awaiting-next-message`, async () => {
		const t0 = need(task, 'the envelope');
		const rid = need(requestId, '/ask');
		const before = await counts();
		// JSON-RPC: a plain text answer; HTTP+JSON: a help_reply naming the request.
		const reply = binding === 'JSONRPC'
			? textMsg('The first of June.', t0.id)
			: channelMsg(t0.id, { channel_id: t0.id, sender: 'bob', kind: 'help_reply', text: 'The first of June.', in_reply_to: rid });
		const r = asTask(await bob.sendMessage(req(reply), extensions));
		assert.equal(stateName(r.status.state), 'TASK_STATE_INPUT_REQUIRED');
		assert.deepEqual(r.metadata?.[META_STATUS], { sub_state: 'awaiting-next-message' }, `metadata: ${show(r.metadata)}`);
		assert.equal(textOf(r.status.message), 'echo: The first of June.');
		assert.equal((await counts()).turns, before.turns + 1, 'the answer did not run one turn');
		assert.equal(sql(`SELECT state FROM help_requests WHERE id = '${rid}'`), 'answered');
	});

	await t.test(`[${tag}] STATUS-1 ID-4 a streamed /ask wendy ends with a status update carrying awaiting-answer; the watcher answers`, async () => {
		const t0 = need(task, 'the envelope');
		const events = [];
		for await (const ev of alice.sendMessageStream(req(textMsg('/ask wendy Is the press kit ready?', t0.id)), extensions))
			events.push(ev);
		assert.equal(events[0]?.payload?.$case, 'task', `events: ${show(events)}`);
		const updates = events.filter((e) => e.payload?.$case === 'statusUpdate').map((e) => e.payload.value);
		const last = updates[updates.length - 1];
		assert.ok(last, `no statusUpdate: ${show(events)}`);
		assert.equal(stateName(last.status.state), 'TASK_STATE_INPUT_REQUIRED');
		const st = last.metadata?.[META_STATUS];
		assert.equal(st?.sub_state, 'awaiting-answer', `update metadata: ${show(last.metadata)}`);
		assert.equal(st?.participant_id, 'wendy');
		const r = asTask(await wendy.sendMessage(req(channelMsg(t0.id, {
			channel_id: t0.id, sender: 'wendy', kind: 'help_reply', text: 'Yes, it is ready.', in_reply_to: st.request_id,
		})), extensions));
		assert.deepEqual(r.metadata?.[META_STATUS], { sub_state: 'awaiting-next-message' });
		const before = await counts();
		await refused(wendy.sendMessage(req(textMsg('One more thing', t0.id))), UnsupportedOperationError, /watcher/, 'watcher message');
		assert.deepEqual(await counts(), before, 'rows changed');
	});

	let child;
	await t.test(`[${tag}] CTL-4 completing the task while its /subtask child is open returns INPUT_REQUIRED naming the child`, async () => {
		const t0 = need(task, 'the envelope');
		const s = asTask(await alice.sendMessage(req(textMsg('/subtask Press: write the press release', t0.id))));
		child = `${t0.id}.1`;
		assert.deepEqual(s.metadata?.[META_TASK]?.sub_tasks, [{ task_id: child }], `metadata: ${show(s.metadata)}`);
		const c = await wendy.getTask({ tenant: '', id: child });
		assert.deepEqual(c.metadata?.[META_TASK]?.parent_tasks, [{ task_id: t0.id }]);
		assert.equal(roles(c).wendy, 'watcher', 'the child inherits the roles');
		const r = asTask(await alice.sendMessage(req(completeMsg(t0.id))));
		assert.equal(r.id, t0.id);
		assert.equal(stateName(r.status.state), 'TASK_STATE_INPUT_REQUIRED', `status: ${show(r.status)}`);
		assert.deepEqual(r.metadata?.[META_STATUS], { sub_state: 'awaiting-next-message' });
		assert.equal(r.status.message?.role, Role.ROLE_AGENT);
		const text = textOf(r.status.message);
		assert.ok(text.includes(child), `the status message does not name ${child}: ${text}`);
		assert.ok(text.includes('Press'), `the status message does not name the child "Press": ${text}`);
		// The child's own first turn may still be running on a loaded machine (ASan, CI):
		// wait (bounded) for it to park, then it must be parked, not completed.
		let after = await bob.getTask({ tenant: '', id: child });
		for (let i = 0; i < 100 && ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'].includes(stateName(after.status.state)); i++) {
			await new Promise((res) => setTimeout(res, 100));
			after = await bob.getTask({ tenant: '', id: child });
		}
		assert.equal(stateName(after.status.state), 'TASK_STATE_INPUT_REQUIRED', 'the child changed');
	});

	await t.test(`[${tag}] CTL-5 after bob completes the child, alice completes the task: COMPLETED "completed by alice"`, async () => {
		const t0 = need(task, 'the envelope');
		const c = need(child, '/subtask');
		const rc = asTask(await bob.sendMessage(req(completeMsg(c))));
		assert.equal(stateName(rc.status.state), 'TASK_STATE_COMPLETED');
		assert.equal(textOf(rc.status.message), 'completed by bob');
		const mid = await wendy.getTask({ tenant: '', id: t0.id });
		assert.ok(historyTexts(mid).includes(`sub-task ${c} (Press) is TASK_STATE_COMPLETED`), `parent history: ${show(historyTexts(mid))}`);
		const r = asTask(await alice.sendMessage(req(completeMsg(t0.id))));
		assert.equal(stateName(r.status.state), 'TASK_STATE_COMPLETED', `status: ${show(r.status)}`);
		assert.equal(textOf(r.status.message), 'completed by alice');
		assert.equal(r.metadata?.[META_STATUS], undefined, 'STATUS-2 the status key stays on a completed task');
	});
}

await scenario('JSONRPC');
await scenario('HTTP+JSON');
stop();
t.done();
