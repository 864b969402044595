// SPDX-License-Identifier: Apache-2.0
// STREAM-RESUME-1 (decision-072): the official A2A JS client (@a2a-js/sdk) carries on after a
// stream the server ended by itself (stream_max_ms = 1.5 s here) with nothing missed and
// nothing twice, over both bindings, through lighttpd with two workers.
//
//   - Last-Event-ID: the SDK yields events without their SSE ids, so the client's fetchImpl
//     reads the ids beside it (the body is teed: the SDK reads one branch untouched). A
//     resubscribeTask with `Last-Event-ID: <last id>` in its serviceParameters (the SDK sends
//     them as HTTP headers) gets, without a snapshot, first the events committed while no
//     stream was open, then the live ones up to COMPLETED: the ids of both streams after the
//     first snapshot are the events table's (`tiny-harness tasks events`), each once.
//   - Without it: a plain resubscribeTask after the end starts with the Task, whose history
//     already holds the message sent while no stream was open, and then only events newer
//     than that Task.
// TAP output; exit 77 without node_modules or lighttpd.
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { TH_BIN, Tap, makeTmp, show } from '../contract/lib.mjs';
import { dbEvents } from '../lib/db.mjs';
import { ParticipantInterceptor, findLighttpd, startLighttpdOrExit } from '../lib/interop.mjs';
import { importDep, missingModules } from './deps.mjs';

const STREAM_MAX_MS = 1500;
const HEARTBEAT_MS = 250;

const t = new Tap();
if (!TH_BIN)
	t.skipAll('TH_BIN is not set (run through make check)');
const sdk = await importDep('@a2a-js/sdk');
const client = await importDep('@a2a-js/sdk/client');
if (sdk == null || client == null)
	missingModules(t, '@a2a-js/sdk is not installed (run `npm ci` in the source tree)');
if (findLighttpd() == null)
	t.skipAll('lighttpd is not installed');
const { Role, TaskState } = sdk;
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } = client;

const dir = makeTmp('th-interop-resume-');
const { base, db } = startLighttpdOrExit(join(dir, 'srv'), {
	env: { TINY_HARNESS_STREAM_MAX_MS: String(STREAM_MAX_MS), TINY_HARNESS_HEARTBEAT_MS: String(HEARTBEAT_MS) },
});
console.log(`# lighttpd at ${base}, stream_max_ms = ${STREAM_MAX_MS}`);

// ------------------------------------------------------------------ the client
// A fetch that hands the SDK every response as it came and, for an SSE response, reads
// the same bytes on a second branch: each event's id, in order, into streams[k].ids.
function idReadingFetch(streams) {
	return async (url, init) => {
		const res = await fetch(url, init);
		if (!(res.headers.get('Content-Type') ?? '').startsWith('text/event-stream') || res.body == null)
			return res;
		const [mine, theirs] = res.body.tee();
		const s = { ids: [], ended: false };
		streams.push(s);
		(async () => {
			let buf = '';
			let id = null;
			let data = false;
			for await (const chunk of mine.pipeThrough(new TextDecoderStream())) {
				buf += chunk;
				let i;
				while ((i = buf.indexOf('\n')) >= 0) {
					const line = buf.slice(0, i).replace(/\r$/, '');
					buf = buf.slice(i + 1);
					if (line === '') {
						if (data)
							s.ids.push(id);
						id = null;
						data = false;
					} else if (line.startsWith('id:')) {
						id = Number(line.slice(3).trim());
					} else if (line.startsWith('data:')) {
						data = true;
					}
				}
			}
			s.ended = true;
		})().catch(() => { s.ended = true; });
		return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
	};
}

async function makeClient(binding, streams) {
	const fetchImpl = idReadingFetch(streams);
	const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
		transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
		preferredTransports: [binding],
		clientConfig: { interceptors: [new ParticipantInterceptor('alice')] },
	}));
	return factory.createFromUrl(base);
}

let seq = 0;
const message = (parts, taskId = '') => ({
	messageId: `resume-${process.pid}-${++seq}`, role: Role.ROLE_USER, contextId: '', taskId, extensions: [],
	referenceTaskIds: [], metadata: undefined, parts,
});
const text = (value) => ({ content: { $case: 'text', value }, mediaType: '', filename: '', metadata: undefined });
const control = () => ({
	content: { $case: 'data', value: { kind: 'control', action: 'complete' } },
	mediaType: 'application/vnd.tiny-harness.event+json', filename: '', metadata: undefined,
});
const req = (msg) => ({ tenant: '', message: msg, configuration: undefined, metadata: undefined });
const stateName = (s) => TaskState[s] ?? String(s);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const within = (p, ms, what) => Promise.race([p, sleep(ms).then(() => { throw new Error(`${what}: not within ${ms} ms`); })]);

// Reads resubscribeTask(id) to its end into an array; resolves with it.
async function follow(c, id, options) {
	const got = [];
	for await (const ev of c.resubscribeTask({ tenant: '', id }, options))
		got.push(ev);
	return got;
}
const waitFor = async (cond, ms, what) => {
	for (let i = 0; i < ms / 25 && !cond(); i++)
		await sleep(25);
	assert.ok(cond(), `${what} (waited ${ms} ms)`);
};

