// SPDX-License-Identifier: Apache-2.0
// Integration test: the store torture run (STORE-7, STORE-9, TURN-4, TURN-6, CTL-4,
// A2A-11-IDEM-1, A2A-11-GEN-5; STORE-6 under TH_TEST_PG; issue 26 item 2).
//
// lighttpd (tests/lib/server.sh) with TH_TORTURE_PROCS (3) workers of 16 request threads on
// one SQLite file, driven for TH_TORTURE_SECONDS (48) in phases of TH_TORTURE_PHASE_SECONDS
// (16), the echo model instant in odd phases and sleeping TH_TORTURE_DELAY_MS (300) in even
// ones. TH_TORTURE_CLIENTS (6) clients send a seeded mix of new tasks of every size (tiny to
// ~600 KiB), follow-ups (some with returnImmediately), sub-tasks (some over the sub-task limit),
// completions, CancelTask of trees, GetTask, first sends under an Idempotency-Key retried while
// their outcome is unknown, A2A 1.1 follow-ups naming a generation (some stale), and requests
// refused late, after their writes:
// ~1 MiB SendMessages whose inline taskPushNotificationConfig names another task (new task or
// follow-up) and renames with a forged A2UI action. Beside them a chaos loop, from the same seed:
// SIGKILL and SIGSTOP/SIGCONT of worker processes (children of our lighttpd only), an outside
// sqlite3 writer (rows of its own table, small to 4 MiB, some rolled back on purpose) and reader
// (holding a snapshot), PRAGMA wal_checkpoint(TRUNCATE), `tiny-harness recover` (sometimes
// SIGKILLed), `push` and `purge`, the issue's sequence (WAL reset, a ~1 MiB late refusal, an
// outside commit, the next SendMessage), and, as root, windows of a full disk (the database lives
// on a small tmpfs that is filled and freed). TH_TORTURE_READONLY=1 (not root) adds windows where
// the file is chmod 0444.
//
// A model keeps every answer: acknowledged (200 with a result), refused (a JSON-RPC error other
// than -32603) or unknown (no answer, 5xx, -32603). After each phase the load stops, stopped
// workers are continued, leases expire, `tiny-harness recover` runs until no turn is queued or
// running, and the database is checked against the model:
//   - PRAGMA integrity_check is ok (STORE-7);
//   - every acknowledged task is there; every acknowledged message is stored exactly once, in its
//     task; every refused one is absent; an unknown one at most once (STORE-7, TURN-4);
//   - every task's events are numbered 1..n without a gap (STORE-7);
//   - no turn queued or running and no task WORKING/SUBMITTED without a live turn (TURN-6);
//   - every stored message with text has exactly one reply, or its task ended, FAILED with a
//     reason (TURN-6);
//   - of the messageIds one Idempotency-Key was sent under, at most one is stored, exactly one
//     in the acknowledged task once an attempt was acknowledged, and the key's row names
//     that task (A2A-11-IDEM-1);
//   - acknowledged completions and cancellations stayed; the outside writer's committed rows are
//     there once and its rolled-back ones absent (STORE-7);
//   - during the load no acknowledged task was answered "not found" and the task count seen by
//     the outside reader never went down (STORE-7);
//   - a new task is accepted once the faults stopped (STORE-9);
//   - TH_TORTURE_FOLLOWERS (3) subscribers, each following one acknowledged open task through
//     the phase and resuming with Last-Event-ID whenever its stream ends short of the task's
//     end (a worker killed or stopped, an error), got every event of it from their first,
//     once and in order, up to its last or to the one that ended it (STREAM-3, STREAM-4,
//     STREAM-6).
// Under TH_TEST_PG (a cluster of tests/lib/pg.sh) the workers share a PostgreSQL database of
// their own (tests/lib/server.sh) and the faults are PostgreSQL's where SQLite's have no
// meaning: no WAL resets, full disk or read-only file; instead pg_terminate_backend of the
// database's sessions (a worker's connection lost mid-transaction, STORE-6), an outside psql
// session that locks a task's row or the tasks table for up to 1.2 s, and the outside writer
// and reader in psql. PRAGMA integrity_check is SQLite's; every other check is the same.
// The seed is printed (TH_TORTURE_SEED sets it); TH_TORTURE_REPORT=FILE writes the figures as
// JSON. bench/torture.sh runs the same driver for a long time. TAP output; exit 77 when
// lighttpd, sqlite3 (psql under TH_TEST_PG) or the program is missing.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { SRCDIR, TH_BIN, cleanEnv } from '../contract/lib.mjs';
import { dbOf, dbRows, dbSql, psql } from '../lib/db.mjs';
import { findLighttpd, onPath } from '../lib/interop.mjs';
import { sseReader } from '../lib/sse.mjs';

const num = (name, dflt) => (process.env[name] !== undefined && process.env[name] !== '' ? Number(process.env[name]) : dflt);
const SEED = num('TH_TORTURE_SEED', Math.floor(Math.random() * 2 ** 31)) >>> 0;
const SECONDS = num('TH_TORTURE_SECONDS', 48);
const PHASE_S = num('TH_TORTURE_PHASE_SECONDS', 16);
const CLIENTS = num('TH_TORTURE_CLIENTS', 6);
const PROCS = num('TH_TORTURE_PROCS', 3);
const DELAY_MS = num('TH_TORTURE_DELAY_MS', 300);
const FOLLOWERS = num('TH_TORTURE_FOLLOWERS', 3);
const FS_MB = num('TH_TORTURE_FS_MB', 384);
const LEASE_MS = 1000;
const ROOT = process.getuid?.() === 0;
const READONLY = !ROOT && process.env.TH_TORTURE_READONLY === '1';
const MT_EVENT = 'application/vnd.tiny-harness.event+json';
const PUSH_URL = 'http://127.0.0.1:9/torture-hook';
const PG = Boolean(process.env.TH_TEST_PG);
// A cluster the run may also restart: TH_TORTURE_PG_DIR names its directory (tests/lib/pg.sh),
// only for a cluster of the run's own (bench/torture.sh), never the CI's, which other tests
// share. TH_TORTURE_PG_CRASH=1 restarts it immediate (as after a crash of the server: no
// checkpoint, the WAL replayed) and runs the workers at synchronous = full, under which an
// acknowledged commit must survive that; otherwise a fast shutdown and start.
const PG_DIR = PG ? (process.env.TH_TORTURE_PG_DIR ?? '') : '';
const PG_CRASH = PG_DIR !== '' && process.env.TH_TORTURE_PG_CRASH === '1';

if (!TH_BIN || !fs.existsSync(TH_BIN) || !findLighttpd() || !onPath('pgrep') ||
    !(PG ? fs.existsSync(psql()) || onPath('psql') : onPath('sqlite3'))) {
	console.log(`1..0 # SKIP lighttpd, ${PG ? 'psql' : 'sqlite3'}, pgrep or the program is missing`);
	process.exit(77);
}

