# src/turn — the turn engine: one turn of a task (turn.c) asks a slash command
# (commands.c, builtins.c) or the model, and runs the intrinsic tools a model calls
# (intrinsics.c), each through the domain's own actions. Built on domain/.
noinst_LTLIBRARIES += src/turn/libth_turn.la
src_turn_libth_turn_la_SOURCES = \
	src/turn/commands.c src/turn/commands.h \
	src/turn/builtins.c src/turn/builtins.h \
	src/turn/intrinsics.c src/turn/intrinsics.h \
	src/turn/turn.c src/turn/turn.h
src_libth_la_LIBADD += src/turn/libth_turn.la
nodist_src_turn_libth_turn_la_SOURCES = src/turn/intrinsics_schemas.c

# The intrinsic tools' input schemas (TURN-3) are the committed JSON files; the binary
# carries them (a model is offered exactly these).
TH_INTRINSIC_SCHEMAS = \
	$(top_srcdir)/docs/a2a/ext/intrinsics/ask_participant.json \
	$(top_srcdir)/docs/a2a/ext/intrinsics/complete_step.json \
	$(top_srcdir)/docs/a2a/ext/intrinsics/create_plan.json \
	$(top_srcdir)/docs/a2a/ext/intrinsics/emit_ui.json \
	$(top_srcdir)/docs/a2a/ext/intrinsics/set_participant_role.json \
	$(top_srcdir)/docs/a2a/ext/intrinsics/spawn_subtask.json
BUILT_SOURCES += src/turn/intrinsics_schemas.c
CLEANFILES += src/turn/intrinsics_schemas.c
EXTRA_DIST += src/turn/gen-intrinsics.sh

src/turn/intrinsics_schemas.c: $(top_srcdir)/src/turn/gen-intrinsics.sh $(TH_INTRINSIC_SCHEMAS)
	$(AM_V_GEN)$(MKDIR_P) src/turn && \
	$(SHELL) $(top_srcdir)/src/turn/gen-intrinsics.sh $(TH_INTRINSIC_SCHEMAS) > $@.tmp && \
	mv $@.tmp $@
