// SPDX-License-Identifier: Apache-2.0
// Interop over JSON-RPC: the A2A JS SDK's default transport choice (the card lists JSONRPC first).
import { run } from './scenario.mjs';

await run('JSONRPC');
