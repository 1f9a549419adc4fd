/*
 * sleds-tramp.S - the entry trampoline a patched sled calls, and the common
 * tail of the return stubs (sleds.c, docs/internals/sleds.md).
 *
 * cp_sled_entry: reached by `call` from the sled (through the module's near
 * page: a jmp, no stack change), so [rsp] = sled + 5 and [rsp + 8] = the
 * function's return address, in its slot.  Every register a function may
 * receive an argument in is kept: rdi rsi rdx rcx r8 r9, rax (AL of
 * varargs), r10 (static chain), xmm0-7.  r11 is free at a function's entry.
 * cp_sled_entry_endbr is the same for a sled after an endbr64: the function
 * starts 4 bytes earlier, where the hooks build's this_fn points.
 *
 * cp_sled_ret_common: a stub called it (through the area's pad) when the
 * function's ret reached the stub, so rsp = the slot (the call's push went
 * there) and [rsp] = stub + 6.  The return values are kept (rax rdx xmm0
 * xmm1; the C side uses no x87), the C exit gets the slot's address, and
 * the ret goes back to the stub, whose own jump goes to the real return
 * address.
 */
	.text
	.hidden cp_sled__enter
	.hidden cp_sled__exit

.macro SLED_ENTRY name, back
	.globl \name
	.hidden \name
	.type \name, @function
	.p2align 4
\name:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	subq	$192, %rsp
	.cfi_adjust_cfa_offset 192
	movq	%rdi, 0(%rsp)
	movq	%rsi, 8(%rsp)
	movq	%rdx, 16(%rsp)
	movq	%rcx, 24(%rsp)
	movq	%r8, 32(%rsp)
	movq	%r9, 40(%rsp)
	movq	%rax, 48(%rsp)
	movq	%r10, 56(%rsp)
	movups	%xmm0, 64(%rsp)
	movups	%xmm1, 80(%rsp)
	movups	%xmm2, 96(%rsp)
	movups	%xmm3, 112(%rsp)
	movups	%xmm4, 128(%rsp)
	movups	%xmm5, 144(%rsp)
	movups	%xmm6, 160(%rsp)
	movups	%xmm7, 176(%rsp)
	movq	192(%rsp), %rdi
	subq	$\back, %rdi
	leaq	200(%rsp), %rsi
	call	cp_sled__enter
	movq	0(%rsp), %rdi
	movq	8(%rsp), %rsi
	movq	16(%rsp), %rdx
	movq	24(%rsp), %rcx
	movq	32(%rsp), %r8
	movq	40(%rsp), %r9
	movq	48(%rsp), %rax
	movq	56(%rsp), %r10
	movups	64(%rsp), %xmm0
	movups	80(%rsp), %xmm1
	movups	96(%rsp), %xmm2
	movups	112(%rsp), %xmm3
	movups	128(%rsp), %xmm4
	movups	144(%rsp), %xmm5
	movups	160(%rsp), %xmm6
	movups	176(%rsp), %xmm7
	addq	$192, %rsp
	.cfi_adjust_cfa_offset -192
	ret
	.cfi_endproc
	.size \name, . - \name
.endm

	SLED_ENTRY cp_sled_entry, 5
	SLED_ENTRY cp_sled_entry_endbr, 9

	.globl cp_sled_ret_common
	.hidden cp_sled_ret_common
	.type cp_sled_ret_common, @function
	.p2align 4
cp_sled_ret_common:
	.cfi_startproc
	subq	$72, %rsp
	.cfi_adjust_cfa_offset 72
	movq	%rax, 0(%rsp)
	movq	%rdx, 8(%rsp)
	movups	%xmm0, 16(%rsp)
	movups	%xmm1, 32(%rsp)
	leaq	72(%rsp), %rdi
	call	cp_sled__exit
	movq	0(%rsp), %rax
	movq	8(%rsp), %rdx
	movups	16(%rsp), %xmm0
	movups	32(%rsp), %xmm1
	addq	$72, %rsp
	.cfi_adjust_cfa_offset -72
	ret
	.cfi_endproc
	.size cp_sled_ret_common, . - cp_sled_ret_common

	.section .note.GNU-stack,"",@progbits
