/*
 * sled-shapes.S - the thunks and stubs of bench/sled-shapes.c's shapes
 * (see there).  Entered by fib's patched sled with rsp = the slot (the
 * return address in it); every argument register is kept, r11 is free.
 * Offsets: struct node fn 0, site 8, stub 16, c1 24, c2 32, calls 40;
 * struct frame node 0, slot 8, ret 16 (24 bytes).  No CFI: nothing here
 * is unwound through (a benchmark).
 */
	.text

/* stub: a C leaf finds and pushes, the thunk jumps to the call's stub. */
	.globl thunk_stub
	.p2align 6
thunk_stub:
	push	%rdi
	push	%rax
	lea	16(%rsp), %rdi
	call	shape_enter
	mov	%rax, %r11
	pop	%rax
	pop	%rdi
	lea	8(%rsp), %rsp
	jmp	*%r11

.macro STUB_C k
	.p2align 6
stub_c_\k:
	call	*body(%rip)
	push	%rax
	mov	%rsp, %rdi
	call	shape_exit
	pop	%rax
	pushq	shape_site+8*\k(%rip)
	ret
.endm
	STUB_C 0
	STUB_C 1
	STUB_C 2

/* thunkret: the thunk calls the body and returns to the address the frame kept. */
	.globl thunk_ret
	.p2align 6
thunk_ret:
	push	%rdi
	push	%rax
	lea	16(%rsp), %rdi
	call	shape_enter
	pop	%rax
	pop	%rdi
	lea	8(%rsp), %rsp
	call	fib+5
	push	%rax
	mov	%rsp, %rdi
	call	shape_exit
	mov	%rax, %r11
	pop	%rax
	push	%r11
	ret

/*
 * The assembly entry: rax and rdi saved, r11 free.  The node among the
 * root's last two children (else shape_enter, the C leaf), counted, and a
 * frame pushed.  Leaves rax = the node, rdi, rax restored by the caller's
 * pops; at the end r11 = the node's stub.
 */
.macro ASM_ENTER slow
	push	%rax
	push	%rdi
	mov	16(%rsp), %r11			/* the return address */
	lea	shape_root(%rip), %rax
	mov	24(%rax), %rax			/* c1 */
	test	%rax, %rax
	jz	\slow
	cmp	%r11, 8(%rax)
	jne	1f
	lea	fib(%rip), %rdi
	cmp	%rdi, (%rax)
	je	2f
1:	lea	shape_root(%rip), %rax
	mov	32(%rax), %rax			/* c2 */
	test	%rax, %rax
	jz	\slow
	cmp	%r11, 8(%rax)
	jne	\slow
	lea	fib(%rip), %rdi
	cmp	%rdi, (%rax)
	jne	\slow
2:	addq	$1, 40(%rax)
	mov	shape_top@gottpoff(%rip), %rdi
	mov	%fs:(%rdi), %rdi
	add	$24, %rdi
	mov	%rax, (%rdi)
	mov	%r11, 16(%rdi)
	lea	16(%rsp), %r11
	mov	%r11, 8(%rdi)
	mov	shape_top@gottpoff(%rip), %r11
	mov	%rdi, %fs:(%r11)
	mov	16(%rax), %r11			/* the stub */
	pop	%rdi
	pop	%rax
.endm

/* The assembly exit: rax, rdx (the return values) kept; rcx, rsi, r11 free. */
.macro ASM_EXIT
	mov	shape_top@gottpoff(%rip), %r11
	mov	%fs:(%r11), %rcx
	lea	-8(%rsp), %rsi			/* the slot */
	cmp	%rsi, 8(%rcx)
	jne	9f
	sub	$24, %rcx
	mov	%rcx, %fs:(%r11)
.endm

	.globl thunk_ret_asm
	.p2align 6
thunk_ret_asm:
	ASM_ENTER 8f
	lea	8(%rsp), %rsp
	call	fib+5
	ASM_EXIT
	pushq	24+16(%rcx)			/* the popped frame's return address */
	ret
8:	lea	16(%rsp), %rdi
	call	shape_enter
	pop	%rdi
	pop	%rax
	lea	8(%rsp), %rsp
	call	fib+5
	ASM_EXIT
	pushq	24+16(%rcx)
	ret
9:	ud2

	.globl thunk_stub_asm
	.p2align 6
thunk_stub_asm:
	ASM_ENTER 8f
	lea	8(%rsp), %rsp
	jmp	*%r11
8:	lea	16(%rsp), %rdi
	call	shape_enter
	mov	%rax, %r11
	pop	%rdi
	pop	%rax
	lea	8(%rsp), %rsp
	jmp	*%r11

.macro STUB_ASM k
	.p2align 6
stub_asm_\k:
	call	*body(%rip)
	ASM_EXIT
	pushq	shape_site+8*\k(%rip)
	ret
9:	ud2
.endm
	STUB_ASM 0
	STUB_ASM 1
	STUB_ASM 2

	.data
	.globl stub_c, stub_asm
	.p2align 3
body:	.quad	fib+5
stub_c:	.quad	stub_c_0, stub_c_1, stub_c_2
stub_asm:
	.quad	stub_asm_0, stub_asm_1, stub_asm_2
	.section .note.GNU-stack,"",@progbits
