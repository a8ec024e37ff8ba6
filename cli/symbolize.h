/*
 * symbolize.h - a file offset of an ELF file as "function+0xdelta".
 */
#ifndef CLI_SYMBOLIZE_H
#define CLI_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* true and the name in out when a function symbol covers the offset. */
bool cli_symbolize(const char *path, uint64_t file_off, char *out, size_t len);

#endif
