/* SPDX-License-Identifier: Apache-2.0 */
/* main.c — wiring only: a web server starts tiny-harness as a FastCGI worker (a
 * listening socket on fd 0) or runs it as a CGI program (one request from the
 * environment and stdin); a person runs it with a sub-command. */
#include <fcgiapp.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "worker/serve.h"

int main(int argc, char **argv)
{
	if (argc > 1)
		return th_cli_main(argc, argv);
	if (!FCGX_IsCGI())
		return th_worker_serve_fcgi();
	if (getenv("REQUEST_METHOD") != NULL)
		return th_worker_serve_cgi();
	th_cli_usage();
	return 2;
}
