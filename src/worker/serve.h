/* SPDX-License-Identifier: Apache-2.0 */
/* serve.h — the request loops of a worker process. */
#ifndef TH_WORKER_SERVE_H
#define TH_WORKER_SERVE_H

/* Accepts FastCGI requests on fd 0 until the web server closes it; 0, or 1 when the
 * worker could not start (the reason is on stderr). */
int th_worker_serve_fcgi(void);
/* Answers the one CGI request of this process; 0, or 1 when start-up failed (the
 * client got a 500 naming the reason). */
int th_worker_serve_cgi(void);

#endif
