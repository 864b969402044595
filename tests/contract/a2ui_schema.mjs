// SPDX-License-Identifier: Apache-2.0
// What the A2UI module emits, checked against the official A2UI 0.9 JSON Schemas and renderer
// engine shipped in the pinned npm package @a2ui/web_core (UI-1, UI-2, UI-4): a drift between
// the C tables (src/a2ui/catalog.c) and the real basic catalog fails the build. The C side is
// reached through tests/unit/a2ui_dump (see its header).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import { SRCDIR, Tap, assertInvalid, assertValid, importDep, makeTmp, removeTmp } from './lib.mjs';

const t = new Tap();
const BUILDDIR = process.env.TH_BUILDDIR;
if (!BUILDDIR)
	t.skipAll('TH_BUILDDIR is not set (run through make check)');
const DUMP = join(BUILDDIR, 'tests', 'unit', 'a2ui_dump');

const ajvMod = await importDep('ajv/dist/2020.js');
const fmtMod = await importDep('ajv-formats');
let pkgDir = null;
try {
	const require = createRequire(join(SRCDIR, 'package.json'));
	// The package's exports map hides package.json; its main entry is <root>/src/v0_8/index.js.
	pkgDir = dirname(dirname(dirname(require.resolve('@a2ui/web_core'))));
} catch {
	pkgDir = null;
}
if (ajvMod == null || fmtMod == null || pkgDir == null)
	t.skipAll('ajv or @a2ui/web_core is not installed: run `npm ci` in the source tree');

const BASIC = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';
const SCHEMAS = join(pkgDir, 'src', 'v0_9', 'schemas');
const load = (rel) => JSON.parse(readFileSync(join(SCHEMAS, rel), 'utf8'));

// The official runner's wiring: server_to_client.json refers to "catalog.json#/$defs/...",
// which resolves to .../v0_9/catalog.json, so the basic catalog is loaded under that $id.
const Ajv2020 = ajvMod.default.default ?? ajvMod.default;
const addFormats = fmtMod.default.default ?? fmtMod.default;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const commonTypes = load('common_types.json');
const catalog = load('catalogs/basic/catalog.json');
ajv.addSchema(commonTypes);
ajv.addSchema({ ...catalog, $id: 'https://a2ui.org/specification/v0_9/catalog.json' });
const s2c = ajv.compile(load('server_to_client.json'));
const c2s = ajv.compile(load('client_to_server.json'));

// The project's own schemas are held to ajv's strict mode, as in lib.mjs.
const strictAjv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true, allowUnionTypes: true });
addFormats(strictAjv);
const emitUi = strictAjv.compile(
	JSON.parse(readFileSync(join(SRCDIR, 'docs', 'a2a', 'ext', 'intrinsics', 'emit_ui.json'), 'utf8')));

function dump(args) {
	const r = spawnSync(DUMP, args, { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 60000 });
	if (r.error)
		throw r.error;
	assert.equal(r.status, 0, `a2ui_dump ${args[0]} exited ${r.status}: ${r.stderr}`);
	return r.stdout;
}

// Runs th_a2ui_apply (mode "apply") or the client checks (mode "action") on each value.
function cRun(mode, values) {
	const tmp = makeTmp('th-a2ui-');
	try {
		const files = values.map((v, i) => {
			const f = join(tmp, `${i}.json`);
			writeFileSync(f, JSON.stringify(v));
			return f;
		});
		const out = [];
		for (let i = 0; i < files.length; i += 200)
			out.push(...dump([mode, ...files.slice(i, i + 200)]).trim().split('\n').map((l) => JSON.parse(l)));
		assert.equal(out.length, values.length);
		return out;
	} finally {
		removeTmp(tmp);
	}
}

let emitted = null;
await t.test('test_ui1_c_samples_pass_th_a2ui_apply', async () => {
	emitted = JSON.parse(dump(['emitted']));
});
if (emitted == null)
	t.done();
const validateAll = (msgs, what) => msgs.forEach((m, i) => assertValid(s2c, m, `${what} message ${i}`));

await t.test('test_ui4_confirm_surface_matches_official_schema', async () => {
	assert.equal(emitted.confirm.length, 2);
	assert.ok(emitted.confirm[0].createSurface && emitted.confirm[1].updateComponents);
	validateAll(emitted.confirm, 'confirm surface');
	const comps = emitted.confirm[1].updateComponents.components;
	const byId = Object.fromEntries(comps.map((c) => [c.id, c]));
	assert.equal(byId.root.component, 'Card');
	assert.equal(byId.question.text, 'Deploy to production?');
	assert.equal(byId.approve.action.event.name, 'approve');
	assert.equal(byId.reject.action.event.name, 'reject');
	assert.equal(byId[byId.approve.child].text, 'Approve');
	assert.equal(byId[byId.reject.child].text, 'Reject');
});

