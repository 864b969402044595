noinst_LTLIBRARIES += src/harness/libth_harness.la
src_harness_libth_harness_la_SOURCES = \
	src/harness/harness.h \
	src/harness/ext.c src/harness/ext.h \
	src/harness/access.c src/harness/access.h \
	src/harness/envelope.c src/harness/envelope.h \
	src/harness/events.c src/harness/events.h \
	src/harness/channel.c src/harness/channel.h \
	src/harness/task.c src/harness/task.h \
	src/harness/subtask.c src/harness/subtask.h \
	src/harness/ui.c src/harness/ui.h \
	src/harness/status.c src/harness/status.h \
	src/harness/view.c src/harness/view.h \
	src/harness/commands.c src/harness/commands.h \
	src/harness/builtins.c src/harness/builtins.h \
	src/harness/turn.c src/harness/turn.h \
	src/harness/control.c src/harness/control.h \
	src/harness/intake.c src/harness/intake.h \
	src/harness/stream.c src/harness/stream.h \
	src/harness/query.c
src_libth_la_LIBADD += src/harness/libth_harness.la
