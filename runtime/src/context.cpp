//===- context.cpp - the call context of this thread ----------------------===//
//
// Kept apart from the session code so that artifacts whose compiled code
// only allocates do not link sessions in.
//
//===----------------------------------------------------------------------===//

#include "context.h"

using namespace paddle::runtime;

namespace {
thread_local CallContext *current = nullptr;
} // namespace

CallContext *paddle::runtime::currentContext() { return current; }

CallContext *paddle::runtime::exchangeContext(CallContext *context) {
  CallContext *previous = current;
  current = context;
  return previous;
}
