// SPDX-License-Identifier: Apache-2.0
// app.js — the tiny-harness web app (WEB-1..WEB-3). A person names themself in the field
// labelled Participant (sent as X-Participant-Id, remembered in localStorage), sees their
// tasks (ListTasks), starts one, and in a task converses, follows status, participants,
// plan and sub-tasks, answers a help request addressed to them (a help_reply, CH-5), writes
// in side channels (CH-1), completes or cancels it; A2UI cards are drawn by the official Lit
// renderer and their actions sent back. Under the list, the push notifications of their own
// webhooks that gave up (RET-4). The page follows the open task live through
// SubscribeToTask (a2a.js), resuming with Last-Event-ID after a drop.
//
// Every server text goes into the page as text (view.js); there is no innerHTML.
// window.thWeb exposes a little state to tests (the open task, events seen, errors).
import { MessageProcessor } from '@a2ui/web_core/v0_9';
import { basicCatalog } from '@a2ui/lit/v0_9'; // defines <a2ui-surface> and the basic elements

import { RpcError, deadLetters, follow, rpc, setBearer, useTenant } from './a2a.js';
import {
	META_STATUS, MT_A2UI, MT_CHANNEL, MT_EVENT, channelPart, el, isA2ui, isTerminal, overWords,
	renderPart, senderOf, stateWord, subStateWords, taskMeta, when,
} from './view.js';

const $ = (id) => document.getElementById(id);
const STORE_KEY = 'tiny-harness.participant';
// identity = bearer: the API key or token, kept for this tab only (sessionStorage, SEC-1).
const TOKEN_KEY = 'tiny-harness.token';
const KEYS_HINT = 'Enter sends; Shift+Enter starts a new line.';
// A side channel's name as the page lets a person type it (the id of a new channel).
const CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const state = {
	participant: '',
	taskId: null,
	task: null,
	seen: new Set(), // messageIds shown in the conversation
	artifacts: new Map(), // artifactId → number of parts fed to the renderer
	surfaces: [],
	events: 0,
	lastEventId: null,
	eventIds: [], // ids of the stream events taken for the open task, in order
	streams: [], // per stream opened for it: the Last-Event-ID it resumed from (null: first)
	errors: [],
	commands: [],
	remote: false, // identity = remote_user or bearer: the login or the key decides (ID-1)
	bearer: false, // identity = bearer: the page signs in with an API key or token (SEC-1)
	requests: new Map(), // messageId of a help request from the harness → its request id
	answered: new Set(), // messageIds of help requests answered from this page
	channels: [], // ids of the side channels of the open task seen in its history (CH-1)
	deadLetters: null, // my push deliveries that gave up, once pushNotificationDeadLetters answered (RET-4)
	identity: null, // how the server knows the sender, from session.json: header, remote_user, bearer
	sending: false, // a message of this page is on its way: Send and Enter wait for its answer
	debug: new URLSearchParams(location.search).has('debug'), // ?debug: the Debug panel (WEB-6)
};
window.thWeb = state;
let stream = null;
let processor = null;
let refreshTimer = null;
let answerSeq = 0;

// ------------------------------------------------------------------ helpers
function newId() {
	if (globalThis.crypto?.randomUUID)
		return crypto.randomUUID();
	return `web-${Date.now()}-${Math.random().toString(16).slice(2)}`;
}

function notice(text) {
	$('notice').textContent = text || '';
}

// Shows a refusal or failure in the task's alert (or the page's), in the server's words.
function showError(err, where = 'task-error') {
	if (err?.auth)
		return; // a 401: the sign-in form already says so (signOut)
	const text = err instanceof RpcError ? err.message : `Could not reach the server: ${err?.message ?? err}`;
	state.errors.push(text);
	$(where).textContent = text;
}

function me() {
	return state.participant;
}

// The X-Participant-Id to send: none when the web server's login decides (identity =
// remote_user), where the server ignores the header anyway.
function sender() {
	return state.remote ? null : state.participant;
}

function needParticipant() {
	if (me())
		return true;
	if (state.bearer)
		notice('Sign in with your API key first.');
	else
		notice(state.remote ? 'The web server did not say who you are: sign in to use tiny-harness.'
			: 'Type your name in the Participant field first.');
	$(state.bearer ? 'api-key' : 'participant')?.focus();
	return false;
}

// ------------------------------------------------------------------ participant
function setParticipant(name) {
	const v = name.trim();
	if (v === state.participant)
		return;
	state.participant = v;
	try {
		if (v)
			localStorage.setItem(STORE_KEY, v);
		else
			localStorage.removeItem(STORE_KEY);
	} catch {
		// storage may be disabled; the name then lasts as long as the page
	}
	if (v)
		notice('');
	route();
}

// ------------------------------------------------------------------ the task list
async function loadList() {
	const list = $('task-list');
	if (!me()) {
		list.replaceChildren();
		$('dead-list').replaceChildren();
		$('dead-letters').hidden = true;
		$('list-status').textContent = state.bearer ? 'Sign in with your API key to see your tasks.'
			: 'Name yourself in the Participant field to see your tasks.';
		return;
	}
	$('list-status').textContent = 'Loading…';
	const params = { pageSize: 50, historyLength: 0 };
	const filter = $('state-filter').value;
	if (filter)
		params.status = filter;
	try {
		const r = await rpc(sender(), 'ListTasks', params);
		const tasks = r.tasks ?? [];
		list.replaceChildren(...tasks.map(taskRow));
		const total = r.totalSize ?? tasks.length;
		$('list-status').textContent = total === 0 ? 'No tasks yet.' : `${total} task${total === 1 ? '' : 's'}`;
	} catch (err) {
		$('list-status').textContent = '';
		showError(err, 'notice');
	}
	await loadDeadLetters();
}

