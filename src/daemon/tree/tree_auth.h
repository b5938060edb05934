// Authentication of the control tree's messages, paid once per message instead of once per tree
// edge (a MUNGE encode and decode per edge was most of a gang switch's CPU).
//
// Whoever sends tree messages (a controller, or an agent starting an exchange of its own) keeps a
// session: a random 16-byte id and a 32-byte key, handed to receivers in a MUNGE credential that
// carries both, encrypted with the cluster's MUNGE key and restricted to the daemon user's uid
// (only a process of that uid on a host with the key can read it). Every message carries the
// credential, a counter, the time it was issued and an HMAC-SHA256 of those and its body under
// the session key (TreeAuth); agents forward the signed bytes untouched. A receiver decodes a
// session's credential once (one munged round trip per session and agent; a credential already
// decoded through the same munged, as when agents share one host, is accepted as Slurm accepts
// its forwarded credentials) and checks every message's HMAC (about a microsecond). Replays are
// refused: each counter is accepted once per session and receiver (a sliding window of 4,096),
// and a message issued more than kMaxMessageAge from the receiver's clock is refused. Answers are
// signed with the same key and bound to the message's counter, so a parent knows its child's
// answer is that child's answer to this message.
//
// Sessions last kSessionLifetime at the sender (then a new one starts, one MUNGE encode), well
// within MUNGE's credential lifetime (300 s by default), so a receiver that first hears of a
// session late can still decode its credential.
//
//   TreeSigner signer(credentials, daemon_uid);          // the sender
//   Result<v1::TreeAuth> auth = signer.sign(body_bytes);
//   ... Status ok = signer.check_answer(*auth, answer);
//
//   TreeVerifier verifier(authenticator, daemon_uid);   // each receiver
//   Result<TreeSessionKey> key = verifier.verify(message);   // refused: the reason
//   answer.set_mac(sign_answer(*key, message.auth(), answer.body()));
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/result.h"
#include "daemon/auth.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {

// How long a sender keeps a session, and how old (or how far in the future, by the receiver's
// clock) a message may be.
constexpr std::chrono::seconds kSessionLifetime{120};
constexpr double kMaxMessageAge = 60;
// The most sessions a receiver keeps (one per sender, so few); beyond them a new session is
// refused while all of them are in use.
constexpr size_t kMaxTreeSessions = 4096;

// A session's key, as both ends hold it.
struct TreeSessionKey {
  std::string session;  // 16 bytes
  std::array<unsigned char, 32> key{};
  // The SHA-256 states that have taken in the key's HMAC pads, made once per session
  // (prepare_key()): each message's MAC copies them (two plain structs) and hashes on, instead
  // of setting the key up again. Shared by copies.
  std::shared_ptr<void> keyed;
};
// Makes `key.keyed` from `key.key`.
void prepare_key(TreeSessionKey& key);

// HMAC-SHA256 of the parts, one after the other, under `key`.
std::string tree_mac(const TreeSessionKey& key, std::initializer_list<std::string_view> parts);
// The MAC an answer carries: its body bound to the message it answers.
std::string sign_answer(const TreeSessionKey& key, const v1::TreeAuth& message,
                        std::string_view answer_body);
// Whether `answer` carries the MAC sign_answer() gives it (compared in constant time).
bool answer_is_signed(const TreeSessionKey& key, const v1::TreeAuth& message,
                      const v1::TreeAnswer& answer);

// The sender's side. Thread-safe.
class TreeSigner {
 public:
  // `credentials` must outlive the signer; `daemon_uid` is the uid whose processes may read the
  // session key (the agents').
  TreeSigner(const CredentialSource& credentials, int daemon_uid);

  // Signs `body`, starting a new session first when the current one is old (one MUNGE encode;
  // kUnavailable when munged cannot be reached).
  Result<v1::TreeAuth> sign(std::string_view body);
  // Whether `answer` is a valid answer to the message `sent` was signed for.
  Status check_answer(const v1::TreeAuth& sent, const v1::TreeAnswer& answer) const;

 private:
  struct Session {
    TreeSessionKey key;
    std::string credential;
    std::chrono::steady_clock::time_point started;
  };
  const CredentialSource& credentials_;
  int daemon_uid_;
  mutable std::mutex mutex_;
  std::shared_ptr<const Session> current_;                        // guarded by mutex_
  std::map<std::string, std::shared_ptr<const Session>> recent_;  // by id: current and last ones
  uint64_t counter_ = 0;                                          // guarded by mutex_
};

// The receiver's side. Thread-safe.
class TreeVerifier {
 public:
  // `authenticator` (this host's munged) must outlive the verifier; messages are accepted only
  // from sessions of `allowed_uid`.
  TreeVerifier(const Authenticator& authenticator, int allowed_uid);

  // Checks a message: its session (decoding the credential the first time), its MAC, its age and
  // that its counter is new. kUnauthenticated with the reason for a message that must be refused;
  // kUnavailable when munged cannot be reached (the sender may try again).
  Result<TreeSessionKey> verify(const v1::TreeMessage& message);

  // Sessions known (for tests and logs).
  size_t sessions() const;

 private:
  struct Known {
    TreeSessionKey key;
    double last_used = 0;               // wall seconds
    uint64_t highest = 0;               // the highest counter accepted
    bool any = false;                   // whether any was
    std::array<uint64_t, 64> window{};  // counters highest-4095 .. highest: bit set = accepted
  };
  // Accepts `counter` once; false for a replay or one too far behind the window.
  static bool accept_counter(Known& known, uint64_t counter);

  const Authenticator& authenticator_;
  int allowed_uid_;
  mutable std::mutex mutex_;
  std::map<std::string, Known> sessions_;  // by session id; guarded by mutex_
};

}  // namespace trellis
