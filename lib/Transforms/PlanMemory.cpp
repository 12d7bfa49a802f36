//===- PlanMemory.cpp - static offsets for temporary buffers --------------===//
//
// After bufferization every temporary is a memref.alloc/memref.dealloc pair,
// i.e. one malloc and one free per buffer per call. Where the size is static
// and the buffer provably stays inside the function, its lifetime (first to
// last use in the entry block) is known at compile time: such buffers are
// packed into one workspace, taken from the runtime once per call, at offsets
// chosen so that buffers live at the same time never overlap (except where an
// elementwise op may overwrite its input in place).
//
// A small static temporary of a parallel loop's body (a fused group's row
// statistics, made and freed in every tile) goes on the stack instead:
// aligned_alloc and free of 16-byte buffers in every tile were 16% of a
// 128x768 layer norm's time. The stack is freed when the loop's block of
// iterations returns, not per iteration (an alloca_scope would be, but its
// single-block body does not survive scf-to-cf), so only loops outside any
// other loop, with a static trip count, whose iterations together take at
// most 64 KiB qualify.
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Transforms/Passes.h"

#include "RuntimeFunctions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "paddle-plan-memory"

namespace mlir::paddle {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

static constexpr llvm::StringLiteral kAcquire = "paddle_workspace_acquire";
static constexpr llvm::StringLiteral kRelease = "paddle_workspace_release";
/// Every planned buffer starts at a multiple of this (what one-shot
/// bufferization asks of its allocations, and a cache line).
static constexpr int64_t kAlignment = 64;
/// Larger static buffers are left to the allocator, which reports running
/// out of memory for them: bounded this way, the offsets and the workspace
/// size (sums over the buffers) cannot overflow 64 bits.
static constexpr int64_t kMaxPlannedBytes = int64_t{1} << 40;

namespace {

/// One memref.alloc of the entry block that may get a static offset.
struct Candidate {
  memref::AllocOp alloc;
  int64_t bytes = 0;   // exact size
  int64_t aligned = 0; // size rounded up to kAlignment
  int64_t first = 0, last = 0;
  Operation *writer = nullptr;       // first op writing it
  int64_t writerAt = 0;              // its position
  SmallVector<Operation *> deallocs; // of the alloc or a view of it
  llvm::SmallPtrSet<Value, 4> aliases;
  int inPlaceOf = -1; // candidate whose memory this one takes over
  int group = -1;
  int64_t offset = 0;
};

/// Buffers that share memory through in-place reuse, planned as one.
struct Group {
  SmallVector<int> members;
  int64_t size = 0, first = 0, last = 0, offset = 0;
};

int64_t alignUp(int64_t n) {
  return (n + kAlignment - 1) / kAlignment * kAlignment;
}

/// Bytes per element as the LLVM lowering lays memrefs out (i1 takes a
/// byte); nullopt for element types it does not plan.
std::optional<int64_t> elementBytes(Type t) {
  if (isa<IndexType>(t))
    return 8;
  if (t.isIntOrFloat())
    return (t.getIntOrFloatBitWidth() + 7) / 8;
  return std::nullopt;
}

/// Ops that read or write a buffer but never keep or pass on a reference.
bool isSafeAccess(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.hasPureBufferSemantics();
  return isa<memref::LoadOp, memref::StoreOp, memref::CopyOp, memref::DimOp,
             memref::PrefetchOp, vector::TransferReadOp,
             vector::TransferWriteOp, vector::LoadOp, vector::StoreOp,
             vector::MaskedLoadOp, vector::MaskedStoreOp, affine::AffineLoadOp,
             affine::AffineStoreOp>(op);
}

/// True when `op` writes through `operand`.
bool writes(OpOperand &operand) {
  Operation *op = operand.getOwner();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.isDpsInit(&operand);
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return operand.get() == copy.getTarget();
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return operand.get() == store.getMemRef();
  if (auto write = dyn_cast<vector::TransferWriteOp>(op))
    return operand.get() == write.getBase();
  return isa<vector::StoreOp, vector::MaskedStoreOp, affine::AffineStoreOp>(op);
}

std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName() << " at ";
  op->getLoc().print(os);
  return text;
}

/// The groups placed so far, to find those whose lifetime meets a given one
/// in O(log n) per group found: scanning every placed group made planning
/// quadratic in the buffers of a long function. A segment tree over the
/// groups ordered by first position holds the latest last position of the
/// placed ones below each node.
class PlacedLifetimes {
public:
  explicit PlacedLifetimes(ArrayRef<Group> groups) : groups(groups) {
    byFirst.resize(groups.size());
    for (int i = 0, e = groups.size(); i < e; ++i)
      byFirst[i] = i;
    llvm::sort(byFirst, [&](int x, int y) {
      return groups[x].first != groups[y].first
                 ? groups[x].first < groups[y].first
                 : x < y;
    });
    rank.resize(groups.size());
    for (int r = 0, e = byFirst.size(); r < e; ++r)
      rank[byFirst[r]] = r;
    while (leaves < static_cast<int>(groups.size()))
      leaves *= 2;
    maxLast.assign(2 * leaves, std::numeric_limits<int64_t>::min());
  }

