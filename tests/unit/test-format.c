/*
 * test-format.c - the profile writer and the validating reader.
 *
 * Files are made with the real writer (the same code the runtime uses),
 * then read back, then damaged in every way the reader claims to catch:
 * each truncation length, each header byte flipped, references that point
 * outside their tables.  A damaged file must give an error naming the
 * file, never a crash (each test runs in its own fork, so a crash fails).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"
#include "tests/unit/unittest.h"

static struct cp_writer w;
static uint32_t node_entsize = sizeof(struct cp_node_rec); /* tests may shrink it */
static uint32_t meta_entsize = sizeof(struct cp_meta);	   /* ... and these (older writers) */
static uint32_t thread_entsize = sizeof(struct cp_thread_rec);
static struct cp_line_rec *lines; /* tests may add a LINES section */
static uint32_t nlines;
static uint32_t site_node = UINT32_MAX; /* tests may make this node a call-site record */
/* Merged profiles' sections: records of SPREAD (0: none of the three), and damage. */
static uint32_t spread_n;
static struct {
	uint32_t symbol_kind;	 /* 0: valid */
	uint32_t spread_inputs;	 /* node 2's spread.inputs (0: 2) */
	int min_above_max;	 /* node 2's min_calls > max_calls */
	uint32_t max_input;	 /* node 2's max_calls_input (version 9; 0: 1) */
	uint32_t absent_input;	 /* node 2's absent_input (0: CP_NO_INPUT) */
} merged_damage;
/* Sizes of INPUTS and SPREAD records as written (0: this version's). */
static uint32_t input_entsize, spread_entsize;

static void add_merged_sections(void)
{
	struct cp_symbol sym[2] = {
		{ .addr = 0x1100, .kind = CP_SYM_FUNCTION, .line = 3 },
		{ .addr = 0x1150, .kind = CP_SYM_SITE, .name = CP_NO_STRING, .line = 9 },
	};
	struct cp_input_rec in[2] = { { .pid = 1, .calls = 4 }, { .pid = 2, .calls = 4 } };
	struct cp_spread_rec sp[4] = { { 0 } };

	sym[0].name = cp_writer__string(&w, "f");
	sym[0].file = sym[1].file = cp_writer__string(&w, "f.c");
	if (merged_damage.symbol_kind)
		sym[1].kind = merged_damage.symbol_kind;
	cp_writer__section(&w, CP_SEC_SYMBOLS, sizeof(sym[0]));
	cp_writer__put(&w, sym, sizeof(sym));
	for (int i = 0; i < 2; i++) {
		in[i].path = cp_writer__string(&w, i ? "b.cprof" : "a.cprof");
		in[i].exe = in[i].hostname = CP_NO_STRING;
	}
	in[1].rank = 1;
	in[0].rank = CP_NO_RANK;
	cp_writer__section(&w, CP_SEC_INPUTS, input_entsize ? input_entsize : sizeof(in[0]));
	for (int i = 0; i < 2; i++)
		cp_writer__put(&w, &in[i], input_entsize ? input_entsize : sizeof(in[0]));
	sp[2].inputs = merged_damage.spread_inputs ? merged_damage.spread_inputs : 2;
	sp[2].min_calls = merged_damage.min_above_max ? 5 : 3;
	sp[2].max_calls = 4;
	sp[2].flags = CP_SPREAD_DIST;
	sp[2].max_calls_input = merged_damage.max_input ? merged_damage.max_input : 1;
	sp[2].absent_input = merged_damage.absent_input ? merged_damage.absent_input : CP_NO_INPUT;
	sp[2].min_cpu_ns = 100;
	sp[2].max_cpu_ns = 300;
	sp[2].sum_cpu_ns = 400;
	sp[2].sumsq_calls[0] = 25;
	sp[2].sumsq_cpu[0] = 100000;
	cp_writer__section(&w, CP_SEC_SPREAD, spread_entsize ? spread_entsize : sizeof(sp[0]));
	for (uint32_t i = 0; i < spread_n; i++)
		cp_writer__put(&w, &sp[i], spread_entsize ? spread_entsize : sizeof(sp[0]));
}

/* make_profile: node 2 as a region of id region_fn, and these REGIONS records ("load", ...). */
static int region_node;
static uint64_t region_fn;
static uint64_t vdso_at; /* make_profile: the process's vDSO, as loaded there (0: none) */
static const uint32_t *region_ids;
static uint32_t nregion_ids;