// ------------------------------------------------------------------ tests
for (const binding of ['JSONRPC', 'HTTP+JSON']) {
	const streams = [];
	const alice = await makeClient(binding, streams);

	await t.test(`STREAM-RESUME-1 STREAM-4 ${binding}: the official client resumes a stream ended by stream_max_ms with Last-Event-ID: the events of the gap, then the live ones, none missed or twice`, async () => {
		assert.equal(alice.transport.protocolName, binding);
		const task = await alice.sendMessage(req(message([text('follow me across the end')])));
		const from = streams.length;
		const t0 = Date.now();
		const first = follow(alice, task.id);
		await waitFor(() => streams.length > from && streams[from].ids.length >= 1, 5000, 'the first stream opened');
		// Live on the first stream, then the server ends it (stream_max_ms).
		await alice.sendMessage(req(message([text('while the first stream is open')], task.id)));
		const ev1 = await within(first, STREAM_MAX_MS + 5000, 'the first stream ended by stream_max_ms');
		const lasted = Date.now() - t0;
		await waitFor(() => streams[from].ended, 2000, 'the first stream\'s bytes were read');
		const ids1 = streams[from].ids;
		assert.equal(ev1.length, ids1.length, `one id per event: ${show(ids1)}`);
		assert.equal(ev1[0]?.payload?.$case, 'task', 'the first stream starts with the Task');
		assert.ok(lasted >= STREAM_MAX_MS - 100, `the first stream ended after ${lasted} ms, before stream_max_ms`);
		assert.ok(JSON.stringify(ev1.map((e) => e.payload)).includes('while the first stream is open'), 'the live message reached the first stream');

		// The gap: committed while no stream is open.
		await alice.sendMessage(req(message([text('sent in the gap')], task.id)));
		const last = ids1[ids1.length - 1];
		const second = follow(alice, task.id, { serviceParameters: { 'Last-Event-ID': String(last) } });
		await waitFor(() => streams.length > from + 1 && streams[from + 1].ids.length >= 1, 5000, 'the second stream opened');
		await alice.sendMessage(req(message([control()], task.id)));
		const ev2 = await within(second, 10000, 'the second stream ended at COMPLETED');
		await waitFor(() => streams[from + 1].ended, 2000, 'the second stream\'s bytes were read');
		const ids2 = streams[from + 1].ids;
		assert.equal(ev2.length, ids2.length, `one id per event: ${show(ids2)}`);
		assert.notEqual(ev2[0]?.payload?.$case, 'task', 'a resumption starts with the missed events, not a snapshot');
		assert.ok(JSON.stringify(ev2.map((e) => e.payload)).includes('sent in the gap'), 'the gap\'s message reached the second stream');
		const lastUpdate = ev2.filter((e) => e.payload?.$case === 'statusUpdate').at(-1)?.payload.value;
		assert.equal(stateName(lastUpdate?.status?.state), 'TASK_STATE_COMPLETED');

		const stored = dbEvents(db, task.id, ids1[0]).map((e) => e.seq);
		const seen = [...ids1.slice(1), ...ids2];
		assert.deepEqual(seen, stored, `ids after the first snapshot ${show(seen)} against the events table ${show(stored)}`);
	});

	await t.test(`STREAM-RESUME-1 STREAM-2 ${binding}: without Last-Event-ID a resubscription starts with the Task, whose history holds what was sent in the gap, then only newer events`, async () => {
		const task = await alice.sendMessage(req(message([text('follow me again')])));
		const from = streams.length;
		const ev1 = await within(follow(alice, task.id), STREAM_MAX_MS + 5000, 'the first stream ended by stream_max_ms');
		assert.equal(ev1[0]?.payload?.$case, 'task');
		await alice.sendMessage(req(message([text('missed by no one')], task.id)));
		const second = follow(alice, task.id);
		await waitFor(() => streams.length > from + 1 && streams[from + 1].ids.length >= 1, 5000, 'the second stream opened');
		await alice.sendMessage(req(message([control()], task.id)));
		const ev2 = await within(second, 10000, 'the second stream ended at COMPLETED');
		await waitFor(() => streams[from + 1].ended, 2000, 'the second stream\'s bytes were read');
		const snap = ev2[0]?.payload?.$case === 'task' ? ev2[0].payload.value : null;
		assert.ok(snap, `the second stream starts with the Task: ${show(ev2[0])}`);
		const texts = (snap.history ?? []).flatMap((m) => m.parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value));
		assert.ok(texts.includes('missed by no one'), `the gap's message is in the Task's history: ${show(texts)}`);
		const ids2 = streams[from + 1].ids;
		for (let i = 1; i < ids2.length; i++)
			assert.ok(ids2[i] > ids2[i - 1], `ids not increasing (an event twice): ${show(ids2)}`);
		const stored = dbEvents(db, task.id, ids2[0]).map((e) => e.seq);
		assert.deepEqual(ids2.slice(1), stored, `ids after the snapshot ${show(ids2)} against the events table ${show(stored)}`);
		assert.equal(stateName(ev2.filter((e) => e.payload?.$case === 'statusUpdate').at(-1)?.payload.value.status.state), 'TASK_STATE_COMPLETED');
	});
}

t.done();
