/* SPDX-License-Identifier: Apache-2.0 */
#include "config/layout.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* From src/config/local.mk: the directories configure was given. */
#ifndef TH_BINDIR
#define TH_BINDIR "/usr/local/bin"
#endif
#ifndef TH_SYSCONFDIR
#define TH_SYSCONFDIR "/usr/local/etc"
#endif
#ifndef TH_LOCALSTATEDIR
#define TH_LOCALSTATEDIR "/usr/local/var"
#endif
#ifndef TH_PKGDATADIR
#define TH_PKGDATADIR "/usr/local/share/tiny-harness"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int installed;

static void look(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash == NULL)
		return;
	*slash = '\0';
	char bindir[PATH_MAX];
	/* The configured bindir may name a link (/bin -> /usr/bin): compare real paths. */
	installed = realpath(TH_BINDIR, bindir) != NULL && strcmp(bindir, self) == 0;
}

int th_layout_installed(void)
{
	pthread_once(&once, look);
	return installed;
}

const char *th_layout_conf_file(void)
{
	return th_layout_installed() ? TH_SYSCONFDIR "/tiny-harness/tiny-harness.conf"
	                             : "conf/tiny-harness.conf";
}

const char *th_layout_db(void)
{
	return th_layout_installed() ? TH_LOCALSTATEDIR "/lib/tiny-harness/tiny-harness.db"
	                             : "./var/tiny-harness.db";
}

const char *th_layout_commands_dir(void)
{
	return th_layout_installed() ? TH_SYSCONFDIR "/tiny-harness/commands" : "conf/commands";
}

const char *th_layout_web_dir(void)
{
	return th_layout_installed() ? TH_PKGDATADIR "/web" : "web/dist";
}

const char *th_layout_recipes_dir(void)
{
	return th_layout_installed() ? TH_PKGDATADIR : NULL;
}
