/*
 * sleds-tramp.S - the full paths of the sled entry and of the stubs' return
 * (sleds.c has the thunks and stubs; the fast paths they jump to,
 * cp_sled__enter_fast and cp_sled__exit_fast, are assembly in hooks.c
 * beside the C structures whose offsets they use, and jump here when they
 * cannot do a call themselves; docs/internals/sleds.md).
 *
 * cp_sled_entry: jumped to with the stack as the sled found it, so [rsp]
 * = the function's return address, in its slot, and r11 = the function's
 * body (sled + 5).  Every register a function may receive an argument in
 * is kept: rdi rsi rdx rcx r8 r9, rax (AL of varargs), r10 (static
 * chain), xmm0-7; r11 is free at a function's entry and carries where to
 * jump next.  The C half returns that target and whether to take the
 * return address off the stack: for a call it records, the target is the
 * call's stub, which calls the body itself (so the body's ret returns to
 * the stub by a call/ret pair the return stack buffer predicts); otherwise
 * the body, with the stack as it was.  cp_sled_entry_endbr is the same for
 * a sled after an endbr64: the function starts 4 bytes earlier, where the
 * hooks build's this_fn points.
 *
 * cp_sled_ret_common: a stub's fast exit declined and jumped here, with
 * rsp = the slot + 8 (the body's ret popped it) and r11 = the stub.  The
 * return values are kept (rax rdx xmm0 xmm1; the C side uses no x87), the
 * C exit gets the slot's address, and it returns to the real return
 * address, pushed from the stub's data.
 */
	.text
	.hidden cp_sled__enter
	.hidden cp_sled__exit

/*
 * The stack as the program had it need not be 16-byte aligned: gcc -O2
 * calls a function it knows needs no alignment (no SSE spill below it)
 * without aligning (-fipa-stack-alignment), and our C halves may use
 * movaps on their frames.  ALIGNED_FRAME keeps the entry's rsp in rbp
 * (the CFA then follows rbp) and aligns rsp, with room for \bytes (a
 * multiple of 16); END_ALIGNED_FRAME undoes it, the CFA back at rsp +
 * \cfa, and leaves the flags alone.
 */
.macro ALIGNED_FRAME bytes
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	andq	$-16, %rsp
	subq	$\bytes, %rsp
.endm

.macro END_ALIGNED_FRAME cfa
	movq	%rbp, %rsp
	popq	%rbp
	.cfi_def_cfa %rsp, \cfa
	.cfi_restore %rbp
.endm

.macro SLED_ENTRY name, back
	.globl \name
	.hidden \name
	.type \name, @function
	.p2align 4
\name:
	.cfi_startproc
	/* The function's return address on top: unwound, this is its caller. */
	ALIGNED_FRAME 192
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
	movq	%r11, %rdi
	leaq	8(%rbp), %rsi
	movl	$\back, %edx
	call	cp_sled__enter
	movq	%rax, %r11
	/* No flags change from here to the jz below. */
	testq	%rdx, %rdx
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
	END_ALIGNED_FRAME 8
	jz	2f
	/* Taken by the stub: R off the stack. */
	leaq	8(%rsp), %rsp
	.cfi_adjust_cfa_offset -8
	jmp	*%r11
	.cfi_adjust_cfa_offset 8
2:	jmp	*%r11
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
	/* The return address is in the stub (r11), not on the stack. */
	.cfi_undefined rip
	ALIGNED_FRAME 64
	movq	%rax, 0(%rsp)
	movq	%rdx, 8(%rsp)
	movups	%xmm0, 16(%rsp)
	movups	%xmm1, 32(%rsp)
	movq	%r11, 48(%rsp)
	movq	%rbp, %rdi
	call	cp_sled__exit
	movq	0(%rsp), %rax
	movq	8(%rsp), %rdx
	movups	16(%rsp), %xmm0
	movups	32(%rsp), %xmm1
	movq	48(%rsp), %r11
	END_ALIGNED_FRAME 0
	pushq	56(%r11)		/* R: the stub's + CP_STUB_R (asserted in sleds.c) */
	.cfi_adjust_cfa_offset 8
	.cfi_offset rip, -8
	ret
	.cfi_endproc
	.size cp_sled_ret_common, . - cp_sled_ret_common

	.section .note.GNU-stack,"",@progbits
