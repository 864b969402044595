// SPDX-License-Identifier: Apache-2.0
// bench/streams.mjs — the client side of bench/streams.sh (STREAM-6: many open streams,
// few workers). Plain node:http, no packages. Loopback only (it refuses any other host);
// everything it does is bounded in count and time, and it exits by itself.
//
//   node bench/streams.mjs hold --url=URL --tasks=ID,ID,… --n=N
//        [--open-ms=20000] [--batch=50] [--limit-ms=300000] [--parent=PID]
//     Opens N JSON-RPC SubscribeToTask streams, spread round-robin over the tasks, at
//     most `batch` waiting for their first event at a time, and keeps them open (reading
//     and discarding heartbeats) until SIGTERM/SIGINT, until limit-ms, or until the
//     parent process is gone. Prints on stdout, one line each:
//       ready N MS                 every stream got its first event, MS after the start
//       partial GOT N MS           open-ms passed first: GOT of N have their first event
//                                  (the others stay pending; no more are started)
//       final opened=… first=… pending=… unstarted=… closed=… refused=… errors=…
//             events=… pings=…     at the end: HTTP 200 answers, streams with a first
//                                  event, streams still without one, never started, streams
//                                  the server ended while held, non-200 answers or
//                                  JSON-RPC errors (with the statuses), socket errors,
//                                  events and `: ping` heartbeats received
//
//   With --kind=longpoll (bench/streams.sh HOLD_KIND=longpoll, A2A-11-GEN-4) each of the
//   N is a waiting GetTask instead: JSON-RPC GetTask with A2A-Version: 1.1 and a
//   currentGeneration the task never reaches, so the server holds it for heartbeat_ms
//   and then answers the task; it is asked again at once, so N stay waiting. Nothing
//   arrives while one waits, so it counts as held ("first") 300 ms after it was sent
//   without an answer; "pings" counts the answers (waits that ended and were renewed).
//
//   node bench/streams.mjs latency --url=URL --tasks=ID,ID,… --samples=S
//        [--open-ms=20000] [--sample-ms=5000] [--gap-ms=50] [--limit-ms=90000] [--parent=PID]
//     Subscribes once to each task, waits (open-ms) until every stream has its first
//     event, then sends S follow-up SendMessages one after another, round-robin over the
//     tasks, each after the previous one's event arrived and a random pause of 0 to
//     gap-ms (so that the sends do not fall into step with a server that polls every
//     stream_poll_ms = 50 ms: sent right after an arrival, each would wait a whole
//     poll period). A sample is the time from starting the SendMessage request to the
//     arrival of the task's next status update in TASK_STATE_INPUT_REQUIRED at that
//     task's subscriber; both ends are stamped with performance.now() in this one
//     process, so the clocks agree. Prints one line:
//       latency samples=… lost=… failed=… min=… median=… p90=… p99=… max=…
//               resp_median=… after_resp_median=… busy_s=… elapsed_s=…
//     (one line; milliseconds, busy_s and elapsed_s in seconds; lost = no event within
//     sample-ms, failed = the SendMessage did not answer with the task in INPUT_REQUIRED;
//     resp = the SendMessage's round trip; after_resp = event arrival minus the
//     response's arrival, negative when the event came first), or
//       latency none reason=…      when the streams did not all open or nothing arrived.
//     It stops early after 3 lost samples in a row or at limit-ms.
//
// Requests: POST URL with Content-Type: application/json, A2A-Version: 1.0,
// X-Participant-Id: bench (and Accept: text/event-stream for the streams).
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const [mode, ...rest] = process.argv.slice(2);
const opt = {};
for (const a of rest) {
	const m = /^--([a-z-]+)=(.*)$/s.exec(a);
	if (!m) {
		console.error(`streams.mjs: bad argument ${a}`);
		process.exit(2);
	}
	opt[m[1]] = m[2];
}
const num = (k, d) => {
	const v = opt[k] === undefined ? d : Number(opt[k]);
	if (!Number.isFinite(v) || v < 0) {
		console.error(`streams.mjs: --${k} must be a number`);
		process.exit(2);
	}
	return v;
};
const base = opt.url ?? '';
let url;
try {
	url = new URL(base);
} catch {
	console.error('streams.mjs: --url=http://127.0.0.1:PORT/ is required');
	process.exit(2);
}
if (url.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
	console.error(`streams.mjs: refusing a non-loopback URL: ${base}`);
	process.exit(2);
}
const tasks = (opt.tasks ?? '').split(',').filter(Boolean);
if (tasks.length === 0) {
	console.error('streams.mjs: --tasks=ID,ID,… is required');
	process.exit(2);
}
const now = () => performance.now();
const t0 = now();
const say = (s) => process.stdout.write(s + '\n');

