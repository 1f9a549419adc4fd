#!/bin/sh
test_description='bad-input matrix: every command that reads a profile, every kind of damage'
. "$(dirname "$0")/lib.sh"

# Each damaged file is a good profile (made by tests/mkprofile) damaged in
# one way by tests/e2e/cprof-craft.py, which then reseals the checksums so
# that the reader meets the damage itself.  For every command that reads
# profiles, and every damaged file, the case asserts the exact error line
# (naming the file and, where there is one, the byte offset), exit status
# 1, nothing on standard output and no output file nor temporary left in
# the output's directory.  Offsets are computed from the good file's
# section table, so the expectations follow the layout, not this script.

craft () {
	python3 "$TEST_DIRECTORY/cprof-craft.py" "$@"
}

mkprofile () {
	"$CALLPROF_BUILD/tests/mkprofile" "$@"
}

# Field F (3 entsize, 4 offset, 5 size) of good.cprof's section of kind K.
sec () {
	craft info good.cprof | awk -v k="$1" -v f="$2" '$2 == k { print $f }'
}

# Byte offset of good.cprof's section table slot holding kind K.
slot () {
	craft info good.cprof | awk -v k="$1" '$2 == k { printf "0x%x\n", 48 + 24 * $1 }'
}

hex () {
	printf '0x%x' "$1"
}

# damage NAME PROBLEM MUTATION [ARG...]: NAME.cprof, and NAME.expect holding
# the one line every command must print for it.
damage () {
	_name=$1 _problem=$2 &&
	shift 2 &&
	craft good.cprof "$_name.cprof" "$@" &&
	echo "callprof: error: profile '$_name.cprof': $_problem" >"$_name.expect"
}

test_expect_success 'setup: a good profile and its damaged copies' '
	mkprofile good.cprof <<-\EOF &&
	meta exe=prog
	cmd prog arg
	thread tid=10 name=main
	node calls=1 ticks=1000
	node parent=0 fn=0x1000 calls=2 ticks=900
	node parent=1 fn=0x2000 calls=3 ticks=400
	thread tid=11 name=worker
	node calls=1 ticks=500
	node parent=0 fn=0x3000 calls=1 ticks=200
	EOF
	callprof report good.cprof >out &&
	size=$(wc -c <good.cprof) &&
	nodes=$(sec 6 4) && nsz=$(sec 6 3) && threads=$(sec 5 4) && meta=$(sec 2 4) &&
	strings=$(sec 1 5) && hsize=$(craft boundaries good.cprof | sed -n 2p) &&

	echo "callprof: error: profile '"'"'missing.cprof'"'"': cannot open: No such file or directory" >missing.expect &&
	mkdir dir.cprof &&
	echo "callprof: error: profile '"'"'dir.cprof'"'"': not a regular file" >dir.expect &&
	: >empty.cprof &&
	echo "callprof: error: profile '"'"'empty.cprof'"'"': empty file" >empty.expect &&
	damage short "truncated: 4 bytes, header needs 48" truncate 4 &&

	damage magic "not a callprof profile (bad magic)" magic &&
	# A file of the next major version, that needs a reader of it.
	reads=$(sed -n "s/^#define CP_READER_VERSION \([0-9][0-9]*\).*/\1/p" \
		"$TOP_DIRECTORY/format/format.h") &&
	test -n "$reads" &&
	next=$((reads + 1)) &&
	damage major "format version $next needs a reader of version $next, this callprof reads $reads" \
		version $next &&
	damage nsections "header at 0x8: bad header size $hsize for 17 sections" nsections 17 &&
	damage headersize "header at 0x8: bad header size 40 for 7 sections" header-size 40 &&
	damage huge-section "section table at $(slot 6): section 6 ($(hex $nodes)+1152921504606846976) outside the file" \
		section-size nodes 0x1000000000000000 &&
	damage section-in-header "section table at $(slot 6): section 6 (0x10+$(sec 6 5)) overlaps the header" \
		section-offset nodes 16 &&
	damage section-past-end "section table at $(slot 6): section 6 ($(hex $size)+$(sec 6 5)) outside the file" \
		section-offset nodes $size &&
	damage zero-entsize "section table at $(slot 6): record size 0" section-entsize nodes 0 &&
	damage small-entsize "node section at $(hex $nodes): records of 8 bytes, need 72" \
		section-entsize nodes 8 &&
	damage ragged-size "section table at $(slot 6): size 100 not a multiple of $nsz" \
		section-size nodes 100 &&
	damage dup-section "section table at $(slot 6): section 6 appears twice" \
		section-kind cmdline nodes &&
	damage overlap "section table at $(slot 7): section 7 ($(hex $meta)+$(sec 7 5)) overlaps section 2 ($(hex $meta)+$(sec 2 5))" \
		section-offset cmdline $meta &&
	damage billion-nodes "thread record at $(hex $threads): nodes 0+1000000000 do not follow on at 0 of 5" \
		thread-nnodes 0 1000000000 &&
	damage no-nodes "thread record at $(hex $threads): nodes 0+0 do not follow on at 0 of 5" \
		thread-nnodes 0 0 &&
	damage self-parent "node record at $(hex $((nodes + 2 * nsz))): parent 2 is not an earlier node of its thread" \
		node-parent 2 2 &&
	damage cycle "node record at $(hex $((nodes + nsz))): parent 2 is not an earlier node of its thread" \
		node-parent 1 2 &&
	damage parent-out-of-range "node record at $(hex $((nodes + 2 * nsz))): parent 4000000000 is not an earlier node of its thread" \
		node-parent 2 4000000000 &&
	damage root-with-parent "node record at $(hex $nodes): parent 0 is not an earlier node of its thread" \
		node-parent 0 0 &&
	damage string-past-end "thread record at $(hex $threads): string reference 100000 beyond $strings bytes" \
		thread-name 0 100000 &&
	damage no-strings "no string section" section-size strings 0 &&
	damage checksum-only "data checksum mismatch" flip $((size - 2)) &&
	sed "s/data checksum mismatch/&.*/" checksum-only.expect >checksum-only.pattern &&

	for cut in $(craft boundaries good.cprof)
	do
		test $cut -lt $size || continue
		damage cut-$cut "truncated: $cut bytes, header says $size" truncate $cut &&
		echo cut-$cut >>cuts || return 1
	done &&
	test_line_count -ge 6 cuts
