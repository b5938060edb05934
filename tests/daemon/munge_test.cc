// MUNGE credentials (daemon/auth.h) against a private munged (daemon/munge_daemon.h).
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "daemon/auth.h"
#include "daemon/munge_daemon.h"
#include "daemon/process.h"
#include "daemon_test_support.h"

namespace trellis {
namespace {

using testing::TempDir;

TEST(MungeTest, CredentialDecodesToOurUidAndGid) {
  TempDir dir;
  Result<MungeDaemon> munge = MungeDaemon::start(dir / "munge");
  ASSERT_TRUE(munge) << munge.error().message;
  Result<std::string> credential = CredentialSource(munge->socket()).encode();
  ASSERT_TRUE(credential) << credential.error().message;
  Result<Caller> caller = Authenticator(munge->socket()).decode(*credential);
  ASSERT_TRUE(caller) << caller.error().message;
  EXPECT_EQ(caller->uid, static_cast<int>(::geteuid()));
  EXPECT_EQ(caller->gid, static_cast<int>(::getegid()));
}

TEST(MungeTest, MissingAndGarbageCredentialsAreRejected) {
  TempDir dir;
  Result<MungeDaemon> munge = MungeDaemon::start(dir / "munge");
  ASSERT_TRUE(munge) << munge.error().message;
  Authenticator auth(munge->socket());
  Result<Caller> missing = auth.decode("");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no MUNGE credential"), std::string::npos);
  for (std::string garbage : {"garbage", "MUNGE:AAAA:", "MUNGE:not-base64-at-all!!:"}) {
    Result<Caller> caller = auth.decode(garbage);
    ASSERT_FALSE(caller) << garbage;
    EXPECT_EQ(caller.error().code, Error::Code::kUnauthenticated) << caller.error().message;
  }
}

TEST(MungeTest, ReplayedCredentialIsRejected) {
  TempDir dir;
  Result<MungeDaemon> munge = MungeDaemon::start(dir / "munge");
  ASSERT_TRUE(munge) << munge.error().message;
  Result<std::string> credential = CredentialSource(munge->socket()).encode();
  ASSERT_TRUE(credential) << credential.error().message;
  Authenticator auth(munge->socket());
  ASSERT_TRUE(auth.decode(*credential));
  Result<Caller> again = auth.decode(*credential);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("eplayed"), std::string::npos) << again.error().message;
}

TEST(MungeTest, CredentialFromAnotherKeyIsRejected) {
  TempDir dir;
  Result<MungeDaemon> ours = MungeDaemon::start(dir / "ours");
  Result<MungeDaemon> theirs = MungeDaemon::start(dir / "theirs");
  ASSERT_TRUE(ours) << ours.error().message;
  ASSERT_TRUE(theirs) << theirs.error().message;
  Result<std::string> credential = CredentialSource(theirs->socket()).encode();
  ASSERT_TRUE(credential) << credential.error().message;
  Result<Caller> caller = Authenticator(ours->socket()).decode(*credential);
  ASSERT_FALSE(caller);
  EXPECT_EQ(caller.error().code, Error::Code::kUnauthenticated) << caller.error().message;
}

TEST(MungeTest, KeyIsPrivateAndKeptAcrossRestarts) {
  TempDir dir;
  std::string key;
  {
    Result<MungeDaemon> munge = MungeDaemon::start(dir / "munge");
    ASSERT_TRUE(munge) << munge.error().message;
    struct stat info {};
    ASSERT_EQ(::stat((dir / "munge/munge.key").c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0400u);
    EXPECT_EQ(info.st_size, 1024);
    key = testing::read_file(dir / "munge/munge.key");
  }
  Result<MungeDaemon> again = MungeDaemon::start(dir / "munge");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(testing::read_file(dir / "munge/munge.key"), key);
}

TEST(MungeTest, OwnedDaemonStopsWithItsValueAndMovesWithIt) {
  TempDir dir;
  pid_t pid = -1;
  {
    Result<MungeDaemon> munge = MungeDaemon::start(dir / "munge");
    ASSERT_TRUE(munge) << munge.error().message;
    pid = munge->pid();
    ASSERT_TRUE(process_running(pid));
    MungeDaemon moved = std::move(*munge);
    EXPECT_EQ(moved.pid(), pid);
    EXPECT_EQ(munge->pid(), -1);
    EXPECT_TRUE(process_running(pid));
  }
  EXPECT_TRUE(testing::eventually([&] { return !process_running(pid); }));
}

TEST(MungeTest, OwnedStartRefusesARunningDaemon) {
  TempDir dir;
  Result<MungeDaemon> first = MungeDaemon::start(dir / "munge");
  ASSERT_TRUE(first) << first.error().message;
  Result<MungeDaemon> second = MungeDaemon::start(dir / "munge");
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("already serves"), std::string::npos);
  EXPECT_TRUE(process_running(first->pid()));
}

TEST(MungeTest, DetachedDaemonOutlivesItsValueUntilStoppedByDirectory) {
  TempDir dir;
  pid_t pid = -1;
  {
    Result<MungeDaemon> munge = MungeDaemon::start(dir / "munge", MungeDaemon::Mode::kDetached);
    ASSERT_TRUE(munge) << munge.error().message;
    pid = munge->pid();
  }
  ASSERT_TRUE(process_running(pid));
  // A second detached start adopts it.
  Result<MungeDaemon> adopted = MungeDaemon::start(dir / "munge", MungeDaemon::Mode::kDetached);
  ASSERT_TRUE(adopted) << adopted.error().message;
  EXPECT_EQ(adopted->pid(), pid);
  EXPECT_TRUE(CredentialSource(adopted->socket()).encode());
  Status stopped = MungeDaemon::stop(dir / "munge");
  ASSERT_TRUE(stopped) << stopped.error().message;
  EXPECT_FALSE(process_running(pid));
  // Nothing left to stop.
  EXPECT_TRUE(MungeDaemon::stop(dir / "munge"));
}

TEST(MungeTest, UnreachableDaemonIsUnavailable) {
  TempDir dir;
  Result<std::string> credential = CredentialSource(dir / "no-such.socket").encode();
  ASSERT_FALSE(credential);
  EXPECT_EQ(credential.error().code, Error::Code::kUnavailable);
}

}  // namespace
}  // namespace trellis
