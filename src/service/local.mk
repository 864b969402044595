noinst_LTLIBRARIES += src/service/libth_service.la
src_service_libth_service_la_SOURCES = \
	src/service/service.c src/service/service.h \
	src/service/card.c src/service/card.h \
	src/service/cardsig.c src/service/cardsig.h
src_libth_la_LIBADD += src/service/libth_service.la
# CARD-SIG-1..4 (decision-066): the signed card verified with libcrypto, the key files
# refused by name, the ETag of a signed card.
check_PROGRAMS += tests/unit/check_cardsig
TESTS += tests/unit/check_cardsig
tests_unit_check_cardsig_SOURCES = tests/unit/check_cardsig.c
tests_unit_check_cardsig_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_cardsig_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS) $(SSL_LIBS)
