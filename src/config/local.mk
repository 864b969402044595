noinst_LTLIBRARIES += src/config/libth_config.la
src_config_libth_config_la_SOURCES = \
	src/config/config.c src/config/settings.h \
	src/config/layout.c src/config/layout.h
# decision-021: the installed layout comes from the directories configure was given.
src_config_libth_config_la_CPPFLAGS = $(AM_CPPFLAGS) -DTH_BINDIR='"$(bindir)"' \
	-DTH_SYSCONFDIR='"$(sysconfdir)"' -DTH_LOCALSTATEDIR='"$(localstatedir)"' \
	-DTH_PKGDATADIR='"$(pkgdatadir)"'
src_libth_la_LIBADD += src/config/libth_config.la
