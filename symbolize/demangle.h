/*
 * demangle.h - C++ symbol names as c++filt prints them: the tool's one
 * demangler (the symbolizer's names, DWARF linkage names, record's
 * name patterns in cli/select.c).
 */
#ifndef CP_SYMBOLIZE_DEMANGLE_H
#define CP_SYMBOLIZE_DEMANGLE_H

/*
 * The demangled form of name, parameter lists included, malloc'd (the
 * caller frees it); NULL when name is not a mangled C++ name or cannot be
 * decoded.  Only "_Z" names are tried: the demangler also decodes bare
 * type codes, which would turn C functions named "f" or "i" into "float"
 * or "int".
 */
char *cp_demangle(const char *name);

#endif /* CP_SYMBOLIZE_DEMANGLE_H */