await t.test('test_ui1_sample_surfaces_match_official_schema', async () => {
	const names = Object.keys(emitted.samples);
	assert.ok(names.length >= 2);
	for (const name of names)
		validateAll(emitted.samples[name], `sample ${name}`);
	const used = new Set(emitted.samples.form.flatMap((m) => m.updateComponents?.components ?? []).map((c) => c.component));
	assert.deepEqual([...used].sort(), Object.keys(catalog.components).sort(),
		'the form sample should use every basic component');
});

await t.test('test_ui1_version_0_9_1_differs_only_by_version', async () => {
	// The schemas in @a2ui/web_core 0.11 pin version to "v0.9" (why UI-1 defaults to it).
	const msgs = emitted.confirm091;
	assert.ok(msgs.every((m) => m.version === 'v0.9.1'));
	for (const m of msgs)
		assertInvalid(s2c, m, 'a v0.9.1 message under the package schema');
	validateAll(msgs.map((m) => ({ ...m, version: 'v0.9' })), 'v0.9.1 confirm with version v0.9');
});

await t.test('test_ui1_artifact_shape', async () => {
	const a = emitted.artifact;
	assert.equal(a.artifactId, 'a2ui:1');
	assert.equal(a.name, 'a2ui');
	assert.equal(a.parts.length, 1);
	assert.equal(a.parts[0].mediaType, 'application/a2ui+json');
	assert.deepEqual(a.parts[0].metadata, { mimeType: 'application/a2ui+json' });
	assert.ok(Array.isArray(a.parts[0].data));
	validateAll(a.parts[0].data, 'artifact data');
});

await t.test('test_ui1_renderer_engine_accepts_emitted_messages', async () => {
	const wc = await importDep('@a2ui/web_core/v0_9');
	const bc = await importDep('@a2ui/web_core/v0_9/basic_catalog');
	assert.ok(wc && bc, '@a2ui/web_core/v0_9 did not load');
	const proc = new wc.MessageProcessor([bc.basicCatalog]);
	for (const m of [...emitted.confirm, ...emitted.samples.form, ...emitted.samples.lifecycle])
		proc.processMessages([m]); // web_core throws on any invalid message
	assert.ok(proc.model.getSurface('confirm-1'));
	assert.equal(proc.model.getSurface('gone'), undefined);
});

// The official schema, read the way the C tables are written: per property, a kind name.
function kindOf(s) {
	if (s.$ref) {
		const m = /#\/\$defs\/(\w+)$/.exec(s.$ref);
		return m ? m[1] : s.$ref;
	}
	if (s.oneOf)
		return 'oneOf';
	if (s.allOf)
		return 'allOf';
	if (s.const !== undefined)
		return 'const';
	if (s.enum)
		return 'enum';
	if (s.format === 'uri')
		return 'uri';
	return s.type ?? 'any';
}

function resolveLocal(ref) {
	const m = /^(.*)#\/\$defs\/(\w+)$/.exec(ref);
	if (m == null)
		return null;
	return (m[1] === '' ? catalog : commonTypes).$defs[m[2]];
}

function officialComponent(def) {
	const props = {};
	const required = new Set();
	for (const part of def.allOf) {
		const s = part.$ref ? resolveLocal(part.$ref) : part;
		for (const [k, v] of Object.entries(s.properties ?? {}))
			props[k] = v;
		for (const r of s.required ?? [])
			required.add(r);
	}
	return { props, required };
}

