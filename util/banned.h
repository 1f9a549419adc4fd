/*
 * banned.h - functions that are easy to misuse and have safer replacements
 * here.  Included into every compilation unit by the Makefile; using one of
 * them is a compile error that names the replacement.
 */
#ifndef CP_UTIL_BANNED_H
#define CP_UTIL_BANNED_H

/* The declarations come first, so the macros below only hit our own uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CP_BANNED(func) sorry_##func##_is_banned_use_a_bounded_alternative

#undef strcpy
#define strcpy(x, y) CP_BANNED(strcpy)
#undef strcat
#define strcat(x, y) CP_BANNED(strcat)
#undef sprintf
#define sprintf(...) CP_BANNED(sprintf)
#undef strtok
#define strtok(x, y) CP_BANNED(strtok)
#undef atoi
#define atoi(x) CP_BANNED(atoi)
#undef gmtime
#define gmtime(x) CP_BANNED(gmtime)
#undef localtime
#define localtime(x) CP_BANNED(localtime)

#endif /* CP_UTIL_BANNED_H */