// The parent (bench/streams.sh) going away ends this process too: nothing outlives a run.
const parent = num('parent', 0);
if (parent > 0)
	setInterval(() => {
		try {
			process.kill(parent, 0);
		} catch {
			process.exit(3);
		}
	}, 1000).unref();

let rpcSeq = 1000;
const HEADERS = { 'Content-Type': 'application/json', 'A2A-Version': '1.0', 'X-Participant-Id': 'bench' };

// One SubscribeToTask stream. cb.event(sr, t) per event (sr = the StreamResponse, null
// if unparsable), cb.ping(), cb.end(why) once when it ends for any reason.
class Stream {
	constructor(taskId, cb) {
		this.taskId = taskId;
		this.status = 0;
		this.ended = false;
		this.events = 0;
		const body = JSON.stringify({ jsonrpc: '2.0', id: ++rpcSeq, method: 'SubscribeToTask', params: { id: taskId } });
		// agent: false = a connection of its own, never pooled or reused.
		this.req = http.request(url, {
			method: 'POST',
			agent: false,
			headers: { ...HEADERS, Accept: 'text/event-stream', 'Content-Length': Buffer.byteLength(body) },
		}, (res) => {
			this.status = res.statusCode;
			const ct = res.headers['content-type'] ?? '';
			if (res.statusCode !== 200 || !ct.startsWith('text/event-stream')) {
				let text = '';
				res.setEncoding('utf8');
				res.on('data', (c) => (text += c.length < 4096 ? c : ''));
				res.on('end', () => this.end(res.statusCode !== 200 ? `http-${res.statusCode}` : 'rpc-error', text));
				res.on('error', () => this.end(`http-${res.statusCode}`, text));
				return;
			}
			cb.open?.();
			res.setEncoding('utf8');
			let buf = '';
			let data = [];
			res.on('data', (chunk) => {
				const t = now();
				buf += chunk;
				let nl;
				while ((nl = buf.indexOf('\n')) >= 0) {
					let line = buf.slice(0, nl);
					buf = buf.slice(nl + 1);
					if (line.endsWith('\r'))
						line = line.slice(0, -1);
					if (line === '') {
						if (data.length > 0) {
							let sr = null;
							try {
								sr = JSON.parse(data.join('\n'))?.result ?? null;
							} catch {}
							this.events++;
							cb.event?.(sr, t);
						}
						data = [];
					} else if (line.startsWith(':')) {
						cb.ping?.();
					} else if (line.startsWith('data:')) {
						data.push(line.slice(5).replace(/^ /, ''));
					}
				}
			});
			res.on('end', () => this.end('closed'));
			res.on('error', () => this.end('closed'));
			res.on('close', () => this.end('closed'));
		});
		this.req.on('error', (err) => this.end('error', String(err)));
		this.req.end(body);
		this.cb = cb;
	}

	end(why, detail = '') {
		if (this.ended)
			return;
		this.ended = true;
		this.cb.end?.(why, detail);
	}

	close() {
		this.ended = true; // our own doing: not reported
		this.req.destroy();
	}
}

// One waiting GetTask (A2A 1.1 currentGeneration), renewed whenever it is answered; the
// same callbacks as Stream: open and event once it is held, ping per answer, end when
// refused or failed.
class LongPoll {
	constructor(taskId, cb) {
		this.taskId = taskId;
		this.cb = cb;
		this.ended = false;
		this.held = false;
		this.issue();
	}

