// SPDX-License-Identifier: Apache-2.0
// Integration test: streaming across worker processes through every tested deployment —
// lighttpd (tests/lib/server.sh, conf/lighttpd.conf), Apache + mod_fcgid and Apache +
// mod_proxy_fcgi (tests/lib/apache.sh, conf/apache-*.conf) — each with 3 workers and an
// echo model that sleeps 1500 ms per turn (STORE-4, A2A-5, STREAM-1..STREAM-4).
//
// Per server:
//  (a) SendStreamingMessage: the Task (WORKING) arrives at least 1 s before the
//      INPUT_REQUIRED status update (events are passed on as written, not in one burst at
//      the end); the ids are the events table's sequence numbers; the stream closes at
//      INPUT_REQUIRED.
//  (b) SubscribeToTask held open in one worker sees a follow-up's events written by another
//      worker while that turn still runs, stays open across INPUT_REQUIRED, gets `: ping`
//      heartbeats, and ends promptly at the COMPLETED "completed by alice" sent through a
//      third request.
//  (c) Last-Event-ID: a subscriber disconnects after 2 events, events happen while it is
//      away, it reconnects with Last-Event-ID (header or lastEventId query) and then gets
//      exactly the events it missed and the rest: the union has every seq once, none lost,
//      compared with the events table; a resume on the terminal task replays and closes.
// Bindings differ per server so that JSON-RPC and REST both stream, subscribe and resume.
//
// No A2A SDK: plain node:http with an SSE reader that timestamps each event on arrival.
// TAP output; exit 77 when no server can run here (lighttpd, apache2, mod_fcgid,
// spawn-fcgi, sqlite3 missing); a server whose prerequisites are missing is skipped.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

import { dbEvents, dbOf, dbRows } from '../lib/db.mjs';
import { onPath } from '../lib/interop.mjs';
import { sseReader } from '../lib/sse.mjs';

const SRCDIR = process.env.TH_SRCDIR ?? resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BUILDDIR = process.env.TH_BUILDDIR ?? join(SRCDIR, 'build');
const TH_BIN = process.env.TH_BIN ?? join(BUILDDIR, 'src/tiny-harness');
const SERVER_SH = join(SRCDIR, 'tests/lib/server.sh');
const APACHE_SH = join(SRCDIR, 'tests/lib/apache.sh');
const EVENT_MT = 'application/vnd.tiny-harness.event+json';
const ECHO_DELAY_MS = 1500;
const HEARTBEAT_MS = 400;
const STREAM_TIMEOUT_MS = 20000;

// ------------------------------------------------------------------ TAP
let n = 0;
let failed = 0;
const out = (s) => process.stdout.write(s + '\n');
function ok(cond, name, diag = {}) {
	n++;
	if (cond) {
		out(`ok ${n} - ${name}`);
		return true;
	}
	failed++;
	out(`not ok ${n} - ${name}`);
	for (const [k, v] of Object.entries(diag)) {
		const text = typeof v === 'string' ? v : JSON.stringify(v);
		for (const line of String(text).slice(0, 3000).split('\n').slice(0, 25))
			out(`#   ${k}: ${line}`);
	}
	return false;
}
function skip(name, why) {
	n++;
	out(`ok ${n} - ${name} # SKIP ${why}`);
}
const note = (s) => out(`# ${s}`);

// ------------------------------------------------------------------ prerequisites
if (!existsSync(TH_BIN)) {
	out(`1..0 # SKIP no program at ${TH_BIN}`);
	process.exit(77);
}
if (!onPath('sqlite3')) {
	out('1..0 # SKIP sqlite3 is not installed');
	process.exit(77);
}

const serverEnv = {
	...process.env,
	TH_SRCDIR: SRCDIR,
	TH_BUILDDIR: BUILDDIR,
	TH_BIN,
	TINY_HARNESS_ECHO_DELAY_MS: String(ECHO_DELAY_MS),
	TINY_HARNESS_HEARTBEAT_MS: String(HEARTBEAT_MS),
};

