// SPDX-License-Identifier: Apache-2.0
// Integration test: hostile input through lighttpd, one table row per class (LIM-1..LIM-5,
// ID-1..ID-6, A2A-2, A2A-4, CTL-4, CH-4). Every request is written byte for byte on a raw
// socket (node:net), so the framing, the header bytes and the JSON text are exactly what the
// row says; the answer is read until the server closes. Each row asserts
//   - the HTTP status, and for JSON-RPC the error code (REST: the google.rpc status),
//   - that the error message names the field, the limit or the state (a regular expression),
//   - that nothing was stored: the row count of every table is the same before and after;
// and after the table: the workers that started are the workers still running (no crash),
// and PRAGMA integrity_check is ok. A few rows are accepted on purpose (a valid RFC 3339
// offset, free-form data with both spellings) and assert what was stored instead.
// Then two tables of the newer headers: hostile Host and Origin values on the same server
// (SEC-4: 403, or lighttpd's own 400/431, or served when the value does name this server), and
// hostile Authorization values on a second server with identity = bearer (SEC-1: 401 with
// WWW-Authenticate, nothing stored, no token echoed, no worker lost).
// TAP output; exit 77 when lighttpd, sqlite3 or the program is missing.
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { TH_BIN } from '../contract/lib.mjs';
import { dbSql, isPg } from '../lib/db.mjs';
import { findLighttpd, onPath, startLighttpd } from '../lib/interop.mjs';

let n = 0;
let failed = 0;
function ok(cond, name, diag = '') {
	n++;
	if (!cond)
		failed++;
	console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${name}`);
	if (!cond && diag)
		for (const line of String(diag).split('\n').slice(0, 12))
			console.log(`#   ${line}`);
}

if (!existsSync(TH_BIN) || !findLighttpd() || !onPath('sqlite3')) {
	console.log('1..0 # SKIP lighttpd, sqlite3 or the program is missing');
	process.exit(77);
}

const dir = mkdtempSync(join(tmpdir(), 'th-hostile-'));
const server = startLighttpd(dir, { procs: 2 });
if (!server.ok) {
	console.log(`not ok 1 - lighttpd starts\n# ${server.stderr}\n1..1`);
	process.exit(1);
}
const url = new URL(server.base);
const lighttpdPid = readFileSync(join(dir, 'lighttpd.pid'), 'utf8').trim();
const workers = () =>
	spawnSync('pgrep', ['-P', lighttpdPid], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).sort();
const workersBefore = workers();

// The database: SQLite, or PostgreSQL under TH_TEST_PG (tests/lib/db.mjs). Its tables come
// from each one's own catalogue.
const PG = isPg(server.db);
const sql = (q) => dbSql(server.db, q).trim();
const tables = sql(PG
	? "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
	: "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").split('\n');
const counts = () => sql(tables.map((t) => `SELECT '${t}=' || count(*) FROM "${t}"`).join(' UNION ALL ')).split('\n').sort().join(' ');

// One raw HTTP/1.1 request; resolves {status, headers, body} once the server closes.
function raw(bytes, to = url) {
	return new Promise((resolve) => {
		const sock = net.connect(Number(to.port), to.hostname);
		const chunks = [];
		sock.on('data', (c) => chunks.push(c));
		const done = () => {
			const all = Buffer.concat(chunks).toString('latin1');
			const m = /^HTTP\/1\.[01] (\d{3})/.exec(all);
			const sep = all.indexOf('\r\n\r\n');
			resolve({ status: m ? Number(m[1]) : 0, head: all.slice(0, sep), body: Buffer.from(all.slice(sep + 4), 'latin1').toString('utf8') });
		};
		sock.on('end', done);
		sock.on('error', done);
		sock.setTimeout(15000, () => sock.destroy());
		sock.end(bytes);
	});
}

