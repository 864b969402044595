// SPDX-License-Identifier: Apache-2.0
// TEN-1, TEN-2, TEN-4, TEN-6 through the official A2A JS client (@a2a-js/sdk): tiny-harness
// behind lighttpd serving the tenant "acme" beside the default one. A client made from
// <base>acme/ reads /acme/.well-known/agent-card.json, whose interfaces name tenant acme,
// and from then on sends it on every call by itself (JSON-RPC params.tenant, HTTP+JSON the
// /acme/ path prefix). On both bindings: a task made through it is acme's; the default
// tenant's client gets TaskNotFoundError for its id and the other way round, and each
// tenant's listTasks holds only its own tasks.
import assert from 'node:assert/strict';

import { TH_BIN, Tap, makeTmp, show } from '../contract/lib.mjs';
import { findLighttpd, sdkClient, startLighttpdOrExit } from '../lib/interop.mjs';
import { importDep, missingModules } from './deps.mjs';

const t = new Tap();
if (!TH_BIN)
	t.skipAll('TH_BIN is not set (run through make check)');
const sdk = await importDep('@a2a-js/sdk');
const client = await importDep('@a2a-js/sdk/client');
const errors = await importDep('@a2a-js/sdk/errors');
if ([sdk, client, errors].includes(null))
	missingModules(t, '@a2a-js/sdk is not installed (run `npm ci` in the source tree)');
if (findLighttpd() == null)
	t.skipAll('lighttpd is not installed');
const { Role } = sdk;
const { TaskNotFoundError } = errors;

const dir = makeTmp('th-interop-tenant-');
const { base, stop } = startLighttpdOrExit(dir, {
	env: { TINY_HARNESS_TENANTS: 'acme | Acme help desk | Answers for Acme staff' },
});
console.log(`# two tenants at ${base} (state in ${dir})`);

let seq = 0;
const req = (text) => ({
	tenant: '', configuration: undefined, metadata: undefined,
	message: {
		messageId: `ten-${process.pid}-${++seq}`, role: Role.ROLE_USER, contextId: '', taskId: '', extensions: [],
		referenceTaskIds: [], metadata: undefined, parts: [{ content: { $case: 'text', value: text }, mediaType: '', filename: '', metadata: undefined }],
	},
});
const list = (c) => c.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined });

await t.test('TEN-6 the card at <base>acme/ names acme in every interface, with its own name', async () => {
	const acme = await sdkClient(client, `${base}acme/`, 'JSONRPC', 'alice');
	const card = acme.agentCard;
	assert.equal(card.name, 'Acme help desk', show(card));
	assert.ok(card.supportedInterfaces.length > 0);
	for (const i of card.supportedInterfaces)
		assert.equal(i.tenant, 'acme', show(i));
});

for (const binding of ['JSONRPC', 'HTTP+JSON']) {
	const acme = await sdkClient(client, `${base}acme/`, binding, 'alice');
	const plain = await sdkClient(client, base, binding, 'alice');
	let ta, t0;
	await t.test(`TEN-1 ${binding}: the client sends acme's tenant by itself and its task is found there`, async () => {
		const r = await acme.sendMessage(req('for acme'));
		ta = r.id ?? r.task?.id;
		assert.ok(ta, show(r));
		const got = await acme.getTask({ tenant: '', id: ta });
		assert.equal(got.id, ta);
		const s = await plain.sendMessage(req('for the default tenant'));
		t0 = s.id ?? s.task?.id;
		assert.ok(t0, show(s));
	});
	await t.test(`TEN-2 ${binding}: an id from the other tenant is TaskNotFoundError, both ways`, async () => {
		await assert.rejects(plain.getTask({ tenant: '', id: ta }), TaskNotFoundError);
		await assert.rejects(acme.getTask({ tenant: '', id: t0 }), TaskNotFoundError);
		await assert.rejects(plain.cancelTask({ tenant: '', id: ta, metadata: undefined }), TaskNotFoundError);
	});
	await t.test(`TEN-4 ${binding}: listTasks holds only the tenant's own tasks`, async () => {
		const a = (await list(acme)).tasks.map((x) => x.id);
		const p = (await list(plain)).tasks.map((x) => x.id);
		assert.ok(a.includes(ta) && !a.includes(t0), show(a));
		assert.ok(p.includes(t0) && !p.includes(ta), show(p));
	});
}

stop();
t.done();
