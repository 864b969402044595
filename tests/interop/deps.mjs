// SPDX-License-Identifier: Apache-2.0
// The npm modules of the Node tests (interop, ui): where they are found and what happens when
// they are missing. importDep (tests/contract/lib.mjs) resolves a module from the source tree's
// node_modules and then from NODE_PATH, which `make check` sets to TH_NODE_MODULES (the
// checkout's node_modules during `make distcheck`); a bare `import('x')` would ignore NODE_PATH.
// A missing module skips the test (exit 77), or fails it when TH_REQUIRE_NODE=1.
import { delimiter, join } from 'node:path';

import { SRCDIR } from '../contract/lib.mjs';

export { importDep } from '../contract/lib.mjs';

// The directories that may hold node_modules, for tools with their own resolver (esbuild).
export function nodeModuleDirs() {
	const dirs = [join(SRCDIR, 'node_modules')];
	for (const d of [process.env.TH_NODE_MODULES, ...(process.env.NODE_PATH ?? '').split(delimiter)])
		if (d && !dirs.includes(d))
			dirs.push(d);
	return dirs;
}

// Skip the whole file (t.skipAll) because modules are missing, or fail it under TH_REQUIRE_NODE=1.
export function missingModules(t, why) {
	if (process.env.TH_REQUIRE_NODE === '1') {
		console.log(`Bail out! ${why} (TH_REQUIRE_NODE=1: the npm modules must be present; searched ${nodeModuleDirs().join(', ')})`);
		process.exit(1);
	}
	t.skipAll(why);
}
