/*
 * s-cc.h - the two files of s-cc-main.c and s-cc-util.c, a program built
 * as a project is (make, CMake) by t0500-cc.sh.
 */
#ifndef CP_TESTS_E2E_S_CC_H
#define CP_TESTS_E2E_S_CC_H

void twice(int i);

#endif
