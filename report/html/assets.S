/*
 * assets.S - the HTML report's page, style sheet and script, built into
 * callprof as they are (report/html.c writes them out), so they stay real
 * files to edit, lint and diff, and callprof needs no data files at run
 * time.  Each is NUL-terminated.  Paths are relative to the top of the
 * tree, where make runs the assembler; the Makefile lists the files as the
 * object's prerequisites, since the compiler's -MMD does not see .incbin.
 */
	.section .rodata

	.globl	cp_html_page
	.type	cp_html_page, @object
cp_html_page:
	.incbin	"report/html/page.html"
	.byte	0
	.size	cp_html_page, . - cp_html_page

	.globl	cp_html_css
	.type	cp_html_css, @object
cp_html_css:
	.incbin	"report/html/report.css"
	.byte	0
	.size	cp_html_css, . - cp_html_css

	.globl	cp_html_js
	.type	cp_html_js, @object
cp_html_js:
	.incbin	"report/html/report.js"
	.byte	0
	.size	cp_html_js, . - cp_html_js

	/* No executable stack for the tool because of this object. */
	.section .note.GNU-stack, "", @progbits
