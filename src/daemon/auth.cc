#include "daemon/auth.h"

#include <munge.h>

#include <cstdlib>
#include <memory>

#include <grpcpp/client_context.h>
#include <grpcpp/server_context.h>

namespace trellis {
namespace {

// A munge context pointed at `socket` (libmunge's default when empty); freed on scope exit.
struct ContextDeleter {
  void operator()(munge_ctx_t context) const { munge_ctx_destroy(context); }
};
using MungeContext = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, ContextDeleter>;

Result<MungeContext> make_context(const std::string& socket) {
  MungeContext context(munge_ctx_create());
  if (!context)
    return fail(Error::Code::kInternal, "munge: cannot create a context (out of memory)");
  if (!socket.empty() &&
      munge_ctx_set(context.get(), MUNGE_OPT_SOCKET, socket.c_str()) != EMUNGE_SUCCESS) {
    return fail(Error::Code::kInternal, "munge: cannot use socket " + socket);
  }
  return context;
}

std::string socket_name(const std::string& socket) {
  return socket.empty() ? std::string("munged's default socket") : socket;
}

}  // namespace

CredentialSource::CredentialSource(std::string socket) : socket_(std::move(socket)) {}

Result<std::string> CredentialSource::encode() const {
  return encode({}, -1);
}

Result<std::string> CredentialSource::encode(std::string_view payload, int decoder_uid) const {
  Result<MungeContext> context = make_context(socket_);
  if (!context) return context.error();
  if (decoder_uid >= 0 && munge_ctx_set(context->get(), MUNGE_OPT_UID_RESTRICTION,
                                        static_cast<uid_t>(decoder_uid)) != EMUNGE_SUCCESS)
    return fail(Error::Code::kInternal,
                "munge: cannot restrict a credential to uid " + std::to_string(decoder_uid));
  char* credential = nullptr;
  munge_err_t err =
      munge_encode(&credential, context->get(), payload.empty() ? nullptr : payload.data(),
                   static_cast<int>(payload.size()));
  if (err != EMUNGE_SUCCESS) {
    std::string reason = munge_ctx_strerror(context->get()) ? munge_ctx_strerror(context->get())
                                                            : munge_strerror(err);
    std::free(credential);
    return fail(Error::Code::kUnavailable,
                "munge: cannot get a credential from " + socket_name(socket_) + ": " + reason);
  }
  std::string text(credential);
  std::free(credential);
  return text;
}

Status CredentialSource::attach(grpc::ClientContext& context) const {
  Result<std::string> credential = encode();
  if (!credential) return credential.error();
  context.AddMetadata(std::string(kMungeMetadataKey), *credential);
  return Ok{};
}

Authenticator::Authenticator(std::string socket) : socket_(std::move(socket)) {}

Result<Caller> Authenticator::decode(std::string_view credential) const {
  if (credential.empty())
    return fail(Error::Code::kUnauthenticated,
                "no MUNGE credential (metadata x-trellis-munge is empty)");
  Result<MungeContext> context = make_context(socket_);
  if (!context) return context.error();
  std::string text(credential);
  uid_t uid = 0;
  gid_t gid = 0;
  munge_err_t err = munge_decode(text.c_str(), context->get(), nullptr, nullptr, &uid, &gid);
  if (err == EMUNGE_SOCKET) {
    return fail(Error::Code::kUnavailable,
                "munge: cannot reach munged at " + socket_name(socket_) + " to check a credential");
  }
  if (err != EMUNGE_SUCCESS) {
    const char* reason = munge_ctx_strerror(context->get());
    return fail(Error::Code::kUnauthenticated, std::string("invalid MUNGE credential: ") +
                                                   (reason ? reason : munge_strerror(err)));
  }
  return Caller{static_cast<int>(uid), static_cast<int>(gid)};
}

Result<Authenticator::Decoded> Authenticator::decode_payload(std::string_view credential,
                                                             bool accept_replay) const {
  if (credential.empty()) return fail(Error::Code::kUnauthenticated, "no MUNGE credential");
  Result<MungeContext> context = make_context(socket_);
  if (!context) return context.error();
  std::string text(credential);
  void* payload = nullptr;
  int length = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  munge_err_t err = munge_decode(text.c_str(), context->get(), &payload, &length, &uid, &gid);
  Decoded decoded;
  if (payload != nullptr && length > 0)
    decoded.payload.assign(static_cast<const char*>(payload), static_cast<size_t>(length));
  std::free(payload);
  if (err == EMUNGE_SOCKET)
    return fail(Error::Code::kUnavailable,
                "munge: cannot reach munged at " + socket_name(socket_) + " to check a credential");
  decoded.replayed = err == EMUNGE_CRED_REPLAYED;
  if (err != EMUNGE_SUCCESS && !(decoded.replayed && accept_replay)) {
    const char* reason = munge_ctx_strerror(context->get());
    return fail(Error::Code::kUnauthenticated, std::string("invalid MUNGE credential: ") +
                                                   (reason ? reason : munge_strerror(err)));
  }
  decoded.caller = Caller{static_cast<int>(uid), static_cast<int>(gid)};
  return decoded;
}

Result<Caller> Authenticator::verify(const grpc::ServerContextBase& context) const {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(grpc::string_ref(kMungeMetadataKey.data(), kMungeMetadataKey.size()));
  if (it == metadata.end())
    return fail(Error::Code::kUnauthenticated,
                "no MUNGE credential (metadata x-trellis-munge missing)");
  return decode(std::string_view(it->second.data(), it->second.size()));
}

}  // namespace trellis
