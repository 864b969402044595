/* SPDX-License-Identifier: Apache-2.0 */
/* cli.h — the command-line sub-commands of tiny-harness (STORE-2): card, migrate,
 * complete, serve. Each returns the process exit status. */
#ifndef TH_CLI_CLI_H
#define TH_CLI_CLI_H

/* Runs argv[1] with its arguments; 2 for a usage error. */
int th_cli_main(int argc, char **argv);

/* `tiny-harness keys add|list|revoke` (keys.c, SEC-1); the exit status. */
int th_cli_keys(int argc, char **argv);

/* `tiny-harness serve [--port N] [--procs N]` (serve.c, HOST-1, decision-043): becomes
 * lighttpd; returns only when it cannot, with the exit status. */
int th_cli_serve(int argc, char **argv);

/* For the sub-command files (context.c): the configuration an operator command runs
 * with, read as a worker reads it; a new th_config (th_config_free, then free), or NULL
 * with the reason printed to stderr. */
struct th_config;
struct th_config *th_cli_load_config(void);

/* Loads the configuration and opens the process context for an operator command
 * (context.c); 0, or -1 with the reason printed to stderr. th_app_close closes what it
 * opened. */
struct th_app;
int th_cli_open_app(struct th_app *app);

/* Prints the usage text to stderr. */
void th_cli_usage(void);

#endif