// ---------------------------------------------------------------- TAP and figures
let tapN = 0;
let tapFailed = 0;
function tap(cond, name, diag = []) {
	tapN++;
	if (!cond)
		tapFailed++;
	console.log(`${cond ? 'ok' : 'not ok'} ${tapN} - ${name}`);
	if (!cond)
		for (const line of diag.slice(0, 12))
			console.log(`#   ${String(line).slice(0, 400)}`);
}
const note = (s) => console.log(`# ${s}`);
const fig = {
	seed: SEED, seconds: SECONDS, phases: 0, requests: 0, ok: 0, refused: 0, unknown: 0, ops: {},
	kills: 0, stops: 0, wal_resets: 0, wal_reset_busy: 0, outside_commits: 0, outside_rollbacks: 0,
	outside_unknown: 0, reads: 0, recover: 0, recover_killed: 0, push: 0, purge: 0, disk_full: 0,
	read_only: 0, terminated: 0, locks: 0, restarts: 0, combos: 0, quiet_combos: 0, late_refused: 0, checks_passed: 0, checks_failed: 0, facts_checked: 0,
	followed: 0, follow_events: 0, follow_resumes: 0,
};
const unknownWhy = {}; // why requests went unanswered, for the figures
const opFig = (op, outcome, why) => {
	if (outcome === 'unknown') {
		const k = String(why ?? '?').slice(0, 60);
		unknownWhy[k] = (unknownWhy[k] ?? 0) + 1;
	}
	fig.ops[op] ??= { ok: 0, refused: 0, unknown: 0 };
	fig.ops[op][outcome]++;
	fig[outcome]++;
	fig.requests++;
};

