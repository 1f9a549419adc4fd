/*
 * job.c - which rank of which job a process is, and the names its profile
 * may take from that.
 *
 * A launcher (mpirun, mpiexec, srun) starts every rank with variables that
 * say its rank, the job's size and the job's id; `callprof record` reads
 * them to name each rank's profile, the runtime to write them into the
 * profile (JOB).  Both read the same variables the same way, so this is in
 * format/, which both link: no malloc, no stdio, nothing that can fail.
 * The values come from outside and end up in file names, so numbers must be
 * plain bounded decimals and everything put into a name is filtered.
 */
#include <errno.h>
#include <string.h>

#include "format/format.h"

/* Where a rank may come from, in the order looked at: the first set wins. */
static const struct {
	const char *var;
	uint32_t launcher;
} rank_vars[] = {
	{ "OMPI_COMM_WORLD_RANK", CP_LAUNCHER_OPENMPI },
	{ "PMI_RANK", CP_LAUNCHER_MPICH },
	{ "PMIX_RANK", CP_LAUNCHER_PMIX },
	{ "SLURM_PROCID", CP_LAUNCHER_SLURM },
};
static const char *const size_vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
					 "SLURM_NPROCS" };
static const char *const local_vars[] = { "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
					  "SLURM_LOCALID" };
/*
 * Job ids: Open MPI 4's (also its PMIX_NAMESPACE), any PMIx launcher's
 * namespace, Slurm's job and step.  MPICH's Hydra passes none in the
 * environment (its KVS name comes over the PMI socket).
 */
static const char *const other_vars[] = { "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE",
					  "SLURM_JOB_ID", "SLURM_STEP_ID" };

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int is_var(const char *entry, const char *var)
{
	size_t n = strlen(var);

	return !strncmp(entry, var, n) && entry[n] == '=';
}

int cp_job__is_variable(const char *entry)
{
	for (size_t i = 0; i < N(rank_vars); i++)
		if (is_var(entry, rank_vars[i].var))
			return 1;
	for (size_t i = 0; i < N(size_vars); i++)
		if (is_var(entry, size_vars[i]))
			return 1;
	for (size_t i = 0; i < N(local_vars); i++)
		if (is_var(entry, local_vars[i]))
			return 1;
	for (size_t i = 0; i < N(other_vars); i++)
		if (is_var(entry, other_vars[i]))
			return 1;
	return 0;
}

/* s as a plain decimal below CP_RANK_LIMIT (no sign, space or leading zero), or -1. */
static int64_t decimal(const char *s)
{
	uint64_t v = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v >= CP_RANK_LIMIT)
			return -1;
	}
	return (int64_t)v;
}

/* The first of vars that is set: its value in *v (-1 if garbage: *bad names it); 0 if none. */
static int first_number(const char *const *vars, size_t n, const char *(*get)(const char *),
			int64_t *v, const char **bad)
{
	for (size_t i = 0; i < n; i++) {
		const char *s = get(vars[i]);

		if (!s)
			continue;
		*v = decimal(s);
		if (*v < 0 && !*bad)
			*bad = vars[i];
		return 1;
	}
	return 0;
}

/* Printable ASCII, no space: a job id as launchers make them. */
static int good_id(const char *s, size_t max)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (n >= max || (unsigned char)s[n] <= ' ' || (unsigned char)s[n] >= 0x7f)
			return 0;
	return n > 0;
}

static void job_id(struct cp_job *job, const char *(*get)(const char *))
{
	const char *id = NULL, *var = NULL, *step = NULL;

	if (job->launcher == CP_LAUNCHER_OPENMPI && (id = get("OMPI_MCA_ess_base_jobid")))
		var = "OMPI_MCA_ess_base_jobid";
	else if ((job->launcher == CP_LAUNCHER_OPENMPI || job->launcher == CP_LAUNCHER_PMIX) &&
		 (id = get("PMIX_NAMESPACE")))
		var = "PMIX_NAMESPACE";
	else if (job->launcher == CP_LAUNCHER_SLURM && (id = get("SLURM_JOB_ID")))
		var = "SLURM_JOB_ID", step = get("SLURM_STEP_ID");
	if (!id)
		return;
	if (!good_id(id, CP_JOBID_MAX) || (step && !good_id(step, CP_JOBID_MAX - strlen(id) - 1))) {
		if (!job->bad)
			job->bad = good_id(id, CP_JOBID_MAX) ? "SLURM_STEP_ID" : var;
		return;
	}
	memcpy(job->jobid, id, strlen(id) + 1);
	if (step) {
		size_t n = strlen(id);

		job->jobid[n] = '.';
		memcpy(job->jobid + n + 1, step, strlen(step) + 1);
	}
}

