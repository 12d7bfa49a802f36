//===- ShardingInterfaceImpl.h - paddle ops on the shard dialect -*- C++
//-*-===//

#ifndef PADDLE_SHARDING_SHARDINGINTERFACEIMPL_H
#define PADDLE_SHARDING_SHARDINGINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace paddle {

/// Attaches the `shard` dialect's ShardingInterface to every paddle op
/// (lib/Sharding/ShardingRules.h says how each op splits).
void registerShardingInterfaceExternalModels(DialectRegistry &registry);

} // namespace paddle
} // namespace mlir

#endif // PADDLE_SHARDING_SHARDINGINTERFACEIMPL_H
