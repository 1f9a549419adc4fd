/*
 * unwind.c - call stacks from samples, and the functions that hold
 * addresses, through elfutils libdwfl.
 *
 * One Dwfl per process image, with its modules reported at the load
 * biases their MMAP2 records gave (dwfl_report_elf), so nothing here
 * needs the process alive: the sampled program may be long gone when its
 * samples are unwound.  The thread state comes from the sample itself:
 * set_initial_registers hands libdwfl the user registers perf copied, and
 * memory_read serves the copy of the top of the user stack and fails
 * anywhere else, which is where an unwind that needs more stops.
 *
 * The sampler's (sample/session.c) only door to libdwfl: symbolize/ is
 * the tool's one home for elfutils.
 */
#include <asm/perf_regs.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <gelf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "symbolize/symbolize.h"
#include "symbolize/unwind.h"
#include "util/util.h"

/*
 * The sorted FDE start addresses of a module, from its .eh_frame_hdr
 * search table: dwarf_frame_info() gives only the range of one CFI row,
 * which starts mid-function after every push, so the function's entry
 * must come from the FDE itself.
 */
struct fde_table {
	Dwfl_Module *mod;
	uint64_t *starts; /* ELF virtual addresses, ascending */
	size_t n;
};

struct cp_unwinder {
	Dwfl *dwfl;
	struct fde_table *fdes;	    /* per module, filled on first use */
	size_t nfdes, fdes_alloc;
	Dwfl_Callbacks cb;
	char *debuginfo_path;
	int attached;		    /* dwfl_attach_state done */
	int reporting;		    /* inside dwfl_report_begin_add .. end */
	const struct cp_unwind_regs *cur;  /* the sample being unwound */
	int read_failed;	    /* it needed memory beyond the stack copy */
	uint32_t cur_tid;
	uint64_t *pcs;		    /* output of the frame callback */
	int npcs, max;
};

/*
 * perf's x86-64 register numbers (asm/perf_regs.h) for DWARF registers
 * 0..16 (rax rdx rcx rbx rsi rdi rbp rsp r8..r15, and 16 the return
 * address column, which libdwfl takes as the PC).
 */
static const int dwarf_to_perf[17] = {
	PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX, PERF_REG_X86_SI,
	PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP, PERF_REG_X86_R8, PERF_REG_X86_R9,
	PERF_REG_X86_R10, PERF_REG_X86_R11, PERF_REG_X86_R12, PERF_REG_X86_R13,
	PERF_REG_X86_R14, PERF_REG_X86_R15, PERF_REG_X86_IP,
};

/*
 * The standard search, unless a place it would open is not a regular file
 * (libdwfl opens without O_NONBLOCK: a FIFO would hang the unwinder).
 */
