// SPDX-License-Identifier: Apache-2.0
// Shared by the Node tests that run tiny-harness behind lighttpd (tests/interop, tests/ui):
// finding programs, starting and stopping the server through tests/lib/server.sh, the
// @a2a-js/sdk client with the sender header, and the Chromium the browser tests drive.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { SRCDIR, TH_BIN, cleanEnv, removeTmp } from '../contract/lib.mjs';
import { dbOf } from './db.mjs';

// The first NAME on PATH (then in the EXTRA directories), or null.
export function onPath(name, extra = []) {
	for (const dir of (process.env.PATH ?? '').split(':').concat(extra))
		if (dir && existsSync(join(dir, name)))
			return join(dir, name);
	return null;
}

// $LIGHTTPD, else lighttpd on PATH or in the sbin directories; null when there is none.
export function findLighttpd() {
	return process.env.LIGHTTPD || onPath('lighttpd', ['/usr/sbin', '/usr/local/sbin']);
}

// Starts lighttpd with PROCS workers and its state in DIR (tests/lib/server.sh start) and
// arranges for it to be stopped at exit — and, with signals, on SIGINT/SIGTERM (exit 1) —
// removing DIR unless TH_KEEP_TMP is set, then calling onStop. env: TINY_HARNESS_* settings
// for the workers (the caller's own are never passed on). Returns {base, ok, stderr, stop,
// db}; ok is false when the server did not start; db is the server's database, a path or
// a postgresql:// URI under TH_TEST_PG (read it with tests/lib/db.mjs).
export function startLighttpd(dir, { lighttpd = findLighttpd(), procs = 2, signals = true, onStop, env: extra = {} } = {}) {
	const serverSh = join(SRCDIR, 'tests', 'lib', 'server.sh');
	const env = cleanEnv({ TH_BIN, TH_SRCDIR: SRCDIR, LIGHTTPD: lighttpd, ...extra });
	let stopped = false;
	const stop = () => {
		if (stopped)
			return;
		stopped = true;
		spawnSync('sh', [serverSh, 'stop', dir], { env, stdio: 'inherit' });
		if (!process.env.TH_KEEP_TMP)
			removeTmp(dir);
		onStop?.();
	};
	process.on('exit', stop);
	if (signals)
		for (const sig of ['SIGINT', 'SIGTERM'])
			process.on(sig, () => { stop(); process.exit(1); });
	const started = spawnSync('sh', [serverSh, 'start', dir, String(procs)], { env, encoding: 'utf8', timeout: 60000 });
	const base = (started.stdout ?? '').trim();
	return {
		base,
		ok: started.status === 0 && base.startsWith('http'),
		stderr: `${started.stderr}`,
		stop,
		db: dbOf(dir),
	};
}

// startLighttpd, or the TAP of a failed start ("not ok 1", its stderr, "1..1") and exit 1.
export function startLighttpdOrExit(dir, opts) {
	const server = startLighttpd(dir, opts);
	if (!server.ok) {
		console.log('not ok 1 - lighttpd with tiny-harness starts (server.sh start)');
		for (const line of server.stderr.split('\n'))
			console.log(`# ${line}`);
		console.log('1..1');
		process.exit(1);
	}
	return server;
}

// The sender header: the SDK sends RequestOptions.serviceParameters as HTTP headers, and a
// CallInterceptor may edit them before every call (Client.withNormalizedHeaders always hands
// it an options object with a serviceParameters record). This one sets X-Participant-Id
// there unless the call already names one.
export class ParticipantInterceptor {
	constructor(id) {
		this.id = id;
	}

	async before(args) {
		const params = args.options.serviceParameters;
		if (!Object.keys(params).some((k) => k.toLowerCase() === 'x-participant-id'))
			params['X-Participant-Id'] = this.id;
	}

	async after() {}
}

// An SDK Client for the agent at BASE speaking as PARTICIPANT (null: no X-Participant-Id),
// over HTTP+JSON when binding is 'HTTP+JSON', else the SDK's default choice.
export async function sdkClient(clientMod, base, binding, participant) {
	const { ClientFactory, ClientFactoryOptions } = clientMod;
	const overrides = {};
	if (participant != null)
		overrides.clientConfig = { interceptors: [new ParticipantInterceptor(participant)] };
	if (binding === 'HTTP+JSON')
		overrides.preferredTransports = ['HTTP+JSON'];
	const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, overrides));
	return factory.createFromUrl(base);
}

// Debian's Chromium for the browser tests (tests/ui); TH_CHROMIUM names another. Its flags:
// no sandbox (CI runs as root), no GPU, and no network of its own (updates, sync).
export const CHROMIUM = process.env.TH_CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
	'--disable-component-update', '--disable-sync'];

// Skips the whole test file (exit 77) when there is no Chromium to drive.
export function needChromium(t) {
	if (!existsSync(CHROMIUM))
		t.skipAll(`no Chromium at ${CHROMIUM} (Debian package chromium; scripts/deps.sh installs it)`);
}
