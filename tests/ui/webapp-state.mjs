// SPDX-License-Identifier: Apache-2.0
// The web app as a person finds it once a task is over, while a reply races its question, and
// while debugging (WEB-4, WEB-5, WEB-6 in docs/web.md): lighttpd with 2 tiny-harness workers
// serves the committed app (web/dist) at <base>ui/; headless Debian Chromium, driven by
// playwright-core, finds everything by role, label and text.
//
// - WEB-4: a task that is over says so in words and offers no Complete task, Cancel, Message
//   or Send — whether it ended from the page, from another client (the stream) or before the
//   page opened it (a reload, a link from the list).
// - WEB-5: the conversation follows the task's history order even when the stream brings the
//   agent's reply before the SendMessage that asked for it has answered (a slow network,
//   made here by delaying the page's SendMessage and GetTask responses).
// - WEB-6: the page says who the server takes the person to be and how it knows (SEC-1), and
//   with ?debug shows the task's event sequence number (STREAM-3) and its generation.
//
// Screenshots: task-over-1280.png and task-debug-1280.png in $TH_BUILDDIR/tests/artifacts/web/.
// Exit 77 when chromium, lighttpd or node_modules is missing. TH_CHROMIUM overrides
// /usr/bin/chromium.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { SRCDIR, TH_BIN, Tap, importDep, makeTmp, show } from '../contract/lib.mjs';
import { CHROMIUM, CHROMIUM_ARGS, findLighttpd, needChromium, startLighttpdOrExit } from '../lib/interop.mjs';
import { missingModules } from '../interop/deps.mjs';

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

const dir = makeTmp('th-web-state-');
let browser = null;
const { base, stop: stopServer } = startLighttpdOrExit(dir, { lighttpd: LIGHTTPD });
console.log(`# server ${base} (state in ${dir})`);

let seq = 0;
const nextId = () => `web-state-${process.pid}-${++seq}`;
async function ok(method, params, participant = 'alice') {
	const res = await fetch(base, {
		method: 'POST',
		headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', 'X-Participant-Id': participant },
		body: JSON.stringify({ jsonrpc: '2.0', id: ++seq, method, params }),
	});
	const body = await res.json();
	assert.ok(body.result, `${method} failed: ${show(body)}`);
	return body.result;
}
const need = (v, what) => {
	assert.ok(v, `not run: ${what} failed earlier`);
	return v;
};