  void add(int group) {
    int node = leaves + rank[group];
    maxLast[node] = groups[group].last;
    for (node /= 2; node; node /= 2)
      maxLast[node] = std::max(maxLast[2 * node], maxLast[2 * node + 1]);
  }

  /// Calls `fn` with each placed group p for which p.first <= last and
  /// first <= p.last.
  void forEachMeeting(int64_t first, int64_t last,
                      llvm::function_ref<void(int)> fn) const {
    int end = llvm::partition_point(
                  byFirst, [&](int g) { return groups[g].first <= last; }) -
              byFirst.begin();
    visit(1, 0, leaves, end, first, fn);
  }

private:
  void visit(int node, int lo, int hi, int end, int64_t first,
             llvm::function_ref<void(int)> fn) const {
    if (lo >= end || maxLast[node] < first)
      return;
    if (hi - lo == 1)
      return fn(byFirst[lo]);
    int mid = (lo + hi) / 2;
    visit(2 * node, lo, mid, end, first, fn);
    visit(2 * node + 1, mid, hi, end, first, fn);
  }

  ArrayRef<Group> groups;
  SmallVector<int> byFirst, rank;
  int leaves = 1;
  SmallVector<int64_t> maxLast;
};

class FunctionPlanner {
public:
  FunctionPlanner(func::FuncOp func, bool record)
      : func(func), entry(func.front()), record(record) {}

  void analyze();
  void pairInPlace();
  void place();
  /// Records the plan on the function and, if anything was planned,
  /// rewrites the planned allocs into views of one workspace.
  void rewrite(func::FuncOp acquire, func::FuncOp release);
  bool hasCandidates() const { return !candidates.empty(); }

private:
  /// Why `alloc` cannot be planned, or "" if it can (then `c` is filled).
  std::string classify(memref::AllocOp alloc, Candidate &c);
  /// Where `op` is a conv input's zero padding (`paddle.zero_pad`) or a max
  /// pooling's -inf padding (`paddle.max_pool_pad`): the last position reading
  /// its output. Its source stays live up to there, so paddle-use-onednn
  /// can fold the copy and let the conv or pooling read the source
  /// (nothing is planned over it before the reader). INT64_MIN otherwise.
  int64_t padReadersEnd(Operation *op);
  bool canShareInPlace(Candidate &a, Candidate &b, Operation *op);

  func::FuncOp func;
  Block &entry;
  bool record; // the plan as attributes in the IR

