/* cpuid_model.c linked statically (the Makefile links *static* guests so):
 * glibc's CPU set-up then runs from the program's own code, which the
 * loader maps, instead of ld.so's. */
#include "cpuid_model.c"