static int unwinder__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				    Dwarf_Addr base, const char *file_name,
				    const char *debuglink_file, GElf_Word debuglink_crc,
				    char **debuginfo_file_name)
{
	const unsigned char *id = NULL;
	GElf_Addr vaddr;
	int id_len = dwfl_module_build_id(mod, &id, &vaddr);
	char *bad = cp_debug_search_special(":.debug:/usr/lib/debug", file_name, debuglink_file,
					    id, id_len);

	if (bad) {
		cp_warning("debug file '%s' is not a regular file: no debug data searched for '%s'",
			   bad, file_name);
		free(bad);
		return -1;
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

struct cp_unwinder *cp_unwinder__new(void)
{
	struct cp_unwinder *u = xcalloc(1, sizeof(*u));

	u->debuginfo_path = xstrdup(":.debug:/usr/lib/debug");
	u->cb = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = unwinder__find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &u->debuginfo_path,
	};
	u->dwfl = dwfl_begin(&u->cb);
	if (!u->dwfl)
		cp_die("cannot start libdwfl: %s", dwfl_errmsg(-1));
	return u;
}

void cp_unwinder__free(struct cp_unwinder *u)
{
	if (!u)
		return;
	dwfl_end(u->dwfl);
	for (size_t i = 0; i < u->nfdes; i++)
		free(u->fdes[i].starts);
	free(u->fdes);
	free(u->debuginfo_path);
	free(u);
}

static void unwinder__end_report(struct cp_unwinder *u)
{
	if (u->reporting) {
		dwfl_report_end(u->dwfl, NULL, NULL);
		u->reporting = 0;
	}
}

int cp_unwinder__add_module(struct cp_unwinder *u, const char *path, uint64_t bias)
{
	int fd;

	if (!u->reporting) {
		dwfl_report_begin_add(u->dwfl);
		u->reporting = 1;
	}
	/*
	 * add_p_vaddr: base is the load bias, as in symbolize/.  Opened here,
	 * only if regular (a FIFO put in the file's place would hang libdwfl).
	 */
	fd = cp_open_regular(path, NULL);
	if (fd < 0)
		return -1;
	if (dwfl_report_elf(u->dwfl, path, path, fd, bias, true))
		return 0;
	close(fd); /* consumed only on success */
	return -1;
}

int cp_unwinder__add_image(struct cp_unwinder *u, const char *name, const void *image,
			   uint64_t size, uint64_t bias)
{
	const char *why;
	int fd = cp_memory_fd(image, size, &why);

	if (fd < 0)
		return -1;
	if (!u->reporting) {
		dwfl_report_begin_add(u->dwfl);
		u->reporting = 1;
	}
	if (dwfl_report_elf(u->dwfl, name, name, fd, bias, true))
		return 0;
	close(fd);
	return -1;
}

static pid_t unwinder__next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct cp_unwinder *u = arg;

	/* Only dwfl_getthreads asks; we unwind one named thread at a time. */
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return (pid_t)u->cur_tid;
}

static bool unwinder__get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

/* Only the sampled stack copy exists: an unwind needing more stops there. */
static bool unwinder__memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct cp_unwinder *u = arg;
	const struct cp_unwind_regs *r = u->cur;
	uint64_t sp = r->regs[PERF_REG_X86_SP];

	if (addr < sp)
		return false; /* libdwfl probes below sp at times; that ends nothing */
	if (addr - sp > r->stack_size || r->stack_size - (addr - sp) < sizeof(*result)) {
		u->read_failed = 1; /* the stack goes on beyond the copy */
		return false;
	}
	memcpy(result, r->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool unwinder__set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct cp_unwinder *u = thread_arg;
	const struct cp_unwind_regs *r = u->cur;
	Dwarf_Word regs[17];

	for (int i = 0; i < 17; i++)
		regs[i] = r->regs[dwarf_to_perf[i]];
	return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = unwinder__next_thread,
	.get_thread = unwinder__get_thread,
	.memory_read = unwinder__memory_read,
	.set_initial_registers = unwinder__set_initial_registers,
};