	issue() {
		const body = JSON.stringify({
			jsonrpc: '2.0', id: ++rpcSeq, method: 'GetTask',
			params: { id: this.taskId, currentGeneration: '1000000000', historyLength: 0 },
		});
		let answered = false;
		this.req = http.request(url, {
			method: 'POST',
			agent: false,
			headers: { ...HEADERS, 'A2A-Version': '1.1', 'Content-Length': Buffer.byteLength(body) },
		}, (res) => {
			answered = true;
			let text = '';
			res.setEncoding('utf8');
			res.on('data', (c) => (text += c));
			res.on('end', () => {
				if (this.ended)
					return;
				let ok = false;
				try {
					ok = res.statusCode === 200 && JSON.parse(text)?.result?.id === this.taskId;
				} catch {}
				if (!ok)
					return this.end(res.statusCode !== 200 ? `http-${res.statusCode}` : 'rpc-error', text.slice(0, 300));
				this.cb.ping?.();
				this.issue();
			});
			res.on('error', () => this.end('closed'));
		});
		this.req.on('error', (err) => this.end('error', String(err)));
		this.req.on('finish', () => setTimeout(() => {
			if (!answered && !this.held && !this.ended) {
				this.held = true;
				this.cb.open?.();
				this.cb.event?.(null, now());
			}
		}, 300));
		this.req.end(body);
	}

	end(why, detail = '') {
		if (this.ended)
			return;
		this.ended = true;
		this.cb.end?.(why, detail);
	}

	close() {
		this.ended = true;
		this.req.destroy();
	}
}

// ------------------------------------------------------------------ hold
function hold() {
	const n = num('n', 0);
	const openMs = num('open-ms', 20000);
	const batch = Math.max(1, num('batch', 50));
	const limitMs = num('limit-ms', 300000);
	const streams = [];
	let opened = 0, first = 0, closed = 0, errors = 0, events = 0, pings = 0, waiting = 0, started = 0;
	const refused = {};
	let reported = false;
	let stopOpening = false;
	let lastError = '';

	const report = () => {
		if (reported)
			return;
		reported = true;
		if (first === n)
			say(`ready ${n} ${Math.round(now() - t0)}`);
		else
			say(`partial ${first} ${n} ${Math.round(now() - t0)}`);
	};
	const startOne = () => {
		const i = started++;
		let gotFirst = false;
		waiting++;
		const Kind = opt.kind === 'longpoll' ? LongPoll : Stream;
		const s = new Kind(tasks[i % tasks.length], {
			open: () => opened++,
			event: () => {
				events++;
				if (!gotFirst) {
					gotFirst = true;
					first++;
					waiting--;
					more();
				}
			},
			ping: () => pings++,
			end: (why, detail) => {
				if (!gotFirst) {
					waiting--;
					more();
				}
				if (why === 'closed')
					closed++;
				else if (why === 'error') {
					errors++;
					lastError = detail;
				} else
					refused[why] = (refused[why] ?? 0) + 1;
			},
		});
		streams.push(s);
	};
	function more() {
		while (!stopOpening && started < n && waiting < batch)
			startOne();
		if (!reported && first === n)
			report();
		else if (!reported && started === n && waiting === 0)
			report(); // every stream answered one way or another: nothing more will come
	}
	const finish = (code) => {
		report();
		const r = Object.entries(refused).map(([k, v]) => `${k}:${v}`).join(',') || '0';
		say(`final opened=${opened} first=${first} pending=${waiting} unstarted=${n - started} closed=${closed} refused=${r} errors=${errors} events=${events} pings=${pings}`);
		if (lastError)
			console.error(`streams.mjs: last socket error: ${lastError}`);
		for (const s of streams)
			s.close();
		process.exit(code);
	};
	setTimeout(() => {
		stopOpening = true;
		report();
	}, openMs).unref();
	setTimeout(() => finish(0), limitMs);
	process.on('SIGTERM', () => finish(0));
	process.on('SIGINT', () => finish(0));
	if (n === 0)
		report();
	more();
}