'

# check NAME: err holds exactly NAME's line, and out is empty.
check () {
	if test -f "$1.pattern"
	then
		test_line_count = 1 err && grep -x -f "$1.pattern" err
	else
		test_cmp "$1.expect" err
	fi &&
	test_must_be_empty out
}

# The output directory o/ holds nothing: no OUT, no OUT.tmp.*.
check_no_output () {
	ls -A o >listing &&
	test_must_be_empty listing
}

damaged='missing dir empty short magic major nsections headersize huge-section
section-in-header section-past-end zero-entsize small-entsize ragged-size dup-section
overlap billion-nodes no-nodes self-parent cycle parent-out-of-range root-with-parent
string-past-end no-strings checksum-only'

for f in $damaged
do
	test_expect_success "report: $f" "
		test_expect_code 1 callprof report $f.cprof >out 2>err &&
		check $f
	"
	test_expect_success "report --flat: $f" "
		test_expect_code 1 callprof report --flat $f.cprof >out 2>err &&
		check $f
	"
	for fmt in folded json callgrind speedscope pprof svg plist html
	do
		test_expect_success "export -f $fmt -o: $f" "
			rm -rf o && mkdir o &&
			test_expect_code 1 callprof export -f $fmt -o o/out $f.cprof >out 2>err &&
			check $f &&
			check_no_output
		"
	done
	test_expect_success "merge -o: $f" "
		rm -rf o && mkdir o &&
		test_expect_code 1 callprof merge -q -o o/m.cprof good.cprof $f.cprof >out 2>err &&
		check $f &&
		check_no_output
	"
	test_expect_success "diff, first: $f" "
		test_expect_code 1 callprof diff $f.cprof good.cprof >out 2>err &&
		check $f
	"
	test_expect_success "diff, second: $f" "
		test_expect_code 1 callprof diff good.cprof $f.cprof >out 2>err &&
		check $f
	"
done

# Truncated at every section boundary (and the header's end): each command.
for cmd in 'report' 'report --flat' 'export -f json -o o/out' 'export -f folded -o o/out' \
	'export -f pprof -o o/out' 'merge -q -o o/m.cprof' 'diff good.cprof'
do
	test_expect_success "$cmd: truncated at every section boundary" "
		while read f
		do
			echo \"\$f\" &&
			rm -rf o && mkdir o &&
			test_expect_code 1 callprof $cmd \$f.cprof >out 2>err &&
			check \$f &&
			check_no_output || return 1
		done <cuts
	"
done

test_expect_success 'several inputs, the last one damaged: nothing printed, nothing written' '
	test_expect_code 1 callprof report good.cprof good.cprof cycle.cprof >out 2>err &&
	check cycle &&
	rm -rf o && mkdir o &&
	test_expect_code 1 callprof export -f json -o o/out good.cprof cycle.cprof >out 2>err &&
	check cycle &&
	check_no_output
'

# Output paths.  Every writing command checks OUT before any work: a
# directory, a missing directory, a non-directory parent give one line
# naming OUT, exit 1, and nothing created.  A profile (merge, record, dump)
# is renamed into place, so only a regular file may be replaced.
writers='export-folded export-json merge record dump'

