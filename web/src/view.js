// SPDX-License-Identifier: Apache-2.0
// view.js — turning A2A objects into DOM, safely (WEB-3): every string from the server goes
// in through textContent or an attribute that cannot run script; only http(s) URLs become
// links. Nothing here uses innerHTML.

export const META_TASK = 'io.github.madarauchiha-314.tiny-harness/task';
export const META_STATUS = 'io.github.madarauchiha-314.tiny-harness/status';
export const MT_EVENT = 'application/vnd.tiny-harness.event+json';
export const MT_CHANNEL = 'application/vnd.tiny-harness.channel+json';
export const MT_A2UI = 'application/a2ui+json';
export const MT_A2UI_LEGACY = 'application/json+a2ui';

// el('p', {class: 'x'}, 'text', child, …): strings become text nodes.
export function el(tag, attrs = {}, ...children) {
	const e = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs)) {
		if (v == null || v === false)
			continue;
		if (k === 'class')
			e.className = v;
		else if (k === 'text')
			e.textContent = v;
		else
			e.setAttribute(k, v === true ? '' : String(v));
	}
	for (const c of children) {
		if (c == null || c === false)
			continue;
		e.append(typeof c === 'string' ? document.createTextNode(c) : c);
	}
	return e;
}

// A link only for http: and https: URLs (resolved against the page); anything else
// (javascript:, data:, file:) is shown as text — the label and the URL — and cannot be
// followed.
export function safeLink(url, label) {
	let u = null;
	try {
		u = new URL(String(url), location.href);
	} catch {
		u = null;
	}
	if (u && (u.protocol === 'http:' || u.protocol === 'https:'))
		return el('a', { href: u.href, rel: 'noopener noreferrer nofollow', target: '_blank' }, label || u.href);
	const text = label && String(label) !== String(url) ? `${String(label)} (${String(url)}, not a web link)` : String(url);
	return el('span', { class: 'unsafe-url', title: 'not a web link' }, text);
}

