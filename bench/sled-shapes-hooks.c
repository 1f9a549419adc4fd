/* sled-shapes-hooks.c - sled-shapes.c's fib, built with hooks (clang
 * -finstrument-functions-after-inlining by bench/sled-shapes). */
__attribute__((noinline)) long fib_hooked(long n);

long fib_hooked(long n)
{
	return n < 2 ? n : fib_hooked(n - 1) + fib_hooked(n - 2);
}
