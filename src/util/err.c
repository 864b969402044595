/* SPDX-License-Identifier: Apache-2.0 */
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

th_err th_error_set(struct th_error *e, th_err code, const char *fmt, ...)
{
	if (e == NULL)
		return code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	e->code = code;
	e->task_id[0] = '\0'; /* not about a task until th_error_task says so */
	e->has_generations = 0;
	return code;
}

void th_error_task(struct th_error *e, const char *task_id)
{
	if (e == NULL)
		return;
	snprintf(e->task_id, sizeof e->task_id, "%s", task_id != NULL ? task_id : "");
}

void th_error_clear(struct th_error *e)
{
	if (e == NULL)
		return;
	e->code = TH_OK;
	e->msg[0] = '\0';
	e->task_id[0] = '\0';
	e->has_generations = 0;
}

const char *th_err_name(th_err code)
{
	static const char *const names[] = {
	    [TH_OK] = "TH_OK",
	    [TH_ENOMEM] = "TH_ENOMEM",
	    [TH_EPARSE] = "TH_EPARSE",
	    [TH_EINVALREQ] = "TH_EINVALREQ",
	    [TH_ENOMETHOD] = "TH_ENOMETHOD",
	    [TH_EMETHOD] = "TH_EMETHOD",
	    [TH_EINVAL] = "TH_EINVAL",
	    [TH_ENOTFOUND] = "TH_ENOTFOUND",
	    [TH_ENOTCANCELABLE] = "TH_ENOTCANCELABLE",
	    [TH_EPUSHUNSUPPORTED] = "TH_EPUSHUNSUPPORTED",
	    [TH_EUNSUPPORTED] = "TH_EUNSUPPORTED",
	    [TH_ECONTENTTYPE] = "TH_ECONTENTTYPE",
	    [TH_EEXTCARD] = "TH_EEXTCARD",
	    [TH_EEXTREQUIRED] = "TH_EEXTREQUIRED",
	    [TH_EVERSION] = "TH_EVERSION",
	    [TH_ETOOLARGE] = "TH_ETOOLARGE",
	    [TH_EBUSY] = "TH_EBUSY",
	    [TH_EINTERNAL] = "TH_EINTERNAL",
	    [TH_ELENGTH] = "TH_ELENGTH",
	    [TH_EUNAVAILABLE] = "TH_EUNAVAILABLE",
	    [TH_EFORBIDDEN] = "TH_EFORBIDDEN",
	    [TH_EUNAUTHENTICATED] = "TH_EUNAUTHENTICATED",
	    [TH_ETOOMANY] = "TH_ETOOMANY",
	    [TH_EGENERATION] = "TH_EGENERATION",
	};
	_Static_assert(sizeof names / sizeof names[0] == TH_ERR_COUNT, "every th_err has a name");
	if ((size_t)code >= sizeof names / sizeof names[0] || names[code] == NULL)
		return "TH_E?";
	return names[code];
}