// RET-4: the push notifications of my webhooks that gave up (my configs only; the server
// answers nobody else's), under the list, with what I need to act: the task, the webhook
// (its query values hidden by the server), the event, the attempts, the last error and
// when it gave up. Shown only when there is one.
async function loadDeadLetters() {
	const box = $('dead-letters');
	let letters = [];
	try {
		letters = me() ? (await deadLetters(sender())).deadLetters ?? [] : [];
	} catch (err) {
		letters = [];
		showError(err, 'notice');
	}
	state.deadLetters = letters;
	$('dead-list').replaceChildren(...letters.map(deadRow));
	box.hidden = letters.length === 0;
}

function deadRow(d) {
	const tries = Number(d.attempts) || 0;
	return el('li', { class: 'dead', 'data-dead-id': String(d.id ?? '') },
		el('p', {}, 'Task ', taskLink(String(d.taskId ?? '')), ` · push config ${String(d.configId ?? '')}`),
		el('p', { class: 'dead-url' }, String(d.url ?? '')),
		el('p', {}, `Event ${String(d.eventSeq ?? '?')} not delivered after ${tries} attempt${tries === 1 ? '' : 's'}; gave up ${when(d.diedAt)}`),
		d.lastError ? el('p', { class: 'dead-error' }, String(d.lastError)) : null);
}

function taskRow(task) {
	const meta = taskMeta(task);
	const sub = subStateWords(task, me());
	const name = meta.name || task.id;
	return el('li', { class: 'task-row' },
		el('a', { href: `#task=${encodeURIComponent(task.id)}`, class: 'task-link' }, name),
		el('span', { class: `badge state-${String(task.status?.state ?? '').toLowerCase()}` }, stateWord(task.status?.state)),
		sub ? el('span', { class: 'sub' }, sub) : null,
		el('span', { class: 'updated muted' }, task.status?.timestamp ? `updated ${when(task.status.timestamp)}` : ''));
}

async function startTask(ev) {
	ev.preventDefault();
	if (!needParticipant())
		return;
	const text = $('first-message').value.trim();
	if (!text)
		return;
	$('start').disabled = true;
	try {
		// returnImmediately: the task opens at once and the reply arrives on its stream.
		const r = await rpc(sender(), 'SendMessage', {
			message: { messageId: newId(), role: 'ROLE_USER', parts: [{ text }], metadata: clientCaps() },
			configuration: { returnImmediately: true },
		});
		const task = r.task;
		$('first-message').value = '';
		if (task?.id)
			location.hash = `#task=${encodeURIComponent(task.id)}`;
	} catch (err) {
		showError(err, 'notice');
	} finally {
		$('start').disabled = false;
	}
}

// ------------------------------------------------------------------ A2UI
function clientCaps() {
	return processor ? { a2uiClientCapabilities: processor.getClientCapabilities() } : {};
}

function newProcessor() {
	$('surfaces').replaceChildren();
	state.surfaces = [];
	state.artifacts = new Map();
	processor = new MessageProcessor([basicCatalog], (action) => onAction(action));
	processor.onSurfaceCreated((surface) => {
		const box = el('div', { class: 'surface card', id: `surface-${surface.id}` });
		const s = document.createElement('a2ui-surface');
		s.surface = surface; // a property, not an attribute
		box.append(s);
		$('surfaces').append(box);
		state.surfaces.push(surface.id);
	});
	processor.onSurfaceDeleted((id) => {
		document.getElementById(`surface-${id}`)?.remove();
		state.surfaces = state.surfaces.filter((s) => s !== id);
	});
}

function a2uiMessages(data) {
	if (Array.isArray(data))
		return data;
	if (data && Array.isArray(data.messages))
		return data.messages;
	return data ? [data] : [];
}

// Feeds the parts of an artifact the renderer has not seen yet (append updates add parts).
function feedArtifact(artifact, append) {
	if (!processor || !artifact?.artifactId)
		return;
	const done = append ? state.artifacts.get(artifact.artifactId) ?? 0 : 0;
	const parts = artifact.parts ?? [];
	if (!append && state.artifacts.has(artifact.artifactId))
		return; // the whole artifact was fed already
	for (const part of parts) {
		if (!isA2ui(part))
			continue;
		for (const m of a2uiMessages(part.data)) {
			try {
				processor.processMessages([m]);
			} catch (err) {
				state.errors.push(`A2UI: ${err?.message ?? err}`);
			}
		}
	}
	state.artifacts.set(artifact.artifactId, done + parts.length);
}

async function onAction(action) {
	if (!state.taskId)
		return;
	$('task-error').textContent = '';
	const message = {
		messageId: newId(),
		role: 'ROLE_USER',
		taskId: state.taskId,
		parts: [{ data: [{ version: 'v0.9', action }], mediaType: MT_A2UI, metadata: { mimeType: MT_A2UI } }],
		metadata: clientCaps(),
	};
	try {
		await rpc(sender(), 'SendMessage', { message, configuration: { returnImmediately: true } });
	} catch (err) {
		showError(err);
	}
}

