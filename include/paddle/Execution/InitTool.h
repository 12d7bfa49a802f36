//===- InitTool.h - llvm::InitLLVM that keeps ignored signals ignored -----===//
//
// Every tool starts with this instead of llvm::InitLLVM. LLVM installs its
// handlers (stack traces, removing its files) over every signal, ignored
// ones included. A signal the tool was started ignoring (SIGHUP under
// nohup, SIGINT and SIGQUIT in a shell's background job) must stay ignored:
// with LLVM's handler it would interrupt a blocking open or write, and the
// tool would fail with "Interrupted system call" where it should carry on.
// Header-only.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_EXECUTION_INITTOOL_H
#define PADDLE_EXECUTION_INITTOOL_H

#include "llvm/Support/InitLLVM.h"

#include <csignal>

namespace mlir::paddle {

class InitTool {
public:
  InitTool(int &argc, char **&argv)
      : ignored(ignoredSignals()), init(argc, argv) {
    for (int sig = 1; sig < NSIG; ++sig)
      if (sigismember(&ignored, sig) == 1)
        signal(sig, SIG_IGN);
  }

private:
  static sigset_t ignoredSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction action {};
      if (sigaction(sig, nullptr, &action) == 0 &&
          !(action.sa_flags & SA_SIGINFO) && action.sa_handler == SIG_IGN)
        sigaddset(&set, sig);
    }
    return set;
  }

  sigset_t ignored; // before init: read before LLVM installs its handlers
  llvm::InitLLVM init;
};

} // namespace mlir::paddle

#endif // PADDLE_EXECUTION_INITTOOL_H
