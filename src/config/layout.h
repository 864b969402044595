/* SPDX-License-Identifier: Apache-2.0 */
/* layout.h — where the program finds its files (decision-021). Installed — the program
 * runs from the bindir it was configured with (`make install`, a package) — it uses the
 * autoconf directories: the configuration in $(sysconfdir)/tiny-harness, the database
 * in $(localstatedir)/lib/tiny-harness, the web-server recipes in $(pkgdatadir) and the web
 * app in $(pkgdatadir)/web. Anywhere else (a build tree, an upload to shared hosting) paths
 * are relative to the working directory, as before: conf/tiny-harness.conf,
 * ./var/tiny-harness.db, conf/commands, web/dist. */
#ifndef TH_CONFIG_LAYOUT_H
#define TH_CONFIG_LAYOUT_H

/* 1 when /proc/self/exe lies in the configured bindir. */
int th_layout_installed(void);

/* The configuration file read when TINY_HARNESS_CONF is unset (it may not exist). */
const char *th_layout_conf_file(void);
/* The database when no key names one. */
const char *th_layout_db(void);
/* The directory of registered commands when no key names one. */
const char *th_layout_commands_dir(void);
/* The directory of the web app's files (WEB-1) when no key names one. */
const char *th_layout_web_dir(void);
/* The directory of the installed recipes (lighttpd.conf, …), or NULL when not installed. */
const char *th_layout_recipes_dir(void);

#endif
