/*
 * demangle.c - the tool's one C++ demangler, libstdc++'s __cxa_demangle
 * (the tool links -lstdc++), which prints names as c++filt does.
 */
#include <stddef.h>
#include <string.h>

#include "symbolize/demangle.h"

/* From libstdc++; declared here so that this stays a C file. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *cp_demangle(const char *name)
{
	int status;

	if (!name || strncmp(name, "_Z", 2))
		return NULL;
	return __cxa_demangle(name, NULL, NULL, &status);
}
