-- SPDX-License-Identifier: Apache-2.0
-- 023_stream_follows.sql (PostgreSQL): which tasks a stream follows, so that a commit
-- announces itself only when someone listens for it (SCALE-1, decision-083).
--
-- Every write that appended an event sent NOTIFY at its COMMIT. PostgreSQL then takes
-- one lock for the whole cluster (the notify queue's), writes the queue and signals every
-- listening session, each of which wakes its worker's stream thread: with perf, ~80 µs of
-- PostgreSQL's CPU per SendMessage on loopback, and every host's notifying commits in a
-- row. Announcements only shorten a stream's wait (streams also poll the WAL position
-- every stream_poll_ms), so a commit need not announce what no stream follows.
--
-- A row says: follower (one worker's stream thread, or one request following a stream
-- itself) follows task_id until until_ms (the server's clock, epoch ms). Followers renew
-- their rows well before that, so the rows of a follower that died lapse by themselves.
-- UNLOGGED: the rows are worth nothing after a crash (every session ends with it, and
-- the followers put their rows again at their next renewal); writing them costs no WAL.
CREATE UNLOGGED TABLE stream_follows (
	task_id text NOT NULL,
	follower text NOT NULL,
	until_ms bigint NOT NULL,
	PRIMARY KEY (task_id, follower)
);
