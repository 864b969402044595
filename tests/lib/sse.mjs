// SPDX-License-Identifier: Apache-2.0
// sse.mjs — reads a text/event-stream body as it arrives, for the Node tests that follow
// streams (tests/integration/streaming.mjs, many_streams.mjs, torture.mjs). The framing is
// the HTML standard's: lines end in LF or CRLF, a blank line ends an event, a line starting
// with ':' is a comment, "field: value" sets a field (one space after the colon dropped).
//
//   const feed = sseReader({ onEvent, onComment });  res.on('data', (chunk) => feed(chunk));
//
// onEvent({ id, event, raw }) for each event that set an id or data (id and event: the field's
// text or null; raw: its data lines joined with '\n'); onComment(text) for each comment,
// trimmed (a server's ": ping" heartbeat). A chunk may end anywhere: the rest waits for the
// next one.
export function sseReader({ onEvent, onComment = () => {} }) {
	let buf = '';
	let cur = { id: null, event: null, data: [] };
	return (chunk) => {
		buf += chunk;
		for (let nl; (nl = buf.indexOf('\n')) >= 0;) {
			let line = buf.slice(0, nl);
			buf = buf.slice(nl + 1);
			if (line.endsWith('\r'))
				line = line.slice(0, -1);
			if (line === '') {
				if (cur.data.length > 0 || cur.id !== null)
					onEvent({ id: cur.id, event: cur.event, raw: cur.data.join('\n') });
				cur = { id: null, event: null, data: [] };
			} else if (line.startsWith(':')) {
				onComment(line.slice(1).trim());
			} else {
				const c = line.indexOf(':');
				const field = c < 0 ? line : line.slice(0, c);
				let value = c < 0 ? '' : line.slice(c + 1);
				if (value.startsWith(' '))
					value = value.slice(1);
				if (field === 'id')
					cur.id = value;
				else if (field === 'event')
					cur.event = value;
				else if (field === 'data')
					cur.data.push(value);
			}
		}
	};
}