/* Write a small valid profile; bad_parent != 0 corrupts one node's parent. */
static void make_profile(const char *path, uint32_t bad_parent, uint32_t bad_name)
{
	struct cp_meta meta = { 0 };
	struct cp_module mod = { 0 };
	struct cp_map map = { 0 };
	struct cp_thread_rec th = { .nthreads = 1 };
	struct cp_node_rec nodes[3] = { 0 };
	static const char cmd[] = "prog\0arg1";

	CHECK_EQ(cp_writer__begin(&w, path), 0);
	meta.pid = 42;
	meta.clock = CP_CLOCK_MONOTONIC;
	meta.ticks_per_sec = 1000000000u;
	meta.exe = cp_writer__string(&w, "/bin/prog");
	meta.hostname = cp_writer__string(&w, "host");
	meta.switches = CP_SWITCHES_ON;
	cp_writer__section(&w, CP_SEC_META, meta_entsize);
	cp_writer__put(&w, &meta, meta_entsize);
	cp_writer__section(&w, CP_SEC_CMDLINE, 1);
	cp_writer__put(&w, cmd, sizeof(cmd));
	mod.path = cp_writer__string(&w, "/bin/prog");
	mod.build_id_size = 4;
	mod.nmaps = 1;
	cp_writer__section(&w, CP_SEC_MODULES, sizeof(mod));
	cp_writer__put(&w, &mod, sizeof(mod));
	map.start = 0x1000;
	map.end = 0x2000;
	cp_writer__section(&w, CP_SEC_MAPS, sizeof(map));
	cp_writer__put(&w, &map, sizeof(map));
	if (vdso_at)
		CHECK_EQ(cp_writer__vdso(&w, vdso_at), 0);
	nodes[0].parent = CP_NO_PARENT;
	nodes[0].ticks = 1000;
	nodes[1].fn = 0x1100;
	nodes[1].parent = 0;
	nodes[1].calls = 1;
	nodes[1].ticks = 900;
	nodes[2].fn = 0x1200;
	nodes[2].parent = bad_parent ? bad_parent : 1;
	nodes[2].calls = 7;
	nodes[2].ticks = 500;
	nodes[2].wait_ticks = 300;
	nodes[2].switches_vol = 3;
	nodes[2].open_at_start = 2;
	if (site_node < 3)
		nodes[site_node].flags = CP_NODE_SITE;
	if (region_node) {
		nodes[2].flags |= CP_NODE_REGION;
		nodes[2].fn = region_fn;
	}
	cp_writer__section(&w, CP_SEC_NODES, node_entsize);
	for (int i = 0; i < 3; i++)
		cp_writer__put(&w, &nodes[i], node_entsize);
	if (spread_n)
		add_merged_sections();
	th.tid = 7;
	th.name = bad_name ? bad_name : cp_writer__string(&w, "main");
	th.nnodes = 3;
	th.cpu_ns = 250;
	cp_writer__section(&w, CP_SEC_THREADS, thread_entsize);
	cp_writer__put(&w, &th, thread_entsize);
	if (nregion_ids) {
		cp_writer__section(&w, CP_SEC_REGIONS, sizeof(struct cp_region_rec));
		for (uint32_t i = 0; i < nregion_ids; i++) {
			struct cp_region_rec r = { .id = region_ids[i],
						   .name = cp_writer__string(&w, i ? "save" : "load") };

			cp_writer__put(&w, &r, sizeof(r));
		}
		w.min_reader = CP_MIN_READER_SELECTION;
	}
	if (nlines) {
		cp_writer__section(&w, CP_SEC_LINES, sizeof(*lines));
		cp_writer__put(&w, lines, nlines * sizeof(*lines));
	}
	CHECK_EQ(cp_writer__finish(&w, CP_FEAT_TIMING), 0);
}

static size_t slurp(const char *path, unsigned char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = read(fd, buf, cap);

	close(fd);
	CHECK(n > 0);
	return (size_t)n;
}

static void spit(const char *path, const unsigned char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, buf, len), (long long)len);
	close(fd);
}

/* Open must fail with a message naming the file. */
static void expect_bad(const char *path)
{
	char err[512] = "";
	int code = 0;
	struct cp_profile_file *pf = cp_profile_file__open(path, err, sizeof(err), &code);

	if (pf)
		cp_test__fail(__FILE__, __LINE__, "damaged file '%s' was accepted", path);
	CHECK(code < 0);
	CHECK(strstr(err, path) != NULL);
	CHECK(strchr(err, '\n') == NULL);
}

/* Open must succeed; the test fails with the reader's message otherwise. */
static struct cp_profile_file *expect_good_at(const char *path, const char *file, int line)
{
	char err[512] = "";
	struct cp_profile_file *pf = cp_profile_file__open(path, err, sizeof(err), NULL);

	if (!pf)
		cp_test__fail(file, line, "%s", err);
	return pf;
}
#define expect_good(path) expect_good_at(path, __FILE__, __LINE__)

TEST(roundtrip)
{
	struct cp_profile_file *pf;
	struct stat st;

	make_profile("rt.cprof", 0, 0);
	CHECK(stat("rt.cprof.tmp.0", &st) != 0);
	pf = expect_good("rt.cprof");
	CHECK_EQ(pf->meta.pid, 42);
	CHECK_STR(cp_profile_file__str(pf, pf->meta.exe), "/bin/prog");
	CHECK_EQ(pf->nmodules, 1);
	CHECK_STR(cp_profile_file__str(pf, pf->modules[0].path), "/bin/prog");
	CHECK_EQ(pf->nmaps, 1);
	CHECK_EQ(pf->maps[0].end, 0x2000);
	CHECK_EQ(pf->nthreads, 1);
	CHECK_STR(cp_profile_file__str(pf, pf->threads[0].name), "main");
	CHECK_EQ(pf->nnodes, 3);
	CHECK_EQ(pf->nodes[2].calls, 7);
	CHECK_EQ(pf->nodes[2].parent, 1);
	CHECK_EQ(pf->argc, 2);
	CHECK_STR(pf->argv[1], "arg1");
	CHECK(pf->argv[2] == NULL);
	cp_profile_file__free(pf);
	unlink("rt.cprof");
}

