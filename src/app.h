/* app.h — the process context: what one worker process holds across requests.
 * main.c builds it once after the worker starts (never across fork) and frees it
 * at exit; every request borrows it. */
#ifndef TH_APP_H
#define TH_APP_H

#include <json-c/json.h>

struct th_config;
struct th_store;
struct th_registry;

struct th_app {
	struct th_config *cfg;        /* owned; freed by th_app_close (th_config_free) */
	struct th_store *store;       /* owned; freed by th_app_close (th_store_close) */
	struct th_registry *commands; /* owned; freed by th_app_close (th_registry_free) */
	json_object *card;            /* owned; the agent card, built once; json_object_put */
};

#endif
