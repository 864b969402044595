noinst_LTLIBRARIES += src/push/libth_push.la
src_push_libth_push_la_SOURCES = src/push/push.c src/push/push.h
src_libth_la_LIBADD += src/push/libth_push.la
