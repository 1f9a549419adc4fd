/* s-sleds-plugin.c - a sledded library for t0542: counts its own calls. */
static long n_plugin_leaf, n_plugin_run;

__attribute__((noinline)) long plugin_leaf(long x)
{
	n_plugin_leaf++;
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

long plugin_run(int n)
{
	long s = 0;

	n_plugin_run++;
	for (int i = 0; i < n; i++)
		s += plugin_leaf(i);
	return s;
}

long plugin_count(int which)
{
	return which ? n_plugin_run : n_plugin_leaf;
}