  DenseMap<Operation *, int64_t> position;
  SmallVector<Candidate> candidates;
  SmallVector<Group> groups;
  int64_t unplanned = 0, naive = 0, arena = 0, lowerBound = 0, inPlace = 0;
};

std::string FunctionPlanner::classify(memref::AllocOp alloc, Candidate &c) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape())
    return "dynamic shape";
  if (!type.getLayout().isIdentity())
    return "non-identity layout";
  if (type.getMemorySpace())
    return "non-default memory space";
  std::optional<int64_t> elemBytes = elementBytes(type.getElementType());
  if (!elemBytes)
    return "unsupported element type";
  if (alloc.getAlignment() && *alloc.getAlignment() > kAlignment)
    return "alignment above 64 bytes";

  int64_t bytes;
  if (llvm::MulOverflow(type.getNumElements(), *elemBytes, bytes) ||
      bytes > kMaxPlannedBytes)
    return "larger than 1 TiB";

  c.alloc = alloc;
  c.bytes = bytes;
  c.aligned = alignUp(c.bytes);
  c.first = std::numeric_limits<int64_t>::max();
  c.last = std::numeric_limits<int64_t>::min();
  // Walk every alias (views of views...) and every use of each.
  SmallVector<Value> worklist{alloc.getResult()};
  c.aliases.insert(alloc.getResult());
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::DeallocOp>(user)) {
        c.deallocs.push_back(user);
        continue;
      }
      // The lowered bufferization.dealloc compares addresses to decide which
      // buffers to free (memref.dealloc of planned buffers is erased anyway).
      // Comparing an address is no access, so it neither extends the
      // lifetime nor lets the buffer escape: an index cannot be turned back
      // into a memref by the ops this pass runs on.
      if (isa<memref::ExtractAlignedPointerAsIndexOp>(user))
        continue;
      Operation *ancestor = entry.findAncestorOpInBlock(*user);
      if (!ancestor)
        return "used outside the entry block by " + describe(user);
      if (isa<func::ReturnOp>(user))
        return "returned";
      if (isa<CallOpInterface>(user))
        return "passed to a call: " + describe(user);
      if (user->hasTrait<OpTrait::IsTerminator>())
        return "passed on by a terminator: " + describe(user);
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()) &&
              c.aliases.insert(result).second)
            worklist.push_back(result);
      } else if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        if (c.aliases.insert(meta.getBaseBuffer()).second)
          worklist.push_back(meta.getBaseBuffer());
      } else if (!isSafeAccess(user)) {
        return "used by " + describe(user) + ", which may keep a reference";
      }
      int64_t at = position.lookup(ancestor);
      c.first = std::min(c.first, at);
      c.last = std::max(std::max(c.last, at), padReadersEnd(ancestor));
      if (writes(use) && (!c.writer || at < c.writerAt)) {
        c.writer = user;
        c.writerAt = at;
      }
    }
  }
  if (c.first > c.last) // only allocated and freed
    c.first = c.last = position.lookup(alloc);
  return "";
}

void FunctionPlanner::analyze() {
  int64_t at = 0;
  for (Operation &op : entry)
    position[&op] = at++;
  for (Operation &op : entry) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc)
      continue;
    Candidate c;
    std::string reason = classify(alloc, c);
    if (!reason.empty()) {
      if (record)
        alloc->setAttr(paddle::PaddleDialect::UnplannedAttrHelper::getNameStr(),
                       StringAttr::get(alloc.getContext(), reason));
      ++unplanned;
      continue;
    }
    naive += c.aligned;
    candidates.push_back(std::move(c));
  }
  // Allocs in nested regions or other blocks stay too.
  func.walk([&](memref::AllocOp alloc) {
    if (alloc->getBlock() != &entry) {
      if (record)
        alloc->setAttr(paddle::PaddleDialect::UnplannedAttrHelper::getNameStr(),
                       StringAttr::get(alloc.getContext(),
                                       "not in the function's entry block"));
      ++unplanned;
    }
  });
}