// ------------------------------------------------------------------ one task
function resetTaskView() {
	stream?.stop();
	stream = null;
	state.task = null;
	state.seen = new Set();
	state.events = 0;
	state.lastEventId = null;
	state.eventIds = [];
	state.streams = [];
	state.requests = new Map();
	state.answered = new Set();
	state.channels = [];
	sendToKey = '';
	membersKey = '';
	$('send-to').replaceChildren(el('option', { value: 'task' }, 'Everyone on the task'));
	$('channel-members').replaceChildren();
	$('channel-name').value = '';
	$('send-to-row').hidden = true;
	$('new-channel').hidden = true;
	$('conversation').replaceChildren();
	$('task-actions').hidden = false;
	$('send-form').hidden = false;
	$('surfaces').hidden = false;
	$('task-over').hidden = true;
	$('task-over').textContent = '';
	$('debug').hidden = true;
	$('debug-list').replaceChildren();
	$('task-error').textContent = '';
	$('task-title').textContent = '';
	$('task-goal').textContent = '';
	$('task-status').textContent = '';
	for (const id of ['participants', 'plan', 'subtasks', 'parents'])
		$(id).replaceChildren();
	newProcessor();
}

async function openTask(id) {
	resetTaskView();
	state.taskId = id;
	if (!me()) {
		$('task-title').textContent = 'Task';
		$('task-error').textContent = 'Type your name in the Participant field to open this task.';
		return;
	}
	let task;
	try {
		task = await rpc(sender(), 'GetTask', { id });
	} catch (err) {
		$('task-title').textContent = 'Task';
		showError(err);
		return;
	}
	if (state.taskId !== id)
		return;
	applyTask(task);
	for (const a of task.artifacts ?? [])
		feedArtifact(a, false);
	if (!isTerminal(task.status?.state))
		subscribe(id);
}

function subscribe(id) {
	stream = follow(sender(), id, {
		lastEventId: state.lastEventId,
		isDone: () => state.taskId !== id || isTerminal(state.task?.status?.state),
		onOpen: (from) => {
			if (state.taskId === id) {
				state.streams.push(from);
				renderDebug();
			}
		},
		onError: (err) => {
			if (state.taskId === id && !isTerminal(state.task?.status?.state))
				showError(err);
		},
		onResult: (r, n) => {
			if (state.taskId !== id)
				return;
			state.events++;
			if (n != null) {
				state.lastEventId = n;
				state.eventIds.push(n);
			}
			onStreamResult(r);
			renderDebug();
		},
	});
}

function onStreamResult(r) {
	if (r.task) {
		applyTask(r.task);
		for (const a of r.task.artifacts ?? [])
			feedArtifact(a, false);
	} else if (r.message) {
		addMessage(r.message);
	} else if (r.statusUpdate) {
		const u = r.statusUpdate;
		if (state.task) {
			state.task.status = u.status;
			if (u.metadata)
				state.task.metadata = { ...state.task.metadata, ...u.metadata };
			if (u.status?.state !== 'TASK_STATE_INPUT_REQUIRED' && state.task.metadata)
				delete state.task.metadata[META_STATUS];
		}
		if (u.status?.message)
			addMessage(u.status.message);
		renderStatus();
		// Participants, plan and sub-tasks change through harness events (TASK-8); the task
		// itself carries the result, read once the burst of events is over.
		scheduleRefresh();
	} else if (r.artifactUpdate) {
		feedArtifact(r.artifactUpdate.artifact, !!r.artifactUpdate.append);
	}
}

// After a status update the task is read again: the message that started a turn (another
// client's, say) is not an event of its own, and participants, plan and sub-tasks change
// through harness events (TASK-8) whose result the task carries.
function scheduleRefresh() {
	clearTimeout(refreshTimer);
	const id = state.taskId;
	refreshTimer = setTimeout(async () => {
		if (state.taskId !== id || !me())
			return;
		try {
			const t = await rpc(sender(), 'GetTask', { id });
			if (state.taskId === id)
				applyTask(t, true);
		} catch {
			// the stream goes on; the next event tries again
		}
	}, 60);
}

// Takes a task read with GetTask (or a stream's first event). A task read after a live
// event may be older than what the stream already showed: its status is taken only when
// it is no older.
function applyTask(task, refresh = false) {
	const prev = state.task;
	if (refresh && prev?.status?.timestamp && task.status?.timestamp && task.status.timestamp < prev.status.timestamp)
		task = { ...task, status: prev.status };
	state.task = task;
	syncHistory(task.history ?? []);
	renderTask();
}

// Shows the history in its order (WEB-5). New messages are appended; then the messages the
// history holds are put in its order within the places they take in the list, so that a
// reply the stream brought before the message that asked for it (a slow SendMessage answer,
// another client's message that started a turn) moves below it. Items the history does not
// hold (a message of mine still being sent) keep their place. Nodes are moved, not redrawn.
function syncHistory(history) {
	const unseen = history.filter((m) => m?.messageId && !state.seen.has(m.messageId));
	const first = unseen.length > 0 ? history.indexOf(unseen[0]) : -1;
	const tail = first >= 0 && !history.slice(first).some((m) => state.seen.has(m.messageId));
	for (const m of unseen)
		addMessage(m, tail);
	const list = $('conversation');
	const items = [...list.children];
	const at = new Map();
	history.forEach((m, i) => {
		if (m?.messageId && !at.has(m.messageId))
			at.set(m.messageId, i);
	});
	const placed = items.filter((li) => at.has(li.dataset.messageId));
	const sorted = [...placed].sort((a, b) => at.get(a.dataset.messageId) - at.get(b.dataset.messageId));
	if (sorted.every((li, i) => li === placed[i]))
		return;
	let k = 0;
	list.replaceChildren(...items.map((li) => (at.has(li.dataset.messageId) ? sorted[k++] : li)));
}

