/* SPDX-License-Identifier: Apache-2.0 */
/* metrics.h — the site's counters (OBS-2, decision-070): one small file, mapped shared
 * by every worker process of the installation (FastCGI processes of request threads,
 * mod_fcgid's many processes, plain-CGI processes), counted into with relaxed atomic
 * adds. A scrape reads the file, so what it shows is the sum over every process that
 * ever served, not one process's share; counters survive a process's exit. Nothing here
 * knows an A2A method or an error: callers pass small indexes (bind/ names them).
 *
 * Before th_mx_open (the CLI, unit tests that do not ask for it) and after a failed
 * open, every counting call does nothing. */
#ifndef TH_UTIL_METRICS_H
#define TH_UTIL_METRICS_H

#include <stdint.h>

#include "util/err.h"

#define TH_MX_METHODS 16  /* method indexes 0..15 */
#define TH_MX_OUTCOMES 32 /* outcome indexes 0..31 */
#define TH_MX_BOUNDS 13   /* finite latency bucket bounds (th_mx_bound_us) */
#define TH_MX_SLOTS 256   /* processes whose open streams are counted at once */
#define TH_MX_TURN_OUTCOMES 2

/* The file's layout (the version is in its name and in magic; a layout change is a new
 * file, never a reinterpreted one). Read only through th_mx_snapshot. */
struct th_mx_slot {
	int32_t pid;     /* the process counting here; 0: free */
	int32_t streams; /* its open streams */
};
struct th_mx_data {
	char magic[8]; /* "THMX0001" */
	uint64_t requests[TH_MX_METHODS][TH_MX_OUTCOMES];
	/* Per bucket, not cumulative: [i] counts durations <= bound i and above bound i-1;
	 * [TH_MX_BOUNDS] the ones above the last bound. */
	uint64_t latency[TH_MX_METHODS][TH_MX_BOUNDS + 1];
	uint64_t latency_sum_us[TH_MX_METHODS];
	uint64_t turns[TH_MX_TURN_OUTCOMES]; /* 0: done, 1: failed */
	struct th_mx_slot slots[TH_MX_SLOTS];
};

/* The upper bound of latency bucket i (0 <= i < TH_MX_BOUNDS), in microseconds. */
int64_t th_mx_bound_us(int i);

/* Maps path (created 0600 when missing, grown to the layout's size) for this process.
 * Once per process: a later call with the same process mapped returns TH_OK. A file of
 * another layout or one that cannot be opened or mapped is TH_EINTERNAL naming path
 * and why; counting then stays off in this process. */
th_err th_mx_open(const char *path, struct th_error *e);
/* 1 when this process counts into a file. */
int th_mx_on(void);
/* Unmaps (tests; a worker keeps the map until it exits). */
void th_mx_close(void);

/* One request: its method and outcome, and how long it took (latency histogram). */
void th_mx_request(int method, int outcome, int64_t duration_us);
/* One turn run to its end: failed 0 (done) or 1. */
void th_mx_turn(int failed);
/* This process's open streams go up (+1) or down (-1). */
void th_mx_streams(int delta);

/* A copy of the counters as of now; open streams summed over the slots of processes
 * that still run (a killed process's streams stop counting). TH_EINTERNAL when no file
 * is mapped. */
struct th_mx_snapshot {
	struct th_mx_data d;
	int64_t open_streams;
};
th_err th_mx_snapshot(struct th_mx_snapshot *out, struct th_error *e);

#endif