// ---------------------------------------------------------------- seeded randomness
function rng(seed) { // mulberry32
	let s = seed >>> 0;
	const next = () => {
		s = (s + 0x6d2b79f5) >>> 0;
		let t = s;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	return {
		next,
		int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
		pick: (xs) => xs[Math.floor(next() * xs.length)],
		chance: (p) => next() < p,
		weighted(table) {
			const total = table.reduce((a, [w]) => a + w, 0);
			let r = next() * total;
			for (const [w, v] of table)
				if ((r -= w) < 0)
					return v;
			return table[table.length - 1][1];
		},
	};
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- scratch, file system, server
const T = fs.mkdtempSync(join(tmpdir(), 'th-torture-'));
const stateDir = join(T, 'srv');
const dbDir = join(T, 'dbfs');
fs.mkdirSync(dbDir);
let mounted = false;
if (ROOT && !PG && process.env.TH_TORTURE_DISK_FULL !== '0') {
	const m = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${FS_MB}m,mode=0755`, 'tmpfs', dbDir], { encoding: 'utf8' });
	mounted = m.status === 0;
	if (!mounted)
		note(`no tmpfs for the database (${(m.stderr || m.error || '').toString().trim()}): no disk-full windows`);
}
// SQLite: the file on the tmpfs; PostgreSQL: the database server.sh made for stateDir, known
// once the first phase started.
let DB = PG ? '' : join(dbDir, 'tiny-harness.db');
const FILLER = join(dbDir, 'filler');
const serverSh = join(SRCDIR, 'tests', 'lib', 'server.sh');
const stopped = new Set(); // worker pids we SIGSTOPped and have not continued yet
let server = { base: '', lpid: 0, delay: 0 };

const thEnv = (delay) => ({
	TINY_HARNESS_ECHO_DELAY_MS: String(delay),
	TINY_HARNESS_TURN_LEASE_MS: String(LEASE_MS),
	TINY_HARNESS_PUSH_ALLOW_PRIVATE: '1',
	TINY_HARNESS_PUSH_TIMEOUT_MS: '500',
	TINY_HARNESS_PUSH_MAX_ATTEMPTS: '2',
	TINY_HARNESS_MAX_SUBTASKS: '4',
	...(PG_CRASH ? { TINY_HARNESS_SYNCHRONOUS: 'full' } : {}),
});
const serverEnv = (delay) => cleanEnv({ TH_BIN, TH_SRCDIR: SRCDIR, LIGHTTPD: findLighttpd(), ...(PG ? {} : { TH_SERVER_DB: DB }), ...thEnv(delay) });

function serverStart(delay) {
	const r = spawnSync('sh', [serverSh, 'start', stateDir, String(PROCS)], { env: serverEnv(delay), encoding: 'utf8', timeout: 90000 });
	const base = (r.stdout ?? '').trim();
	if (r.status !== 0 || !base.startsWith('http'))
		return `server.sh start failed: ${r.stderr}`;
	server = { base, lpid: Number(fs.readFileSync(join(stateDir, 'lighttpd.pid'), 'utf8').trim()), delay };
	if (PG)
		DB = dbOf(stateDir); // kept by server.sh across the phases' restarts
	return null;
}
function serverStop() {
	for (const p of stopped)
		try { process.kill(p, 'SIGCONT'); } catch { /* gone */ }
	stopped.clear();
	spawnSync('sh', [serverSh, 'stop', stateDir], { env: serverEnv(0), stdio: 'inherit' });
}
let cleaned = false;
function cleanup() {
	if (cleaned)
		return;
	cleaned = true;
	serverStop();
	if (!PG)
		try { fs.chmodSync(DB, 0o644); } catch { /* none */ }
	try { fs.rmSync(FILLER, { force: true }); } catch { /* none */ }
	if (process.env.TH_KEEP || process.env.TH_KEEP_TMP) {
		note(`kept ${T}${mounted ? ` (database on a tmpfs mounted at ${dbDir}: umount it when done)` : ''}`);
		return;
	}
	// A worker of a sanitizer build, or a SIGKILLed client's sqlite3, can still hold a
	// file of the tmpfs for a moment after lighttpd stopped: try for up to 10 s, then
	// detach it (freed when the last file closes) rather than fail the run on cleanup.
	for (let i = 0; mounted && i < 50; i++) {
		if (spawnSync('umount', [dbDir]).status === 0)
			mounted = false;
		else
			spawnSync('sleep', ['0.2']);
	}
	if (mounted && spawnSync('umount', ['-l', dbDir]).status !== 0)
		note(`could not unmount ${dbDir}`);
	try {
		fs.rmSync(T, { recursive: true, force: true });
	} catch (err) {
		note(`could not remove ${T}: ${err.message}`);
	}
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM'])
	process.on(sig, () => process.exit(1));

// The worker processes of our lighttpd: its children running tiny-harness.
function workers() {
	const r = spawnSync('pgrep', ['-P', String(server.lpid)], { encoding: 'utf8' });
	return (r.stdout ?? '').split('\n').filter(Boolean).map(Number).filter((p) => isOurWorker(p));
}
function isOurWorker(pid) {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		const comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
		return Number(rest[1]) === server.lpid && comm.startsWith('tiny-harness') && rest[0] !== 'Z';
	} catch {
		return false;
	}
}

// ---------------------------------------------------------------- requests and the model
// model.msgs: messageId -> {outcome, task, kind, text}; model.tasks: id -> {terminal};
// outcome: ok | refused | unknown. kind: create | follow | sub | control | late | ui.
const model = { msgs: new Map(), tasks: new Map(), open: [], parents: [], outside: new Map(), keys: new Map(), violations: [] };
let midSeq = 0;
let keySeq = 0;
const newMid = (who) => `t${SEED}-${who}-${++midSeq}`;

// Requests in flight, and the gate a quiet moment closes (quietCombo).
let inflight = 0;
let gate = null;
async function rpc(method, params, timeoutMs = 20000, headers = {}) {
	inflight++;
	try {
		return await rpcOnce(method, params, timeoutMs, headers);
	} finally {
		inflight--;
	}
}
// One request on a connection of its own (no keep-alive: a connection lighttpd closed while
// idle would fail the next request for reasons of HTTP, not of the store).
function post(body, timeoutMs, headers) {
	return new Promise((resolve) => {
		const req = http.request(server.base, {
			method: 'POST', agent: false, timeout: timeoutMs,
			headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', 'X-Participant-Id': 'alice',
				'Content-Length': Buffer.byteLength(body), Connection: 'close', ...headers },
		}, (res) => {
			const chunks = [];
			res.on('data', (c) => chunks.push(c));
			res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
			res.on('error', (err) => resolve({ err }));
		});
		req.on('timeout', () => req.destroy(new Error('timeout')));
		req.on('error', (err) => resolve({ err }));
		req.end(body);
	});
}
async function rpcOnce(method, params, timeoutMs, headers) {
	const res = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), timeoutMs, headers);
	if (res.err)
		return { outcome: 'unknown', why: String(res.err.code ?? res.err.message) };
	if (res.status !== 200)
		return { outcome: 'unknown', why: `HTTP ${res.status}` };
	try {
		const j = JSON.parse(res.text);
		if (j.error)
			return { outcome: j.error.code === -32603 ? 'unknown' : 'refused', code: j.error.code, why: j.error.message };
		return { outcome: 'ok', result: j.result };
	} catch {
		return { outcome: 'unknown', why: 'not JSON' };
	}
}

// A text of about n bytes in parts of at most 60,000 (max_text is 65,536), marked with mid.
function textParts(mid, n, r) {
	const parts = [];
	let left = Math.max(0, n);
	let first = true;
	do {
		const len = Math.min(left, 60000);
		const fill = String.fromCharCode(97 + r.int(0, 25)).repeat(len);
		parts.push({ text: first ? `m:${mid} ${fill}` : fill });
		first = false;
		left -= len;
	} while (left > 0 && parts.length < 17);
	return parts;
}
const sizeOf = (r) => r.weighted([[70, r.int(0, 200)], [20, r.int(1000, 16000)], [8, r.int(16000, 120000)], [2, r.int(200000, 600000)]]);
const message = (mid, parts, taskId) => ({ messageId: mid, role: 'ROLE_USER', parts, ...(taskId ? { taskId } : {}) });
const openTask = (r) => (model.open.length ? r.pick(model.open) : null);
function addTask(id, mid) {
	if (!model.tasks.has(id)) {
		model.tasks.set(id, { mid, terminal: null });
		model.open.push(id);
	}
}
function endTask(id, state) {
	const t = model.tasks.get(id);
	if (t)
		t.terminal = state;
	const i = model.open.indexOf(id);
	if (i >= 0)
		model.open.splice(i, 1);
}
function record(op, mid, res, kind, task, text = true) {
	opFig(op, res.outcome, res.why);
	model.msgs.set(mid, { outcome: res.outcome, task, kind, text });
}

// ---------------------------------------------------------------- client operations
async function opCreate(r, who) {
	const mid = newMid(who);
	const params = { message: message(mid, textParts(mid, sizeOf(r), r)) };
	if (r.chance(0.2))
		params.configuration = { taskPushNotificationConfig: { url: PUSH_URL } };
	const res = await rpc('SendMessage', params);
	const id = res.result?.task?.id;
	if (res.outcome === 'ok' && typeof id !== 'string')
		res.outcome = 'unknown';
	record('create', mid, res, 'create', id);
	if (res.outcome === 'ok') {
		addTask(id, mid);
		if (model.parents.length < 40 && r.chance(0.3))
			model.parents.push(id);
	}
	return res;
}

async function opFollow(r, who) {
	const task = openTask(r);
	if (!task)
		return opCreate(r, who);
	const mid = newMid(who);
	const params = { message: message(mid, textParts(mid, sizeOf(r), r), task) };
	if (r.chance(0.25))
		params.configuration = { returnImmediately: true };
	record('follow', mid, await rpc('SendMessage', params), 'follow', task);
}

// A first send under an Idempotency-Key, sent again while its outcome is unknown, as a client
// whose connection dropped retries it: the same message, now and then under a new messageId
// (the fingerprint leaves it out). Whatever the faults, the key makes at most one task, and
// exactly one once an attempt was acknowledged (A2A-11-IDEM-1, checkKeys).
async function opRetry(r, who) {
	const key = `k${SEED}-${who}-${++keySeq}`;
	const first = newMid(who);
	const parts = textParts(first, sizeOf(r), r);
	const k = { first, mids: [first], acked: new Set() };
	model.keys.set(key, k);
	for (let attempt = 0; attempt < 3; attempt++) {
		const mid = attempt === 0 || r.chance(0.5) ? first : newMid(who);
		if (!k.mids.includes(mid))
			k.mids.push(mid);
		const res = await rpc('SendMessage', { message: message(mid, parts) }, 20000, { 'Idempotency-Key': key });
		const id = res.result?.task?.id;
		if (res.outcome === 'ok' && typeof id !== 'string')
			res.outcome = 'unknown';
		opFig('retry', res.outcome, res.why);
		// Checked by checkKeys: the reply names the first messageId (its text's mark).
		model.msgs.set(mid, { outcome: 'key', task: id, kind: 'retry', text: false });
		if (res.outcome === 'ok') {
			k.acked.add(id);
			addTask(id, first);
		}
		if (res.outcome !== 'unknown')
			break;
	}
}

// An A2A 1.1 follow-up naming the generation a GetTask just read, now and then one behind it
// (A2A-11-GEN-5): a stale one is refused with nothing stored (checkMessages: refused ones are
// absent), an acknowledged one names a generation it was sent at and answers a newer one.
async function opGen(r, who) {
	const task = openTask(r);
	if (!task)
		return opCreate(r, who);
	const v11 = { 'A2A-Version': '1.1' };
	const got = await rpc('GetTask', { id: task, historyLength: 0 }, 20000, v11);
	opFig('get', got.outcome, got.why);
	const g = Number(got.result?.generation);
	if (got.outcome !== 'ok' || !Number.isInteger(g))
		return;
	const want = r.chance(0.3) ? g - 1 : g;
	const mid = newMid(who);
	const res = await rpc('SendMessage', {
		message: message(mid, textParts(mid, r.int(0, 2000), r), task),
		configuration: { ifGenerationMatch: String(want) },
	}, 20000, v11);
	if (res.outcome === 'ok' && want < g)
		model.violations.push(`A2A-11-GEN-5 ${mid}: ifGenerationMatch ${want} accepted when the task was already at ${g}`);
	if (res.outcome === 'ok' && !(Number(res.result?.task?.generation) > want))
		model.violations.push(`A2A-11-GEN-5 ${mid}: sent at generation ${want}, answered at ${res.result?.task?.generation}`);
	record('gen', mid, res, 'follow', task);
}

// Refused after its writes: the inline push config names another task than the message's
// (the new task, or the follow-up's), checked once the message is stored (PUSH-1).
async function opLate(r, who, big = r.chance(0.6)) {
	const other = openTask(r) ?? 'no-such-task';
	const follow = r.chance(0.4) ? openTask(r) : null;
	const mid = newMid(who);
	const n = big ? r.int(700000, 980000) : r.int(0, 60000);
	const params = {
		message: message(mid, textParts(mid, n, r), follow && follow !== other ? follow : undefined),
		configuration: { taskPushNotificationConfig: { taskId: other === follow ? 'elsewhere' : other, url: PUSH_URL } },
	};
	const res = await rpc('SendMessage', params, 30000);
	fig.late_refused++;
	if (res.outcome === 'ok')
		model.violations.push(`STORE-7 late-refused ${mid} (push config for another task) was accepted`);
	record('late', mid, res, 'late', params.message.taskId);
}

// Refused after its writes: a rename (written first) with an A2UI action for a surface the
// task never made (UI-2).
async function opUi(r, who) {
	const task = openTask(r);
	if (!task)
		return opLate(r, who);
	const mid = newMid(who);
	const action = { version: 'v0.9', action: { name: 'approve', surfaceId: `confirm-${mid}`, sourceComponentId: 'b', timestamp: new Date().toISOString(), context: {} } };
	const parts = [
		{ data: { kind: 'task', payload: { name: `renamed ${mid}`, description: 'd'.repeat(r.int(0, 30000)) } }, mediaType: MT_EVENT },
		...textParts(mid, r.int(0, 200000), r),
		{ data: [action], mediaType: 'application/a2ui+json' },
	];
	const res = await rpc('SendMessage', { message: message(mid, parts, task) });
	if (res.outcome === 'ok')
		model.violations.push(`STORE-7 ${mid}: a forged A2UI action was accepted`);
	record('ui', mid, res, 'ui', task);
}

// A sub-task under a known task (the limit is 4, so some are refused), sometimes under a
// sub-task, so trees grow deep for CancelTask. Parents this run saw end are left out: a
// task that ended takes no sub-task (decision-096); one ended by a cascade or a failed
// turn is still picked now and then, and refused.
async function opSub(r, who) {
	const live = model.parents.filter((p) => !model.tasks.get(p)?.terminal);
	const parent = live.length && r.chance(0.7) ? r.pick(live) : openTask(r);
	if (!parent)
		return opCreate(r, who);
	const mid = newMid(who);
	// The text first: the echo reply starts with it (a data part becomes a placeholder).
	const parts = [...textParts(mid, r.int(0, 2000), r),
		{ data: { kind: 'task', payload: { name: 'sub', goal: 'g', parent_tasks: [{ task_id: parent }] } }, mediaType: MT_EVENT }];
	const res = await rpc('SendMessage', { message: message(mid, parts) });
	const id = res.result?.task?.id;
	record('sub', mid, res, 'sub', id);
	if (res.outcome === 'ok' && typeof id === 'string') {
		addTask(id, mid);
		if (model.parents.length < 80 && r.chance(0.5))
			model.parents.push(id);
	}
}

async function opComplete(r, who) {
	const task = openTask(r);
	if (!task)
		return opCreate(r, who);
	const mid = newMid(who);
	const parts = [{ data: { kind: 'control', action: 'complete' }, mediaType: MT_EVENT }];
	const res = await rpc('SendMessage', { message: message(mid, parts, task) });
	const state = res.result?.task?.status?.state;
	// Parked by unresolved sub-tasks (CTL-4): acknowledged, nothing of the message kept.
	if (res.outcome === 'ok' && state !== 'TASK_STATE_COMPLETED')
		res.outcome = 'parked';
	opFig('complete', res.outcome === 'parked' ? 'ok' : res.outcome, res.why);
	model.msgs.set(mid, { outcome: res.outcome, task, kind: 'control', text: false });
	if (res.outcome === 'ok')
		endTask(task, 'TASK_STATE_COMPLETED');
}

async function opCancel(r) {
	const task = model.parents.length && r.chance(0.5) ? r.pick(model.parents) : openTask(r);
	if (!task)
		return;
	const res = await rpc('CancelTask', { id: task });
	opFig('cancel', res.outcome, res.why);
	if (res.outcome === 'ok' && res.result?.status?.state === 'TASK_STATE_CANCELED')
		endTask(task, 'TASK_STATE_CANCELED');
}

// Reads: an acknowledged task must never be "not found" (-32001).
async function opGet(r) {
	const ids = [...model.tasks.keys()];
	if (!ids.length)
		return;
	const id = r.pick(ids);
	const res = await rpc('GetTask', { id, historyLength: 1 });
	opFig('get', res.outcome, res.why);
	if (res.outcome === 'refused' && res.code === -32001)
		model.violations.push(`STORE-7 GetTask of acknowledged task ${id}: ${res.why}`);
}

const OPS = [[25, opCreate], [25, opFollow], [6, opLate], [5, opUi], [8, opSub], [5, opComplete], [4, opCancel], [12, opGet], [6, opRetry], [5, opGen]];
async function client(i, phase, until) {
	const r = rng(SEED ^ Math.imul(phase * 97 + i + 1, 0x9e3779b1));
	while (Date.now() < until) {
		while (gate)
			await gate;
		await r.weighted(OPS)(r, `c${i}`);
	}
}

// ---------------------------------------------------------------- followers
// A subscriber of one task (SubscribeToTask as alice): the SSE ids it got, in order; done once
// an event put the task in an end state. Its stream ends short of that when a worker is
// killed or stopped, or refuses for a moment; it then resumes after its last id.
let followers = [];
function takeEvent(f, { id, raw }) {
	let j;
	try {
		j = JSON.parse(raw);
	} catch {
		f.problems.push(`an event that is not JSON after id ${f.ids.at(-1)}: ${raw.slice(0, 80)}`);
		return;
	}
	if (j.error)
		return; // the stream ends with it and is resumed
	const seq = id === null ? NaN : Number(id);
	if (!Number.isInteger(seq)) {
		f.problems.push(`an event without a sequence number after id ${f.ids.at(-1)}`);
		return;
	}
	f.ids.push(seq);
	f.at = Date.now();
	fig.follow_events++;
	const r = j.result ?? {};
	if (ENDED.has(r.statusUpdate?.status?.state ?? r.task?.status?.state))
		f.done = true;
}
// One SubscribeToTask (resumed after f's last id when it has one). Resolves with null when
// the stream came and ended, or with the refusal {code, why} when none came.
function subscribeOnce(f) {
	return new Promise((resolve) => {
		const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: f.task } });
		const headers = { 'Content-Type': 'application/json', 'A2A-Version': '1.0', 'X-Participant-Id': 'alice',
			Accept: 'text/event-stream', 'Content-Length': Buffer.byteLength(body), Connection: 'close' };
		if (f.ids.length)
			headers['Last-Event-ID'] = String(f.ids.at(-1));
		f.subscriptions++;
		const req = http.request(server.base, { method: 'POST', agent: false, headers }, (res) => {
			const stream = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
			f.open = stream;
			let buf = ''; // a refusal's body
			const feed = sseReader({ onEvent: (ev) => takeEvent(f, ev) });
			res.setEncoding('utf8');
			res.on('data', (c) => {
				if (stream)
					feed(c);
				else
					buf += c;
			});
			const end = () => {
				f.open = false;
				if (stream)
					return resolve(null);
				try {
					const e = JSON.parse(buf).error ?? {};
					resolve({ code: e.code ?? res.statusCode, why: e.message ?? '' });
				} catch {
					resolve({ code: res.statusCode, why: buf.slice(0, 80) });
				}
			};
			res.on('end', end);
			res.on('error', end);
			res.on('aborted', end);
		});
		f.req = req;
		req.on('error', () => resolve(null));
		req.end(body);
	});
}
async function follow(f) {
	while (!f.stop && !f.done) {
		const refused = await subscribeOnce(f);
		if (f.stop || f.done)
			break;
		if (refused && f.ids.length === 0)
			return; // the task ended before the first subscription: another is followed
		// -32603 and 5xx are a moment's trouble (a full disk, a worker gone); anything
		// else refuses a resume that must be served.
		if (refused && refused.code !== -32603 && !(refused.code >= 500)) {
			f.problems.push(`resuming after ${f.ids.at(-1)} refused: ${refused.code} ${refused.why}`);
			return;
		}
		fig.follow_resumes++;
		await sleep(100);
	}
}
// Starts FOLLOWERS subscribers on acknowledged open tasks as they appear in the phase.
async function startFollowers(phase, until) {
	const r = rng(SEED ^ Math.imul(phase * 193 + 11, 0x27d4eb2d));
	followers = [];
	while (followers.filter((f) => f.ids.length > 0 || !f.ended).length < FOLLOWERS && Date.now() < until) {
		const task = openTask(r);
		if (task === null || followers.some((f) => f.task === task)) {
			await sleep(200);
			continue;
		}
		const f = { task, ids: [], problems: [], done: false, stop: false, ended: false, req: null, subscriptions: 0, open: false, at: 0 };
		f.run = follow(f).finally(() => { f.ended = true; });
		followers.push(f);
		await sleep(r.int(100, 1500));
	}
}
// After the phase settled: each follower catches up with its task's last event or its end
// (10 s at most), then its ids must run from its first to there without a gap or a repeat.
async function checkFollowers(phase) {
	const p = [];
	let facts = 0;
	const live = followers.filter((f) => f.ids.length > 0);
	const deadline = Date.now() + 10000;
	for (const f of live) {
		f.last = Number(q(`SELECT coalesce(max(seq), 0) FROM events WHERE task_id = '${f.task.replace(/'/g, "''")}'`));
		while (!f.done && !f.ended && f.ids.at(-1) < f.last && Date.now() < deadline)
			await sleep(50);
	}
	for (const f of followers) {
		f.stop = true;
		f.req?.destroy();
	}
	await Promise.all(followers.map((f) => f.run));
	for (const f of live) {
		fig.followed++;
		facts += f.ids.length;
		for (const why of f.problems)
			p.push(`task ${f.task}: ${why}`);
		for (let i = 1; i < f.ids.length; i++)
			if (f.ids[i] !== f.ids[i - 1] + 1) {
				p.push(`task ${f.task}: event ${f.ids[i]} came after ${f.ids[i - 1]}`);
				break;
			}
		// A stream ends with the task's end state; what the task records after it (a
		// sub-task of a canceled tree ending, say) is for readers of the task, not for it.
		if (!f.done && f.ids.at(-1) < f.last)
			p.push(`task ${f.task}: the subscriber got events ${f.ids[0]}..${f.ids.at(-1)}; the task has ${f.last} ` +
				`(${f.subscriptions} subscriptions, the last ${f.open ? 'still open' : 'ended'}; last event ${((Date.now() - f.at) / 1000).toFixed(1)} s ago)`);
	}
	verdict(phase, `STREAM-3 STREAM-4 STREAM-6 ${live.length} subscribers, resumed with Last-Event-ID through the faults, got every event of their task once and in order`, p, facts);
}