TEST(open_mem_reads_like_open)
{
	static unsigned char buf[1 << 16];
	char err[512] = "";
	struct cp_profile_file *pf;
	size_t len;
	int code = 0;

	make_profile("mem.cprof", 0, 0);
	len = slurp("mem.cprof", buf, sizeof(buf));
	unlink("mem.cprof");
	pf = cp_profile_file__open_mem("in-memory", buf, len, err, sizeof(err), &code);
	if (!pf)
		cp_test__fail(__FILE__, __LINE__, "%s", err);
	CHECK_EQ(code, 0);
	CHECK_STR(pf->path, "in-memory");
	CHECK_EQ(pf->nnodes, 3);
	CHECK_EQ(pf->nodes[2].calls, 7);
	CHECK_STR(pf->argv[1], "arg1");
	/* A copy: the caller's buffer may go. */
	memset(buf, 0, len);
	CHECK_STR(cp_profile_file__str(pf, pf->threads[0].name), "main");
	cp_profile_file__free(pf);
	/* Damage is named like a file's. */
	CHECK(cp_profile_file__open_mem("in-memory", buf, len, err, sizeof(err), &code) == NULL);
	CHECK(code < 0);
	CHECK(strstr(err, "'in-memory'") != NULL);
	CHECK(cp_profile_file__open_mem("empty", NULL, 0, err, sizeof(err), &code) == NULL);
	CHECK_EQ(code, -CP_ERR_TRUNCATED);
}

TEST(no_temporary_left_behind)
{
	char tmp[64];

	make_profile("t.cprof", 0, 0);
	snprintf(tmp, sizeof(tmp), "t.cprof.tmp.%d", (int)getpid());
	CHECK(access(tmp, F_OK) != 0);
	CHECK(access("t.cprof", F_OK) == 0);
	unlink("t.cprof");
}

static int xfsz_seen;

static void on_xfsz(int sig)
{
	xfsz_seen++;
}

/*
 * A file size limit below the profile: the write fails with EFBIG, no
 * SIGXFSZ reaches the handler (nor stays pending, blocked as it is here),
 * the temporary is removed, and the handler and the mask are as before.
 */
