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
	src/util/metrics.c src/util/metrics.h \
	src/util/curlx.c src/util/curlx.h \
	src/util/jwt.c src/util/jwt.h \
	src/util/jcs.c src/util/jcs.h \
	src/util/jws.c src/util/jws.h \
	src/util/dynlib.c
# decision-022: the shared-object names configure found.
src_util_libth_util_la_CPPFLAGS = $(AM_CPPFLAGS) -DTH_CURL_SONAME='"$(TH_CURL_SONAME)"' \
	-DTH_CRYPTO_SONAME='"$(TH_CRYPTO_SONAME)"' -DTH_PQ_SONAME='"$(TH_PQ_SONAME)"'
src_libth_la_LIBADD += src/util/libth_util.la
# CARD-SIG-1: RFC 8785 canonical JSON against the RFC's number table and our own data.
check_PROGRAMS += tests/unit/check_jcs
TESTS += tests/unit/check_jcs
tests_unit_check_jcs_SOURCES = tests/unit/check_jcs.c
tests_unit_check_jcs_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_jcs_LDADD = src/util/libth_util.la $(CHECK_LIBS) $(TH_LIBS)