// A message sent from this page, shown at once (WEB-5: before any reply the stream brings,
// as in the task's order) and marked as being sent. sent() clears the mark; undo() takes
// it away again when the server refused it or could not be reached.
function showOwn(message) {
	addMessage({ ...message, metadata: { participant_id: me() } });
	const li = [...$('conversation').children].find((x) => x.dataset.messageId === message.messageId);
	li?.classList.add('sending');
	return {
		sent() {
			li?.classList.remove('sending');
		},
		undo() {
			li?.remove();
			state.seen.delete(message.messageId);
			// A side channel this message would have opened is not there after all.
			const ch = li?.dataset.channel;
			if (ch != null && ![...$('conversation').children].some((x) => x.dataset.channel === ch)) {
				state.channels = state.channels.filter((x) => x !== ch);
				renderSendTo();
			}
			laterHelp();
		},
	};
}

function addMessage(m, scroll = true) {
	if (!m?.messageId || state.seen.has(m.messageId))
		return;
	state.seen.add(m.messageId);
	const from = senderOf(m);
	const mine = from === me();
	const agent = m.role === 'ROLE_AGENT';
	const parts = m.parts ?? [];
	const texts = parts.filter((p) => typeof p.text === 'string').map((p) => p.text);
	// A control envelope or an A2UI action is shown as a short line, not as raw data.
	const body = parts.map((p) => {
		if (p.mediaType === MT_EVENT && p.data?.kind === 'control')
			return el('p', { class: 'part-label' }, `asked to ${String(p.data.action ?? 'change')} the task`);
		if (isA2ui(p) && a2uiMessages(p.data).some((x) => x?.action))
			return el('p', { class: 'part-label' }, `chose “${String(a2uiMessages(p.data).find((x) => x?.action).action.name)}”`);
		return renderPart(p, texts, state.taskId);
	});
	// A harness event (TASK-8) alone is a quiet line that unfolds to its JSON.
	const quiet = parts.length > 0 && parts.every((p) => p.mediaType === MT_EVENT);
	// A message on a side channel (CH-1) says so in its header; only its members see it.
	const c = channelPart(m);
	const channel = c?.channel_id != null ? String(c.channel_id) : null;
	const side = channel != null && channel !== state.taskId;
	const li = el('li', {
		class: `msg ${agent ? 'agent' : 'user'}${mine ? ' mine' : ''}${quiet ? ' quiet' : ''}${side ? ' side' : ''}`,
		'data-message-id': m.messageId,
		'data-from': from,
	}, el('p', { class: 'msg-from' }, el('span', { class: 'msg-name' }, agent ? 'tiny-harness' : from),
		side ? el('span', { class: 'channel-tag' }, `Side channel ${channel}`) : null), ...body);
	if (side)
		li.dataset.channel = channel;
	if (c?.kind === 'help_request') {
		li.dataset.help = String(Array.isArray(c.to) && c.to.length ? c.to[0] : '');
		li.dataset.channel = channel ?? state.taskId;
		li.append(el('p', { class: 'help-state' }));
	} else if (c?.kind === 'help_reply' && c.in_reply_to != null) {
		li.dataset.replyTo = String(c.in_reply_to);
		// Named by its question when the page knows which request that id is.
		const asked = [...state.requests].find(([, rid]) => rid === li.dataset.replyTo)?.[0];
		const q = asked ? $('conversation').querySelector(`li[data-message-id="${CSS.escape(asked)}"] .part-text`) : null;
		const label = li.querySelector('.part-channel .part-label');
		if (q && label)
			label.textContent = `Answer to “${q.textContent}”`;
	}
	const list = $('conversation');
	const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
	list.append(li);
	if (side)
		noteChannel(channel);
	laterHelp();
	if (scroll && atBottom && document.activeElement !== $('message'))
		li.scrollIntoView({ block: 'nearest' });
}

// ------------------------------------------------------------------ help requests (CH-4, CH-5)
// The question the task waits for (STATUS-1: awaiting-answer names who was asked and the
// request's id; the status message is the request), or null.
function openRequest() {
	const t = state.task;
	const st = t?.metadata?.[META_STATUS];
	if (!t || t.status?.state !== 'TASK_STATE_INPUT_REQUIRED' || st?.sub_state !== 'awaiting-answer')
		return null;
	return {
		asked: String(st.participant_id ?? ''),
		requestId: st.request_id != null ? String(st.request_id) : null,
		messageId: t.status?.message?.messageId ?? null,
	};
}

// renderHelp once the current burst of messages is in (a history of many messages is
// walked once, not once per message).
let helpQueued = false;
function laterHelp() {
	if (helpQueued)
		return;
	helpQueued = true;
	queueMicrotask(() => {
		helpQueued = false;
		renderHelp();
	});
}