const servers = [
	{
		name: 'lighttpd',
		why: () => (onPath('lighttpd', ['/usr/sbin']) || process.env.LIGHTTPD ? null : 'lighttpd is not installed'),
		start: (dir) => ['sh', [SERVER_SH, 'start', dir, '3']],
		stop: (dir) => ['sh', [SERVER_SH, 'stop', dir]],
		a: ['jsonrpc', 'rest'],
		b: 'jsonrpc',
		c: { first: 'rest', resume: 'jsonrpc', via: 'header' },
	},
	{
		name: 'Apache+mod_fcgid',
		why: () => apacheWhy('fcgid'),
		start: (dir) => ['sh', [APACHE_SH, 'start', 'fcgid', dir, '3']],
		stop: (dir) => ['sh', [APACHE_SH, 'stop', dir]],
		a: ['rest', 'jsonrpc'],
		b: 'rest-get',
		c: { first: 'jsonrpc', resume: 'rest-get', via: 'header' },
	},
	{
		name: 'Apache+mod_proxy_fcgi',
		why: () => apacheWhy('proxy'),
		start: (dir) => ['sh', [APACHE_SH, 'start', 'proxy', dir, '3']],
		stop: (dir) => ['sh', [APACHE_SH, 'stop', dir]],
		a: ['jsonrpc', 'rest'],
		b: 'rest-post',
		c: { first: 'rest-get', resume: 'rest-get', via: 'query' },
	},
];
function apacheWhy(mode) {
	const r = spawnSync('sh', [APACHE_SH, 'check', mode], { env: serverEnv, encoding: 'utf8' });
	return r.status === 0 ? null : (r.stdout || r.stderr || `apache.sh check ${mode} failed`).trim();
}

// ------------------------------------------------------------------ HTTP helpers
const now = () => performance.timeOrigin + performance.now(); // epoch ms, same clock as created_ms

function rpcBody(id, method, params) {
	return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}
function textMessage(messageId, text, taskId) {
	const m = { messageId, role: 'ROLE_USER', parts: [{ text }] };
	if (taskId)
		m.taskId = taskId;
	return m;
}
function completeMessage(messageId, taskId) {
	return {
		messageId,
		role: 'ROLE_USER',
		taskId,
		parts: [{ data: { kind: 'control', action: 'complete' }, mediaType: EVENT_MT }],
	};
}

