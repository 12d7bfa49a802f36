//===- Ilp.cpp - IlpProblem solved by CBC ---------------------------------===//
//
// CBC's C API (Cbc_C_Interface.h): the problem is loaded column-wise
// (compressed sparse columns), integer columns marked, the time limit and a
// quiet log set, and the best solution read back with its status.
//
//===----------------------------------------------------------------------===//

#include "paddle/Sharding/Ilp.h"

#include "llvm/ADT/STLExtras.h"

#include <coin/Cbc_C_Interface.h>

#include <chrono>
#include <cmath>
#include <memory>

using namespace mlir::paddle;

/// CBC reads DBL_MAX as infinity.
static constexpr double kBig = std::numeric_limits<double>::max();

std::string mlir::paddle::ilpSolverName() {
  return std::string("CBC ") + Cbc_getVersion();
}

IlpResult mlir::paddle::solveIlp(const IlpProblem &problem, double timeLimitS) {
  auto start = std::chrono::steady_clock::now();
  int numCols = problem.columns.size(), numRows = problem.rows.size();
  // Rows to columns.
  std::vector<std::vector<std::pair<int, double>>> byColumn(numCols);
  for (auto [r, row] : llvm::enumerate(problem.rows))
    for (auto [c, v] : row.terms)
      byColumn[c].push_back({static_cast<int>(r), v});
  std::vector<CoinBigIndex> starts{0};
  std::vector<int> index;
  std::vector<double> value, colLower, colUpper, cost, rowLower, rowUpper;
  for (int c = 0; c < numCols; ++c) {
    for (auto [r, v] : byColumn[c]) {
      index.push_back(r);
      value.push_back(v);
    }
    starts.push_back(index.size());
    const IlpProblem::Column &col = problem.columns[c];
    colLower.push_back(col.lower);
    colUpper.push_back(std::isinf(col.upper) ? kBig : col.upper);
    cost.push_back(col.cost);
  }
  for (const IlpProblem::Row &row : problem.rows) {
    rowLower.push_back(std::isinf(row.lower) ? -kBig : row.lower);
    rowUpper.push_back(std::isinf(row.upper) ? kBig : row.upper);
  }

  std::unique_ptr<Cbc_Model, void (*)(Cbc_Model *)> model(Cbc_newModel(),
                                                          Cbc_deleteModel);
  Cbc_loadProblem(model.get(), numCols, numRows, starts.data(), index.data(),
                  value.data(), colLower.data(), colUpper.data(), cost.data(),
                  rowLower.data(), rowUpper.data());
  for (int c = 0; c < numCols; ++c)
    if (problem.columns[c].integer)
      Cbc_setInteger(model.get(), c);
  Cbc_setLogLevel(model.get(), 0);
  Cbc_setMaximumSeconds(model.get(), timeLimitS);
  // One thread: the planner runs inside a compiler invocation.
  Cbc_setParameter(model.get(), "threads", "1");
  Cbc_solve(model.get());

  IlpResult result;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  bool hasSolution = Cbc_numberSavedSolutions(model.get()) > 0 ||
                     Cbc_isProvenOptimal(model.get());
  if (Cbc_isProvenOptimal(model.get()))
    result.status = IlpStatus::Optimal;
  else if (Cbc_isProvenInfeasible(model.get()))
    result.status = IlpStatus::Infeasible;
  else
    result.status = hasSolution ? IlpStatus::Feasible : IlpStatus::NoSolution;
  if (result.status == IlpStatus::Optimal ||
      result.status == IlpStatus::Feasible) {
    const double *x = Cbc_getColSolution(model.get());
    result.values.assign(x, x + numCols);
    result.objective = Cbc_getObjValue(model.get());
    result.bound = result.status == IlpStatus::Optimal
                       ? result.objective
                       : Cbc_getBestPossibleObjValue(model.get());
  }
  return result;
}