// Brings each help request in the conversation up to date: open (waiting for whom; an
// Answer form when it asks me), answered, or neither said. A request from the harness is
// answered by the asked participant's next message on the task's channel (CH-5: a
// help_reply or plain text); a participant's own request by a help_reply naming it.
function renderHelp() {
	const items = [...$('conversation').children];
	const open = openRequest();
	let openLi = null;
	if (open) {
		openLi = items.find((li) => li.dataset.help != null && li.dataset.messageId === open.messageId)
			?? items.filter((li) => li.dataset.help === open.asked).pop() ?? null;
		if (openLi && open.requestId)
			state.requests.set(openLi.dataset.messageId, open.requestId);
	}
	const over = isTerminal(state.task?.status?.state);
	items.forEach((li, i) => {
		if (li.dataset.help == null)
			return;
		const asked = li.dataset.help;
		const rid = state.requests.get(li.dataset.messageId);
		const fromHarness = li.dataset.from === 'tiny-harness';
		const reply = items.slice(i + 1).find((x) => (rid != null && x.dataset.replyTo === rid)
			|| (fromHarness && x.dataset.from === asked && x.dataset.channel == null && !x.classList.contains('quiet')));
		const isOpen = li === openLi && !state.answered.has(li.dataset.messageId) && !over;
		const who = asked === me() ? 'you' : asked;
		let words = '';
		if (isOpen)
			words = `Waiting for an answer from ${who}`;
		else if (reply || state.answered.has(li.dataset.messageId))
			words = `Answered by ${who}`;
		const line = li.querySelector('.help-state');
		if (line && line.textContent !== words)
			line.textContent = words;
		li.classList.toggle('help-open', isOpen);
		const form = li.querySelector('form.answer');
		if (isOpen && asked === me() && !form)
			li.append(answerForm(li));
		else if (!(isOpen && asked === me()) && form)
			form.remove();
	});
}

// The Answer control of a help request addressed to me: a box labelled "Answer to <asker>",
// described by the question, and a Send answer button (Enter sends, as in Message).
function answerForm(li) {
	const n = ++answerSeq;
	const question = li.querySelector('.part-text');
	if (question && !question.id)
		question.id = `question-${n}`;
	const box = el('textarea', { id: `answer-${n}`, name: 'answer', rows: '2', required: true,
		'aria-describedby': question ? question.id : null, placeholder: 'Your answer' });
	const button = el('button', { type: 'submit' }, 'Send answer');
	const form = el('form', { class: 'answer' },
		el('label', { for: box.id }, `Answer to ${li.dataset.from}`),
		el('div', { class: 'send-row' }, box, button));
	form.addEventListener('submit', (ev) => {
		ev.preventDefault();
		sendAnswer(li, box, button);
	});
	box.addEventListener('keydown', (e) => {
		if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
			e.preventDefault();
			form.requestSubmit();
		}
	});
	return form;
}

// Sends the answer as a help_reply naming the request (CH-5); when the page does not know
// the request's id, as plain text, which answers the harness's question too.
async function sendAnswer(li, box, button) {
	const text = box.value;
	if (!text.trim() || !state.taskId || !needParticipant())
		return;
	const rid = state.requests.get(li.dataset.messageId);
	const part = rid != null
		? { data: { channel_id: li.dataset.channel || state.taskId, sender: me(), kind: 'help_reply', text, in_reply_to: rid }, mediaType: MT_CHANNEL }
		: { text };
	const message = { messageId: newId(), role: 'ROLE_USER', taskId: state.taskId, parts: [part], metadata: clientCaps() };
	$('task-error').textContent = '';
	button.disabled = true;
	const own = showOwn(message);
	try {
		await rpc(sender(), 'SendMessage', { message, configuration: { returnImmediately: true } });
		own.sent();
		state.answered.add(li.dataset.messageId);
		renderHelp();
		scheduleRefresh();
	} catch (err) {
		own.undo();
		showError(err);
		button.disabled = false;
	}
}

// ------------------------------------------------------------------ side channels (CH-1)
let sendToKey = '';
let membersKey = '';

function noteChannel(id) {
	if (state.channels.includes(id))
		return;
	state.channels.push(id);
	renderSendTo();
}

// The Send to choice under the conversation: the task's channel (everyone), each side
// channel I am in, and a new one among some of the other people on the task. Shown only
// when there is a choice to make and I may write (not to a watcher, ID-4).
function renderSendTo() {
	const parts = taskMeta(state.task).participants ?? [];
	const mine = parts.find((p) => p.id === me());
	const others = parts.filter((p) => p.id !== me() && p.kind !== 'agent');
	const can = !!mine && mine.role !== 'watcher' && !isTerminal(state.task?.status?.state);
	$('send-to-row').hidden = !(can && (others.length > 0 || state.channels.length > 0));
	const sel = $('send-to');
	const key = JSON.stringify([state.channels, others.length > 0]);
	if (key !== sendToKey) {
		sendToKey = key;
		const keep = sel.value || 'task';
		sel.replaceChildren(el('option', { value: 'task' }, 'Everyone on the task'),
			...state.channels.map((id) => el('option', { value: `side:${id}` }, `Side channel ${id}`)),
			others.length > 0 ? el('option', { value: 'new' }, 'New side channel…') : null);
		sel.value = [...sel.options].some((o) => o.value === keep) ? keep : 'task';
	}
	const mkey = JSON.stringify(others.map((p) => [p.id, p.display_name ?? '']));
	if (mkey !== membersKey) {
		membersKey = mkey;
		const box = $('channel-members');
		const checked = new Set([...box.querySelectorAll('input:checked')].map((x) => x.value));
		box.replaceChildren(...others.map((p) => el('label', { class: 'check' },
			el('input', { type: 'checkbox', name: 'member', value: String(p.id), checked: checked.has(String(p.id)) }),
			` ${String(p.display_name || p.id)}`)));
	}
	onSendTo();
}

function onSendTo() {
	$('new-channel').hidden = $('send-to-row').hidden || $('send-to').value !== 'new';
	commandHint();
}