# write W OUT: run writer W with output OUT (dump: the check comes before
# the process is looked at, so any pid will do).
write () {
	case $1 in
	export-folded) callprof export -f folded -m calls -o "$2" good.cprof ;;
	export-json) callprof export -f json -o "$2" good.cprof ;;
	merge) callprof merge -q -o "$2" good.cprof ;;
	record) callprof record -o "$2" -- true ;;
	dump) callprof dump -o "$2" $$ ;;
	esac
}

for w in $writers
do
	test_expect_success "$w: OUT in a missing directory" "
		test_expect_code 1 write $w nodir/out >out 2>err &&
		echo \"callprof: error: cannot create 'nodir/out': No such file or directory\" >expect &&
		test_cmp expect err &&
		test_path_is_missing nodir
	"
	test_expect_success "$w: OUT is a directory" "
		rm -rf adir && mkdir adir &&
		test_expect_code 1 write $w adir >out 2>err &&
		echo \"callprof: error: cannot create 'adir': Is a directory\" >expect &&
		test_cmp expect err &&
		ls -A adir >listing && test_must_be_empty listing &&
		test_path_is_missing adir.old
	"
	test_expect_success "$w: OUT under a file" "
		test_expect_code 1 write $w good.cprof/out >out 2>err &&
		echo \"callprof: error: cannot create 'good.cprof/out': Not a directory\" >expect &&
		test_cmp expect err
	"
	test_expect_success "$w: -o '' is a usage error" "
		test_expect_code 129 write $w '' >out 2>err &&
		test_line_count = 1 err &&
		grep -F -e '-o needs a file name' err
	"
done

for w in export-folded export-json merge
do
	test_expect_success "$w: a symlink at OUT is replaced, its target never written" "
		rm -f victim link.out link.out.old dangling.out &&
		echo precious >victim &&
		ln -s victim link.out &&
		write $w link.out >out 2>err &&
		echo precious >expect && test_cmp expect victim &&
		test -f link.out && ! test -h link.out &&
		ln -s never-created dangling.out &&
		write $w dangling.out >out 2>err &&
		test_path_is_missing never-created &&
		test -f dangling.out && ! test -h dangling.out &&
		find . -maxdepth 1 -name \"*.tmp.*\" >tmps &&
		test_must_be_empty tmps
	"
	test_expect_success "$w: the new file's mode is 0666 less the umask" "
		rm -f m.out &&
		(umask 027 && write $w m.out) &&
		echo 640 >expect && stat -c %a m.out >actual && test_cmp expect actual &&
		rm -f m.out &&
		(umask 0 && write $w m.out) &&
		echo 666 >expect && stat -c %a m.out >actual && test_cmp expect actual
	"
done

test_expect_success 'record: the profile has mode 0666 less the umask' '
	build_workload s-nested.c &&
	rm -f r.cprof &&
	(umask 027 && callprof record -o r.cprof -- ./t-nested >out 2>err) &&
	echo 640 >expect && stat -c %a r.cprof >actual && test_cmp expect actual
'

test_expect_success 'export -o a named pipe writes into it in place' '
	rm -f fifo && mkfifo fifo &&
	{ cat fifo >from-fifo & } &&
	callprof export -f folded -m calls -o fifo good.cprof &&
	wait &&
	callprof export -f folded -m calls good.cprof >expect &&
	test_cmp expect from-fifo &&
	test -p fifo
'

test_expect_success 'merge -o a named pipe is refused: a profile is renamed into place' '
	test_expect_code 1 callprof merge -q -o fifo good.cprof >out 2>err &&
	echo "callprof: error: cannot create '"'"'fifo'"'"': not a regular file (a profile is renamed into place)" >expect &&
	test_cmp expect err &&
	test -p fifo
'

test_expect_success 'export fails after its output was opened: neither OUT nor a temporary remains' '
	rm -rf o && mkdir o &&
	test_expect_code 1 callprof export -f folded -m calls --focus=no-such-function -o o/out good.cprof >out 2>err &&
	test_line_count = 1 err &&
	ls -A o >listing && test_must_be_empty listing
'

test_expect_success 'export -o /dev/null and -o /dev/full: written in place, a write error is one line' '
	callprof export -f json -o /dev/null good.cprof &&
	test -c /dev/null &&
	if test -c /dev/full
	then
		test_expect_code 1 callprof export -f json -o /dev/full good.cprof 2>err &&
		echo "callprof: error: cannot write '"'"'/dev/full'"'"': No space left on device" >expect &&
		test_cmp expect err &&
		test -c /dev/full
	fi
'

test_expect_success 'merge, record and dump refuse -o /dev/null: a profile is renamed into place' '
	echo "callprof: error: cannot create '"'"'/dev/null'"'"': not a regular file (a profile is renamed into place)" >expect &&
	for w in merge record dump
	do
		test_expect_code 1 write $w /dev/null >out 2>err &&
		test_cmp expect err &&
		test -c /dev/null || return 1
	done
'

test_done
