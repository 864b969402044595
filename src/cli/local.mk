noinst_LTLIBRARIES += src/cli/libth_cli.la
src_cli_libth_cli_la_SOURCES = src/cli/cli.c src/cli/cli.h src/cli/context.c src/cli/keys.c src/cli/serve.c
src_libth_la_LIBADD += src/cli/libth_cli.la
