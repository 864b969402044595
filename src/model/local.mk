noinst_LTLIBRARIES += src/model/libth_model.la
src_model_libth_model_la_SOURCES = \
	src/model/model.c src/model/model.h \
	src/model/echo.c
src_libth_la_LIBADD += src/model/libth_model.la
