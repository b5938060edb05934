// How the daemons' synchronous gRPC servers keep their threads. By default a sync server keeps
// one or two polling threads and starts a thread for every request beyond them, which exits
// when idle: under a stream of launches and submissions, creating and ending threads cost more
// of the agent's CPU than the requests did (measured with perf on `trellis bench live`). Keeping
// a few threads ready avoids that churn.
#pragma once

#include <grpcpp/server_builder.h>

namespace trellis {

inline void keep_server_threads(grpc::ServerBuilder& builder) {
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 4);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 16);
}

}  // namespace trellis
