# src/worker — the process above the domain: its context (process.c), its request
# loops (serve.c) and the stream thread that follows parked streams (streams.c).
noinst_LTLIBRARIES += src/worker/libth_worker.la
src_worker_libth_worker_la_SOURCES = \
	src/worker/process.c src/worker/process.h \
	src/worker/serve.c src/worker/serve.h \
	src/worker/handoff.c src/worker/handoff.h \
	src/worker/streams.c src/worker/streams.h
src_libth_la_LIBADD += src/worker/libth_worker.la