// Where the Message box sends: null for the task's channel (a plain message, which may
// start a turn or run a slash command), else the channel part of a side-channel message.
function channelTarget(text) {
	const to = $('send-to-row').hidden ? 'task' : $('send-to').value;
	if (to === 'task')
		return { data: null };
	if (to === 'new') {
		const id = $('channel-name').value.trim();
		const members = [...$('channel-members').querySelectorAll('input:checked')].map((x) => x.value);
		if (!CHANNEL_NAME.test(id) || id === state.taskId)
			return { error: 'Name the side channel: letters, digits, dot, dash or underscore.' };
		if (members.length === 0)
			return { error: 'Choose who is in the side channel.' };
		// decision-042: a side channel one opens is named <own id>/NAME (CH-2).
		const full = `${me()}/${id}`;
		return { data: { channel_id: full, sender: me(), kind: 'message', text, to: members }, opened: full };
	}
	return { data: { channel_id: to.slice('side:'.length), sender: me(), kind: 'message', text } };
}

function renderStatus() {
	const t = state.task;
	if (!t)
		return;
	const sub = subStateWords(t, me());
	const word = stateWord(t.status?.state);
	$('task-status').textContent = sub ? `${word} · ${sub}` : word;
	$('task-status').dataset.state = t.status?.state ?? '';
	// WEB-4: a task that is over takes nothing more; its controls go and the state is said
	// in words where the Message box was.
	const over = isTerminal(t.status?.state);
	$('send').disabled = over || state.sending;
	$('message').disabled = over;
	$('task-actions').hidden = over;
	$('send-form').hidden = over;
	$('surfaces').hidden = over; // a card's action on a task that is over would be refused
	$('task-over').hidden = !over;
	$('task-over').textContent = overWords(t.status?.state);
	renderHelp();
}

// A link to another task, named by its name once known (sub_tasks and parent_tasks hold
// only ids): the name is read once per task and kept.
const taskNames = new Map();
function taskLink(id) {
	const a = el('a', { href: `#task=${encodeURIComponent(id)}`, 'data-task-id': id }, taskNames.get(id) ?? id);
	if (!taskNames.has(id)) {
		taskNames.set(id, id);
		rpc(sender(), 'GetTask', { id, historyLength: 0 }).then((t) => {
			const name = taskMeta(t).name;
			if (!name)
				return;
			taskNames.set(id, name);
			for (const x of document.querySelectorAll('a[data-task-id]'))
				if (x.dataset.taskId === id)
					x.textContent = name;
		}, () => {});
	}
	return a;
}

function renderTask() {
	const t = state.task;
	const meta = taskMeta(t);
	$('task-title').textContent = meta.name || t.id;
	$('task-goal').textContent = meta.goal && meta.goal !== meta.name ? meta.goal : '';
	document.title = `${meta.name || 'Task'} · tiny-harness`;
	renderStatus();
	renderSendTo();
	$('participants').replaceChildren(...(meta.participants ?? []).map((p) =>
		el('li', {}, el('strong', {}, String(p.display_name || p.id)),
			p.display_name && p.display_name !== p.id ? ` (${p.id})` : '',
			` · ${String(p.role ?? '')}${p.kind === 'agent' ? ' · agent' : ''}${p.id === me() ? ' · you' : ''}`)));
	const steps = meta.plan?.steps ?? [];
	$('plan').replaceChildren(...(steps.length ? steps.map((s) =>
		el('li', { class: `step step-${String(s.state ?? 'pending')}` },
			el('span', { class: 'badge' }, String(s.state ?? 'pending')), ' ', String(s.name ?? s.id ?? ''),
			s.output ? el('span', { class: 'muted' }, ` — ${String(s.output)}`) : null)) : [el('li', { class: 'muted none' }, 'No plan')]));
	const link = (x) => el('li', {}, taskLink(String(x.task_id)));
	const subs = meta.sub_tasks ?? [];
	$('subtasks').replaceChildren(...(subs.length ? subs.map(link) : [el('li', { class: 'muted none' }, 'None')]));
	const parents = meta.parent_tasks ?? [];
	$('parents').replaceChildren(...(parents.length ? parents.map(link) : [el('li', { class: 'muted none' }, 'None')]));
	renderDebug();
}

// WEB-6: how the server knows who is speaking (session.json) and who that is.
function identityLine() {
	const who = me() || '(nobody)';
	if (state.identity === 'header')
		return `identity = header, participant ${who} (as typed)`;
	if (state.identity === 'remote_user')
		return `identity = remote_user, participant ${who} (the web server's login)`;
	if (state.identity === 'bearer')
		return `identity = bearer, participant ${who} (API key or token)`;
	return `identity not said (no session.json), participant ${who} (as typed)`;
}

// ?debug (WEB-6): the Debug panel beside the task — the identity, the task's id, the last
// event sequence number received on its stream (STREAM-3: the SSE id, the per-task number
// the server assigns with each change), the streams opened, and the task's generation when
// the server sends one (A2A 1.1; this server speaks 1.0 and sends none).
function renderDebug() {
	if (!state.debug || !state.taskId)
		return;
	const t = state.task;
	const row = (name, value, testId) => [el('dt', {}, name), el('dd', { 'data-testid': testId ?? null }, String(value))];
	let seq = state.lastEventId;
	if (seq == null)
		seq = t && isTerminal(t.status?.state) && state.streams.length === 0
			? 'none received (the task was over when the page opened it: no stream)' : 'none received yet';
	const resumed = state.streams.filter((x) => x != null);
	$('debug-list').replaceChildren(
		...row('Identity', identityLine(), 'debug-identity'),
		...row('Task', state.taskId, 'debug-task'),
		...row('Event sequence', seq, 'debug-seq'),
		...row('Streams', `${state.streams.length} opened${resumed.length ? `, resumed after ${resumed.join(', ')}` : ''}`, 'debug-streams'),
		...row('Generation', t?.generation != null ? t.generation : 'not sent (A2A 1.1 generation; this server speaks A2A 1.0)', 'debug-generation'));
	$('debug').hidden = false;
}