TEST(file_size_limit_is_an_error_not_a_signal)
{
	struct rlimit rl = { 1024, RLIM_INFINITY };
	struct sigaction sa = { .sa_handler = on_xfsz }, now;
	sigset_t block, mask, pending;
	char tmp[64];

	sigaction(SIGXFSZ, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGXFSZ);
	sigprocmask(SIG_BLOCK, &block, NULL);
	CHECK_EQ(setrlimit(RLIMIT_FSIZE, &rl), 0);
	CHECK(cp_writer__begin(&w, "big.cprof") == 0);
	cp_writer__section(&w, CP_SEC_META, 1);
	for (int i = 0; i < 100; i++)
		cp_writer__put(&w, tmp, sizeof(tmp));
	CHECK_EQ(cp_writer__finish(&w, 0), -EFBIG);
	snprintf(tmp, sizeof(tmp), "big.cprof.tmp.%d", (int)getpid());
	CHECK(access(tmp, F_OK) != 0);
	CHECK(access("big.cprof", F_OK) != 0);
	sigpending(&pending);
	CHECK(!sigismember(&pending, SIGXFSZ));
	sigprocmask(SIG_SETMASK, NULL, &mask);
	CHECK(sigismember(&mask, SIGXFSZ));
	sigaction(SIGXFSZ, NULL, &now);
	CHECK(now.sa_handler == on_xfsz);
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	CHECK_EQ(xfsz_seen, 0);
	/* the test itself is sound: a plain write past the limit does raise it */
	{
		int fd = open("plain.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0666);

		CHECK(fd >= 0);
		for (int i = 0; i < 40 && !xfsz_seen; i++)
			if (write(fd, tmp, sizeof(tmp)) < 0)
				break;
		close(fd);
		unlink("plain.tmp");
	}
	CHECK_EQ(xfsz_seen, 1);
}

TEST(writer_failure_leaves_nothing)
{
	/* A directory that does not exist: begin fails, finish reports it. */
	CHECK(cp_writer__begin(&w, "no/such/dir/p.cprof") < 0);
	cp_writer__section(&w, CP_SEC_META, 8);
	CHECK(cp_writer__finish(&w, 0) < 0);
	CHECK(access("no/such/dir/p.cprof", F_OK) != 0);
}

TEST(every_truncation_is_rejected)
{
	static unsigned char buf[1 << 16];
	size_t len;

	make_profile("full.cprof", 0, 0);
	len = slurp("full.cprof", buf, sizeof(buf));
	for (size_t cut = 0; cut < len; cut++) {
		spit("cut.cprof", buf, cut);
		expect_bad("cut.cprof");
	}
	unlink("cut.cprof");
	unlink("full.cprof");
}

TEST(every_header_byte_flip_is_rejected)
{
	static unsigned char buf[1 << 16];
	size_t len, hdr;

	make_profile("full.cprof", 0, 0);
	len = slurp("full.cprof", buf, sizeof(buf));
	hdr = ((struct cp_file_header *)buf)->header_size;
	CHECK(hdr < len);
	for (size_t i = 0; i < hdr; i++) {
		buf[i] ^= 0x5a;
		spit("flip.cprof", buf, len);
		expect_bad("flip.cprof");
		buf[i] ^= 0x5a;
	}
	/* A flipped body byte is caught by the body checksum. */
	buf[len - 3] ^= 1;
	spit("flip.cprof", buf, len);
	expect_bad("flip.cprof");
	unlink("flip.cprof");
	unlink("full.cprof");
}

TEST(bad_parent_is_rejected)
{
	make_profile("bad.cprof", 2, 0); /* node 2 claims to be its own parent */
	expect_bad("bad.cprof");
	make_profile("bad.cprof", 5000, 0);
	expect_bad("bad.cprof");
	unlink("bad.cprof");
}

TEST(call_site_records_are_checked)
{
	char err[512];
	struct cp_profile_file *pf;

	site_node = 2; /* a leaf: fine */
	make_profile("site.cprof", 0, 0);
	pf = cp_profile_file__open("site.cprof", err, sizeof(err), NULL);
	CHECK(pf != NULL);
	CHECK_EQ(pf->nodes[2].flags, CP_NODE_SITE);
	cp_profile_file__free(pf);
	site_node = 1; /* node 2's parent: a call site has no children */
	make_profile("site.cprof", 0, 0);
	expect_bad("site.cprof");
	CHECK(cp_profile_file__open("site.cprof", err, sizeof(err), NULL) == NULL);
	CHECK(strstr(err, "its parent 1 is a call-site record") != NULL);
	site_node = 0; /* the root */
	make_profile("site.cprof", 0, 0);
	expect_bad("site.cprof");
	site_node = UINT32_MAX;
	unlink("site.cprof");
}

TEST(merged_sections_read_back_and_are_checked)
{
	char err[512];
	struct cp_profile_file *pf;

	spread_n = 3;
	make_profile("m.cprof", 0, 0);
	pf = expect_good("m.cprof");
	CHECK_EQ(pf->nsymbols, 2);
	CHECK_STR(cp_profile_file__str(pf, pf->symbols[0].name), "f");
	CHECK_EQ(pf->symbols[1].line, 9);
	CHECK_EQ(pf->ninputs, 2);
	CHECK_STR(cp_profile_file__str(pf, pf->inputs[1].path), "b.cprof");
	CHECK_EQ(pf->spread[2].inputs, 2);
	CHECK_EQ(pf->spread[2].max_calls, 4);
	cp_profile_file__free(pf);

	spread_n = 2; /* one record short of the nodes */
	make_profile("m.cprof", 0, 0);
	expect_bad("m.cprof");
	CHECK(cp_profile_file__open("m.cprof", err, sizeof(err), NULL) == NULL);
	CHECK(strstr(err, "spread section: 2 records for 3 nodes") != NULL);
	spread_n = 3;
	merged_damage.spread_inputs = 3; /* more inputs than INPUTS has */
	make_profile("m.cprof", 0, 0);
	expect_bad("m.cprof");
	merged_damage.spread_inputs = 0;
	merged_damage.min_above_max = 1;
	make_profile("m.cprof", 0, 0);
	expect_bad("m.cprof");
	merged_damage.min_above_max = 0;
	merged_damage.symbol_kind = 7;
	make_profile("m.cprof", 0, 0);
	expect_bad("m.cprof");
	merged_damage.symbol_kind = 0;
	spread_n = 0;
	unlink("m.cprof");
}

TEST(merged_distribution_reads_back_and_is_checked)
{
	char err[512];
	struct cp_profile_file *pf;

	spread_n = 3;
	make_profile("m.cprof", 0, 0);
	pf = expect_good("m.cprof");
	CHECK_EQ(pf->inputs[0].rank, CP_NO_RANK);
	CHECK_EQ(pf->inputs[1].rank, 1);
	CHECK_EQ(pf->spread[2].flags, CP_SPREAD_DIST);
	CHECK_EQ(pf->spread[2].max_calls_input, 1);
	CHECK_EQ(pf->spread[2].sum_cpu_ns, 400);
	CHECK_EQ(pf->spread[2].sumsq_cpu[0], 100000);
	cp_profile_file__free(pf);

	/* Version 8's records: no rank (not rank 0), no distribution. */
	input_entsize = CP_INPUT_MIN_SIZE;
	spread_entsize = CP_SPREAD_MIN_SIZE;
	make_profile("m.cprof", 0, 0);
	pf = expect_good("m.cprof");
	CHECK_EQ(pf->inputs[0].rank, CP_NO_RANK);
	CHECK_EQ(pf->inputs[1].rank, CP_NO_RANK);
	CHECK_EQ(pf->spread[2].max_calls, 4);
	CHECK_EQ(pf->spread[2].flags, 0);
	CHECK_EQ(pf->spread[2].max_calls_input, 0);
	cp_profile_file__free(pf);
	spread_entsize = CP_SPREAD_MIN_SIZE - 8; /* shorter than any version wrote */
	make_profile("m.cprof", 0, 0);
	expect_bad("m.cprof");
	input_entsize = spread_entsize = 0;

	merged_damage.max_input = 2; /* an input INPUTS does not have */
	make_profile("m.cprof", 0, 0);
	CHECK(cp_profile_file__open("m.cprof", err, sizeof(err), NULL) == NULL);
	CHECK(strstr(err, "spread record at 0x") != NULL);
	CHECK(strstr(err, ": an extreme held by an input beyond INPUTS") != NULL);
	CHECK(strchr(err, '\n') == NULL);
	merged_damage.max_input = 0;
	merged_damage.absent_input = 1; /* both inputs entered it */
	make_profile("m.cprof", 0, 0);
	CHECK(cp_profile_file__open("m.cprof", err, sizeof(err), NULL) == NULL);
	CHECK(strstr(err, "an absent input given or missing") != NULL);
	merged_damage.absent_input = 0;
	spread_n = 0;
	unlink("m.cprof");
}

TEST(records_smaller_than_version_1_are_rejected)
{
	/* entsize 1 would make the reader copy 72 bytes per byte of file. */
	node_entsize = 1;
	make_profile("small.cprof", 0, 0);
	expect_bad("small.cprof");
	node_entsize = 8;
	make_profile("small.cprof", 0, 0);
	expect_bad("small.cprof");
	unlink("small.cprof");
}

/* Version 3 wrote shorter META, THREADS and NODES records: read, zero-extended. */
TEST(version_3_records_are_read_and_zero_extended)
{
	struct cp_profile_file *pf;

	meta_entsize = CP_META_MIN_SIZE;
	thread_entsize = CP_THREAD_MIN_SIZE;
	node_entsize = CP_NODE_MIN_SIZE;
	make_profile("v3.cprof", 0, 0);
	meta_entsize = sizeof(struct cp_meta);
	thread_entsize = sizeof(struct cp_thread_rec);
	node_entsize = sizeof(struct cp_node_rec);
	pf = expect_good("v3.cprof");
	CHECK_EQ(pf->meta.pid, 42);
	CHECK_EQ(pf->meta.switches, CP_SWITCHES_OFF); /* beyond version 3's record */
	CHECK_EQ(pf->nodes[2].calls, 7);
	CHECK_EQ(pf->nodes[2].wait_ticks, 300);	 /* within it */
	CHECK_EQ(pf->nodes[2].switches_vol, 0); /* beyond it */
	CHECK_EQ(pf->threads[0].nnodes, 3);
	CHECK_EQ(pf->threads[0].cpu_ns, 0);
	cp_profile_file__free(pf);

	make_profile("v4.cprof", 0, 0);
	pf = expect_good("v4.cprof");
	CHECK_EQ(pf->meta.switches, CP_SWITCHES_ON);
	CHECK_EQ(pf->nodes[2].switches_vol, 3);
	CHECK_EQ(pf->threads[0].cpu_ns, 250);
	CHECK_EQ(pf->nodes[2].open_at_start, 2);
	cp_profile_file__free(pf);
	/* Version 6 wrote 88-byte nodes: no calls open at attach. */
	node_entsize = 88;
	make_profile("v6.cprof", 0, 0);
	node_entsize = sizeof(struct cp_node_rec);
	pf = expect_good("v6.cprof");
	CHECK_EQ(pf->nodes[2].switches_invol, 0);
	CHECK_EQ(pf->nodes[2].switches_vol, 3);
	CHECK_EQ(pf->nodes[2].open_at_start, 0);
	cp_profile_file__free(pf);
	unlink("v3.cprof");
	unlink("v4.cprof");
	unlink("v6.cprof");
}

/* Open must fail because of a LINES record. */
static void expect_bad_line(const char *path)
{
	char err[512] = "";

	CHECK(cp_profile_file__open(path, err, sizeof(err), NULL) == NULL);
	CHECK(strstr(err, "line record at 0x") != NULL);
}

TEST(regions_read_back_and_are_checked)
{
	static const uint32_t ids[2] = { 0, 1 }, dup[2] = { 1, 1 };
	struct cp_profile_file *pf;

	region_node = 1;
	region_fn = 1;
	region_ids = ids;
	nregion_ids = 2;
	make_profile("r.cprof", 0, 0);
	pf = expect_good("r.cprof");
	CHECK_EQ(pf->nregions, 2);
	CHECK_EQ(pf->hdr->min_reader, CP_MIN_READER_SELECTION);
	CHECK(pf->nodes[2].flags & CP_NODE_REGION);
	CHECK(!strcmp(cp_profile_file__region_name(pf, pf->nodes[2].fn), "save"));
	CHECK(cp_profile_file__region_name(pf, 2) == NULL);
	cp_profile_file__free(pf);
	region_fn = 5; /* no such region */
	make_profile("r.cprof", 0, 0);
	expect_bad("r.cprof");
	region_fn = 1;
	region_ids = dup; /* an id given twice */
	make_profile("r.cprof", 0, 0);
	expect_bad("r.cprof");
	/* Out of order: ids are looked up, not indices. */
	{
		static const uint32_t shuffled[] = { 9, 4, 1 };

		region_ids = shuffled;
		nregion_ids = 3;
		region_fn = 4;
		make_profile("r.cprof", 0, 0);
		pf = expect_good("r.cprof");
		CHECK_STR(cp_profile_file__region_name(pf, 4), "save");
		CHECK_STR(cp_profile_file__region_name(pf, 9), "load");
		CHECK_STR(cp_profile_file__region_name(pf, 1), "save");
		CHECK(cp_profile_file__region_name(pf, 0) == NULL);
		CHECK(cp_profile_file__region_name(pf, 5) == NULL);
		CHECK(cp_profile_file__region_name(pf, 10) == NULL);
		cp_profile_file__free(pf);
		region_fn = 1;
	}
	region_ids = ids;
	nregion_ids = 0; /* a region node with no REGIONS section */
	make_profile("r.cprof", 0, 0);
	expect_bad("r.cprof");
	region_node = 0;
	unlink("r.cprof");
}

TEST(lines_read_back_and_are_checked)
{
	struct cp_line_rec l[2] = { { .node = 2, .ip = 0x1234, .samples = 5 },
				    { .node = 1, .ip = 0x1104, .samples = 1 } };
	struct cp_profile_file *pf;

	lines = l;
	nlines = 2;
	make_profile("l.cprof", 0, 0);
	pf = expect_good("l.cprof");
	CHECK_EQ(pf->nlines, 2);
	CHECK_EQ(pf->lines[0].ip, 0x1234);
	CHECK_EQ(pf->lines[0].samples, 5);
	cp_profile_file__free(pf);
	l[1].node = 3; /* beyond the nodes */
	make_profile("l.cprof", 0, 0);
	expect_bad_line("l.cprof");
	l[1].node = 1;
	l[1].samples = 0; /* a record of nothing */
	make_profile("l.cprof", 0, 0);
	expect_bad_line("l.cprof");
	l[1].samples = 1;
	site_node = 2; /* samples belong to a context, not to one of its call sites */
	make_profile("l.cprof", 0, 0);
	expect_bad_line("l.cprof");
	site_node = UINT32_MAX;
	lines = NULL;
	nlines = 0;
	unlink("l.cprof");
}

TEST(bad_string_reference_is_rejected)
{
	make_profile("bad.cprof", 0, 1u << 30);
	expect_bad("bad.cprof");
	unlink("bad.cprof");
}

TEST(newer_reader_required_is_refused)
{
	static unsigned char buf[1 << 16];
	struct cp_file_header *h = (struct cp_file_header *)buf;
	char err[512];
	int code;
	size_t len;

	make_profile("v.cprof", 0, 0);
	len = slurp("v.cprof", buf, sizeof(buf));
	h->min_reader = CP_READER_VERSION + 1;
	spit("v.cprof", buf, len);
	CHECK(cp_profile_file__open("v.cprof", err, sizeof(err), &code) == NULL);
	CHECK_EQ(code, -CP_ERR_VERSION);
	CHECK(strstr(err, "newer") || strstr(err, "version"));
	unlink("v.cprof");
}

TEST(empty_missing_and_directory)
{
	spit("empty.cprof", (const unsigned char *)"", 0);
	expect_bad("empty.cprof");
	expect_bad("does-not-exist.cprof");
	CHECK_EQ(mkdir("adir.cprof", 0755), 0);
	expect_bad("adir.cprof");
	rmdir("adir.cprof");
	unlink("empty.cprof");
}

/* Built with a sanitizer that maps shadow memory (gcc's macros, clang's __has_feature). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CP_SHADOW_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CP_SHADOW_SANITIZER 1
#endif
#endif
#ifndef CP_SHADOW_SANITIZER
#define CP_SHADOW_SANITIZER 0
#endif

/* Sections need not be aligned in the file: fields are written byte-wise. */
static void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* The section table entry of kind in a file image. */
static struct cp_section_entry *section_of(unsigned char *buf, uint32_t kind)
{
	struct cp_file_header *h = (struct cp_file_header *)buf;
	struct cp_section_entry *sec = (struct cp_section_entry *)(buf + sizeof(*h));

	for (uint32_t i = 0; i < h->nsections; i++)
		if (sec[i].kind == kind)
			return &sec[i];
	CHECK(!"no such section");
	return NULL;
}

/* Recompute both checksums of a file image after damaging it, so that only the damage shows. */
static void reseal(unsigned char *buf, size_t len)
{
	struct cp_file_header *h = (struct cp_file_header *)buf;

	h->body_crc = cp_crc32(0, buf + h->header_size, len - h->header_size);
	h->header_crc = 0;
	h->header_crc = cp_crc32(0, buf, h->header_size);
}

/* Open must fail as corrupt (not for lack of memory) with msg in the line. */
static void expect_corrupt(const char *path, const char *msg)
{
	char err[512] = "";
	int code = 0;

	CHECK(cp_profile_file__open(path, err, sizeof(err), &code) == NULL);
	if (code != -CP_ERR_CORRUPT || !strstr(err, msg))
		cp_test__fail(__FILE__, __LINE__, "code %d, '%s' (wanted '%s')", code, err, msg);
}

/*
 * Absurd counts are refused before anything is allocated for them: with
 * the address space capped at 256 MiB, a billion of anything could only be
 * refused, never allocated, so an out-of-memory error would fail too.
 */
TEST(absurd_counts_are_refused_before_allocating)
{
	static unsigned char buf[1 << 16], orig[1 << 16];
	struct rlimit rl = { 256u << 20, 256u << 20 };
	size_t len;

	make_profile("big.cprof", 0, 0);
	len = slurp("big.cprof", orig, sizeof(orig));
#if CP_SHADOW_SANITIZER
	/*
	 * ASan and TSan map terabytes of shadow: no address-space limit fits
	 * them.  Their allocators refuse an absurd allocation by themselves
	 * (and fail the test).
	 */
	(void)rl;
#else
	CHECK_EQ(setrlimit(RLIMIT_AS, &rl), 0);
#endif

	memcpy(buf, orig, len); /* 2^60 bytes of nodes */
	section_of(buf, CP_SEC_NODES)->size = (uint64_t)1 << 60;
	reseal(buf, len);
	spit("big.cprof", buf, len);
	expect_corrupt("big.cprof", "outside the file");

	memcpy(buf, orig, len); /* a thread of a billion nodes */
	put_u32(buf + section_of(buf, CP_SEC_THREADS)->offset + offsetof(struct cp_thread_rec, nnodes),
		1000000000);
	reseal(buf, len);
	spit("big.cprof", buf, len);
	expect_corrupt("big.cprof", "do not follow on");

	memcpy(buf, orig, len); /* a module of 2^31 maps */
	put_u32(buf + section_of(buf, CP_SEC_MODULES)->offset + offsetof(struct cp_module, nmaps),
		1u << 31);
	reseal(buf, len);
	spit("big.cprof", buf, len);
	expect_corrupt("big.cprof", "beyond 1 maps");

	memcpy(buf, orig, len); /* a string reference past the end */
	put_u32(buf + section_of(buf, CP_SEC_THREADS)->offset + offsetof(struct cp_thread_rec, name),
		(uint32_t)section_of(buf, CP_SEC_STRINGS)->size);
	reseal(buf, len);
	spit("big.cprof", buf, len);
	expect_corrupt("big.cprof", "string reference");
	unlink("big.cprof");
}

TEST(overlapping_and_duplicated_sections_are_refused)
{
	static unsigned char buf[1 << 16];
	struct cp_section_entry *maps, *mods;
	size_t len;

	make_profile("ov.cprof", 0, 0);
	len = slurp("ov.cprof", buf, sizeof(buf));
	maps = section_of(buf, CP_SEC_MAPS);
	mods = section_of(buf, CP_SEC_MODULES);
	maps->offset = mods->offset; /* MAPS reads MODULES' bytes (sizes fit: 32 of 72) */
	reseal(buf, len);
	spit("ov.cprof", buf, len);
	expect_corrupt("ov.cprof", "overlaps section 3");

	len = slurp("ov.cprof", buf, sizeof(buf));
	maps = section_of(buf, CP_SEC_MAPS);
	maps->offset = mods->offset + mods->size; /* back in place... */
	maps->kind = CP_SEC_MODULES;		  /* ...but a second MODULES */
	reseal(buf, len);
	spit("ov.cprof", buf, len);
	expect_corrupt("ov.cprof", "appears twice");
	unlink("ov.cprof");
}

TEST(no_cycle_and_no_parent_out_of_range)
{
	make_profile("cy.cprof", 3, 0); /* node 2's parent: node 3, which does not exist */
	expect_corrupt("cy.cprof", "is not an earlier node");
	make_profile("cy.cprof", CP_NO_PARENT - 1, 0);
	expect_corrupt("cy.cprof", "is not an earlier node");
	/* A cycle needs a parent at or after its child: the same rule refuses it. */
	make_profile("cy.cprof", 2, 0);
	expect_corrupt("cy.cprof", "is not an earlier node");
	unlink("cy.cprof");
}

TEST(regions_out_of_order_are_found)
{
	static const uint32_t ids[3] = { 70, 3, 9 }, dup[3] = { 9, 3, 9 };
	struct cp_profile_file *pf;

	region_node = 1;
	region_fn = 9;
	region_ids = ids;
	nregion_ids = 3;
	make_profile("ro.cprof", 0, 0);
	pf = expect_good("ro.cprof");
	CHECK_STR(cp_profile_file__region_name(pf, 70), "load");
	CHECK_STR(cp_profile_file__region_name(pf, 3), "save");
	CHECK_STR(cp_profile_file__region_name(pf, 9), "save");
	CHECK(cp_profile_file__region_name(pf, 4) == NULL);
	CHECK(cp_profile_file__region_name(pf, 71) == NULL);
	CHECK(cp_profile_file__region_name(pf, (uint64_t)1 << 40) == NULL);
	cp_profile_file__free(pf);
	region_ids = dup; /* not next to each other in the file */
	make_profile("ro.cprof", 0, 0);
	expect_corrupt("ro.cprof", "id 9 given twice");
	region_node = 0;
	nregion_ids = 0;
	unlink("ro.cprof");
}

/*
 * The file at path rewritten with a section table of nsec slots: its own
 * sections, then empty ones of kinds no reader knows (later versions may
 * add kinds, which readers skip).
 */
static void widen_table(const char *path, uint32_t nsec)
{
	static unsigned char buf[1 << 16], out[1 << 17];
	struct cp_file_header *h = (struct cp_file_header *)buf, *oh = (struct cp_file_header *)out;
	struct cp_section_entry *sec = (void *)(buf + sizeof(*h)), *osec = (void *)(out + sizeof(*h));
	size_t len = slurp(path, buf, sizeof(buf)), hdr = sizeof(*h) + nsec * sizeof(*sec);
	size_t body = len - h->header_size;

	CHECK(hdr + body <= sizeof(out));
	memcpy(out, buf, sizeof(*h));
	for (uint32_t i = 0; i < nsec; i++) {
		if (i < h->nsections) {
			osec[i] = sec[i];
			osec[i].offset += hdr - h->header_size;
		} else {
			osec[i] = (struct cp_section_entry){ .kind = 1000 + i, .entsize = 1,
							     .offset = hdr };
		}
	}
	memcpy(out + hdr, buf + h->header_size, body);
	oh->header_size = hdr;
	oh->nsections = nsec;
	oh->file_size = hdr + body;
	reseal(out, hdr + body);
	spit(path, out, hdr + body);
}

TEST(section_table_is_read_up_to_1024_entries)
{
	struct cp_profile_file *pf;

	make_profile("wide.cprof", 0, 0);
	widen_table("wide.cprof", 1024); /* unknown kinds are skipped */
	pf = expect_good("wide.cprof");
	CHECK_EQ(pf->nnodes, 3);
	cp_profile_file__free(pf);
	make_profile("wide.cprof", 0, 0);
	widen_table("wide.cprof", 1025);
	expect_corrupt("wide.cprof", "header at 0x14: 1025 sections, at most 1024 are read");
	unlink("wide.cprof");
}

/*
 * Version 8: the vDSO's image.  The reader makes a module of it, maps from
 * its program headers, its build-id from its notes; an older reader (one
 * that skips IMAGES) sees the file it saw before; a damaged image is
 * corruption.
 */
TEST(vdso_image_becomes_a_module)
{
	static unsigned char buf[1 << 17], orig[1 << 17];
	struct cp_profile_file *pf;
	const struct cp_module *m;
	uint64_t link_base, size, at = 0x7f0000000000ull;
	size_t vsize, len;
	const void *img = cp_vdso_image(&vsize, &link_base);
	const unsigned char *got;
	struct cp_section_entry *sec;

	if (!img) /* no vDSO here (vdso=0): nothing to carry */
		return;
	vdso_at = at;
	make_profile("vdso.cprof", 0, 0);
	vdso_at = 0;
	pf = expect_good("vdso.cprof");
	CHECK_EQ(pf->nmodules, 2);
	m = &pf->modules[1];
	CHECK_STR(cp_profile_file__str(pf, m->path), "[vdso]");
	CHECK_EQ(m->flags, CP_MODULE_IMAGE);
	CHECK_EQ(m->load_bias, at - link_base);
	CHECK(m->nmaps >= 1);
	CHECK(m->build_id_size > 0); /* the kernel's vDSO has one */
	CHECK(pf->maps[m->first_map].start <= at && at < pf->maps[m->first_map].end);
	CHECK_EQ(pf->maps[m->first_map].module, 1);
	got = cp_profile_file__image(pf, 1, &size);
	CHECK(got != NULL);
	CHECK_EQ(size, vsize);
	CHECK(!memcmp(got, img, vsize));
	CHECK(cp_profile_file__image(pf, 0, &size) == NULL);
	CHECK(!(pf->modules[0].flags & CP_MODULE_IMAGE));
	cp_profile_file__free(pf);

	len = slurp("vdso.cprof", orig, sizeof(orig));
	CHECK(len < sizeof(orig));
	/* An older reader skips the two sections: without them the file is as before. */
	memcpy(buf, orig, len);
	section_of(buf, CP_SEC_IMAGES)->kind = 1000;
	section_of(buf, CP_SEC_IMAGE_DATA)->kind = 1001;
	reseal(buf, len);
	spit("vdso.cprof", buf, len);
	pf = expect_good("vdso.cprof");
	CHECK_EQ(pf->nmodules, 1);
	cp_profile_file__free(pf);
	/* Not an ELF image. */
	memcpy(buf, orig, len);
	sec = section_of(buf, CP_SEC_IMAGE_DATA);
	buf[sec->offset + 1] = 'X';
	reseal(buf, len);
	spit("vdso.cprof", buf, len);
	expect_corrupt("vdso.cprof", "not a 64-bit little-endian ELF image");
	/* Bytes beyond the section. */
	memcpy(buf, orig, len);
	put_u32(buf + section_of(buf, CP_SEC_IMAGES)->offset + offsetof(struct cp_image_rec, size),
		(uint32_t)section_of(buf, CP_SEC_IMAGE_DATA)->size + 1);
	reseal(buf, len);
	spit("vdso.cprof", buf, len);
	expect_corrupt("vdso.cprof", "image record at 0x");
	/* Images without their bytes. */
	memcpy(buf, orig, len);
	section_of(buf, CP_SEC_IMAGE_DATA)->kind = 1001;
	reseal(buf, len);
	spit("vdso.cprof", buf, len);
	expect_corrupt("vdso.cprof", "image section without image data");
	unlink("vdso.cprof");
}

TEST(crc32_known_value)
{
	/* The standard check value of CRC-32/ISO-HDLC. */
	CHECK_EQ(cp_crc32(0, "123456789", 9), 0xCBF43926u);
	CHECK_EQ(cp_crc32(cp_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
}