await t.test('test_ui1_catalog_tables_match_official_basic_catalog', async () => {
	const mine = emitted.catalog;
	assert.deepEqual(Object.keys(mine.components).sort(), Object.keys(catalog.components).sort());
	const problems = [];
	for (const [name, def] of Object.entries(catalog.components)) {
		const { props, required } = officialComponent(def);
		const myProps = mine.components[name].properties;
		const keys = new Set([...Object.keys(props), ...Object.keys(myProps)]);
		for (const k of keys) {
			if (k === 'component')
				continue;
			const o = props[k], c = myProps[k];
			if (!o || !c) {
				problems.push(`${name}.${k}: ${o ? 'missing in C' : 'not in the official catalog'}`);
				continue;
			}
			if (kindOf(o) !== c.kind)
				problems.push(`${name}.${k}: kind ${c.kind} in C, ${kindOf(o)} officially`);
			if (required.has(k) !== c.required)
				problems.push(`${name}.${k}: required ${c.required} in C, ${required.has(k)} officially`);
			const oEnum = o.enum ?? o.oneOf?.find((x) => x.enum)?.enum;
			if (oEnum || c.enum) {
				if (JSON.stringify([...(oEnum ?? [])].sort()) !== JSON.stringify([...(c.enum ?? [])].sort()))
					problems.push(`${name}.${k}: enum values differ`);
			}
		}
	}
	assert.deepEqual(Object.keys(mine.functions).sort(), Object.keys(catalog.functions).sort());
	for (const [name, def] of Object.entries(catalog.functions)) {
		const c = mine.functions[name];
		if (def.properties.returnType.const !== c.returns)
			problems.push(`function ${name}: returns ${c.returns} in C, ${def.properties.returnType.const} officially`);
		const args = def.properties.args;
		const req = new Set(args.required ?? []);
		const keys = new Set([...Object.keys(args.properties), ...Object.keys(c.args)]);
		for (const k of keys) {
			const o = args.properties[k], a = c.args[k];
			if (!o || !a) {
				problems.push(`function ${name} arg ${k}: ${o ? 'missing in C' : 'not official'}`);
				continue;
			}
			if (kindOf(o) !== a.kind)
				problems.push(`function ${name} arg ${k}: kind ${a.kind} in C, ${kindOf(o)} officially`);
			if (req.has(k) !== a.required)
				problems.push(`function ${name} arg ${k}: required differs`);
		}
		if (Boolean(args.anyOf) !== c.minOrMax)
			problems.push(`function ${name}: min-or-max rule differs`);
	}
	assert.deepEqual(problems, []);
});

const exampleDir = join(SCHEMAS, 'catalogs', 'basic', 'examples');
const examples = readdirSync(exampleDir).filter((f) => f.endsWith('.json')).sort()
	.map((f) => ({ file: f, messages: JSON.parse(readFileSync(join(exampleDir, f), 'utf8')).messages }));

await t.test('test_ui1_official_examples_accepted_by_c_validator', async () => {
	assert.ok(examples.length >= 10, `only ${examples.length} official examples found`);
	for (const ex of examples)
		validateAll(ex.messages, ex.file);
	const res = cRun('apply', examples.map((ex) => ex.messages));
	const refused = res.map((r, i) => (r.ok ? null : `${examples[i].file}: ${r.error}`)).filter(Boolean);
	assert.deepEqual(refused, []);
});

// Breaks one component of an official example in each way the schema forbids; the schema and
// the C validator must both refuse every broken copy.
function mutations() {
	const out = [];
	for (const ex of examples) {
		ex.messages.forEach((m, mi) => {
			(m.updateComponents?.components ?? []).forEach((comp, ci) => {
				const variant = (what, edit) => {
					const copy = structuredClone(ex.messages);
					edit(copy[mi].updateComponents.components[ci]);
					out.push({ what: `${ex.file} ${comp.id}: ${what}`, messages: copy, index: mi });
				};
				variant('unknown property', (c) => { c.bogusProperty = 1; });
				const { props, required } = officialComponent(catalog.components[comp.component]);
				for (const r of required)
					if (r !== 'component' && r !== 'id')
						variant(`without ${r}`, (c) => { delete c[r]; });
				for (const [k, v] of Object.entries(props))
					if (v.enum && k in comp)
						variant(`bad ${k}`, (c) => { c[k] = 'notAnEnumValue'; });
				variant('unknown type', (c) => { c.component = 'Carousel'; });
			});
		});
	}
	return out;
}

await t.test('test_ui1_broken_components_refused_by_schema_and_c', async () => {
	const muts = mutations();
	assert.ok(muts.length > 100, `only ${muts.length} mutations`);
	const schemaMisses = muts.filter((m) => s2c(m.messages[m.index])).map((m) => m.what);
	assert.deepEqual(schemaMisses, [], 'the official schema accepted a broken copy');
	const res = cRun('apply', muts.map((m) => m.messages));
	const cMisses = res.map((r, i) => (r.ok ? muts[i].what : null)).filter(Boolean);
	assert.deepEqual(cMisses, [], 'the C validator accepted a broken copy');
});

