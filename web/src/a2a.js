// SPDX-License-Identifier: Apache-2.0
// a2a.js — A2A 1.0 JSON-RPC to the page's own origin (the base URL is the folder above
// <base>ui/): one call with fetch, and SubscribeToTask as a stream read from the fetch
// response body (EventSource cannot POST), resumed with Last-Event-ID after a drop; and the
// server's one REST read of its own, the caller's push dead letters (RET-4).

export const A2UI_EXT = 'https://a2ui.org/a2a-extension/a2ui/v0.9.1';

// The JSON-RPC endpoint: the base URL, one level above the app's folder (two under
// <base><tenant>/ui/, TEN-8: useTenant).
let endpoint = new URL('../', location.href).href;
// TEN-8: the tenant the page works in ('' the default): sent as params.tenant on every call.
let tenant = '';

// The page was served as <base><tenant>/ui/ (its session.json names the tenant): every call
// goes to the base URL, two levels up, with that tenant.
export function useTenant(t) {
	if (typeof t !== 'string' || t === '')
		return;
	tenant = t;
	endpoint = new URL('../../', location.href).href;
}
const withTenant = (params) => (tenant ? { ...(params ?? {}), tenant } : params);

// A refusal from the server: message is the server's own words.
export class RpcError extends Error {
	constructor(method, error) {
		super(error?.message ?? `${method} failed`);
		this.code = error?.code;
		this.method = method;
	}
}

// The server refused the credentials (HTTP 401, SEC-1): the page signs in again.
export class AuthError extends RpcError {
	constructor(method, error) {
		super(method, error);
		this.auth = true;
	}
}

let seq = 0;
// identity = bearer: the API key or token sent as Authorization: Bearer (SEC-1); null
// for the other modes, where the browser's own login (Basic) or the header decides.
let bearer = null;
let onUnauthorized = null;

// Sets the bearer credential every call sends (null: none), and what to do on a 401.
export function setBearer(token, unauthorized) {
	bearer = token || null;
	onUnauthorized = unauthorized ?? onUnauthorized;
}

function headers(participant, accept) {
	const h = {
		'Content-Type': 'application/json',
		Accept: accept,
		'A2A-Version': '1.0',
		'A2A-Extensions': A2UI_EXT,
	};
	if (participant)
		h['X-Participant-Id'] = participant;
	if (bearer)
		h.Authorization = `Bearer ${bearer}`;
	return h;
}

// A 401 (missing, refused, revoked or expired credentials): the sign-in is shown again.
async function unauthorized(method, res) {
	let body = null;
	try {
		body = await res.json();
	} catch {
		body = null;
	}
	const err = new AuthError(method, body?.error ?? { message: 'sign in: the server asks for credentials (HTTP 401)' });
	onUnauthorized?.(err);
	return err;
}

// One call; resolves to the result, rejects with RpcError (the server's words) or a
// network Error.
export async function rpc(participant, method, params) {
	const res = await fetch(endpoint, {
		method: 'POST',
		headers: headers(participant, 'application/json'),
		body: JSON.stringify({ jsonrpc: '2.0', id: ++seq, method, params: withTenant(params) }),
		cache: 'no-store',
	});
	if (res.status === 401)
		throw await unauthorized(method, res);
	let body;
	try {
		body = await res.json();
	} catch {
		throw new Error(`${method}: the server answered HTTP ${res.status} without JSON`);
	}
	if (body.error)
		throw new RpcError(method, body.error);
	return body.result;
}

// RET-4: the dead letters of the caller's push configs, GET <base>[tenant/]
// pushNotificationDeadLetters (not an A2A method; the same identity as every call). The page
// is at <base>ui/ or <base><tenant>/ui/, so the route is one level up either way. Resolves
// to {deadLetters, nextPageToken}; rejects with RpcError (a google.rpc.Status's words).
export async function deadLetters(participant, pageSize = 50) {
	const url = new URL('../pushNotificationDeadLetters', location.href);
	url.searchParams.set('pageSize', String(pageSize));
	// Who is asking, as on every call; no A2A-Version: it is not an A2A method.
	const h = { Accept: 'application/json' };
	if (participant)
		h['X-Participant-Id'] = participant;
	if (bearer)
		h.Authorization = `Bearer ${bearer}`;
	const res = await fetch(url, { headers: h, cache: 'no-store' });
	if (res.status === 401)
		throw await unauthorized('pushNotificationDeadLetters', res);
	let body;
	try {
		body = await res.json();
	} catch {
		throw new Error(`pushNotificationDeadLetters: the server answered HTTP ${res.status} without JSON`);
	}
	if (!res.ok || body.error)
		throw new RpcError('pushNotificationDeadLetters', body.error ?? { message: `HTTP ${res.status}` });
	return body;
}

