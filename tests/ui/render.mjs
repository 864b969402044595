// SPDX-License-Identifier: Apache-2.0
// A2UI in a real browser (UI-1, UI-2, UI-3, UI-4, EXT-4): lighttpd + tiny-harness serve the page
// tests/ui/index.html and its script tests/ui/app.js, bundled at test time with esbuild together
// with the pinned @a2ui/lit renderer into TH_STATE_DIR/www/static/ui/. Headless Debian Chromium,
// driven by playwright-core, opens the page; the page reads the task over A2A JSON-RPC (GetTask,
// same origin), renders the /confirm Card with the Lit renderer, and the test clicks the real
// Approve <button> inside the renderer's shadow DOM. The page's action handler sends the action
// back over A2A; the test checks the task's history, the channel message in SQLite, the card's
// deletion and the refusal of a second click.
//
// A screenshot of the rendered card (before the click) is written to
// $TH_BUILDDIR/tests/artifacts/ui/confirm-card.png (or under the source tree without
// TH_BUILDDIR). Exit 77 when chromium, lighttpd, sqlite3 or node_modules is missing.
// TH_CHROMIUM overrides /usr/bin/chromium; TH_KEEP_TMP=1 keeps the state directory.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { SRCDIR, TH_BIN, Tap, importDep, makeTmp, removeTmp, show } from '../contract/lib.mjs';
import { dbRows } from '../lib/db.mjs';
import { CHROMIUM, CHROMIUM_ARGS, findLighttpd, needChromium, onPath, startLighttpdOrExit } from '../lib/interop.mjs';
import { missingModules, nodeModuleDirs } from '../interop/deps.mjs';

const EXT = 'https://a2ui.org/a2a-extension/a2ui/v0.9.1';
const MT = 'application/a2ui+json';

const t = new Tap();
if (!TH_BIN)
	t.skipAll('TH_BIN is not set (run through make check)');

const LIGHTTPD = findLighttpd();
if (LIGHTTPD == null)
	t.skipAll('lighttpd is not installed');
if (onPath('sqlite3') == null)
	t.skipAll('sqlite3 is not installed');
needChromium(t);
const pw = await importDep('playwright-core');
const esbuild = await importDep('esbuild');
let litResolved = false;
try {
	createRequire(join(SRCDIR, 'package.json')).resolve('@a2ui/lit/v0_9');
	litResolved = true;
} catch {
	litResolved = false;
}
if (pw == null || esbuild == null || !litResolved)
	missingModules(t, 'playwright-core, esbuild or @a2ui/lit is not installed: run `npm ci` in the source tree');
const chromium = pw.chromium ?? pw.default?.chromium;
const build = esbuild.build ?? esbuild.default?.build;

// ------------------------------------------------------------------ server
const dir = makeTmp('th-ui-render-');
const userData = makeTmp('th-ui-chromium-');
let browser = null;
const { base, db: DB, stop: stopServer } = startLighttpdOrExit(dir, { lighttpd: LIGHTTPD, onStop: () => removeTmp(userData) });
console.log(`# server ${base} (state in ${dir})`);

// ------------------------------------------------------------------ helpers
let seq = 0;
const nextId = () => `ui-render-${process.pid}-${++seq}`;

// One JSON-RPC call; resolves to {result} or {error}, never throws on a JSON-RPC error.
async function rpc(method, params, { participant = 'alice', a2ui = true } = {}) {
	const headers = { 'Content-Type': 'application/json', 'A2A-Version': '1.0', 'X-Participant-Id': participant };
	if (a2ui)
		headers['A2A-Extensions'] = EXT;
	const res = await fetch(base, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: ++seq, method, params }) });
	const text = await res.text();
	let body;
	try {
		body = JSON.parse(text);
	} catch {
		throw new Error(`${method}: HTTP ${res.status}, not JSON: ${text.slice(0, 500)}`);
	}
	return body;
}
async function ok(method, params, opts) {
	const body = await rpc(method, params, opts);
	assert.ok(body.result, `${method} failed: ${show(body)}`);
	return body.result;
}

function sql(query, ...args) {
	return dbRows(DB, query.replace(/\?/g, () => `'${String(args.shift()).replaceAll("'", "''")}'`), { timeout: 10000 });
}

const textOf = (m) => (m?.parts ?? []).filter((p) => typeof p.text === 'string').map((p) => p.text).join('');
const need = (v, what) => {
	assert.ok(v, `not run: ${what} failed earlier`);
	return v;
};

const QUESTION = 'Deploy release 1.4 to production?';
const FORM_QUESTION = 'Rotate the staging database password?';
const shotDir = join(process.env.TH_BUILDDIR || SRCDIR, 'tests', 'artifacts', 'ui');
const shot = join(shotDir, 'confirm-card.png');

