// SPDX-License-Identifier: Apache-2.0
// Extension payloads the server really produced, validated against the committed JSON Schemas
// under docs/a2a/ext (CARD-4). The program runs as plain CGI (one request per process, state
// in a temporary SQLite file) and as the `card` and `complete` commands.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';

import {
	META_STATUS, META_TASK, MT_CHANNEL, MT_EVENT, TH_BIN, Tap, assertInvalid, assertValid, cleanEnv,
	loadSchemas, makeTmp, removeTmp, rpc, runCli, show, sseEvents, cgi,
} from './lib.mjs';

const t = new Tap();
if (!TH_BIN)
	t.skipAll('TH_BIN is not set (run through make check)');
const schemas = await loadSchemas();
if (schemas == null)
	t.skipAll('ajv is not installed: run `npm ci` in the source tree');

const V = {
	task: schemas.validator('task.json'),
	patch: schemas.validator('task.json#/$defs/attributes'),
	plan: schemas.validator('task.json#/$defs/plan'),
	participant: schemas.validator('task.json#/$defs/participant'),
	status: schemas.validator('status.json'),
	channel: schemas.validator('channel.json'),
	commands: schemas.validator('commands.json'),
	event: schemas.validator('event.json'),
};

const tmp = makeTmp('th-schemas-');
const db = join(tmp, 'db');
const opts = { db, cwd: tmp };
const BASE = 'http://127.0.0.1:8080/';

let seq = 0;
function textMessage(text, extra = {}) {
	seq += 1;
	return { messageId: `schemas-${process.pid}-${seq}`, role: 'ROLE_USER', parts: [{ text }], ...extra };
}

function dataMessage(data, extra = {}) {
	seq += 1;
	return {
		messageId: `schemas-${process.pid}-${seq}`, role: 'ROLE_USER',
		parts: [{ data, mediaType: MT_EVENT }], ...extra,
	};
}

async function send(message, participant = 'alice') {
	const r = await rpc({ ...opts, participant }, 'SendMessage', { message });
	assert.equal(r.error, undefined, `SendMessage answered an error: ${show(r.rpc)}`);
	assert.ok(r.result?.task, `SendMessage result has no task: ${show(r.rpc)}`);
	return r.result.task;
}

async function getTask(id, participant = 'alice') {
	const r = await rpc({ ...opts, participant }, 'GetTask', { id });
	assert.equal(r.error, undefined, `GetTask answered an error: ${show(r.rpc)}`);
	assert.ok(r.result?.id, `GetTask result is not a task: ${show(r.rpc)}`);
	return r.result;
}

function need(v, what) {
	assert.ok(v, `skipped: ${what} did not succeed earlier`);
	return v;
}

// ---------------------------------------------------------------------------------------------
// The schemas themselves: each accepts what the spec allows and refuses what it forbids.

await t.test('CARD-4 the five extension schemas compile (draft 2020-12, strict)', async () => {
	for (const [name, v] of Object.entries(V))
		assert.equal(typeof v, 'function', name);
});

await t.test('TASK-1 task.json requires name and goal and refuses unknown keys', async () => {
	const full = {
		name: 'Report', goal: 'Write the report', type: null, description: '',
		acceptance_criteria: [{ text: 'numbers checked', met: false }],
		participants: [
			{ id: 'alice', kind: 'human', role: 'reporter', display_name: 'Alice' },
			{ id: 'tiny-harness', kind: 'agent', role: 'assignee', display_name: '' },
		],
		parent_tasks: [], sub_tasks: [{ task_id: 't-2' }],
		plan: {
			steps: [
				{ id: 'gather', name: 'gather', description: '', depends_on: [], state: 'done', output: 'ok', linked_tasks: ['t-2'] },
				{ id: 'write', name: 'write', description: '', depends_on: ['gather'], state: 'pending', output: null, linked_tasks: [] },
			],
		},
	};
	assertValid(V.task, full, 'a full task object');
	assertValid(V.task, { name: 'n', goal: 'g', plan: null }, 'a minimal task object');
	assertInvalid(V.task, { name: 'n' }, 'a task without goal');
	assertInvalid(V.task, { goal: 'g' }, 'a task without name');
	assertInvalid(V.task, { name: 'n', goal: 'g', owner: 'x' }, 'a task with an unknown key');
	assertInvalid(V.task, { name: 'n', goal: 'g', participants: [{ id: 'a', role: 'boss' }] }, 'an unknown role');
	assertInvalid(V.task, { name: 'n', goal: 'g', participants: [{ id: 'a', kind: 'robot', role: 'admin' }] }, 'an unknown kind');
	assertInvalid(V.task, { name: 'n', goal: 'g', plan: { steps: [{ id: 'a', name: 'a', state: 'skipped' }] } }, 'an unknown step state');
	assertInvalid(V.task, { name: 'n', goal: 'g', sub_tasks: [{ task_id: 't', state: 'x' }] }, 'a task ref with an extra key');
	assertValid(V.patch, { name: 'renamed' }, 'an update naming one key');
});

