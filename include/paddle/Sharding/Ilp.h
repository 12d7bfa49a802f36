//===- Ilp.h - a small integer linear program and its solver ----*- C++ -*-===//
//
// The auto-sharding search states its choice as a mixed integer linear
// program: minimize c.x subject to lb <= A x <= ub and column bounds, with
// some columns integer. This header is the only interface the planner sees;
// the solver behind it is CBC (COIN-OR, Debian's coinor-libcbc-dev), called
// through its C API. Another solver (GLPK) would implement solveIlp alone.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_SHARDING_ILP_H
#define PADDLE_SHARDING_ILP_H

#include "llvm/ADT/SmallVector.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace mlir::paddle {

struct IlpProblem {
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  struct Column {
    double lower = 0, upper = 1, cost = 0;
    bool integer = true;
  };
  struct Row {
    llvm::SmallVector<std::pair<int, double>> terms;
    double lower = -kInf, upper = kInf;
  };
  std::vector<Column> columns;
  std::vector<Row> rows;

  /// A 0/1 column.
  int addBinary(double cost) {
    columns.push_back({0, 1, cost, true});
    return columns.size() - 1;
  }
  int addContinuous(double lower, double upper, double cost) {
    columns.push_back({lower, upper, cost, false});
    return columns.size() - 1;
  }
  void addRow(llvm::SmallVector<std::pair<int, double>> terms, double lower,
              double upper) {
    rows.push_back({std::move(terms), lower, upper});
  }
};

enum class IlpStatus {
  /// The best solution, proven.
  Optimal,
  /// The time limit ended the search with a solution not proven optimal.
  Feasible,
  /// No solution exists.
  Infeasible,
  /// The time limit ended the search before any solution was found.
  NoSolution,
};

struct IlpResult {
  IlpStatus status = IlpStatus::NoSolution;
  std::vector<double> values;
  double objective = 0;
  /// The best lower bound the search proved (== objective when optimal).
  double bound = 0;
  double seconds = 0;
};

/// Solves `problem` within `timeLimitS` seconds (CBC).
IlpResult solveIlp(const IlpProblem &problem, double timeLimitS);

/// The solver's name and version, for reports.
std::string ilpSolverName();

} // namespace mlir::paddle

#endif // PADDLE_SHARDING_ILP_H
