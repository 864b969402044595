# src/push — push notifications (PUSH-1..PUSH-4): the four config operations, callback
# URL checks, secrets sealed with libcrypto, and the outbox sender (libcurl).
noinst_LTLIBRARIES += src/push/libth_push.la
src_push_libth_push_la_SOURCES = src/push/push.h src/push/push_int.h \
	src/push/ops.c \
	src/push/url.c \
	src/push/secret.c \
	src/push/deliver.c
src_libth_la_LIBADD += src/push/libth_push.la

