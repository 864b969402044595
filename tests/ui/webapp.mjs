// SPDX-License-Identifier: Apache-2.0
// The web app in a real browser (WEB-1, WEB-2, WEB-3): lighttpd with 2 tiny-harness workers
// serves the committed app (web/dist, TINY_HARNESS_WEB_DIR from tests/lib/server.sh) at
// <base>ui/; headless Debian Chromium, driven by playwright-core, finds everything by role and
// accessible name only. A person opens the base URL and lands on the app, names themself,
// starts a task and sees the echo reply; a message another client sends shows up live; markup
// in a message is shown as text and runs nothing; /confirm renders an A2UI card whose Approve
// answers it; a watcher sees the server's refusal; Complete task ends the task. A help request
// addressed to the person is answered from its Answer control (a help_reply, CH-5); side
// channels are shown by name and written to (CH-1..CH-3); data parts are readable JSON and only
// http(s) URLs are links (WEB-3); with identity = remote_user (a second lighttpd, the recipe's
// Basic login) the login names the person and the Participant field is not shown (ID-1); with
// identity = bearer (a third) the app asks for an API key, keeps it in sessionStorage, sends
// it as Authorization: Bearer, and shows the sign-in again on a 401 (SEC-1). Streams end
// after stream_max_ms (4 s) and the page resumes them with Last-Event-ID: a message stored
// while one resumption is held back in the browser arrives once, and the page has taken
// every stored event once (STREAM-4, STREAM-RESUME-2, decision-072). A push config whose
// webhook is a closed loopback port gives up at once (push_max_attempts = 1): its owner sees
// it under the task list (Push notifications not delivered: the task as a link, the webhook
// with its query value hidden, the event, the attempts, the error), another participant
// does not (RET-4, decision-076).
//
// Screenshots of the task list and of a task at phone (390 px) and desktop (1280 px) widths go
// to $TH_BUILDDIR/tests/artifacts/web/, with web-app-1280.png, the page as docs/web-app.png
// shows it, and dead-letters-1280.png. Exit 77 when chromium, lighttpd or node_modules is
// missing. TH_CHROMIUM overrides /usr/bin/chromium.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { SRCDIR, TH_BIN, Tap, importDep, makeTmp, show } from '../contract/lib.mjs';
import { dbEvents } from '../lib/db.mjs';
import { CHROMIUM, CHROMIUM_ARGS, findLighttpd, needChromium, startLighttpd, startLighttpdOrExit } from '../lib/interop.mjs';
import { missingModules } from '../interop/deps.mjs';

const MT_EVENT = 'application/vnd.tiny-harness.event+json';
const MT_CHANNEL = 'application/vnd.tiny-harness.channel+json';
const META_STATUS = 'io.github.madarauchiha-314.tiny-harness/status';
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

const t = new Tap();
if (!TH_BIN)
	t.skipAll('TH_BIN is not set (run through make check)');
const LIGHTTPD = findLighttpd();
if (LIGHTTPD == null)
	t.skipAll('lighttpd is not installed');
needChromium(t);
if (!existsSync(join(SRCDIR, 'web', 'dist', 'app.js')))
	t.skipAll('no web/dist/app.js in the source tree');
const pw = await importDep('playwright-core');
if (pw == null)
	missingModules(t, 'playwright-core is not installed: run `npm ci` in the source tree');
const chromium = pw.chromium ?? pw.default?.chromium;

// ------------------------------------------------------------------ server
const dir = makeTmp('th-web-app-');
let browser = null;
let stopAuthServer = null;
let stopBearerServer = null;
// Streams end after 4 s (stream_max_ms), so the page resumes them with Last-Event-ID again
// and again while the tests run (STREAM-4, WEB-2).
const STREAM_MAX_MS = 4000;
// A push to a loopback port nothing listens on gives up at its first refusal (RET-4): the
// page's list of push notifications not delivered.
const { base, db, stop: stopServer } = startLighttpdOrExit(dir, { lighttpd: LIGHTTPD, env: {
	TINY_HARNESS_STREAM_MAX_MS: String(STREAM_MAX_MS),
	TINY_HARNESS_PUSH_ALLOW_PRIVATE: '1',
	TINY_HARNESS_PUSH_MAX_ATTEMPTS: '1',
} });
console.log(`# server ${base} (state in ${dir})`);

let seq = 0;
const nextId = () => `web-app-${process.pid}-${++seq}`;
async function rpc(method, params, participant = 'alice') {
	const res = await fetch(base, {
		method: 'POST',
		headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', 'X-Participant-Id': participant },
		body: JSON.stringify({ jsonrpc: '2.0', id: ++seq, method, params }),
	});
	return res.json();
}
async function ok(method, params, participant) {
	const body = await rpc(method, params, participant);
	assert.ok(body.result, `${method} failed: ${show(body)}`);
	return body.result;
}
const need = (v, what) => {
	assert.ok(v, `not run: ${what} failed earlier`);
	return v;
};