// ---------------------------------------------------------------- outside processes
// Runs a program of ours; resolves {status, stdout, stderr}. killAfter: SIGKILL (by its pid)
// after that many ms; every child is SIGKILLed after 30 s at most.
function run(cmd, args, { env = process.env, killAfter = null } = {}) {
	return new Promise((resolve) => {
		const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
		let out = '';
		let err = '';
		child.stdout.on('data', (d) => { out += d; });
		child.stderr.on('data', (d) => { err += d; });
		let killed = false;
		const kill = () => { killed = true; try { child.kill('SIGKILL'); } catch { /* gone */ } };
		const t1 = setTimeout(kill, 30000);
		const t2 = killAfter != null ? setTimeout(kill, killAfter) : null;
		child.on('error', (e) => { err += String(e); });
		child.on('close', (status) => {
			clearTimeout(t1);
			if (t2)
				clearTimeout(t2);
			resolve({ status, stdout: out, stderr: err, killed });
		});
	});
}
const sqlite = (...cmds) => run('sqlite3', ['-bail', '-cmd', '.timeout 5000', DB, ...cmds]);
// An outside psql session: each argument one query, in order, in one session.
const pgsql = (...cmds) => run(psql(), ['-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-d', DB, ...cmds.flatMap((c) => ['-c', c])],
	{ env: { ...process.env, PGOPTIONS: '-c client_min_messages=warning', PGCONNECT_TIMEOUT: '10' } });
