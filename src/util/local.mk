noinst_LTLIBRARIES += src/util/libth_util.la
src_util_libth_util_la_SOURCES = \
	src/util/err.c src/util/err.h \
	src/util/ids.c src/util/ids.h \
	src/util/buf.c src/util/buf.h \
	src/util/jsonx.c src/util/jsonx.h \
	src/util/log.c src/util/log.h \
	src/util/idrule.c src/util/idrule.h \
	src/util/memo.c src/util/memo.h \
	src/util/text.c src/util/text.h \
	src/util/netaddr.c src/util/netaddr.h \
	src/util/rate.c src/util/rate.h \
	src/util/curlx.c src/util/curlx.h \
	src/util/jwt.c src/util/jwt.h \
	src/util/dynlib.c
# decision-022: the shared-object names configure found.
src_util_libth_util_la_CPPFLAGS = $(AM_CPPFLAGS) -DTH_CURL_SONAME='"$(TH_CURL_SONAME)"' \
	-DTH_CRYPTO_SONAME='"$(TH_CRYPTO_SONAME)"' -DTH_PQ_SONAME='"$(TH_PQ_SONAME)"'
src_libth_la_LIBADD += src/util/libth_util.la
