/* SPDX-License-Identifier: Apache-2.0 */
/* handoff.h — several worker processes on one SQLite file hand their writes to one of
 * them (HOST-2, decisions 084 and 093).
 *
 * Each time SQLite's write lock passes from one process to another, the new holder
 * reloads every page the other's commit made stale and commits its own copy of the hot
 * b-tree pages (decision-046). So one process, the writer, also receives on a datagram
 * socket beside the database (`<db>-handoff.sock`), and the other workers pass it the
 * requests that write, as a web server would: its threads commit them together with its
 * own in one group (decision-023), on one page cache.
 *
 * Which process writes is whoever holds an exclusive lock on `<db>-handoff.lock`: the
 * kernel drops it when that process ends, and the next worker that finds no writer
 * takes it. Nothing depends on the hand-over for correctness: SQLite's locks guard every
 * write as before, and a request that could not be handed over is served where it
 * arrived. A request is the writer's once its frame, with the web server's connection, is
 * queued on the writer's socket as one datagram: whole, or not at all. */
#ifndef TH_WORKER_HANDOFF_H
#define TH_WORKER_HANDOFF_H

#include <stddef.h>

#include "app.h"
#include "http/http.h"

struct th_handoff_point;

/* Called once this process becomes the writer: 0 when threads of its own take the
 * requests handed over (th_handoff_take on p), -1 when they cannot (the claim is given
 * up). */
typedef int (*th_handoff_on_claim)(void *arg, struct th_handoff_point *p);

/* The hand-over point of the database at db_path (a file path: not for PostgreSQL), or
 * NULL when it cannot have one (the socket's path would be too long for a Unix socket;
 * out of memory). on_claim NULL: this process hands its writes over but never claims
 * the writer's part. A request goes at once or not at all: when the writer's queue is
 * full (about ten requests, net.unix.max_dgram_qlen) or its parameters and body are
 * over 128 KiB, the process it reached serves it. Free with
 * th_handoff_point_free (which never gives up a claim: the lock is the process's until it
 * ends). */
struct th_handoff_point *th_handoff_point_open(const char *db_path, th_handoff_on_claim on_claim,
                                               void *arg);
void th_handoff_point_free(struct th_handoff_point *p);

/* Makes this process the writer when no process is: 1 it is (now or already), 0 another
 * process is or the claim failed (logged). */
int th_handoff_point_claim(struct th_handoff_point *p);

/* The request threads' view of p (app->handoff; borrowed from p). */
struct th_handoff *th_handoff_point_hook(struct th_handoff_point *p);

/* The writer's side: waits for the next request another worker hands over and fills *h
 * with it (th_http_handed_free, after th_http_handed_finish), counted as in hand until
 * th_handoff_done. 0 taken; -1 none this time (a sender of another user, a frame not
 * well formed or over max_body, one without a connection: dropped, not counted; out of
 * memory); -2 the socket is gone (stop). A writer that gets SIGTERM serves what it has
 * in hand and what waits for it before it ends (up to 5 s), and the next worker takes
 * its part. */
int th_handoff_take(struct th_handoff_point *p, size_t max_body, struct th_http_handed *h);
void th_handoff_done(struct th_handoff_point *p);

#endif
