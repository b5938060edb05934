// AbsentNames (daemon/absent_names.h): a name found missing stays known missing until anything
// is created or moved into the directory, and is never recorded missing across a creation.
#include "daemon/absent_names.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "daemon_test_support.h"

namespace trellis {
namespace {

using testing::TempDir;

void touch(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << path;
  ::close(fd);
}

TEST(AbsentNames, ANameFoundMissingStaysSoUntilSomethingIsCreatedInTheDirectory) {
  TempDir dir;
  AbsentNames absent(dir.path());
  ASSERT_TRUE(absent.watching());  // inotify works here (the watch limit is per user)
  uint64_t mark = 0;
  EXPECT_FALSE(absent.known_missing("area", &mark));  // never looked for
  absent.missing("area", mark);
  EXPECT_TRUE(absent.known_missing("area", &mark));
  EXPECT_FALSE(absent.known_missing("other", &mark));

  touch(dir / "unrelated");  // any creation: every name must be looked for again
  EXPECT_FALSE(absent.known_missing("area", &mark));
  absent.missing("area", mark);
  EXPECT_TRUE(absent.known_missing("area", &mark));

  touch(dir / "elsewhere");  // moved in, as a creation
  ASSERT_EQ(std::rename((dir / "elsewhere").c_str(), (dir / "area").c_str()), 0);
  EXPECT_FALSE(absent.known_missing("area", &mark));
}

TEST(AbsentNames, ANameIsNotRecordedMissingWhenSomethingWasCreatedSinceTheLook) {
  TempDir dir;
  AbsentNames absent(dir.path());
  ASSERT_TRUE(absent.watching());
  uint64_t mark = 0;
  EXPECT_FALSE(absent.known_missing("area", &mark));
  // Looked for and not there; then made before missing() is told, and another look (another
  // thread's) reads that creation from the watch first.
  touch(dir / "area");
  uint64_t other = 0;
  EXPECT_FALSE(absent.known_missing("x", &other));
  absent.missing("area", mark);
  EXPECT_FALSE(absent.known_missing("area", &mark));
}

TEST(AbsentNames, WithoutADirectoryNothingIsKnownMissing) {
  TempDir dir;
  AbsentNames absent(dir / "no-such-directory");
  EXPECT_FALSE(absent.watching());
  uint64_t mark = 0;
  absent.missing("area", mark);
  EXPECT_FALSE(absent.known_missing("area", &mark));
}

}  // namespace
}  // namespace trellis