// Parses SSE text as it arrives; calls onEvent({id, event, data}) for each complete event.
function sseParser(onEvent) {
	let buf = '';
	let ev = { id: null, event: null, data: [] };
	return (chunk) => {
		buf += chunk;
		let nl;
		while ((nl = buf.search(/\r\n|\n|\r/)) >= 0) {
			const line = buf.slice(0, nl);
			buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
			if (line === '') {
				if (ev.data.length > 0)
					onEvent({ id: ev.id, event: ev.event, data: ev.data.join('\n') });
				ev = { id: null, event: null, data: [] };
				continue;
			}
			if (line.startsWith(':'))
				continue; // heartbeat comment
			const colon = line.indexOf(':');
			const field = colon < 0 ? line : line.slice(0, colon);
			let value = colon < 0 ? '' : line.slice(colon + 1);
			if (value.startsWith(' '))
				value = value.slice(1);
			if (field === 'data')
				ev.data.push(value);
			else if (field === 'id')
				ev.id = value;
			else if (field === 'event')
				ev.event = value;
		}
	};
}

// Follows a task: SubscribeToTask, then again with Last-Event-ID whenever the stream ends
// while the task is not terminal (a proxy dropped it, stream_max_ms passed, the network
// blinked). Events are handed on once each, in order: an event id at or below the last one
// seen is dropped. Returns {stop()}.
//   onResult(result, id)  each StreamResponse (task | message | statusUpdate | artifactUpdate)
//   onError(err)          a refusal or a failed connection (it retries after a pause)
//   isDone()              true once the task is terminal: no resubscription
//   onOpen(lastEventId)   each time a stream is open (the first, then each resumption)
export function follow(participant, taskId, { onResult, onError, isDone, onOpen, lastEventId = null }) {
	let stopped = false;
	let last = lastEventId;
	let ctl = null;
	let failures = 0;

	async function once() {
		ctl = new AbortController();
		const h = headers(participant, 'text/event-stream');
		if (last != null)
			h['Last-Event-ID'] = String(last);
		const res = await fetch(endpoint, {
			method: 'POST',
			headers: h,
			body: JSON.stringify({ jsonrpc: '2.0', id: ++seq, method: 'SubscribeToTask', params: withTenant({ id: taskId }) }),
			signal: ctl.signal,
			cache: 'no-store',
		});
		if (res.status === 401)
			throw await unauthorized('SubscribeToTask', res);
		const type = res.headers.get('Content-Type') || '';
		if (!type.startsWith('text/event-stream')) {
			let body = null;
			try {
				body = await res.json();
			} catch {
				body = null;
			}
			throw new RpcError('SubscribeToTask', body?.error ?? { message: `HTTP ${res.status}` });
		}
		failures = 0;
		onOpen?.(last);
		const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
		const feed = sseParser((ev) => {
			const n = ev.id != null && /^\d+$/.test(ev.id) ? Number(ev.id) : null;
			if (n != null && last != null && n <= last)
				return; // seen before the reconnection
			let msg;
			try {
				msg = JSON.parse(ev.data);
			} catch {
				return;
			}
			if (n != null)
				last = n;
			if (ev.event === 'error' || msg.error) {
				onError(new RpcError('SubscribeToTask', msg.error ?? msg));
				return;
			}
			onResult(msg.result ?? msg, n);
		});
		for (;;) {
			const { value, done } = await reader.read();
			if (done)
				break;
			feed(value);
		}
	}

	(async () => {
		while (!stopped) {
			try {
				await once();
			} catch (err) {
				if (stopped)
					return;
				failures++;
				if (err instanceof AuthError)
					return; // signed out: the page asks for a key, nothing to retry
				if (err instanceof RpcError) {
					onError(err);
					if (err.code !== undefined && err.code !== -32603)
						return; // a refusal (not found, terminal): retrying will not help
				}
			}
			if (stopped || isDone())
				return;
			// A short pause before resuming, longer after repeated failures.
			await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** Math.min(failures, 5), 8000)));
		}
	})();

	return {
		stop() {
			stopped = true;
			ctl?.abort();
		},
		get lastEventId() {
			return last;
		},
	};
}
