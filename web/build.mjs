// SPDX-License-Identifier: Apache-2.0
// build.mjs — rebuilds the web app's committed bundle (decision-027):
//
//   node web/build.mjs [OUTDIR]     (default: web/dist next to this file)
//
// bundles web/src/app.js with the pinned esbuild (package.json) and its imports (the pinned
// @a2ui/lit and @a2ui/web_core) into OUTDIR/app.js, one classic script, and copies
// web/index.html and web/style.css beside it. The output depends only on the inputs and the
// pinned versions: paths in it are relative to the source tree, so a rebuild anywhere gives
// the same bytes (tests/ui/bundle.mjs checks that the committed web/dist is current).
// Modules are found in the source tree's node_modules, then in TH_NODE_MODULES and NODE_PATH.
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = dirname(fileURLToPath(import.meta.url));
const root = resolve(web, '..');

export function moduleDirs() {
	const dirs = [join(root, 'node_modules')];
	for (const d of [process.env.TH_NODE_MODULES, ...(process.env.NODE_PATH ?? '').split(delimiter)])
		if (d && !dirs.includes(d))
			dirs.push(d);
	return dirs;
}

export async function loadEsbuild() {
	const require = createRequire(join(root, 'package.json'));
	try {
		return await import(require.resolve('esbuild', { paths: moduleDirs() }));
	} catch {
		return null;
	}
}

export async function buildWeb(outdir, esbuild) {
	const build = esbuild.build ?? esbuild.default?.build;
	mkdirSync(outdir, { recursive: true });
	await build({
		absWorkingDir: root,
		entryPoints: [join(web, 'src', 'app.js')],
		bundle: true,
		format: 'iife', // a classic script, loaded with defer
		platform: 'browser',
		target: ['es2022', 'chrome111', 'firefox111', 'safari16.4'],
		minify: true,
		legalComments: 'eof', // the licences of the bundled packages stay with them
		charset: 'utf8',
		sourcemap: false,
		outfile: join(outdir, 'app.js'),
		nodePaths: moduleDirs(),
		logLevel: 'error',
	});
	copyFileSync(join(web, 'index.html'), join(outdir, 'index.html'));
	copyFileSync(join(web, 'style.css'), join(outdir, 'style.css'));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	const esbuild = await loadEsbuild();
	if (esbuild == null) {
		console.error('build.mjs: esbuild is not installed: run `npm ci` in the source tree');
		process.exit(1);
	}
	const out = resolve(process.argv[2] ?? join(web, 'dist'));
	await buildWeb(out, esbuild);
	console.log(`build.mjs: wrote ${join(out, 'app.js')}, index.html, style.css`);
}