async function send(ev) {
	ev.preventDefault();
	// One message at a time: the text stays in the box until its answer, so a second Send
	// (or Enter) meanwhile would send it twice.
	if (state.sending || !needParticipant() || !state.taskId)
		return;
	const text = $('message').value;
	if (!text.trim())
		return;
	$('task-error').textContent = '';
	const target = channelTarget(text);
	if (target.error) {
		$('task-error').textContent = target.error;
		return;
	}
	state.sending = true;
	$('send').disabled = true;
	const parts = target.data ? [{ data: target.data, mediaType: MT_CHANNEL }] : [{ text }];
	const message = { messageId: newId(), role: 'ROLE_USER', taskId: state.taskId, parts, metadata: clientCaps() };
	const own = showOwn(message);
	try {
		await rpc(sender(), 'SendMessage', { message, configuration: { returnImmediately: true } });
		own.sent();
		// What the person typed while this one was on its way is the next message: keep it.
		if ($('message').value === text)
			$('message').value = '';
		if (target.opened) {
			// The channel is open: later messages go to it until the person chooses otherwise.
			noteChannel(target.opened);
			$('send-to').value = `side:${target.opened}`;
			$('channel-name').value = '';
			for (const x of $('channel-members').querySelectorAll('input:checked'))
				x.checked = false;
			onSendTo();
		}
		commandHint();
		// The task as stored puts the conversation in its order (WEB-5).
		scheduleRefresh();
	} catch (err) {
		own.undo();
		showError(err);
	} finally {
		state.sending = false;
		$('send').disabled = isTerminal(state.task?.status?.state);
	}
}

async function complete() {
	if (!needParticipant() || !state.taskId)
		return;
	$('task-error').textContent = '';
	$('complete').disabled = true;
	try {
		const r = await rpc(sender(), 'SendMessage', {
			message: {
				messageId: newId(),
				role: 'ROLE_USER',
				taskId: state.taskId,
				parts: [{ data: { kind: 'control', action: 'complete' }, mediaType: MT_EVENT }],
			},
		});
		if (r.task)
			takeAnswer(r.task);
	} catch (err) {
		showError(err);
	} finally {
		$('complete').disabled = false;
	}
}

async function cancel() {
	if (!needParticipant() || !state.taskId)
		return;
	$('task-error').textContent = '';
	$('cancel').disabled = true;
	try {
		takeAnswer(await rpc(sender(), 'CancelTask', { id: state.taskId }));
	} catch (err) {
		showError(err);
	} finally {
		$('cancel').disabled = false;
	}
}

// The task a Complete or Cancel answered with; a completion refused for unresolved
// sub-tasks parks the task with a status message that says why (CTL-4).
function takeAnswer(task) {
	if (!task || task.id !== state.taskId)
		return;
	const history = state.task?.history;
	state.task = { ...task, history };
	if (task.status?.message)
		addMessage(task.status.message);
	renderTask();
}

// ------------------------------------------------------------------ slash commands
// The card's commands extension lists every registered command (CMD-1); typing "/" offers
// the matching ones as buttons under the Message box (Tab reaches them, a click or Enter
// puts the command in the box).
async function loadCommands() {
	try {
		const res = await fetch(new URL('../.well-known/agent-card.json', location.href), { cache: 'no-store' });
		const card = await res.json();
		const ext = (card.capabilities?.extensions ?? []).find((e) => Array.isArray(e.params?.commands));
		state.commands = ext ? ext.params.commands : [];
	} catch {
		state.commands = [];
	}
}

function commandHint() {
	const v = $('message').value;
	// Slash commands run on the task's channel only: in a side channel "/x" is just text.
	const m = $('send-to-row').hidden || $('send-to').value === 'task' ? /^\/(\S*)(\s?)/.exec(v) : null;
	const list = $('command-list');
	if (!m) {
		list.hidden = true;
		list.replaceChildren();
		$('command-hint').textContent = KEYS_HINT;
		return;
	}
	const exact = state.commands.find((x) => x.name === m[1]);
	$('command-hint').textContent = exact
		? `/${String(exact.name)}${exact.argument_hint ? ` ${String(exact.argument_hint)}` : ''} — ${String(exact.description ?? '')}`
		: KEYS_HINT;
	const matches = m[2] ? [] : state.commands.filter((c) => String(c.name).startsWith(m[1])).slice(0, 12);
	list.replaceChildren(...matches.map((c) => el('li', {},
		el('button', { type: 'button', class: 'command', 'data-command': String(c.name) },
			el('span', { class: 'command-name' }, `/${String(c.name)}`),
			c.argument_hint ? el('span', { class: 'muted' }, ` ${String(c.argument_hint)}`) : null,
			el('span', { class: 'command-desc muted' }, ` — ${String(c.description ?? '')}`)))));
	list.hidden = matches.length === 0;
}

function pickCommand(ev) {
	const b = ev.target.closest('button[data-command]');
	if (!b)
		return;
	$('message').value = `/${b.dataset.command} `;
	$('message').focus();
	commandHint();
}

// ------------------------------------------------------------------ routing
function route() {
	const m = /^#task=(.+)$/.exec(location.hash);
	if (m) {
		$('list-view').hidden = true;
		$('task-view').hidden = false;
		openTask(decodeURIComponent(m[1]));
	} else {
		resetTaskView();
		state.taskId = null;
		document.title = 'tiny-harness';
		$('task-view').hidden = true;
		$('list-view').hidden = false;
		loadList();
	}
}

