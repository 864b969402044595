// SPDX-License-Identifier: Apache-2.0
// CARD-SIG-1..4 (decision-066): the signed agent card behind lighttpd (two FastCGI workers),
// checked with an implementation that shares nothing with the server's: Node's crypto for
// the ES256 signature and the RFC 7638 thumbprint, and a canonical form made here (sorted
// members, JSON.stringify for the scalars: RFC 8785 for a card of strings, booleans and
// small integers). identity = bearer, so the extended card is served too.
//
//   - the well-known card carries one AgentCardSignature whose protected header is
//     {alg ES256, typ JOSE, kid = the key's thumbprint} and whose signature verifies over
//     BASE64URL(protected) '.' BASE64URL(canonical card without signatures); the same
//     check fails on a card changed in one field;
//   - its ETag is the same from every worker (a weak tag: an ES256 signature is made anew
//     in each process), and If-None-Match with it gets 304 with no body;
//   - GET /extendedAgentCard with a JWT is signed the same way, has the same ETag, and
//     answers If-None-Match with 304;
//   - the official client (@a2a-js/sdk) reads the signed card (ClientFactory.createFromUrl).
import assert from 'node:assert/strict';
import { createHash, createHmac, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { TH_BIN, Tap, makeTmp, show } from '../contract/lib.mjs';
import { findLighttpd, startLighttpdOrExit } from '../lib/interop.mjs';
import { importDep, missingModules } from './deps.mjs';

const t = new Tap();
if (!TH_BIN)
	t.skipAll('TH_BIN is not set (run through make check)');
const client = await importDep('@a2a-js/sdk/client');
if (client == null)
	missingModules(t, '@a2a-js/sdk is not installed (run `npm ci` in the source tree)');
if (findLighttpd() == null)
	t.skipAll('lighttpd is not installed');

// ------------------------------------------------------------------ key and server
const dir = makeTmp('th-interop-cardsig-');
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const keyPath = join(dir, 'card-key.pem');
writeFileSync(keyPath, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
const SECRET = '0123456789abcdef0123456789abcdef-card-sig';
const { base, stop } = startLighttpdOrExit(join(dir, 'srv'), {
	env: {
		TINY_HARNESS_IDENTITY: 'bearer',
		TINY_HARNESS_JWT_SECRET_ENV: 'TINY_HARNESS_JWT_SECRET',
		TINY_HARNESS_JWT_SECRET: SECRET,
		TINY_HARNESS_CARD_SIGNING_KEY: keyPath,
	},
});
console.log(`# lighttpd at ${base}, card_signing_key = ${keyPath} (EC P-256)`);
const origin = new URL(base).origin;
const b64url = (x) => Buffer.from(x).toString('base64url');
const head = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 600 }))}`;
const JWT = `${head}.${createHmac('sha256', SECRET).update(head).digest('base64url')}`;

// ------------------------------------------------------------------ the verifier
// RFC 8785 for JSON values whose numbers are integers (the card's only numbers): members
// sorted by UTF-16 code units (Array.prototype.sort's order), scalars as JSON.stringify.
function canonical(v) {
	if (Array.isArray(v))
		return `[${v.map(canonical).join(',')}]`;
	if (v !== null && typeof v === 'object')
		return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
	assert.ok(typeof v !== 'number' || Number.isInteger(v), `a non-integer number ${v}`);
	return JSON.stringify(v);
}
// RFC 7638: the required members of the public JWK, in order, hashed.
const jwk = publicKey.export({ format: 'jwk' });
const THUMBPRINT = createHash('sha256')
	.update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })).digest('base64url');

// The protected header of card's one signature, after checking the signature.
function verifyCard(card) {
	assert.ok(Array.isArray(card.signatures) && card.signatures.length === 1, `signatures: ${show(card.signatures)}`);
	const [sig] = card.signatures;
	const { signatures, ...unsigned } = card;
	const input = `${sig.protected}.${b64url(canonical(unsigned))}`;
	const ok = verify('sha256', Buffer.from(input), { key: publicKey, dsaEncoding: 'ieee-p1363' },
		Buffer.from(sig.signature, 'base64url'));
	assert.ok(ok, `the ES256 signature does not verify over the canonical card (protected ${sig.protected})`);
	return JSON.parse(Buffer.from(sig.protected, 'base64url').toString('utf8'));
}

async function get(path, headers = {}) {
	const r = await fetch(new URL(path, path.startsWith('/.well-known') ? origin : base), { headers });
	const body = await r.text();
	return { status: r.status, etag: r.headers.get('etag'), cache: r.headers.get('cache-control'), body };
}

// ------------------------------------------------------------------ tests
let first;
await t.test('CARD-SIG-1 the well-known card carries an ES256 AgentCardSignature that Node\'s crypto verifies over its RFC 8785 form', async () => {
	first = await get('/.well-known/agent-card.json');
	assert.equal(first.status, 200, first.body);
	const card = JSON.parse(first.body);
	const header = verifyCard(card);
	assert.deepEqual(Object.keys(header).sort(), ['alg', 'kid', 'typ'], show(header));
	assert.equal(header.alg, 'ES256');
	assert.equal(header.typ, 'JOSE');
	assert.equal(header.kid, THUMBPRINT, 'kid is the RFC 7638 thumbprint of the key');
});

await t.test('CARD-SIG-1 a card changed in one field no longer verifies', async () => {
	const card = JSON.parse(first.body);
	card.description += '.';
	assert.throws(() => verifyCard(card), /does not verify/);
});

await t.test('CARD-SIG-2 tiny-harness card --jwks lists the public key under the signature\'s kid', async () => {
	const { spawnSync } = await import('node:child_process');
	const r = spawnSync(TH_BIN, ['card', '--jwks'], { env: { PATH: process.env.PATH, TINY_HARNESS_CARD_SIGNING_KEY: keyPath }, encoding: 'utf8' });
	assert.equal(r.status, 0, r.stderr);
	const key = JSON.parse(r.stdout).keys[0];
	assert.equal(key.kid, THUMBPRINT);
	assert.equal(key.x, jwk.x);
	assert.equal(key.y, jwk.y);
	assert.equal(key.d, undefined, 'no private part');
	const pem = (k) => k.export({ type: 'spki', format: 'pem' });
	assert.equal(pem(createPublicKey({ key, format: 'jwk' })), pem(publicKey));
});

await t.test('CARD-SIG-3 every worker gives the signed card the same ETag (weak), and If-None-Match with it gets 304 and no body', async () => {
	assert.match(first.etag ?? '', /^W\/"[0-9a-f]{16}"$/, `ETag: ${first.etag}`);
	assert.match(first.cache ?? '', /max-age=/);
	const tags = new Set();
	for (let i = 0; i < 8; i++) {
		const r = await get('/.well-known/agent-card.json');
		assert.equal(r.status, 200);
		verifyCard(JSON.parse(r.body));
		tags.add(r.etag);
	}
	assert.deepEqual([...tags], [first.etag], 'one ETag from both workers');
	for (const inm of [first.etag, first.etag.slice(2), `"other", ${first.etag}`]) {
		const r = await get('/.well-known/agent-card.json', { 'If-None-Match': inm });
		assert.equal(r.status, 304, `If-None-Match: ${inm}`);
		assert.equal(r.body, '');
		assert.equal(r.etag, first.etag);
	}
	const other = await get('/.well-known/agent-card.json', { 'If-None-Match': 'W/"0000000000000000"' });
	assert.equal(other.status, 200);
});

await t.test('CARD-SIG-3 GET /extendedAgentCard is signed too, with the card\'s ETag, and answers If-None-Match with 304', async () => {
	const auth = { Authorization: `Bearer ${JWT}`, 'A2A-Version': '1.0' };
	const r = await get('extendedAgentCard', auth);
	assert.equal(r.status, 200, r.body);
	assert.equal(verifyCard(JSON.parse(r.body)).kid, THUMBPRINT);
	assert.equal(r.etag, first.etag);
	assert.match(r.cache ?? '', /no-store/, 'SEC-4: API answers are not stored by caches');
	const again = await get('extendedAgentCard', { ...auth, 'If-None-Match': r.etag });
	assert.equal(again.status, 304, again.body);
	assert.equal(again.body, '');
});

await t.test('CARD-SIG-1 the official client\'s card resolver reads the signed card, signature kept', async () => {
	const card = await new client.DefaultAgentCardResolver().resolve(origin);
	assert.equal(card.name, 'tiny-harness');
	assert.equal(card.signatures?.length, 1, show(card.signatures));
	assert.equal(card.signatures[0].protected, JSON.parse(first.body).signatures[0].protected);
});

stop();
t.done();