const cliEnv = () => cleanEnv({ TINY_HARNESS_DB: DB, ...thEnv(server.delay) });

let outsideSeq = 0;
let outsideTable = false;
// The outside writer: a row of its own table, small or large (a big one spills pages into the
// WAL before its commit), some rolled back on purpose.
async function outsideWrite(r) {
	if (!outsideTable) {
		const c = PG ? await pgsql('CREATE TABLE IF NOT EXISTS torture_outside(k text PRIMARY KEY, v text)')
			: await sqlite('CREATE TABLE IF NOT EXISTS torture_outside(k TEXT PRIMARY KEY, v BLOB) STRICT;');
		outsideTable = c.status === 0;
	}
	const k = `o${SEED}-${++outsideSeq}`;
	const size = r.weighted([[70, r.int(10, 500)], [25, r.int(65536, 524288)], [5, r.int(2 << 20, 4 << 20)]]);
	const rollback = r.chance(0.15);
	const res = PG
		? await pgsql('BEGIN', `INSERT INTO torture_outside VALUES ('${k}', md5(random()::text) || repeat('x', ${size}))`,
			rollback ? 'ROLLBACK' : 'COMMIT', "SELECT 'done'")
		: await sqlite(`BEGIN IMMEDIATE; INSERT INTO torture_outside VALUES ('${k}', randomblob(${size})); ${rollback ? 'ROLLBACK' : 'COMMIT'}; SELECT 'done';`);
	const done = res.status === 0 && res.stdout.includes('done');
	const outcome = done ? (rollback ? 'refused' : 'ok') : 'unknown';
	model.outside.set(k, outcome);
	fig[{ ok: 'outside_commits', refused: 'outside_rollbacks', unknown: 'outside_unknown' }[outcome]]++;
}

async function walReset() {
	const res = await sqlite('PRAGMA wal_checkpoint(TRUNCATE);');
	if (res.status === 0 && res.stdout.trim().startsWith('0|'))
		fig.wal_resets++;
	else
		fig.wal_reset_busy++;
}

// The outside reader holds a snapshot for a while; the task count it sees never goes down
// (nothing in this run deletes a task).
let readBaseline = 0;
async function outsideRead(r) {
	const base = readBaseline;
	const pause = (r.int(1, 15) / 10).toFixed(1);
	const res = PG
		? await pgsql('BEGIN ISOLATION LEVEL REPEATABLE READ', 'SELECT count(*) FROM tasks', `SELECT pg_sleep(${pause})`,
			'SELECT count(*) FROM messages', 'COMMIT')
		: await sqlite('BEGIN; SELECT count(*) FROM tasks;', `.shell sleep ${pause}`, 'SELECT count(*) FROM messages; COMMIT;');
	const lines = res.stdout.trim().split('\n').filter(Boolean);
	if (res.status !== 0 || lines.length < 2)
		return;
	fig.reads++;
	const tasks = Number(lines[0]);
	if (tasks < base)
		model.violations.push(`STORE-7 the outside reader saw ${tasks} tasks after an earlier reader saw ${base}`);
	readBaseline = Math.max(readBaseline, tasks);
}

