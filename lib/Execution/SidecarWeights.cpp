//===- SidecarWeights.cpp - moving constants into a weights file ----------===//
//
// Runs on the optimized LLVM module, right before code generation: the code
// is then identical to the embedded build's and only where the bytes come
// from changes. A moved global keeps its name, type, linkage and alignment;
// it becomes writable and zero-initialized (.bss), and its address escapes
// through the exported table, so no later pass may assume it stays zero.
//
//===----------------------------------------------------------------------===//

#include "SidecarWeights.h"

#include "paddle/Transforms/CheckMessages.h"

#include "llvm/ADT/APInt.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalAlias.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/xxhash.h"

#include <vector>

using namespace llvm;

namespace mlir::paddle {
namespace {

constexpr char kMagic[8] = {'P', 'D', 'W', 'E', 'I', 'G', 'H', 'T'};
constexpr uint32_t kVersion = 1;
constexpr uint64_t kHeaderSize = 64, kEntrySize = 32, kAlignment = 64;

void appendInteger(const APInt &value, uint64_t bytes, std::string &out) {
  APInt v = value.zextOrTrunc(bytes * 8);
  for (uint64_t i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>(v.extractBitsAsZExtValue(8, i * 8)));
}

/// Appends the in-memory bytes of `c` (little-endian, DataLayout padding as
/// zeros). False for anything that is not plain data: pointers, constant
/// expressions, vectors of i1 (bit-packed) cannot move into a file.
bool appendBytes(const Constant *c, const DataLayout &dl, std::string &out) {
  Type *type = c->getType();
  size_t start = out.size();
  uint64_t allocSize = dl.getTypeAllocSize(type);
  auto padTo = [&](uint64_t size) {
    if (out.size() - start > size)
      return false;
    out.append(size - (out.size() - start), '\0');
    return true;
  };
  if (isa<ConstantAggregateZero, UndefValue>(c))
    return padTo(allocSize);
  if (auto *data = dyn_cast<ConstantDataSequential>(c)) {
    if (data->getElementType()->isIntegerTy(1))
      return false;
    out += data->getRawDataValues().str();
    return padTo(allocSize);
  }
  if (auto *i = dyn_cast<ConstantInt>(c)) {
    appendInteger(i->getValue(), dl.getTypeStoreSize(type), out);
    return padTo(allocSize);
  }
  if (auto *f = dyn_cast<ConstantFP>(c)) {
    appendInteger(f->getValueAPF().bitcastToAPInt(), dl.getTypeStoreSize(type),
                  out);
    return padTo(allocSize);
  }
  if (auto *array = dyn_cast<ConstantArray>(c)) {
    uint64_t stride = dl.getTypeAllocSize(array->getType()->getElementType());
    for (unsigned i = 0, e = array->getNumOperands(); i < e; ++i)
      if (!appendBytes(array->getOperand(i), dl, out) ||
          !padTo((uint64_t)(i + 1) * stride))
        return false;
    return padTo(allocSize);
  }
  if (auto *record = dyn_cast<ConstantStruct>(c)) {
    const StructLayout *layout = dl.getStructLayout(record->getType());
    for (unsigned i = 0, e = record->getNumOperands(); i < e; ++i)
      if (!padTo(layout->getElementOffset(i)) ||
          !appendBytes(record->getOperand(i), dl, out))
        return false;
    return padTo(allocSize);
  }
  return false;
}

bool isMovable(const GlobalVariable &gv, uint64_t threshold,
               const DataLayout &dl) {
  return gv.isConstant() && gv.hasInitializer() && gv.hasLocalLinkage() &&
         !gv.isThreadLocal() && !gv.hasSection() &&
         !gv.getName().starts_with("llvm.") &&
         !gv.getName().starts_with(kCheckMessagePrefix) &&
         dl.getTypeAllocSize(gv.getValueType()) >= threshold &&
         !gv.getInitializer()->isNullValue();
}

/// Names go into messages of the loader, which accepts printable ASCII.
std::string printableName(StringRef name) {
  std::string out = name.str();
  for (char &c : out)
    if (c < 0x20 || c > 0x7e)
      c = '?';
  if (out.empty())
    out = "?";
  return out.substr(0, 1024);
}

void put32(std::string &out, uint64_t at, uint32_t v) {
  support::endian::write32le(&out[at], v);
}
void put64(std::string &out, uint64_t at, uint64_t v) {
  support::endian::write64le(&out[at], v);
}

} // namespace

SidecarWeights moveWeightsToSidecar(Module &module, uint64_t threshold) {
  const DataLayout &dl = module.getDataLayout();
  struct Moved {
    GlobalVariable *global;
    std::string name, bytes;
  };
  std::vector<Moved> moved;
  for (GlobalVariable &gv : module.globals()) {
    if (!isMovable(gv, threshold, dl))
      continue;
    std::string bytes;
    if (!appendBytes(gv.getInitializer(), dl, bytes) ||
        bytes.size() != dl.getTypeAllocSize(gv.getValueType()))
      continue;
    moved.push_back({&gv, printableName(gv.getName()), std::move(bytes)});
  }

  // The fingerprint identifies the weights: names, sizes and contents, in
  // file order (xxh3 of each payload, then of the list of records).
  std::string manifest;
  for (const Moved &m : moved) {
    manifest += m.name;
    manifest.push_back('\0');
    char word[8];
    support::endian::write64le(word, m.bytes.size());
    manifest.append(word, 8);
    support::endian::write64le(word, xxh3_64bits(StringRef(m.bytes)));
    manifest.append(word, 8);
  }
  SidecarWeights result;
  result.fingerprint = xxh3_64bits(StringRef(manifest));
  result.count = static_cast<uint32_t>(moved.size());

  // The file (docs/weights-format.md): header, entry table, names, payload
  // (each entry 64-byte aligned), CRC-32 of everything before it.
  uint64_t namesOffset = kHeaderSize + kEntrySize * moved.size();
  uint64_t namesSize = 0;
  for (const Moved &m : moved)
    namesSize += m.name.size();
  uint64_t payloadOffset = alignTo(namesOffset + namesSize, kAlignment);
  std::vector<uint64_t> dataOffsets;
  uint64_t at = payloadOffset;
  for (size_t i = 0; i < moved.size(); ++i) {
    if (i)
      at = alignTo(at, kAlignment);
    dataOffsets.push_back(at);
    at += moved[i].bytes.size();
    result.bytes += moved[i].bytes.size();
  }
  uint64_t payloadSize = at - payloadOffset;
  std::string &file = result.file;
  file.assign(at + 4, '\0');
  memcpy(&file[0], kMagic, sizeof(kMagic));
  put32(file, 8, kVersion);
  put32(file, 12, result.count);
  put64(file, 16, result.fingerprint);
  put64(file, 24, file.size());
  put64(file, 32, namesOffset);
  put64(file, 40, namesSize);
  put64(file, 48, payloadOffset);
  put64(file, 56, payloadSize);
  uint64_t nameAt = 0;
  for (size_t i = 0; i < moved.size(); ++i) {
    uint64_t entry = kHeaderSize + kEntrySize * i;
    put64(file, entry, nameAt);
    put32(file, entry + 8, moved[i].name.size());
    put64(file, entry + 16, dataOffsets[i]);
    put64(file, entry + 24, moved[i].bytes.size());
    memcpy(&file[namesOffset + nameAt], moved[i].name.data(),
           moved[i].name.size());
    nameAt += moved[i].name.size();
    memcpy(&file[dataOffsets[i]], moved[i].bytes.data(), moved[i].bytes.size());
  }
  put32(file, at,
        crc32(ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(file.data()),
                                at)));