// Strings checked by a format (date, time, date-time, uri): whatever C accepts, the schema
// must accept too.
await t.test('test_ui1_formats_no_looser_than_schema', async () => {
	const bounds = ['2026-01-01', '2026-02-29', '2024-02-29', '2026-13-01', '12:00:00', '12:00:00Z',
		'23:59:60Z', '12:00:00.5+01:00', '12:00:00+0100', '2026-01-01T12:00:00Z',
		'2026-01-01t12:00:00z', '2026-01-01 12:00:00Z', '2026-01-01T12:00:00', 'tomorrow', ''];
	const urls = ['https://example.org/a?b=c#d', 'mailto:a@b.org', 'https://x.org/{a}', 'https://x.org/a b',
		'https://x.org/%zz', 'https://x.org/%41', 'urn:isbn:0451450523', 'x:', '/relative', 'https://bücher.de/'];
	const surfaces = [
		...bounds.map((min) => [{ id: 'root', component: 'DateTimeInput', value: '', min }]),
		...urls.map((url) => [{ id: 'root', component: 'Button', child: 'l',
			action: { functionCall: { call: 'openUrl', args: { url } } } },
		{ id: 'l', component: 'Text', text: 'l' }]),
	];
	const batches = surfaces.map((components) => [
		{ version: 'v0.9', createSurface: { surfaceId: 's', catalogId: BASIC } },
		{ version: 'v0.9', updateComponents: { surfaceId: 's', components } }]);
	const res = cRun('apply', batches);
	const looser = batches.filter((b, i) => res[i].ok && !s2c(b[1]))
		.map((b) => JSON.stringify(b[1].updateComponents.components[0]));
	assert.deepEqual(looser, [], 'the C validator accepted what the schema refuses');
	assert.ok(res.some((r) => r.ok) && res.some((r) => !r.ok));
});

await t.test('test_ui2_renderer_action_accepted_by_c', async () => {
	const wc = await importDep('@a2ui/web_core/v0_9');
	const bc = await importDep('@a2ui/web_core/v0_9/basic_catalog');
	const sent = [];
	const proc = new wc.MessageProcessor([bc.basicCatalog], (a) => sent.push(a));
	for (const m of emitted.confirm)
		proc.processMessages([m]);
	const surface = proc.model.getSurface('confirm-1');
	const approve = emitted.confirm[1].updateComponents.components.find((c) => c.id === 'approve');
	await surface.dispatchAction(approve.action, 'approve');
	assert.equal(sent.length, 1, 'the renderer engine dispatched no action');
	const msg = { version: 'v0.9', action: sent[0] };
	assertValid(c2s, msg, 'the renderer\'s action');
	const parts = [
		{ data: [msg], mediaType: 'application/a2ui+json' },
		{ data: msg, metadata: { mimeType: 'application/a2ui+json' } },
		{ data: { messages: [{ ...msg, version: 'v0.9.1' }] }, mediaType: 'application/a2ui+json' },
	];
	const forged = { ...msg, action: { ...msg.action, surfaceId: 'forged' } };
	const renamed = { ...msg, action: { ...msg.action, name: 'reject' } };
	const res = cRun('action', [...parts, { data: [forged], mediaType: 'application/a2ui+json' },
		{ data: [renamed], mediaType: 'application/a2ui+json' }]);
	assert.deepEqual(res.slice(0, 3).map((r) => r.error), ['', '', '']);
	assert.match(res[3].error, /unknown surface/);
	assert.match(res[4].error, /action name mismatch/);
});

await t.test('test_ui1_emit_ui_schema', async () => {
	assertValid(emitUi, { messages: emitted.confirm }, 'emit_ui input with the confirm surface');
	assertValid(emitUi, { messages: emitted.samples.form }, 'emit_ui input with the form sample');
	const noVersion = emitted.confirm.map(({ version, ...rest }) => rest);
	assertValid(emitUi, { messages: noVersion }, 'emit_ui input without versions');
	assertInvalid(emitUi, {}, 'emit_ui input without messages');
	assertInvalid(emitUi, { messages: [] }, 'emit_ui input with no message');
	assertInvalid(emitUi, { messages: [{ deleteSurface: { surfaceId: 'a' }, createSurface: { surfaceId: 'a', catalogId: BASIC } }] },
		'a message with two keys');
	assertInvalid(emitUi, { messages: [{ createSurface: { surfaceId: 'a', catalogId: 'urn:other' } }] },
		'a createSurface with another catalog');
	// What emit_ui's schema admits must be what the C validator then checks in full.
	const [r] = cRun('apply', [noVersion]);
	assert.match(r.error, /missing version/, 'without fill_version, versions are required');
});

t.done();
