/*
 * fuzz-export.c - the reader, the report, then every exporter (folded with
 * each metric, json, callgrind, speedscope, pprof, svg flame and icicle,
 * plist, html) written to /dev/null.
 *
 * Exporters are called as `callprof export` calls them: folded times only
 * for profiles with times, off-CPU metrics only where they were measured.
 * Each accepted input is exported with all threads merged, then with one
 * tree per thread (callgrind: a file per tree).
 */
#include "format/format.h"
#include "report/report.h"
#include "tests/fuzz/fuzz.h"

static void export_all(struct cp_report_profile *rp, FILE *fp)
{
	for (int m = CP_METRIC_CALLS; m <= CP_METRIC_INACTIVE; m++) {
		if (m != CP_METRIC_CALLS && !rp->timed)
			continue;
		if (m >= CP_METRIC_CPU && !rp->split)
			continue;
		cp_export_folded(rp, m, fp);
	}
	cp_export_json(rp, fp);
	for (uint32_t t = 0; t < rp->ntrees; t++) {
		cp_export_callgrind(rp, t, cp_report_profile__weight(rp, NULL, 0), fp);
		cp_export_callgrind(rp, t, CP_METRIC_CALLS, fp);
	}
	cp_export_speedscope(rp, cp_report_profile__weight(rp, NULL, 0), fp);
	cp_export_speedscope(rp, CP_METRIC_CALLS, fp);
	cp_export_pprof(rp, cp_report_profile__weight(rp, NULL, 0), fp);
	cp_export_pprof(rp, CP_METRIC_CALLS, fp);
	cp_export_svg(rp, 0, cp_report_profile__weight(rp, NULL, 0), CP_SVG_HEAT, fp);
	cp_export_svg(rp, 1, CP_METRIC_CALLS, CP_SVG_MODULE, fp);
	cp_export_plist(rp, fp);
	cp_export_html(rp, NULL, cp_report_profile__weight(rp, NULL, 0), fp);
}

static void export_one(const uint8_t *data, size_t size, enum cp_thread_mode threads)
{
	struct cp_report_opts ro = { .threads = threads, .no_files = 1 };
	struct cp_profile_file *pf = cp_fuzz__open(data, size);
	struct cp_report_profile *rp;

	if (!pf)
		return;
	rp = cp_report_profile__from_file(pf, &ro);
	CP_FUZZ_CHECK(rp != NULL);
	export_all(rp, cp_fuzz__sink());
	cp_report_profile__free(rp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	export_one(data, size, CP_THREADS_MERGED);
	export_one(data, size, CP_THREADS_EACH);
	return 0;
}