await t.test('STATUS-1 status.json: awaiting-answer needs participant_id and request_id', async () => {
	assertValid(V.status, { sub_state: 'awaiting-next-message' }, 'awaiting-next-message');
	assertValid(V.status, { sub_state: 'awaiting-answer', participant_id: 'bob', request_id: 'r1' }, 'awaiting-answer');
	assertInvalid(V.status, { sub_state: 'awaiting-answer', participant_id: 'bob' }, 'awaiting-answer without request_id');
	assertInvalid(V.status, { sub_state: 'awaiting-answer', request_id: 'r1' }, 'awaiting-answer without participant_id');
	assertInvalid(V.status, { sub_state: 'awaiting-next-message', participant_id: 'bob' }, 'awaiting-next-message with an id');
	assertInvalid(V.status, { sub_state: 'waiting' }, 'an unknown sub_state');
	assertInvalid(V.status, {}, 'no sub_state');
});

await t.test('CTL-1 TASK-3 event.json: control is exactly {kind, action: complete}; unknown kinds refused', async () => {
	assertValid(V.event, { kind: 'control', action: 'complete' }, 'the control envelope');
	assertInvalid(V.event, { kind: 'control', action: 'cancel' }, 'an unknown action');
	assertInvalid(V.event, { kind: 'control' }, 'a control envelope without action');
	assertInvalid(V.event, { kind: 'control', action: 'complete', reason: 'x' }, 'a control envelope with an extra field');
	assertValid(V.event, { kind: 'task', payload: { name: 'n', goal: 'g' } }, 'a task envelope');
	assertInvalid(V.event, { kind: 'task', payload: { name: 'n', goal: 'g', x: 1 } }, 'a task payload with an unknown key');
	assertInvalid(V.event, { kind: 'task' }, 'a task envelope without payload');
	assertInvalid(V.event, { kind: 'status_update', payload: {} }, 'a kind clients may not send');
	for (const kind of ['plan_updated', 'step_updated', 'subtask', 'participants_updated'])
		assertValid(V.event, { kind, payload: {} }, `a ${kind} envelope`);
	assertInvalid(V.event, { kind: 'plan_updated', payload: {}, extra: 1 }, 'a harness event with an extra field');
});

await t.test('CH-1 channel.json: kinds, help_reply needs in_reply_to, parts are A2A parts', async () => {
	assertValid(V.channel, { channel_id: 't1', sender: 'alice', kind: 'message', text: 'hi', parts: [], in_reply_to: null, to: [] }, 'a message');
	assertValid(V.channel, { channel_id: 't1', sender: 'tiny-harness', kind: 'help_request', text: 'when?', to: ['bob'] }, 'a help request');
	assertValid(V.channel, { channel_id: 't1', sender: 'bob', kind: 'help_reply', text: 'friday', in_reply_to: 'r1' }, 'a help reply');
	assertInvalid(V.channel, { channel_id: 't1', sender: 'bob', kind: 'help_reply', text: 'friday' }, 'a help reply without in_reply_to');
	assertInvalid(V.channel, { channel_id: 't1', sender: 'bob', kind: 'shout' }, 'an unknown kind');
	assertInvalid(V.channel, { sender: 'bob' }, 'no channel_id');
	assertValid(V.channel, { channel_id: 't1', sender: 'a', parts: [{ text: 'x' }, { data: { a: 1 }, mediaType: 'application/json' }] }, 'A2A parts');
	assertInvalid(V.channel, { channel_id: 't1', sender: 'a', parts: [{ text: 'x', data: 1 }] }, 'a part with two contents');
});

