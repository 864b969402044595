// SPDX-License-Identifier: Apache-2.0
// The official A2A JS client (@a2a-js/sdk) driving tiny-harness end to end behind lighttpd.
// Every A2A call goes through the SDK's Client; the only hand-made HTTP is server.sh waiting
// for the card. Run once per binding (sdk_jsonrpc.mjs, sdk_rest.mjs).
//
// The sender header: ParticipantInterceptor (tests/lib/interop.mjs) sets X-Participant-Id on
// every call that does not already name one.
import assert from 'node:assert/strict';

import { META_STATUS, META_TASK, MT_EVENT, TH_BIN, Tap, makeTmp, show } from '../contract/lib.mjs';
import { findLighttpd, sdkClient, startLighttpdOrExit } from '../lib/interop.mjs';
import { importDep, missingModules } from './deps.mjs';

const TASK_EXT = 'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/task/v1';
const ALL_EXTS = [
	TASK_EXT,
	'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/channel/v1',
	'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/status/v1',
	'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/commands/v1',
	'https://a2ui.org/a2a-extension/a2ui/v0.9.1',
];
const UNKNOWN_EXT = 'https://example.test/ext/not-on-the-card/v1';

export async function run(binding) {
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
	const { ServiceParameters, withA2AExtensions } = client;
	const { TaskNotFoundError, TaskNotCancelableError, UnsupportedOperationError, RequestMalformedError } = errors;

	const stateName = (s) => TaskState[s] ?? String(s);

	// ------------------------------------------------------------------ server
	const dir = makeTmp(`th-interop-${binding === 'JSONRPC' ? 'rpc' : 'rest'}-`);
	const { base, stop } = startLighttpdOrExit(dir);
	console.log(`# ${binding} against ${base} (state in ${dir})`);

	// ------------------------------------------------------------------ helpers
	const makeClient = (participant) => sdkClient(client, base, binding, participant);

	let seq = 0;
	const nextId = () => `interop-${binding}-${process.pid}-${++seq}`;
	const part = (content, mediaType = '') => ({ content, mediaType, filename: '', metadata: undefined });
	const message = (parts, taskId = '') => ({
		messageId: nextId(), role: Role.ROLE_USER, contextId: '', taskId, extensions: [],
		referenceTaskIds: [], metadata: undefined, parts,
	});
	const textMsg = (text, taskId) => message([part({ $case: 'text', value: text })], taskId);
	const controlPart = (data = { kind: 'control', action: 'complete' }) => part({ $case: 'data', value: data }, MT_EVENT);
	const controlMsg = (taskId) => message([controlPart()], taskId);
	const req = (msg) => ({ tenant: '', message: msg, configuration: undefined, metadata: undefined });
	const asTask = (r) => {
		assert.ok(r && r.status && typeof r.id === 'string', `expected a Task, got ${show(r)}`);
		return r;
	};
	const textOf = (msg) => (msg?.parts ?? []).filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('');
	const need = (v, what) => {
		assert.ok(v, `not run: ${what} failed earlier`);
		return v;
	};

	// Awaits a call that must fail with the SDK's typed error cls whose message matches re.
	async function refused(promise, cls, re, what) {
		let result;
		try {
			result = await promise;
		} catch (err) {
			assert.ok(err instanceof cls,
				`${what}: expected ${cls.name}, got ${err?.constructor?.name} ${err?.name}: ${err?.message}` +
				`${err?.envelopeCode != null ? ` (code ${err.envelopeCode})` : ''}${err?.statusCode != null ? ` (HTTP ${err.statusCode})` : ''}`);
			if (re != null)
				assert.match(err.message, re, `${what}: message`);
			return err;
		}
		assert.fail(`${what}: expected ${cls.name}, but the call succeeded with ${show(result)}`);
	}

	const alice = await makeClient('alice');
	const mallory = await makeClient('mallory');
	const bob = await makeClient('bob');
	const nobody = await makeClient(null);

	// ------------------------------------------------------------------ tests
	await t.test(`CARD-1 createFromUrl reads the card and selects ${binding}, protocol 1.0`, async () => {
		assert.equal(alice.transport.protocolName, binding);
		assert.equal(alice.protocolVersion, '1.0');
		const card = await alice.getAgentCard();
		assert.equal(card.name, 'tiny-harness');
		assert.deepEqual(card.capabilities.extensions.map((e) => e.uri), ALL_EXTS);
		assert.equal(card.capabilities.streaming, true);
	});

	await t.test('EXT-1 an extension the card does not list is refused with UnsupportedOperation naming it; nothing stored', async () => {
		const before = await alice.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined });
		const err = await refused(
			alice.sendMessage(req(textMsg('this must not be stored')),
				{ serviceParameters: ServiceParameters.create(withA2AExtensions(TASK_EXT, UNKNOWN_EXT)) }),
			UnsupportedOperationError, null, 'unknown extension');
		assert.ok(err.message.includes(UNKNOWN_EXT), `the message names the URI: ${err.message}`);
		const after = await alice.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined });
		assert.equal(after.totalSize, before.totalSize, 'a task was stored');
	});

	let task;
	await t.test('TASK-2 STATUS-1 CTL-7 sendMessage creates a task parked in INPUT_REQUIRED · awaiting-next-message', async () => {
		const r = asTask(await alice.sendMessage(req(textMsg('Plan the team offsite\nfor twelve people')),
			{ serviceParameters: ServiceParameters.create(withA2AExtensions(...ALL_EXTS)) }));
		task = r;
		assert.equal(stateName(r.status.state), 'TASK_STATE_INPUT_REQUIRED', `status: ${show(r.status)}`);
		assert.deepEqual(r.metadata?.[META_STATUS], { sub_state: 'awaiting-next-message' }, `metadata: ${show(r.metadata)}`);
		const attrs = r.metadata?.[META_TASK];
		assert.equal(attrs?.name, 'Plan the team offsite');
		assert.equal(attrs?.goal, 'Plan the team offsite\nfor twelve people');
		assert.equal(r.status.message?.role, Role.ROLE_AGENT, 'the reply is an agent message');
	});

	await t.test('STREAM-5 getTask reads the task back with its history; historyLength limits it', async () => {
		const t0 = need(task, 'sendMessage');
		const got = await alice.getTask({ tenant: '', id: t0.id });
		assert.equal(got.id, t0.id);
		assert.equal(stateName(got.status.state), 'TASK_STATE_INPUT_REQUIRED');
		assert.ok(got.history.length >= 2, `history: ${show(got.history)}`);
		const first = got.history[0];
		assert.equal(first.role, Role.ROLE_USER);
		assert.equal(textOf(first), 'Plan the team offsite\nfor twelve people');
		assert.equal(first.metadata?.participant_id, 'alice', 'ID-1 the stored message records its sender');
		assert.ok(got.history.some((m) => m.role === Role.ROLE_AGENT), 'an agent reply in history');
		const one = await alice.getTask({ tenant: '', id: t0.id, historyLength: 1 });
		assert.equal(one.history.length, 1, `historyLength 1: ${show(one.history)}`);
		assert.equal(one.history[0].messageId, got.history[got.history.length - 1].messageId, 'the most recent message');
	});

	await t.test('STREAM-5 ID-3 listTasks finds the task for alice and not for a stranger', async () => {
		const t0 = need(task, 'sendMessage');
		const mine = await alice.listTasks({ tenant: '', contextId: t0.contextId, status: 0, pageToken: '', statusTimestampAfter: undefined });
		assert.ok(mine.tasks.some((x) => x.id === t0.id), `alice's list: ${show(mine)}`);
		assert.equal(mine.totalSize, mine.tasks.length);
		const all = await alice.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_INPUT_REQUIRED, pageToken: '', statusTimestampAfter: undefined });
		assert.ok(all.tasks.some((x) => x.id === t0.id), 'status filter INPUT_REQUIRED');
		const theirs = await mallory.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined });
		assert.ok(!theirs.tasks.some((x) => x.id === t0.id), 'a stranger lists it');
	});

	await t.test('TASK-6 a follow-up message continues the task and parks it again', async () => {
		const t0 = need(task, 'sendMessage');
		const r = asTask(await alice.sendMessage(req(textMsg('Budget is 5000 EUR', t0.id))));
		assert.equal(r.id, t0.id);
		assert.equal(stateName(r.status.state), 'TASK_STATE_INPUT_REQUIRED');
		assert.deepEqual(r.metadata?.[META_STATUS], { sub_state: 'awaiting-next-message' });
		const got = await alice.getTask({ tenant: '', id: t0.id });
		assert.ok(got.history.some((m) => textOf(m) === 'Budget is 5000 EUR'), 'the follow-up is in history');
		assert.ok(got.history.length >= 4, `history length ${got.history.length}`);
	});

	await t.test('STREAM-1 STATUS-1 sendMessageStream: the task first, the last status update INPUT_REQUIRED with the sub-state', async () => {
		const t0 = need(task, 'sendMessage');
		const events = [];
		for await (const ev of alice.sendMessageStream(req(textMsg('Prefer a venue near a lake', t0.id))))
			events.push(ev);
		assert.ok(events.length >= 2, `events: ${show(events)}`);
		assert.equal(events[0].payload?.$case, 'task', 'the first event is the Task');
		const updates = events.filter((e) => e.payload?.$case === 'statusUpdate').map((e) => e.payload.value);
		const last = updates[updates.length - 1];
		assert.ok(last, `no statusUpdate: ${show(events)}`);
		assert.equal(stateName(last.status.state), 'TASK_STATE_INPUT_REQUIRED');
		assert.deepEqual(last.metadata?.[META_STATUS], { sub_state: 'awaiting-next-message' });
	});

	await t.test('STREAM-2 CTL-5 resubscribeTask: the current Task first, then a completion sent by another client, the stream ending at COMPLETED', async () => {
		const t0 = await alice.sendMessage(req(textMsg('A task to follow')));
		const events = [];
		const following = (async () => {
			for await (const ev of bob.resubscribeTask({ tenant: '', id: t0.id }))
				events.push(ev);
		})();
		// bob is no participant: the subscription is refused like any stranger's read.
		await refused(following, TaskNotFoundError, null, 'stranger resubscribe');
		const seen = [];
		const sub = (async () => {
			for await (const ev of alice.resubscribeTask({ tenant: '', id: t0.id }))
				seen.push(ev);
		})();
		// Let the subscription open (its first event is the Task), then complete through
		// a second client: the SDK's stream must deliver the final update and end.
		for (let i = 0; i < 100 && seen.length === 0; i++)
			await new Promise((r) => setTimeout(r, 50));
		assert.equal(seen[0]?.payload?.$case, 'task', `the first event is the Task: ${show(seen)}`);
		assert.equal(stateName(seen[0].payload.value.status.state), 'TASK_STATE_INPUT_REQUIRED');
		const other = await makeClient('alice');
		await other.sendMessage(req(controlMsg(t0.id)));
		await Promise.race([sub, new Promise((_, rej) => setTimeout(() => rej(new Error('the stream did not end')), 15000))]);
		const last = seen[seen.length - 1]?.payload;
		assert.equal(last?.$case, 'statusUpdate', `events: ${show(seen)}`);
		assert.equal(stateName(last.value.status.state), 'TASK_STATE_COMPLETED');
		assert.equal(textOf(last.value.status.message), 'completed by alice');
	});

	await t.test('ID-3 a stranger\'s getTask is TaskNotFound, worded as for a task that does not exist', async () => {
		const t0 = need(task, 'sendMessage');
		const e1 = await refused(mallory.getTask({ tenant: '', id: t0.id }), TaskNotFoundError, null, 'stranger getTask');
		const missing = '00000000-0000-4000-8000-000000000000';
		const e2 = await refused(alice.getTask({ tenant: '', id: missing }), TaskNotFoundError, null, 'getTask of a missing id');
		assert.equal(e1.message.replaceAll(t0.id, 'ID'), e2.message.replaceAll(missing, 'ID'), 'the two texts differ');
	});

	await t.test('CTL-2 ID-3 completion with no sender is invalid params; by a stranger TaskNotFound; nothing changes', async () => {
		const t0 = need(task, 'sendMessage');
		await refused(nobody.sendMessage(req(controlMsg(t0.id))), RequestMalformedError, /participant/i, 'no sender');
		await refused(mallory.sendMessage(req(controlMsg(t0.id))), TaskNotFoundError, null, 'stranger');
		const got = await alice.getTask({ tenant: '', id: t0.id });
		assert.equal(stateName(got.status.state), 'TASK_STATE_INPUT_REQUIRED');
	});

	await t.test('ID-4 CTL-2 a watcher may read but not complete: UnsupportedOperation naming the watcher role', async () => {
		const t0 = need(task, 'sendMessage');
		await alice.sendMessage(req(textMsg('/invite bob watcher', t0.id)));
		const seen = await bob.getTask({ tenant: '', id: t0.id });
		assert.equal(seen.id, t0.id, 'the watcher reads the task');
		const before = await alice.getTask({ tenant: '', id: t0.id });
		await refused(bob.sendMessage(req(controlMsg(t0.id))), UnsupportedOperationError, /watcher/i, 'watcher completion');
		const after = await alice.getTask({ tenant: '', id: t0.id });
		assert.equal(stateName(after.status.state), 'TASK_STATE_INPUT_REQUIRED');
		assert.equal(after.history.length, before.history.length, 'nothing stored');
	});

	let done;
	await t.test('CTL-1 CTL-5 STATUS-2 the control envelope completes the task: COMPLETED, "completed by alice"', async () => {
		const t0 = need(task, 'sendMessage');
		const r = asTask(await alice.sendMessage(req(controlMsg(t0.id))));
		done = r;
		assert.equal(r.id, t0.id);
		assert.equal(stateName(r.status.state), 'TASK_STATE_COMPLETED', `status: ${show(r.status)}`);
		assert.equal(textOf(r.status.message), 'completed by alice');
		assert.equal(r.metadata?.[META_STATUS], undefined, `status key on a completed task: ${show(r.metadata)}`);
		const got = await alice.getTask({ tenant: '', id: t0.id });
		assert.equal(stateName(got.status.state), 'TASK_STATE_COMPLETED');
	});

	await t.test('CTL-6 a second completion is refused with UnsupportedOperation naming TASK_STATE_COMPLETED; nothing changes', async () => {
		const t0 = need(done, 'the completion');
		await refused(alice.sendMessage(req(controlMsg(t0.id))), UnsupportedOperationError, /TASK_STATE_COMPLETED/, 'second completion');
		const got = await alice.getTask({ tenant: '', id: t0.id });
		assert.equal(stateName(got.status.state), 'TASK_STATE_COMPLETED');
		assert.equal(got.status.timestamp, t0.status.timestamp, 'the status changed');
	});

	await t.test('TASK-6 CTL-6 a message for the completed task is refused naming its state', async () => {
		const t0 = need(done, 'the completion');
		await refused(alice.sendMessage(req(textMsg('one more thing', t0.id))), UnsupportedOperationError, /TASK_STATE_COMPLETED/, 'message after completion');
	});

	await t.test('CTL-6 CTL-8 cancelTask of the completed task is TaskNotCancelable naming its state', async () => {
		const t0 = need(done, 'the completion');
		await refused(alice.cancelTask({ tenant: '', id: t0.id, metadata: undefined }), TaskNotCancelableError, /TASK_STATE_COMPLETED/, 'cancel after completion');
	});

	await t.test('CTL-1 a control envelope with another part, or an unknown action, is invalid params; the task stays open', async () => {
		const r = asTask(await alice.sendMessage(req(textMsg('Second task for the envelope rules'))));
		const mixed = message([controlPart(), part({ $case: 'text', value: 'and done' })], r.id);
		await refused(alice.sendMessage(req(mixed)), RequestMalformedError, null, 'control + text');
		const odd = message([controlPart({ kind: 'control', action: 'archive' })], r.id);
		await refused(alice.sendMessage(req(odd)), RequestMalformedError, /action/, 'unknown action');
		const extra = message([controlPart({ kind: 'control', action: 'complete', reason: 'x' })], r.id);
		await refused(alice.sendMessage(req(extra)), RequestMalformedError, /reason/, 'extra field');
		const got = await alice.getTask({ tenant: '', id: r.id });
		assert.equal(stateName(got.status.state), 'TASK_STATE_INPUT_REQUIRED');
	});

	stop();
	t.done();
}