/// `op` reads element i of `a` only to compute element i of `b`, and reads
/// nothing else of either: then writing b[i] over a[i] is safe, because the
/// loops lowered from `op` read a[i] before they write b[i] and never read it
/// again.
int64_t FunctionPlanner::padReadersEnd(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic ||
      !(generic->hasAttr(
            paddle::PaddleDialect::ZeroPadAttrHelper::getNameStr()) ||
        generic->hasAttr(
            paddle::PaddleDialect::MaxPoolPadAttrHelper::getNameStr())) ||
      generic.getNumDpsInits() != 1)
    return std::numeric_limits<int64_t>::min();
  int64_t end = std::numeric_limits<int64_t>::min();
  SmallVector<Value> worklist{generic.getDpsInits().front()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isa<memref::DeallocOp, memref::ExtractAlignedPointerAsIndexOp>(user))
        continue;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value)
        llvm::append_range(worklist, user->getResults());
      else if (Operation *ancestor = entry.findAncestorOpInBlock(*user))
        end = std::max(end, position.lookup(ancestor));
    }
  }
  return end;
}

bool FunctionPlanner::canShareInPlace(Candidate &a, Candidate &b,
                                      Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || op->getBlock() != &entry ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return false;
  if (a.alloc.getType().getShape() != b.alloc.getType().getShape() ||
      a.bytes != b.bytes)
    return false;
  OpOperand *input = nullptr, *init = nullptr;
  for (OpOperand &operand : op->getOpOperands()) {
    if (a.aliases.contains(operand.get())) {
      if (input || operand.get() != a.alloc.getResult() ||
          !linalgOp.isDpsInput(&operand))
        return false;
      input = &operand;
    }
    if (b.aliases.contains(operand.get())) {
      if (init || operand.get() != b.alloc.getResult() ||
          !linalgOp.isDpsInit(&operand))
        return false;
      init = &operand;
    }
  }
  return input && init && linalgOp.getMatchingIndexingMap(input).isIdentity() &&
         linalgOp.getMatchingIndexingMap(init).isIdentity();
}

void FunctionPlanner::pairInPlace() {
  // b takes over a's memory when a dies at the op that starts b.
  llvm::EquivalenceClasses<int> classes;
  for (int i = 0, e = candidates.size(); i < e; ++i)
    classes.insert(i);
  SmallVector<bool> given(candidates.size(), false);
  // The candidates dying at each position, in order.
  DenseMap<int64_t, SmallVector<unsigned>> dyingAt;
  for (auto [i, c] : llvm::enumerate(candidates))
    dyingAt[c.last].push_back(i);
  for (auto [bi, b] : llvm::enumerate(candidates)) {
    if (!b.writer || b.writerAt != b.first)
      continue;
    for (unsigned ai : dyingAt.lookup(b.first)) {
      Candidate &a = candidates[ai];
      if (ai == bi || given[ai] || !canShareInPlace(a, b, b.writer))
        continue;
      given[ai] = true;
      b.inPlaceOf = ai;
      classes.unionSets(ai, bi);
      ++inPlace;
      break;
    }
  }
  DenseMap<int, int> groupOfLeader;
  for (auto [i, c] : llvm::enumerate(candidates)) {
    int leader = classes.getLeaderValue(i);
    auto [it, inserted] = groupOfLeader.try_emplace(leader, groups.size());
    if (inserted) {
      Group g;
      g.first = c.first;
      g.last = c.last;
      groups.push_back(g);
    }
    Group &g = groups[it->second];
    g.members.push_back(i);
    g.size = std::max(g.size, c.aligned);
    g.first = std::min(g.first, c.first);
    g.last = std::max(g.last, c.last);
    c.group = it->second;
  }
}

void FunctionPlanner::place() {
  // Largest first; each at the lowest offset free of every placed group
  // whose lifetime meets its own.
  SmallVector<int> order(groups.size());
  for (int i = 0, e = groups.size(); i < e; ++i)
    order[i] = i;
  llvm::stable_sort(order, [&](int x, int y) {
    if (groups[x].size != groups[y].size)
      return groups[x].size > groups[y].size;
    return groups[x].first < groups[y].first;
  });
  PlacedLifetimes placed(groups);
  for (int gi : order) {
    Group &g = groups[gi];
    SmallVector<std::pair<int64_t, int64_t>> busy;
    placed.forEachMeeting(g.first, g.last, [&](int pi) {
      Group &p = groups[pi];
      busy.push_back({p.offset, p.offset + p.size});
    });
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + g.size <= begin)
        break;
      offset = std::max(offset, end);
    }
    g.offset = offset;
    arena = std::max(arena, offset + g.size);
    placed.add(gi);
  }
  for (Candidate &c : candidates)
    c.offset = groups[c.group].offset;
  // The most bytes live at one position: no placement can do better.
  std::map<int64_t, int64_t> delta;
  for (Group &g : groups) {
    delta[g.first] += g.size;
    delta[g.last + 1] -= g.size;
  }
  int64_t live = 0;
  for (auto [at, change] : delta) {
    live += change;
    lowerBound = std::max(lowerBound, live);
  }
}