await t.test('CMD-1 commands.json: name without slash, all three fields', async () => {
	assertValid(V.commands, { commands: [{ name: 'help', description: 'list commands', argument_hint: '' }] }, 'one command');
	assertInvalid(V.commands, { commands: [{ name: '/help', description: 'd', argument_hint: '' }] }, 'a name with its slash');
	assertInvalid(V.commands, { commands: [{ name: 'help', description: 'd' }] }, 'no argument_hint');
	assertInvalid(V.commands, {}, 'no commands key');
});

// ---------------------------------------------------------------------------------------------
// Real payloads.

let card;
await t.test('CARD-4 CMD-1 the card\'s commands params (tiny-harness card) match commands.json', async () => {
	const r = runCli(['card'], { cwd: tmp, env: { TINY_HARNESS_BASE_URL: BASE } });
	assert.equal(r.status, 0, `tiny-harness card exited ${r.status}: ${r.stderr} ${r.error ?? ''}`);
	card = JSON.parse(r.stdout);
	const ext = (card.capabilities?.extensions ?? []).find((e) => e.uri.endsWith('/a2a/ext/commands/v1'));
	assert.ok(ext, `no commands extension on the card: ${show(card.capabilities)}`);
	assertValid(V.commands, ext.params, 'the commands extension params');
	const names = ext.params.commands.map((c) => c.name);
	for (const builtin of ['help', 'status', 'plan', 'step', 'ask', 'subtask', 'invite', 'role', 'confirm'])
		assert.ok(names.includes(builtin), `built-in /${builtin} (CMD-3) is not listed: ${names.join(', ')}`);
});

let task1;
await t.test('TASK-1 TASK-2 SendMessage (CGI): Task.metadata task object matches task.json', async () => {
	const task = await send(textMessage('Draft the quarterly report\nwith the numbers from finance'));
	task1 = task;
	const attrs = task.metadata?.[META_TASK];
	assert.ok(attrs, `no ${META_TASK} in Task.metadata: ${show(task)}`);
	assertValid(V.task, attrs, 'Task.metadata task object');
	assert.equal(attrs.name, 'Draft the quarterly report');
	assert.equal(attrs.goal, 'Draft the quarterly report\nwith the numbers from finance');
	const byId = Object.fromEntries((attrs.participants ?? []).map((p) => [p.id, p]));
	assert.equal(byId.alice?.role, 'reporter', `participants: ${show(attrs.participants)}`);
	assert.equal(byId.alice?.kind, 'human');
	assert.equal(byId['tiny-harness']?.role, 'assignee');
	assert.equal(byId['tiny-harness']?.kind, 'agent');
});

await t.test('STATUS-1 SendMessage (CGI): parked INPUT_REQUIRED with status object awaiting-next-message', async () => {
	const task = need(task1, 'SendMessage');
	assert.equal(task.status?.state, 'TASK_STATE_INPUT_REQUIRED', `state: ${show(task.status)}`);
	const st = task.metadata?.[META_STATUS];
	assertValid(V.status, st, 'Task.metadata status object');
	assert.deepEqual(st, { sub_state: 'awaiting-next-message' });
});