const shotDir = join(process.env.TH_BUILDDIR || SRCDIR, 'tests', 'artifacts', 'web');
mkdirSync(shotDir, { recursive: true });
const pageErrors = [];
async function newPage(width = 1280) {
	const context = await browser.newContext({ viewport: { width, height: 800 } });
	const page = await context.newPage();
	page.setDefaultTimeout(15000);
	page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
	page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`); });
	return page;
}
const conversation = (page) => page.getByRole('list', { name: 'Conversation' });
async function nameMyself(page, who) {
	await page.waitForFunction(() => window.thWeb?.ready === true);
	const field = page.getByLabel('Participant', { exact: true });
	await field.fill(who);
	await field.press('Enter');
}
async function say(p, text) {
	await p.getByRole('textbox', { name: 'Message' }).fill(text);
	await p.getByRole('button', { name: 'Send', exact: true }).click();
}
// Starts a task from the list and waits for the echo reply; returns its id.
async function startTask(p, text) {
	await p.getByLabel('New task: first message').fill(text);
	await p.getByRole('button', { name: 'Start task' }).click();
	await conversation(p).getByText(`echo: ${text}`, { exact: true }).waitFor();
	return decodeURIComponent(new URL(p.url()).hash.replace(/^#task=/, ''));
}

// WEB-4: no control that acts on the task is offered (absent from the accessibility tree or
// disabled), and the state is said in words.
const CONTROLS = [['button', 'Complete task'], ['button', 'Cancel'], ['button', 'Send'], ['textbox', 'Message']];
async function offered(p) {
	const live = [];
	for (const [role, name] of CONTROLS) {
		const c = p.getByRole(role, { name, exact: true });
		for (let i = 0; i < await c.count(); i++)
			if (await c.nth(i).isVisible() && await c.nth(i).isEnabled())
				live.push(`${role} "${name}"`);
	}
	return live;
}
async function assertOver(p, words) {
	await p.getByRole('status').filter({ hasText: words.state }).first().waitFor();
	const said = await p.getByText(words.over, { exact: true }).waitFor({ timeout: 5000 }).then(() => true, () => false);
	// The page may take a moment after the state to close its controls: poll briefly.
	let live = await offered(p);
	for (let i = 0; i < 20 && live.length > 0; i++) {
		await p.waitForTimeout(100);
		live = await offered(p);
	}
	assert.deepEqual({ said, live }, { said: true, live: [] },
		`on a ${words.state} task: "${words.over}" shown, and the controls still offered`);
}
const COMPLETED = { state: 'Completed', over: 'This task was completed. It takes no more messages.' };
const CANCELED = { state: 'Canceled', over: 'This task was canceled. It takes no more messages.' };

// The ids of the conversation's items, in page order.
// A slow network for one page: the answer to each JSON-RPC request whose method wait(method)
// names with a promise reaches the page only once that promise settles (the server has
// answered it by then); other requests pass. Counts the held requests; fetched settles when
// the server answered the first, given when the page got it.
async function holdAnswers(p, wait) {
	const h = { requests: 0 };
	let fetched, given;
	h.fetched = new Promise((r) => { fetched = r; });
	h.given = new Promise((r) => { given = r; });
	await p.route(base, async (route) => {
		const req = route.request();
		let method = null;
		try {
			method = JSON.parse(req.postData() ?? 'null')?.method ?? null;
		} catch {
			method = null;
		}
		const until = req.method() === 'POST' ? wait(method) : null;
		if (until == null) {
			await route.fallback();
			return;
		}
		h.requests++;
		const res = await route.fetch();
		fetched();
		await until;
		await route.fulfill({ response: res });
		given();
	});
	return h;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Waits for the agent's "echo: <text>" in the conversation; when it does not come, the
// error says what the page and the server had: the page's stream (events and the last
// sequence number received, streams opened), its error line and messages still being
// sent, the task's history as GetTask reads it, and the server's error log's end.
async function echoed(p, id, text) {
	try {
		await conversation(p).getByText(`echo: ${text}`, { exact: true }).waitFor();
	} catch (err) {
		const page = await p.evaluate(() => ({
			events: window.thWeb.events, lastEventId: window.thWeb.lastEventId,
			streams: window.thWeb.streams, state: window.thWeb.task?.status?.state,
			error: document.getElementById('task-error')?.textContent,
			sending: [...document.querySelectorAll('#conversation .sending')].map((li) => li.textContent),
		})).catch((e) => `page not readable: ${e.message}`);
		const task = await ok('GetTask', { id }).catch((e) => ({ error: e.message }));
		const history = (task.history ?? []).map((m) => `${m.role}: ${(m.parts ?? []).map((x) => x.text ?? '(data)').join(' ')}`);
		let log = '';
		try {
			log = readFileSync(join(dir, 'error.log'), 'utf8').split('\n').slice(-15).join('\n');
		} catch {}
		throw new Error(`${err.message}\npage: ${show(page)}\ntask: ${task.status?.state ?? show(task)}, history: ${show(history)}\nerror.log: ${log}`);
	}
}
const shownIds = (p) => conversation(p).locator('li[data-message-id]').evaluateAll((lis) => lis.map((li) => li.dataset.messageId));

try {
	await t.test(`WEB-1 headless Chromium (${CHROMIUM}) starts under playwright-core`, async () => {
		browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
		console.log(`# chromium ${browser.version()}`);
	});

	let alice, shipped;
	await t.test('WEB-1 WEB-4 after Complete task the page says "Completed" in words and offers no Complete task, Cancel, Message or Send', async () => {
		need(browser, 'the browser start');
		alice = await newPage();
		await alice.goto(`${base}ui/`);
		await nameMyself(alice, 'alice');
		shipped = await startTask(alice, 'Ship version 2');
		assert.deepEqual(await offered(alice), CONTROLS.map(([r, n]) => `${r} "${n}"`), 'an open task offers every control');
		await alice.getByRole('button', { name: 'Complete task' }).click();
		await conversation(alice).getByText('completed by alice', { exact: true }).waitFor();
		await assertOver(alice, COMPLETED);
		assert.equal((await ok('GetTask', { id: shipped })).status.state, 'TASK_STATE_COMPLETED');
		await alice.screenshot({ path: join(shotDir, 'task-over-1280.png'), fullPage: true });
	});

	await t.test('WEB-4 a completed task opened again (reload, and from the list) is shown over, with no controls', async () => {
		const p = need(shipped && alice, 'the completed task');
		await p.reload();
		await p.getByRole('heading', { name: 'Ship version 2' }).waitFor();
		await assertOver(p, COMPLETED);
		await p.getByRole('link', { name: '← All tasks' }).click();
		const row = p.getByRole('list', { name: 'Your tasks' }).getByRole('listitem').filter({ hasText: 'Ship version 2' });
		await row.getByText('Completed').waitFor();
		await row.getByRole('link', { name: 'Ship version 2' }).click();
		await p.getByRole('heading', { name: 'Ship version 2' }).waitFor();
		await assertOver(p, COMPLETED);
	});

	await t.test('WEB-4 a task canceled by another client (plain JSON-RPC) closes on the open page through the stream', async () => {
		const p = need(alice, 'the first page');
		await p.getByRole('link', { name: '← All tasks' }).click();
		const id = await startTask(p, 'Order the stickers');
		assert.deepEqual(await offered(p), CONTROLS.map(([r, n]) => `${r} "${n}"`));
		const events = await p.evaluate(() => window.thWeb.events);
		await ok('CancelTask', { id });
		await assertOver(p, CANCELED);
		assert.ok(await p.evaluate(() => window.thWeb.events) > events, 'the cancel came through the stream');
		await p.reload();
		await p.getByRole('heading', { name: 'Order the stickers' }).waitFor();
		await assertOver(p, CANCELED);
	});

	await t.test('WEB-4 Cancel from the page: "Canceled" in words, no controls left', async () => {
		const p = need(alice, 'the first page');
		await p.getByRole('link', { name: '← All tasks' }).click();
		await startTask(p, 'Print the posters');
		await p.getByRole('button', { name: 'Cancel', exact: true }).click();
		await assertOver(p, CANCELED);
	});

	await t.test('WEB-5 UI-4 "/confirm Ship it?" sent from the page stays above the agent\'s "Approve or reject: Ship it?" when the reply arrives first (slow SendMessage and GetTask answers)', async () => {
		const p = need(alice, 'the first page');
		await p.getByRole('link', { name: '← All tasks' }).click();
		const id = await startTask(p, 'Release 2.1');
		// A slow network: the page's SendMessage and GetTask answers come late, while the open
		// stream delivers the turn's events at once.
		const delays = { SendMessage: 400, GetTask: 1200 };
		await holdAnswers(p, (method) => (method in delays ? sleep(delays[method]) : null));
		await say(p, '/confirm Ship it?');
		await p.getByRole('button', { name: 'Approve' }).waitFor({ state: 'visible' });
		const question = conversation(p).getByText('/confirm Ship it?', { exact: true });
		const reply = conversation(p).getByText(/^Approve or reject: Ship it\?/);
		await question.waitFor();
		await reply.waitFor();
		// Let every delayed answer land (and the page's read of the task after them).
		await p.waitForTimeout(delays.GetTask + delays.SendMessage + 600);
		await p.unroute(base);
		const history = (await ok('GetTask', { id })).history.map((m) => m.messageId);
		const shown = await shownIds(p);
		assert.deepEqual(shown, history.filter((m) => shown.includes(m)), 'the conversation is not in the task\'s order');
		const texts = await conversation(p).locator('.part-text').allTextContents();
		const q = texts.indexOf('/confirm Ship it?');
		const a = texts.findIndex((x) => x.startsWith('Approve or reject: Ship it?'));
		assert.ok(q >= 0 && a > q, `the question is listed after its reply: ${show(texts)}`);
		await p.getByRole('button', { name: 'Approve' }).click();
		await conversation(p).getByText('alice approved: Ship it?', { exact: true }).waitFor();
	});

	await t.test('WEB-5 the conversation keeps the task\'s order through a burst from the page and another client', async () => {
		const p = need(alice, 'the first page');
		const id = decodeURIComponent(new URL(p.url()).hash.replace(/^#task=/, ''));
		await say(p, 'one');
		await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId: id, parts: [{ text: 'two' }] } });
		await say(p, 'three');
		for (const x of ['one', 'two', 'three'])
			await echoed(p, id, x);
		await p.waitForTimeout(500);
		const history = (await ok('GetTask', { id })).history.map((m) => m.messageId);
		const shown = await shownIds(p);
		assert.deepEqual(shown, history.filter((m) => shown.includes(m)));
		assert.equal(new Set(shown).size, shown.length, 'a message shown twice');
	});

	await t.test('WEB-5 a message typed while the one before is still on its way is kept in the box, then sent', async () => {
		const p = need(alice, 'the first page');
		// A slow network: the page's SendMessage answer comes 800 ms late.
		const slow = await holdAnswers(p, (method) => (method === 'SendMessage' ? sleep(800) : null));
		await say(p, 'four');
		const box = p.getByRole('textbox', { name: 'Message' });
		await box.fill('five');
		await slow.given;
		await p.unroute(base);
		await conversation(p).getByText('echo: four', { exact: true }).waitFor();
		// The page has had the answer to "four" (it marks its own message sent).
		await p.waitForFunction(() => !document.querySelector('#conversation .sending'));
		assert.equal(await box.inputValue(), 'five', 'the text typed while "four" was on its way was cleared');
		await p.getByRole('button', { name: 'Send', exact: true }).click();
		await conversation(p).getByText('echo: five', { exact: true }).waitFor();
		await p.waitForFunction(() => !document.querySelector('#conversation .sending'));
		assert.equal(await box.inputValue(), '', 'the box is not emptied after its own message was sent');
	});

	await t.test('WEB-5 Send stays disabled while the page\'s message is on its way, whatever the stream brings meanwhile', async () => {
		const p = need(alice, 'the first page');
		const id = decodeURIComponent(new URL(p.url()).hash.replace(/^#task=/, ''));
		// The page's SendMessage answer is held until the test lets it go.
		let release;
		const held = new Promise((r) => { release = r; });
		const h = await holdAnswers(p, (method) => (method === 'SendMessage' ? held : null));
		try {
			await say(p, 'six');
			await h.fetched;
			// Another client's message: its turn's events reach the page through the stream.
			await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId: id, parts: [{ text: 'seven' }] } });
			await echoed(p, id, 'seven');
			const send = p.getByRole('button', { name: 'Send', exact: true });
			assert.equal(await send.isDisabled(), true, 'Send was offered again while "six" was on its way: a second click sends it twice');
			// Enter in the box submits the form even with Send disabled: it must wait too.
			await p.getByRole('textbox', { name: 'Message' }).press('Enter');
			await p.waitForTimeout(300);
			assert.equal(h.requests, 1, 'Enter sent "six" a second time while the first was on its way');
		} finally {
			release();
		}
		await echoed(p, id, 'six');
		await p.waitForFunction(() => !document.querySelector('#conversation .sending'));
		await p.unroute(base);
		assert.equal(await p.getByRole('button', { name: 'Send', exact: true }).isDisabled(), false);
	});

	await t.test('WEB-6 SEC-1 with identity = header the page says the name is taken as typed, not verified', async () => {
		const p = need(alice, 'the first page');
		const who = p.getByRole('banner');
		await who.getByText('Not signed in: the server takes this name as given (identity = header).', { exact: true }).waitFor();
	});

	await t.test('WEB-6 STREAM-3 ?debug shows how the server knows the caller, the task\'s event sequence number as received, and its generation', async () => {
		need(browser, 'the browser start');
		const p = await newPage();
		await p.goto(`${base}ui/?debug`);
		await nameMyself(p, 'alice');
		const id = await startTask(p, 'Debug me');
		const panel = p.getByRole('region', { name: 'Debug', exact: true });
		await panel.waitFor();
		await panel.getByText('identity = header, participant alice (as typed)', { exact: true }).waitFor();
		const seqNow = async () => {
			const txt = await panel.getByTestId('debug-seq').textContent();
			return /^\d+$/.test(txt) ? Number(txt) : null;
		};
		await p.waitForFunction(() => window.thWeb.lastEventId != null);
		let first = await seqNow();
		for (let i = 0; i < 20 && first !== await p.evaluate(() => window.thWeb.lastEventId); i++) {
			await p.waitForTimeout(50);
			first = await seqNow();
		}
		assert.ok(Number.isInteger(first) && first > 0, `event sequence shown: ${first}`);
		assert.equal(first, await p.evaluate(() => window.thWeb.lastEventId));
		await ok('SendMessage', { message: { messageId: nextId(), role: 'ROLE_USER', taskId: id, parts: [{ text: 'more' }] } });
		await conversation(p).getByText('echo: more', { exact: true }).waitFor();
		await p.waitForFunction((n) => Number(document.querySelector('[data-testid="debug-seq"]')?.textContent) > n, first);
		await panel.getByText(/^Generation/).waitFor();
		await p.screenshot({ path: join(shotDir, 'task-debug-1280.png'), fullPage: true });
		// Without ?debug there is no such panel.
		const plain = await newPage();
		await plain.goto(`${base}ui/#task=${encodeURIComponent(id)}`);
		await nameMyself(plain, 'alice');
		await conversation(plain).getByText('echo: more', { exact: true }).waitFor();
		assert.equal(await plain.getByRole('region', { name: 'Debug', exact: true }).count(), 0);
		await plain.context().close();
		await p.context().close();
	});

	await t.test('WEB-3 no script error or failed request in any page', async () => {
		assert.deepEqual(pageErrors, []);
	});
} finally {
	if (browser)
		await browser.close().catch(() => {});
	stopServer();
}
t.done();
