/*
 * symbolize.c - the function a file offset of an ELF file falls in, from
 * its symbol table (.symtab, else .dynsym), with libelf: how `hvrun
 * analyze` names the places of a racing pair.
 */
#include "symbolize.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The link-time address of file offset off, from the PT_LOAD holding it. */
static bool vaddr_of(Elf *elf, uint64_t off, uint64_t *va)
{
    size_t n;
    if (elf_getphdrnum(elf, &n) != 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
            off >= ph.p_offset && off - ph.p_offset < ph.p_filesz) {
            *va = ph.p_vaddr + (off - ph.p_offset);
            return true;
        }
    }
    return false;
}

static bool find_in(Elf *elf, Elf_Scn *scn, uint64_t va, char *out, size_t len)
{
    GElf_Shdr sh;
    Elf_Data *d;
    if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
        !(d = elf_getdata(scn, NULL)))
        return false;
    size_t n = d->d_size / sh.sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym s;
        const char *name;
        if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
            va < s.st_value || va - s.st_value >= (s.st_size ? s.st_size : 1) ||
            !(name = elf_strptr(elf, sh.sh_link, s.st_name)) || !name[0])
            continue;
        snprintf(out, len, "%s+%#llx", name,
                 (unsigned long long)(va - s.st_value));
        return true;
    }
    return false;
}

bool cli_symbolize(const char *path, uint64_t file_off, char *out, size_t len)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    bool ok = false;
    uint64_t va;
    if (elf && vaddr_of(elf, file_off, &va)) {
        Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
        GElf_Shdr sh;
        while ((scn = elf_nextscn(elf, scn)))
            if (gelf_getshdr(scn, &sh)) {
                if (sh.sh_type == SHT_SYMTAB)
                    symtab = scn;
                else if (sh.sh_type == SHT_DYNSYM)
                    dynsym = scn;
            }
        ok = (symtab && find_in(elf, symtab, va, out, len)) ||
             (dynsym && find_in(elf, dynsym, va, out, len));
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return ok;
}
