#include "daemon/tree/tree_auth.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/wall_clock.h"

namespace trellis {
namespace {

constexpr size_t kSessionIdBytes = 16;
constexpr size_t kMacBytes = 32;

// The 8 bytes of `value`, little-endian.
std::string le64(uint64_t value) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

std::string time_bytes(double seconds) {
  uint64_t bits = 0;
  std::memcpy(&bits, &seconds, sizeof bits);
  return le64(bits);
}

bool same_mac(std::string_view a, std::string_view b) {
  return a.size() == kMacBytes && b.size() == kMacBytes &&
         CRYPTO_memcmp(a.data(), b.data(), kMacBytes) == 0;
}

// HMAC-SHA256 (RFC 2104) from SHA-256 states that have taken in the key's inner and outer pads:
// a message's MAC copies the two states (plain structs) and hashes on, with no allocation and no
// look-up. OpenSSL's EVP_MAC copies or restarts three provider digest contexts per MAC, which
// cost several times the hashing here (a tenth of an agent's part of a gang switch). The
// SHA256_* functions are deprecated in OpenSSL 3 in favour of EVP_MD, whose contexts cannot be
// copied without an allocation either; they remain in every 3.x release.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct HmacStates {
  SHA256_CTX inner;
  SHA256_CTX outer;
};

void start_states(const std::array<unsigned char, 32>& key, HmacStates& states) {
  constexpr size_t kBlock = 64;  // SHA-256's block: a 32-byte key is padded with zeros to it
  unsigned char inner[kBlock], outer[kBlock];
  for (size_t i = 0; i < kBlock; ++i) {
    const unsigned char k = i < key.size() ? key[i] : 0;
    inner[i] = k ^ 0x36;
    outer[i] = k ^ 0x5c;
  }
  SHA256_Init(&states.inner);
  SHA256_Update(&states.inner, inner, kBlock);
  SHA256_Init(&states.outer);
  SHA256_Update(&states.outer, outer, kBlock);
  OPENSSL_cleanse(inner, kBlock);
  OPENSSL_cleanse(outer, kBlock);
}

void finish_mac(const HmacStates& states, std::initializer_list<std::string_view> parts,
                unsigned char* out) {
  SHA256_CTX context = states.inner;
  for (std::string_view part : parts) SHA256_Update(&context, part.data(), part.size());
  unsigned char inner[SHA256_DIGEST_LENGTH];
  SHA256_Final(inner, &context);
  context = states.outer;
  SHA256_Update(&context, inner, sizeof inner);
  SHA256_Final(out, &context);
  OPENSSL_cleanse(&context, sizeof context);
}
#pragma GCC diagnostic pop

}  // namespace

void prepare_key(TreeSessionKey& key) {
  auto states = std::make_shared<HmacStates>();
  start_states(key.key, *states);
  key.keyed = std::shared_ptr<void>(states, states.get());
}

