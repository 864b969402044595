noinst_LTLIBRARIES += src/config/libth_config.la
src_config_libth_config_la_SOURCES = \
	src/config/config.c src/config/config.h
src_libth_la_LIBADD += src/config/libth_config.la