// One plain request; resolves to {status, headers, text, json, t} (t = when it ended).
function request(base, method, path, body, participant = 'alice', extraHeaders = {}) {
	return new Promise((resolvePromise) => {
		const url = new URL(base + path.replace(/^\//, ''));
		const headers = { 'A2A-Version': '1.0', ...extraHeaders };
		if (participant)
			headers['X-Participant-Id'] = participant;
		if (body !== undefined) {
			headers['Content-Type'] = 'application/json';
			headers['Content-Length'] = Buffer.byteLength(body);
		}
		const req = http.request(url, { method, headers, timeout: STREAM_TIMEOUT_MS }, (res) => {
			let text = '';
			res.setEncoding('utf8');
			res.on('data', (c) => (text += c));
			res.on('end', () => {
				let json = null;
				try {
					json = JSON.parse(text);
				} catch {}
				resolvePromise({ status: res.statusCode, headers: res.headers, text, json, t: now() });
			});
		});
		req.on('timeout', () => req.destroy(new Error('timeout')));
		req.on('error', (err) => resolvePromise({ status: 0, headers: {}, text: String(err), json: null, t: now() }));
		if (body !== undefined)
			req.write(body);
		req.end();
	});
}

// Sends a message over a binding and returns the Task (or null) with the raw response.
async function sendMessage(base, binding, id, message, configuration) {
	const params = { message };
	if (configuration)
		params.configuration = configuration;
	if (binding === 'jsonrpc') {
		const r = await request(base, 'POST', '/', rpcBody(id, 'SendMessage', params));
		return { r, task: r.json?.result?.task ?? null };
	}
	const r = await request(base, 'POST', '/message:send', JSON.stringify(params));
	return { r, task: r.json?.task ?? null };
}

// An SSE stream: collects events {id, event, data, raw, t} and comments {text, t}.
class Sse {
	constructor(base, { method, path, body, headers = {}, participant = 'alice', rpcId = null }) {
		this.events = [];
		this.comments = [];
		this.status = 0;
		this.contentType = '';
		this.rpcId = rpcId;
		this.ended = false;
		this.aborted = false;
		this.error = null;
		this.waiters = [];
		this.t0 = now();
		const url = new URL(base + path.replace(/^\//, ''));
		const h = { 'A2A-Version': '1.0', Accept: 'text/event-stream', ...headers };
		if (participant)
			h['X-Participant-Id'] = participant;
		if (body !== undefined) {
			h['Content-Type'] = 'application/json';
			h['Content-Length'] = Buffer.byteLength(body);
		}
		this.done = new Promise((res) => (this.finish = res));
		this.req = http.request(url, { method, headers: h }, (res) => {
			this.status = res.statusCode;
			this.contentType = res.headers['content-type'] ?? '';
			res.setEncoding('utf8');
			let t = 0;
			const feed = sseReader({
				onEvent: (ev) => this.push(ev, t),
				onComment: (text) => this.comments.push({ text, t }),
			});
			res.on('data', (chunk) => {
				t = now();
				feed(chunk);
			});
			res.on('end', () => this.end());
			res.on('error', () => this.end());
			res.on('close', () => this.end());
		});
		this.timer = setTimeout(() => {
			this.error = `no end after ${STREAM_TIMEOUT_MS} ms`;
			this.abort();
		}, STREAM_TIMEOUT_MS);
		this.req.on('error', (err) => {
			if (!this.aborted)
				this.error = String(err);
			this.end();
		});
		if (body !== undefined)
			this.req.write(body);
		this.req.end();
	}

	push({ id, event, raw }, t) {
		let data = null;
		try {
			data = JSON.parse(raw);
		} catch {}
		// The StreamResponse itself: JSON-RPC wraps it in a response carrying the request id.
		const sr = this.rpcId !== null ? (data?.result ?? null) : data;
		const ev = { id: id === null ? null : Number(id), event, data, sr, raw, t };
		this.events.push(ev);
		this.wake();
	}

	wake() {
		this.waiters = this.waiters.filter((w) => {
			const hit = this.events.find((e, i) => i >= w.from && w.pred(e));
			if (hit) {
				clearTimeout(w.timer);
				w.res(hit);
				return false;
			}
			if (this.ended) {
				clearTimeout(w.timer);
				w.res(null);
				return false;
			}
			return true;
		});
	}

	// Resolves to the first event (at index >= from) matching pred, or null on end/timeout.
	waitFor(pred, timeoutMs = 10000, from = 0) {
		return new Promise((res) => {
			const w = { pred, res, from };
			w.timer = setTimeout(() => {
				this.waiters = this.waiters.filter((x) => x !== w);
				res(null);
			}, timeoutMs);
			this.waiters.push(w);
			this.wake();
		});
	}

	abort() {
		this.aborted = true;
		this.req.destroy();
		this.end();
	}

	end() {
		if (this.ended)
			return;
		this.ended = true;
		this.tEnd = now();
		clearTimeout(this.timer);
		this.wake();
		this.finish();
	}
}

function openStream(base, binding, rpcId, message) {
	if (binding === 'jsonrpc')
		return new Sse(base, { method: 'POST', path: '/', body: rpcBody(rpcId, 'SendStreamingMessage', { message }), rpcId });
	return new Sse(base, { method: 'POST', path: '/message:stream', body: JSON.stringify({ message }) });
}

// binding: jsonrpc | rest-get | rest-post; resume: {lastEventId, via: header|query}
function subscribe(base, binding, rpcId, taskId, resume = null) {
	const headers = {};
	let query = '';
	if (resume && resume.via === 'header')
		headers['Last-Event-ID'] = String(resume.lastEventId);
	if (resume && resume.via === 'query')
		query = `?lastEventId=${resume.lastEventId}`;
	if (binding === 'jsonrpc')
		return new Sse(base, {
			method: 'POST',
			path: '/' + query,
			body: rpcBody(rpcId, 'SubscribeToTask', { id: taskId }),
			headers,
			rpcId,
		});
	const path = `/tasks/${encodeURIComponent(taskId)}:subscribe${query}`;
	if (binding === 'rest-post')
		return new Sse(base, { method: 'POST', path, body: '{}', headers });
	return new Sse(base, { method: 'GET', path, headers });
}

// ------------------------------------------------------------------ StreamResponse helpers
const stateOf = (sr) => sr?.task?.status?.state ?? sr?.statusUpdate?.status?.state ?? null;
const isTask = (sr) => sr != null && 'task' in sr;
const textOf = (sr) => {
	const st = sr?.task?.status ?? sr?.statusUpdate?.status;
	return (st?.message?.parts ?? []).map((p) => p.text ?? '').join(' ');
};
const TERMINAL = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);
const brief = (s) =>
	s.events.map((e) => `${e.id}:${e.event ?? ''}:${isTask(e.sr) ? 'task' : Object.keys(e.sr ?? {})[0]}:${stateOf(e.sr)}@${Math.round(e.t - s.t0)}ms`).join(' ');

// ------------------------------------------------------------------ the database
// SQLite, or PostgreSQL under TH_TEST_PG (tests/lib/db.mjs).
const sql = (db, query) => dbRows(db, query);
const q = (s) => `'${String(s).replace(/'/g, "''")}'`;
// The task's events as the program hands them out (stored with references, STORE-10).
const lastSeq = (db, taskId) => sql(db, `SELECT coalesce(max(seq), -1) AS last_seq FROM events WHERE task_id = ${q(taskId)}`)[0]?.last_seq ?? -1;

// Do the stream's events after the snapshot equal the table's rows (seq and content)?
function matchesTable(db, taskId, after, evs) {
	const rows = dbEvents(db, taskId, after);
	const got = evs.map((e) => e.id);
	const want = rows.map((r) => r.seq);
	if (!isDeepStrictEqual(got, want))
		return { ok: false, why: `ids ${JSON.stringify(got)} vs table seqs ${JSON.stringify(want)}` };
	for (let i = 0; i < rows.length; i++)
		if (!isDeepStrictEqual(evs[i].sr, JSON.parse(rows[i].json)))
			return { ok: false, why: `event ${rows[i].seq} differs from the table: ${evs[i].raw.slice(0, 300)} vs ${rows[i].json.slice(0, 300)}` };
	return { ok: true, why: `${rows.length} events ${want[0] ?? '-'}..${want[want.length - 1] ?? '-'}` };
}

// ------------------------------------------------------------------ the scenario
let rpcSeq = 100;
const nextId = () => ++rpcSeq;

async function scenario(srv, base, db) {
	const label = srv.name;

	// (a) SendStreamingMessage: Task and WORKING clearly before INPUT_REQUIRED.
	let taskA = null;
	for (const binding of srv.a) {
		const rpcId = binding === 'jsonrpc' ? nextId() : null;
		const s = openStream(base, binding, rpcId, textMessage(`a-${binding}-${rpcId ?? 'r'}`, `stream over ${binding}`));
		await s.done;
		const first = s.events[0];
		const last = s.events[s.events.length - 1];
		const taskId = first?.sr?.task?.id ?? null;
		const workingAt = s.events.filter((e) => ['TASK_STATE_WORKING', 'TASK_STATE_SUBMITTED'].includes(stateOf(e.sr))).map((e) => e.t);
		const spread = first && last ? Math.round(last.t - first.t) : -1;
		const diag = { events: brief(s), error: s.error ?? '', status: s.status, contentType: s.contentType, body: s.events.map((e) => e.raw).join('\n') };
		ok(
			s.status === 200 && s.contentType.startsWith('text/event-stream') && !s.error,
			`A2A-5 STORE-4 ${label} ${binding} SendStreamingMessage answers 200 text/event-stream`,
			diag,
		);
		ok(
			isTask(first?.sr) && ['TASK_STATE_WORKING', 'TASK_STATE_SUBMITTED'].includes(stateOf(first.sr)) &&
				(rpcId === null || (first.data?.jsonrpc === '2.0' && first.data?.id === rpcId)),
			`STREAM-1 ${label} ${binding}: the first event is the Task in WORKING${rpcId !== null ? ' inside a JSON-RPC response carrying the request id' : ' (a bare StreamResponse)'}`,
			diag,
		);
		ok(
			last?.sr?.statusUpdate && stateOf(last.sr) === 'TASK_STATE_INPUT_REQUIRED' && s.events.every((e) => e.event === null),
			`STREAM-1 ${label} ${binding}: the last event is the INPUT_REQUIRED status update and the stream closes there`,
			diag,
		);
		ok(
			spread >= 1000 && workingAt.length > 0 && workingAt.every((t) => last.t - t >= 1000),
			`STREAM-1 STORE-4 ${label} ${binding}: Task/WORKING arrived ${spread} ms before INPUT_REQUIRED (>= 1000 ms: passed on as written, not one burst)`,
			diag,
		);
		if (taskId) {
			const m = matchesTable(db, taskId, first.id, s.events.slice(1));
			ok(
				first.id >= 1 && m.ok && last.id === lastSeq(db, taskId),
				`STREAM-3 A2A-5 ${label} ${binding}: event ids are the events table's seqs and the stream ends at the task's last event (${m.why})`,
				{ ...diag, table: m.why, last_seq: lastSeq(db, taskId) },
			);
		} else {
			ok(false, `STREAM-3 A2A-5 ${label} ${binding}: event ids are the events table's seqs`, diag);
		}
		taskA ??= taskId;
	}
	if (!taskA) {
		ok(false, `STREAM-2 ${label}: no task to subscribe to (every SendStreamingMessage failed)`);
		return;
	}

	// (b) A subscriber in one worker sees what other workers write, promptly.
	{
		const b = srv.b;
		const rpcId = b === 'jsonrpc' ? nextId() : null;
		const s = subscribe(base, b, rpcId, taskA);
		const snap = await s.waitFor(() => true, 10000);
		const seqNow = lastSeq(db, taskA);
		const diag = () => ({ events: brief(s), error: s.error ?? '', status: s.status, comments: s.comments.length });
		ok(
			s.status === 200 && isTask(snap?.sr) && snap.sr.task.id === taskA && snap.id === seqNow &&
				stateOf(snap.sr) === 'TASK_STATE_INPUT_REQUIRED',
			`STREAM-2 ${label} ${b} SubscribeToTask: first event is the current Task (INPUT_REQUIRED) with id = its last seq ${seqNow}`,
			diag(),
		);
		// A follow-up served by another worker (this one is busy streaming).
		const tFollow = now();
		const follow = sendMessage(base, b === 'jsonrpc' ? 'rest' : 'jsonrpc', nextId(), textMessage(`b-follow-${rpcSeq}`, 'follow-up while subscribed', taskA));
		const working = await s.waitFor((e) => e.sr?.statusUpdate && stateOf(e.sr) === 'TASK_STATE_WORKING', 8000, 1);
		const fr = await follow;
		ok(
			working !== null && working.t < fr.r.t - 500,
			`STREAM-2 ${label}: the subscriber saw the follow-up's WORKING ${working ? Math.round(working.t - tFollow) : '—'} ms after it was sent, while another worker still ran the turn (its answer came at ${Math.round(fr.r.t - tFollow)} ms)`,
			{ ...diag(), follow: fr.r.text.slice(0, 400) },
		);
		const parked = await s.waitFor((e) => e.sr?.statusUpdate && stateOf(e.sr) === 'TASK_STATE_INPUT_REQUIRED', 8000, 1);
		await new Promise((r) => setTimeout(r, HEARTBEAT_MS * 2 + 200));
		ok(
			parked !== null && !s.ended,
			`STREAM-2 ${label}: the subscription stays open across INPUT_REQUIRED`,
			diag(),
		);
		ok(
			s.comments.some((c) => c.text === 'ping'),
			`STREAM-2 ${label}: ': ping' heartbeats arrive on an idle subscription (${s.comments.length} in ${Math.round(now() - s.t0)} ms, every ${HEARTBEAT_MS} ms configured)`,
			diag(),
		);
		const done = await sendMessage(base, 'jsonrpc', nextId(), completeMessage(`b-complete-${rpcSeq}`, taskA));
		const completed = await s.waitFor((e) => stateOf(e.sr) === 'TASK_STATE_COMPLETED', 8000, 1);
		await Promise.race([s.done, new Promise((r) => setTimeout(r, 3000))]);
		const row = completed ? sql(db, `SELECT created_ms FROM events WHERE task_id = ${q(taskA)} AND seq = ${completed.id}`)[0] : null;
		const latency = completed && row ? Math.round(completed.t - row.created_ms) : null;
		ok(
			done.task && stateOf({ task: done.task }) === 'TASK_STATE_COMPLETED' && completed !== null &&
				textOf(completed.sr) === 'completed by alice' && s.ended && !s.error && latency !== null && latency < 1000,
			`STREAM-2 CTL-5 ${label}: the subscriber got COMPLETED "completed by alice" ${latency ?? '—'} ms after it was written by another worker, and the stream ended`,
			{ ...diag(), complete: done.r.text.slice(0, 400) },
		);
		const m = matchesTable(db, taskA, snap?.id ?? 0, s.events.slice(1));
		ok(m.ok, `STREAM-2 STREAM-3 ${label}: the subscriber got every event after its snapshot once, in order, as stored (${m.why})`, { ...diag(), table: m.why });
	}

	// (c) Last-Event-ID resumption: none lost, none twice.
	{
		const { first, resume, via } = srv.c;
		const created = await sendMessage(base, 'jsonrpc', nextId(), textMessage(`c-create-${rpcSeq}`, 'resume me'));
		const taskB = created.task?.id;
		if (!taskB) {
			ok(false, `STREAM-4 ${label}: could not create a task to resume`, { body: created.r.text });
			return;
		}
		const id1 = first === 'jsonrpc' ? nextId() : null;
		const s1 = subscribe(base, first, id1, taskB);
		const snap = await s1.waitFor(() => true, 10000);
		const follow1 = sendMessage(base, 'rest', null, textMessage(`c-f1-${rpcSeq}`, 'first while subscribed', taskB));
		// Disconnect after k = 2 events: the snapshot and the first new one.
		const k = 2;
		await s1.waitFor((e, i) => true, 8000, k - 1);
		s1.abort();
		const got1 = s1.events.slice(0, k);
		const lastId = got1[got1.length - 1]?.id ?? null;
		await follow1; // its INPUT_REQUIRED lands while nobody listens
		const f2 = await sendMessage(base, 'jsonrpc', nextId(), textMessage(`c-f2-${rpcSeq}`, 'second while away', taskB));
		const missed = lastSeq(db, taskB) - (lastId ?? 0);
		const id2 = resume === 'jsonrpc' ? nextId() : null;
		const s2 = subscribe(base, resume, id2, taskB, { lastEventId: lastId, via });
		// Everything missed arrives first; then a completion ends the stream.
		const caughtUp = await s2.waitFor((e) => e.id === lastSeq(db, taskB), 8000);
		const done = await sendMessage(base, 'jsonrpc', nextId(), completeMessage(`c-complete-${rpcSeq}`, taskB));
		await s2.waitFor((e) => stateOf(e.sr) === 'TASK_STATE_COMPLETED', 8000);
		await Promise.race([s2.done, new Promise((r) => setTimeout(r, 3000))]);
		const diag = {
			first: brief(s1),
			resumed: brief(s2),
			error: s2.error ?? '',
			status: s2.status,
			f2: f2.r.text.slice(0, 200),
			complete: done.r.text.slice(0, 200),
		};
		ok(
			isTask(snap?.sr) && got1.length === k && lastId !== null && f2.task !== null && missed >= 2,
			`STREAM-4 ${label} ${first}: disconnected after ${k} events (last id ${lastId}); ${missed} events were written while away`,
			diag,
		);
		ok(
			s2.status === 200 && s2.events.length > 0 && !isTask(s2.events[0].sr) && s2.events[0].id === lastId + 1 && caughtUp !== null,
			`STREAM-4 ${label} ${resume} resume with ${via === 'header' ? 'Last-Event-ID' : '?lastEventId='} ${lastId}: no Task snapshot, first event is ${lastId + 1}, caught up to the last seq`,
			diag,
		);
		const union = got1.slice(1).concat(s2.events);
		const ids = union.map((e) => e.id);
		const once = new Set(ids).size === ids.length;
		const m = matchesTable(db, taskB, snap?.id ?? 0, union);
		ok(
			once && m.ok && stateOf(union[union.length - 1]?.sr) === 'TASK_STATE_COMPLETED' && s2.ended && !s2.error,
			`STREAM-4 STREAM-3 ${label}: the two connections together got every seq after the snapshot exactly once, ending at COMPLETED (${m.why})`,
			{ ...diag, ids: JSON.stringify(ids), table: m.why },
		);
		// The task is terminal now: a resume still replays what was missed, then closes.
		const from = snap?.id ?? 0;
		const s3 = subscribe(base, resume, resume === 'jsonrpc' ? nextId() : null, taskB, { lastEventId: from, via });
		await s3.done;
		const m3 = matchesTable(db, taskB, from, s3.events);
		ok(
			s3.status === 200 && m3.ok && !s3.error && stateOf(s3.events[s3.events.length - 1]?.sr) === 'TASK_STATE_COMPLETED',
			`STREAM-4 ${label}: resuming a COMPLETED task from ${from} replays the ${s3.events.length} later events and closes (${m3.why})`,
			{ events: brief(s3), error: s3.error ?? '', table: m3.why, body: s3.events.map((e) => e.raw).join('\n').slice(0, 1500) },
		);
	}
}

// ------------------------------------------------------------------ main
const T = mkdtempSync(join(tmpdir(), 'th-streaming.'));
chmodSync(T, 0o711); // Apache's unprivileged user must reach its state directory
const running = [];
function stopAll() {
	while (running.length > 0) {
		const { srv, dir } = running.pop();
		const [cmd, args] = srv.stop(dir);
		spawnSync(cmd, args, { env: serverEnv, stdio: 'ignore' });
	}
}
process.on('SIGINT', () => {
	stopAll();
	process.exit(1);
});
process.on('SIGTERM', () => {
	stopAll();
	process.exit(1);
});

let ran = 0;
try {
	for (const srv of servers) {
		const why = srv.why();
		if (why) {
			skip(`STREAM-1..4 through ${srv.name}`, why);
			continue;
		}
		const dir = join(T, srv.name.replace(/[^A-Za-z0-9]+/g, '-'));
		const [cmd, args] = srv.start(dir);
		let base;
		try {
			base = execFileSync(cmd, args, { env: serverEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
		} catch (err) {
			ok(false, `STORE-4 ${srv.name} starts`, { stderr: String(err.stderr ?? err) });
			continue;
		}
		running.push({ srv, dir });
		note(`${srv.name} at ${base} (3 workers, echo delay ${ECHO_DELAY_MS} ms, heartbeat ${HEARTBEAT_MS} ms)`);
		ran++;
		try {
			await scenario(srv, base, dbOf(dir));
		} catch (err) {
			ok(false, `${srv.name}: the scenario ran to its end`, { error: err.stack ?? String(err) });
		}
		stopAll();
	}
} finally {
	stopAll();
	if (process.env.TH_KEEP === '1')
		note(`kept ${T}`);
	else
		rmSync(T, { recursive: true, force: true });
}

if (ran === 0) {
	out(`1..${n}`);
	note('no server could run here');
	process.exit(77);
}
out(`1..${n}`);
if (failed > 0) {
	note(`${failed} of ${n} failed`);
	process.exit(1);
}
process.exit(0);
