/* attach-ptrace.c - placeholder, being written */
#include "cli/attach.h"
#include "util/util.h"

int cp_attach__run(const struct cp_attach_target *t, const struct cp_attach_opts *o,
		   struct cp_attach_result *r)
{
	(void)t; (void)o; (void)r;
	return cp_error("attach: not yet");
}
