//===- DedupFunctions.cpp - keep one of each set of equal functions -------===//

#include "paddle/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>

#define DEBUG_TYPE "paddle-dedup-functions"

namespace mlir::paddle {
#define GEN_PASS_DEF_DEDUPFUNCTIONSPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

/// The name that stands for every candidate function in the printed keys.
static constexpr llvm::StringLiteral kPlaceholder = "__paddle_dedup_fn";

namespace {
/// A private function defined in the module, with the candidates it
/// references, in walk order.
struct Candidate {
  func::FuncOp func;
  SmallVector<unsigned> callees;
};

struct DedupFunctionsPass
    : paddle::impl::DedupFunctionsPassBase<DedupFunctionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = module.getContext();
    SmallVector<Candidate> candidates;
    llvm::DenseMap<StringAttr, unsigned> indexOf;
    for (auto func : module.getOps<func::FuncOp>()) {
      // Public functions are entry points: each keeps its name.
      if (!func.isPrivate() || func.isExternal())
        continue;
      indexOf[func.getSymNameAttr()] = candidates.size();
      candidates.push_back({func, {}});
    }
    if (candidates.size() < 2)
      return;

    // Start from the text of each function with its name and every
    // reference to a candidate replaced by one placeholder, then split the
    // classes by the classes of the referenced candidates until they are
    // stable (as DFA minimization does): this finds equal functions that
    // call themselves or each other (async-parallel-for's dispatch
    // functions and their async.execute coroutines), which comparing names
    // cannot.
    auto placeholder = FlatSymbolRefAttr::get(context, kPlaceholder);
    SmallVector<unsigned> classOf(candidates.size());
    {
      llvm::StringMap<unsigned> classOfText;
      for (auto [i, candidate] : llvm::enumerate(candidates)) {
        candidate.func.walk([&](Operation *op) {
          for (NamedAttribute attr : op->getAttrs())
            attr.getValue().walk([&](SymbolRefAttr ref) {
              auto it = indexOf.find(ref.getRootReference());
              if (it != indexOf.end())
                candidate.callees.push_back(it->second);
            });
        });
        auto clone = cast<func::FuncOp>(candidate.func->clone());
        clone.setSymName(kPlaceholder);
        AttrTypeReplacer replacer;
        replacer.addReplacement(
            [&](SymbolRefAttr ref) -> std::optional<Attribute> {
              if (indexOf.contains(ref.getRootReference()))
                return placeholder;
              return std::nullopt;
            });
        replacer.recursivelyReplaceElementsIn(clone, /*replaceAttrs=*/true,
                                              /*replaceLocs=*/false,
                                              /*replaceTypes=*/false);
        std::string text;
        llvm::raw_string_ostream os(text);
        clone->print(os,
                     OpPrintingFlags().printGenericOpForm().useLocalScope());
        clone->erase();
        classOf[i] =
            classOfText.try_emplace(text, classOfText.size()).first->second;
      }
    }
    for (size_t numClasses = 0;;) {
      std::map<SmallVector<unsigned>, unsigned> classOfSignature;
      SmallVector<unsigned> refined(candidates.size());
      for (auto [i, candidate] : llvm::enumerate(candidates)) {
        SmallVector<unsigned> signature{classOf[i]};
        for (unsigned callee : candidate.callees)
          signature.push_back(classOf[callee]);
        refined[i] =
            classOfSignature.try_emplace(signature, classOfSignature.size())
                .first->second;
      }
      classOf = std::move(refined);
      if (classOfSignature.size() == numClasses)
        break;
      numClasses = classOfSignature.size();
    }

    // The first function of each class stays; references to the others
    // are redirected to it in one walk over the module.
    llvm::DenseMap<unsigned, func::FuncOp> representative;
    llvm::DenseMap<Attribute, Attribute> replacements;
    for (auto [i, candidate] : llvm::enumerate(candidates)) {
      auto [it, inserted] =
          representative.try_emplace(classOf[i], candidate.func);
      if (inserted)
        continue;
      replacements[FlatSymbolRefAttr::get(candidate.func.getSymNameAttr())] =
          FlatSymbolRefAttr::get(it->second.getSymNameAttr());
      candidate.func.erase();
    }
    if (replacements.empty())
      return;
    AttrTypeReplacer replacer;
    replacer.addReplacement([&](SymbolRefAttr ref) -> std::optional<Attribute> {
      auto it = replacements.find(ref);
      if (it == replacements.end())
        return std::nullopt;
      return it->second;
    });
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/false);
  }
};
} // namespace