async function cli(r, what) {
	const args = { recover: ['recover'], push: ['push'], purge: ['purge', '--older-than', '3650d'] }[what];
	const killAfter = what === 'recover' && r.chance(0.25) ? r.int(0, 400) : null;
	const res = await run(TH_BIN, args, { env: cliEnv(), killAfter });
	fig[what]++;
	if (res.killed && killAfter != null)
		fig.recover_killed++;
}

async function killWorker(r) {
	const ws = workers().filter((p) => !stopped.has(p));
	if (!ws.length)
		return;
	const p = r.pick(ws);
	try {
		process.kill(p, 'SIGKILL');
		fig.kills++;
	} catch { /* gone */ }
}

// SIGSTOP for 0.2–2.5 s: longer than the lease (1 s) now and then, so a stalled worker's
// turn is taken over and its late writes must be fenced (TURN-6).
async function stopWorker(r) {
	const ws = workers().filter((p) => !stopped.has(p));
	if (!ws.length)
		return;
	const p = r.pick(ws);
	try {
		process.kill(p, 'SIGSTOP');
	} catch {
		return;
	}
	stopped.add(p);
	fig.stops++;
	await sleep(r.int(200, 2500));
	try { process.kill(p, 'SIGCONT'); } catch { /* gone */ }
	stopped.delete(p);
}

// Disk full: the tmpfs holding the database is filled to the last byte, then freed.
async function diskFull(r) {
	if (!mounted)
		return;
	try {
		const st = fs.statfsSync(dbDir);
		const free = st.bavail * st.bsize;
		if (free > 4096)
			spawnSync('fallocate', ['-l', String(free - 4096), FILLER]);
		const fd = fs.openSync(FILLER, 'a');
		const chunk = Buffer.alloc(4096, 1);
		try {
			for (let i = 0; i < 100000; i++)
				fs.writeSync(fd, chunk);
		} catch { /* ENOSPC: full */ }
		fs.closeSync(fd);
		fig.disk_full++;
		await sleep(r.int(300, 1500));
	} finally {
		fs.rmSync(FILLER, { force: true });
	}
}

// PostgreSQL: sessions of the workers' database ended by the server (about half of them, the
// stream threads' listeners among them): a worker's connection lost before, inside or after
// a write transaction (STORE-6).
async function pgTerminate() {
	const res = await pgsql('SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity ' +
		'WHERE datname = current_database() AND pid <> pg_backend_pid() AND random() < 0.5');
	if (res.status === 0)
		fig.terminated += Number(res.stdout.trim()) || 0;
}

// PostgreSQL: an outside session holds a lock for 0.1–1.2 s, as an operator's transaction
// might: a task's row (its writers wait) or the tasks table in SHARE mode (every writer of
// a task waits).
async function pgLock(r) {
	const task = openTask(r);
	const lock = task && r.chance(0.6) ? `SELECT 1 FROM tasks WHERE id = '${task}' FOR UPDATE` : 'LOCK TABLE tasks IN SHARE MODE';
	const res = await pgsql('BEGIN', lock, `SELECT pg_sleep(${(r.int(1, 12) / 10).toFixed(1)})`, 'COMMIT');
	if (res.status === 0)
		fig.locks++;
}

// PostgreSQL, a cluster of the run's own (TH_TORTURE_PG_DIR): the server stops and starts
// again on the same data, fast or as after a crash (TH_TORTURE_PG_CRASH); every worker's
// connection is lost, and new ones are refused until it is back.
async function pgRestart() {
	const res = await run('sh', [join(SRCDIR, 'tests', 'lib', 'pg.sh'), 'restart', PG_DIR, PG_CRASH ? 'immediate' : 'fast']);
	if (res.status === 0)
		fig.restarts++;
	else
		note(`pg.sh restart failed: ${res.stderr.trim().slice(0, 300)}`);
}

async function readOnly(r) {
	if (!READONLY)
		return;
	fs.chmodSync(DB, 0o444);
	fig.read_only++;
	await sleep(r.int(300, 1500));
	fs.chmodSync(DB, 0o644);
}

// The issue's sequence: the WAL reset, a ~1 MiB late refusal while another process commits,
// then the next SendMessage.
async function combo(r) {
	fig.combos++;
	await (PG ? pgTerminate() : walReset());
	await Promise.all([opLate(r, 'x', true), sleep(r.int(0, 150)).then(() => outsideWrite(r))]);
	await opCreate(r, 'x');
}

// The same in a quiet moment, as the issue found it: the clients wait, the requests in flight
// finish, and then the WAL reset, the late refusal, the outside commit, a pause in which the
// refusing worker's connection may read again, and the next SendMessages and a read.
let quiet = false;
async function quietCombo(r) {
	if (quiet)
		return;
	quiet = true;
	let open;
	gate = new Promise((res) => { open = res; });
	try {
		for (let i = 0; i < 100 && inflight > 0; i++)
			await sleep(50);
		fig.quiet_combos++;
		await (PG ? pgTerminate() : walReset());
		await opLate(r, 'q', true);
		await outsideWrite(r);
		await sleep(r.int(0, 300));
		// One after another, so that each worker, the refusing one among them, likely
		// serves one.
		for (let i = 0; i < 2 * PROCS; i++)
			await opCreate(r, 'q');
		await opGet(r);
	} finally {
		gate = null;
		quiet = false;
		open();
	}
}

const CHAOS = PG
	? [[3, killWorker], [3, stopWorker], [4, pgTerminate], [3, pgLock], [5, outsideWrite], [2, outsideRead],
		[2, (r) => cli(r, 'recover')], [1, (r) => cli(r, 'push')], [1, (r) => cli(r, 'purge')], [4, combo], [6, quietCombo],
		...(PG_DIR ? [[3, pgRestart]] : [])]
	: [[3, killWorker], [3, stopWorker], [4, walReset], [5, outsideWrite], [2, outsideRead],
		[2, (r) => cli(r, 'recover')], [1, (r) => cli(r, 'push')], [1, (r) => cli(r, 'purge')],
		[2, diskFull], [1, readOnly], [4, combo], [6, quietCombo]];
// Two chaos lanes, so a stop or a full disk overlaps the other lane's work.
async function chaos(lane, phase, until) {
	const r = rng(SEED ^ Math.imul(phase * 131 + lane + 7, 0x85ebca6b));
	while (Date.now() < until) {
		await sleep(r.int(100, 700));
		if (Date.now() < until)
			await r.weighted(CHAOS)(r);
	}
}

// ---------------------------------------------------------------- settling and checking
const q = (sql) => dbSql(DB, sql, { busyMs: 10000, timeout: 120000 }).trim();
const rows = (sql) => dbRows(DB, sql, { busyMs: 10000, timeout: 120000, maxBuffer: 512 << 20 });

// Stopped workers continued, leases expired, `recover` until no turn is queued or running.
async function settle() {
	for (const p of stopped)
		try { process.kill(p, 'SIGCONT'); } catch { /* gone */ }
	stopped.clear();
	await sleep(LEASE_MS + 300);
	let left = -1;
	for (let i = 0; i < 30; i++) {
		await run(TH_BIN, ['recover'], { env: cliEnv() });
		try {
			left = Number(q("SELECT count(*) FROM turns WHERE state IN ('queued', 'running')"));
		} catch {
			left = -1;
		}
		if (left === 0)
			break;
		await sleep(LEASE_MS / 2);
	}
	return left;
}

