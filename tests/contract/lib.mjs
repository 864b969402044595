// SPDX-License-Identifier: Apache-2.0
// Shared by the contract and interop tests: a tiny TAP writer, the schema loader, and a
// runner for the program in CGI mode (one request: environment + stdin in, CGI out).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';

export const SRCDIR = process.env.TH_SRCDIR ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TH_BIN = process.env.TH_BIN;

export const EXT_ROOT = 'https://madarauchiha-314.github.io/tiny-harness';
export const META_TASK = 'io.github.madarauchiha-314.tiny-harness/task';
export const META_STATUS = 'io.github.madarauchiha-314.tiny-harness/status';
export const MT_EVENT = 'application/vnd.tiny-harness.event+json';
export const MT_CHANNEL = 'application/vnd.tiny-harness.channel+json';
export const SCHEMA_ROOT = `${EXT_ROOT}/a2a/ext/`;

// TAP writer. Each test is an async function that throws (node:assert) to fail; the
// diagnostic lines say what was expected and what the server sent.
export class Tap {
	constructor() {
		this.n = 0;
		this.failed = 0;
	}

	async test(name, fn) {
		this.n += 1;
		try {
			await fn();
			console.log(`ok ${this.n} - ${name}`);
			return true;
		} catch (err) {
			this.failed += 1;
			console.log(`not ok ${this.n} - ${name}`);
			const text = err instanceof Error ? `${err.name}: ${err.message}` : inspect(err);
			for (const line of text.split('\n').slice(0, 60))
				console.log(`# ${line}`);
			return false;
		}
	}

	skipAll(reason) {
		console.log(`1..0 # SKIP ${reason}`);
		process.exit(77);
	}

	done() {
		console.log(`1..${this.n}`);
		if (this.failed > 0)
			console.log(`# ${this.failed} of ${this.n} failed`);
		process.exit(this.failed > 0 ? 1 : 0);
	}
}

// Resolves packages from the repository's node_modules even when the test file is run from a
// build directory; returns null when `npm ci` has not been run.
export async function importDep(name) {
	try {
		const require = createRequire(join(SRCDIR, 'package.json'));
		const path = require.resolve(name);
		return await import(path);
	} catch {
		return null;
	}
}

// Loads every schema under docs/a2a/ext into one Ajv (draft 2020-12) so that relative $refs
// (event.json → task.json) resolve. Returns {ajv, validator(name)}.
export async function loadSchemas() {
	const ajvMod = await importDep('ajv/dist/2020.js');
	const fmtMod = await importDep('ajv-formats');
	if (ajvMod == null || fmtMod == null)
		return null;
	const Ajv2020 = ajvMod.default.default ?? ajvMod.default;
	const addFormats = fmtMod.default.default ?? fmtMod.default;
	const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true, allowUnionTypes: true });
	addFormats(ajv);
	for (const name of ['task', 'status', 'channel', 'commands', 'event']) {
		const text = readFileSync(join(SRCDIR, 'docs', 'a2a', 'ext', `${name}.json`), 'utf8');
		ajv.addSchema(JSON.parse(text));
	}
	return {
		ajv,
		validator(ref) {
			const v = ajv.getSchema(SCHEMA_ROOT + ref);
			if (v == null)
				throw new Error(`no schema ${ref}`);
			return v;
		},
	};
}

// Throws an AssertionError-like error listing Ajv's complaints when value is not valid.
export function assertValid(validate, value, what) {
	if (validate(value))
		return;
	const errs = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
	throw new Error(`${what} does not match its schema:\n${errs.join('\n')}\nvalue: ${JSON.stringify(value, null, 1)}`);
}

export function assertInvalid(validate, value, what) {
	if (!validate(value))
		return;
	throw new Error(`${what} was accepted by the schema but must be refused: ${JSON.stringify(value)}`);
}

export function makeTmp(prefix) {
	return mkdtempSync(join(tmpdir(), prefix));
}