static int unwinder__frame(Dwfl_Frame *state, void *arg)
{
	struct cp_unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	u->pcs[u->npcs++] = pc;
	return u->npcs < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Registers that the regs mask must hold for set_initial_registers. */
static int unwinder__regs_ok(const struct cp_unwind_regs *r)
{
	for (int i = 0; i < 17; i++)
		if (!(r->mask & (1ull << dwarf_to_perf[i])))
			return 0;
	return 1;
}

int cp_unwinder__unwind(struct cp_unwinder *u, uint32_t tid, const struct cp_unwind_regs *r,
			uint64_t *pcs, int max, int *complete)
{
	int ret;

	*complete = 0;
	if (!unwinder__regs_ok(r) || max < 1)
		return 0;
	unwinder__end_report(u);
	if (!u->attached) {
		/* NULL: the architecture comes from the modules reported. */
		if (!dwfl_attach_state(u->dwfl, NULL, (pid_t)tid, &thread_callbacks, u))
			return 0;
		u->attached = 1;
	}
	u->cur = r;
	u->read_failed = 0;
	u->cur_tid = tid;
	u->pcs = pcs;
	u->npcs = 0;
	u->max = max;
	ret = dwfl_getthread_frames(u->dwfl, (pid_t)tid, unwinder__frame, u);
	/*
	 * libdwfl ends quietly (0) both at the outermost frame (CFI says the
	 * return address is undefined there, as _start's and clone's do) and
	 * where memory it needed was missing, so the latter is noted in
	 * memory_read: that is a stack that ends early.
	 */
	*complete = ret == 0 && !u->read_failed && u->npcs < max;
	if (!u->npcs)
		pcs[u->npcs++] = r->regs[PERF_REG_X86_IP];
	return u->npcs;
}

static int64_t get_s32(const unsigned char *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Read the binary search table of PT_GNU_EH_FRAME: version 1, then the
 * encodings of eh_frame_ptr, fde_count and the table.  Linkers write the
 * table as pairs of signed 32-bit offsets from the header
 * (DW_EH_PE_datarel | DW_EH_PE_sdata4); anything else is left alone.
 */
static void fde_table__read(struct fde_table *t)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(t->mod, &bias);
	size_t nph = 0;

	if (!elf || elf_getphdrnum(elf, &nph))
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		const unsigned char *p;
		uint64_t count;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (!d || d->d_size < 12)
			return;
		p = d->d_buf;
		/* eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4 */
		if (p[0] != 1 || p[1] != 0x1b || p[2] != 0x03 || p[3] != 0x3b)
			return;
		count = (uint32_t)get_s32(p + 8);
		if (count > (d->d_size - 12) / 8)
			return;
		t->starts = xmalloc((count ? count : 1) * sizeof(*t->starts));
		for (uint64_t k = 0; k < count; k++)
			t->starts[k] = ph.p_vaddr + (uint64_t)get_s32(p + 12 + 8 * k);
		t->n = count;
		return;
	}
}

static const struct fde_table *unwinder__fdes(struct cp_unwinder *u, Dwfl_Module *mod)
{
	for (size_t i = 0; i < u->nfdes; i++)
		if (u->fdes[i].mod == mod)
			return &u->fdes[i];
	ALLOC_GROW(u->fdes, u->nfdes + 1, u->fdes_alloc);
	u->fdes[u->nfdes] = (struct fde_table){ .mod = mod };
	fde_table__read(&u->fdes[u->nfdes]);
	return &u->fdes[u->nfdes++];
}

/*
 * Start of the CFI frame description (FDE) covering addr, or 0: CFI must
 * cover it (dwarf_cfi_addrframe), and the FDE that starts last at or
 * before it is the one.
 */
static uint64_t cfi_start(struct cp_unwinder *u, Dwfl_Module *mod, uint64_t addr)
{
	Dwarf_Addr bias, elf_bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	Dwarf_Frame *frame = NULL;
	const struct fde_table *t;
	size_t lo = 0, hi;
	uint64_t v;

	if (!cfi || dwarf_cfi_addrframe(cfi, addr - bias, &frame))
		return 0;
	free(frame);
	if (!dwfl_module_getelf(mod, &elf_bias))
		return 0;
	t = unwinder__fdes(u, mod);
	v = addr - elf_bias;
	for (hi = t->n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->starts[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? t->starts[lo - 1] + elf_bias : 0;
}

uint64_t cp_unwinder__fn_entry(struct cp_unwinder *u, uint64_t addr)
{
	Dwfl_Module *mod;
	GElf_Off off;
	GElf_Sym sym;
	uint64_t start;

	unwinder__end_report(u);
	mod = dwfl_addrmodule(u->dwfl, addr);
	if (!mod)
		return addr;
	if (dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL) &&
	    (GELF_ST_TYPE(sym.st_info) == STT_FUNC || GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC))
		return addr - off;
	start = cfi_start(u, mod, addr);
	return start ? start : addr;
}