// One TAP line per invariant; cond counts as a passed check, facts as what it covered.
function verdict(phase, name, problems, facts) {
	const good = problems.length === 0;
	fig[good ? 'checks_passed' : 'checks_failed']++;
	fig.facts_checked += facts;
	tap(good, `phase ${phase}: ${name}`, problems.length ? [`${problems.length} problem(s):`, ...problems] : []);
}

function readState() {
	// The reason only has to be there: its first 80 characters, so that tens of thousands of
	// echoed 60 kB texts do not make one answer too large to read.
	const text = (json) => (PG ? `((${json})::jsonb #>> '{parts,0,text}')` : `json_extract(${json}, '$.parts[0].text')`);
	const tasks = new Map(rows(`SELECT id, state, substr(coalesce(${text('coalesce(status_message_json, (SELECT m.json FROM messages m WHERE m.task_id = tasks.id AND m.pos = tasks.status_pos))')}, ''), 1, 80) AS reason FROM tasks`)
		.map((t) => [t.id, t]));
	const users = new Map();
	for (const m of rows("SELECT task_id, message_id FROM messages WHERE role = 'ROLE_USER'"))
		users.set(m.message_id, [...(users.get(m.message_id) ?? []), m.task_id]);
	const replies = new Map();
	for (const m of rows(`SELECT substr(${text('json')}, 1, 80) AS head FROM messages WHERE role = 'ROLE_AGENT' AND ${text('json')} LIKE 'echo: m:%'`)) {
		const mid = /^echo: m:(\S+)/.exec(m.head)?.[1];
		if (mid)
			replies.set(mid, (replies.get(mid) ?? 0) + 1);
	}
	return { tasks, users, replies };
}

function checkMessages(phase, s) {
	const p = [];
	let facts = 0;
	for (const [id] of model.tasks) {
		facts++;
		if (!s.tasks.has(id))
			p.push(`acknowledged task ${id} is gone`);
	}
	for (const [mid, m] of model.msgs) {
		const where = s.users.get(mid) ?? [];
		facts++;
		if (m.outcome === 'ok' && (where.length !== 1 || (m.task && where[0] !== m.task)))
			p.push(`acknowledged ${m.kind} ${mid} stored ${where.length} times (task ${m.task}, found in ${where.join(',') || 'none'})`);
		else if (m.outcome === 'refused' && where.length !== 0)
			p.push(`refused ${m.kind} ${mid} was stored (in ${where.join(',')})`);
		else if (m.outcome === 'unknown' && where.length > 1)
			p.push(`${m.kind} ${mid} (no answer) stored ${where.length} times`);
	}
	const counts = Object.fromEntries(['ok', 'refused', 'unknown'].map((o) => [o, [...model.msgs.values()].filter((m) => m.outcome === o).length]));
	verdict(phase, `STORE-7 TURN-4 ${model.tasks.size} acknowledged tasks there; ${counts.ok} acknowledged messages stored once, ${counts.refused} refused absent, ${counts.unknown} unanswered at most once`, p, facts);
}

// The states in which a task owes no more replies (TURN-6).
const ENDED = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_CANCELED', 'TASK_STATE_FAILED']);

function checkReplies(phase, s) {
	const p = [];
	let facts = 0;
	for (const [mid, where] of s.users) {
		const m = model.msgs.get(mid);
		if (!m?.text || where.length !== 1)
			continue;
		const task = s.tasks.get(where[0]);
		const n = s.replies.get(mid) ?? 0;
		const ended = ENDED.has(task?.state);
		facts++;
		if (n > 1 || (n === 0 && !ended))
			p.push(`message ${mid} has ${n} replies; task ${where[0]} is ${task?.state}`);
	}
	for (const [id, t] of s.tasks) {
		if (t.state === 'TASK_STATE_FAILED' && !t.reason)
			p.push(`task ${id} is FAILED without a reason`);
		const want = model.tasks.get(id)?.terminal;
		if (want && t.state !== want)
			p.push(`task ${id}: acknowledged ${want}, now ${t.state}`);
	}
	verdict(phase, `TURN-6 every stored message answered exactly once or its task ended (FAILED with a reason); acknowledged completions and cancellations kept`, p, facts);
}

// A2A-11-IDEM-1 under faults: of all the messageIds one key was sent under, at most one is
// stored, and exactly one, in the task every acknowledged attempt named, once any was
// acknowledged; the key's row names that task; its message is answered once or its task
// ended.
function checkKeys(phase, s) {
	const p = [];
	const kept = new Map(rows(`SELECT k.key, t.id FROM idempotency_keys k JOIN tasks t ON t.num = k.task_num WHERE k.key LIKE 'k${SEED}-%'`)
		.map((x) => [x.key, x.id]));
	for (const [key, k] of model.keys) {
		const where = k.mids.flatMap((mid) => s.users.get(mid) ?? []);
		const acked = [...k.acked];
		if (where.length > 1)
			p.push(`key ${key}: ${where.length} copies stored (tasks ${where.join(',')})`);
		if (acked.length > 1)
			p.push(`key ${key}: attempts acknowledged with different tasks ${acked.join(',')}`);
		if (acked.length && (where.length !== 1 || where[0] !== acked[0]))
			p.push(`key ${key}: acknowledged task ${acked[0]}, message stored in ${where.join(',') || 'none'}`);
		if ((kept.get(key) ?? null) !== (where[0] ?? null))
			p.push(`key ${key}: kept with ${kept.get(key) ?? 'no task'}, message in ${where[0] ?? 'none'}`);
		if (where.length === 1) {
			const n = s.replies.get(k.first) ?? 0;
			const state = s.tasks.get(where[0])?.state;
			if (n > 1 || (n === 0 && !ENDED.has(state)))
				p.push(`key ${key}: its message has ${n} replies; task ${where[0]} is ${state}`);
		}
	}
	const acked = [...model.keys.values()].filter((k) => k.acked.size).length;
	verdict(phase, `A2A-11-IDEM-1 ${model.keys.size} keys, ${acked} acknowledged: one task per key, none for a key never stored, each answered once`, p, model.keys.size);
}

