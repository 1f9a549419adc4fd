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

/* A function's instances, as cp_unwinder__fn_dwarf found them. */
struct fn_entry {
	struct cp_unwind_fn fn;
	struct cp_unwind_inst *inst;
	struct cp_unwind_range *ranges;
};

/*
 * A compile unit's out-of-line function copies that have an abstract
 * origin (a function also inlined somewhere, or a clone of one): where the
 * hooks of an inlined instance of that origin point.
 */
struct origin_copy {
	Dwarf_Off origin; /* the abstract DIE's offset */
	uint64_t entry;	  /* the copy's entry, in the process */
};

struct origin_map {
	Dwfl_Module *mod;
	Dwarf_Off cu;		/* the unit's DIE offset */
	struct origin_copy *c;	/* sorted by origin */
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
	uint64_t *pcs;		    /* output of the frame callback: pcs, */
	struct cp_unwind_frame *frames; /* or whole frames */
	int npcs, max;
	struct fn_entry **fns;	    /* cp_unwinder__fn_dwarf's, cached (they never move) */
	size_t nfns, fns_alloc;
	struct origin_map *origins; /* per compile unit: out-of-line copies by origin */
	size_t norigins, origins_alloc;
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
	for (size_t i = 0; i < u->nfns; i++) {
		free(u->fns[i]->inst);
		free(u->fns[i]->ranges);
		free(u->fns[i]);
	}
	free(u->fns);
	for (size_t i = 0; i < u->norigins; i++)
		free(u->origins[i].c);
	free(u->origins);
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

/*
 * Only the stack copy exists: an unwind needing more stops there.  Below
 * sp only the red zone, where the copy has it (a stopped thread's: a
 * sample has none): gcc leaves the CFI of a register popped by an
 * epilogue's leave saying it is at CFA - 16, which is below sp by then,
 * and the popped value still lies there.
 */
static bool unwinder__memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct cp_unwinder *u = arg;
	const struct cp_unwind_regs *r = u->cur;
	uint64_t sp = r->regs[PERF_REG_X86_SP];

	if (addr < sp) {
		if (sp - addr > r->below || addr + sizeof(*result) > sp)
			return false; /* libdwfl probes below sp at times; that ends nothing */
		memcpy(result, r->stack + (r->below - (sp - addr)), sizeof(*result));
		return true;
	}
	if (addr - sp > r->stack_size || r->stack_size - (addr - sp) < sizeof(*result)) {
		u->read_failed = 1; /* the stack goes on beyond the copy */
		return false;
	}
	memcpy(result, r->stack + r->below + (addr - sp), sizeof(*result));
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
	if (u->frames) {
		struct cp_unwind_frame *f = &u->frames[u->npcs];
		Dwarf_Word sp, di, si;

		memset(f, 0, sizeof(*f));
		f->pc = pc;
		f->activation = activation;
		/* DWARF registers 7 rsp, 5 rdi, 4 rsi */
		if (dwfl_frame_reg(state, 7, &sp) == 0)
			f->sp = sp;
		if (activation && dwfl_frame_reg(state, 5, &di) == 0 &&
		    dwfl_frame_reg(state, 4, &si) == 0) {
			f->di = di;
			f->si = si;
			f->have_args = 1;
		}
	} else {
		u->pcs[u->npcs] = pc;
	}
	u->npcs++;
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

/*
 * Unwind into u->pcs or u->frames (set by the caller): the number of
 * frames, or -1 when no walk could start.
 */
static int unwinder__walk(struct cp_unwinder *u, uint32_t tid, const struct cp_unwind_regs *r,
			  int max, int *complete)
{
	int ret;

	*complete = 0;
	if (!unwinder__regs_ok(r) || max < 1)
		return -1;
	unwinder__end_report(u);
	if (!u->attached) {
		/* NULL: the architecture comes from the modules reported. */
		if (!dwfl_attach_state(u->dwfl, NULL, (pid_t)tid, &thread_callbacks, u))
			return -1;
		u->attached = 1;
	}
	u->cur = r;
	u->read_failed = 0;
	u->cur_tid = tid;
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
	return u->npcs;
}

int cp_unwinder__unwind(struct cp_unwinder *u, uint32_t tid, const struct cp_unwind_regs *r,
			uint64_t *pcs, int max, int *complete)
{
	int n;

	u->pcs = pcs;
	u->frames = NULL;
	n = unwinder__walk(u, tid, r, max, complete);
	if (n < 0)
		return 0;
	if (!n)
		pcs[n++] = r->regs[PERF_REG_X86_IP];
	return n;
}

int cp_unwinder__frames(struct cp_unwinder *u, uint32_t tid, const struct cp_unwind_regs *r,
			struct cp_unwind_frame *frames, int max, int *complete)
{
	int n;

