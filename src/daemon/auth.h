// Authentication of every RPC with MUNGE, as Slurm does. A caller (the CLI, an agent, a
// controller calling an agent) asks its local munged for a fresh credential before each call and
// sends it in the "x-trellis-munge" metadata entry; the server asks its munged to decode it, which
// proves the caller's uid and gid (munged refuses a forged, expired or replayed credential).
// Every host of a cluster shares one MUNGE key; a local test cluster runs a private munged
// (daemon/munge_daemon.h).
//
//   CredentialSource credentials("/run/munge/munge.socket.2");
//   grpc::ClientContext context;
//   if (Status s = credentials.attach(context); !s) return s;   // before the call
//
//   Authenticator auth("/run/munge/munge.socket.2");
//   Result<Caller> caller = auth.verify(server_context);         // in the handler
//   if (!caller) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, caller.error().message);
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace grpc {
class ClientContext;
class ServerContextBase;
}  // namespace grpc

namespace trellis {

// The metadata key that carries the credential.
inline constexpr std::string_view kMungeMetadataKey = "x-trellis-munge";

// Who made a call, as munged vouches.
struct Caller {
  int uid = -1;
  int gid = -1;
};

// Makes credentials for outgoing calls. Thread-safe.
class CredentialSource {
 public:
  // `socket`: munged's socket; empty = libmunge's default.
  explicit CredentialSource(std::string socket = "");
  // A fresh credential (munge_encode with no payload), as text. kUnavailable when munged cannot
  // be reached, naming the socket.
  Result<std::string> encode() const;
  // A credential carrying `payload` (encrypted with the cluster's key), which only processes of
  // `decoder_uid` can decode (MUNGE_OPT_UID_RESTRICTION): how the control tree hands a session
  // key to the agents (daemon/tree/tree_auth.h).
  Result<std::string> encode(std::string_view payload, int decoder_uid) const;
  // Adds a fresh credential to the call's metadata.
  Status attach(grpc::ClientContext& context) const;

 private:
  std::string socket_;
};

// Checks the credential of incoming calls. Thread-safe.
class Authenticator {
 public:
  explicit Authenticator(std::string socket = "");
  // Decodes a credential: the caller, or an error saying why it is not valid (missing,
  // malformed, expired, replayed, made with another key); kUnavailable when munged is down.
  Result<Caller> decode(std::string_view credential) const;
  // The caller of an RPC, from its metadata.
  Result<Caller> verify(const grpc::ServerContextBase& context) const;

  // A credential with a payload, decoded. A replayed credential (decoded before through the same
  // munged) is accepted when `accept_replay` holds, as Slurm accepts its forwarded credentials
  // where several daemons share one munged: the caller must then bind what it accepts to
  // something that cannot be replayed (the tree's per-message counters).
  struct Decoded {
    Caller caller;
    std::string payload;
    bool replayed = false;
  };
  Result<Decoded> decode_payload(std::string_view credential, bool accept_replay) const;

 private:
  std::string socket_;
};

}  // namespace trellis