void cp_job__from_env(struct cp_job *job, const char *(*get)(const char *name))
{
	int64_t v = -1;

	memset(job, 0, sizeof(*job));
	job->rank = job->local_rank = CP_NO_RANK;
	for (size_t i = 0; i < N(rank_vars); i++) {
		const char *s = get(rank_vars[i].var);

		if (!s)
			continue;
		v = decimal(s);
		if (v < 0) {
			job->bad = rank_vars[i].var;
			return; /* garbage: no rank, and nothing else of a job that is not one */
		}
		job->rank = (uint32_t)v;
		job->launcher = rank_vars[i].launcher;
		break;
	}
	if (job->rank == CP_NO_RANK)
		return;
	if (first_number(size_vars, N(size_vars), get, &v, &job->bad) && v >= 0) {
		if (v > job->rank) {
			job->size = (uint32_t)v;
		} else {
			/* rank 5 of 4: one of them is wrong, so neither is a name */
			job->bad = rank_vars[job->launcher - 1].var;
			job->rank = CP_NO_RANK;
			job->launcher = CP_LAUNCHER_NONE;
			return;
		}
	}
	if (first_number(local_vars, N(local_vars), get, &v, &job->bad) && v >= 0)
		job->local_rank = (uint32_t)v;
	job_id(job, get);
}

const char *cp_launcher_name(uint32_t launcher, char buf[32])
{
	static const char *const names[] = { "none", "Open MPI", "MPICH", "PMIx", "Slurm" };
	size_t pos;

	if (launcher < N(names))
		return names[launcher];
	memcpy(buf, "launcher ", 10);
	pos = 9;
	cp_put_dec(buf, 32, &pos, launcher);
	return buf;
}

int cp_outname__has(const char *pattern, char c)
{
	for (const char *p = pattern; (p = strchr(p, '%')); p += 2) {
		if (p[1] == c)
			return 1;
		if (!p[1])
			break;
	}
	return 0;
}

/* Append s to out, each byte that is not [A-Za-z0-9._+-] as '_', at most CP_JOBID_MAX. */
static void put_safe(char *out, size_t cap, size_t *pos, const char *s)
{
	size_t start = *pos, n = 0;

	for (; s[n] && n < CP_JOBID_MAX && *pos + 1 < cap; n++) {
		char c = s[n];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '_' || c == '-' || c == '+';

		out[(*pos)++] = ok ? c : '_';
	}
	out[*pos] = '\0';
	/* "." and ".." would name a directory when a pattern puts them between slashes */
	if (n && strspn(out + start, ".") == *pos - start)
		out[start] = '_';
}

static void put_str(char *out, size_t cap, size_t *pos, const char *s)
{
	while (*s && *pos + 1 < cap)
		out[(*pos)++] = *s++;
	out[*pos] = '\0';
}

int cp_outname__expand(char *out, size_t cap, const char *pattern, const struct cp_job *job,
		       const char *host, unsigned long pid, size_t *bad_at)
{
	int ranked = job && job->rank != CP_NO_RANK;
	size_t pos = 0;

	if (!cap)
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (const char *p = pattern; *p; p++) {
		if (pos + 1 >= cap)
			return -ENAMETOOLONG;
		if (*p != '%') {
			out[pos++] = *p;
			out[pos] = '\0';
			continue;
		}
		switch (p[1]) {
		case 'r': {
			unsigned long rank = ranked ? job->rank : 0;
			size_t digits = 1, have = 1;

			for (unsigned long v = ranked && job->size ? job->size - 1 : 0; v >= 10; v /= 10)
				digits++;
			for (unsigned long v = rank; v >= 10; v /= 10)
				have++;
			for (; have < digits && pos + 1 < cap; have++)
				out[pos++] = '0';
			cp_put_dec(out, cap, &pos, rank);
			break;
		}
		case 's':
			cp_put_dec(out, cap, &pos, ranked ? job->size : 1);
			break;
		case 'h':
			put_safe(out, cap, &pos, host && *host ? host : "localhost");
			break;
		case 'p':
			cp_put_dec(out, cap, &pos, pid);
			break;
		case 'j':
			put_safe(out, cap, &pos, ranked && job->jobid[0] ? job->jobid : "nojob");
			break;
		case '%':
			put_str(out, cap, &pos, "%");
			break;
		default:
			if (bad_at)
				*bad_at = (size_t)(p - pattern);
			return -EINVAL;
		}
		p++;
	}
	return pos + 1 >= cap ? -ENAMETOOLONG : 0;
}