	u->pcs = NULL;
	u->frames = frames;
	n = unwinder__walk(u, tid, r, max, complete);
	u->frames = NULL;
	if (n < 0)
		return 0;
	if (!n) {
		memset(&frames[0], 0, sizeof(frames[0]));
		frames[0].pc = r->regs[PERF_REG_X86_IP];
		frames[0].sp = r->regs[PERF_REG_X86_SP];
		frames[0].di = r->regs[PERF_REG_X86_DI];
		frames[0].si = r->regs[PERF_REG_X86_SI];
		frames[0].activation = frames[0].have_args = 1;
		n = 1;
	}
	return n;
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

/* ---- functions and the functions inlined into them (callprof attach) ---- */

/* The first address of a concrete DIE's code (DWARF address), or -1. */
static int die_entry(Dwarf_Die *die, Dwarf_Addr *entry)
{
	Dwarf_Addr base, lo, hi;

	if (dwarf_entrypc(die, entry) == 0)
		return 0;
	/* Only ranges (a function with a cold part): the first is where it begins. */
	if (dwarf_ranges(die, 0, &base, &lo, &hi) > 0) {
		*entry = lo;
		return 0;
	}
	return -1;
}

/* The DIE an attribute refers to (DW_AT_abstract_origin), or NULL. */
static Dwarf_Die *die_ref(Dwarf_Die *die, int name, Dwarf_Die *mem)
{
	Dwarf_Attribute at;

	if (!dwarf_attr(die, name, &at))
		return NULL;
	return dwarf_formref_die(&at, mem);
}

static int cmp_origin(const void *x, const void *y)
{
	const struct origin_copy *a = x, *b = y;

	return a->origin < b->origin ? -1 : a->origin > b->origin;
}

/* Collect the out-of-line copies below die (a unit, a namespace, a class). */
static void collect_copies(Dwarf_Die *die, Dwarf_Addr bias, struct origin_map *m, size_t *alloc,
			   int depth)
{
	Dwarf_Die child, omem;

	if (depth > 16 || dwarf_child(die, &child))
		return;
	do {
		Dwarf_Die *o;
		Dwarf_Addr entry;

		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			o = die_ref(&child, DW_AT_abstract_origin, &omem);
			if (o && !die_entry(&child, &entry)) {
				ALLOC_GROW(m->c, m->n + 1, *alloc);
				m->c[m->n].origin = dwarf_dieoffset(o);
				m->c[m->n].entry = entry + bias;
				m->n++;
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			collect_copies(&child, bias, m, alloc, depth + 1);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* The out-of-line copies of the unit whose DIE is cudie (in mod), made once. */
static const struct origin_map *unit_copies(struct cp_unwinder *u, Dwfl_Module *mod,
					    Dwarf_Die *cudie, Dwarf_Addr bias)
{
	Dwarf_Off off = dwarf_dieoffset(cudie);
	struct origin_map *m;
	size_t alloc = 0;

	for (size_t i = 0; i < u->norigins; i++)
		if (u->origins[i].mod == mod && u->origins[i].cu == off)
			return &u->origins[i];
	ALLOC_GROW(u->origins, u->norigins + 1, u->origins_alloc);
	m = &u->origins[u->norigins++];
	*m = (struct origin_map){ .mod = mod, .cu = off };
	collect_copies(cudie, bias, m, &alloc, 0);
	if (m->n)
		qsort(m->c, m->n, sizeof(*m->c), cmp_origin);
	return m;
}

/* The ELF symbol that starts at addr: its name, or NULL. */
static const char *symbol_at(Dwfl_Module *mod, uint64_t addr)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);

	return name && !off ? name : NULL;
}

/* The name a function's symbol has: its linkage name, else its name. */
static const char *die_symbol_name(Dwarf_Die *die)
{
	Dwarf_Attribute at;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at) ||
	    dwarf_attr_integrate(die, DW_AT_name, &at))
		return dwarf_formstring(&at);
	return NULL;
}

/*
 * Among the out-of-line copies of origin in m, the function's own: the
 * one its symbol names (a clone is name.constprop.0, name.isra.0, ...);
 * else the only one whose symbol has no such suffix.  0 if none.
 */
static uint64_t own_copy(const struct origin_map *m, Dwfl_Module *mod, Dwarf_Off origin,
			 const char *name)
{
	struct origin_copy key = { .origin = origin };
	const struct origin_copy *c = m->n ? bsearch(&key, m->c, m->n, sizeof(*m->c), cmp_origin) :
					     NULL;
	uint64_t plain = 0;
	int nplain = 0;

	if (!c)
		return 0;
	while (c > m->c && c[-1].origin == origin)
		c--;
	for (; c < m->c + m->n && c->origin == origin; c++) {
		const char *sym = symbol_at(mod, c->entry);

		if (!sym)
			continue;
		if (name && !strcmp(sym, name))
			return c->entry;
		if (!strchr(sym, '.')) {
			plain = c->entry;
			nplain++;
		}
	}
	return nplain == 1 ? plain : 0;
}

/*
 * The entry that the hooks of an instance of origin (an abstract DIE)
 * pass: its own out-of-line copy's, looked for in the unit of the
 * instance (cudie), then in the origin's own unit.  0 if none.
 */
static uint64_t origin_entry(struct cp_unwinder *u, Dwfl_Module *mod, Dwarf_Addr bias,
			     Dwarf_Die *cudie, Dwarf_Die *origin)
{
	Dwarf_Die ocu, *spec, smem;
	const char *name = die_symbol_name(origin);
	Dwarf_Addr entry;
	uint64_t e;

	/* An origin with code of its own is the copy (no DW_AT_inline). */
	if (!dwarf_hasattr(origin, DW_AT_inline) && !die_entry(origin, &entry))
		return entry + bias;
	e = own_copy(unit_copies(u, mod, cudie, bias), mod, dwarf_dieoffset(origin), name);
	if (!e && dwarf_diecu(origin, &ocu, NULL, NULL) &&
	    dwarf_dieoffset(&ocu) != dwarf_dieoffset(cudie))
		e = own_copy(unit_copies(u, mod, &ocu, bias), mod, dwarf_dieoffset(origin), name);
	/* A declaration's origin (C++: DW_AT_specification) names the same copies. */
	if (!e && (spec = die_ref(origin, DW_AT_specification, &smem)))
		e = own_copy(unit_copies(u, mod, cudie, bias), mod, dwarf_dieoffset(spec), name);
	return e;
}

struct inst_walk {
	struct cp_unwinder *u;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Dwarf_Die *cudie;
	struct fn_entry *fe;
	size_t ialloc, ralloc, nranges;
	size_t *first; /* per instance: its first range in fe->ranges */
	size_t falloc;
};

/* Add die (the function, or an inlined instance inside parent) and its ranges. */
static int add_inst(struct inst_walk *w, Dwarf_Die *die, int parent, uint64_t entry)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	uint32_t n = w->fe->fn.n;

