// SPDX-License-Identifier: Apache-2.0
// The test server's database, SQLite or PostgreSQL, for the Node tests (tests/integration,
// tests/interop, tests/ui): what tests/lib/db.sh is to the shell tests.
//
//   dbOf(dir)            the database of the server whose state is in dir: what
//                        tests/lib/server.sh wrote to dir/db (a path, or a postgresql:// URI
//                        under TH_TEST_PG), else dir/tiny-harness.db (tests/lib/apache.sh)
//   isPg(db)             db is a postgresql:// or postgres:// URI
//   psql()               the psql program these run (TH_PSQL, below)
//   dbSql(db, sql)       the rows as `sqlite3 DB SQL` prints them (columns joined by |, one
//                        row a line, no header), without the last newline: sqlite3 for a
//                        path, psql -X -q -At -F '|' -v ON_ERROR_STOP=1 for a URI
//   dbRows(db, sql)      the rows as objects, as `sqlite3 -json` gives them: column name ->
//                        number, string or null (PostgreSQL's booleans become 1/0, its
//                        json/jsonb values their JSON text, as a TEXT column holds it)
//   dbEvents(db, taskId, after)  the task's events after seq `after` as the program gives
//                        them to streams and push deliveries (`tiny-harness tasks events`,
//                        TH_BIN: stored events hold references, STORE-10): [{seq, kind, json}]
// They throw an Error naming the client and its stderr when the client fails. Options:
// busyMs (SQLite's busy timeout), timeout (ms, default 30000), maxBuffer (bytes).
// The SQL must mean the same on both (see tests/lib/db.sh): standard quoting, an alias on
// every subquery in FROM, no PRAGMA, group_concat, json_extract, instr or hex.
// TH_PSQL names the psql to run (default the newest /usr/lib/postgresql/*/bin/psql, else
// psql on PATH).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const isPg = (db) => /^postgres(ql)?:\/\//.test(String(db));

export function dbOf(dir) {
	const file = join(dir, 'db');
	if (existsSync(file)) {
		const db = readFileSync(file, 'utf8').trim();
		if (db)
			return db;
	}
	return join(dir, 'tiny-harness.db');
}

let psqlFound = null;
export function psql() {
	if (process.env.TH_PSQL)
		return process.env.TH_PSQL;
	if (psqlFound == null) {
		let versions = [];
		try {
			versions = readdirSync('/usr/lib/postgresql').filter((v) => existsSync(`/usr/lib/postgresql/${v}/bin/psql`));
		} catch {
			versions = [];
		}
		versions.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
		psqlFound = versions.length ? `/usr/lib/postgresql/${versions[versions.length - 1]}/bin/psql` : 'psql';
	}
	return psqlFound;
}

function run(db, args, { timeout = 30000, maxBuffer = 64 << 20 } = {}) {
	const pg = isPg(db);
	const cmd = pg ? psql() : 'sqlite3';
	const env = pg ? { ...process.env, PGOPTIONS: '-c client_min_messages=warning', PGCONNECT_TIMEOUT: '10' } : process.env;
	try {
		return execFileSync(cmd, args, { encoding: 'utf8', timeout, maxBuffer, env, stdio: ['ignore', 'pipe', 'pipe'] });
	} catch (err) {
		throw new Error(`${cmd} ${db}: ${String(err.stderr ?? '').trim() || err.message}`);
	}
}

const psqlArgs = (db, sql) => ['-X', '-q', '-At', '-F', '|', '-v', 'ON_ERROR_STOP=1', '-d', db, '-c', sql];
const sqliteArgs = (db, sql, busyMs, json) =>
	[...(json ? ['-json'] : []), ...(busyMs != null ? ['-cmd', `.timeout ${busyMs}`] : []), db, sql];

export function dbSql(db, sql, opts = {}) {
	const out = run(db, isPg(db) ? psqlArgs(db, sql) : sqliteArgs(db, sql, opts.busyMs, false), opts);
	return out.replace(/\n+$/, '');
}

export function dbRows(db, sql, opts = {}) {
	if (!isPg(db)) {
		const out = run(db, sqliteArgs(db, sql, opts.busyMs, true), opts);
		return out.trim() === '' ? [] : JSON.parse(out);
	}
	// One JSON object a row; the subquery keeps the query's own ORDER BY.
	const inner = sql.trim().replace(/;+\s*$/, '');
	const out = run(db, psqlArgs(db, `SELECT row_to_json(q) FROM (${inner}) AS q`), opts);
	return out.split('\n').filter((line) => line !== '').map((line) => {
		const row = JSON.parse(line);
		for (const [k, v] of Object.entries(row)) {
			if (typeof v === 'boolean')
				row[k] = v ? 1 : 0;
			else if (v !== null && typeof v === 'object')
				row[k] = JSON.stringify(v);
		}
		return row;
	});
}

export function dbEvents(db, taskId, after = 0, { timeout = 30000 } = {}) {
	const bin = process.env.TH_BIN;
	if (!bin)
		throw new Error('dbEvents: TH_BIN names the program');
	// The test's own environment (PG*, sanitizer options), none of its TINY_HARNESS_* keys.
	const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TINY_HARNESS_')));
	env.TINY_HARNESS_DB = db;
	let out;
	try {
		out = execFileSync(bin, ['tasks', 'events', taskId, '--after', String(after)],
			{ encoding: 'utf8', timeout, maxBuffer: 64 << 20, env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
	} catch (err) {
		throw new Error(`${bin} tasks events ${taskId}: ${String(err.stderr ?? '').trim() || err.message}`);
	}
	return out.split('\n').filter((line) => line !== '').map((line) => {
		const [seq, kind, ...rest] = line.split('\t');
		return { seq: Number(seq), kind, json: rest.join('\t') };
	});
}