// A request from parts; body is a string or a Buffer (sent as is); to: the server's URL.
function request({ method = 'POST', path = '/', headers = {}, body = '', to = url }) {
	const b = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
	const h = {
		Host: to.host,
		'Content-Type': 'application/json',
		'A2A-Version': '1.0',
		'X-Participant-Id': 'alice',
		Connection: 'close',
		...headers,
	};
	if (method !== 'GET' && !('Content-Length' in h))
		h['Content-Length'] = String(b.length);
	const head = Buffer.from(`${method} ${path} HTTP/1.1\r\n` + Object.entries(h).filter(([, v]) => v !== null).map(([k, v]) => `${k}: ${v}\r\n`).join('') + '\r\n', 'latin1');
	return raw(Buffer.concat([head, b]), to);
}

const rpc = (method, params, id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const msg = (extra = '', parts = '[{"text":"hi"}]') => `{"messageId":"m-${Math.random().toString(36).slice(2)}","role":"ROLE_USER","parts":${parts}${extra}}`;
const send = (messageText, extra = '') => `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":${messageText}${extra}}}`;

// A task of alice's to aim follow-ups at.
const made = await request({ body: rpc('SendMessage', { message: { messageId: 'seed-1', role: 'ROLE_USER', parts: [{ text: 'seed' }] } }) });
const TASK = JSON.parse(made.body).result?.task?.id;
ok(typeof TASK === 'string', 'a task to aim at was made', made.body);

const bytes = (...xs) => Buffer.concat(xs.map((x) => (typeof x === 'string' ? Buffer.from(x, 'utf8') : Buffer.from(x))));
const longId = 'x'.repeat(1000);

// [name with requirement ids, request, expected HTTP status, expected JSON-RPC code or REST
//  status (null: none), message pattern]
const rows = [
	// --- classes that were refused well before (kept so they stay refused)
	['LIM-1 a body over max_body is refused before it is read (by lighttpd, whose limit matches)', { headers: { 'Content-Length': '5000000' }, body: '' }, 413, null, /413/],
	['LIM-2 JSON nested deeper than json_depth', { body: '['.repeat(200) + ']'.repeat(200) }, 200, -32602, /deeper than the limit of \d+/],
	['LIM-2 not JSON at all', { body: '{"jsonrpc":"2.0",' }, 200, -32700, /Invalid JSON/],
	['A2A-2 a batch array', { body: '[' + rpc('GetTask', { id: 't' }) + ']' }, 200, -32600, /batch/i],
	['A2A-2 jsonrpc is not "2.0"', { body: '{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"t"}}' }, 200, -32600, /jsonrpc/],
	['A2A-2 an unknown method is named', { body: rpc('StealTask', {}) }, 200, -32601, /StealTask/],
	['A2A-2 params that are not an object', { body: '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1]}' }, 200, -32602, /params/],
	['A2A-4 an A2A-Version the server does not speak', { headers: { 'A2A-Version': '0.3' }, body: rpc('GetTask', { id: 't' }) }, 200, -32009, /0\.3/],
	['A2A-4 a Content-Type that is not JSON', { headers: { 'Content-Type': 'text/plain' }, body: rpc('GetTask', { id: 't' }) }, 200, -32005, /Content-Type|text\/plain/],
	['LIM-1 a Content-Length that is not digits', { headers: { 'Content-Length': '+12' }, body: '' }, 400, null, /./],
	['A2A-4 a REST path that does not exist', { method: 'GET', path: '/tasks/a/b/c/d' }, 404, 'NOT_FOUND', /./],
	// --- LIM-4: NUL, UTF-8, duplicate names
	['LIM-4 a NUL in message.messageId', { body: send('{"messageId":"real\\u0000junk","role":"ROLE_USER","parts":[{"text":"x"}]}') }, 200, -32602, /messageId.*NUL|NUL.*messageId/],
	['LIM-4 a NUL in message.taskId', { body: send(`{"messageId":"n1","taskId":"${TASK}\\u0000x","role":"ROLE_USER","parts":[{"text":"x"}]}`) }, 200, -32602, /taskId/],
	['LIM-4 a NUL in message.contextId', { body: send('{"messageId":"n2","contextId":"c\\u0000x","role":"ROLE_USER","parts":[{"text":"x"}]}') }, 200, -32602, /contextId/],
	['LIM-4 a NUL in a GetTask id', { body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"${TASK}\\u0000junk"}}` }, 200, -32602, /id contains a NUL/],
	['LIM-4 overlong UTF-8 (c0 80) in text', { body: bytes('{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"u1","role":"ROLE_USER","parts":[{"text":"', [0xc0, 0x80], '"}]}}}') }, 200, -32700, /invalid UTF-8 at offset \d+/],
	['LIM-4 a UTF-8-encoded surrogate (ed a0 80)', { body: bytes('{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"u2","role":"ROLE_USER","parts":[{"text":"', [0xed, 0xa0, 0x80], '"}]}}}') }, 200, -32700, /invalid UTF-8/],
	['LIM-4 a lone \\ud800 escape', { body: send('{"messageId":"u3","role":"ROLE_USER","parts":[{"text":"a\\ud800"}]}') }, 200, -32700, /unpaired UTF-16 surrogate/],
	['LIM-4 messageId twice in one object', { body: send('{"messageId":"d1","messageId":"d2","role":"ROLE_USER","parts":[{"text":"x"}]}') }, 200, -32700, /"messageId" appears twice/],
	['LIM-4 method twice in the envelope', { body: '{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"CancelTask","params":{"id":"t"}}' }, 200, -32700, /"method" appears twice/],
	['LIM-4 taskId twice, one spelled with an escape', { body: send(`{"messageId":"d3","taskId":"${TASK}","task\\u0049d":"other","role":"ROLE_USER","parts":[{"text":"x"}]}`) }, 200, -32700, /"taskId" appears twice/],
	['LIM-4 messageId and message_id together', { body: send('{"messageId":"d4","message_id":"d5","role":"ROLE_USER","parts":[{"text":"x"}]}') }, 200, -32602, /message\.messageId and message\.message_id/],
	['LIM-4 REST: a name twice in a message:send body', { path: '/message:send', body: '{"message":{"messageId":"d6","role":"ROLE_USER","role":"ROLE_AGENT","parts":[{"text":"x"}]}}' }, 400, 'INVALID_ARGUMENT', /"role" appears twice/],
	// --- LIM-4: arrays, tokens, ids, timestamps
	['LIM-4 message.extensions over 64 entries', { body: send(msg(`,"extensions":${JSON.stringify(Array.from({ length: 65 }, (_, i) => `urn:x:${i}`))}`)) }, 200, -32602, /extensions has 65 entries; the limit is 64/],
	['LIM-4 message.referenceTaskIds over 64 entries', { body: send(msg(`,"referenceTaskIds":${JSON.stringify(Array.from({ length: 65 }, (_, i) => `t${i}`))}`)) }, 200, -32602, /referenceTaskIds has 65 entries/],
	['LIM-4 a pageToken of 1 KB of hex', { body: rpc('ListTasks', { pageToken: 'ab'.repeat(512) }) }, 200, -32602, /pageToken/],
	['LIM-4 a pageToken with uppercase hex', { body: rpc('ListTasks', { pageToken: '312E61' }) }, 200, -32602, /pageToken/],
	['LIM-4 statusTimestampAfter 2026-02-30', { body: rpc('ListTasks', { statusTimestampAfter: '2026-02-30T00:00:00Z' }) }, 200, -32602, /statusTimestampAfter.*RFC 3339/],
	['LIM-4 a GetTask id over TH_ID_MAX', { body: rpc('GetTask', { id: 'y'.repeat(1025) }) }, 200, -32602, /id is 1025 bytes; the limit is 1024/],
	// --- ID-6: who may speak
	['ID-6 an X-Participant-Id over max_id', { headers: { 'X-Participant-Id': 'p'.repeat(2000) }, body: rpc('GetTask', { id: TASK }) }, 200, -32602, /X-Participant-Id is 2000 bytes; the limit is 256/],
	['ID-6 X-Participant-Id is the agent itself', { headers: { 'X-Participant-Id': 'tiny-harness' }, body: send(msg()) }, 200, -32602, /agent's own id/],
	['ID-6 X-Participant-Id with white space', { headers: { 'X-Participant-Id': 'bob smith' }, body: send(msg()) }, 200, -32602, /white space/],
	['ID-6 X-Participant-Id with a byte that is not UTF-8', { headers: { 'X-Participant-Id': 'b\xf6b' }, body: send(msg()) }, 200, -32602, /not UTF-8/],
	['ID-6 a task envelope participant id with white space', { body: send(msg('', '[{"data":{"kind":"task","payload":{"name":"N","goal":"G","participants":[{"id":"bob smith","role":"admin"}]}},"mediaType":"application/vnd.tiny-harness.event+json"}]')) }, 200, -32602, /participants\[0\]\.id contains white space/],
	['ID-3 a stranger\'s follow-up is TaskNotFound', { headers: { 'X-Participant-Id': 'mallory' }, body: send(`{"messageId":"s1","taskId":"${TASK}","role":"ROLE_USER","parts":[{"text":"x"}]}`) }, 200, -32001, /not found/],
	['ID-3 no participant at all', { headers: { 'X-Participant-Id': null }, body: send(msg()) }, 200, -32602, /no participant asserted/],
	// --- CTL: completion rules
	['CTL-1 a control envelope for no task', { body: send(msg('', '[{"data":{"kind":"control","action":"complete"},"mediaType":"application/vnd.tiny-harness.event+json"}]')) }, 200, -32602, /taskId is required/],
];

for (const [name, req, status, code, pattern] of rows) {
	const before = counts();
	const r = await request(req);
	let body = null;
	try { body = JSON.parse(r.body); } catch { /* not JSON */ }
	const message = body?.error?.message ?? r.body;
	let codeOk = true;
	if (typeof code === 'number')
		codeOk = body?.error?.code === code;
	else if (typeof code === 'string')
		codeOk = body?.error?.status === code;
	const after = counts();
	ok(r.status === status && codeOk && pattern.test(message) && before === after, name,
		`HTTP ${r.status} (want ${status}), code ${body?.error?.code ?? body?.error?.status} (want ${code})\nmessage: ${message.slice(0, 300)}\n` +
		(before === after ? '' : `tables before: ${before}\ntables after:  ${after}`));
}

// ErrorInfo echoes a long unknown id whole (it was cut to 127 bytes).
{
	const r = await request({ body: rpc('GetTask', { id: longId }) });
	const data = JSON.parse(r.body).error?.data?.[0];
	ok(JSON.parse(r.body).error?.code === -32001 && data?.metadata?.taskId === longId,
		'LIM-4 ErrorInfo.metadata.taskId of an unknown 1000-byte id comes back whole', r.body.slice(0, 300));
}

// Accepted on purpose: a numeric offset is RFC 3339; free-form data keeps both spellings.
{
	const r = await request({ body: rpc('ListTasks', { statusTimestampAfter: '2026-01-01T00:00:00+00:00' }) });
	ok(Array.isArray(JSON.parse(r.body).result?.tasks), 'LIM-4 statusTimestampAfter with +00:00 is accepted', r.body.slice(0, 300));
	const tasks = Number(sql('SELECT count(*) FROM tasks'));
	const s = await request({ body: send(msg('', '[{"data":{"a_b":1,"aB":2}}]')) });
	const t = JSON.parse(s.body).result?.task;
	ok(t && Number(sql('SELECT count(*) FROM tasks')) === tasks + 1 &&
		sql(`SELECT json FROM messages WHERE task_id = '${t.id}' AND pos = 1`).includes('"a_b":1,"aB":2'),
		'LIM-4 a data part keeps a_b and aB as sent', s.body.slice(0, 300));
}

// SEC-4: hostile Host and Origin values on a read (GetTask of alice's task). Each row gives the
// statuses that are a sensible answer: 403 from tiny-harness (the value is not this server's),
// 400 or 431 from lighttpd (a Host it will not parse, a header over its field limit), or 200
// when the value names this server after all. Never a 500, a dropped connection or a stored row.
const port = Number(url.port);
const hostRows = [
	['SEC-4 a Host of 300 bytes (longer than any host name)', { Host: 'h'.repeat(300) }, [403], /Host .* is not this server's/],
	['SEC-4 a Host of 7000 bytes', { Host: 'h'.repeat(7000) }, [400, 403], /./],
	['SEC-4 a Host over lighttpd\'s header field limit (20000 bytes)', { Host: 'h'.repeat(20000) }, [400, 431], /./],
	['SEC-4 a Host with a control character (0x01)', { Host: `127.0.0.1\x01:${port}` }, [400, 403], /./],
	['SEC-4 a Host with DEL (0x7f)', { Host: `evil\x7f.example:${port}` }, [400, 403], /./],
	['SEC-4 a Host with a byte that is not ASCII', { Host: `\xe9vil.example:${port}` }, [400, 403], /./],
	['SEC-4 a Host naming another site', { Host: `evil.example:${port}` }, [403], /Host 'evil\.example:\d+' is not this server's/],
	['SEC-4 a Host with port 99999 (out of range)', { Host: '127.0.0.1:99999' }, [400, 403], /./],
	['SEC-4 a Host with a seven-digit port', { Host: '127.0.0.1:0000080' }, [400, 403], /./],
	['SEC-4 a Host with an empty port', { Host: '127.0.0.1:' }, [200, 400, 403], /./],
	['SEC-4 a Host with a port that is not digits', { Host: '127.0.0.1:8o' }, [400, 403], /./],
	['SEC-4 a Host of IPv6 loopback in brackets is loopback: served', { Host: `[::1]:${port}` }, [200], /./],
	['SEC-4 a Host with an unclosed IPv6 bracket', { Host: `[::1:${port}` }, [400, 403], /./],
	['SEC-4 a Host of another IPv6 address', { Host: `[2001:db8::1]:${port}` }, [403], /is not this server's/],
	['SEC-4 a Host of IPv6 with a zone id', { Host: `[fe80::1%eth0]:${port}` }, [400, 403], /./],
	['SEC-4 a Host with user info (rebinding trick)', { Host: `127.0.0.1@evil.example:${port}` }, [400, 403], /./],
	['SEC-4 an Origin of 7000 bytes', { Origin: `http://${'o'.repeat(7000)}` }, [403], /Origin .* is not this server's/],
	['SEC-4 an Origin over lighttpd\'s header field limit', { Origin: `http://${'o'.repeat(20000)}` }, [400, 431], /./],
	['SEC-4 Origin: null', { Origin: 'null' }, [403], /Origin 'null' is not this server's/],
	['SEC-4 an Origin with a control character', { Origin: `http://127.0.0.1\x01:${port}` }, [400, 403], /./],
	['SEC-4 an Origin with port 99999', { Origin: 'http://127.0.0.1:99999' }, [403], /is not this server's/],
	['SEC-4 an Origin with a path', { Origin: `http://127.0.0.1:${port}/x` }, [403], /is not this server's/],
	['SEC-4 an Origin of IPv6 brackets never closed', { Origin: `http://[::1:${port}` }, [403], /is not this server's/],
	['SEC-4 an Origin of another site', { Origin: 'https://evil.example' }, [403], /is not this server's/],
	['SEC-4 an Origin that is not a URL', { Origin: 'file:///etc/passwd' }, [403], /is not this server's/],
	['SEC-4 the server\'s own Origin is served', { Origin: `http://127.0.0.1:${port}` }, [200], /./],
];
for (const [name, headers, statuses, pattern] of hostRows) {
	const before = counts();
	const r = await request({ headers, body: rpc('GetTask', { id: TASK }) });
	let body = null;
	try { body = JSON.parse(r.body); } catch { /* not JSON */ }
	const message = body?.error?.message ?? r.body;
	const served = r.status === 200 && body?.result?.id === TASK;
	const after = counts();
	ok(statuses.includes(r.status) && (r.status !== 200 || served) && pattern.test(message) && before === after, name,
		`HTTP ${r.status} (want ${statuses.join(' or ')})\nmessage: ${message.slice(0, 300)}\n` +
		(before === after ? '' : `tables before: ${before}\ntables after:  ${after}`));
}

// SEC-1: hostile Authorization values against a second server with identity = bearer (HS256
// secret, audience tiny-harness). Every row is a SendMessage that must get 401 from
// tiny-harness with WWW-Authenticate: Bearer, store nothing and echo no token — except a
// header over lighttpd's field limit (8 KB), which lighttpd itself refuses (431) before any
// worker runs. Then its workers are the ones that started.
const SECRET = '0123456789abcdef0123456789abcdef-hostile';
const bdir = mkdtempSync(join(tmpdir(), 'th-hostile-bearer-'));
const bearer = startLighttpd(bdir, {
	procs: 2,
	env: {
		TINY_HARNESS_IDENTITY: 'bearer', TINY_HARNESS_JWT_SECRET_ENV: 'TINY_HARNESS_JWT_SECRET',
		TINY_HARNESS_JWT_SECRET: SECRET, TINY_HARNESS_JWT_AUDIENCE: 'tiny-harness',
	},
});
ok(bearer.ok, 'SEC-1 a second lighttpd with identity = bearer starts', bearer.stderr);
if (bearer.ok) {
	const burl = new URL(bearer.base);
	const bpid = readFileSync(join(bdir, 'lighttpd.pid'), 'utf8').trim();
	const bworkers = () =>
		spawnSync('pgrep', ['-P', bpid], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).sort();
	const bBefore = bworkers();
	const btables = dbSql(bearer.db, PG
		? "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
		: "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").trim().split('\n');
	const bcounts = () => dbSql(bearer.db, btables.map((t) => `SELECT '${t}=' || count(*) FROM "${t}"`).join(' UNION ALL ')).trim().split('\n').sort().join(' ');
	const b64 = (x) => Buffer.from(x).toString('base64url');
	const exp = Math.floor(Date.now() / 1000) + 600;
	const signed = (head, payload, secret = SECRET) => {
		const hp = `${b64(head)}.${b64(payload)}`;
		return `${hp}.${createHmac('sha256', secret).update(hp).digest('base64url')}`;
	};
	const HS = JSON.stringify({ alg: 'HS256', typ: 'JWT' });
	const claims = (sub) => JSON.stringify({ sub, aud: 'tiny-harness', exp });
	const authRows = [
		['SEC-1 Authorization: Bearer with no token', 'Bearer', 401],
		['SEC-1 Authorization: Bearer and spaces only', 'Bearer    ', 401],
		['SEC-1 Authorization: Basic (another scheme)', 'Basic YWxpY2U6c2VjcmV0', 401],
		['SEC-1 a token of binary bytes (0x80..0xff)', 'Bearer ' + Buffer.from(Array.from({ length: 128 }, (_, i) => 0x80 + i)).toString('latin1'), 401],
		['SEC-1 a token of printable garbage', 'Bearer !#$%&\'()*+,-/:;<=>?@[\\]^_`{|}~', 401],
		['SEC-1 a token of 4000 dots', `Bearer ${'.'.repeat(4000)}`, 401],
		['SEC-1 a token with 2000 segments', `Bearer ${'e30.'.repeat(2000)}x`, 401],
		['SEC-1 a token of three empty segments', 'Bearer ..', 401],
		['SEC-1 a 7 KB token that is valid base64url', `Bearer ${'A'.repeat(7000)}.${'B'.repeat(100)}.${'C'.repeat(43)}`, 401],
		['SEC-1 a 1 MB token (over lighttpd\'s header field limit)', `Bearer ${'A'.repeat(1 << 20)}`, 431],
		['SEC-1 alg:none, no signature', `Bearer ${b64(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64(claims('alice'))}.`, 401],
		['SEC-1 alg:none with an HS256 signature', `Bearer ${signed(JSON.stringify({ alg: 'none', typ: 'JWT' }), claims('alice'))}`, 401],
		['SEC-1 alg:HS512 with an HS256 signature', `Bearer ${signed(JSON.stringify({ alg: 'HS512', typ: 'JWT' }), claims('alice'))}`, 401],
		['SEC-1 a header that is not JSON, correctly signed', `Bearer ${signed('{"alg":"HS256"', claims('alice'))}`, 401],
		['SEC-1 claims that are not JSON, correctly signed', `Bearer ${signed(HS, '{"sub":"alice",')}`, 401],
		['SEC-1 claims that are a JSON array, correctly signed', `Bearer ${signed(HS, '["alice"]')}`, 401],
		['SEC-1 a sub with a NUL, correctly signed', `Bearer ${signed(HS, claims('alice\u0000admin'))}`, 401],
		['SEC-1 a sub of 100 KB, correctly signed (over lighttpd\'s field limit)', `Bearer ${signed(HS, claims('s'.repeat(100000)))}`, 431],
		['SEC-1 a sub of 2000 bytes, correctly signed', `Bearer ${signed(HS, claims('s'.repeat(2000)))}`, 401],
		['SEC-1 no exp, correctly signed', `Bearer ${signed(HS, JSON.stringify({ sub: 'alice', aud: 'tiny-harness' }))}`, 401],
		['SEC-1 a wrong audience, correctly signed', `Bearer ${signed(HS, JSON.stringify({ sub: 'alice', aud: 'elsewhere', exp }))}`, 401],
		['SEC-1 an API key that was never issued', `Bearer th_${'0'.repeat(43)}`, 401],
		['SEC-1 an API key prefix alone', 'Bearer th_', 401],
	];
	for (const [name, value, status] of authRows) {
		const before = bcounts();
		const r = await request({ to: burl, headers: { Authorization: value }, body: send(msg()) });
		const after = bcounts();
		const token = value.slice(7);
		const fromUs = status === 401;
		const www = /\r\nWWW-Authenticate: Bearer realm="tiny-harness"/i.test(r.head);
		const echoed = token.length >= 16 && r.body.includes(token);
		ok(r.status === status && (!fromUs || (www && !echoed)) && before === after, name,
			`HTTP ${r.status} (want ${status}), WWW-Authenticate ${www}, token echoed ${echoed}\nbody: ${r.body.slice(0, 300)}\n` +
			(before === after ? '' : `tables before: ${before}\ntables after:  ${after}`));
	}
	// The server answers a good token after all that (it was not the server refusing everything).
	{
		const r = await request({ to: burl, headers: { Authorization: `Bearer ${signed(HS, claims('alice'))}` }, body: send(msg()) });
		ok(r.status === 200 && JSON.parse(r.body).result?.task?.id, 'SEC-1 a good HS256 token is still served afterwards', `HTTP ${r.status} ${r.body.slice(0, 300)}`);
	}
	const bAfter = bworkers();
	ok(bBefore.length > 0 && bAfter.length === bBefore.length && bAfter.every((p, i) => p === bBefore[i]),
		`LIM-3 SEC-1 no bearer-mode worker died: the same ${bBefore.length} worker pids before and after`, `before ${bBefore} after ${bAfter}`);
	bearer.stop();
}

const after = workers();
ok(after.length === workersBefore.length && after.every((p, i) => p === workersBefore[i]),
	`LIM-3 no worker died: the same ${workersBefore.length} worker pids before and after`, `before ${workersBefore} after ${after}`);
if (PG)
	ok(true, 'LIM-3 PRAGMA integrity_check is ok afterwards # SKIP a PRAGMA of SQLite (the database is PostgreSQL)');
else
	ok(sql('PRAGMA integrity_check') === 'ok', 'LIM-3 PRAGMA integrity_check is ok afterwards');

console.log(`1..${n}`);
server.stop();
process.exit(failed ? 1 : 0);