	ALLOC_GROW(w->fe->inst, n + 1, w->ialloc);
	ALLOC_GROW(w->first, n + 1, w->falloc);
	w->first[n] = w->nranges;
	w->fe->inst[n] = (struct cp_unwind_inst){ .entry = entry, .parent = parent };
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		ALLOC_GROW(w->fe->ranges, w->nranges + 1, w->ralloc);
		w->fe->ranges[w->nranges++] = (struct cp_unwind_range){ lo + w->bias, hi + w->bias };
		w->fe->inst[n].nranges++;
	}
	w->fe->fn.n++;
	return (int)n;
}

/* The instances inlined below die, which is in instance parent. */
static void walk_inlined(struct inst_walk *w, Dwarf_Die *die, int parent, int depth)
{
	Dwarf_Die child, omem;

	if (depth > 64 || dwarf_child(die, &child))
		return;
	do {
		Dwarf_Die *o;
		int k;

		switch (dwarf_tag(&child)) {
		case DW_TAG_inlined_subroutine:
			o = die_ref(&child, DW_AT_abstract_origin, &omem);
			k = add_inst(w, &child, parent,
				     o ? origin_entry(w->u, w->mod, w->bias, w->cudie, o) : 0);
			walk_inlined(w, &child, k, depth + 1);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			walk_inlined(w, &child, parent, depth + 1);
			break;
		default:
			break; /* nested functions have code of their own */
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int fn_entry__has(const struct fn_entry *fe, uint64_t addr)
{
	const struct cp_unwind_inst *f = &fe->inst[0];

	for (uint32_t i = 0; i < f->nranges; i++)
		if (addr >= f->ranges[i].lo && addr < f->ranges[i].hi)
			return 1;
	return 0;
}

/*
 * The subprogram DIE below die (a unit, a namespace, a class) whose code
 * holds DWARF address a, into *out: 0, or -1 if none.  (dwarf_getscopes
 * goes from an inlined instance to its abstract origin's scopes, not to
 * the function it was inlined into.)
 */
static int fn_die(Dwarf_Die *die, Dwarf_Addr a, Dwarf_Die *out, int depth)
{
	Dwarf_Die child;

	if (depth > 16 || dwarf_child(die, &child))
		return -1;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			if (dwarf_haspc(&child, a) > 0) {
				*out = child;
				return 0;
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (!fn_die(&child, a, out, depth + 1))
				return 0;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return -1;
}

const struct cp_unwind_fn *cp_unwinder__fn_dwarf(struct cp_unwinder *u, uint64_t addr)
{
	Dwarf_Die cudie, *cu, fn, omem;
	Dwarf_Addr bias;
	Dwfl_Module *mod;
	struct fn_entry *fe;
	struct inst_walk w;
	Dwarf_Addr entry;
	uint64_t own = 0;

	for (size_t i = 0; i < u->nfns; i++)
		if (fn_entry__has(u->fns[i], addr))
			return &u->fns[i]->fn;
	unwinder__end_report(u);
	mod = dwfl_addrmodule(u->dwfl, addr);
	if (!mod)
		return NULL;
	cu = dwfl_module_addrdie(mod, addr, &bias);
	/* Without .debug_aranges (clang writes none): the unit whose ranges hold it. */
	for (Dwarf_Die *c = NULL; !cu && (c = dwfl_module_nextcu(mod, c, &bias));)
		if (dwarf_haspc(c, addr - bias) > 0)
			cu = c;
	if (!cu)
		return NULL;
	cudie = *cu;
	if (fn_die(&cudie, addr - bias, &fn, 0))
		return NULL;
	/* A copy of an origin (also inlined elsewhere, or a clone): the origin's own copy. */
	if (die_ref(&fn, DW_AT_abstract_origin, &omem))
		own = origin_entry(u, mod, bias, &cudie, &omem);
	else if (!die_entry(&fn, &entry))
		own = entry + bias;
	fe = xcalloc(1, sizeof(*fe));
	w = (struct inst_walk){ .u = u, .mod = mod, .bias = bias, .cudie = &cudie, .fe = fe };
	add_inst(&w, &fn, -1, own);
	walk_inlined(&w, &fn, 0, 0);
	for (uint32_t i = 0; i < fe->fn.n; i++)
		fe->inst[i].ranges = fe->ranges + w.first[i];
	free(w.first);
	fe->fn.inst = fe->inst;
	if (!fe->inst[0].nranges) {
		free(fe->inst);
		free(fe->ranges);
		free(fe);
		return NULL;
	}
	ALLOC_GROW(u->fns, u->nfns + 1, u->fns_alloc);
	u->fns[u->nfns++] = fe;
	return &fe->fn;
}
