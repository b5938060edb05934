// The node's topology file (shell/node_topology.h): discovered once and then found, and never
// taken from a file that someone else could have put in its place.
#include "shell/node_topology.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "../daemon/daemon_test_support.h"

namespace trellis {
namespace {

using testing::read_file;

ino_t inode_of(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// The XML describes this machine: one Machine object and at least one PU per online CPU's worth
// (hwloc lists the CPUs this process may use; never more than the kernel has configured).
void expect_this_machine(const std::string& path) {
  std::string xml = read_file(path);
  ASSERT_NE(xml.find("<topology"), std::string::npos) << xml.substr(0, 300);
  EXPECT_NE(xml.find("type=\"Machine\""), std::string::npos);
  size_t pus = 0;
  for (size_t at = xml.find("type=\"PU\""); at != std::string::npos;
       at = xml.find("type=\"PU\"", at + 1))
    ++pus;
  EXPECT_GE(pus, 1u);
  EXPECT_LE(pus, static_cast<size_t>(::sysconf(_SC_NPROCESSORS_CONF)));
}

TEST(NodeTopologyTest, IsDiscoveredOnceAndThenFound) {
  testing::TempDir dir;
  Result<std::string> first = node_topology_file(dir.path());
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->rfind(dir.path() + "/trellis-topology." + std::to_string(::geteuid()) + ".", 0),
            0u)
      << *first;
  expect_this_machine(*first);
  struct stat st {};
  ASSERT_EQ(::stat(first->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u) << "only its owner may read or write it";
  const ino_t inode = inode_of(*first);
  Result<std::string> again = node_topology_file(dir.path());
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, *first);
  EXPECT_EQ(inode_of(*again), inode) << "found, not written again";
}

// A link in the file's place (to a file of someone else's choosing) or a file that others may
// write is not read: the topology is discovered again and the file put in its place.
TEST(NodeTopologyTest, AFileOthersCouldHavePlantedIsReplaced) {
  testing::TempDir dir;
  Result<std::string> path = node_topology_file(dir.path());
  ASSERT_TRUE(path.ok()) << path.error().message;
  const std::string planted = dir.path() + "/planted.xml";
  std::ofstream(planted) << "<topology>not this machine</topology>\n";

  ASSERT_EQ(::unlink(path->c_str()), 0);
  ASSERT_EQ(::symlink(planted.c_str(), path->c_str()), 0);
  Result<std::string> after_link = node_topology_file(dir.path());
  ASSERT_TRUE(after_link.ok()) << after_link.error().message;
  struct stat st {};
  ASSERT_EQ(::lstat(path->c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode)) << "the link is replaced by a file";
  expect_this_machine(*path);
  EXPECT_EQ(read_file(planted), "<topology>not this machine</topology>\n") << "target untouched";

  ASSERT_EQ(::unlink(path->c_str()), 0);
  std::ofstream(*path) << "<topology>not this machine</topology>\n";
  ASSERT_EQ(::chmod(path->c_str(), 0666), 0);
  Result<std::string> after_writable = node_topology_file(dir.path());
  ASSERT_TRUE(after_writable.ok()) << after_writable.error().message;
  expect_this_machine(*path);
}

TEST(NodeTopologyTest, AFolderThatCannotBeWrittenIsAnErrorNamingTheFile) {
  Result<std::string> none = node_topology_file("/nonexistent-trellis-folder");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("/nonexistent-trellis-folder/trellis-topology."),
            std::string::npos)
      << none.error().message;
}

}  // namespace
}  // namespace trellis
