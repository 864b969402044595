noinst_LTLIBRARIES += src/service/libth_service.la
src_service_libth_service_la_SOURCES = \
	src/service/service.c src/service/service.h \
	src/service/card.c src/service/card.h
src_libth_la_LIBADD += src/service/libth_service.la
