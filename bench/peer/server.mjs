// SPDX-License-Identifier: Apache-2.0
// bench/peer/server.mjs — the benchmark's peer: an echo agent on the official A2A JS SDK.
//
//   node server.mjs --port 8080 --db /tmp/peer.db [--procs 1] [--synchronous normal]
//   PEER_PORT=8080 PEER_DB=/tmp/peer.db PEER_PROCS=1 PEER_SYNCHRONOUS=normal node server.mjs
//
// It does the work tiny-harness's echo model does, the way an SDK user would write it:
// a SendMessage creates the task (or loads it, when the message names one), answers
// with an agent message "echo: <text>" and parks the task in TASK_STATE_INPUT_REQUIRED.
// Tasks live in SQLite (WAL, synchronous=NORMAL unless --synchronous full) through the
// SDK's own DatabaseTaskStore
// (Kysely over better-sqlite3, one row per task, INSERT … ON CONFLICT DO UPDATE); the
// table comes from the SDK's `a2a-db upgrade`, run here before listening. With
// --db postgresql://… the same store runs on PostgreSQL through Kysely's PostgresDialect
// and the `pg` package's pool (--pool connections per process, default 16, as many as
// tiny-harness's request threads; issue 29 compares the two on one PostgreSQL).
//
// Served by express on 127.0.0.1 only: the agent card at /.well-known/agent-card.json and
// JSON-RPC at /. The caller is the X-Participant-Id header (as for tiny-harness), so
// tasks are scoped to it. With --procs N > 1 it forks N processes (node:cluster) that
// share the port and the database. SIGTERM/SIGINT stop it.

import { execFileSync } from 'node:child_process';
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { AgentEvent, DefaultRequestHandler } from '@a2a-js/sdk/server';
import { Role, TaskState } from '@a2a-js/sdk';
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import Database from 'better-sqlite3';
import express from 'express';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';

const HOST = '127.0.0.1';

function fail(message) {
  console.error(`peer: ${message}`);
  process.exit(2);
}

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.PEER_PORT },
    db: { type: 'string', default: process.env.PEER_DB },
    procs: { type: 'string', default: process.env.PEER_PROCS ?? '1' },
    synchronous: { type: 'string', default: process.env.PEER_SYNCHRONOUS ?? 'normal' },
    pool: { type: 'string', default: process.env.PEER_POOL ?? '16' },
  },
});
const port = Number(args.port);
const procs = Number(args.procs);
if (!Number.isInteger(port) || port <= 0 || port > 65535) fail('--port (or PEER_PORT) must be a port number');
if (!args.db) fail('--db (or PEER_DB) must name the SQLite file or a postgresql:// URL');
const onPostgres = /^postgres(ql)?:\/\//.test(args.db);
const pool = Number(args.pool);
if (!Number.isInteger(pool) || pool < 1 || pool > 256) fail('--pool must be 1…256');
if (!Number.isInteger(procs) || procs < 1 || procs > 64) fail('--procs must be 1…64');
if (args.synchronous !== 'normal' && args.synchronous !== 'full') fail('--synchronous must be normal or full');

// ------------------------------------------------------------------ the store