await t.test('STATUS-1 SendStreamingMessage (CGI): the status update entering INPUT_REQUIRED carries the status object', async () => {
	const task = need(task1, 'SendMessage');
	seq += 1;
	const http = await cgi({
		...opts,
		body: {
			jsonrpc: '2.0', id: 'stream-1', method: 'SendStreamingMessage',
			params: { message: { messageId: `schemas-${process.pid}-${seq}`, role: 'ROLE_USER', taskId: task.id, parts: [{ text: 'and add a chart' }] } },
		},
	});
	assert.match(http.headers['content-type'] ?? '', /^text\/event-stream/, `content-type; body: ${http.body.slice(0, 500)}`);
	const events = sseEvents(http.body);
	const errs = events.filter((e) => e.error);
	assert.equal(errs.length, 0, `stream carried errors: ${show(errs)}`);
	const updates = events.map((e) => e.result?.statusUpdate).filter(Boolean);
	const parked = updates.filter((u) => u.status?.state === 'TASK_STATE_INPUT_REQUIRED');
	assert.ok(parked.length > 0, `no statusUpdate to INPUT_REQUIRED among ${events.length} events: ${show(events)}`);
	const st = parked[parked.length - 1].metadata?.[META_STATUS];
	assertValid(V.status, st, 'statusUpdate.metadata status object');
	assert.equal(st.sub_state, 'awaiting-next-message');
	for (const u of updates.filter((x) => x.status?.state !== 'TASK_STATE_INPUT_REQUIRED'))
		assert.equal(u.metadata?.[META_STATUS], undefined, `STATUS-2: status key on a ${u.status?.state} update`);
});

let task2;
await t.test('TASK-1 TASK-4 a task envelope creates a task whose metadata matches task.json', async () => {
	const payload = {
		name: 'Release 0.2', goal: 'Ship release 0.2', description: 'tag, build, announce',
		acceptance_criteria: [{ text: 'tarball builds', met: false }, { text: 'notes written', met: false }],
	};
	assertValid(V.task, payload, 'the payload sent');
	const task = await send(dataMessage({ kind: 'task', payload }));
	task2 = task;
	const attrs = task.metadata?.[META_TASK];
	assertValid(V.task, attrs, 'Task.metadata task object');
	assert.equal(attrs.name, payload.name);
	assert.equal(attrs.goal, payload.goal);
	assert.deepEqual(attrs.acceptance_criteria, payload.acceptance_criteria);
	const byId = Object.fromEntries((attrs.participants ?? []).map((p) => [p.id, p]));
	assert.equal(byId.alice?.role, 'reporter', `TASK-4 sender added as reporter: ${show(attrs.participants)}`);
	assert.equal(byId['tiny-harness']?.role, 'assignee', 'TASK-4 tiny-harness added as assignee');
});

await t.test('TASK-1 TASK-8 /plan: a plan_updated status-update envelope matching event.json, the plan in task.json shape', async () => {
	const created = need(task2, 'task envelope creation');
	seq += 1;
	const http = await cgi({
		...opts,
		body: {
			jsonrpc: '2.0', id: 'plan-1', method: 'SendStreamingMessage',
			params: { message: { messageId: `schemas-${process.pid}-${seq}`, role: 'ROLE_USER', taskId: created.id, parts: [{ text: '/plan build the tarball; write the notes; announce' }] } },
		},
	});
	const events = sseEvents(http.body);
	const envs = [];
	for (const ev of events) {
		const msg = ev.result?.statusUpdate?.status?.message;
		for (const p of msg?.parts ?? [])
			if (p.mediaType === MT_EVENT && p.data?.kind === 'plan_updated')
				envs.push({ msg, data: p.data });
	}
	assert.ok(envs.length > 0, `no status update carries a plan_updated envelope: ${show(events)}`);
	for (const e of envs) {
		assertValid(V.event, e.data, 'the plan_updated envelope');
		assert.equal(e.msg.role, 'ROLE_AGENT');
		if (e.data.payload.plan !== undefined)
			assertValid(V.plan, e.data.payload.plan, 'the plan in the plan_updated payload');
	}
	const task = await getTask(created.id);
	const attrs = task.metadata?.[META_TASK];
	assertValid(V.task, attrs, 'Task.metadata task object with a plan');
	assert.ok(attrs.plan && attrs.plan.steps.length === 3, `plan: ${show(attrs.plan)}`);
	assert.deepEqual(attrs.plan.steps.map((s) => s.name), ['build the tarball', 'write the notes', 'announce']);
	assert.deepEqual(attrs.plan.steps.map((s) => s.state), ['pending', 'pending', 'pending']);
});

