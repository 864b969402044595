noinst_LTLIBRARIES += src/harness/libth_harness.la
src_harness_libth_harness_la_SOURCES = \
	src/harness/ext.c src/harness/ext.h
src_libth_la_LIBADD += src/harness/libth_harness.la
