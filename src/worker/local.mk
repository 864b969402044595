# src/worker — what a FastCGI worker process runs beside its request loop: the stream
# thread that follows parked streams (STREAM-6).
noinst_LTLIBRARIES += src/worker/libth_worker.la
src_worker_libth_worker_la_SOURCES = \
	src/worker/streams.c src/worker/streams.h
src_libth_la_LIBADD += src/worker/libth_worker.la
