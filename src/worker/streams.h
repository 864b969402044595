/* SPDX-License-Identifier: Apache-2.0 */
/* streams.h — the stream thread of a FastCGI worker (STREAM-6).
 *
 * A stream whose first events are out is handed over by the binding (struct
 * th_bind_parked through app->parker) and followed here, so the worker goes back to
 * accepting requests at once. One thread per worker process, with its own database
 * connection, holds every parked stream in one epoll set; one poller reads the event
 * log for all of them when PRAGMA data_version says another connection committed (or
 * this process pokes it), so idle streams cost no queries. It writes the heartbeats,
 * ends a stream at its closing event or stream_max_ms, and drops one whose web-server
 * connection closed or sent FCGI_ABORT_REQUEST. Plain CGI never starts it. */
#ifndef TH_WORKER_STREAMS_H
#define TH_WORKER_STREAMS_H

#include <stddef.h>

#include "app.h"
#include "util/err.h"

struct th_config;
struct th_streams;

/* Opens the thread's own database connection and starts the thread. cfg is borrowed
 * and must outlive the thread. *out is freed by th_streams_stop. */
th_err th_streams_start(const struct th_config *cfg, struct th_streams **out, struct th_error *e);
/* Tells the stream thread to stop and th_streams_wait_recoveries to return 0, without
 * waiting or freeing: a recovery thread can then be joined before th_streams_stop. */
void th_streams_halt(struct th_streams *s);
/* Ends every open stream as a normal end of response, stops the thread, frees s. */
void th_streams_stop(struct th_streams *s);

/* The parker the binding hands streams to (room: fewer than stream_max open). */
struct th_parker *th_streams_parker(struct th_streams *s);

/* This process committed something: look at data_version now rather than at the next
 * poll (the commit changes it for the thread's connection too, so nothing is missed
 * without a poke; it only comes sooner). A no-op while no stream is open. */
void th_streams_poke(struct th_streams *s);

/* Streams open or handed over and not yet ended. */
size_t th_streams_count(struct th_streams *s);

/* TURN-7, TURN-4: the thread never runs a turn. Once a second it compares, for each
 * watched task, when the task's first live turn expires (th_turn_expiry, asked again only
 * after a commit) with the clock, and queues the tasks whose turn expired for the
 * worker's recovery thread, which waits here: the call returns the queued task ids once
 * there are some (*ids: n strings, each and the array freed by the caller with free), or
 * 0 when timeout_ms (-1: no limit) passed or the thread stopped. */
size_t th_streams_wait_recoveries(struct th_streams *s, int timeout_ms, char ***ids);

#endif