void FunctionPlanner::rewrite(func::FuncOp acquire, func::FuncOp release) {
  MLIRContext *ctx = func.getContext();
  Builder attrs(ctx);
  auto i64 = [&](int64_t v) { return attrs.getI64IntegerAttr(v); };
  if (record)
    func->setAttr(
        paddle::PaddleDialect::MemoryAttrHelper::getNameStr(),
        attrs.getDictionaryAttr({
            attrs.getNamedAttr("naive", i64(naive)),
            attrs.getNamedAttr("planned", i64(arena)),
            attrs.getNamedAttr("lower_bound", i64(lowerBound)),
            attrs.getNamedAttr("buffers", i64(candidates.size())),
            attrs.getNamedAttr("in_place", i64(inPlace)),
            attrs.getNamedAttr("unplanned", i64(unplanned)),
            attrs.getNamedAttr("positions", i64(entry.getOperations().size())),
        }));
  if (candidates.empty())
    return;

  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = func.getLoc();
  Value bytes = arith::ConstantOp::create(b, loc, i64(arena));
  auto acquireCall = func::CallOp::create(b, loc, acquire, ValueRange{bytes});
  Value ws = acquireCall.getResult(0);
  // One constant per distinct offset, before the acquire call, rather than
  // one per view for the next pattern rewrite to deduplicate.
  DenseMap<int64_t, Value> offsets;
  OpBuilder constants(acquireCall);
  for (auto [id, c] : llvm::enumerate(candidates)) {
    b.setInsertionPoint(c.alloc);
    Location at = c.alloc.getLoc();
    Value &offset = offsets[c.offset];
    if (!offset)
      offset = arith::ConstantIndexOp::create(constants, loc, c.offset);
    auto view = memref::ViewOp::create(b, at, c.alloc.getType(), ws, offset,
                                       ValueRange{});
    SmallVector<NamedAttribute> info{
        attrs.getNamedAttr("id", i64(id)),
        attrs.getNamedAttr("offset", i64(c.offset)),
        attrs.getNamedAttr("size", i64(c.bytes)),
        attrs.getNamedAttr("first", i64(c.first)),
        attrs.getNamedAttr("last", i64(c.last)),
        attrs.getNamedAttr(
            "writer",
            attrs.getStringAttr(c.writer ? describe(c.writer) : "none"))};
    if (c.inPlaceOf >= 0)
      info.push_back(attrs.getNamedAttr("in_place_of", i64(c.inPlaceOf)));
    if (record)
      view->setAttr(paddle::PaddleDialect::BufferAttrHelper::getNameStr(),
                    attrs.getDictionaryAttr(info));
    c.alloc.replaceAllUsesWith(view.getResult());
    for (Operation *dealloc : c.deallocs)
      dealloc->erase();
    c.alloc.erase();
  }
  for (Block &block : func.getBody())
    if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator())) {
      b.setInsertionPoint(ret);
      func::CallOp::create(b, ret.getLoc(), release, ValueRange{ws});
    }
}

} // namespace

FailureOr<func::FuncOp>
mlir::paddle::declareRuntimeFunction(ModuleOp module, StringRef name,
                                     FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name)) {
    if (existing.getFunctionType() != type || !existing.isExternal()) {
      existing.emitError() << "'" << name
                           << "' is reserved for the runtime: expected an "
                              "external declaration of type "
                           << type;
      return failure();
    }
    return existing;
  }
  if (Operation *other = module.lookupSymbol(name)) {
    other->emitError() << "'" << name << "' is reserved for the runtime";
    return failure();
  }
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto decl = func::FuncOp::create(b, module.getLoc(), name, type);
  decl.setPrivate();
  decl->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), b.getUnitAttr());
  return decl;
}

