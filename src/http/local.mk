# src/http — the carriers (FastCGI, CGI, in-memory double) behind struct th_http_io.
noinst_LTLIBRARIES += src/http/libth_http.la
src_http_libth_http_la_SOURCES = \
	src/http/http.c src/http/http.h \
	src/http/http_cgi.c \
	src/http/http_fcgi.c \
	src/http/http_mem.c \
	src/http/http_handed.c \
	src/http/fcgi_wire.c
src_libth_la_LIBADD += src/http/libth_http.la

check_PROGRAMS += tests/unit/check_http
TESTS += tests/unit/check_http
tests_unit_check_http_SOURCES = tests/unit/check_http.c
tests_unit_check_http_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_http_LDADD = src/http/libth_http.la src/util/libth_util.la \
	$(CHECK_LIBS) $(TH_LIBS)