// ------------------------------------------------------------------ latency
async function latency() {
	const samples = num('samples', 200);
	const openMs = num('open-ms', 20000);
	const sampleMs = num('sample-ms', 5000);
	const limitMs = num('limit-ms', 90000);
	const gapMs = num('gap-ms', 50);
	const none = (why) => {
		say(`latency none reason=${why}`);
		process.exit(0);
	};
	setTimeout(() => none('time-limit'), openMs + limitMs + 2 * sampleMs + 5000).unref();

	// The subscribers; waiter[task] = resolve(t) for the INPUT_REQUIRED status we wait for.
	const waiter = new Map();
	let firsts = 0;
	let ends = 0;
	let allFirst;
	const allFirstP = new Promise((r) => (allFirst = r));
	const streams = tasks.map((task) => {
		let got = false;
		return new Stream(task, {
			event: (sr, t) => {
				if (!got) {
					got = true;
					if (++firsts === tasks.length)
						allFirst(true);
					return;
				}
				if (sr?.statusUpdate?.status?.state === 'TASK_STATE_INPUT_REQUIRED') {
					const w = waiter.get(task);
					if (w) {
						waiter.delete(task);
						w(t);
					}
				}
			},
			end: () => {
				ends++;
				const w = waiter.get(task);
				if (w) {
					waiter.delete(task);
					w(null);
				}
				if (!got && firsts + ends >= tasks.length)
					allFirst(false);
			},
		});
	});
	const timer = setTimeout(() => allFirst(false), openMs);
	const ok = await allFirstP;
	clearTimeout(timer);
	if (!ok) {
		for (const s of streams)
			s.close();
		none(`only-${firsts}-of-${tasks.length}-streams-opened`);
	}

	// The sender: one keep-alive connection, one request at a time.
	const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
	const send = (task, i) =>
		new Promise((resolve) => {
			const body = JSON.stringify({
				jsonrpc: '2.0',
				id: ++rpcSeq,
				method: 'SendMessage',
				params: { message: { messageId: `lat-${process.pid}-${i}`, role: 'ROLE_USER', taskId: task, parts: [{ text: `follow-up ${i}` }] } },
			});
			const req = http.request(url, {
				method: 'POST',
				agent,
				timeout: sampleMs,
				headers: { ...HEADERS, 'Content-Length': Buffer.byteLength(body) },
			}, (res) => {
				let text = '';
				res.setEncoding('utf8');
				res.on('data', (c) => (text += c));
				res.on('end', () => {
					const t = now();
					let state = null;
					try {
						state = JSON.parse(text)?.result?.task?.status?.state ?? null;
					} catch {}
					resolve({ t, ok: res.statusCode === 200 && state === 'TASK_STATE_INPUT_REQUIRED' });
				});
			});
			req.on('timeout', () => req.destroy(new Error('timeout')));
			req.on('error', () => resolve({ t: now(), ok: false }));
			req.end(body);
		});

	const lat = [], resp = [], after = [];
	let lost = 0, failed = 0, lostInRow = 0;
	const tStart = now();
	let busy = 0; // time spent in samples, without the pauses
	for (let i = 0; i < samples; i++) {
		if (now() - tStart > limitMs)
			break;
		const task = tasks[i % tasks.length];
		if (gapMs > 0)
			await new Promise((r) => setTimeout(r, Math.random() * gapMs));
		const arrived = new Promise((resolve) => {
			waiter.set(task, resolve);
			setTimeout(() => {
				if (waiter.get(task) === resolve) {
					waiter.delete(task);
					resolve(null);
				}
			}, sampleMs);
		});
		const ts = now();
		const [r, te] = await Promise.all([send(task, i), arrived]);
		busy += now() - ts;
		if (!r.ok)
			failed++;
		if (te === null) {
			lost++;
			if (++lostInRow >= 3)
				break;
			continue;
		}
		lostInRow = 0;
		lat.push(te - ts);
		resp.push(r.t - ts);
		after.push(te - r.t);
	}
	for (const s of streams)
		s.close();
	agent.destroy();
	if (lat.length === 0)
		none(`no-event-arrived-lost-${lost}-failed-${failed}`);
	const sorted = (a) => [...a].sort((x, y) => x - y);
	const pct = (a, p) => a[Math.min(a.length - 1, Math.max(0, Math.ceil((p / 100) * a.length) - 1))];
	const med = (a) => (a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2);
	const L = sorted(lat);
	const f = (x) => x.toFixed(1);
	say(`latency samples=${L.length} lost=${lost} failed=${failed} min=${f(L[0])} median=${f(med(L))} p90=${f(pct(L, 90))} p99=${f(pct(L, 99))} max=${f(L[L.length - 1])} resp_median=${f(med(sorted(resp)))} after_resp_median=${f(med(sorted(after)))} busy_s=${(busy / 1000).toFixed(1)} elapsed_s=${((now() - tStart) / 1000).toFixed(1)}`);
	process.exit(0);
}

if (mode === 'hold')
	hold();
else if (mode === 'latency')
	latency();
else {
	console.error('usage: node bench/streams.mjs hold|latency --url=… --tasks=… (see the header)');
	process.exit(2);
}
