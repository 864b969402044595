// SPDX-License-Identifier: Apache-2.0
// The script of tests/ui/index.html: a minimal A2UI client for tiny-harness (UI-1..UI-4).
//
// It speaks A2A 1.0 JSON-RPC to the page's own origin with fetch (A2A-Version, X-Participant-Id,
// A2A-Extensions naming A2UI v0.9.1), reads the task's artifacts with GetTask, feeds every
// application/a2ui+json part to @a2ui/web_core's MessageProcessor, and shows each surface with
// the Lit renderer's <a2ui-surface>. An action from a rendered component goes back as a
// SendMessage to the same task whose one data part is [{version: "v0.9", action}].
//
// Not loadable as is: tests/ui/render.mjs (and docs/a2ui.md) bundle it with esbuild into one
// classic script (format iife), since the packages are ES modules with bare imports.
//
// window.thUi exposes the page's state to a test driver: participant, taskId, surfaces (live
// surface ids), actions (what the renderer dispatched), sent (the A2A messages sent for them),
// replies (the agent's answer to each), errors, and busy (requests in flight).
import { MessageProcessor } from '@a2ui/web_core/v0_9';
import { basicCatalog } from '@a2ui/lit/v0_9'; // also defines <a2ui-surface> and the basic elements

const EXT = 'https://a2ui.org/a2a-extension/a2ui/v0.9.1';
const MT = 'application/a2ui+json';
const MT_LEGACY = 'application/json+a2ui';

const query = new URLSearchParams(location.search);
const endpoint = query.get('endpoint') || new URL('/', location.href).href;
const $ = (id) => document.getElementById(id);

const state = {
	participant: query.get('participant') || 'alice',
	taskId: query.get('task') || '',
	surfaces: [],
	actions: [],
	sent: [],
	replies: [],
	errors: [],
	busy: 0,
	loaded: false,
};
window.thUi = state;
const seenArtifacts = new Set();

function log(line) {
	$('log').textContent += `${line}\n`;
}

function fail(what, err) {
	const text = `${what}: ${err?.message ?? err}`;
	state.errors.push(text);
	$('error').textContent = text;
	console.error(text);
}

function newId() {
	if (globalThis.crypto?.randomUUID)
		return crypto.randomUUID();
	return `ui-${Date.now()}-${Math.random().toString(16).slice(2)}`;
}

let rpcSeq = 0;
async function rpc(method, params) {
	state.busy++;
	try {
		const res = await fetch(endpoint, {
			method: 'POST',
			headers: {
				'Content-Type': 'application/json',
				'A2A-Version': '1.0',
				'A2A-Extensions': EXT,
				'X-Participant-Id': state.participant,
			},
			body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcSeq, method, params }),
		});
		const body = await res.json();
		if (body.error) {
			const err = new Error(`${method} failed with ${body.error.code}: ${body.error.message}`);
			err.rpc = body.error;
			throw err;
		}
		return body.result;
	} finally {
		state.busy--;
	}
}

function textOf(message) {
	return (message?.parts ?? []).filter((p) => typeof p.text === 'string').map((p) => p.text).join('');
}

// ------------------------------------------------------------------ rendering
const processor = new MessageProcessor([basicCatalog], (action) => onAction(action));

processor.onSurfaceCreated((surface) => {
	const el = document.createElement('a2ui-surface');
	el.id = `surface-${surface.id}`;
	el.dataset.surfaceId = surface.id;
	el.surface = surface; // a JS property, not an attribute
	$('surfaces').append(el);
	state.surfaces.push(surface.id);
	log(`surface ${surface.id} created`);
});

processor.onSurfaceDeleted((id) => {
	document.getElementById(`surface-${id}`)?.remove();
	state.surfaces = state.surfaces.filter((s) => s !== id);
	log(`surface ${id} deleted`);
});

function isA2ui(part) {
	const mt = part.mediaType || part.metadata?.mimeType || part.mimeType;
	return mt === MT || mt === MT_LEGACY;
}

function a2uiMessages(data) {
	if (Array.isArray(data))
		return data;
	if (data && Array.isArray(data.messages))
		return data.messages;
	return data ? [data] : [];
}

// Feeds every artifact not seen yet to the processor, in the order the task lists them.
function renderArtifacts(task) {
	for (const artifact of task.artifacts ?? []) {
		if (seenArtifacts.has(artifact.artifactId))
			continue;
		seenArtifacts.add(artifact.artifactId);
		for (const part of artifact.parts ?? []) {
			if (!isA2ui(part))
				continue;
			for (const m of a2uiMessages(part.data)) {
				try {
					processor.processMessages([m]);
				} catch (err) {
					fail(`artifact ${artifact.artifactId}`, err);
				}
			}
		}
	}
}

async function loadTask() {
	const task = await rpc('GetTask', { id: state.taskId });
	renderArtifacts(task);
	state.loaded = true;
	return task;
}

// ------------------------------------------------------------------ actions
async function onAction(action) {
	state.actions.push(action);
	log(`action ${action.name} from ${action.sourceComponentId} on ${action.surfaceId}`);
	const message = {
		messageId: newId(),
		role: 'ROLE_USER',
		taskId: state.taskId,
		parts: [{ data: [{ version: 'v0.9', action }], mediaType: MT, metadata: { mimeType: MT } }],
		metadata: { a2uiClientCapabilities: processor.getClientCapabilities() },
	};
	state.sent.push(message);
	try {
		const result = await rpc('SendMessage', { message });
		const task = result.task ?? null;
		const reply = task ? textOf(task.status?.message) : textOf(result.message);
		state.replies.push(reply);
		$('reply').textContent = reply;
		log(`reply: ${reply}`);
		if (task)
			await loadTask(); // picks up the deleteSurface the decision emitted
	} catch (err) {
		state.replies.push(null);
		fail(`action ${action.name}`, err);
	}
}

async function ask(question) {
	const result = await rpc('SendMessage', {
		message: {
			messageId: newId(),
			role: 'ROLE_USER',
			parts: [{ text: `/confirm ${question}` }],
			metadata: { a2uiClientCapabilities: processor.getClientCapabilities() },
		},
	});
	state.taskId = result.task.id;
	const url = new URL(location.href);
	url.searchParams.set('task', state.taskId);
	url.searchParams.set('participant', state.participant);
	history.replaceState(null, '', url);
	showWho();
	return loadTask();
}

function showWho() {
	$('who').textContent = `${state.participant}${state.taskId ? ` · task ${state.taskId}` : ''}`;
}

showWho();
if (state.taskId) {
	loadTask().catch((err) => fail('GetTask', err));
} else {
	$('ask').hidden = false;
	$('ask').addEventListener('submit', (ev) => {
		ev.preventDefault();
		$('ask').hidden = true;
		ask($('question').value.trim()).catch((err) => fail('SendMessage', err));
	});
	state.loaded = true;
}