// The harness's own envelopes (TASK-8), collected from the status updates of a streamed command.
async function streamedEnvelopes(taskId, text) {
	seq += 1;
	const http = await cgi({
		...opts,
		body: {
			jsonrpc: '2.0', id: `cmd-${seq}`, method: 'SendStreamingMessage',
			params: { message: { messageId: `schemas-${process.pid}-${seq}`, role: 'ROLE_USER', taskId, parts: [{ text }] } },
		},
	});
	const events = sseEvents(http.body);
	const errs = events.filter((e) => e.error);
	assert.equal(errs.length, 0, `${text}: ${show(errs)}`);
	const envs = [];
	for (const ev of events)
		for (const p of ev.result?.statusUpdate?.status?.message?.parts ?? [])
			if (p.mediaType === MT_EVENT)
				envs.push(p.data);
	return { envs, events };
}

await t.test('TASK-1 TASK-8 /step, /subtask, /invite: step_updated, subtask, participants_updated match event.json; links match task.json', async () => {
	const created = need(task2, 'task envelope creation');
	const kinds = {};
	for (const [text, kind] of [
		['/step build the tarball done tarball built', 'step_updated'],
		['/subtask Changelog: collect the changes since 0.1', 'subtask'],
		['/invite carol watcher', 'participants_updated'],
	]) {
		const { envs, events } = await streamedEnvelopes(created.id, text);
		const mine = envs.filter((d) => d?.kind === kind);
		assert.ok(mine.length > 0, `${text}: no ${kind} envelope among ${show(events)}`);
		for (const d of envs)
			assertValid(V.event, d, `the ${d?.kind} envelope of ${text}`);
		kinds[kind] = mine[0];
	}
	if (kinds.step_updated.payload.plan !== undefined)
		assertValid(V.plan, kinds.step_updated.payload.plan, 'the plan in the step_updated payload');
	if (kinds.participants_updated.payload.participants !== undefined)
		for (const p of kinds.participants_updated.payload.participants)
			assertValid(V.participant, p, 'a participant in the participants_updated payload');
	const parent = await getTask(created.id);
	const attrs = parent.metadata?.[META_TASK];
	assertValid(V.task, attrs, 'the parent\'s task object');
	const step = attrs.plan?.steps?.find((x) => x.name === 'build the tarball');
	assert.equal(step?.state, 'done', `step: ${show(step)}`);
	assert.equal(step?.output, 'tarball built');
	assert.equal(attrs.sub_tasks.length, 1, `sub_tasks: ${show(attrs.sub_tasks)}`);
	assert.ok(attrs.participants.some((x) => x.id === 'carol' && x.role === 'watcher'), 'carol is a watcher');
	const child = await getTask(attrs.sub_tasks[0].task_id);
	const cattrs = child.metadata?.[META_TASK];
	assertValid(V.task, cattrs, 'the sub-task\'s task object');
	assert.deepEqual(cattrs.parent_tasks, [{ task_id: created.id }]);
	assert.equal(cattrs.name, 'Changelog');
	assert.equal(cattrs.goal, 'collect the changes since 0.1');
});

await t.test('CTL-4 STATUS-1 completion with an unresolved sub-task is refused: parked awaiting-next-message, naming it', async () => {
	const created = need(task2, 'task envelope creation');
	const before = await getTask(created.id);
	const child = before.metadata?.[META_TASK]?.sub_tasks?.[0]?.task_id;
	assert.ok(child, `no sub-task: ${show(before.metadata)}`);
	const task = await send(dataMessage({ kind: 'control', action: 'complete' }, { taskId: created.id }));
	assert.equal(task.status?.state, 'TASK_STATE_INPUT_REQUIRED', show(task.status));
	assertValid(V.status, task.metadata?.[META_STATUS], 'Task.metadata status object');
	assert.equal(task.metadata[META_STATUS].sub_state, 'awaiting-next-message');
	assert.equal(task.status.message?.role, 'ROLE_AGENT');
	const text = (task.status.message?.parts ?? []).map((p) => p.text ?? '').join('');
	assert.ok(text.includes(child) && text.includes('Changelog'), `the status message names the sub-task: ${text}`);
	assertValid(V.task, task.metadata?.[META_TASK], 'Task.metadata task object');
});

