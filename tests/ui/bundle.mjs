// SPDX-License-Identifier: Apache-2.0
// WEB-1 the committed web app is what its sources build to (decision-027): web/build.mjs, run
// with the pinned esbuild into a scratch directory, gives exactly the bytes of web/dist
// (app.js, index.html, style.css). A change to web/src, web/index.html or web/style.css
// without `node web/build.mjs` fails here. Exit 77 when esbuild is not installed.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { SRCDIR, Tap, makeTmp, removeTmp } from '../contract/lib.mjs';
import { missingModules } from '../interop/deps.mjs';

const t = new Tap();
const { buildWeb, loadEsbuild } = await import(join(SRCDIR, 'web', 'build.mjs'));
const esbuild = await loadEsbuild();
if (esbuild == null)
	missingModules(t, 'esbuild is not installed: run `npm ci` in the source tree');

const out = makeTmp('th-web-bundle-');
try {
	await t.test('WEB-1 node web/build.mjs rebuilds web/dist byte for byte (the committed bundle is current)', async () => {
		await buildWeb(out, esbuild);
		const committed = readdirSync(join(SRCDIR, 'web', 'dist')).sort();
		assert.deepEqual(readdirSync(out).sort(), committed, 'the files of web/dist');
		for (const f of committed) {
			const want = readFileSync(join(SRCDIR, 'web', 'dist', f));
			const got = readFileSync(join(out, f));
			assert.ok(want.equals(got), `web/dist/${f} differs from a fresh build (${want.length} vs ${got.length} bytes): run \`node web/build.mjs\` and commit web/dist`);
		}
	});

	await t.test('WEB-1 WEB-3 the bundle is self-contained: no URL of another origin is loaded, no inline script in index.html', async () => {
		const html = readFileSync(join(SRCDIR, 'web', 'dist', 'index.html'), 'utf8');
		const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
		assert.ok(scripts.length > 0, 'index.html loads a script');
		for (const [, attrs, body] of scripts) {
			assert.match(attrs, /\bsrc="app\.js"/, `a script without src="app.js": ${attrs}`);
			assert.equal(body.trim(), '', 'inline script in index.html');
		}
		assert.doesNotMatch(html, /\son[a-z]+=/i, 'an inline event handler in index.html');
		assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//, 'index.html loads from another origin');
		const css = readFileSync(join(SRCDIR, 'web', 'dist', 'style.css'), 'utf8');
		assert.doesNotMatch(css, /@import|url\(\s*["']?(https?:)?\/\//, 'style.css loads from another origin');
	});
} finally {
	removeTmp(out);
}
t.done();