const shotDir = join(process.env.TH_BUILDDIR || SRCDIR, 'tests', 'artifacts', 'web');
const pageErrors = [];
async function newPage(width, options = {}) {
	const context = await browser.newContext({ viewport: { width, height: width < 600 ? 844 : 800 }, ...options });
	const page = await context.newPage();
	page.setDefaultTimeout(15000);
	page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
	page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`); });
	return page;
}
const conversation = (page) => page.getByRole('list', { name: 'Conversation' });
// Names myself in the Participant field (the change is taken on Enter).
async function nameMyself(page, who) {
	await page.waitForFunction(() => window.thWeb?.ready === true);
	const field = page.getByLabel('Participant', { exact: true });
	await field.fill(who);
	await field.press('Enter');
}

// Sends one message from the page (Message, Send).
async function say(p, text) {
	await p.getByRole('textbox', { name: 'Message' }).fill(text);
	await p.getByRole('button', { name: 'Send', exact: true }).click();
}
const side = (p) => p.getByRole('complementary', { name: 'Task details' });
// The lines of the page's ARIA snapshot that are controls without an accessible name.
async function unnamedControls(p) {
	const snap = await p.locator('body').ariaSnapshot();
	return { snap, unnamed: snap.split('\n').filter((l) => /- (button|textbox|combobox|checkbox|link)\s*(:|$)/.test(l.trim())
		|| /- (button|textbox|combobox|checkbox|link) \[/.test(l.trim())) };
}

// ------------------------------------------------------------------ tests
try {
	await t.test('WEB-1 a browser\'s GET of the base URL is redirected (303) to <base>ui/; JSON clients still get JSON-RPC', async () => {
		const r = await fetch(base, { headers: { Accept: BROWSER_ACCEPT }, redirect: 'manual' });
		assert.equal(r.status, 303);
		assert.equal(new URL(r.headers.get('Location'), base).href, `${base}ui/`);
		const plain = await fetch(base, { redirect: 'manual' });
		assert.equal(plain.status, 405, 'GET without Accept stays the JSON-RPC endpoint\'s 405');
		assert.match(plain.headers.get('Content-Type'), /json/);
		const any = await fetch(base, { headers: { Accept: '*/*' }, redirect: 'manual' });
		assert.equal(any.status, 405, 'Accept: */* is not a browser asking for a page');
		const card = await fetch(`${base}.well-known/agent-card.json`, { headers: { Accept: BROWSER_ACCEPT } });
		assert.equal(card.status, 200, 'the card is unchanged');
		const list = await ok('ListTasks', {});
		assert.ok(Array.isArray(list.tasks), 'JSON-RPC POST to the base URL is unchanged');
	});

	await t.test('WEB-1 WEB-3 <base>ui/ serves the app with its types, ETag, Last-Modified and a CSP without inline script; bad names are 404', async () => {
		const page = await fetch(`${base}ui/`);
		assert.equal(page.status, 200);
		assert.match(page.headers.get('Content-Type'), /^text\/html/);
		const csp = page.headers.get('Content-Security-Policy') ?? '';
		assert.match(csp, /script-src 'self'(;|$)/, `CSP: ${csp}`);
		assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, `CSP: ${csp}`);
		assert.ok(page.headers.get('ETag'), 'ETag');
		assert.ok(page.headers.get('Last-Modified'), 'Last-Modified');
		const again = await fetch(`${base}ui/`, { headers: { 'If-None-Match': page.headers.get('ETag') } });
		assert.equal(again.status, 304);
		const js = await fetch(`${base}ui/app.js`);
		assert.equal(js.status, 200);
		assert.match(js.headers.get('Content-Type'), /^text\/javascript/);
		const css = await fetch(`${base}ui/style.css`);
		assert.match(css.headers.get('Content-Type'), /^text\/css/);
		for (const bad of ['ui/nope.js', 'ui/%2e%2e/conf/tiny-harness.conf', 'ui/.hidden', 'ui/..%2fx', 'ui//etc/passwd'])
			assert.equal((await fetch(`${base}${bad}`)).status, 404, bad);
	});

	await t.test(`WEB-1 headless Chromium (${CHROMIUM}) starts under playwright-core`, async () => {
		browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
		console.log(`# chromium ${browser.version()}`);
	});

	let alice, taskId;
	await t.test('WEB-1 opening the base URL lands on the app; alice names herself (Participant), starts a task and sees the echo reply', async () => {
		need(browser, 'the browser start');
		alice = await newPage(1280);
		await alice.goto(base);
		assert.equal(alice.url(), `${base}ui/`, 'the redirect to <base>ui/');
		await nameMyself(alice, 'alice');
		await alice.getByLabel('New task: first message').fill('Plan the release party');
		await alice.getByRole('button', { name: 'Start task' }).click();
		await conversation(alice).getByText('echo: Plan the release party', { exact: true }).waitFor();
		await conversation(alice).getByText('Plan the release party', { exact: true }).waitFor();
		await alice.getByRole('heading', { name: 'Plan the release party' }).waitFor();
		await alice.getByRole('status').filter({ hasText: 'waiting for the next message' }).waitFor();
		await alice.getByRole('list', { name: 'Conversation' }).waitFor();
		taskId = decodeURIComponent(new URL(alice.url()).hash.replace(/^#task=/, ''));
		assert.match(taskId, /^[0-9a-f-]{36}$/, `task id from the URL: ${alice.url()}`);
		const got = await ok('GetTask', { id: taskId });
		assert.equal(got.status.state, 'TASK_STATE_INPUT_REQUIRED');
		// Participants with roles, from the task.
		await side(alice).getByText('· reporter · you').waitFor();
		await side(alice).getByText('· assignee · agent').waitFor();
	});

	await t.test('WEB-1 WEB-2 a message another client sends (plain JSON-RPC) appears live, with its reply, without a reload', async () => {
		const p = need(alice, 'the first task');
		const before = await p.evaluate(() => window.thWeb.events);
		await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId, parts: [{ text: 'from another client' }] } });
		await conversation(p).getByText('echo: from another client', { exact: true }).waitFor();
		await conversation(p).getByText('from another client', { exact: true }).waitFor({ timeout: 5000 }).catch(async (err) => {
			const texts = await conversation(p).locator('.part-text').allTextContents();
			throw new Error(`${err.message}\nconversation: ${show(texts)}\nstate: ${show(await p.evaluate(() => ({ ...window.thWeb, seen: [...window.thWeb.seen] })))}`);
		});
		const after = await p.evaluate(() => window.thWeb.events);
		assert.ok(after > before, 'the update came through the stream');
		const texts = await conversation(p).locator('.part-text').allTextContents();
		const i = texts.indexOf('from another client');
		assert.ok(i >= 0 && texts[i + 1] === 'echo: from another client', `order: ${show(texts)}`);
		assert.equal(texts.filter((x) => x === 'from another client').length, 1, 'shown once');
	});

	await t.test('WEB-2 STREAM-4 a stream that ends is resumed with Last-Event-ID: later messages arrive once, no event twice', async () => {
		const p = need(alice, 'the first task');
		// Wait for at least one resumption (the server ends each stream after STREAM_MAX_MS).
		await p.waitForFunction(() => window.thWeb.streams.length >= 2, null, { timeout: STREAM_MAX_MS * 3 });
		await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId, parts: [{ text: 'after the drop' }] } });
		await conversation(p).getByText('echo: after the drop', { exact: true }).waitFor();
		await conversation(p).getByText('after the drop', { exact: true }).waitFor();
		const st = await p.evaluate(() => ({ streams: window.thWeb.streams, ids: window.thWeb.eventIds }));
		assert.equal(st.streams[0], null, 'the first stream starts with the task');
		assert.ok(st.streams.slice(1).every((x) => Number.isInteger(x)), `resumed with Last-Event-ID: ${show(st.streams)}`);
		for (let i = 1; i < st.ids.length; i++)
			assert.ok(st.ids[i] > st.ids[i - 1], `event ids not strictly increasing (a doubled event): ${show(st.ids)}`);
		const ids = await conversation(p).locator('li').evaluateAll((lis) => lis.map((li) => li.dataset.messageId));
		assert.equal(new Set(ids).size, ids.length, `a message shown twice: ${show(ids)}`);
		const texts = await conversation(p).locator('.part-text').allTextContents();
		assert.equal(texts.filter((x) => x === 'echo: after the drop').length, 1);
	});

	await t.test('STREAM-RESUME-2 WEB-2 STREAM-4 a message sent while the page\'s stream is down (its resumption held back) arrives by the Last-Event-ID replay, once; the page took every stored event once', async () => {
		const p = need(alice, 'the first task');
		const id = need(taskId, 'the first task');
		// The next resumption (the server ends each stream after STREAM_MAX_MS) is held in
		// the browser until a message has been stored: the page is away while it happens.
		let release;
		const held = new Promise((r) => { release = r; });
		let heldFrom = null;
		let lastBefore = null;
		const every = () => true;
		const handler = async (route) => {
			const r = route.request();
			const from = r.headers()['last-event-id'];
			if (heldFrom == null && r.method() === 'POST' && from != null && (r.postData() ?? '').includes('"SubscribeToTask"')) {
				heldFrom = Number(from);
				lastBefore = await p.evaluate(() => window.thWeb.lastEventId).catch(() => null);
				await held;
			}
			await route.fallback();
		};
		await p.route(every, handler);
		try {
			for (let i = 0; i < (STREAM_MAX_MS * 2) / 50 && heldFrom == null; i++)
				await p.waitForTimeout(50);
			assert.ok(heldFrom != null, `no resumption within ${STREAM_MAX_MS * 2} ms`);
			await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId: id, parts: [{ text: 'sent while the page was away' }] } });
			release();
			await conversation(p).getByText('echo: sent while the page was away', { exact: true }).waitFor();
			// The message itself is no event: the page reads it with the task (GetTask)
			// after the status update that carries the reply.
			await conversation(p).getByText('sent while the page was away', { exact: true }).waitFor();
		} finally {
			release();
			await p.unroute(every, handler);
		}
		assert.equal(heldFrom, lastBefore, 'the resumption names the last event the page took');
		const texts = await conversation(p).locator('.part-text').allTextContents();
		assert.equal(texts.filter((x) => x === 'sent while the page was away').length, 1, `shown once: ${show(texts)}`);
		assert.equal(texts.filter((x) => x === 'echo: sent while the page was away').length, 1, `echo shown once: ${show(texts)}`);
		// Every event stored after the page's first snapshot, once and in order.
		let ids = [];
		let stored = [];
		for (let i = 0; i < 50; i++) {
			ids = await p.evaluate(() => window.thWeb.eventIds);
			stored = dbEvents(db, id, ids[0]).map((e) => e.seq);
			if (stored.length > 0 && ids.at(-1) === stored.at(-1))
				break;
			await p.waitForTimeout(100);
		}
		assert.deepEqual(ids.slice(1), stored, `the page's event ids ${show(ids)} against the events table after ${ids[0]}`);
	});

	const MARKUP = '<img src=x onerror=window.__pwned=1>';
	await t.test('WEB-3 a message with markup is shown literally (Message, Send) and runs nothing', async () => {
		const p = need(alice, 'the first task');
		await p.getByRole('textbox', { name: 'Message' }).fill(MARKUP);
		await p.getByRole('button', { name: 'Send', exact: true }).click();
		await conversation(p).getByText(MARKUP, { exact: true }).first().waitFor();
		await conversation(p).getByText(`echo: ${MARKUP}`, { exact: true }).waitFor();
		assert.equal(await conversation(p).locator('img').count(), 0, 'an <img> element was created');
		await p.waitForTimeout(300);
		assert.equal(await p.evaluate(() => window.__pwned), undefined, 'the onerror handler ran');
	});

	await t.test('WEB-1 the list shows the task with its state and sub-state; filtering by state; screenshots at 390 and 1280 px', async () => {
		need(taskId, 'the first task');
		mkdirSync(shotDir, { recursive: true });
		for (const width of [1280, 390]) {
			const p = await newPage(width);
			await p.goto(`${base}ui/`);
			await nameMyself(p, 'alice');
			const row = p.getByRole('list', { name: 'Your tasks' }).getByRole('listitem').filter({ hasText: 'Plan the release party' });
			await row.getByText('waiting for the next message').waitFor();
			await row.getByText('Waiting for input').waitFor();
			await p.screenshot({ path: join(shotDir, `task-list-${width}.png`), fullPage: true });
			if (width === 1280) {
				await p.getByLabel('Filter by state').selectOption({ label: 'Completed' });
				await p.getByText('No tasks yet.').waitFor();
				assert.equal(await p.getByRole('link', { name: 'Plan the release party' }).count(), 0);
				await p.getByLabel('Filter by state').selectOption({ label: 'All states' });
				await p.getByRole('link', { name: 'Plan the release party' }).waitFor();
			}
			await p.getByRole('link', { name: 'Plan the release party' }).click();
			await conversation(p).getByText('echo: from another client', { exact: true }).waitFor();
			await p.screenshot({ path: join(shotDir, `task-${width}.png`), fullPage: true });
			await p.context().close();
		}
		console.log(`# screenshots in ${shotDir}`);
	});

	await t.test('WEB-3 every control has an accessible name (the page\'s ARIA snapshot)', async () => {
		const p = need(alice, 'the first task');
		const { snap, unnamed } = await unnamedControls(p);
		assert.deepEqual(unnamed, [], `controls without a name:\n${snap}`);
		// Keyboard: Tab from the Participant field reaches the other controls.
		await p.getByLabel('Participant', { exact: true }).focus();
		await p.keyboard.press('Tab');
		const focused = await p.evaluate(() => document.activeElement?.tagName);
		assert.notEqual(focused, 'BODY', 'Tab moves focus to the next control');
	});

	await t.test('WEB-1 CMD-1 slash-command completion from the card: typing /con offers /confirm with its hint; choosing it fills Message', async () => {
		const p = need(alice, 'the first task');
		const box = p.getByRole('textbox', { name: 'Message' });
		await box.fill('/con');
		const commands = p.getByRole('list', { name: 'Matching commands' });
		const pick = commands.getByRole('button', { name: /^\/confirm/ });
		await pick.waitFor();
		assert.equal(await commands.getByRole('button', { name: /^\/help/ }).count(), 0, '/help does not match /con');
		await pick.click();
		assert.equal(await box.inputValue(), '/confirm ');
		await p.getByText(/^\/confirm .+ — /).waitFor(); // the argument hint and description
		await box.fill('');
	});

	await t.test('WEB-1 TASK-8 plan steps with their states and sub-tasks as links follow /plan, /step and /subtask live', async () => {
		const p = need(alice, 'the first task');
		await say(p, '/plan Book a venue; Order the cake; Send invitations');
		const plan = side(p).getByRole('list', { name: 'Plan' });
		await plan.getByRole('listitem').filter({ hasText: 'Send invitations' }).waitFor();
		assert.equal(await plan.getByRole('listitem').count(), 3);
		await say(p, '/step Book a venue done');
		await plan.getByRole('listitem').filter({ hasText: 'Book a venue' }).filter({ hasText: 'done' }).waitFor();
		await plan.getByRole('listitem').filter({ hasText: 'Order the cake' }).filter({ hasText: 'pending' }).waitFor();
		await say(p, '/subtask Invitations: send the invitations');
		await side(p).getByRole('list', { name: 'Sub-tasks' }).getByRole('link').first().waitFor();
	});

	await t.test('WEB-2 UI-4 /confirm renders an A2UI card with the Lit renderer; Approve answers it and the card goes away', async () => {
		const p = need(alice, 'the first task');
		await p.getByRole('textbox', { name: 'Message' }).fill('/confirm Order the cake?');
		await p.getByRole('button', { name: 'Send', exact: true }).click();
		const approve = p.getByRole('button', { name: 'Approve' });
		await approve.waitFor({ state: 'visible' });
		await p.getByRole('button', { name: 'Reject' }).waitFor({ state: 'visible' });
		await p.getByText('Order the cake?', { exact: true }).first().waitFor();
		await p.getByRole('textbox', { name: 'Message' }).scrollIntoViewIfNeeded();
		await p.screenshot({ path: join(shotDir, 'task-card-1280.png') });
		await approve.click();
		await conversation(p).getByText('alice approved: Order the cake?', { exact: true }).waitFor();
		await p.locator('a2ui-surface').waitFor({ state: 'detached' });
		assert.equal(await p.getByRole('button', { name: 'Approve' }).count(), 0);
	});

	await t.test('WEB-3 UI-4 markup in a card\'s question is shown as text by the renderer and runs nothing; Reject answers it', async () => {
		const p = need(alice, 'the first task');
		const q = '<img src=x onerror=window.__pwned=2>';
		await say(p, `/confirm ${q}`);
		const reject = p.getByRole('button', { name: 'Reject' });
		await reject.waitFor({ state: 'visible' });
		await p.locator('a2ui-surface').getByText(q, { exact: true }).waitFor();
		assert.equal(await p.locator('a2ui-surface img').count(), 0, 'an <img> inside the card');
		await reject.click();
		await conversation(p).getByText(`alice rejected: ${q}`, { exact: true }).waitFor();
		await p.locator('a2ui-surface').waitFor({ state: 'detached' });
		assert.equal(await p.evaluate(() => window.__pwned), undefined, 'the onerror handler ran');
	});

	await t.test('WEB-1 ID-4 a watcher (/invite bob watcher) who presses Complete task sees the server\'s refusal (role alert)', async () => {
		const p = need(alice, 'the first task');
		await p.getByRole('textbox', { name: 'Message' }).fill('/invite bob watcher');
		await p.getByRole('button', { name: 'Send', exact: true }).click();
		await side(p).getByText('· watcher').waitFor();
		const bob = await newPage(390);
		await bob.goto(base);
		await nameMyself(bob, 'bob');
		await bob.getByRole('link', { name: 'Plan the release party' }).click();
		await conversation(bob).getByText('echo: from another client', { exact: true }).waitFor();
		await bob.getByRole('button', { name: 'Complete task' }).click();
		const alert = bob.getByRole('alert').filter({ hasText: 'watcher' });
		await alert.waitFor();
		const shown = (await alert.textContent()).trim();
		// The server's own words: the same refusal over plain JSON-RPC.
		const again = await rpc('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId,
			parts: [{ data: { kind: 'control', action: 'complete' }, mediaType: MT_EVENT }] } }, 'bob');
		assert.equal(again.error?.code, -32004, show(again));
		assert.equal(shown, again.error.message);
		const got = await ok('GetTask', { id: taskId });
		assert.equal(got.status.state, 'TASK_STATE_INPUT_REQUIRED', 'the watcher changed nothing');
		await bob.context().close();
	});

	await t.test('WEB-1 CTL-4 Complete task with an open sub-task is refused in the conversation; the sub-task link opens it and it completes', async () => {
		const p = need(alice, 'the first task');
		await p.getByRole('button', { name: 'Complete task' }).click();
		await conversation(p).getByText(/Invitations/).last().waitFor();
		const got = await ok('GetTask', { id: taskId });
		assert.equal(got.status.state, 'TASK_STATE_INPUT_REQUIRED', 'the parent stays open');
		await side(p).getByRole('list', { name: 'Sub-tasks' }).getByRole('link').first().click();
		await p.getByRole('heading', { name: 'Invitations' }).waitFor();
		await side(p).getByRole('list', { name: 'Parent tasks' }).getByRole('link', { name: 'Plan the release party' }).waitFor();
		await p.getByRole('button', { name: 'Complete task' }).click();
		await p.getByRole('status').filter({ hasText: 'Completed' }).waitFor();
		await side(p).getByRole('list', { name: 'Parent tasks' }).getByRole('link').click();
		await p.getByRole('heading', { name: 'Plan the release party' }).waitFor();
		await conversation(p).getByText('echo: from another client', { exact: true }).waitFor();
	});

	await t.test('WEB-1 WEB-4 CTL-5 Complete task ends the task: the page says it was completed and offers no Message, Send, Complete task or Cancel', async () => {
		const p = need(alice, 'the first task');
		await p.getByRole('button', { name: 'Complete task' }).click();
		await p.getByRole('status').filter({ hasText: 'Completed' }).waitFor();
		await conversation(p).getByText('completed by alice', { exact: true }).waitFor();
		await p.getByText('This task was completed. It takes no more messages.', { exact: true }).waitFor();
		for (const [role, name] of [['textbox', 'Message'], ['button', 'Send'], ['button', 'Complete task'], ['button', 'Cancel']])
			assert.equal(await p.getByRole(role, { name, exact: true }).count(), 0, `${name} is still offered`);
		const got = await ok('GetTask', { id: taskId });
		assert.equal(got.status.state, 'TASK_STATE_COMPLETED');
		// A second Complete (from another client: the page offers none) is refused (CTL-6).
		const again = await rpc('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId,
			parts: [{ data: { kind: 'control', action: 'complete' }, mediaType: MT_EVENT }] } });
		assert.match(again.error?.message ?? '', /TASK_STATE_COMPLETED/, show(again));
	});

	// ---------------------------------------------------------- help requests and channels
	// bob's task with alice and carol (assignees): bob has the harness ask alice (/ask).
	let launch, requestId, carolPage, ally; // ally: alice's page on bob's task
	const QUESTION = 'Which launch date works for you?';
	await t.test('WEB-1 CH-4 STATUS-1 a help request addressed to me (bob\'s /ask alice) shows an Answer control; the list says it waits for me', async () => {
		need(browser, 'the browser start');
		const created = await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', parts: [
			{ data: { kind: 'task', payload: { name: 'Launch day', goal: 'Plan the launch of version 1.0',
				participants: [{ id: 'alice', role: 'assignee' }, { id: 'carol', role: 'assignee' }] } }, mediaType: MT_EVENT },
			{ text: 'Let us plan the launch.' }] } }, 'bob');
		launch = created.task.id;
		await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId: launch,
			parts: [{ text: '/plan Pick a date; Book the venue; Send the invitations' }] } }, 'bob');
		const asked = await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId: launch,
			parts: [{ text: `/ask alice ${QUESTION}` }] } }, 'bob');
		const st = asked.task.metadata?.[META_STATUS];
		assert.equal(st?.sub_state, 'awaiting-answer', show(asked.task.metadata));
		requestId = st.request_id;
		assert.ok(requestId, 'the status names the request');

		const p = await newPage(1280);
		ally = p;
		await p.goto(`${base}ui/`);
		await nameMyself(p, 'alice');
		const row = p.getByRole('list', { name: 'Your tasks' }).getByRole('listitem').filter({ hasText: 'Launch day' });
		await row.getByText('waiting for an answer from you').waitFor();
		await row.getByRole('link', { name: 'Launch day' }).click();
		await p.getByRole('heading', { name: 'Launch day' }).waitFor();
		await p.getByRole('status').filter({ hasText: 'waiting for an answer from you' }).waitFor();
		const request = conversation(p).getByRole('listitem').filter({ hasText: 'Help request to alice' });
		await request.getByText(QUESTION, { exact: true }).waitFor();
		await request.getByText('Waiting for an answer from you').waitFor();
		const box = request.getByRole('textbox', { name: 'Answer to tiny-harness' });
		await box.waitFor();
		await request.getByRole('button', { name: 'Send answer' }).waitFor();
		assert.equal(await conversation(p).getByRole('textbox').count(), 1, 'one Answer box');
		await side(p).getByRole('list', { name: 'Plan' }).getByRole('listitem').filter({ hasText: 'Book the venue' }).waitFor();
		// The page as the README shows it (docs/web-app.png): the header, a task waiting for my
		// answer with its Answer control, participants and plan.
		await p.setViewportSize({ width: 1280, height: 1210 });
		await p.evaluate(() => window.scrollTo(0, 0));
		await box.scrollIntoViewIfNeeded();
		await p.evaluate(() => window.scrollTo(0, 0));
		mkdirSync(shotDir, { recursive: true });
		await p.screenshot({ path: join(shotDir, 'web-app-1280.png') });
		await p.setViewportSize({ width: 1280, height: 800 });

		// carol, also on the task, sees the request waiting for alice and no Answer control.
		carolPage = await newPage(390);
		await carolPage.goto(`${base}ui/#task=${encodeURIComponent(launch)}`);
		await nameMyself(carolPage, 'carol');
		const hers = conversation(carolPage).getByRole('listitem').filter({ hasText: 'Help request to alice' });
		await hers.getByText('Waiting for an answer from alice').waitFor();
		assert.equal(await conversation(carolPage).getByRole('textbox').count(), 0, 'an Answer box for carol');
		await carolPage.getByRole('status').filter({ hasText: 'waiting for an answer from alice' }).waitFor();
	});

	await t.test('WEB-1 CH-5 STATUS-1 answering sends a help_reply with in_reply_to the request; the request shows answered and the task leaves awaiting-answer', async () => {
		const p = need(launch && ally, 'the help request');
		const request = conversation(p).getByRole('listitem').filter({ hasText: 'Help request to alice' });
		await request.getByRole('textbox', { name: 'Answer to tiny-harness' }).fill('June 1, after lunch');
		await request.getByRole('button', { name: 'Send answer' }).click();
		await conversation(p).getByText('echo: June 1, after lunch', { exact: true }).waitFor();
		await request.getByText('Answered by you').waitFor();
		await p.getByRole('status').filter({ hasText: 'waiting for the next message' }).waitFor();
		assert.equal(await request.getByRole('textbox').count(), 0, 'the Answer box stays after the answer');
		const reply = conversation(p).getByRole('listitem').filter({ hasText: `Answer to “${QUESTION}”` });
		await reply.getByText('June 1, after lunch', { exact: true }).waitFor();
		const got = await ok('GetTask', { id: launch }, 'bob');
		assert.deepEqual(got.metadata?.[META_STATUS], { sub_state: 'awaiting-next-message' });
		const sent = got.history.find((m) => m.metadata?.participant_id === 'alice');
		assert.ok(sent, `alice's answer is not in the history: ${show(got.history)}`);
		assert.deepEqual(sent.parts, [{ data: { channel_id: launch, sender: 'alice', kind: 'help_reply',
			text: 'June 1, after lunch', in_reply_to: requestId }, mediaType: MT_CHANNEL }]);
		// carol's page follows: the request is answered there too.
		const hers = conversation(need(carolPage, 'carol\'s page')).getByRole('listitem').filter({ hasText: 'Help request to alice' });
		await hers.getByText('Answered by alice').waitFor();
		await carolPage.getByRole('status').filter({ hasText: 'waiting for the next message' }).waitFor();
	});

	await t.test('WEB-1 CH-1 CH-3 alice opens a side channel with bob from the page (Send to, Channel name, Members); it is named on each message and starts no turn', async () => {
		const p = need(launch && ally, 'the help request');
		await p.getByLabel('Send to').selectOption({ label: 'New side channel…' });
		const fields = p.getByRole('group', { name: 'New side channel' });
		await fields.getByRole('textbox', { name: 'Channel name' }).fill('venue');
		await fields.getByRole('group', { name: 'Members' }).getByRole('checkbox', { name: 'bob' }).check();
		assert.equal(await fields.getByRole('checkbox', { name: 'alice' }).count(), 0, 'I am not offered as a member');
		const { snap, unnamed } = await unnamedControls(p);
		assert.deepEqual(unnamed, [], `controls without a name:\n${snap}`);
		await say(p, 'Shall we book the boathouse?');
		const opened = conversation(p).getByRole('listitem').filter({ hasText: 'Shall we book the boathouse?' });
		await opened.getByText('Side channel alice/venue').waitFor();
		await opened.getByText('Opened the side channel with bob').waitFor();
		// The new channel is now where Message goes, once the server took the message (the
		// page shows it while it is being sent, WEB-5).
		let to = await p.getByLabel('Send to').inputValue();
		for (let i = 0; i < 50 && to !== 'side:alice/venue'; i++) {
			await p.waitForTimeout(100);
			to = await p.getByLabel('Send to').inputValue();
		}
		assert.equal(to, 'side:alice/venue');
		assert.ok(await fields.isHidden(), 'the New side channel fields stay open');
		const got = await ok('GetTask', { id: launch }, 'bob');
		const m = got.history.find((x) => x.parts?.[0]?.data?.text === 'Shall we book the boathouse?');
		assert.deepEqual(m?.parts, [{ data: { channel_id: 'alice/venue', sender: 'alice', kind: 'message',
			text: 'Shall we book the boathouse?', to: ['bob'] }, mediaType: MT_CHANNEL }], show(got.history));
		assert.ok(!got.history.some((x) => JSON.stringify(x).includes('echo: Shall we book')), 'a side-channel message started a turn');
	});

	await t.test('WEB-1 CH-2 CH-3 side-channel messages reach members live with the channel\'s name; carol, not a member, sees none of them', async () => {
		const p = need(launch && ally, 'the side channel');
		await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId: launch, parts: [
			{ data: { channel_id: 'alice/venue', sender: 'bob', kind: 'message', text: 'Yes, book it for 40 people.' }, mediaType: MT_CHANNEL }] } }, 'bob');
		const bobs = conversation(p).getByRole('listitem').filter({ hasText: 'Yes, book it for 40 people.' });
		await bobs.getByText('Side channel alice/venue').waitFor();
		await bobs.getByText('bob', { exact: true }).waitFor();
		// alice writes to the channel again (Send to: Side channel alice/venue), then to everyone.
		await say(p, 'Booked.');
		await conversation(p).getByRole('listitem').filter({ hasText: 'Booked.' }).getByText('Side channel alice/venue').waitFor();
		await p.getByLabel('Send to').selectOption({ label: 'Everyone on the task' });
		await say(p, 'The venue is booked.');
		await conversation(p).getByText('echo: The venue is booked.', { exact: true }).waitFor();
		const everyone = conversation(p).getByRole('listitem').filter({ hasText: /^alice\s*The venue is booked\.$/ });
		assert.equal(await everyone.getByText('Side channel alice/venue').count(), 0, 'a task message named as a side channel');
		const bobGot = await ok('GetTask', { id: launch }, 'bob');
		assert.ok(bobGot.history.some((x) => x.parts?.[0]?.data?.channel_id === 'alice/venue' && x.parts[0].data.text === 'Booked.'), show(bobGot.history));
		// Membership is the boundary (CH-2): carol's history and page have none of it.
		const carolGot = await ok('GetTask', { id: launch }, 'carol');
		const onVenue = carolGot.history.filter((x) => x.parts?.some((q) => q.data?.channel_id === 'alice/venue'));
		assert.deepEqual(onVenue, [], 'carol sees the side channel');
		assert.ok(!/boathouse|Booked\./.test(JSON.stringify(carolGot.history)), `carol sees the side channel: ${show(carolGot.history)}`);
		const cp = need(carolPage, 'carol\'s page');
		await conversation(cp).getByText('echo: The venue is booked.', { exact: true }).waitFor();
		assert.equal(await conversation(cp).getByText('Side channel alice/venue').count(), 0);
		assert.equal(await conversation(cp).getByText('Booked.', { exact: true }).count(), 0);
		// carol has no side channel to pick, only a new one.
		const options = await cp.getByLabel('Send to').locator('option').allTextContents();
		assert.deepEqual(options, ['Everyone on the task', 'New side channel…']);
		await cp.context().close();
	});

	await t.test('WEB-3 a data part is shown as indented JSON; a javascript: URL (file or text) is text, not a link; https URLs are links with rel noopener', async () => {
		const p = need(launch && ally, 'the help request');
		const data = { venue: 'boathouse', guests: 40, menu: ['cake', '<b>tea</b>'] };
		await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId: launch, parts: [
			{ data, mediaType: 'application/json' },
			{ url: 'javascript:window.__pwned=3', filename: 'evil.txt', mediaType: 'text/plain' },
			{ url: 'https://example.org/floor-plan.pdf', filename: 'floor-plan.pdf', mediaType: 'application/pdf' },
			{ text: 'Details: javascript:window.__pwned=4 and https://example.org/menu?day=1.' }] } }, 'bob');
		const msg = conversation(p).getByRole('listitem').filter({ hasText: 'floor-plan.pdf' }).first();
		await msg.waitFor();
		const json = msg.getByRole('group', { name: 'Data (application/json)' });
		await json.waitFor();
		assert.equal((await json.locator('pre').textContent()), JSON.stringify(data, null, 2));
		assert.ok(await json.locator('pre').isVisible(), 'the JSON is folded away');
		const pdf = msg.getByRole('link', { name: 'floor-plan.pdf' });
		assert.equal(await pdf.getAttribute('href'), 'https://example.org/floor-plan.pdf');
		assert.match(await pdf.getAttribute('rel'), /\bnoopener\b/);
		const menu = msg.getByRole('link', { name: 'https://example.org/menu?day=1' });
		assert.equal(await menu.getAttribute('href'), 'https://example.org/menu?day=1');
		assert.match(await menu.getAttribute('rel'), /\bnoopener\b/);
		await msg.getByText('evil.txt (javascript:window.__pwned=3, not a web link)').waitFor();
		await msg.getByText(/^Details: javascript:window\.__pwned=4 and/).waitFor();
		assert.equal(await msg.getByRole('link', { name: /evil|javascript/ }).count(), 0, 'a javascript: URL became a link');
		assert.deepEqual(await msg.getByRole('link').evaluateAll((as) => as.map((a) => new URL(a.href).protocol)), ['https:', 'https:']);
		assert.equal(await p.locator('a[href^="javascript:" i]').count(), 0);
		assert.equal(await msg.locator('b').count(), 0, 'markup inside the JSON became an element');
		// The harness's echo names the parts it got, in text.
		await conversation(p).getByText(/^echo: \[application\/json part\]/).waitFor();
		assert.equal(await p.evaluate(() => window.__pwned), undefined);
		await p.screenshot({ path: join(shotDir, 'task-channels-1280.png'), fullPage: true });
	});

	await t.test('WEB-1 WEB-6 ID-1 identity = remote_user behind lighttpd Basic auth: "Signed in as carol" by the login, no Participant field, and the login is the sender', async () => {
		need(browser, 'the browser start');
		const adir = makeTmp('th-web-auth-');
		// conf/lighttpd.conf as shipped for remote_user (decision-040): lighttpd's Basic login
		// against an htpasswd file on everything but the agent card.
		const hash = spawnSync('openssl', ['passwd', '-apr1', 'launch-day-secret'], { encoding: 'utf8' }).stdout.trim();
		assert.match(hash, /^\$apr1\$/, 'openssl passwd -apr1');
		writeFileSync(join(adir, 'htpasswd'), `carol:${hash}\n`);
		const auth = startLighttpd(adir, { lighttpd: LIGHTTPD, procs: 1, signals: false,
			env: { TH_HTPASSWD: join(adir, 'htpasswd'), TINY_HARNESS_IDENTITY: 'remote_user' } });
		stopAuthServer = auth.stop;
		assert.ok(auth.ok, `lighttpd with Basic auth did not start: ${auth.stderr}`);
		const abase = auth.base;
		assert.equal((await fetch(`${abase}ui/`)).status, 401, 'the app without a login');
		const basic = `Basic ${Buffer.from('carol:launch-day-secret').toString('base64')}`;
		const session = await (await fetch(`${abase}ui/session.json`, { headers: { Authorization: basic } })).json();
		assert.deepEqual(session, { identity: 'remote_user', participant: 'carol' });

		const p = await newPage(1280, { httpCredentials: { username: 'carol', password: 'launch-day-secret' } });
		await p.goto(`${abase}ui/`);
		await p.waitForFunction(() => window.thWeb?.ready === true);
		await p.getByRole('banner').getByText('Signed in as carol', { exact: true }).waitFor();
		await p.getByRole('banner').getByText('by the web server\'s login', { exact: true }).waitFor(); // WEB-6
		assert.equal(await p.getByLabel('Participant', { exact: true }).count(), 0, 'the Participant field is shown');
		assert.equal(await p.getByRole('textbox', { name: /participant/i }).count(), 0);
		await p.getByText('No tasks yet.').waitFor();
		await p.getByLabel('New task: first message').fill('Order the banners');
		await p.getByRole('button', { name: 'Start task' }).click();
		await conversation(p).getByText('echo: Order the banners', { exact: true }).waitFor();
		await side(p).getByText('· reporter · you').waitFor();
		const id = decodeURIComponent(new URL(p.url()).hash.replace(/^#task=/, ''));
		// The login is the sender whatever X-Participant-Id says (the page sends none).
		const res = await fetch(abase, { method: 'POST', headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0',
			'X-Participant-Id': 'mallory', Authorization: basic }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }) });
		const got = (await res.json()).result;
		assert.ok(got, 'carol\'s GetTask of her task');
		const people = got.metadata['io.github.madarauchiha-314.tiny-harness/task'].participants.map((x) => `${x.id}:${x.role}`);
		assert.deepEqual(people.sort(), ['carol:reporter', 'tiny-harness:assignee']);
		assert.equal(got.history[0].metadata?.participant_id, 'carol');
		await p.context().close();
		stopAuthServer();
		stopAuthServer = null;
	});

	await t.test('SEC-1 WEB-1 WEB-6 identity = bearer: the app asks for an API key, keeps it in sessionStorage, sends it as Authorization: Bearer, and a 401 shows the sign-in again', async () => {
		need(browser, 'the browser start');
		const bdir = makeTmp('th-web-bearer-');
		const srv = startLighttpd(bdir, { lighttpd: LIGHTTPD, procs: 1, signals: false, env: { TINY_HARNESS_IDENTITY: 'bearer' } });
		stopBearerServer = srv.stop;
		assert.ok(srv.ok, `lighttpd with identity = bearer did not start: ${srv.stderr}`);
		const keys = (...args) => spawnSync(TH_BIN, ['keys', ...args], { env: { ...process.env, TINY_HARNESS_DB: srv.db }, encoding: 'utf8' });
		const key = keys('add', 'dave', '--name', 'web').stdout.trim();
		assert.match(key, /^th_[A-Za-z0-9_-]{43}$/, 'keys add');
		const none = await (await fetch(`${srv.base}ui/session.json`)).json();
		assert.deepEqual(none, { identity: 'bearer', participant: null });

		// Its own context: the 401s this test provokes are logged by Chromium as failed loads.
		const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
		const p = await context.newPage();
		p.setDefaultTimeout(15000);
		const errors = [];
		p.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
		const sent = [];
		p.on('request', (r) => { if (r.method() === 'POST') sent.push(r.headers().authorization ?? null); });
		await p.goto(`${srv.base}ui/`);
		await p.waitForFunction(() => window.thWeb?.ready === true);
		const field = p.getByLabel('API key', { exact: true });
		await field.waitFor();
		assert.equal(await p.getByLabel('Participant', { exact: true }).count(), 0, 'the Participant field is shown');
		assert.equal(await field.getAttribute('type'), 'password');
		await field.fill(`th_${'x'.repeat(43)}`);
		await p.getByRole('button', { name: 'Sign in' }).click();
		await p.getByText('That key was refused: check it and sign in again.').waitFor();
		await field.fill(key);
		await p.getByRole('button', { name: 'Sign in' }).click();
		await p.getByRole('banner').getByText('Signed in as dave', { exact: true }).waitFor();
		await p.getByRole('banner').getByText('with an API key', { exact: true }).waitFor(); // WEB-6
		assert.equal(await p.evaluate(() => sessionStorage.getItem('tiny-harness.token')), key, 'the key is in sessionStorage');
		assert.equal(await p.evaluate(() => localStorage.getItem('tiny-harness.token')), null, 'the key is in localStorage');
		await p.getByLabel('New task: first message').fill('Book the hall');
		await p.getByRole('button', { name: 'Start task' }).click();
		await conversation(p).getByText('echo: Book the hall', { exact: true }).waitFor();
		await side(p).getByText('· reporter · you').waitFor();
		assert.ok(sent.length >= 2, `calls sent: ${sent.length}`);
		assert.deepEqual([...new Set(sent)], [`Bearer ${key}`], 'every call carries Authorization: Bearer <key>');
		// A reload keeps the sign-in (same tab: sessionStorage).
		await p.reload();
		await p.getByRole('banner').getByText('Signed in as dave', { exact: true }).waitFor();
		// The key is revoked: the next call is a 401, and the page asks for a key again.
		assert.equal(keys('revoke', 'web').status, 0, 'keys revoke');
		await p.getByRole('link', { name: '← All tasks' }).click();
		await p.getByText('Your key was refused or has expired: sign in again.').waitFor();
		await p.getByLabel('API key', { exact: true }).waitFor();
		assert.equal(await p.evaluate(() => sessionStorage.getItem('tiny-harness.token')), null, 'the refused key is forgotten');
		assert.deepEqual(errors, []);
		await context.close();
		stopBearerServer();
		stopBearerServer = null;
	});

	await t.test('TEN-8 the app at <base>acme/ui/ works in tenant acme: its task is acme\'s, not found in the default tenant', async () => {
		const p = await newPage(1280);
		await p.goto(`${base}acme/ui/`);
		await nameMyself(p, 'alice');
		await p.getByRole('link', { name: 'tiny-harness · acme' }).waitFor();
		await p.getByLabel('New task: first message').fill('Tenant work');
		await p.getByRole('button', { name: 'Start task' }).click();
		await conversation(p).getByText('echo: Tenant work', { exact: true }).waitFor();
		const id = decodeURIComponent(/#task=(.+)$/.exec(p.url())?.[1] ?? '');
		assert.ok(id, `the page names its task: ${p.url()}`);
		assert.equal((await ok('GetTask', { id, tenant: 'acme' })).id, id);
		const plain = await rpc('GetTask', { id });
		assert.equal(plain.error?.code, -32001, show(plain));
		const mine = await ok('ListTasks', {});
		assert.ok(!(mine.tasks ?? []).some((x) => x.id === id), 'the default tenant does not list it');
		await p.close();
	});

	await t.test('RET-4 WEB-1 the owner sees, under the task list, the push notification their webhook gave up on: task, webhook without its secret, event, attempts, error; bob sees none', async () => {
		need(browser, 'the browser start');
		// A loopback port that was free a moment ago: every POST to it is refused at once.
		const probe = createServer();
		await new Promise((r) => probe.listen(0, '127.0.0.1', r));
		const port = probe.address().port;
		await new Promise((r) => probe.close(r));
		const task = (await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', parts: [
			{ data: { kind: 'task', payload: { name: 'Notify the caterer', goal: 'Tell the caterer the date' } }, mediaType: MT_EVENT },
			{ text: 'Tell the caterer.' }] } })).task.id;
		const hook = `http://127.0.0.1:${port}/caterer?token=caterer-secret-123`;
		const cfg = await ok('CreateTaskPushNotificationConfig', { taskId: task, id: 'caterer-hook', url: hook });
		assert.equal(cfg.id, 'caterer-hook');
		await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId: task, parts: [{ text: 'The date is set.' }] } });
		// The worker POSTs after its answer; the delivery dies on the refusal.
		let letters = [];
		for (let i = 0; i < 100 && letters.length === 0; i++) {
			const r = await fetch(`${base}pushNotificationDeadLetters`, { headers: { 'X-Participant-Id': 'alice' } });
			assert.equal(r.status, 200);
			letters = (await r.json()).deadLetters.filter((d) => d.taskId === task);
			if (letters.length === 0)
				await new Promise((r2) => setTimeout(r2, 100));
		}
		assert.ok(letters.length > 0, 'no dead letter after 10 s');
		const p = await newPage(1280);
		await p.goto(`${base}ui/`);
		await nameMyself(p, 'alice');
		const section = p.getByRole('region', { name: 'Push notifications not delivered' });
		const item = section.getByRole('list', { name: 'Push notifications not delivered' }).getByRole('listitem')
			.filter({ hasText: 'caterer-hook' }).first();
		await item.waitFor();
		await item.getByRole('link', { name: 'Notify the caterer' }).waitFor();
		await item.getByText(`http://127.0.0.1:${port}/caterer?token=***`, { exact: true }).waitFor();
		await item.getByText(/^Event \d+ not delivered after 1 attempt; gave up /).waitFor();
		await item.getByText(new RegExp(`^http://127\\.0\\.0\\.1:${port}/caterer\\?token=\\*\\*\\*: `)).waitFor();
		assert.ok(!(await p.content()).includes('caterer-secret-123'), 'the webhook\'s secret is on the page');
		mkdirSync(shotDir, { recursive: true });
		await section.screenshot({ path: join(shotDir, 'dead-letters-1280.png') });
		// The link opens the task.
		await item.getByRole('link', { name: 'Notify the caterer' }).click();
		await p.getByRole('heading', { name: 'Notify the caterer' }).waitFor();
		await p.context().close();
		// bob owns no config: the page shows no such section.
		const bob = await newPage(1280);
		await bob.goto(`${base}ui/`);
		await nameMyself(bob, 'bob');
		// Once the page has its answer (state.deadLetters is null until then).
		await bob.waitForFunction(() => Array.isArray(window.thWeb.deadLetters));
		assert.equal(await bob.getByRole('region', { name: 'Push notifications not delivered' }).count(), 0, 'bob is shown a dead-letter section');
		assert.ok(!(await bob.content()).includes('caterer'), 'bob sees alice\'s dead letter');
		await bob.context().close();
	});

	await t.test('WEB-3 no script error, CSP violation or failed request in any page', async () => {
		assert.deepEqual(pageErrors, []);
	});
} finally {
	if (browser)
		await browser.close().catch(() => {});
	stopAuthServer?.();
	stopBearerServer?.();
	stopServer();
}
t.done();
