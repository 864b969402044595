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
	src/harness/intrinsics.c src/harness/intrinsics.h \
	src/harness/status.c src/harness/status.h \
	src/harness/view.c src/harness/view.h \
	src/harness/commands.c src/harness/commands.h \
	src/harness/builtins.c src/harness/builtins.h \
	src/harness/turn.c src/harness/turn.h \
	src/harness/control.c src/harness/control.h \
	src/harness/intake.c src/harness/intake.h \
	src/harness/pushcfg.c src/harness/pushcfg.h \
	src/harness/stream.c src/harness/stream.h \
	src/harness/query.c
src_libth_la_LIBADD += src/harness/libth_harness.la
nodist_src_harness_libth_harness_la_SOURCES = src/harness/intrinsics_schemas.c

# The intrinsic tools' input schemas (TURN-3) are the committed JSON files; the binary
# carries them (a model is offered exactly these).
TH_INTRINSIC_SCHEMAS = \
	$(top_srcdir)/docs/a2a/ext/intrinsics/ask_participant.json \
	$(top_srcdir)/docs/a2a/ext/intrinsics/complete_step.json \
	$(top_srcdir)/docs/a2a/ext/intrinsics/create_plan.json \
	$(top_srcdir)/docs/a2a/ext/intrinsics/emit_ui.json \
	$(top_srcdir)/docs/a2a/ext/intrinsics/set_participant_role.json \
	$(top_srcdir)/docs/a2a/ext/intrinsics/spawn_subtask.json
BUILT_SOURCES += src/harness/intrinsics_schemas.c
CLEANFILES += src/harness/intrinsics_schemas.c
EXTRA_DIST += src/harness/gen-intrinsics.sh

src/harness/intrinsics_schemas.c: $(top_srcdir)/src/harness/gen-intrinsics.sh $(TH_INTRINSIC_SCHEMAS)
	$(AM_V_GEN)$(MKDIR_P) src/harness && \
	$(SHELL) $(top_srcdir)/src/harness/gen-intrinsics.sh $(TH_INTRINSIC_SCHEMAS) > $@.tmp && \
	mv $@.tmp $@