// GET <base>ui/session.json, with the bearer credential when there is one: how the server
// knows who is speaking, and who that is.
async function fetchSession(token) {
	const res = await fetch(new URL('session.json', location.href), {
		cache: 'no-store',
		headers: token ? { Authorization: `Bearer ${token}` } : {},
	});
	return res.json();
}

function whoBox() {
	return $('who-box');
}

// identity = bearer: signed in, the key sent with every call from now on.
function signedIn(token, who) {
	try {
		sessionStorage.setItem(TOKEN_KEY, token);
	} catch {
		// storage may be disabled; the key then lasts as long as the page
	}
	setBearer(token);
	state.participant = who;
	const out = el('button', { type: 'button', id: 'sign-out', class: 'secondary' }, 'Sign out');
	out.addEventListener('click', () => signOut(''));
	whoBox().replaceChildren(el('span', {}, `Signed in as ${who}`), el('span', { class: 'who-how' }, 'with an API key'), out);
	notice('');
}

// Forgets the key (a 401, or Sign out) and asks for one again.
function signOut(message) {
	try {
		sessionStorage.removeItem(TOKEN_KEY);
	} catch {
		// nothing kept
	}
	setBearer(null);
	state.participant = '';
	stream?.stop();
	stream = null;
	showSignIn(message);
	route();
}

// The sign-in form of identity = bearer: an API key (tiny-harness keys add) or a token.
function showSignIn(message) {
	const input = el('input', { id: 'api-key', name: 'api-key', type: 'password', autocomplete: 'current-password',
		spellcheck: 'false', placeholder: 'th_… or a token', required: true });
	const form = el('form', { id: 'sign-in', class: 'sign-in' },
		el('label', { for: 'api-key' }, 'API key'), input,
		el('button', { type: 'submit', id: 'sign-in-button' }, 'Sign in'));
	form.addEventListener('submit', async (e) => {
		e.preventDefault();
		const token = input.value.trim();
		if (!token)
			return;
		let session = null;
		try {
			session = await fetchSession(token);
		} catch {
			session = null;
		}
		if (typeof session?.participant !== 'string') {
			notice('That key was refused: check it and sign in again.');
			input.select();
			return;
		}
		signedIn(token, session.participant);
		route();
	});
	whoBox().replaceChildren(form);
	notice(message || 'Sign in with your API key to use tiny-harness.');
}

// identity = remote_user: the login names the participant and the field is not shown.
// identity = bearer: a sign-in form for a key, kept in sessionStorage (SEC-1).
async function loadSession() {
	try {
		let token = null;
		try {
			token = sessionStorage.getItem(TOKEN_KEY);
		} catch {
			token = null;
		}
		const session = await fetchSession(token);
		// TEN-8: served as <base><tenant>/ui/, the page works in that tenant and says so.
		if (typeof session?.tenant === 'string' && session.tenant !== '') {
			useTenant(session.tenant);
			state.tenant = session.tenant;
			$('home').textContent = `tiny-harness · ${session.tenant}`;
			document.title = `tiny-harness · ${session.tenant}`;
		}
		if (['header', 'remote_user', 'bearer'].includes(session?.identity))
			state.identity = session.identity;
		if (session?.identity === 'bearer') {
			state.remote = true;
			state.bearer = true;
			setBearer(null, () => signOut('Your key was refused or has expired: sign in again.'));
			if (token && typeof session.participant === 'string')
				signedIn(token, session.participant);
			else
				showSignIn(token ? 'Your key was refused or has expired: sign in again.' : '');
			return;
		}
		if (session?.identity !== 'remote_user')
			return;
		state.remote = true;
		state.participant = typeof session.participant === 'string' ? session.participant : '';
		whoBox().replaceChildren(el('span', {},
			state.participant ? `Signed in as ${state.participant}` : 'Not signed in'),
		state.participant ? el('span', { class: 'who-how' }, 'by the web server\'s login') : null);
		if (!state.participant)
			notice('The web server did not say who you are: sign in to use tiny-harness.');
	} catch {
		// an older server without session.json: the Participant field stays
	}
}

async function start() {
	await loadSession();
	if (state.remote) {
		startRest();
		return;
	}
	let saved = '';
	try {
		saved = localStorage.getItem(STORE_KEY) ?? '';
	} catch {
		saved = '';
	}
	state.participant = saved;
	$('participant').value = saved;
	// WEB-6: in header mode nobody signs in; the server takes the name as it comes (ID-1).
	if (state.identity === 'header') {
		whoBox().append(el('span', { class: 'who-how', id: 'who-how' },
			'Not signed in: the server takes this name as given (identity = header).'));
		$('participant').setAttribute('aria-describedby', 'who-how');
	}
	$('participant').addEventListener('change', () => setParticipant($('participant').value));
	$('participant').addEventListener('keydown', (e) => {
		if (e.key === 'Enter')
			setParticipant($('participant').value);
	});
	startRest();
}

function startRest() {
	$('new-task').addEventListener('submit', startTask);
	$('state-filter').addEventListener('change', loadList);
	$('refresh').addEventListener('click', loadList);
	$('send-form').addEventListener('submit', send);
	$('message').addEventListener('input', commandHint);
	$('message').addEventListener('keydown', (e) => {
		if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
			e.preventDefault();
			$('send-form').requestSubmit();
		}
	});
	$('command-list').addEventListener('click', pickCommand);
	$('send-to').addEventListener('change', onSendTo);
	$('complete').addEventListener('click', complete);
	$('cancel').addEventListener('click', cancel);
	window.addEventListener('hashchange', route);
	loadCommands();
	route();
	state.ready = true;
}

start();