// Text with the http(s) URLs in it made links (safeLink); everything else stays text. A
// URL ends at white space or a quote, without the punctuation that usually follows one.
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`]+/gi;
export function linkify(text) {
	const s = String(text);
	const out = [];
	let at = 0;
	for (const m of s.matchAll(URL_IN_TEXT)) {
		let url = m[0];
		while (/[.,;:!?)\]}]$/.test(url) && !(url.endsWith(')') && url.includes('(')))
			url = url.slice(0, -1);
		if (m.index > at)
			out.push(s.slice(at, m.index));
		out.push(safeLink(url));
		at = m.index + url.length;
	}
	if (at < s.length)
		out.push(s.slice(at));
	return out;
}

const STATE_WORDS = {
	TASK_STATE_SUBMITTED: 'Submitted',
	TASK_STATE_WORKING: 'Working',
	TASK_STATE_INPUT_REQUIRED: 'Waiting for input',
	TASK_STATE_AUTH_REQUIRED: 'Waiting for authorization',
	TASK_STATE_COMPLETED: 'Completed',
	TASK_STATE_CANCELED: 'Canceled',
	TASK_STATE_FAILED: 'Failed',
	TASK_STATE_REJECTED: 'Rejected',
};
const TERMINAL = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_CANCELED', 'TASK_STATE_FAILED', 'TASK_STATE_REJECTED']);

export const stateWord = (s) => STATE_WORDS[s] ?? String(s ?? 'Unknown').replace(/^TASK_STATE_/, '').toLowerCase();
export const isTerminal = (s) => TERMINAL.has(s);

// WEB-4: what a task that is over says where its Message box was.
const OVER_WORDS = {
	TASK_STATE_COMPLETED: 'This task was completed.',
	TASK_STATE_CANCELED: 'This task was canceled.',
	TASK_STATE_FAILED: 'This task failed.',
	TASK_STATE_REJECTED: 'This task was rejected.',
};
export const overWords = (s) => (TERMINAL.has(s) ? `${OVER_WORDS[s]} It takes no more messages.` : '');

// The sub-state in words (STATUS-1): why the task waits.
export function subStateWords(task, me) {
	const st = task?.metadata?.[META_STATUS];
	if (!st || task.status?.state !== 'TASK_STATE_INPUT_REQUIRED')
		return '';
	if (st.sub_state === 'awaiting-next-message')
		return 'waiting for the next message';
	if (st.sub_state === 'awaiting-answer') {
		const who = st.participant_id ?? 'a participant';
		return who === me ? 'waiting for an answer from you' : `waiting for an answer from ${who}`;
	}
	return String(st.sub_state ?? '');
}

export const taskMeta = (task) => task?.metadata?.[META_TASK] ?? {};

export function when(ts) {
	if (!ts)
		return '';
	const d = new Date(ts);
	if (Number.isNaN(d.getTime()))
		return String(ts);
	return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function textOf(message) {
	return (message?.parts ?? []).filter((p) => typeof p.text === 'string').map((p) => p.text).join('\n');
}

export function partType(part) {
	return part?.mediaType || part?.metadata?.mimeType || part?.mimeType || '';
}

export const isA2ui = (part) => [MT_A2UI, MT_A2UI_LEGACY].includes(partType(part));

function json(v) {
	try {
		return JSON.stringify(v, null, 2);
	} catch {
		return String(v);
	}
}

const EVENT_WORDS = {
	plan_updated: 'Plan updated',
	step_updated: 'Plan step updated',
	subtask: 'Sub-task changed',
	participants_updated: 'Participants changed',
	task: 'Task details',
	control: 'Control',
};
export const eventWords = (kind) => EVENT_WORDS[kind] ?? `Event: ${String(kind)}`;

// The channel part of a message (CH-1), or null.
export function channelPart(message) {
	const p = (message?.parts ?? []).find((x) => partType(x) === MT_CHANNEL && x.data && typeof x.data === 'object');
	return p ? p.data : null;
}

// A channel part's line: what kind of channel message it is and whom it names. On a side
// channel the message's own header names the channel (app.js), so a plain message there
// needs no line unless it opened the channel.
function channelLabel(c, taskId) {
	const to = Array.isArray(c.to) ? c.to.map(String) : [];
	const side = c.channel_id != null && String(c.channel_id) !== taskId;
	if (c.kind === 'help_request')
		return `Help request${to.length ? ` to ${to.join(', ')}` : ''}`;
	if (c.kind === 'help_reply')
		return 'Answer to a help request';
	if (side)
		return to.length ? `Opened the side channel with ${to.join(', ')}` : null;
	return to.length ? `Channel message to ${to.join(', ')}` : null;
}

// One part of a message as DOM. texts: the message's text parts, so a channel part that
// repeats one of them (the harness sends both) does not show it twice. taskId: the open
// task, whose own channel is not named.
export function renderPart(part, texts = [], taskId = '') {
	if (typeof part.text === 'string')
		return el('p', { class: 'part-text' }, ...linkify(part.text));
	if (typeof part.url === 'string') {
		return el('p', { class: 'part-file' }, 'File: ', safeLink(part.url, part.filename || ''),
			part.mediaType ? ` (${String(part.mediaType)})` : '');
	}
	if (typeof part.raw === 'string') {
		const bytes = Math.floor((part.raw.length * 3) / 4);
		return el('p', { class: 'part-file' },
			`File ${String(part.filename || '(unnamed)')} (${String(part.mediaType || 'unknown type')}, about ${bytes} bytes)`);
	}
	if ('data' in part) {
		const mt = partType(part);
		if (mt === MT_CHANNEL && part.data && typeof part.data === 'object') {
			const c = part.data;
			const label = channelLabel(c, taskId);
			return el('div', { class: `part-channel kind-${String(c.kind ?? 'message').replace(/[^a-z_]/g, '')}` },
				label ? el('p', { class: 'part-label' }, label) : null,
				typeof c.text === 'string' && !texts.includes(c.text) ? el('p', { class: 'part-text' }, ...linkify(c.text)) : null);
		}
		if (isA2ui(part))
			return el('p', { class: 'part-label' }, 'A card from the agent (shown below the conversation)');
		// A harness event is folded (its line says what happened); any other data is shown
		// open, as indented JSON.
		const event = mt === MT_EVENT && part.data?.kind;
		const label = event ? eventWords(part.data.kind) : `Data${mt ? ` (${mt})` : ''}`;
		return el('details', { class: 'part-data', open: !event, 'aria-label': label },
			el('summary', {}, label), el('pre', {}, json(part.data)));
	}
	return el('pre', { class: 'part-data' }, json(part));
}

// Who sent a message: the stored participant id, else the role.
export function senderOf(message) {
	return message?.metadata?.participant_id ?? (message?.role === 'ROLE_AGENT' ? 'tiny-harness' : 'someone');
}