const pageErrors = [];
async function openPage(context, query) {
	const page = await context.newPage();
	page.setDefaultTimeout(15000);
	page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
	page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`); });
	await page.goto(`${base}static/ui/index.html?${new URLSearchParams(query)}`);
	return page;
}
const uiState = (page) => page.evaluate(() => JSON.parse(JSON.stringify(window.thUi)));

// ------------------------------------------------------------------ tests
try {
	await t.test('UI-1 the page and its Lit-renderer bundle (@a2ui/lit, esbuild) are served by lighttpd under /static/ui/', async () => {
		const www = join(dir, 'www', 'static', 'ui');
		mkdirSync(www, { recursive: true });
		await build({
			entryPoints: [join(SRCDIR, 'tests', 'ui', 'app.js')],
			bundle: true,
			format: 'iife', // a classic script: lighttpd serves .js as application/octet-stream
			platform: 'browser',
			outfile: join(www, 'app.js'),
			nodePaths: nodeModuleDirs(),
			logLevel: 'error',
		});
		copyFileSync(join(SRCDIR, 'tests', 'ui', 'index.html'), join(www, 'index.html'));
		console.log(`# bundle ${statSync(join(www, 'app.js')).size} bytes`);
		for (const f of ['index.html', 'app.js']) {
			const r = await fetch(`${base}static/ui/${f}`);
			assert.equal(r.status, 200, `GET /static/ui/${f}`);
		}
	});

	let task, card;
	await t.test('UI-4 EXT-4 /confirm with A2UI activated: GetTask lists artifact a2ui:<n> holding the Card (application/a2ui+json)', async () => {
		const r = await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', parts: [{ text: `/confirm ${QUESTION}` }] } });
		task = r.task;
		assert.ok(task?.id, `no task: ${show(r)}`);
		const got = await ok('GetTask', { id: task.id });
		card = (got.artifacts ?? []).find((a) => a.name === 'a2ui' && /^a2ui:\d+$/.test(a.artifactId));
		assert.ok(card, `no a2ui artifact: ${show(got.artifacts)}`);
		assert.equal(card.parts[0].mediaType, MT);
		const msgs = card.parts[0].data;
		assert.ok(msgs.some((m) => m.createSurface), 'createSurface');
		const comps = msgs.find((m) => m.updateComponents)?.updateComponents.components ?? [];
		assert.ok(comps.some((c) => c.component === 'Text' && c.text === QUESTION), `question Text: ${show(comps)}`);
	});

	await t.test(`UI-1 headless Chromium (${CHROMIUM}) starts under playwright-core with a fresh profile`, async () => {
		browser = await chromium.launchPersistentContext(userData, {
			executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, '--headless'], viewport: { width: 900, height: 600 },
		});
		console.log(`# chromium ${browser.browser()?.version() ?? '(version unknown)'}`);
	});

	let page, surfaceId;
	await t.test('UI-1 UI-4 in headless Chromium the Lit renderer shows the Card: the question and the Approve / Reject buttons', async () => {
		const t0 = need(task, '/confirm');
		need(browser, 'the browser start');
		page = await openPage(browser, { participant: 'alice', task: t0.id });
		const approve = page.getByRole('button', { name: 'Approve' });
		await approve.waitFor({ state: 'visible' });
		await page.getByRole('button', { name: 'Reject' }).waitFor({ state: 'visible' });
		await page.getByText(QUESTION, { exact: true }).waitFor({ state: 'visible' });
		// The renderer's own elements (open shadow roots; CSS locators pierce them).
		assert.equal(await page.locator('a2ui-surface').count(), 1, 'one <a2ui-surface>');
		assert.equal(await page.locator('a2ui-surface a2ui-card').count(), 1, 'the Card as <a2ui-card>');
		assert.equal(await page.locator('a2ui-surface a2ui-basic-button').count(), 2, 'two <a2ui-basic-button>');
		const st = await uiState(page);
		assert.equal(st.surfaces.length, 1, `surfaces: ${show(st)}`);
		surfaceId = st.surfaces[0];
		assert.match(surfaceId, /^confirm-/);
		assert.deepEqual(st.errors, [], 'the page reported errors');
		mkdirSync(shotDir, { recursive: true });
		await page.locator('#surfaces').screenshot({ path: shot });
		console.log(`# screenshot of the card: ${shot}`);
	});

	let sent;
	await t.test('UI-2 UI-4 a click on the rendered Approve button sends the action over A2A; the page shows "alice approved: …"', async () => {
		const p = need(page, 'the rendering');
		need(surfaceId, 'the rendering');
		await p.getByRole('button', { name: 'Approve' }).click();
		await p.waitForFunction(() => window.thUi.replies.length > 0 && window.thUi.busy === 0);
		const st = await uiState(p);
		assert.deepEqual(st.errors, [], `the page reported errors: ${show(st.errors)}`);
		assert.equal(st.actions.length, 1, `one action: ${show(st.actions)}`);
		const a = st.actions[0];
		assert.equal(a.name, 'approve');
		assert.equal(a.surfaceId, surfaceId);
		assert.equal(a.sourceComponentId, 'approve');
		assert.deepEqual(a.context, {});
		sent = st.sent[0];
		assert.equal(sent.taskId, task.id);
		assert.equal(sent.parts.length, 1);
		assert.equal(sent.parts[0].mediaType, MT);
		assert.deepEqual(sent.parts[0].data, [{ version: 'v0.9', action: a }]);
		assert.equal(st.replies[0], `alice approved: ${QUESTION}`);
		assert.equal((await p.locator('#reply').textContent()).trim(), `alice approved: ${QUESTION}`);
	});

	await t.test('UI-3 UI-4 the history records the clicked action and "alice approved: …"; channel_messages holds the decision', async () => {
		const s = need(sent, 'the click');
		const got = await ok('GetTask', { id: task.id });
		const mine = got.history.find((m) => m.messageId === s.messageId);
		assert.ok(mine, `the action message ${s.messageId} is not in history: ${show(got.history)}`);
		assert.equal(mine.metadata?.participant_id, 'alice');
		assert.equal(mine.parts[0].data[0].action.name, 'approve');
		assert.equal(mine.parts[0].data[0].action.surfaceId, surfaceId);
		const later = got.history.slice(got.history.indexOf(mine) + 1);
		assert.ok(later.some((m) => m.role === 'ROLE_AGENT' && textOf(m) === `alice approved: ${QUESTION}`),
			`no "alice approved" after the action: ${show(later)}`);
		assert.equal(got.status.state, 'TASK_STATE_INPUT_REQUIRED', 'the task parks awaiting the next message');
		const rows = sql('SELECT sender, kind, text FROM channel_messages WHERE task_id = ? ORDER BY seq', task.id);
		assert.ok(rows.some((r) => r.kind === 'message' && r.text === `alice approved: ${QUESTION}`),
			`channel_messages: ${show(rows)}`);
	});

	await t.test('UI-1 UI-2 the decision deletes the surface: the page removes the card; a second click is -32602 "deleted surface", nothing stored', async () => {
		const p = need(page, 'the rendering');
		const s = need(sent, 'the click');
		await p.locator('a2ui-surface').waitFor({ state: 'detached' });
		assert.equal(await p.getByRole('button', { name: 'Approve' }).count(), 0, 'the Approve button is still there');
		const got = await ok('GetTask', { id: task.id });
		assert.ok((got.artifacts ?? []).some((a) => a.parts?.[0]?.data?.some?.((m) => m.deleteSurface?.surfaceId === surfaceId)),
			`no deleteSurface artifact: ${show(got.artifacts)}`);
		const before = sql('SELECT count(*) AS n FROM messages WHERE task_id = ?', task.id)[0].n;
		const again = await rpc('SendMessage', { message: { ...s, messageId: nextId() } });
		assert.equal(again.error?.code, -32602, `second click: ${show(again)}`);
		assert.match(again.error.message, /deleted surface/);
		const after = sql('SELECT count(*) AS n FROM messages WHERE task_id = ?', task.id)[0].n;
		assert.equal(after, before, 'a message was stored');
	});

	await t.test('UI-4 EXT-4 the page\'s own form: carol asks /confirm with A2UI activated, clicks Reject, sees "carol rejected: …"', async () => {
		need(browser, 'the browser start');
		const p = await openPage(browser, { participant: 'carol' });
		await p.locator('#question').fill(FORM_QUESTION);
		await p.getByRole('button', { name: 'Ask' }).click();
		await p.getByText(FORM_QUESTION, { exact: true }).waitFor({ state: 'visible' });
		await p.getByRole('button', { name: 'Reject' }).click();
		await p.waitForFunction(() => window.thUi.replies.length > 0 && window.thUi.busy === 0);
		const st = await uiState(p);
		assert.deepEqual(st.errors, [], `the page reported errors: ${show(st.errors)}`);
		assert.equal(st.actions[0]?.name, 'reject');
		assert.equal(st.replies[0], `carol rejected: ${FORM_QUESTION}`);
		await p.locator('a2ui-surface').waitFor({ state: 'detached' });
		const rows = sql('SELECT text FROM channel_messages WHERE task_id = ?', st.taskId);
		assert.ok(rows.some((r) => r.text === `carol rejected: ${FORM_QUESTION}`), `channel_messages: ${show(rows)}`);
		await p.close();
	});

	await t.test('UI-1 no script error or failed request in the page while rendering and acting', async () => {
		assert.deepEqual(pageErrors, []);
	});
} finally {
	if (browser)
		await browser.close().catch(() => {});
	stopServer();
}
t.done();
