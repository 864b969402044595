// SPDX-License-Identifier: Apache-2.0
// Interop over HTTP+JSON: the A2A JS SDK with preferredTransports ['HTTP+JSON'].
import { run } from './scenario.mjs';

await run('HTTP+JSON');