  // The module side: the globals become zeroed storage, and the table tells
  // the loader where each entry goes.
  LLVMContext &ctx = module.getContext();
  auto *i64 = Type::getInt64Ty(ctx);
  auto *slotType = StructType::get(PointerType::get(ctx, 0), i64);
  std::vector<Constant *> slots;
  for (const Moved &m : moved) {
    GlobalVariable *gv = m.global;
    gv->setConstant(false);
    gv->setInitializer(Constant::getNullValue(gv->getValueType()));
    gv->setUnnamedAddr(GlobalValue::UnnamedAddr::None);
    slots.push_back(ConstantStruct::get(
        slotType, {gv, ConstantInt::get(i64, m.bytes.size())}));
  }
  auto *tableType = ArrayType::get(slotType, slots.size());
  auto *i32 = Type::getInt32Ty(ctx);
  auto define = [&](StringRef name, Constant *value) {
    auto *local = new GlobalVariable(
        module, value->getType(), /*isConstant=*/true,
        GlobalValue::ExternalLinkage, value, name + kLocalSuffix);
    local->setVisibility(GlobalValue::HiddenVisibility);
    local->setDSOLocal(true);
    GlobalAlias::create(name, local);
  };
  define(kWeightsTable, ConstantArray::get(tableType, slots));
  define(kWeightsCount, ConstantInt::get(i32, result.count));
  define(kWeightsFingerprint, ConstantInt::get(i64, result.fingerprint));
  return result;
}

} // namespace mlir::paddle
