#!/bin/sh
# matrix: cc-opt
test_description='exec: the old image writes its profile first, the new one its own'
. "$(dirname "$0")/lib.sh"

test_expect_success 'exec of the recorded program: PATH.exec1 for the old image, PATH for the new' '
	build_workload s-exec.c &&
	callprof record -o ex.cprof -- ./t-exec >out 2>err &&
	ls ex.cprof* >files &&
	printf "ex.cprof\nex.cprof.exec1\n" >expect && test_cmp expect files &&
	callprof export -f folded -m calls ex.cprof.exec1 >old &&
	printf "main 1\nmain;before 1\n" >expect && test_cmp expect old &&
	callprof export -f folded -m calls ex.cprof >new &&
	printf "main 1\nmain;after 1\n" >expect && test_cmp expect new &&
	grep "^callprof: other processes of the run wrote 1 profile: ex.cprof.exec1 (pid [0-9]* ./t-exec)$" err
'

test_expect_success 'fork 5 children, one of which execs: every call in exactly one profile' '
	callprof record -o fk.cprof -- ./t-exec fork 5 >out 2>err &&
	ls fk.cprof* >files &&
	test_line_count = 7 files &&
	test $(grep -c "^fk\.cprof\.[0-9]*$" files) = 5 &&
	test $(grep -c "^fk\.cprof\.[0-9]*\.exec1$" files) = 1 &&
	callprof export -f folded -m calls fk.cprof >parent &&
	grep "^main;reap 1$" parent &&
	! grep work parent &&
	for f in $(cat files)
	do
		callprof export -f folded -m calls "$f" || return 1
	done >all &&
	awk "/;work / { w += \$2 } /;after / { a += \$2 } END { printf \"%.0f %.0f\\n\", w, a }" all >sums &&
	echo "15 1" >expect && test_cmp expect sums &&
	grep "^callprof: other processes of the run wrote 6 profiles: " err
'

test_expect_success 'fork 50 children, one of which execs: merged, the counts add up exactly' '
	callprof record -o f50.cprof -- ./t-exec fork 50 >out 2>err &&
	ls f50.cprof* >files &&
	test_line_count = 52 files &&
	grep "^callprof: other processes of the run wrote 51 profiles: " err &&
	callprof export -f folded -m calls $(cat files) >actual &&
	printf "main 2\nmain;after 1\nmain;reap 1\nmain;work 1275\n" >expect &&
	test_cmp expect actual &&
	callprof report $(cat files) >report &&
	grep "^# 52 processes merged (pid " report
'

test_expect_success '--pid picks one process out of the set' '
	pid=$(sed -n "s/^f50\.cprof\.\([0-9]*\)$/\1/p" files | sort -n | sed -n 10p) &&
	callprof export -f folded -m calls --pid=$pid $(cat files) >one &&
	grep "^main;work [0-9]*$" one >line &&
	test_line_count = 1 line &&
	callprof export -f folded -m calls f50.cprof.$pid >direct &&
	test_cmp direct one &&
	test_expect_code 1 callprof report --pid=1 $(cat files) 2>err &&
	grep "^callprof: error: no profile of pid 1 among the 52 files given$" err &&
	test_expect_code 129 callprof report --pid=x f50.cprof 2>err &&
	grep "pid wants a process id" err
'

test_expect_success '--threads=each keeps every process and thread apart' '
	pid=$(sed -n "s/^f50\.cprof\.\([0-9]*\)$/\1/p" files | sort -n | sed -n 10p) &&
	callprof export -f folded -m calls --threads=each $(cat files) >each &&
	test $(cut -d";" -f1 each | sort -u | wc -l) -eq 52 &&
	grep -q "^pid $pid: " each
'

test_expect_success 'an exec that fails writes the old image once more at exit, nothing lost' '
	cat >fail.c <<-\EOT &&
	#include <unistd.h>
	__attribute__((noinline)) void step(void) { __asm__ volatile(""); }
	int main(void) { step(); execl("/nonexistent", "x", (char *)0); step(); return 0; }
	EOT
	cc_kind "$CP_BUILD_KIND" $CC $OPT -g -o t-fail fail.c &&
	callprof record -o fail.cprof -- ./t-fail >out &&
	callprof export -f folded -m calls fail.cprof >actual &&
	printf "main 1\nmain;step 2\n" >expect && test_cmp expect actual
'

test_done