function checkTurnsEvents(phase, turnsLeft) {
	const p = [];
	const gaps = rows('SELECT task_id, count(*) AS n, min(seq) AS lo, max(seq) AS hi FROM events GROUP BY task_id HAVING NOT (min(seq) = 1 AND max(seq) = count(*))');
	for (const g of gaps)
		p.push(`task ${g.task_id}: ${g.n} events numbered ${g.lo}..${g.hi}`);
	const bare = q('SELECT count(*) FROM tasks t WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.task_id = t.id)');
	if (bare !== '0')
		p.push(`${bare} tasks without events`);
	verdict(phase, 'STORE-7 every task\'s events numbered 1..n without a gap', p, Number(q('SELECT count(*) FROM events')));
	// A task that ended says so last: nothing is appended after its final status, which
	// closed its streams and was pushed as the last word (decision-096).
	const ended = "('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED')";
	const late = rows(`SELECT e.task_id, t.state, e.seq, e.kind, e.ends FROM events e JOIN tasks t ON t.id = e.task_id
		JOIN (SELECT task_id, max(seq) AS hi FROM events GROUP BY task_id) m ON m.task_id = e.task_id AND m.hi = e.seq
		WHERE t.state IN ${ended} AND NOT (e.ends = 2 AND e.kind IN ('status', 'task'))`);
	const p2 = late.map((l) => `task ${l.task_id} (${l.state}): event ${l.seq} is ${l.kind} (ends ${l.ends}) after the final status`);
	// An announcement to a task that ended would carry its terminal state too: one event
	// per task may say the task is over.
	for (const t of rows('SELECT task_id, count(*) AS n FROM events WHERE ends = 2 GROUP BY task_id HAVING count(*) > 1'))
		p2.push(`task ${t.task_id}: ${t.n} events say it ended`);
	verdict(phase, 'STREAM-1 CTL-5 TASK-8 a task that ended has one final status, its last event', p2,
		Number(q(`SELECT count(*) FROM tasks WHERE state IN ${ended}`)));
	const w = [];
	if (turnsLeft !== 0)
		w.push(`${turnsLeft} turns still queued or running after recover`);
	for (const t of rows(`SELECT id, state FROM tasks WHERE state IN ('TASK_STATE_WORKING', 'TASK_STATE_SUBMITTED') AND NOT EXISTS (SELECT 1 FROM turns u WHERE u.task_id = tasks.id AND u.state IN ('queued', 'running') AND u.lease_until_ms > ${Date.now()})`))
		w.push(`task ${t.id} is ${t.state} without a live turn`);
	verdict(phase, 'TURN-6 settled: no turn queued or running, no task WORKING without a live turn', w, Number(q('SELECT count(*) FROM turns')));
}

function checkOutside(phase) {
	const p = [];
	const have = new Map();
	if (outsideTable)
		for (const o of rows('SELECT k, count(*) AS n FROM torture_outside GROUP BY k'))
			have.set(o.k, o.n);
	for (const [k, outcome] of model.outside) {
		const n = have.get(k) ?? 0;
		if ((outcome === 'ok' && n !== 1) || (outcome === 'refused' && n !== 0) || n > 1)
			p.push(`outside row ${k} (${outcome}) present ${n} times`);
	}
	p.push(...model.violations.splice(0));
	verdict(phase, `STORE-7 outside ${PG ? 'psql' : 'sqlite3'} commits kept, rollbacks absent; during the load no acknowledged task went missing`, p, model.outside.size);
}

async function checkPhase(phase, turnsLeft) {
	let integrity = 'ok';
	if (!PG) {
		try {
			integrity = q('PRAGMA integrity_check');
		} catch (err) {
			integrity = String(err.message ?? err);
		}
		verdict(phase, 'STORE-7 PRAGMA integrity_check is ok', integrity === 'ok' ? [] : integrity.split('\n'), 1);
	}
	let s;
	try {
		s = readState();
	} catch (err) {
		verdict(phase, 'STORE-7 the database can be read after the phase', [String(err.message ?? err)], 0);
		return false;
	}
	checkMessages(phase, s);
	checkReplies(phase, s);
	checkKeys(phase, s);
	checkTurnsEvents(phase, turnsLeft);
	await checkFollowers(phase);
	checkOutside(phase);
	// STORE-9: once the faults stopped, the same workers take a new task.
	const r = rng(SEED + phase);
	const before = fig.ok;
	const res = await opCreate(r, 'canary');
	verdict(phase, 'STORE-9 a new task is accepted once the faults stopped', fig.ok > before ? [] : [`the canary SendMessage was not acknowledged: ${res?.why}`], 1);
	return integrity === 'ok';
}

// ---------------------------------------------------------------- the run
async function main() {
	note(`seed ${SEED} (TH_TORTURE_SEED=${SEED} repeats the choices); ${SECONDS} s in phases of ${PHASE_S} s; ${CLIENTS} clients, ${PROCS} workers; ` +
		(PG ? `PostgreSQL (sessions ended, outside locks${PG_DIR ? `, ${PG_CRASH ? 'crashes (synchronous = full)' : 'restarts'}` : ''})`
			: `${mounted ? `database on a ${FS_MB} MiB tmpfs (disk-full windows)` : 'no disk-full windows'}${READONLY ? ', read-only windows' : ''}`));
	const phases = Math.max(1, Math.ceil(SECONDS / PHASE_S));
	for (let phase = 1; phase <= phases; phase++) {
		const delay = phase % 2 === 1 ? 0 : DELAY_MS;
		const err = serverStart(delay);
		if (err) {
			tap(false, `phase ${phase}: lighttpd starts`, err.split('\n'));
			break;
		}
		const t0 = Date.now();
		const until = t0 + Math.min(PHASE_S, SECONDS - (phase - 1) * PHASE_S) * 1000;
		const before = fig.requests;
		await Promise.all([...Array(CLIENTS).keys()].map((i) => client(i, phase, until))
			.concat([chaos(0, phase, until), chaos(1, phase, until), startFollowers(phase, until)]));
		const turnsLeft = await settle();
		growFs(); // before the canary of checkPhase, which needs room
		note(`phase ${phase}: echo delay ${delay} ms, ${fig.requests - before} requests in ${((Date.now() - t0) / 1000).toFixed(1)} s; so far ${JSON.stringify(figLine())}`);
		const intact = await checkPhase(phase, turnsLeft);
		fig.phases = phase;
		serverStop();
		if (!intact)
			break;
	}
	fig.unknown_why = Object.fromEntries(Object.entries(unknownWhy).sort((a, b) => b[1] - a[1]).slice(0, 8));
	note(`figures: ${JSON.stringify(fig)}`);
	if (process.env.TH_TORTURE_REPORT)
		fs.writeFileSync(process.env.TH_TORTURE_REPORT, `${JSON.stringify(fig, null, 1)}\n`);
	console.log(`1..${tapN}`);
	if (tapFailed)
		note(`${tapFailed} of ${tapN} failed (seed ${SEED})`);
	process.exit(tapFailed ? 1 : 0);
}
const figLine = () => ({ ok: fig.ok, refused: fig.refused, unknown: fig.unknown, kills: fig.kills, stops: fig.stops,
	...(PG ? { terminated: fig.terminated, locks: fig.locks, restarts: fig.restarts } : { wal_resets: fig.wal_resets, disk_full: fig.disk_full }),
	outside: fig.outside_commits, combos: fig.combos, quiet: fig.quiet_combos });

// A long run's database outgrows the tmpfs (a 60 s phase adds up to ~150 MiB): keep 512 MiB
// free between phases, so that only the disk-full windows fill it.
function growFs() {
	if (!mounted)
		return;
	const st = fs.statfsSync(dbDir);
	const free = st.bavail * st.bsize;
	if (free >= 512 << 20)
		return;
	const used = (st.blocks - st.bfree) * st.bsize;
	const size = Math.ceil((used + (768 << 20)) / (1 << 20));
	const m = spawnSync('mount', ['-o', `remount,size=${size}m`, dbDir], { encoding: 'utf8' });
	if (m.status !== 0)
		note(`could not grow the tmpfs to ${size} MiB: ${m.stderr}`);
}

main().catch((err) => {
	tap(false, 'the torture driver ran to its end', String(err?.stack ?? err).split('\n'));
	console.log(`1..${tapN}`);
	process.exit(1);
});