function openDatabase(path) {
  const sqlite = new Database(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${args.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  // Several processes may share the file; wait for the write lock rather than fail.
  sqlite.pragma('busy_timeout = 5000');
  return sqlite;
}

// The SDK leaves creating its tables to an operator step, its `a2a-db` command.
function migrate(path) {
  const bin = fileURLToPath(new URL('./node_modules/.bin/a2a-db', import.meta.url));
  execFileSync(bin, ['upgrade', '--store', 'tasks', '--url', onPostgres ? path : `sqlite:${path}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // WAL is a property of the file: set it once here, before the workers open it.
  if (!onPostgres) openDatabase(path).close();
}

// The Kysely dialect for --db: PostgreSQL through a pg pool, or the SQLite file.
async function dialect() {
  if (!onPostgres) return new SqliteDialect({ database: openDatabase(args.db) });
  const { default: pg } = await import('pg');
  return new PostgresDialect({ pool: new pg.Pool({ connectionString: args.db, max: pool }) });
}

// ------------------------------------------------------------------ the agent

function textOf(message) {
  return (message?.parts ?? [])
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .join('');
}

const echoExecutor = {
  async execute(requestContext, eventBus) {
    const { taskId, contextId, task } = requestContext;
    const userMessage = requestContext.userMessage;
    const now = new Date().toISOString();
    // The first event must be the task: the new one, or the loaded one (the handler has
    // already appended the user message to its history and saved it).
    eventBus.publish(
      AgentEvent.task(
        task ?? {
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now },
          artifacts: [],
          history: [userMessage],
          metadata: undefined,
        },
      ),
    );
    const reply = {
      messageId: randomUUID(),
      contextId,
      taskId,
      role: Role.ROLE_AGENT,
      parts: [
        {
          content: { $case: 'text', value: `echo: ${textOf(userMessage)}` },
          metadata: undefined,
          filename: '',
          mediaType: '',
        },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    // The reply rides on the status; the SDK appends it to the history.
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: reply, timestamp: now },
        metadata: undefined,
      }),
    );
    eventBus.finished();
  },
  async cancelTask(taskId, eventBus) {
    eventBus.finished();
  },
};

function agentCard() {
  const url = `http://${HOST}:${port}/`;
  return {
    name: 'a2a-js-echo-peer',
    description: 'Echo agent on @a2a-js/sdk, the benchmark peer of tiny-harness',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version: '0.1.0',
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'echo',
        description: 'Answers "echo: <text>" and waits for the next message',
        tags: ['echo'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

// The caller, as tiny-harness reads it (identity = header).
class Participant {
  constructor(id) {
    this.id = id;
  }
  get isAuthenticated() {
    return true;
  }
  get userName() {
    return this.id;
  }
}
async function participantFromHeader(req) {
  return new Participant(req.get('X-Participant-Id') || 'anonymous');
}

async function serve() {
  const db = new Kysely({ dialect: await dialect() });
  const handler = new DefaultRequestHandler(
    agentCard(),
    new DatabaseTaskStore(db),
    echoExecutor,
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    // The default keeps each INPUT_REQUIRED task's event bus in memory for a later
    // executor to publish on. This executor finishes its turn before it returns, so
    // nothing would ever use them, and a benchmark would pile up one per task.
    { keepBusAliveStates: [] },
  );
  const app = express();
  app.disable('x-powered-by');
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: participantFromHeader }));
  const server = app.listen(port, HOST, () => {
    if (cluster.isPrimary) console.error(`peer: listening on http://${HOST}:${port}/ (pid ${process.pid})`);
  });
  server.on('error', (err) => fail(`cannot listen on ${HOST}:${port}: ${err.message}`));
  server.keepAliveTimeout = 60_000;
  const stop = () => {
    server.close();
    server.closeAllConnections();
    db.destroy().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (cluster.isPrimary) {
  migrate(args.db);
  if (procs === 1) {
    serve().catch((err) => fail(err.message));
  } else {
    const workers = [];
    for (let i = 0; i < procs; i++) workers.push(cluster.fork());
    let listening = 0;
    cluster.on('listening', () => {
      if (++listening === procs) console.error(`peer: ${procs} processes on http://${HOST}:${port}/ (pid ${process.pid})`);
    });
    let stopping = false;
    cluster.on('exit', (worker, code) => {
      if (!stopping) {
        console.error(`peer: worker ${worker.process.pid} exited (${code}); stopping`);
        stopping = true;
        for (const w of workers) w.process.kill('SIGTERM');
        process.exitCode = 1;
      }
    });
    const stop = () => {
      stopping = true;
      for (const w of workers) w.process.kill('SIGTERM');
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  }
} else {
  serve().catch((err) => fail(err.message));
}