/// The most stack all iterations of one loop may take for their
/// temporaries.
static constexpr int64_t kLoopStackBytes = 64 << 10;

/// Moves the small static allocations of `loop`'s body that are freed in the
/// same body (and used nowhere else) to the stack, where the loop's static
/// trip count times their bytes is at most kLoopStackBytes. Returns how
/// many moved.
static unsigned promoteBodyTemporaries(scf::ParallelOp loop) {
  // Inside another loop, every iteration of that one would take the bound
  // again before the stack is freed.
  if (loop->getParentOfType<LoopLikeOpInterface>())
    return 0;
  int64_t trips = 1;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0)
      return 0;
    // Counts that overflow are far above the bound anyway.
    if (llvm::MulOverflow(
            trips, std::max<int64_t>(0, llvm::divideCeil(*u - *l, *s)), trips))
      return 0;
  }
  Block *body = loop.getBody();
  int64_t bytes = 0;
  SmallVector<std::pair<memref::AllocOp, memref::DeallocOp>> moved;
  for (auto alloc : body->getOps<memref::AllocOp>()) {
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !type.getElementType().isIntOrFloat())
      continue;
    int64_t elements = type.getNumElements();
    if (elements > kLoopStackBytes)
      continue;
    // Rounded up as the alignment pads it.
    int64_t size = llvm::alignTo(elements * type.getElementTypeBitWidth() / 8,
                                 alloc.getAlignment().value_or(16));
    int64_t total;
    if (llvm::MulOverflow(trips, bytes + size, total) ||
        total > kLoopStackBytes)
      continue;
    memref::DeallocOp dealloc;
    bool local = true;
    for (Operation *user : alloc->getUsers()) {
      auto free = dyn_cast<memref::DeallocOp>(user);
      if (free && free->getBlock() == body && !dealloc)
        dealloc = free;
      else if (!body->getParentOp()->isAncestor(user) ||
               user->hasTrait<OpTrait::IsTerminator>())
        local = false;
    }
    if (local && dealloc) {
      moved.emplace_back(alloc, dealloc);
      bytes += size;
    }
  }
  OpBuilder b(loop);
  for (auto [alloc, dealloc] : moved) {
    b.setInsertionPoint(alloc);
    auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                           alloc.getAlignmentAttr());
    alloc.replaceAllUsesWith(alloca.getResult());
    dealloc->erase();
    alloc->erase();
  }
  return moved.size();
}

namespace {

struct PlanMemoryPass : paddle::impl::PlanMemoryPassBase<PlanMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        funcs.push_back(func);
    for (func::FuncOp func : funcs)
      func.walk([](scf::ParallelOp loop) {
        if (loop.getNumResults() == 0)
          promoteBodyTemporaries(loop);
      });

    std::vector<FunctionPlanner> planners;
    bool anyPlanned = false;
    for (func::FuncOp func : funcs) {
      FunctionPlanner &planner = planners.emplace_back(func, recordPlan);
      planner.analyze();
      planner.pairInPlace();
      planner.place();
      anyPlanned |= planner.hasCandidates();
    }
    // Modules without planned buffers get no declarations.
    func::FuncOp acquire, release;
    if (anyPlanned) {
      MLIRContext *ctx = module.getContext();
      auto wsType =
          MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8));
      auto a = paddle::declareRuntimeFunction(
          module, kAcquire,
          FunctionType::get(ctx, {IntegerType::get(ctx, 64)}, {wsType}));
      auto r = paddle::declareRuntimeFunction(
          module, kRelease, FunctionType::get(ctx, {wsType}, {}));
      if (failed(a) || failed(r))
        return signalPassFailure();
      acquire = *a;
      release = *r;
    }
    for (FunctionPlanner &planner : planners)
      planner.rewrite(acquire, release);
  }
};

} // namespace