// A process of the test that is still exiting may add a file while the tree is removed
// (ENOTEMPTY, seen under ASan): removal is tried again for up to a second.
export function removeTmp(dir) {
	rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

// An environment with nothing of the caller's tiny-harness or CGI settings in it.
export function cleanEnv(extra) {
	const env = {};
	for (const [k, v] of Object.entries(process.env)) {
		if (k.startsWith('TINY_HARNESS_') || k.startsWith('HTTP_') || k === 'REQUEST_METHOD' ||
		    k === 'CONTENT_TYPE' || k === 'CONTENT_LENGTH' || k === 'QUERY_STRING' ||
		    k === 'REQUEST_URI' || k === 'PATH_INFO' || k === 'SCRIPT_NAME' || k === 'GATEWAY_INTERFACE')
			continue;
		env[k] = v;
	}
	return { ...env, ...extra };
}

// Runs the program as a CLI command; returns {status, stdout, stderr}.
export function runCli(args, { cwd, env }) {
	const r = spawnSync(TH_BIN, args, { cwd, env: cleanEnv(env), encoding: 'utf8', timeout: 30000 });
	return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', error: r.error };
}

// Splits CGI output into status, headers (lower-case names) and body.
export function parseCgi(raw) {
	let sep = raw.indexOf('\r\n\r\n');
	let sepLen = 4;
	const lf = raw.indexOf('\n\n');
	if (sep < 0 || (lf >= 0 && lf < sep)) {
		sep = lf;
		sepLen = 2;
	}
	if (sep < 0)
		throw new Error(`CGI output has no blank line after the headers: ${JSON.stringify(raw.slice(0, 300))}`);
	const headers = {};
	for (const line of raw.slice(0, sep).split(/\r?\n/)) {
		const i = line.indexOf(':');
		if (i > 0)
			headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
	}
	const status = headers.status ? parseInt(headers.status, 10) : 200;
	return { status, headers, body: raw.slice(sep + sepLen) };
}

// One request to the program in CGI mode, as a web server would make it.
export function cgi({ db, body, participant = 'alice', method = 'POST', uri = '/', headers = {}, cwd }) {
	const payload = body == null ? '' : typeof body === 'string' ? body : JSON.stringify(body);
	const env = cleanEnv({
		GATEWAY_INTERFACE: 'CGI/1.1',
		SERVER_PROTOCOL: 'HTTP/1.1',
		SERVER_NAME: '127.0.0.1',
		SERVER_PORT: '8080',
		REMOTE_ADDR: '127.0.0.1',
		REQUEST_METHOD: method,
		REQUEST_URI: uri,
		SCRIPT_NAME: '',
		PATH_INFO: uri.split('?')[0],
		QUERY_STRING: uri.includes('?') ? uri.slice(uri.indexOf('?') + 1) : '',
		CONTENT_TYPE: 'application/json',
		CONTENT_LENGTH: String(Buffer.byteLength(payload)),
		HTTP_A2A_VERSION: '1.0',
		TINY_HARNESS_DB: db,
		...(participant != null ? { HTTP_X_PARTICIPANT_ID: participant } : {}),
		...headers,
	});
	return new Promise((resolve, reject) => {
		const child = spawn(TH_BIN, [], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
		const out = [];
		const err = [];
		const timer = setTimeout(() => child.kill('SIGKILL'), 30000);
		child.stdout.on('data', (d) => out.push(d));
		child.stderr.on('data', (d) => err.push(d));
		child.on('error', reject);
		child.on('close', (code, signal) => {
			clearTimeout(timer);
			const raw = Buffer.concat(out).toString('utf8');
			const stderr = Buffer.concat(err).toString('utf8');
			try {
				const res = parseCgi(raw);
				resolve({ ...res, code, signal, stderr, raw });
			} catch (e) {
				reject(new Error(`${e.message}\nexit ${code} ${signal ?? ''}\nstderr: ${stderr.slice(0, 600)}`));
			}
		});
		child.stdin.on('error', () => {});
		child.stdin.end(payload);
	});
}

let rpcId = 0;

// A JSON-RPC call through cgi(); returns {http, result, error, rpc}.
export async function rpc(opts, method, params) {
	rpcId += 1;
	const http = await cgi({ ...opts, body: { jsonrpc: '2.0', id: rpcId, method, params } });
	let rpcBody;
	try {
		rpcBody = JSON.parse(http.body);
	} catch {
		throw new Error(`${method}: body is not JSON (HTTP ${http.status}): ${http.body.slice(0, 600)}\nstderr: ${http.stderr.slice(0, 600)}`);
	}
	return { http, rpc: rpcBody, result: rpcBody.result, error: rpcBody.error };
}

// The data: payloads of an SSE body, parsed as JSON.
export function sseEvents(body) {
	const events = [];
	for (const block of body.split(/\r?\n\r?\n/)) {
		const data = block.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, ''));
		if (data.length > 0)
			events.push(JSON.parse(data.join('\n')));
	}
	return events;
}

export function show(v) {
	return JSON.stringify(v, null, 1)?.slice(0, 3000);
}
