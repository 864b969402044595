// SPDX-License-Identifier: Apache-2.0
// bench/cross_host.mjs A B [N] — how long an event committed through host A takes to reach a
// subscriber on host B (STORE-6): one task is created through A, B's REST subscription
// follows it, and N follow-ups are sent through A one after another. For each, the time
// from A's answer (the commit is done) to the reply's event arriving on B is taken.
// Prints "cross-host n=N median=… p90=… p99=… max=… ms". Loopback only; bounded (30 s per
// event at most).
const [A, B, nArg] = process.argv.slice(2);
const N = Number(nArg ?? 200);
for (const u of [A, B])
	if (!/^http:\/\/127\.0\.0\.1:\d+\/$/.test(u ?? '')) {
		console.error('cross_host: A and B must be loopback base URLs ending in /');
		process.exit(2);
	}
const headers = { 'Content-Type': 'application/json', 'A2A-Version': '1.0', 'X-Participant-Id': 'bench' };
let rpcId = 0;
async function send(text, taskId) {
	const message = { messageId: `x-${process.pid}-${++rpcId}`, role: 'ROLE_USER', parts: [{ text }] };
	if (taskId)
		message.taskId = taskId;
	const r = await fetch(A, { method: 'POST', headers,
		body: JSON.stringify({ jsonrpc: '2.0', id: rpcId, method: 'SendMessage', params: { message } }) });
	const body = await r.json();
	if (!body.result?.task)
		throw new Error(`SendMessage through A: ${JSON.stringify(body).slice(0, 200)}`);
	return body.result.task.id;
}

const task = await send('cross-host latency');
const ctl = new AbortController();
const res = await fetch(`${B}tasks/${task}:subscribe`, { headers, signal: ctl.signal });
if (res.status !== 200) {
	console.error(`cross_host: subscribe on B answered ${res.status}`);
	process.exit(1);
}
// Texts seen on B's stream, with the time each arrived; waiters resolve on theirs.
const waiting = new Map();
const seen = new Map();
(async () => {
	const dec = new TextDecoder();
	let buf = '';
	try {
		for await (const chunk of res.body) {
			const at = performance.now();
			buf += dec.decode(chunk, { stream: true });
			let cut;
			while ((cut = buf.indexOf('\n\n')) >= 0) {
				const frame = buf.slice(0, cut);
				buf = buf.slice(cut + 2);
				for (const line of frame.split('\n')) {
					if (!line.startsWith('data:'))
						continue;
					for (const m of line.matchAll(/"text":"([^"]*)"/g)) {
						seen.set(m[1], at);
						waiting.get(m[1])?.(at);
					}
				}
			}
		}
	} catch {
		/* aborted at the end */
	}
})();

const lat = [];
for (let i = 1; i <= N; i++) {
	const text = `ping ${i}`;
	const want = `echo: ${text}`;
	const arrived = new Promise((resolve, reject) => {
		waiting.set(want, resolve);
		setTimeout(() => reject(new Error(`no event for "${text}" on B within 30 s`)), 30000).unref();
	});
	await send(text, task);
	const answered = performance.now();
	const at = seen.get(want) ?? await arrived;
	lat.push(Math.max(0, at - answered));
	waiting.delete(want);
}
ctl.abort();
lat.sort((x, y) => x - y);
const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))].toFixed(2);
console.log(`cross-host n=${lat.length} median=${q(0.5)} p90=${q(0.9)} p99=${q(0.99)} max=${lat[lat.length - 1].toFixed(2)} ms`);
process.exit(0);
