# src/domain — the rules of a task, written once: who may do what (access), the task
# and its sub-tasks, status and sub-state, channels and questions, A2UI surfaces, the
# extension envelopes, events, and the views a client reads. Built on store/ and a2a/;
# knows neither the turn engine nor the operations above it.
noinst_LTLIBRARIES += src/domain/libth_domain.la
src_domain_libth_domain_la_SOURCES = \
	src/domain/ext.c src/domain/ext.h \
	src/domain/access.c src/domain/access.h \
	src/domain/envelope.c src/domain/envelope.h \
	src/domain/inbound.c src/domain/inbound.h \
	src/domain/events.c src/domain/events.h \
	src/domain/reply.c src/domain/reply.h \
	src/domain/channel.c src/domain/channel.h \
	src/domain/task.c src/domain/task.h \
	src/domain/subtask.c src/domain/subtask.h \
	src/domain/plan.c src/domain/plan.h \
	src/domain/ui.c src/domain/ui.h \
	src/domain/status.c src/domain/status.h \
	src/domain/view.c src/domain/view.h
src_libth_la_LIBADD += src/domain/libth_domain.la
