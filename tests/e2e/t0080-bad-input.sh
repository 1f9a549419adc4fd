#!/bin/sh
test_description='report and export reject broken profiles cleanly'
. "$(dirname "$0")/lib.sh"

# Every broken input must give exit status 1 (never a crash: the callprof
# wrapper in lib.sh flags deaths by signal), exactly one line on stderr that
# names the file, and no output file (nor temporary file) left behind.

test_expect_success 'setup: a real profile and broken copies of it' '
	build_workload s-nested.c &&
	callprof record -o good.cprof -- ./t-nested &&
	size=$(wc -c <good.cprof) &&
	test "$size" -ge 16 &&
	head -c $((size / 2)) good.cprof >truncated.cprof &&
	cp good.cprof badmagic.cprof &&
	printf XXXXXXXX | dd conv=notrunc of=badmagic.cprof 2>/dev/null &&
	test $(wc -c <badmagic.cprof) = $size &&
	: >empty.cprof &&
	mkdir dir.cprof
'

test_expect_success 'the good profile is accepted' '
	callprof report good.cprof >out 2>err &&
	test -s out &&
	callprof export -f folded -m calls good.cprof >out 2>err &&
	test_cmp "$EXPECT/nested.calls" out
'

# missing.cprof is never created.
for f in truncated badmagic empty missing dir
do
	test_expect_success "report rejects $f.cprof with one line" "
		test_expect_code 1 callprof report $f.cprof >out 2>err &&
		test_line_count = 1 err &&
		grep -F $f.cprof err
	"

	test_expect_success "export rejects $f.cprof with one line" "
		test_expect_code 1 callprof export -f folded $f.cprof >out 2>err &&
		test_line_count = 1 err &&
		grep -F $f.cprof err
	"

	test_expect_success "export -o rejects $f.cprof and leaves no file" "
		mkdir out-$f &&
		(
			cd out-$f &&
			test_expect_code 1 callprof export -f folded -o out.txt ../$f.cprof 2>../err
		) &&
		ls -A out-$f >listing &&
		test_must_be_empty listing &&
		test_line_count = 1 err &&
		grep -F $f.cprof err
	"
done

test_expect_success 'truncated anywhere: always a clean error' '
	size=$(wc -c <good.cprof) &&
	for n in 1 4 7 8 9 12 16 24 32 48 64 100 128 256 $((size / 3)) $((size - 8)) $((size - 1))
	do
		test $n -lt $size || continue
		head -c $n good.cprof >cut.cprof &&
		echo "cut at $n of $size" &&
		test_expect_code 1 callprof export -f folded cut.cprof >out 2>err &&
		test_line_count = 1 err || return 1
	done
'

test_expect_success 'one byte flipped, at 64 places: never a crash' '
	size=$(wc -c <good.cprof) &&
	step=$((size / 64 + 1)) &&
	n=0 &&
	while test $n -lt $size
	do
		cp good.cprof flip.cprof &&
		printf "\377" | dd conv=notrunc bs=1 seek=$n of=flip.cprof 2>/dev/null &&
		{
			callprof export -f folded flip.cprof >out 2>err
			status=$?
			echo "byte $n: exit $status"
			test $status -le 1 || return 1
			test $status = 0 || test_line_count = 1 err || return 1
		} &&
		n=$((n + step)) || return 1
	done
'

test_done