await t.test('STATUS-1 CH-1 CH-4 /ask: awaiting-answer status object and help_request part match their schemas', async () => {
	const created = need(task2, 'task envelope creation');
	await send(textMessage('/invite bob assignee', { taskId: created.id }));
	const task = await send(textMessage('/ask bob which date should the release carry?', { taskId: created.id }));
	assert.equal(task.status?.state, 'TASK_STATE_INPUT_REQUIRED', show(task.status));
	const st = task.metadata?.[META_STATUS];
	assertValid(V.status, st, 'Task.metadata status object');
	assert.equal(st.sub_state, 'awaiting-answer');
	assert.equal(st.participant_id, 'bob');
	const asks = (task.status?.message?.parts ?? []).filter((p) => p.mediaType === MT_CHANNEL);
	assert.equal(asks.length, 1, `status message parts: ${show(task.status?.message)}`);
	assertValid(V.channel, asks[0].data, 'the help_request channel part');
	assert.equal(asks[0].data.kind, 'help_request');
	assert.deepEqual(asks[0].data.to, ['bob']);
});

// `tiny-harness complete TASK --as ID` builds the control envelope with th_complete_message
// (CTL-9) and sends it to a server; a loopback listener stands in for the server and keeps what
// arrived.
await t.test('CTL-1 CTL-9 the control envelope built by `tiny-harness complete` matches event.json', async () => {
	const got = [];
	const server = createServer((req, res) => {
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => {
			const text = Buffer.concat(chunks).toString('utf8');
			let body = null;
			try {
				body = JSON.parse(text);
			} catch { /* recorded as text */ }
			got.push({ url: req.url, headers: req.headers, text, body });
			const task = { id: 'captured', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-01-01T00:00:00.000Z' } };
			res.setHeader('Content-Type', 'application/json');
			res.end(JSON.stringify(body?.jsonrpc ? { jsonrpc: '2.0', id: body.id, result: { task } } : { task }));
		});
	});
	await new Promise((r) => server.listen(0, '127.0.0.1', r));
	const url = `http://127.0.0.1:${server.address().port}/`;
	try {
		const r = await new Promise((resolve) => {
			const child = spawn(TH_BIN, ['complete', 'task-123', '--as', 'alice', '--url', url],
				{ cwd: tmp, env: cleanEnv({ TINY_HARNESS_BASE_URL: url, TINY_HARNESS_DB: db }) });
			let out = '';
			let err = '';
			child.stdout.on('data', (d) => { out += d; });
			child.stderr.on('data', (d) => { err += d; });
			const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
			child.on('close', (code) => { clearTimeout(timer); resolve({ code, out, err }); });
			child.on('error', (e) => { clearTimeout(timer); resolve({ code: -1, out, err: String(e) }); });
		});
		assert.equal(got.length, 1, `expected one request to ${url}, got ${got.length}; exit ${r.code}; stderr: ${r.err}`);
		const body = got[0].body;
		const message = body?.params?.message ?? body?.message;
		assert.ok(message, `no message in the request: ${got[0].text}`);
		assert.equal(message.taskId, 'task-123');
		assert.equal(message.parts?.length, 1, `CTL-1 the envelope is the only part: ${show(message.parts)}`);
		assert.equal(message.parts[0].mediaType, MT_EVENT);
		assertValid(V.event, message.parts[0].data, 'the control envelope');
		assert.deepEqual(message.parts[0].data, { kind: 'control', action: 'complete' });
		assert.equal(got[0].headers['x-participant-id'], 'alice');
		assert.equal(r.code, 0, `complete exited ${r.code}: ${r.err}`);
	} finally {
		server.close();
	}
});

await t.test('CTL-5 STATUS-2 the control envelope completes the task; the task object still matches, the status key is gone', async () => {
	const task0 = need(task1, 'SendMessage');
	const task = await send(dataMessage({ kind: 'control', action: 'complete' }, { taskId: task0.id }));
	assert.equal(task.status?.state, 'TASK_STATE_COMPLETED', show(task.status));
	assert.equal(task.status?.message?.parts?.[0]?.text, 'completed by alice');
	assertValid(V.task, task.metadata?.[META_TASK], 'Task.metadata task object after completion');
	assert.equal(task.metadata?.[META_STATUS], undefined, `status key on a completed task: ${show(task.metadata)}`);
});

removeTmp(tmp);
t.done();
