noinst_LTLIBRARIES += src/util/libth_util.la
src_util_libth_util_la_SOURCES = \
	src/util/err.c src/util/err.h \
	src/util/ids.c src/util/ids.h \
	src/util/buf.c src/util/buf.h \
	src/util/jsonx.c src/util/jsonx.h \
	src/util/log.c src/util/log.h \
	src/util/idrule.c src/util/idrule.h \
	src/util/dynlib.c
src_libth_la_LIBADD += src/util/libth_util.la
