/*
 * cmd-merge.c - `callprof merge -o OUT FILE...`: many profiles into one
 * profile file, each call path with its spread across them (report.h:
 * cp_merge_files).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/options.h"
#include "report/report.h"
#include "util/text.h"
#include "util/util.h"

static const char *const merge_usage[] = {
	"callprof merge -o OUT [--no-compensate] [--quiet] [--debug-dir=DIR] [--symfs=DIR] FILE...",
	NULL,
};

int cmd_merge(int argc, const char **argv)
{
	int no_compensate = 0, quiet = 0, n, ret;
	const char *out = NULL, **debug_dirs = NULL, *symfs = NULL;
	struct cp_report_opts ro = { 0 };
	struct cp_merge_result res = { 0 };
	const struct cp_option opts[] = {
		{ CP_OPT_STRING, 'o', "output", &out, "OUT", "the merged profile to write" },
		{ CP_OPT_FLAG, 0, "no-compensate", &no_compensate, NULL,
		  "add raw times: do not subtract each input's calibrated hook overhead" },
		{ CP_OPT_FLAG, 'q', "quiet", &quiet, NULL, "no progress bar and no summary line" },
		{ CP_OPT_LIST, 0, "debug-dir", &debug_dirs, "DIR", "also look for debug files in DIR" },
		{ CP_OPT_STRING, 0, "symfs", &symfs, "DIR",
		  "look for the recorded binaries under DIR (a copy of the recording machine's files)" },
		{ CP_OPT_END },
	};

	n = cp_parse_options(argc, argv, opts, merge_usage, 0);
	if (!out)
		cp_usage_error(merge_usage, "give the merged profile's name with -o OUT");
	if (!*out)
		cp_usage_error(merge_usage, "-o needs a file name");
	if (n < 1)
		cp_usage_error(merge_usage, "give the profiles to merge");
	for (int i = 0; i < n; i++)
		cp_outfile__add_input(argv[i]);
	if (cp_outfile__check(out, CP_OUTFILE_RENAME)) { /* before the work of reading every input */
		free(debug_dirs);
		return 1;
	}
	ro.debug_dirs = debug_dirs;
	ro.symfs = symfs;
	ro.no_compensate = no_compensate;
	ret = cp_merge_files(argv, (uint32_t)n, out, &ro, !quiet && isatty(2), &res);
	free(debug_dirs);
	if (ret)
		return 1;
	if (!quiet)
		fprintf(stderr, "callprof: wrote %s: %u profile%s from %u host%s, %" PRIu64 " calls, %"
			PRIu64 " call paths\n", cp_visible(out), res.inputs, res.inputs == 1 ? "" : "s", res.hosts,
			res.hosts == 1 ? "" : "s", res.calls, res.paths);
	return 0;
}
