//===- elf_check.cpp - sanity checks on a shared object before dlopen -----===//
//
// dlopen maps a library's segments as its program headers describe them and
// trusts them: a truncated or corrupted file makes it map past the end of
// the file, and the process dies of SIGBUS on first touch. So the runtime
// checks the headers first: an ELF64 little-endian shared object for this
// machine whose header tables and loadable segments lie inside the file.
// This catches damaged files, not malicious ones: a shared object is code,
// and loading one means trusting it.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <cstdio>
#include <cstring>
#include <elf.h>
#include <string>
#include <vector>

namespace {
#if defined(__x86_64__)
constexpr uint16_t kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kMachine = EM_AARCH64;
#else
#error "unsupported host architecture"
#endif

/// True when [offset, offset + size) lies inside a file of `n` bytes.
bool inside(uint64_t offset, uint64_t size, size_t n) {
  return offset <= n && size <= n - offset;
}

paddle_status_t invalid(const char *what, const char *detail) {
  return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                              "'%s' is not a usable shared object: %s", what,
                              detail);
}
} // namespace

extern "C" paddle_status_t
paddle_check_shared_object(const void *bytes, size_t n, const char *what) {
  const auto *data = static_cast<const unsigned char *>(bytes);
  Elf64_Ehdr header;
  if (n < sizeof header)
    return invalid(what, "the file is shorter than an ELF header");
  memcpy(&header, data, sizeof header);
  if (memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return invalid(what, "no ELF magic number");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB)
    return invalid(what, "not a 64-bit little-endian ELF file");
  if (header.e_type != ET_DYN)
    return invalid(what, "not a shared object (ELF type is not ET_DYN)");
  if (header.e_machine != kMachine)
    return invalid(what, "built for another machine architecture");
  if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 ||
      !inside(header.e_phoff, (uint64_t)header.e_phnum * sizeof(Elf64_Phdr), n))
    return invalid(what, "the program header table is damaged or truncated");
  if (header.e_shnum != 0 &&
      (header.e_shentsize != sizeof(Elf64_Shdr) ||
       !inside(header.e_shoff, (uint64_t)header.e_shnum * sizeof(Elf64_Shdr),
               n)))
    return invalid(what, "the section header table is damaged or truncated");
  bool loadable = false;
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph;
    memcpy(&ph, data + header.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC)
      continue;
    loadable |= ph.p_type == PT_LOAD;
    if (!inside(ph.p_offset, ph.p_filesz, n) || ph.p_filesz > ph.p_memsz) {
      char detail[128];
      snprintf(detail, sizeof detail,
               "segment %u lies outside the file (is it truncated?)",
               (unsigned)i);
      return invalid(what, detail);
    }
  }
  if (!loadable)
    return invalid(what, "it has no loadable segment");
  return nullptr;
}