std::string tree_mac(const TreeSessionKey& key, std::initializer_list<std::string_view> parts) {
  std::string out(kMacBytes, '\0');
  HmacStates local;
  const HmacStates* states = static_cast<const HmacStates*>(key.keyed.get());
  if (states == nullptr) {
    start_states(key.key, local);
    states = &local;
  }
  finish_mac(*states, parts, reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

std::string sign_answer(const TreeSessionKey& key, const v1::TreeAuth& message,
                        std::string_view answer_body) {
  return tree_mac(key, {"answer", message.session(), le64(message.counter()), answer_body});
}

bool answer_is_signed(const TreeSessionKey& key, const v1::TreeAuth& message,
                      const v1::TreeAnswer& answer) {
  return same_mac(answer.mac(), sign_answer(key, message, answer.body()));
}

// --- TreeSigner

TreeSigner::TreeSigner(const CredentialSource& credentials, int daemon_uid)
    : credentials_(credentials), daemon_uid_(daemon_uid) {}

Result<v1::TreeAuth> TreeSigner::sign(std::string_view body) {
  std::shared_ptr<const Session> session;
  uint64_t counter = 0;
  {
    std::lock_guard lock(mutex_);
    auto now = std::chrono::steady_clock::now();
    if (!current_ || now - current_->started >= kSessionLifetime) {
      auto fresh = std::make_shared<Session>();
      fresh->key.session.resize(kSessionIdBytes);
      if (RAND_bytes(reinterpret_cast<unsigned char*>(fresh->key.session.data()),
                     kSessionIdBytes) != 1 ||
          RAND_bytes(fresh->key.key.data(), static_cast<int>(fresh->key.key.size())) != 1)
        return fail(Error::Code::kInternal, "tree: no random bytes for a session key");
      prepare_key(fresh->key);
      std::string payload = fresh->key.session;
      payload.append(reinterpret_cast<const char*>(fresh->key.key.data()), fresh->key.key.size());
      Result<std::string> credential = credentials_.encode(payload, daemon_uid_);
      if (!credential) return credential.error();
      fresh->credential = std::move(*credential);
      fresh->started = now;
      // Answers to the last session's messages may still come: it is kept until the next one.
      for (auto it = recent_.begin(); it != recent_.end();)
        it = it->second == current_ ? std::next(it) : recent_.erase(it);
      recent_[fresh->key.session] = fresh;
      current_ = fresh;
      counter_ = 0;
    }
    session = current_;
    counter = ++counter_;
  }
  v1::TreeAuth auth;
  auth.set_session(session->key.session);
  auth.set_credential(session->credential);
  auth.set_counter(counter);
  auth.set_issued_at(wall_clock_now());
  auth.set_mac(
      tree_mac(session->key, {auth.session(), le64(counter), time_bytes(auth.issued_at()), body}));
  return auth;
}

Status TreeSigner::check_answer(const v1::TreeAuth& sent, const v1::TreeAnswer& answer) const {
  std::shared_ptr<const Session> session;
  {
    std::lock_guard lock(mutex_);
    auto it = recent_.find(sent.session());
    if (it != recent_.end()) session = it->second;
  }
  if (!session)
    return fail(Error::Code::kUnauthenticated, "an answer to a session this sender has dropped");
  if (!answer_is_signed(session->key, sent, answer))
    return fail(Error::Code::kUnauthenticated, "an answer whose signature does not match");
  return Ok{};
}

// --- TreeVerifier

TreeVerifier::TreeVerifier(const Authenticator& authenticator, int allowed_uid)
    : authenticator_(authenticator), allowed_uid_(allowed_uid) {}

bool TreeVerifier::accept_counter(Known& known, uint64_t counter) {
  constexpr uint64_t kWindow = 64 * 64;
  auto bit = [&](uint64_t c) -> uint64_t& { return known.window[(c / 64) % 64]; };
  if (!known.any || counter > known.highest) {
    // The window slides up: the words between the old and new highest are cleared.
    uint64_t from = known.any ? known.highest + 1 : counter;
    if (counter - from >= kWindow) {
      known.window.fill(0);
    } else {
      for (uint64_t c = from; c <= counter; ++c) bit(c) &= ~(uint64_t{1} << (c % 64));
    }
    known.highest = counter;
    known.any = true;
    bit(counter) |= uint64_t{1} << (counter % 64);
    return true;
  }
  if (known.highest - counter >= kWindow) return false;  // too far behind to tell
  uint64_t mask = uint64_t{1} << (counter % 64);
  if (bit(counter) & mask) return false;  // seen
  bit(counter) |= mask;
  return true;
}

Result<TreeSessionKey> TreeVerifier::verify(const v1::TreeMessage& message) {
  const v1::TreeAuth& auth = message.auth();
  auto refuse = [](const std::string& why) {
    return fail(Error::Code::kUnauthenticated, "tree message refused: " + why);
  };
  if (auth.session().size() != kSessionIdBytes) return refuse("no session id");
  if (auth.mac().size() != kMacBytes) return refuse("no signature");
  const double now = wall_clock_now();
  if (!std::isfinite(auth.issued_at()) || std::abs(now - auth.issued_at()) > kMaxMessageAge)
    return refuse("issued " + std::to_string(now - auth.issued_at()) +
                  " s ago by this host's clock (at most " +
                  std::to_string(static_cast<int>(kMaxMessageAge)) + " s either way)");

  std::optional<TreeSessionKey> key;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(auth.session());
    if (it != sessions_.end()) key = it->second.key;
  }
  if (!key) {
    // A new session: its credential is decoded once (outside the lock: a munged round trip).
    Result<Authenticator::Decoded> decoded =
        authenticator_.decode_payload(auth.credential(), /*accept_replay=*/true);
    if (!decoded) {
      if (decoded.error().code == Error::Code::kUnavailable) return decoded.error();
      return refuse(decoded.error().message);
    }
    if (decoded->caller.uid != allowed_uid_)
      return refuse("its session belongs to uid " + std::to_string(decoded->caller.uid) +
                    ", not the daemon user's " + std::to_string(allowed_uid_));
    if (decoded->payload.size() != kSessionIdBytes + 32 ||
        decoded->payload.compare(0, kSessionIdBytes, auth.session()) != 0)
      return refuse("its credential does not carry its session");
    TreeSessionKey fresh;
    fresh.session = auth.session();
    std::memcpy(fresh.key.data(), decoded->payload.data() + kSessionIdBytes, fresh.key.size());
    prepare_key(fresh);
    key = fresh;
  }
  if (!same_mac(auth.mac(), tree_mac(*key, {auth.session(), le64(auth.counter()),
                                            time_bytes(auth.issued_at()), message.body()})))
    return refuse("its signature does not match its contents");

  std::lock_guard lock(mutex_);
  auto it = sessions_.find(auth.session());
  if (it == sessions_.end()) {
    if (sessions_.size() >= kMaxTreeSessions) {
      // Only a session unused for longer than a message may live is forgotten: any message of it
      // would be refused as too old anyway, so forgetting it lets no replay through.
      auto idle = sessions_.end();
      for (auto s = sessions_.begin(); s != sessions_.end(); ++s)
        if (now - s->second.last_used > kMaxMessageAge &&
            (idle == sessions_.end() || s->second.last_used < idle->second.last_used))
          idle = s;
      if (idle == sessions_.end())
        return fail(Error::Code::kUnavailable,
                    "tree message refused: " + std::to_string(kMaxTreeSessions) +
                        " sessions are in use (try again later)");
      sessions_.erase(idle);
    }
    it = sessions_.emplace(auth.session(), Known{*key}).first;
  }
  if (!accept_counter(it->second, auth.counter()))
    return refuse("message " + std::to_string(auth.counter()) + " of its session was seen before");
  // A message issued ahead of this host's clock keeps its session from being forgotten until it
  // is too old here too.
  it->second.last_used = std::max(now, auth.issued_at());
  return *key;
}

size_t TreeVerifier::sessions() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

}  // namespace trellis
